/*
 * cmd-curve.c - hotset curve: how much memory a recorded job needs to stop
 * waiting, from the miss-ratio curve of its page-access trace.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/curve.h"
#include "kernel/memory.h"
#include "job/usage.h"
#include "chart.h"
#include "operands.h"
#include "options.h"

static const char usage[] =
	"usage: hotset curve [-q] [-J | --csv] [--svg FILE] [--model MODEL] [--read-ahead SIZE]\n"
	"                    [--sample RATE | --sample-size N] [--points N | --sizes LIST]\n"
	"                    [--mem-request] [-p] PROFILE\n"
	"\n"
	"The miss curve of a job recorded with 'hotset record --trace': the bytes it\n"
	"would read from the disk with a page cache of each size, from a cold start\n"
	"and on a re-run that finds its previous run's pages cached as far as they\n"
	"fit, up to the size beyond which more cache reads no less. Prints the\n"
	"working set, the cache at which a re-run reads nothing, the knee of the\n"
	"curve and the sizes for 90% and 99% hits, a chart and a table. With\n"
	"--mem-request, the memory a warm re-run needs, as Slurm's --mem.\n"
	"\n"
	"      --model MODEL      the page cache: 'kernel' (Linux's active and inactive\n"
	"                         lists, refaults, readahead; simulated at the sizes\n"
	"                         that tell the curve, a long trace on a sample),\n"
	"                         'lru' (exact at every size), or 'auto' (the default:\n"
	"                         kernel, as doctor and run count; lru with SHARDS)\n"
	"      --read-ahead SIZE  kernel: the readahead window (default: each file's\n"
	"                         device's read_ahead_kb; 0 for none)\n"
	"  -p, --profile PROFILE  the profile (or give it as the operand; - for stdin)\n"
	"  -J, --json             machine-readable output\n"
	"      --csv              the points as CSV: cache_bytes,miss_bytes_cold,miss_bytes_rerun\n"
	"      --svg FILE         also write the chart as an SVG image to FILE\n"
	"      --sample RATE      estimate from a sample of the pages: 0.01 or 1% (lru:\n"
	"                         SHARDS; kernel: of the blocks of files; 1: the whole\n"
	"                         trace, however long)\n"
	"      --sample-size N    estimate from at most N sampled pages (SHARDS, fixed size)\n"
	"      --points N         --csv, --json, --svg: N points, evenly from no cache to\n"
	"                         the curve's end (default: the sizes simulated; lru 101)\n"
	"      --sizes LIST       these cache sizes, exactly, instead: 64M,128M,1G\n"
	"      --mem-request      print the memory a warm re-run needs to read nothing\n"
	"                         from the disk, as sbatch's --mem (468M): its cache,\n"
	"                         and what the recorded run wrote and its peak RSS\n"
	"  -q, --quiet            with --mem-request: print the --mem value alone\n"
	"  -V, --version          show hotset's version\n"
	"  -h, --help             show this help\n"
	"\n"
	"Exit status: 0 done, 1 the output could not be written, 2 usage error,\n"
	"malformed profile, a profile without a trace, or the SVG not written.\n";

const struct cmd cmd_curve;

struct curve_cmd {
	const char *profile;
	bool json, csv;
	const char *svg;
	unsigned points;	/* --points: evenly from 0 to the curve's end; 0: not given */
	uint64_t *sizes;	/* --sizes, in pages, ascending; NULL: none given */
	unsigned nsizes;
	uint64_t *show;		/* the sizes of the points printed (CSV, JSON, SVG), in pages */
	unsigned nshow;
	struct hs_curve_opts opts;
	struct hs_curve c;
	struct hs_curve_summary s;
	uint32_t ps;
	bool mem_request, quiet;
	struct hs_rerun_need need;	/* of a warm re-run: the curve's, and the run's usage */
	const char *need_source;	/* what need.read is: "curve" or "working-set" */
	struct progress progress;
	const char *phase;
};

#define CHART_W 64
#define CHART_H 16
#define TABLE_NAMES 26	/* columns for names after the figures */
#define LRU_POINTS 101	/* LRU's points by default: exact at any size */

