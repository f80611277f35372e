/*
 * engine-local.c - the local engine of `hotset run`: the jobs of the
 * queue on this machine, several at once when they fit in memory.
 *
 * Each job runs under a supervisor of its own, a child of run that does
 * what `hotset time` does (or `hotset record --trace`, on the job's first
 * run): one usage probe, one cgroup, one set of signal forwarders per
 * process, so that jobs running at once keep their figures and exit
 * statuses apart. run waits for its supervisors through pidfds, never
 * waitpid(-1); each writes its figures into the state directory
 * (runstate.h) before it exits. The choice of what starts next is
 * sched.c's, and so is which waiting job has its profile warmed.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/atomic.h"
#include "kernel/ioprio.h"
#include "kernel/procfs.h"
#include "profile/profile.h"
#include "cache/warm.h"
#include "cache/warm-profile.h"
#include "job/job.h"
#include "job/timed.h"
#include "record/record-run.h"
#include "model/curve.h"
#include "queue/queue.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

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
	const struct hs_runq_job *j = ctx;
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
static int time_job(struct hs_runq *q, struct hs_runq_job *j, char **argv, struct hs_run_record *r)
{
	struct hs_job_spec spec = { .argv = argv };
	struct hs_usage u;
	char msg[PATH_MAX + 128];
	int code, status = 0;

	if ((code = hs_time_command(&spec, NULL, note_cgroup, j, &status, &u, msg, sizeof(msg)))) {
		hs_runq_say(q, HS_RUNQ_ERROR, "%s", msg);
		return code;
	}
	usage_figures(&u, r);
	r->signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
	return hs_job_exit_code(status);
}

/* As `hotset record --trace` runs it, into the job's profile. */
static int record_job(struct hs_runq *q, struct hs_runq_job *j, char **argv, const char *profile,
		      struct hs_run_record *r)
{
	struct hs_record_run rr = { .o.warn = q->ops.warn, .o.ctx = q->ops.ctx,
				    .starting = note_cgroup, .ctx = j };
	char *command;
	int rc;

	rr.o.argv = argv;
	rr.out = profile;
	rr.command = command = q->ops.join(argv);
	rr.trace = true;
	rc = hs_record_command(&rr);
	free(command);
	if (rc) {
		hs_runq_say(q, HS_RUNQ_ERROR, "%s", rr.msg);
		hs_record_run_release(&rr);
		return rr.code;
	}
	if (q->ops.recorded)
		q->ops.recorded(q->ops.ctx, &rr);
	hs_record_run_release(&rr);
	usage_figures(&rr.u, r);
	r->signal = WIFSIGNALED(rr.res.wait_status) ? WTERMSIG(rr.res.wait_status) : 0;
	if (!rr.save_rc)
		profile_figures(profile, r);
	return hs_job_exit_code(rr.res.wait_status);
}

int hs_runq_run_one(struct hs_runq *q, struct hs_runq_job *j)
{
	char *argv[] = { "/bin/sh", "-c", j->def->command, NULL };
	char profile[PATH_MAX + 16], path[PATH_MAX + 16];
	struct hs_run_record r = { 0 };
	int code;

	snprintf(profile, sizeof(profile), "%s/profile", j->dir);
	r.start_ns = hs_realtime_ns();
	if (j->s.known && access(profile, F_OK) == 0) {
		code = time_job(q, j, argv, &r);
		/* the profile's figures are the first run's: they stay */
		r.profile_known = j->hist.profile_known;
		r.working_set_bytes = j->hist.working_set_bytes;
		r.rerun_known = j->hist.rerun_known;
		r.rerun_cache_bytes = j->hist.rerun_cache_bytes;
		r.runs = j->hist.runs;
	} else {
		code = record_job(q, j, argv, profile, &r);
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
	if ((code < HS_RUNQ_EXIT_HOTSET || code > HS_RUNQ_EXIT_NOTFOUND) && !hs_job_signal_received()) {
		snprintf(path, sizeof(path), "%s/history", j->dir);
		if (hs_run_record_save(path, &r))
			hs_runq_say(q, HS_RUNQ_ERROR, "%s: cannot write the job's history", path);
	}
	snprintf(path, sizeof(path), "%s/result", j->dir);
	if (hs_run_record_save(path, &r))
		hs_runq_say(q, HS_RUNQ_ERROR, "%s: cannot write the job's result", path);
	return code;
}

/*
 * In a child of run (a supervisor, the warmer): it dies with run, holds
 * none of run's descriptors, and takes the stop signals as anyone does
 * (they are still blocked: fork_stopped_signals()).
 */
static void leave_queue(struct hs_runq *q, pid_t parent)
{
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != parent)
		_exit(HS_RUNQ_EXIT_HOTSET);
	close(q->wake[0]);
	close(q->wake[1]);
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
static _Noreturn void supervise(struct hs_runq *q, struct hs_runq_job *j, pid_t parent)
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
	if (q->ops.supervising)
		q->ops.supervising(q->ops.ctx);
	if ((fd = open("/dev/null", O_RDONLY)) >= 0 && fd != 0) {
		dup2(fd, 0);
		close(fd);
	}
	/* the job's output may hold secrets: its own, never through another's link */
	if ((fd = hs_open_regular(j->log, O_WRONLY | O_CREAT | O_TRUNC, 0600, &err)) < 0) {
		hs_runq_say(q, HS_RUNQ_ERROR, "%s: %s", j->log, err.msg);
		_exit(HS_RUNQ_EXIT_HOTSET);
	}
	dup2(fd, 1);
	dup2(fd, 2);
	close(fd);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	_exit(hs_runq_run_one(q, j));
}

