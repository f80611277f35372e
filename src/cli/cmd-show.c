/*
 * cmd-show.c - hotset show: a profile summarised for a person (totals, the
 * largest directories and files), listed in full (-v), as its file names
 * (--files), or in JSON.
 *
 * Profiles can have a million files, so the summary keeps nothing per
 * file: counters, and the largest directories and files (tops.h, shared
 * with doctor). It reads the profile again instead (hs_profile_rewind):
 * once to count, once to name the largest directories, and once more to
 * list (-v, --trace).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <time.h>

#include "profile/profile.h"
#include "profile/tops.h"
#include "operands.h"
#include "options.h"

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
	uint64_t files_n, pages, outputs, trace_lines;
	uint64_t ranges, one_range, several, no_pages, max_ranges;
	uint64_t used[5];	/* files per flag bit (enum hs_file_flag) */
	struct hs_tops tops;
};

/* ---- counting ------------------------------------------------------------- */

static uint64_t add_capped(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

static int count_file(struct show *s, const struct hs_profile_file *f)
{
	s->files_n++;
	/* each file's bytes fit in 64 bits (the parser sees to it), a sum may not */
	s->pages = add_capped(s->pages, f->pages);
	s->ranges += f->nranges;
	if (f->nranges > s->max_ranges)
		s->max_ranges = f->nranges;
	if (!f->nranges)
		s->no_pages++;
	else if (f->nranges == 1)
		s->one_range++;
	else
		s->several++;
	for (unsigned b = 0; b < 5; b++)
		s->used[b] += !!(f->flags & (1u << b));
	return hs_tops_add(&s->tops, f);
}

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

static int digits(uint64_t v)
{
	int n = 1;

	while (v >= 10)
		v /= 10, n++;
	return n;
}

/* "top 10 of 1234" or "all 3" */
static void print_count(const char *what, uint64_t shown, uint64_t all, bool more)
{
	if (more)
		printf("top %llu of more than %llu %s", (unsigned long long)shown,
		       (unsigned long long)all, what);
	else if (shown < all)
		printf("top %llu of %llu %s", (unsigned long long)shown, (unsigned long long)all, what);
	else
		printf("all %llu", (unsigned long long)all);
}

static void print_row(uint64_t pages, int wp, uint32_t ps, uint64_t total, uint64_t n, int wn)
{
	char size[16], share[8];

	printf("  %*llu %10s %6s %*llu  ", wp, (unsigned long long)pages,
	       human_size(memory_bytes(pages, ps), size), percent(pages, total, share), wn,
	       (unsigned long long)n);
}

/* A table of directories: pages, the memory they take, share, files under each. */
static void print_dirs(const struct show *s, uint32_t ps, const struct hs_top_dir *d, size_t n)
{
	int wp = 5, wn = 6;

	for (size_t k = 0; k < n; k++) {
		wp = digits(d[k].pages) > wp ? digits(d[k].pages) : wp;
		wn = digits(d[k].files) > wn ? digits(d[k].files) : wn;
	}
	printf("  %*s %10s %6s %*s  %s\n", wp, "PAGES", "MEMORY", "SHARE", wn, "FILES",
	       "DIRECTORY");
	for (size_t k = 0; k < n; k++) {
		print_row(d[k].pages, wp, ps, s->pages, d[k].files, wn);
		print_path(stdout, d[k].name, strlen(d[k].name));
		putchar('\n');
	}
}

static void print_tops(struct show *s, uint32_t ps)
{
	const struct hs_tops *t = &s->tops;
	uint64_t with_pages = s->files_n - s->no_pages;
	char share[8];
	int wp, wn;

	if (t->ndirs) {
		printf("\nLargest directories, by the pages of every file under them (");
		print_count("directories", t->ndirs, t->full ? HS_TOPS_DIR_MAX : t->dirs_counted,
			    t->full);
		printf("):\n");
		print_dirs(s, ps, t->dir, t->ndirs);
	}
	if (t->under.name) {
		printf("\nMost of the working set (%s of its pages) is under ",
		       percent(t->under.pages, s->pages, share));
		print_path(stdout, t->under.name, strlen(t->under.name));
		printf(".\n");
	}
	if (t->ncover) {
		printf("\nDirectories that hold the working set (%zu, with %s of its pages):\n",
		       t->ncover, percent(t->cover_pages, s->pages, share));
		print_dirs(s, ps, t->cover, t->ncover);
	}
	wp = 5, wn = 6;
	for (size_t k = 0; k < t->nfiles; k++) {
		wp = digits(t->file[k].pages) > wp ? digits(t->file[k].pages) : wp;
		wn = digits(t->file[k].nranges) > wn ? digits(t->file[k].nranges) : wn;
	}
	if (t->nfiles) {
		printf("\nLargest files, by pages (");
		print_count("files with pages", t->nfiles, with_pages, false);
		printf("):\n  %*s %10s %6s %*s  %s\n", wp, "PAGES", "MEMORY", "SHARE", wn, "RANGES",
		       "PATH");
		for (size_t k = 0; k < t->nfiles; k++) {
			print_row(t->file[k].pages, wp, ps, s->pages, t->file[k].nranges, wn);
			print_path(stdout, t->file[k].path, t->file[k].len);
			putchar('\n');
		}
	}
}

static void print_summary(struct show *s, uint32_t ps)
{
	static const char *const used[5] = { "read", "mapped", "executed", "written", "O_DIRECT" };
	static const char letters[] = "rmxwd";
	char size[SIZE_STR_MAX];
	const char *sep = "";

	printf("\nTotal:    %llu file%s, %llu page%s (%s)", (unsigned long long)s->files_n,
	       plural(s->files_n), (unsigned long long)s->pages, plural(s->pages),
	       memory_size(s->pages, ps, size));
	if (s->outputs)
		printf(", %llu output%s", (unsigned long long)s->outputs, plural(s->outputs));
	if (s->trace_lines)
		printf(", %llu trace line%s", (unsigned long long)s->trace_lines,
		       plural(s->trace_lines));
	putchar('\n');
	if (!s->files_n)
		return;
	printf("Ranges:   %llu range%s: %llu file%s read in one, %llu in several (at most %llu)",
	       (unsigned long long)s->ranges, plural(s->ranges), (unsigned long long)s->one_range,
	       plural(s->one_range), (unsigned long long)s->several,
	       (unsigned long long)s->max_ranges);
	if (s->no_pages)
		printf(", %llu without pages", (unsigned long long)s->no_pages);
	fputs("\nFlags:    ", stdout);
	for (unsigned b = 0; b < 5; b++) {
		if (s->used[b]) {
			printf("%s%llu %s (%c)", sep, (unsigned long long)s->used[b], used[b],
			       letters[b]);
			sep = ", ";
		}
	}
	puts(*sep ? "" : "no flags");
	print_tops(s, ps);
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

static void json_dirs(struct show *s, uint32_t ps, const char *key, const struct hs_top_dir *d,
		      size_t n)
{
	json_begin_array(&s->j, key);
	for (size_t k = 0; k < n; k++) {
		json_begin_object(&s->j, NULL);
		json_string(&s->j, "path", d[k].name);
		json_u64(&s->j, "pages", d[k].pages);
		json_u64(&s->j, "memory_bytes", memory_bytes(d[k].pages, ps));
		json_u64(&s->j, "files", d[k].files);
		json_end_object(&s->j);
	}
	json_end_array(&s->j);
}

/* What the summary says of directories (docs/json.md, "show"), after the totals. */
static void json_tops(struct show *s, uint32_t ps)
{
	const struct hs_tops *t = &s->tops;

	json_u64(&s->j, "memory_bytes", memory_bytes(s->pages, ps));
	json_dirs(s, ps, "directories", t->dir, t->ndirs);
	json_string(&s->j, "most_under", t->under.name);
	json_u64_or_null(&s->j, "most_under_pages", t->under.name, t->under.pages);
	json_dirs(s, ps, "working_set_directories", t->cover, t->ncover);
	json_u64(&s->j, "working_set_directories_pages", t->cover_pages);
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
		if (it.kind == HS_ITEM_FILE) {
			if (count && count_file(s, &it.file))
				return error("out of memory");
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
			s->outputs += count;
			if (print && (s->json || s->verbose))
				show_output(s, &it.file, outputs);
			outputs++;
		} else {
			s->trace_lines += count;
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
	if ((rc = hs_tops_finish(&s->tops, r, &err)) ||
	    (rc = hs_tops_cover(&s->tops, HS_TOPS_COVER_SHARE, HS_TOPS_COVER_MAX,
				HS_TOPS_COVER_MIN, r, &err))) {
		fflush(stdout);
		return rc == -ENOMEM ? error("out of memory") :
				       error("%s:%u: %s", path, err.line, err.msg);
	}
	if (s->json) {
		json_u64(&s->j, "trace_lines", s->trace_lines);
		json_u64(&s->j, "pages", s->pages);
		json_u64(&s->j, "bytes", memory_bytes(s->pages, ps));
		json_tops(s, ps);
		json_end_object(&s->j);
		json_finish(&s->j);
		return 0;
	}
	print_summary(s, ps);
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
	hs_tops_release(&s.tops);
	return finish_stdout(rc ? EXIT_USAGE : EXIT_OK);
}

const struct cmd cmd_show = {
	"show", run_show, "print a profile: a summary, its files, page ranges and totals", usage,
};
