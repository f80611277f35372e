/*
 * cmd-run.c - hotset run: a queue of disk-heavy jobs that runs them side
 * by side only when they fit in memory.
 *
 * The options, the job file and the state directory are read here; the
 * queue is run by an engine of the library (queue/queue.h: the local one,
 * or Slurm's), told the stop signals through stop_signal and a self-pipe
 * of this file's; the reports are run-report.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/atomic.h"
#include "queue/queue.h"
#include "options.h"
#include "run-report.h"
#include "usage-report.h"
#include "cmd.h"
#include "messages.h"
#include "output.h"
#include "signals.h"

static const char usage[] =
	"usage: hotset run [-j N|auto] [--budget SIZE] [--state DIR] [--logs DIR] [--halt]\n"
	"                  [--dry-run] [--resume] [--engine local|slurm] [-J] [-q] JOBFILE\n"
	"       hotset run [options] [--name NAME] -- COMMAND [ARG...]\n"
	"       hotset run [--state DIR] --step NAME JOBFILE\n"
	"\n"
	"Run the jobs of JOBFILE (one a line: a name, then a shell command; blank\n"
	"lines and '#' comments are skipped), several at once when they fit in\n"
	"memory. A job starts when a CPU is free for it, the memory the running jobs\n"
	"need plus its own fits the budget, and, if it is I/O-bound, the I/O\n"
	"pressure is low. A job's first run records its profile and what it cost\n"
	"into the state directory; a job with no history runs alone, or beside\n"
	"jobs known to be CPU-bound. Each job's output goes to LOGDIR/NAME.log;\n"
	"at the end, a table of the jobs (or JSON with -J).\n"
	"\n"
	"  -j, --threads N|auto\n"
	"                     run at most N jobs at once (auto, the default: as many\n"
	"                     as the CPUs can take, by the CPU time each job used in\n"
	"                     its last run); also --jobs\n"
	"      --budget SIZE  the memory the running jobs may need together, at least\n"
	"                     a page (default: MemAvailable at the start, at most the\n"
	"                     memory limit of hotset's cgroup)\n"
	"      --state DIR    the state directory (default $XDG_STATE_HOME/hotset/run,\n"
	"                     or /var/lib/hotset/run for root)\n"
	"      --logs DIR     where the jobs' logs go (default DIR/logs of --state)\n"
	"      --halt         start no job after one fails (the running ones finish)\n"
	"      --dry-run      print the plan, and why each job would wait; run nothing\n"
	"      --resume       go on with the queue of the state directory: jobs done\n"
	"                     are not run again, jobs that were running are\n"
	"      --name NAME    the job's name with -- COMMAND (default: its basename)\n"
	"      --engine E     local (default): run the jobs on this machine; slurm:\n"
	"                     submit each with sbatch, its --mem from its history and\n"
	"                     its profile for the node's prolog to warm (the state\n"
	"                     directory must be on a file system the nodes share)\n"
	"      --step NAME    run job NAME alone, in the foreground, its history into\n"
	"                     the state directory (what each batch job of --engine\n"
	"                     slurm runs)\n"
	"  -J, --json         report as JSON\n"
	"  -q, --quiet        no status line\n"
	"  -V, --version      show hotset's version\n"
	"  -h, --help         show this help\n"
	"\n"
	"SIGINT, SIGTERM and SIGHUP stop the queue: no job starts, the signal is\n"
	"passed once to each running job, and run waits for them.\n"
	"Exit status: 0 every job succeeded, 1 one failed or did not run (--halt),\n"
	"128+N the queue was stopped by signal N, 2 usage error or a bad job file,\n"
	"125 hotset failed.\n";

const struct cmd cmd_run;

static volatile sig_atomic_t stop_signal;
static bool show_status;	/* the status line: a terminal, no -q (run_progress()'s ctx) */
static int sig_pipe[2] = { -1, -1 };

