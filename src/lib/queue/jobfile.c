/*
 * jobfile.c - the job file of `hotset run` (jobfile.h).
 *
 * The lines are read into jobs in file order; then one sort of the jobs'
 * indices by name (by_name) finds a name given twice and lets run find a
 * job by its name (a resumed queue's, --step's) by binary search. A queue
 * may hold 100,000 jobs: nothing here compares each job with all others.
 *
 * Ownership: struct hs_jobfile owns its jobs' commands (strndup'd) and
 * both arrays; a parse that fails frees what it had read, and
 * hs_jobfile_free() may be called on a parsed, a failed or a zeroed one.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "queue/jobfile.h"

/*
 * Not a cryptographic hash: it tells a resumed queue that its job file
 * changed since the queue started (an edit, another file at the path),
 * which a person did, not an attacker, and it must stay the same from one
 * version to the next, since it is written into the queue file.
 */
uint64_t hs_fnv1a(const void *p, size_t len)
{
	const unsigned char *s = p;
	uint64_t h = UINT64_C(14695981039346656037);

	for (size_t i = 0; i < len; i++)
		h = (h ^ s[i]) * UINT64_C(1099511628211);
	return h;
}

/*
 * The bytes of a job name: a name is a directory name (jobs/NAME/) and a
 * file name (NAME.log) and is printed unquoted, so no "/", no blank, no
 * byte a shell or a terminal would read as something else.
 */
static int name_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '.' || c == '_' || c == '-';
}

int hs_job_name_ok(const char *s, size_t len)
{
	if (len == 0 || len > HS_JOB_NAME_MAX)
		return 0;
	/* "." and ".." would name the state directory itself, or its parent */
	if ((len == 1 && s[0] == '.') || (len == 2 && s[0] == '.' && s[1] == '.'))
		return 0;
	for (size_t i = 0; i < len; i++)
		if (!name_char((unsigned char)s[i]))
			return 0;
	return 1;
}

/*
 * Append a job (name of nlen bytes, command of clen), without looking at
 * the names already there: the caller checks them. Returns 0 or -ENOMEM.
 */
static int append(struct hs_jobfile *jf, const char *name, size_t nlen, const char *command,
		  size_t clen, unsigned line)
{
	struct hs_jobdef *d;

	assert(nlen <= HS_JOB_NAME_MAX);	/* the caller checked the name: d->name holds it */
	if (hs_grow(&jf->jobs, &jf->cap, jf->n + 1, sizeof(*jf->jobs)))
		return -ENOMEM;
	d = &jf->jobs[jf->n];
	if (!(d->command = strndup(command, clen)))
		return -ENOMEM;
	memcpy(d->name, name, nlen);
	d->name[nlen] = '\0';
	d->line = line;
	jf->n++;
	return 0;
}

/*
 * The first index in by_name whose job's name is not below name (n if
 * none): where name is, or would go.
 */
