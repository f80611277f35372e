/*
 * keep.c - keeping profiles' working sets resident (see keep.h).
 *
 * The kept set is an array of files in profile order (the order in which
 * missing pages are read back), with two index lists over it: the large
 * files, checked every tick, and the small ones, checked a slice a tick.
 * A check opens the file, fstats it (a new inode, size or mtime: read it
 * anew), counts its resident kept pages, and closes it: about 5 us a file,
 * mostly the open and close (openat from a directory's descriptor saves
 * nothing measurable). A file held open costs 1.5 us, but 200,000 of them
 * would need as many descriptors, pin deleted files, and still not fit a
 * round in an interval (docs/benchmarks.md).
 *
 * As root, the kernel tells which kept files lose pages (keep-evict.h):
 * those are checked in ticks of their own, at most every second and
 * within the CPU share, so that what is evicted comes back within seconds
 * however long a round of the schedule takes. The schedule goes on beside
 * them: it sees files replaced or deleted, and whatever the events miss.
 *
 * Lock mode maps each file's kept ranges in windows of at most
 * HS_KEEP_LOCK_WINDOW and mlock(2)s them: the first locking at full speed
 * (HS_KEEP_LOCK_BURST a tick, read ahead), later ones a rate's worth a tick; its checks
 * only stat the files. Nothing ever reads the mapped memory: mlock faults
 * pages in through get_user_pages, which reports a page beyond the end of
 * a truncated file as an error, never as SIGBUS, and munmap and the stat
 * touch no page. So a file truncated under its mapping cannot kill the
 * keeper (there is no access a SIGBUS handler could guard); the check that
 * sees it shorter unmaps what lies beyond its end, which the truncation
 * has already taken out of the page cache.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>

#include "base/atomic.h"
#include "keep/keep.h"
#include "kernel/memory.h"
#include "kernel/procfs.h"
#include "profile/profile.h"
#include "cache/residency.h"
#include "base/safeopen.h"
#include "cache/targets.h"
#include "cache/warm.h"
#include "keep/keep-evict.h"
#include "base/u64map.h"

#define NS 1000000000ull

/* ---- scheduling --------------------------------------------------------- */

void hs_keep_sched_init(struct hs_keep_sched *s, uint64_t interval_ns, double cpu_share)
{
	memset(s, 0, sizeof(*s));
	s->interval = interval_ns;
	s->min_period = interval_ns / 4 ? interval_ns / 4 : 1;
	/* evictions told come in bursts (a file, then its neighbours): gathered a while */
	s->event_gap = s->min_period < HS_KEEP_EVENT_GAP_NS ? s->min_period : HS_KEEP_EVENT_GAP_NS;
	s->quiet = HS_KEEP_QUIET_NS;
	s->calm_ns = HS_KEEP_CALM_NS;
	s->cpu_share = cpu_share > 0 ? cpu_share : HS_KEEP_CPU_SHARE;
	/* tight at first: the first reading has just been done, losses come early */
	s->period = s->min_period;
	s->cost = HS_KEEP_COST_GUESS_NS;
	s->round_ns = interval_ns;
}

uint64_t hs_keep_sched_period(const struct hs_keep_sched *s, size_t nlarge)
{
	double need = 2.0 * (double)nlarge * (double)s->cost / s->cpu_share;

	return need > (double)s->period ? (uint64_t)need : s->period;
}

size_t hs_keep_sched_slice(struct hs_keep_sched *s, size_t nsmall, size_t nlarge)
{
	double p = (double)hs_keep_sched_period(s, nlarge), left, round, slice;

	if (!nsmall) {
		s->round_ns = (uint64_t)p;
		return 0;
	}
	/* the share the large files leave: at least half, by the period */
	left = s->cpu_share - (double)nlarge * (double)s->cost / p;
	round = (double)nsmall * (double)s->cost / left;
	if (round < (double)s->interval)
		round = (double)s->interval;
	if (round < p)
		round = p;
	s->round_ns = (uint64_t)round;
	slice = (double)nsmall * p / round;
	if (slice < 1)
		return 1;
	return slice >= (double)nsmall ? nsmall : (size_t)(slice + 0.999999);
}

void hs_keep_sched_checked(struct hs_keep_sched *s, size_t nchecked, uint64_t cpu_ns,
			   uint64_t lost_pages)
{
	if (nchecked) {
		uint64_t per = cpu_ns / nchecked;

		/* smoothed, so that one preempted tick does not halve the rounds */
		s->cost = (3 * s->cost + (per ? per : 1)) / 4;
		if (!s->cost)
			s->cost = 1;
	}
	if (lost_pages) {
		s->period = s->min_period;
		s->calm_ticks = 0;
	} else if (++s->calm_ticks >= 4 && s->period < s->interval) {
		s->period = s->period * 2 < s->interval ? s->period * 2 : s->interval;
	}
}

size_t hs_keep_sched_due(const struct hs_keep_sched *s, uint64_t elapsed)
{
	double n = s->cpu_share * (double)(elapsed < s->interval ? elapsed : s->interval) /
		   (double)s->cost;

	return n < 1 ? 1 : n > (double)SIZE_MAX ? SIZE_MAX : (size_t)n;
}

bool hs_keep_sched_pressure(struct hs_keep_sched *s, uint64_t now)
{
	bool was = s->backed_off;

	if (!was)
		s->calm_ns = !s->resumed_calm || now - s->resumed_at >= s->quiet ? HS_KEEP_CALM_NS :
			     2 * s->calm_ns < s->quiet ? 2 * s->calm_ns : s->quiet;
	s->backed_off = true;
	s->pressure_at = now;
	s->calm_known = false;
	return !was;
}

void hs_keep_sched_memory_stall(struct hs_keep_sched *s, uint64_t now, uint64_t total_us)
{
	if (!s->backed_off)
		return;
	if (!s->calm_known || total_us < s->calm_total ||
	    total_us - s->calm_total > HS_KEEP_CALM_STALL_US) {
		s->calm_known = true;
		s->calm_at = now;
		s->calm_total = total_us;
	}
}

bool hs_keep_sched_resume(struct hs_keep_sched *s, uint64_t now)
{
	bool calm = s->calm_known && now - s->calm_at >= s->calm_ns &&
		    now - s->pressure_at >= s->calm_ns;

	if (!s->backed_off || (!calm && now - s->pressure_at < s->quiet))
		return false;
	s->backed_off = false;
	s->calm_known = false;
	s->resumed_at = now;
	s->resumed_calm = calm;
	/* pages may have gone meanwhile: look closely again */
	s->period = s->min_period;
	s->calm_ticks = 0;
	return true;
}

bool hs_keep_sched_io_pressure(struct hs_keep_sched *s, uint64_t now)
{
	bool was = s->trickle;

	s->trickle = true;
	s->trickle_at = now;
	return !was;
}

bool hs_keep_sched_io_resume(struct hs_keep_sched *s, uint64_t now)
{
	if (!s->trickle || now - s->trickle_at < s->quiet)
		return false;
	s->trickle = false;
	return true;
}

/* ---- the state file ------------------------------------------------------ */

/* A profile path on one line: backslash and newline escaped. */
static void put_escaped(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\\\", f);
		else if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
}

static void unescape(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (*s == '\\' && (s[1] == '\\' || s[1] == 'n'))
			*o++ = *++s == 'n' ? '\n' : '\\';
		else
			*o++ = *s;
	}
	*o = '\0';
}

#define STATE_MAGIC "hotset-keep-state 1"

/*
 * The state, to path: mode, and made uid's and gid's unless they are -1
 * (a view, for the user it shows).
 */
static int state_write(const char *path, const struct hs_keep_state *st, mode_t mode, uid_t uid,
		       gid_t gid)
{
	struct hs_atomic_file *af = NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int rc, fd = -1;

	if (!f)
		return -ENOMEM;
	fprintf(f, STATE_MAGIC "\n");
	fprintf(f, "pid %d\nrunning %d\n", (int)st->pid, st->running);
	fprintf(f, "since %lld\nstarted %lld\nupdated %lld\n", (long long)st->since_ns,
		(long long)st->started_ns, (long long)hs_realtime_ns());
	fprintf(f, "refault_pages %llu\nrewarmed_pages %llu\nrewarms %llu\nbackoffs %llu\n",
		(unsigned long long)st->refault_pages, (unsigned long long)st->rewarmed_pages,
		(unsigned long long)st->rewarms, (unsigned long long)st->backoffs);
	fprintf(f, "last_rewarm %lld\nlast_backoff %lld\n", (long long)st->last_rewarm_ns,
		(long long)st->last_backoff_ns);
	fprintf(f, "backed_off %d\nbackoff_reason %s\npressure %s\nevictions %s\n", st->backed_off,
		st->backoff_reason, st->pressure, st->evictions);
	fprintf(f, "budget %llu\nfiles %llu\npages %llu\nbytes %llu\nunknown_files %llu\n"
		"dropped_files %llu\nreplaced_files %llu\ninterval %llu\nround %llu\n",
		(unsigned long long)st->budget_bytes, (unsigned long long)st->files,
		(unsigned long long)st->pages, (unsigned long long)st->bytes,
		(unsigned long long)st->unknown_files, (unsigned long long)st->dropped_files,
		(unsigned long long)st->replaced_files, (unsigned long long)st->interval_ns,
		(unsigned long long)st->round_ns);
	if (st->view)
		fprintf(f, "view_uid %u\n", (unsigned)st->view_uid);
	fprintf(f, "mode %s\nlocked_files %llu\nlocked_bytes %llu\nprotected_bytes %llu\n",
		st->mode[0] ? st->mode : "watch", (unsigned long long)st->locked_files,
		(unsigned long long)st->locked_bytes, (unsigned long long)st->protected_bytes);
	if (st->io_pressure[0]) {
		fputs("io_pressure ", f);
		put_escaped(f, st->io_pressure);
		fputc('\n', f);
	}
	if (st->protect_cgroup[0]) {
		fputs("protect_cgroup ", f);
		put_escaped(f, st->protect_cgroup);
		fputc('\n', f);
	}
	for (size_t i = 0; i < st->nprofiles; i++) {
		fputs("profile ", f);
		put_escaped(f, st->profiles[i]);
		fputc('\n', f);
	}
	fputs("end\n", f);
	if (fclose(f) != 0) {
		free(buf);
		return -ENOMEM;
	}
	rc = hs_atomic_open(path, mode, &af, &fd, NULL);
	/* before a byte is written: the figures are of files others may not query */
	if (!rc && (fchmod(fd, mode) < 0 ||
		    ((uid != (uid_t)-1 || gid != (gid_t)-1) && fchown(fd, uid, gid) < 0)))
		rc = -errno;
	for (const char *p = buf; !rc && len;) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno != EINTR)
			rc = -errno;
		else if (n > 0)
			p += n, len -= (size_t)n;
	}
	if (af)
		rc = hs_atomic_commit(af, rc);
	free(buf);
	return rc;
}

int hs_keep_state_write(const char *path, const struct hs_keep_state *st)
{
	return state_write(path, st, 0600, (uid_t)-1, (gid_t)-1);
}

int hs_keep_state_write_view(const char *path, const struct hs_keep_state *st, uid_t uid,
			     gid_t gid)
{
	return state_write(path, st, 0400, uid, gid);
}

char *hs_keep_view_path(const char *path, uid_t uid)
{
	char *p;

	return asprintf(&p, "%s.uid-%u", path, (unsigned)uid) < 0 ? NULL : p;
}

void hs_keep_state_release(struct hs_keep_state *st)
{
	for (size_t i = 0; i < st->nprofiles; i++)
		free(st->profiles[i]);
	free(st->profiles);
	st->profiles = NULL;
	st->nprofiles = 0;
}

/* The value of "key value" into the field that key names; false if no field does. */
static bool state_field(struct hs_keep_state *st, const char *key, char *val, bool *bad)
{
	static const struct {
		const char *key;
		size_t off;
		int kind;	/* 0 u64, 1 i64, 2 bool */
	} fields[] = {
#define U(k, f) { k, offsetof(struct hs_keep_state, f), 0 }
#define I(k, f) { k, offsetof(struct hs_keep_state, f), 1 }
		U("refault_pages", refault_pages), U("rewarmed_pages", rewarmed_pages),
		U("rewarms", rewarms), U("backoffs", backoffs), I("last_rewarm", last_rewarm_ns),
		I("last_backoff", last_backoff_ns), I("since", since_ns), I("started", started_ns),
		I("updated", updated_ns), U("budget", budget_bytes), U("files", files),
		U("pages", pages), U("bytes", bytes), U("unknown_files", unknown_files),
		U("dropped_files", dropped_files), U("replaced_files", replaced_files),
		U("interval", interval_ns), U("round", round_ns),
		U("locked_files", locked_files), U("locked_bytes", locked_bytes),
		U("protected_bytes", protected_bytes),
		{ "running", offsetof(struct hs_keep_state, running), 2 },
		{ "backed_off", offsetof(struct hs_keep_state, backed_off), 2 },
#undef U
#undef I
	};
	char *end;

	if (!strcmp(key, "pid")) {
		st->pid = (pid_t)strtol(val, &end, 10);
		*bad = end == val || *end;
		return true;
	}
	if (!strcmp(key, "view_uid")) {
		errno = 0;
		st->view_uid = (uid_t)strtoul(val, &end, 10);
		st->view = true;
		*bad = end == val || *end || errno || *val == '-';
		return true;
	}
	{
		static const struct {
			const char *key;
			size_t off, size;
		} strs[] = {
#define T(k, f) { k, offsetof(struct hs_keep_state, f), sizeof(((struct hs_keep_state *)0)->f) }
			T("backoff_reason", backoff_reason), T("pressure", pressure), T("mode", mode),
			T("protect_cgroup", protect_cgroup), T("evictions", evictions),
			T("io_pressure", io_pressure),
#undef T
		};

		for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++) {
			if (strcmp(key, strs[i].key))
				continue;
			unescape(val);
			snprintf((char *)st + strs[i].off, strs[i].size, "%s", val);
			return true;
		}
	}
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		char *p = (char *)st + fields[i].off;

		if (strcmp(key, fields[i].key))
			continue;
		errno = 0;
		if (fields[i].kind == 0)
			*(uint64_t *)p = strtoull(val, &end, 10);
		else if (fields[i].kind == 1)
			*(int64_t *)p = strtoll(val, &end, 10);
		else
			*(bool *)p = strtol(val, &end, 10) != 0;
		*bad = end == val || *end || errno || (fields[i].kind == 0 && *val == '-');
		return true;
	}
	return false;
}