/* ---- the queue's loop ------------------------------------------------------ */

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

static int start_job(struct hs_runq *q, struct hs_runq_job *j)
{
	char path[PATH_MAX + 16];
	pid_t parent = getpid(), pid;
	struct hs_error err = { 0 };

	assert(j->s.state == HS_Q_PENDING);	/* sched.c chooses among pending jobs alone */
	if (hs_mkdirs(j->dir, 0700, &err)) {
		hs_runq_say(q, HS_RUNQ_ERROR, "%s: %s", j->dir, err.msg);
		return -1;
	}
	snprintf(path, sizeof(path), "%s/result", j->dir);
	unlink(path);
	if ((pid = fork_stopped_signals()) == 0)
		supervise(q, j, parent);
	if (pid < 0) {
		hs_runq_say(q, HS_RUNQ_ERROR, "cannot start job '%s': %s", j->def->name, strerror(errno));
		return -1;
	}
	j->pid = pid;
	j->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (j->pidfd < 0) {
		hs_runq_say(q, HS_RUNQ_ERROR, "cannot follow job '%s': %s", j->def->name, strerror(errno));
		kill(pid, SIGTERM);
		waitpid(pid, NULL, 0);
		return -1;
	}
	j->s.state = HS_Q_RUNNING;
	j->start_ns = hs_realtime_ns();
	j->ran = true;
	if (*q->stop && !j->signalled) {	/* came while it was being started */
		kill(pid, *q->stop);
		j->signalled = true;
	}
	hs_runq_save(q);		/* on failure, state_lost: the job runs to its end */
	return 0;
}

/* A supervisor is over: its exit status, its figures. */
static void reap(struct hs_runq *q, struct hs_runq_job *j)
{
	char path[PATH_MAX + 16];
	struct hs_error err = { 0 };
	siginfo_t si = { 0 };

	assert(j->s.state == HS_Q_RUNNING && j->pidfd >= 0);	/* reaped once */
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
	hs_runq_save(q);
}

/*
 * The machine's I/O pressure over the last second or two: the share of the
 * time since the previous reading (at least a second ago) in which some
 * task waited for I/O, from the "some" total. avg10 would lag: it takes
 * about 8 s to fall from 90% to 40% after a disk-bound job ends, and the
 * next job would wait that long for nothing. The first reading is avg10.
 */
void hs_runq_read_pressure(struct hs_runq *q)
{
	struct hs_psi_mark now;
	struct hs_psi psi;
	double share;

	if (!q->psi.known) {
		if (hs_psi_read("/proc/pressure", "io", &psi) ||
		    hs_psi_mark("/proc/pressure", "io", hs_monotonic_ns(), &q->psi)) {
			q->sched.pressure_known = false;
			return;
		}
		q->sched.io_pressure = psi.some.avg10;
		q->sched.pressure_known = true;
		return;
	}
	if (hs_psi_mark("/proc/pressure", "io", hs_monotonic_ns(), &now)) {
		q->sched.pressure_known = false;
		return;
	}
	if (now.at_ns - q->psi.at_ns < 1000000000)
		return;	/* too soon: the last figure stands */
	/* a total that went back (unknown share) leaves the last figure too */
	if ((share = hs_psi_share(&q->psi, &now)) >= 0)
		q->sched.io_pressure = share;
	q->sched.pressure_known = true;
	q->psi = now;
}

