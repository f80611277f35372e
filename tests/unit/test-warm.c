/*
 * test-warm.c - the warm session on real files: what it plans (holes,
 * ranges, budget), in which order it reads, and what it does when a file
 * shrinks or vanishes between planning and reading (the trace hook runs
 * just before each read, which makes those races deterministic).
 *
 * Files live in a scratch directory under /var/tmp (a real filesystem, so
 * that eviction, FIEMAP and SEEK_DATA behave as in production).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache/residency.h"
#include "cache/warm.h"
#include "scratch.h"
#include "unit.h"

/* A file of npages pages (last one partial if tail) of non-zero bytes, evicted. */
static void make_file(const char *name, size_t npages, size_t tail, char *path, size_t cap)
{
	const size_t ps = hs_page_size();
	size_t size = npages * ps + tail;
	char *buf = malloc(size + 1);
	int fd;

	snprintf(path, cap, "%s/%s", scratch, name);
	for (size_t i = 0; i < size; i++)
		buf[i] = (char)('a' + i % 23);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	CHECK(write(fd, buf, size) == (ssize_t)size);
	fdatasync(fd);
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	close(fd);
	free(buf);
}

static uint64_t resident(const char *path)
{
	struct hs_cache_counts c = { 0 };
	struct stat st;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || fstat(fd, &st) < 0)
		return UINT64_MAX;
	if (hs_residency_count(fd, (uint64_t)st.st_size, NULL, 0, &c, NULL) < 0)
		c.cached = UINT64_MAX;
	close(fd);
	return c.cached;
}

/*
 * Run a test body, and once more if it failed: residency can drop under us
 * for reasons that are not ours (a DAMON scheme that pages out idle cache on
 * the test machines, other jobs dropping caches). A page the session left
 * out fails both attempts.
 */
static void retry_once(void (*body)(void))
{
	body();
	if (unit_failed) {
		printf("#   first attempt failed, retrying once (evicted meanwhile?)\n");
		unit_failed = 0;
		body();
	}
}

/* Hand path (with ranges, or NULL for the whole file) to the session. */
static int add_entry(struct hs_warm *w, const char *path, const struct hs_range *r, size_t n,
		     const struct hs_profile_file *entry)
{
	struct hs_target t = { 0 };
	struct stat st;
	int fd = open(path, O_RDONLY), rc;

	CHECK(fd >= 0);
	CHECK(fstat(fd, &st) == 0);
	t.path = path;
	t.path_len = strlen(path);
	t.fd = fd;
	t.st = &st;
	t.ranges = r;
	t.nranges = n;
	t.pages = (uint64_t)(st.st_size + hs_page_size() - 1) / hs_page_size();
	t.entry = entry;
	rc = hs_warm_add(w, &t);
	close(fd);
	return rc;
}

static int add(struct hs_warm *w, const char *path, const struct hs_range *r, size_t n)
{
	return add_entry(w, path, r, n, NULL);
}

/* What the callbacks saw. */
struct seen {
	unsigned warnings;
	char last_warning[256];
	unsigned reads;
	uint64_t off[64], len[64], phys[64];
	char path[64][128];
	/* on the first read, do this to the file being read */
	enum { NOTHING, TRUNCATE, UNLINK } action;
	bool acted;
	/* the file callback: what it was told, by file */
	unsigned nfiles;
	struct hs_warm_file file[8];
	char file_path[8][128];
};

static void on_warn(void *ctx, const char *path, int errnum, const char *what)
{
	struct seen *s = ctx;

	__atomic_fetch_add(&s->warnings, 1, __ATOMIC_RELAXED);
	snprintf(s->last_warning, sizeof(s->last_warning), "%s: %s", path, what);
}

static void on_read(void *ctx, const char *path, uint64_t off, uint64_t len, uint64_t phys)
{
	struct seen *s = ctx;
	unsigned i = __atomic_fetch_add(&s->reads, 1, __ATOMIC_RELAXED);

	if (i < 64) {
		s->off[i] = off;
		s->len[i] = len;
		s->phys[i] = phys;
		snprintf(s->path[i], sizeof(s->path[i]), "%s", path);
	}
	if (s->action != NOTHING && !s->acted) {
		s->acted = true;
		if (s->action == TRUNCATE)
			CHECK(truncate(path, 0) == 0);
		else
			CHECK(unlink(path) == 0);
	}
}

