/*
 * sched.h - which job of `hotset run` starts next, or why each waits.
 *
 * A pure function of what the queue knows, so that it is tested alone:
 *
 *  - a job starts only when a CPU is free for it ("cpu"): with -j N, when
 *    fewer than N jobs run; by default, when the CPU time the running
 *    jobs take (each one's CPU time over its wall time, last run; 1 CPU
 *    without a history) plus its own fits the online CPUs, so that jobs
 *    that mostly wait for the disk do not hold a CPU each;
 *  - the memory the running jobs need plus its own must fit the cache
 *    budget ("memory"); a job that needs more than the whole budget reads
 *    from the disk whatever it gets, so it is counted as all of the budget
 *    but a tenth (HS_SCHED_SLACK): only jobs that need little (a CPU-bound
 *    job) run beside it, and it is never skipped; with a budget of 0, jobs
 *    that need memory run one at a time;
 *  - a job known to be I/O-bound starts beside others only while the
 *    machine's I/O pressure is below HS_SCHED_IO_PRESSURE ("io-pressure");
 *  - a job with no history runs alone, or beside jobs known to be
 *    CPU-bound ("no-history"), and while it runs only such jobs join it
 *    ("unknown-running");
 *  - jobs start in the order of the job file, first fit, except that the
 *    first job that waits for memory or a CPU holds its place: a later job
 *    passes it only if both would fit together with the running ones, or
 *    (waiting for memory) if its last run says it ends, with a tenth and a
 *    second to spare, before the running ones leave room for it
 *    (backfilling), so that a large job is not starved by a stream of
 *    small ones ("order").
 *
 * With nothing running, the first pending job always starts.
 */
#ifndef HOTSET_SCHED_H
#define HOTSET_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "queue/runstate.h"

/*
 * I/O pressure (percent of the last seconds in which some task waited for
 * I/O) above which an I/O-bound job waits.
 */
#define HS_SCHED_IO_PRESSURE 40.0
/* backfilling: a job passes one held only if 1.1 x its last wall time + 1 s ends in time */
#define HS_SCHED_BACKFILL_SLACK 1.1

/* The share of the budget left beside a job larger than the budget. */
#define HS_SCHED_SLACK 10

enum hs_wait {
	HS_WAIT_NONE,		/* it may start (or is not pending) */
	HS_WAIT_CPU,
	HS_WAIT_MEMORY,
	HS_WAIT_IO_PRESSURE,
	HS_WAIT_NO_HISTORY,
	HS_WAIT_UNKNOWN_RUNNING,
	HS_WAIT_ORDER,
};

const char *hs_wait_name(enum hs_wait w);

struct hs_sched_job {
	enum hs_queue_state state;
	bool known;		/* it has a history */
	/*
	 * known: its last run hardly waited for the disk (CPU-bound, or
	 * sleeping, or waiting for the network): it does not compete for it
	 */
	bool cpu_bound;
	uint64_t need;		/* known: the memory it needs (hs_sched_need()) */
	double cpu;		/* known: the CPUs it keeps busy (hs_sched_cpu()) */
	double wall;		/* known: its last run's wall time, seconds (0: unknown) */
	double elapsed;		/* running: seconds since it started */
	bool warmed;		/* its profile was warmed while it waited (hs_sched_warm_next()) */
	enum hs_wait wait;	/* out: why it waits, when pending */
};

struct hs_sched {
	unsigned slots;		/* -j N: at most N jobs at once; 0: share cpus */
	double cpus;		/* without -j N: the CPUs the jobs share (online CPUs) */
	uint64_t budget;	/* bytes of memory the jobs may use together */
	bool pressure_known;
	double io_pressure;	/* some, percent of the last seconds */
};

/*
 * Decide: sets each pending job's wait (HS_WAIT_NONE for the one chosen)
 * and returns the index of the job to start now, or -1 if none may.
 * Call again after starting it, for the next.
 */
ssize_t hs_sched_next(const struct hs_sched *s, struct hs_sched_job *jobs, size_t n);

/*
 * Which job's profile to warm while it waits, or -1: only while every
 * running job (at least one) is known to be CPU-bound, so that the warming
 * takes a disk no job waits for, and only the next pending job, if it
 * waits for a CPU alone, is known, has not been warmed yet, and its need
 * fits beside the running jobs' in the budget: it then starts with its
 * pages in the cache. Never one further down, whose turn is far off. The
 * caller checks that the job has a profile to warm.
 */
ssize_t hs_sched_warm_next(const struct hs_sched *s, const struct hs_sched_job *jobs, size_t n);

/*
 * The memory a job needs, from its last run: the cache with which a
 * re-run reads nothing (its profile's curve; else all it read; else what
 * it read from disk), plus the bytes it wrote and its largest process's
 * peak memory, as hs_rerun_need() (memory.h) counts them for doctor.
 */
uint64_t hs_sched_need(const struct hs_run_record *r);

/* The CPUs a job kept busy on average in its last run: CPU time over wall time. */
double hs_sched_cpu(const struct hs_run_record *r);

/*
 * Whether a run hardly waited for the disk: I/O wait at most a tenth of
 * its wall time (without I/O wait known: it read from the disk at most a
 * tenth of what it read).
 */
bool hs_sched_cpu_bound(const struct hs_run_record *r);

#endif
