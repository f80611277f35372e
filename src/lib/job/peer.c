/*
 * peer.c - the other ends of a job's sockets (see peer.h).
 *
 * Every 200 ms the probe lists the job's processes and the sockets in
 * their /proc/PID/fd: that is all a sample costs, a directory read per
 * process, and a job with no socket costs nothing more. A socket seen for
 * the first time is resolved once, at that sample, while both ends still
 * exist: the sock_diag dump of unix sockets (twice: the job's sockets'
 * peers, then the peers' names and owners), /proc/net/tcp and tcp6 for
 * the others, and one pass over /proc/PID/fd of every process the caller
 * may read for the peers' holders. After that, a sample only moves the
 * socket's last time seen.
 *
 * The resolving is bounded: at most TRACK_MAX sockets are followed, so
 * that a job that opens a connection a millisecond costs a few passes,
 * not one a connection.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "job/peer.h"
#include "job/service.h"
#include "kernel/cgroup.h"
#include "kernel/netsock.h"
#include "kernel/procfs.h"

#define SAMPLE_NS 200000000ull	/* 0.2 s: a wait that counts is over 1 s */
/* sockets followed; more are counted, not resolved */
#define TRACK_MAX 256
/* TCP states of /proc/net/tcp that have no other end */
#define TCP_LISTEN_STATE 10
#define TCP_CLOSE_STATE 7

enum track_state { NEW, PEER, IGNORED };

/* One socket of the job. */
struct track {
	uint64_t ino;
	uint64_t first_ns, last_ns;
	enum track_state state;
	/* while resolving: what is known of the other end */
	uint64_t peer_ino;		/* the other end's socket inode, 0 if none found */
	bool unix_seen, tcp_seen;	/* found in the unix dump, in tcp or tcp6 */
	int family;			/* TCP: the job's end's */
	uint8_t laddr[16], raddr[16];	/* TCP: as IPv6 (IPv4 mapped), for the swap */
	uint16_t lport, rport;
	bool member_holds;		/* the other end is the job's own, or hotset's */
	struct hs_peer peer;
};

struct hs_peer_probe {
	struct hs_service job;		/* the job's processes, as a service names them */
	pid_t self;
	uint64_t *own;			/* hotset's own sockets at the start */
	size_t nown, owncap;

	struct track *t;
	size_t nt, tcap;
	size_t dropped;			/* sockets over TRACK_MAX */
	pid_t *pids;			/* the job's processes at the last sample */
	size_t npids, pcap;
	bool unreadable;		/* a process of the job whose sockets could not be listed */
	bool no_diag;			/* sock_diag failed: unix peers unknown */
	int diag_err;

	pthread_t thread;
	bool running, stop;
	pthread_mutex_t lock;
	pthread_cond_t cond;
};

/* ---- the sockets a process holds ------------------------------------------------ */

/*
 * Call fn for each socket in /proc/PID/fd. Returns 0, -errno when the
 * directory cannot be read (another user's process, one that ended), or
 * fn's first non-zero value.
 */
static int each_socket(pid_t pid, int (*fn)(void *ctx, pid_t pid, uint64_t ino), void *ctx)
{
	char path[64], link[64];
	struct dirent *e;
	int rc = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	if (!(d = opendir(path)))
		return -errno;
	while (rc == 0 && (e = readdir(d))) {
		ssize_t n;
		uint64_t ino;

		if (e->d_name[0] == '.')
			continue;
		n = readlinkat(dirfd(d), e->d_name, link, sizeof(link) - 1);
		if (n <= 0)
			continue;	/* closed meanwhile */
		link[n] = '\0';
		if (hs_socket_link_inode(link, &ino))
			rc = fn(ctx, pid, ino);
	}
	closedir(d);
	return rc;
}

static bool in_set(const uint64_t *v, size_t n, uint64_t x)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == x)
			return true;
	return false;
}

