/*
 * fincore-table.c - status's table as util-linux's fincore prints it
 * (see fincore-table.h).
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "fincore-table.h"
#include "options.h"
#include "cmd.h"
#include "messages.h"
#include "output.h"

/*
 * The table's columns: fincore's (util-linux 2.40), in its order for
 * --output-all, with its names and width hints, then hotset's own.
 */
enum column_id {
	COL_PAGES, COL_SIZE, COL_FILE, COL_RES, COL_DIRTY_PAGES, COL_DIRTY,
	COL_WRITEBACK_PAGES, COL_WRITEBACK, COL_EVICTED_PAGES, COL_EVICTED,
	COL_RECENTLY_EVICTED_PAGES, COL_RECENTLY_EVICTED,
	COL_COUNTED_PAGES, COL_RES_PERCENT, COL_UNKNOWN, COL_STALE, NCOLUMNS
};

static const struct table_column columns[NCOLUMNS] = {
	[COL_PAGES] = { "PAGES", true, 1 },
	[COL_SIZE] = { "SIZE", true, 5 },
	[COL_FILE] = { "FILE", false, 4 },
	[COL_RES] = { "RES", true, 5 },
	[COL_DIRTY_PAGES] = { "DIRTY_PAGES", true, 1 },
	[COL_DIRTY] = { "DIRTY", true, 5 },
	[COL_WRITEBACK_PAGES] = { "WRITEBACK_PAGES", true, 1 },
	[COL_WRITEBACK] = { "WRITEBACK", true, 5 },
	[COL_EVICTED_PAGES] = { "EVICTED_PAGES", true, 1 },
	[COL_EVICTED] = { "EVICTED", true, 5 },
	[COL_RECENTLY_EVICTED_PAGES] = { "RECENTLY_EVICTED_PAGES", true, 1 },
	[COL_RECENTLY_EVICTED] = { "RECENTLY_EVICTED", true, 5 },
	[COL_COUNTED_PAGES] = { "COUNTED_PAGES", true, 1 },
	[COL_RES_PERCENT] = { "RES%", true, 1 },
	[COL_UNKNOWN] = { "UNKNOWN", false, 1 },
	[COL_STALE] = { "STALE", false, 1 },
};

void fincore_all_columns(struct fincore_table *f)
{
	for (f->ncols = 0; f->ncols < NCOLUMNS; f->ncols++)
		f->cols[f->ncols] = (int)f->ncols;
}

/*
 * -o COLS as fincore takes it: names separated by commas, in any case;
 * +COLS adds them to the columns already chosen (the default ones, or all
 * with --output-all). Returns 0, or EXIT_USAGE after saying why not.
 */
static int parse_columns(struct fincore_table *f, const struct cmd *cmd, const char *list)
{
	const char *p = list;
	const char *names[NCOLUMNS];
	bool want[NCOLUMNS];

	if (*p == '+')
		p++;
	else
		f->ncols = 0;
	for (;;) {
		size_t n = strcspn(p, ",");
		int id = -1;
		char word[64];

		for (int i = 0; i < NCOLUMNS; i++)
			if (n && !strncasecmp(p, columns[i].name, n) && !columns[i].name[n])
				id = i;
		if (id >= 0 && f->ncols == TABLE_MAX_COLUMNS)
			return usage_error(cmd, "-o %s: more than %d columns", list,
					   TABLE_MAX_COLUMNS);
		if (id >= 0) {
			f->cols[f->ncols++] = id;
			if (!p[n])
				return 0;
			p += n + 1;
			continue;
		}
		if (!n)
			return usage_error(cmd, "-o %s: an empty column name", list);
		for (size_t i = 0; i < sizeof(word) - 1 && i < n; i++)
			word[i] = (char)toupper((unsigned char)p[i]);
		word[n < sizeof(word) - 1 ? n : sizeof(word) - 1] = '\0';
		for (int i = 0; i < NCOLUMNS; i++)
			names[i] = columns[i].name;
		for (int i = 0; similar_names(word, names, NCOLUMNS, want) && i < NCOLUMNS; i++)
			if (want[i])
				return usage_error(cmd, "unknown column '%.*s'; did you mean "
						   "'%s'?", (int)n, p, names[i]);
		return usage_error(cmd, "unknown column '%.*s' (see the list of "
				   "columns in 'hotset status --help')", (int)n, p);
	}
}

int fincore_columns(struct fincore_table *f, const struct cmd *cmd, const char *list)
{
	static const int defaults[] = { COL_RES, COL_PAGES, COL_SIZE, COL_FILE };	/* fincore's */

	if (!f->ncols)
		for (; f->ncols < sizeof(defaults) / sizeof(defaults[0]); f->ncols++)
			f->cols[f->ncols] = defaults[f->ncols];
	return list ? parse_columns(f, cmd, list) : 0;
}

void fincore_start(struct fincore_table *f, FILE *out)
{
	const struct table_column *cols[TABLE_MAX_COLUMNS];

	if (f->j)
		return;
	for (size_t i = 0; i < f->ncols; i++)
		cols[i] = &columns[f->cols[i]];
	table_start(&f->tab, out, cols, f->ncols, f->raw, f->noheadings);
}

struct fincore_row fincore_row_of(const struct hs_target *t, const struct hs_target_residency *r)
{
	return (struct fincore_row){
		.name = t->path, .len = t->path_len, .size = (uint64_t)t->st->st_size,
		.counted = t->pages, .counts = r->rc ? NULL : &r->counts,
		.cachestat = !r->rc && r->method == HS_RES_CACHESTAT, .stale = t->stale,
	};
}

