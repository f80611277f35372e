/*
 * cmd-evict.c - hotset evict: drop files, or a profile's pages, from the
 * page cache (to measure a cold run, or to make room).
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "cache/evict.h"
#include "operands.h"
#include "options.h"
#include "cmd.h"
#include "messages.h"
#include "output.h"

static const char usage[] =
	"usage: hotset evict [-v] [-x] [-L] [-q] [--no-writeback] [-J] [-p PROFILE] [PATH...]\n"
	"       [--files-from FILE [-0]] [-I GLOB] [-i GLOB] [-m SIZE]\n"
	"\n"
	"Drop the files under PATHs, or the pages a profile lists, from the page\n"
	"cache. Dirty pages are written back first, so that they can be dropped\n"
	"too. Pages that stay (mapped by a process, locked, or dirtied again) are\n"
	"reported.\n"
	"\n"
	"  -p, --profile PROFILE  evict only the profile's pages\n"
	"  -v, --verbose          name the files whose pages stayed, and how many\n"
	"      --no-writeback     do not wait for dirty pages to be written back: those\n"
	"                         not yet written stay cached\n"
	WALK_USAGE
	"  -q, --quiet            do not warn about files that are skipped\n"
	"  -J, --json             machine-readable summary\n"
	"  -V, --version          show hotset's version\n"
	"  -h, --help             show this help\n"
	"\n"
	"Exit status: 0 done, 1 some files could not be evicted, 2 usage error.\n";

const struct cmd cmd_evict;

struct evict {
	bool writeback, verbose, json;
	struct json j;
	uint64_t files, pages, evicted, stayed, memory_only, unknown_files, unknown_pages;
	struct operands *ops;
	pthread_mutex_t lock;	/* the walk may call evict_one from several threads */
};

/* A file some of whose pages stayed, for -v (under e->lock). */
static void print_stayed(struct evict *e, const struct hs_target *t,
			 const struct hs_evict_result *r)
{
	char size[SIZE_STR_MAX];

	if (e->json) {
		json_begin_object(&e->j, NULL);
		json_bytes(&e->j, "path", t->path, t->path_len);
		json_u64(&e->j, "stayed_pages", r->after.cached);
		json_bool(&e->j, "memory_only", r->memory_only);
		json_end_object(&e->j);
		return;
	}
	printf("stayed: %llu page%s (%s)%s ", (unsigned long long)r->after.cached,
	       plural(r->after.cached), memory_size(r->after.cached, hs_page_size(), size),
	       r->memory_only ? " on tmpfs or ramfs" : "");
	print_path(stdout, t->path, t->path_len);
	putchar('\n');
}

static int evict_one(void *ctx, const struct hs_target *t)
{
	struct evict *e = ctx;
	struct hs_evict_result r;
	int rc;

	rc = hs_evict(t->fd, (uint64_t)t->st->st_size, t->ranges, t->nranges, e->writeback, &r);
	if (rc) {
		operands_warn(e->ops, t->path, -rc, "cannot evict");
		return 0;
	}
	pthread_mutex_lock(&e->lock);
	e->files++;
	e->pages += t->pages;
	if (!r.known) {
		e->unknown_files++;
		e->unknown_pages += t->pages;
	} else {
		/* pages read in by others meanwhile may leave more than there was */
		if (r.before.cached > r.after.cached)
			e->evicted += r.before.cached - r.after.cached;
		if (r.memory_only)
			e->memory_only += r.after.cached;
		else
			e->stayed += r.after.cached;
		if (e->verbose && r.after.cached)
			print_stayed(e, t, &r);
	}
	pthread_mutex_unlock(&e->lock);
	return 0;
}

