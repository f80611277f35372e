/*
 * runstate.h - the state directory of `hotset run`.
 *
 *	DIR/lock		flock()ed by the queue that uses DIR; holds its pid
 *	DIR/queue		the queue: its job file, that file's hash, each job's state
 *	DIR/jobs/NAME/profile	the job's profile, recorded on its first run
 *	DIR/jobs/NAME/history	what its last run cost (struct hs_run_record)
 *	DIR/jobs/NAME/result	the run that just ended, for the queue to read
 *	DIR/logs/NAME.log	its output (the default of --logs)
 *
 * Every file but the log is written whole and renamed into place, so that
 * a kill or a power cut leaves the old version or the new one.
 */
#ifndef HOTSET_RUNSTATE_H
#define HOTSET_RUNSTATE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "base/hotset.h"
#include "queue/jobfile.h"

/*
 * One run of a job, and what the queue knows of the job from its runs: a
 * text file of "key value" lines ("#" comments), unknown keys skipped (a
 * later version may add some), a figure that is not known is "-".
 */
struct hs_run_record {
	unsigned runs;			/* how many runs these figures are the last of */
	int exit_status;		/* the job's exit code, or 128+N for signal N */
	int signal;			/* the signal that ended it, or 0 */
	int64_t start_ns, end_ns;	/* wall-clock times, ns since the epoch */
	double wall_s, user_s, sys_s;
	bool io_wait_known;
	double io_wait_s;
	bool io_known;
	uint64_t read_bytes_disk, write_bytes_disk;
	uint64_t max_rss_bytes;
	/* from the profile */
	bool profile_known;
	uint64_t working_set_bytes;	/* the pages it read */
	bool rerun_known;
	uint64_t rerun_cache_bytes;	/* the cache with which a re-run reads nothing (its curve) */
};

/*
 * Parse len bytes of text (not NUL-terminated) into *r, which is zeroed
 * first: a figure the text lacks is 0, or unknown where it has a flag.
 * Returns 0, or -EINVAL with err->line and err->msg (*r then half
 * filled: not to be used). r holds no pointers: nothing to free.
 */
int hs_run_record_parse(const char *text, size_t len, struct hs_run_record *r,
			struct hs_error *err);
/* Print r as hs_run_record_parse() reads it back (f's errors are the caller's to check). */
void hs_run_record_print(FILE *f, const struct hs_run_record *r);
/* Read path: 0, -ENOENT, or -EINVAL with err (line and reason), or -errno. */
int hs_run_record_load(const char *path, struct hs_run_record *r, struct hs_error *err);
/* Write path atomically, mode 0600. Returns 0 or -errno (the old file kept). */
int hs_run_record_save(const char *path, const struct hs_run_record *r);

/* A job's state in the queue file. */
enum hs_queue_state { HS_Q_PENDING, HS_Q_RUNNING, HS_Q_DONE };

struct hs_queue_job {
	char name[HS_JOB_NAME_MAX + 1];
	enum hs_queue_state state;
	int exit_status;		/* done: its exit code */
	int64_t start_ns, end_ns;	/* running, done */
	pid_t supervisor;		/* running: the process that runs it (its Slurm job id
					 * when slurm), or 0 */
};

struct hs_queue {
	char jobfile[4096];
	uint64_t hash;
	bool slurm;			/* "engine slurm": the jobs were submitted to Slurm */
	struct hs_queue_job *jobs;
	size_t n, cap;
};

/*
 * Parse len bytes of text into *q (initialised here, jobs in file order).
 * Returns 0, q's jobs then the caller's (hs_queue_free()); or -EINVAL
 * with err->line and err->msg, or -ENOMEM, with q empty (nothing to free).
 */
int hs_queue_parse(const char *text, size_t len, struct hs_queue *q, struct hs_error *err);
/* Print q as hs_queue_parse() reads it back (f's errors are the caller's to check). */
void hs_queue_print(FILE *f, const struct hs_queue *q);
/* Read path: as hs_queue_parse(), or -ENOENT, or -errno. */
int hs_queue_load(const char *path, struct hs_queue *q, struct hs_error *err);
/* Write path atomically, mode 0600. Returns 0 or -errno (the old file kept). */
int hs_queue_save(const char *path, const struct hs_queue *q);
/* Free q's jobs and leave it empty; for a q that parse or load filled (or a zeroed one). */
void hs_queue_free(struct hs_queue *q);

/*
 * Write what print() prints to path, atomically, 0600 (atomic.h): the one
 * writer of the state directory's files. Returns 0 or -errno; err (may
 * be NULL) says why the file could not be opened.
 */
int hs_runstate_write(const char *path, void (*print)(FILE *, const void *), const void *ctx,
		      struct hs_error *err);

/*
 * The default state directory: $XDG_STATE_HOME/hotset/run, else
 * ~/.local/state/hotset/run, or /var/lib/hotset/run for root.
 * Returns 0, or -ENOENT when no home is known.
 */
int hs_runstate_default_dir(char *buf, size_t size);

/*
 * Lock DIR/lock against another queue, without waiting: returns the
 * lock's descriptor (kept open as long as the queue runs), -EWOULDBLOCK
 * with *holder set to the pid written by the queue that holds it (0 if
 * unknown), or -errno.
 */
int hs_runstate_lock(const char *dir, pid_t *holder);

#endif