/* How the engines speak, and what they leave to the command line. */
static void say(void *ctx, enum hs_runq_level level, const char *msg)
{
	if (level == HS_RUNQ_WARNING)
		warning("%s", msg);
	else
		error("%s", msg);
}

static void supervising(void *ctx)
{
	catch_fatal_signals();
}

static void recorded(void *ctx, const struct hs_record_run *rr)
{
	report_record_end(rr);
}

static void on_stop(int sig)
{
	int saved = errno;
	char c = (char)sig;

	if (!stop_signal)
		stop_signal = sig;
	if (write(sig_pipe[1], &c, 1) < 0) {
		/* full: the loop wakes anyway */
	}
	errno = saved;
}

/* ---- the command ---------------------------------------------------------------- */

/* The exit status of a setup function of queue.h that said why it failed. */
static int setup_code(int rc)
{
	return !rc ? EXIT_OK : rc == -EINVAL ? EXIT_USAGE : EXIT_HOTSET;
}

/* The queue's jobs, their paths and histories (hs_runq_setup_jobs()), said as run says it. */
static int setup_jobs(struct hs_runq *q)
{
	int rc = hs_runq_setup_jobs(q);

	if (rc == -ENAMETOOLONG)
		return error("%s: the path is too long", q->state), EXIT_USAGE;
	if (rc)
		return error("out of memory"), EXIT_HOTSET;
	return 0;
}

static int load_jobfile(struct hs_runq *q, const char *path)
{
	struct hs_error err = { 0 };
	int rc = hs_jobfile_load(path, &q->jf, &err);

	if (rc == -ENOMEM)
		return error("out of memory"), EXIT_HOTSET;
	if (rc && err.line)
		return error("%s:%u: %s", path, err.line, err.msg), EXIT_USAGE;
	if (rc)
		return error("%s: %s", path, err.msg), EXIT_USAGE;
	return 0;
}

/* ---- the state and log directories ------------------------------------------ */

/*
 * --step NAME: job NAME of the job file, in the foreground, as a
 * supervisor runs it: what each batch job of --engine slurm runs. The
 * queue that submitted it holds the state directory's lock.
 */
static int run_step(struct hs_runq *q, const char *name)
{
	const int stops[] = { SIGINT, SIGTERM, SIGHUP };
	struct hs_runq_job *j = NULL;
	struct hs_error err = { 0 };
	ssize_t k;
	int sig;

	if ((k = hs_jobfile_find(&q->jf, name)) >= 0)
		j = &q->jobs[k];
	if (!j)
		return error("%s: no job named '%s'", q->jobfile, name), EXIT_USAGE;
	if (hs_mkdirs(j->dir, 0700, &err))
		return error("%s: cannot make the directory: %s", j->dir, err.msg), EXIT_HOTSET;
	for (size_t i = 0; i < sizeof(stops) / sizeof(stops[0]); i++)
		signal(stops[i], SIG_DFL);
	/* the queue was stopped while Slurm started this step (its prolog ran) */
	if ((sig = hs_runq_slurm_stopped(q->state))) {
		error("job '%s': the queue was stopped (%s) before it started: not run", name,
		      strsignal(sig));
		return 128 + sig;
	}
	catch_fatal_signals();
	return hs_runq_run_one(q, j);
}

/* The state and log directories not given: the defaults; the queue file's path. */
static int state_paths(struct hs_runq *q)
{
	if (!q->state) {
		if (hs_runstate_default_dir(q->state_buf, sizeof(q->state_buf)))
			return error("no state directory: HOME is not set; give --state DIR"),
			       EXIT_USAGE;
		q->state = q->state_buf;
	}
	if (!q->logs) {
		if (hs_runq_path_of(q->logs_buf, sizeof(q->logs_buf), q->state, "/logs", "", ""))
			return error("%s: the path is too long", q->state), EXIT_USAGE;
		q->logs = q->logs_buf;
	}
	snprintf(q->queue_path, sizeof(q->queue_path), "%s/queue", q->state);
	return 0;
}