static int add_own(void *ctx, pid_t pid, uint64_t ino)
{
	struct hs_peer_probe *p = ctx;

	(void)pid;
	if (in_set(p->own, p->nown, ino))
		return 0;
	if (hs_grow(&p->own, &p->owncap, p->nown + 1, sizeof(*p->own)))
		return -ENOMEM;
	p->own[p->nown++] = ino;
	return 0;
}

static struct track *find_track(struct hs_peer_probe *p, uint64_t ino)
{
	for (size_t i = 0; i < p->nt; i++)
		if (p->t[i].ino == ino)
			return &p->t[i];
	return NULL;
}

/* A socket of the job, seen at now: followed, or new. */
struct seen {
	struct hs_peer_probe *p;
	uint64_t now;
	size_t fresh;
};

static int see_socket(void *ctx, pid_t pid, uint64_t ino)
{
	struct seen *s = ctx;
	struct hs_peer_probe *p = s->p;
	struct track *t;

	(void)pid;
	if (in_set(p->own, p->nown, ino))
		return 0;	/* the job's inherited stream, hotset's too */
	if ((t = find_track(p, ino))) {
		t->last_ns = s->now;
		return 0;
	}
	if (p->nt >= TRACK_MAX || hs_grow(&p->t, &p->tcap, p->nt + 1, sizeof(*p->t))) {
		p->dropped++;
		return 0;
	}
	t = &p->t[p->nt++];
	memset(t, 0, sizeof(*t));
	t->ino = ino;
	t->first_ns = t->last_ns = s->now;
	t->state = NEW;
	s->fresh++;
	return 0;
}

static bool is_member(const struct hs_peer_probe *p, pid_t pid)
{
	if (pid == p->self)
		return true;
	for (size_t i = 0; i < p->npids; i++)
		if (p->pids[i] == pid)
			return true;
	return false;
}

/* ---- unix sockets ------------------------------------------------------------------ */

/* The first dump: which of the new sockets are unix ones, and their peers. */
static int unix_ours(void *ctx, const struct hs_unix_sock *u)
{
	struct hs_peer_probe *p = ctx;
	struct track *t = find_track(p, u->inode);

	if (t && t->state == NEW) {
		t->unix_seen = true;
		t->peer_ino = u->peer;
		t->peer.transport = HS_PEER_UNIX;
	}
	return 0;
}

/* A unix address as the caller shows it: an abstract name's NULs as '@', as ss does. */
static void unix_address(const struct hs_unix_sock *u, char *out, size_t size)
{
	size_t n = u->path_len < size - 1 ? u->path_len : size - 1;

	/* a path ends at its NUL (the binder may have counted it); an abstract name has none */
	if (n && u->path[0]) {
		const char *nul = memchr(u->path, '\0', n);

		n = nul ? (size_t)(nul - u->path) : n;
	}

	for (size_t i = 0; i < n; i++)
		out[i] = u->path[i] ? u->path[i] : '@';
	out[n] = '\0';
}

/* The second dump: the peers' addresses and owners. */
static int unix_theirs(void *ctx, const struct hs_unix_sock *u)
{
	struct hs_peer_probe *p = ctx;

	for (size_t i = 0; i < p->nt; i++) {
		struct track *t = &p->t[i];

		if (t->state != NEW || !t->unix_seen || t->peer_ino != u->inode)
			continue;
		unix_address(u, t->peer.address, sizeof(t->peer.address));
		t->peer.uid_known = u->uid_known;
		t->peer.uid = u->uid;
	}
	return 0;
}

/* When sock_diag is not there: which sockets are unix ones, from /proc/net/unix. */
static int unix_listed(void *ctx, const struct hs_unix_sock *u)
{
	struct hs_peer_probe *p = ctx;
	struct track *t = find_track(p, u->inode);

	if (t && t->state == NEW) {
		t->unix_seen = true;
		t->peer.transport = HS_PEER_UNIX;
	}
	return 0;
}