/* A state is a regular file: a FIFO or a device would block, or never end. */
static int state_type(const struct stat *sb, struct hs_error *err)
{
	if (S_ISREG(sb->st_mode))
		return 0;
	return hs_error_set(err, S_ISDIR(sb->st_mode) ? EISDIR : EINVAL,
			    "not a regular file: a state file is a file of its own");
}

int hs_keep_state_read(const char *path, struct hs_keep_state *st, struct hs_error *err)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	struct stat sb;
	FILE *f = NULL;
	int rc;

	memset(st, 0, sizeof(*st));
	if (fd < 0)
		return hs_error_set(err, errno, "%s", strerror(errno));
	if (fstat(fd, &sb) < 0)
		rc = hs_error_set(err, errno, "%s", strerror(errno));
	else if (!(rc = state_type(&sb, err)) && !(f = fdopen(fd, "r")))
		rc = hs_error_set(err, errno, "%s", strerror(errno));
	if (!f) {
		close(fd);
		return rc;
	}
	rc = hs_keep_state_parse(f, st, err);
	fclose(f);
	return rc;
}

int hs_keep_state_parse(FILE *f, struct hs_keep_state *st, struct hs_error *err)
{
	char *line = NULL;
	size_t cap = 0, pcap = 0;
	ssize_t n;
	unsigned lineno = 0;
	bool ended = false;
	int rc = 0;

	memset(st, 0, sizeof(*st));
	while (!rc && !ended && (n = getline(&line, &cap, f)) >= 0) {
		char *val;
		bool bad = false;

		lineno++;
		if (n && line[n - 1] == '\n')
			line[--n] = '\0';
		if (lineno == 1) {
			if (strcmp(line, STATE_MAGIC))
				rc = hs_error_set(err, EINVAL, "not a keep state file (no \"%s\" line)",
						  STATE_MAGIC);
			continue;
		}
		if (!strcmp(line, "end")) {
			ended = true;
			continue;
		}
		val = strchr(line, ' ');
		val = val ? (*val = '\0', val + 1) : line + n;
		if (!strcmp(line, "profile")) {
			char *p = strdup(val);

			if (!p || hs_grow(&st->profiles, &pcap, st->nprofiles + 1, sizeof(char *))) {
				free(p);
				rc = -ENOMEM;
				break;
			}
			unescape(p);
			st->profiles[st->nprofiles++] = p;
		} else if (state_field(st, line, val, &bad) && bad) {
			rc = hs_error_set(err, EINVAL, "line %u: a bad value for %s", lineno, line);
		}
		/* keys this version does not know are skipped: a newer keeper wrote them */
	}
	if (!rc && !ended)
		rc = hs_error_set(err, EINVAL, "%s", lineno ? "cut short (no \"end\" line)" : "empty");
	free(line);
	if (rc)
		hs_keep_state_release(st);
	return rc;
}

static char *lock_path(const char *path)
{
	char *p;

	return asprintf(&p, "%s.lock", path) < 0 ? NULL : p;
}

static pid_t read_pid(int fd)
{
	char buf[32];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return (pid_t)strtol(buf, NULL, 10);
}

int hs_keep_lock_own(int fd)
{
	char pid[32];
	int n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());

	errno = 0;
	if (ftruncate(fd, 0) < 0 || pwrite(fd, pid, (size_t)n, 0) != n)
		return errno ? -errno : -EIO;	/* a short write says no errno */
	return 0;
}

int hs_keep_lock(const char *path, pid_t *holder)
{
	char *lp = lock_path(path);
	int fd, rc;

	*holder = 0;
	if (!lp)
		return -ENOMEM;
	/* a regular file, never through another user's link (atomic.h) */
	fd = hs_open_regular(lp, O_RDWR | O_CREAT, 0644, NULL);
	free(lp);
	if (fd < 0)
		return fd;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int err = errno == EWOULDBLOCK ? -EWOULDBLOCK : -errno;

		if (err == -EWOULDBLOCK)
			*holder = read_pid(fd);
		close(fd);
		return err;
	}
	if ((rc = hs_keep_lock_own(fd))) {
		close(fd);
		return rc;
	}
	return fd;
}

pid_t hs_keep_lock_holder(const char *path)
{
	char *lp = lock_path(path);
	pid_t pid = 0;
	int fd;

	if (!lp)
		return -ENOMEM;
	fd = hs_open_regular(lp, O_RDONLY, 0, NULL);	/* never a FIFO, which would block */
	free(lp);
	if (fd < 0)
		return fd;
	if (flock(fd, LOCK_SH | LOCK_NB) < 0)
		pid = errno == EWOULDBLOCK ? (read_pid(fd) > 0 ? read_pid(fd) : 1) : -errno;
	close(fd);
	return pid;
}

/* ---- the kept set ----------------------------------------------------------- */

enum { F_WATCHED, F_UNKNOWN, F_DROPPED, F_REPLACED };
enum { P_NONE, P_FIRST, P_REFAULT };	/* why a file waits to be read (or locked) */

/* Lock mode: one mapping of a file, pages first .. first + npages - 1. */
struct kwin {
	char *addr;
	uint64_t first, npages;
	bool locked;
};

struct kfile {
	char *path;
	struct hs_range *ranges;	/* in this machine's pages, cut by the budget */
	size_t nranges;
	uint64_t pages;			/* kept pages (within the file when loaded) */
	uint64_t dev, ino, size;
	int64_t mtime_sec;
	uint32_t mtime_nsec;
	uint64_t resident;		/* kept pages resident at the last look */
	struct kwin *wins;		/* lock mode: its mappings, once mapped */
	size_t nwins;
	uint64_t locked;		/* pages of them locked */
	unsigned char state, pending;
	bool large, warned;
	unsigned owner;			/* whose credentials open it: hs_keep.owners */
	bool due;			/* told evicted, waiting in hs_keep.due */
	uint64_t read_at;		/* ns: when pages of it were last read back */
	uint64_t read_mem;		/* us: memory "some total" before that read */
};

struct kset {
	struct kfile *files;
	size_t n, cap;
	size_t *large, nlarge;		/* indices into files */
	size_t *small, nsmall;
	uint64_t pages, bytes, unknown, stale;
	uint64_t budget_pages;		/* left to spend while loading */
	uint64_t locked_pages, locked_files;	/* lock mode: now */
	size_t *powner;			/* each profile's owner (hs_keep.owners) */
};

/*
 * The owner of some of the profiles, whose credentials read their files.
 * owners[0] is the keeper itself (and every profile's owner when it is
 * not root); a root keeper adds one for each other owner of a profile,
 * and keeps it (with its counters) for the run, active while one of its
 * profiles is kept.
 */
struct kowner {
	uid_t uid;
	gid_t gid;
	gid_t *groups;			/* supplementary groups, as initgroups(3) gives */
	int ngroups;
	bool active;
	bool view_warned;		/* a view that could not be written was said */
	struct hs_keep_state st;	/* its view: the figures of its files alone */
	struct u64map ids;		/* while loading: (dev, ino) -> file index + 1 */
	uint64_t tick_read, tick_files;	/* read back in this re-warm */
};

static void unmap_file(struct kset *s, struct kfile *f)
{
	const uint64_t ps = hs_page_size();

	for (size_t w = 0; w < f->nwins; w++)
		munmap(f->wins[w].addr, f->wins[w].npages * ps);
	free(f->wins);
	f->wins = NULL;
	f->nwins = 0;
	if (f->locked) {
		s->locked_pages -= f->locked;
		s->locked_files--;
	}
	f->locked = 0;
}

static void kset_free(struct kset *s)
{
	for (size_t i = 0; i < s->n; i++) {
		unmap_file(s, &s->files[i]);
		free(s->files[i].path);
		free(s->files[i].ranges);
	}
	free(s->files);
	free(s->large);
	free(s->small);
	free(s->powner);
	memset(s, 0, sizeof(*s));
}

struct hs_keep {
	struct hs_keep_opts o;
	struct hs_keep_state st;
	struct hs_keep_sched sched;
	struct kset set;
	size_t cursor;			/* the next small file to check */
	size_t *pend;			/* files waiting to be read, in no order */
	size_t npend, pend_cap;
	/* pressure: memory and io */
	int trig[2];
	bool averages[2];		/* no trigger: its avg10, each tick */
	double threshold[2];		/* percent, for the averages and the message */
	struct hs_keep_trigger used[2];	/* the thresholds of the triggers made */
	uint64_t own_mem_until;		/* ns: memory pressure before this may be our own */
	bool thrashing;			/* pages read back lost again within HS_KEEP_QUIET_NS */
	const char *pdir[2], *pname[2];	/* the pressure files: pdir/pname */
	char io_dir[PATH_MAX];		/* a cgroup's, if io pressure is read there */
	/* our own reads, to tell others' io stall from ours (io_event) */
	uint64_t read_end;		/* ns: when our last reads ended */
	uint64_t mark_at;		/* ns: others' stall is measured from then */
	uint64_t mark_total;		/* us: io "some total" then */
	bool mark_known;
	uint64_t io_check_at;		/* ns: whether an io event was others' is measured then */
	const char *io_check_how;
	uint64_t next_read_at;		/* ns: a trickle reads again no sooner */
	double read_bps;		/* bytes a second our last reads took in */
	uint64_t mem_before;		/* us: memory "some total" before this re-warm */
	bool mem_known;
	bool initial;			/* lock mode: the first locking, at full speed */
	bool stop;
	int stop_signal;
	bool dirty;			/* the state changed since it was written */
	pthread_mutex_t lock;		/* the warm file callback, from I/O threads */
	bool protect_made;		/* --protect made the cgroup st.protect_cgroup */
	uint64_t tick_read, tick_files;
	/* evictions told by the kernel (NULL: by the checks alone) */
	struct keep_evict *evict;
	struct ino_index *inos;		/* the watched files by inode number */
	size_t ninos;
	bool inos_stale;		/* a file got a new inode since they were sorted */
	size_t *due;			/* files told evicted, in the order told */
	size_t ndue, due_cap;
	uint64_t event_tick_at;		/* ns: the last tick of them */
	/* whose credentials read what (struct kowner) */
	struct kowner *owners;
	size_t nowners, owners_cap;
	size_t creds;			/* the owner whose credentials this thread has now */
	uint64_t map_refused;		/* lock mode: files mmap refused (ENOMEM), not said yet */
};

struct ino_index {
	uint64_t ino;
	size_t i;
};

static const char *const resource[2] = { "memory", "io" };

static void emit(struct hs_keep *k, struct hs_keep_event *e)
{
	if (k->o.event)
		k->o.event(k->o.ctx, e);
}

static void warn_event(struct hs_keep *k, const char *path, int errnum, const char *what)
{
	struct hs_keep_event e = { .kind = HS_KEEP_WARN, .path = path, .errnum = errnum,
				   .what = what };

	emit(k, &e);
}

/* ---- whose credentials read what -------------------------------------------------- */

/*
 * A keeper run as root (a service, Slurm's epilog's keeper) keeps profiles
 * that users wrote. Reading their files as root would let a user have root
 * open whatever a profile names (a file in another user's 0700 directory:
 * its pages read in, its residency counted into the state), so the files
 * of a profile are opened with its owner's credentials: the filesystem uid
 * and gid and the supplementary groups of the thread that opens them, set
 * with the raw system calls (glibc's setgroups() changes every thread's
 * groups; setfsuid and setfsgid are the thread's own). The kernel checks
 * the opens and cachestat(2)/mincore(2) with them: a file the owner cannot
 * read is not opened, one it may read but not query is not watched. A
 * thread rather than a process per owner: one kept set, one budget and one
 * schedule, no messages between processes for a check; and what the
 * credentials leave is what a keeper needs beside them: CAP_IPC_LOCK for
 * lock mode, CAP_BPF for the eviction events, root's files for its state
 * (the kernel drops only the filesystem capabilities while the fsuid is
 * not 0). Everything but the opens and the residency runs as the keeper:
 * creds_use(k, 0) puts its own back.
 */
static uid_t fsuid_now(void)
{
	return (uid_t)syscall(SYS_setfsuid, (uid_t)-1);	/* an invalid id: changes nothing */
}

static gid_t fsgid_now(void)
{
	return (gid_t)syscall(SYS_setfsgid, (gid_t)-1);
}

/* This thread's credentials for files: owner i's. Returns 0 or -EPERM. */
static int creds_use(struct hs_keep *k, size_t i)
{
	const struct kowner *me, *o;

	if (k->creds == i)
		return 0;
	me = &k->owners[0];
	o = &k->owners[i];
	if (k->creds != 0) {
		/* the keeper's own first: from another user's, only it may take a third's */
		syscall(SYS_setfsuid, me->uid);
		syscall(SYS_setfsgid, me->gid);
		if (syscall(SYS_setgroups, (size_t)me->ngroups, me->groups) < 0 ||
		    fsuid_now() != me->uid || fsgid_now() != me->gid)
			return -EPERM;
		k->creds = 0;
	}
	if (i == 0)
		return 0;
	if (syscall(SYS_setgroups, (size_t)o->ngroups, o->groups) == 0) {
		syscall(SYS_setfsgid, o->gid);
		syscall(SYS_setfsuid, o->uid);
		if (fsuid_now() == o->uid && fsgid_now() == o->gid) {
			k->creds = i;
			return 0;
		}
	}
	/* half taken: the keeper's own again, and nothing opened as anyone */
	k->creds = i;
	creds_use(k, 0);
	return -EPERM;
}

