/*
 * record-ptrace-tracer.c - the tracer process of the ptrace backend: start
 * the job with the seccomp filter installed, follow every process and
 * thread it starts, and turn each stop into what it means for the working
 * set (see record-ptrace.h for the method).
 *
 * The job's first process is forked, seized (PTRACE_SEIZE, with
 * PTRACE_O_EXITKILL: if the tracer dies, the job dies rather than stay
 * stopped or traced by nobody), and only then installs the filter and
 * execs. Its fork, vfork and clone are followed automatically; exec and
 * exit are events. Group stops (SIGSTOP, ^Z) arrive as PTRACE_EVENT_STOP
 * and are kept with PTRACE_LISTEN; every other signal is handed back to
 * the process it was meant for.
 *
 * When the first process has exited, the tracer samples what the processes
 * left running have read so far, sends hotset the outcome, and goes on
 * following them, without recording, until they exit: letting go of them
 * would make their trapped system calls fail (ENOSYS). hotset meanwhile
 * writes the profile and exits.
 *
 * This file starts the job and runs the loop: wait for the next stop,
 * hand it to record-ptrace-stops.c (which says what it means, calls by way
 * of record-ptrace-calls.c), and between stops scan periodically and let
 * go of tasks kept stopped once they can go on.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "job/job.h"
#include "record/ptrace/record-ptrace.h"

#define SCAN_INTERVAL_SEC 10	/* background scans of the page tables */

/* ---- the loop -------------------------------------------------------------------------- */

static volatile sig_atomic_t scan_due;

static void on_alarm(int sig)
{
	(void)sig;
	scan_due = 1;
}

/* Sample every table and scan every address space (periodically, and at the end). */
static void sweep(struct pt_tracer *tr, bool fds_too)
{
	static unsigned mark;
	size_t pos = 0;
	void *val;

	mark++;
	while (u64map_next(&tr->tasks, &pos, NULL, &val)) {
		struct pt_task *t = val;

		if (!t->started || t->preexec)
			continue;
		if (fds_too && t->fds && t->fds->mark != mark) {
			t->fds->mark = mark;
			pt_fd_sample_all(tr, t);
		}
		if (t->mm && t->mm->mark != mark) {
			t->mm->mark = mark;
			pt_mm_scan(tr, t, 0, UINT64_MAX);
		}
	}
	pt_flush(tr);
}

/* A task kept stopped until its copy of a table was settled goes on. */
static void go_on(struct pt_task *t)
{
	if (t->held) {
		t->held = false;
		t->started = true;
		pt_resume(t, PTRACE_CONT, 0);
	} else if (t->parked) {
		t->parked = false;
		pt_resume(t, PTRACE_CONT, 0);
	}
}

/* A task kept stopped until its look was done goes on as it would have. */
static void look_done(struct pt_tracer *tr, struct pt_task *t)
{
	if (t->look_then == PT_LOOK_LEAVE) {
		pt_task_leave(tr, t);
		pt_resume(t, PTRACE_CONT, 0);
	} else {
		pt_resume(t, t->look_then, 0);
	}
}

/*
 * Settle the copies whose fds waited for a close to run (closing:
 * pt_fdtable_fork) and the looks that did (pt_fd_look), or, once
 * recording is over, give them up. A look still waiting after a whole
 * scan interval (a close that does not return, its closer never stops) is
 * given up too, its fds unsampled: the job does not stay stopped for it.
 */
static void settle(struct pt_tracer *tr)
{
	size_t pos = 0;
	void *val;

	while ((tr->deciding || tr->looking) && u64map_next(&tr->tasks, &pos, NULL, &val)) {
		struct pt_task *t = val;

		if (t->unlooked) {
			if (!tr->recording || tr->ticks - t->look_tick >= 2)
				pt_fd_look_drop(tr, t);
			if (pt_fd_look_on(tr, t))
				look_done(tr, t);
		}
		if (!t->copy_of)
			continue;
		if (!tr->recording)
			pt_fdtable_undecided_drop(tr, t);
		if (pt_fdtable_decide(tr, t))
			go_on(t);
	}
}

