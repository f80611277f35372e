/*
 * operands.h - what status, warm, evict and snapshot act on: PATH operands,
 * the names of a list (--files-from), or a profile given with -p, with the
 * filters -I, -i and -m, and per-file warnings printed and counted so that
 * the command can exit 1 after doing the rest.
 */
#ifndef HOTSET_CLI_OPERANDS_H
#define HOTSET_CLI_OPERANDS_H

#include <getopt.h>

#include "cache/targets.h"
#include "cmd.h"
#include "output.h"

struct operands {
	const struct cmd *cmd;
	const char *profile;		/* -p PROFILE, or NULL */
	struct hs_target_opts walk;	/* -x, -L, -I, -i, -m */
	char **paths;			/* PATH operands (with -p: a filter) */
	int npaths;
	const char *files_from;		/* --files-from FILE, or NULL */
	bool null;			/* -0: its names end with NUL */
	bool absolute;			/* the command's: make the list's names absolute */
	const char **include, **exclude;	/* -I, -i (in walk too) */
	size_t include_cap, exclude_cap;
	/* their first globs: no malloc that an early usage error would leak */
	const char *include_inline[8], *exclude_inline[8];
	struct hs_name_list *list;	/* the list being read */
	int list_fd;
	int next_path;			/* the PATHs come before the list's names */
	char *abs_name;			/* the last name of the list made absolute */
	char **abs_paths;		/* with -p: the PATHs made absolute */
	char **real_paths;		/* with -p: their realpath(), or NULL */
	bool *selecting;		/* with -p: PATH i selected an entry */
	struct hs_profile_reader *reader;
	unsigned skipped;		/* files skipped with a warning */
	unsigned stale;			/* profile entries whose file changed since */
	bool quiet;			/* do not print per-file warnings */
	/* if set, operands_foreach() counts files on a progress line */
	const char *progress_label;
	struct progress progress;
	uint64_t visited;
	/* the callback and context of operands_foreach() */
	hs_target_fn fn;
	void *ctx;
};

/*
 * The options every tree walker shares (WALK_OPTS in options.h): -x, -L,
 * --files-from, -0, -I, -i, -m, taken into o. Called from the default: of
 * an option loop, with the loop's argv and longopts: returns -1 when opt
 * was one of these and the loop goes on, else the exit code to return
 * now (a bad value, or what option_other() says of any other option).
 */
int operands_option(struct operands *o, int opt, char **argv, const struct option *longopts);

/*
 * Check the operands (PATHs, --files-from or -p are required) and open the
 * list or the profile.
 * Returns EXIT_OK, or the exit code after printing why not.
 */
int operands_open(struct operands *o);

/*
 * Call fn for each target. With -p, PATHs select entries before their file
 * is looked at, and a PATH that selects none is warned about and counted
 * as skipped. Returns 0, the callback's non-zero value, or -1 after
 * printing an error (a profile malformed part way).
 */
int operands_foreach(struct operands *o, hs_target_fn fn, void *ctx);

void operands_close(struct operands *o);

/*
 * Before a profile is mapped: a truncation of it by another program
 * (SIGBUS) ends hotset with a sentence and EXIT_USAGE, not a bus error.
 * operands_open() does it for -p; doctor, which reads its own way.
 */
void operands_guard_mapping(const char *profile);

/*
 * After operands_foreach() with a profile: unless quiet, say how many of
 * its files changed since it was made (they were acted on by path).
 */
void operands_report_stale(const struct operands *o);

/*
 * Count a file as skipped and, unless quiet, say why on stderr:
 * "hotset: PATH: what[: strerror(errnum)]", with the path escaped as by
 * print_path(). Safe to call from several walking threads at once.
 */
void operands_warn(struct operands *o, const char *path, int errnum, const char *what);

/*
 * path made absolute against the working directory, with "//" and "."
 * collapsed, without resolving symlinks ("./x/." and "x" give "$PWD/x",
 * "." gives "$PWD", "//tmp/x/" "/tmp/x"). With dotdot, ".." drops the name
 * before it ("a/../b" gives "$PWD/b"), as a shell's cd does: right for
 * matching profile paths, not for opening (after a symlink, ".." leads
 * elsewhere). malloc'd, or NULL when out of memory or the working
 * directory is gone.
 */
char *absolute_path(const char *path, bool dotdot);

/* Threads for walking trees: the online CPUs, at most 8. */
unsigned default_threads(void);

#endif