/* owners[0]: the keeper, with its own ids and groups. */
static int owner_self(struct hs_keep *k)
{
	struct kowner *me;
	int n = getgroups(0, NULL);

	if (n < 0 || hs_grow(&k->owners, &k->owners_cap, 1, sizeof(*k->owners)))
		return -ENOMEM;
	me = &k->owners[0];
	memset(me, 0, sizeof(*me));
	k->nowners = 1;
	me->uid = geteuid();
	me->gid = getegid();
	me->active = true;
	if (!(me->groups = malloc(((size_t)n + 1) * sizeof(gid_t))) ||
	    (me->ngroups = getgroups(n, me->groups)) < 0)
		return -ENOMEM;
	return 0;
}

/*
 * The supplementary groups of the user called name, of primary group gid
 * (getgrouplist(3), as initgroups(3) sets them at login): 0, or -ENOMEM.
 */
static int groups_of(const char *name, gid_t gid, gid_t **groups, int *n)
{
	int want = 32;

	for (;;) {
		gid_t *g = malloc((size_t)want * sizeof(*g));
		int got = want;

		if (!g)
			return -ENOMEM;
		if (getgrouplist(name, gid, g, &got) >= 0) {
			*groups = g;
			*n = got;
			return 0;
		}
		free(g);
		if (got <= want)	/* it should have said how many it needs */
			got = want * 2;
		if (got > 65536)
			return -ENOMEM;
		want = got;
	}
}

/* Resume owner o's counters from its view of an earlier run, if there is one. */
static void owner_resume(struct hs_keep *k, struct kowner *o)
{
	struct hs_keep_state old;
	char *path = hs_keep_view_path(k->o.state, o->uid);

	if (path && hs_keep_state_read(path, &old, NULL) == 0) {
		if (old.view && old.view_uid == o->uid) {
			o->st.refault_pages = old.refault_pages;
			o->st.rewarmed_pages = old.rewarmed_pages;
			o->st.rewarms = old.rewarms;
			o->st.last_rewarm_ns = old.last_rewarm_ns;
			o->st.since_ns = old.since_ns;
		}
		hs_keep_state_release(&old);
	}
	free(path);
}

/*
 * The owner whose credentials read a profile of user uid: the keeper
 * itself when it is not root (it has no other credentials to take) or
 * when the profile is its own; else that user, with the primary group
 * and groups the user database gives. A user it does not know is refused:
 * whose groups would read the files could not be told.
 */
static int owner_of(struct hs_keep *k, uid_t uid, size_t *out, struct hs_error *err)
{
	struct passwd pw, *found = NULL;
	struct kowner *o;
	char *buf;
	long size = sysconf(_SC_GETPW_R_SIZE_MAX);
	int rc;

	if (k->owners[0].uid != 0 || uid == k->owners[0].uid) {
		*out = 0;
		return 0;
	}
	for (size_t i = 1; i < k->nowners; i++) {
		if (k->owners[i].uid == uid) {
			*out = i;
			return 0;
		}
	}
	if (size < 16384)
		size = 16384;
	if (!(buf = malloc((size_t)size)))
		return -ENOMEM;
	rc = getpwuid_r(uid, &pw, buf, (size_t)size, &found);
	if (!found) {
		free(buf);
		return hs_error_set(err, rc ? rc : ESRCH, "owned by uid %u, which the user database "
				    "does not know%s%s: a root keeper reads a profile's files with its "
				    "owner's credentials, and those cannot be told", (unsigned)uid,
				    rc ? " (" : "", rc ? strerror(rc) : "");
	}
	if (hs_grow(&k->owners, &k->owners_cap, k->nowners + 1, sizeof(*k->owners))) {
		free(buf);
		return -ENOMEM;
	}
	o = &k->owners[k->nowners];
	memset(o, 0, sizeof(*o));
	o->uid = uid;
	o->gid = pw.pw_gid;
	rc = groups_of(pw.pw_name, pw.pw_gid, &o->groups, &o->ngroups);
	free(buf);
	if (rc)
		return rc;
	owner_resume(k, o);
	if (!o->st.since_ns)
		o->st.since_ns = hs_realtime_ns();
	*out = k->nowners++;
	return 0;
}

static void owners_free(struct hs_keep *k)
{
	for (size_t i = 0; i < k->nowners; i++) {
		free(k->owners[i].groups);
		u64map_free(&k->owners[i].ids);
	}
	free(k->owners);
	k->owners = NULL;
	k->nowners = 0;
}

struct load {
	struct hs_keep *k;
	struct kset *s;
	size_t owner;			/* of the profile being loaded */
	int rc;
};

static void load_warn(void *ctx, const char *path, int errnum, const char *what)
{
	struct load *l = ctx;

	warn_event(l->k, path, errnum, what);
}

/*
 * Append to *v (n ranges, cap) the pages of r[0..nr) that exist below npages,
 * that none of have[0..nhave) holds, and that the budget still pays for.
 */
static int add_ranges(struct kset *s, struct hs_range **v, size_t *n, size_t *cap,
		      const struct hs_range *r, size_t nr, uint64_t npages,
		      const struct hs_range *have, size_t nhave, uint64_t *added)
{
	for (size_t i = 0; i < nr && s->budget_pages; i++) {
		uint64_t a = r[i].first, b = r[i].last < npages ? r[i].last : npages - 1;

		while (a <= b && a < npages && s->budget_pages) {
			uint64_t end = b;

			/* the first page not already kept, and how far the gap goes
			 * (ranges of one profile are few per file: a scan suffices) */
			for (size_t j = 0; j < nhave; j++) {
				if (a >= have[j].first && a <= have[j].last) {
					a = have[j].last + 1;
					j = (size_t)-1;	/* again from the start */
					if (a > b)
						break;
				}
			}
			if (a > b)
				break;
			for (size_t j = 0; j < nhave; j++)
				if (have[j].first > a && have[j].first <= end)
					end = have[j].first - 1;
			if (end - a + 1 > s->budget_pages)
				end = a + s->budget_pages - 1;
			if (hs_grow(v, cap, *n + 1, sizeof(**v)))
				return -ENOMEM;
			(*v)[(*n)++] = (struct hs_range){ a, end };
			s->budget_pages -= end - a + 1;
			*added += end - a + 1;
			a = end + 1;
		}
	}
	return 0;
}

static int load_one(void *ctx, const struct hs_target *t)
{
	struct load *l = ctx;
	struct kset *s = l->s;
	const uint64_t ps = hs_page_size();
	uint64_t npages = ((uint64_t)t->st->st_size + ps - 1) / ps, added = 0;
	struct hs_cache_counts c = { 0 };
	struct kfile *f;
	void *had = NULL;
	size_t cap, idx;
	int rc;

	if (!s->budget_pages)
		return 1;	/* spent: the rest of the profiles is not kept */
	/* a file of profiles of two owners is kept for each: read with the credentials of each */
	rc = u64map_add2(&l->k->owners[l->owner].ids, t->st->st_dev, t->st->st_ino,
			 (void *)(uintptr_t)(s->n + 1), &had);
	if (rc < 0)
		return rc;
	if (!rc) {	/* in an earlier profile too: its pages not kept yet are added */
		f = &s->files[(uintptr_t)had - 1];
		cap = f->nranges;
		{
			struct hs_range *have = malloc((f->nranges ? f->nranges : 1) * sizeof(*have));

			if (!have)
				return -ENOMEM;
			memcpy(have, f->ranges, f->nranges * sizeof(*have));
			rc = add_ranges(s, &f->ranges, &f->nranges, &cap, t->ranges, t->nranges,
					npages, have, f->nranges, &added);
			free(have);
		}
		if (rc)
			return rc;
		f->pages += added;
		s->pages += added;
		f->large = f->pages * ps >= HS_KEEP_LARGE_BYTES;
		return 0;
	}
	if (hs_grow(&s->files, &s->cap, s->n + 1, sizeof(*s->files)))
		return -ENOMEM;
	idx = s->n;
	f = &s->files[idx];
	memset(f, 0, sizeof(*f));
	cap = 0;
	if (t->ranges)
		rc = add_ranges(s, &f->ranges, &f->nranges, &cap, t->ranges, t->nranges, npages,
				NULL, 0, &added);
	else if (npages)	/* never: profile targets have ranges; kept for safety */
		rc = add_ranges(s, &f->ranges, &f->nranges, &cap,
				&(struct hs_range){ 0, npages - 1 }, 1, npages, NULL, 0, &added);
	if (rc || !(f->path = strdup(t->path))) {
		free(f->ranges);
		return rc ? rc : -ENOMEM;
	}
	s->n++;
	f->pages = added;
	f->owner = (unsigned)l->owner;
	f->dev = t->st->st_dev;
	f->ino = t->st->st_ino;
	f->size = (uint64_t)t->st->st_size;
	f->mtime_sec = t->st->st_mtim.tv_sec;
	f->mtime_nsec = (uint32_t)t->st->st_mtim.tv_nsec;
	f->large = added * ps >= HS_KEEP_LARGE_BYTES;
	s->pages += added;
	s->stale += t->stale;
	if (l->k->o.mode == HS_KEEP_LOCK) {
		/* locking needs no residency: only that the file can be read */
		f->pending = P_FIRST;
		return 0;
	}
	rc = hs_residency_count(t->fd, f->size, f->ranges, f->nranges, &c, NULL);
	if (rc == -EPERM) {
		f->state = F_UNKNOWN;
		s->unknown++;
	} else if (rc) {
		warn_event(l->k, f->path, -rc, "cannot read residency, not watched");
		f->state = F_UNKNOWN;
		s->unknown++;
	} else {
		f->resident = c.cached;
		if (c.cached < c.pages)
			f->pending = P_FIRST;
	}
	return 0;
}

/* Index lists of the large and small watched files. */
static int kset_index(struct kset *s)
{
	const uint64_t ps = hs_page_size();

	s->large = malloc((s->n ? s->n : 1) * sizeof(*s->large));
	s->small = malloc((s->n ? s->n : 1) * sizeof(*s->small));
	if (!s->large || !s->small)
		return -ENOMEM;
	s->bytes = 0;
	for (size_t i = 0; i < s->n; i++) {
		struct kfile *f = &s->files[i];

		s->bytes += f->pages * ps;
		if (f->state != F_WATCHED)
			continue;
		if (f->large)
			s->large[s->nlarge++] = i;
		else
			s->small[s->nsmall++] = i;
	}
	return 0;
}

/*
 * Open profile i as the keeper (its owner is the owner of the file read,
 * not of whatever its path names a moment later): *r, and *owner, the
 * owner whose credentials read its files. Returns 0 or -errno with err.
 */
static int profile_load_open(struct hs_keep *k, size_t i, struct hs_profile_reader **r,
			     size_t *owner, struct hs_error *err)
{
	const char *path = k->o.profiles[i];
	struct hs_error e = { 0 };
	struct stat st;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC), rc;

	if (fd < 0)
		return hs_error_set(err, errno, "%s: %s", path, strerror(errno));
	if (fstat(fd, &st) < 0)
		rc = -errno;
	else
		rc = hs_profile_open_fd(fd, r, &e);
	close(fd);
	if (rc) {
		if (rc == -EINVAL && e.line)
			return hs_error_set(err, EINVAL, "%s:%u: %s", path, e.line, e.msg);
		return hs_error_set(err, -rc, "%s: %s", path, e.msg[0] ? e.msg : strerror(-rc));
	}
	if ((rc = owner_of(k, st.st_uid, owner, &e))) {
		hs_profile_close(*r);
		return hs_error_set(err, -rc, "%s: %s", path, e.msg[0] ? e.msg : strerror(-rc));
	}
	return 0;
}

static int kset_load(struct hs_keep *k, struct kset *s, struct hs_error *err)
{
	struct load l = { .k = k, .s = s };
	int rc = 0;

	memset(s, 0, sizeof(*s));
	s->budget_pages = k->o.budget / hs_page_size();
	if (!(s->powner = malloc((k->o.nprofiles ? k->o.nprofiles : 1) * sizeof(*s->powner))))
		return -ENOMEM;
	for (size_t i = 0; i < k->o.nprofiles; i++)
		s->powner[i] = SIZE_MAX;	/* not loaded: the budget was spent before it */
	for (size_t i = 0; i < k->o.nprofiles && !rc; i++) {
		struct hs_profile_reader *r;
		struct hs_error e = { 0 };

		if ((rc = profile_load_open(k, i, &r, &l.owner, err)))
			break;
		s->powner[i] = l.owner;
		/* its files opened, and their residency asked, as its owner */
		if ((rc = creds_use(k, l.owner))) {
			hs_error_set(err, EPERM, "%s: cannot take the credentials of its owner, uid %u",
				     k->o.profiles[i], (unsigned)k->owners[l.owner].uid);
			hs_profile_close(r);
			break;
		}
		rc = hs_targets_profile(r, load_one, load_warn, &l, &e);
		hs_profile_close(r);
		if (rc == 1) {
			rc = 0;	/* the budget is spent */
			break;
		}
		if (rc == -EINVAL)
			hs_error_set(err, EINVAL, "%s:%u: %s", k->o.profiles[i], e.line, e.msg);
		else if (rc)
			hs_error_set(err, -rc, "%s: %s", k->o.profiles[i], strerror(-rc));
	}
	if (creds_use(k, 0) && !rc)
		rc = hs_error_set(err, EPERM, "cannot take back the keeper's own credentials");
	for (size_t i = 0; i < k->nowners; i++)
		u64map_free(&k->owners[i].ids);
	if (!rc)
		rc = kset_index(s);
	if (rc)
		kset_free(s);
	return rc;
}

