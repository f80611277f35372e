/*
 * maxrss - run a command and print its peak resident set size in KiB on
 * standard error, then exit with its status:
 *
 *   maxrss CMD [ARGS...]
 *
 * Like `/usr/bin/time -f %M`, which may not be installed. The peak a
 * kernel keeps for a process covers the image it had before exec, so the
 * measuring process itself must be small: a shell or Python would count
 * their own megabytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct rusage ru;
	int status;
	pid_t pid;

	if (argc < 2) {
		fprintf(stderr, "usage: maxrss CMD [ARGS...]\n");
		return 2;
	}
	pid = fork();
	if (pid < 0) {
		perror("maxrss: fork");
		return 125;
	}
	if (pid == 0) {
		execvp(argv[1], argv + 1);
		perror(argv[1]);
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) < 0) {
		perror("maxrss: wait4");
		return 125;
	}
	fprintf(stderr, "%ld\n", ru.ru_maxrss);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
