/*
 * cmd-snapshot.c - hotset snapshot: save what is in the page cache now as a
 * profile, to be brought back later (after a reboot, say) with `warm -p`.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/atomic.h"
#include "cache/residency.h"
#include "operands.h"
#include "options.h"
#include "cmd.h"
#include "messages.h"
#include "output.h"

static const char usage[] =
	"usage: hotset snapshot [-v] [-x] [-L] [-q] [-J] -o PROFILE PATH...\n"
	"       hotset snapshot [-v] [-x] [-L] [-q] [-J] [-0] [-I GLOB] [-i GLOB] [-m SIZE]\n"
	"                       -o PROFILE --files-from FILE [PATH...]\n"
	"\n"
	"Write a profile of the pages of files under PATHs that are in the page\n"
	"cache now. Restore them later with 'hotset warm -p PROFILE'. The profile\n"
	"names files by absolute path, so that it works from any directory.\n"
	"\n"
	"  -o, --output PROFILE   where to write the profile ('-' for stdout)\n"
	"  -v, --verbose          a row per file written into the profile: how much\n"
	"                         of it is resident\n"
	WALK_USAGE
	"  -q, --quiet            do not warn about files that are skipped\n"
	"  -J, --json             print the summary as JSON\n"
	"  -V, --version          show hotset's version\n"
	"  -h, --help             show this help\n"
	"\n"
	"Files whose residency cannot be known (no write permission) are left out\n"
	"with a warning. Exit status: 0 done, 1 some files left out, 2 usage error\n"
	"or the profile cannot be written (the previous one is left as it was).\n";

const struct cmd cmd_snapshot;

struct snapshot {
	struct hs_profile_writer *w;
	uint64_t files, pages;
	bool verbose, json;
	FILE *report;		/* where the summary and the rows go */
	struct json j;
	struct operands *ops;
	struct stat self;	/* the profile being written: not profiled */
	struct stat replaced;	/* the file it replaces, gone once it is: nor that */
	pthread_mutex_t lock;	/* the walk calls snapshot_one from several threads */
};

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_ino == b->st_ino && a->st_dev == b->st_dev;
}

/* A file written into the profile, for -v (under s->lock). */
static void print_row(struct snapshot *s, const struct hs_target *t,
		      const struct hs_profile_file *f)
{
	const uint64_t ps = hs_page_size(), size = (uint64_t)t->st->st_size;
	const uint64_t bytes = f->pages * ps;
	char a[16], b[16], pct[8];

	if (s->json) {
		json_begin_object(&s->j, NULL);
		json_bytes(&s->j, "path", t->path, t->path_len);
		json_u64(&s->j, "pages", f->pages);
		json_u64(&s->j, "bytes", bytes);
		json_u64(&s->j, "size_bytes", size);
		json_u64(&s->j, "memory_bytes", bytes);	/* bytes, named for what they are */
		json_end_object(&s->j);
		return;
	}
	/* as status -v: the part resident, in bytes of the file (the last page is partial) */
	fprintf(s->report, "%6s %10s / %-10s ", percent(f->pages, (size + ps - 1) / ps, pct),
		human_size(bytes < size ? bytes : size, a), human_size(size, b));
	print_path(s->report, t->path, t->path_len);
	fputc('\n', s->report);
}

static int snapshot_one(void *ctx, const struct hs_target *t)
{
	struct snapshot *s = ctx;
	struct hs_resident_entry e;
	int rc;

	if (same_file(t->st, &s->self) || same_file(t->st, &s->replaced))
		return 0;
	rc = hs_residency_entry(t, &e);
	if (rc && rc != -ENOMEM) {
		operands_warn(s->ops, t->path, rc == -EPERM ? 0 : -rc,
			      rc == -EPERM ? "left out: residency unknown without write permission"
					   : "left out");
		rc = 0;
	}
	if (rc || !e.file.nranges)
		goto out;
	pthread_mutex_lock(&s->lock);
	s->files++;
	s->pages += e.file.pages;
	rc = hs_profile_write_file(s->w, &e.file);
	if (!rc && s->verbose)
		print_row(s, t, &e.file);
	pthread_mutex_unlock(&s->lock);
out:
	hs_residency_entry_release(&e);
	return rc;
}

/* The summary after the rows, if any (docs/json.md, "snapshot"). */
static void print_summary(struct snapshot *s, const char *out)
{
	const unsigned skipped = s->ops->skipped;
	char size[SIZE_STR_MAX];

	if (s->json) {
		if (s->verbose)
			json_end_array(&s->j);
		else
			json_begin_report(&s->j, s->report, "snapshot", false);
		json_string(&s->j, "profile", out);
		json_u64(&s->j, "files", s->files);
		json_u64(&s->j, "pages", s->pages);
		json_u64(&s->j, "bytes", s->pages * hs_page_size());
		json_u64(&s->j, "skipped_files", skipped);
		json_u64(&s->j, "page_size", hs_page_size());
		json_u64(&s->j, "memory_bytes", memory_bytes(s->pages, hs_page_size()));
		json_end_object(&s->j);
		json_finish(&s->j);
		return;
	}
	fprintf(s->report, "Snapshot of %llu file%s", (unsigned long long)s->files, plural(s->files));
	if (skipped)	/* as warm and status say it */
		fprintf(s->report, " (%u skipped with a warning)", skipped);
	fprintf(s->report, ", %llu resident page%s (%s), written to %s\n",
		(unsigned long long)s->pages, plural(s->pages),
		memory_size(s->pages, hs_page_size(), size), out);
}

