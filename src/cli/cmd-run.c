/*
 * cmd-run.c - hotset run: a queue of disk-heavy jobs that runs them side
 * by side only when they fit in memory.
 *
 * Each job runs under a supervisor of its own, a child of run that does
 * what `hotset time` does (or `hotset record --trace`, on the job's first
 * run): one usage probe, one cgroup, one set of signal forwarders per
 * process, so that jobs running at once keep their figures and exit
 * statuses apart. run waits for its supervisors through pidfds, never
 * waitpid(-1); each writes its figures into the state directory
 * (runstate.h) before it exits. The choice of what starts next is
 * sched.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/atomic.h"
#include "model/curve.h"
#include "job/job.h"
#include "queue/jobfile.h"
#include "keep/keep.h"
#include "kernel/memory.h"
#include "kernel/procfs.h"
#include "profile/profile.h"
#include "queue/runstate.h"
#include "queue/sched.h"
#include "options.h"
#include "record-run.h"
#include "run.h"
#include "usage-report.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

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

volatile sig_atomic_t stop_signal;
int sig_pipe[2] = { -1, -1 };

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

/* buf = a/mid/b/suffix; -ENAMETOOLONG if it does not fit. */
int path_of(char *buf, size_t size, const char *a, const char *mid, const char *b,
		   const char *suffix)
{
	int n = snprintf(buf, size, "%s%s%s%s", a, mid, b, suffix);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* ---- the supervisor: one job, as `time` or `record --trace` runs it ------------ */

/*
 * The curve of the profile just recorded, by the model curve and doctor
 * use: the cache with which a re-run reads the least (nothing, most often).
 */
static void profile_figures(const char *profile, struct hs_run_record *r)
{
	struct hs_profile_reader *rd;
	struct hs_curve_opts co;
	struct hs_error err = { 0 };
	struct hs_curve c;
	struct hs_curve_summary cs;
	uint64_t ps;

	if (hs_profile_open(profile, &rd, &err))
		return;
	ps = hs_profile_header(rd)->page_size;
	hs_curve_model_opts(&co);
	if (hs_curve_from_profile(rd, &co, &c, &err) == 0) {
		hs_curve_summarize(&c, &cs);
		r->profile_known = true;
		r->working_set_bytes = c.pages * ps;
		if (cs.rerun_floor < HS_CURVE_UNKNOWN) {
			r->rerun_known = true;
			r->rerun_cache_bytes = hs_curve_rerun_cache(&c, &cs) * ps;
		}
		hs_curve_release(&c);
	}
	hs_profile_close(rd);
}

static void usage_figures(const struct hs_usage *u, struct hs_run_record *r)
{
	r->wall_s = u->wall_s;
	r->user_s = u->user_s;
	r->sys_s = u->sys_s;
	r->io_wait_known = u->pressure != HS_PRESSURE_UNKNOWN;
	r->io_wait_s = u->io_wait_s;
	r->io_known = u->io_known;
	r->read_bytes_disk = u->read_bytes_disk;
	r->write_bytes_disk = u->write_bytes_disk;
	r->max_rss_bytes = u->max_rss_bytes;
}

/*
 * Where the job's processes are, in jobs/NAME/cgroup: a resumed queue
 * stops what its supervisor, killed, left running there.
 */
static void note_cgroup(void *ctx, const char *procs)
{
	const struct qjob *j = ctx;
	char path[PATH_MAX + 16];
	int fd;

	if (!procs)
		return;
	snprintf(path, sizeof(path), "%s/cgroup", j->dir);
	if ((fd = hs_open_regular(path, O_WRONLY | O_CREAT | O_TRUNC, 0600, NULL)) >= 0) {
		dprintf(fd, "%s\n", procs);
		close(fd);
	}
}

/* As `hotset time` runs it. Returns the exit code. */
static int time_job(struct qjob *j, char **argv, struct hs_run_record *r)
{
	struct hs_job_spec spec = { .argv = argv };
	struct hs_usage u;
	char msg[PATH_MAX + 128];
	int code, status = 0;

	if ((code = time_command(&spec, true, note_cgroup, j, &status, &u, msg, sizeof(msg)))) {
		error("%s", msg);
		return code;
	}
	usage_figures(&u, r);
	r->signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
	return hs_job_exit_code(status);
}

/* As `hotset record --trace` runs it, into the job's profile. */
static int record_job(struct qjob *j, char **argv, const char *profile, struct hs_run_record *r)
{
	struct record_run rr = { .starting = note_cgroup, .ctx = j };

	rr.o.argv = argv;
	rr.out = profile;
	rr.trace = true;
	if (record_run(&rr)) {
		error("%s", rr.msg);
		record_run_release(&rr);
		return rr.code;
	}
	record_run_release(&rr);
	usage_figures(&rr.u, r);
	r->signal = WIFSIGNALED(rr.res.wait_status) ? WTERMSIG(rr.res.wait_status) : 0;
	if (!rr.save_rc)
		profile_figures(profile, r);
	return hs_job_exit_code(rr.res.wait_status);
}

int run_one(struct qjob *j)
{
	char *argv[] = { "/bin/sh", "-c", j->def->command, NULL };
	char profile[PATH_MAX + 16], path[PATH_MAX + 16];
	struct hs_run_record r = { 0 };
	int code;

	snprintf(profile, sizeof(profile), "%s/profile", j->dir);
	r.start_ns = hs_realtime_ns();
	if (j->s.known && access(profile, F_OK) == 0) {
		code = time_job(j, argv, &r);
		/* the profile's figures are the first run's: they stay */
		r.profile_known = j->hist.profile_known;
		r.working_set_bytes = j->hist.working_set_bytes;
		r.rerun_known = j->hist.rerun_known;
		r.rerun_cache_bytes = j->hist.rerun_cache_bytes;
		r.runs = j->hist.runs;
	} else {
		code = record_job(j, argv, profile, &r);
	}
	snprintf(path, sizeof(path), "%s/cgroup", j->dir);
	unlink(path);	/* the probe removed it */
	r.end_ns = hs_realtime_ns();
	r.exit_status = code;
	r.runs++;
	/*
	 * A job that did not run, or that the queue's stop cut short, leaves
	 * its history as it was: a partial run would tell the scheduler wrong.
	 */
	if ((code < EXIT_HOTSET || code > EXIT_NOTFOUND) && !hs_job_signal_received()) {
		snprintf(path, sizeof(path), "%s/history", j->dir);
		if (hs_run_record_save(path, &r))
			error("%s: cannot write the job's history", path);
	}
	snprintf(path, sizeof(path), "%s/result", j->dir);
	if (hs_run_record_save(path, &r))
		error("%s: cannot write the job's result", path);
	return code;
}

/*
 * In a child of run (a supervisor, the warmer): it dies with run, holds
 * none of run's descriptors, and takes the stop signals as anyone does
 * (they are still blocked: fork_stopped_signals()).
 */
static void leave_queue(struct queue *q, pid_t parent)
{
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != parent)
		_exit(EXIT_HOTSET);
	close(sig_pipe[0]);
	close(sig_pipe[1]);
	for (size_t i = 0; i < q->n; i++)
		if (q->jobs[i].pidfd >= 0)
			close(q->jobs[i].pidfd);
	if (q->warm_fd >= 0)
		close(q->warm_fd);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
}

