/*
 * cmd-status.c - hotset status: how much of some files, or of a profile's
 * working set, is in the page cache now.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "hotset/residency.h"
#include "operands.h"

static const char usage[] =
	"usage: hotset status [-v] [--json] [-q] [-x] [-L] [-j N] [-p PROFILE] [PATH...]\n"
	"\n"
	"Show how much of the files under PATHs, or of a profile's working set, is\n"
	"resident in the page cache. Directories are walked recursively.\n"
	"\n"
	"  -p, --profile PROFILE  count only the pages the profile lists (PATHs, if\n"
	"                         also given, select the profile's files under them)\n"
	"  -v, --verbose          a row per file, with a residency bar\n"
	"  -x, --one-file-system  do not cross mount points\n"
	"  -L, --dereference      follow symlinks inside directories\n"
	"      --json             machine-readable output\n"
	"  -q, --quiet            do not warn about files that are skipped\n"
	"  -j, --threads N        walk with N threads (default: one per CPU, or 1\n"
	"                         with -v so that rows keep the walk's order)\n"
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
	struct hs_cache_counts total;
	uint64_t files, unknown_files, unknown_pages, bytes, resident_bytes;
	enum hs_residency_method method;
	struct operands *ops;
	pthread_mutex_t lock;	/* the walk may call status_one from several threads */
};

/* Does t count page p (its ranges hold it, or it has none: the whole file)? */
static bool counts_page(const struct hs_target *t, uint64_t p)
{
	if (!t->ranges)
		return true;
	for (size_t i = 0; i < t->nranges; i++)
		if (t->ranges[i].first <= p && p <= t->ranges[i].last)
			return true;
	return false;
}

/*
 * The bytes of the file in t's counted pages, and in the resident ones: a
 * file's last page holds only the file's bytes in it, so that resident
 * bytes never exceed the size (fincore's RES counts that page whole).
 * Whether it is resident is asked only when the counts cannot tell.
 */
static void count_bytes(const struct hs_target *t, const struct hs_cache_counts *c, bool known,
			uint64_t *bytes, uint64_t *resident)
{
	const uint64_t ps = hs_page_size(), size = (uint64_t)t->st->st_size;
	const uint64_t end = size ? (size - 1) / ps : 0;	/* the last page */
	const struct hs_range last = { end, end };
	const uint64_t gap = size % ps ? ps - size % ps : 0;	/* past the end, in the last page */
	const bool counted = gap && counts_page(t, last.first);
	struct hs_cache_counts one = { 0 };

	*bytes = t->pages * ps - (counted ? gap : 0);
	*resident = known ? c->cached * ps : 0;
	if (known && counted && c->cached &&
	    (c->cached == c->pages ||
	     (hs_residency_count(t->fd, size, &last, 1, &one, NULL) == 0 && one.cached)))
		*resident -= gap;
}

static void print_row(struct status *s, const struct hs_target *t,
		      const struct hs_cache_counts *c, bool known, uint64_t bytes, uint64_t resident)
{
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
		       human_size(resident, a), human_size(bytes, b));
	else
		printf(" %6s %10s / %-10s ", "?", "unknown", human_size(bytes, b));
	print_path(stdout, t->path, t->path_len);
	putchar('\n');
}

static int status_one(void *ctx, const struct hs_target *t)
{
	struct status *s = ctx;
	struct hs_cache_counts c = { 0 };
	enum hs_residency_method m;
	uint64_t bytes, resident;
	int rc;

	rc = hs_residency_count(t->fd, (uint64_t)t->st->st_size, t->ranges, t->nranges, &c, &m);
	if (rc && rc != -EPERM) {
		operands_warn(s->ops, t->path, -rc, "cannot read residency");
		return 0;
	}
	count_bytes(t, &c, rc == 0, &bytes, &resident);
	pthread_mutex_lock(&s->lock);
	s->files++;
	s->bytes += bytes;
	s->resident_bytes += resident;
	if (rc == -EPERM) {
		s->unknown_files++;
		s->unknown_pages += t->pages;
	} else {
		s->method = m;
		hs_cache_counts_add(&s->total, &c);
	}
	if (s->verbose)
		print_row(s, t, &c, rc == 0, bytes, resident);
	pthread_mutex_unlock(&s->lock);
	return 0;
}

