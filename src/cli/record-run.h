/*
 * record-run.h - running a job under record, for record and doctor: check
 * the profile's target, record and measure the job, write the profile.
 */
#ifndef HOTSET_CLI_RECORD_RUN_H
#define HOTSET_CLI_RECORD_RUN_H

#include <limits.h>

#include "record/record.h"
#include "job/usage.h"

struct record_run {
	/* in */
	struct hs_record_opts o;	/* argv and backend; warn is set by record_run() */
	const char *out;		/* the profile to write */
	bool trace;
	struct hs_usage_timeline *timeline;	/* or NULL: no timeline */
	/* or NULL: told the job's cgroup.procs (NULL: none) just before the job starts */
	void (*starting)(void *ctx, const char *cgroup_procs);
	void *ctx;
	/* out */
	struct hs_recording *rec;	/* release with record_run_release() */
	struct hs_record_result res;
	struct hs_usage u;
	int save_rc;			/* 0 when the profile was written, else -errno */
	enum hs_record_backend backend;	/* the backend that ran, or the one asked for */
	int code;			/* when the job did not run: hotset's exit status */
	char msg[PATH_MAX + 256];	/* and why */
};

/*
 * Run r->o.argv as record does. Returns 0 when the job ran (r->save_rc
 * says whether the profile was written: an error was printed if not), or
 * -1 when it did not (r->msg and r->code say why; nothing printed).
 */
int record_run(struct record_run *r);

void record_run_release(struct record_run *r);

/* --backend NAME: auto, ptrace, bpf (or ebpf). Returns 0, or -1 for another name. */
int parse_backend(const char *s, enum hs_record_backend *b);

#endif
