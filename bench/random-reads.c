/*
 * bench/random-reads.c - a job made of many small reads at random places:
 * N reads of 4 KiB (pread) at pseudo-random pages of FILE. Each is an
 * access of its own in a trace (`hotset record --trace`), so the eBPF
 * backend sends an event for each: what keeping every access costs.
 *
 *   random-reads FILE N
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	static char buf[4096];
	unsigned long long seed = 88172645463325252ull;
	long n, pages;
	int fd;

	if (argc != 3 || (fd = open(argv[1], O_RDONLY | O_CLOEXEC)) < 0) {
		fprintf(stderr, "usage: random-reads FILE N\n");
		return 2;
	}
	n = atol(argv[2]);
	pages = lseek(fd, 0, SEEK_END) / (long)sizeof(buf);
	if (pages <= 0)
		return 2;
	for (long i = 0; i < n; i++) {
		seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;	/* xorshift64 */
		if (pread(fd, buf, sizeof(buf), (off_t)(seed % (unsigned long long)pages) * 4096) < 0) {
			perror("pread");
			return 1;
		}
	}
	return 0;
}
