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
#include "job/usage.h"
#include "cli.h"

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

/*
 * Why the command could not start: err (an errno) at stage ("exec",
 * "cgroup" or "setup", see hs_job_exec_result), as an error message.
 * start_failure_text() writes the same sentence into buf (cap bytes) and
 * returns buf, for a JSON report.
 */
void report_start_failure(const char *command, int err, const char *stage);
const char *start_failure_text(char *buf, size_t cap, const char *command, int err,
			       const char *stage);

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
 * Run spec->argv as `hotset time` does: in a usage probe's cgroup, as a
 * subreaper, hotset's signals passed on to it (held from the fork until
 * the forwarding is in place). spec's hooks and cgroup are time_command's
 * own (spec is not changed). started, if set, is told the cgroup's procs
 * file (or NULL) just before it starts. On a run: 0, its wait status in
 * *status and its figures in *u. Else the exit code (125 to 127, as
 * hs_job_failure_code()) with the reason in msg.
 */
int time_command(const struct hs_job_spec *spec, bool quiet,
		 void (*started)(void *ctx, const char *procs), void *ctx, int *status,
		 struct hs_usage *u, char *msg, size_t cap);

/*
 * --report FILE (time's -o): open it before the job runs, so that a path
 * that cannot be written costs no run. *f is stderr without path. Returns
 * 0, or EXIT_HOTSET after saying why.
 */
int report_open(const char *path, FILE **f);
/*
 * Flush and close the report (stderr is only flushed); a write error is
 * said, and makes a code of 0 EXIT_HOTSET. Returns the exit code to use.
 */
int report_close(FILE *f, const char *path, int code);

#endif
