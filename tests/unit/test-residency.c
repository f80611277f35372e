/*
 * test-residency.c - residency counts and runs are exact, and unknown is
 * never a number; eviction drops what it can and says what stayed.
 *
 * Exact page counts need readahead off: pages are read one at a time with
 * POSIX_FADV_RANDOM and pread, and every answer is checked against
 * mincore(2) on our own mapping (truthful for root and for owners).
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "cache/evict.h"
#include "cache/residency.h"
#include "scratch.h"
#include "unit.h"

#define NOBODY 65534

static uint64_t ps;

/* A file of size bytes, written, synced and dropped from the cache. */
static void make_cold_file(const char *path, uint64_t size)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	char buf[65536];

	if (fd < 0) {
		perror(path);
		_exit(1);
	}
	memset(buf, 'h', sizeof(buf));
	for (uint64_t off = 0; off < size;) {
		size_t n = size - off < sizeof(buf) ? (size_t)(size - off) : sizeof(buf);
		ssize_t w = pwrite(fd, buf, n, (off_t)off);

		if (w <= 0) {
			perror("pwrite");
			_exit(1);
		}
		off += (uint64_t)w;
	}
	fsync(fd);
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	close(fd);
}

/* Bring exactly pages first..last into the cache: no readahead. */
static void read_pages(const char *path, uint64_t first, uint64_t last)
{
	int fd = open(path, O_RDONLY);
	char c;

	posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
	for (uint64_t p = first; p <= last; p++)
		if (pread(fd, &c, 1, (off_t)(p * ps)) < 0)
			perror("pread");
	close(fd);
}

/* mincore over our own mapping: resident[i] for each page; returns count. */
static uint64_t mincore_map(int fd, uint64_t size, unsigned char *resident)
{
	uint64_t n = (size + ps - 1) / ps, count = 0;
	void *map;

	if (!n)
		return 0;
	map = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED || mincore(map, size, resident) < 0) {
		perror("mincore");
		_exit(1);
	}
	munmap(map, size);
	for (uint64_t i = 0; i < n; i++) {
		resident[i] &= 1;
		count += resident[i];
	}
	return count;
}

static int open_ro(const char *path)
{
	int fd = open(path, O_RDONLY);

	if (fd < 0) {
		perror(path);
		_exit(1);
	}
	return fd;
}

/*
 * The page cache is shared with the whole machine: memory pressure, or a
 * drop_caches elsewhere, can take pages a test has just read. A test that
 * checks exact residency therefore runs again (from scratch, in a fresh
 * process) up to three times before it fails. Residency code has no
 * randomness of its own, so a bug fails all three.
 */
static void with_retries(void (*body)(void), const char *name)
{
	for (int attempt = 1; attempt <= 3; attempt++) {
		int status = 0;
		pid_t pid;

		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			body();
			fflush(stdout);
			_exit(unit_failed);
		}
		if (pid < 0 || waitpid(pid, &status, 0) != pid)
			break;
		if (WIFEXITED(status) && WEXITSTATUS(status) == UNIT_SKIP_STATUS)
			_exit(UNIT_SKIP_STATUS);
		if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
			return;
		printf("#   %s: attempt %d failed\n", name, attempt);
	}
	unit_failed = 1;
}

