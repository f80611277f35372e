/*
 * service.c - a service hotset did not start, and what it did while a job
 * ran (see service.h).
 *
 * The counts are per process, not per thread: /proc/PID/io and the times
 * of /proc/PID/stat of a process include its threads that have ended, and
 * (once it reaps them) its children, so that a thread that lives between
 * two samples is counted whole. What can be lost is a process that ends
 * without a parent among the members to reap it (a daemon's child that
 * init reaps, the pid target itself): it is counted up to its last sample,
 * and the figure is marked a lower bound. When a member's parent is a
 * member too, the parent's counters will grow by the child's whole total
 * when it reaps it; the child's baseline moves to the parent, so that the
 * part from before the window is not counted, and the rest exactly once.
 *
 * I/O wait is the one figure not kept per process: io.pressure exists only
 * for cgroup v2 directories, and the blkio delay of /proc/PID/stat (field
 * 42) is per task, its leader's in the process file, lost when a thread
 * ends. Where neither can be had, the figure is unknown and a note says
 * how to get it: hotset never turns kernel.task_delayacct on by itself.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "job/service.h"
#include "kernel/memory.h"
#include "kernel/procfs.h"
#include "kernel/psi.h"

extern char **environ;

/* How often the members are listed and read: a process that lives less is seen through its parent. */
#define SAMPLE_NS 100000000ull

const char *hs_service_option(enum hs_service_kind kind)
{
	switch (kind) {
	case HS_SERVICE_PID: return "--pid";
	case HS_SERVICE_CGROUP: return "--cgroup";
	case HS_SERVICE_UNIT: return "--unit";
	}
	return "?";
}

/* ---- naming a service ------------------------------------------------------ */

static int resolve_pid(const char *arg, struct hs_service *s, struct hs_error *err)
{
	struct hs_proc_stat st;
	char path[64], *end;
	long v;
	int rc;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (!isdigit((unsigned char)*arg) || *end || errno || v <= 0 || v > INT32_MAX)
		return hs_error_set(err, EINVAL, "--pid %s: not a process id", arg);
	snprintf(path, sizeof(path), "/proc/%ld/stat", v);
	rc = hs_proc_stat_read(path, &st);
	if (rc == -ENOENT || (!rc && st.state == 'Z'))
		return hs_error_set(err, ESRCH, "--pid %ld: no such process", v);
	if (rc)
		return hs_error_set(err, -rc, "--pid %ld: cannot read %s: %s", v, path, strerror(-rc));
	s->pid = (pid_t)v;
	s->pid_start = st.starttime;
	return 0;
}

/* What a search of the cgroup mounts for a name or a directory is after. */
struct cg_search {
	const char *arg;	/* the directory, or the name in a hierarchy */
	bool as_dir;		/* arg is a directory: find the mount it is under */
	int version;		/* the pass: 2, then 1 */
	struct hs_service *s;
	size_t best;		/* as_dir: the length of the longest mount point matched */
};

/* The cgroup name of dir under mount point at m, from the mount's root. */
static int cg_set(struct cg_search *c, const struct hs_mountinfo *m, const char *dir)
{
	const char *rest = dir + strlen(m->point);
	const char *root = strcmp(m->root, "/") ? m->root : "";

	if ((size_t)snprintf(c->s->cg_name, sizeof(c->s->cg_name), "%s%s", root,
			     *rest || *root ? rest : "/") >= sizeof(c->s->cg_name) ||
	    (size_t)snprintf(c->s->cg_dir, sizeof(c->s->cg_dir), "%s", dir) >= sizeof(c->s->cg_dir))
		return -ENAMETOOLONG;
	c->s->cg_version = strcmp(m->fstype, "cgroup2") ? 1 : 2;
	return 0;
}

