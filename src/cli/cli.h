/*
 * cli.h - what the hotset commands share: the command table entry, exit
 * codes, messages, and output helpers (JSON, sizes, bars, progress).
 *
 * The library never prints; everything a user sees is written here.
 */
#ifndef HOTSET_CLI_H
#define HOTSET_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* Exit codes that scripts can rely on (see hotset(1), EXIT STATUS). */
enum {
	EXIT_OK = 0,
	EXIT_PARTIAL = 1,	/* some operands failed; the rest was done */
	EXIT_USAGE = 2,		/* bad command line or unreadable profile */
	EXIT_FAILED = 2,	/* the command failed (a profile cannot be written): as a usage error, README */
	EXIT_HOTSET = 125,	/* record/time: hotset itself failed */
	EXIT_NOEXEC = 126,	/* record/time: command cannot be executed */
	EXIT_NOTFOUND = 127,	/* record/time: command not found */
};

struct cmd {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;	/* one line, for `hotset --help` */
	const char *usage;	/* synopsis and options, for CMD --help */
};

extern const struct cmd cmd_record, cmd_show, cmd_snapshot, cmd_status, cmd_warm,
	cmd_evict, cmd_time, cmd_curve, cmd_doctor, cmd_keep, cmd_run;

/* The table, in the order `hotset --help` lists it; NULL-terminated. */
extern const struct cmd *const commands[];
const struct cmd *find_command(const char *name);