/* ---- TCP ------------------------------------------------------------------------------ */

/* An address as 16 bytes of IPv6, IPv4 mapped (::ffff:a.b.c.d): both files compare alike. */
static void as_v6(int family, const uint8_t *addr, uint8_t out[16])
{
	if (family == AF_INET6) {
		memcpy(out, addr, 16);
		return;
	}
	memset(out, 0, 10);
	out[10] = out[11] = 0xff;
	memcpy(out + 12, addr, 4);
}

static bool loopback(const uint8_t a[16])
{
	static const uint8_t one[16] = { [15] = 1 };
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };

	return !memcmp(a, one, 16) || (!memcmp(a, mapped, 12) && a[12] == 127);
}

/* The first pass: the job's own TCP sockets, and their two addresses. */
static int tcp_ours(void *ctx, const struct hs_tcp_sock *s)
{
	struct hs_peer_probe *p = ctx;
	struct track *t;

	if (!s->inode || !(t = find_track(p, s->inode)) || t->state != NEW || t->unix_seen)
		return 0;
	t->tcp_seen = true;
	t->family = s->family;
	as_v6(s->family, s->local, t->laddr);
	as_v6(s->family, s->remote, t->raddr);
	t->lport = s->lport;
	t->rport = s->rport;
	t->peer.transport = s->family == AF_INET6 ? HS_PEER_TCP6 : HS_PEER_TCP;
	hs_tcp_addr_str(s->family, s->remote, s->rport, t->peer.address, sizeof(t->peer.address));
	hs_tcp_addr_str(s->family, s->local, s->lport, t->peer.local, sizeof(t->peer.local));
	if (s->state == TCP_LISTEN_STATE || s->state == TCP_CLOSE_STATE || !s->rport)
		t->state = IGNORED;	/* a listener, or nothing at the other end */
	return 0;
}

/* The second pass: the socket of this machine whose addresses are the swap of ours. */
static int tcp_theirs(void *ctx, const struct hs_tcp_sock *s)
{
	struct hs_peer_probe *p = ctx;
	uint8_t l[16], r[16];

	as_v6(s->family, s->local, l);
	as_v6(s->family, s->remote, r);
	for (size_t i = 0; i < p->nt; i++) {
		struct track *t = &p->t[i];

		if (t->state != NEW || !t->tcp_seen || t->peer_ino || s->lport != t->rport ||
		    s->rport != t->lport || memcmp(l, t->raddr, 16) || memcmp(r, t->laddr, 16))
			continue;
		/* inode 0: the other end's socket is no process's any more (it was closed) */
		t->peer_ino = s->inode;
		t->peer.uid_known = true;
		t->peer.uid = s->uid;
		if (!s->inode)
			t->peer.where = HS_PEER_GONE;
	}
	return 0;
}

/* ---- the holders of the other ends -------------------------------------------------- */

static int see_holder(void *ctx, pid_t pid, uint64_t ino)
{
	struct hs_peer_probe *p = ctx;

	for (size_t i = 0; i < p->nt; i++) {
		struct track *t = &p->t[i];

		if (t->state != NEW || !t->peer_ino || t->peer_ino != ino)
			continue;
		if (is_member(p, pid)) {
			t->member_holds = true;
			continue;
		}
		if (!t->peer.holders || pid < t->peer.pid)
			t->peer.pid = pid;
		t->peer.holders++;
	}
	return 0;
}

