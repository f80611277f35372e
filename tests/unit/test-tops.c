/*
 * test-tops.c - the largest directories and files of a profile: totals
 * that roll up as du's, the directory that holds most of the pages, the
 * directories that hold the working set, and the same figures once the
 * table is full (Space-Saving, then an exact recount); and show's summary
 * of a profile (summary.h), which counts beside them.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile.h"
#include "profile/summary.h"
#include "profile/tops.h"
#include "unit.h"

/* A profile built in memory, a file line at a time. */
struct prof {
	char *buf;
	size_t len;
	FILE *f;
	unsigned n;
};

static void prof_start(struct prof *p)
{
	memset(p, 0, sizeof(*p));
	p->f = open_memstream(&p->buf, &p->len);
	fputs("hotset-profile 1\npage-size 4096\nsource snapshot\n", p->f);
}

/* A file of pages pages (none for 0) at path, printf-style. */
static void prof_file(struct prof *p, unsigned pages, const char *fmt, ...)
{
	va_list ap;

	if (pages)
		fprintf(p->f, "f 1:2 %u 0 1.000000000 r 0-%u ", ++p->n, pages - 1);
	else
		fprintf(p->f, "f 1:2 %u 0 1.000000000 r - ", ++p->n);
	va_start(ap, fmt);
	vfprintf(p->f, fmt, ap);
	va_end(ap);
	fputc('\n', p->f);
}

/* Count every file of p into t and finish; returns the reader (to close). */
static struct hs_profile_reader *prof_tops(struct prof *p, struct hs_tops *t)
{
	struct hs_profile_reader *r = NULL;
	struct hs_profile_item it;
	struct hs_error err = { 0 };
	int rc;

	fprintf(p->f, "end %u 0 0\n", p->n);
	fclose(p->f);
	CHECK(hs_profile_open_buffer(p->buf, p->len, &r, &err) == 0);
	if (!r)
		return NULL;
	memset(t, 0, sizeof(*t));
	while ((rc = hs_profile_next(r, &it, &err)) > 0 && it.kind == HS_ITEM_FILE)
		CHECK(hs_tops_add(t, &it.file) == 0);
	CHECK(rc >= 0);
	CHECK(hs_tops_finish(t, r, &err) == 0);
	return r;
}

static void prof_done(struct prof *p, struct hs_tops *t, struct hs_profile_reader *r)
{
	hs_profile_close(r);
	hs_tops_release(t);
	free(p->buf);
}

/* The index of directory name in t->dir[], or -1. */
static int dir_at(const struct hs_tops *t, const char *name)
{
	for (size_t k = 0; k < t->ndirs; k++)
		if (t->dir[k].name && !strcmp(t->dir[k].name, name))
			return (int)k;
	return -1;
}

static int cover_at(const struct hs_tops *t, const char *name)
{
	for (size_t k = 0; k < t->ncover; k++)
		if (t->cover[k].name && !strcmp(t->cover[k].name, name))
			return (int)k;
	return -1;
}

