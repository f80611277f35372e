/*
 * cmd-record.c - hotset record: run a command and write the profile of the
 * file pages it read.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/atomic.h"
#include "job/job.h"
#include "kernel/memory.h"
#include "record/record.h"
#include "options.h"
#include "record-run.h"
#include "usage-report.h"

static const char usage[] =
	"usage: hotset record [-o PROFILE] [--trace] [--backend auto|ptrace|bpf] [-q] [-J]\n"
	"                     [--report FILE] [--] CMD [ARGS...]\n"
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
	"      --probe           only check that the backend can run here (exit 0 if\n"
	"                        it can, 1 with the reason if not)\n"
	"      --report FILE     write the summary to FILE, not standard error\n"
	"  -q, --quiet           no summary at the end (unless --report)\n"
	"  -J, --json            print the summary as JSON (on stderr)\n"
	"  -V, --version         show hotset's version\n"
	"  -h, --help            show this help\n"
	"\n"
	"Exit status: CMD's own, or 128+N if it was killed by signal N (hotset then\n"
	"dies of that signal, as a shell expects), even if the profile could not be\n"
	"written at the end (hotset says so); 125 if hotset failed, 126 if CMD\n"
	"cannot be executed, 127 if it was not found, 2 for a usage error.\n";

const struct cmd cmd_record;

static void warn_cb(void *ctx, const char *msg)
{
	(void)ctx;
	warning("%s", msg);
}

int parse_backend(const char *s, enum hs_record_backend *b)
{
	if (!strcmp(s, "auto"))
		*b = HS_BACKEND_AUTO;
	else if (!strcmp(s, "ptrace"))
		*b = HS_BACKEND_PTRACE;
	else if (!strcmp(s, "bpf") || !strcmp(s, "ebpf"))
		*b = HS_BACKEND_BPF;
	else
		return -1;
	return 0;
}

/*
 * The summary as JSON. With rec and res NULL the command never ran (why,
 * and hotset's exit status code, say so): the figures are all null.
 */
static void json_report(FILE *f, const char *out, const char *not_written, const char *backend,
			const struct hs_recording *rec, const struct hs_record_result *res,
			int code, const char *why, const struct hs_usage *u)
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
		json_job_status(&j, res->wait_status);
	} else {
		for (size_t i = 0; i < sizeof(figures) / sizeof(figures[0]); i++)
			json_null(&j, figures[i]);
		json_exit_code(&j, code);
	}
	json_string(&j, "error", why);
	json_i64(&j, "interrupted_by", hs_job_signal_received());
	json_usage(&j, u);
	json_end_object(&j);
	json_finish(&j);
}

/*
 * What was recorded, then what the job cost (as `hotset time` reports it);
 * not_written says why the profile could not be written, NULL if it was.
 */
