/*
 * mkfiles - make (or remove) a big tree of small files fast, for the scale
 * tests, and optionally a profile that lists every one of them:
 *
 *   mkfiles make DIR NDIRS PERDIR [EVERY [PROFILE]]
 *       DIR/dNNNN/fNNNNNNN for NDIRS directories of PERDIR files each.
 *       Files are empty, except every EVERY-th one (0: none), which holds
 *       one page. PROFILE, if given, lists every file (absolute paths)
 *       with the range "0", as a profile for `status -p` to read.
 *   mkfiles remove DIR NDIRS PERDIR
 *       unlink what make made, and DIR itself.
 *
 * One process and no fork per file: a shell loop would take an hour.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void die(const char *what, const char *arg)
{
	fprintf(stderr, "mkfiles: %s %s: %s\n", what, arg, strerror(errno));
	exit(1);
}

static long number(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (*s == '\0' || *end || v < 0) {
		fprintf(stderr, "mkfiles: not a number: %s\n", s);
		exit(2);
	}
	return v;
}

static int make(const char *dir, long ndirs, long perdir, long every, const char *profile)
{
	const long ps = sysconf(_SC_PAGESIZE);
	char *page = calloc(1, (size_t)ps), abs[PATH_MAX], name[64];
	FILE *prof = NULL;
	long n = 0;

	memset(page, 'p', (size_t)ps);
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		die("cannot make", dir);
	if (!realpath(dir, abs))
		die("cannot resolve", dir);
	if (profile) {
		prof = fopen(profile, "w");
		if (!prof)
			die("cannot write", profile);
		setvbuf(prof, NULL, _IOFBF, 1 << 20);
		fprintf(prof, "hotset-profile 1\npage-size %ld\nsource snapshot\n", ps);
	}
	for (long d = 0; d < ndirs; d++) {
		int dfd;

		snprintf(name, sizeof(name), "%s/d%04ld", dir, d);
		if (mkdir(name, 0755) < 0 && errno != EEXIST)
			die("cannot make", name);
		dfd = open(name, O_RDONLY | O_DIRECTORY);
		if (dfd < 0)
			die("cannot open", name);
		for (long f = 0; f < perdir; f++, n++) {
			char file[32];
			int fd;

			snprintf(file, sizeof(file), "f%07ld", n);
			fd = openat(dfd, file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
			if (fd < 0)
				die("cannot create", file);
			if (every && n % every == 0 && write(fd, page, (size_t)ps) != ps)
				die("cannot write", file);
			close(fd);
			if (prof)
				fprintf(prof, "f 0:0 0 0 0.000000000 r 0 %s/d%04ld/%s\n", abs, d, file);
		}
		close(dfd);
	}
	if (prof) {
		fprintf(prof, "end %ld 0 0\n", n);
		if (fclose(prof) != 0)
			die("cannot write", profile);
	}
	free(page);
	return 0;
}

static int remove_all(const char *dir, long ndirs, long perdir)
{
	char name[64];
	long n = 0;

	for (long d = 0; d < ndirs; d++) {
		int dfd;

		snprintf(name, sizeof(name), "%s/d%04ld", dir, d);
		dfd = open(name, O_RDONLY | O_DIRECTORY);
		if (dfd < 0) {
			n += perdir;
			continue;
		}
		for (long f = 0; f < perdir; f++, n++) {
			char file[32];

			snprintf(file, sizeof(file), "f%07ld", n);
			unlinkat(dfd, file, 0);
		}
		close(dfd);
		rmdir(name);
	}
	rmdir(dir);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 5 && argc <= 7 && !strcmp(argv[1], "make"))
		return make(argv[2], number(argv[3]), number(argv[4]),
			    argc > 5 ? number(argv[5]) : 0, argc > 6 ? argv[6] : NULL);
	if (argc == 5 && !strcmp(argv[1], "remove"))
		return remove_all(argv[2], number(argv[3]), number(argv[4]));
	fprintf(stderr, "usage: mkfiles make DIR NDIRS PERDIR [EVERY [PROFILE]]\n"
			"       mkfiles remove DIR NDIRS PERDIR\n");
	return 2;
}