/* The child that runs job j for the queue: its own session, its log, then run_one(). */
static _Noreturn void supervise(struct queue *q, struct qjob *j, pid_t parent)
{
	struct hs_error err = { 0 };
	sigset_t none;
	int fd;

	/*
	 * A session of its own: the terminal's signals go to run alone, which
	 * passes them on once. And if run is killed, the job stops too
	 * rather than go on unsupervised.
	 */
	setsid();
	leave_queue(q, parent);
	catch_fatal_signals();
	if ((fd = open("/dev/null", O_RDONLY)) >= 0 && fd != 0) {
		dup2(fd, 0);
		close(fd);
	}
	/* the job's output may hold secrets: its own, never through another's link */
	if ((fd = hs_open_regular(j->log, O_WRONLY | O_CREAT | O_TRUNC, 0600, &err)) < 0) {
		error("%s: %s", j->log, err.msg);
		_exit(EXIT_HOTSET);
	}
	dup2(fd, 1);
	dup2(fd, 2);
	close(fd);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	_exit(run_one(j));
}

/* ---- the queue ------------------------------------------------------------ */

int save_queue(struct queue *q)
{
	struct hs_queue st = { 0 };
	struct hs_queue_job *v = calloc(q->n ? q->n : 1, sizeof(*v));
	int rc;

	if (!v)
		return -ENOMEM;
	snprintf(st.jobfile, sizeof(st.jobfile), "%s", q->jobfile);
	st.hash = q->jf.hash;
	st.slurm = q->slurm;
	st.jobs = v;
	st.n = q->n;
	for (size_t i = 0; i < q->n; i++) {
		struct qjob *j = &q->jobs[i];

		memcpy(v[i].name, j->def->name, sizeof(v[i].name));
		v[i].state = j->s.state;
		v[i].exit_status = j->exit_status;
		v[i].start_ns = j->start_ns;
		v[i].end_ns = j->end_ns;
		v[i].supervisor = j->s.state != HS_Q_RUNNING ? 0 : q->slurm ? j->slurm_job : j->pid;
	}
	rc = hs_queue_save(q->queue_path, &st);
	free(v);
	if (rc && !q->state_lost)
		error("%s: cannot write the queue's state: %s; no job starts from now on",
		      q->queue_path, strerror(-rc));
	if (rc)
		q->state_lost = true;
	return rc;
}

/*
 * fork(), the child with SIGINT, SIGTERM and SIGHUP blocked: it must not
 * run run's handlers before it has set its own (it unblocks them then).
 */
static pid_t fork_stopped_signals(void)
{
	sigset_t stops, saved;
	pid_t pid;

	sigemptyset(&stops);
	sigaddset(&stops, SIGINT);
	sigaddset(&stops, SIGTERM);
	sigaddset(&stops, SIGHUP);
	sigprocmask(SIG_BLOCK, &stops, &saved);
	fflush(NULL);
	pid = fork();
	if (pid != 0)
		sigprocmask(SIG_SETMASK, &saved, NULL);
	return pid;
}

static int start_job(struct queue *q, struct qjob *j)
{
	char path[PATH_MAX + 16];
	pid_t parent = getpid(), pid;
	struct hs_error err = { 0 };

	if (hs_mkdirs(j->dir, 0700, &err)) {
		error("%s: %s", j->dir, err.msg);
		return -1;
	}
	snprintf(path, sizeof(path), "%s/result", j->dir);
	unlink(path);
	if ((pid = fork_stopped_signals()) == 0)
		supervise(q, j, parent);
	if (pid < 0) {
		error("cannot start job '%s': %s", j->def->name, strerror(errno));
		return -1;
	}
	j->pid = pid;
	j->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (j->pidfd < 0) {
		error("cannot follow job '%s': %s", j->def->name, strerror(errno));
		kill(pid, SIGTERM);
		waitpid(pid, NULL, 0);
		return -1;
	}
	j->s.state = HS_Q_RUNNING;
	j->start_ns = hs_realtime_ns();
	j->ran = true;
	if (stop_signal && !j->signalled) {	/* came while it was being started */
		kill(pid, stop_signal);
		j->signalled = true;
	}
	save_queue(q);		/* on failure, state_lost: the job runs to its end */
	return 0;
}

/* A supervisor is over: its exit status, its figures. */
static void reap(struct queue *q, struct qjob *j)
{
	char path[PATH_MAX + 16];
	struct hs_error err = { 0 };
	siginfo_t si = { 0 };

	while (waitid(P_PIDFD, (id_t)j->pidfd, &si, WEXITED) < 0 && errno == EINTR)
		;
	close(j->pidfd);
	j->pidfd = -1;
	j->end_ns = hs_realtime_ns();
	j->s.state = HS_Q_DONE;
	j->exit_status = si.si_code == CLD_EXITED ? si.si_status : 128 + si.si_status;
	snprintf(path, sizeof(path), "%s/result", j->dir);
	j->res_known = hs_run_record_load(path, &j->res, &err) == 0;
	if (j->exit_status && q->halt)
		q->halted = true;
	save_queue(q);
}