static void report(FILE *f, const char *out, const char *not_written,
		   const struct hs_recording *rec, const struct hs_record_result *res,
		   const struct hs_usage *u, bool json)
{
	struct hs_recording_stats st;
	int sig = hs_job_signal_received();
	char size[SIZE_STR_MAX];

	if (json) {
		json_report(f, out, not_written, hs_record_backend_name(res->backend), rec, res, 0,
			    NULL, u);
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
	if (sig)
		fprintf(f, "hotset: interrupted (%s): the profile holds what was read until "
			"then\n", strsignal(sig));
	if (res->still_running)
		fprintf(f, "hotset: %d processes the command started are still running; what "
			"they read from now on is not recorded\n", res->still_running);
	print_job_status(f, res->wait_status);
	print_usage_report(f, u, true);
}

/*
 * Write the profile with the signals hotset forwards held back: one coming
 * now (a second ^C) takes effect once the profile is whole. Any other that
 * ends hotset removes the temporary file first (catch_fatal_signals).
 */
static int save(struct hs_recording *rec, const char *out, const struct hs_profile_header *h)
{
	struct sigaction ign = { .sa_handler = SIG_IGN }, xfsz, pipe;
	sigset_t block, old;
	int rc;

	hs_job_signal_set(&block);
	sigprocmask(SIG_BLOCK, &block, &old);
	/* a file too large or a reader gone fails the write (EFBIG, EPIPE): the job's status stands */
	sigaction(SIGXFSZ, &ign, &xfsz);
	sigaction(SIGPIPE, &ign, &pipe);
	rc = hs_recording_save(rec, out, h);
	sigaction(SIGXFSZ, &xfsz, NULL);
	sigaction(SIGPIPE, &pipe, NULL);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return rc;
}

static int run_record(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "trace", no_argument, NULL, OPT_TRACE },
		{ "backend", required_argument, NULL, OPT_BACKEND },
		{ "probe", no_argument, NULL, OPT_PROBE },
		{ "report", required_argument, NULL, OPT_REPORT },
		COMMON_LONGOPTS,
		{ 0 },
	};
	struct record_run r = { 0 };
	struct hs_error err = { 0 };
	const char *out = "hotset.profile", *report_path = NULL;
	FILE *rep = stderr;
	bool trace = false, probe = false, quiet = false, json = false;
	int opt, rc;

	while ((opt = getopt_long(argc, argv, "+" OPTS_START "o:", longopts, NULL)) != -1) {
		switch (opt) {
		case 'o': out = optarg; break;
		case OPT_TRACE: trace = true; break;
		case OPT_BACKEND:
			if (parse_backend(optarg, &r.o.backend))
				return usage_error(&cmd_record, "--backend is auto, ptrace or bpf");
			break;
		case OPT_PROBE: probe = true; break;
		case OPT_REPORT: report_path = optarg; break;
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
	if (optind >= argc)
		return usage_error(&cmd_record, "give the command to record after --");
	r.o.argv = argv + optind;
	if ((rc = report_open(report_path, &rep)))
		return rc;
	r.out = out;
	r.trace = trace;
	if (record_run(&r)) {
		/* the command did not run: say why, in the JSON summary too */
		error("%s", r.msg);
		if (json && (!quiet || report_path))
			json_report(rep, out, "the command did not run",
				    hs_record_backend_name(r.backend), NULL, NULL, r.code, r.msg, NULL);
		record_run_release(&r);
		return report_close(rep, report_path, r.code);
	}
	/* -q: no summary on stderr; one asked for in a file is written */
	if (!quiet || report_path)
		report(rep, out, r.save_rc ? strerror(-r.save_rc) : NULL, r.rec, &r.res, &r.u, json);
	record_run_release(&r);
	/* a report that cannot be written is said; the job's status stands */
	report_close(rep, report_path, EXIT_OK);
	return exit_as_job(r.res.wait_status);
}

/*
 * The memory cgroup the job is charged in: hotset's own, which it inherits
 * (v1), or the parent of the usage cgroup it is moved into (v2), both
 * where the command was started from. Malloc'd (it is large), or NULL.
 */
static struct hs_memcg *job_memcg(void)
{
	struct hs_memcg *m = malloc(sizeof(*m));

	if (m && hs_memcg_of(0, m)) {
		free(m);
		m = NULL;
	}
	return m;
}

int record_run(struct record_run *r)
{
	struct hs_profile_header h;
	struct hs_error err = { 0 };
	struct hs_usage_probe *meter;
	struct hs_memcg *memcg;
	char *command, cwd[4096], holder[PATH_MAX];
	int rc;

	r->o.warn = warn_cb;
	r->o.trace = r->trace;
	r->backend = r->o.backend;
	r->code = EXIT_HOTSET;
	r->rec = NULL;
	/* before the job runs, not after: its work must not be wasted */
	if ((rc = hs_atomic_check(r->out, &err))) {
		snprintf(r->msg, sizeof(r->msg), "%s: cannot write the profile: %s", r->out, err.msg);
		return -1;
	}
	if ((rc = hs_recording_new(r->trace, &r->rec))) {
		snprintf(r->msg, sizeof(r->msg), "cannot start recording: %s", strerror(-rc));
		return -1;
	}
	if ((rc = hs_usage_begin_timeline(&meter, r->timeline))) {
		snprintf(r->msg, sizeof(r->msg), "cannot measure the command: %s", strerror(-rc));
		return -1;
	}
	r->o.cgroup_procs = hs_usage_cgroup_procs(meter);
	memcg = job_memcg();
	if (r->starting)
		r->starting(r->ctx, r->o.cgroup_procs);
	rc = hs_record_run(&r->o, r->rec, &r->res, &err);
	if (rc || r->res.exec_error) {
		free(memcg);
		hs_usage_end(meter, 0, NULL);
		r->backend = r->res.backend;
		if (rc) {
			snprintf(r->msg, sizeof(r->msg), "cannot record: %s",
				 err.msg[0] ? err.msg : strerror(-rc));
		} else {
			hs_job_start_failure_text(r->msg, sizeof(r->msg), r->o.argv[0],
						  -r->res.exec_error, r->res.exec_stage);
			r->code = hs_job_failure_code(-r->res.exec_error, r->res.exec_stage);
		}
		return -1;
	}
	r->backend = r->res.backend;
	hs_usage_add_helper(meter, &r->res.helper);
	hs_usage_end(meter, r->res.still_running, &r->u);
	hs_profile_header_init(&h, "record");
	snprintf(h.backend, sizeof(h.backend), "%s", hs_record_backend_name(r->res.backend));
	if (r->res.mmap_pages)
		snprintf(h.mmap_pages, sizeof(h.mmap_pages), "%s", r->res.mmap_pages);
	command = shell_join(r->o.argv);
	h.command = command;
	h.cwd = getcwd(cwd, sizeof(cwd));
	/* what the run cost, for the memory a re-run needs (curve --mem-request) */
	h.max_rss_known = r->u.max_rss_bytes > 0;
	h.max_rss = r->u.max_rss_bytes;
	h.write_bytes_known = r->u.io_known;
	h.write_bytes = r->u.write_bytes_disk;
	/* where it was charged, and the limit then, for doctor -p */
	if (memcg) {
		h.memcg_version = memcg->version;
		h.memcg = memcg->name;
		h.memcg_limit_known = memcg->limit_known;
		h.memcg_limit = memcg->limit;
		if (memcg->lowest >= 0)
			h.memcg_limit_holder = hs_memcg_level_name(memcg, memcg->lowest, holder,
								   sizeof(holder));
	}
	/* a profile, or a trace, short of what was lost says so itself */
	h.lost_events_known = true;
	h.lost_events = r->res.lost_events;
	r->save_rc = save(r->rec, r->out, &h);
	free(command);
	free(memcg);
	/*
	 * The job ran: its exit status stands, and so does the summary of what
	 * it did. Only the profile is lost, and that is said where it shows.
	 */
	if (r->save_rc)
		error("%s: the profile was not written: %s (the command's exit status stands)",
		      r->out, strerror(-r->save_rc));
	else if (r->res.lost_events)
		warning("%llu accesses could not be recorded: the profile is incomplete",
			r->res.lost_events);
	return 0;
}

void record_run_release(struct record_run *r)
{
	hs_recording_free(r->rec);
	r->rec = NULL;
}

const struct cmd cmd_record = {
	"record", run_record, "run a command and record the file pages it reads", usage,
};
