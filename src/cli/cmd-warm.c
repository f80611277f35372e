/*
 * cmd-warm.c - hotset warm: read into the page cache what is missing of
 * some files, or of a profile's working set, as fast as the disk allows.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cache/warm.h"
#include "operands.h"
#include "options.h"
#include "cmd.h"
#include "messages.h"
#include "output.h"

static const char usage[] =
	"usage: hotset warm [-p PROFILE] [--budget SIZE] [-v] [-x] [-L] [-q] [-J] [-j N] [PATH...]\n"
	"       [--files-from FILE [-0]] [-I GLOB] [-i GLOB] [-m SIZE]\n"
	"\n"
	"Read into the page cache what is missing of the files under PATHs, or of\n"
	"the pages a profile lists. Pages already resident cost nothing; holes of\n"
	"sparse files are not read. Reads are sorted by physical address on\n"
	"rotational disks and issued many at a time.\n"
	"\n"
	"  -p, --profile PROFILE  warm only the profile's pages, in its order (PATHs,\n"
	"                         if also given, select the profile's files under them)\n"
	"      --budget SIZE      stop once SIZE (512M, 2G, 10% of RAM...) would be\n"
	"                         newly read, in profile order; say where it stopped\n"
	"  -v, --verbose          a row per file, as its reads complete: pages read,\n"
	"                         already resident, targeted\n"
	WALK_USAGE
	"  -q, --quiet            no progress bar, no warnings about skipped files\n"
	"  -J, --json             machine-readable summary\n"
	"  -j, --threads N        threads per kind of read for willneed and io_uring\n"
	"                         (default 1; pread uses one per read in flight)\n"
	"      --depth N          reads of small files kept in flight (default 32)\n"
	"      --inflight SIZE    bytes of large files kept in flight (default 4M,\n"
	"                         at least 512K)\n"
	"      --method M         auto, willneed, pread or io_uring (default: auto,\n"
	"                         pread for small files and willneed for large ones)\n"
	"      --order O          auto, given or physical (default: auto, physical\n"
	"                         on rotational disks)\n"
	"      --chunk SIZE       bytes per request (default: the disk's readahead\n"
	"                         limit, max(read_ahead_kb, max_sectors_kb), and at\n"
	"                         most half of --inflight)\n"
	"  -V, --version          show hotset's version\n"
	"  -h, --help             show this help\n"
	"\n"
	"Small files cost the disk a request each, large ones bandwidth: both kinds\n"
	"are kept in flight at once, in a ratio (--depth reads per --inflight bytes) that\n"
	"suits a disk doing ~8 requests per MiB/s (150 IOPS and 20 MiB/s, say).\n"
	"The time and rate include waiting for every read to complete. Bytes read\n"
	"from disk are this process's read_bytes (/proc/self/io), directories and\n"
	"inodes included. Files whose residency cannot be known (no write\n"
	"permission) are read in full.\n"
	"Exit status: 0 done, 1 some files could not be warmed (or shrank or\n"
	"vanished meanwhile), 2 usage error.\n";

const struct cmd cmd_warm;

struct warm {
	struct hs_warm *session;
	struct operands *ops;
	struct progress progress;
	bool verbose, json;
	struct json j;
	pthread_mutex_t lock;	/* messages and rows come from several threads */
};

static int warm_one(void *ctx, const struct hs_target *t)
{
	struct warm *w = ctx;

	return hs_warm_add(w->session, t);
}

/* A file skipped, or shrunk, or gone: counted like the walk's own warnings. */
static void warm_warn(void *ctx, const char *path, int errnum, const char *what)
{
	struct warm *w = ctx;

	pthread_mutex_lock(&w->lock);
	if (w->progress.on && !w->ops->quiet)
		fputs("\r\033[K", stderr);	/* the message starts a clean line */
	operands_warn(w->ops, path, errnum, what);
	pthread_mutex_unlock(&w->lock);
}

