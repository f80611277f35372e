/*
 * cmd-time.c - hotset time: run a command as if bare, then say what it
 * cost, above all how much of its wall time went to waiting for the disk.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>

#include "job/job.h"
#include "options.h"
#include "job/timed.h"
#include "usage-report.h"

static const char usage[] =
	"usage: hotset time [-J] [-o FILE] [-q] [--] COMMAND [ARG...]\n"
	"\n"
	"Run COMMAND, then report what it cost, for all the processes it started:\n"
	"wall, user and system time, the time they spent blocked on I/O (from the\n"
	"I/O pressure of a cgroup made for the job), page faults, context\n"
	"switches, the peak memory of the largest process, and the bytes read from\n"
	"and written to storage. COMMAND keeps hotset's standard streams and\n"
	"environment; the report goes to standard error.\n"
	"\n"
	"  -o, --output FILE  write the report to FILE instead (also --report FILE)\n"
	"  -J, --json         report as JSON\n"
	"  -q, --quiet        leave the notes and the exit status out of the report\n"
	"  -V, --version      show hotset's version\n"
	"  -h, --help         show this help\n"
	"\n"
	"Measuring I/O wait needs a cgroup for the job: run as root, or inside a\n"
	"cgroup delegated to you (systemd-run --user --scope -- hotset time ...).\n"
	"Exit status: COMMAND's, or 128+N if it was killed by signal N (hotset then\n"
	"dies of that signal, as a shell expects); 125 hotset failed, 126 COMMAND\n"
	"cannot be run, 127 COMMAND not found, 2 usage error.\n";

const struct cmd cmd_time;

static void json_report(FILE *f, char *const *argv, const int *status, int code,
			const char *error_msg, const struct hs_usage *u)
{
	struct json j;

	json_begin_report(&j, f, "time", false);
	json_begin_array(&j, "command");
	for (char *const *a = argv; *a; a++)
		json_string(&j, NULL, *a);
	json_end_array(&j);
	if (status)
		json_job_status(&j, *status);
	else
		json_exit_code(&j, code);
	json_string(&j, "error", error_msg);
	json_usage(&j, u);
	json_end_object(&j);
	json_finish(&j);
}

static void write_report(FILE *f, bool json, bool quiet, char *const *argv, int status,
			 const struct hs_usage *u)
{
	if (json) {
		json_report(f, argv, &status, 0, NULL, u);
		return;
	}
	if (!quiet)
		print_job_status(f, status);
	print_usage_report(f, u, !quiet);
}

static int run_time(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "report", required_argument, NULL, 'o' },	/* as record spells it */
		COMMON_LONGOPTS,
		{ 0 },
	};
	const char *output = NULL;
	struct hs_job_spec spec = { 0 };
	struct hs_usage u;
	bool json = false, quiet = false, reported = false;
	int opt, rc, status = 0, code;
	char msg[PATH_MAX + 128];
	FILE *out = stderr;

	/* '+': the options end at COMMAND, whose own options are its business */
	while ((opt = getopt_long(argc, argv, "+" OPTS_START "o:", longopts, NULL)) != -1) {
		switch (opt) {
		case 'o': output = optarg; break;
		case 'J': json = true; break;
		case 'q': quiet = true; break;
		default: return option_other(&cmd_time, opt, argv, longopts);
		}
	}
	if (optind >= argc)
		return usage_error(&cmd_time, "no command to run");
	spec.argv = argv + optind;
	/* as record does for its profile: 125, before the command runs */
	if ((rc = report_open(output, &out)))
		return rc;
	code = hs_time_command(&spec, quiet ? NULL : say_warning, NULL, NULL, &status, &u, msg, sizeof(msg));
	report_after_job();
	if (code)
		goto not_run;
	/* the probe's cgroup is gone before anything is written: a closed stderr cannot leak it */
	code = hs_job_exit_code(status);
	write_report(out, json, quiet, spec.argv, status, &u);
	reported = true;
	goto close_out;

not_run:	/* the command did not run, or cannot be measured: say why, in JSON too */
	error("%s", msg);
	if (json)
		json_report(out, spec.argv, NULL, code, msg, NULL);
close_out:
	if ((rc = report_close(out, output, code)) != code)
		return rc;
	return reported ? exit_as_job(status) : code;
}

const struct cmd cmd_time = {
	"time", run_time, "run a command and report its time, I/O wait and disk reads", usage,
};