static void status_line(struct queue *q)
{
	size_t running = 0, waiting = 0, done = 0;
	const char *why = NULL;

	if (!q->tty || q->quiet)
		return;
	for (size_t i = 0; i < q->n; i++) {
		struct qjob *j = &q->jobs[i];

		running += j->s.state == HS_Q_RUNNING;
		done += j->s.state == HS_Q_DONE;
		if (j->s.state == HS_Q_PENDING) {
			waiting++;
			if (!why)
				why = hs_wait_name(j->s.wait);
		}
	}
	fprintf(stderr, "\r\033[Krun: %zu running, %zu waiting%s%s%s, %zu done", running,
		waiting, why ? " (" : "", why ? why : "", why ? ")" : "", done);
	fflush(stderr);
}

/*
 * The machine's I/O pressure over the last second or two: the share of the
 * time since the previous reading (at least a second ago) in which some
 * task waited for I/O, from the "some" total. avg10 would lag: it takes
 * about 8 s to fall from 90% to 40% after a disk-bound job ends, and the
 * next job would wait that long for nothing. The first reading is avg10.
 */
static void read_pressure(struct queue *q)
{
	struct hs_psi psi;
	int64_t now;

	if (hs_psi_read("/proc/pressure", "io", &psi)) {
		q->sched.pressure_known = false;
		return;
	}
	now = (int64_t)hs_monotonic_ns();
	if (!q->psi_ns) {
		q->sched.io_pressure = psi.some.avg10;
	} else if (now - q->psi_ns >= 1000000000) {
		if (psi.some.total >= q->psi_total)
			q->sched.io_pressure = 100.0 * (double)(psi.some.total - q->psi_total) /
					       ((double)(now - q->psi_ns) / 1000.0);
	} else {
		return;	/* too soon: the last figure stands */
	}
	q->sched.pressure_known = true;
	q->psi_total = psi.some.total;
	q->psi_ns = now;
}

/* In the warmer: `hotset warm -q -p PROFILE` at idle I/O priority, into nothing. */
static _Noreturn void warm_child(struct queue *q, struct qjob *j, pid_t parent)
{
	char profile[PATH_MAX + 16], budget[32];
	/* no more than the scheduler counted for it: the cache a warm re-run needs */
	char *argv[] = { "warm", "-q", "-p", profile, "--budget", budget, NULL };
	int argc = 6;
	sigset_t none;
	int fd;

	setpgid(0, 0);	/* the terminal's signals are run's to pass on */
	leave_queue(q, parent);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if ((fd = open("/dev/null", O_RDWR)) >= 0) {
		dup2(fd, 0), dup2(fd, 1), dup2(fd, 2);
		if (fd > 2)
			close(fd);
	}
	hs_ioprio_idle();
	snprintf(profile, sizeof(profile), "%s/profile", j->dir);
	snprintf(budget, sizeof(budget), "%llu", (unsigned long long)j->hist.rerun_cache_bytes);
	if (!j->hist.rerun_known || !j->hist.rerun_cache_bytes)
		argv[argc = 4] = NULL;
	optind = 0;	/* a fresh getopt for warm's options */
	_exit(cmd_warm.run(argc, argv));
}

/*
 * While only jobs that hardly wait for the disk run, warm the profile of
 * the next job that waits for a CPU alone, if its need fits beside
 * theirs: it then starts with its pages in the cache. One at a time.
 */
static void maybe_warm(struct queue *q)
{
	char profile[PATH_MAX + 16];
	uint64_t used = 0;
	size_t running = 0;
	pid_t parent = getpid(), pid;

	if (q->warm_fd >= 0 || stop_signal || q->halted)
		return;
	for (size_t i = 0; i < q->n; i++) {
		struct qjob *j = &q->jobs[i];

		if (j->s.state != HS_Q_RUNNING)
			continue;
		if (!j->s.known || !j->s.cpu_bound)
			return;
		running++;
		used += j->s.need;
	}
	if (!running)
		return;
	for (size_t i = 0; i < q->n; i++) {
		struct qjob *j = &q->jobs[i];

		if (j->s.state != HS_Q_PENDING)
			continue;
		if (j->s.wait != HS_WAIT_CPU || !j->s.known || j->warmed ||
		    used + j->s.need > q->sched.budget)
			return;	/* the next job, not one further down */
		snprintf(profile, sizeof(profile), "%s/profile", j->dir);
		if (access(profile, R_OK))
			return;
		if ((pid = fork_stopped_signals()) == 0)
			warm_child(q, j, parent);
		if (pid < 0)
			return;
		if ((q->warm_fd = (int)syscall(SYS_pidfd_open, pid, 0)) < 0) {
			kill(pid, SIGTERM);
			waitpid(pid, NULL, 0);
			return;
		}
		q->warm_pid = pid;
		j->warmed = true;
		return;
	}
}

static void reap_warmer(struct queue *q, bool stop)
{
	siginfo_t si;

	if (q->warm_fd < 0)
		return;
	if (stop)
		kill(q->warm_pid, SIGTERM);
	while (waitid(P_PIDFD, (id_t)q->warm_fd, &si, WEXITED) < 0 && errno == EINTR)
		;
	close(q->warm_fd);
	q->warm_fd = -1;
}