TEST(a_directory_counts_every_file_under_it)
{
	struct prof p;
	struct hs_tops t;
	struct hs_profile_reader *r;
	int k;

	prof_start(&p);
	prof_file(&p, 2, "/usr/include/boost/version.hpp");
	for (int i = 0; i < 8; i++)
		prof_file(&p, 3, "/usr/include/boost/d%d/x.hpp", i);	/* 24 in subdirectories */
	prof_file(&p, 30, "/usr/lib/gcc/x86_64-linux-gnu/12/cc1plus");
	prof_file(&p, 4, "/home/u/src/a.cc");
	prof_file(&p, 0, "/home/u/src/empty");
	r = prof_tops(&p, &t);
	CHECK_EQ_U64(t.pages, 60);
	/* boost holds 26 pages, though no file directly in it has more than 2 */
	CHECK((k = dir_at(&t, "/usr/include/boost")) >= 0);
	if (k >= 0) {
		CHECK_EQ_U64(t.dir[k].pages, 26);
		CHECK_EQ_U64(t.dir[k].files, 9);
	}
	/* / and /usr hold more than one subdirectory's: listed, largest first */
	CHECK_STR(t.dir[0].name, "/");
	CHECK_EQ_U64(t.dir[0].pages, 60);
	CHECK_EQ_U64(t.dir[0].files, 12);
	CHECK_STR(t.dir[1].name, "/usr");
	CHECK_EQ_U64(t.dir[1].pages, 56);
	/* a chain holds nothing beyond its deepest: /usr/lib, /usr/lib/gcc... are left out */
	CHECK(dir_at(&t, "/usr/lib") < 0 && dir_at(&t, "/usr/lib/gcc") < 0);
	CHECK(dir_at(&t, "/usr/lib/gcc/x86_64-linux-gnu") < 0);
	CHECK((k = dir_at(&t, "/usr/lib/gcc/x86_64-linux-gnu/12")) >= 0);
	CHECK(k >= 0 && t.dir[k].pages == 30);
	CHECK(dir_at(&t, "/home/u/src") >= 0 && dir_at(&t, "/home") < 0);
	CHECK_EQ_U64(t.dirs_counted, 19);
	CHECK(!t.full);
	/* the deepest directory with more than half of the 60 pages */
	CHECK_STR(t.under.name, "/usr");
	CHECK_EQ_U64(t.under.pages, 56);
	prof_done(&p, &t, r);
}

TEST(most_of_the_pages_is_under_the_deepest_directory_that_holds_more_than_half)
{
	struct prof p;
	struct hs_tops t;
	struct hs_profile_reader *r;

	prof_start(&p);
	prof_file(&p, 31, "/usr/lib/gcc/x86_64-linux-gnu/12/cc1plus");
	prof_file(&p, 10, "/usr/lib/gcc/x86_64-linux-gnu/12/include/stddef.h");
	prof_file(&p, 40, "/usr/include/stdio.h");
	r = prof_tops(&p, &t);
	CHECK_STR(t.under.name, "/usr/lib/gcc/x86_64-linux-gnu/12");
	CHECK_EQ_U64(t.under.pages, 41);
	CHECK_EQ_U64(t.under.files, 2);
	prof_done(&p, &t, r);

	/* exactly half is not most: the deepest with more is /a */
	prof_start(&p);
	prof_file(&p, 5, "/a/b/f");
	prof_file(&p, 5, "/a/c/g");
	r = prof_tops(&p, &t);
	CHECK_STR(t.under.name, "/a");
	prof_done(&p, &t, r);

	/* half under /a, half under /b: none holds most but / */
	prof_start(&p);
	prof_file(&p, 5, "/a/f");
	prof_file(&p, 5, "/b/g");
	r = prof_tops(&p, &t);
	CHECK_STR(t.under.name, "/");
	CHECK(dir_at(&t, "/a") >= 0 && dir_at(&t, "/b") >= 0 && dir_at(&t, "/") >= 0);
	prof_done(&p, &t, r);

	/* no pages: no directory holds most of them */
	prof_start(&p);
	prof_file(&p, 0, "/x/f");
	r = prof_tops(&p, &t);
	CHECK(t.under.name == NULL && t.ndirs == 0);
	prof_done(&p, &t, r);
}

/* A C++ compile's working set: Boost's headers, the compiler, the standard library. */
static void compile_profile(struct prof *p)
{
	prof_start(p);
	for (int i = 0; i < 40; i++)	/* 40 subdirectories of 1% each, and 10% directly */
		prof_file(p, 10, "/usr/include/boost/lib%02d/detail/x.hpp", i);
	for (int i = 0; i < 10; i++)
		prof_file(p, 10, "/usr/include/boost/h%d.hpp", i);
	prof_file(p, 360, "/usr/lib/gcc/x86_64-linux-gnu/12/cc1plus");
	prof_file(p, 120, "/usr/include/c++/12/bits/stl_vector.h");
	prof_file(p, 30, "/usr/include/c++/12/vector");
	prof_file(p, 40, "/usr/include/x86_64-linux-gnu/bits/types.h");
	prof_file(p, 30, "/usr/lib/x86_64-linux-gnu/libc.so.6");
	for (int i = 0; i < 20; i++)	/* small, scattered */
		prof_file(p, 1, "/home/u/proj/src%d/f.cc", i);
}