/* ---- messages: "hotset: ..." on stderr ---------------------------------- */
void warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print an error; returns -1 so that callers can `return error(...)`. */
int error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
_Noreturn void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print "usage: ..." for cmd with a reason and return EXIT_USAGE. */
int usage_error(const struct cmd *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Print cmd's usage to stdout and return EXIT_OK (for --help). */
int print_usage(const struct cmd *cmd);

/* Flush stdout and turn a write error into an error message; returns the
 * exit code to use (code, or EXIT_PARTIAL/EXIT_HOTSET if stdout failed). */
int finish_stdout(int code);
/* The exit code that mirrors the job's wait status; killed by a signal,
 * hotset raises it instead of returning (see hotset.c). */
int exit_as_job(int wait_status);
/*
 * Make each catchable signal that would end hotset (SIGHUP, SIGINT, SIGQUIT,
 * SIGTERM, SIGPIPE, SIGALRM, SIGUSR1, SIGUSR2, SIGXCPU, SIGXFSZ, SIGVTALRM,
 * SIGPROF, SIGIO, SIGPWR) first remove the temporary files of the files
 * being written (hs_atomic_cleanup()). A signal ignored or handled is left
 * alone; a handler installed later replaces this one for its signal.
 */
void catch_fatal_signals(void);

/*
 * A message line for stderr, built whole and written with one write(2):
 * stderr is unbuffered, where a message printed piecemeal costs a system
 * call per piece (per byte, for a path printed character by character),
 * and the lines of several threads could mix. A line longer than buf goes
 * out in several writes.
 */
struct line {
	size_t len;
	char buf[4096];
};
static inline void line_start(struct line *l)
{
	l->len = 0;
}
void line_add(struct line *l, const char *s, size_t n);
/* Add a path escaped as by print_path(). */
void line_add_path(struct line *l, const char *path, size_t len);
/* Add text with its control characters escaped as by print_path() (not '\\'). */
void line_add_text(struct line *l, const char *text, size_t len);
/* Add a newline and write the line to stderr (errors are ignored: stderr is the last resort). */
void line_write(struct line *l);

/* ---- options ------------------------------------------------------------ */

/* Parse a size such as 512M, 1.5G, 4096 or 10% (of RAM); -1 if invalid. */
int parse_size(const char *s, uint64_t *out);

/* Parse a duration such as 0.2s, 200ms, 10 (seconds), 5m or 1h into ns; -1 if invalid. */
int parse_duration(const char *s, uint64_t *ns);

/* ---- human output -------------------------------------------------------- */

/* "12.3 MiB"; buf holds at least 16 bytes. */
const char *human_size(uint64_t bytes, char buf[16]);
/*
 * Sizes that say what they are (hotset(1), SIZES), the same in every
 * command. The memory pages take, pages x page size (capped at 2^64 - 1):
 * "62.6 MiB of memory", the size that follows a count of pages. The bytes
 * of files' data, a file's size or its bytes in some of its pages (a
 * file's last page holds less than a page): "54.6 MiB of file data".
 */
#define SIZE_STR_MAX 40
const char *memory_size(uint64_t pages, uint64_t page_size, char buf[SIZE_STR_MAX]);
const char *file_data_size(uint64_t bytes, char buf[SIZE_STR_MAX]);
/* pages x page_size, capped at 2^64 - 1: the bytes of memory_size() */
uint64_t memory_bytes(uint64_t pages, uint64_t page_size);
/*
 * A size as util-linux prints it (fincore, lsblk: size_to_human_string
 * with one-letter suffixes): "0B", "512B", "4K", "9.8K", "1.5M", powers
 * of 1024, one decimal rounded half up and dropped when 0, "." whatever
 * the locale. buf holds at least 24 bytes.
 */
const char *short_size(uint64_t bytes, char buf[24]);
/* "45.2%" of part/whole ("-" if whole is 0); buf holds at least 8 bytes. */
const char *percent(uint64_t part, uint64_t whole, char buf[8]);
/*
 * Print a path for a terminal: control characters (C0, DEL, and C1, as raw
 * bytes or as UTF-8 U+0080-U+009F) escaped as \xHH per byte, a backslash
 * as \\, other bytes as they are (UTF-8 included).
 */
void print_path(FILE *f, const char *path, size_t len);
/*
 * Print text for a terminal: control characters escaped as by print_path(),
 * everything else (a backslash too) as it is.
 */
void print_text(FILE *f, const char *text, size_t len);
/*
 * Print text for an HTML page: control characters escaped as by
 * print_path() (with backslash, a backslash doubled too, as in a path), then
 * &, <, >, " and ' as entities: the page shows what a terminal shows, and
 * never markup. A command to paste is printed without backslash.
 */
void print_html(FILE *f, const char *text, size_t len, bool backslash);
/*
 * argv as one command line that a POSIX shell reads back into the same
 * words: a word with anything but letters, digits and @%+=:,./-_ is
 * single-quoted, a quote written '\'', a control character $'\xHH' (a
 * POSIX.1-2024 quote that bash, zsh and ksh read; dash does not). The
 * result holds no byte print_path() would escape. Malloc'd; NULL if out
 * of memory.
 */
char *shell_join(char *const *argv);
/* The "s" of "%llu file%s": "" for one. */
static inline const char *plural(uint64_t n)
{
	return n == 1 ? "" : "s";
}

/*
 * A bar of width cells for a file: 'O' fully resident cell, 'o' partly,
 * ' ' none, '?' unknown. cells[i] is a fraction in [0,1] or < 0 if unknown.
 */
void print_bar(FILE *f, const double *cells, int width);

/* ---- tables, as util-linux prints them (fincore, lsblk) ----------------- */

/*
 * A table written a row at a time. Raw: cells separated by one space,
 * with spaces, tabs, backslashes and every byte that is not printable
 * ASCII written as \xHH (libsmartcols' raw mode, in the C or a UTF-8
 * locale). Otherwise aligned columns,
 * one space apart, names escaped as by print_path(): the first
 * TABLE_HELD_ROWS rows are held to size the columns (fincore sizes them
 * over all rows, as it holds the whole table), later rows are written at
 * once and a wider cell only shifts its own row. Memory stays bounded
 * whatever the number of rows.
 */
#define TABLE_MAX_COLUMNS 64
#define TABLE_HELD_ROWS 1000
struct table_column {
	const char *name;
	bool right;			/* right-aligned (numbers) */
	/*
	 * libsmartcols' width hint: a column is as wide as its widest cell,
	 * or its name if that is wider (with or without the heading), and
	 * then at least hint wide, unless its cells are all narrower than
	 * its name.
	 */
	size_t hint;
};
struct table {
	FILE *f;
	const struct table_column *cols[TABLE_MAX_COLUMNS];
	size_t ncols;
	bool raw, noheadings;
	/* private: held rows, each cell as its width, length and escaped text */
	size_t width[TABLE_MAX_COLUMNS];
	char *held;
	size_t held_len, held_cap, nheld;
	bool streaming;			/* the widths are fixed, rows go out at once */
};
/* cols[0..ncols) are copied as pointers: they must outlive the table. */
void table_start(struct table *t, FILE *f, const struct table_column *const *cols, size_t ncols,
		 bool raw, bool noheadings);
/* A row: cells[i] of lens[i] bytes, one for each column. */
void table_row(struct table *t, const char *const *cells, const size_t *lens);
/* Write what is held and free it. */
void table_end(struct table *t);

/* ---- progress on a terminal ------------------------------------------- */

struct progress {
	bool on;		/* stderr is a TTY and not --quiet */
	const char *label;
	uint64_t total;		/* bytes (or items) expected, 0 if unknown */
	double last;		/* monotonic seconds of the last redraw */
	double start;
};
void progress_start(struct progress *p, const char *label, uint64_t total, bool quiet);
/* Redraw at most ten times a second. */
void progress_update(struct progress *p, uint64_t done, const char *unit);
void progress_end(struct progress *p);

/* ---- files written whole ------------------------------------------------- */

/*
 * Write what fn prints to f into path as profiles are written (whole, then
 * renamed into place, never through another user's link nor over anything
 * but a regular file: hs_atomic_open(); "-" is standard output). A new
 * file gets mode 0666 less the umask (write_atomically_mode(): the mode
 * given). Returns 0, or -1 after printing an error naming path.
 */
int write_atomically(const char *path, void (*fn)(FILE *f, const void *ctx), const void *ctx);
int write_atomically_mode(const char *path, mode_t mode, void (*fn)(FILE *f, const void *ctx),
			  const void *ctx);

/* ---- JSON ----------------------------------------------------------------- */

/*
 * A streaming JSON writer. Keys are NULL inside arrays. Strings are bytes:
 * valid UTF-8 passes through, any other byte b is written as \udcXX (the
 * "surrogateescape" convention, so Python's os.fsencode() gives back the
 * original path).
 */
struct json {
	FILE *f;
	int depth;
	bool first[64];		/* no member written yet at this depth */
};
void json_init(struct json *j, FILE *f);
/*
 * The version of the JSON reports' schema (docs/json.md): raised when a key
 * is removed, renamed or given another meaning, not when one is added.
 */
#define JSON_FORMAT 1
/*
 * Start a report on f: its object, with "report" (the command) and
 * "format" first, and its "items" array if rows follow.
 */
void json_begin_report(struct json *j, FILE *f, const char *report, bool with_items);
void json_begin_object(struct json *j, const char *key);
void json_end_object(struct json *j);
void json_begin_array(struct json *j, const char *key);
void json_end_array(struct json *j);
void json_string(struct json *j, const char *key, const char *s);
void json_bytes(struct json *j, const char *key, const char *s, size_t len);
void json_u64(struct json *j, const char *key, uint64_t v);
/* v if known, else null (a value hotset cannot know: docs/json.md). */
void json_u64_or_null(struct json *j, const char *key, bool known, uint64_t v);
void json_i64(struct json *j, const char *key, int64_t v);
/* A number already written out (exact decimals a double would round). */
void json_number(struct json *j, const char *key, const char *digits);
void json_double(struct json *j, const char *key, double v);
void json_bool(struct json *j, const char *key, bool v);
void json_null(struct json *j, const char *key);
/* Terminate the document with a newline. */
void json_finish(struct json *j);

#endif