static int cg_mount(void *ctx, const struct hs_mountinfo *m)
{
	struct cg_search *c = ctx;
	char dir[PATH_MAX], procs[PATH_MAX + 16];
	size_t plen = strlen(m->point), rlen = strcmp(m->root, "/") ? strlen(m->root) : 0;
	const char *name = c->arg;
	struct stat sb;
	int rc;

	if (strcmp(m->fstype, c->version == 2 ? "cgroup2" : "cgroup"))
		return 0;
	if (c->as_dir) {
		/* the mount the directory is under, the deepest of them */
		if (strncmp(c->arg, m->point, plen) || (c->arg[plen] != '/' && c->arg[plen]) ||
		    plen < c->best)
			return 0;
		c->best = plen;
		return (rc = cg_set(c, m, c->arg)) ? rc : 0;
	}
	/* a name in this hierarchy: below the mount's root, if the mount is of a part */
	if (rlen && (strncmp(name, m->root, rlen) || (name[rlen] != '/' && name[rlen])))
		return 0;
	if ((size_t)snprintf(dir, sizeof(dir), "%s%s", m->point, name + rlen) >= sizeof(dir))
		return 0;
	hs_tidy_path(dir, false);
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", dir);
	if (stat(procs, &sb) < 0)
		return 0;
	return (rc = cg_set(c, m, dir)) ? rc : 1;
}

/* Resolve arg, a cgroup's directory or its name in a hierarchy; opt names the option. */
static int resolve_cgroup(const char *opt, const char *arg, struct hs_service *s,
			  struct hs_error *err)
{
	struct cg_search c = { arg, false, 2, s, 0 };
	char name[PATH_MAX];
	struct statfs fs;
	const char *fsname;
	struct stat sb;
	int rc;

	/* NOLINTNEXTLINE(clang-analyzer-core.uninitialized.Branch): unit_cgroup() ends name with a NUL on every success, which the analyzer loses in its read loop */
	if (!*arg)
		return hs_error_set(err, EINVAL, "%s: an empty name names no cgroup", opt);
	if (arg[0] == '/' && stat(arg, &sb) == 0) {
		if (!S_ISDIR(sb.st_mode) || statfs(arg, &fs) < 0 ||
		    !(fsname = hs_pseudo_fs_name((long)fs.f_type)) ||
		    (strcmp(fsname, "cgroup") && strcmp(fsname, "cgroup2")))
			return hs_error_set(err, ENOTDIR, "%s %s: not a cgroup (a directory on a cgroup filesystem)",
					    opt, arg);
		c.as_dir = true;
		for (c.version = 2; c.version >= 1; c.version--)
			if ((rc = hs_mountinfo_each(NULL, cg_mount, &c)) < 0)
				return hs_error_set(err, -rc, "%s %s: %s", opt, arg, strerror(-rc));
		if (!c.best)
			return hs_error_set(err, ENOENT, "%s %s: no cgroup filesystem is mounted there", opt, arg);
		return 0;
	}
	/* a name: "/a/b", or "a/b" for the same */
	if ((size_t)snprintf(name, sizeof(name), "%s%s", arg[0] == '/' ? "" : "/", arg) >= sizeof(name))
		return hs_error_set(err, ENAMETOOLONG, "%s: the name is too long", opt);
	hs_tidy_path(name, false);
	c.arg = name;
	for (c.version = 2; c.version >= 1; c.version--) {
		rc = hs_mountinfo_each(NULL, cg_mount, &c);
		if (rc == 1)
			return 0;
		if (rc < 0)
			return hs_error_set(err, -rc, "%s %s: %s", opt, arg, strerror(-rc));
	}
	return hs_error_set(err, ENOENT, "%s %s: no such cgroup: neither a cgroup directory nor a "
			    "cgroup of any hierarchy mounted here", opt, arg);
}

