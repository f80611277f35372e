/*
 * keep.h - keeping profiles' working sets resident: the daemon behind
 * `hotset keep`.
 *
 * A keeper holds the kept set: the files of some profiles, in the order
 * given, each with its pages in profile order, cut where a budget of bytes
 * runs out. It then watches that set:
 *
 *   check    each tick, open, fstat and cachestat(2) (or mincore(2)) a part
 *            of the files: the large ones every tick, the small ones in
 *            rounds, within a share of one CPU that the keeper measures on
 *            itself (struct hs_keep_sched below); as root, the kernel also
 *            tells which kept files lose pages (eBPF, keep-evict.h), and
 *            those are checked at once, whatever the round;
 *   re-warm  pages found missing are read back in profile order (warm.h),
 *            at most rate bytes a second, at the idle I/O priority;
 *   follow   a file rewritten in place is read anew; one replaced (its
 *            path names another file, a symlink, a FIFO...) is never
 *            opened, and dropped as a deleted one is; a reload rebuilds
 *            the set, counters kept;
 *   yield    under memory pressure (a PSI trigger on
 *            /proc/pressure/memory, or its averages where the kernel
 *            refuses triggers) it stops reading and checking until the
 *            pressure has been gone for a while; under I/O pressure that
 *            is others' (its cgroup's io.pressure when it shares one with
 *            other processes, else the machine's, measured while it reads
 *            nothing itself) it reads on at a trickle.
 *
 * Every file is opened through the careful open (safeopen.h): a kept
 * file is the file loaded (device and inode), or nothing. A keeper run as
 * root reads each profile's files with the credentials of the profile's
 * owner (its filesystem uid and gid and the owner's groups, in the
 * keeper's one thread), so that a profile written by a user makes it open
 * nothing that user could not, and learn no residency that user could not
 * query; a profile of root's is read as root.
 *
 * What it does it tells through an event callback (the library never
 * prints); its counters go to a state file, written atomically, which a
 * restart resumes from and `hotset keep --status` reads. The state is its
 * writer's alone (0600); a root keeper also writes, for each other owner
 * of a profile, that owner's view: the same state with the figures of
 * that owner's files alone, readable by that owner alone. One keeper per
 * state file: a lock file beside it says which process holds it.
 *
 * Watching is one mode. The other, locking, maps the kept ranges in
 * bounded windows and mlock(2)s them: the kernel then cannot evict them,
 * and the checks only follow files replaced, truncated and deleted.
 */
#ifndef HOTSET_KEEP_H
#define HOTSET_KEEP_H

#include <stdio.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/hotset.h"

/* ---- scheduling: when to check what (pure; tested with a fake clock) ---- */

/*
 * Files whose kept part is at least this many bytes are "large": checked
 * every tick, since one check covers many pages. The others are checked in
 * rounds, a slice each tick.
 */
#define HS_KEEP_LARGE_BYTES (UINT64_C(1) << 20)

struct hs_keep_sched {
	/* settings (hs_keep_sched_init) */
	uint64_t interval;	/* ns: a round of every file takes this long, at most
				 * (unless the CPU share stretches it) */
	uint64_t min_period;	/* ns: ticks this close after refaults (interval / 4) */
	uint64_t event_gap;	/* ns between ticks of files told evicted (min_period,
				 * 1 s at most) */
	uint64_t quiet;		/* ns without pressure events before resuming */
	double cpu_share;	/* checks use at most this fraction of one CPU */
	/* state */
	uint64_t period;	/* ns between ticks, min_period .. interval */
	uint64_t cost;		/* ns of CPU per file check, measured (smoothed) */
	unsigned calm_ticks;	/* ticks since pages were last found missing */
	bool backed_off;	/* memory pressure: no checks, no reads */
	uint64_t pressure_at;	/* ns: the last pressure event */
	bool calm_known;	/* backed off, the memory stall read since calm_at */
	uint64_t calm_at;	/* ns: since then the stall stayed low */
	uint64_t calm_total;	/* us: memory "some total" at calm_at */
	uint64_t calm_ns;	/* ns of low stall that end a back-off (HS_KEEP_CALM_NS,
				 * doubled when a back-off follows one soon) */
	uint64_t resumed_at;	/* ns: the last resume */
	bool resumed_calm;	/* it came from a low stall, not from quiet */
	bool trickle;		/* others' io pressure: reads at a trickle */
	uint64_t trickle_at;	/* ns: the last such event */
	uint64_t round_ns;	/* what the last slice implied a round takes */
};