static void on_file(void *ctx, const struct hs_warm_file *f)
{
	struct seen *s = ctx;
	unsigned i = __atomic_fetch_add(&s->nfiles, 1, __ATOMIC_RELAXED);

	if (i < 8) {
		s->file[i] = *f;
		snprintf(s->file_path[i], sizeof(s->file_path[i]), "%.*s", (int)f->path_len, f->path);
		s->file[i].path = s->file_path[i];
	}
}

/* The file callback's row for path, or NULL if it had none (or two). */
static const struct hs_warm_file *file_seen(const struct seen *s, const char *path)
{
	const struct hs_warm_file *found = NULL;

	for (unsigned i = 0; i < s->nfiles && i < 8; i++) {
		if (strcmp(s->file_path[i], path))
			continue;
		if (found)
			return NULL;
		found = &s->file[i];
	}
	return found;
}

static struct hs_warm *start(struct seen *s, enum hs_warm_method m, enum hs_warm_order o,
			     uint64_t budget)
{
	struct hs_warm_opts opts = { .method = m, .order = o, .threads = 1, .budget = budget,
				     .warn = on_warn, .trace = on_read, .ctx = s };
	struct hs_warm *w = NULL;

	CHECK(hs_warm_new(&opts, &w) == 0);
	return w;
}

static void warms_whole_files_with_every_method_body(void)
{
	static const enum hs_warm_method methods[] = {
		HS_WARM_AUTO, HS_WARM_WILLNEED, HS_WARM_PREAD, HS_WARM_URING,
	};
	char a[128], b[128], c[128];

	scratch_dir();
	for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++) {
		struct seen s = { 0 };
		struct hs_warm_stats st;
		struct hs_warm *w;

		if (methods[i] == HS_WARM_URING && !hs_warm_have_uring())
			continue;
		make_file("a", 3, 100, a, sizeof(a));	/* small, partial last page */
		make_file("b", 600, 0, b, sizeof(b));	/* large: the bulk lane */
		make_file("c", 0, 0, c, sizeof(c));	/* empty */
		w = start(&s, methods[i], HS_ORDER_GIVEN, 0);
		CHECK(add(w, a, NULL, 0) == 0);
		CHECK(add(w, b, NULL, 0) == 0);
		CHECK(add(w, c, NULL, 0) == 0);
		CHECK(hs_warm_finish(w, &st) == 0);
		CHECK_EQ_U64(st.files, 3);
		CHECK_EQ_U64(st.pages, 604);
		CHECK_EQ_U64(st.skipped_files, 0);
		CHECK_EQ_U64(s.warnings, 0);
		if (hs_have_cachestat()) {
			CHECK_EQ_U64(st.read_pages, 604);
			CHECK_EQ_U64(st.not_resident_pages, 0);
			CHECK_EQ_U64(resident(a), 4);
			CHECK_EQ_U64(resident(b), 600);
		}
		hs_warm_free(w);
	}
	scratch_done();
}

TEST(warms_whole_files_with_every_method) { retry_once(warms_whole_files_with_every_method_body); }

static void reads_only_the_ranges_asked_for_body(void)
{
	const struct hs_range r[] = { { 40, 40 }, { 3, 3 }, { 13, 14 }, { 10, 12 } };
	struct seen s = { 0 };
	struct hs_warm_stats st;
	struct hs_warm *w;
	char a[128];

	if (!hs_have_cachestat())
		SKIP("no cachestat");
	scratch_dir();
	make_file("a", 64, 0, a, sizeof(a));
	w = start(&s, HS_WARM_AUTO, HS_ORDER_GIVEN, 0);
	CHECK(add(w, a, r, 4) == 0);
	CHECK(hs_warm_finish(w, &st) == 0);
	CHECK_EQ_U64(st.pages, 7);
	CHECK_EQ_U64(st.read_pages, 7);
	CHECK_EQ_U64(resident(a), 7);	/* no readahead around them */
	/* a file's ranges in page order, joined where they touch */
	CHECK_EQ_U64(s.reads, 3);
	CHECK_EQ_U64(s.off[0], 3 * hs_page_size());
	CHECK_EQ_U64(s.len[0], 1 * hs_page_size());
	CHECK_EQ_U64(s.off[1], 10 * hs_page_size());
	CHECK_EQ_U64(s.len[1], 5 * hs_page_size());
	CHECK_EQ_U64(s.off[2], 40 * hs_page_size());
	hs_warm_free(w);
	scratch_done();
}