/* A unit's cgroup, as systemd names it ("/system.slice/x.service"), into out. */
static int unit_cgroup(const char *unit, char *out, size_t size, struct hs_error *err)
{
	char *argv[] = { "systemctl", "show", "-p", "ControlGroup", "--value", "--",
			 (char *)unit, NULL };
	posix_spawn_file_actions_t fa;
	int pipefd[2], status, rc = 0;
	size_t len = 0;
	ssize_t got;
	pid_t pid;

	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return hs_error_set(err, errno, "--unit %s: %s", unit, strerror(errno));
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pipefd[1], STDOUT_FILENO);
	posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
	rc = posix_spawnp(&pid, "systemctl", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(pipefd[1]);
	if (rc) {
		close(pipefd[0]);
		return hs_error_set(err, ENOENT, "--unit %s: cannot run systemctl: %s", unit, strerror(rc));
	}
	while (len + 1 < size && (got = read(pipefd[0], out + len, size - 1 - len)) != 0) {
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			break;
		len += (size_t)got;
	}
	out[len] = '\0';
	close(pipefd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	out[strcspn(out, "\n")] = '\0';
	/* an unknown unit has an empty ControlGroup, as a stopped one does */
	if (!out[0])
		return hs_error_set(err, ENOENT, "--unit %s: no such unit running: systemd knows no "
				    "cgroup for it", unit);
	return 0;
}

int hs_service_resolve(enum hs_service_kind kind, const char *arg, struct hs_service *out,
		       struct hs_error *err)
{
	struct hs_service s = { .kind = kind };
	char name[PATH_MAX];
	struct stat sb;
	int rc;

	if ((size_t)snprintf(s.arg, sizeof(s.arg), "%s", arg) >= sizeof(s.arg))
		return hs_error_set(err, ENAMETOOLONG, "%s: the name is too long", hs_service_option(kind));
	switch (kind) {
	case HS_SERVICE_PID:
		rc = resolve_pid(arg, &s, err);
		break;
	case HS_SERVICE_CGROUP:
		rc = resolve_cgroup("--cgroup", arg, &s, err);
		break;
	case HS_SERVICE_UNIT:
		if (!*arg) {
			rc = hs_error_set(err, EINVAL, "--unit: an empty name names no unit");
			break;
		}
		/* systemd's own test of whether it is the init system (sd_booted) */
		if (stat("/run/systemd/system", &sb) < 0 || !S_ISDIR(sb.st_mode)) {
			rc = hs_error_set(err, ENOENT, "--unit %s: systemd does not run this machine "
					  "(no /run/systemd/system): name the service's cgroup "
					  "(--cgroup) or process (--pid)", arg);
			break;
		}
		if ((rc = unit_cgroup(arg, name, sizeof(name), err)))
			break;
		if ((rc = resolve_cgroup("--unit", name, &s, err)))
			break;
		break;
	default:
		rc = hs_error_set(err, EINVAL, "no such kind of service");
	}
	if (rc == 0)
		*out = s;
	return rc;
}

/* ---- listing its members ----------------------------------------------------- */

/* Append pid to *pids (n used, *cap long). */
static int add_pid(pid_t **pids, size_t *cap, size_t n, pid_t pid)
{
	int rc = hs_grow(pids, cap, n + 1, sizeof(**pids));

	if (rc == 0)
		(*pids)[n] = pid;
	return rc;
}

/*
 * The pids of cgroup.procs in dir and in every cgroup below it, appended
 * to *pids from *n. A cgroup removed while it is walked is skipped.
 */
static int cgroup_pids(const char *dir, pid_t **pids, size_t *cap, size_t *n, int depth)
{
	char path[PATH_MAX + 16];
	struct dirent *e;
	long v;
	FILE *f;
	DIR *d;
	int rc = 0;

	if ((size_t)snprintf(path, sizeof(path), "%s/cgroup.procs", dir) >= sizeof(path))
		return -ENAMETOOLONG;
	if (!(f = fopen(path, "re")))
		return depth ? 0 : -errno;
	while (rc == 0 && fscanf(f, "%ld", &v) == 1)
		if ((rc = add_pid(pids, cap, *n, (pid_t)v)) == 0)
			(*n)++;
	fclose(f);
	/* a cgroup's own procs file lists its own processes, not its children's */
	if (rc || depth > 32 || !(d = opendir(dir)))
		return rc;
	while (rc == 0 && (e = readdir(d))) {
		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= sizeof(path))
			continue;
		rc = cgroup_pids(path, pids, cap, n, depth + 1);
	}
	closedir(d);
	return rc;
}

/* One line of the process table: enough to find a process's descendants. */
struct ptab {
	pid_t pid, ppid;
};

/* The process table now, into a malloc'd array; returns the count or -errno. */
static ssize_t proc_table(struct ptab **out)
{
	struct ptab *v = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	DIR *d = opendir("/proc");
	int rc = 0;

	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		struct hs_proc_stat st;
		char path[sizeof(e->d_name) + 16];

		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		if (hs_proc_stat_read(path, &st) || st.state == 'Z')
			continue;
		if ((rc = hs_grow(&v, &cap, n + 1, sizeof(*v))))
			break;
		v[n].pid = (pid_t)atol(e->d_name);
		v[n++].ppid = st.ppid;
	}
	closedir(d);
	if (rc) {
		free(v);
		return rc;
	}
	*out = v;
	return (ssize_t)n;
}