#define TEST_RETRIED(name)                                                             \
	static void name##_body(void);                                                 \
	TEST(name) { with_retries(name##_body, #name); }                               \
	static void name##_body(void)

/* ---- counting ---------------------------------------------------------------- */

TEST_RETRIED(counts_exact_pages)
{
	const uint64_t npages = 256;
	unsigned char res[256];
	struct hs_cache_counts c = { 0 };
	enum hs_residency_method m = 0;
	uint64_t want = 0;
	const char *p;
	int fd;

	scratch_dir();
	p = path_in("f");
	make_cold_file(p, npages * ps);
	fd = open_ro(p);
	if (mincore_map(fd, npages * ps, res) != 0) {
		scratch_done();
		SKIP("the file stayed cached after DONTNEED (not a real filesystem?)");
	}
	/* a scattered pattern: singles, runs, both ends */
	srand(7);
	for (uint64_t i = 0; i < npages; i++) {
		if (i == 0 || i == npages - 1 || (i >= 100 && i < 140) || rand() % 5 == 0) {
			read_pages(p, i, i);
			want++;
		}
	}
	CHECK(hs_residency_count(fd, npages * ps, NULL, 0, &c, &m) == 0);
	CHECK_EQ_U64(c.pages, npages);
	CHECK_EQ_U64(c.cached, want);
	CHECK_EQ_U64(mincore_map(fd, npages * ps, res), want);
	CHECK(m == (hs_have_cachestat() ? HS_RES_CACHESTAT : HS_RES_MINCORE));
	if (m == HS_RES_CACHESTAT)
		CHECK_EQ_U64(c.dirty, 0);
	/* per range: each count agrees with mincore over that range */
	for (uint64_t a = 0; a < npages; a += 17) {
		for (uint64_t b = a; b < npages; b += 31) {
			struct hs_range r = { a, b };
			struct hs_cache_counts cr = { 0 };
			uint64_t exp = 0;

			for (uint64_t i = a; i <= b; i++)
				exp += res[i];
			CHECK(hs_residency_count(fd, npages * ps, &r, 1, &cr, NULL) == 0);
			CHECK_EQ_U64(cr.pages, b - a + 1);
			CHECK_EQ_U64(cr.cached, exp);
		}
	}
	close(fd);
	scratch_done();
}

/* Ranges are clipped to the file; counts add to what *acc held. */
TEST_RETRIED(ranges_clipped_to_size)
{
	const uint64_t size = 10 * ps + 100;	/* 11 pages, the last one partial */
	struct hs_cache_counts c = { 0 };
	const char *p;
	int fd;

	scratch_dir();
	p = path_in("f");
	make_cold_file(p, size);
	read_pages(p, 0, 10);
	fd = open_ro(p);
	{
		const struct hs_range r[] = { { 5, 100 } };
		CHECK(hs_residency_count(fd, size, r, 1, &c, NULL) == 0);
		CHECK_EQ_U64(c.pages, 6);
		CHECK_EQ_U64(c.cached, 6);
	}
	{
		const struct hs_range r[] = { { 11, 20 }, { UINT64_MAX - 1, UINT64_MAX } };
		struct hs_cache_counts z = { 0 };
		CHECK(hs_residency_count(fd, size, r, 2, &z, NULL) == 0);
		CHECK_EQ_U64(z.pages, 0);
		CHECK_EQ_U64(z.cached, 0);
	}
	{
		const struct hs_range r[] = { { 0, 0 }, { 10, 10 }, { 3, 4 } };
		CHECK(hs_residency_count(fd, size, r, 3, &c, NULL) == 0);
		CHECK_EQ_U64(c.pages, 6 + 4);	/* added to the first count */
		CHECK_EQ_U64(c.cached, 6 + 4);
	}
	{
		const struct hs_range r[] = { { 0, 3 } };
		struct hs_cache_counts z = { 0 };
		CHECK(hs_residency_count(fd, size, r, 0, &z, NULL) == 0);	/* no ranges */
		CHECK_EQ_U64(z.pages, 0);
		/* a size smaller than the file's: pages past it do not count */
		CHECK(hs_residency_count(fd, ps + 1, NULL, 0, &z, NULL) == 0);
		CHECK_EQ_U64(z.pages, 2);
		CHECK_EQ_U64(z.cached, 2);
	}
	close(fd);

	/* an empty file has no pages, and no error */
	p = path_in("empty");
	make_cold_file(p, 0);
	fd = open_ro(p);
	{
		struct hs_cache_counts z = { 0 };
		const struct hs_range r[] = { { 0, 0 } };
		CHECK(hs_residency_count(fd, 0, NULL, 0, &z, NULL) == 0);
		CHECK(hs_residency_count(fd, 0, r, 1, &z, NULL) == 0);
		CHECK_EQ_U64(z.pages, 0);
	}
	close(fd);
	scratch_done();
}

TEST(dirty_pages_counted)
{
	struct hs_cache_counts c = { 0 };
	char buf[4096 * 4];
	const char *p;
	int fd;

	if (!hs_have_cachestat())
		SKIP("no cachestat(2): dirty pages are not counted");
	scratch_dir();
	p = path_in("dirty");
	fd = open(p, O_RDWR | O_CREAT, 0644);
	memset(buf, 'd', sizeof(buf));
	CHECK(write(fd, buf, sizeof(buf)) == (ssize_t)sizeof(buf));
	/* written just now: the flusher leaves pages dirty for 30 s */
	CHECK(hs_residency_count(fd, sizeof(buf), NULL, 0, &c, NULL) == 0);
	CHECK_EQ_U64(c.pages, sizeof(buf) / ps);
	CHECK_EQ_U64(c.cached, sizeof(buf) / ps);
	CHECK_EQ_U64(c.dirty + c.writeback, sizeof(buf) / ps);
	fsync(fd);
	memset(&c, 0, sizeof(c));
	CHECK(hs_residency_count(fd, sizeof(buf), NULL, 0, &c, NULL) == 0);
	CHECK_EQ_U64(c.dirty + c.writeback, 0);
	close(fd);
	scratch_done();
}

TEST(counts_add)
{
	struct hs_cache_counts a = { 1, 2, 3, 4, 5, 6 }, b = { 10, 20, 30, 40, 50, 60 };

	hs_cache_counts_add(&a, &b);
	CHECK_EQ_U64(a.pages, 11);
	CHECK_EQ_U64(a.cached, 22);
	CHECK_EQ_U64(a.dirty, 33);
	CHECK_EQ_U64(a.writeback, 44);
	CHECK_EQ_U64(a.evicted, 55);
	CHECK_EQ_U64(a.recently_evicted, 66);
}

/* ---- runs ------------------------------------------------------------------------ */

struct runs {
	struct hs_range r[64];
	size_t n;
	int stop_after;		/* return 1 after this many runs (0: never) */
};

static int collect(void *ctx, uint64_t first, uint64_t last)
{
	struct runs *rs = ctx;

	if (rs->n < 64)
		rs->r[rs->n] = (struct hs_range){ first, last };
	rs->n++;
	return rs->stop_after && rs->n >= (size_t)rs->stop_after ? 42 : 0;
}

/*
 * Runs over a sparse 200 MiB file: mincore works in 64 MiB windows, and a
 * run that crosses a window boundary must come out whole.
 */
TEST_RETRIED(runs_exact_across_windows)
{
	const uint64_t size = 200ull << 20, npages = size / 4096 * 4096 / hs_page_size();
	const uint64_t win = (64ull << 20) / hs_page_size();
	struct runs rs = { 0 };
	const char *p;
	int fd;

	scratch_dir();
	p = path_in("sparse");
	fd = open(p, O_RDWR | O_CREAT, 0644);
	CHECK(ftruncate(fd, (off_t)size) == 0);
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	close(fd);
	read_pages(p, 0, 0);
	read_pages(p, win - 1, win + 1);	/* across the first boundary */
	read_pages(p, 2 * win - 1, 2 * win - 1);	/* the last page of a window */
	read_pages(p, 40000, 40002);
	read_pages(p, npages - 1, npages - 1);
	fd = open_ro(p);
	CHECK(hs_residency_runs(fd, size, 0, UINT64_MAX, collect, &rs) == 0);
	CHECK_EQ_U64(rs.n, 5);
	CHECK(rs.r[0].first == 0 && rs.r[0].last == 0);
	CHECK(rs.r[1].first == win - 1 && rs.r[1].last == win + 1);
	CHECK(rs.r[2].first == 2 * win - 1 && rs.r[2].last == 2 * win - 1);
	CHECK(rs.r[3].first == 40000 && rs.r[3].last == 40002);
	CHECK(rs.r[4].first == npages - 1 && rs.r[4].last == npages - 1);

	/* a sub-range cuts runs at its ends */
	memset(&rs, 0, sizeof(rs));
	CHECK(hs_residency_runs(fd, size, win, 40001, collect, &rs) == 0);
	CHECK_EQ_U64(rs.n, 3);
	CHECK(rs.r[0].first == win && rs.r[0].last == win + 1);
	CHECK(rs.r[2].first == 40000 && rs.r[2].last == 40001);

	/* the callback's non-zero value stops the walk and is returned */
	memset(&rs, 0, sizeof(rs));
	rs.stop_after = 2;
	CHECK(hs_residency_runs(fd, size, 0, UINT64_MAX, collect, &rs) == 42);
	CHECK_EQ_U64(rs.n, 2);

	/* nothing past the end of the file */
	memset(&rs, 0, sizeof(rs));
	CHECK(hs_residency_runs(fd, size, npages, UINT64_MAX, collect, &rs) == 0);
	CHECK_EQ_U64(rs.n, 0);
	close(fd);
	scratch_done();
}

/* Runs agree with mincore on a scattered pattern, and at the extremes. */
TEST_RETRIED(runs_match_mincore)
{
	const uint64_t npages = 300;
	unsigned char res[300];
	struct runs rs = { 0 };
	const char *p;
	int fd;

	scratch_dir();
	p = path_in("f");
	make_cold_file(p, npages * ps - 1);
	fd = open_ro(p);
	/* none resident: no call */
	CHECK(hs_residency_runs(fd, npages * ps - 1, 0, UINT64_MAX, collect, &rs) == 0);
	CHECK_EQ_U64(rs.n, 0);
	srand(11);
	for (uint64_t i = 0; i < npages; i++)
		if (rand() % 3 == 0)
			read_pages(p, i, i);
	mincore_map(fd, npages * ps - 1, res);
	CHECK(hs_residency_runs(fd, npages * ps - 1, 0, UINT64_MAX, collect, &rs) == 0);
	{
		size_t k = 0;
		uint64_t total = 0;

		for (uint64_t i = 0; i < npages; i++) {
			uint64_t j = i;

			if (!res[i])
				continue;
			while (j + 1 < npages && res[j + 1])
				j++;
			CHECK(k < rs.n && k < 64);
			if (k < rs.n && k < 64)
				CHECK(rs.r[k].first == i && rs.r[k].last == j);
			k++;
			total += j - i + 1;
			i = j;
		}
		CHECK_EQ_U64(k, rs.n);
		CHECK(total > 0);
	}
	/* all resident: one run, the whole file */
	read_pages(p, 0, npages - 1);
	memset(&rs, 0, sizeof(rs));
	CHECK(hs_residency_runs(fd, npages * ps - 1, 0, UINT64_MAX, collect, &rs) == 0);
	CHECK_EQ_U64(rs.n, 1);
	CHECK(rs.r[0].first == 0 && rs.r[0].last == npages - 1);
	close(fd);
	scratch_done();
}

TEST_RETRIED(cells_slice_the_file)
{
	double cells[20];
	const char *p;
	int fd;

	scratch_dir();
	p = path_in("f");
	make_cold_file(p, 40 * ps);
	read_pages(p, 0, 19);	/* the first half */
	read_pages(p, 30, 30);	/* half of cell 15 */
	fd = open_ro(p);
	CHECK(hs_residency_cells(fd, 40 * ps, cells, 20) == 0);
	for (int i = 0; i < 10; i++)
		CHECK(cells[i] == 1.0);
	for (int i = 10; i < 20; i++)
		CHECK(cells[i] == (i == 15 ? 0.5 : 0.0));
	close(fd);
	/* fewer pages than cells */
	p = path_in("small");
	make_cold_file(p, 3 * ps);
	read_pages(p, 1, 1);
	fd = open_ro(p);
	CHECK(hs_residency_cells(fd, 3 * ps, cells, 20) == 0);
	for (int i = 0; i < 20; i++)
		CHECK(cells[i] == 0.0 || cells[i] == 1.0);
	CHECK(cells[19] == 0.0 && cells[0] == 0.0);
	close(fd);
	scratch_done();
}

/* ---- unknown residency ---------------------------------------------------------- */

static void become_nobody(void)
{
	if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
	    setresuid(NOBODY, NOBODY, NOBODY)) {
		perror("dropping to nobody");
		_exit(1);
	}
}

/*
 * As nobody, on a root-owned file it may read but not write, the kernel
 * will not tell (cachestat: EPERM; mincore: everything resident). That
 * must come out as -EPERM, never as a number; files nobody can write, or
 * owns, are known.
 */
TEST_RETRIED(unknown_without_write_permission)
{
	const char *ro, *rw, *own;
	double cells[4];
	pid_t pid;
	int status;

	if (geteuid() != 0)
		SKIP("needs root, to drop to nobody");
	scratch_dir();
	ro = path_in("root-ro");
	rw = path_in("root-rw");
	own = path_in("nobody-owns");
	make_cold_file(ro, 8 * ps);
	make_cold_file(rw, 8 * ps);
	make_cold_file(own, 8 * ps);
	chmod(rw, 0666);
	CHECK(chown(own, NOBODY, NOBODY) == 0);
	read_pages(ro, 0, 7);	/* fully resident: mincore would say 100% */
	read_pages(rw, 0, 2);
	read_pages(own, 5, 5);

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		struct hs_cache_counts c = { 111, 222, 333, 444, 555, 666 };
		struct runs rs = { 0 };
		struct hs_evict_result er;
		int fd;

		become_nobody();
		fd = open_ro(ro);
		CHECK(hs_residency_count(fd, 8 * ps, NULL, 0, &c, NULL) == -EPERM);
		CHECK(c.pages == 111 && c.cached == 222);	/* untouched */
		CHECK(hs_residency_runs(fd, 8 * ps, 0, UINT64_MAX, collect, &rs) == -EPERM);
		CHECK_EQ_U64(rs.n, 0);
		CHECK(hs_residency_cells(fd, 8 * ps, cells, 4) == 0);
		for (int i = 0; i < 4; i++)
			CHECK(cells[i] < 0);
		/* eviction still works on a file one may only read */
		CHECK(hs_evict(fd, 8 * ps, NULL, 0, true, &er) == 0);
		CHECK(!er.known);
		close(fd);

		fd = open_ro(rw);
		memset(&c, 0, sizeof(c));
		CHECK(hs_residency_count(fd, 8 * ps, NULL, 0, &c, NULL) == 0);
		CHECK_EQ_U64(c.cached, 3);
		CHECK(hs_residency_runs(fd, 8 * ps, 0, UINT64_MAX, collect, &rs) == 0);
		CHECK(rs.n == 1 && rs.r[0].first == 0 && rs.r[0].last == 2);
		close(fd);

		fd = open_ro(own);
		memset(&c, 0, sizeof(c));
		CHECK(hs_residency_count(fd, 8 * ps, NULL, 0, &c, NULL) == 0);
		CHECK_EQ_U64(c.cached, 1);
		close(fd);
		fflush(stdout);
		_exit(unit_failed);
	}
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* nobody's eviction of the read-only file took effect */
	{
		unsigned char res[8];
		int fd = open_ro(ro);

		CHECK_EQ_U64(mincore_map(fd, 8 * ps, res), 0);
		close(fd);
	}
	scratch_done();
}