TEST(reads_only_the_ranges_asked_for) { retry_once(reads_only_the_ranges_asked_for_body); }

static void skips_resident_pages_and_holes_body(void)
{
	const size_t ps = hs_page_size();
	struct seen s = { 0 };
	struct hs_warm_stats st;
	struct hs_warm *w;
	char a[128], sparse[128], byte = 'x';
	int fd;

	if (!hs_have_cachestat())
		SKIP("no cachestat");
	scratch_dir();
	make_file("a", 8, 0, a, sizeof(a));
	fd = open(a, O_RDONLY);
	CHECK(pread(fd, &byte, 1, 0) == 1);	/* page 0 (and readahead) resident */
	close(fd);
	/* 1 GiB with one page of data in the middle */
	snprintf(sparse, sizeof(sparse), "%s/sparse", scratch);
	fd = open(sparse, O_RDWR | O_CREAT | O_TRUNC, 0644);
	CHECK(ftruncate(fd, 1 << 30) == 0);
	CHECK(pwrite(fd, "data", 4, 512 << 20) == 4);
	fdatasync(fd);
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	close(fd);

	w = start(&s, HS_WARM_AUTO, HS_ORDER_GIVEN, 0);
	CHECK(add(w, a, NULL, 0) == 0);
	CHECK(add(w, sparse, NULL, 0) == 0);
	CHECK(hs_warm_finish(w, &st) == 0);
	CHECK_EQ_U64(st.pages, 8 + 1);
	CHECK_EQ_U64(st.hole_pages, ((1u << 30) / ps) - 1);
	CHECK(st.resident_pages >= 1);
	CHECK_EQ_U64(st.read_pages + st.resident_pages, 9);
	CHECK_EQ_U64(resident(sparse), 1);
	for (unsigned i = 0; i < s.reads && i < 64; i++)
		if (!strcmp(s.path[i], sparse))
			CHECK(s.off[i] == (512u << 20) && s.len[i] == ps);
	hs_warm_free(w);
	scratch_done();
}

TEST(skips_resident_pages_and_holes) { retry_once(skips_resident_pages_and_holes_body); }

/* The budget counts pages that would be newly read, in order. */
static void budget_stops_inside_the_right_file_body(void)
{
	const size_t ps = hs_page_size();
	struct seen s = { 0 };
	struct hs_warm_stats st;
	struct hs_warm *w;
	char a[128], b[128], c[128], byte;
	int fd, rc;

	if (!hs_have_cachestat())
		SKIP("no cachestat");
	scratch_dir();
	make_file("a", 64, 0, a, sizeof(a));
	make_file("b", 64, 0, b, sizeof(b));
	make_file("c", 64, 0, c, sizeof(c));
	/* pages 0-15 of b are resident already: they cost nothing */
	fd = open(b, O_RDONLY);
	posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
	for (int p = 0; p < 16; p++)
		CHECK(pread(fd, &byte, 1, (off_t)(p * ps)) == 1);
	close(fd);
	CHECK_EQ_U64(resident(b), 16);

	w = start(&s, HS_WARM_AUTO, HS_ORDER_GIVEN, 96 * ps);	/* 64 of a, 32 of b */
	CHECK(add(w, a, NULL, 0) == 0);
	rc = add(w, b, NULL, 0);
	CHECK(rc == HS_WARM_STOP);
	CHECK(add(w, c, NULL, 0) == HS_WARM_STOP);	/* nothing more */
	CHECK(hs_warm_finish(w, &st) == 0);
	CHECK(st.budget_reached);
	CHECK_STR(st.stop_path, b);
	CHECK_EQ_U64(st.stop_page, 48);
	CHECK_EQ_U64(resident(a), 64);
	CHECK_EQ_U64(resident(b), 48);
	CHECK_EQ_U64(resident(c), 0);
	CHECK_EQ_U64(st.read_pages, 96);
	hs_warm_free(w);
	scratch_done();
}

TEST(budget_stops_inside_the_right_file) { retry_once(budget_stops_inside_the_right_file_body); }