/* Defaults: the first check cost is a guess, corrected by the first tick. */
#define HS_KEEP_CPU_SHARE 0.005		/* 0.5% of one CPU */
#define HS_KEEP_QUIET_NS (UINT64_C(10) * 1000000000)
/*
 * A memory back-off also ends once tasks stalled on memory for less than
 * HS_KEEP_CALM_STALL_US in HS_KEEP_CALM_NS (1%, a tenth of the trigger's
 * 10%): the pressure has ended, and each second more costs a gap between
 * jobs the re-reads must fit in. A back-off within HS_KEEP_QUIET_NS of
 * such a resume doubles the calm asked for, up to HS_KEEP_QUIET_NS, so
 * that a pressure with pauses is not raced every two seconds.
 */
#define HS_KEEP_CALM_NS (UINT64_C(2) * 1000000000)
#define HS_KEEP_CALM_STALL_US 20000
#define HS_KEEP_COST_GUESS_NS 2000
#define HS_KEEP_EVENT_GAP_NS UINT64_C(1000000000)
/*
 * Under others' io pressure (and no memory pressure) the keeper reads on
 * at a trickle: an HS_KEEP_TRICKLE-th of its rate, and reading at most
 * an HS_KEEP_TRICKLE-th of the time (docs/man/hotset-keep.1).
 */
#define HS_KEEP_TRICKLE 8
/* and in bursts of what the last reads' speed takes in 250 ms, 64 KiB at least */
#define HS_KEEP_TRICKLE_BURST_NS (UINT64_C(250) * 1000000)
#define HS_KEEP_TRICKLE_MIN (UINT64_C(64) << 10)
/*
 * Pages read back within quiet ns and lost again: thrashing from 1/16 of
 * a file's, when tasks stalled on memory (1 ms of "some") since the read.
 */
#define HS_KEEP_THRASH_SHARE 16
#define HS_KEEP_THRASH_STALL_US 1000

void hs_keep_sched_init(struct hs_keep_sched *s, uint64_t interval_ns, double cpu_share);

/*
 * The time until the next tick (ns), given nlarge large files to check in
 * it: the period, stretched so that large files alone take at most half
 * the CPU share.
 */
uint64_t hs_keep_sched_period(const struct hs_keep_sched *s, size_t nlarge);

/*
 * How many of nsmall small files to check in a tick, when nlarge large
 * ones are checked too: enough that a round of them takes interval, or
 * longer when the CPU share left by the large files does not allow it
 * (s->round_ns says how long). At least 1 when nsmall > 0.
 */
size_t hs_keep_sched_slice(struct hs_keep_sched *s, size_t nsmall, size_t nlarge);

/*
 * A tick checked nchecked files in cpu_ns of CPU and found lost_pages
 * pages missing: the cost estimate follows, and the period tightens to
 * min_period after a loss, or backs off (doubling, up to interval) once
 * four ticks in a row have found nothing missing.
 */
void hs_keep_sched_checked(struct hs_keep_sched *s, size_t nchecked, uint64_t cpu_ns,
			   uint64_t lost_pages);

/*
 * How many of the files that eviction events named (keep-evict.h) to
 * check in a tick elapsed ns after the last such tick: what the CPU share
 * pays for in that time, an interval's worth at most; at least 1. Such
 * ticks come at most every event_gap.
 */
size_t hs_keep_sched_due(const struct hs_keep_sched *s, uint64_t elapsed);

/* A pressure event at now: returns true if the keeper backs off now (was not). */
bool hs_keep_sched_pressure(struct hs_keep_sched *s, uint64_t now);

