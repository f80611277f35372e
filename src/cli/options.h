/*
 * options.h - the options that mean the same in every command
 * (docs/options.md), and the end of every option loop: -h, -V, and
 * errors that name the option and guess what was meant.
 */
#ifndef HOTSET_CLI_OPTIONS_H
#define HOTSET_CLI_OPTIONS_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cmd.h"

/*
 * Every command's getopt string starts with OPTS_START (or "+" OPTS_START,
 * to stop at the job's command): the leading ':' lets option_other() tell
 * a missing argument from an unknown option.
 */
#define OPTS_START ":hVqJ"
#define COMMON_LONGOPTS \
	{ "help", no_argument, NULL, 'h' }, \
	{ "version", no_argument, NULL, 'V' }, \
	{ "quiet", no_argument, NULL, 'q' }, \
	{ "json", no_argument, NULL, 'J' }

/*
 * What the tree walkers (status, warm, evict, snapshot) act on: -x, -L,
 * the list of --files-from and -0, the filters -I, -i and -m. Their
 * option loops hand these to operands_option() (operands.h).
 */
#define WALK_OPTS "xLI:i:m:0"
#define WALK_LONGOPTS \
	{ "one-file-system", no_argument, NULL, 'x' }, \
	{ "dereference", no_argument, NULL, 'L' }, \
	{ "files-from", required_argument, NULL, OPT_FILES_FROM }, \
	{ "null", no_argument, NULL, '0' }, \
	{ "include", required_argument, NULL, 'I' }, \
	{ "exclude", required_argument, NULL, 'i' }, \
	{ "max-file-size", required_argument, NULL, 'm' }

/* Their lines in each command's --help. */
#define WALK_USAGE \
	"  -x, --one-file-system  do not cross mount points\n" \
	"  -L, --dereference      follow symlinks inside directories\n" \
	"      --files-from FILE  also the names FILE lists, one a line ('-': standard\n" \
	"                         input), as PATHs: directories are walked\n" \
	"  -0, --null             the names of --files-from end with NUL (find -print0)\n" \
	"  -I, --include GLOB     only files whose name matches GLOB (a glob with a '/':\n" \
	"                         the path); repeat for more\n" \
	"  -i, --exclude GLOB     skip files and directories whose name matches GLOB\n" \
	"  -m, --max-file-size SIZE\n" \
	"                         skip files larger than SIZE (4096, 512K, 1G...)\n"

/* Long options without a letter: values beyond any character. */
enum {
	OPT_TRACE = 0x100, OPT_BACKEND, OPT_PROBE, OPT_REPORT, OPT_BUDGET, OPT_DEPTH,
	OPT_INFLIGHT, OPT_METHOD, OPT_ORDER, OPT_CHUNK, OPT_NO_WRITEBACK, OPT_FILES, OPT_PRINT0,
	OPT_FILES_FROM, OPT_OUTPUT_ALL, OPT_CSV, OPT_SVG, OPT_SAMPLE, OPT_SAMPLE_SIZE, OPT_POINTS,
	OPT_INTERVAL, OPT_STATE, OPT_STATUS, OPT_PROFILE_OUTPUT, OPT_MODEL, OPT_READ_AHEAD, OPT_SIZES,
	OPT_MODE, OPT_PROTECT, OPT_DAEMON, OPT_PIDFILE, OPT_LOG, OPT_LOGS, OPT_HALT, OPT_DRY_RUN,
	OPT_RESUME, OPT_NAME, OPT_ENGINE, OPT_STEP, OPT_MEM_REQUEST, OPT_IO_CGROUP, OPT_CGROUP,
	OPT_UNIT, OPT_PID, OPT_FOR,
};

/*
 * What an option loop does with what it does not handle itself: -h prints
 * the usage (EXIT_OK), -V the version (EXIT_OK); an unknown option or a
 * missing argument is a usage error naming it, with the closest long
 * options as suggestions ("did you mean"). Returns the exit code.
 */
int option_other(const struct cmd *cmd, int opt, char **argv, const struct option *longopts);

/*
 * A count for option: decimal digits only, from min to max; anything else
 * prints a usage error. Returns 0, or EXIT_USAGE.
 */
int option_count(const struct cmd *cmd, const char *option, const char *arg,
		 unsigned min, unsigned max, unsigned *out);

/*
 * -p PROFILE into *profile: one profile a run (hotset keep takes several as
 * operands), so a second -p is a usage error rather than a silent choice.
 * Returns 0, or EXIT_USAGE.
 */
int option_profile(const struct cmd *cmd, const char **profile, const char *arg);

/* The usage error for an option's size that parse_size() refused; returns EXIT_USAGE. */
int option_bad_size(const struct cmd *cmd, const char *option, const char *arg);

/*
 * --budget SIZE, as keep, run and warm take it: a size parse_size() takes,
 * at least a page if page is set (keep and run: a budget under a page holds
 * nothing), else above 0. Returns 0 with *out set, or EXIT_USAGE after
 * saying why not.
 */
int option_budget(const struct cmd *cmd, const char *arg, bool page, uint64_t *out);

/*
 * The names among candidates[0..n) closest to a mistyped word, by edit
 * distance, as git suggests commands: sets want[i] for each, returns how
 * many (0 if none is close enough to be meant).
 */
size_t similar_names(const char *word, const char *const *candidates, size_t n, bool *want);

/* Parse a size such as 512M, 1.5G, 4096 or 10% (of RAM); -1 if invalid. */
int parse_size(const char *s, uint64_t *out);

/* Parse a duration such as 0.2s, 200ms, 10 (seconds), 5m or 1h into ns; -1 if invalid. */
int parse_duration(const char *s, uint64_t *ns);

#endif