static int run_queue(struct queue *q)
{
	struct pollfd *pfd = calloc(q->n + 2, sizeof(*pfd));
	struct qjob **who = calloc(q->n + 2, sizeof(*who));
	bool failed = false;
	int rc = 0;

	if (!pfd || !who) {
		free(pfd), free(who);
		return error("out of memory");
	}
	for (;;) {
		size_t running = 0, pending = 0, npfd = 1;
		ssize_t next;

		for (size_t i = 0; i < q->n; i++) {
			running += q->jobs[i].s.state == HS_Q_RUNNING;
			pending += q->jobs[i].s.state == HS_Q_PENDING;
		}
		/* start what may start */
		while (!stop_signal && !q->halted && !q->state_lost && !failed && pending) {
			struct hs_sched_job *v = malloc(q->n * sizeof(*v));

			if (!v) {
				failed = true;
				break;
			}
			read_pressure(q);
			for (size_t i = 0; i < q->n; i++) {
				v[i] = q->jobs[i].s;
				if (v[i].state == HS_Q_RUNNING)
					v[i].elapsed = (double)(hs_realtime_ns() - q->jobs[i].start_ns) / 1e9;
			}
			next = hs_sched_next(&q->sched, v, q->n);
			for (size_t i = 0; i < q->n; i++) {
				q->jobs[i].s.wait = v[i].wait;
				/* the reason it waits once all that may start has started */
				if (next < 0 && v[i].state == HS_Q_PENDING && v[i].wait &&
				    !q->jobs[i].first_wait)
					q->jobs[i].first_wait = hs_wait_name(v[i].wait);
			}
			free(v);
			if (next < 0)
				break;
			if (start_job(q, &q->jobs[next]) < 0) {
				failed = true;
				break;
			}
			running++, pending--;
		}
		if (!stop_signal && !failed)
			maybe_warm(q);
		status_line(q);
		if (!running) {
			reap_warmer(q, true);
			break;
		}
		pfd[0] = (struct pollfd){ .fd = sig_pipe[0], .events = POLLIN };
		for (size_t i = 0; i < q->n; i++) {
			if (q->jobs[i].s.state != HS_Q_RUNNING)
				continue;
			pfd[npfd] = (struct pollfd){ .fd = q->jobs[i].pidfd, .events = POLLIN };
			who[npfd++] = &q->jobs[i];
		}
		if (q->warm_fd >= 0) {
			pfd[npfd] = (struct pollfd){ .fd = q->warm_fd, .events = POLLIN };
			who[npfd++] = NULL;
		}
		/* waiting jobs may wait on the pressure, which no descriptor tells */
		if (poll(pfd, npfd, pending ? 1000 : -1) < 0 && errno != EINTR) {
			rc = error("poll: %s", strerror(errno));
			break;
		}
		if (pfd[0].revents & POLLIN) {
			char buf[64];

			if (read(sig_pipe[0], buf, sizeof(buf)) < 0) {
				/* nothing to do: stop_signal says it */
			}
		}
		if (stop_signal) {
			reap_warmer(q, true);
			/* once to each running job; none starts any more */
			for (size_t i = 0; i < q->n; i++) {
				struct qjob *j = &q->jobs[i];

				if (j->s.state == HS_Q_RUNNING && !j->signalled) {
					kill(j->pid, stop_signal);
					j->signalled = true;
				}
			}
		}
		for (size_t i = 1; i < npfd; i++) {
			if (!(pfd[i].revents & (POLLIN | POLLHUP)))
				continue;
			if (who[i])
				reap(q, who[i]);
			else if (q->warm_fd >= 0)	/* not already stopped above */
				reap_warmer(q, false);
		}
	}
	if (q->tty && !q->quiet)
		fputs("\r\033[K", stderr);
	free(pfd);
	free(who);
	return failed ? -1 : rc;
}

/* ---- reports ---------------------------------------------------------------- */

static double secs(int64_t ns)
{
	return (double)ns / 1e9;
}

static void json_report(struct queue *q)
{
	struct json j;
	int64_t first = 0, last = 0;

	json_begin_report(&j, stdout, "run", false);
	json_string(&j, "engine", q->slurm ? "slurm" : "local");
	/* with Slurm, the cluster's are the CPUs and the memory */
	json_u64_or_null(&j, "slots", q->sched.slots, q->sched.slots);
	json_u64_or_null(&j, "cpus", !q->slurm, (uint64_t)q->sched.cpus);
	json_u64_or_null(&j, "budget_bytes", !q->slurm, q->sched.budget);
	/* the page-cache model of the jobs' memory needs (profile_figures()) */
	json_string(&j, "model", hs_curve_policy_name(HS_CURVE_AUTO));
	json_begin_array(&j, "jobs");
	for (size_t i = 0; i < q->n; i++) {
		struct qjob *jb = &q->jobs[i];
		const struct hs_run_record *r = &jb->res;
		bool ran = jb->ran && jb->s.state == HS_Q_DONE;
		bool known = ran && jb->res_known;

		if (ran) {
			if (!first || jb->start_ns < first)
				first = jb->start_ns;
			if (jb->end_ns > last)
				last = jb->end_ns;
		}
		json_begin_object(&j, NULL);
		json_string(&j, "name", jb->def->name);
		json_string(&j, "command", jb->def->command);
		json_string(&j, "state", ran ? "done" : jb->s.state == HS_Q_DONE ? "resumed" :
			    "not-run");
		if (ran) {
			json_i64(&j, "start_ns", jb->start_ns);
			json_i64(&j, "end_ns", jb->end_ns);
			json_double(&j, "wall_seconds", secs(jb->end_ns - jb->start_ns));
			json_i64(&j, "exit_status", jb->exit_status);
		} else {
			json_null(&j, "start_ns");
			json_null(&j, "end_ns");
			json_null(&j, "wall_seconds");
			if (jb->s.state == HS_Q_DONE)
				json_i64(&j, "exit_status", jb->exit_status);
			else
				json_null(&j, "exit_status");
		}
		if (known && r->io_wait_known)
			json_double(&j, "io_wait_seconds", r->io_wait_s);
		else
			json_null(&j, "io_wait_seconds");
		json_u64_or_null(&j, "disk_read_bytes", known && r->io_known, r->read_bytes_disk);
		json_u64_or_null(&j, "memory_needed_bytes", jb->s.known, jb->s.need);
		json_string(&j, "wait_reason", jb->first_wait);
		json_bool(&j, "warmed", jb->warmed);
		json_string(&j, "log", jb->log);
		json_u64_or_null(&j, "slurm_job_id", jb->slurm_job > 0, (uint64_t)jb->slurm_job);
		json_end_object(&j);
	}
	json_end_array(&j);
	json_double(&j, "makespan_seconds", first ? secs(last - first) : 0);
	json_end_object(&j);
	json_finish(&j);
}

static void table_report(struct queue *q)
{
	static const struct table_column cols[] = {
		{ "NAME", false, 0 }, { "START", true, 0 }, { "END", true, 0 },
		{ "WALL", true, 0 }, { "IO-WAIT", true, 0 }, { "READ", true, 0 },
		{ "STATUS", true, 0 },
	};
	const struct table_column *cp[7];
	struct table t;

	for (size_t i = 0; i < 7; i++)
		cp[i] = &cols[i];
	table_start(&t, stdout, cp, 7, false, false);
	for (size_t i = 0; i < q->n; i++) {
		struct qjob *jb = &q->jobs[i];
		const struct hs_run_record *r = &jb->res;
		char c[7][32];
		const char *cells[7];
		size_t lens[7];
		bool ran = jb->ran && jb->s.state == HS_Q_DONE;

		snprintf(c[0], sizeof(c[0]), "%s", "");
		strcpy(c[1], "-"), strcpy(c[2], "-"), strcpy(c[3], "-");
		strcpy(c[4], "-"), strcpy(c[5], "-"), strcpy(c[6], "-");
		if (ran) {
			snprintf(c[1], 32, "%.1f", secs(jb->start_ns - q->start_ns));
			snprintf(c[2], 32, "%.1f", secs(jb->end_ns - q->start_ns));
			snprintf(c[3], 32, "%.1fs", secs(jb->end_ns - jb->start_ns));
			if (jb->res_known && r->io_wait_known)
				snprintf(c[4], 32, "%.1fs", r->io_wait_s);
			if (jb->res_known && r->io_known)
				short_size(r->read_bytes_disk, c[5]);
		}
		if (jb->s.state == HS_Q_DONE)
			snprintf(c[6], 32, "%d%s", jb->exit_status, ran ? "" : " (before)");
		else
			snprintf(c[6], 32, "not run");
		cells[0] = jb->def->name;
		lens[0] = strlen(jb->def->name);
		for (size_t k = 1; k < 7; k++)
			cells[k] = c[k], lens[k] = strlen(c[k]);
		table_row(&t, cells, lens);
	}
	table_end(&t);
}