/* Walk ops into the profile out; returns the exit code. */
static int take_snapshot(struct operands *ops, const char *out, bool json, bool verbose)
{
	/* with -o -, stdout carries the profile: the report goes to stderr */
	struct snapshot s = {
		.ops = ops, .json = json, .verbose = verbose,
		.report = strcmp(out, "-") ? stdout : stderr, .lock = PTHREAD_MUTEX_INITIALIZER,
	};
	struct hs_profile_header h;
	struct hs_error err = { 0 };
	int rc;

	hs_profile_header_init(&h, "snapshot");
	if ((rc = hs_atomic_check(out, &err)) ||
	    (rc = hs_profile_writer_open(out, &h, &s.w))) {
		error("%s: cannot write: %s", out, err.msg[0] ? err.msg : strerror(-rc));
		return EXIT_FAILED;
	}
	if (fstat(hs_profile_writer_fd(s.w), &s.self) < 0)
		memset(&s.self, 0, sizeof(s.self));
	/* an earlier profile at out, unless another name keeps it */
	if (!strcmp(out, "-") || stat(out, &s.replaced) < 0 || s.replaced.st_nlink != 1)
		memset(&s.replaced, 0, sizeof(s.replaced));
	if (!verbose)
		ops->progress_label = "Checking";	/* rows and a progress line do not mix */
	if (json && verbose)
		json_begin_report(&s.j, s.report, "snapshot", true);
	rc = operands_foreach(ops, snapshot_one, &s);
	/* no profile at all is a failed command, not some files left out */
	if (rc) {
		hs_profile_writer_abort(s.w);
		if (rc < -1)
			error("%s: %s", out, strerror(-rc));
	} else if ((rc = hs_profile_writer_commit(s.w))) {
		error("%s: cannot write: %s", out, strerror(-rc));
	}
	if (rc) {
		if (json && verbose)
			print_summary(&s, out);	/* rows out make a report begun: ended whole */
		return EXIT_FAILED;
	}
	print_summary(&s, out);
	return finish_stdout(ops->skipped ? EXIT_PARTIAL : EXIT_OK);
}

static int run_snapshot(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "verbose", no_argument, NULL, 'v' },
		WALK_LONGOPTS,
		COMMON_LONGOPTS,
		{ 0 },
	};
	struct operands ops = { .cmd = &cmd_snapshot };
	const char *out = NULL;
	bool json = false, verbose = false;
	int opt, rc;

	while ((opt = getopt_long(argc, argv, OPTS_START WALK_OPTS "o:v", longopts, NULL)) != -1) {
		switch (opt) {
		case 'o': out = optarg; break;
		case 'v': verbose = true; break;
		case 'q': ops.quiet = true; break;
		case 'J': json = true; break;
		default:
			if ((rc = operands_option(&ops, opt, argv, longopts)) >= 0)
				return rc;
		}
	}
	if (!out)
		return usage_error(&cmd_snapshot, "give the profile to write with -o PROFILE");
	if (!*out)
		return usage_error(&cmd_snapshot, "-o: an empty PROFILE names no file "
				   "(for standard output, give -)");
	ops.paths = argv + optind;
	ops.npaths = argc - optind;
	if (!ops.npaths && !ops.files_from)
		return usage_error(&cmd_snapshot, "give at least one PATH, or --files-from FILE");
	ops.absolute = true;	/* the list's names, as the PATHs below */
	ops.walk.threads = default_threads();
	if ((rc = operands_open(&ops)))
		return rc;
	/* a profile outlives the directory it was taken in: absolute paths */
	char **abs = calloc((size_t)ops.npaths, sizeof(*abs));

	rc = EXIT_OK;
	if (!abs) {
		error("out of memory");
		rc = EXIT_USAGE;
	}
	for (int i = 0; abs && i < ops.npaths && !rc; i++) {
		if (!(abs[i] = absolute_path(ops.paths[i], false))) {
			error("%s: cannot make the path absolute: %s", ops.paths[i], strerror(errno));
			rc = EXIT_USAGE;
		}
	}
	if (!rc) {
		ops.paths = abs;
		rc = take_snapshot(&ops, out, json, verbose);
	}
	for (int i = 0; abs && i < ops.npaths; i++)
		free(abs[i]);
	free(abs);
	operands_close(&ops);
	return rc;
}

const struct cmd cmd_snapshot = {
	"snapshot", run_snapshot, "save what is in the page cache now as a profile", usage,
};
