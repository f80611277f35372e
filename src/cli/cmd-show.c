/*
 * cmd-show.c - hotset show: a profile summarised for a person (totals, the
 * largest directories and files), listed in full (-v), as its file names
 * (--files), or in JSON.
 *
 * Profiles can have a million files, so the summary keeps nothing per
 * file: counters, and the largest directories and files (summary.h,
 * tops.h, shared with doctor). It reads the profile again instead
 * (hs_profile_rewind): once to count, once to name the largest
 * directories, and once more to list (-v, --trace).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <time.h>

#include "profile/profile.h"
#include "profile/summary.h"
#include "operands.h"
#include "options.h"
#include "show-summary.h"
#include "cmd.h"
#include "messages.h"
#include "output.h"

static const char usage[] =
	"usage: hotset show [-q] [-v] [-J] [--files [--print0]] [--trace] [-p] PROFILE\n"
	"\n"
	"Summarise a profile: its header, totals, the largest directories and\n"
	"files by pages, and how its files were read. PROFILE '-' is read from\n"
	"standard input (as -p - is, for status, warm and evict).\n"
	"\n"
	"  -p, --profile PROFILE  the profile to show (or give it as the operand)\n"
	"  -v, --verbose          also list every file with its page ranges, and the outputs\n"
	"      --files            print only the files' paths, one a line (escaped)\n"
	"      --print0           as --files, each path as it is and followed by NUL\n"
	"  -J, --json             machine-readable output\n"
	"      --trace            also print the ordered page-access trace, if recorded\n"
	"  -q, --quiet            accepted for uniformity: show prints no warnings\n"
	"  -V, --version          show hotset's version\n"
	"  -h, --help             show this help\n"
	"\n"
	"Exit status: 0 done, 1 the output could not be written, 2 usage error or\n"
	"malformed profile.\n";

const struct cmd cmd_show;

struct show {
	bool json, trace, verbose, files, print0;
	struct json j;
	struct hs_summary sum;
};

/* ---- words ---------------------------------------------------------------- */

static void print_header(struct show *s, const char *path, const struct hs_profile_header *h)
{
	const char *host = h->host[0] ? h->host : "?", *kernel = h->kernel[0] ? h->kernel : "?";
	time_t t = (time_t)h->created;
	char when[64] = "unknown";
	struct tm tm;
	bool known = h->created && gmtime_r(&t, &tm);

	if (known)
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (s->json) {
		json_string(&s->j, "profile", path);
		json_u64(&s->j, "version", h->version);
		json_string(&s->j, "source", h->source);
		json_string(&s->j, "backend", h->backend[0] ? h->backend : NULL);
		json_string(&s->j, "mmap_pages", h->mmap_pages[0] ? h->mmap_pages : NULL);
		json_string(&s->j, "command", h->command);
		json_string(&s->j, "cwd", h->cwd);
		json_string(&s->j, "created", known ? when : NULL);
		json_string(&s->j, "host", h->host[0] ? h->host : NULL);
		json_string(&s->j, "kernel", h->kernel[0] ? h->kernel : NULL);
		json_u64(&s->j, "page_size", h->page_size);
		json_u64_or_null(&s->j, "max_rss_bytes", h->max_rss_known, h->max_rss);
		json_u64_or_null(&s->j, "write_bytes", h->write_bytes_known, h->write_bytes);
		json_u64_or_null(&s->j, "lost_events", h->lost_events_known, h->lost_events);
		return;
	}
	fputs("Profile:  ", stdout);
	print_path(stdout, path, strlen(path));
	putchar('\n');
	printf("Source:   %s", h->source);
	if (h->backend[0])
		printf(" (%s backend)", h->backend);
	if (h->mmap_pages[0])
		printf(", mmap pages %s", h->mmap_pages);
	putchar('\n');
	if (h->command) {
		/* record stores it shell-quoted: print it as it is, to be pasted */
		fputs("Command:  ", stdout);
		print_text(stdout, h->command, strlen(h->command));
		putchar('\n');
	}
	if (h->max_rss_known || h->write_bytes_known) {
		char a[16], b[16];

		printf("Run:      peak RSS %s, wrote %s\n",
		       h->max_rss_known ? human_size(h->max_rss, a) : "unknown",
		       h->write_bytes_known ? human_size(h->write_bytes, b) : "unknown");
	}
	if (h->lost_events_known && h->lost_events)
		printf("Lost:     %llu accesses the recorder could not see: the pages and the trace "
		       "lack them\n", (unsigned long long)h->lost_events);
	if (h->cwd) {
		fputs("Cwd:      ", stdout);
		print_path(stdout, h->cwd, strlen(h->cwd));
		putchar('\n');
	}
	/* host and kernel may hold any byte from 0x80 up, C1 controls included */
	printf("Created:  %s on ", when);
	print_path(stdout, host, strlen(host));
	fputs(", Linux ", stdout);
	print_path(stdout, kernel, strlen(kernel));
	printf(", %u-byte pages\n", h->page_size);
}

