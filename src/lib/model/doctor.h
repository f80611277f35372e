/*
 * doctor.h - gather what doctor looks at, then diagnose: the facts of
 * hs_diagnose() (diagnosis.h) read from the kernel, the profile and, for
 * a job, its run under record.
 *
 * One call does it all, in the order the facts must be taken: the memory
 * cgroup to diagnose and the machine before the job, the job recorded
 * (hs_record_command()), the machine after it, then the profile (its
 * header, largest directories, curve, and what of it is resident now).
 * Without a job, the profile comes first, since it names the memory
 * cgroup the job was charged in. A source that cannot be read does not
 * stop it: it becomes an "unseen" entry of the diagnosis, with the
 * privilege it needs. What stops it is said in failed, err and run.msg.
 *
 * Prints nothing: the text, JSON and HTML reports are the caller's, from
 * the fields below.
 */
#ifndef HOTSET_MODEL_DOCTOR_H
#define HOTSET_MODEL_DOCTOR_H

#include <limits.h>
#include <stdbool.h>

#include "base/hotset.h"
#include "kernel/memory.h"
#include "cache/residency.h"
#include "profile/tops.h"
#include "job/peer.h"
#include "job/usage.h"
#include "record/record-run.h"
#include "model/curve.h"
#include "model/diagnosis.h"

#define HS_DOCTOR_DAMON 16	/* DAMON schemes looked at */

/* What doctor is asked to diagnose; strings and argv are the caller's. */
struct hs_doctor_opts {
	/*
	 * With argv: where the run's profile is written. Without: the
	 * profile to diagnose against what is resident now (a file: it is
	 * read more than once).
	 */
	const char *profile;
	char *const *argv;		/* the job to record and diagnose, or NULL */
	const char *command;		/* argv as the profile's header records it, or NULL */
	enum hs_record_backend backend;
	const char *cgroup;		/* without argv: the memory cgroup to diagnose, or NULL */
	/*
	 * With argv: the service that does the job's work (record's --pid,
	 * --cgroup, --unit): its reads are recorded, its figures are the
	 * run's, its memory cgroup is diagnosed. Or NULL.
	 */
	const struct hs_service *service;
	bool have_keep;			/* hotset keep can be offered as a fix */
	/* told of what record finds worth a warning; may be NULL */
	void (*warn)(void *ctx, const char *msg);
	/*
	 * Told just before the profile is mapped to count what of it is
	 * resident (a file that another program truncates then raises
	 * SIGBUS, which only the caller can catch); may be NULL.
	 */
	void (*mapping)(void *ctx, const char *profile);
	void *ctx;			/* of warn and mapping */
};

/* What stopped hs_doctor_diagnose() short of a diagnosis. */
enum hs_doctor_failure {
	HS_DOCTOR_OK,
	HS_DOCTOR_CGROUP,	/* opts.cgroup is not a memory cgroup: err.msg says why */
	HS_DOCTOR_PROFILE,	/* the profile cannot be read: err (its line, if malformed) */
	HS_DOCTOR_NOT_RUN,	/* the job did not run: run.msg and run.code say why */
	HS_DOCTOR_NOT_SAVED,	/* the job ran, its profile was not written: run.msg */
};

/*
 * Everything doctor looked at, and its diagnosis. The caller zeroes it,
 * sets o, calls hs_doctor_diagnose() once and hs_doctor_release() after
 * the reports. The facts (in) point into this structure.
 */
struct hs_doctor {
	struct hs_doctor_opts o;

	enum hs_doctor_failure failed;
	struct hs_error err;

	/* the run (in.ran), its timeline of samples; run.rec already released */
	struct hs_record_run run;
	struct hs_usage_timeline tl;
	/* what the profile's header says of its recorded run */
	struct hs_usage recorded;

	/* the profile */
	struct hs_tops tops;
	bool curve_ok;
	struct hs_curve c;		/* when curve_ok */
	struct hs_curve_summary cs;
	struct hs_residency_total res;
	unsigned skipped;		/* its files that could not be examined (gone, unreadable) */

	struct hs_diag_facts in;
	struct hs_diagnosis dx;

	/* the storage the facts point to */
	char rec_cgroup[PATH_MAX], rec_holder[PATH_MAX];
	struct hs_memcg memcg0, memcg1;
	struct hs_memcg_cache *cg0, *cg1;
	struct hs_damon_scheme damon0[HS_DOCTOR_DAMON], damon1[HS_DOCTOR_DAMON];
	char balloon_where[PATH_MAX + 64];
	struct hs_usage svc_run;	/* with o.service: the run as the service made it */
	struct hs_peer_probe *peer_probe;	/* while the job runs */
	struct hs_peers peers;		/* the other ends of its sockets */
	char service_name[PATH_MAX + 16];
};

/*
 * Gather the facts of d->o and diagnose them into d->dx. Returns 0, or a
 * negative errno with d->failed saying what stopped it: the cgroup's or
 * the profile's error (d->err), -ECHILD when the job did not run, the
 * write's error when its profile was not written (d->run). A job that
 * ran (d->in.ran) has its exit status in d->run.res.wait_status.
 */
int hs_doctor_diagnose(struct hs_doctor *d);

/* Free what d holds; its figures stay readable. */
void hs_doctor_release(struct hs_doctor *d);

#endif