/*
 * Kernels before 6.5 (Debian 12's 6.1) have no cachestat: the counts, and
 * "unknown" without write permission, must come out the same from
 * mincore. HOTSET_NO_CACHESTAT (residency.h) takes cachestat away.
 */
TEST(without_cachestat_mincore_answers)
{
	CHECK(setenv("HOTSET_NO_CACHESTAT", "1", 1) == 0);
	CHECK(!hs_have_cachestat());
	with_retries(counts_exact_pages_body, "counts_exact_pages (mincore)");
	with_retries(unknown_without_write_permission_body, "unknown_without_write_permission (mincore)");
}

/* ---- eviction ------------------------------------------------------------------------ */

TEST_RETRIED(evict_whole_file)
{
	struct hs_evict_result r;
	unsigned char res[32];
	const char *p;
	int fd;

	scratch_dir();
	p = path_in("f");
	make_cold_file(p, 32 * ps);
	read_pages(p, 0, 31);
	fd = open_ro(p);
	CHECK(hs_evict(fd, 32 * ps, NULL, 0, true, &r) == 0);
	CHECK(r.known);
	CHECK_EQ_U64(r.before.pages, 32);
	CHECK_EQ_U64(r.before.cached, 32);
	CHECK_EQ_U64(r.after.cached, 0);
	CHECK_EQ_U64(mincore_map(fd, 32 * ps, res), 0);
	/* again, on a cold file: nothing to do, no error */
	CHECK(hs_evict(fd, 32 * ps, NULL, 0, true, &r) == 0);
	CHECK_EQ_U64(r.before.cached, 0);
	close(fd);
	/* an empty file */
	p = path_in("empty");
	make_cold_file(p, 0);
	fd = open_ro(p);
	CHECK(hs_evict(fd, 0, NULL, 0, true, &r) == 0);
	CHECK_EQ_U64(r.before.pages, 0);
	close(fd);
	scratch_done();
}

