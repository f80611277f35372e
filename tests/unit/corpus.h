/*
 * corpus.h - replaying a fuzz target's corpus in a unit test: the target,
 * included with LLVMFuzzerTestOneInput renamed, over every input kept in
 * tests/fuzz/corpus/NAME (crashes included), in both builds.
 */
#ifndef HOTSET_TESTS_CORPUS_H
#define HOTSET_TESTS_CORPUS_H

#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

/* Run fn over every file of tests/fuzz/corpus/name; returns how many. */
static unsigned replay(const char *name, int (*fn)(const uint8_t *, size_t))
{
	char dir[64];
	struct dirent *de;
	unsigned n = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "tests/fuzz/corpus/%s", name);
	if (!(d = opendir(dir)))
		SKIP("tests/fuzz not found (run from the source tree)");
	while ((de = readdir(d))) {
		char path[512], buf[8192];
		ssize_t len;
		int fd;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			continue;
		len = read(fd, buf, sizeof(buf));
		close(fd);
		if (len < 0)
			continue;
		fn((const uint8_t *)buf, (size_t)len);
		n++;
	}
	closedir(d);
	return n;
}

#endif
