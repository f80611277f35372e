/*
 * curve-report.c - curve's reports (curve-report.h): the same figures as
 * JSON, CSV, or text for people (the chart, the table of sizes, the
 * re-run's line), --mem-request's value, and the SVG image.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "chart.h"
#include "curve-report.h"
#include "output.h"

#define CHART_W 64
#define CHART_H 16
#define TABLE_NAMES 26	/* columns for names after the figures */

static uint64_t bytes_of(const struct curve_cmd *k, double accesses)
{
	return (uint64_t)llround(accesses) * k->ps;
}

bool curve_size_known(uint64_t pages)
{
	return pages != HS_CURVE_NEVER && pages != HS_CURVE_UNKNOWN;
}

static void json_size(struct json *j, const char *key, const struct curve_cmd *k, uint64_t pages)
{
	if (!curve_size_known(pages))
		json_null(j, key);
	else
		json_u64(j, key, pages * k->ps);
}

void curve_print_json(const struct curve_cmd *k)
{
	bool curve_known = k->s.knee != HS_CURVE_UNKNOWN;
	struct json j;

	json_begin_report(&j, stdout, "curve", false);
	json_string(&j, "profile", k->profile);
	json_string(&j, "policy", hs_curve_model_name(&k->c));
	json_string(&j, "model", hs_curve_model_name(&k->c));
	if (k->c.policy == HS_CURVE_KERNEL)
		json_u64(&j, "read_ahead_bytes", k->c.read_ahead_pages * k->ps);
	else
		json_null(&j, "read_ahead_bytes");
	json_u64(&j, "page_size", k->ps);
	json_u64(&j, "accesses", k->c.accesses);
	json_u64(&j, "working_set_bytes", k->c.pages * k->ps);
	json_bool(&j, "curve_known", curve_known);
	json_u64_or_null(&j, "simulated_sizes", k->c.policy == HS_CURVE_KERNEL, k->c.n);
	json_u64(&j, "curve_end_bytes", k->c.end * k->ps);
	json_u64_or_null(&j, "never_up_to_bytes", curve_known && k->s.upto != UINT64_MAX,
			 k->s.upto * k->ps);
	json_size(&j, "rerun_zero_bytes", k, k->s.rerun_zero);
	json_size(&j, "rerun_floor_bytes", k, k->s.rerun_floor);
	json_u64_or_null(&j, "rerun_floor_read_bytes", curve_size_known(k->s.rerun_floor),
			 curve_size_known(k->s.rerun_floor) ?
			 bytes_of(k, hs_curve_misses(&k->c, k->s.rerun_floor, true)) : 0);
	json_size(&j, "knee_bytes", k, k->s.knee);
	json_size(&j, "hits90_bytes", k, k->s.rerun_hits90);
	json_size(&j, "hits99_bytes", k, k->s.rerun_hits99);
	json_size(&j, "cold_hits90_bytes", k, k->s.cold_hits90);
	json_size(&j, "cold_hits99_bytes", k, k->s.cold_hits99);
	if (k->c.sampled) {
		json_double(&j, "sampling", k->c.sample_rate);
		json_u64(&j, "sampled_pages", k->c.sampled_pages);
	} else {
		json_null(&j, "sampling");
		json_null(&j, "sampled_pages");
	}
	if (k->opts.sample_size)
		json_u64(&j, "sample_size", k->opts.sample_size);
	else
		json_null(&j, "sample_size");
	json_u64(&j, "memory_needed_bytes", k->need.total);
	json_string(&j, "memory_needed_source", k->need_source);
	json_u64(&j, "memory_needed_read_bytes", k->need.read);
	json_u64_or_null(&j, "memory_needed_written_bytes", k->need.written_known, k->need.written);
	json_u64_or_null(&j, "memory_needed_rss_bytes", k->need.anon_known, k->need.anon);
	{
		char mem[32];

		snprintf(mem, sizeof(mem), "%lluM", (unsigned long long)hs_slurm_mem_mib(k->need.total));
		json_string(&j, "mem_request", mem);
	}
	json_begin_array(&j, "points");
	for (unsigned i = 0; i < k->nshow; i++) {
		uint64_t p = k->show[i];

		json_begin_object(&j, NULL);
		json_u64(&j, "cache_bytes", p * k->ps);
		json_u64(&j, "miss_bytes_cold", bytes_of(k, hs_curve_misses(&k->c, p, false)));
		json_u64(&j, "miss_bytes_rerun", bytes_of(k, hs_curve_misses(&k->c, p, true)));
		json_end_object(&j);
	}
	json_end_array(&j);
	json_end_object(&j);
	json_finish(&j);
}