/* Only the given ranges go; ranges past the end, even huge ones, are fine. */
TEST_RETRIED(evict_ranges_only)
{
	struct hs_evict_result r;
	unsigned char res[32];
	const char *p;
	int fd;

	scratch_dir();
	p = path_in("f");
	make_cold_file(p, 32 * ps);
	read_pages(p, 0, 31);
	fd = open_ro(p);
	{
		const struct hs_range rg[] = { { 4, 7 }, { 20, 20 }, { 40, 50 } };

		CHECK(hs_evict(fd, 32 * ps, rg, 3, true, &r) == 0);
		CHECK_EQ_U64(r.before.pages, 5);
		CHECK_EQ_U64(r.before.cached, 5);
		CHECK_EQ_U64(r.after.cached, 0);
		CHECK_EQ_U64(mincore_map(fd, 32 * ps, res), 27);
		CHECK(!res[4] && !res[7] && !res[20] && res[3] && res[8] && res[19] && res[21]);
	}
	{
		/* the largest page a profile may name: no overflow in bytes */
		const struct hs_range rg[] = { { 30, HS_PROFILE_MAX_PAGE - 1 } };

		CHECK(hs_evict(fd, 32 * ps, rg, 1, true, &r) == 0);
		CHECK_EQ_U64(r.before.pages, 2);
		CHECK_EQ_U64(r.after.cached, 0);
		CHECK_EQ_U64(mincore_map(fd, 32 * ps, res), 25);
		CHECK(res[29] && !res[30] && !res[31]);
	}
	{
		const struct hs_range rg[] = { { 1, HS_PROFILE_MAX_PAGE - 1 } };

		CHECK(hs_evict(fd, 32 * ps, rg, 1, false, &r) == 0);
		CHECK_EQ_U64(mincore_map(fd, 32 * ps, res), 1);
		CHECK(res[0]);
	}
	close(fd);
	scratch_done();
}