/* Processes (not threads) still traced, the first one aside. */
static int processes_left(struct pt_tracer *tr)
{
	struct u64map seen = { 0 };
	size_t pos = 0;
	void *val;
	int n = 0;

	while (u64map_next(&tr->tasks, &pos, NULL, &val)) {
		struct pt_task *t = val;

		if (t->tgid != tr->root && !u64map_get(&seen, (uint64_t)t->tgid)) {
			u64map_put(&seen, (uint64_t)t->tgid, t);
			n++;
		}
	}
	u64map_free(&seen);
	return n;
}

/* HOTSET_PTRACE_STATS=1: what the tracer did, as a warning. */
static void report_stats(struct pt_tracer *tr)
{
	struct rusage ru;
	const char *env = getenv("HOTSET_PTRACE_STATS");

	if (!env || strcmp(env, "1") || getrusage(RUSAGE_SELF, &ru))
		return;
	pt_report_warning(tr, "ptrace stats: %llu seccomp stops, %llu exit stops, %llu other "
			  "stops; %llu samples, %llu reads at offsets, %llu idents, %llu stats, "
			  "%llu scans; tracer CPU %.3f s user %.3f s system",
			  (unsigned long long)tr->stats.seccomp, (unsigned long long)tr->stats.exits,
			  (unsigned long long)tr->stats.events, (unsigned long long)tr->stats.samples,
			  (unsigned long long)tr->stats.reads_at, (unsigned long long)tr->stats.idents,
			  (unsigned long long)tr->stats.lookups, (unsigned long long)tr->stats.scans,
			  ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
			  ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
}

/* The first process is gone: tell hotset, and let go of anything stopped. */
static void finish(struct pt_tracer *tr, struct pt_run *run)
{
	size_t pos = 0;
	void *val;

	sweep(tr, true);	/* what processes left running have read so far */
	tr->recording = false;
	settle(tr);
	report_stats(tr);
	if (tr->too_long)
		pt_report_warning(tr, "%llu read%s of files whose paths are too long to record "
				  "(over PATH_MAX) left out", (unsigned long long)tr->too_long,
				  tr->too_long == 1 ? "" : "s");
	if (run->job.status_fd >= 0) {	/* it never exec'd */
		const char *stage = "exec";
		int rc = hs_job_exec_result(&run->job, &stage);

		if (rc) {
			run->out.exec_error = rc;
			run->out.exec_stage = !strcmp(stage, "cgroup") ? 1 :
					      !strcmp(stage, "setup") ? 2 : 3;
		}
	}
	run->out.still_running = processes_left(tr);
	run->out.lost = tr->lost;
	run->out.tracer_stays = tr->tasks.count > 0;
	/* hotset counts the job as we reaped it: its own children hold us too */
	hs_usage_reaped(&run->out.usage);
	if (tr->error && !run->out.error) {
		run->out.error = tr->error;
		snprintf(run->out.message, sizeof(run->out.message), "%s", strerror(-tr->error));
	}
	pt_report_end(tr, &run->out);
	while (u64map_next(&tr->tasks, &pos, NULL, &val)) {
		struct pt_task *t = val;

		if (t->held) {
			t->held = false;
			t->started = true;
			pt_resume(t, PTRACE_CONT, 0);
		}
	}
}

/* ---- starting the job -------------------------------------------------------------- */

struct launch {
	struct hs_job_gate gate;	/* the job waits until it is seized */
	struct sock_fprog prog;
};

/* In the job's first process, after fork: wait, install the filter (async-signal-safe). */
static int before_exec(void *ctx)
{
	const struct launch *l = ctx;

	if (hs_job_gate_wait(&l->gate))
		return -ECANCELED;	/* the tracer went away */
	/* without CAP_SYS_ADMIN a filter needs no_new_privs (setuid programs lose it) */
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &l->prog) == 0)
		return 0;
	if (errno != EACCES)
		return -errno;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &l->prog) < 0)
		return -errno;
	return 0;
}