static size_t name_slot(const struct hs_jobfile *jf, const char *name)
{
	size_t lo = 0, hi = jf->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(jf->jobs[jf->by_name[mid]].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

ssize_t hs_jobfile_find(const struct hs_jobfile *jf, const char *name)
{
	size_t at;

	/* no index: no job (a zeroed jobfile, or one whose parse failed) */
	if (!jf->by_name)
		return -1;
	at = name_slot(jf, name);
	if (at < jf->n && !strcmp(jf->jobs[jf->by_name[at]].name, name))
		return (ssize_t)jf->by_name[at];
	return -1;
}

/*
 * Keeps by_name sorted by inserting in place (a memmove): O(n) a job,
 * which is what a job or a few from the command line need. The index
 * grows first, so that once the job is appended nothing can fail and
 * leave it out of the index.
 */
int hs_jobfile_add(struct hs_jobfile *jf, const char *name, const char *command, unsigned line)
{
	size_t nlen = strlen(name), at;

	if (nlen > HS_JOB_NAME_MAX)
		return -ENAMETOOLONG;
	if (hs_jobfile_find(jf, name) >= 0)
		return -EEXIST;
	if (hs_grow(&jf->by_name, &jf->by_name_cap, jf->n + 1, sizeof(*jf->by_name)))
		return -ENOMEM;
	/* where it goes in name order, found before it is appended */
	at = name_slot(jf, name);
	if (append(jf, name, nlen, command, strlen(command), line))
		return -ENOMEM;
	memmove(jf->by_name + at + 1, jf->by_name + at, (jf->n - 1 - at) * sizeof(*jf->by_name));
	jf->by_name[at] = jf->n - 1;
	return 0;
}

/* The blanks between a name and its command: a space or a tab, as a shell's. */
static int blank(char c)
{
	return c == ' ' || c == '\t';
}

/*
 * One line (len bytes, without its newline): 1 if it holds a job
 * (appended to jf, its name not yet checked against the others), 0 if
 * it is blank or a comment, or -EINVAL with err->msg (err->line is the
 * caller's) or -ENOMEM. The command is the line after the name's blanks,
 * trailing blanks off, run by /bin/sh -c as it is: no quoting is undone.
 */
static int parse_line(const char *s, size_t len, unsigned line, struct hs_jobfile *jf,
		      struct hs_error *err)
{
	size_t i = 0, name, name_end;

	if (len && s[len - 1] == '\r')		/* a file written on Windows */
		len--;
	while (i < len && blank(s[i]))
		i++;
	if (i == len || s[i] == '#')
		return 0;
	name = name_end = i;
	while (name_end < len && !blank(s[name_end]))
		name_end++;
	if (!hs_job_name_ok(s + name, name_end - name)) {
		if (name_end - name > HS_JOB_NAME_MAX)
			return hs_error_set(err, EINVAL, "the job's name is longer than %d "
					    "characters", HS_JOB_NAME_MAX);
		return hs_error_set(err, EINVAL, "'%.*s' is not a job name: use letters, "
				    "digits, '.', '_' and '-' (then a blank and the command)",
				    (int)(name_end - name), s + name);
	}
	i = name_end;
	while (i < len && blank(s[i]))
		i++;
	while (len > i && blank(s[len - 1]))
		len--;
	if (i == len)
		return hs_error_set(err, EINVAL, "job '%.*s' has no command: give it after the "
				    "name on the same line", (int)(name_end - name), s + name);
	/* whether the name is unique is known once all are read: check_names() */
	return append(jf, s + name, name_end - name, s + i, len - i, line) ? -ENOMEM : 1;
}

/* Name order, and file order among equal names: qsort_r()'s comparison over by_name. */
static int by_name_cmp(const void *a, const void *b, void *ctx)
{
	const struct hs_jobfile *jf = ctx;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	int c = strcmp(jf->jobs[x].name, jf->jobs[y].name);

	return c ? c : (x > y) - (x < y);
}

/*
 * Index the jobs by name, and refuse a name given twice, at the first line
 * that gives one again, as a reader going down the file would (comparing
 * each name with all those before it took 50 s for 100,000 jobs: a sort
 * takes a tenth of a second). Returns 0, -EINVAL with err set, or -ENOMEM.
 */
static int check_names(struct hs_jobfile *jf, struct hs_error *err)
{
	const struct hs_jobdef *dup = NULL, *first = NULL;

	if (!jf->n)
		return 0;
	if (hs_grow(&jf->by_name, &jf->by_name_cap, jf->n, sizeof(*jf->by_name)))
		return -ENOMEM;
	for (size_t i = 0; i < jf->n; i++)
		jf->by_name[i] = i;
	qsort_r(jf->by_name, jf->n, sizeof(*jf->by_name), by_name_cmp, jf);
	/*
	 * Equal names are side by side, in file order: the earliest line that
	 * names a job again is the second of its run, after the first.
	 */
	for (size_t i = 1; i < jf->n; i++) {
		const struct hs_jobdef *a = &jf->jobs[jf->by_name[i - 1]];
		const struct hs_jobdef *b = &jf->jobs[jf->by_name[i]];

		if (!strcmp(a->name, b->name) && (!dup || b->line < dup->line))
			first = a, dup = b;
	}
	if (!dup)
		return 0;
	err->line = dup->line;
	return hs_error_set(err, EINVAL, "job '%s' is already named on line %u: names must be "
			    "unique", dup->name, first->line);
}

/*
 * Line by line, stopping at the first bad line; then the names of the jobs
 * read so far are checked for one given twice. err->line is the line of
 * the first thing wrong, or 0 when all is well or memory ran out.
 */
int hs_jobfile_parse(const char *text, size_t len, struct hs_jobfile *jf, struct hs_error *err)
{
	unsigned line = 0;
	size_t pos = 0;
	int rc = 0, names;

	assert(err);	/* not optional here: the line of an error is the point */
	memset(jf, 0, sizeof(*jf));
	jf->hash = hs_fnv1a(text, len);
	while (pos < len) {
		const char *s = text + pos, *nl = memchr(s, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - s) : len - pos;

		line++;
		err->line = line;
		/* a NUL would cut the command short where /bin/sh reads it */
		if (memchr(s, '\0', n)) {
			rc = hs_error_set(err, EINVAL, "a NUL byte: this is not a job file (a "
					  "binary file?)");
			break;
		}
		if (n > HS_JOB_LINE_MAX) {
			rc = hs_error_set(err, EINVAL, "a line longer than %d bytes",
					  HS_JOB_LINE_MAX);
			break;
		}
		if ((rc = parse_line(s, n, line, jf, err)) < 0)
			break;
		rc = 0;
		pos += n + (nl != NULL);
	}
	/*
	 * The names of the jobs read so far, even after a bad line: a name
	 * given twice before it is the first thing wrong in the file.
	 */
	if (rc != -ENOMEM && (names = check_names(jf, err)) < 0)
		rc = names;
	if (rc < 0) {
		if (rc == -ENOMEM)
			err->line = 0;
		hs_jobfile_free(jf);
		return rc;
	}
	err->line = 0;
	return 0;
}

/* Leaves jf empty and valid: freed again, or parsed into, without harm. */
void hs_jobfile_free(struct hs_jobfile *jf)
{
	for (size_t i = 0; i < jf->n; i++)
		free(jf->jobs[i].command);
	free(jf->jobs);
	free(jf->by_name);
	jf->jobs = NULL;
	jf->by_name = NULL;
	jf->n = jf->cap = jf->by_name_cap = 0;
}

/*
 * A regular file, or a pipe the shell made (<(...), /dev/stdin): a named
 * FIFO is refused, since with no writer its read would wait for ever, and
 * a device, directory or socket is no job file. Returns the descriptor,
 * or -errno with err saying why.
 */
static int open_jobfile(const char *path, struct hs_error *err)
{
	char link[64], target[16];
	struct stat st;
	ssize_t n;
	int fd, rc;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)) < 0)
		return hs_error_set(err, errno, "%s", strerror(errno));
	if (fstat(fd, &st) < 0) {
		rc = hs_error_set(err, errno, "%s", strerror(errno));
		goto fail;
	}
	if (S_ISFIFO(st.st_mode)) {
		/* a pipe's link reads "pipe:[INODE]"; a named FIFO's is its path */
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		n = readlink(link, target, sizeof(target));
		if (n < 5 || memcmp(target, "pipe:", 5)) {
			rc = hs_error_set(err, EINVAL, "a named FIFO: give a regular file, or pipe "
					  "the job file in (hotset run /dev/stdin < FILE)");
			goto fail;
		}
		/* opened without waiting for a writer; read it as the blocking pipe it is */
		if (fcntl(fd, F_SETFL, 0) < 0) {
			rc = hs_error_set(err, errno, "%s", strerror(errno));
			goto fail;
		}
	} else if (!S_ISREG(st.st_mode)) {
		rc = hs_error_set(err, EINVAL, "not a regular file");
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return rc;
}

int hs_jobfile_load(const char *path, struct hs_jobfile *jf, struct hs_error *err)
{
	char *text = NULL;
	size_t len = 0, cap = 0;
	ssize_t got;
	int fd, rc;

	if ((fd = open_jobfile(path, err)) < 0)
		return fd;
	/* read whole: a pipe tells no size, and the parser wants the text at once */
	for (;;) {
		if (hs_grow(&text, &cap, len + 65536, 1)) {
			close(fd);
			free(text);
			return hs_error_set(err, ENOMEM, "out of memory");
		}
		if ((got = read(fd, text + len, cap - len)) <= 0)
			break;
		len += (size_t)got;
	}
	if (got < 0)
		rc = hs_error_set(err, errno, "%s", strerror(errno));
	close(fd);
	if (got < 0) {
		free(text);
		return rc;
	}
	rc = hs_jobfile_parse(text, len, jf, err);
	free(text);
	if (rc)
		return rc;
	if (!jf->n)
		return hs_error_set(err, EINVAL, "no job in the file");
	return 0;
}