/*
 * Backed off: the memory stall, "some total" (us), read at now. A stall
 * of more than HS_KEEP_CALM_STALL_US since calm_at starts the calm anew.
 */
void hs_keep_sched_memory_stall(struct hs_keep_sched *s, uint64_t now, uint64_t total_us);

/*
 * Returns true if, backed off, it resumes at now: quiet ns since the last
 * event, or calm_ns of them with a low stall all along (resumed_calm).
 */
bool hs_keep_sched_resume(struct hs_keep_sched *s, uint64_t now);

/*
 * Others' io pressure at now: returns true if the keeper starts reading at
 * a trickle now (did not already). hs_keep_sched_io_resume() returns true
 * if it goes back to its full rate at now: quiet ns since the last one.
 */
bool hs_keep_sched_io_pressure(struct hs_keep_sched *s, uint64_t now);
bool hs_keep_sched_io_resume(struct hs_keep_sched *s, uint64_t now);

/* ---- the state file ------------------------------------------------------ */

/* What a keeper writes to its state file and `--status` reads. */
struct hs_keep_state {
	/* counters, carried across restarts */
	uint64_t refault_pages;		/* pages found missing after they had been resident */
	uint64_t rewarmed_pages;	/* pages read back (refaults and replaced files) */
	uint64_t rewarms;		/* ticks that read pages back */
	uint64_t backoffs;		/* times it backed off under pressure */
	int64_t last_rewarm_ns;		/* realtime ns of the last re-warm, 0 if none */
	int64_t last_backoff_ns;	/* and of the last back-off */
	int64_t since_ns;		/* when the counters started (the first run) */
	/* this run */
	int64_t started_ns;		/* when this keeper started */
	int64_t updated_ns;		/* when the state was written */
	pid_t pid;
	bool running;			/* false once it exited cleanly */
	bool backed_off;
	char backoff_reason[64];	/* "memory some 12.30%" while backed off */
	char pressure[16];		/* "trigger", "averages" or "none" */
	char evictions[16];		/* how they are found: "events" (eBPF) or "checks" */
	char io_pressure[256];		/* the io pressure file watched */
	uint64_t budget_bytes;
	uint64_t files, pages, bytes;	/* kept */
	uint64_t unknown_files;		/* not watched: residency unknown */
	uint64_t dropped_files;		/* deleted since they were loaded */
	uint64_t replaced_files;	/* replaced since they were loaded: not opened */
	uint64_t interval_ns;
	uint64_t round_ns;		/* how long a round of checks takes now */
	char mode[8];			/* "watch" or "lock" */
	uint64_t locked_files, locked_bytes;	/* lock mode: what is mlock'd now */
	uint64_t protected_bytes;	/* --protect: the memory.low set, 0 if none */
	char protect_cgroup[256];	/* and the cgroup directory it was set on */
	char **profiles;		/* absolute paths, malloc'd */
	size_t nprofiles;
	bool view;			/* a view: the figures of view_uid's profiles alone */
	uid_t view_uid;
};

/*
 * Write st to path atomically (temporary file, fsync, rename), readable
 * and writable by the writer alone (0600: its figures are of files others
 * may not query). Returns 0 or -errno.
 */
int hs_keep_state_write(const char *path, const struct hs_keep_state *st);

/*
 * The same, as a view of user uid (st->view set): the file made uid's
 * (and gid's), readable by its owner alone (0400). Needs root.
 */
int hs_keep_state_write_view(const char *path, const struct hs_keep_state *st, uid_t uid,
			     gid_t gid);

/* Where the view of uid of the state file path goes: path.uid-UID (malloc'd, or NULL). */
char *hs_keep_view_path(const char *path, uid_t uid);

/*
 * Read the state file at path into *st (release with
 * hs_keep_state_release()). Returns 0, -errno, or -EINVAL with err saying
 * which line is wrong.
 */