/* Dirty pages are written back and dropped, or stay if told not to write. */
TEST_RETRIED(evict_dirty_pages)
{
	struct hs_evict_result r;
	char buf[8 * 4096];
	const char *p;
	int fd;

	scratch_dir();
	p = path_in("dirty");
	fd = open(p, O_RDWR | O_CREAT, 0644);
	memset(buf, 'd', sizeof(buf));
	CHECK(write(fd, buf, sizeof(buf)) == (ssize_t)sizeof(buf));
	CHECK(hs_evict(fd, sizeof(buf), NULL, 0, false, &r) == 0);
	CHECK_EQ_U64(r.before.cached, sizeof(buf) / ps);
	if (hs_have_cachestat())
		CHECK_EQ_U64(r.after.dirty + r.after.writeback, r.after.cached);
	CHECK(r.after.cached > 0);	/* dirty pages cannot be dropped */
	CHECK(hs_evict(fd, sizeof(buf), NULL, 0, true, &r) == 0);
	CHECK_EQ_U64(r.after.cached, 0);
	close(fd);
	scratch_done();
}

/* Pages mapped by a process stay, and are reported as staying. */
TEST_RETRIED(evict_reports_mapped_pages)
{
	struct hs_evict_result r;
	volatile char sum = 0;
	const char *p;
	char *map;
	int fd;

	scratch_dir();
	p = path_in("f");
	make_cold_file(p, 16 * ps);
	read_pages(p, 0, 15);
	fd = open_ro(p);
	/* a 4-page mapping: fault-around cannot map more than these */
	map = mmap(NULL, 4 * ps, PROT_READ, MAP_SHARED, fd, (off_t)(2 * ps));
	CHECK(map != MAP_FAILED);
	for (uint64_t i = 0; i < 4; i++)
		sum += map[i * ps];
	CHECK(hs_evict(fd, 16 * ps, NULL, 0, true, &r) == 0);
	CHECK_EQ_U64(r.before.cached, 16);
	CHECK_EQ_U64(r.after.cached, 4);
	munmap(map, 4 * ps);
	CHECK(hs_evict(fd, 16 * ps, NULL, 0, true, &r) == 0);
	CHECK_EQ_U64(r.before.cached, 4);
	CHECK_EQ_U64(r.after.cached, 0);
	(void)sum;
	close(fd);
	scratch_done();
}

