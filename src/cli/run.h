/*
 * run.h - what the parts of `hotset run` share: the queue, its jobs, and
 * its two engines (the local one in cmd-run.c, Slurm's in run-slurm.c).
 */
#ifndef HOTSET_CLI_RUN_H
#define HOTSET_CLI_RUN_H

#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "queue/jobfile.h"
#include "queue/runstate.h"
#include "queue/sched.h"

struct qjob {
	struct hs_jobdef *def;
	struct hs_sched_job s;
	struct hs_run_record hist;	/* the last run's, when s.known */
	struct hs_run_record res;	/* this run's, once done */
	bool res_known, ran;
	bool warmed;			/* its profile was warmed while it waited */
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

struct queue {
	struct hs_jobfile jf;
	struct qjob *jobs;
	size_t n;
	const char *state, *logs, *jobfile;
	char state_buf[PATH_MAX], logs_buf[PATH_MAX], queue_path[PATH_MAX + 8];
	struct hs_sched sched;
	bool json, quiet, halt, tty, halted;
	bool state_lost;		/* a write of the queue's state failed: none starts */
	bool slurm;			/* --engine slurm: sbatch runs the jobs */
	int64_t start_ns;
	pid_t warm_pid;			/* the warmer, when warm_fd >= 0 */
	int warm_fd;
	uint64_t psi_total;		/* /proc/pressure/io "some" total (µs) at psi_ns */
	int64_t psi_ns;			/* monotonic; 0 before the first reading */
};

/* The first stop signal (SIGINT, SIGTERM, SIGHUP) run received, and a pipe that wakes its loop. */
extern volatile sig_atomic_t stop_signal;
extern int sig_pipe[2];

/* buf = a/mid/b/suffix; -ENAMETOOLONG if it does not fit. */
int path_of(char *buf, size_t size, const char *a, const char *mid, const char *b,
	    const char *suffix);
/* Write the queue file; on failure say so once and set state_lost. */
int save_queue(struct queue *q);

/*
 * Run one job in the foreground, as a supervisor does (its output as it
 * is): its figures and history into its directory. Returns its exit code.
 */
int run_one(struct qjob *j);

/* --engine slurm: submit the pending jobs with sbatch and follow them to their end. */
int slurm_queue(struct queue *q);
/*
 * A fresh --engine slurm queue on a state directory whose last queue was
 * killed with jobs still in Slurm: said, and 1 (they would run twice).
 */
int slurm_leftovers(struct queue *q);
/* --step: the signal that stopped the queue of state before the step began, or 0. */
int slurm_stopped(const char *state);
/* --dry-run with --engine slurm: the sbatch command line of each job. */
void slurm_plan(struct queue *q);

#endif