TEST(a_file_that_shrinks_before_its_read_is_reported)
{
	static const enum hs_warm_method methods[] = {
		HS_WARM_AUTO, HS_WARM_WILLNEED, HS_WARM_PREAD, HS_WARM_URING,
	};
	char a[128];

	scratch_dir();
	for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++) {
		struct seen s = { .action = TRUNCATE };
		struct hs_warm_stats st;
		struct hs_warm *w;

		if (methods[i] == HS_WARM_URING && !hs_warm_have_uring())
			continue;
		make_file("a", 3000, 0, a, sizeof(a));
		w = start(&s, methods[i], HS_ORDER_GIVEN, 0);
		CHECK(add(w, a, NULL, 0) == 0);
		CHECK(hs_warm_finish(w, &st) == 0);
		CHECK(s.acted);
		CHECK_EQ_U64(st.skipped_files, 1);
		CHECK_EQ_U64(s.warnings, 1);
		CHECK(strstr(s.last_warning, "shrank") != NULL);
		/* pages past the new end are gone, not missing */
		CHECK_EQ_U64(st.not_resident_pages, 0);
		hs_warm_free(w);
	}
	scratch_done();
}

/*
 * A row per file once its reads are done: one for each file, that adds up
 * to the totals; a file deleted meanwhile has no count after the reads.
 */
static void tells_each_file_once_done_body(void)
{
	struct seen s = { .action = UNLINK };
	struct hs_warm_opts opts = { .order = HS_ORDER_GIVEN, .threads = 1, .warn = on_warn,
				     .trace = on_read, .file = on_file, .ctx = &s };
	const struct hs_range half = { 0, 4 };
	const struct hs_warm_file *f;
	struct hs_warm_stats st;
	struct hs_warm *w = NULL;
	char hot[128], gone[128], cold[128], buf[65536];
	int fd;

	scratch_dir();
	make_file("hot", 10, 0, hot, sizeof(hot));
	make_file("gone", 20, 0, gone, sizeof(gone));
	make_file("cold", 30, 0, cold, sizeof(cold));
	CHECK((fd = open(hot, O_RDONLY)) >= 0);
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	close(fd);
	CHECK(hs_warm_new(&opts, &w) == 0);
	/* fully resident: nothing read, so the first read (unlinked) is gone's */
	CHECK(add(w, hot, &half, 1) == 0);
	CHECK(add(w, gone, NULL, 0) == 0);
	CHECK(add(w, cold, NULL, 0) == 0);
	CHECK(hs_warm_finish(w, &st) == 0);
	CHECK_EQ_U64(s.nfiles, 3);
	if ((f = file_seen(&s, hot)) && hs_have_cachestat() && resident(hot) >= 5) {
		CHECK(f->known_before && f->known_after);
		CHECK_EQ_U64(f->pages, 5);
		CHECK_EQ_U64(f->resident_pages, 5);
		CHECK_EQ_U64(f->requested_pages, 0);
		CHECK_EQ_U64(f->read_pages, 0);
	}
	CHECK((f = file_seen(&s, gone)) != NULL);
	if (f) {
		CHECK(f->known_before && !f->known_after);
		CHECK_EQ_U64(f->pages, 20);
		CHECK_EQ_U64(f->requested_pages, 20);
	}
	CHECK((f = file_seen(&s, cold)) != NULL);
	if (f && hs_have_cachestat()) {
		CHECK(f->known_before && f->known_after);
		CHECK_EQ_U64(f->pages, 30);
		CHECK_EQ_U64(f->resident_pages, 0);
		CHECK_EQ_U64(f->read_pages, 30);
		CHECK_EQ_U64(f->not_resident_pages, 0);
	}
	/* the rows add up to the totals */
	uint64_t pages = 0, resident_before = 0, requested = 0, read = 0, missing = 0;

	for (unsigned i = 0; i < s.nfiles && i < 8; i++) {
		pages += s.file[i].pages;
		resident_before += s.file[i].known_before ? s.file[i].resident_pages : 0;
		requested += s.file[i].requested_pages;
		read += s.file[i].known_after ? s.file[i].read_pages : 0;
		missing += s.file[i].known_after ? s.file[i].not_resident_pages : 0;
	}
	CHECK_EQ_U64(pages, st.pages);
	CHECK_EQ_U64(resident_before, st.resident_pages);
	CHECK_EQ_U64(requested, st.requested_pages);
	CHECK_EQ_U64(read, st.read_pages);
	CHECK_EQ_U64(missing, st.not_resident_pages);
	hs_warm_free(w);
	scratch_done();
}

