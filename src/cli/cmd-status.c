/*
 * cmd-status.c - hotset status: how much of some files, or of a profile's
 * working set, is in the page cache now.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "cache/residency.h"
#include "fincore-table.h"
#include "operands.h"
#include "options.h"
#include "cmd.h"
#include "messages.h"
#include "output.h"

static const char usage[] =
	"usage: hotset status [-v] [-J] [-q] [-x] [-L] [-j N] [-p PROFILE]\n"
	"                     [-o COLS | --output-all] [-n] [-r] [-b] [-c] [-R] [-C]\n"
	"                     [--files-from FILE [-0]] [-I GLOB] [-i GLOB] [-m SIZE]\n"
	"                     [PATH...]\n"
	"\n"
	"Show how much of the files under PATHs, or of a profile's working set, is\n"
	"resident in the page cache. Directories are walked recursively.\n"
	"\n"
	"  -p, --profile PROFILE  count only the pages the profile lists (PATHs, if\n"
	"                         also given, select the profile's files under them)\n"
	"  -v, --verbose          a row per file, with a residency bar\n"
	"  -o, --output COLS      a table of the columns COLS, a row per file, as\n"
	"                         fincore prints it (+COLS: the default ones and COLS)\n"
	"      --output-all       a table of every column\n"
	"  -n, --noheadings       a table without its heading\n"
	"  -r, --raw              a table in raw form: one space between cells,\n"
	"                         spaces and other unsafe bytes in them as \\xHH\n"
	"  -b, --bytes            a table with sizes in bytes, not 4K, 1.5M...\n"
	"  -c, --total            a table with a last row, TOTAL, of all the files\n"
	"  -R, --recursive        a table (directories are always walked, as\n"
	"                         fincore -R walks them)\n"
	"  -C, --cachestat        a table, and fail unless cachestat(2) counts\n"
	WALK_USAGE
	"  -J, --json             machine-readable output (with a table option: its\n"
	"                         rows as fincore -J writes them, in \"fincore\")\n"
	"  -q, --quiet            no progress line, no warnings about skipped files\n"
	"  -j, --threads N        walk with N threads (default: one per CPU, or 1\n"
	"                         with -v so that rows keep the walk's order)\n"
	"  -V, --version          show hotset's version\n"
	"  -h, --help             show this help\n"
	"\n"
	"\n"
	"Columns (case does not matter; the default: RES,PAGES,SIZE,FILE):\n"
	"  RES               memory the resident pages take (pages x page size)\n"
	"  PAGES             resident pages\n"
	"  SIZE              size of the file\n"
	"  FILE              file name\n"
	"  DIRTY_PAGES       resident pages not yet written back (also DIRTY, bytes)\n"
	"  WRITEBACK_PAGES   pages being written back (also WRITEBACK, bytes)\n"
	"  EVICTED_PAGES     pages the kernel remembers evicting (also EVICTED)\n"
	"  RECENTLY_EVICTED_PAGES  evicted recently enough to count as a refault\n"
	"                    if read again (also RECENTLY_EVICTED)\n"
	"  COUNTED_PAGES     pages counted: the file's, or those the profile lists\n"
	"  RES%              share of the pages counted that is resident\n"
	"  UNKNOWN           yes: residency cannot be known (no write permission)\n"
	"  STALE             yes: the file changed since the profile was made\n"
	"A value that cannot be known is ?; one that needs cachestat(2), on a\n"
	"kernel without it, is -.\n"
	"\n"
	"Residency is unknown for files the caller may not write (the kernel\n"
	"refuses to say); they are counted apart, never guessed.\n"
	"Exit status: 0 done, 1 some files could not be examined (or -C without\n"
	"cachestat), 2 usage error.\n";

const struct cmd cmd_status;

#define BAR_CELLS 20

struct status {
	bool verbose, json;
	bool table;				/* -o...: fincore's table */
	bool total_row;				/* -c: and its TOTAL */
	bool rows;				/* a row per file: -v or the table */
	struct fincore_table fin;
	struct json j;
	struct hs_residency_total total;
	uint64_t sizes;		/* the sizes of the files counted, for -c */
	struct operands *ops;
	pthread_mutex_t lock;	/* the walk may call status_one from several threads */
};

