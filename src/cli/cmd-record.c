/*
 * cmd-record.c - hotset record: run a command and write the profile of the
 * file pages it read.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "base/atomic.h"
#include "job/job.h"
#include "job/service.h"
#include "kernel/memory.h"
#include "record/record.h"
#include "options.h"
#include "service-options.h"
#include "record/record-run.h"
#include "usage-report.h"
#include "cmd.h"
#include "messages.h"
#include "output.h"
#include "signals.h"

static const char usage[] =
	"usage: hotset record [-o PROFILE] [--trace] [--backend auto|ptrace|bpf] [-q] [-J]\n"
	"                     [--report FILE] [--] CMD [ARGS...]\n"
	"       hotset record [options] --pid PID|--cgroup PATH|--unit NAME\n"
	"                     [--for DURATION] [--] [CMD [ARGS...]]\n"
	"       hotset record [--backend auto|ptrace|bpf] --probe\n"
	"\n"
	"Run CMD, follow every process it starts, and write a profile of the\n"
	"regular files they read: which pages, in the order they were first read.\n"
	"CMD runs as if run bare; hotset exits with CMD's exit status. At the end,\n"
	"a summary on standard error: what was recorded, then what 'hotset time'\n"
	"reports (wall and CPU time, time blocked on I/O, bytes read from disk).\n"
	"\n"
	"  -o, --output PROFILE  where to write the profile (default: hotset.profile)\n"
	"      --trace           also keep the ordered page-access trace (show --trace)\n"
	"      --backend NAME    bpf (root, near-zero overhead), ptrace (any user), or\n"
	"                        auto (default: bpf when it can run, else ptrace)\n"
	"                        ptrace stops the job briefly at each close, seek and\n"
	"                        read at an offset; the job cannot use io_uring or\n"
	"                        Linux AIO (they fail with ENOSYS: programs fall back\n"
	"                        to plain reads); setuid programs run unprivileged\n"
	"                        unless hotset runs as root\n"
	"      --pid PID         record what process PID, its threads and the processes\n"
	"                        it starts read while CMD runs (a server doing the work\n"
	"                        CMD, its client, asks for): the profile is the\n"
	"                        server's, CMD runs unrecorded; bpf backend only\n"
	"      --cgroup PATH     the same for the processes of a cgroup (and of those\n"
	"                        below it, and those that join it): its directory, or\n"
	"                        its name in a hierarchy (v2 first)\n"
	"      --unit NAME       the same for a systemd unit's cgroup\n"
	"      --for DURATION    without CMD: record the service for DURATION (10s, 5m),\n"
	"                        or, without --for, until SIGINT or SIGTERM\n"
	"      --probe           only check that the backend can run here (exit 0 if\n"
	"                        it can, 1 with the reason if not)\n"
	"      --report FILE     write the summary to FILE, not standard error\n"
	"  -q, --quiet           no summary at the end (unless --report)\n"
	"  -J, --json            print the summary as JSON (on stderr)\n"
	"  -V, --version         show hotset's version\n"
	"  -h, --help            show this help\n"
	"\n"
	"A service that does not exist, holds no process, or cannot be recorded here\n"
	"(it needs the bpf backend: root) is an error: exit 2, and CMD is not run.\n"
	"Exit status: CMD's own, or 128+N if it was killed by signal N (hotset then\n"
	"dies of that signal, as a shell expects), even if the profile could not be\n"
	"written at the end (hotset says so); 125 if hotset failed, 126 if CMD\n"
	"cannot be executed, 127 if it was not found, 2 for a usage error.\n";

const struct cmd cmd_record;

/*
 * The summary as JSON. With rec and res NULL the command never ran (why,
 * and hotset's exit status code, say so): the figures are all null.
 */