/* Files waiting to be read: those of a new set, for the first reading. */
static int pend_add(struct hs_keep *k, size_t i)
{
	if (hs_grow(&k->pend, &k->pend_cap, k->npend + 1, sizeof(*k->pend)))
		return -ENOMEM;
	k->pend[k->npend++] = i;
	return 0;
}

static int pend_from_set(struct hs_keep *k)
{
	k->npend = 0;
	for (size_t i = 0; i < k->set.n; i++)
		if (k->set.files[i].pending && pend_add(k, i))
			return -ENOMEM;
	return 0;
}

static void set_counts(struct hs_keep *k)
{
	k->st.files = k->set.n;
	k->st.pages = k->set.pages;
	k->st.bytes = k->set.bytes;
	k->st.unknown_files = k->set.unknown;
	k->st.dropped_files = 0;
	k->st.replaced_files = 0;
	k->st.locked_files = k->set.locked_files;
	k->st.locked_bytes = k->set.locked_pages * hs_page_size();
	for (size_t i = 0; i < k->nowners; i++)
		k->owners[i].st.dropped_files = k->owners[i].st.replaced_files = 0;
}

/* ---- the owners' views ------------------------------------------------------------ */

/*
 * A root keeper's state holds the figures of every kept file, whoever may
 * query it: it is root's alone (0600). Each other owner of a profile gets
 * a view beside it, STATE.uid-UID, made that user's and readable by that
 * user alone: the same state with the figures of that owner's files, which
 * the keeper read with that owner's credentials (so nothing in it is
 * residency the owner could not query), and the keeper's own facts
 * (pressure, interval, mode), which tell nothing of anyone's files; the
 * protected bytes, the sum over every owner's files, are left out.
 */
static int view_of(struct hs_keep *k, size_t i, struct hs_keep_state *v)
{
	const struct kowner *o = &k->owners[i];
	const uint64_t ps = hs_page_size();
	size_t n = 0;

	*v = k->st;
	v->view = true;
	v->view_uid = o->uid;
	v->refault_pages = o->st.refault_pages;
	v->rewarmed_pages = o->st.rewarmed_pages;
	v->rewarms = o->st.rewarms;
	v->last_rewarm_ns = o->st.last_rewarm_ns;
	v->since_ns = o->st.since_ns;
	v->dropped_files = o->st.dropped_files;
	v->replaced_files = o->st.replaced_files;
	v->files = v->pages = v->unknown_files = v->locked_files = v->locked_bytes = 0;
	for (size_t f = 0; f < k->set.n; f++) {
		const struct kfile *kf = &k->set.files[f];

		if (kf->owner != i)
			continue;
		v->files++;
		v->pages += kf->pages;
		v->unknown_files += kf->state == F_UNKNOWN;
		v->locked_files += kf->locked > 0;
		v->locked_bytes += kf->locked * ps;
	}
	v->bytes = v->pages * ps;
	v->protected_bytes = 0;
	v->protect_cgroup[0] = '\0';
	if (!(v->profiles = malloc((k->o.nprofiles ? k->o.nprofiles : 1) * sizeof(char *))))
		return -ENOMEM;
	for (size_t p = 0; p < k->o.nprofiles; p++)
		if (k->set.powner && k->set.powner[p] == i)
			v->profiles[n++] = (char *)k->o.profiles[p];
	v->nprofiles = n;
	return 0;
}

/* Write the view of each owner but the keeper itself (warned once if it fails). */
static void write_views(struct hs_keep *k)
{
	for (size_t i = 1; i < k->nowners; i++) {
		struct kowner *o = &k->owners[i];
		struct hs_keep_state v;
		char *path;
		int rc;

		if (!o->active)
			continue;
		if (!(path = hs_keep_view_path(k->o.state, o->uid)))
			return;
		if (!(rc = view_of(k, i, &v))) {
			rc = hs_keep_state_write_view(path, &v, o->uid, o->gid);
			free(v.profiles);
		}
		if (rc && !o->view_warned) {
			char what[128];

			snprintf(what, sizeof(what), "cannot write the view of uid %u: %s",
				 (unsigned)o->uid, strerror(-rc));
			warn_event(k, path, 0, what);
			o->view_warned = true;
		}
		free(path);
	}
}

/*
 * Which owners have a profile in the kept set; the views of the others,
 * this run's or an earlier one's, removed (the keeper keeps nothing of
 * theirs now: a view would say otherwise).
 */
static void owners_activate(struct hs_keep *k)
{
	const char *slash = strrchr(k->o.state, '/');
	char *dir, prefix[NAME_MAX + 8];
	struct dirent *de;
	DIR *d;

	for (size_t i = 1; i < k->nowners; i++)
		k->owners[i].active = false;
	for (size_t p = 0; p < k->o.nprofiles; p++)
		if (k->set.powner[p] != SIZE_MAX)
			k->owners[k->set.powner[p]].active = true;
	if (k->owners[0].uid != 0)
		return;	/* only root writes views */
	if ((size_t)snprintf(prefix, sizeof(prefix), "%s.uid-", slash ? slash + 1 : k->o.state) >=
	    sizeof(prefix))
		return;
	if (!(dir = slash ? strndup(k->o.state, (size_t)(slash - k->o.state) + 1) : strdup(".")))
		return;
	if ((d = opendir(dir))) {
		while ((de = readdir(d))) {
			const char *num = de->d_name + strlen(prefix);
			char *end;
			unsigned long uid;
			bool kept = false;

			if (strncmp(de->d_name, prefix, strlen(prefix)) || *num < '0' || *num > '9')
				continue;
			errno = 0;
			uid = strtoul(num, &end, 10);
			if (*end || errno)
				continue;
			for (size_t i = 1; i < k->nowners; i++)
				kept |= k->owners[i].active && k->owners[i].uid == uid;
			if (!kept)
				unlinkat(dirfd(d), de->d_name, 0);
		}
		closedir(d);
	}
	free(dir);
}

/* ---- pressure ------------------------------------------------------------------ */

/*
 * Where pressure is read. Memory: the machine's, whatever cgroup the
 * keeper is in: the pages it reads take memory others may need. I/O: the
 * keeper's cgroup v2 when it shares it with other processes (a box, a
 * container, a job's cgroup): the stalls there are those of the jobs it
 * serves, and those of the machine's other jobs, which its reads do not
 * slow, stay out; else (the root cgroup, or one of its own, as a
 * service's) the machine's; or the cgroup named (--io-cgroup: the jobs'
 * slice, for a keeper in a cgroup of its own).
 */
static void pressure_files(struct hs_keep *k)
{
	char mnt[PATH_MAX];
	struct hs_psi psi;

	for (int i = 0; i < 2; i++) {
		k->pdir[i] = k->o.pressure_dir ? k->o.pressure_dir : "/proc/pressure";
		k->pname[i] = resource[i];
	}
	if (k->o.io_cgroup) {
		k->pdir[1] = k->o.io_cgroup;
		k->pname[1] = "io.pressure";
	} else if (!k->o.pressure_dir && hs_cgroup2_dirs(k->io_dir, mnt, sizeof(mnt)) == 0 &&
	    k->io_dir[0] && strcmp(k->io_dir, mnt) && hs_cgroup_nprocs(k->io_dir) > 1 &&
	    hs_psi_read(k->io_dir, "io.pressure", &psi) == 0) {
		k->pdir[1] = k->io_dir;
		k->pname[1] = "io.pressure";
	}
	if ((size_t)snprintf(k->st.io_pressure, sizeof(k->st.io_pressure), "%s/%s", k->pdir[1],
			     k->pname[1]) >= sizeof(k->st.io_pressure))
		k->st.io_pressure[0] = '\0';	/* too long to show */
}

/*
 * A trigger for resource i: the thresholds asked for, else the same share
 * over a window of 2 s (unprivileged users may only use multiples of 2 s),
 * else its averages, read each tick, with a note saying why.
 */
static void pressure_setup(struct hs_keep *k)
{
	const struct hs_keep_trigger def[2] = { { 100000, 1000000 }, { 150000, 1000000 } };
	const struct hs_keep_trigger *want[2] = { &k->o.memory, &k->o.io };
	int nfail = 0, ntrig = 0;

	for (int i = 0; i < 2; i++) {
		struct hs_keep_trigger t = want[i]->window_us ? *want[i] : def[i];
		const char *dir = k->pdir[i], *name = k->pname[i];
		struct hs_psi psi;
		char note[PATH_MAX + 256];
		int fd;

		k->trig[i] = -1;
		k->threshold[i] = 100.0 * (double)t.stall_us / (double)t.window_us;
		fd = hs_psi_trigger(dir, name, t.stall_us, t.window_us);
		if (fd < 0 && fd != -ENOENT && t.window_us % 2000000) {
			uint64_t w = (t.window_us / 2000000 + 1) * 2000000;
			int again = hs_psi_trigger(dir, name, t.stall_us * w / t.window_us, w);

			if (again >= 0) {
				fd = again;
				t.stall_us = t.stall_us * w / t.window_us;
				t.window_us = w;
			}
		}
		if (fd >= 0) {
			k->trig[i] = fd;
			k->used[i] = t;
			ntrig++;
			continue;
		}
		if (hs_psi_read(dir, name, &psi) < 0) {
			snprintf(note, sizeof(note), "no pressure stall information in %s/%s (%s): "
				 "not backing off under %s pressure", dir, name, strerror(-fd),
				 resource[i]);
			nfail++;
		} else {
			snprintf(note, sizeof(note), "cannot create a PSI trigger on %s/%s (%s%s): "
				 "reading its avg10 each tick instead, backing off above %.1f%%",
				 dir, name, strerror(-fd),
				 fd == -EACCES || fd == -EPERM ?
				 "; triggers need CAP_SYS_RESOURCE before Linux 6.5" : "",
				 k->threshold[i]);
			k->averages[i] = true;
		}
		{
			struct hs_keep_event e = { .kind = HS_KEEP_NOTE, .what = note };

			emit(k, &e);
		}
	}
	snprintf(k->st.pressure, sizeof(k->st.pressure), "%s",
		 ntrig == 2 ? "trigger" : nfail == 2 ? "none" : "averages");
}

/* avg10 of "some" for resource i, or -1. */
static double avg10(struct hs_keep *k, int i)
{
	struct hs_psi psi;

	return hs_psi_read(k->pdir[i], k->pname[i], &psi) < 0 ? -1 : psi.some.avg10;
}

/* What the keeper backs off for: memory, or io if it only trickles. */
static void set_reason(struct hs_keep *k)
{
	k->st.backed_off = k->sched.backed_off || k->sched.trickle;
	snprintf(k->st.backoff_reason, sizeof(k->st.backoff_reason), "%s",
		 k->sched.backed_off ? "memory" : k->sched.trickle ? "io" : "");
	k->dirty = true;
}

static void pressure_event(struct hs_keep *k, int i, uint64_t now, const char *how)
{
	double v = avg10(k, i);

	if (!hs_keep_sched_pressure(&k->sched, now))
		return;
	k->st.backoffs++;
	k->st.last_backoff_ns = hs_realtime_ns();
	set_reason(k);
	{
		struct hs_keep_event e = { .kind = HS_KEEP_BACKOFF, .resource = resource[i],
					   .value = v, .how = how, .trigger = k->used[i],
					   .threshold = k->threshold[i], .share = -1 };

		emit(k, &e);
	}
}

/* Others' io pressure (share: their stall measured, percent, or -1): a trickle. */
static void io_pressure(struct hs_keep *k, uint64_t now, const char *how, double share)
{
	if (!hs_keep_sched_io_pressure(&k->sched, now))
		return;
	k->st.backoffs++;
	k->st.last_backoff_ns = hs_realtime_ns();
	set_reason(k);
	{
		struct hs_keep_event e = { .kind = HS_KEEP_BACKOFF, .resource = "io",
					   .value = avg10(k, 1), .how = how, .trigger = k->used[1],
					   .threshold = k->threshold[1], .share = share };

		emit(k, &e);
	}
}

/* ns: the span an io event tells of (the trigger's window; avg10's 10 s) */
static uint64_t io_span(const struct hs_keep *k)
{
	return k->trig[1] >= 0 && k->used[1].window_us ? k->used[1].window_us * 1000 : 10 * NS;
}

static void io_mark(struct hs_keep *k, uint64_t now);

/*
 * io pressure told at now (by the trigger, or the averages). PSI counts
 * our own reads' stalls too and cannot say whose a stall was; but the
 * reads are ours to stop. So if we read within the span the event tells
 * of, we read nothing for a window and take the stall of that window,
 * which is all others' (io_decide); else the stall was others' already.
 */
static void io_event(struct hs_keep *k, uint64_t now, const char *how)
{
	uint64_t w = k->used[1].window_us ? k->used[1].window_us * 1000 : NS;

	if (!k->read_end || now >= k->read_end + io_span(k)) {
		io_pressure(k, now, how, -1);
		return;
	}
	if (!k->io_check_at) {
		if (k->read_end + w <= now)	/* a window since already: measured from now */
			io_mark(k, now);
		k->io_check_at = k->mark_at + w;
		k->io_check_how = how;
	}
}

/* Others' io stall is measured from now: the total now. */
static void io_mark(struct hs_keep *k, uint64_t now)
{
	struct hs_psi psi;

	k->mark_at = now;
	k->mark_known = hs_psi_read(k->pdir[1], k->pname[1], &psi) == 0;
	k->mark_total = k->mark_known ? psi.some.total : 0;
}

/* Our reads of bytes, begun at began, ended now. */
static void read_done(struct hs_keep *k, uint64_t began, uint64_t bytes)
{
	uint64_t now = hs_monotonic_ns();

	k->read_end = now;
	io_mark(k, now);
	/* a trickle reads at most an HS_KEEP_TRICKLE-th of the time */
	k->next_read_at = now + (HS_KEEP_TRICKLE - 1) * (now - began);
	if (bytes && now > began)
		k->read_bps = (double)bytes * 1e9 / (double)(now - began);
}