TEST(tells_each_file_once_done) { retry_once(tells_each_file_once_done_body); }

TEST(a_file_deleted_before_its_read_is_reported)
{
	struct seen s = { .action = UNLINK };
	struct hs_warm_stats st;
	struct hs_warm *w;
	char a[128];

	scratch_dir();
	make_file("a", 100, 0, a, sizeof(a));
	w = start(&s, HS_WARM_AUTO, HS_ORDER_GIVEN, 0);
	CHECK(add(w, a, NULL, 0) == 0);
	CHECK(hs_warm_finish(w, &st) == 0);
	CHECK(s.acted);
	CHECK_EQ_U64(st.skipped_files, 1);
	CHECK(strstr(s.last_warning, "deleted or replaced") != NULL);
	hs_warm_free(w);
	scratch_done();
}

/*
 * A profile's pages past the end of a file that shrank since are reported;
 * pages past the size the profile recorded never existed: not a word.
 */
static void ranges_past_the_end_are_reported_body(void)
{
	const struct hs_range r[] = { { 0, 3 }, { 60, 70 } };
	struct hs_profile_file entry = { .id.size = 71 * hs_page_size() };
	struct seen s = { 0 };
	struct hs_warm_stats st;
	struct hs_warm *w;
	char a[128];

	scratch_dir();
	make_file("a", 64, 0, a, sizeof(a));
	w = start(&s, HS_WARM_AUTO, HS_ORDER_GIVEN, 0);
	CHECK(add_entry(w, a, r, 2, &entry) == 0);
	entry.id.size = 64 * hs_page_size();	/* as now: page 64 on never were */
	CHECK(add_entry(w, a, r, 2, &entry) == 0);
	CHECK(hs_warm_finish(w, &st) == 0);
	CHECK_EQ_U64(st.pages, 2 * (4 + 4));
	CHECK_EQ_U64(st.skipped_files, 1);
	CHECK_EQ_U64(s.warnings, 1);
	CHECK(strstr(s.last_warning, "shrank since the profile was made: 7 of its pages") != NULL);
	if (hs_have_cachestat())
		CHECK_EQ_U64(resident(a), 8);
	hs_warm_free(w);
	scratch_done();
}

TEST(ranges_past_the_end_are_reported) { retry_once(ranges_past_the_end_are_reported_body); }

TEST(physical_order_sorts_by_address)
{
	struct seen s = { 0 };
	struct hs_warm_stats st;
	struct hs_warm *w;
	char p[8][128];
	uint64_t last = 0;
	unsigned known = 0;

	scratch_dir();
	/* written in one order, added in the reverse one */
	for (int i = 0; i < 8; i++) {
		char name[8];

		snprintf(name, sizeof(name), "f%d", i);
		make_file(name, 4, 0, p[i], sizeof(p[i]));
	}
	w = start(&s, HS_WARM_PREAD, HS_ORDER_PHYSICAL, 0);
	for (int i = 7; i >= 0; i--)
		CHECK(add(w, p[i], NULL, 0) == 0);
	CHECK(hs_warm_finish(w, &st) == 0);
	CHECK_EQ_U64(s.reads, 8);
	for (unsigned i = 0; i < s.reads; i++) {
		if (s.phys[i] == UINT64_MAX)
			continue;	/* no FIEMAP here */
		CHECK(s.phys[i] >= last);
		last = s.phys[i];
		known++;
	}
	if (!known)
		SKIP("FIEMAP gives no addresses on this filesystem");
	hs_warm_free(w);
	scratch_done();
}

/* Add file a n times, each time dropped from the cache first; all must be warmed. */
static void warm_uncached_n(struct hs_warm *w, struct seen *s, const char *a, int n)
{
	struct hs_warm_stats st;

	for (int i = 0; i < n; i++) {
		int fd = open(a, O_RDONLY);

		CHECK(fd >= 0);
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);	/* so that each needs a read */
		close(fd);
		CHECK(add(w, a, NULL, 0) == 0);
	}
	CHECK(hs_warm_finish(w, &st) == 0);
	CHECK_EQ_U64(st.files, (uint64_t)n);
	CHECK_EQ_U64(s->warnings, 0);
	CHECK_EQ_U64(st.skipped_files, 0);
	hs_warm_free(w);
}