/* A file's reads are done: its row, for -v (from the I/O threads). */
static void warm_file(void *ctx, const struct hs_warm_file *f)
{
	struct warm *w = ctx;
	char a[SIZE_STR_MAX];

	pthread_mutex_lock(&w->lock);
	if (w->json) {
		json_begin_object(&w->j, NULL);
		json_bytes(&w->j, "path", f->path, f->path_len);
		json_u64(&w->j, "pages", f->pages);
		json_u64(&w->j, "hole_pages", f->hole_pages);
		json_u64(&w->j, "requested_pages", f->requested_pages);
		if (f->known_before)
			json_u64(&w->j, "already_resident_pages", f->resident_pages);
		else
			json_null(&w->j, "already_resident_pages");
		if (f->known_after) {
			json_u64(&w->j, "read_pages", f->read_pages);
			json_u64(&w->j, "not_resident_pages", f->not_resident_pages);
		} else {
			json_null(&w->j, "read_pages");
			json_null(&w->j, "not_resident_pages");
		}
		json_end_object(&w->j);
	} else {
		if (!f->known_before)
			printf("read: %llu page%s (%s) in full, residency unknown ",
			       (unsigned long long)f->requested_pages, plural(f->requested_pages),
			       memory_size(f->requested_pages, hs_page_size(), a));
		else if (!f->known_after)
			printf("read: unknown of %llu, %llu already resident ",
			       (unsigned long long)f->pages, (unsigned long long)f->resident_pages);
		else
			printf("read: %llu page%s (%s) of %llu, %llu already resident ",
			       (unsigned long long)f->read_pages, plural(f->read_pages),
			       memory_size(f->read_pages, hs_page_size(), a),
			       (unsigned long long)f->pages, (unsigned long long)f->resident_pages);
		if (f->known_after && f->not_resident_pages)
			printf("(%llu still missing) ", (unsigned long long)f->not_resident_pages);
		print_path(stdout, f->path, f->path_len);
		putchar('\n');
	}
	pthread_mutex_unlock(&w->lock);
}

static void warm_progress(void *ctx, const struct hs_warm_progress *p)
{
	struct warm *w = ctx;

	pthread_mutex_lock(&w->lock);
	w->progress.total = p->planned_bytes;
	progress_update(&w->progress, p->done_bytes, "bytes");
	pthread_mutex_unlock(&w->lock);
}

/* "pread+willneed": how small and large pieces were read */
static const char *method_name(const struct hs_warm_stats *s, char buf[32])
{
	if (s->small_method == s->bulk_method)
		return hs_warm_method_name(s->small_method);
	snprintf(buf, 32, "%s+%s", hs_warm_method_name(s->small_method),
		 hs_warm_method_name(s->bulk_method));
	return buf;
}

/* Bytes read from disk per second, or -1 when no time passed to measure it. */
static double disk_rate(const struct hs_warm_stats *s)
{
	return s->seconds > 0 ? (double)s->bytes_read_disk / s->seconds : -1;
}

/* The summary after the rows, if any (docs/json.md, "warm"). */
static void print_json(struct warm *w, const struct hs_warm_stats *s, uint64_t budget)
{
	const struct operands *ops = w->ops;
	struct json *j = &w->j;
	char m[32];

	if (w->verbose)
		json_end_array(j);
	else
		json_begin_report(j, stdout, "warm", false);
	json_u64(j, "files", s->files);
	json_u64(j, "pages", s->pages);
	json_u64(j, "hole_pages", s->hole_pages);
	json_u64(j, "already_resident_pages", s->resident_pages);
	json_u64(j, "requested_pages", s->requested_pages);
	json_u64(j, "read_pages", s->read_pages);
	json_u64(j, "not_resident_pages", s->not_resident_pages);
	json_u64(j, "unknown_files", s->unknown_files);
	json_u64(j, "unknown_pages", s->unknown_pages);
	json_u64(j, "disk_read_bytes", s->bytes_read_disk);
	json_string(j, "disk_read_source", s->disk_source);
	json_double(j, "wall_seconds", s->seconds);
	if (disk_rate(s) >= 0)
		json_double(j, "disk_read_bytes_per_second", disk_rate(s));
	else
		json_null(j, "disk_read_bytes_per_second");
	json_u64(j, "requests", s->requests);
	if (budget)
		json_u64(j, "budget_bytes", budget);
	else
		json_null(j, "budget_bytes");
	json_bool(j, "budget_reached", s->budget_reached);
	json_string(j, "stopped_at_path", s->stop_path);
	if (s->stop_path)
		json_u64(j, "stopped_at_page", s->stop_page);
	else
		json_null(j, "stopped_at_page");
	json_u64(j, "skipped_files", ops->skipped);
	json_u64(j, "stale_files", ops->stale);
	json_string(j, "method", method_name(s, m));
	/* auto, unresolved: nothing was read, no disk was looked at */
	json_string(j, "order", s->order == HS_ORDER_AUTO ? NULL : hs_warm_order_name(s->order));
	json_u64(j, "threads", s->threads);
	json_u64(j, "depth", s->depth);
	json_u64(j, "inflight_bytes", s->inflight);
	if (s->chunk)
		json_u64(j, "chunk_bytes", s->chunk);
	else
		json_null(j, "chunk_bytes");	/* no --chunk, and no disk looked at */
	json_u64(j, "page_size", hs_page_size());
	json_end_object(j);
	json_finish(j);
}