/* In the warmer: `hotset warm -q -p PROFILE` at idle I/O priority, into nothing. */
static _Noreturn void warm_child(struct hs_runq *q, struct hs_runq_job *j, pid_t parent)
{
	char profile[PATH_MAX + 16];
	struct hs_warm_opts o = { 0 };
	struct hs_warm_stats st;
	struct hs_error err = { 0 };
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
	/* no more than the scheduler counted for it: the cache a warm re-run needs */
	if (j->hist.rerun_known)
		o.budget = j->hist.rerun_cache_bytes;
	hs_warm_raise_nofile();
	/* as warm: 0 done, 1 some files not warmed, 2 nothing warmed (run does not read it) */
	if (hs_warm_profile(profile, &o, &st, &err))
		_exit(2);
	_exit(st.skipped_files ? 1 : 0);
}

/*
 * While only jobs that hardly wait for the disk run, warm the profile of
 * the next job that waits for a CPU alone, if its need fits beside
 * theirs: it then starts with its pages in the cache. One at a time.
 */
static void maybe_warm(struct hs_runq *q)
{
	char profile[PATH_MAX + 16];
	struct hs_sched_job *v;
	pid_t parent = getpid(), pid;
	struct hs_runq_job *j;
	ssize_t k;

	if (q->warm_fd >= 0 || *q->stop || q->halted)
		return;
	if (!(v = malloc((q->n ? q->n : 1) * sizeof(*v))))
		return;
	for (size_t i = 0; i < q->n; i++)
		v[i] = q->jobs[i].s;
	k = hs_sched_warm_next(&q->sched, v, q->n);
	free(v);
	if (k < 0)
		return;
	j = &q->jobs[k];
	assert(j->s.state == HS_Q_PENDING && !j->s.warmed);
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
	j->s.warmed = true;
}

static void reap_warmer(struct hs_runq *q, bool stop)
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

/*
 * Start what may start, one job after another, each chosen by sched.c on
 * the running ones as they now are. Updates *running and *pending;
 * returns -1 when a job could not be started (or no memory to choose).
 */
static int start_ready(struct hs_runq *q, size_t *running, size_t *pending)
{
	ssize_t next;

	while (!*q->stop && !q->halted && !q->state_lost && *pending) {
		struct hs_sched_job *v = malloc(q->n * sizeof(*v));

		if (!v)
			return -1;
		hs_runq_read_pressure(q);
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
		if (start_job(q, &q->jobs[next]) < 0)
			return -1;
		(*running)++, (*pending)--;
	}
	return 0;
}

int hs_runq_local(struct hs_runq *q)
{
	struct pollfd *pfd = calloc(q->n + 2, sizeof(*pfd));
	struct hs_runq_job **who = calloc(q->n + 2, sizeof(*who));
	bool failed = false;
	int rc = 0;

	if (!pfd || !who) {
		free(pfd), free(who);
		hs_runq_say(q, HS_RUNQ_ERROR, "out of memory");
		return -1;
	}
	for (;;) {
		size_t running = 0, pending = 0, npfd = 1;

		for (size_t i = 0; i < q->n; i++) {
			running += q->jobs[i].s.state == HS_Q_RUNNING;
			pending += q->jobs[i].s.state == HS_Q_PENDING;
		}
		/* start what may start */
		if (!failed && start_ready(q, &running, &pending) < 0)
			failed = true;
		if (!*q->stop && !failed)
			maybe_warm(q);
		if (q->ops.progress)
			q->ops.progress(q->ops.ctx, q, false);
		if (!running) {
			reap_warmer(q, true);
			break;
		}
		pfd[0] = (struct pollfd){ .fd = q->wake[0], .events = POLLIN };
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
			hs_runq_say(q, HS_RUNQ_ERROR, "poll: %s", strerror(errno));
			rc = -1;
			break;
		}
		if (pfd[0].revents & POLLIN) {
			char buf[64];

			if (read(q->wake[0], buf, sizeof(buf)) < 0) {
				/* nothing to do: *q->stop says it */
			}
		}
		if (*q->stop) {
			reap_warmer(q, true);
			/* once to each running job; none starts any more */
			for (size_t i = 0; i < q->n; i++) {
				struct hs_runq_job *j = &q->jobs[i];

				if (j->s.state == HS_Q_RUNNING && !j->signalled) {
					kill(j->pid, *q->stop);
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
	if (q->ops.progress)
		q->ops.progress(q->ops.ctx, q, true);
	free(pfd);
	free(who);
	return failed ? -1 : rc;
}

/* ---- a queue killed before ------------------------------------------------- */

/*
 * A job the killed queue left running, with its supervisor gone: kill
 * what is left in its cgroup, so that it does not complete beside its
 * re-run. Returns how many processes were killed.
 */
unsigned hs_runq_stop_leftovers(const struct hs_runq_job *j)
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