/*
 * Written in one large write, a file is cached in large folios; truncated
 * to mid-folio, the last one straddles the new end. DONTNEED over
 * [0, size) would keep it: the whole file, and a range reaching its last
 * page, must be dropped "to the end" instead.
 */
TEST_RETRIED(evict_file_truncated_mid_folio)
{
	const struct hs_range to_end = { 0, UINT64_MAX };
	const uint64_t size = 500000;
	size_t big = 1 << 20;
	char *buf = malloc(big);
	unsigned char res[128];
	struct hs_evict_result r;
	const char *p;
	int fd;

	scratch_dir();
	p = path_in("tz");
	for (int round = 0; round < 2; round++) {
		fd = open(p, O_RDWR | O_CREAT | O_TRUNC, 0644);
		CHECK(fd >= 0);
		for (size_t i = 0; i < big; i++)
			buf[i] = (char)(i * 7 + (i >> 12));
		CHECK(write(fd, buf, big) == (ssize_t)big);
		CHECK(ftruncate(fd, (off_t)size) == 0);
		CHECK(fsync(fd) == 0);
		CHECK(hs_evict(fd, size, round ? &to_end : NULL, round ? 1 : 0, true, &r) == 0);
		CHECK(r.known);
		CHECK_EQ_U64(r.after.cached, 0);
		CHECK_EQ_U64(mincore_map(fd, size, res), 0);
		close(fd);
	}
	free(buf);
	scratch_done();
}