int hs_keep_state_read(const char *path, struct hs_keep_state *st, struct hs_error *err);
/* The same from an open stream (what hs_keep_state_read() does after opening). */
int hs_keep_state_parse(FILE *f, struct hs_keep_state *st, struct hs_error *err);
void hs_keep_state_release(struct hs_keep_state *st);

/*
 * The lock of state file path: path + ".lock", holding the pid of its
 * keeper. hs_keep_lock() takes it (a descriptor the caller keeps open as
 * long as it keeps), or returns -EWOULDBLOCK with the holder's pid in
 * *holder (0 if unknown). hs_keep_lock_holder() tells who holds it: its
 * pid, 0 if nobody does, or -errno (-ENOENT: no keeper ever ran).
 */
int hs_keep_lock(const char *path, pid_t *holder);
/* Write this process's pid into the lock fd (after a fork: the lock is shared). */
int hs_keep_lock_own(int fd);
pid_t hs_keep_lock_holder(const char *path);

/* ---- the keeper ------------------------------------------------------------ */

enum hs_keep_mode {
	HS_KEEP_WATCH = 0,	/* re-warm what gets evicted */
	HS_KEEP_LOCK,		/* mlock the kept pages, follow the files' changes */
};

/* Lock mode maps files in windows of at most this many bytes each. */
#define HS_KEEP_LOCK_WINDOW (UINT64_C(64) << 20)
/* The first locking goes at full speed, this many bytes a tick. */
#define HS_KEEP_LOCK_BURST (UINT64_C(256) << 20)

/* PSI thresholds: stall_us of stall in each window_us (docs/man/hotset-keep.1). */
struct hs_keep_trigger {
	uint64_t stall_us, window_us;
};

enum hs_keep_event_kind {
	HS_KEEP_STARTED,	/* profiles, files, pages, bytes, budget; stale, unknown */
	HS_KEEP_WARMED,		/* pages read back (pages) of files (files); refault_pages
				 * of them had been resident; initial: the first reading */
	HS_KEEP_BACKOFF,	/* resource ("memory", "io"), value (percent avg10), how;
				 * trigger (by a trigger) or threshold (by the averages);
				 * io: share (others' stall, percent; < 0 if not
				 * measured), and the keeper reads on at a trickle */
	HS_KEEP_RESUMED,	/* resource: what it backed off for; trickle: memory
				 * resumed, but reads go on at a trickle (io) */
	HS_KEEP_RELOADED,	/* files, pages, bytes */
	HS_KEEP_REPLACED,	/* path: another file at its path now (what: "a FIFO",
				 * "another user's file, uid N"...), never opened,
				 * dropped; or (what NULL) a new inode of its owner's or
				 * root's, or rewritten in place (in_place), read anew */
	HS_KEEP_DELETED,	/* path: dropped */
	HS_KEEP_FILE_WARMED,	/* path, pages: one file's pages read back */
	HS_KEEP_WARN,		/* path (or NULL), errnum, what */
	HS_KEEP_NOTE,		/* what: a sentence (the pressure fallback, say) */
	HS_KEEP_EXITING,	/* signal */
	HS_KEEP_LOCKED,		/* lock mode: pages (of files) locked by a tick; bytes:
				 * all that is locked now; initial: the first locking */
	HS_KEEP_TRUNCATED,	/* lock mode: path shrank; pages: unlocked beyond its end */
	HS_KEEP_PROTECTED,	/* --protect: memory.low (bytes) set on the cgroup (path) */
};

struct hs_keep_event {
	enum hs_keep_event_kind kind;
	const char *path;	/* NUL-terminated */
	uint64_t files, pages, bytes, refault_pages;
	uint64_t budget, stale, unknown;
	size_t profiles;
	bool initial, in_place, trickle;
	const char *resource;	/* BACKOFF */
	double value;		/* BACKOFF: avg10, percent */
	const char *how;	/* BACKOFF: "trigger" or "averages" */
	struct hs_keep_trigger trigger;	/* BACKOFF by trigger: its thresholds */
	double threshold;	/* BACKOFF: the avg10 threshold, percent */
	double share;		/* BACKOFF io: others' stall while the keeper read nothing */
	uint64_t calm_ns;	/* RESUMED memory: after this long of a low stall (0: of
				 * HS_KEEP_QUIET_NS without events) */
	int errnum;		/* WARN */
	const char *what;	/* WARN, NOTE; REPLACED: by what */
	int signal;		/* EXITING */
};