static uint64_t bytes_of(const struct curve_cmd *k, double accesses)
{
	return (uint64_t)llround(accesses) * k->ps;
}

static bool known(uint64_t pages)
{
	return pages != HS_CURVE_NEVER && pages != HS_CURVE_UNKNOWN;
}

static void json_size(struct json *j, const char *key, const struct curve_cmd *k, uint64_t pages)
{
	if (!known(pages))
		json_null(j, key);
	else
		json_u64(j, key, pages * k->ps);
}

static void print_json(const struct curve_cmd *k)
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
	json_u64_or_null(&j, "rerun_floor_read_bytes", known(k->s.rerun_floor),
			 known(k->s.rerun_floor) ?
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

static void print_csv(const struct curve_cmd *k)
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
			if (known(named[i].pages))
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
	} else if (known(k->s.rerun_zero)) {
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

static void print_human(const struct curve_cmd *k)
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
static void print_mem_request(const struct curve_cmd *k)
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
static void write_svg_to(FILE *f, const void *ctx)
{
	const struct curve_cmd *k = ctx;

	curve_svg(f, &k->c, k->ps, k->show, k->nshow, true);
}

/* The sizes of the points printed: --sizes, --points, or the curve's own. */
static int show_sizes(struct curve_cmd *k)
{
	unsigned n = k->sizes ? k->nsizes : k->points ? k->points :
		     k->c.size ? (unsigned)k->c.n : LRU_POINTS;

	if (!(k->show = malloc((n ? n : 1) * sizeof(*k->show))))
		return -ENOMEM;
	for (unsigned i = 0; i < n; i++)
		k->show[i] = k->sizes ? k->sizes[i] : k->points || !k->c.size ?
			     hs_curve_even_size(&k->c, i, n) : k->c.size[i];
	k->nshow = n;
	return 0;
}

/* The model's progress, on a terminal. */
static void on_progress(void *arg, const char *phase, uint64_t done, uint64_t total)
{
	struct curve_cmd *k = arg;

	if (phase != k->phase) {
		if (k->phase)
			progress_end(&k->progress);
		progress_start(&k->progress, phase, total, k->quiet);
		k->phase = phase;
	}
	progress_update(&k->progress, done, "accesses");
}

/* ---- the command ------------------------------------------------------------ */

/* "0.01" or "1%": a fraction in (0, 1]. */
static int parse_rate(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno)
		return -1;
	if (*end == '%') {
		v /= 100;
		end++;
	}
	if (*end || !(v > 0 && v <= 1))
		return -1;
	*out = v;
	return 0;
}

