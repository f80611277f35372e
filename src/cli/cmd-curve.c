/*
 * cmd-curve.c - hotset curve: how much memory a recorded job needs to stop
 * waiting, from the miss-ratio curve of its page-access trace.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hotset/curve.h"
#include "chart.h"
#include "operands.h"
#include "options.h"

static const char usage[] =
	"usage: hotset curve [-q] [-J | --csv] [--svg FILE] [--sample RATE | --sample-size N]\n"
	"                    [--points N] [-p] PROFILE\n"
	"\n"
	"The miss curve of a job recorded with 'hotset record --trace': the bytes it\n"
	"would read from the disk with a page cache (LRU) of each size, from a cold\n"
	"start and on a re-run that finds its previous run's pages cached as far as\n"
	"they fit. Prints the working set, the cache at which a re-run reads nothing,\n"
	"the knee of the curve and the sizes for 90% and 99% hits, a chart and a table.\n"
	"\n"
	"  -p, --profile PROFILE  the profile (or give it as the operand; - for stdin)\n"
	"  -J, --json             machine-readable output\n"
	"      --csv              the points as CSV: cache_bytes,miss_bytes_cold,miss_bytes_rerun\n"
	"      --svg FILE         also write the chart as an SVG image to FILE\n"
	"      --sample RATE      estimate from a sample of the pages (SHARDS): 0.01 or 1%\n"
	"      --sample-size N    estimate from at most N sampled pages (SHARDS, fixed size)\n"
	"      --points N         points of the curve for --csv, --json, --svg (default 101)\n"
	"  -q, --quiet            accepted for uniformity: curve prints no warnings\n"
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
	unsigned points;
	struct hs_curve_opts opts;
	struct hs_curve c;
	struct hs_curve_summary s;
	uint32_t ps;
};

#define CHART_W 64
#define CHART_H 16
#define TABLE_NAMES 26	/* columns for names after the figures */

static uint64_t bytes_of(const struct curve_cmd *k, double accesses)
{
	return (uint64_t)llround(accesses) * k->ps;
}

static void json_size(struct json *j, const char *key, const struct curve_cmd *k, uint64_t pages)
{
	if (pages == UINT64_MAX)
		json_null(j, key);
	else
		json_u64(j, key, pages * k->ps);
}