/*
 * What a trickle may read in one go, of budget bytes at the full rate: an
 * HS_KEEP_TRICKLE-th, and no more than the last reads' speed takes in
 * HS_KEEP_TRICKLE_BURST_NS (a slow or throttled disk: short bursts, not
 * one long one every so often).
 */
static uint64_t trickle_budget(const struct hs_keep *k, uint64_t budget)
{
	double burst = k->read_bps * (double)HS_KEEP_TRICKLE_BURST_NS / 1e9;

	budget /= HS_KEEP_TRICKLE;
	if (k->read_bps > 0 && burst < (double)budget)
		budget = (uint64_t)burst;
	return budget > HS_KEEP_TRICKLE_MIN ? budget : HS_KEEP_TRICKLE_MIN;
}

/* The window after an io event, without reads of ours, is over: whose was it? */
static void io_decide(struct hs_keep *k, uint64_t now)
{
	struct hs_psi psi;
	double share;

	k->io_check_at = 0;
	if (!k->mark_known || now <= k->mark_at ||
	    hs_psi_read(k->pdir[1], k->pname[1], &psi) < 0 || psi.some.total < k->mark_total)
		return;
	share = 100.0 * (double)(psi.some.total - k->mark_total) * 1000.0 /
		(double)(now - k->mark_at);
	if (share >= k->threshold[1])
		io_pressure(k, now, k->io_check_how, share > 100 ? 100 : share);
}

/* ---- a tick: check, then read back ------------------------------------------------ */

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * NS + (uint64_t)ts.tv_nsec;
}

/*
 * f is kept no longer: deleted, or replaced (what: by what, for the
 * event). Its pages are unlocked (never pin a deleted file's pages, nor
 * the old inode of one replaced), the eBPF map forgets its inode.
 */
static void drop(struct hs_keep *k, struct kfile *f, const char *what)
{
	struct hs_keep_event e = { .kind = what ? HS_KEEP_REPLACED : HS_KEEP_DELETED,
				   .path = f->path, .what = what };
	struct hs_keep_state *own = &k->owners[f->owner].st;

	if (k->evict && f->state == F_WATCHED) {
		keep_evict_unwatch(k->evict, f->ino);
		k->inos_stale = true;
	}
	f->state = what ? F_REPLACED : F_DROPPED;
	f->pending = P_NONE;
	unmap_file(&k->set, f);
	if (what) {
		k->st.replaced_files++;
		own->replaced_files++;
	} else {
		k->st.dropped_files++;
		own->dropped_files++;
	}
	k->dirty = true;
	emit(k, &e);
}

static void take_stat(struct kfile *f, const struct stat *st)
{
	f->dev = st->st_dev;
	f->ino = st->st_ino;
	f->size = (uint64_t)st->st_size;
	f->mtime_sec = st->st_mtim.tv_sec;
	f->mtime_nsec = (uint32_t)st->st_mtim.tv_nsec;
}

static bool same_file(const struct kfile *f, const struct stat *st)
{
	return f->dev == st->st_dev && f->ino == st->st_ino;
}

static bool unchanged(const struct kfile *f, const struct stat *st)
{
	return same_file(f, st) && f->size == (uint64_t)st->st_size &&
	       f->mtime_sec == st->st_mtim.tv_sec && f->mtime_nsec == (uint32_t)st->st_mtim.tv_nsec;
}

/*
 * What is at f's path was not opened (hs_safe_open() or hs_safe_look()
 * returned rc, said res; st: what it found): f is dropped if it is gone
 * or replaced, or the error said once (and tried again each round).
 */
static void not_opened(struct hs_keep *k, struct kfile *f, int rc, const struct hs_safe_result *res,
		       const struct stat *st)
{
	char whose[64];

	if (res->found == HS_SAFE_OTHER) {
		/* asked with HS_SAFE_ANEW: neither the owner's nor root's */
		snprintf(whose, sizeof(whose), "another user's file, uid %u", (unsigned)st->st_uid);
		drop(k, f, whose);
	} else if (res->found == HS_SAFE_SWAPPED) {
		drop(k, f, "another file");	/* swapped in as it was opened: closed unread */
	} else if (res->found == HS_SAFE_TYPE) {
		drop(k, f, hs_safe_type_name(res->type));
	} else if (rc == -ENOENT || rc == -ENOTDIR) {
		drop(k, f, NULL);
	} else if (!f->warned) {
		f->warned = true;
		warn_event(k, f->path, -rc, "cannot open");
	}
}

/*
 * Open f, the file loaded (device and inode), as its owner: the careful
 * open (safeopen.h). A regular file of its owner's or root's renamed over
 * it since (a rebuild, a package upgrade) is opened too, as the file anew:
 * the caller sees another device or inode in *st, and the check takes it
 * (check_file, check_locked). -1 if nothing can be opened (f dropped, or
 * warned about).
 */
static int open_file(struct hs_keep *k, struct kfile *f, struct stat *st)
{
	const struct hs_safe_id id = { f->dev, f->ino };
	struct hs_safe_result res;
	int fd;

	if (creds_use(k, f->owner)) {
		if (!f->warned) {
			f->warned = true;
			warn_event(k, f->path, EPERM, "cannot take its owner's credentials");
		}
		return -1;
	}
	if ((fd = hs_safe_open(AT_FDCWD, f->path, O_RDONLY, HS_SAFE_NOFOLLOW | HS_SAFE_ANEW, &id, st,
			       &res)) < 0) {
		not_opened(k, f, fd, &res, st);
		return -1;
	}
	return fd;
}

/*
 * Whether anyone stalled on memory since f was read back: pages evicted
 * again with no stall at all were taken by a proactive reclaimer (DAMON's
 * pageout, memory.reclaim), not by a shortage, and are read back as any
 * refault. Unknown (no PSI) counts as stalled.
 */
static bool stalled_since(struct hs_keep *k, const struct kfile *f)
{
	struct hs_psi psi;

	if (f->read_mem == UINT64_MAX || hs_psi_read(k->pdir[0], k->pname[0], &psi) < 0)
		return true;
	return psi.some.total >= f->read_mem + HS_KEEP_THRASH_STALL_US;
}

/* Check one file: returns the kept pages found lost since the last look. */
static uint64_t check_file(struct hs_keep *k, size_t i)
{
	struct kfile *f = &k->set.files[i];
	struct hs_cache_counts c = { 0 };
	struct stat st;
	uint64_t lost = 0;
	int fd, rc;

	if (f->state != F_WATCHED || (fd = open_file(k, f, &st)) < 0)
		return 0;
	/* rewritten in place, or a new inode of its owner's or root's: read anew */
	if (!unchanged(f, &st)) {
		struct hs_keep_event e = { .kind = HS_KEEP_REPLACED, .path = f->path,
					   .in_place = same_file(f, &st) };
		const uint64_t old_ino = f->ino;
		bool unknown;

		take_stat(f, &st);
		/*
		 * A new file its owner may read but not query (root's, 0644,
		 * in a user's profile) is kept unwatched, and not read back, as
		 * such a file is when a profile is loaded.
		 */
		unknown = !e.in_place && hs_residency_count(fd, f->size, f->ranges, f->nranges, &c,
							   NULL) == -EPERM;
		if (k->evict && !e.in_place) {
			keep_evict_unwatch(k->evict, old_ino);
			if (!unknown)
				keep_evict_watch(k->evict, f->ino);
			k->inos_stale = true;
		}
		f->resident = 0;
		k->dirty = true;
		if (unknown) {
			f->state = F_UNKNOWN;
			f->pending = P_NONE;
			k->set.unknown++;
			k->st.unknown_files++;
			warn_event(k, f->path, 0, "replaced by a file whose residency is unknown to "
				   "its profile's owner: no longer watched");
			close(fd);
			return 0;
		}
		emit(k, &e);
		/* new contents: what it misses was never kept, so it is no refault */
		if (!f->pending && !pend_add(k, i))
			f->pending = P_FIRST;
		close(fd);
		return 0;
	}
	rc = hs_residency_count(fd, f->size, f->ranges, f->nranges, &c, NULL);
	close(fd);
	if (rc) {
		if (!f->warned) {
			f->warned = true;
			warn_event(k, f->path, -rc, "cannot read residency");
		}
		return 0;
	}
	if (c.cached < f->resident)
		lost = f->resident - c.cached;
	k->owners[f->owner].st.refault_pages += lost;
	/*
	 * Read back, and evicted again so soon: reading more would thrash. A
	 * few pages are not thrashing: a proactive reclaimer (DAMON's pageout
	 * of a region it found idle) takes some pages just read that happened
	 * to land in such a region; at least HS_KEEP_THRASH_SHARE of them is.
	 * Pages read before the last back-off ended and lost during it were
	 * that back-off's: they do not start another at its end.
	 */
	if (lost && f->read_at && f->read_at >= k->sched.resumed_at &&
	    hs_monotonic_ns() - f->read_at < k->sched.quiet &&
	    lost * HS_KEEP_THRASH_SHARE >= f->resident && stalled_since(k, f))
		k->thrashing = true;
	f->resident = c.cached;
	if (c.cached < c.pages && !f->pending && !pend_add(k, i))
		f->pending = lost ? P_REFAULT : P_FIRST;
	return lost;
}

static void warm_file_done(void *ctx, const struct hs_warm_file *w)
{
	struct hs_keep *k = ctx;
	struct kfile *f = &k->set.files[w->index];

	pthread_mutex_lock(&k->lock);
	if (w->known_after)
		f->resident = w->resident_pages + w->read_pages;
	if (w->read_pages) {
		f->read_at = hs_monotonic_ns();
		f->read_mem = k->mem_known ? k->mem_before : UINT64_MAX;
		k->tick_read += w->read_pages;
		k->tick_files++;
		k->owners[f->owner].tick_read += w->read_pages;
		k->owners[f->owner].tick_files++;
		if (k->o.file_events) {
			struct hs_keep_event e = { .kind = HS_KEEP_FILE_WARMED, .path = f->path,
						   .pages = w->read_pages };

			emit(k, &e);
		}
	}
	pthread_mutex_unlock(&k->lock);
}

static void warm_warn(void *ctx, const char *path, int errnum, const char *what)
{
	warn_event(ctx, path, errnum, what);
}

static int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The pages of files read back since began, read once more from the
 * cache (RWF_NOWAIT: never from the disk). A job's own use touched its
 * pages more than once, so reclaim had them on its active list; read
 * back once, they would be the first taken from a full memory cgroup
 * when the job starts and allocates. A second access puts them back
 * where the job's use had them.
 */
static void touch_read_back(struct hs_keep *k, uint64_t began)
{
	static char buf[256 << 10];
	const uint64_t ps = hs_page_size();

	for (size_t i = 0; i < k->set.n; i++) {
		struct kfile *f = &k->set.files[i];
		const struct hs_safe_id id = { f->dev, f->ino };
		struct hs_safe_result res;
		struct stat st;
		int fd;

		/* the file it read back, not what took its name since (the next check tells) */
		if (f->state != F_WATCHED || f->read_at < began || creds_use(k, f->owner) ||
		    (fd = hs_safe_open(AT_FDCWD, f->path, O_RDONLY, HS_SAFE_NOFOLLOW, &id, &st,
				       &res)) < 0)
			continue;
		for (size_t r = 0; r < f->nranges; r++) {
			uint64_t off = f->ranges[r].first * ps, end = (f->ranges[r].last + 1) * ps;

			while (off < end) {
				struct iovec v = { buf, end - off < sizeof(buf) ? end - off : sizeof(buf) };
				ssize_t n = preadv2(fd, &v, 1, (off_t)off, RWF_NOWAIT);

				if (n == 0 || (n < 0 && errno != EAGAIN))
					break;	/* its end, or it cannot be read */
				off += n > 0 ? (uint64_t)n : ps;	/* a page not cached: skipped */
			}
		}
		close(fd);
	}
	creds_use(k, 0);
}

/*
 * Read back the pending files, in profile order, at most the rate's worth
 * for this period; what the budget leaves stays pending for the next tick.
 */
