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
 *
 * This header is the keeper's; the rules of its schedule are schedule.h's
 * and its state file state.h's, both included here. The modules behind
 * it, and what each owns, are listed in keeper.h (private to the folder).
 */
#ifndef HOTSET_KEEP_H
#define HOTSET_KEEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/hotset.h"
#include "keep/schedule.h"
#include "keep/state.h"

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

#endif