/* ---- over targets: status's totals, snapshot's entries ------------------------------ */

TEST(totals_count_known_and_unknown_files_apart)
{
	struct hs_residency_total tot = { 0 };
	struct stat st = { .st_size = (off_t)(10 * ps + 1) };
	const struct hs_range r = { 2, 4 };
	struct hs_target whole = { .st = &st, .pages = 11 }, ranged = { .st = &st, .ranges = &r,
									   .nranges = 1, .pages = 3 };
	struct hs_target_residency a = {
		.counts = { .pages = 11, .cached = 6, .dirty = 1, .evicted = 2 },
		.method = HS_RES_CACHESTAT, .bytes = 10 * ps + 1, .resident_bytes = 5 * ps + 1,
	};
	struct hs_target_residency b = {
		.counts = { .pages = 3, .cached = 3 }, .method = HS_RES_CACHESTAT,
		.bytes = 3 * ps, .resident_bytes = 3 * ps,
	};
	struct hs_target_residency unknown = { .rc = -EPERM, .bytes = 3 * ps };
	struct hs_target_residency failed = { .rc = -EIO, .bytes = 10 * ps + 1 };

	CHECK(hs_residency_total_add(&tot, &whole, &a));
	CHECK(hs_residency_total_add(&tot, &ranged, &b));
	CHECK(hs_residency_total_add(&tot, &ranged, &unknown));	/* no write permission */
	CHECK(!hs_residency_total_add(&tot, &whole, &failed));	/* not examined: not counted */
	CHECK_EQ_U64(tot.files, 3);
	CHECK_EQ_U64(tot.bytes, 10 * ps + 1 + 3 * ps + 3 * ps);
	CHECK_EQ_U64(tot.resident_bytes, 5 * ps + 1 + 3 * ps);
	CHECK_EQ_U64(tot.known.pages, 14);
	CHECK_EQ_U64(tot.known.cached, 9);
	CHECK_EQ_U64(tot.known.dirty, 1);
	CHECK_EQ_U64(tot.known.evicted, 2);
	CHECK_EQ_U64(tot.unknown_files, 1);
	CHECK_EQ_U64(tot.unknown_pages, 3);
	CHECK_EQ_U64(hs_residency_total_pages(&tot), 17);
	CHECK(tot.method == HS_RES_CACHESTAT);
}

