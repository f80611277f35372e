/*
 * pagetool - page-cache tricks for tests, independent of hotset's code:
 *
 *   pagetool evict FILE...              drop FILEs from the cache (DONTNEED)
 *   pagetool read FILE RANGE...         read exactly these pages (RANGE is
 *                                       PAGE or FIRST-LAST), readahead off
 *   pagetool resident FILE              print resident pages as "0-3,7"
 *                                       (mincore; "" if none)
 *   pagetool has-cachestat              exit 0 if cachestat(2) exists
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static void die(const char *what, const char *arg)
{
	fprintf(stderr, "pagetool: %s %s: %s\n", what, arg, strerror(errno));
	exit(1);
}

static int open_file(const char *path, struct stat *st)
{
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		die("cannot open", path);
	if (fstat(fd, st) < 0)
		die("cannot stat", path);
	return fd;
}

int main(int argc, char **argv)
{
	long ps = sysconf(_SC_PAGESIZE);
	struct stat st;

	if (argc >= 2 && !strcmp(argv[1], "has-cachestat")) {
		struct { unsigned long long off, len; } r = { 0, 0 };
		unsigned long long cs[5];

		return syscall(451, -1, &r, cs, 0) < 0 && errno == ENOSYS;
	}
	if (argc >= 3 && !strcmp(argv[1], "evict")) {
		for (int i = 2; i < argc; i++) {
			int fd = open_file(argv[i], &st);

			fdatasync(fd);
			posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
			close(fd);
		}
		return 0;
	}
	if (argc >= 4 && !strcmp(argv[1], "read")) {
		int fd = open_file(argv[2], &st);
		char *buf = malloc((size_t)ps);

		/* no readahead: each pread brings in exactly its page */
		posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
		for (int i = 3; i < argc; i++) {
			char *end;
			long first = strtol(argv[i], &end, 10), last = first;

			if (*end == '-')
				last = strtol(end + 1, &end, 10);
			for (long p = first; p <= last; p++)
				if (pread(fd, buf, 1, p * ps) < 0)
					die("cannot read", argv[2]);
		}
		free(buf);	/* LeakSanitizer fails the ASan build's tests otherwise */
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "resident")) {
		int fd = open_file(argv[2], &st);
		size_t n = ((size_t)st.st_size + (size_t)ps - 1) / (size_t)ps;
		unsigned char *vec = malloc(n + 1);
		void *map;
		int first = 1;

		if (!n) {
			free(vec);
			return puts("") < 0;
		}
		map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
		if (map == MAP_FAILED || mincore(map, (size_t)st.st_size, vec) < 0)
			die("cannot mincore", argv[2]);
		for (size_t p = 0; p < n; p++) {
			size_t q = p;

			if (!(vec[p] & 1))
				continue;
			while (q + 1 < n && (vec[q + 1] & 1))
				q++;
			printf(first ? "%zu" : ",%zu", p);
			if (q > p)
				printf("-%zu", q);
			first = 0;
			p = q;
		}
		putchar('\n');
		free(vec);
		return 0;
	}
	fprintf(stderr, "usage: pagetool evict FILE... | read FILE RANGE... | resident FILE | has-cachestat\n");
	return 2;
}
