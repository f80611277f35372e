/*
 * cmd-curve.c - hotset curve: how much memory a recorded job needs to stop
 * waiting, from the miss-ratio curve of its page-access trace.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model/curve.h"
#include "model/need.h"
#include "job/usage.h"
#include "operands.h"
#include "options.h"
#include "curve-report.h"
#include "atomic-write.h"
#include "cmd.h"
#include "messages.h"
#include "output.h"

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

#define LRU_POINTS 101	/* LRU's points by default: exact at any size */

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

/* What the options give that the curve_cmd does not keep. */
struct curve_args {
	const char *sizes, *read_ahead;	/* --sizes and --read-ahead as given */
	bool points_given;
	uint64_t ra;			/* --read-ahead, in bytes */
};

/*
 * The options and the operand into k, ops and a. Returns -1 to go on,
 * else the exit status (a usage error, or --help and --version done).
 */
static int parse_options(struct curve_cmd *k, struct operands *ops, struct curve_args *a,
			 int argc, char **argv)
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
	unsigned size;
	int opt, rc;

	while ((opt = getopt_long(argc, argv, OPTS_START "p:", longopts, NULL)) != -1) {
		switch (opt) {
		case 'J': k->json = true; break;
		case 'p':
			if ((rc = option_profile(&cmd_curve, &ops->profile, optarg)))
				return rc;
			break;
		case 'q': k->quiet = true; break;	/* curve prints no warnings */
		case OPT_CSV: k->csv = true; break;
		case OPT_SVG: k->svg = optarg; break;
		case OPT_SAMPLE:
			if (parse_rate(optarg, &k->opts.sample_rate))
				return usage_error(&cmd_curve, "--sample takes a rate above 0 and up "
						   "to 1, such as 0.01 or 1%%, not '%s'", optarg);
			break;
		case OPT_SAMPLE_SIZE:
			if ((rc = option_count(&cmd_curve, "--sample-size", optarg, 1, UINT32_MAX - 1,
					       &size)))
				return rc;
			k->opts.sample_size = size;
			break;
		case OPT_POINTS:
			if ((rc = option_count(&cmd_curve, "--points", optarg, 2, 1000000, &k->points)))
				return rc;
			a->points_given = true;
			break;
		case OPT_MODEL:
			if (!strcmp(optarg, "lru"))
				k->opts.policy = HS_CURVE_LRU;
			else if (!strcmp(optarg, "kernel"))
				k->opts.policy = HS_CURVE_KERNEL;
			else if (!strcmp(optarg, "auto"))
				k->opts.policy = HS_CURVE_AUTO;
			else
				return usage_error(&cmd_curve, "--model is 'lru', 'kernel' or 'auto', "
						   "not '%s'", optarg);
			break;
		case OPT_READ_AHEAD:
			if (parse_size(optarg, &a->ra))
				return option_bad_size(&cmd_curve, "--read-ahead", optarg);
			a->read_ahead = optarg;
			break;
		case OPT_SIZES: a->sizes = optarg; break;
		case OPT_MEM_REQUEST: k->mem_request = true; break;
		default: return option_other(&cmd_curve, opt, argv, longopts);
		}
	}
	if (k->json && k->csv)
		return usage_error(&cmd_curve, "-J and --csv are two formats: choose one");
	if (k->opts.sample_rate > 0 && k->opts.sample_size)
		return usage_error(&cmd_curve, "--sample and --sample-size are two ways to sample: "
				   "choose one");
	if (k->opts.policy == HS_CURVE_KERNEL && k->opts.sample_size)
		return usage_error(&cmd_curve, "--sample-size (SHARDS) is for --model lru: the "
				   "kernel model samples at a rate (--sample)");
	if (k->opts.policy == HS_CURVE_LRU && a->read_ahead)
		return usage_error(&cmd_curve, "--read-ahead is for --model kernel: LRU reads "
				   "only what is accessed");
	if (a->sizes && a->points_given)
		return usage_error(&cmd_curve, "--points and --sizes both place the points: "
				   "choose one");
	if (k->mem_request && k->csv)
		return usage_error(&cmd_curve, "--mem-request and --csv are two outputs: choose one");
	if (k->svg && !*k->svg)
		return usage_error(&cmd_curve, "an empty --svg FILE names no file");
	if (argc - optind != !ops->profile)
		return usage_error(&cmd_curve, "give exactly one PROFILE (as an operand or with -p)");
	if (!ops->profile)
		ops->profile = argv[optind];
	return -1;
}

static int run_curve(int argc, char **argv)
{
	struct curve_cmd k = { 0 };
	struct operands ops = { .cmd = &cmd_curve };
	struct hs_error err = { 0 };
	struct hs_usage run = { 0 };
	struct curve_args a = { 0 };
	int rc;

	hs_curve_model_opts(&k.opts);	/* the model doctor and run use, unless told */
	if ((rc = parse_options(&k, &ops, &a, argc, argv)) >= 0)
		return rc;
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
	if (a.sizes && (rc = parse_sizes(&k, a.sizes))) {
		operands_close(&ops);
		return rc;
	}
	if (k.sizes)
		sizes_in_pages(&k);
	k.opts.sizes = k.sizes;
	k.opts.nsizes = k.sizes ? k.nsizes : 0;
	k.opts.points = k.points;
	k.opts.read_ahead_pages = a.read_ahead ? a.ra / k.ps : HS_CURVE_RA_DEVICE;
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
	k.need_source = curve_size_known(k.s.rerun_floor) ? "curve" : "working-set";
	hs_rerun_need(hs_curve_rerun_cache(&k.c, &k.s), k.ps, &run, &k.need);
	if (show_sizes(&k)) {
		error("out of memory");
		hs_curve_release(&k.c);
		free(k.sizes);
		return EXIT_FAILED;
	}
	rc = EXIT_OK;
	if (k.svg && write_atomically(k.svg, curve_write_svg, &k))
		rc = EXIT_FAILED;
	if (k.svg && !strcmp(k.svg, "-"))
		;	/* the SVG was the output */
	else if (k.json)
		curve_print_json(&k);
	else if (k.csv)
		curve_print_csv(&k);
	else if (k.mem_request)
		curve_print_mem_request(&k);
	else
		curve_print_human(&k);
	hs_curve_release(&k.c);
	free(k.sizes);
	free(k.show);
	return finish_stdout(rc);
}

const struct cmd cmd_curve = {
	"curve", run_curve, "how much memory a recorded job needs: its miss-ratio curve", usage,
};
