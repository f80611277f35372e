/*
 * operands.c - PATH operands and -p PROFILE, shared by the cache commands.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "operands.h"

void print_path(FILE *f, const char *path, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)path[i];

		if (ch < 0x20 || ch == 0x7f || ch == '\\')
			fprintf(f, ch == '\\' ? "\\\\" : "\\x%02x", ch);
		else
			fputc(ch, f);
	}
}

char *absolute_path(const char *path)
{
	char *cwd, *abs = NULL;

	if (path[0] == '/')
		return strdup(path);
	while (path[0] == '.' && path[1] == '/') {
		path += 2;
		while (path[0] == '/')
			path++;
	}
	if (!strcmp(path, "."))
		path = "";
	cwd = getcwd(NULL, 0);
	if (cwd && asprintf(&abs, "%s%s%s", cwd, *path && strcmp(cwd, "/") ? "/" : "", path) < 0)
		abs = NULL;
	free(cwd);
	return abs;
}

unsigned default_threads(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : n > 8 ? 8 : (unsigned)n;
}

/* Warnings and the progress line come from several walking threads. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

void operands_warn(struct operands *o, const char *path, int errnum, const char *what)
{
	__atomic_fetch_add(&o->skipped, 1, __ATOMIC_RELAXED);
	if (o->quiet)
		return;
	pthread_mutex_lock(&lock);
	if (o->progress.on)
		fputs("\r\033[K", stderr);	/* the message starts a clean line */
	fflush(stdout);
	fputs("hotset: ", stderr);
	print_path(stderr, path, strlen(path));
	if (errnum)
		fprintf(stderr, ": %s: %s\n", what, strerror(errnum));
	else
		fprintf(stderr, ": %s\n", what);
	pthread_mutex_unlock(&lock);
}

static void warn_file(void *ctx, const char *path, int errnum, const char *what)
{
	operands_warn(ctx, path, errnum, what);
}

int operands_open(struct operands *o)
{
	struct hs_profile_item it;
	struct hs_error err = { 0 };
	int rc;

	if (!o->profile && o->npaths == 0)
		return usage_error(o->cmd, "give a PATH or -p PROFILE");
	if (!o->profile)
		return EXIT_OK;
	rc = hs_profile_open(o->profile, &o->reader, &err);
	if (rc == -EINVAL && err.line)
		error("%s:%u: %s", o->profile, err.line, err.msg);
	else if (rc)
		error("%s: %s", o->profile, err.msg[0] ? err.msg : strerror(-rc));
	if (rc)
		return EXIT_USAGE;
	/*
	 * Read it all once before acting on any of it: a profile malformed at
	 * its end must not be half warmed or half evicted.
	 */
	while ((rc = hs_profile_next(o->reader, &it, &err)) > 0)
		;
	if (rc < 0) {
		error("%s:%u: %s", o->profile, err.line, err.msg);
		operands_close(o);
		return EXIT_USAGE;
	}
	hs_profile_rewind(o->reader);
	/* profiles hold absolute paths: "-p PROFILE ." means here */
	if (o->npaths && !(o->abs_paths = calloc((size_t)o->npaths, sizeof(char *)))) {
		operands_close(o);
		return error("out of memory"), EXIT_USAGE;
	}
	for (int i = 0; i < o->npaths; i++)
		o->abs_paths[i] = absolute_path(o->paths[i]);
	return EXIT_OK;
}

/* Is path p, or something under it? */
static bool under(const char *path, const char *p)
{
	size_t n = strlen(p);

	while (n > 1 && p[n - 1] == '/')
		n--;
	return !strncmp(path, p, n) && (path[n] == '\0' || path[n] == '/' || p[n - 1] == '/');
}

/* With -p and PATHs, only profile entries at or under a PATH are targets. */
static bool selected(const struct operands *o, const char *path)
{
	if (!o->npaths)
		return true;
	for (int i = 0; i < o->npaths; i++)
		if (under(path, o->paths[i]) || (o->abs_paths[i] && under(path, o->abs_paths[i])))
			return true;
	return false;
}

/* The callback for the library: o is the context of both fn and warn_file. */
static int visit(void *ctx, const struct hs_target *t)
{
	struct operands *o = ctx;
	int rc;

	if (o->reader && !selected(o, t->path))
		return 0;
	if (t->stale)
		o->stale++;	/* profile entries come one at a time */
	rc = o->fn(o->ctx, t);
	if (o->progress.on) {
		pthread_mutex_lock(&lock);
		progress_update(&o->progress, ++o->visited, "files");
		pthread_mutex_unlock(&lock);
	}
	return rc;
}

int operands_foreach(struct operands *o, hs_target_fn fn, void *ctx)
{
	struct hs_error err = { 0 };
	int rc;

	o->fn = fn;
	o->ctx = ctx;
	progress_start(&o->progress, o->progress_label, 0, o->quiet || !o->progress_label);
	if (o->reader) {
		hs_profile_rewind(o->reader);
		rc = hs_targets_profile(o->reader, visit, warn_file, o, &err);
	} else {
		rc = hs_targets_walk((const char *const *)o->paths, (size_t)o->npaths, &o->walk,
				     visit, warn_file, o);
	}
	progress_end(&o->progress);
	if (o->reader && rc == -EINVAL)
		return error("%s:%u: %s", o->profile, err.line, err.msg);
	if (rc == -ENOMEM)
		return error("out of memory");
	return rc;
}

void operands_report_stale(const struct operands *o)
{
	if (o->stale && !o->quiet)
		warning("%u file%s changed since %s was made (device, inode, size or mtime): "
			"%s acted on by path", o->stale, o->stale == 1 ? "" : "s", o->profile,
			o->stale == 1 ? "it was" : "they were");
}

void operands_close(struct operands *o)
{
	hs_profile_close(o->reader);
	o->reader = NULL;
	for (int i = 0; o->abs_paths && i < o->npaths; i++)
		free(o->abs_paths[i]);
	free(o->abs_paths);
	o->abs_paths = NULL;
}