static void print_totals(struct status *s)
{
	const uint64_t ps = hs_page_size();
	const struct hs_cache_counts *c = &s->total;
	uint64_t pages = c->pages + s->unknown_pages;
	char a[16], b[16], pct[8];

	if (s->json) {
		json_u64(&s->j, "files", s->files);
		json_u64(&s->j, "pages", pages);
		json_u64(&s->j, "resident_pages", c->cached);
		json_u64(&s->j, "bytes", s->bytes);
		json_u64(&s->j, "resident_bytes", s->resident_bytes);
		json_u64(&s->j, "unknown_files", s->unknown_files);
		json_u64(&s->j, "unknown_pages", s->unknown_pages);
		json_u64(&s->j, "page_size", ps);
		json_string(&s->j, "method", !s->method ? NULL :
			    s->method == HS_RES_CACHESTAT ? "cachestat" : "mincore");
		if (s->method == HS_RES_CACHESTAT) {
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
	printf("%10s: %llu", "Files", (unsigned long long)s->files);
	if (s->unknown_files || s->ops->skipped) {	/* as warm says it */
		fputs(" (", stdout);
		if (s->unknown_files)
			printf("%llu unknown%s", (unsigned long long)s->unknown_files,
			       s->ops->skipped ? ", " : "");
		if (s->ops->skipped)
			printf("%u skipped with a warning", s->ops->skipped);
		putchar(')');
	}
	printf("\n%10s: %llu (%s)\n", "Pages", (unsigned long long)pages, human_size(s->bytes, a));
	printf("%10s: %llu (%s) %s", "Resident", (unsigned long long)c->cached,
	       human_size(s->resident_bytes, b), percent(c->cached, c->pages, pct));
	if (s->unknown_files)
		printf(" of the %llu pages that can be known", (unsigned long long)c->pages);
	putchar('\n');
	if (s->method == HS_RES_CACHESTAT && c->pages)
		printf("%10s: %llu dirty, %llu writeback, %llu evicted (%llu recently)\n", "Pages",
		       (unsigned long long)c->dirty, (unsigned long long)c->writeback,
		       (unsigned long long)c->evicted, (unsigned long long)c->recently_evicted);
	if (s->unknown_files)
		printf("Residency of %llu file%s is unknown: the kernel tells it only to users who\n"
		       "may write a file (or own it, or are root).\n",
		       (unsigned long long)s->unknown_files, plural(s->unknown_files));
}

static int run_status(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "profile", required_argument, NULL, 'p' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "one-file-system", no_argument, NULL, 'x' },
		{ "dereference", no_argument, NULL, 'L' },
		{ "json", no_argument, NULL, 'J' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "threads", required_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct operands ops = { .cmd = &cmd_status };
	struct status s = { .ops = &ops, .lock = PTHREAD_MUTEX_INITIALIZER };
	int opt, rc, threads = 0;

	while ((opt = getopt_long(argc, argv, "p:vxLqj:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'p': ops.profile = optarg; break;
		case 'v': s.verbose = true; break;
		case 'x': ops.walk.one_filesystem = true; break;
		case 'L': ops.walk.follow_symlinks = true; break;
		case 'J': s.json = true; break;
		case 'q': ops.quiet = true; break;
		case 'j':
			if ((threads = atoi(optarg)) < 1 || threads > 64)
				return usage_error(&cmd_status, "--threads takes a number from 1 to 64");
			break;
		case 'h': return print_usage(&cmd_status);
		default: return usage_error(&cmd_status, NULL);
		}
	}
	ops.paths = argv + optind;
	ops.npaths = argc - optind;
	/* rows come in walk order with one thread */
	ops.walk.threads = threads ? (unsigned)threads : s.verbose ? 1 : default_threads();
	if ((rc = operands_open(&ops)))
		return rc;
	if (!s.verbose)
		ops.progress_label = "Checking";	/* rows and a progress line do not mix */
	if (s.json)
		json_begin_report(&s.j, s.verbose);
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
