/*
 * cmd-time.c - hotset time: run a command as if bare, then say what it
 * cost, above all how much of its wall time went to waiting for the disk.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "job/job.h"
#include "job/peer.h"
#include "options.h"
#include "service-options.h"
#include "job/service.h"
#include "job/timed.h"
#include "usage-report.h"
#include "cmd.h"
#include "messages.h"
#include "output.h"
#include "signals.h"

static const char usage[] =
	"usage: hotset time [-J] [-o FILE] [-q] [--pid PID|--cgroup PATH|--unit NAME [--for DURATION]] [--] [COMMAND [ARG...]]\n"
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
	"      --for DURATION without COMMAND: watch the service for DURATION (10s, 5m),\n"
	"                     or, without --for, until SIGINT or SIGTERM\n"
	"  -V, --version      show hotset's version\n"
	"  -h, --help         show this help\n"
	"\n"
	"A COMMAND that waits on another process through a socket (a database client)\n"
	"is told so, with that process, as far as you may see it, and the command that\n"
	"measures it.\n"
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

/* The other ends of the job's sockets (NULL: not watched), and what they say. */
struct peer_report {
	struct hs_peer_probe *probe;
	struct hs_peers peers;
	bool known;
	bool waited;
	struct hs_waited_on w;
};

/* hs_time_command()'s started: the job's processes are known, the sockets can be watched */
static void watch_peers(void *ctx, const char *procs)
{
	struct peer_report *pr = ctx;

	if (hs_peer_begin(procs, &pr->probe))
		pr->probe = NULL;	/* nothing said of peers: the rest of the report stands */
}

static void json_report(FILE *f, char *const *argv, const int *status, int code,
			const char *error_msg, const struct hs_usage *u,
			const struct service_report *svc, const struct peer_report *pr)
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
	json_waited_on(&j, pr && pr->waited ? &pr->w : NULL, pr && pr->known ? &pr->peers : NULL,
		       argv);
	json_end_object(&j);
	json_finish(&j);
}

static void write_report(FILE *f, bool json, bool quiet, char *const *argv, int status,
			 const struct hs_usage *u, const struct service_report *svc,
			 const struct peer_report *pr)
{
	if (json) {
		json_report(f, argv, &status, 0, NULL, u, svc, pr);
		return;
	}
	if (!quiet)
		print_job_status(f, status);
	print_usage_report(f, u, !quiet);
	if (pr->waited)
		print_waited_on(f, &pr->w, &pr->peers, argv, !quiet);
	if (svc->s && svc->u)
		print_service_report(f, svc->s, svc->u, !quiet);
}

/*
 * No COMMAND: watch the service for for_ns (0: until SIGINT or SIGTERM,
 * which end the window, not hotset), then report it alone.
 */
static int watch(const struct hs_service *s, uint64_t for_ns, const char *output, bool json,
		 bool quiet, char *const *none)
{
	struct service_report svc = { s, NULL };
	struct hs_service_probe *probe;
	struct hs_service_usage su;
	struct hs_error err = { 0 };
	struct timespec left;
	sigset_t stop, saved;
	FILE *out = stderr;
	uint64_t end;
	int rc, sig;

	if ((rc = report_open(output, &out)))
		return rc;
	/* taken by sigtimedwait below, never by hotset's handlers */
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigprocmask(SIG_BLOCK, &stop, &saved);
	if (hs_service_begin(s, &probe, &err)) {
		sigprocmask(SIG_SETMASK, &saved, NULL);
		error("%s", err.msg);
		report_close(out, output, EXIT_USAGE);
		return EXIT_USAGE;
	}
	end = hs_monotonic_ns() + for_ns;
	for (;;) {
		uint64_t now = hs_monotonic_ns();

		if (!for_ns) {
			sig = sigwaitinfo(&stop, NULL);
		} else {
			if (now >= end)
				break;
			left.tv_sec = (time_t)((end - now) / 1000000000u);
			left.tv_nsec = (long)((end - now) % 1000000000u);
			sig = sigtimedwait(&stop, NULL, &left);
		}
		if (sig > 0)
			break;
	}
	hs_service_end(probe, &su);
	sigprocmask(SIG_SETMASK, &saved, NULL);
	svc.u = &su;
	if (json) {
		json_report(out, none, &(int){ 0 }, 0, NULL, NULL, &svc, NULL);
	} else {
		fprintf(out, "%-16s %9.2f s   %s\n", "Watched", su.wall_s,
			for_ns && su.wall_s * 1e9 >= (double)for_ns ? "as --for asked" : "until a signal");
		print_service_report(out, s, &su, !quiet);
	}
	return report_close(out, output, 0);
}

