/*
 * operands.c - PATH operands, --files-from lists, -p PROFILE and the
 * filters, shared by the cache commands.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "operands.h"
#include "options.h"
#include "cmd.h"
#include "messages.h"
#include "output.h"

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
void operands_guard_mapping(const char *profile)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = profile_shrank;
	sigemptyset(&sa.sa_mask);
	mapped_profile = profile;
	sigaction(SIGBUS, &sa, NULL);
}

/* Add glob to *globs (-I or -i). Returns -1 (go on) or EXIT_USAGE. */
static int add_glob(struct operands *o, const char ***globs, size_t *cap, size_t *n,
		    const char **inline_buf, const char *option, const char *glob)
{
	if (!glob[0])
		return usage_error(o->cmd, "%s: an empty GLOB matches no name", option);
	if (!*globs) {
		*globs = inline_buf;
		*cap = 8;
	}
	if (hs_grow_inline(globs, cap, *n + 1, sizeof(**globs), inline_buf))
		return error("out of memory"), EXIT_USAGE;
	(*globs)[(*n)++] = glob;
	return -1;
}

int operands_option(struct operands *o, int opt, char **argv, const struct option *longopts)
{
	switch (opt) {
	case 'x': o->walk.one_filesystem = true; return -1;
	case 'L': o->walk.follow_symlinks = true; return -1;
	case '0': o->null = true; return -1;
	case OPT_FILES_FROM:
		if (o->files_from)
			return usage_error(o->cmd, "--files-from: give one list");
		if (!optarg[0])
			return usage_error(o->cmd, "--files-from: an empty FILE names no file "
					   "(for standard input, give -)");
		o->files_from = optarg;
		return -1;
	case 'I': {
		int rc = add_glob(o, &o->include, &o->include_cap, &o->walk.ninclude,
				  o->include_inline, "--include", optarg);

		o->walk.include = o->include;
		return rc;
	}
	case 'i': {
		int rc = add_glob(o, &o->exclude, &o->exclude_cap, &o->walk.nexclude,
				  o->exclude_inline, "--exclude", optarg);

		o->walk.exclude = o->exclude;
		return rc;
	}
	case 'm':
		if (parse_size(optarg, &o->walk.max_size) < 0)
			return option_bad_size(o->cmd, "--max-file-size", optarg);
		if (!o->walk.max_size)
			return usage_error(o->cmd, "--max-file-size takes a size above 0");
		return -1;
	default:
		return option_other(o->cmd, opt, argv, longopts);
	}
}

static const char *list_name(const struct operands *o)
{
	return strcmp(o->files_from, "-") ? o->files_from : "(standard input)";
}

/*
 * Open the list of --files-from: a file, a pipe or a socket, never a
 * directory or a device (a terminal included: a list is piped in).
 */
static int open_list(struct operands *o)
{
	const char *name = o->files_from;
	struct stat st;
	int fd = STDIN_FILENO, rc;

	/* looked at before it is opened: opening a device can act on it */
	if (strcmp(name, "-") && stat(name, &st) == 0 && !S_ISREG(st.st_mode) &&
	    !S_ISFIFO(st.st_mode) && !S_ISSOCK(st.st_mode))
		fd = -EINVAL;
	else if (strcmp(name, "-") && (fd = open(name, O_RDONLY | O_NOCTTY | O_CLOEXEC)) < 0)
		return error("%s: cannot open the list of --files-from: %s", name,
			     strerror(errno)), EXIT_USAGE;
	if (fd == -EINVAL || fstat(fd, &st) < 0 || S_ISDIR(st.st_mode) || S_ISCHR(st.st_mode) ||
	    S_ISBLK(st.st_mode)) {
		if (fd > STDIN_FILENO)
			close(fd);
		if (!strcmp(name, "-") && isatty(STDIN_FILENO))
			error("-: standard input is a terminal: pipe a list of names in, or name its file");
		else
			error("%s: is a %s, not a list of names (--files-from)", list_name(o),
			      S_ISDIR(st.st_mode) ? "directory" : "device");
		return EXIT_USAGE;
	}
	o->list_fd = fd;
	if ((rc = hs_name_list_new(fd, o->null ? '\0' : '\n', &o->list)))
		return error("%s: %s", list_name(o), strerror(-rc)), EXIT_USAGE;
	return EXIT_OK;
}

