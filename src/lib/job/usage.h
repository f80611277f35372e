/*
 * usage.h - what a job cost: wall and CPU time, the time it spent blocked
 * on I/O, page faults, and the bytes it read from storage versus from the
 * page cache, for the whole process tree.
 *
 * Time blocked on I/O comes from the pressure stall information (PSI) of a
 * cgroup v2 directory made for the job: io.pressure's "some" total grows
 * while at least one of the job's tasks waits for I/O, "full" while all of
 * them do. The machine-wide /proc/pressure/io is never used, since it counts
 * everybody's stalls; neither is delay accounting (off by default, and
 * unreliable on recent kernels). Where no cgroup can be had (an
 * unprivileged user whose cgroup is not delegated), the figure is unknown
 * and a note says why and how to fix it: it is never guessed.
 *
 * CPU time, faults, context switches, the largest process's peak memory
 * and the I/O counts are those of the children the caller has waited for
 * (getrusage(RUSAGE_CHILDREN) and /proc/self/io deltas: a child's counts
 * are added to its parent when it is reaped), checked against the
 * cgroup's cpu.stat, which also sees processes nobody waited for.
 *
 * Bytes served from the page cache are not known: rchar (bytes returned
 * by read(2) and friends) counts pipes and sockets as well as files, so
 * rchar - read_bytes says nothing about the cache, and no counter tells
 * file reads apart short of tracing the job. rchar and wchar are reported
 * for what they are.
 *
 * Use: hs_usage_begin() just before starting the job; start it in the
 * cgroup that hs_usage_cgroup_procs() names (hs_job_spec.cgroup_procs);
 * reap it however the caller likes (the caller must reap every child it
 * can, subreaper included); then hs_usage_end(). The probe does not care
 * how the job is run or waited for. One probe at a time per process: the
 * /proc/self/io and rusage deltas would overlap.
 */
#ifndef HOTSET_USAGE_H
#define HOTSET_USAGE_H

#include <stdbool.h>
#include <stdint.h>

struct hs_usage_probe;

/* Where the pressure figures (io_wait_seconds and friends) come from. */
enum hs_pressure_source {
	HS_PRESSURE_UNKNOWN = 0,	/* not measured; the notes say why */
	HS_PRESSURE_JOB_CGROUP,		/* a cgroup made for the job */
	HS_PRESSURE_OWN_CGROUP,		/* hotset's own cgroup, which held only hotset */
};

#define HS_USAGE_NOTES 8
#define HS_USAGE_NOTE_LEN 400

struct hs_usage {
	double wall_s;			/* from hs_usage_begin() to hs_usage_end() */
	double user_s, sys_s;		/* CPU time of the job's processes */

	/* Pressure stall times, valid when pressure != HS_PRESSURE_UNKNOWN. */
	enum hs_pressure_source pressure;
	double io_wait_s;		/* some task of the job blocked on I/O */
	double io_wait_full_s;		/* every runnable task of the job blocked on I/O */
	double cpu_wait_s;		/* some task runnable but waiting for a CPU */
	double memory_wait_s;		/* some task stalled on memory (reclaim, refaults) */

	uint64_t major_faults, minor_faults;
	uint64_t voluntary_switches;	/* context switches: the task blocked */
	uint64_t involuntary_switches;	/* context switches: the task was preempted */
	uint64_t max_rss_bytes;		/* peak resident set of the largest process, as time(1) */

	uint64_t read_bytes_disk;	/* bytes the job made the kernel read from storage */
	bool io_known;			/* false: no per-task I/O accounting in this kernel */
	uint64_t rchar;			/* bytes returned by read(2) and friends: files, pipes, sockets */
	uint64_t wchar;			/* bytes passed to write(2) and friends, of any kind */
	uint64_t write_bytes_disk;	/* bytes the job dirtied or wrote for storage (valid with io_known) */
	/*
	 * Bytes served from the page cache: the probe cannot know them (see
	 * above), so it leaves read_bytes_cache_known false. A caller that
	 * counted the pages itself may fill both fields before printing.
	 */
	bool read_bytes_cache_known;
	uint64_t read_bytes_cache;

	int still_running;		/* processes of the job left running at the end */

