/*
 * output.h - how hotset talks to people and to scripts (output.c): message
 * lines, escaped paths, sizes, bars, util-linux's tables, progress on a
 * terminal, and streaming JSON. It prints what it is given and knows no
 * command.
 */
#ifndef HOTSET_CLI_OUTPUT_H
#define HOTSET_CLI_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

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