void curve_print_csv(const struct curve_cmd *k)
{
	puts("cache_bytes,miss_bytes_cold,miss_bytes_rerun");
	for (unsigned i = 0; i < k->nshow; i++) {
		uint64_t p = k->show[i];

		printf("%llu,%llu,%llu\n", (unsigned long long)(p * k->ps),
		       (unsigned long long)bytes_of(k, hs_curve_misses(&k->c, p, false)),
		       (unsigned long long)bytes_of(k, hs_curve_misses(&k->c, p, true)));
	}
}

/* ---- for people ------------------------------------------------------------ */

/*
 * "256.0 KiB" of a size in pages; "no size" when none reaches it ("no size
 * up to X" when the curve stops short of its end); "unknown".
 */
static const char *size_of(const struct curve_cmd *k, uint64_t pages, char buf[48])
{
	char up[16];

	if (pages == HS_CURVE_UNKNOWN)
		return "unknown";
	if (pages == HS_CURVE_NEVER && k->s.upto == UINT64_MAX)
		return "no size";
	if (pages == HS_CURVE_NEVER) {
		snprintf(buf, 48, "no size up to %s", human_size(k->s.upto * k->ps, up));
		return buf;
	}
	return human_size(pages * k->ps, buf);
}

/*
 * The chart: cache size across (0 to the curve's end, or the largest size
 * asked), bytes from the disk up (0 to the most any point reads: readahead
 * can read more than the job accessed); '*' cold start, 'o' re-run, '#'
 * both. A column shows the point at or below its size; the kernel model's
 * point 0 (no cache, no readahead) only its own. 10 columns of labels, a
 * rule, CHART_W of plot: 76 in all.
 */
static void print_chart(const struct curve_cmd *k)
{
	char grid[CHART_H][CHART_W + 1], top[16], mid[16], end[16], half[16];
	uint64_t xend = k->c.end, first = k->c.size && k->c.n > 1 ? k->c.size[1] : 0;
	double ymax = (double)k->c.accesses;

	for (unsigned i = 0; i < k->nshow; i++)
		xend = k->show[i] > xend ? k->show[i] : xend;
	for (int x = 0; x < CHART_W; x++)
		for (int r = 0; r < 2; r++) {
			double v = hs_curve_misses(&k->c, (uint64_t)llround((double)xend * x / (CHART_W - 1)), r);

			ymax = v > ymax ? v : ymax;
		}
	memset(grid, ' ', sizeof(grid));
	for (int x = 0; x < CHART_W; x++) {
		uint64_t p = (uint64_t)llround((double)xend * x / (CHART_W - 1));

		if (x && p < first)
			continue;
		for (int r = 0; r < 2; r++) {
			double v = hs_curve_misses(&k->c, p, r);
			int y = ymax > 0 ? (int)lround(v / ymax * (CHART_H - 1)) : 0;
			char *cell = &grid[CHART_H - 1 - y][x];

			*cell = *cell == ' ' ? (r ? 'o' : '*') : *cell == (r ? 'o' : '*') ? *cell : '#';
		}
	}
	human_size(bytes_of(k, ymax), top);
	human_size(bytes_of(k, ymax / 2), mid);
	printf("Bytes read from the disk by cache size (* cold start, o re-run, # both):\n\n");
	for (int y = 0; y < CHART_H; y++) {
		const char *label = y == 0 ? top : y == CHART_H / 2 ? mid : "";

		grid[y][CHART_W] = '\0';
		printf("%10s |%s\n", label, grid[y]);
	}
	printf("%10s +", "0 B");
	for (int x = 0; x < CHART_W; x++)
		putchar(x % 16 == 15 ? '+' : '-');
	human_size(xend * k->ps / 2, half);
	human_size(xend * k->ps, end);
	printf("\n%11s 0%*s%*s\n\n", "", CHART_W / 2, half, CHART_W / 2 - 1, end);
}

struct row {
	uint64_t pages;
	int order;		/* ties keep the order of the list */
	const char *what;
};

static int by_pages(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->pages != y->pages)
		return x->pages < y->pages ? -1 : 1;
	return x->order - y->order;
}

/* The point nearest to size pages: a size that is one (the kernel's are few). */
static uint64_t nearest_point(const struct hs_curve *c, uint64_t pages)
{
	uint64_t best = 0, d = UINT64_MAX;

	if (!c->size)
		return pages / c->step * c->step;
	for (size_t i = 0; i < c->n; i++) {
		uint64_t e = c->size[i] > pages ? c->size[i] - pages : pages - c->size[i];

		if (e < d)
			d = e, best = c->size[i];
	}
	return best;
}