/*
 * The processes of the table that descend from pids[0..*n) (which are
 * kept, if they are in it), appended to *pids: a breadth-first closure,
 * each process once.
 */
static int descendants(pid_t **pids, size_t *cap, size_t *n)
{
	struct ptab *t = NULL;
	ssize_t nt = proc_table(&t);
	size_t kept = 0;
	int rc = 0;

	if (nt < 0)
		return (int)nt;
	if (!t)
		nt = 0;		/* an empty table */
	/* keep the roots that run, once each */
	for (size_t i = 0; i < *n; i++) {
		bool runs = false, dup = false;

		for (ssize_t k = 0; k < nt && !runs; k++)
			runs = t[k].pid == (*pids)[i];
		for (size_t k = 0; k < kept && !dup; k++)
			dup = (*pids)[k] == (*pids)[i];
		if (runs && !dup)
			(*pids)[kept++] = (*pids)[i];
	}
	*n = kept;
	for (size_t i = 0; i < *n && rc == 0; i++)
		for (ssize_t k = 0; k < nt && rc == 0; k++) {
			bool dup = false;

			if (t[k].ppid != (*pids)[i])
				continue;
			for (size_t j = 0; j < *n && !dup; j++)
				dup = (*pids)[j] == t[k].pid;
			if (!dup && (rc = add_pid(pids, cap, *n, t[k].pid)) == 0)
				(*n)++;
		}
	free(t);
	return rc;
}

/* The members now: for a pid target, from the roots given (the target and members kept). */
static ssize_t list_pids(const struct hs_service *s, const pid_t *roots, size_t nroots,
			 pid_t **pids, size_t *cap)
{
	size_t n = 0;
	int rc = 0;

	if (s->kind != HS_SERVICE_PID) {
		rc = cgroup_pids(s->cg_dir, pids, cap, &n, 0);
		return rc ? rc : (ssize_t)n;
	}
	for (size_t i = 0; i < nroots && rc == 0; i++)
		if ((rc = add_pid(pids, cap, n, roots[i])) == 0)
			n++;
	if (rc == 0)
		rc = descendants(pids, cap, &n);
	return rc ? rc : (ssize_t)n;
}

ssize_t hs_service_pids(const struct hs_service *s, pid_t **pids, size_t *cap)
{
	struct hs_proc_stat st;
	char path[64];

	if (s->kind == HS_SERVICE_PID) {
		/* the same process, not another that got its pid */
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)s->pid);
		if (hs_proc_stat_read(path, &st) || st.state == 'Z' || st.starttime != s->pid_start)
			return 0;
	}
	return list_pids(s, &s->pid, 1, pids, cap);
}

/* ---- the probe ------------------------------------------------------------------ */

struct counts {
	uint64_t rd, wr;	/* /proc/PID/io read_bytes, write_bytes */
	uint64_t user, sys;	/* ticks: utime + cutime, stime + cstime */
};

/* A process that was a member at some sample. */
struct member {
	pid_t pid, ppid;
	uint64_t start;
	bool live;		/* a member at the last sample */
	struct counts base, last;
};

/* A thread of a member, for delay accounting. */
struct task {
	pid_t tid;
	uint64_t start;
	bool live;
	uint64_t base, last;	/* delayacct_blkio_ticks */
};

struct hs_service_probe {
	struct hs_service s;
	uint64_t begin_ns;
	uint64_t begin_ticks;		/* CLOCK_BOOTTIME in clock ticks: stat's starttime's clock */
	long hz;

	struct member *m;
	size_t nm, mcap;
	struct task *t;
	size_t nt, tcap;
	pid_t *pids, *roots;		/* scratch, reused at each sample */
	size_t pcap, rcap;

	bool delayacct, psi;
	uint64_t psi_base, psi_last;	/* io.pressure "some" totals, microseconds */
	bool io_partial, cpu_partial, wait_partial, ended, unreadable;
	size_t threads_max;