/* What would start at once, and why the others would wait. */
static void dry_run(struct queue *q)
{
	struct hs_sched_job *v = calloc(q->n ? q->n : 1, sizeof(*v));
	char need[24], budget[24];
	ssize_t next;

	if (!v)
		return;
	for (size_t i = 0; i < q->n; i++)
		v[i] = q->jobs[i].s;
	/* start what the scheduler would start, one after another, at the queue's start */
	while ((next = hs_sched_next(&q->sched, v, q->n)) >= 0)
		v[next].state = HS_Q_RUNNING;
	if (q->sched.slots)
		printf("budget %s, at most %u job%s at once\n", short_size(q->sched.budget, budget),
		       q->sched.slots, plural(q->sched.slots));
	else
		printf("budget %s, %.0f CPUs shared by what the jobs use of them\n",
		       short_size(q->sched.budget, budget), q->sched.cpus);
	printf("needs: a warm re-run's cache (the %s model's curve of the last run), what it "
	       "wrote, its peak RSS\n", hs_curve_policy_name(HS_CURVE_AUTO));
	for (size_t i = 0; i < q->n; i++) {
		struct qjob *j = &q->jobs[i];
		char cpu[16] = "?";

		if (j->s.known)
			snprintf(cpu, sizeof(cpu), "%.2f", j->s.cpu);
		printf("%-20s %-10s need %-8s cpu %-5s %s%s\n", j->def->name,
		       !j->s.known ? "no-history" : j->s.cpu_bound ? "cpu-bound" : "io-bound",
		       j->s.known ? short_size(j->s.need, need) : "?", cpu,
		       v[i].state == HS_Q_RUNNING ? "starts" :
		       v[i].state == HS_Q_DONE ? "done" : "waits: ",
		       v[i].state == HS_Q_PENDING ? hs_wait_name(v[i].wait) : "");
	}
	free(v);
}

/* ---- the command ---------------------------------------------------------------- */

/*
 * A regular file, or a pipe the shell made (<(...), /dev/stdin): a named
 * FIFO is refused, since with no writer its read would wait for ever, and
 * a device, directory or socket is no job file.
 */
static int open_jobfile(const char *path)
{
	char link[64], target[16];
	struct stat st;
	ssize_t n;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)) < 0)
		return error("%s: %s", path, strerror(errno)), -1;
	if (fstat(fd, &st) < 0) {
		error("%s: %s", path, strerror(errno));
		goto fail;
	}
	if (S_ISFIFO(st.st_mode)) {
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		n = readlink(link, target, sizeof(target));
		if (n < 5 || memcmp(target, "pipe:", 5)) {
			error("%s: a named FIFO: give a regular file, or pipe the job file in "
			      "(hotset run /dev/stdin < FILE)", path);
			goto fail;
		}
		if (fcntl(fd, F_SETFL, 0) < 0) {
			error("%s: %s", path, strerror(errno));
			goto fail;
		}
	} else if (!S_ISREG(st.st_mode)) {
		error("%s: not a regular file", path);
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return -1;
}

static int load_jobfile(struct queue *q, const char *path)
{
	struct hs_error err = { 0 };
	char *text = NULL;
	size_t len = 0, cap = 0;
	ssize_t got;
	int fd, rc;

	if ((fd = open_jobfile(path)) < 0)
		return EXIT_USAGE;
	for (;;) {
		if (hs_grow(&text, &cap, len + 65536, 1)) {
			close(fd);
			free(text);
			return error("out of memory"), EXIT_HOTSET;
		}
		if ((got = read(fd, text + len, cap - len)) <= 0)
			break;
		len += (size_t)got;
	}
	close(fd);
	if (got < 0) {
		free(text);
		return error("%s: %s", path, strerror(errno)), EXIT_USAGE;
	}
	rc = hs_jobfile_parse(text, len, &q->jf, &err);
	free(text);
	if (rc == -ENOMEM)
		return error("out of memory"), EXIT_HOTSET;
	if (rc)
		return error("%s:%u: %s", path, err.line, err.msg), EXIT_USAGE;
	if (!q->jf.n)
		return error("%s: no job in the file", path), EXIT_USAGE;
	return 0;
}

static uint64_t default_budget(void)
{
	struct hs_meminfo m;
	struct hs_memcg cg;
	uint64_t b = 0;

	if (hs_meminfo_read(&m) == 0)
		b = m.available;
	if (hs_memcg_of(0, &cg) == 0 && cg.limit_known && cg.limit != UINT64_MAX && cg.limit < b)
		b = cg.limit;
	return b;
}

/*
 * A job the killed queue left running, with its supervisor gone: kill
 * what is left in its cgroup, so that it does not complete beside its
 * re-run. Returns how many processes were killed.
 */
static unsigned stop_leftovers(const struct qjob *j)
{
	char path[PATH_MAX + 16], procs[PATH_MAX], dir[PATH_MAX];
	unsigned killed = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/cgroup", j->dir);
	if (!(f = fopen(path, "re")))
		return 0;
	if (!fgets(procs, sizeof(procs), f)) {
		fclose(f);
		return 0;
	}
	fclose(f);
	procs[strcspn(procs, "\n")] = '\0';
	for (int round = 0; round < 50; round++) {
		unsigned found = 0;
		int pid;

		if (!(f = fopen(procs, "re")))
			break;
		while (fscanf(f, "%d", &pid) == 1)
			if (pid > 0 && kill(pid, SIGKILL) == 0)
				found++;
		fclose(f);
		if (!found)
			break;
		killed += round == 0 ? found : 0;
		usleep(20000);
	}
	snprintf(dir, sizeof(dir), "%s", procs);
	if (strrchr(dir, '/')) {
		*strrchr(dir, '/') = '\0';
		rmdir(dir);
	}
	unlink(path);
	return killed;
}