TEST(the_directories_that_hold_the_working_set)
{
	struct prof p;
	struct hs_error err = { 0 };
	struct hs_tops t;
	struct hs_profile_reader *r;

	compile_profile(&p);
	r = prof_tops(&p, &t);
	CHECK_EQ_U64(t.pages, 1100);
	CHECK(hs_tops_cover(&t, HS_TOPS_COVER_SHARE, HS_TOPS_COVER_MAX, HS_TOPS_COVER_MIN, r,
			    &err) == 0);
	/*
	 * boost's subdirectories hold 1% each, under their share, and 80% of
	 * it in all: it stays whole; so does the standard library (its bits
	 * hold 80% of it). The three largest then hold 91.8%: the C library,
	 * its headers and /home/u/proj's files are left out.
	 */
	CHECK_EQ_U64(t.ncover, 3);
	CHECK_STR(t.cover[0].name, "/usr/include/boost");
	CHECK_EQ_U64(t.cover[0].pages, 500);
	CHECK_EQ_U64(t.cover[0].files, 50);
	CHECK_STR(t.cover[1].name, "/usr/lib/gcc/x86_64-linux-gnu/12");
	CHECK_EQ_U64(t.cover[1].pages, 360);
	CHECK_STR(t.cover[2].name, "/usr/include/c++/12");
	CHECK_EQ_U64(t.cover[2].pages, 150);
	CHECK_EQ_U64(t.cover_pages, 1010);
	/* what doctor tells for the one directory: the deepest with most of the pages */
	CHECK_STR(t.under.name, "/usr/include");

	/*
	 * at most 3: /usr/include has room for one subdirectory, Boost's 72%
	 * of it; /usr/lib for the compiler's 92%; then two hold 95.5%
	 */
	CHECK(hs_tops_cover(&t, 90, 3, HS_TOPS_COVER_MIN, r, &err) == 0);
	CHECK_EQ_U64(t.ncover, 2);
	CHECK_STR(t.cover[0].name, "/usr/include");
	CHECK_STR(t.cover[1].name, "/usr/lib/gcc/x86_64-linux-gnu/12");
	CHECK_EQ_U64(t.cover_pages, 1050);
	/* subdirectories of 5% at least: the same three, found another way */
	CHECK(hs_tops_cover(&t, 90, 8, 20, r, &err) == 0);
	CHECK_EQ_U64(t.ncover, 3);
	CHECK_EQ_U64(t.cover_pages, 1010);
	/* half will do: Boost and the compiler */
	CHECK(hs_tops_cover(&t, 50, 8, HS_TOPS_COVER_MIN, r, &err) == 0);
	CHECK_EQ_U64(t.ncover, 2);
	CHECK_STR(t.cover[0].name, "/usr/include/boost");
	CHECK_STR(t.cover[1].name, "/usr/lib/gcc/x86_64-linux-gnu/12");
	CHECK_EQ_U64(t.cover_pages, 860);
	/* all of it: only what loses nothing, the six */
	CHECK(hs_tops_cover(&t, 100, 8, HS_TOPS_COVER_MIN, r, &err) == 0);
	CHECK_EQ_U64(t.ncover, 6);
	CHECK_EQ_U64(t.cover_pages, 1100);
	CHECK(cover_at(&t, "/usr/include/x86_64-linux-gnu/bits") >= 0);
	CHECK(cover_at(&t, "/usr/lib/x86_64-linux-gnu") >= 0 && cover_at(&t, "/home/u/proj") >= 0);
	prof_done(&p, &t, r);
}