static void print_json(const struct curve_cmd *k)
{
	struct json j;

	json_begin_report(&j, stdout, "curve", false);
	json_string(&j, "profile", k->profile);
	json_string(&j, "policy", "lru");
	json_u64(&j, "page_size", k->ps);
	json_u64(&j, "accesses", k->c.accesses);
	json_u64(&j, "working_set_bytes", k->c.pages * k->ps);
	json_size(&j, "rerun_zero_bytes", k, k->s.rerun_zero);
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
	json_begin_array(&j, "points");
	for (unsigned i = 0; i < k->points; i++) {
		uint64_t p = curve_point_pages(&k->c, i, k->points);

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
	for (unsigned i = 0; i < k->points; i++) {
		uint64_t p = curve_point_pages(&k->c, i, k->points);

		printf("%llu,%llu,%llu\n", (unsigned long long)(p * k->ps),
		       (unsigned long long)bytes_of(k, hs_curve_misses(&k->c, p, false)),
		       (unsigned long long)bytes_of(k, hs_curve_misses(&k->c, p, true)));
	}
}

/* ---- for people ------------------------------------------------------------ */

/* "256 KiB" of a size in pages; "never" for UINT64_MAX. */
static const char *size_of(const struct curve_cmd *k, uint64_t pages, char buf[16])
{
	if (pages == UINT64_MAX)
		return "never";
	return human_size(pages * k->ps, buf);
}

/*
 * The chart: cache size across (0 to the working set), bytes from the
 * disk up (0 to every access missing); '*' cold start, 'o' re-run, '#'
 * both. 10 columns of labels, a rule, CHART_W of plot: 76 in all.
 */
static void print_chart(const struct curve_cmd *k)
{
	char grid[CHART_H][CHART_W + 1], top[16], mid[16], end[16], half[16];
	double n = (double)k->c.accesses;

	memset(grid, ' ', sizeof(grid));
	for (int x = 0; x < CHART_W; x++) {
		uint64_t p = (uint64_t)llround((double)k->c.pages * x / (CHART_W - 1));

		for (int r = 0; r < 2; r++) {
			double v = hs_curve_misses(&k->c, p, r);
			int y = n > 0 ? (int)lround(v / n * (CHART_H - 1)) : 0;
			char *cell = &grid[CHART_H - 1 - y][x];

			*cell = *cell == ' ' ? (r ? 'o' : '*') : *cell == (r ? 'o' : '*') ? *cell : '#';
		}
	}
	human_size(k->c.accesses * k->ps, top);
	human_size(k->c.accesses * k->ps / 2, mid);
	printf("Bytes read from the disk by cache size (* cold start, o re-run, # both):\n\n");
	for (int y = 0; y < CHART_H; y++) {
		const char *label = y == 0 ? top : y == CHART_H / 2 ? mid : "";

		grid[y][CHART_W] = '\0';
		printf("%10s |%s\n", label, grid[y]);
	}
	printf("%10s +", "0 B");
	for (int x = 0; x < CHART_W; x++)
		putchar(x % 16 == 15 ? '+' : '-');
	human_size(k->c.pages * k->ps / 2, half);
	human_size(k->c.pages * k->ps, end);
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

/* A row a size: 0, quarters of the working set and the headline sizes, named. */
static void print_table(const struct curve_cmd *k)
{
	const uint64_t m = k->c.pages;
	struct row rows[] = {
		{ 0, 0, "no cache" }, { m / 4, 1, "" }, { m / 2, 2, "" }, { m - m / 4, 3, "" },
		{ k->s.knee, 4, "knee" }, { k->s.rerun_hits90, 5, "90% hits" },
		{ k->s.rerun_hits99, 6, "99% hits" }, { k->s.rerun_zero, 7, "re-run reads nothing" },
		{ m, 8, "working set" },
	};
	const size_t n = sizeof(rows) / sizeof(rows[0]);

	qsort(rows, n, sizeof(rows[0]), by_pages);
	printf("%10s  %-18s  %-18s\n", "CACHE", "COLD START", "RE-RUN");
	for (size_t i = 0; i < n;) {
		char size[16], cold[16], rerun[16], pc[8], pr[8];
		double vc = hs_curve_misses(&k->c, rows[i].pages, false);
		double vr = hs_curve_misses(&k->c, rows[i].pages, true);
		size_t j = i, col = 0;

		printf("%10s  %10s %7s  %10s %7s", size_of(k, rows[i].pages, size),
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
}

static void print_human(const struct curve_cmd *k)
{
	char a[16], b[16], c[16];

	fputs("Profile:      ", stdout);
	print_path(stdout, k->profile, strlen(k->profile));
	printf("\nAccesses:     %llu page%s (%s read with no cache)\n",
	       (unsigned long long)k->c.accesses, plural(k->c.accesses),
	       human_size(k->c.accesses * k->ps, a));
	printf("Working set:  %llu page%s (%s): what a cold start reads with room for all\n",
	       (unsigned long long)k->c.pages, plural(k->c.pages), human_size(k->c.pages * k->ps, b));
	printf("Re-run:       reads nothing with %s of cache\n", size_of(k, k->s.rerun_zero, c));
	printf("Knee:         %s (of the cold start's curve)\n", size_of(k, k->s.knee, a));
	printf("Hits:         90%% with %s, 99%% with %s (re-run)\n",
	       size_of(k, k->s.rerun_hits90, b), size_of(k, k->s.rerun_hits99, c));
	if (k->c.sampled)
		printf("Sampling:     SHARDS at %.3g%% (%llu page%s followed): the figures are estimates\n\n",
		       k->c.sample_rate * 100, (unsigned long long)k->c.sampled_pages,
		       plural(k->c.sampled_pages));
	else
		printf("Sampling:     none: exact LRU stack distances\n\n");
	print_chart(k);
	print_table(k);
}

/* The chart as a standalone SVG image (chart.h), for --svg. */
static void write_svg_to(FILE *f, const void *ctx)
{
	const struct curve_cmd *k = ctx;

	curve_svg(f, &k->c, k->ps, k->points, true);
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

static int run_curve(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "profile", required_argument, NULL, 'p' },
		{ "csv", no_argument, NULL, OPT_CSV },
		{ "svg", required_argument, NULL, OPT_SVG },
		{ "sample", required_argument, NULL, OPT_SAMPLE },
		{ "sample-size", required_argument, NULL, OPT_SAMPLE_SIZE },
		{ "points", required_argument, NULL, OPT_POINTS },
		COMMON_LONGOPTS,
		{ 0 },
	};
	struct curve_cmd k = { .points = 101 };
	struct operands ops = { .cmd = &cmd_curve };
	struct hs_error err = { 0 };
	unsigned size;
	int opt, rc;

	while ((opt = getopt_long(argc, argv, OPTS_START "p:", longopts, NULL)) != -1) {
		switch (opt) {
		case 'J': k.json = true; break;
		case 'p': ops.profile = optarg; break;
		case 'q': break;	/* curve prints no warnings */
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
			break;
		default: return option_other(&cmd_curve, opt, argv, longopts);
		}
	}
	if (k.json && k.csv)
		return usage_error(&cmd_curve, "-J and --csv are two formats: choose one");
	if (k.opts.sample_rate > 0 && k.opts.sample_size)
		return usage_error(&cmd_curve, "--sample and --sample-size are two ways to sample: "
				   "choose one");
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
	rc = hs_curve_from_profile(ops.reader, &k.opts, &k.c, &err);
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
	if (rc)
		return EXIT_USAGE;
	hs_curve_summarize(&k.c, &k.s);
	rc = EXIT_OK;
	if (k.svg && write_atomically(k.svg, write_svg_to, &k))
		rc = EXIT_FAILED;
	if (k.svg && !strcmp(k.svg, "-"))
		;	/* the SVG was the output */
	else if (k.json)
		print_json(&k);
	else if (k.csv)
		print_csv(&k);
	else
		print_human(&k);
	hs_curve_release(&k.c);
	return finish_stdout(rc);
}

const struct cmd cmd_curve = {
	"curve", run_curve, "how much memory a recorded job needs: its miss-ratio curve", usage,
};
