/*
 * keeper.h - private to src/lib/keep: the keeper's structure, its kept
 * set, and what its modules call in each other. Nothing outside the
 * folder includes it (the CLI has keep.h, state.h and schedule.h).
 *
 * The keeper (keep.h) is these modules, around one struct hs_keep:
 *
 *   keep.c      hs_keep_new(), hs_keep_run(), hs_keep_free(): setting up,
 *               the loop (signals, triggers, eviction events, ticks), a
 *               tick, reloading on SIGHUP, the state written
 *   schedule.c  when to check what, when to back off (pure: schedule.h)
 *   state.c     the state file, the owners' views, the lock (state.h)
 *   set.c       the kept set: profiles loaded in order, cut by the budget;
 *               files waiting to be read; a kept file opened or looked at
 *               as its owner, the file loaded or nothing, dropped when
 *               deleted or replaced
 *   owners.c    whose credentials read what (a root keeper reads a
 *               profile's files as its owner), and each owner's view
 *   pressure.c  where pressure is read, PSI triggers or averages, memory
 *               back-offs, others' io pressure told from ours, the trickle
 *   watch.c     watch mode: a file's check, and reading back what is lost
 *   lock.c      lock mode: mapping and mlock(2)ing windows, following
 *               files by stat, a reload's handover of what is locked
 *   protect.c   --protect: memory.low of the keeper's cgroup (protect.h)
 *   events.c    the files the kernel tells evicted (keep-evict.c, the eBPF
 *               program's user side), checked in ticks of their own
 *
 * Every function here runs in the keeper's one thread, but for the warm
 * callback (watch.c), which takes hs_keep.lock.
 */
#ifndef HOTSET_KEEP_KEEPER_H
#define HOTSET_KEEP_KEEPER_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "base/u64map.h"
#include "keep/keep.h"
#include "kernel/psi.h"
#include "profile/profile.h"

#define NS 1000000000ull

/* ---- the kept set ------------------------------------------------------------ */

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

/*
 * The kept set is an array of files in profile order (the order in which
 * missing pages are read back), with two index lists over it: the large
 * files, checked every tick, and the small ones, checked a slice a tick.
 * A check opens the file, fstats it (a new inode, size or mtime: read it
 * anew), counts its resident kept pages, and closes it: about 5 us a file,
 * mostly the open and close (openat from a directory's descriptor saves
 * nothing measurable). A file held open costs 1.5 us, but 200,000 of them
 * would need as many descriptors, pin deleted files, and still not fit a
 * round in an interval (docs/benchmarks.md).
 */
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

/* A watched file by inode number, for the eviction events (events.c). */
struct ino_index {
	uint64_t ino;
	size_t i;
};

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
	/* our own reads, to tell others' io stall from ours (keep_io_event) */
	uint64_t read_end;		/* ns: when our last reads ended */
	struct hs_psi_mark mark;	/* others' io stall is measured from this reading */
	uint64_t io_check_at;		/* ns: whether an io event was others' is measured then */
	const char *io_check_how;
	uint64_t next_read_at;		/* ns: a trickle reads again no sooner */
	double read_bps;		/* bytes a second our last reads took in */
	struct hs_psi_mark mem_before;	/* memory "some total" before this re-warm */
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

/* ---- keep.c ----------------------------------------------------------------- */

/* Tell the caller's event callback e, if it has one. */
void keep_emit(struct hs_keep *k, struct hs_keep_event *e);
/* An HS_KEEP_WARN event: path (or NULL), errnum (or 0), what. */
void keep_warn(struct hs_keep *k, const char *path, int errnum, const char *what);

/*
 * A tick checked n files since cpu0 (thread CPU ns) and found lost pages
 * missing: tell the schedule, and read back (or lock) what is pending,
 * the rate's worth of period ns (0: of the schedule's period).
 */
void keep_checked(struct hs_keep *k, size_t n, uint64_t cpu0, uint64_t lost, uint64_t period);

/* ---- set.c ------------------------------------------------------------------ */

/* Load the profiles into *s (zeroed first), each read as its owner. Returns 0 or -errno with err. */
int keep_set_load(struct hs_keep *k, struct kset *s, struct hs_error *err);
void keep_set_free(struct kset *s);
/* The state's figures of the kept set (files, pages, bytes...), its own and each owner's. */
void keep_set_counts(struct hs_keep *k);

/* f's windows unmapped, its locked pages counted off s (lock mode). */
void keep_unmap_file(struct kset *s, struct kfile *f);

/* File i waits to be read (or locked). Returns 0 or -ENOMEM. */
int keep_pend_add(struct hs_keep *k, size_t i);
/* The files of the set that wait, for the first reading. Returns 0 or -ENOMEM. */
int keep_pend_from_set(struct hs_keep *k);
/* The waiting files in profile order, in which they are read. */
void keep_pend_sort(struct hs_keep *k);

/* f's identity and size from st; is st the same file, or the same unchanged? */
void keep_take_stat(struct kfile *f, const struct stat *st);
bool keep_same_file(const struct kfile *f, const struct stat *st);
bool keep_unchanged(const struct kfile *f, const struct stat *st);