/*
 * --resume: the jobs the queue file says are done stay done; act: stop
 * what the jobs that were running left (not for --dry-run).
 */
static int resume(struct queue *q, bool act)
{
	struct hs_queue st;
	struct hs_error err = { 0 };
	int rc;

	if ((rc = hs_queue_load(q->queue_path, &st, &err))) {
		if (rc == -ENOENT)
			return error("%s: no queue to resume", q->queue_path), EXIT_USAGE;
		if (err.line)
			return error("%s:%u: %s", q->queue_path, err.line, err.msg), EXIT_HOTSET;
		return error("%s: %s", q->queue_path, strerror(-rc)), EXIT_HOTSET;
	}
	if (st.hash != q->jf.hash) {
		hs_queue_free(&st);
		return error("%s is not the job file of the queue in %s (it was %s, or has "
			     "changed since): run it without --resume", q->jobfile, q->state,
			     st.jobfile), EXIT_USAGE;
	}
	if (st.slurm != q->slurm) {
		hs_queue_free(&st);
		return error("the queue in %s ran with --engine %s: resume it with that engine",
			     q->state, st.slurm ? "slurm" : "local"), EXIT_USAGE;
	}
	for (size_t i = 0; i < st.n; i++) {
		/* the queue's jobs are the job file's, in its order */
		ssize_t k = hs_jobfile_find(&q->jf, st.jobs[i].name);
		struct qjob *j;

		if (k < 0)
			continue;
		j = &q->jobs[k];
		/* in Slurm, a job goes on without the queue: the resumed one adopts it */
		if (q->slurm && st.jobs[i].state == HS_Q_RUNNING) {	/* id 0: being submitted */
			j->s.state = HS_Q_RUNNING;
			j->ran = true;
			j->slurm_job = (int)st.jobs[i].supervisor;
			j->start_ns = st.jobs[i].start_ns;
			continue;
		}
		/* a job that was running is run again: its supervisor died with the queue */
		if (act && !q->slurm && st.jobs[i].state == HS_Q_RUNNING) {
			unsigned n = stop_leftovers(j);

			if (n)
				warning("job '%s': killed %u process%s it left running when "
					"the queue was killed", j->def->name, n,
					n == 1 ? "" : "es");
		}
		if (st.jobs[i].state == HS_Q_DONE) {
			j->s.state = HS_Q_DONE;
			j->exit_status = st.jobs[i].exit_status;
			j->start_ns = st.jobs[i].start_ns;
			j->end_ns = st.jobs[i].end_ns;
		}
	}
	hs_queue_free(&st);
	return 0;
}

/* A job's directory and log, under the queue's state and log directories. */
static int job_paths(struct queue *q, struct qjob *j)
{
	char dir[PATH_MAX], log[PATH_MAX];

	if (path_of(dir, sizeof(dir), q->state, "/jobs/", j->def->name, "") ||
	    path_of(log, sizeof(log), q->logs, "/", j->def->name, ".log"))
		return error("%s: the path is too long", q->state), EXIT_USAGE;
	free(j->dir), free(j->log);
	j->dir = strdup(dir), j->log = strdup(log);
	if (!j->dir || !j->log)
		return error("out of memory"), EXIT_HOTSET;
	return 0;
}

static int setup_jobs(struct queue *q)
{
	if (!(q->jobs = calloc(q->jf.n, sizeof(*q->jobs))))
		return error("out of memory"), EXIT_HOTSET;
	q->n = q->jf.n;
	for (size_t i = 0; i < q->n; i++) {
		struct qjob *j = &q->jobs[i];
		struct hs_error err = { 0 };
		char path[PATH_MAX + 16];
		int rc;

		j->def = &q->jf.jobs[i];
		j->pidfd = -1;
		if ((rc = job_paths(q, j)))
			return rc;
		snprintf(path, sizeof(path), "%s/history", j->dir);
		rc = hs_run_record_load(path, &j->hist, &err);
		if (rc && rc != -ENOENT)
			warning("%s%s%.0u: %s: the job runs as one with no history", path,
				err.line ? ":" : "", err.line, err.line ? err.msg : strerror(-rc));
		j->s.known = rc == 0;
		if (j->s.known) {
			j->s.need = hs_sched_need(&j->hist);
			j->s.cpu_bound = hs_sched_cpu_bound(&j->hist);
			j->s.cpu = hs_sched_cpu(&j->hist);
			j->s.wall = j->hist.wall_s;
		}
	}
	return 0;
}

/* ---- the state and log directories ------------------------------------------ */

/* What run keeps in its state directory (runstate.h), and run-slurm.c's jobfile and stop. */
static const char *const state_entries[] = { "lock", "queue", "jobs", "logs", "jobfile", "stop", NULL };

/*
 * A state or log directory given (or the default) must be the user's own
 * and writable by no one else, or sticky with hotset's entries the user's
 * own (hs_dir_check()): job output and histories are not to be read, or
 * planted, by others. One yet to be made (0700) must be made in such a
 * directory: the nearest that exists is checked, for the name to be made.
 */
static int check_dir(const char *dir, const char *const *entries)
{
	struct hs_error err = { 0 };
	const char *made[2] = { NULL, NULL };
	size_t dlen = strlen(dir);
	char *at = malloc(dlen + 3), *slash;	/* room for "." or "/" before the name */
	struct stat st;
	int rc = 0;

	if (!at)
		return error("out of memory"), EXIT_HOTSET;
	memcpy(at, dir, dlen + 1);
	while (stat(at, &st) < 0 && errno == ENOENT) {
		size_t len = strlen(at);

		while (len > 1 && at[len - 1] == '/')
			at[--len] = '\0';
		if (!(slash = strrchr(at, '/'))) {
			memmove(at + 2, at, len + 1);
			memcpy(at, ".", 2);	/* at holds ".\0name": "." */
			made[0] = at + 2;
			break;
		}
		made[0] = slash + 1;
		*slash = '\0';
		if (slash == at) {
			/* "/name": the root is the directory */
			memmove(at + 2, slash + 1, strlen(slash + 1) + 1);
			memcpy(at, "/", 2);
			made[0] = at + 2;
			break;
		}
	}
	if (hs_dir_check(at, made[0] ? made : entries, &err)) {
		if (made[0])
			error("%s: cannot be made in %s, which is not safe for the queue's state and "
			      "logs: %s", dir, at, err.msg);
		else
			error("%s: not a safe directory for the queue's state and logs: %s", dir,
			      err.msg);
		rc = EXIT_USAGE;
	}
	free(at);
	return rc;
}