static void print_human(const struct hs_warm_stats *s, const struct operands *ops)
{
	const uint64_t ps = hs_page_size();
	char a[SIZE_STR_MAX], b[SIZE_STR_MAX], c[SIZE_STR_MAX];

	printf("%10s: %llu", "Files", (unsigned long long)s->files);
	if (ops->skipped)
		printf(" (%u skipped with a warning)", ops->skipped);
	printf("\n%10s: %llu (%s)", "Pages", (unsigned long long)s->pages,
	       memory_size(s->pages, ps, a));
	if (s->hole_pages)
		printf(", and %llu in holes, not read", (unsigned long long)s->hole_pages);
	printf("\n%10s: %llu (%s) before, %llu (%s) read", "Resident",
	       (unsigned long long)s->resident_pages, memory_size(s->resident_pages, ps, a),
	       (unsigned long long)s->read_pages, memory_size(s->read_pages, ps, b));
	if (s->not_resident_pages)
		printf(", %llu (%s) still missing (memory pressure?)",
		       (unsigned long long)s->not_resident_pages,
		       memory_size(s->not_resident_pages, ps, c));
	if (s->unknown_pages)
		printf("; %llu (%s) of unknown residency read in full",
		       (unsigned long long)s->unknown_pages, memory_size(s->unknown_pages, ps, c));
	printf("\n%10s: %s in %.2f s", "Disk", human_size(s->bytes_read_disk, a), s->seconds);
	if (disk_rate(s) >= 0)
		printf(", %s/s", human_size((uint64_t)disk_rate(s), b));
	printf(" (%s)\n", !strcmp(s->disk_source, "proc-io") ? "read_bytes of /proc/self/io"
							 : "pages that became resident");
	if (s->budget_reached) {
		printf("%10s: spent; stopped at ", "Budget");
		print_path(stdout, s->stop_path, strlen(s->stop_path));
		printf(", page %llu\n", (unsigned long long)s->stop_page);
	}
	if (s->unknown_files)
		printf("Residency of %llu file%s is unknown (no write permission): read in full,\n"
		       "without knowing what was resident before or after.\n",
		       (unsigned long long)s->unknown_files, plural(s->unknown_files));
}

static int bad_size(const char *option, const char *arg)
{
	return option_bad_size(&cmd_warm, option, arg);
}

/* Warm the operands, opened here, and report; returns the exit code. */
static int warm_all(struct warm *w, struct hs_warm_opts *o)
{
	struct hs_warm_stats st;
	int rc;

	if ((rc = operands_open(w->ops)))
		return rc;
	hs_warm_raise_nofile();
	/* rows and a progress line do not mix */
	progress_start(&w->progress, "Warming", 0, w->ops->quiet || w->json || w->verbose);
	if (w->verbose)
		o->file = warm_file;
	if ((rc = hs_warm_new(o, &w->session))) {
		operands_close(w->ops);
		error("cannot start warming: %s", strerror(-rc));
		return EXIT_USAGE;
	}
	if (w->json && w->verbose)
		json_begin_report(&w->j, stdout, "warm", true);
	rc = operands_foreach(w->ops, warm_one, w);
	hs_warm_finish(w->session, &st);
	progress_end(&w->progress);
	operands_report_stale(w->ops);
	operands_close(w->ops);
	if (rc < -1)
		error("%s", strerror(-rc));
	if (rc == 0 || rc == HS_WARM_STOP || (w->json && w->verbose)) {
		/* rows already out make a report begun: it is ended whole */
		if (w->json)
			print_json(w, &st, o->budget);
		else
			print_human(&st, w->ops);
	}
	hs_warm_free(w->session);
	if (rc == -1)
		return finish_stdout(EXIT_USAGE);	/* a profile malformed part way */
	if (rc < 0)
		return finish_stdout(EXIT_PARTIAL);
	return finish_stdout(w->ops->skipped ? EXIT_PARTIAL : EXIT_OK);
}