static void json_report(FILE *f, const char *out, const char *not_written, const char *backend,
			const struct hs_recording *rec, const struct hs_record_result *res,
			int code, const char *why, const struct hs_usage *u,
			const struct hs_service *svc, const struct hs_service_usage *su)
{
	static const char *const figures[] = { "files", "pages", "bytes", "memory_bytes", "outputs",
						"lost_events" };
	struct hs_recording_stats st;
	struct json j;

	json_begin_report(&j, f, "record", false);
	json_string(&j, "profile", out);
	json_bool(&j, "profile_written", !not_written);
	json_string(&j, "profile_error", not_written);
	json_string(&j, "backend", backend);
	if (rec && res) {
		hs_recording_stats(rec, &st);
		json_u64(&j, "files", st.files);
		json_u64(&j, "pages", st.pages);
		json_u64(&j, "bytes", st.pages * hs_page_size());
		json_u64(&j, "memory_bytes", memory_bytes(st.pages, hs_page_size()));
		json_u64(&j, "outputs", st.outputs);
		json_u64(&j, "lost_events", res->lost_events);
		if (u)
			json_job_status(&j, res->wait_status);
		else
			json_exit_code(&j, 0);	/* a service watched, no command */
	} else {
		for (size_t i = 0; i < sizeof(figures) / sizeof(figures[0]); i++)
			json_null(&j, figures[i]);
		json_exit_code(&j, code);
	}
	json_string(&j, "error", why);
	json_i64(&j, "interrupted_by", hs_job_signal_received());
	json_usage(&j, u);
	json_service(&j, svc, su);
	json_end_object(&j);
	json_finish(&j);
}

/*
 * What was recorded, then what the job cost (as `hotset time` reports it);
 * not_written says why the profile could not be written, NULL if it was.
 */
static void report(FILE *f, const char *out, const char *not_written,
		   const struct hs_record_run *r, const struct hs_service *svc, bool json)
{
	const struct hs_recording *rec = r->rec;
	const struct hs_record_result *res = &r->res;
	const struct hs_usage *u = r->o.argv ? &r->u : NULL;
	const struct hs_service_usage *su = r->service_known ? &r->service : NULL;
	struct hs_recording_stats st;
	int sig = hs_job_signal_received();
	char size[SIZE_STR_MAX];

	if (json) {
		json_report(f, out, not_written, hs_record_backend_name(res->backend), rec, res, 0,
			    NULL, u, svc, su);
		return;
	}
	hs_recording_stats(rec, &st);
	fprintf(f, "hotset: recorded %llu file%s, %llu page%s (%s) with the %s backend",
		(unsigned long long)st.files, plural(st.files), (unsigned long long)st.pages,
		plural(st.pages), memory_size(st.pages, hs_page_size(), size),
		hs_record_backend_name(res->backend));
	if (not_written)
		fprintf(f, "; the profile was NOT written to %s (%s)\n", out, not_written);
	else
		fprintf(f, " into %s\n", out);
	if (svc)
		fprintf(f, "hotset: the profile is what %s %s read (%zu process%s followed)%s\n",
			hs_service_option(svc->kind), svc->arg, res->service_procs,
			res->service_procs == 1 ? "" : "es",
			u ? " while the command ran; the command itself is not recorded" : "");
	if (svc && !u && su)
		fprintf(f, "hotset: recorded for %.2f s, %s\n", su->wall_s,
			r->o.for_ns && su->wall_s * 1e9 >= (double)r->o.for_ns ? "as --for asked" :
			"until a signal");
	if (sig && u)
		fprintf(f, "hotset: interrupted (%s): the profile holds what was read until "
			"then\n", strsignal(sig));
	if (res->still_running)
		fprintf(f, "hotset: %d processes the command started are still running; what "
			"they read from now on is not recorded\n", res->still_running);
	if (u) {
		print_job_status(f, res->wait_status);
		print_usage_report(f, u, true);
	}
	if (su)
		print_service_report(f, svc, su, true);
}

/* A service recorded without a command: say when it starts, and how it ends. */
static void say_following(void *ctx)
{
	const struct hs_record_opts *o = ctx;
	char d[32];

	if (o->for_ns)
		snprintf(d, sizeof(d), "for %.3g s", (double)o->for_ns / 1e9);
	fprintf(stderr, "hotset: recording %s %s %s\n", hs_service_option(o->service->kind),
		o->service->arg, o->for_ns ? d : "until SIGINT or SIGTERM");
}

/*
 * Without a command, SIGINT and SIGTERM end the window, not hotset: a
 * signalfd the recorder watches, with both blocked (saved: the mask before).
 */
static int stop_fd_open(sigset_t *saved)
{
	sigset_t stop;

	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigprocmask(SIG_BLOCK, &stop, saved);
	return signalfd(-1, &stop, SFD_CLOEXEC | SFD_NONBLOCK);
}

/* The window is over: the signals that ended it are taken, not delivered. */
static void stop_fd_close(int fd, const sigset_t *saved)
{
	struct signalfd_siginfo si;

	while (read(fd, &si, sizeof(si)) == (ssize_t)sizeof(si))
		;
	close(fd);
	sigprocmask(SIG_SETMASK, saved, NULL);
}