/* The log directory, with the names of the jobs' logs as its entries. */
static int check_logs(struct queue *q)
{
	const char **names = calloc(q->n + 1, sizeof(*names));
	int rc;

	if (!names)
		return error("out of memory"), EXIT_HOTSET;
	for (size_t i = 0; i < q->n; i++)
		names[i] = strrchr(q->jobs[i].log, '/') + 1;
	rc = check_dir(q->logs, names);
	free(names);
	return rc;
}

/* mkdir -p the state and log directories, 0700 (hs_mkdirs: never through another's link). */
static int make_dirs(struct queue *q)
{
	const char *dirs[] = { q->state, q->logs };

	for (size_t i = 0; i < 2; i++) {
		struct hs_error err = { 0 };
		int rc = hs_mkdirs(dirs[i], 0700, &err);

		if (rc)
			return error("%s: cannot make the directory: %s", dirs[i], err.msg),
			       rc == -EPERM ? EXIT_USAGE : EXIT_HOTSET;
	}
	return 0;
}

/*
 * --step NAME: job NAME of the job file, in the foreground, as a
 * supervisor runs it: what each batch job of --engine slurm runs. The
 * queue that submitted it holds the state directory's lock.
 */
static int run_step(struct queue *q, const char *name)
{
	const int stops[] = { SIGINT, SIGTERM, SIGHUP };
	struct qjob *j = NULL;
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
	if ((sig = slurm_stopped(q->state))) {
		error("job '%s': the queue was stopped (%s) before it started: not run", name,
		      strsignal(sig));
		return 128 + sig;
	}
	catch_fatal_signals();
	return run_one(j);
}

/*
 * --engine slurm: sbatch at hand (not for a dry run), and the state and log
 * directories named by absolute paths, which the nodes use.
 */
static int slurm_ready(struct queue *q, bool dry)
{
	char *argv[] = { "sbatch", "--version", NULL }, cwd[PATH_MAX], state[PATH_MAX], logs[PATH_MAX];
	pid_t pid;
	int status, rc;

	if (!dry && (pid = fork()) == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1), dup2(null, 2);
		execvp(argv[0], argv);
		_exit(127);
	}
	if (!dry && (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
		     WEXITSTATUS(status) == 127))
		return error("--engine slurm: sbatch cannot be run (is Slurm's client installed, "
			     "and in PATH?)"), EXIT_HOTSET;
	if ((q->state[0] != '/' || q->logs[0] != '/') && !getcwd(cwd, sizeof(cwd)))
		return error("cannot tell the working directory: %s", strerror(errno)), EXIT_HOTSET;
	if (path_of(state, sizeof(state), q->state[0] == '/' ? "" : cwd,
		    q->state[0] == '/' ? "" : "/", q->state, "") ||
	    path_of(logs, sizeof(logs), q->logs[0] == '/' ? "" : cwd, q->logs[0] == '/' ? "" : "/",
		    q->logs, ""))
		return error("%s: the path is too long", q->state), EXIT_USAGE;
	/* sbatch reads %j and the like in --output; scontrol's lines are split at blanks */
	if (strpbrk(state, "% \t\n") || strpbrk(logs, "% \t\n"))
		return error("--engine slurm: the paths of the state and log directories may not "
			     "hold '%%' (sbatch's file name patterns) or blanks"), EXIT_USAGE;
	snprintf(q->state_buf, sizeof(q->state_buf), "%s", state);
	snprintf(q->logs_buf, sizeof(q->logs_buf), "%s", logs);
	q->state = q->state_buf, q->logs = q->logs_buf;
	snprintf(q->queue_path, sizeof(q->queue_path), "%s/queue", q->state);
	for (size_t i = 0; i < q->n; i++) {
		struct qjob *j = &q->jobs[i];

		if ((rc = job_paths(q, j)))
			return rc;
	}
	return dry ? 0 : make_dirs(q);
}