/*
 * A row a size: with --sizes those alone; else 0, quarters of the curve's
 * end (the nearest points), the working set, the end and the headline
 * sizes, named. Every row is a point of the curve: simulated, never read
 * between points.
 */
static void print_table(const struct curve_cmd *k)
{
	const uint64_t e = k->c.end;
	struct row named[] = {
		{ 0, 0, "no cache" }, { k->s.knee, 4, "knee" }, { k->s.rerun_hits90, 5, "90% hits" },
		{ k->s.rerun_hits99, 6, "99% hits" }, { k->s.rerun_zero, 7, "re-run reads nothing" },
		{ k->s.rerun_zero == HS_CURVE_NEVER ? k->s.rerun_floor : HS_CURVE_NEVER, 8,
		  "re-run's least" },
		{ k->c.pages, 9, "working set" }, { e, 10, "" },
	};
	struct row *rows = malloc((k->nsizes + 12) * sizeof(*rows));
	size_t n = 0;

	if (!rows)
		return;
	if (k->sizes) {
		for (unsigned i = 0; i < k->nsizes; i++)
			rows[n++] = (struct row){ k->sizes[i], 20 + (int)i, "" };
		/* named when they are one of the headline sizes */
		for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++)
			for (unsigned j = 0; j < k->nsizes; j++)
				if (named[i].pages == k->sizes[j]) {
					rows[n++] = named[i];
					break;
				}
	} else {
		rows[n++] = (struct row){ nearest_point(&k->c, e / 4), 1, "" };
		rows[n++] = (struct row){ nearest_point(&k->c, e / 2), 2, "" };
		rows[n++] = (struct row){ nearest_point(&k->c, e - e / 4), 3, "" };
		for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++)
			if (curve_size_known(named[i].pages))
				rows[n++] = named[i];
	}
	qsort(rows, n, sizeof(rows[0]), by_pages);
	printf("%10s  %-18s  %-18s\n", "CACHE", "COLD START", "RE-RUN");
	for (size_t i = 0; i < n;) {
		char size[16], cold[16], rerun[16], pc[8], pr[8];
		double vc = hs_curve_misses(&k->c, rows[i].pages, false);
		double vr = hs_curve_misses(&k->c, rows[i].pages, true);
		size_t j = i, col = 0;

		printf("%10s  %10s %7s  %10s %7s", human_size(rows[i].pages * k->ps, size),
		       human_size(bytes_of(k, vc), cold),
		       percent((uint64_t)llround(vc), k->c.accesses, pc),
		       human_size(bytes_of(k, vr), rerun),
		       percent((uint64_t)llround(vr), k->c.accesses, pr));
		/* the names of the size, wrapped under each other within 80 columns */
		for (; j < n && rows[j].pages == rows[i].pages; j++) {
			size_t len = strlen(rows[j].what);

			if (!len)
				continue;
			if (col && col + 2 + len > TABLE_NAMES) {
				printf(",\n%52s", "");
				col = 0;
			}
			printf("%s%s", col ? ", " : "  ", rows[j].what);
			col += len + 2;
		}
		putchar('\n');
		i = j;
	}
	free(rows);
}

static void print_rerun(const struct curve_cmd *k)
{
	char a[48], b[16];

	if (k->s.rerun_zero == HS_CURVE_UNKNOWN) {
		printf("Re-run:       unknown: the sample follows no page (a larger --sample)\n");
	} else if (curve_size_known(k->s.rerun_zero)) {
		printf("Re-run:       reads nothing with %s of cache\n", size_of(k, k->s.rerun_zero, a));
	} else if (k->s.upto != UINT64_MAX) {
		printf("Re-run:       reads from the disk at every size up to %s, the largest\n"
		       "              simulated\n", human_size(k->s.upto * k->ps, a));
	} else {	/* complete, and a floor above nothing: O_DIRECT, or readahead */
		printf("Re-run:       reads from the disk at any size: at least %s, from %s of\n"
		       "              cache (O_DIRECT, or readahead beyond what a run uses)\n",
		       human_size(bytes_of(k, hs_curve_misses(&k->c, k->s.rerun_floor, true)), b),
		       size_of(k, k->s.rerun_floor, a));
	}
}