TEST(a_chain_gives_way_to_its_deepest_directory_and_files_at_the_top_stay_there)
{
	struct prof p;
	struct hs_error err = { 0 };
	struct hs_tops t;
	struct hs_profile_reader *r;

	prof_start(&p);
	prof_file(&p, 7, "/srv/db/data/base/1/a");
	prof_file(&p, 3, "/srv/db/data/base/1/b");
	r = prof_tops(&p, &t);
	CHECK(hs_tops_cover(&t, 90, 8, 100, r, &err) == 0);
	CHECK_EQ_U64(t.ncover, 1);
	CHECK_STR(t.cover[0].name, "/srv/db/data/base/1");
	CHECK_EQ_U64(t.cover[0].pages, 10);
	CHECK_STR(t.under.name, "/srv/db/data/base/1");
	CHECK_EQ_U64(t.ndirs, 1);	/* every other is a chain to it */
	prof_done(&p, &t, r);

	prof_start(&p);
	prof_file(&p, 9, "/vmlinuz");
	prof_file(&p, 1, "/boot/x");
	r = prof_tops(&p, &t);
	CHECK(hs_tops_cover(&t, 90, 8, 100, r, &err) == 0);
	CHECK_EQ_U64(t.ncover, 1);
	CHECK_STR(t.cover[0].name, "/");
	CHECK_STR(t.under.name, "/");
	prof_done(&p, &t, r);

	/* files directly in a directory that also has a large subdirectory */
	prof_start(&p);
	prof_file(&p, 5, "/srv/a");
	prof_file(&p, 5, "/srv/b");
	prof_file(&p, 90, "/srv/data/c");
	r = prof_tops(&p, &t);
	CHECK(hs_tops_cover(&t, 90, 8, 100, r, &err) == 0);
	CHECK_EQ_U64(t.ncover, 1);
	CHECK_STR(t.cover[0].name, "/srv/data");
	CHECK_EQ_U64(t.cover_pages, 90);
	CHECK(hs_tops_cover(&t, 91, 8, 100, r, &err) == 0);
	CHECK_STR(t.cover[0].name, "/srv");
	prof_done(&p, &t, r);
}

TEST(cover_needs_finish_and_pages)
{
	struct prof p;
	struct hs_error err = { 0 };
	struct hs_tops t = { 0 };
	struct hs_profile_reader *r;

	CHECK(hs_tops_cover(&t, 90, 8, 100, NULL, &err) == -EINVAL);
	prof_start(&p);
	prof_file(&p, 0, "/a/b");
	r = prof_tops(&p, &t);
	CHECK(hs_tops_cover(&t, 90, 8, 100, r, &err) == 0);
	CHECK_EQ_U64(t.ncover, 0);
	prof_done(&p, &t, r);
}

/*
 * More directories than the table holds: 40000 directories of one page
 * each, a deep tree of 12 large ones among them, and one that appears
 * only at the end. The large ones and their ancestors are found with
 * exact figures, as the brute count below has them.
 */
TEST(past_the_table_the_large_directories_are_found_with_exact_figures)
{
	struct prof p;
	struct hs_error err = { 0 };
	struct hs_tops t;
	struct hs_profile_reader *r;
	int k;

	prof_start(&p);
	for (int i = 0; i < 40000; i++) {
		prof_file(&p, 1, "/l/%d/f", i);
		if (i % 30 == 0)
			prof_file(&p, 10 + (unsigned)(i / 30) % 12, "/h/%d/s/f%d", (i / 30) % 12, i);
	}
	for (int i = 0; i < 50; i++)
		prof_file(&p, 100, "/late/deep/f%d", i);
	r = prof_tops(&p, &t);
	CHECK(t.full);
	CHECK_EQ_U64(t.dirs_counted, HS_TOPS_DIR_MAX);
	/* /l: 40000 pages; /h: 1334 files of 10 to 21 pages; /late/deep: 5000 */
	CHECK_STR(t.dir[0].name, "/");
	CHECK_STR(t.dir[1].name, "/l");
	CHECK_EQ_U64(t.dir[1].pages, 40000);
	CHECK_EQ_U64(t.dir[1].files, 40000);
	CHECK((k = dir_at(&t, "/late/deep")) >= 0);
	CHECK(k >= 0 && t.dir[k].pages == 5000 && t.dir[k].files == 50);
	CHECK(dir_at(&t, "/late") < 0);
	{
		uint64_t h = 0, h11 = 0, n11 = 0;

		for (int i = 0; i < 40000; i += 30) {
			h += 10 + (unsigned)(i / 30) % 12;
			if ((i / 30) % 12 == 11)
				h11 += 21, n11++;
		}
		CHECK((k = dir_at(&t, "/h")) >= 0);
		CHECK(k >= 0 && t.dir[k].pages == h);
		CHECK((k = dir_at(&t, "/h/11/s")) >= 0 || (k = dir_at(&t, "/h/11")) < 0);
		CHECK(dir_at(&t, "/h/11") < 0);	/* a chain to /h/11/s */
		CHECK(k >= 0 && t.dir[k].pages == h11 && t.dir[k].files == n11);
		CHECK_EQ_U64(t.pages, 40000 + h + 5000);
	}
	CHECK_STR(t.under.name, "/l");
	CHECK(hs_tops_cover(&t, 90, 8, 100, r, &err) == 0);
	/*
	 * /l's 40000 subdirectories are of a page each: it stays whole; /h's
	 * 12 do not fit in 8; /l and /h hold 92%, without /late/deep
	 */
	CHECK_EQ_U64(t.ncover, 2);
	CHECK(cover_at(&t, "/l") >= 0 && cover_at(&t, "/h") >= 0);
	prof_done(&p, &t, r);
}