static int run_run(int argc, char **argv)
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
	struct queue q = { .warm_fd = -1 };
	const char *name = NULL, *step = NULL;
	bool dry = false, resuming = false, budget_set = false, j_set = false;
	unsigned slots = 0;
	uint64_t budget = 0;
	int opt, rc, lock = -1, code = EXIT_OK;
	pid_t holder;
	struct sigaction sa;

	while ((opt = getopt_long(argc, argv, "+" OPTS_START "j:", longopts, NULL)) != -1) {
		switch (opt) {
		case 'j':
			j_set = true;
			if (strcmp(optarg, "auto") && option_count(&cmd_run, "-j", optarg, 1, 4096, &slots))
				return EXIT_USAGE;
			break;
		case OPT_BUDGET:
			/* 0 would hold no job's pages: as keep, at least a page */
			if ((rc = option_budget(&cmd_run, optarg, true, &budget)))
				return rc;
			budget_set = true;
			break;
		case OPT_STATE: q.state = optarg; break;
		case OPT_LOGS: q.logs = optarg; break;
		case OPT_HALT: q.halt = true; break;
		case OPT_DRY_RUN: dry = true; break;
		case OPT_RESUME: resuming = true; break;
		case OPT_NAME: name = optarg; break;
		case OPT_ENGINE:
			if (strcmp(optarg, "local") && strcmp(optarg, "slurm"))
				return usage_error(&cmd_run, "--engine: give local or slurm");
			q.slurm = !strcmp(optarg, "slurm");
			break;
		case OPT_STEP: step = optarg; break;
		case 'J': q.json = true; break;
		case 'q': q.quiet = true; break;
		default: return option_other(&cmd_run, opt, argv, longopts);
		}
	}
	if (optind >= argc)
		return usage_error(&cmd_run, "give a job file, or -- and a command");
	if (q.slurm && (j_set || budget_set))
		return usage_error(&cmd_run, "-j and --budget are the local engine's: with --engine "
				   "slurm, Slurm schedules the jobs by their --mem");
	if (step && (q.slurm || dry || resuming || !strcmp(argv[optind - 1], "--")))
		return usage_error(&cmd_run, "--step runs one job of a job file, alone");
	if (!strcmp(argv[optind - 1], "--")) {
		/* one job: its name is the command's basename, or --name */
		char *cmdline = shell_join(argv + optind), *base = strrchr(argv[optind], '/');
		char def[HS_JOB_NAME_MAX + 1];
		size_t k = 0;

		if (!cmdline)
			return error("out of memory"), EXIT_HOTSET;
		if (!name) {
			for (const char *s = base ? base + 1 : argv[optind]; *s && k < HS_JOB_NAME_MAX; s++)
				def[k++] = hs_job_name_ok(s, 1) ? *s : '_';
			def[k] = '\0';
			name = k && hs_job_name_ok(def, k) ? def : "job";
		} else if (!hs_job_name_ok(name, strlen(name))) {
			free(cmdline);
			return usage_error(&cmd_run, "--name: '%s' is not a job name (letters, "
					   "digits, '.', '_' and '-')", name);
		}
		q.jobfile = "-";
		q.jf.hash = hs_fnv1a(cmdline, strlen(cmdline));
		rc = hs_jobfile_add(&q.jf, name, cmdline, 0);
		free(cmdline);
		if (rc)
			return error("out of memory"), EXIT_HOTSET;
	} else {
		if (optind + 1 < argc)
			return usage_error(&cmd_run, "one job file only (a command goes after --)");
		if (name)
			return usage_error(&cmd_run, "--name names the job of -- COMMAND");
		q.jobfile = argv[optind];
		if ((rc = load_jobfile(&q, q.jobfile)))
			goto out;
	}
	if (!q.state) {
		if ((rc = hs_runstate_default_dir(q.state_buf, sizeof(q.state_buf)))) {
			error("no state directory: HOME is not set; give --state DIR");
			rc = EXIT_USAGE;
			goto out;
		}
		q.state = q.state_buf;
	}
	if (!q.logs) {
		if (path_of(q.logs_buf, sizeof(q.logs_buf), q.state, "/logs", "", "")) {
			error("%s: the path is too long", q.state);
			rc = EXIT_USAGE;
			goto out;
		}
		q.logs = q.logs_buf;
	}
	snprintf(q.queue_path, sizeof(q.queue_path), "%s/queue", q.state);
	if ((rc = check_dir(q.state, state_entries)) || (rc = setup_jobs(&q)) ||
	    (rc = check_logs(&q)))
		goto out;
	if (step) {
		rc = run_step(&q, step);
		goto out;
	}
	if (q.slurm && (rc = slurm_ready(&q, dry)))
		goto out;
	/* -j N: N jobs; auto: the jobs share the CPUs by what they use of them */
	q.sched.slots = slots;
	q.sched.cpus = (double)sysconf(_SC_NPROCESSORS_ONLN);
	if (q.sched.cpus < 1)
		q.sched.cpus = 1;
	q.sched.budget = budget_set ? budget : default_budget();
	if (!q.slurm && !q.sched.budget) {
		error("cannot tell the memory available (/proc/meminfo): give --budget SIZE");
		rc = EXIT_HOTSET;
		goto out;
	}
	if (dry) {
		if (resuming && (rc = resume(&q, false)))
			goto out;
		if (q.slurm) {
			slurm_plan(&q);
		} else {
			read_pressure(&q);
			dry_run(&q);
		}
		rc = finish_stdout(EXIT_OK);
		goto out;
	}
	if ((rc = make_dirs(&q)))
		goto out;
	/*
	 * Supervisors hold the lock too (they inherit it): a queue that was
	 * killed keeps it until its jobs have stopped, so that none runs
	 * twice. A resumed queue waits for them, 30 seconds at most.
	 */
	for (int tries = 0; (lock = hs_runstate_lock(q.state, &holder)) == -EWOULDBLOCK &&
			    holder && kill(holder, 0) && errno == ESRCH && tries < 300; tries++) {
		if (tries == 0 && !q.quiet)
			warning("the jobs of the queue that was killed (pid %d) are stopping: "
				"waiting for them", (int)holder);
		usleep(100000);
	}
	if (lock < 0) {
		if (lock == -EWOULDBLOCK && holder && kill(holder, 0) && errno == ESRCH)
			error("%s is still locked by the jobs of the queue of pid %d, which was "
			      "killed: they have not stopped", q.state, (int)holder);
		else if (lock == -EWOULDBLOCK && holder)
			error("%s is in use by another queue (pid %d): give another --state",
			      q.state, (int)holder);
		else if (lock == -EWOULDBLOCK)
			error("%s is in use by another queue: give another --state", q.state);
		else
			error("%s/lock: %s", q.state, strerror(-lock));
		rc = EXIT_HOTSET;
		goto out;
	}
	if (resuming && (rc = resume(&q, true)))
		goto out;
	if (q.slurm && !resuming && slurm_leftovers(&q)) {
		rc = EXIT_HOTSET;
		goto out;
	}

	if (pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK)) {
		error("pipe: %s", strerror(errno));
		rc = EXIT_HOTSET;
		goto out;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	q.tty = isatty(2);
	q.start_ns = hs_realtime_ns();
	if (save_queue(&q)) {
		rc = EXIT_HOTSET;
		goto out;
	}
	if ((q.slurm ? slurm_queue(&q) : run_queue(&q)) < 0 || q.state_lost)
		code = EXIT_HOTSET;
	for (size_t i = 0; i < q.n; i++) {
		struct qjob *j = &q.jobs[i];

		if (code == EXIT_OK && (j->s.state != HS_Q_DONE || j->exit_status))
			code = 1;
	}
	if (q.json)
		json_report(&q);
	else
		table_report(&q);
	if (stop_signal)
		code = 128 + stop_signal;
	rc = finish_stdout(code);
out:
	if (lock >= 0)
		close(lock);
	for (size_t i = 0; i < q.n; i++)
		free(q.jobs[i].dir), free(q.jobs[i].log);
	hs_jobfile_free(&q.jf);
	free(q.jobs);
	return rc;
}

const struct cmd cmd_run = {
	"run", run_run, "run a queue of jobs side by side when they fit in memory", usage,
};