typedef void (*hs_keep_event_fn)(void *ctx, const struct hs_keep_event *e);

struct hs_keep_opts {
	enum hs_keep_mode mode;
	const char *const *profiles;	/* paths, in order */
	size_t nprofiles;
	uint64_t budget;		/* bytes kept, in profile order; required (> 0) */
	uint64_t interval_ns;		/* see struct hs_keep_sched; 0 = 10 s */
	uint64_t rate;			/* bytes read back per second at most; 0 = 64 MiB */
	double cpu_share;		/* 0 = HS_KEEP_CPU_SHARE */
	const char *state;		/* the state file (already locked by the caller) */
	const char *pressure_dir;	/* NULL = /proc/pressure */
	const char *io_cgroup;		/* a cgroup v2 directory whose io.pressure
					 * tells io pressure; NULL = chosen */
	struct hs_keep_trigger memory, io;	/* 0 = the defaults */
	int signal_fd;			/* a signalfd of SIGHUP (reload), SIGTERM and
					 * SIGINT (stop), or -1 */
	bool protect;			/* memory.low of our cgroup = the kept bytes */
	hs_keep_event_fn event;
	bool file_events;		/* HS_KEEP_FILE_WARMED too */
	bool checks_only;		/* find evictions by the checks alone, without eBPF */
	void *ctx;
};

struct hs_keep;

/*
 * Load the profiles, resume the counters of the state file (if it exists
 * and names the same profiles... or others: counters are the state's), and
 * set up the pressure watch. Returns 0, or -errno with err saying why (a
 * profile that cannot be read; -EPERM when the residency of no file can be
 * known to this user; lock mode: -ENOMEM when RLIMIT_MEMLOCK is below the
 * kept bytes and the process lacks CAP_IPC_LOCK; --protect: -ENOTSUP
 * without a cgroup v2 memory controller, naming what is missing). Nothing
 * is mapped or locked yet: that is hs_keep_run()'s, so that a caller may
 * fork in between (mlock's locks are not inherited).
 */
int hs_keep_new(const struct hs_keep_opts *o, struct hs_keep **out, struct hs_error *err);

/*
 * Keep until a stop signal comes through signal_fd: the first reading,
 * then ticks. Writes the state file after each tick that changed it, and
 * at the end. Returns the signal that stopped it, or -errno.
 */
int hs_keep_run(struct hs_keep *k);

/* The state as it stands (counters and what is kept). */
const struct hs_keep_state *hs_keep_state(const struct hs_keep *k);

void hs_keep_free(struct hs_keep *k);

/*
 * --protect: set memory.low of a cgroup v2 directory to bytes. mount and
 * own: the cgroup2 mount and this process's directory under it (NULL:
 * found from /proc/self). When own is the root, which has no memory.low, a
 * cgroup of its own, mount/name, is made and the process moved into it
 * (*made true). Refused (-EBUSY) when own holds other processes too, whose
 * memory the protection would cover. *dir (size bytes) receives the
 * directory set. Returns 0, or -errno with err saying what cannot be done
 * and how to get it (-ENOTSUP: no memory controller on cgroup v2, as with
 * cgroup v1, which has no low protection at all).
 */
int hs_keep_protect(const char *mount, const char *own, const char *name, uint64_t bytes,
		    char *dir, size_t size, bool *made, struct hs_error *err);
/* Undo it: memory.low 0; a cgroup made is left (for its parent) and removed. */
void hs_keep_unprotect(const char *dir, bool made);

/*
 * Set the calling thread's I/O priority to the idle class (threads it
 * starts afterwards inherit it). Returns 0 or -errno.
 */
int hs_ioprio_idle(void);

#endif
