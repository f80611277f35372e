/*
 * usage-report.h - how `time` and `record` show what a job cost: a short
 * text report for people (on standard error, like /usr/bin/time) and the
 * same figures as JSON members.
 */
#ifndef HOTSET_CLI_USAGE_REPORT_H
#define HOTSET_CLI_USAGE_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "job/job.h"
#include "job/peer.h"
#include "job/service.h"
#include "job/usage.h"
#include "record/record-run.h"
#include "output.h"

/*
 * How the job ended, as /usr/bin/time says it ("Command exited with
 * non-zero status 3", "Command terminated by signal 15 (Terminated)");
 * nothing for a plain success. In JSON: exit_status, and signal or null.
 */
void print_job_status(FILE *f, int wait_status);
void json_job_status(struct json *j, int wait_status);

/*
 * A command that never ran (not found, cannot be executed...): exit_status
 * code, signal null.
 */
void json_exit_code(struct json *j, int code);

/* A library's warning (hs_record_opts.warn, hs_time_command()'s warn), said as hotset's. */
void say_warning(void *ctx, const char *msg);

/*
 * What a run of hs_record_command() that ran leaves to say, as it ends:
 * the profile not written (an error), or accesses the recorder lost.
 */
void report_record_end(const struct hs_record_run *r);

/*
 * The figures, one per line, then a one-line verdict in plain words and,
 * if notes is set, the notes ("note: ...") that say what is unknown or
 * approximate and why.
 */
void print_usage_report(FILE *f, const struct hs_usage *u, bool notes);

/*
 * The figures as members of the JSON object being written (the caller
 * opens and closes it), the keys of docs/json.md's "time" section from
 * wall_seconds to notes. Unknown figures are null; with u NULL (the
 * command never ran), all of them, and notes is empty.
 */
void json_usage(struct json *j, const struct hs_usage *u);

/*
 * What the service (--pid, --cgroup, --unit) did while the job ran: a
 * block of lines after the job's own figures, its notes if notes is set.
 * In JSON: the object "service" of docs/json.md, or null without u.
 */
void print_service_report(FILE *f, const struct hs_service *s, const struct hs_service_usage *u,
			  bool notes);
void json_service(struct json *j, const struct hs_service *s, const struct hs_service_usage *u);

/*
 * The job waited on someone else (hs_peer_waited()): the time, the peer
 * as far as the caller may know it, and the command that measures the
 * peer while argv runs again; the notes of what could not be seen if
 * notes is set. In JSON: the object "waited_on" of docs/json.md, with
 * every peer seen; null without w.
 */
void print_waited_on(FILE *f, const struct hs_waited_on *w, const struct hs_peers *peers,
		     char *const *argv, bool notes);
void json_waited_on(struct json *j, const struct hs_waited_on *w, const struct hs_peers *peers,
		    char *const *argv);

/*
 * --report FILE (time's -o): open it before the job runs, so that a path
 * that cannot be written costs no run. *f is stderr without path. Returns
 * 0, or EXIT_HOTSET after saying why.
 */
int report_open(const char *path, FILE **f);
/*
 * Once the job has ended: a report that cannot be written (a file size
 * limit reached, a reader gone) fails its write, said by report_close(),
 * instead of ending hotset by SIGXFSZ or SIGPIPE and losing the job's
 * status. Not before: the job inherits an ignored signal through exec.
 */
void report_after_job(void);
/*
 * Flush and close the report (stderr is only flushed); a write error is
 * said, and makes a code of 0 EXIT_HOTSET. Returns the exit code to use.
 */
int report_close(FILE *f, const char *path, int code);

#endif