/* Name the holder: its command name and cgroup, read as the caller may. */
static void name_holder(const struct hs_peer_probe *p, struct hs_peer *peer, const char *own_cg)
{
	char path[64], buf[4096];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)peer->pid);
	if (hs_procfs_read(path, buf, sizeof(buf)) > 0) {
		size_t len = strcspn(buf, "\n");

		/* comm is at most 15 bytes: a longer one is no comm file */
		len = len < sizeof(peer->name) - 1 ? len : sizeof(peer->name) - 1;
		memcpy(peer->name, buf, len);
		peer->name[len] = '\0';
	}
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)peer->pid);
	if (hs_procfs_read(path, buf, sizeof(buf)) > 0 &&
	    hs_cgroup_parse_self(buf, peer->cgroup, sizeof(peer->cgroup)) == 0 && own_cg[0]) {
		size_t len = strlen(peer->cgroup);

		/* hotset in the peer's cgroup, or below it: measuring that cgroup measures hotset too */
		peer->shares_cgroup = !strncmp(own_cg, peer->cgroup, len) &&
				      (own_cg[len] == '\0' || own_cg[len] == '/' ||
				       !strcmp(peer->cgroup, "/"));
	}
	snprintf(path, sizeof(path), "/proc/%d", (int)peer->pid);
	if (stat(path, &st) == 0) {
		peer->uid_known = true;
		peer->uid = (uint32_t)st.st_uid;
	}
	(void)p;
}

/* ---- resolving the new sockets -------------------------------------------------------- */

static void resolve(struct hs_peer_probe *p)
{
	char own_cg[PATH_MAX] = "", buf[4096];
	bool any_peer = false;
	struct dirent *e;
	int rc;
	DIR *d;

	/* unix sockets: ours with their peers, then the peers' names and owners */
	if (!p->no_diag) {
		rc = hs_unix_diag_each(unix_ours, p);
		if (rc == 0)
			rc = hs_unix_diag_each(unix_theirs, p);
		if (rc) {
			p->no_diag = true;
			p->diag_err = rc;
		}
	}
	if (p->no_diag)
		hs_unix_each(NULL, unix_listed, p);
	/* TCP: ours, then the swap of ours */
	hs_tcp_each("/proc/net/tcp", AF_INET, tcp_ours, p);
	hs_tcp_each("/proc/net/tcp6", AF_INET6, tcp_ours, p);
	for (size_t i = 0; i < p->nt; i++)
		if (p->t[i].state == NEW && p->t[i].tcp_seen)
			any_peer = true;
	if (any_peer) {
		hs_tcp_each("/proc/net/tcp", AF_INET, tcp_theirs, p);
		hs_tcp_each("/proc/net/tcp6", AF_INET6, tcp_theirs, p);
	}
	/* the holders of the other ends, among the processes the caller may look into */
	any_peer = false;
	for (size_t i = 0; i < p->nt; i++)
		if (p->t[i].state == NEW && p->t[i].peer_ino)
			any_peer = true;
	if (any_peer && (d = opendir("/proc"))) {
		while ((e = readdir(d))) {
			char *end;
			long pid = strtol(e->d_name, &end, 10);

			if (pid > 0 && !*end)
				each_socket((pid_t)pid, see_holder, p);
		}
		closedir(d);
	}
	if (hs_procfs_read("/proc/self/cgroup", buf, sizeof(buf)) <= 0 ||
	    hs_cgroup_parse_self(buf, own_cg, sizeof(own_cg)))
		own_cg[0] = '\0';
	/* what each new socket is */
	for (size_t i = 0; i < p->nt; i++) {
		struct track *t = &p->t[i];

		if (t->state != NEW)
			continue;
		t->state = IGNORED;
		if (!t->unix_seen && !t->tcp_seen)
			continue;	/* UDP, netlink, a socket of another family: no connection to follow */
		if (t->member_holds)
			continue;	/* the job talks to itself */
		if (t->peer.holders) {
			t->peer.where = HS_PEER_PROCESS;
			name_holder(p, &t->peer, own_cg);
		} else if (t->unix_seen && !t->peer_ino) {
			/* a listener, an unconnected datagram socket, a peer closed: nothing at the other end */
			if (!p->no_diag)
				continue;
			t->peer.where = HS_PEER_HIDDEN;
		} else if (t->peer_ino || t->peer.where == HS_PEER_GONE) {
			/* the socket is there, its holder is not the caller's to see */
			if (t->peer.where != HS_PEER_GONE)
				t->peer.where = HS_PEER_HIDDEN;
		} else {
			/* no socket of this machine has the swapped addresses */
			t->peer.where = loopback(t->raddr) ? HS_PEER_GONE : HS_PEER_REMOTE;
		}
		t->state = PEER;
	}
}