/*
 * Files stay open only while their reads are in flight, and no more of them
 * than RLIMIT_NOFILE allows: with a limit of 64, thousands of targets that
 * all need reading still go through without "too many open files".
 */
TEST(open_files_are_bounded_by_the_limit)
{
	struct rlimit rl = { 64, 64 };
	struct seen s = { 0 };
	struct hs_warm *w;
	char a[128];

	scratch_dir();
	make_file("a", 1, 0, a, sizeof(a));
	CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0);
	w = start(&s, HS_WARM_WILLNEED, HS_ORDER_GIVEN, 0);
	warm_uncached_n(w, &s, a, 3000);
	scratch_done();
}

/*
 * Descriptors can run out before the session's own bound (the caller holds
 * more than when the session started, as a tree walk does): each file then
 * waits for another to finish, and none is skipped.
 */
TEST(running_out_of_descriptors_waits_instead_of_skipping)
{
	struct rlimit rl = { 24, 24 };
	struct seen s = { 0 };
	struct hs_warm *w;
	int held[32], nheld = 0;
	char a[128];

	scratch_dir();
	make_file("a", 1, 0, a, sizeof(a));
	CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0);
	w = start(&s, HS_WARM_WILLNEED, HS_ORDER_GIVEN, 0);
	/* all but four of the descriptors left are taken after the start */
	while (nheld < 32 && (held[nheld] = open(a, O_RDONLY)) >= 0)
		nheld++;
	CHECK(nheld > 4);
	for (int i = 0; i < 4; i++)
		close(held[--nheld]);
	warm_uncached_n(w, &s, a, 300);
	while (nheld)
		close(held[--nheld]);
	scratch_done();
}

/*
 * Without cachestat (kernels before 6.5: Debian 12's 6.1), mincore tells
 * what is resident: a half-resident file has its resident pages counted as
 * such and only the others read. HOTSET_NO_CACHESTAT takes cachestat away
 * (residency.h).
 */
static void warms_with_mincore_without_cachestat_body(void)
{
	const size_t ps = hs_page_size();
	struct seen s = { 0 };
	struct hs_warm_stats st;
	struct hs_warm *w;
	char a[128], byte;
	int fd;

	CHECK(setenv("HOTSET_NO_CACHESTAT", "1", 1) == 0);
	CHECK(!hs_have_cachestat());
	scratch_dir();
	make_file("a", 40, 0, a, sizeof(a));
	fd = open(a, O_RDONLY);
	posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
	for (int p = 0; p < 10; p++)
		CHECK(pread(fd, &byte, 1, (off_t)(p * ps)) == 1);
	close(fd);
	CHECK_EQ_U64(resident(a), 10);

	w = start(&s, HS_WARM_AUTO, HS_ORDER_GIVEN, 0);
	CHECK(add(w, a, NULL, 0) == 0);
	CHECK(hs_warm_finish(w, &st) == 0);
	CHECK_EQ_U64(st.unknown_files, 0);
	CHECK_EQ_U64(st.resident_pages, 10);
	CHECK_EQ_U64(st.read_pages, 30);
	CHECK_EQ_U64(st.not_resident_pages, 0);
	CHECK_EQ_U64(resident(a), 40);
	hs_warm_free(w);
	scratch_done();
}

TEST(warms_with_mincore_without_cachestat)
{
	retry_once(warms_with_mincore_without_cachestat_body);
}

int main(void)
{
	return RUN_TESTS(warms_whole_files_with_every_method, reads_only_the_ranges_asked_for,
			 skips_resident_pages_and_holes, budget_stops_inside_the_right_file,
			 a_file_that_shrinks_before_its_read_is_reported,
			 a_file_deleted_before_its_read_is_reported, tells_each_file_once_done,
			 ranges_past_the_end_are_reported, physical_order_sorts_by_address,
			 open_files_are_bounded_by_the_limit,
			 running_out_of_descriptors_waits_instead_of_skipping,
			 warms_with_mincore_without_cachestat);
}
