/*
 * scratch.h - a fresh directory per unit test, for the tests that make
 * files: under /var/tmp (a real filesystem, where eviction really evicts),
 * mode 755 (the unprivileged cases run as nobody), removed at the end.
 */
#ifndef HOTSET_UNIT_SCRATCH_H
#define HOTSET_UNIT_SCRATCH_H

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char scratch[64];	/* /var/tmp/hotset-unit.XXXXXX */

static inline int scratch_rm_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	return remove(path);
}

static inline const char *scratch_dir(void)
{
	snprintf(scratch, sizeof(scratch), "/var/tmp/hotset-unit.XXXXXX");
	if (!mkdtemp(scratch)) {
		perror("mkdtemp");
		_exit(1);
	}
	chmod(scratch, 0755);
	return scratch;
}

/* Remove it, without crossing into what a test mounted inside. */
static inline void scratch_done(void)
{
	nftw(scratch, scratch_rm_one, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

/* scratch/name; the last eight stay valid. */
static inline char *path_in(const char *name)
{
	static char buf[8][512];
	static int next;
	char *p = buf[next++ & 7];

	snprintf(p, 512, "%s/%s", scratch, name);
	return p;
}

/* Write text to the file dir/name (a fake cgroup's or pressure file, say). */
static inline void scratch_put(const char *dir, const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((f = fopen(path, "w"))) {
		fputs(text, f);
		fclose(f);
	}
}

/* The first line of the file dir/name, with its newline ("(none)" if unreadable). */
static inline const char *scratch_get(const char *dir, const char *name)
{
	static char buf[256];
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (!(f = fopen(path, "r")))
		return "(none)";
	if (!fgets(buf, (int)sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	return buf;
}

#endif