	pthread_t thread;
	bool running, stop;
	pthread_mutex_t lock;
	pthread_cond_t cond;

	struct hs_service_usage u;	/* notes gathered on the way */
};

static void note(struct hs_service_usage *u, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void note(struct hs_service_usage *u, const char *fmt, ...)
{
	va_list ap;

	if (u->nnotes >= HS_SERVICE_NOTES)
		return;
	va_start(ap, fmt);
	vsnprintf(u->notes[u->nnotes++], HS_SERVICE_NOTE_LEN, fmt, ap);
	va_end(ap);
}

static uint64_t boot_ticks(long hz)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * (uint64_t)hz + (uint64_t)ts.tv_nsec / (1000000000ull / (uint64_t)hz);
}

/* Read process pid's stat and io. Returns 0, or -errno (-ENOENT: it ended). */
static int read_counts(pid_t pid, struct hs_proc_stat *st, struct counts *c)
{
	struct hs_proc_io io;
	char path[64];
	ssize_t n;
	int rc;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((rc = hs_proc_stat_read(path, st)))
		return rc;
	snprintf(path, sizeof(path), "/proc/%d/io", (int)pid);
	if ((n = hs_proc_io_read(path, &io)) < 0)
		return (int)n;
	c->rd = io.read_bytes;
	c->wr = io.write_bytes;
	c->user = st->utime + st->cutime;
	c->sys = st->stime + st->cstime;
	return 0;
}

static struct member *find_member(struct hs_service_probe *p, pid_t pid, uint64_t start)
{
	for (size_t i = 0; i < p->nm; i++)
		if (p->m[i].pid == pid && p->m[i].start == start)
			return &p->m[i];
	return NULL;
}

/* The blkio delays of pid's threads, at this sample. */
static void sample_tasks(struct hs_service_probe *p, pid_t pid, bool first, size_t *nthreads)
{
	char path[64];
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if (!(d = opendir(path)))
		return;
	while ((e = readdir(d))) {
		struct hs_proc_stat st;
		struct task *t = NULL;
		pid_t tid;

		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		tid = (pid_t)atol(e->d_name);
		snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
		if (hs_proc_stat_read(path, &st) || !st.blkio_known)
			continue;
		(*nthreads)++;
		for (size_t i = 0; i < p->nt && !t; i++)
			if (p->t[i].tid == tid && p->t[i].start == st.starttime)
				t = &p->t[i];
		if (!t) {
			if (hs_grow(&p->t, &p->tcap, p->nt + 1, sizeof(*p->t)))
				continue;	/* out of memory: that thread is left out */
			t = &p->t[p->nt++];
			t->tid = tid;
			t->start = st.starttime;
			/* a thread born in the window counts from 0 */
			t->base = !first && st.starttime > p->begin_ticks ? 0 : st.blkio_ticks;
		}
		t->last = st.blkio_ticks;
		t->live = true;
	}
	closedir(d);
}

/*
 * One sample: list the members, read each, take in the new ones and let
 * go of those that left. At the first (first set), every member's counts
 * are its baseline, and a member that cannot be read is an error.
 */
