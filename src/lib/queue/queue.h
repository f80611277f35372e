/*
 * queue.h - the queue of `hotset run`: its jobs as the engines see them,
 * its state in the state directory, and its two engines.
 *
 * The local engine (engine-local.c) runs each job under a supervisor of
 * its own, a forked child that does what `hotset time` does (or `hotset
 * record --trace`, on the job's first run), and waits for them through
 * pidfds; sched.c chooses what starts. The Slurm engine (engine-slurm.c)
 * submits each job with sbatch and follows it with squeue; each batch job
 * runs `hotset run --step NAME`, which is hs_runq_run_one() on its node.
 *
 * The engines print nothing: what they say as they go (an error, a
 * warning) goes to the caller's ops.say, already worded. They install no
 * signal handler: the caller catches the stop signals, sets *stop to the
 * first and writes to its self-pipe (wake), and the engines read both.
 */
#ifndef HOTSET_QUEUE_H
#define HOTSET_QUEUE_H

#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "kernel/psi.h"
#include "queue/jobfile.h"
#include "queue/runstate.h"
#include "queue/sched.h"

struct hs_record_run;
struct hs_runq;

/*
 * hotset's own exit codes for a job that did not run (as
 * hs_job_failure_code() gives them): 125 hotset failed, 126 the command
 * cannot be executed, 127 not found. A run that ends so leaves the job's
 * history as it was.
 */
#define HS_RUNQ_EXIT_HOTSET 125
#define HS_RUNQ_EXIT_NOTFOUND 127

struct hs_runq_job {
	struct hs_jobdef *def;
	struct hs_sched_job s;
	struct hs_run_record hist;	/* the last run's, when s.known */
	struct hs_run_record res;	/* this run's, once done */
	bool res_known, ran;
	const char *first_wait;		/* the first reason it waited, or NULL */
	pid_t pid;			/* running: its supervisor */
	int pidfd;
	bool signalled;
	int exit_status;
	int64_t start_ns, end_ns;
	char *dir, *log;		/* malloc'd: a queue of 100,000 jobs must not take 800 MB */
	int slurm_job;			/* engine slurm: its job id once submitted, 0
					 * before, -1 when it is not to be (sbatch refused it) */
	char slurm_wait[80];		/* engine slurm: "slurm:" and why it pends */
};

enum hs_runq_level { HS_RUNQ_ERROR, HS_RUNQ_WARNING };

/*
 * What the caller does for the engines: all may be NULL but say and join.
 * ctx is given to each.
 */
struct hs_runq_ops {
	/* a sentence to tell the user, as an error or a warning */
	void (*say)(void *ctx, enum hs_runq_level level, const char *msg);
	/* argv quoted for a shell, malloc'd; NULL: out of memory */
	char *(*join)(char *const *argv);
	/*
	 * In a supervisor, before its job runs (its stop signals still
	 * blocked, back to their default): the handlers of fatal signals
	 * that remove the files it writes, which are the caller's to set.
	 */
	void (*supervising)(void *ctx);
	/* a job's first run, recorded: what the recording leaves to say (into its log) */
	void (*recorded)(void *ctx, const struct hs_record_run *rr);
	/* the recorder's warnings (hs_record_opts.warn) */
	void (*warn)(void *ctx, const char *msg);
	/* the local engine, at each turn of its loop (done: the last, the queue is over) */
	void (*progress)(void *ctx, const struct hs_runq *q, bool over);
	void *ctx;
};

struct hs_runq {
	struct hs_jobfile jf;
	struct hs_runq_job *jobs;
	size_t n;
	const char *state, *logs, *jobfile;
	char state_buf[PATH_MAX], logs_buf[PATH_MAX], queue_path[PATH_MAX + 8];
	struct hs_sched sched;
	bool halt, halted;
	bool state_lost;		/* a write of the queue's state failed: none starts */
	bool slurm;			/* --engine slurm: sbatch runs the jobs */
	int64_t start_ns;
	pid_t warm_pid;			/* the warmer, when warm_fd >= 0 */
	int warm_fd;
	struct hs_psi_mark psi;		/* /proc/pressure/io at the last reading; unknown before the first */
	/* the caller's: the first stop signal (SIGINT, SIGTERM, SIGHUP), 0 before */
	volatile sig_atomic_t *stop;
	int wake[2];			/* the caller's self-pipe: [0] readable after a stop */
	struct hs_runq_ops ops;
};

