/*
 * timed.h - running a command as `hotset time` does: the job (job.h) in a
 * usage probe's cgroup (usage.h), as a subreaper, hotset's signals passed
 * on to it, and what it cost at the end. `time` and `run` share it.
 */
#ifndef HOTSET_TIMED_H
#define HOTSET_TIMED_H

#include <stddef.h>

#include "job/job.h"
#include "job/usage.h"

/*
 * Run spec->argv in a usage probe's cgroup, as a subreaper, hotset's
 * signals passed on to it (held from the fork until the forwarding is in
 * place). spec's hooks and cgroup are this function's own (spec is not
 * changed). warn, if set, is told what the figures will miss (processes
 * orphaned by the command not counted), before the job starts. started,
 * if set, is told the cgroup's procs file (or NULL) just before it
 * starts. ctx goes to both. On a run: 0, its wait status in *status and
 * its figures in *u. Else the exit code (125 to 127, as
 * hs_job_failure_code()) with the reason in msg (cap bytes). Prints
 * nothing.
 */
int hs_time_command(const struct hs_job_spec *spec, void (*warn)(void *ctx, const char *msg),
		    void (*started)(void *ctx, const char *procs), void *ctx, int *status,
		    struct hs_usage *u, char *msg, size_t cap);

#endif