static void rewarm(struct hs_keep *k, uint64_t period, uint64_t refaults)
{
	uint64_t budget = (uint64_t)((double)k->o.rate * (double)period / 1e9);
	struct hs_warm_opts wo = { .order = HS_ORDER_GIVEN, .depth = 4, .inflight = 1 << 20,
				   .warn = warm_warn, .file = warm_file_done, .ctx = k };
	struct hs_warm_stats ws;
	struct hs_warm *w;
	size_t kept = 0, i;
	bool first_only = true, added = false;
	uint64_t began = hs_monotonic_ns();

	/* measuring whose the io stall is, or a trickle that has read its share of the time */
	if (!k->npend || k->io_check_at || (k->sched.trickle && began < k->next_read_at))
		return;
	{
		struct hs_psi psi;

		k->mem_known = hs_psi_read(k->pdir[0], k->pname[0], &psi) == 0;
		k->mem_before = k->mem_known ? psi.some.total : 0;
	}
	wo.budget = budget > (1u << 20) ? budget : 1u << 20;
	if (k->sched.trickle)
		wo.budget = trickle_budget(k, wo.budget);
	qsort(k->pend, k->npend, sizeof(*k->pend), cmp_size);
	creds_use(k, 0);	/* its threads start with the keeper's credentials */
	if (hs_warm_new(&wo, &w))
		return;	/* out of memory or threads: tried again next tick */
	k->tick_read = k->tick_files = 0;
	for (size_t o = 0; o < k->nowners; o++)
		k->owners[o].tick_read = k->owners[o].tick_files = 0;
	for (i = 0; i < k->npend; i++) {
		struct kfile *f = &k->set.files[k->pend[i]];
		struct hs_target t = { 0 };
		struct stat st;
		int fd, rc;

		if (f->state != F_WATCHED || !f->pending)
			continue;
		if ((fd = open_file(k, f, &st)) < 0)
			continue;
		if (!unchanged(f, &st)) {	/* the next check tells it */
			close(fd);
			k->pend[kept++] = k->pend[i];
			continue;
		}
		t.path = f->path;
		t.path_len = strlen(f->path);
		t.fd = fd;
		t.st = &st;
		t.ranges = f->ranges;
		t.nranges = f->nranges;
		t.pages = f->pages;
		t.index = k->pend[i];
		first_only &= f->pending == P_FIRST;
		rc = hs_warm_add(w, &t);
		close(fd);
		added = true;
		if (rc)
			break;	/* the budget is spent (this file perhaps in part) */
		f->pending = P_NONE;
	}
	creds_use(k, 0);
	for (; i < k->npend; i++)
		if (k->set.files[k->pend[i]].pending)
			k->pend[kept++] = k->pend[i];
	k->npend = kept;
	hs_warm_finish(w, &ws);
	hs_warm_free(w);
	if (added)
		read_done(k, began, k->tick_read * hs_page_size());
	if (!k->tick_read)
		return;
	touch_read_back(k, began);
	/*
	 * In a memory cgroup at its limit (a box whose cache fills it, as a
	 * small machine's does) each page read back is charged after a
	 * reclaim, and that reclaim is a memory stall, counted by the PSI of
	 * the system: a trigger within a window of our reads is taken as
	 * pressure only if the 10 s average says it is more than our burst.
	 */
	k->own_mem_until = hs_monotonic_ns() + (k->used[0].window_us ? k->used[0].window_us : 1000000) * 1000;
	k->st.rewarmed_pages += k->tick_read;
	k->st.rewarms++;
	k->st.last_rewarm_ns = hs_realtime_ns();
	for (size_t o = 0; o < k->nowners; o++) {
		struct kowner *ow = &k->owners[o];

		if (!ow->tick_read)
			continue;
		ow->st.rewarmed_pages += ow->tick_read;
		ow->st.rewarms++;
		ow->st.last_rewarm_ns = k->st.last_rewarm_ns;
	}
	k->dirty = true;
	{
		struct hs_keep_event e = { .kind = HS_KEEP_WARMED, .pages = k->tick_read,
					   .files = k->tick_files, .refault_pages = refaults,
					   .initial = first_only };

		emit(k, &e);
	}
}

/* ---- lock mode --------------------------------------------------------------------- */

/* The fix for a lock refused for its size, said with every such error. */
#define MEMLOCK_FIX "raise it (ulimit -l, LimitMEMLOCK= in the unit), lower --budget, " \
		    "or run as root"

static bool has_ipc_lock(void)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct caps[_LINUX_CAPABILITY_U32S_3] = { 0 };

	return syscall(SYS_capget, &hdr, caps) == 0 &&
	       (caps[CAP_IPC_LOCK / 32].effective & (1u << (CAP_IPC_LOCK % 32)));
}

/*
 * Map f's kept ranges, clipped to its size now, in windows of at most
 * HS_KEEP_LOCK_WINDOW (never one mapping of a huge file), none locked yet.
 */
static int map_file(struct hs_keep *k, struct kfile *f, int fd)
{
	const uint64_t ps = hs_page_size(), most = HS_KEEP_LOCK_WINDOW / ps;
	uint64_t npages = (f->size + ps - 1) / ps;
	size_t cap = 0;

	for (size_t r = 0; r < f->nranges; r++) {
		uint64_t a = f->ranges[r].first, b = f->ranges[r].last;

		for (; a <= b && a < npages; a += most) {
			uint64_t n = b - a + 1 < most ? b - a + 1 : most;
			void *p;

			if (a + n > npages)
				n = npages - a;
			if (hs_grow(&f->wins, &cap, f->nwins + 1, sizeof(*f->wins)))
				return -ENOMEM;
			p = mmap(NULL, n * ps, PROT_READ, MAP_SHARED, fd, (off_t)(a * ps));
			if (p == MAP_FAILED) {
				int e = errno;

				/* out of mappings: said once for all files (say_map_refused) */
				if (e == ENOMEM)
					k->map_refused++;
				else if (!f->warned) {
					f->warned = true;
					warn_event(k, f->path, e, "cannot map");
				}
				return -e;
			}
			f->wins[f->nwins++] = (struct kwin){ p, a, n, false };
		}
	}
	return 0;
}

/* The windows (mappings) lock mode needs for the kept set, as map_file() cuts them. */
static uint64_t windows_needed(const struct kset *s)
{
	const uint64_t ps = hs_page_size(), most = HS_KEEP_LOCK_WINDOW / ps;
	uint64_t n = 0;

	for (size_t i = 0; i < s->n; i++) {
		const struct kfile *f = &s->files[i];
		uint64_t npages = (f->size + ps - 1) / ps;

		if (f->state != F_WATCHED)
			continue;
		for (size_t r = 0; r < f->nranges; r++) {
			uint64_t a = f->ranges[r].first, b = f->ranges[r].last;

			if (a >= npages)
				continue;
			if (b >= npages)
				b = npages - 1;
			n += (b - a) / most + 1;
		}
	}
	return n;
}

/*
 * The files whose windows mmap refused for want of mappings, in one line:
 * a set of 200,000 files past vm.max_map_count would otherwise say it for
 * each of the 130,000 files beyond it. How many, the sysctl's value and
 * what the set needs, which is what to raise it to.
 */
static void say_map_refused(struct hs_keep *k)
{
	char what[512], max[32];
	ssize_t n = hs_procfs_read("/proc/sys/vm/max_map_count", max, sizeof(max));

	if (n > 0 && max[n - 1] == '\n')
		max[n - 1] = '\0';
	snprintf(what, sizeof(what), "%llu file%s not locked: mmap refused %s windows (ENOMEM): the "
		 "kept set needs %llu mappings beside the keeper's own, more than vm.max_map_count "
		 "(%s) allows a process, or than the address space limit (ulimit -v) holds: raise "
		 "vm.max_map_count (sysctl -w vm.max_map_count=N), or lower --budget",
		 (unsigned long long)k->map_refused, k->map_refused == 1 ? "" : "s",
		 k->map_refused == 1 ? "its" : "their", (unsigned long long)windows_needed(&k->set),
		 n > 0 ? max : "unknown");
	warn_event(k, NULL, 0, what);
	k->map_refused = 0;
}

/*
 * mlock f's windows not locked yet (counted in s, its set), until
 * *allowance pages are spent (one window at least). Plain mlock, not
 * mlock2(MLOCK_ONFAULT): the point is to hold the profile's pages, so each
 * window is faulted in once, now; on-fault locking would lock only pages
 * touched later, and the keeper touches none. Returns the pages locked; f is done when all are.
 */
static uint64_t lock_file(struct hs_keep *k, struct kset *s, struct kfile *f,
			  uint64_t *allowance)
{
	const uint64_t ps = hs_page_size();
	uint64_t done = 0;
	size_t w = 0;

	while (w < f->nwins && *allowance) {
		struct kwin *x = &f->wins[w];

		if (x->locked) {
			w++;
			continue;
		}
		if (mlock(x->addr, x->npages * ps) < 0) {
			int e = errno;

			if (!f->warned) {
				f->warned = true;
				warn_event(k, f->path, e, e == ENOMEM || e == EAGAIN || e == EPERM ?
					   "cannot lock: beyond RLIMIT_MEMLOCK? " MEMLOCK_FIX :
					   "cannot lock");
			}
			/* unmapped, not retried until the file changes */
			munmap(x->addr, x->npages * ps);
			f->wins[w] = f->wins[--f->nwins];
			continue;
		}
		x->locked = true;
		if (!f->locked)
			s->locked_files++;
		f->locked += x->npages;
		s->locked_pages += x->npages;
		done += x->npages;
		*allowance = *allowance > x->npages ? *allowance - x->npages : 0;
		w++;
	}
	for (w = 0; w < f->nwins && f->wins[w].locked; w++)
		;
	if (w == f->nwins)
		f->pending = P_NONE;
	return done;
}

/*
 * f shrank to npages pages: unmap what lies beyond (the truncation took
 * those pages out of the cache; a mapping left there is only a trap).
 * Returns the locked pages released.
 */
static uint64_t clip_file(struct kset *s, struct kfile *f, uint64_t npages)
{
	const uint64_t ps = hs_page_size();
	uint64_t released = 0;
	size_t w = 0;

	while (w < f->nwins) {
		struct kwin *x = &f->wins[w];
		uint64_t cut;

		if (x->first + x->npages <= npages) {
			w++;
			continue;
		}
		cut = x->first >= npages ? x->npages : x->first + x->npages - npages;
		munmap(x->addr + (x->npages - cut) * ps, cut * ps);
		if (x->locked) {
			released += cut;
			f->locked -= cut;
			s->locked_pages -= cut;
		}
		x->npages -= cut;
		if (!x->npages)
			f->wins[w] = f->wins[--f->nwins];
		else
			w++;
	}
	if (released && !f->locked)
		s->locked_files--;
	return released;
}

/*
 * Look at f, the file loaded, as its owner, without opening it: 0 with
 * *st, or -1 (f dropped, or warned about).
 */
static int look_file(struct hs_keep *k, struct kfile *f, struct stat *st)
{
	const struct hs_safe_id id = { f->dev, f->ino };
	struct hs_safe_result res;
	int rc;

	if (creds_use(k, f->owner)) {
		if (!f->warned) {
			f->warned = true;
			warn_event(k, f->path, EPERM, "cannot take its owner's credentials");
		}
		return -1;
	}
	if ((rc = hs_safe_look(AT_FDCWD, f->path, HS_SAFE_NOFOLLOW | HS_SAFE_ANEW, &id, st,
			       &res)) < 0) {
		not_opened(k, f, rc, &res, st);
		return -1;
	}
	return 0;
}

/*
 * Lock mode's check of one file: a look, nothing opened; follow it if it
 * changed in place or is a new inode of its owner's or root's. One
 * replaced otherwise was dropped by the look.
 */
static void check_locked(struct hs_keep *k, size_t i)
{
	const uint64_t ps = hs_page_size();
	struct kfile *f = &k->set.files[i];
	struct stat st;

	if (f->state != F_WATCHED || look_file(k, f, &st) < 0 || unchanged(f, &st))
		return;
	k->dirty = true;
	if (!f->nwins) {	/* not mapped (yet, or it failed): mapped as it is now */
		take_stat(f, &st);
		f->warned = false;
		if (!f->pending && !pend_add(k, i))
			f->pending = P_FIRST;
		return;
	}
	if (same_file(f, &st) && (uint64_t)st.st_size < f->size) {
		struct hs_keep_event e = { .kind = HS_KEEP_TRUNCATED, .path = f->path };

		take_stat(f, &st);
		e.pages = clip_file(&k->set, f, ((uint64_t)st.st_size + ps - 1) / ps);
		emit(k, &e);
	} else {
		/* a new inode, or rewritten: the old mapping goes, the file is mapped anew */
		struct hs_keep_event e = { .kind = HS_KEEP_REPLACED, .path = f->path,
					   .in_place = same_file(f, &st) };

		emit(k, &e);
		unmap_file(&k->set, f);
		take_stat(f, &st);
		f->warned = false;
		if (!f->pending && !pend_add(k, i))
			f->pending = P_FIRST;
	}
}

/* Map f as it is now, if it is not; false if it cannot be (warned). */
static bool map_pending(struct hs_keep *k, struct kfile *f)
{
	struct stat st;
	int fd, rc;

	if (f->nwins)
		return true;
	if ((fd = open_file(k, f, &st)) < 0)
		return false;
	take_stat(f, &st);	/* mapped as it is now */
	rc = map_file(k, f, fd);
	close(fd);
	if (rc) {
		unmap_file(&k->set, f);
		f->pending = P_NONE;	/* warned; again when it changes */
		return false;
	}
	return true;
}

/*
 * Ask the kernel to read the windows about to be locked, up to pages of
 * them (MADV_WILLNEED: readahead of each whole window, in large requests,
 * all queued at once). mlock then finds them in flight or resident, where
 * its own faults would read a readahead window at a time, each waited for.
 */
static void lock_readahead(struct hs_keep *k, uint64_t pages)
{
	const uint64_t ps = hs_page_size();

	for (size_t i = 0; i < k->npend && pages; i++) {
		struct kfile *f = &k->set.files[k->pend[i]];

		if (f->state != F_WATCHED || !f->pending || !map_pending(k, f))
			continue;
		for (size_t w = 0; w < f->nwins && pages; w++) {
			struct kwin *x = &f->wins[w];

			if (x->locked)
				continue;
			madvise(x->addr, x->npages * ps, MADV_WILLNEED);
			pages = pages > x->npages ? pages - x->npages : 0;
		}
	}
}

/* ioprio_get/set of this thread (IOPRIO_WHO_PROCESS, 0) */
static int ioprio_get_self(void)
{
	return (int)syscall(SYS_ioprio_get, 1, 0);
}

static void ioprio_set_self(int prio)
{
	syscall(SYS_ioprio_set, 1, 0, prio);
}

/*
 * Map and lock the pending files, in profile order. The first locking is
 * the user's asking, as `hotset warm` is: at the device's speed and the
 * process's own I/O priority, HS_KEEP_LOCK_BURST a tick (ticks follow at
 * once until it is done, so that signals are seen between). Later ones
 * (files replaced, reloads) go at the rate, at the idle priority, a
 * trickle under others' io pressure.
 */
