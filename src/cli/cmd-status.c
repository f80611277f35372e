/*
 * cmd-status.c - hotset status: how much of some files, or of a profile's
 * working set, is in the page cache now.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "hotset/residency.h"
#include "operands.h"
#include "options.h"

static const char usage[] =
	"usage: hotset status [-v] [-J] [-q] [-x] [-L] [-j N] [-p PROFILE] [PATH...]\n"
	"       [--files-from FILE [-0]] [-I GLOB] [-i GLOB] [-m SIZE]\n"
	"\n"
	"Show how much of the files under PATHs, or of a profile's working set, is\n"
	"resident in the page cache. Directories are walked recursively.\n"
	"\n"
	"  -p, --profile PROFILE  count only the pages the profile lists (PATHs, if\n"
	"                         also given, select the profile's files under them)\n"
	"  -v, --verbose          a row per file, with a residency bar\n"
	WALK_USAGE
	"  -J, --json             machine-readable output\n"
	"  -q, --quiet            no progress line, no warnings about skipped files\n"
	"  -j, --threads N        walk with N threads (default: one per CPU, or 1\n"
	"                         with -v so that rows keep the walk's order)\n"
	"  -V, --version          show hotset's version\n"
	"  -h, --help             show this help\n"
	"\n"
	"Residency is unknown for files the caller may not write (the kernel\n"
	"refuses to say); they are counted apart, never guessed.\n"
	"Exit status: 0 done, 1 some files could not be examined, 2 usage error.\n";

const struct cmd cmd_status;

#define BAR_CELLS 20

struct status {
	bool verbose, json;
	struct json j;
	struct hs_residency_total total;
	struct operands *ops;
	pthread_mutex_t lock;	/* the walk may call status_one from several threads */
};

static void print_row(struct status *s, const struct hs_target *t,
		      const struct hs_target_residency *r)
{
	const struct hs_cache_counts *c = &r->counts;
	const bool known = r->rc == 0;
	char a[16], b[16], pct[8];
	double cells[BAR_CELLS];

	if (s->json) {
		json_begin_object(&s->j, NULL);
		json_bytes(&s->j, "path", t->path, t->path_len);
		json_u64(&s->j, "pages", t->pages);
		if (known)
			json_u64(&s->j, "resident_pages", c->cached);
		else
			json_null(&s->j, "resident_pages");
		json_end_object(&s->j);
		return;
	}
	if (!known) {
		for (int i = 0; i < BAR_CELLS; i++)
			cells[i] = -1;
	} else if (t->ranges || hs_residency_cells(t->fd, (uint64_t)t->st->st_size, cells,
						     BAR_CELLS) < 0) {
		/* a profile's ranges do not map onto slices of the file: one level */
		double f = c->pages ? (double)c->cached / (double)c->pages : 0;

		for (int i = 0; i < BAR_CELLS; i++)
			cells[i] = f;
	}
	print_bar(stdout, cells, BAR_CELLS);
	if (known)
		printf(" %6s %10s / %-10s ", percent(c->cached, c->pages, pct),
		       human_size(r->resident_bytes, a), human_size(r->bytes, b));
	else
		printf(" %6s %10s / %-10s ", "?", "unknown", human_size(r->bytes, b));
	print_path(stdout, t->path, t->path_len);
	putchar('\n');
}

static int status_one(void *ctx, const struct hs_target *t)
{
	struct status *s = ctx;
	struct hs_target_residency r;
	int rc;

	rc = hs_residency_target(t, &r);
	if (rc && rc != -EPERM) {
		operands_warn(s->ops, t->path, -rc, "cannot read residency");
		return 0;
	}
	pthread_mutex_lock(&s->lock);
	hs_residency_total_add(&s->total, t, &r);
	if (s->verbose)
		print_row(s, t, &r);
	pthread_mutex_unlock(&s->lock);
	return 0;
}

