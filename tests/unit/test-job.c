/*
 * test-job.c - running the user's command as if bare (job.h): the exit
 * statuses that tell a start that failed (125, 126, 127) from the
 * command's own, the caller's environment and PATH, a process group of
 * the job's own in the caller's session, each signal passed on once and
 * none passed back, the signals that come after the job held until
 * released, SIGCHLD, the gate, and the orphans a subreaper counts.
 *
 * The jobs that must do something precise are this binary again
 * (/proc/self/exe, "helper ..."): see helper() at the end.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/prctl.h>
#include <sys/stat.h>

#include "job/job.h"
#include "scratch.h"
#include "unit.h"

/* The job: this binary, as helper mode (then its arguments). */
#define HELPER(...) ((char *[]){ "/proc/self/exe", "helper", __VA_ARGS__, NULL })

/* Start spec's job, and wait until it has exec'd; the errno of a failed start (0: it runs). */
static int start(const struct hs_job_spec *spec, struct hs_job *job, const char **stage)
{
	int rc = hs_job_start(spec, job);

	CHECK(rc == 0);
	if (rc)
		_exit(1);
	return hs_job_exec_result(job, stage);
}

/* The exit status of the job's first process, waited for; -1 if not an exit. */
static int exit_status(const struct hs_job *job)
{
	int status = 0;

	while (waitpid(job->pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/*
 * A pipe, both ends closed on exec: a job gets one end as its stdin
 * (dup2() onto 0, which clears that) or as an fd named in its arguments
 * (shared()); the other end is ours alone, so that closing it is an end
 * of file for the job and whatever it leaves behind.
 */
static void new_pipe(int fds[2])
{
	if (pipe2(fds, O_CLOEXEC)) {
		perror("pipe2");
		_exit(1);
	}
}

/* fd, kept open in the jobs started from now on, as a number for their arguments. */
static char *shared(int fd)
{
	static char buf[4][16];
	static int next;
	char *s = buf[next++ & 3];

	fcntl(fd, F_SETFD, 0);
	snprintf(s, 16, "%d", fd);
	return s;
}

/* A line from fd, without its newline ("" at end of file). */
static const char *read_line(int fd)
{
	static char buf[256];
	size_t n = 0;
	ssize_t got;

	while (n < sizeof(buf) - 1 && (got = read(fd, buf + n, 1)) != 0) {
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0 || buf[n] == '\n')
			break;
		n++;
	}
	buf[n] = '\0';
	return buf;
}

/* ---- exit statuses ------------------------------------------------------- */

TEST(a_command_of_its_own_exiting_127_is_told_from_one_not_found)
{
	struct hs_job job;
	struct hs_job_spec spec = { .argv = (char *[]){ "sh", "-c", "exit 127", NULL } };

	CHECK(start(&spec, &job, NULL) == 0);	/* it ran: its 127 is its own */
	CHECK(exit_status(&job) == 127);
}

TEST(a_command_not_found_exits_127_after_saying_enoent_at_exec)
{
	struct hs_job job;
	struct hs_job_spec spec = { .argv = (char *[]){ "hotset-unit-no-such-command", NULL } };
	const char *stage = NULL;

	CHECK(start(&spec, &job, &stage) == -ENOENT);
	CHECK_STR(stage, "exec");
	CHECK(hs_job_failure_code(ENOENT, stage) == 127);
	CHECK(exit_status(&job) == 127);
	CHECK(job.status_fd == -1);
	CHECK(hs_job_exec_result(&job, NULL) == 0);	/* told once; asked again, nothing left */
}

/* Root too: exec wants an execute bit, and a directory is never executed. */
TEST(a_file_that_cannot_be_executed_exits_126)
{
	const char *what[] = { "plain", "" };
	struct hs_job job;
	int fd;

	scratch_dir();
	fd = open(path_in("plain"), O_WRONLY | O_CREAT, 0644);
	CHECK(fd >= 0 && write(fd, "#!/bin/sh\nexit 0\n", 17) == 17);
	close(fd);
	for (size_t i = 0; i < sizeof(what) / sizeof(what[0]); i++) {
		struct hs_job_spec spec = { .argv = (char *[]){ path_in(what[i]), NULL } };
		const char *stage = NULL;

		CHECK(start(&spec, &job, &stage) == -EACCES);
		CHECK_STR(stage, "exec");
		CHECK(hs_job_failure_code(EACCES, stage) == 126);
		CHECK(exit_status(&job) == 126);
	}
	scratch_done();
}

static int refuse(void *ctx)
{
	return -*(int *)ctx;
}

/* What fails before exec is hotset's failure, whatever its errno: never 126 or 127. */
TEST(a_setup_or_a_cgroup_that_fails_exits_125_with_its_errno)
{
	int err = ENOENT;
	struct hs_job job;
	struct hs_job_spec setup = { .argv = (char *[]){ "true", NULL }, .before_exec = refuse,
				     .ctx = &err };
	struct hs_job_spec cgroup = { .argv = (char *[]){ "true", NULL },
				      .cgroup_procs = "/nonexistent/hotset-unit/cgroup.procs" };
	const char *stage = NULL;

	CHECK(start(&setup, &job, &stage) == -ENOENT);
	CHECK_STR(stage, "setup");
	CHECK(hs_job_failure_code(ENOENT, stage) == 125);
	CHECK(exit_status(&job) == 125);

	stage = NULL;
	CHECK(start(&cgroup, &job, &stage) == -ENOENT);
	CHECK_STR(stage, "cgroup");
	CHECK(exit_status(&job) == 125);
}

TEST(exit_codes_mirror_wait_statuses)
{
	int status = 0;
	pid_t pid;

	if ((pid = fork()) == 0)
		_exit(3);
	CHECK(waitpid(pid, &status, 0) == pid && hs_job_exit_code(status) == 3);
	if ((pid = fork()) == 0) {
		raise(SIGKILL);
		_exit(0);
	}
	CHECK(waitpid(pid, &status, 0) == pid && hs_job_exit_code(status) == 128 + SIGKILL);
	/* neither an exit nor a signal that ended it (a stop): a failure of hotset's */
	if ((pid = fork()) == 0) {
		raise(SIGSTOP);
		_exit(0);
	}
	CHECK(waitpid(pid, &status, WUNTRACED) == pid && WIFSTOPPED(status));
	CHECK(hs_job_exit_code(status) == 125);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
}

/* ---- what the job gets --------------------------------------------------- */

TEST(the_job_gets_the_callers_environment_streams_and_path)
{
	const char *script = "#!/bin/sh\nread line\necho \"$HOTSET_UNIT_VAR/$line\"\n";
	int in[2], out[2], fd, saved_in, saved_out;
	char path[4096];
	struct hs_job job;
	struct hs_job_spec spec = { .argv = (char *[]){ "hotset-unit-tool", NULL } };

	scratch_dir();
	fd = open(path_in("hotset-unit-tool"), O_WRONLY | O_CREAT, 0755);
	CHECK(fd >= 0 && write(fd, script, strlen(script)) == (ssize_t)strlen(script));
	close(fd);
	snprintf(path, sizeof(path), "%s:%s", scratch, getenv("PATH") ? getenv("PATH") : "/bin");
	setenv("PATH", path, 1);
	setenv("HOTSET_UNIT_VAR", "a b", 1);
	/* its stdin and stdout are ours, for a while: pipes */
	new_pipe(in);
	new_pipe(out);
	fflush(stdout);
	saved_in = dup(0);
	saved_out = dup(1);
	dup2(in[0], 0);
	dup2(out[1], 1);
	CHECK(start(&spec, &job, NULL) == 0);
	dup2(saved_in, 0);
	dup2(saved_out, 1);
	close(in[0]);
	close(out[1]);
	CHECK(write(in[1], "c\n", 2) == 2);
	CHECK_STR(read_line(out[0]), "a b/c");
	CHECK(exit_status(&job) == 0);
	scratch_done();
}

TEST(the_job_leads_a_process_group_of_its_own_in_the_callers_session)
{
	int in[2];
	struct hs_job job;
	struct hs_job_spec spec = { .argv = HELPER("wait") };

	new_pipe(in);
	dup2(in[0], 0);
	CHECK(start(&spec, &job, NULL) == 0);
	CHECK(getpgid(job.pid) == job.pid);
	CHECK(getpgrp() != job.pid);
	CHECK(getsid(job.pid) == getsid(0));
	close(in[1]);
	CHECK(exit_status(&job) == 0);
}

/* ---- signals ------------------------------------------------------------- */

static volatile sig_atomic_t caught;

static void count(int sig)
{
	(void)sig;
	caught++;
}

/* The job signals its parent (kill(-1) would too): it reached whom it meant to. */
TEST(a_signal_from_the_job_is_not_passed_back_to_it)
{
	int in[2], said[2];
	struct hs_job job;

	new_pipe(in);
	new_pipe(said);
	dup2(in[0], 0);
	struct hs_job_spec spec = { .argv = HELPER("count", shared(said[1]), "parent") };

	CHECK(start(&spec, &job, NULL) == 0);
	close(said[1]);
	CHECK_STR(read_line(said[0]), "ready");
	CHECK(hs_job_forward_signals(job.pid) == 0);
	CHECK(write(in[1], "g", 1) == 1);	/* now it may send */
	/*
	 * It sends, then says so: the signal was pending here before the
	 * line came, so the handler has run (and passed it on or not) when
	 * the line is read, and what it passed on reached the job before the
	 * end of file that follows.
	 */
	CHECK_STR(read_line(said[0]), "sent");
	close(in[1]);
	CHECK(exit_status(&job) == 0);
	hs_job_stop_forwarding();
	hs_job_release_signals();
}

TEST(a_termination_signal_is_passed_on_and_remembered)
{
	struct hs_job job;
	struct hs_job_spec spec = { .argv = (char *[]){ "sleep", "1000", NULL } };
	int status = 0;

	CHECK(start(&spec, &job, NULL) == 0);	/* sleep's own SIGTERM, not our handler's */
	CHECK(hs_job_forward_signals(job.pid) == 0);
	CHECK(kill(getpid(), SIGTERM) == 0);	/* this process lives: the handler is hotset's */
	CHECK(hs_job_wait_all(&job, &status) == 0);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
	CHECK(hs_job_exit_code(status) == 128 + SIGTERM);
	CHECK(hs_job_signal_received() == SIGTERM);
	hs_job_stop_forwarding();
	hs_job_release_signals();
}

/*
 * Once the job is over, a signal waits until the caller has finished
 * (written its report): then it acts, with the caller's own disposition
 * back in place.
 */
TEST(a_signal_after_the_job_is_held_until_released)
{
	struct hs_job job;
	struct hs_job_spec spec = { .argv = (char *[]){ "true", NULL } };
	sigset_t pending;
	int status = 0;

	signal(SIGTERM, count);
	CHECK(start(&spec, &job, NULL) == 0);
	CHECK(hs_job_forward_signals(job.pid) == 0);
	CHECK(hs_job_wait_all(&job, &status) == 0 && hs_job_exit_code(status) == 0);
	hs_job_stop_forwarding();
	CHECK(kill(getpid(), SIGTERM) == 0);
	CHECK(caught == 0);
	CHECK(sigpending(&pending) == 0 && sigismember(&pending, SIGTERM));
	hs_job_release_signals();
	CHECK(caught == 1);
	CHECK(hs_job_signal_received() == 0);	/* it never reached a job */
}

/*
 * A caller that ignores SIGCHLD (inherited across exec) would have its
 * children reaped unseen: hotset takes it back, and gives the job the
 * caller's disposition.
 */
TEST(a_caller_ignoring_sigchld_still_waits_and_the_job_ignores_it_as_given)
{
	struct hs_job job;
	struct hs_job_spec spec = { .argv = HELPER("sigchld-ignored") };

	signal(SIGCHLD, SIG_IGN);
	hs_job_claim_sigchld();
	CHECK(start(&spec, &job, NULL) == 0);
	CHECK(exit_status(&job) == 0);
}

/* ---- the gate ------------------------------------------------------------ */

static int through_gate(void *ctx)
{
	return hs_job_gate_wait(ctx);
}

TEST(the_gate_holds_the_job_until_opened)
{
	struct hs_job_gate gate;
	struct hs_job job;
	struct hs_job_spec spec = { .argv = (char *[]){ "true", NULL }, .before_exec = through_gate,
				    .ctx = &gate };
	int status;

	CHECK(hs_job_gate_init(&gate) == 0);
	CHECK(hs_job_start(&spec, &job) == 0);
	/* held: not exec'd, not exited */
	CHECK(waitpid(job.pid, &status, WNOHANG) == 0);
	CHECK(hs_job_gate_open(&gate) == 0);
	CHECK(gate.rfd == -1 && gate.wfd == -1);
	CHECK(hs_job_exec_result(&job, NULL) == 0);
	CHECK(exit_status(&job) == 0);
}

TEST(a_gate_closed_unopened_makes_the_job_give_up)
{
	struct hs_job_gate gate;
	struct hs_job job;
	struct hs_job_spec spec = { .argv = (char *[]){ "true", NULL }, .before_exec = through_gate,
				    .ctx = &gate };
	const char *stage = NULL;

	CHECK(hs_job_gate_init(&gate) == 0);
	CHECK(hs_job_start(&spec, &job) == 0);
	hs_job_gate_close(&gate);
	CHECK(hs_job_exec_result(&job, &stage) == -ECANCELED);
	CHECK_STR(stage, "setup");
	CHECK(exit_status(&job) == 125);
}

/* ---- orphans ------------------------------------------------------------- */

/*
 * As subreaper, hotset gets the job's orphans: one that has exited is
 * reaped (its usage counted), one still running (a daemon) is counted and
 * not waited for.
 */
TEST(orphans_are_reaped_when_done_and_counted_while_running)
{
	int in[2], status = 0;
	struct hs_job job;
	struct hs_job_spec done = { .argv = HELPER("orphan", "exited") };
	struct hs_job_spec running = { .argv = HELPER("orphan", "running") };

	CHECK(hs_job_become_subreaper() == 0);
	CHECK(start(&done, &job, NULL) == 0);
	CHECK(hs_job_wait_all(&job, &status) == 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK(waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD);	/* nothing left */

	new_pipe(in);
	dup2(in[0], 0);
	close(in[0]);
	CHECK(start(&running, &job, NULL) == 0);
	CHECK(hs_job_wait_all(&job, &status) == 1);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(in[1]);	/* the orphan reads its end of file, and exits */
	CHECK(waitpid(-1, &status, 0) > 0 && WIFEXITED(status));
}

/* ---- the helper ---------------------------------------------------------- */

static int helper_fd = -1;
static volatile sig_atomic_t helper_got;

/* Count the signal, and say which (write() is async-signal-safe). */
static void helper_count(int sig)
{
	int saved = errno;
	ssize_t n = write(helper_fd, sig == SIGUSR1 ? "USR1\n" : "USR2\n", 5);

	(void)n;
	helper_got++;
	errno = saved;
}

/* Until end of file on stdin (read() is interrupted by the signals counted). */
static void helper_wait(void)
{
	char c;
	ssize_t n;

	while ((n = read(0, &c, 1)) != 0 && (n > 0 || errno == EINTR))
		;
}

/*
 * helper wait: until end of file on stdin, then exit 0.
 * helper count FD [parent]: count SIGUSR1 and SIGUSR2, saying "ready" on
 *   FD, then each signal's name as it comes; with "parent", read a byte
 *   from stdin, send SIGUSR1 to the parent and say "sent". At end of file
 *   on stdin, exit with the count.
 * helper sigchld-ignored: exit 0 if SIGCHLD is ignored here.
 * helper orphan exited|running: leave a child behind, ended or waiting
 *   for end of file on stdin, and exit 0.
 */
static int helper(int argc, char **argv)
{
	struct sigaction sa;
	pid_t pid;
	char c;

	if (argc == 3 && !strcmp(argv[2], "wait")) {
		helper_wait();
		return 0;
	}
	if (argc >= 4 && !strcmp(argv[2], "count")) {
		helper_fd = atoi(argv[3]);
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = helper_count;
		sigaction(SIGUSR1, &sa, NULL);
		sigaction(SIGUSR2, &sa, NULL);
		if (write(helper_fd, "ready\n", 6) != 6)
			return 100;
		if (argc == 5) {
			if (read(0, &c, 1) != 1 || kill(getppid(), SIGUSR1) ||
			    write(helper_fd, "sent\n", 5) != 5)
				return 100;
		}
		helper_wait();
		return helper_got;
	}
	if (argc == 3 && !strcmp(argv[2], "sigchld-ignored")) {
		sigaction(SIGCHLD, NULL, &sa);
		return sa.sa_handler == SIG_IGN ? 0 : 1;
	}
	if (argc == 4 && !strcmp(argv[2], "orphan")) {
		siginfo_t si;

		if ((pid = fork()) == 0) {
			if (!strcmp(argv[3], "running"))
				helper_wait();
			_exit(0);
		}
		if (pid < 0)
			return 100;
		/* an ended orphan: wait for its end, but leave it for the subreaper to reap */
		if (!strcmp(argv[3], "exited") && waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT))
			return 100;
		return 0;
	}
	return 101;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "helper"))
		return helper(argc, argv);
	return RUN_TESTS(a_command_of_its_own_exiting_127_is_told_from_one_not_found,
			 a_command_not_found_exits_127_after_saying_enoent_at_exec,
			 a_file_that_cannot_be_executed_exits_126,
			 a_setup_or_a_cgroup_that_fails_exits_125_with_its_errno,
			 exit_codes_mirror_wait_statuses,
			 the_job_gets_the_callers_environment_streams_and_path,
			 the_job_leads_a_process_group_of_its_own_in_the_callers_session,
			 a_signal_from_the_job_is_not_passed_back_to_it,
			 a_termination_signal_is_passed_on_and_remembered,
			 a_signal_after_the_job_is_held_until_released,
			 a_caller_ignoring_sigchld_still_waits_and_the_job_ignores_it_as_given,
			 the_gate_holds_the_job_until_opened,
			 a_gate_closed_unopened_makes_the_job_give_up,
			 orphans_are_reaped_when_done_and_counted_while_running);
}
