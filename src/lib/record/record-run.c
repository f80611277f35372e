/*
 * record-run.c - a job run under a recorder, as `hotset record` runs it:
 * the profile's target checked before the job runs (its work must not be
 * wasted on a path that cannot be written), the job recorded (record.c)
 * and measured (usage.c) at once, then the profile written with what the
 * run cost and where it was charged in its header, for curve --mem-request
 * and doctor -p. record, doctor and run share it.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/atomic.h"
#include "job/job.h"
#include "kernel/memory.h"
#include "profile/profile.h"
#include "record/record-run.h"
#include "record/recording.h"

/* hs_job_failure_code()'s code for hotset's own failure: nothing was run */
#define RECORD_FAILED 125
/* a service that is not there, or cannot be followed: the user's to fix, as time says */
#define SERVICE_FAILED 2

/*
 * The memory cgroup the job is charged in: hotset's own, which it inherits
 * (v1), or the parent of the usage cgroup it is moved into (v2), both
 * where the command was started from; or the service's, whose reading is
 * recorded. Malloc'd (it is large), or NULL.
 */
static struct hs_memcg *job_memcg(const struct hs_service *svc)
{
	struct hs_memcg *m = malloc(sizeof(*m));

	/* a service's: where its first process is charged */
	if (m && (svc ? hs_service_memcg(svc, m) : hs_memcg_of(0, m))) {
		free(m);
		m = NULL;
	}
	return m;
}

/*
 * Write the profile with the signals hotset forwards held back: one coming
 * now (a second ^C) takes effect once the profile is whole. Any other that
 * ends hotset removes the temporary file first (the CLI's handlers call
 * hs_atomic_cleanup()).
 */
static int save(struct hs_recording *rec, const char *out, const struct hs_profile_header *h)
{
	struct sigaction ign = { .sa_handler = SIG_IGN }, xfsz, pipe;
	sigset_t block, old;
	int rc;

	hs_job_signal_set(&block);
	sigprocmask(SIG_BLOCK, &block, &old);
	/* a file too large or a reader gone fails the write (EFBIG, EPIPE): the job's status stands */
	sigaction(SIGXFSZ, &ign, &xfsz);
	sigaction(SIGPIPE, &ign, &pipe);
	rc = hs_recording_save(rec, out, h);
	sigaction(SIGXFSZ, &xfsz, NULL);
	sigaction(SIGPIPE, &pipe, NULL);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return rc;
}

/*
 * The profile's header for r's run: the backend, the command, what the run
 * cost (for the memory a re-run needs) and where it was charged (for
 * doctor -p). cwd and holder are the caller's storage for two of its strings.
 */
static void fill_header(const struct hs_record_run *r, const struct hs_memcg *memcg,
			struct hs_profile_header *hp, char *cwd, size_t cwd_len, char *holder,
			size_t holder_len)
{
	hs_profile_header_init(hp, "record");
	snprintf(hp->backend, sizeof(hp->backend), "%s", hs_record_backend_name(r->res.backend));
	if (r->res.mmap_pages)
		snprintf(hp->mmap_pages, sizeof(hp->mmap_pages), "%s", r->res.mmap_pages);
	hp->command = r->command;
	hp->cwd = getcwd(cwd, cwd_len);
	/* what the run cost, for the memory a re-run needs (curve --mem-request) */
	if (!r->o.service) {
		hp->max_rss_known = r->u.max_rss_bytes > 0;
		hp->max_rss = r->u.max_rss_bytes;
		hp->write_bytes_known = r->u.io_known;
		hp->write_bytes = r->u.write_bytes_disk;
	} else if (r->service_known) {
		/* the service's, not the client's; its peak memory is not measured: unknown */
		hp->write_bytes_known = r->service.io_known && !r->service.io_partial;
		hp->write_bytes = r->service.write_bytes;
	}
	/* where it was charged, and the limit then, for doctor -p */
	if (memcg) {
		hp->memcg_version = memcg->version;
		hp->memcg = memcg->name;
		hp->memcg_limit_known = memcg->limit_known;
		hp->memcg_limit = memcg->limit;
		if (memcg->lowest >= 0)
			hp->memcg_limit_holder = hs_memcg_level_name(memcg, memcg->lowest, holder,
								   holder_len);
	}
	/* a profile, or a trace, short of what was lost says so itself */
	hp->lost_events_known = true;
	hp->lost_events = r->res.lost_events;
}

