/*
 * show-summary.c - the summary show prints of a profile (a struct
 * hs_summary, summary.h): its totals, the largest directories and files,
 * and the directories that hold its working set; as text or as JSON.
 */
#include <stdio.h>
#include <string.h>

#include "show-summary.h"
#include "output.h"

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
static void print_dirs(const struct hs_summary *s, uint32_t ps, const struct hs_top_dir *d,
		       size_t n)
{
	int wp = 5, wn = 6;

	for (size_t k = 0; k < n; k++) {
		wp = digits(d[k].pages) > wp ? digits(d[k].pages) : wp;
		wn = digits(d[k].files) > wn ? digits(d[k].files) : wn;
	}
	printf("  %*s %10s %6s %*s  %s\n", wp, "PAGES", "MEMORY", "SHARE", wn, "FILES",
	       "DIRECTORY");
	for (size_t k = 0; k < n; k++) {
		print_row(d[k].pages, wp, ps, s->tops.pages, d[k].files, wn);
		print_path(stdout, d[k].name, strlen(d[k].name));
		putchar('\n');
	}
}

static void print_tops(const struct hs_summary *s, uint32_t ps)
{
	const struct hs_tops *t = &s->tops;
	uint64_t with_pages = s->files - s->no_pages;
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
		       percent(t->under.pages, s->tops.pages, share));
		print_path(stdout, t->under.name, strlen(t->under.name));
		printf(".\n");
	}
	if (t->ncover) {
		printf("\nDirectories that hold the working set (%zu, with %s of its pages):\n",
		       t->ncover, percent(t->cover_pages, s->tops.pages, share));
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
			print_row(t->file[k].pages, wp, ps, s->tops.pages, t->file[k].nranges, wn);
			print_path(stdout, t->file[k].path, t->file[k].len);
			putchar('\n');
		}
	}
}

void show_summary_print(const struct hs_summary *s, uint32_t ps)
{
	static const char *const used[HS_SUMMARY_FLAGS] = {
		"read", "mapped", "executed", "written", "O_DIRECT",
	};
	static const char letters[] = "rmxwd";
	char size[SIZE_STR_MAX];
	const char *sep = "";

	printf("\nTotal:    %llu file%s, %llu page%s (%s)", (unsigned long long)s->files,
	       plural(s->files), (unsigned long long)s->tops.pages, plural(s->tops.pages),
	       memory_size(s->tops.pages, ps, size));
	if (s->outputs)
		printf(", %llu output%s", (unsigned long long)s->outputs, plural(s->outputs));
	if (s->trace_lines)
		printf(", %llu trace line%s", (unsigned long long)s->trace_lines,
		       plural(s->trace_lines));
	putchar('\n');
	if (!s->files)
		return;
	printf("Ranges:   %llu range%s: %llu file%s read in one, %llu in several (at most %llu)",
	       (unsigned long long)s->ranges, plural(s->ranges), (unsigned long long)s->one_range,
	       plural(s->one_range), (unsigned long long)s->several,
	       (unsigned long long)s->max_ranges);
	if (s->no_pages)
		printf(", %llu without pages", (unsigned long long)s->no_pages);
	fputs("\nFlags:    ", stdout);
	for (unsigned b = 0; b < HS_SUMMARY_FLAGS; b++) {
		if (s->used[b]) {
			printf("%s%llu %s (%c)", sep, (unsigned long long)s->used[b], used[b],
			       letters[b]);
			sep = ", ";
		}
	}
	puts(*sep ? "" : "no flags");
	print_tops(s, ps);
}

static void json_dirs(struct json *j, uint32_t ps, const char *key, const struct hs_top_dir *d,
		      size_t n)
{
	json_begin_array(j, key);
	for (size_t k = 0; k < n; k++) {
		json_begin_object(j, NULL);
		json_string(j, "path", d[k].name);
		json_u64(j, "pages", d[k].pages);
		json_u64(j, "memory_bytes", memory_bytes(d[k].pages, ps));
		json_u64(j, "files", d[k].files);
		json_end_object(j);
	}
	json_end_array(j);
}

void show_summary_json(struct json *j, const struct hs_summary *s, uint32_t ps)
{
	const struct hs_tops *t = &s->tops;

	json_u64(j, "trace_lines", s->trace_lines);
	json_u64(j, "pages", t->pages);
	json_u64(j, "bytes", memory_bytes(t->pages, ps));
	/* what the summary says of directories (docs/json.md, "show"), after the totals */
	json_u64(j, "memory_bytes", memory_bytes(t->pages, ps));
	json_dirs(j, ps, "directories", t->dir, t->ndirs);
	json_string(j, "most_under", t->under.name);
	json_u64_or_null(j, "most_under_pages", t->under.name, t->under.pages);
	json_dirs(j, ps, "working_set_directories", t->cover, t->ncover);
	json_u64(j, "working_set_directories_pages", t->cover_pages);
}
