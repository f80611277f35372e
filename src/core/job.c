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

#include "hotset/job.h"

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

/* Write "0" (ourselves) to a cgroup.procs file. */
static int join_cgroup(const char *procs)
{
	int fd = open(procs, O_WRONLY | O_CLOEXEC);
	int rc = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, "0", 1) != 1)
		rc = -errno;
	close(fd);
	return rc;
}

int hs_job_start(const struct hs_job_spec *spec, struct hs_job *job)
{
	int pipefd[2], rc;
	pid_t pid;

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
		if (sigchld_claimed)
			sigaction(SIGCHLD, &caller_sigchld, NULL);
		if (spec->cgroup_procs && (rc = join_cgroup(spec->cgroup_procs)))
			child_fail(pipefd[1], -rc, STAGE_CGROUP);
		if (spec->before_exec && (rc = spec->before_exec(spec->ctx)))
			child_fail(pipefd[1], -rc, STAGE_SETUP);
		execvp(spec->argv[0], spec->argv);
		child_fail(pipefd[1], errno, STAGE_EXEC);
	}
	close(pipefd[1]);
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

static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
static struct sigaction saved[sizeof(forwarded) / sizeof(forwarded[0])];
static volatile sig_atomic_t target_pid, first_signal;

static void forward(int sig, siginfo_t *si, void *uctx)
{
	(void)uctx;
	/* the terminal's signals (SI_KERNEL) went to the job's group already */
	if (si->si_code == SI_KERNEL)
		return;
	if (!first_signal)
		first_signal = sig;
	if (target_pid > 0)
		kill((pid_t)target_pid, sig);
}

int hs_job_forward_signals(pid_t pid)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = forward;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	target_pid = pid;
	for (size_t i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
		if (sigaction(forwarded[i], &sa, &saved[i]) < 0)
			return -errno;
	return 0;
}

static sigset_t mask_before_hold;
static bool holding;

void hs_job_stop_forwarding(void)
{
	sigset_t hold;

	sigemptyset(&hold);
	for (size_t i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
		sigaddset(&hold, forwarded[i]);
	if (!holding && sigprocmask(SIG_BLOCK, &hold, &mask_before_hold) == 0)
		holding = true;
	for (size_t i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
		sigaction(forwarded[i], &saved[i], NULL);
	target_pid = 0;
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