static int open_operands(struct operands *o)
{
	struct hs_profile_item it;
	struct hs_error err = { 0 };
	int rc;

	if (!o->profile && o->npaths == 0 && !o->files_from)
		return usage_error(o->cmd, "give a PATH, --files-from FILE or -p PROFILE");
	if (o->null && !o->files_from)
		return usage_error(o->cmd, "-0 is for the names of --files-from FILE: give it too");
	if (o->files_from && o->profile)
		return usage_error(o->cmd, "--files-from and -p do not go together: a profile "
				   "names its own files (PATHs select among them)");
	/* "" would be walked as the working directory: most likely an unset variable */
	for (int i = 0; i < o->npaths; i++)
		if (!o->paths[i][0])
			return usage_error(o->cmd, "an empty PATH names no file "
					   "(for the working directory, give .)");
	if (o->profile && !o->profile[0])
		return usage_error(o->cmd, "an empty PROFILE names no file "
				   "(for standard input, give -)");
	if (o->files_from)
		return open_list(o);
	if (!o->profile)
		return EXIT_OK;
	if (!strcmp(o->profile, "-")) {
		if (isatty(STDIN_FILENO)) {
			error("-: standard input is a terminal: pipe a profile in, or name its file");
			return EXIT_USAGE;
		}
		rc = hs_profile_read(STDIN_FILENO, &o->reader, &err);
	} else {
		operands_guard_mapping(o->profile);
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

int operands_open(struct operands *o)
{
	int rc;

	o->list_fd = -1;
	if ((rc = open_operands(o)))
		operands_close(o);
	return rc;
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
	bool any = !o->npaths;

	(void)len;
	for (int i = 0; i < o->npaths; i++) {
		if ((o->abs_paths[i] && under(path, o->abs_paths[i])) ||
		    (o->real_paths[i] && under(path, o->real_paths[i]))) {
			o->selecting[i] = true;	/* entries come one at a time */
			any = true;
		}
	}
	/* after the PATHs: one that selects files all filtered out is no typo */
	return any && !hs_target_filtered(&o->walk, path, false);
}

/* The callback for the library: o is the context of both fn and warn_file. */
static int visit(void *ctx, const struct hs_target *t)
{
	struct operands *o = ctx;
	int rc;

	/* the tree walk leaves such files out itself; a profile entry is checked here */
	if (t->entry && o->walk.max_size && (uint64_t)t->st->st_size > o->walk.max_size)
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

/*
 * The names for a walk with a list: the PATHs, then the list's, one at a
 * time. Names the list refuses are warned about with their line.
 */
static int next_operand(void *ctx, const char **name)
{
	struct operands *o = ctx;
	const char *s;
	size_t len;
	unsigned line;
	int rc;

	if (o->next_path < o->npaths) {
		*name = o->paths[o->next_path++];
		return 1;
	}
	while ((rc = hs_name_list_next(o->list, &s, &len, &line)) < 0) {
		char where[PATH_MAX + 16];
		char what[96];

		if (rc != -ENAMETOOLONG && rc != -EILSEQ)
			return error("%s: cannot read the list of --files-from: %s", list_name(o),
				     strerror(-rc));
		snprintf(where, sizeof(where), "%s:%u", list_name(o), line);
		if (rc == -ENAMETOOLONG)
			snprintf(what, sizeof(what), "a name of PATH_MAX (%d) bytes or more, skipped",
				 PATH_MAX);
		else
			snprintf(what, sizeof(what), "a NUL byte in the name (for NUL-ended "
				 "names, give -0), skipped");
		operands_warn(o, where, 0, what);
	}
	if (rc == 0)
		return 0;
	/* a profile (snapshot) names files by absolute path */
	if (o->absolute && s[0] != '/') {
		free(o->abs_name);
		if (!(o->abs_name = absolute_path(s, false)))
			return error("%s: cannot make the path absolute: %s", s, strerror(errno));
		s = o->abs_name;
	}
	*name = s;
	return 1;
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
	} else if (o->list) {
		o->next_path = 0;
		rc = hs_targets_walk_names(next_operand, o, &o->walk, visit, warn_file, o);
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
	hs_name_list_free(o->list);
	o->list = NULL;
	if (o->list_fd > STDIN_FILENO)
		close(o->list_fd);
	o->list_fd = -1;
	free(o->abs_name);
	o->abs_name = NULL;
	if (o->include != o->include_inline)
		free(o->include);
	if (o->exclude != o->exclude_inline)
		free(o->exclude);
	o->include = o->exclude = NULL;
	o->walk.include = o->walk.exclude = NULL;
	o->walk.ninclude = o->walk.nexclude = o->include_cap = o->exclude_cap = 0;
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