/* --dry-run: the plan, from the state resumed if asked; nothing runs. */
static int dry_run(struct hs_runq *q, bool resuming)
{
	int rc;

	if (resuming && (rc = setup_code(hs_runq_resume(q, false))))
		return rc;
	if (q->slurm) {
		run_slurm_plan(q);
	} else {
		hs_runq_read_pressure(q);
		run_dry_run(q);
	}
	return finish_stdout(EXIT_OK);
}

/*
 * The queue, with the stop signals caught (this file's handler, the
 * engines' flag and self-pipe), then the report. Returns the exit status.
 */
static int run_queue(struct hs_runq *q, bool json, bool quiet)
{
	struct sigaction sa;
	int code = EXIT_OK;

	if (pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK)) {
		error("pipe: %s", strerror(errno));
		return EXIT_HOTSET;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	q->wake[0] = sig_pipe[0], q->wake[1] = sig_pipe[1];
	show_status = isatty(2) && !quiet;
	q->start_ns = hs_realtime_ns();
	if (hs_runq_save(q))
		return EXIT_HOTSET;
	if ((q->slurm ? hs_runq_slurm(q) : hs_runq_local(q)) < 0 || q->state_lost)
		code = EXIT_HOTSET;
	if (code == EXIT_OK && !hs_runq_succeeded(q))
		code = 1;
	if (json)
		run_json_report(q);
	else
		run_table_report(q);
	if (stop_signal)
		code = 128 + stop_signal;
	return finish_stdout(code);
}

struct args {
	const char *name, *step;	/* --name, --step */
	bool dry, resuming, json, quiet;
	bool j_set, budget_set;
	unsigned slots;			/* -j N; 0: auto */
	uint64_t budget;
};