static void lock_pending(struct hs_keep *k, uint64_t period)
{
	const uint64_t ps = hs_page_size();
	uint64_t bytes = (uint64_t)((double)k->o.rate * (double)period / 1e9);
	uint64_t allowance = (bytes > (1u << 20) ? bytes : 1u << 20) / ps, pages = 0, files = 0;
	uint64_t began = hs_monotonic_ns();
	bool first_only = true;
	size_t kept = 0, i;
	int prio = -1;

	if (!k->npend) {
		k->initial = false;
		if (k->map_refused)
			say_map_refused(k);
		return;
	}
	if (k->initial) {
		allowance = HS_KEEP_LOCK_BURST / ps;
		if ((prio = ioprio_get_self()) >= 0)
			ioprio_set_self(0);	/* IOPRIO_CLASS_NONE: as the process's nice says */
	} else if (k->io_check_at || (k->sched.trickle && began < k->next_read_at)) {
		return;
	} else if (k->sched.trickle) {
		allowance = trickle_budget(k, allowance * ps) / ps;
	}
	qsort(k->pend, k->npend, sizeof(*k->pend), cmp_size);
	lock_readahead(k, allowance);
	for (i = 0; i < k->npend && allowance; i++) {
		struct kfile *f = &k->set.files[k->pend[i]];
		uint64_t got;

		if (f->state != F_WATCHED || !f->pending)
			continue;
		if (!map_pending(k, f))
			continue;
		first_only &= f->pending == P_FIRST;
		got = lock_file(k, &k->set, f, &allowance);
		pages += got;
		files += got > 0;
		if (f->pending)
			k->pend[kept++] = k->pend[i];
	}
	creds_use(k, 0);
	for (; i < k->npend; i++)
		if (k->set.files[k->pend[i]].pending)
			k->pend[kept++] = k->pend[i];
	k->npend = kept;
	if (prio >= 0)
		ioprio_set_self(prio);
	/* done, or stuck on files that cannot be opened now: those wait for the rate's passes */
	if (!k->npend || !pages)
		k->initial = false;
	/* the first locking says it once at its end; later passes once each */
	if (k->map_refused && !k->initial)
		say_map_refused(k);
	if (!pages)
		return;
	read_done(k, began, pages * ps);
	k->dirty = true;
	{
		struct hs_keep_event e = { .kind = HS_KEEP_LOCKED, .pages = pages, .files = files,
					   .bytes = k->set.locked_pages * ps, .initial = first_only };

		emit(k, &e);
	}
}

static void unmap_all(struct kset *s)
{
	for (size_t i = 0; i < s->n; i++)
		unmap_file(s, &s->files[i]);
}

/*
 * A tick checked n files since cpu0 (thread CPU ns) and found lost pages
 * missing: tell the schedule, count them, and bring back what is missing
 * (lock mode: lock what is pending), the rate's worth of period ns (0: of
 * the schedule's period). A tick of files told evicted (n = 0) checks too
 * few, each just woken, to measure the cost of a check in a round: it
 * leaves the estimate alone.
 */
static void checked(struct hs_keep *k, size_t n, uint64_t cpu0, uint64_t lost, uint64_t period)
{
	creds_use(k, 0);	/* the checks are done */
	hs_keep_sched_checked(&k->sched, n, n ? thread_cpu_ns() - cpu0 : 0, lost);
	if (lost) {
		k->st.refault_pages += lost;
		k->dirty = true;
	}
	k->st.round_ns = k->sched.round_ns;
	if (k->thrashing) {
		k->thrashing = false;
		pressure_event(k, 0, hs_monotonic_ns(), "thrashing");
		return;
	}
	if (!period)
		period = hs_keep_sched_period(&k->sched, k->set.nlarge);
	if (k->o.mode == HS_KEEP_LOCK)
		lock_pending(k, period);
	else
		rewarm(k, period, lost);
	k->st.locked_files = k->set.locked_files;
	k->st.locked_bytes = k->set.locked_pages * hs_page_size();
}

static void tick(struct hs_keep *k)
{
	struct kset *s = &k->set;
	size_t slice = hs_keep_sched_slice(&k->sched, s->nsmall, s->nlarge), n = 0;
	uint64_t t0 = thread_cpu_ns(), lost = 0;
	const bool locking = k->o.mode == HS_KEEP_LOCK;

	for (size_t i = 0; i < s->nlarge; i++, n++)
		if (locking)
			check_locked(k, s->large[i]);
		else
			lost += check_file(k, s->large[i]);
	for (size_t j = 0; j < slice; j++, n++) {
		if (k->cursor >= s->nsmall)
			k->cursor = 0;
		if (locking)
			check_locked(k, s->small[k->cursor++]);
		else
			lost += check_file(k, s->small[k->cursor++]);
	}
	checked(k, n, t0, lost, 0);
}

/* ---- --protect: memory.low ------------------------------------------------------ */

/* Write text to the existing file dir/name (a cgroup's: never created). */
static int write_at(const char *dir, const char *name, const char *text)
{
	char path[PATH_MAX + 64];
	size_t len = strlen(text);
	int fd, rc = 0;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
		return -ENAMETOOLONG;
	if ((fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC)) < 0)
		return -errno;
	if (write(fd, text, len) != (ssize_t)len)
		rc = -errno;
	if (close(fd) < 0 && !rc)
		rc = -errno;
	return rc;
}

static bool has_memory_controller(const char *dir)
{
	char buf[512];

	if (hs_procfs_read_at(dir, "cgroup.controllers", buf, sizeof(buf)) < 0)
		return false;
	for (char *t = strtok(buf, " \n"); t; t = strtok(NULL, " \n"))
		if (!strcmp(t, "memory"))
			return true;
	return false;
}

int hs_keep_protect(const char *mount, const char *own, const char *name, uint64_t bytes,
		    char *dir, size_t size, bool *made, struct hs_error *err)
{
	char m[PATH_MAX], o[PATH_MAX], num[32];
	int rc, n;

	*made = false;
	if (!mount) {
		if (hs_cgroup2_dirs(o, m, sizeof(m)) < 0)
			m[0] = o[0] = '\0';
		mount = m;
		own = o;
	}
	if (!own[0] || !has_memory_controller(own)) {
		struct hs_memcg v1;

		if (hs_memcg_of(0, &v1) == 0 && v1.version == 1)
			return hs_error_set(err, ENOTSUP, "--protect cannot be done here: the memory "
					    "controller is on cgroup v1, which has no low protection "
					    "(memory.soft_limit_in_bytes is the opposite); it needs cgroup v2 "
					    "with the memory controller (systemd.unified_cgroup_hierarchy=1)");
		if (!own[0])
			return hs_error_set(err, ENOTSUP, "--protect cannot be done here: %s",
					    mount[0] ? "this process's cgroup is not under the cgroup2 "
					    "mount (another cgroup namespace?)" : "no cgroup v2 is mounted");
		return hs_error_set(err, ENOTSUP, "--protect cannot be done here: %s has no memory "
				    "controller (cgroup.controllers): enable it in the parent's "
				    "cgroup.subtree_control, or use MemoryLow= in the unit", own);
	}
	if (!strcmp(own, mount)) {
		/* the root has no memory.low: a cgroup of our own under it */
		if ((size_t)snprintf(o, sizeof(o), "%s/%s", mount, name) >= sizeof(o))
			return hs_error_set(err, ENAMETOOLONG, "%s/%s: too long", mount, name);
		if (mkdir(o, 0755) < 0 && errno != EEXIST)
			return hs_error_set(err, errno, "--protect: cannot make the cgroup %s: %s",
					    o, strerror(errno));
		snprintf(num, sizeof(num), "%d\n", (int)getpid());
		if ((rc = write_at(o, "cgroup.procs", num)))
			return hs_error_set(err, -rc, "--protect: cannot move into the cgroup %s: %s",
					    o, strerror(-rc));
		*made = true;
		own = o;
	} else if ((n = hs_cgroup_nprocs(own)) > 1) {
		return hs_error_set(err, EBUSY, "--protect: %s holds %d processes, whose memory "
				    "its memory.low would protect too: run keep alone in a cgroup (the "
				    "unit with MemoryLow=, systemd-run --scope)", own, n);
	}
	snprintf(num, sizeof(num), "%llu\n", (unsigned long long)bytes);
	if ((rc = write_at(own, "memory.low", num))) {
		hs_error_set(err, -rc, "--protect: cannot write %s/memory.low: %s%s", own,
			     strerror(-rc), rc == -EACCES || rc == -EPERM ?
			     " (it needs root, or a cgroup delegated to this user)" : "");
		if (*made)
			hs_keep_unprotect(own, true);
		*made = false;
		return rc;
	}
	snprintf(dir, size, "%s", own);
	return 0;
}

void hs_keep_unprotect(const char *dir, bool made)
{
	char parent[PATH_MAX], num[32], *slash;

	write_at(dir, "memory.low", "0\n");
	if (!made)
		return;
	snprintf(parent, sizeof(parent), "%s", dir);
	if (!(slash = strrchr(parent, '/')))
		return;
	*slash = '\0';
	snprintf(num, sizeof(num), "%d\n", (int)getpid());
	if (write_at(parent, "cgroup.procs", num) == 0)
		rmdir(dir);
}

/* ---- evictions told by the kernel ----------------------------------------------- */

static int cmp_ino(const void *a, const void *b)
{
	const struct ino_index *x = a, *y = b;

	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

/* The watched files sorted by inode number, to find those an event names. */
static int inos_build(struct hs_keep *k)
{
	struct kset *s = &k->set;
	struct ino_index *v = malloc((s->n ? s->n : 1) * sizeof(*v));
	size_t n = 0;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < s->n; i++)
		if (s->files[i].state == F_WATCHED)
			v[n++] = (struct ino_index){ s->files[i].ino, i };
	qsort(v, n, sizeof(*v), cmp_ino);
	free(k->inos);
	k->inos = v;
	k->ninos = n;
	k->inos_stale = false;
	return 0;
}

/* The kernel deleted a page of inode ino from the cache: its files are due. */
static void on_evicted(void *ctx, uint64_t ino)
{
	struct hs_keep *k = ctx;
	size_t lo = 0, hi;

	if (k->inos_stale && inos_build(k))
		return;	/* out of memory: the schedule finds it */
	for (hi = k->ninos; lo < hi;) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->inos[mid].ino < ino)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < k->ninos && k->inos[lo].ino == ino; lo++) {
		struct kfile *f = &k->set.files[k->inos[lo].i];

		if (f->state != F_WATCHED || f->due ||
		    hs_grow(&k->due, &k->due_cap, k->ndue + 1, sizeof(*k->due)))
			continue;
		f->due = true;
		k->due[k->ndue++] = k->inos[lo].i;
	}
}

/* Check the files told evicted, as many as the CPU share pays for. */
static void event_tick(struct hs_keep *k, uint64_t now)
{
	size_t max = hs_keep_sched_due(&k->sched, now - k->event_tick_at), n;
	uint64_t lost = 0;

	for (n = 0; n < k->ndue && n < max; n++) {
		struct kfile *f = &k->set.files[k->due[n]];

		f->due = false;
		/* re-armed before the look: a page that goes after it is told again */
		keep_evict_watch(k->evict, f->ino);
		lost += check_file(k, k->due[n]);
	}
	k->ndue -= n;
	memmove(k->due, k->due + n, k->ndue * sizeof(*k->due));
	k->event_tick_at = now;
	checked(k, 0, 0, lost, k->sched.event_gap);
}

/*
 * Watch the kept set's evictions through eBPF if this process may: else
 * (not root, an old kernel, a build without libbpf) a note says why, and
 * the schedule alone finds them.
 */
static void evict_setup(struct hs_keep *k)
{
	struct hs_error why = { 0 };
	int rc;

	keep_evict_free(k->evict);
	k->evict = NULL;
	k->ndue = 0;
	snprintf(k->st.evictions, sizeof(k->st.evictions), "checks");
	/* locked pages are not evicted: lock mode's checks only follow the files */
	if (k->o.checks_only || k->o.mode == HS_KEEP_LOCK || k->set.nsmall + k->set.nlarge == 0)
		return;
	rc = inos_build(k);
	if (!rc)
		rc = keep_evict_open(k->ninos, &k->evict, &why);
	for (size_t i = 0; !rc && i < k->ninos; i++)
		if ((rc = keep_evict_watch(k->evict, k->inos[i].ino)))
			hs_error_set(&why, -rc, "cannot fill the eBPF map: %s", strerror(-rc));
	if (rc) {
		char note[400];
		struct hs_keep_event e = { .kind = HS_KEEP_NOTE, .what = note };

		snprintf(note, sizeof(note), "evictions are found by the checks alone, every file "
			 "within a round (the interval, or longer for many files): %s",
			 why.msg[0] ? why.msg : strerror(-rc));
		emit(k, &e);
		keep_evict_free(k->evict);
		k->evict = NULL;
		return;
	}
	snprintf(k->st.evictions, sizeof(k->st.evictions), "events");
}

/* ---- the keeper ------------------------------------------------------------------ */

static int write_state(struct hs_keep *k)
{
	int rc;

	creds_use(k, 0);	/* the state is the keeper's */
	rc = hs_keep_state_write(k->o.state, &k->st);
	write_views(k);

	k->dirty = false;
	if (rc) {
		char what[128];

		snprintf(what, sizeof(what), "cannot write the state file: %s", strerror(-rc));
		warn_event(k, k->o.state, 0, what);
	}
	return rc;
}