static int run_time(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "report", required_argument, NULL, 'o' },	/* as record spells it */
		{ "pid", required_argument, NULL, OPT_PID },
		{ "cgroup", required_argument, NULL, OPT_CGROUP },
		{ "unit", required_argument, NULL, OPT_UNIT },
		{ "for", required_argument, NULL, OPT_FOR },
		COMMON_LONGOPTS,
		{ 0 },
	};
	const char *output = NULL;
	struct service_opts so = { 0 };
	struct hs_service service;
	struct hs_service_probe *probe = NULL;
	struct hs_service_usage su;
	struct service_report svc = { NULL, NULL };
	struct hs_error err = { 0 };
	struct hs_job_spec spec = { 0 };
	struct hs_usage u;
	struct peer_report pr = { 0 };
	bool json = false, quiet = false, reported = false, named;
	int opt, rc, status = 0, code;
	char msg[PATH_MAX + 128];
	FILE *out = stderr;

	/* '+': the options end at COMMAND, whose own options are its business */
	while ((opt = getopt_long(argc, argv, "+" OPTS_START "o:", longopts, NULL)) != -1) {
		switch (opt) {
		case 'o': output = optarg; break;
		case 'J': json = true; break;
		case 'q': quiet = true; break;
		case OPT_PID: case OPT_CGROUP: case OPT_UNIT: case OPT_FOR:
			if ((rc = option_service(&cmd_time, opt, optarg, &so)))
				return rc;
			break;
		default: return option_other(&cmd_time, opt, argv, longopts);
		}
	}
	spec.argv = argv + optind;
	if ((rc = option_service_resolve(&cmd_time, &so, optind < argc, &service, &named)))
		return rc;
	if (named)
		svc.s = &service;
	if (optind >= argc)
		return watch(&service, so.for_ns, output, json, quiet, argv + optind);
	/* as record does for its profile: 125, before the command runs */
	if ((rc = report_open(output, &out)))
		return rc;
	if (svc.s && hs_service_begin(svc.s, &probe, &err)) {
		error("%s", err.msg);
		report_close(out, output, EXIT_USAGE);
		return EXIT_USAGE;
	}
	code = hs_time_command(&spec, quiet ? NULL : say_warning, watch_peers, &pr, &status, &u, msg,
			       sizeof(msg));
	if (pr.probe) {
		hs_peer_end(pr.probe, code ? NULL : &pr.peers);
		pr.known = !code;
		pr.waited = !code && hs_peer_waited(&u, &pr.peers, &pr.w);
	}
	if (probe) {
		hs_service_end(probe, code ? NULL : &su);
		svc.u = code ? NULL : &su;
	}
	report_after_job();
	if (code)
		goto not_run;
	/* the probe's cgroup is gone before anything is written: a closed stderr cannot leak it */
	code = hs_job_exit_code(status);
	write_report(out, json, quiet, spec.argv, status, &u, &svc, &pr);
	reported = true;
	goto close_out;

not_run:	/* the command did not run, or cannot be measured: say why, in JSON too */
	error("%s", msg);
	if (json)
		json_report(out, spec.argv, NULL, code, msg, NULL, &svc, NULL);
close_out:
	if ((rc = report_close(out, output, code)) != code)
		return rc;
	return reported ? exit_as_job(status) : code;
}

const struct cmd cmd_time = {
	"time", run_time, "run a command and report its time, I/O wait and disk reads", usage,
};
