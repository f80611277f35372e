/*
 * job.c - fork and exec the user's command, and report how that went.
 *
 * The child reports a failure before or at exec through a close-on-exec
 * pipe: a successful exec closes it empty, so the parent reads either
 * nothing (the command runs) or the errno and the stage that failed. That
 * is how "command not found" (127) is told from a command that itself
 * exits 127.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "job/job.h"
#include "kernel/cgroup.h"

enum stage { STAGE_CGROUP = 1, STAGE_SETUP, STAGE_EXEC };

/* The caller's SIGCHLD, if hs_job_claim_sigchld() took it back: jobs get it */
static struct sigaction caller_sigchld;
static bool sigchld_claimed;

struct exec_report {
	int err;
	int stage;
};

static const char *stage_name(int stage)
{
	return stage == STAGE_CGROUP ? "cgroup" : stage == STAGE_SETUP ? "setup" : "exec";
}

/* In the child: report and leave. Only async-signal-safe calls. */
static _Noreturn void child_fail(int fd, int err, int stage)
{
	struct exec_report rep = { err, stage };
	ssize_t n = write(fd, &rep, sizeof(rep));

	(void)n;
	_exit(hs_job_failure_code(err, stage_name(stage)));
}

int hs_job_start(const struct hs_job_spec *spec, struct hs_job *job)
{
	int pipefd[2], rc;
	pid_t pid;

	pid_t parent = getpid();

	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		rc = -errno;
		close(pipefd[0]);
		close(pipefd[1]);
		return rc;
	}
	if (pid == 0) {
		close(pipefd[0]);
		setpgid(0, 0);	/* a group of its own: see "signals" below */
		/*
		 * A SIGKILL for hotset's group reaches hotset alone (it cannot be
		 * passed on): the first process goes with hotset, as it would bare.
		 */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != parent)
			child_fail(pipefd[1], errno ? errno : ESRCH, STAGE_SETUP);
		if (sigchld_claimed)
			sigaction(SIGCHLD, &caller_sigchld, NULL);
		if (spec->cgroup_procs && (rc = hs_cgroup_enter(spec->cgroup_procs)))
			child_fail(pipefd[1], -rc, STAGE_CGROUP);
		if (spec->before_exec && (rc = spec->before_exec(spec->ctx)))
			child_fail(pipefd[1], -rc, STAGE_SETUP);
		execvp(spec->argv[0], spec->argv);
		child_fail(pipefd[1], errno, STAGE_EXEC);
	}
	close(pipefd[1]);
	/* the child does it too: whichever runs first, the group exists before kill(-pid) */
	setpgid(pid, pid);
	job->pid = pid;
	job->status_fd = pipefd[0];
	return 0;
}

int hs_job_exec_result(struct hs_job *job, const char **stage)
{
	struct exec_report rep;
	ssize_t n;

	if (job->status_fd < 0)
		return 0;
	do
		n = read(job->status_fd, &rep, sizeof(rep));
	while (n < 0 && errno == EINTR);
	close(job->status_fd);
	job->status_fd = -1;
	if (n != (ssize_t)sizeof(rep))
		return 0;	/* closed empty by a successful exec */
	if (stage)
		*stage = stage_name(rep.stage);
	return -rep.err;
}

int hs_job_failure_code(int err, const char *stage)
{
	if (strcmp(stage, "exec"))
		return 125;
	return err == ENOENT ? 127 : 126;
}