/*
 * Open f as its owner (the careful open): a descriptor, with what it is in
 * *st, or -1 (f dropped, or warned about). keep_look_file() looks without
 * opening: 0 with *st, or -1 the same way.
 */
int keep_open_file(struct hs_keep *k, struct kfile *f, struct stat *st);
int keep_look_file(struct hs_keep *k, struct kfile *f, struct stat *st);

/* ---- owners.c ----------------------------------------------------------------- */

/* This thread's credentials for files: owner i's (0: the keeper's own). Returns 0 or -EPERM. */
int keep_creds_use(struct hs_keep *k, size_t i);
/* owners[0], the keeper itself. Returns 0 or -ENOMEM. */
int keep_owner_self(struct hs_keep *k);
/* The owner that reads a profile of user uid, made if new. Returns 0 or -errno with err. */
int keep_owner_of(struct hs_keep *k, uid_t uid, size_t *out, struct hs_error *err);
void keep_owners_free(struct hs_keep *k);
/* Which owners the kept set has; the views of the others removed (root). */
void keep_owners_activate(struct hs_keep *k);
/* Write each active owner's view (root), warned once if one cannot be. */
void keep_write_views(struct hs_keep *k);

/* ---- pressure.c ----------------------------------------------------------------- */

/* Where memory and io pressure are read; then (hs_keep_run) the triggers or averages. */
void keep_pressure_files(struct hs_keep *k);
void keep_pressure_setup(struct hs_keep *k);
/* avg10 of "some" for resource i (0 memory, 1 io), or -1. */
double keep_avg10(struct hs_keep *k, int i);
/* Memory pressure at now (how: "trigger", "averages", "thrashing"): a back-off. */
void keep_pressure_event(struct hs_keep *k, int i, uint64_t now, const char *how);
/* io pressure at now: others' (a trickle), or ours to measure by reading nothing. */
void keep_io_event(struct hs_keep *k, uint64_t now, const char *how);
/* The trigger of resource r polled readable (revents). */
void keep_pressure_trigger(struct hs_keep *k, int r, short revents);
/* Where triggers could not be made: the averages read at a tick at now. */
void keep_pressure_averages(struct hs_keep *k, uint64_t now);
/*
 * Before a tick at now: the stall of a memory back-off, resuming from
 * either back-off, the io measurement that is due. Returns true when the
 * keeper should tick at once (it resumed, or reads were held back).
 */
bool keep_pressure_resume(struct hs_keep *k, uint64_t now);
/* Our reads of bytes, begun at began, ended now. */
void keep_read_done(struct hs_keep *k, uint64_t began, uint64_t bytes);
/* What a trickle may read in one go, of budget bytes at the full rate. */
uint64_t keep_trickle_budget(const struct hs_keep *k, uint64_t budget);
/* Whether reads wait now: an io measurement under way, or a trickle's pause. */
bool keep_reads_wait(const struct hs_keep *k, uint64_t now);
/* Did anyone stall on memory since f was read back? (unknown: yes) */
bool keep_stalled_since(struct hs_keep *k, const struct kfile *f);

/* ---- watch.c -------------------------------------------------------------------- */

/* Check file i: returns the kept pages found lost since the last look. */
uint64_t keep_check_file(struct hs_keep *k, size_t i);
/* Read back what is pending, the rate's worth of period ns; refaults: for the event. */
void keep_rewarm(struct hs_keep *k, uint64_t period, uint64_t refaults);

/* ---- lock.c --------------------------------------------------------------------- */

/* Lock mode: 0, or -ENOMEM with err when RLIMIT_MEMLOCK (without CAP_IPC_LOCK) is below the set. */
int keep_lock_limit(struct hs_keep *k, struct hs_error *err);
/* Lock mode's check of file i: followed if changed, dropped if replaced. */
void keep_check_locked(struct hs_keep *k, size_t i);
/* Map and lock what is pending, the rate's worth of period ns (the first: a burst). */
void keep_lock_pending(struct hs_keep *k, uint64_t period);
/* A reload's new set s takes over the windows of files the old set locked. */
void keep_lock_handover(struct hs_keep *k, struct kset *s);
void keep_unmap_all(struct kset *s);

/* ---- protect.c ------------------------------------------------------------------ */

/* --protect at start: memory.low of our cgroup set to the kept bytes. Returns 0 or -errno with err. */
int keep_protect_start(struct hs_keep *k, struct hs_error *err);
/* After a reload: memory.low follows the kept bytes (warned if it cannot). */
void keep_protect_update(struct hs_keep *k);
/* At the end: memory.low 0, a cgroup made removed. */
void keep_protect_end(struct hs_keep *k);

/* ---- events.c ------------------------------------------------------------------- */

/* Watch the set's evictions through eBPF if this process may; else a note says why. */
void keep_events_setup(struct hs_keep *k);
/* The inode numbers the kernel told since the last drain: their files are due. */
void keep_events_drain(struct hs_keep *k);
/* Check the files told evicted, as many as the CPU share pays for. */
void keep_events_tick(struct hs_keep *k, uint64_t now);

#endif