static int run_warm(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "profile", required_argument, NULL, 'p' },
		{ "threads", required_argument, NULL, 'j' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "budget", required_argument, NULL, OPT_BUDGET },
		{ "depth", required_argument, NULL, OPT_DEPTH },
		{ "inflight", required_argument, NULL, OPT_INFLIGHT },
		{ "method", required_argument, NULL, OPT_METHOD },
		{ "order", required_argument, NULL, OPT_ORDER },
		{ "chunk", required_argument, NULL, OPT_CHUNK },
		WALK_LONGOPTS,
		COMMON_LONGOPTS,
		{ 0 },
	};
	struct operands ops = { .cmd = &cmd_warm };
	struct warm w = { .ops = &ops, .lock = PTHREAD_MUTEX_INITIALIZER };
	struct hs_warm_opts o = { .warn = warm_warn, .progress = warm_progress, .ctx = &w };
	int opt, rc;

	while ((opt = getopt_long(argc, argv, OPTS_START WALK_OPTS "p:j:v", longopts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			if ((rc = option_profile(&cmd_warm, &ops.profile, optarg)))
				return rc;
			break;
		case 'v': w.verbose = true; break;
		case OPT_BUDGET:
			if ((rc = option_budget(&cmd_warm, optarg, false, &o.budget)))
				return rc;
			break;
		case 'q': ops.quiet = true; break;
		case 'J': w.json = true; break;
		case OPT_DEPTH:
			if ((rc = option_count(&cmd_warm, "--depth", optarg, 1, 1024, &o.depth)))
				return rc;
			break;
		case 'j':
			if ((rc = option_count(&cmd_warm, "--threads", optarg, 1, 256, &o.threads)))
				return rc;
			break;
		case OPT_INFLIGHT:
			if (parse_size(optarg, &o.inflight) < 0)
				return bad_size("--inflight", optarg);
			if (o.inflight < 512 * 1024)
				return usage_error(&cmd_warm, "--inflight takes a size of at least 512K");
			break;
		case OPT_METHOD:
			if ((rc = hs_warm_method_of(optarg)) < 0)
				return usage_error(&cmd_warm, "--method takes auto, willneed, pread "
						   "or io_uring");
			if ((o.method = rc) == HS_WARM_URING && !hs_warm_have_uring())
				return usage_error(&cmd_warm, "io_uring is not available (not built "
						   "in, or refused by the kernel)");
			break;
		case OPT_ORDER:
			if ((rc = hs_warm_order_of(optarg)) < 0)
				return usage_error(&cmd_warm, "--order takes auto, given or physical");
			o.order = rc;
			break;
		case OPT_CHUNK:
			if (parse_size(optarg, &o.chunk) < 0)
				return bad_size("--chunk", optarg);
			if (o.chunk < hs_page_size())
				return usage_error(&cmd_warm, "--chunk takes a size of at least a page");
			break;
		default:
			if ((rc = operands_option(&ops, opt, argv, longopts)) >= 0)
				return rc;
		}
	}
	ops.paths = argv + optind;
	ops.npaths = argc - optind;
	/* a budget is spent in walk order, which only one thread keeps */
	ops.walk.threads = o.budget ? 1 : default_threads();
	return warm_all(&w, &o);
}

const struct cmd cmd_warm = {
	"warm", run_warm, "read files or a profile's pages into the page cache", usage,
};