static int sample(struct hs_service_probe *p, bool first, struct hs_error *err)
{
	size_t nroots = 0, nthreads = 0;
	ssize_t n;
	int rc = 0;

	if (p->s.kind == HS_SERVICE_PID) {
		/* the target if it still runs, and every member kept: their descendants are members */
		if (!p->ended && (rc = add_pid(&p->roots, &p->rcap, nroots, p->s.pid)) == 0)
			nroots++;
		for (size_t i = 0; i < p->nm && rc == 0; i++)
			if (p->m[i].live && (rc = add_pid(&p->roots, &p->rcap, nroots, p->m[i].pid)) == 0)
				nroots++;
		if (rc)
			return hs_error_set(err, -rc, "%s", strerror(-rc));
	}
	if ((n = list_pids(&p->s, p->roots, nroots, &p->pids, &p->pcap)) < 0)
		return hs_error_set(err, (int)-n, "cannot list the processes of %s %s: %s",
				    hs_service_option(p->s.kind), p->s.arg, strerror((int)-n));
	for (size_t i = 0; i < p->nm; i++)
		p->m[i].live = false;
	for (size_t i = 0; i < p->nt; i++)
		p->t[i].live = false;
	for (ssize_t i = 0; i < n; i++) {
		pid_t pid = p->pids[i];
		struct hs_proc_stat st;
		struct counts c;
		struct member *m;

		rc = read_counts(pid, &st, &c);
		if (rc == -ENOENT || (rc == 0 && st.state == 'Z'))
			continue;	/* it ended since it was listed: its parent's turn */
		if (rc) {
			struct stat sb;
			char path[64];

			snprintf(path, sizeof(path), "/proc/%d", (int)pid);
			if (first)
				return hs_error_set(err, -rc, "cannot read the I/O counts of process %d "
						    "(user %ld) of %s %s: %s%s", (int)pid,
						    stat(path, &sb) == 0 ? (long)sb.st_uid : -1L,
						    hs_service_option(p->s.kind), p->s.arg, strerror(-rc),
						    rc == -EACCES || rc == -EPERM ?
						    "; another user's /proc/PID/io needs CAP_SYS_PTRACE "
						    "(run as root, or as the service's user)" : "");
			if (!p->unreadable)
				note(&p->u, "process %d of the service could not be read (%s): its "
				     "figures are left out", (int)pid, strerror(-rc));
			p->unreadable = p->io_partial = p->cpu_partial = true;
			continue;
		}
		if (p->s.kind == HS_SERVICE_PID && pid == p->s.pid && st.starttime != p->s.pid_start)
			continue;	/* another process that got the target's pid */
		if (!(m = find_member(p, pid, st.starttime))) {
			if ((rc = hs_grow(&p->m, &p->mcap, p->nm + 1, sizeof(*p->m))))
				return hs_error_set(err, -rc, "%s", strerror(-rc));
			m = &p->m[p->nm++];
			m->pid = pid;
			m->start = st.starttime;
			/* born in the window: all it did is the window's */
			if (!first && st.starttime > p->begin_ticks)
				memset(&m->base, 0, sizeof(m->base));
			else
				m->base = c;
		}
		m->ppid = st.ppid;
		m->last = c;
		m->live = true;
		if (p->delayacct)
			sample_tasks(p, pid, first, &nthreads);
	}
	if (nthreads > p->threads_max)
		p->threads_max = nthreads;
	if (first && p->nm == 0) {
		if (p->s.kind == HS_SERVICE_PID)
			return hs_error_set(err, ESRCH, "--pid %s: the process has ended", p->s.arg);
		return hs_error_set(err, ESRCH, "%s %s: the cgroup (%s) holds no process: the service "
				    "does not run", hs_service_option(p->s.kind), p->s.arg, p->s.cg_dir);
	}
	return 0;
}

/*
 * What became of the members that were live before this sample and are
 * not now (was[i] set for each that was, of the nwas members there were
 * before it): counted up to their last sample,
 * their baseline handed to a parent among the members, who will count
 * them whole when it reaps them; otherwise what they did since is lost.
 */
static void settle_left(struct hs_service_probe *p, const bool *was, size_t nwas)
{
	/* members taken in by this sample (past nwas) were not live before it */
	for (size_t i = 0; i < nwas; i++) {
		struct member *m = &p->m[i], *parent = NULL;
		struct hs_proc_stat st;
		struct counts c;

		if (!was[i] || m->live)
			continue;
		/* its threads' delays since the last sample end with it: no parent collects them */
		if (p->delayacct)
			p->wait_partial = true;
		if (p->s.kind == HS_SERVICE_PID && m->pid == p->s.pid && m->start == p->s.pid_start) {
			p->ended = true;
			note(&p->u, "process %s ended during the job: it is counted up to 0.1 s "
			     "before it ended, its processes that ran on are counted to the end",
			     p->s.arg);
		}
		if (read_counts(m->pid, &st, &c) == 0 && st.state != 'Z' && st.starttime == m->start) {
			m->last = c;	/* it runs on, out of the cgroup: counted up to now */
			continue;
		}
		for (size_t k = 0; k < p->nm && !parent; k++)
			if (p->m[k].live && p->m[k].pid == m->ppid)
				parent = &p->m[k];
		if (parent) {
			parent->base.rd += m->base.rd;
			parent->base.wr += m->base.wr;
			parent->base.user += m->base.user;
			parent->base.sys += m->base.sys;
			m->last = m->base;	/* the parent counts it now */
		} else {
			p->io_partial = p->cpu_partial = true;
		}
	}
}