int hs_keep_new(const struct hs_keep_opts *o, struct hs_keep **out, struct hs_error *err)
{
	struct hs_keep *k = calloc(1, sizeof(*k));
	struct hs_keep_state old;
	int rc;

	if (!k)
		return -ENOMEM;
	k->o = *o;
	if (!k->o.interval_ns)
		k->o.interval_ns = 10 * NS;
	if (!k->o.rate)
		k->o.rate = 64u << 20;
	k->trig[0] = k->trig[1] = -1;
	pthread_mutex_init(&k->lock, NULL);
	hs_keep_sched_init(&k->sched, k->o.interval_ns, k->o.cpu_share);
	if ((rc = owner_self(k)) || (rc = kset_load(k, &k->set, err)))
		goto fail;
	owners_activate(k);
	if (k->set.n && k->set.unknown == k->set.n) {
		if (geteuid() != 0)
			rc = hs_error_set(err, EPERM, "the residency of none of the %zu files can be "
					  "known to this user (uid %d): the kernel tells it only to a "
					  "file's owner, to users who may write it, and to root "
					  "(CAP_FOWNER or CAP_DAC_OVERRIDE); run keep as root or as the "
					  "files' owner", k->set.n, (int)geteuid());
		else
			rc = hs_error_set(err, EPERM, "the residency of none of the %zu files can be "
					  "known to the owners of the profiles, whose credentials a "
					  "root keeper reads a profile's files with: the kernel tells it "
					  "only to a file's owner and to users who may write it; a "
					  "profile of root's is read as root", k->set.n);
		goto fail;
	}
	/* the counters go on from the last run's */
	if (hs_keep_state_read(o->state, &old, NULL) == 0) {
		k->st.refault_pages = old.refault_pages;
		k->st.rewarmed_pages = old.rewarmed_pages;
		k->st.rewarms = old.rewarms;
		k->st.backoffs = old.backoffs;
		k->st.last_rewarm_ns = old.last_rewarm_ns;
		k->st.last_backoff_ns = old.last_backoff_ns;
		k->st.since_ns = old.since_ns;
		hs_keep_state_release(&old);
	}
	k->st.started_ns = hs_realtime_ns();
	if (!k->st.since_ns)
		k->st.since_ns = k->st.started_ns;
	k->st.pid = getpid();
	k->st.running = true;
	k->st.budget_bytes = o->budget;
	k->st.interval_ns = k->o.interval_ns;
	k->st.round_ns = k->o.interval_ns;
	snprintf(k->st.evictions, sizeof(k->st.evictions), "checks");
	k->st.profiles = (char **)o->profiles;	/* not owned: never released */
	k->st.nprofiles = o->nprofiles;
	snprintf(k->st.mode, sizeof(k->st.mode), "%s", o->mode == HS_KEEP_LOCK ? "lock" : "watch");
	set_counts(k);
	if (o->mode == HS_KEEP_LOCK && !has_ipc_lock()) {
		struct rlimit rl;

		/* the kernel would refuse the locks one by one: say it once, now */
		if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
		    k->set.bytes > rl.rlim_cur) {
			rc = hs_error_set(err, ENOMEM, "--mode lock would lock %llu KiB, more than "
					  "RLIMIT_MEMLOCK lets uid %d without CAP_IPC_LOCK (%llu KiB): "
					  MEMLOCK_FIX, (unsigned long long)(k->set.bytes >> 10),
					  (int)geteuid(), (unsigned long long)(rl.rlim_cur >> 10));
			goto fail;
		}
	}
	if (o->protect) {
		const char *base = strrchr(o->state, '/');
		char name[128];

		snprintf(name, sizeof(name), "hotset-%s", base ? base + 1 : o->state);
		if ((rc = hs_keep_protect(NULL, NULL, name, k->set.bytes, k->st.protect_cgroup,
					  sizeof(k->st.protect_cgroup), &k->protect_made, err)))
			goto fail;
		k->st.protected_bytes = k->set.bytes;
	}
	if ((rc = pend_from_set(k)))
		goto fail;
	k->initial = o->mode == HS_KEEP_LOCK;
	/* here, before a fork: the cgroup is shared with no waiting parent */
	pressure_files(k);
	*out = k;
	return 0;
fail:
	hs_keep_free(k);
	return rc;
}

const struct hs_keep_state *hs_keep_state(const struct hs_keep *k)
{
	return &k->st;
}

static bool same_ranges(const struct kfile *a, const struct kfile *b)
{
	return a->nranges == b->nranges &&
	       !memcmp(a->ranges, b->ranges, a->nranges * sizeof(*a->ranges));
}

/*
 * Lock mode's reload, before the old set goes: a file of the new set that
 * the old one kept whole, unchanged and with the same ranges, takes over
 * its windows, still locked; one the old set had locked otherwise (other
 * ranges, say) is locked anew now, whatever the rate: its pages are
 * resident, and unlocking the old set first would leave them, for a tick,
 * to anyone's eviction. Files new to the set wait for their turn as usual.
 */
static void lock_handover(struct hs_keep *k, struct kset *s)
{
	struct u64map old = { 0 };

	for (size_t i = 0; i < k->set.n; i++) {
		struct kfile *o = &k->set.files[i];

		if (o->locked && u64map_put2(&old, o->dev, o->ino, (void *)(uintptr_t)(i + 1)))
			goto out;	/* no memory: the old set unlocked first, as before */
	}
	for (size_t i = 0; i < s->n; i++) {
		struct kfile *f = &s->files[i], *o;
		uintptr_t at = (uintptr_t)u64map_get2(&old, f->dev, f->ino);
		uint64_t all = UINT64_MAX;
		struct stat st;
		int fd;

		if (!at || f->state != F_WATCHED)
			continue;
		o = &k->set.files[at - 1];
		if (o->owner != f->owner)
			continue;	/* another owner's: locked as its own, in its turn */
		if (!o->pending && o->nwins && o->size == f->size && o->mtime_sec == f->mtime_sec &&
		    o->mtime_nsec == f->mtime_nsec && same_ranges(o, f)) {
			f->wins = o->wins;
			f->nwins = o->nwins;
			f->locked = o->locked;
			o->wins = NULL;
			o->nwins = 0;
			k->set.locked_pages -= o->locked;
			k->set.locked_files--;
			o->locked = 0;
			s->locked_pages += f->locked;
			s->locked_files++;
			f->pending = P_NONE;
			continue;
		}
		if ((fd = open_file(k, f, &st)) < 0)
			continue;
		take_stat(f, &st);
		if (map_file(k, f, fd)) {
			unmap_file(s, f);
			f->pending = P_NONE;	/* warned; again when it changes */
		} else {
			lock_file(k, s, f, &all);
		}
		close(fd);
	}
	creds_use(k, 0);
out:
	u64map_free(&old);
}

static void reload(struct hs_keep *k)
{
	struct hs_error err = { 0 };
	struct kset s;
	int rc;

	if ((rc = kset_load(k, &s, &err))) {
		char what[400];

		snprintf(what, sizeof(what), "cannot reload the profiles (%s): keeping the "
			 "previous ones", err.msg[0] ? err.msg : strerror(-rc));
		warn_event(k, NULL, 0, what);
		return;
	}
	if (k->o.mode == HS_KEEP_LOCK)
		lock_handover(k, &s);
	kset_free(&k->set);	/* what it still locks is no longer kept */
	k->set = s;
	k->cursor = 0;
	owners_activate(k);
	set_counts(k);
	pend_from_set(k);
	evict_setup(k);
	k->dirty = true;
	if (k->st.protect_cgroup[0]) {
		char num[32];

		snprintf(num, sizeof(num), "%llu\n", (unsigned long long)s.bytes);
		if ((rc = write_at(k->st.protect_cgroup, "memory.low", num)))
			warn_event(k, k->st.protect_cgroup, -rc, "cannot set memory.low");
		else
			k->st.protected_bytes = s.bytes;
	}
	{
		struct hs_keep_event e = { .kind = HS_KEEP_RELOADED, .files = s.n, .pages = s.pages,
					   .bytes = s.bytes, .unknown = s.unknown, .stale = s.stale };

		emit(k, &e);
	}
}

static void read_signal(struct hs_keep *k)
{
	struct signalfd_siginfo si;

	while (read(k->o.signal_fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGHUP) {
			reload(k);
		} else {
			k->stop = true;
			k->stop_signal = (int)si.ssi_signo;
		}
	}
}

int hs_ioprio_idle(void)
{
	/* ioprio_set(IOPRIO_WHO_PROCESS, this thread, IOPRIO_CLASS_IDLE) */
	return syscall(SYS_ioprio_set, 1, 0, 3 << 13) < 0 ? -errno : 0;
}

static uint64_t earliest(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

int hs_keep_run(struct hs_keep *k)
{
	uint64_t next = 0;
	int rc;

	k->st.pid = getpid();	/* the caller may have forked since hs_keep_new() */
	pressure_setup(k);
	if (k->st.protect_cgroup[0]) {
		struct hs_keep_event e = { .kind = HS_KEEP_PROTECTED, .path = k->st.protect_cgroup,
					   .bytes = k->st.protected_bytes };

		emit(k, &e);
	}
	evict_setup(k);
	/* the state first: STARTED says the keeper is ready, --status finds it */
	write_state(k);
	{
		struct hs_keep_event e = { .kind = HS_KEEP_STARTED, .profiles = k->o.nprofiles,
					   .files = k->set.n, .pages = k->set.pages,
					   .bytes = k->set.bytes, .budget = k->o.budget,
					   .stale = k->set.stale, .unknown = k->set.unknown };

		emit(k, &e);
	}
	while (!k->stop) {
		struct pollfd p[4];
		uint64_t now = hs_monotonic_ns(), wake, wait_ns;
		int n = 0, timeout;
		struct hs_psi psi;

		if (k->sched.backed_off && hs_psi_read(k->pdir[0], k->pname[0], &psi) == 0)
			hs_keep_sched_memory_stall(&k->sched, now, psi.some.total);
		for (int i = 0; i < 2; i++) {
			struct hs_keep_event e = { .kind = HS_KEEP_RESUMED, .resource = resource[i] };

			if (i == 0 ? !k->sched.backed_off || !hs_keep_sched_resume(&k->sched, now) :
				     !k->sched.trickle || !hs_keep_sched_io_resume(&k->sched, now))
				continue;
			set_reason(k);
			e.trickle = k->sched.trickle;
			e.calm_ns = i == 0 && k->sched.resumed_calm ? k->sched.calm_ns : 0;
			emit(k, &e);
			next = now;
		}
		if (k->io_check_at && now >= k->io_check_at) {
			io_decide(k, now);
			if (k->npend)
				next = now;	/* the reads it held back */
		}
		if (now >= next) {
			if (k->averages[0] && avg10(k, 0) >= k->threshold[0])
				pressure_event(k, 0, now, "averages");
			if (k->averages[1] && avg10(k, 1) >= k->threshold[1])
				io_event(k, now, "averages");
			if (!k->sched.backed_off)
				tick(k);
			if (k->dirty)
				write_state(k);
			now = hs_monotonic_ns();
			/* the first locking goes on at once, a burst a tick (not while backed off) */
			next = k->initial && k->npend && !k->sched.backed_off ? now :
			       now + hs_keep_sched_period(&k->sched, k->set.nlarge);
		}
		if (k->ndue && !k->sched.backed_off &&
		    now >= k->event_tick_at + k->sched.event_gap) {
			event_tick(k, now);
			if (k->dirty)
				write_state(k);
			now = hs_monotonic_ns();
		}
		/* the earliest of what is due; any of it may be past (a long event tick) */
		wake = next;
		if (k->ndue && !k->sched.backed_off)
			wake = earliest(wake, k->event_tick_at + k->sched.event_gap);
		if (k->sched.backed_off)	/* the stall is read a few times a calm */
			wake = earliest(earliest(wake, k->sched.pressure_at + k->sched.quiet),
					now + HS_KEEP_CALM_NS / 4);
		if (k->sched.trickle)
			wake = earliest(wake, k->sched.trickle_at + k->sched.quiet);
		if (k->io_check_at)
			wake = earliest(wake, k->io_check_at);
		wait_ns = wake > now ? wake - now : 0;
		timeout = wait_ns / 1000000 < INT_MAX ? (int)((wait_ns + 999999) / 1000000) : INT_MAX;
		if (k->o.signal_fd >= 0)
			p[n++] = (struct pollfd){ .fd = k->o.signal_fd, .events = POLLIN };
		for (int i = 0; i < 2; i++)
			if (k->trig[i] >= 0)
				p[n++] = (struct pollfd){ .fd = k->trig[i], .events = POLLPRI };
		if (k->evict)
			p[n++] = (struct pollfd){ .fd = keep_evict_fd(k->evict), .events = POLLIN };
		rc = poll(p, (nfds_t)n, timeout);
		if (rc < 0 && errno != EINTR)
			return -errno;
		for (int i = 0; rc > 0 && i < n; i++) {
			if (!p[i].revents)
				continue;
			if (p[i].fd == k->o.signal_fd) {
				read_signal(k);
				continue;
			}
			if (k->evict && p[i].fd == keep_evict_fd(k->evict)) {
				keep_evict_drain(k->evict, on_evicted, k);
				continue;
			}
			for (int r = 0; r < 2; r++) {
				if (p[i].fd != k->trig[r])
					continue;
				if (p[i].revents & POLLERR) {	/* the pressure file went away */
					close(k->trig[r]);
					k->trig[r] = -1;
				} else if (r == 1) {
					io_event(k, hs_monotonic_ns(), "trigger");
				} else if (hs_monotonic_ns() >= k->own_mem_until ||
					   avg10(k, 0) >= k->threshold[0]) {
					pressure_event(k, 0, hs_monotonic_ns(), "trigger");
				}
			}
		}
	}
	{
		struct hs_keep_event e = { .kind = HS_KEEP_EXITING, .signal = k->stop_signal };

		emit(k, &e);
	}
	k->st.running = false;
	unmap_all(&k->set);	/* lock mode: everything unlocked */
	k->st.locked_files = k->st.locked_bytes = 0;
	if (k->st.protect_cgroup[0]) {
		hs_keep_unprotect(k->st.protect_cgroup, k->protect_made);
		k->st.protect_cgroup[0] = '\0';
		k->st.protected_bytes = 0;
	}
	write_state(k);
	return k->stop_signal;
}

void hs_keep_free(struct hs_keep *k)
{
	if (!k)
		return;
	if (k->st.protect_cgroup[0])	/* hs_keep_run() did not undo it */
		hs_keep_unprotect(k->st.protect_cgroup, k->protect_made);
	creds_use(k, 0);
	kset_free(&k->set);
	owners_free(k);
	free(k->pend);
	keep_evict_free(k->evict);
	free(k->inos);
	free(k->due);
	for (int i = 0; i < 2; i++)
		if (k->trig[i] >= 0)
			close(k->trig[i]);
	pthread_mutex_destroy(&k->lock);
	free(k);
}
