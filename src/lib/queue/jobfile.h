/*
 * jobfile.h - the job file of `hotset run`: one job a line, a name and a
 * shell command.
 *
 *	# comments and blank lines are skipped
 *	index-a   ./build-index a
 *	report.v2 make -C reports all
 *
 * NAME is letters, digits and "._-", at most HS_JOB_NAME_MAX bytes, unique
 * in the file, not "." or "..": it names the job's state directory and log.
 * COMMAND is the rest of the line after the blanks that follow NAME, run
 * with /bin/sh -c. A file with anything wrong is refused whole, with the
 * line and the reason, so that nothing of a half-understood queue runs.
 */
#ifndef HOTSET_JOBFILE_H
#define HOTSET_JOBFILE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/hotset.h"

#define HS_JOB_NAME_MAX 64
#define HS_JOB_LINE_MAX 65536	/* a longer line is refused: no job file needs it */

struct hs_jobdef {
	char name[HS_JOB_NAME_MAX + 1];
	char *command;		/* malloc'd */
	unsigned line;		/* where it is in the file */
};

struct hs_jobfile {
	struct hs_jobdef *jobs;
	size_t n, cap;
	uint64_t hash;		/* FNV-1a of the whole text: a resumed queue runs the same file */
	size_t *by_name;	/* the n jobs' indices in name order: hs_jobfile_find() */
	size_t by_name_cap;
};

/*
 * Parse len bytes of text. Returns 0, or -EINVAL with err->line and
 * err->msg saying what is wrong (-ENOMEM: out of memory). On failure
 * nothing is kept; release with hs_jobfile_free() either way. O(n log n)
 * in the number of jobs (names are checked for duplicates by sorting).
 */
int hs_jobfile_parse(const char *text, size_t len, struct hs_jobfile *jf, struct hs_error *err);

/* Whether s is a valid job name (see above). */
int hs_job_name_ok(const char *s, size_t len);

/*
 * A job of one command (`hotset run -- CMD`): named name. Returns 0,
 * -EEXIST if a job has that name, or -errno. O(n): for a job or a few,
 * not for a file's worth (hs_jobfile_parse()).
 */
int hs_jobfile_add(struct hs_jobfile *jf, const char *name, const char *command, unsigned line);

/* The index in jf->jobs of the job named name, or -1: O(log n). */
ssize_t hs_jobfile_find(const struct hs_jobfile *jf, const char *name);

/* FNV-1a, 64 bits, of len bytes. */
uint64_t hs_fnv1a(const void *p, size_t len);

/*
 * Read and parse the job file at path (a regular file, or a pipe the
 * shell made; never a named FIFO, whose read could wait for ever).
 * Returns 0, or -errno with err saying why (without the path; with the
 * line, err->line != 0, for a malformed file): -ENOMEM, out of memory;
 * any other, the file's fault. A file with no job is refused.
 */
int hs_jobfile_load(const char *path, struct hs_jobfile *jf, struct hs_error *err);

void hs_jobfile_free(struct hs_jobfile *jf);

#endif
