/*
 * state.h - a keeper's state file: what it writes, what a restart resumes
 * and `hotset keep --status` reads; the views a root keeper writes for
 * the other owners of its profiles; and the lock that makes one keeper
 * per state.
 *
 * The format is text, a "key value" line a field, between a magic line
 * and "end": keys this version does not know are skipped (a newer keeper
 * wrote them), a bad value is refused with its line number. The parser is
 * fuzzed (tests/fuzz/fuzz-keepstate.c) with this module and base/ alone.
 */
#ifndef HOTSET_KEEP_STATE_H
#define HOTSET_KEEP_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "base/hotset.h"

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
 * Where a keeper's state is when no --state names it: in the directory of
 * states (HS_KEEP_ROOT_DIR for root, $XDG_RUNTIME_DIR/hotset for a user),
 * one state a profile set, named after the set.
 *
 * hs_keep_state_dir() gives that directory (malloc'd in *dir), made 0700
 * if create and it is missing. hs_keep_state_name() gives the state of the
 * profiles (absolute paths, n >= 1) in dir: keep-NAME-HASH.state (malloc'd,
 * or NULL when out of memory). hs_keep_state_default() is the two.
 * hs_keep_state_only() finds the one state of the directory, for a
 * --status that names neither a state nor profiles. Each returns 0, or
 * -errno with err saying what to give instead.
 */
#define HS_KEEP_ROOT_DIR "/run/hotset"
int hs_keep_state_dir(bool create, char **dir, struct hs_error *err);
char *hs_keep_state_name(const char *dir, char *const *profiles, size_t n);
int hs_keep_state_default(char *const *profiles, size_t n, bool create, char **out,
			  struct hs_error *err);
int hs_keep_state_only(char **out, struct hs_error *err);

/*
 * Read the state at path as hs_keep_state_read() does or, where it is
 * root's alone (a root keeper's), the view of it that such a keeper wrote
 * for this user. Returns 0, or -errno with err (-EACCES: neither can be
 * read, said why).
 */
int hs_keep_state_read_any(const char *path, struct hs_keep_state *st, struct hs_error *err);

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

#endif