/* ---- the sampler ------------------------------------------------------------------------ */

static void sample(struct hs_peer_probe *p)
{
	struct seen s = { p, hs_monotonic_ns(), 0 };
	ssize_t n = hs_service_pids(&p->job, &p->pids, &p->pcap);

	p->npids = n > 0 ? (size_t)n : 0;
	for (size_t i = 0; i < p->npids; i++) {
		if (p->pids[i] == p->self)
			continue;
		int rc = each_socket(p->pids[i], see_socket, &s);

		/* one that ended meanwhile is no loss; one the caller may not read is */
		if (rc == -EACCES || rc == -EPERM)
			p->unreadable = true;
	}
	if (s.fresh)
		resolve(p);
}

static void *sampler(void *arg)
{
	struct hs_peer_probe *p = arg;
	uint64_t next = hs_monotonic_ns();

	pthread_mutex_lock(&p->lock);
	while (!p->stop) {
		struct timespec deadline;	/* on the clock of hs_monotonic_ns(), as cond waits */

		next += SAMPLE_NS;
		deadline.tv_sec = (time_t)(next / 1000000000u);
		deadline.tv_nsec = (long)(next % 1000000000u);
		while (!p->stop && pthread_cond_timedwait(&p->cond, &p->lock, &deadline) != ETIMEDOUT)
			;
		if (p->stop)
			break;
		pthread_mutex_unlock(&p->lock);
		sample(p);
		pthread_mutex_lock(&p->lock);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

int hs_peer_begin(const char *procs, struct hs_peer_probe **out)
{
	struct hs_peer_probe *p = calloc(1, sizeof(*p));
	pthread_condattr_t attr;
	struct hs_proc_stat st;
	sigset_t all, old;
	size_t len;
	int rc;

	if (!p)
		return -ENOMEM;
	p->self = getpid();
	/* the job's processes: its cgroup's, or this process's descendants */
	len = procs ? strlen(procs) : 0;
	if (len > 13 && !strcmp(procs + len - 13, "/cgroup.procs") && len - 13 < sizeof(p->job.cg_dir)) {
		p->job.kind = HS_SERVICE_CGROUP;
		memcpy(p->job.cg_dir, procs, len - 13);
		p->job.cg_dir[len - 13] = '\0';
	} else {
		p->job.kind = HS_SERVICE_PID;
		p->job.pid = p->self;
		if ((rc = hs_proc_stat_read("/proc/self/stat", &st)))
			goto fail;
		p->job.pid_start = st.starttime;
	}
	/* what hotset holds now, the job inherits: its streams are not what it waits on */
	if ((rc = each_socket(p->self, add_own, p)) && rc != -ENOENT)
		goto fail;
	pthread_mutex_init(&p->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&p->cond, &attr);
	pthread_condattr_destroy(&attr);
	/* signals are for the caller's threads: forwarding, SIGCHLD */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = -pthread_create(&p->thread, NULL, sampler, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		pthread_cond_destroy(&p->cond);
		pthread_mutex_destroy(&p->lock);
		goto fail;
	}
	p->running = true;
	*out = p;
	return 0;
fail:
	free(p->own);
	free(p);
	return rc;
}

static void note(struct hs_peers *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void note(struct hs_peers *out, const char *fmt, ...)
{
	va_list ap;

	if (out->nnotes >= HS_PEER_NOTES)
		return;
	va_start(ap, fmt);
	vsnprintf(out->notes[out->nnotes++], HS_PEER_NOTE_LEN, fmt, ap);
	va_end(ap);
}

static int by_held(const void *a, const void *b)
{
	const struct hs_peer *x = a, *y = b;

	return (x->held_s < y->held_s) - (x->held_s > y->held_s);
}

int hs_peer_end(struct hs_peer_probe *p, struct hs_peers *out)
{
	if (p->running) {
		pthread_mutex_lock(&p->lock);
		p->stop = true;
		pthread_cond_signal(&p->cond);
		pthread_mutex_unlock(&p->lock);
		pthread_join(p->thread, NULL);
		pthread_cond_destroy(&p->cond);
		pthread_mutex_destroy(&p->lock);
	}
	if (out) {
		memset(out, 0, sizeof(*out));
		out->sockets = p->nt + p->dropped;
		for (size_t i = 0; i < p->nt; i++) {
			struct track *t = &p->t[i];

			if (t->state != PEER)
				continue;
			/* a socket seen at k samples was held about k sample periods */
			t->peer.held_s = (double)(t->last_ns - t->first_ns + SAMPLE_NS) / 1e9;
			if (out->n < HS_PEERS_MAX) {
				out->v[out->n++] = t->peer;
			} else {
				/* keep the longest held */
				qsort(out->v, out->n, sizeof(*out->v), by_held);
				if (out->v[out->n - 1].held_s < t->peer.held_s)
					out->v[out->n - 1] = t->peer;
				out->more++;
			}
		}
		qsort(out->v, out->n, sizeof(*out->v), by_held);
		if (p->dropped)
			note(out, "%zu sockets of the job were not followed (over %d)", p->dropped,
			     TRACK_MAX);
		if (p->unreadable)
			note(out, "the sockets of some of the job's processes could not be listed "
				  "(/proc/PID/fd is not readable to uid %u)", (unsigned)geteuid());
		if (p->no_diag)
			note(out, "the other ends of unix sockets are unknown: sock_diag failed (%s)",
			     strerror(-p->diag_err));
	}
	free(p->t);
	free(p->pids);
	free(p->own);
	free(p);
	return 0;
}

bool hs_peer_waited(const struct hs_usage *u, const struct hs_peers *peers, struct hs_waited_on *w)
{
	double off;

	if (!u || !peers || !peers->n || u->wall_s <= 0)
		return false;
	memset(w, 0, sizeof(*w));
	w->io_wait_known = u->pressure != HS_PRESSURE_UNKNOWN;
	off = u->wall_s - u->user_s - u->sys_s - (w->io_wait_known ? u->io_wait_s : 0);
	if (off <= HS_PEER_WAIT_MIN_S || off <= HS_PEER_WAIT_SHARE * u->wall_s)
		return false;
	/* the peers are sorted: the first was held longest */
	if (peers->v[0].held_s < 0.5 * off)
		return false;
	w->seconds = off;
	w->share = off / u->wall_s;
	w->peer = &peers->v[0];
	return true;
}

/* A unit's name if the cgroup is a system service's ("/system.slice/x.service"), else NULL. */
static const char *unit_of(const char *cgroup)
{
	const char *last = strrchr(cgroup, '/');
	size_t len;

	if (!last || strncmp(cgroup, "/system.slice/", 14) || last != cgroup + 13)
		return NULL;
	len = strlen(++last);
	return len > 8 && !strcmp(last + len - 8, ".service") ? last : NULL;
}

bool hs_peer_measure(const struct hs_peer *peer, char pid[16], const char **opt, const char **arg)
{
	if (peer->where != HS_PEER_PROCESS)
		return false;
	if (!peer->cgroup[0] || peer->shares_cgroup || !strcmp(peer->cgroup, "/")) {
		snprintf(pid, 16, "%d", (int)peer->pid);
		*opt = "--pid";
		*arg = pid;
	} else if ((*arg = unit_of(peer->cgroup))) {
		*opt = "--unit";
	} else {
		*opt = "--cgroup";
		*arg = peer->cgroup;
	}
	return true;
}