/* A row of the JSON items: every key, null where it cannot be known. */
static void json_item(struct status *s, const struct hs_target *t,
		      const struct hs_target_residency *r)
{
	const struct hs_cache_counts *c = &r->counts;
	const bool known = r->rc == 0, counts = known && r->method == HS_RES_CACHESTAT;

	json_begin_object(&s->j, NULL);
	json_bytes(&s->j, "path", t->path, t->path_len);
	json_u64(&s->j, "size", (uint64_t)t->st->st_size);
	json_u64(&s->j, "pages", t->pages);
	json_u64(&s->j, "bytes", r->bytes);
	json_bool(&s->j, "unknown", !known);
	json_bool(&s->j, "stale", t->stale);
	json_u64_or_null(&s->j, "resident_pages", known, c->cached);
	json_u64_or_null(&s->j, "resident_bytes", known, r->resident_bytes);
	json_u64_or_null(&s->j, "resident_memory_bytes", known, c->cached * hs_page_size());
	json_u64_or_null(&s->j, "dirty_pages", counts, c->dirty);
	json_u64_or_null(&s->j, "writeback_pages", counts, c->writeback);
	json_u64_or_null(&s->j, "evicted_pages", counts, c->evicted);
	json_u64_or_null(&s->j, "recently_evicted_pages", counts, c->recently_evicted);
	/* bytes and resident_bytes, named for what they are; the memory of the pages */
	json_u64(&s->j, "file_bytes", r->bytes);
	json_u64(&s->j, "memory_bytes", memory_bytes(t->pages, hs_page_size()));
	json_u64_or_null(&s->j, "resident_file_bytes", known, r->resident_bytes);
	json_end_object(&s->j);
}

/* -c: the row of all the files counted, as fincore's TOTAL. */
static void total_row(struct status *s)
{
	const struct hs_residency_total *tot = &s->total;
	/* the sum is known only if every file's residency is */
	const struct fincore_row w = {
		.name = "TOTAL", .len = 5, .size = s->sizes, .counted = hs_residency_total_pages(tot),
		.counts = tot->unknown_files ? NULL : &tot->known,
		.cachestat = tot->method == HS_RES_CACHESTAT || (!tot->method && hs_have_cachestat()),
		.stale = s->ops->stale > 0,
	};

	fincore_row(&s->fin, &w);
}

