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
#include "job/service.h"
#include "job/timed.h"
#include "usage-report.h"

static const char usage[] =
	"usage: hotset time [-J] [-o FILE] [-q] [--pid PID|--cgroup PATH|--unit NAME] [--] COMMAND [ARG...]\n"
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
	"      --pid PID      also report what process PID, its threads and the processes\n"
	"                     it starts did while COMMAND ran (a server that does the\n"
	"                     work COMMAND asks for): CPU time, disk bytes, I/O wait,\n"
	"                     its memory cgroup and limit\n"
	"      --cgroup PATH  the same for the processes of a cgroup (and of those below\n"
	"                     it): its directory, or its name in a hierarchy (v2 first)\n"
	"      --unit NAME    the same for a systemd unit's cgroup\n"
	"  -V, --version      show hotset's version\n"
	"  -h, --help         show this help\n"
	"\n"
	"A service that does not exist, holds no process or cannot be read (another\n"
	"user's, without root) is an error: exit 2, and COMMAND is not run.\n"
	"Measuring I/O wait needs a cgroup for the job: run as root, or inside a\n"
	"cgroup delegated to you (systemd-run --user --scope -- hotset time ...).\n"
	"Exit status: COMMAND's, or 128+N if it was killed by signal N (hotset then\n"
	"dies of that signal, as a shell expects); 125 hotset failed, 126 COMMAND\n"
	"cannot be run, 127 COMMAND not found, 2 usage error.\n";

const struct cmd cmd_time;

/* The service of --pid, --cgroup or --unit, and what it did (NULL: none, or not measured). */
struct service_report {
	const struct hs_service *s;
	const struct hs_service_usage *u;
};

static void json_report(FILE *f, char *const *argv, const int *status, int code,
			const char *error_msg, const struct hs_usage *u,
			const struct service_report *svc)
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
	json_service(&j, svc->s, svc->u);
	json_end_object(&j);
	json_finish(&j);
}

static void write_report(FILE *f, bool json, bool quiet, char *const *argv, int status,
			 const struct hs_usage *u, const struct service_report *svc)
{
	if (json) {
		json_report(f, argv, &status, 0, NULL, u, svc);
		return;
	}
	if (!quiet)
		print_job_status(f, status);
	print_usage_report(f, u, !quiet);
	if (svc->s && svc->u)
		print_service_report(f, svc->s, svc->u, !quiet);
}

/* --pid, --cgroup, --unit: one service a run */
static int option_service(enum hs_service_kind *kind, const char **arg, enum hs_service_kind k,
			  const char *optarg_)
{
	if (*kind && *kind != k)
		return usage_error(&cmd_time, "%s and %s: one service a run",
				   hs_service_option(*kind), hs_service_option(k));
	*kind = k;
	*arg = optarg_;
	return 0;
}

static int run_time(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "report", required_argument, NULL, 'o' },	/* as record spells it */
		{ "pid", required_argument, NULL, OPT_PID },
		{ "cgroup", required_argument, NULL, OPT_CGROUP },
		{ "unit", required_argument, NULL, OPT_UNIT },
		COMMON_LONGOPTS,
		{ 0 },
	};
	const char *output = NULL, *service_arg = NULL;
	enum hs_service_kind service_kind = 0;
	struct hs_service service;
	struct hs_service_probe *probe = NULL;
	struct hs_service_usage su;
	struct service_report svc = { NULL, NULL };
	struct hs_error err = { 0 };
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
		case OPT_PID: case OPT_CGROUP: case OPT_UNIT:
			if ((rc = option_service(&service_kind, &service_arg,
						 opt == OPT_PID ? HS_SERVICE_PID :
						 opt == OPT_CGROUP ? HS_SERVICE_CGROUP : HS_SERVICE_UNIT,
						 optarg)))
				return rc;
			break;
		default: return option_other(&cmd_time, opt, argv, longopts);
		}
	}
	if (optind >= argc)
		return usage_error(&cmd_time, "no command to run");
	spec.argv = argv + optind;
	/* a service that is not there costs no run of the command */
	if (service_kind) {
		if (hs_service_resolve(service_kind, service_arg, &service, &err))
			return error("%s", err.msg), EXIT_USAGE;
		svc.s = &service;
	}
	/* as record does for its profile: 125, before the command runs */
	if ((rc = report_open(output, &out)))
		return rc;
	if (svc.s && hs_service_begin(svc.s, &probe, &err)) {
		error("%s", err.msg);
		report_close(out, output, EXIT_USAGE);
		return EXIT_USAGE;
	}
	code = hs_time_command(&spec, quiet ? NULL : say_warning, NULL, NULL, &status, &u, msg, sizeof(msg));
	if (probe) {
		hs_service_end(probe, code ? NULL : &su);
		svc.u = code ? NULL : &su;
	}
	if (code)
		goto not_run;
	/* the probe's cgroup is gone before anything is written: a closed stderr cannot leak it */
	code = hs_job_exit_code(status);
	write_report(out, json, quiet, spec.argv, status, &u, &svc);
	reported = true;
	goto close_out;

not_run:	/* the command did not run, or cannot be measured: say why, in JSON too */
	error("%s", msg);
	if (json)
		json_report(out, spec.argv, NULL, code, msg, NULL, &svc);
close_out:
	if ((rc = report_close(out, output, code)) != code)
		return rc;
	return reported ? exit_as_job(status) : code;
}

const struct cmd cmd_time = {
	"time", run_time, "run a command and report its time, I/O wait and disk reads", usage,
};