/* show's summary: files by ranges and flags, outputs and trace lines, pages as tops counts them. */
static void the_summary_counts_every_kind_of_item(void)
{
	static const char text[] =
		"hotset-profile 1\npage-size 4096\nsource snapshot\n"
		"f 1:2 1 0 1.000000000 r 0-3 /a/x\n"
		"f 1:2 2 0 1.000000000 rm 0-1,5-6,9 /a/y\n"
		"f 1:2 3 0 1.000000000 xw - /b/z\n"
		"o /out\n"
		"t 0 0-3\n"
		"t 1 0-1\n"
		"t 0 2\n"
		"end 3 1 3\n";
	struct hs_profile_reader *r = NULL;
	struct hs_profile_item it;
	struct hs_error err = { 0 };
	struct hs_summary s = { 0 };
	int rc;

	CHECK(hs_profile_open_buffer(text, sizeof(text) - 1, &r, &err) == 0);
	if (!r)
		return;
	while ((rc = hs_profile_next(r, &it, &err)) > 0)
		CHECK(hs_summary_add(&s, &it) == 0);
	CHECK(rc == 0);
	CHECK(hs_summary_finish(&s, r, &err) == 0);
	CHECK_EQ_U64(s.files, 3);
	CHECK_EQ_U64(s.outputs, 1);
	CHECK_EQ_U64(s.trace_lines, 3);
	CHECK_EQ_U64(s.ranges, 4);
	CHECK_EQ_U64(s.one_range, 1);
	CHECK_EQ_U64(s.several, 1);
	CHECK_EQ_U64(s.no_pages, 1);
	CHECK_EQ_U64(s.max_ranges, 3);
	CHECK_EQ_U64(s.used[0], 2);	/* r */
	CHECK_EQ_U64(s.used[1], 1);	/* m */
	CHECK_EQ_U64(s.used[2], 1);	/* x */
	CHECK_EQ_U64(s.used[3], 1);	/* w */
	CHECK_EQ_U64(s.used[4], 0);	/* d */
	CHECK_EQ_U64(s.tops.pages, 9);
	CHECK_STR(s.tops.under.name, "/a");
	CHECK_EQ_U64(s.tops.ncover, 1);
	hs_profile_close(r);
	hs_summary_release(&s);
}

int main(void)
{
	return RUN_TESTS(a_directory_counts_every_file_under_it,
			 most_of_the_pages_is_under_the_deepest_directory_that_holds_more_than_half,
			 the_directories_that_hold_the_working_set,
			 a_chain_gives_way_to_its_deepest_directory_and_files_at_the_top_stay_there,
			 cover_needs_finish_and_pages,
			 past_the_table_the_large_directories_are_found_with_exact_figures,
			 the_summary_counts_every_kind_of_item);
}