/* A sample under the lock, with the bookkeeping of the members that left. */
static int sample_and_settle(struct hs_service_probe *p, struct hs_error *err)
{
	bool *was = p->nm ? calloc(p->nm, sizeof(*was)) : NULL;
	size_t nm = p->nm, nt_before = p->nt;
	bool *twas = p->nt ? calloc(p->nt, sizeof(*twas)) : NULL;
	int rc;

	for (size_t i = 0; was && i < nm; i++)
		was[i] = p->m[i].live;
	for (size_t i = 0; twas && i < nt_before; i++)
		twas[i] = p->t[i].live;
	rc = sample(p, false, err);
	if (rc == 0 && was) {
		settle_left(p, was, nm);
		/* a thread that ended: its delay since the last sample is lost */
		for (size_t i = 0; twas && i < nt_before; i++)
			if (twas[i] && !p->t[i].live)
				p->wait_partial = true;
	}
	if (p->psi) {
		struct hs_psi psi;

		if (hs_psi_read(p->s.cg_dir, "io.pressure", &psi) == 0)
			p->psi_last = psi.some.total;
	}
	free(was);
	free(twas);
	return rc;
}

static void *sampler(void *arg)
{
	struct hs_service_probe *p = arg;
	struct timespec at;
	struct hs_error err;

	pthread_mutex_lock(&p->lock);
	clock_gettime(CLOCK_MONOTONIC, &at);
	while (!p->stop) {
		at.tv_nsec += (long)SAMPLE_NS;
		if (at.tv_nsec >= 1000000000L) {
			at.tv_sec++;
			at.tv_nsec -= 1000000000L;
		}
		while (!p->stop && pthread_cond_timedwait(&p->cond, &p->lock, &at) != ETIMEDOUT)
			;
		if (!p->stop)
			sample_and_settle(p, &err);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

static void probe_free(struct hs_service_probe *p)
{
	free(p->m);
	free(p->t);
	free(p->pids);
	free(p->roots);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->cond);
	free(p);
}

int hs_service_begin(const struct hs_service *s, struct hs_service_probe **out,
		     struct hs_error *err)
{
	struct hs_service_probe *p = calloc(1, sizeof(*p));
	pthread_condattr_t ca;
	sigset_t all, saved;
	struct hs_memcg mc;
	struct hs_psi psi;
	char flag[8] = "";
	int rc;

	if (!p)
		return hs_error_set(err, ENOMEM, "%s", strerror(ENOMEM));
	p->s = *s;
	pthread_mutex_init(&p->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&p->cond, &ca);
	pthread_condattr_destroy(&ca);
	p->hz = sysconf(_SC_CLK_TCK) > 0 ? sysconf(_SC_CLK_TCK) : 100;

	/* I/O wait: the cgroup's own PSI where it is a v2 one, else delay accounting if it is on */
	if (s->kind != HS_SERVICE_PID && s->cg_version == 2 &&
	    hs_psi_read(s->cg_dir, "io.pressure", &psi) == 0) {
		p->psi = true;
		p->psi_base = p->psi_last = psi.some.total;
	} else {
		p->delayacct = hs_procfs_read("/proc/sys/kernel/task_delayacct", flag, sizeof(flag)) > 0 &&
			       flag[0] == '1';
	}
	p->begin_ns = hs_monotonic_ns();
	p->begin_ticks = boot_ticks(p->hz);
	if ((rc = sample(p, true, err)))
		goto fail;
	if (hs_memcg_of(p->m[0].pid, &mc) == 0) {
		p->u.memcg_known = true;
		p->u.memcg_version = mc.version;
		snprintf(p->u.memcg_name, sizeof(p->u.memcg_name), "%s", mc.name);
		p->u.limit_known = mc.limit_known;
		p->u.limit = mc.limit;
	}
	/* the sampler takes no signal of the caller's: they are the job's to forward */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &saved);
	rc = -pthread_create(&p->thread, NULL, sampler, p);
	pthread_sigmask(SIG_SETMASK, &saved, NULL);
	if (rc) {
		hs_error_set(err, -rc, "cannot start sampling the service: %s", strerror(-rc));
		goto fail;
	}
	p->running = true;
	*out = p;
	return 0;

fail:
	probe_free(p);
	return rc;
}