static void print_totals(struct status *s)
{
	const uint64_t ps = hs_page_size();
	const struct hs_residency_total *tot = &s->total;
	const struct hs_cache_counts *c = &tot->known;
	uint64_t pages = hs_residency_total_pages(tot);
	char a[16], b[16], pct[8];

	if (s->json) {
		json_u64(&s->j, "files", tot->files);
		json_u64(&s->j, "pages", pages);
		json_u64(&s->j, "resident_pages", c->cached);
		json_u64(&s->j, "bytes", tot->bytes);
		json_u64(&s->j, "resident_bytes", tot->resident_bytes);
		json_u64(&s->j, "unknown_files", tot->unknown_files);
		json_u64(&s->j, "unknown_pages", tot->unknown_pages);
		json_u64(&s->j, "page_size", ps);
		json_string(&s->j, "method", !tot->method ? NULL :
			    tot->method == HS_RES_CACHESTAT ? "cachestat" : "mincore");
		if (tot->method == HS_RES_CACHESTAT) {
			json_u64(&s->j, "dirty_pages", c->dirty);
			json_u64(&s->j, "writeback_pages", c->writeback);
			json_u64(&s->j, "evicted_pages", c->evicted);
			json_u64(&s->j, "recently_evicted_pages", c->recently_evicted);
		}
		json_u64(&s->j, "skipped_files", s->ops->skipped);
		json_u64(&s->j, "stale_files", s->ops->stale);
		json_end_object(&s->j);
		json_finish(&s->j);
		return;
	}
	printf("%10s: %llu", "Files", (unsigned long long)tot->files);
	if (tot->unknown_files || s->ops->skipped) {	/* as warm says it */
		fputs(" (", stdout);
		if (tot->unknown_files)
			printf("%llu unknown%s", (unsigned long long)tot->unknown_files,
			       s->ops->skipped ? ", " : "");
		if (s->ops->skipped)
			printf("%u skipped with a warning", s->ops->skipped);
		putchar(')');
	}
	printf("\n%10s: %llu (%s)\n", "Pages", (unsigned long long)pages, human_size(tot->bytes, a));
	printf("%10s: %llu (%s) %s", "Resident", (unsigned long long)c->cached,
	       human_size(tot->resident_bytes, b), percent(c->cached, c->pages, pct));
	if (tot->unknown_files)
		printf(" of the %llu pages that can be known", (unsigned long long)c->pages);
	putchar('\n');
	if (tot->method == HS_RES_CACHESTAT && c->pages)
		printf("%10s: %llu dirty, %llu writeback, %llu evicted (%llu recently)\n", "Pages",
		       (unsigned long long)c->dirty, (unsigned long long)c->writeback,
		       (unsigned long long)c->evicted, (unsigned long long)c->recently_evicted);
	if (tot->unknown_files)
		printf("Residency of %llu file%s is unknown: the kernel tells it only to users who\n"
		       "may write a file (or own it, or are root).\n",
		       (unsigned long long)tot->unknown_files, plural(tot->unknown_files));
}

static int run_status(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "profile", required_argument, NULL, 'p' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "threads", required_argument, NULL, 'j' },
		WALK_LONGOPTS,
		COMMON_LONGOPTS,
		{ 0 },
	};
	struct operands ops = { .cmd = &cmd_status };
	struct status s = { .ops = &ops, .lock = PTHREAD_MUTEX_INITIALIZER };
	unsigned threads = 0;
	int opt, rc;

	while ((opt = getopt_long(argc, argv, OPTS_START WALK_OPTS "p:vj:", longopts, NULL)) != -1) {
		switch (opt) {
		case 'p': ops.profile = optarg; break;
		case 'v': s.verbose = true; break;
		case 'J': s.json = true; break;
		case 'q': ops.quiet = true; break;
		case 'j':
			if ((rc = option_count(&cmd_status, "--threads", optarg, 1, 64, &threads)))
				return rc;
			break;
		default:
			if ((rc = operands_option(&ops, opt, argv, longopts)) >= 0)
				return rc;
		}
	}
	ops.paths = argv + optind;
	ops.npaths = argc - optind;
	/* rows come in walk order with one thread */
	ops.walk.threads = threads ? threads : s.verbose ? 1 : default_threads();
	if ((rc = operands_open(&ops)))
		return rc;
	if (!s.verbose)
		ops.progress_label = "Checking";	/* rows and a progress line do not mix */
	if (s.json)
		json_begin_report(&s.j, stdout, "status", s.verbose);
	rc = operands_foreach(&ops, status_one, &s);
	operands_report_stale(&ops);
	if (s.json && s.verbose)
		json_end_array(&s.j);
	if (rc == 0)
		print_totals(&s);
	operands_close(&ops);
	if (rc)
		return finish_stdout(EXIT_USAGE);
	return finish_stdout(ops.skipped ? EXIT_PARTIAL : EXIT_OK);
}

const struct cmd cmd_status = {
	"status", run_status, "show how much of files or a profile is in the page cache", usage,
};