void curve_print_human(const struct curve_cmd *k)
{
	char a[48], b[48], c[48];

	fputs("Profile:      ", stdout);
	print_path(stdout, k->profile, strlen(k->profile));
	printf("\nAccesses:     %llu page%s (%s read with no cache)\n",
	       (unsigned long long)k->c.accesses, plural(k->c.accesses),
	       human_size(k->c.accesses * k->ps, a));
	printf("Working set:  %llu page%s (%s): what a cold start reads with room for all,\n"
	       "              readahead aside\n",
	       (unsigned long long)k->c.pages, plural(k->c.pages), human_size(k->c.pages * k->ps, b));
	print_rerun(k);
	if (k->s.knee == HS_CURVE_NEVER)
		printf("Knee:         none: a cold start reads as much at any size\n");
	else
		printf("Knee:         %s (of the cold start's curve)\n", size_of(k, k->s.knee, a));
	printf("Hits:         90%% with %s, 99%% with %s (re-run)\n",
	       size_of(k, k->s.rerun_hits90, b), size_of(k, k->s.rerun_hits99, c));
	printf("Memory:       %s for a re-run to read %s (sbatch --mem=%lluM)\n",
	       human_size(k->need.total, a),
	       !strcmp(k->need_source, "curve") && k->s.rerun_zero == k->s.rerun_floor ?
	       "nothing" : "the least", (unsigned long long)hs_slurm_mem_mib(k->need.total));
	if (k->c.policy == HS_CURVE_KERNEL)
		printf("Model:        the kernel's active and inactive lists, refaults and readahead\n"
		       "              (up to %s), simulated at %zu sizes up to %s\n",
		       human_size(k->c.read_ahead_pages * k->ps, a), k->c.n,
		       human_size(hs_curve_size(&k->c, k->c.n - 1) * k->ps, b));
	else
		printf("Model:        least recently used, exact at every size\n");
	if (k->c.sampled && k->c.policy == HS_CURVE_KERNEL)
		printf("Sampling:     blocks of files that hold %.3g%% of the pages (%llu page%s),\n"
		       "              in caches as much smaller: the figures are estimates\n\n",
		       k->c.sample_rate * 100, (unsigned long long)k->c.sampled_pages,
		       plural(k->c.sampled_pages));
	else if (k->c.sampled)
		printf("Sampling:     SHARDS at %.3g%% (%llu page%s followed): the figures are estimates\n\n",
		       k->c.sample_rate * 100, (unsigned long long)k->c.sampled_pages,
		       plural(k->c.sampled_pages));
	else if (k->c.policy == HS_CURVE_KERNEL)
		printf("Sampling:     none: every access simulated\n\n");
	else
		printf("Sampling:     none: exact LRU stack distances\n\n");
	print_chart(k);
	print_table(k);
}

/* --mem-request: sbatch's --mem, and of what; -q: the value alone, for $(...). */
void curve_print_mem_request(const struct curve_cmd *k)
{
	static const char unknown[] = "unknown: the profile does not say (record it again)";
	unsigned long long mib = (unsigned long long)hs_slurm_mem_mib(k->need.total);
	bool zero = k->s.rerun_zero == k->s.rerun_floor;
	char a[16];

	if (k->quiet) {
		printf("%lluM\n", mib);
		return;
	}
	printf("--mem=%lluM: the memory a warm re-run of ", mib);
	print_path(stdout, k->profile, strlen(k->profile));
	printf(" needs to read %s from the disk (%s model%s)\n", zero ? "nothing" : "the least",
	       hs_curve_model_name(&k->c), k->c.sampled ? ", on a sample: an estimate" : "");
	printf("  cache       %10s  %s\n", human_size(k->need.read, a),
	       strcmp(k->need_source, "curve") ? "its working set (the sample follows no page)" :
	       zero ? "the least cache at which a re-run reads nothing" :
	       "the least cache at which a re-run reads the least it does");
	if (k->need.written_known)
		printf("  written     %10s  what its recorded run wrote (dirty page cache)\n",
		       human_size(k->need.written, a));
	else
		printf("  written     %s\n", unknown);
	if (k->need.anon_known)
		printf("  own memory  %10s  the peak RSS of its largest process\n",
		       human_size(k->need.anon, a));
	else
		printf("  own memory  %s\n", unknown);
}

/* The chart as a standalone SVG image (chart.h), for --svg. */
void curve_write_svg(FILE *f, const void *ctx)
{
	const struct curve_cmd *k = ctx;

	curve_svg(f, &k->c, k->ps, k->show, k->nshow, true);
}