	/* Read requests the job's block I/O made: io.stat rios of its cgroup, when it has one. */
	bool read_ios_known;
	uint64_t read_ios;

	/* Why a figure is unknown or approximate, one sentence each. */
	int nnotes;
	char notes[HS_USAGE_NOTES][HS_USAGE_NOTE_LEN];
};

/*
 * Start measuring: find or make a cgroup for the job, take the baselines,
 * and start a thread that reads the cgroup's io.pressure every 100 ms (PSI
 * folds per-CPU stall times into the total when it is read; reading it
 * rarely under-counts a job that moves between CPUs). Failing to get a
 * cgroup is not an error: the figures it gives are then unknown, with a
 * note. To check that the job will be able to join the new cgroup, it
 * forks a child that joins it and exits, and reaps it (by pid: a caller's
 * SIGCHLD handler must not reap it first). The sampler thread blocks all
 * signals and, by the time this returns, holds no lock but its own: the
 * caller may fork a process that goes on running code (not only exec).
 *
 * Returns 0 and sets *out (release it with hs_usage_end()), or -errno
 * (out of memory).
 */
int hs_usage_begin(struct hs_usage_probe **out);

/*
 * A timeline of the run: every 100 ms, the job's CPU time and its time
 * blocked on I/O so far (its cgroup's cpu.stat usage_usec and io.pressure
 * "some" total), from the start. Only with a cgroup to measure.
 */
struct hs_usage_sample {
	double t;		/* seconds since hs_usage_begin_timeline() */
	double cpu_s;		/* CPU time of the job so far (all its CPUs) */
	double io_wait_s;	/* time some task of the job was blocked on I/O so far */
};
struct hs_usage_timeline {
	struct hs_usage_sample *v;
	size_t n, cap;
};
void hs_usage_timeline_release(struct hs_usage_timeline *tl);

/*
 * hs_usage_begin(), with the sampler also filling *tl (zeroed by the
 * caller, released with hs_usage_timeline_release()) until hs_usage_end().
 * The sampling is off unless asked for this way.
 */
int hs_usage_begin_timeline(struct hs_usage_probe **out, struct hs_usage_timeline *tl);

/*
 * The cgroup.procs file the job's first process must write itself into
 * before it execs (see hs_job_spec.cgroup_procs), or NULL when the job
 * needs to go nowhere (it inherits hotset's cgroup, or nothing is measured).
 * The probe checked at begin that a child of ours can join it.
 */
const char *hs_usage_cgroup_procs(const struct hs_usage_probe *p);

/*
 * What a helper child of the caller reaped: the job's processes, not the
 * helper itself. A record backend's tracer forks the job and reaps it;
 * hotset then counts the tracer in its own children (or never reaps it in
 * time, when it stays to follow processes the job left running), so its
 * view of the job replaces hotset's. self_user_s and self_sys_s are the
 * helper's own CPU time, taken out of a cgroup hotset shares with it.
 */
struct hs_usage_helper {
	bool known;
	double user_s, sys_s;
	double self_user_s, self_sys_s;
	uint64_t major_faults, minor_faults;
	uint64_t voluntary_switches, involuntary_switches;
	uint64_t max_rss_bytes;
	bool io_known;
	uint64_t rchar, wchar, read_bytes, write_bytes;
};

/* In a helper: fill x with the counts of the children it has reaped. */
void hs_usage_reaped(struct hs_usage_helper *x);

/* Count the job as the helper saw it, instead of the caller's own children. */
void hs_usage_add_helper(struct hs_usage_probe *p, const struct hs_usage_helper *x);

/*
 * Stop measuring, once the job has been reaped. still_running is the
 * number of the job's processes the caller knows are still running (e.g.
 * what hs_job_wait_all() returned); the cgroup may reveal more. Those are
 * moved back to hotset's cgroup, and the job's cgroup is removed (with
 * retries: the kernel lets go of exited tasks a little after wait returns).
 * Fills *out if not NULL (NULL: the job never started, just clean up) and
 * frees p. Always returns 0: every failure becomes a note in *out.
 */
int hs_usage_end(struct hs_usage_probe *p, int still_running, struct hs_usage *out);

#endif