/* The count of pages a column shows (*v), or why not: '?' unknown, '-' not without cachestat. */
static char column_count(const struct fincore_row *w, int id, uint64_t *v)
{
	const struct hs_cache_counts *c = w->counts;

	if (id == COL_COUNTED_PAGES) {
		*v = w->counted;
		return 0;
	}
	if (!c)
		return '?';
	switch (id) {
	case COL_PAGES: case COL_RES: *v = c->cached; return 0;
	case COL_DIRTY_PAGES: case COL_DIRTY: *v = c->dirty; break;
	case COL_WRITEBACK_PAGES: case COL_WRITEBACK: *v = c->writeback; break;
	case COL_EVICTED_PAGES: case COL_EVICTED: *v = c->evicted; break;
	default: *v = c->recently_evicted; break;
	}
	return w->cachestat ? 0 : '-';
}

/* Columns of bytes (of memory: pages x page size), shown as -b says: RES, DIRTY... */
static bool bytes_column(int id)
{
	return id == COL_RES || id == COL_DIRTY || id == COL_WRITEBACK || id == COL_EVICTED ||
	       id == COL_RECENTLY_EVICTED;
}

/* A size in bytes, as -b says: "4096", or "4K". */
static const char *size_cell(const struct fincore_table *f, uint64_t bytes, char buf[24])
{
	if (f->bytes)
		snprintf(buf, 24, "%llu", (unsigned long long)bytes);
	else
		short_size(bytes, buf);
	return buf;
}

/* A row of fincore's table: the columns -o chose. */
static void table_row_of(struct fincore_table *f, const struct fincore_row *w)
{
	const char *cells[TABLE_MAX_COLUMNS];
	size_t lens[TABLE_MAX_COLUMNS];
	char bufs[TABLE_MAX_COLUMNS][24];
	uint64_t v;

	for (size_t i = 0; i < f->ncols; i++) {
		const int id = f->cols[i];
		char *buf = bufs[i], why;

		switch (id) {
		case COL_FILE:
			cells[i] = w->name;
			lens[i] = w->len;
			continue;
		case COL_SIZE:
			cells[i] = size_cell(f, w->size, buf);
			break;
		case COL_UNKNOWN:
			cells[i] = w->counts ? "no" : "yes";
			break;
		case COL_STALE:
			cells[i] = w->stale ? "yes" : "no";
			break;
		case COL_RES_PERCENT:
			cells[i] = w->counts ? percent(w->counts->cached, w->counts->pages, buf) : "?";
			break;
		default:
			if ((why = column_count(w, id, &v))) {
				buf[0] = why, buf[1] = '\0';
				cells[i] = buf;
			} else if (bytes_column(id)) {
				cells[i] = size_cell(f, memory_bytes(v, hs_page_size()), buf);
			} else {
				snprintf(buf, 24, "%llu", (unsigned long long)v);
				cells[i] = buf;
			}
			break;
		}
		lens[i] = strlen(cells[i]);
	}
	table_row(&f->tab, cells, lens);
}

/*
 * The same row as fincore -J writes it, in the array "fincore": the
 * columns' names in lower case as keys, in -o's order; FILE a string;
 * counts of pages numbers; sizes numbers with -b, else strings ("4K");
 * null where the table shows ? or -. hotset's own: COUNTED_PAGES a
 * number, RES% a number (null for a file without pages), UNKNOWN and
 * STALE booleans.
 */
static void json_row_of(struct fincore_table *f, const struct fincore_row *w)
{
	struct json *j = f->j;
	char key[32], buf[24];
	uint64_t v;

	json_begin_object(j, NULL);
	for (size_t i = 0; i < f->ncols; i++) {
		const int id = f->cols[i];
		size_t k;

		for (k = 0; k < sizeof(key) - 1 && columns[id].name[k]; k++)
			key[k] = (char)tolower((unsigned char)columns[id].name[k]);
		key[k] = '\0';
		switch (id) {
		case COL_FILE:
			json_bytes(j, key, w->name, w->len);
			break;
		case COL_SIZE:
			if (f->bytes)
				json_u64(j, key, w->size);
			else
				json_string(j, key, size_cell(f, w->size, buf));
			break;
		case COL_UNKNOWN:
			json_bool(j, key, !w->counts);
			break;
		case COL_STALE:
			json_bool(j, key, w->stale);
			break;
		case COL_RES_PERCENT:
			if (w->counts && w->counts->pages)
				json_double(j, key, 100.0 * (double)w->counts->cached /
						    (double)w->counts->pages);
			else
				json_null(j, key);
			break;
		default:
			if (column_count(w, id, &v))
				json_null(j, key);
			else if (!bytes_column(id) || f->bytes)
				json_u64(j, key, bytes_column(id) ? memory_bytes(v, hs_page_size()) : v);
			else
				json_string(j, key, size_cell(f, memory_bytes(v, hs_page_size()), buf));
			break;
		}
	}
	json_end_object(j);
}

void fincore_row(struct fincore_table *f, const struct fincore_row *w)
{
	if (f->j)
		json_row_of(f, w);
	else
		table_row_of(f, w);
}

void fincore_end(struct fincore_table *f)
{
	if (!f->j)
		table_end(&f->tab);
}