const char *hs_job_start_failure_text(char *buf, size_t cap, const char *command, int err,
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

int hs_job_exit_code(int wait_status)
{
	if (WIFEXITED(wait_status))
		return WEXITSTATUS(wait_status);
	if (WIFSIGNALED(wait_status))
		return 128 + WTERMSIG(wait_status);
	return 125;
}

/* ---- signals ------------------------------------------------------------ */

void hs_job_claim_sigchld(void)
{
	struct sigaction dfl;

	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	if (sigaction(SIGCHLD, &dfl, &caller_sigchld) == 0)
		sigchld_claimed = true;
}

/*
 * The job runs in a process group of its own, never in hotset's, so that no
 * single kill() reaches both: a signal for hotset's group (a supervisor's
 * kill -TERM -PGID, a CI runner cancelling a step), for hotset alone, or
 * from the terminal to hotset's group reaches hotset only, and hotset passes
 * it on to the job's group, which gets it once. Keeping the job in hotset's
 * group and passing on only what did not reach it cannot be done exactly:
 * kill(pid) and kill(-pgid) give the same siginfo (SI_USER, the sender's
 * pid), so any rule on it (sudo's without a pty skips senders of its own
 * group) delivers some group signals twice or loses some direct ones. sudo
 * with a pty, tini and dumb-init also put the command in a group of its own.
 *
 * The terminal then needs care, as a shell's job control does:
 *
 *  - Its foreground stays hotset's group, so that ^C and ^\ still reach
 *    the processes around hotset (a pipeline's other commands, make and its
 *    other jobs), and hotset passes them on. A job that reads the terminal
 *    or sets its modes from a background group is stopped by SIGTTIN or
 *    SIGTTOU; hotset then makes the job's group the foreground and continues
 *    it, as a shell does for a job it starts in the foreground. From then
 *    on the terminal signals reach the job directly (and hotset, no longer
 *    in the foreground, does not see them); hotset takes the foreground back
 *    when the job's first process ends.
 *  - A job stopped for job control (^Z, SIGTSTP, terminal access from the
 *    background, or any stop while it holds the terminal) stops hotset too,
 *    so that the shell sees its job stopped: hotset's whole group if the job
 *    held the terminal (the other processes of the shell's job did not get
 *    ^Z), else hotset alone. Continued (fg, bg), hotset continues the job,
 *    giving it the terminal back if it had it and hotset is in the
 *    foreground. Without a controlling terminal there is no job control to
 *    follow: a job that stops waits, as it would bare, for whoever stops it
 *    to continue it.
 *
 * One sent by a process of the job's own group is not passed back to it: it
 * reached whom it meant to (kill(-1) from the job reaches the job and hotset).
 */
static const int forwarded[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2 };
static const int job_control[] = { SIGTSTP, SIGCONT, SIGWINCH, SIGCHLD, SIGTTOU };
#define NFWD (sizeof(forwarded) / sizeof(forwarded[0]))
#define NCTL (sizeof(job_control) / sizeof(job_control[0]))
static struct sigaction saved[NFWD + NCTL];
static volatile sig_atomic_t job_pgrp, first_signal, continued, resume_with_tty;
static int tty_fd = -1;

void hs_job_signal_set(sigset_t *set)
{
	sigemptyset(set);
	for (size_t i = 0; i < NFWD; i++)
		sigaddset(set, forwarded[i]);
}

/*
 * Has a process of the job's group sent this? (async-signal-safe) Asked
 * after the fact: a sender already gone (a short-lived kill(1)) is not
 * known, and its signal is passed on to the job once more.
 */
static bool from_the_job(const siginfo_t *si)
{
	if (si->si_code != SI_USER && si->si_code != SI_QUEUE && si->si_code != SI_TKILL)
		return false;
	return si->si_pid > 0 && getpgid(si->si_pid) == (pid_t)job_pgrp;
}

static pid_t foreground(void)
{
	return tty_fd >= 0 ? tcgetpgrp(tty_fd) : -1;
}

/* Give the terminal to the job's group (hotset ignores SIGTTOU meanwhile). */
static void hand_over_terminal(void)
{
	if (foreground() == getpgrp())
		tcsetpgrp(tty_fd, (pid_t)job_pgrp);
}

static void forward(int sig, siginfo_t *si, void *uctx)
{
	int saved_errno = errno;

	(void)uctx;
	if (job_pgrp <= 0 || from_the_job(si))
		goto out;
	if (sig == SIGCONT) {
		continued = 1;
		if (resume_with_tty && foreground() == getpgrp()) {
			hand_over_terminal();
			resume_with_tty = 0;
		}
	} else if (!first_signal && sig != SIGTSTP && sig != SIGWINCH && sig != SIGUSR1 &&
		   sig != SIGUSR2) {
		first_signal = sig;
	}
	killpg((pid_t)job_pgrp, sig);
out:
	errno = saved_errno;
}

/*
 * Stop hotset (its group if all is true) with sig, as the job was; back
 * here once continued. If the stop was discarded (the kernel drops SIGTSTP,
 * SIGTTIN and SIGTTOU for an orphaned process group, where nobody could
 * continue it), the job would not have stopped bare either: continue it.
 * Async-signal-safe.
 */
static void stop_like_the_job(int sig, bool all)
{
	struct sigaction dfl, old;
	sigset_t one, mask;

	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	sigaction(sig, &dfl, &old);
	sigemptyset(&one);
	sigaddset(&one, sig);
	sigprocmask(SIG_UNBLOCK, &one, &mask);
	continued = 0;
	kill(all ? 0 : getpid(), sig);
	/* stopped here, until a SIGCONT (its handler has run when kill returns) */
	sigprocmask(SIG_SETMASK, &mask, NULL);
	sigaction(sig, &old, NULL);
	if (!continued)
		killpg((pid_t)job_pgrp, SIGCONT);
}

/* The job's first process stopped with sig (async-signal-safe). */
static void job_stopped(int sig)
{
	pid_t fg = foreground();

	if (fg < 0 || job_pgrp <= 0)
		return;	/* no terminal, no job control: the job waits for whoever stopped it */
	if ((sig == SIGTTIN || sig == SIGTTOU) && fg == getpgrp()) {
		hand_over_terminal();	/* it wants the terminal its group would have had */
		killpg((pid_t)job_pgrp, SIGCONT);
		return;
	}
	if (fg == (pid_t)job_pgrp) {	/* it holds the terminal: the shell must get it back */
		resume_with_tty = 1;
		stop_like_the_job(sig == SIGSTOP ? SIGTSTP : sig, true);
	} else if (sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU) {
		resume_with_tty = sig != SIGTSTP;
		stop_like_the_job(sig, false);
	}
	/* SIGSTOP in the background: its sender will continue it */
}

static void on_sigchld(int sig, siginfo_t *si, void *uctx)
{
	int saved_errno = errno;

	(void)sig, (void)uctx;
	if (si->si_code == CLD_STOPPED && si->si_pid == (pid_t)job_pgrp)
		job_stopped(si->si_status);
	errno = saved_errno;
}

void hs_job_stopped(int sig)
{
	job_stopped(sig);
}

int hs_job_forward_signals(pid_t pid)
{
	struct sigaction sa, ign;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = forward;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	job_pgrp = pid;
	if (tty_fd < 0)
		tty_fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
	for (i = 0; i < NFWD + NCTL; i++) {
		int sig = i < NFWD ? forwarded[i] : job_control[i - NFWD];
		struct sigaction *act = &sa, chld = sa;

		if (sig == SIGCHLD) {
			chld.sa_sigaction = on_sigchld;
			act = &chld;
		} else if (sig == SIGTTOU) {
			act = &ign;	/* hotset writes, and sets the foreground, from the background */
		}
		if (sigaction(sig, act, &saved[i]) < 0)
			return -errno;
	}
	return 0;
}

static sigset_t mask_before_hold;
static bool holding;

void hs_job_stop_forwarding(void)
{
	sigset_t hold;

	hs_job_signal_set(&hold);
	if (!holding && sigprocmask(SIG_BLOCK, &hold, &mask_before_hold) == 0)
		holding = true;
	/* the job is over: its terminal goes back to hotset's group (and the shell's) */
	if (foreground() == (pid_t)job_pgrp && job_pgrp > 0)
		tcsetpgrp(tty_fd, getpgrp());
	for (size_t i = 0; i < NFWD + NCTL; i++)
		sigaction(i < NFWD ? forwarded[i] : job_control[i - NFWD], &saved[i], NULL);
	job_pgrp = 0;
	if (tty_fd >= 0)
		close(tty_fd);
	tty_fd = -1;
}

void hs_job_release_signals(void)
{
	if (holding) {
		holding = false;
		sigprocmask(SIG_SETMASK, &mask_before_hold, NULL);
	}
}

int hs_job_signal_received(void)
{
	return first_signal;
}

/* ---- waiting -------------------------------------------------------------- */

int hs_job_become_subreaper(void)
{
	return prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0 ? -errno : 0;
}

/* Children of any of our threads, from /proc/self/task/TID/children. */
static int count_children(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;
	int n = 0;

	if (!d)
		return 1;	/* at least one, or waitpid would have said ECHILD */
	while ((de = readdir(d))) {
		char path[300], buf[4096];
		ssize_t len;
		int fd;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/children", de->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		while ((len = read(fd, buf, sizeof(buf))) > 0)
			for (ssize_t i = 0; i < len; i++)
				n += buf[i] == ' ';	/* each pid is followed by a space */
		close(fd);
	}
	closedir(d);
	return n ? n : 1;
}

int hs_job_wait_all(const struct hs_job *job, int *status)
{
	int running = 0;
	pid_t pid;

	while (waitpid(job->pid, status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	/* orphans that have exited already: reap them so that they count */
	while ((pid = waitpid(-1, NULL, WNOHANG)) > 0)
		;
	if (pid == 0)	/* some children are still running */
		running = count_children();
	return running;
}

/* ---- the gate ------------------------------------------------------------- */

int hs_job_gate_init(struct hs_job_gate *g)
{
	int fds[2];

	if (pipe2(fds, O_CLOEXEC) < 0) {
		g->rfd = g->wfd = -1;
		return -errno;
	}
	g->rfd = fds[0];
	g->wfd = fds[1];
	return 0;
}

int hs_job_gate_wait(const struct hs_job_gate *g)
{
	ssize_t n;
	char c;

	close(g->wfd);	/* the child's copy: EOF must mean the caller is gone */
	do
		n = read(g->rfd, &c, 1);
	while (n < 0 && errno == EINTR);
	return n == 1 ? 0 : -ECANCELED;
}

int hs_job_gate_open(struct hs_job_gate *g)
{
	int rc = write(g->wfd, "g", 1) == 1 ? 0 : -errno;

	hs_job_gate_close(g);
	return rc;
}

void hs_job_gate_close(struct hs_job_gate *g)
{
	if (g->rfd >= 0)
		close(g->rfd);
	if (g->wfd >= 0)
		close(g->wfd);
	g->rfd = g->wfd = -1;
}
