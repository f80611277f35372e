/*
 * timed.c - run a command and measure it, as `hotset time` does (see
 * timed.h). The order matters: the probe's cgroup exists before the fork,
 * so the job joins it before it execs; hotset becomes a subreaper first,
 * so that what the job orphans is reaped (and counted) here; and the
 * signals hotset forwards are held across the fork, see below.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "job/timed.h"

/* hs_job_failure_code()'s code for hotset's own failure: nothing was run */
#define TIMED_FAILED 125

/* The child's before_exec: it gets back the mask the caller had. */
static int restore_mask(void *ctx)
{
	return sigprocmask(SIG_SETMASK, ctx, NULL) < 0 ? -errno : 0;
}

int hs_time_command(const struct hs_job_spec *spec, void (*warn)(void *ctx, const char *msg),
		    void (*started)(void *ctx, const char *procs), void *ctx, int *status,
		    struct hs_usage *u, char *msg, size_t cap)
{
	/*
	 * The job's spec with the hooks below: this function's own, since its
	 * ctx points at a local of this frame and its cgroup_procs into the
	 * probe, both gone at the return (the caller's spec kept them once).
	 */
	struct hs_job_spec run = *spec;
	struct hs_usage_probe *probe;
	struct hs_job job;
	sigset_t forwarded, saved_mask;
	const char *stage = "exec";
	int rc, running;

	if ((rc = hs_usage_begin(&probe))) {
		snprintf(msg, cap, "cannot measure the command: %s", strerror(-rc));
		return TIMED_FAILED;
	}
	if ((rc = hs_job_become_subreaper()) && warn) {
		char why[160];

		snprintf(why, sizeof(why), "processes orphaned by the command will not be counted: %s",
			 strerror(-rc));
		warn(ctx, why);
	}
	/*
	 * A signal sent to hotset between fork and the forwarding set-up would
	 * kill hotset and leave the command running unmeasured: hold them
	 * until forwarding is in place. The child gets its mask back.
	 */
	hs_job_signal_set(&forwarded);
	sigprocmask(SIG_BLOCK, &forwarded, &saved_mask);
	run.before_exec = restore_mask;
	run.ctx = &saved_mask;
	run.cgroup_procs = hs_usage_cgroup_procs(probe);
	if (started)
		started(ctx, run.cgroup_procs);
	rc = hs_job_start(&run, &job);
	if (rc == 0)
		hs_job_forward_signals(job.pid);
	sigprocmask(SIG_SETMASK, &saved_mask, NULL);
	if (rc) {
		snprintf(msg, cap, "cannot start %s: %s", spec->argv[0], strerror(-rc));
		hs_usage_end(probe, 0, NULL);
		return TIMED_FAILED;
	}
	rc = hs_job_exec_result(&job, &stage);
	running = hs_job_wait_all(&job, status);
	hs_job_stop_forwarding();
	if (rc || running < 0) {
		hs_usage_end(probe, 0, NULL);
		if (rc) {
			hs_job_start_failure_text(msg, cap, spec->argv[0], -rc, stage);
			return hs_job_failure_code(-rc, stage);
		}
		snprintf(msg, cap, "cannot wait for %s: %s", spec->argv[0], strerror(-running));
		return TIMED_FAILED;
	}
	hs_usage_end(probe, running, u);
	return 0;
}