static void print_ranges_text(const struct hs_range *r, size_t n)
{
	fputs(" [", stdout);
	for (size_t i = 0; i < n; i++) {
		if (r[i].first == r[i].last)
			printf(i ? ",%llu" : "%llu", (unsigned long long)r[i].first);
		else
			printf(i ? ",%llu-%llu" : "%llu-%llu", (unsigned long long)r[i].first,
			       (unsigned long long)r[i].last);
	}
	putchar(']');
}

static void print_ranges_json(struct json *j, const char *key, const struct hs_range *r, size_t n)
{
	json_begin_array(j, key);
	for (size_t i = 0; i < n; i++) {
		/* one line per range would make huge files unreadable */
		fprintf(j->f, "%s[%llu,%llu]", i ? "," : "", (unsigned long long)r[i].first,
			(unsigned long long)r[i].last);
	}
	j->first[j->depth] = !n;
	json_end_array(j);
}

/* The mtime in nanoseconds, exact: the profile's decimal without its point. */
static const char *mtime_ns(const struct hs_file_id *id, char buf[HS_MTIME_STR_MAX])
{
	char *p = (char *)hs_mtime_str(id->mtime_sec, id->mtime_nsec, buf), *dot = strchr(p, '.');
	char *d = p + (*p == '-');

	memmove(dot, dot + 1, strlen(dot));
	while (d[0] == '0' && d[1])	/* "0.000000005" is 5 */
		memmove(d, d + 1, strlen(d));
	return strcmp(p, "-0") ? p : "0";
}

static void show_file(struct show *s, const struct hs_profile_file *f)
{
	char flags[8], size[16], dev[32], mtime[HS_MTIME_STR_MAX];

	if (s->files) {
		if (s->print0)
			fwrite(f->path, 1, f->path_len + 1, stdout);	/* with its NUL */
		else
			print_path(stdout, f->path, f->path_len), putchar('\n');
		return;
	}
	if (s->json) {
		json_begin_object(&s->j, NULL);
		json_bytes(&s->j, "path", f->path, f->path_len);
		json_u64(&s->j, "size", f->id.size);
		json_u64(&s->j, "pages", f->pages);
		print_ranges_json(&s->j, "ranges", f->ranges, f->nranges);
		json_string(&s->j, "flags", hs_file_flags_str(f->flags, flags));
		snprintf(dev, sizeof(dev), "%u:%u", major(f->id.dev), minor(f->id.dev));
		json_string(&s->j, "dev", dev);
		json_u64(&s->j, "ino", f->id.ino);
		json_number(&s->j, "mtime_ns", mtime_ns(&f->id, mtime));
		json_end_object(&s->j);
		return;
	}
	if (f->index == 0)
		printf("\n%-5s %10s %10s  %s\n", "FLAGS", "PAGES", "SIZE", "PATH [RANGES]");
	printf("%-5s %10llu %10s  ", hs_file_flags_str(f->flags, flags),
	       (unsigned long long)f->pages, human_size(f->id.size, size));
	print_path(stdout, f->path, f->path_len);
	if (f->nranges)
		print_ranges_text(f->ranges, f->nranges);
	putchar('\n');
}

static void show_output(struct show *s, const struct hs_profile_file *f, uint64_t n)
{
	if (s->json) {
		json_bytes(&s->j, NULL, f->path, f->path_len);
		return;
	}
	if (n == 0)
		fputs("\nOutputs (written by the job, not part of its working set):\n", stdout);
	fputs("  ", stdout);
	print_path(stdout, f->path, f->path_len);
	putchar('\n');
}

static void show_trace(struct show *s, const struct hs_profile_trace *t, uint64_t n)
{
	if (!s->json) {
		if (n == 0)
			fputs("\nTrace (file index: pages, in access order):\n", stdout);
		printf("  %llu:", (unsigned long long)t->file);
		print_ranges_text(t->ranges, t->nranges);
		putchar('\n');
		return;
	}
	for (size_t i = 0; i < t->nranges; i++) {	/* [file, first, last] */
		json_begin_array(&s->j, NULL);
		fprintf(s->j.f, "%llu,%llu,%llu", (unsigned long long)t->file,
			(unsigned long long)t->ranges[i].first, (unsigned long long)t->ranges[i].last);
		s->j.first[s->j.depth] = true;
		json_end_array(&s->j);
	}
}