/* Format a sentence and give it to q->ops.say. */
void hs_runq_say(const struct hs_runq *q, enum hs_runq_level level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* buf = a/mid/b/suffix; -ENAMETOOLONG if it does not fit. */
int hs_runq_path_of(char *buf, size_t size, const char *a, const char *mid, const char *b,
		    const char *suffix);

/*
 * Job j's directory (STATE/jobs/NAME) and log (LOGS/NAME.log), malloc'd
 * into j. Returns 0, -ENAMETOOLONG or -ENOMEM.
 */
int hs_runq_job_paths(struct hs_runq *q, struct hs_runq_job *j);

/*
 * The queue's jobs, one for each of q->jf's, with their paths and their
 * histories (a history that cannot be read is said, and the job runs as
 * one with none). Returns 0, -ENAMETOOLONG or -ENOMEM.
 */
int hs_runq_setup_jobs(struct hs_runq *q);

/* Free the jobs, their paths and the job file. */
void hs_runq_release(struct hs_runq *q);

/* Write the queue file; on failure say so once and set state_lost. */
int hs_runq_save(struct hs_runq *q);

/*
 * The functions below that set up a queue say why they fail (ops.say) and
 * return -EINVAL when the user's input is at fault (run's exit status 2),
 * another -errno when hotset failed (125).
 */

/*
 * The state directory (given, or the default) must be the user's own and
 * writable by no one else, or sticky with hotset's entries the user's
 * own: job output and histories are not to be read, or planted, by
 * others. One yet to be made must be made in such a directory.
 */
int hs_runq_check_state(const struct hs_runq *q);
/* The log directory likewise, with the names of the jobs' logs as its entries. */
int hs_runq_check_logs(const struct hs_runq *q);
/* mkdir -p the state and log directories, 0700 (hs_mkdirs: never through another's link). */
int hs_runq_make_dirs(const struct hs_runq *q);

/*
 * --resume: the jobs the queue file says are done stay done; with Slurm,
 * those it ran are adopted; act: stop what the jobs that were running
 * left (not for --dry-run). The queue file must be of the same job file
 * and engine.
 */
int hs_runq_resume(struct hs_runq *q, bool act);

/*
 * -- COMMAND: a queue of one job, argv quoted for a shell (ops.join),
 * named name, or, for NULL, after the command's basename (its bytes that
 * a job name cannot hold as '_'; "job" if nothing is left). Returns 0,
 * -EINVAL for a name that is not a job name (said by the caller, who
 * knows the option), or -ENOMEM.
 */
int hs_runq_add_command(struct hs_runq *q, char *const *argv, const char *name);

/*
 * The memory budget when none is given: MemAvailable now, at most the
 * memory limit of our own cgroup (the jobs are charged there). 0 when
 * /proc/meminfo cannot be read.
 */
uint64_t hs_runq_default_budget(void);

/*
 * The state directory's lock (hs_runstate_lock()), kept open while the
 * queue runs. Supervisors hold the lock too (they inherit it): a queue
 * that was killed keeps it until its jobs have stopped, so that none runs
 * twice, and this waits for them, 30 seconds at most (saying so first,
 * if tell). Returns the lock's descriptor, or -errno after saying why not.
 */
int hs_runq_lock(const struct hs_runq *q, bool tell);

/* Every job of the queue ran to its end and succeeded. */
bool hs_runq_succeeded(const struct hs_runq *q);

/* ---- the local engine (engine-local.c) ---- */

/*
 * Run the pending jobs, as many at once as sched.c lets, to their end or
 * to a stop. Returns 0, or -1 after saying why the queue could not go on.
 */
int hs_runq_local(struct hs_runq *q);

/*
 * Run one job in the foreground, as a supervisor does (its output as it
 * is): its figures and history into its directory. Returns its exit code.
 */
int hs_runq_run_one(struct hs_runq *q, struct hs_runq_job *j);

/* Read the I/O pressure into q->sched, as the local engine does before each choice. */
void hs_runq_read_pressure(struct hs_runq *q);

/*
 * A job the killed queue left running, with its supervisor gone: kill
 * what is left in its cgroup, so that it does not complete beside its
 * re-run. Returns how many processes were killed.
 */
unsigned hs_runq_stop_leftovers(const struct hs_runq_job *j);

/* ---- the Slurm engine (engine-slurm.c) ---- */

/* --engine slurm: submit the pending jobs with sbatch and follow them to their end. */
int hs_runq_slurm(struct hs_runq *q);
/*
 * A fresh --engine slurm queue on a state directory whose last queue was
 * killed with jobs still in Slurm: said, and 1 (they would run twice).
 */
int hs_runq_slurm_leftovers(struct hs_runq *q);
/* --step: the signal that stopped the queue of state before the step began, or 0. */
int hs_runq_slurm_stopped(const char *state);
/*
 * --engine slurm: sbatch at hand (not for a dry run), and the state and
 * log directories named by absolute paths, which the nodes use (and made,
 * not for a dry run). Returns 0, -EINVAL or -errno, as the setup above.
 */
int hs_runq_slurm_ready(struct hs_runq *q, bool dry);
/* This hotset binary, which the nodes run too; -1 after saying why not. */
int hs_runq_self_path(const struct hs_runq *q, char *buf, size_t size);
/* Job j's sbatch command line, quoted, malloc'd into *line; 0 or -ENOMEM. */
int hs_runq_slurm_line(struct hs_runq *q, struct hs_runq_job *j, const char *hotset,
		       char **line);

#endif