void pt_explain_seize(int err, char *msg, size_t cap)
{
	char buf[64] = "";
	FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
	int scope = -1;

	if (f) {
		if (fgets(buf, sizeof(buf), f))
			scope = atoi(buf);
		fclose(f);
	}
	if (err == EPERM && scope >= 2)
		snprintf(msg, cap, "ptrace is not allowed here (kernel.yama.ptrace_scope = %d%s); "
			 "the bpf backend (root) does not need it", scope,
			 scope == 2 ? ": it needs CAP_SYS_PTRACE" : "");
	else if (err == EPERM)
		snprintf(msg, cap, "ptrace is not allowed here (%s): is hotset itself traced "
			 "(strace, a debugger), or in a container that forbids ptrace?",
			 strerror(err));
	else
		snprintf(msg, cap, "cannot trace the job: PTRACE_SEIZE: %s", strerror(err));
}

/*
 * Signals the tracer must survive, being in hotset's process group: those
 * hotset passes on to the job (the job gets them from hotset) and the
 * terminal's.
 */
static const int ignored[] = { SIGPIPE, SIGTSTP, SIGTTIN, SIGTTOU };

static void tracer_signals(void)
{
	struct sigaction sa;
	struct itimerval it = { { SCAN_INTERVAL_SEC, 0 }, { SCAN_INTERVAL_SEC, 0 } };
	sigset_t passed_on;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	hs_job_signal_set(&passed_on);
	for (int sig = 1; sig < NSIG; sig++)
		if (sigismember(&passed_on, sig) == 1)
			sigaction(sig, &sa, NULL);
	for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
		sigaction(ignored[i], &sa, NULL);
	sa.sa_handler = on_alarm;	/* no SA_RESTART: waitpid returns to scan */
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
}

/* After the outcome is sent: follow what is left, quietly, until it exits. */
static void stay_for_the_rest(void)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	struct itimerval off = { { 0, 0 }, { 0, 0 } };

	setitimer(ITIMER_REAL, &off, NULL);
	prctl(PR_SET_PDEATHSIG, 0, 0, 0, 0);	/* hotset exits now; we stay */
	if (null >= 0) {	/* do not hold hotset's output open */
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		close(null);
	}
}

static bool can_trace_nondumpable(void)
{
	char buf[4096], *s;
	unsigned long long eff = 0;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return false;
	while (fgets(buf, sizeof(buf), f))
		if ((s = strstr(buf, "CapEff:")) == buf)
			eff = strtoull(s + 7, NULL, 16);
	fclose(f);
	return eff >> 19 & 1;	/* CAP_SYS_PTRACE */
}

/*
 * The next stop of any task. A job that stops every few tens of µs (tar
 * of many small files: a stop per file) would also pay, at each stop, for
 * waking the sleeping tracer, and on a virtual machine's idle CPU that
 * costs about a fifth of the stop. While stops come that fast, the tracer
 * polls for up to SPIN_NS before it sleeps: it polls again only after a
 * wait shorter than that, so a job that stops seldom costs nothing. With
 * one CPU, polling would only keep the job from running: *spin starts
 * false and stays so (see can_spin).
 */
#define SPIN_NS 50000

static bool can_spin;	/* the tracer may run on more than one CPU */

static pid_t wait_next(bool *spin, int *status)
{
	uint64_t t0 = hs_monotonic_ns();
	pid_t tid;

	if (*spin) {
		do {
			if ((tid = waitpid(-1, status, __WALL | WNOHANG)) != 0)
				return tid;
		} while (hs_monotonic_ns() - t0 < SPIN_NS);
	}
	tid = waitpid(-1, status, __WALL);
	*spin = can_spin && hs_monotonic_ns() - t0 < SPIN_NS;
	return tid;
}

/*
 * Start the job, seize its first process, make its task, and let it go on
 * to its exec (the gate). Returns 0, or -1 with run->out saying why (a job
 * started is killed, or gives up at the closed gate).
 */
