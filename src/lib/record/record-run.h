/*
 * record-run.h - running a job under record, for record, doctor and run:
 * check the profile's target, record and measure the job, write the
 * profile with what the run cost in its header. Prints nothing: what the
 * caller says comes from the fields below.
 */
#ifndef HOTSET_RECORD_RUN_H
#define HOTSET_RECORD_RUN_H

#include <limits.h>
#include <stdbool.h>

#include "record/record.h"
#include "job/usage.h"

struct hs_record_run {
	/* in */
	struct hs_record_opts o;	/* argv, backend, warn (may be NULL) and its ctx */
	const char *out;		/* the profile to write */
	/*
	 * The command as the profile's header records it (argv quoted for
	 * a shell, say), or NULL: none. The caller's.
	 */
	const char *command;
	bool trace;
	struct hs_usage_timeline *timeline;	/* or NULL: no timeline */
	/* or NULL: told the job's cgroup.procs (NULL: none) just before the job starts */
	void (*starting)(void *ctx, const char *cgroup_procs);
	void *ctx;
	/* out */
	struct hs_recording *rec;	/* release with hs_record_run_release() */
	struct hs_record_result res;
	struct hs_usage u;		/* the command's (none without one: zeroed) */
	/* with r->o.service: what the service did in the window (hs_service_usage) */
	bool service_known;
	struct hs_service_usage service;
	struct hs_service_probe *service_probe;	/* private */
	int save_rc;			/* 0 when the profile was written, else -errno */
	enum hs_record_backend backend;	/* the backend that ran, or the one asked for */
	int code;			/* when the job did not run: hotset's exit status */
	/* why the job did not run, or (it ran) why the profile was not written */
	char msg[PATH_MAX + 256];
};

/*
 * Run r->o.argv as record does (with r->o.service, record the service
 * while it runs, or for r->o.for_ns without a command; see
 * hs_record_opts). Returns 0 when the job ran: r->save_rc
 * says whether the profile was written (if not, r->msg says so, as an
 * error to show), and r->res.lost_events what it misses. Returns -1 when
 * the job did not run: r->msg and r->code (125 to 127; 2 when the
 * service is not there or cannot be recorded) say why.
 */
int hs_record_command(struct hs_record_run *r);

/* Free the recording (r->rec); r stays readable. */
void hs_record_run_release(struct hs_record_run *r);

#endif