static int by_value(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* "64M,128M,1G": sizes into k->sizes (bytes, as given: sorted once in pages). */
static int parse_sizes(struct curve_cmd *k, const char *arg)
{
	char *copy = strdup(arg), *save = NULL, *tok;
	size_t n = 0, cap = 0;
	int rc = 0;

	if (!copy)
		return error("out of memory"), EXIT_FAILED;
	for (tok = strtok_r(copy, ",", &save); tok && !rc; tok = strtok_r(NULL, ",", &save)) {
		uint64_t v;

		if (parse_size(tok, &v))
			rc = option_bad_size(&cmd_curve, "--sizes", tok);
		else if (hs_grow(&k->sizes, &cap, n + 1, sizeof(*k->sizes)))
			rc = (error("out of memory"), EXIT_FAILED);
		else
			k->sizes[n++] = v;
	}
	free(copy);
	if (!rc && !n)
		rc = usage_error(&cmd_curve, "--sizes takes a list of sizes, such as 64M,128M,1G");
	if (rc) {
		free(k->sizes);
		k->sizes = NULL;
		return rc;
	}
	k->nsizes = (unsigned)n;
	return 0;
}

/* --sizes in whole pages of cache, sorted, each once. */
static void sizes_in_pages(struct curve_cmd *k)
{
	unsigned n = 0;

	for (unsigned i = 0; i < k->nsizes; i++)
		k->sizes[i] /= k->ps;
	qsort(k->sizes, k->nsizes, sizeof(*k->sizes), by_value);
	for (unsigned i = 0; i < k->nsizes; i++)
		if (!n || k->sizes[n - 1] != k->sizes[i])
			k->sizes[n++] = k->sizes[i];
	k->nsizes = n;
}

static int run_curve(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "profile", required_argument, NULL, 'p' },
		{ "csv", no_argument, NULL, OPT_CSV },
		{ "svg", required_argument, NULL, OPT_SVG },
		{ "sample", required_argument, NULL, OPT_SAMPLE },
		{ "sample-size", required_argument, NULL, OPT_SAMPLE_SIZE },
		{ "points", required_argument, NULL, OPT_POINTS },
		{ "model", required_argument, NULL, OPT_MODEL },
		{ "read-ahead", required_argument, NULL, OPT_READ_AHEAD },
		{ "sizes", required_argument, NULL, OPT_SIZES },
		{ "mem-request", no_argument, NULL, OPT_MEM_REQUEST },
		COMMON_LONGOPTS,
		{ 0 },
	};
	struct curve_cmd k = { 0 };
	struct operands ops = { .cmd = &cmd_curve };
	struct hs_error err = { 0 };
	struct hs_usage run = { 0 };
	const char *sizes = NULL, *read_ahead = NULL;
	bool points_given = false;
	uint64_t ra = 0;
	unsigned size;
	int opt, rc;

	hs_curve_model_opts(&k.opts);	/* the model doctor and run use, unless told */
	while ((opt = getopt_long(argc, argv, OPTS_START "p:", longopts, NULL)) != -1) {
		switch (opt) {
		case 'J': k.json = true; break;
		case 'p':
			if ((rc = option_profile(&cmd_curve, &ops.profile, optarg)))
				return rc;
			break;
		case 'q': k.quiet = true; break;	/* curve prints no warnings */
		case OPT_CSV: k.csv = true; break;
		case OPT_SVG: k.svg = optarg; break;
		case OPT_SAMPLE:
			if (parse_rate(optarg, &k.opts.sample_rate))
				return usage_error(&cmd_curve, "--sample takes a rate above 0 and up "
						   "to 1, such as 0.01 or 1%%, not '%s'", optarg);
			break;
		case OPT_SAMPLE_SIZE:
			if ((rc = option_count(&cmd_curve, "--sample-size", optarg, 1, UINT32_MAX - 1,
					       &size)))
				return rc;
			k.opts.sample_size = size;
			break;
		case OPT_POINTS:
			if ((rc = option_count(&cmd_curve, "--points", optarg, 2, 1000000, &k.points)))
				return rc;
			points_given = true;
			break;
		case OPT_MODEL:
			if (!strcmp(optarg, "lru"))
				k.opts.policy = HS_CURVE_LRU;
			else if (!strcmp(optarg, "kernel"))
				k.opts.policy = HS_CURVE_KERNEL;
			else if (!strcmp(optarg, "auto"))
				k.opts.policy = HS_CURVE_AUTO;
			else
				return usage_error(&cmd_curve, "--model is 'lru', 'kernel' or 'auto', "
						   "not '%s'", optarg);
			break;
		case OPT_READ_AHEAD:
			if (parse_size(optarg, &ra))
				return option_bad_size(&cmd_curve, "--read-ahead", optarg);
			read_ahead = optarg;
			break;
		case OPT_SIZES: sizes = optarg; break;
		case OPT_MEM_REQUEST: k.mem_request = true; break;
		default: return option_other(&cmd_curve, opt, argv, longopts);
		}
	}
	if (k.json && k.csv)
		return usage_error(&cmd_curve, "-J and --csv are two formats: choose one");
	if (k.opts.sample_rate > 0 && k.opts.sample_size)
		return usage_error(&cmd_curve, "--sample and --sample-size are two ways to sample: "
				   "choose one");
	if (k.opts.policy == HS_CURVE_KERNEL && k.opts.sample_size)
		return usage_error(&cmd_curve, "--sample-size (SHARDS) is for --model lru: the "
				   "kernel model samples at a rate (--sample)");
	if (k.opts.policy == HS_CURVE_LRU && read_ahead)
		return usage_error(&cmd_curve, "--read-ahead is for --model kernel: LRU reads "
				   "only what is accessed");
	if (sizes && points_given)
		return usage_error(&cmd_curve, "--points and --sizes both place the points: "
				   "choose one");
	if (k.mem_request && k.csv)
		return usage_error(&cmd_curve, "--mem-request and --csv are two outputs: choose one");
	if (k.svg && !*k.svg)
		return usage_error(&cmd_curve, "an empty --svg FILE names no file");
	if (argc - optind != !ops.profile)
		return usage_error(&cmd_curve, "give exactly one PROFILE (as an operand or with -p)");
	if (!ops.profile)
		ops.profile = argv[optind];
	if ((rc = operands_open(&ops)))
		return rc;
	k.profile = ops.profile;
	k.ps = hs_profile_header(ops.reader)->page_size;
	{
		/* what the recorded run cost, if the profile says (record writes it) */
		const struct hs_profile_header *h = hs_profile_header(ops.reader);

		run.io_known = h->write_bytes_known;
		run.write_bytes_disk = h->write_bytes;
		run.max_rss_bytes = h->max_rss_known ? h->max_rss : 0;
		if (h->lost_events_known && h->lost_events)
			warning("%s: the recording lost %llu accesses: the trace is short of them, "
				"and so is the curve", k.profile, (unsigned long long)h->lost_events);
	}
	if (sizes && (rc = parse_sizes(&k, sizes))) {
		operands_close(&ops);
		return rc;
	}
	if (k.sizes)
		sizes_in_pages(&k);
	k.opts.sizes = k.sizes;
	k.opts.nsizes = k.sizes ? k.nsizes : 0;
	k.opts.points = k.points;
	k.opts.read_ahead_pages = read_ahead ? ra / k.ps : HS_CURVE_RA_DEVICE;
	k.opts.progress = on_progress;
	k.opts.progress_arg = &k;
	rc = hs_curve_from_profile(ops.reader, &k.opts, &k.c, &err);
	if (k.phase)
		progress_end(&k.progress);
	operands_close(&ops);
	if (rc == -ENODATA) {
		error("%s: the profile has no access trace; record the job with "
		      "'hotset record --trace -o PROFILE -- CMD'", k.profile);
		return EXIT_USAGE;
	}
	if (rc == -EINVAL && err.line)
		error("%s:%u: %s", k.profile, err.line, err.msg);
	else if (rc)
		error("%s: %s", k.profile, err.msg[0] ? err.msg : strerror(-rc));
	if (rc) {
		free(k.sizes);
		return EXIT_USAGE;
	}
	hs_curve_summarize(&k.c, &k.s);
	/* the one rule of what a re-run needs (memory.h), as doctor and run count it */
	k.need_source = known(k.s.rerun_floor) ? "curve" : "working-set";
	hs_rerun_need(hs_curve_rerun_cache(&k.c, &k.s), k.ps, &run, &k.need);
	if (show_sizes(&k)) {
		error("out of memory");
		hs_curve_release(&k.c);
		free(k.sizes);
		return EXIT_FAILED;
	}
	rc = EXIT_OK;
	if (k.svg && write_atomically(k.svg, write_svg_to, &k))
		rc = EXIT_FAILED;
	if (k.svg && !strcmp(k.svg, "-"))
		;	/* the SVG was the output */
	else if (k.json)
		print_json(&k);
	else if (k.csv)
		print_csv(&k);
	else if (k.mem_request)
		print_mem_request(&k);
	else
		print_human(&k);
	hs_curve_release(&k.c);
	free(k.sizes);
	free(k.show);
	return finish_stdout(rc);
}

const struct cmd cmd_curve = {
	"curve", run_curve, "how much memory a recorded job needs: its miss-ratio curve", usage,
};