/* JSON: the files array is followed by outputs, then trace (null without --trace). */
static void json_section(struct show *s, enum hs_profile_item_kind k, bool open)
{
	if (!s->json)
		return;
	if (k == HS_ITEM_TRACE && !s->trace) {
		if (open)
			json_null(&s->j, "trace");
	} else if (!open) {
		json_end_array(&s->j);
	} else {
		json_begin_array(&s->j, k == HS_ITEM_FILE ? "files" :
				 k == HS_ITEM_OUTPUT ? "outputs" : "trace");
	}
}

/*
 * One pass over the items, to count them, to print what the mode prints of
 * them (--files, JSON, or -v and --trace after the summary), or both (JSON).
 * Returns 0, or -1 after printing an error.
 */
static int walk(struct show *s, const char *path, struct hs_profile_reader *r, bool count,
		bool print)
{
	enum hs_profile_item_kind section = HS_ITEM_FILE;
	uint64_t outputs = 0, trace = 0;
	struct hs_profile_item it;
	struct hs_error err = { 0 };
	int rc;

	hs_profile_rewind(r);
	if (print)
		json_section(s, section, true);
	while ((rc = hs_profile_next(r, &it, &err)) > 0) {
		if (count && hs_summary_add(&s->sum, &it))
			return error("out of memory");
		if (it.kind == HS_ITEM_FILE) {
			if (print && (s->files || s->json || s->verbose))
				show_file(s, &it.file);
			continue;
		}
		if (s->files)
			break;	/* only files are wanted */
		while (print && section < it.kind) {
			json_section(s, section++, false);
			json_section(s, section, true);
		}
		if (it.kind == HS_ITEM_OUTPUT) {
			if (print && (s->json || s->verbose))
				show_output(s, &it.file, outputs);
			outputs++;
		} else {
			if (print && s->trace)
				show_trace(s, &it.trace, trace);
			trace++;
		}
	}
	if (rc < 0) {
		fflush(stdout);
		return error("%s:%u: %s", path, err.line, err.msg);
	}
	while (print && section < HS_ITEM_TRACE) {
		json_section(s, section++, false);
		json_section(s, section, true);
	}
	if (print)
		json_section(s, section, false);
	return 0;
}

static int show(struct show *s, const char *path, struct hs_profile_reader *r)
{
	const uint32_t ps = hs_profile_header(r)->page_size;
	struct hs_error err = { 0 };
	int rc;

	if (s->files)
		return walk(s, path, r, false, true);
	if (s->json)
		json_begin_report(&s->j, stdout, "show", false);
	print_header(s, path, hs_profile_header(r));
	if (walk(s, path, r, true, s->json))
		return -1;
	if ((rc = hs_summary_finish(&s->sum, r, &err))) {
		fflush(stdout);
		return rc == -ENOMEM ? error("out of memory") :
				       error("%s:%u: %s", path, err.line, err.msg);
	}
	if (s->json) {
		show_summary_json(&s->j, &s->sum, ps);
		json_end_object(&s->j);
		json_finish(&s->j);
		return 0;
	}
	show_summary_print(&s->sum, ps);
	return s->verbose || s->trace ? walk(s, path, r, false, true) : 0;
}

static int run_show(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "profile", required_argument, NULL, 'p' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "files", no_argument, NULL, OPT_FILES },
		{ "print0", no_argument, NULL, OPT_PRINT0 },
		{ "trace", no_argument, NULL, OPT_TRACE },
		COMMON_LONGOPTS,
		{ 0 },
	};
	struct show s = { 0 };
	struct operands ops = { .cmd = &cmd_show };
	int opt, rc;

	while ((opt = getopt_long(argc, argv, OPTS_START "p:v", longopts, NULL)) != -1) {
		switch (opt) {
		case 'J': s.json = true; break;
		case 'p':
			if ((rc = option_profile(&cmd_show, &ops.profile, optarg)))
				return rc;
			break;
		case 'q': break;	/* show prints no warnings, notes or progress */
		case 'v': s.verbose = true; break;
		case OPT_FILES: s.files = true; break;
		case OPT_PRINT0: s.files = s.print0 = true; break;
		case OPT_TRACE: s.trace = true; break;
		default: return option_other(&cmd_show, opt, argv, longopts);
		}
	}
	if (s.files && (s.json || s.verbose || s.trace))
		return usage_error(&cmd_show, "--files and --print0 print paths only: not with %s",
				   s.json ? "--json" : s.verbose ? "--verbose" : "--trace");
	if (argc - optind != !ops.profile)
		return usage_error(&cmd_show, "give exactly one PROFILE (as an operand or with -p)");
	if (!ops.profile)
		ops.profile = argv[optind];
	if ((rc = operands_open(&ops)))
		return rc;
	rc = show(&s, ops.profile, ops.reader);
	operands_close(&ops);
	hs_summary_release(&s.sum);
	return finish_stdout(rc ? EXIT_USAGE : EXIT_OK);
}

const struct cmd cmd_show = {
	"show", run_show, "print a profile: a summary, its files, page ranges and totals", usage,
};