/* The summary after the rows, if any (docs/json.md, "evict"). */
static void print_json(struct evict *e)
{
	if (e->verbose)
		json_end_array(&e->j);
	else
		json_begin_report(&e->j, stdout, "evict", false);
	json_u64(&e->j, "files", e->files);
	json_u64(&e->j, "pages", e->pages);
	json_u64(&e->j, "evicted_pages", e->evicted);
	json_u64(&e->j, "stayed_pages", e->stayed + e->memory_only);
	json_u64(&e->j, "memory_only_pages", e->memory_only);
	json_u64(&e->j, "unknown_files", e->unknown_files);
	json_u64(&e->j, "unknown_pages", e->unknown_pages);
	json_u64(&e->j, "skipped_files", e->ops->skipped);
	json_u64(&e->j, "stale_files", e->ops->stale);
	json_u64(&e->j, "page_size", hs_page_size());
	json_end_object(&e->j);
	json_finish(&e->j);
}

static void print_human(const struct evict *e)
{
	const uint64_t ps = hs_page_size(), known = e->files - e->unknown_files;
	const unsigned skipped = e->ops->skipped;
	char a[SIZE_STR_MAX], b[SIZE_STR_MAX];

	if (known || !e->unknown_files || skipped) {
		printf("Evicted %llu page%s (%s) from %llu file%s", (unsigned long long)e->evicted,
		       plural(e->evicted), memory_size(e->evicted, ps, a),
		       (unsigned long long)known, plural(known));
		if (skipped)	/* as warm and status say it */
			printf(" (%u skipped with a warning)", skipped);
		if (e->stayed)
			printf("; %llu page%s (%s) stayed: mapped, locked or dirty",
			       (unsigned long long)e->stayed, plural(e->stayed),
			       memory_size(e->stayed, ps, b));
		if (e->memory_only)
			printf("; %llu page%s (%s) stayed on tmpfs or ramfs, which keep files"
			       " only in memory", (unsigned long long)e->memory_only,
			       plural(e->memory_only), memory_size(e->memory_only, ps, b));
		putchar('\n');
	}
	if (e->unknown_files)
		printf("Asked the kernel to drop %llu %sfile%s (%s) whose residency is unknown (no\n"
		       "write permission): what stayed in the cache cannot be told.\n",
		       (unsigned long long)e->unknown_files, known ? "more " : "",
		       plural(e->unknown_files), memory_size(e->unknown_pages, ps, a));
}

static int run_evict(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "profile", required_argument, NULL, 'p' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "no-writeback", no_argument, NULL, OPT_NO_WRITEBACK },
		WALK_LONGOPTS,
		COMMON_LONGOPTS,
		{ 0 },
	};
	struct operands ops = { .cmd = &cmd_evict };
	struct evict e = { .writeback = true, .ops = &ops, .lock = PTHREAD_MUTEX_INITIALIZER };
	int opt, rc;

	while ((opt = getopt_long(argc, argv, OPTS_START WALK_OPTS "p:v", longopts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			if ((rc = option_profile(&cmd_evict, &ops.profile, optarg)))
				return rc;
			break;
		case 'v': e.verbose = true; break;
		case OPT_NO_WRITEBACK: e.writeback = false; break;
		case 'q': ops.quiet = true; break;
		case 'J': e.json = true; break;
		default:
			if ((rc = operands_option(&ops, opt, argv, longopts)) >= 0)
				return rc;
		}
	}
	ops.paths = argv + optind;
	ops.npaths = argc - optind;
	ops.walk.threads = default_threads();
	if ((rc = operands_open(&ops)))
		return rc;
	if (!e.verbose)
		ops.progress_label = "Evicting";	/* rows and a progress line do not mix */
	if (e.json && e.verbose)
		json_begin_report(&e.j, stdout, "evict", true);
	rc = operands_foreach(&ops, evict_one, &e);
	operands_report_stale(&ops);
	operands_close(&ops);
	/* rows already out make a report begun: it is ended whole */
	if (!rc || (e.json && e.verbose)) {
		if (e.json)
			print_json(&e);
		else
			print_human(&e);
	}
	if (rc)
		return finish_stdout(EXIT_USAGE);
	return finish_stdout(ops.skipped ? EXIT_PARTIAL : EXIT_OK);
}

const struct cmd cmd_evict = {
	"evict", run_evict, "drop files or a profile's pages from the page cache", usage,
};