int hs_record_command(struct hs_record_run *r)
{
	struct hs_profile_header h;
	struct hs_error err = { 0 };
	struct hs_usage_probe *meter = NULL;
	struct hs_memcg *memcg;
	char cwd[4096], holder[PATH_MAX];
	int rc;

	r->o.trace = r->trace;
	r->backend = r->o.backend;
	r->code = RECORD_FAILED;
	r->rec = NULL;
	r->msg[0] = '\0';
	/* before the job runs, not after: its work must not be wasted */
	if ((rc = hs_atomic_check(r->out, &err))) {
		snprintf(r->msg, sizeof(r->msg), "%s: cannot write the profile: %s", r->out, err.msg);
		return -1;
	}
	if ((rc = hs_recording_new(r->trace, &r->rec))) {
		snprintf(r->msg, sizeof(r->msg), "cannot start recording: %s", strerror(-rc));
		return -1;
	}
	/* no command: a service watched for a while, and nothing of the caller's to measure */
	if (r->o.argv && (rc = hs_usage_begin_timeline(&meter, r->timeline))) {
		snprintf(r->msg, sizeof(r->msg), "cannot measure the command: %s", strerror(-rc));
		return -1;
	}
	r->o.cgroup_procs = r->o.argv ? hs_usage_cgroup_procs(meter) : NULL;
	memcg = job_memcg(r->o.service);
	if (r->o.service && (rc = hs_service_begin(r->o.service, &r->service_probe, &err))) {
		snprintf(r->msg, sizeof(r->msg), "%s", err.msg);
		r->code = SERVICE_FAILED;
		goto not_run;
	}
	if (r->starting)
		r->starting(r->ctx, r->o.cgroup_procs);
	rc = hs_record_run(&r->o, r->rec, &r->res, &err);
	if (r->service_probe) {
		hs_service_end(r->service_probe, &r->service);
		r->service_probe = NULL;
		r->service_known = !rc && !r->res.exec_error;
	}
	if (rc || r->res.exec_error) {
		/* a service that cannot be recorded is the user's to fix, as one that is not there */
		if (rc && r->o.service)
			r->code = SERVICE_FAILED;
not_run:
		free(memcg);
		if (meter)
			hs_usage_end(meter, 0, NULL);
		r->backend = r->res.backend;
		if (rc) {
			snprintf(r->msg, sizeof(r->msg), "cannot record: %s",
				 err.msg[0] ? err.msg : strerror(-rc));
		} else {
			hs_job_start_failure_text(r->msg, sizeof(r->msg), r->o.argv[0],
						  -r->res.exec_error, r->res.exec_stage);
			r->code = hs_job_failure_code(-r->res.exec_error, r->res.exec_stage);
		}
		return -1;
	}
	r->backend = r->res.backend;
	if (meter) {
		hs_usage_add_helper(meter, &r->res.helper);
		hs_usage_end(meter, r->res.still_running, &r->u);
	}
	fill_header(r, memcg, &h, cwd, sizeof(cwd), holder, sizeof(holder));
	r->save_rc = save(r->rec, r->out, &h);
	free(memcg);
	/*
	 * The job ran: its exit status stands, and so does the summary of what
	 * it did. Only the profile is lost, and the caller says so where it
	 * shows.
	 */
	if (r->save_rc)
		snprintf(r->msg, sizeof(r->msg),
			 "%s: the profile was not written: %s (the command's exit status stands)",
			 r->out, strerror(-r->save_rc));
	return 0;
}

void hs_record_run_release(struct hs_record_run *r)
{
	hs_recording_free(r->rec);
	r->rec = NULL;
}
