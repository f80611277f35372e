/*
 * cmd-show.c - hotset show: a profile in words or in JSON.
 */
#include <string.h>
#include <sys/sysmacros.h>
#include <time.h>

#include "hotset/profile.h"
#include "operands.h"
#include "options.h"

static const char usage[] =
	"usage: hotset show [-q] [-J] [--trace] [-p] PROFILE\n"
	"\n"
	"Print a profile: its header, every file with its page ranges (in the\n"
	"order the job first read them), its outputs, and totals. PROFILE '-' is\n"
	"read from standard input (as -p - is, for status, warm and evict).\n"
	"\n"
	"  -p, --profile PROFILE  the profile to show (or give it as the operand)\n"
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
	bool json, trace;
	struct json j;
	uint64_t files, pages, outputs, trace_lines;
	uint32_t page_size;
};

static void print_header(struct show *s, const char *path, const struct hs_profile_header *h)
{
	const char *host = h->host[0] ? h->host : "?", *kernel = h->kernel[0] ? h->kernel : "?";
	time_t t = (time_t)h->created;
	char when[64] = "unknown";
	struct tm tm;

	if (h->created && gmtime_r(&t, &tm))
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (s->json) {
		json_string(&s->j, "profile", path);
		json_u64(&s->j, "version", h->version);
		json_string(&s->j, "source", h->source);
		json_string(&s->j, "backend", h->backend[0] ? h->backend : NULL);
		json_string(&s->j, "mmap_pages", h->mmap_pages[0] ? h->mmap_pages : NULL);
		json_string(&s->j, "command", h->command);
		json_string(&s->j, "cwd", h->cwd);
		json_string(&s->j, "created", when);
		json_string(&s->j, "host", h->host);
		json_string(&s->j, "kernel", h->kernel);
		json_u64(&s->j, "page_size", h->page_size);
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
	/* host and kernel may hold any byte from 0x80 up, C1 controls included */
	printf("Created:  %s on ", when);
	print_path(stdout, host, strlen(host));
	fputs(", Linux ", stdout);
	print_path(stdout, kernel, strlen(kernel));
	printf(", %u-byte pages\n\n", h->page_size);
	printf("%-5s %10s %10s  %s\n", "FLAGS", "PAGES", "SIZE", "PATH [RANGES]");
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

static void show_file(struct show *s, const struct hs_profile_file *f)
{
	char flags[8], size[16], dev[32], mtime[HS_MTIME_STR_MAX];

	s->files++;
	/* each file's bytes fit in 64 bits (the parser sees to it), a sum may not */
	s->pages = s->pages + f->pages < s->pages ? UINT64_MAX : s->pages + f->pages;
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
		json_number(&s->j, "mtime", hs_mtime_str(f->id.mtime_sec, f->id.mtime_nsec, mtime));
		json_end_object(&s->j);
		return;
	}
	printf("%-5s %10llu %10s  ", hs_file_flags_str(f->flags, flags),
	       (unsigned long long)f->pages, human_size(f->id.size, size));
	print_path(stdout, f->path, f->path_len);
	if (f->nranges)
		print_ranges_text(f->ranges, f->nranges);
	putchar('\n');
}

/* JSON: the files array is followed by outputs, then (with --trace) trace. */
static void json_section(struct show *s, enum hs_profile_item_kind k, bool open)
{
	if (!s->json || (k == HS_ITEM_TRACE && !s->trace))
		return;
	if (!open)
		json_end_array(&s->j);
	else
		json_begin_array(&s->j, k == HS_ITEM_FILE ? "files" :
				 k == HS_ITEM_OUTPUT ? "outputs" : "trace");
}

static void show_output(struct show *s, const struct hs_profile_file *f)
{
	if (s->json) {
		json_bytes(&s->j, NULL, f->path, f->path_len);
		return;
	}
	if (s->outputs == 1)
		fputs("\nOutputs (written by the job, not part of its working set):\n", stdout);
	fputs("  ", stdout);
	print_path(stdout, f->path, f->path_len);
	putchar('\n');
}

static void show_trace(struct show *s, const struct hs_profile_trace *t)
{
	if (!s->trace)
		return;
	if (!s->json) {
		if (s->trace_lines == 1)
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

static int show(struct show *s, const char *path, struct hs_profile_reader *r)
{
	const uint32_t ps = hs_profile_header(r)->page_size;
	uint64_t bytes;
	enum hs_profile_item_kind section = HS_ITEM_FILE;
	struct hs_profile_item it;
	struct hs_error err = { 0 };
	char size[16];
	int rc;

	if (s->json)
		json_begin_report(&s->j, stdout, "show", false);
	print_header(s, path, hs_profile_header(r));
	json_section(s, section, true);
	while ((rc = hs_profile_next(r, &it, &err)) > 0) {
		while (section < it.kind) {
			json_section(s, section++, false);
			json_section(s, section, true);
		}
		if (it.kind == HS_ITEM_FILE) {
			show_file(s, &it.file);
		} else if (it.kind == HS_ITEM_OUTPUT) {
			s->outputs++;
			show_output(s, &it.file);
		} else {
			s->trace_lines++;
			show_trace(s, &it.trace);
		}
	}
	if (rc < 0) {
		fflush(stdout);
		return error("%s:%u: %s", path, err.line, err.msg);
	}
	while (section < HS_ITEM_TRACE) {
		json_section(s, section++, false);
		json_section(s, section, true);
	}
	json_section(s, section, false);
	bytes = s->pages > UINT64_MAX / ps ? UINT64_MAX : s->pages * ps;	/* capped */
	if (s->json) {
		json_u64(&s->j, "trace_lines", s->trace_lines);
		json_u64(&s->j, "pages", s->pages);
		json_u64(&s->j, "bytes", bytes);
		json_end_object(&s->j);
		json_finish(&s->j);
		return 0;
	}
	printf("\nTotal:    %llu file%s, %llu page%s (%s)", (unsigned long long)s->files,
	       plural(s->files), (unsigned long long)s->pages, plural(s->pages),
	       human_size(bytes, size));
	if (s->outputs)
		printf(", %llu output%s", (unsigned long long)s->outputs, plural(s->outputs));
	if (s->trace_lines)
		printf(", %llu trace line%s", (unsigned long long)s->trace_lines,
		       plural(s->trace_lines));
	putchar('\n');
	return 0;
}

static int run_show(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "profile", required_argument, NULL, 'p' },
		{ "trace", no_argument, NULL, OPT_TRACE },
		COMMON_LONGOPTS,
		{ 0 },
	};
	struct show s = { 0 };
	struct operands ops = { .cmd = &cmd_show };
	int opt, rc;

	while ((opt = getopt_long(argc, argv, OPTS_START "p:", longopts, NULL)) != -1) {
		switch (opt) {
		case 'J': s.json = true; break;
		case 'p': ops.profile = optarg; break;
		case 'q': break;	/* show prints no warnings */
		case OPT_TRACE: s.trace = true; break;
		default: return option_other(&cmd_show, opt, argv, longopts);
		}
	}
	if (argc - optind != !ops.profile)
		return usage_error(&cmd_show, "give exactly one PROFILE (as an operand or with -p)");
	if (!ops.profile)
		ops.profile = argv[optind];
	if ((rc = operands_open(&ops)))
		return rc;
	rc = show(&s, ops.profile, ops.reader);
	operands_close(&ops);
	return finish_stdout(rc ? EXIT_USAGE : EXIT_OK);
}

const struct cmd cmd_show = {
	"show", run_show, "print a profile: files, page ranges and totals", usage,
};