static int seize_job(struct pt_tracer *tr, struct launch *l, struct pt_run *run)
{
	const struct hs_record_opts *o = tr->opts;
	struct hs_job_spec spec = {
		.argv = o->argv, .before_exec = before_exec, .ctx = l,
		.cgroup_procs = o->cgroup_procs,
	};
	const long options = PTRACE_O_TRACESECCOMP | PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK |
			     PTRACE_O_TRACEVFORK | PTRACE_O_TRACEEXEC | PTRACE_O_TRACEEXIT |
			     PTRACE_O_EXITKILL | PTRACE_O_TRACESYSGOOD;
	struct pt_task *root;
	struct rlimit rl;
	cpu_set_t cpus;
	int rc, status;

	if ((rc = hs_job_start(&spec, &run->job))) {
		run->out.error = rc;
		snprintf(run->out.message, sizeof(run->out.message), "cannot start %s: %s",
			 o->argv[0], strerror(-rc));
		return -1;
	}
	tracer_signals();
	if (sched_getaffinity(0, sizeof(cpus), &cpus) == 0)
		can_spin = CPU_COUNT(&cpus) > 1;
	/* fdinfo handles: one per fd sampled, as many as allowed */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	tr->root = run->job.pid;
	if (ptrace(PTRACE_SEIZE, tr->root, 0, options) < 0) {
		run->out.error = -errno;
		pt_explain_seize(errno, run->out.message, sizeof(run->out.message));
		hs_job_gate_close(&l->gate);	/* the child sees EOF and gives up */
		waitpid(tr->root, &status, 0);
		return -1;
	}
	if (!(root = pt_task_get(tr, tr->root)) || !(root->fds = pt_fdtable_new(tr)) ||
	    !(root->mm = pt_mm_new(tr))) {
		kill(tr->root, SIGKILL);
		run->out.error = -ENOMEM;
		snprintf(run->out.message, sizeof(run->out.message), "out of memory");
		return -1;
	}
	root->started = root->preexec = true;
	pt_fdtable_adopt_inherited(tr, root);	/* positions now: reads start there */
	pt_report_started(tr, tr->root);
	if (hs_job_gate_open(&l->gate))
		kill(tr->root, SIGKILL);
	return 0;
}

int pt_tracer_run(const struct hs_record_opts *o, int report_fd)
{
	struct pt_tracer tr = {
		.opts = o, .page_size = hs_page_size(), .report_fd = report_fd,
		.recording = true, .procmap_query = -1,
	};
	struct launch l = { { -1, -1 }, { 0, NULL } };
	struct pt_run run = { .job = { .pid = -1, .status_fd = -1 } };
	pid_t hotset = getppid();
	bool spin = false;
	int rc, status;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != hotset)
		return 1;	/* hotset is gone already */
	prctl(PR_SET_NAME, "hotset-tracer", 0, 0, 0);	/* for ps, when it outlives hotset */
	if ((rc = pt_filter_build(!can_trace_nondumpable(), &l.prog)) ||
	    (rc = hs_job_gate_init(&l.gate))) {
		run.out.error = rc;
		snprintf(run.out.message, sizeof(run.out.message), "%s", strerror(-run.out.error));
		goto report;
	}
	if (seize_job(&tr, &l, &run))
		goto report;

	for (;;) {
		pid_t tid = wait_next(&spin, &status);

		if (tid < 0 && errno != EINTR)
			break;	/* ECHILD: nobody left */
		if (tid > 0)
			pt_on_status(&tr, &run, tid, status);
		if (scan_due) {	/* the timer rang (waitpid returned, or after the stop) */
			scan_due = 0;
			tr.ticks++;
			if (tr.recording)
				sweep(&tr, false);
		}
		if (tr.deciding || tr.looking)
			settle(&tr);
		if (tr.npending)
			pt_flush(&tr);
		if (run.root_gone && tr.recording) {
			finish(&tr, &run);
			if (!tr.tasks.count)
				break;
			stay_for_the_rest();
		}
	}
	if (tr.recording) {	/* ECHILD before the first process's exit: cannot be */
		run.out.error = -ECHILD;
		snprintf(run.out.message, sizeof(run.out.message), "lost track of the job");
		goto report;
	}
	goto out;
report:
	pt_report_end(&tr, &run.out);
out:
	hs_job_gate_close(&l.gate);
	free(l.prog.filter);
	return 0;
}
