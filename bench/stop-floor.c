/*
 * bench/stop-floor.c - the least that a recorder which looks at every
 * close(2) can cost a job: run CMD, stop each of its processes at each
 * close and let it go on at once, reading nothing. bench/record.sh runs it
 * next to hotset record --backend=ptrace, which also reads the file's
 * position and names the file at each such stop.
 *
 * Two ways to stop, so that the floor is not one mechanism's cost:
 *
 *   ptrace   a seccomp filter returning SECCOMP_RET_TRACE, as hotset's
 *            does; the tracer follows forks and resumes with PTRACE_CONT
 *   notify   a seccomp filter returning SECCOMP_RET_USER_NOTIF, inherited
 *            by every descendant; the supervisor answers each notification
 *            with SECCOMP_USER_NOTIF_FLAG_CONTINUE (no ptrace at all)
 *
 * Like hotset's tracer, both poll for the next stop for up to 50 µs after
 * a wait shorter than that.
 *
 *   stop-floor [--notify] CMD [ARGS...]     exits with CMD's status
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SPIN_NS 50000

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int install_filter(__u32 action, unsigned int flags)
{
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_close, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, action),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(filter) / sizeof(filter[0]), filter };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
}

static int exit_code(int status)
{
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* ---- ptrace --------------------------------------------------------------------- */

static pid_t wait_next(bool *spin, int *status)
{
	long long t0 = now_ns();
	pid_t pid;

	if (*spin) {
		do {
			if ((pid = waitpid(-1, status, __WALL | WNOHANG)) != 0)
				return pid;
		} while (now_ns() - t0 < SPIN_NS);
	}
	pid = waitpid(-1, status, __WALL);
	*spin = now_ns() - t0 < SPIN_NS;
	return pid;
}

static int floor_ptrace(char **argv)
{
	const long options = PTRACE_O_TRACESECCOMP | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |
			     PTRACE_O_TRACECLONE | PTRACE_O_EXITKILL;
	int status, code = 125;
	bool spin = false;
	pid_t job, pid;

	job = fork();
	if (job < 0)
		return 125;
	if (job == 0) {
		raise(SIGSTOP);	/* until the tracer has seized us */
		if (install_filter(SECCOMP_RET_TRACE, 0) < 0)
			_exit(125);
		execvp(argv[0], argv);
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
				code = exit_code(status);
			continue;
		}
		/* event stops (seccomp, fork, a new child's first stop) go on as
		   they are; a signal-delivery stop passes the signal on */
		ptrace(PTRACE_CONT, pid, 0, status >> 16 ? 0 : WSTOPSIG(status));
	}
	return code;
}

/* ---- seccomp user notification ---------------------------------------------------- */

/* The job makes the listener (only a filter's own process can) and sends it over. */
static int pass_fd(int sock, int fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	char byte = 0;
	struct iovec iov = { &byte, 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };

	memset(&u, 0, sizeof(u));
	msg.msg_control = u.buf;
	if (fd >= 0) {
		msg.msg_controllen = sizeof(u.buf);
		CMSG_FIRSTHDR(&msg)->cmsg_level = SOL_SOCKET;
		CMSG_FIRSTHDR(&msg)->cmsg_type = SCM_RIGHTS;
		CMSG_FIRSTHDR(&msg)->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(CMSG_FIRSTHDR(&msg)), &fd, sizeof(int));
		return sendmsg(sock, &msg, 0) == 1 ? 0 : -1;
	}
	msg.msg_controllen = sizeof(u.buf);
	if (recvmsg(sock, &msg, 0) != 1 || !CMSG_FIRSTHDR(&msg) ||
	    CMSG_FIRSTHDR(&msg)->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(CMSG_FIRSTHDR(&msg)), sizeof(int));
	return fd;
}

/* Wait for the next notification; false once no process uses the filter. */
static bool wait_notification(int listener, bool *spin)
{
	struct pollfd p = { .fd = listener, .events = POLLIN };
	long long t0 = now_ns();
	int n = 0;

	if (*spin)
		while ((n = poll(&p, 1, 0)) == 0 && now_ns() - t0 < SPIN_NS)
			;
	while (n == 0 || (n < 0 && errno == EINTR))
		n = poll(&p, 1, -1);
	*spin = now_ns() - t0 < SPIN_NS;
	return n > 0 && !(p.revents & (POLLHUP | POLLERR));
}

static int floor_notify(char **argv)
{
	struct seccomp_notif_sizes sizes;
	int sock[2], listener, status;
	bool spin = false;
	char go = 0;
	pid_t job;

	if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) < 0 ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sock) < 0) {
		perror("stop-floor: no seccomp user notification");
		return 125;
	}
	job = fork();
	if (job < 0)
		return 125;
	if (job == 0) {
		listener = install_filter(SECCOMP_RET_USER_NOTIF, SECCOMP_FILTER_FLAG_NEW_LISTENER);
		/* closing the listener here would wait for an answer: exec closes it */
		if (listener < 0 || fcntl(listener, F_SETFD, FD_CLOEXEC) < 0 ||
		    pass_fd(sock[1], listener) < 0 || read(sock[1], &go, 1) != 1)
			_exit(125);
		execvp(argv[0], argv);
		_exit(127);
	}
	listener = pass_fd(sock[0], -1);
	if (listener < 0 || write(sock[0], &go, 1) != 1) {
		perror("stop-floor: cannot supervise the job");
		kill(job, SIGKILL);
		waitpid(job, &status, 0);
		return 125;
	}
	/* the kernel's structures may be larger than this program's */
	struct seccomp_notif *req = calloc(1, sizes.seccomp_notif);
	struct seccomp_notif_resp *resp = calloc(1, sizes.seccomp_notif_resp);

	if (!req || !resp)
		kill(job, SIGKILL);	/* it would wait for answers forever */
	while (req && resp && wait_notification(listener, &spin)) {
		memset(req, 0, sizes.seccomp_notif);
		if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, req) < 0)
			continue;	/* the call was interrupted: it comes again */
		memset(resp, 0, sizes.seccomp_notif_resp);
		resp->id = req->id;
		resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
		ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, resp);
	}
	free(req);
	free(resp);
	return waitpid(job, &status, 0) == job ? exit_code(status) : 125;
}

int main(int argc, char **argv)
{
	bool notify = argc > 1 && strcmp(argv[1], "--notify") == 0;

	if (argc < 2 + notify) {
		fprintf(stderr, "usage: stop-floor [--notify] CMD [ARGS...]\n");
		return 2;
	}
	return notify ? floor_notify(argv + 2) : floor_ptrace(argv + 1);
}
