/*
 * bench/stop-floor.c - the least that a ptrace recorder which looks at
 * every close(2) can cost a job: run CMD, stop each of its processes at
 * each close (a seccomp filter returning SECCOMP_RET_TRACE, as hotset's
 * does) and let it go on at once, reading nothing. bench/record.sh runs it
 * next to hotset record --backend=ptrace, which also reads the file's
 * position and names the file at each such stop. Like hotset's tracer, it
 * polls for the next stop for up to 50 µs after a wait shorter than that.
 *
 *   stop-floor CMD [ARGS...]     exits with CMD's status
 */
#define _GNU_SOURCE
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static pid_t wait_next(int *spin, int *status)
{
	long long t0 = now_ns();
	pid_t pid;

	if (*spin) {
		do {
			if ((pid = waitpid(-1, status, __WALL | WNOHANG)) != 0)
				return pid;
		} while (now_ns() - t0 < 50000);
	}
	pid = waitpid(-1, status, __WALL);
	*spin = now_ns() - t0 < 50000;
	return pid;
}

int main(int argc, char **argv)
{
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_close, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRACE),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(filter) / sizeof(filter[0]), filter };
	const long options = PTRACE_O_TRACESECCOMP | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |
			     PTRACE_O_TRACECLONE | PTRACE_O_EXITKILL;
	int status, code = 125, spin = 0;
	pid_t job, pid;

	if (argc < 2) {
		fprintf(stderr, "usage: stop-floor CMD [ARGS...]\n");
		return 2;
	}
	job = fork();
	if (job < 0)
		return 125;
	if (job == 0) {
		raise(SIGSTOP);	/* until the tracer has seized us */
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
		    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog))
			_exit(125);
		execvp(argv[1], argv + 1);
		_exit(127);
	}
	if (waitpid(job, &status, WUNTRACED) != job || !WIFSTOPPED(status) ||
	    ptrace(PTRACE_SEIZE, job, 0, options) < 0 || kill(job, SIGCONT) < 0) {
		perror("stop-floor: cannot trace the job");
		kill(job, SIGKILL);
		return 125;
	}
	while ((pid = wait_next(&spin, &status)) > 0) {
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			if (pid == job)
				code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
			continue;
		}
		/* event stops (seccomp, fork, a new child's first stop) go on as
		   they are; a signal-delivery stop passes the signal on */
		ptrace(PTRACE_CONT, pid, 0, status >> 16 ? 0 : WSTOPSIG(status));
	}
	return code;
}
