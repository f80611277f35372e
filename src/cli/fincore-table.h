/*
 * fincore-table.h - status's table as util-linux's fincore prints it
 * (-o, --output-all, -n, -r, -b, -c, -J): its columns, their names, a row
 * of a file or of all of them (TOTAL), as text or as fincore -J's objects.
 */
#ifndef HOTSET_CLI_FINCORE_TABLE_H
#define HOTSET_CLI_FINCORE_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cache/residency.h"
#include "cmd.h"
#include "output.h"

/*
 * What a row of fincore's table says: of a file, or with -c of all of
 * them (the TOTAL row). counts is NULL when residency is unknown.
 */
struct fincore_row {
	const char *name;
	size_t len;
	uint64_t size, counted;		/* the file's size; the pages counted */
	const struct hs_cache_counts *counts;
	bool cachestat;			/* cachestat's counts (dirty...) are known */
	bool stale;
};

struct fincore_table {
	bool raw, noheadings, bytes;	/* -r, -n, -b */
	int cols[TABLE_MAX_COLUMNS];	/* the columns chosen, in order */
	size_t ncols;
	struct table tab;		/* the text table, between start and end */
	struct json *j;			/* rows as fincore -J's objects if not NULL */
};

/* --output-all: every column, in fincore's order then hotset's. */
void fincore_all_columns(struct fincore_table *f);

/*
 * The columns, once the options are read: fincore's default ones unless
 * --output-all chose them, then -o's list (NULL: none). Returns 0, or
 * EXIT_USAGE after saying why not (for cmd).
 */
int fincore_columns(struct fincore_table *f, const struct cmd *cmd, const char *list);

/* Start the text table on out; with j set, rows go to j instead. */
void fincore_start(struct fincore_table *f, FILE *out);

/* The row of t, of residency r. */
struct fincore_row fincore_row_of(const struct hs_target *t, const struct hs_target_residency *r);

/* Write a row: to the text table, or as an object to j. */
void fincore_row(struct fincore_table *f, const struct fincore_row *w);

/* Write what the text table holds and free it (nothing with j). */
void fincore_end(struct fincore_table *f);

#endif