/* A file's bytes, and its resident bytes, stop at its end, not at its last page's. */
TEST_RETRIED(target_bytes_stop_at_the_end_of_the_file)
{
	const uint64_t size = 10 * ps + 100;
	struct hs_target_residency r;
	struct hs_target t = { 0 };
	const struct hs_range early = { 0, 1 }, to_end = { 9, 10 };
	unsigned char res[11];
	struct stat st;
	const char *p;

	scratch_dir();
	p = path_in("f");
	make_cold_file(p, size);
	t.fd = open_ro(p);
	if (mincore_map(t.fd, size, res) != 0) {
		scratch_done();
		SKIP("the file stayed cached after DONTNEED (not a real filesystem?)");
	}
	CHECK(fstat(t.fd, &st) == 0);
	t.st = &st;
	t.pages = 11;
	CHECK(hs_residency_target(&t, &r) == 0);
	CHECK_EQ_U64(r.bytes, size);
	CHECK_EQ_U64(r.resident_bytes, 0);
	read_pages(p, 0, 10);
	CHECK(hs_residency_target(&t, &r) == 0);
	CHECK_EQ_U64(r.counts.cached, 11);
	CHECK_EQ_U64(r.resident_bytes, size);
	/* ranges: only those holding the last page stop short of a whole page */
	t.ranges = &early;
	t.nranges = 1;
	t.pages = 2;
	CHECK(hs_residency_target(&t, &r) == 0);
	CHECK_EQ_U64(r.bytes, 2 * ps);
	CHECK_EQ_U64(r.resident_bytes, 2 * ps);
	t.ranges = &to_end;
	CHECK(hs_residency_target(&t, &r) == 0);
	CHECK_EQ_U64(r.bytes, ps + 100);
	CHECK_EQ_U64(r.resident_bytes, ps + 100);
	close(t.fd);
	scratch_done();
}

TEST_RETRIED(a_resident_entry_holds_the_resident_runs)
{
	const uint64_t npages = 300;
	struct hs_resident_entry e;
	struct hs_target_residency r;
	struct hs_target t = { 0 };
	struct stat st;
	unsigned char res[300];
	const char *p;
	size_t n = 0;

	scratch_dir();
	p = path_in("f");
	make_cold_file(p, npages * ps);
	t.fd = open_ro(p);
	if (mincore_map(t.fd, npages * ps, res) != 0) {
		scratch_done();
		SKIP("the file stayed cached after DONTNEED (not a real filesystem?)");
	}
	CHECK(fstat(t.fd, &st) == 0);
	t.st = &st;
	t.path = p;
	t.path_len = strlen(p);
	t.pages = npages;
	/* more runs than the entry holds inline (64): every other page of the first 200 */
	for (uint64_t i = 0; i < 200; i += 2)
		read_pages(p, i, i);
	read_pages(p, 250, 259);
	CHECK(hs_residency_entry(&t, &e) == 0);
	CHECK(e.file.path == t.path && e.file.path_len == t.path_len);
	CHECK(e.file.id.dev == st.st_dev && e.file.id.ino == st.st_ino);
	CHECK(e.file.id.size == npages * ps && e.file.id.mtime_sec == st.st_mtim.tv_sec &&
	      e.file.id.mtime_nsec == (uint32_t)st.st_mtim.tv_nsec);
	CHECK_EQ_U64(e.file.nranges, 101);
	for (uint64_t i = 0; i < 200 && n < e.file.nranges; i += 2, n++)
		CHECK(e.file.ranges[n].first == i && e.file.ranges[n].last == i);
	CHECK(e.file.ranges[100].first == 250 && e.file.ranges[100].last == 259);
	CHECK_EQ_U64(e.file.pages, 110);
	/* the same as status counts */
	CHECK(hs_residency_target(&t, &r) == 0);
	CHECK_EQ_U64(r.counts.cached, e.file.pages);
	hs_residency_entry_release(&e);
	/* nothing resident: an entry without ranges */
	posix_fadvise(t.fd, 0, 0, POSIX_FADV_DONTNEED);
	CHECK(hs_residency_entry(&t, &e) == 0 && e.file.nranges == 0 && e.file.pages == 0);
	hs_residency_entry_release(&e);
	close(t.fd);
	scratch_done();
}

int main(void)
{
	ps = hs_page_size();
	return RUN_TESTS(counts_exact_pages, ranges_clipped_to_size, dirty_pages_counted, counts_add,
			 runs_exact_across_windows, runs_match_mincore, cells_slice_the_file,
			 unknown_without_write_permission, evict_whole_file, evict_ranges_only,
			 without_cachestat_mincore_answers, evict_dirty_pages,
			 evict_reports_mapped_pages, evict_file_truncated_mid_folio,
			 totals_count_known_and_unknown_files_apart,
			 target_bytes_stop_at_the_end_of_the_file,
			 a_resident_entry_holds_the_resident_runs);
}
