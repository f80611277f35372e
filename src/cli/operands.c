/*
 * operands.c - PATH operands and -p PROFILE, shared by the cache commands.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "operands.h"

char *absolute_path(const char *path, bool dotdot)
{
	char *cwd = NULL, *abs = NULL;

	if (path[0] == '/')
		abs = strdup(path);
	else if ((cwd = getcwd(NULL, 0)) && asprintf(&abs, "%s/%s", cwd, path) < 0)
		abs = NULL;
	free(cwd);
	if (abs) {
		size_t n;

		hs_tidy_path(abs, dotdot);
		if ((n = strlen(abs)) > 1 && abs[n - 1] == '/')
			abs[n - 1] = '\0';	/* "x/" names x, as "x" does */
	}
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
	struct line l;

	__atomic_fetch_add(&o->skipped, 1, __ATOMIC_RELAXED);
	if (o->quiet)
		return;
	pthread_mutex_lock(&lock);
	line_start(&l);
	if (o->progress.on)
		line_add(&l, "\r\033[K", 4);	/* the message starts a clean line */
	line_add(&l, "hotset: ", 8);
	line_add_path(&l, path, strlen(path));
	line_add(&l, ": ", 2);
	line_add(&l, what, strlen(what));
	if (errnum) {
		const char *why = strerror(errnum);

		line_add(&l, ": ", 2);
		line_add(&l, why, strlen(why));
	}
	fflush(stdout);
	line_write(&l);
	pthread_mutex_unlock(&lock);
}

static void warn_file(void *ctx, const char *path, int errnum, const char *what)
{
	operands_warn(ctx, path, errnum, what);
}

static const char *mapped_profile;

/* In the handler: only write() and _exit(). */
static void profile_shrank(int sig)
{
	static const char head[] = "hotset: ", tail[] = ": the profile shrank while it was "
		"being read (a program rewrote it in place, not by rename)\n";
	ssize_t n = write(STDERR_FILENO, head, sizeof(head) - 1);

	n += write(STDERR_FILENO, mapped_profile, strlen(mapped_profile));
	n += write(STDERR_FILENO, tail, sizeof(tail) - 1);
	(void)n;
	(void)sig;
	_exit(EXIT_USAGE);
}

/*
 * The library reads a profile from a mapping, where a truncation by another
 * program raises SIGBUS: say so rather than die of a bus error. (hotset's
 * own writers replace a profile by rename, which never does that.)
 */
static void guard_mapping(const char *profile)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = profile_shrank;
	sigemptyset(&sa.sa_mask);
	mapped_profile = profile;
	sigaction(SIGBUS, &sa, NULL);
}

int operands_open(struct operands *o)
{
	struct hs_profile_item it;
	struct hs_error err = { 0 };
	int rc;

	if (!o->profile && o->npaths == 0)
		return usage_error(o->cmd, "give a PATH or -p PROFILE");
	/* "" would be walked as the working directory: most likely an unset variable */
	for (int i = 0; i < o->npaths; i++)
		if (!o->paths[i][0])
			return usage_error(o->cmd, "an empty PATH names no file "
					   "(for the working directory, give .)");
	if (o->profile && !o->profile[0])
		return usage_error(o->cmd, "an empty PROFILE names no file "
				   "(for standard input, give -)");
	if (!o->profile)
		return EXIT_OK;
	if (!strcmp(o->profile, "-")) {
		if (isatty(STDIN_FILENO)) {
			error("-: standard input is a terminal: pipe a profile in, or name its file");
			return EXIT_USAGE;
		}
		rc = hs_profile_read(STDIN_FILENO, &o->reader, &err);
	} else {
		guard_mapping(o->profile);
		rc = hs_profile_open(o->profile, &o->reader, &err);
	}
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
	/*
	 * Profiles hold absolute paths: "-p PROFILE ." means here. Those that
	 * "hotset record" writes have their symlinks resolved too, so a PATH's
	 * real path selects as well as the PATH as written.
	 */
	if (o->npaths && (!(o->abs_paths = calloc((size_t)o->npaths, sizeof(char *))) ||
			  !(o->real_paths = calloc((size_t)o->npaths, sizeof(char *))) ||
			  !(o->selecting = calloc((size_t)o->npaths, sizeof(bool))))) {
		operands_close(o);
		return error("out of memory"), EXIT_USAGE;
	}
	for (int i = 0; i < o->npaths; i++) {
		o->abs_paths[i] = absolute_path(o->paths[i], true);
		o->real_paths[i] = realpath(o->paths[i], NULL);
	}
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

/*
 * With -p and PATHs, only profile entries at or under a PATH are targets;
 * asked by the library before it opens the file. Each PATH that selects
 * an entry is noted, to tell about those that select none.
 */
static bool selected(void *ctx, const char *path, size_t len)
{
	struct operands *o = ctx;
	bool any = false;

	(void)len;
	if (!o->npaths)
		return true;
	for (int i = 0; i < o->npaths; i++) {
		if ((o->abs_paths[i] && under(path, o->abs_paths[i])) ||
		    (o->real_paths[i] && under(path, o->real_paths[i]))) {
			o->selecting[i] = true;	/* entries come one at a time */
			any = true;
		}
	}
	return any;
}

/* The callback for the library: o is the context of both fn and warn_file. */
static int visit(void *ctx, const struct hs_target *t)
{
	struct operands *o = ctx;
	int rc;

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
		rc = hs_targets_profile_select(o->reader, selected, visit, warn_file, o, &err);
		/* a PATH that selects nothing is most likely mistyped: say so, exit 1 */
		for (int i = 0; rc == 0 && i < o->npaths; i++)
			if (!o->selecting[i])
				operands_warn(o, o->paths[i], 0, "no file of the profile is under it");
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
			"%s acted on by path", o->stale, plural(o->stale),
			strcmp(o->profile, "-") ? o->profile : "the profile",
			o->stale == 1 ? "it was" : "they were");
}

void operands_close(struct operands *o)
{
	hs_profile_close(o->reader);
	o->reader = NULL;
	for (int i = 0; i < o->npaths; i++) {
		if (o->abs_paths)
			free(o->abs_paths[i]);
		if (o->real_paths)
			free(o->real_paths[i]);
	}
	free(o->abs_paths);
	free(o->real_paths);
	free(o->selecting);
	o->abs_paths = o->real_paths = NULL;
	o->selecting = NULL;
}