static void print_row(struct status *s, const struct hs_target *t,
		      const struct hs_target_residency *r)
{
	const struct hs_cache_counts *c = &r->counts;
	const bool known = r->rc == 0;
	char a[16], b[16], pct[8];
	double cells[BAR_CELLS];

	if (s->table) {
		const struct fincore_row w = fincore_row_of(t, r);

		fincore_row(&s->fin, &w);
		return;
	}
	if (s->json) {
		json_item(s, t, r);
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
	if (hs_residency_total_add(&s->total, t, &r))
		s->sizes += (uint64_t)t->st->st_size;
	if (s->rows)
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
	/* cachestat's counts of the known pages; none are known if every file was unknown */
	const bool counts = tot->method == HS_RES_CACHESTAT ||
			    (!tot->method && !tot->unknown_files && hs_have_cachestat());
	char a[SIZE_STR_MAX], b[SIZE_STR_MAX], pct[8];

	if (s->json) {
		json_u64(&s->j, "files", tot->files);
		json_u64(&s->j, "pages", pages);
		json_u64(&s->j, "resident_pages", c->cached);
		json_u64(&s->j, "bytes", tot->bytes);
		json_u64(&s->j, "resident_bytes", tot->resident_bytes);
		json_u64(&s->j, "resident_memory_bytes", c->cached * ps);
		json_u64(&s->j, "unknown_files", tot->unknown_files);
		json_u64(&s->j, "unknown_pages", tot->unknown_pages);
		json_u64(&s->j, "page_size", ps);
		json_string(&s->j, "method", !tot->method ? NULL :
			    tot->method == HS_RES_CACHESTAT ? "cachestat" : "mincore");
		/* mincore cannot tell these, nor can a file of unknown residency: null, not 0 */
		json_u64_or_null(&s->j, "dirty_pages", counts, c->dirty);
		json_u64_or_null(&s->j, "writeback_pages", counts, c->writeback);
		json_u64_or_null(&s->j, "evicted_pages", counts, c->evicted);
		json_u64_or_null(&s->j, "recently_evicted_pages", counts, c->recently_evicted);
		json_u64(&s->j, "skipped_files", s->ops->skipped);
		json_u64(&s->j, "stale_files", s->ops->stale);
		json_u64(&s->j, "file_bytes", tot->bytes);
		json_u64(&s->j, "memory_bytes", memory_bytes(pages, ps));
		json_u64(&s->j, "resident_file_bytes", tot->resident_bytes);
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
	/* both sizes: what the pages take in memory, and the files' data in them */
	printf("\n%10s: %llu (%s, %s)\n", "Pages", (unsigned long long)pages,
	       memory_size(pages, ps, a), file_data_size(tot->bytes, b));
	printf("%10s: %llu (%s, %s) %s", "Resident", (unsigned long long)c->cached,
	       memory_size(c->cached, ps, a), file_data_size(tot->resident_bytes, b),
	       percent(c->cached, c->pages, pct));
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

/* After the walk (rc: how it ended): the table's end, or the totals. */
static void status_end(struct status *s, int rc)
{
	if (s->table && !s->json) {
		/* as fincore: the rows only; what they cannot say goes to stderr */
		fincore_end(&s->fin);
		if (s->total.unknown_files && !s->ops->quiet)
			warning("residency of %llu file%s is unknown (shown as ?): the kernel tells "
				"it only to users who may write a file (or own it, or are root)",
				(unsigned long long)s->total.unknown_files,
				plural(s->total.unknown_files));
	} else if (rc == 0) {
		print_totals(s);
	}
}

static int run_status(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "profile", required_argument, NULL, 'p' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "threads", required_argument, NULL, 'j' },
		{ "output", required_argument, NULL, 'o' },
		{ "output-all", no_argument, NULL, OPT_OUTPUT_ALL },
		{ "noheadings", no_argument, NULL, 'n' },
		{ "raw", no_argument, NULL, 'r' },
		{ "bytes", no_argument, NULL, 'b' },
		{ "total", no_argument, NULL, 'c' },
		{ "recursive", no_argument, NULL, 'R' },
		{ "cachestat", no_argument, NULL, 'C' },
		WALK_LONGOPTS,
		COMMON_LONGOPTS,
		{ 0 },
	};
	struct operands ops = { .cmd = &cmd_status };
	struct status s = { .ops = &ops, .lock = PTHREAD_MUTEX_INITIALIZER };
	const char *outarg = NULL;
	unsigned threads = 0;
	bool cachestat = false;
	int opt, rc;

	while ((opt = getopt_long(argc, argv, OPTS_START WALK_OPTS "p:vj:o:nrbcRC", longopts,
				  NULL)) != -1) {
		switch (opt) {
		/* fincore's: any of them asks for its table, a row per file */
		case 'o': outarg = optarg; s.table = true; break;
		case 'n': s.fin.noheadings = s.table = true; break;
		case 'r': s.fin.raw = s.table = true; break;
		case 'b': s.fin.bytes = s.table = true; break;
		case 'c': s.total_row = s.table = true; break;
		case 'R': s.table = true; break;	/* directories are always walked */
		case 'C': cachestat = s.table = true; break;
		case OPT_OUTPUT_ALL:
			fincore_all_columns(&s.fin);
			s.table = true;
			break;
		case 'p':
			if ((rc = option_profile(&cmd_status, &ops.profile, optarg)))
				return rc;
			break;
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
	if ((rc = fincore_columns(&s.fin, &cmd_status, outarg)))
		return rc;
	if (cachestat && !hs_have_cachestat()) {
		/* fincore -C fails every file there; none would be counted */
		error("--cachestat: this kernel has no cachestat(2) (Linux 6.5 and later have it)");
		return EXIT_PARTIAL;
	}
	ops.paths = argv + optind;
	ops.npaths = argc - optind;
	s.rows = s.verbose || s.table;
	/* rows come in walk order with one thread */
	ops.walk.threads = threads ? threads : s.rows ? 1 : default_threads();
	if ((rc = operands_open(&ops)))
		return rc;
	if (!s.rows)
		ops.progress_label = "Checking";	/* rows and a progress line do not mix */
	if (s.json) {
		/* the table's rows as fincore -J writes them; -v's items carry every key */
		json_begin_report(&s.j, stdout, "status", s.rows && !s.table);
		if (s.table)
			json_begin_array(&s.j, "fincore");
		s.fin.j = &s.j;
	}
	if (s.table)
		fincore_start(&s.fin, stdout);
	rc = operands_foreach(&ops, status_one, &s);
	operands_report_stale(&ops);
	if (s.total_row && rc == 0)
		total_row(&s);
	if (s.json && s.rows)
		json_end_array(&s.j);
	status_end(&s, rc);
	operands_close(&ops);
	if (rc)
		return finish_stdout(EXIT_USAGE);
	return finish_stdout(ops.skipped ? EXIT_PARTIAL : EXIT_OK);
}

const struct cmd cmd_status = {
	"status", run_status, "show how much of files or a profile is in the page cache", usage,
};
