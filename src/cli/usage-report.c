/*
 * usage-report.c - what a job cost, in words for people and in JSON for
 * scripts (shared by `hotset time` and `hotset record`).
 */
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/wait.h>

#include "hotset/job.h"
#include "usage-report.h"

static double pct(double part, double whole)
{
	return whole > 0 ? 100.0 * part / whole : 0;
}

static void print_verdict(FILE *f, const struct hs_usage *u)
{
	double p = pct(u->io_wait_s, u->wall_s);
	char size[16];

	human_size(u->read_bytes_disk, size);
	if (u->pressure == HS_PRESSURE_UNKNOWN)
		fprintf(f, "Time spent waiting for the disk is unknown; the job read %s from it.\n",
			size);
	else if (p >= 10)
		fprintf(f, "%.0f%% of the wall time was spent waiting for the disk (%s read from it).\n",
			p, size);
	else if (p >= 1)
		fprintf(f, "Only %.0f%% of the wall time was spent waiting for the disk.\n", p);
	else
		fprintf(f, "The job hardly waited for the disk (%.1f%% of the wall time).\n", p);
}

const char *start_failure_text(char *buf, size_t cap, const char *command, int err,
			       const char *stage)
{
	if (!strcmp(stage, "exec") && err == ENOENT)
		snprintf(buf, cap, "%s: command not found", command);
	else if (!strcmp(stage, "exec"))
		snprintf(buf, cap, "cannot run %s: %s", command, strerror(err));
	else if (!strcmp(stage, "cgroup"))
		snprintf(buf, cap, "cannot move %s into its cgroup: %s", command, strerror(err));
	else
		snprintf(buf, cap, "cannot prepare %s: %s", command, strerror(err));
	return buf;
}

void report_start_failure(const char *command, int err, const char *stage)
{
	char msg[PATH_MAX + 128];

	error("%s", start_failure_text(msg, sizeof(msg), command, err, stage));
}

void print_job_status(FILE *f, int wait_status)
{
	int code = hs_job_exit_code(wait_status);

	if (WIFSIGNALED(wait_status))
		fprintf(f, "Command terminated by signal %d (%s)\n", WTERMSIG(wait_status),
			strsignal(WTERMSIG(wait_status)));
	else if (code)
		fprintf(f, "Command exited with non-zero status %d\n", code);
}

void json_job_status(struct json *j, int wait_status)
{
	json_i64(j, "exit_status", hs_job_exit_code(wait_status));
	if (WIFSIGNALED(wait_status))
		json_i64(j, "signal", WTERMSIG(wait_status));
	else
		json_null(j, "signal");
}

void json_exit_code(struct json *j, int code)
{
	json_i64(j, "exit_status", code);
	json_null(j, "signal");
}

void print_usage_report(FILE *f, const struct hs_usage *u, bool notes)
{
	char size[16];

	fprintf(f, "%-16s %9.2f s\n", "Wall time", u->wall_s);
	fprintf(f, "%-16s %9.2f s\n", "User time", u->user_s);
	fprintf(f, "%-16s %9.2f s\n", "System time", u->sys_s);
	if (u->pressure == HS_PRESSURE_UNKNOWN) {
		fprintf(f, "%-16s %9s   (see the note below)\n", "I/O wait", "unknown");
	} else {
		fprintf(f, "%-16s %9.2f s   %.1f%% of the wall time; all tasks blocked %.1f%%\n",
			"I/O wait", u->io_wait_s, pct(u->io_wait_s, u->wall_s),
			pct(u->io_wait_full_s, u->wall_s));
		fprintf(f, "%-16s %9.2f s   runnable, waiting for a CPU\n", "CPU wait",
			u->cpu_wait_s);
		if (u->memory_wait_s > 0)
			fprintf(f, "%-16s %9.2f s   reclaiming or re-reading evicted pages\n",
				"Memory wait", u->memory_wait_s);
	}
	fprintf(f, "%-16s %9llu major, %llu minor\n", "Page faults",
		(unsigned long long)u->major_faults, (unsigned long long)u->minor_faults);
	fprintf(f, "%-16s %11s\n", "Read from disk", human_size(u->read_bytes_disk, size));
	if (u->read_bytes_cache_known)
		fprintf(f, "%-16s %11s%s\n", "Read from cache", human_size(u->read_bytes_cache, size),
			u->read_bytes_cache_exact ? "" : " (estimate: bytes read minus bytes from disk)");
	else
		fprintf(f, "%-16s %11s\n", "Read from cache", "unknown");
	print_verdict(f, u);
	for (int i = 0; notes && i < u->nnotes; i++)
		fprintf(f, "note: %s\n", u->notes[i]);
}

void json_usage(struct json *j, const struct hs_usage *u)
{
	static const char *const method[] = {
		[HS_PRESSURE_UNKNOWN] = NULL,
		[HS_PRESSURE_JOB_CGROUP] = "job-cgroup",
		[HS_PRESSURE_OWN_CGROUP] = "hotset-cgroup",
	};
	bool known = u && u->pressure != HS_PRESSURE_UNKNOWN;

	if (!u) {	/* the command never ran: every member, none known */
		static const char *const members[] = {
			"wall_s", "user_s", "sys_s", "io_wait_s", "io_wait_full_s",
			"io_pressure_some_pct", "io_pressure_full_pct", "cpu_wait_s",
			"memory_wait_s", "io_wait_method", "major_faults", "minor_faults",
			"read_bytes_disk", "rchar", "read_bytes_cache", "read_bytes_cache_estimated",
			"still_running",
		};

		for (size_t i = 0; i < sizeof(members) / sizeof(members[0]); i++)
			json_null(j, members[i]);
		json_begin_array(j, "notes");
		json_end_array(j);
		return;
	}
	json_double(j, "wall_s", u->wall_s);
	json_double(j, "user_s", u->user_s);
	json_double(j, "sys_s", u->sys_s);
	if (known) {
		json_double(j, "io_wait_s", u->io_wait_s);
		json_double(j, "io_wait_full_s", u->io_wait_full_s);
		json_double(j, "io_pressure_some_pct", pct(u->io_wait_s, u->wall_s));
		json_double(j, "io_pressure_full_pct", pct(u->io_wait_full_s, u->wall_s));
		json_double(j, "cpu_wait_s", u->cpu_wait_s);
		json_double(j, "memory_wait_s", u->memory_wait_s);
	} else {
		json_null(j, "io_wait_s");
		json_null(j, "io_wait_full_s");
		json_null(j, "io_pressure_some_pct");
		json_null(j, "io_pressure_full_pct");
		json_null(j, "cpu_wait_s");
		json_null(j, "memory_wait_s");
	}
	json_string(j, "io_wait_method", method[u->pressure]);
	json_u64(j, "major_faults", u->major_faults);
	json_u64(j, "minor_faults", u->minor_faults);
	json_u64(j, "read_bytes_disk", u->read_bytes_disk);
	if (u->rchar_known)
		json_u64(j, "rchar", u->rchar);
	else
		json_null(j, "rchar");
	if (u->read_bytes_cache_known)
		json_u64(j, "read_bytes_cache", u->read_bytes_cache);
	else
		json_null(j, "read_bytes_cache");
	json_bool(j, "read_bytes_cache_estimated", !u->read_bytes_cache_exact);
	json_i64(j, "still_running", u->still_running);
	json_begin_array(j, "notes");
	for (int i = 0; i < u->nnotes; i++)
		json_string(j, NULL, u->notes[i]);
	json_end_array(j);
}