int hs_service_end(struct hs_service_probe *p, struct hs_service_usage *out)
{
	struct hs_service_usage *u = &p->u;
	int64_t rd = 0, wr = 0, user = 0, sys = 0, blkio = 0;
	struct hs_error err;

	if (p->running) {
		pthread_mutex_lock(&p->lock);
		p->stop = true;
		pthread_cond_signal(&p->cond);
		pthread_mutex_unlock(&p->lock);
		pthread_join(p->thread, NULL);
	}
	if (!out)
		goto done;
	/* the last sample: the window ends now */
	if (sample_and_settle(p, &err) && u->nnotes < HS_SERVICE_NOTES)
		note(u, "the last sample failed: %s", err.msg);
	u->wall_s = (double)(hs_monotonic_ns() - p->begin_ns) / 1e9;
	for (size_t i = 0; i < p->nm; i++) {
		rd += (int64_t)(p->m[i].last.rd - p->m[i].base.rd);
		wr += (int64_t)(p->m[i].last.wr - p->m[i].base.wr);
		user += (int64_t)(p->m[i].last.user - p->m[i].base.user);
		sys += (int64_t)(p->m[i].last.sys - p->m[i].base.sys);
		u->procs_now += p->m[i].live;
	}
	for (size_t i = 0; i < p->nt; i++)
		blkio += (int64_t)(p->t[i].last - p->t[i].base);
	u->procs_seen = p->nm;
	u->threads_max = p->threads_max;
	u->ended = p->ended;
	/* a parent that had not yet reaped a child whose baseline it took can leave a sum below 0 */
	u->io_known = u->cpu_known = true;
	u->read_bytes = rd > 0 ? (uint64_t)rd : 0;
	u->write_bytes = wr > 0 ? (uint64_t)wr : 0;
	u->user_s = user > 0 ? (double)user / (double)p->hz : 0;
	u->sys_s = sys > 0 ? (double)sys / (double)p->hz : 0;
	u->io_partial = p->io_partial;
	u->cpu_partial = p->cpu_partial;
	if (p->io_partial)
		note(u, "a process of the service ended with no parent among its processes to count "
		     "it: its disk bytes and CPU time are counted up to its last sample (a lower bound)");
	if (p->psi) {
		u->wait = HS_SERVICE_WAIT_PSI;
		u->io_wait_s = (double)(p->psi_last - p->psi_base) / 1e6;
	} else if (p->delayacct) {
		u->wait = HS_SERVICE_WAIT_DELAYACCT;
		u->io_wait_s = blkio > 0 ? (double)blkio / (double)p->hz : 0;
		u->wait_partial = p->wait_partial;
		note(u, "the service's I/O wait is the delay accounting of its threads, summed "
		     "(thread-seconds: it can exceed the wall time)%s; neither are waits for "
		     "asynchronous I/O (io_uring, libaio: InnoDB's native AIO), nor those of processes "
		     "that start and end within 0.1 s",
		     p->wait_partial ? ", a lower bound: threads ended between samples" : "");
	} else {
		u->wait = HS_SERVICE_WAIT_UNKNOWN;
		note(u, "the service's I/O wait is unknown: %s, and delay accounting is off "
		     "(sysctl kernel.task_delayacct=1 turns it on, as root; it counts from then on)",
		     p->s.kind == HS_SERVICE_PID ? "a process has no io.pressure of its own" :
		     p->s.cg_version == 1 ? "io.pressure exists only for cgroup v2 cgroups, and this one is v1" :
		     "its cgroup's io.pressure cannot be read");
	}
	*out = *u;
done:
	probe_free(p);
	return 0;
}

int hs_service_memcg(const struct hs_service *s, struct hs_memcg *m)
{
	pid_t *pids = NULL;
	size_t cap = 0;
	ssize_t n = hs_service_pids(s, &pids, &cap);
	int rc = n < 0 ? (int)n : n == 0 || !pids ? -ESRCH : hs_memcg_of(pids[0], m);

	free(pids);
	return rc;
}