/* The options into q and a, and how they go together: -1 to go on, else the exit status. */
static int parse_options(int argc, char **argv, struct hs_runq *q, struct args *a)
{
	static const struct option longopts[] = {
		{ "threads", required_argument, NULL, 'j' },
		{ "jobs", required_argument, NULL, 'j' },	/* as make and parallel spell it */
		{ "budget", required_argument, NULL, OPT_BUDGET },
		{ "state", required_argument, NULL, OPT_STATE },
		{ "logs", required_argument, NULL, OPT_LOGS },
		{ "halt", no_argument, NULL, OPT_HALT },
		{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
		{ "resume", no_argument, NULL, OPT_RESUME },
		{ "name", required_argument, NULL, OPT_NAME },
		{ "engine", required_argument, NULL, OPT_ENGINE },
		{ "step", required_argument, NULL, OPT_STEP },
		COMMON_LONGOPTS,
		{ 0 },
	};
	int opt, rc;

	while ((opt = getopt_long(argc, argv, "+" OPTS_START "j:", longopts, NULL)) != -1) {
		switch (opt) {
		case 'j':
			a->j_set = true;
			if (strcmp(optarg, "auto") &&
			    option_count(&cmd_run, "-j", optarg, 1, 4096, &a->slots))
				return EXIT_USAGE;
			break;
		case OPT_BUDGET:
			/* 0 would hold no job's pages: as keep, at least a page */
			if ((rc = option_budget(&cmd_run, optarg, true, &a->budget)))
				return rc;
			a->budget_set = true;
			break;
		case OPT_STATE: q->state = optarg; break;
		case OPT_LOGS: q->logs = optarg; break;
		case OPT_HALT: q->halt = true; break;
		case OPT_DRY_RUN: a->dry = true; break;
		case OPT_RESUME: a->resuming = true; break;
		case OPT_NAME: a->name = optarg; break;
		case OPT_ENGINE:
			if (strcmp(optarg, "local") && strcmp(optarg, "slurm"))
				return usage_error(&cmd_run, "--engine: give local or slurm");
			q->slurm = !strcmp(optarg, "slurm");
			break;
		case OPT_STEP: a->step = optarg; break;
		case 'J': a->json = true; break;
		case 'q': a->quiet = true; break;
		default: return option_other(&cmd_run, opt, argv, longopts);
		}
	}
	if (optind >= argc)
		return usage_error(&cmd_run, "give a job file, or -- and a command");
	if (q->slurm && (a->j_set || a->budget_set))
		return usage_error(&cmd_run, "-j and --budget are the local engine's: with --engine "
				   "slurm, Slurm schedules the jobs by their --mem");
	if (a->step && (q->slurm || a->dry || a->resuming || !strcmp(argv[optind - 1], "--")))
		return usage_error(&cmd_run, "--step runs one job of a job file, alone");
	return -1;
}

/* The job file or the command, the state; then a step, a plan or the queue. */
static int run_run(int argc, char **argv)
{
	struct hs_runq q = { .warm_fd = -1, .stop = &stop_signal, .wake = { -1, -1 } };
	struct args a = { 0 };
	int rc, lock = -1;

	q.ops = (struct hs_runq_ops){ .say = say, .join = shell_join, .supervising = supervising,
				      .recorded = recorded, .warn = say_warning,
				      .progress = run_progress, .ctx = &show_status };
	if ((rc = parse_options(argc, argv, &q, &a)) >= 0)
		return rc;
	if (!strcmp(argv[optind - 1], "--")) {
		if ((rc = hs_runq_add_command(&q, argv + optind, a.name)) == -EINVAL)
			return usage_error(&cmd_run, "--name: '%s' is not a job name (letters, "
					   "digits, '.', '_' and '-')", a.name);
		if (rc)
			return error("out of memory"), EXIT_HOTSET;
	} else {
		if (optind + 1 < argc)
			return usage_error(&cmd_run, "one job file only (a command goes after --)");
		if (a.name)
			return usage_error(&cmd_run, "--name names the job of -- COMMAND");
		q.jobfile = argv[optind];
		if ((rc = load_jobfile(&q, q.jobfile)))
			goto out;
	}
	if ((rc = state_paths(&q)))
		goto out;
	if ((rc = setup_code(hs_runq_check_state(&q))) || (rc = setup_jobs(&q)) ||
	    (rc = setup_code(hs_runq_check_logs(&q))))
		goto out;
	if (a.step) {
		rc = run_step(&q, a.step);
		goto out;
	}
	if (q.slurm && (rc = setup_code(hs_runq_slurm_ready(&q, a.dry))))
		goto out;
	/* -j N: N jobs; auto: the jobs share the CPUs by what they use of them */
	q.sched.slots = a.slots;
	q.sched.cpus = (double)sysconf(_SC_NPROCESSORS_ONLN);
	if (q.sched.cpus < 1)
		q.sched.cpus = 1;
	q.sched.budget = a.budget_set ? a.budget : hs_runq_default_budget();
	if (!q.slurm && !q.sched.budget) {
		error("cannot tell the memory available (/proc/meminfo): give --budget SIZE");
		rc = EXIT_HOTSET;
		goto out;
	}
	if (a.dry) {
		rc = dry_run(&q, a.resuming);
		goto out;
	}
	if ((rc = setup_code(hs_runq_make_dirs(&q))))
		goto out;
	if ((lock = hs_runq_lock(&q, !a.quiet)) < 0) {
		rc = EXIT_HOTSET;
		goto out;
	}
	if (a.resuming && (rc = setup_code(hs_runq_resume(&q, true))))
		goto out;
	if (q.slurm && !a.resuming && hs_runq_slurm_leftovers(&q)) {
		rc = EXIT_HOTSET;
		goto out;
	}

	rc = run_queue(&q, a.json, a.quiet);
out:
	if (lock >= 0)
		close(lock);
	hs_runq_release(&q);
	return rc;
}

const struct cmd cmd_run = {
	"run", run_run, "run a queue of jobs side by side when they fit in memory", usage,
};