static int run_record(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "trace", no_argument, NULL, OPT_TRACE },
		{ "backend", required_argument, NULL, OPT_BACKEND },
		{ "probe", no_argument, NULL, OPT_PROBE },
		{ "report", required_argument, NULL, OPT_REPORT },
		{ "pid", required_argument, NULL, OPT_PID },
		{ "cgroup", required_argument, NULL, OPT_CGROUP },
		{ "unit", required_argument, NULL, OPT_UNIT },
		{ "for", required_argument, NULL, OPT_FOR },
		COMMON_LONGOPTS,
		{ 0 },
	};
	struct hs_record_run r = { .o.warn = say_warning, .o.stop_fd = -1 };
	struct service_opts so = { 0 };
	struct hs_service service;
	sigset_t saved;
	bool named;
	struct hs_error err = { 0 };
	const char *out = "hotset.profile", *report_path = NULL;
	char *command;
	FILE *rep = stderr;
	bool trace = false, probe = false, quiet = false, json = false;
	int opt, rc;

	while ((opt = getopt_long(argc, argv, "+" OPTS_START "o:", longopts, NULL)) != -1) {
		switch (opt) {
		case 'o': out = optarg; break;
		case OPT_TRACE: trace = true; break;
		case OPT_BACKEND:
			if (hs_record_backend_parse(optarg, &r.o.backend))
				return usage_error(&cmd_record, "--backend is auto, ptrace or bpf");
			break;
		case OPT_PROBE: probe = true; break;
		case OPT_REPORT: report_path = optarg; break;
		case OPT_PID: case OPT_CGROUP: case OPT_UNIT: case OPT_FOR:
			if ((rc = option_service(&cmd_record, opt, optarg, &so)))
				return rc;
			break;
		case 'q': quiet = true; break;
		case 'J': json = true; break;
		default: return option_other(&cmd_record, opt, argv, longopts);
		}
	}
	if (probe) {
		rc = hs_record_probe(r.o.backend, &err);
		if (rc)
			return error("%s backend: %s", hs_record_backend_name(r.o.backend), err.msg), 1;
		return EXIT_OK;
	}
	if (optind >= argc && !so.kind)
		return usage_error(&cmd_record, "give the command to record after --");
	if ((rc = option_service_resolve(&cmd_record, &so, optind < argc, &service, &named)))
		return rc;
	r.o.argv = optind < argc ? argv + optind : NULL;
	if (named) {
		r.o.service = &service;
		r.o.for_ns = so.for_ns;
		if (!r.o.argv && !quiet) {
			r.o.following = say_following;
			r.o.ctx = &r.o;
		}
	}
	if ((rc = report_open(report_path, &rep)))
		return rc;
	if (named && !r.o.argv && (r.o.stop_fd = stop_fd_open(&saved)) < 0) {
		error("cannot watch for SIGINT: %s", strerror(errno));
		return report_close(rep, report_path, 125);
	}
	r.out = out;
	r.trace = trace;
	r.command = command = r.o.argv ? shell_join(r.o.argv) : NULL;
	rc = hs_record_command(&r);
	if (r.o.stop_fd >= 0)
		stop_fd_close(r.o.stop_fd, &saved);
	report_after_job();
	free(command);
	if (rc) {
		/* the command did not run: say why, in the JSON summary too */
		error("%s", r.msg);
		if (json && (!quiet || report_path))
			json_report(rep, out, "the command did not run",
				    hs_record_backend_name(r.backend), NULL, NULL, r.code, r.msg, NULL,
				    named ? &service : NULL, NULL);
		hs_record_run_release(&r);
		return report_close(rep, report_path, r.code);
	}
	report_record_end(&r);
	/* -q: no summary on stderr; one asked for in a file is written */
	if (!quiet || report_path)
		report(rep, out, r.save_rc ? strerror(-r.save_rc) : NULL, &r,
		       named ? &service : NULL, json);
	hs_record_run_release(&r);
	/* a report that cannot be written is said; the job's status stands */
	rc = report_close(rep, report_path, EXIT_OK);
	if (!r.o.argv)	/* a service watched: hotset's own status */
		return r.save_rc ? 125 : rc;
	return exit_as_job(r.res.wait_status);
}

const struct cmd cmd_record = {
	"record", run_record, "run a command and record the file pages it reads", usage,
};
