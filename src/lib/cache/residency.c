/*
 * residency.c - page-cache residency through cachestat(2), or mincore(2)
 * where cachestat is missing.
 *
 * mincore needs a mapping, so it is done over windows of MINCORE_WINDOW
 * bytes: a 1 TB sparse file never becomes one 1 TB mapping, and the
 * result vector stays small. Both syscalls only answer truthfully when the
 * caller could write the file (or owns it): see residency.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <fcntl.h>
#include <unistd.h>

#include "cache/residency.h"

#ifndef __NR_cachestat
#define __NR_cachestat 451	/* the same number on every architecture */
#endif

#define MINCORE_WINDOW (64u << 20)

struct cachestat_range {
	uint64_t off, len;
};

struct cachestat {
	uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted, nr_recently_evicted;
};

static int sys_cachestat(int fd, uint64_t off, uint64_t len, struct cachestat *cs)
{
	struct cachestat_range r = { off, len };

	return (int)syscall(__NR_cachestat, fd, &r, cs, 0);
}

bool hs_have_cachestat(void)
{
	/* 0 unknown, 1 yes, 2 no; a benign race between threads */
	static int have;

	if (!have) {
		const char *off = getenv("HOTSET_NO_CACHESTAT");
		struct cachestat cs;

		/* the test hook (residency.h): behave as on a kernel before 6.5 */
		if (off && *off && strcmp(off, "0"))
			have = 2;
		else
			have = sys_cachestat(-1, 0, 0, &cs) < 0 && errno == ENOSYS ? 2 : 1;
	}
	return have == 1;
}

void hs_cache_counts_add(struct hs_cache_counts *a, const struct hs_cache_counts *b)
{
	a->pages += b->pages;
	a->cached += b->cached;
	a->dirty += b->dirty;
	a->writeback += b->writeback;
	a->evicted += b->evicted;
	a->recently_evicted += b->recently_evicted;
}

/*
 * mincore reports every page of a file resident unless the caller owns the
 * file, could write it, or is privileged (the kernel's can_do_mincore()).
 * The kernel asks with the thread's filesystem uid (a root keeper reading
 * a profile as its owner has that owner's), and drops root's privilege
 * over files while it is not 0: so it is the one asked here too.
 */
static int mincore_allowed(int fd)
{
	const uid_t fsuid = (uid_t)syscall(SYS_setfsuid, (uid_t)-1);	/* changes nothing */
	struct stat st;

	if (fsuid == 0)
		return 0;
	if (fstat(fd, &st) == 0 && st.st_uid == fsuid)
		return 0;
	if (faccessat(fd, "", W_OK, AT_EACCESS | AT_EMPTY_PATH) == 0)
		return 0;
	return -EPERM;
}

/*
 * Call fn(ctx, first, last) for each resident run in pages [first, last]
 * using mincore; window by window, so memory stays bounded.
 */
static int mincore_runs(int fd, uint64_t first, uint64_t last,
			int (*fn)(void *, uint64_t, uint64_t), void *ctx)
{
	const uint64_t ps = hs_page_size(), win_pages = MINCORE_WINDOW / ps;
	unsigned char *vec = malloc(win_pages);
	uint64_t run_start = 0;
	bool in_run = false;
	int rc = 0;

	if (!vec)
		return -ENOMEM;
	for (uint64_t p = first; p <= last && !rc; p += win_pages) {
		uint64_t n = last - p + 1 < win_pages ? last - p + 1 : win_pages;
		void *map = mmap(NULL, n * ps, PROT_READ, MAP_SHARED, fd, (off_t)(p * ps));

		if (map == MAP_FAILED) {
			rc = -errno;
			break;
		}
		if (mincore(map, n * ps, vec) < 0)
			rc = -errno;
		munmap(map, n * ps);
		for (uint64_t i = 0; i < n && !rc; i++) {
			bool res = vec[i] & 1;

			if (res && !in_run) {
				run_start = p + i;
				in_run = true;
			} else if (!res && in_run) {
				rc = fn(ctx, run_start, p + i - 1);
				in_run = false;
			}
		}
	}
	if (!rc && in_run)
		rc = fn(ctx, run_start, last);
	free(vec);
	return rc;
}

static int count_run(void *ctx, uint64_t first, uint64_t last)
{
	*(uint64_t *)ctx += last - first + 1;
	return 0;
}

/* Residency of pages [first, last] (already clipped to the file). */
static int count_one(int fd, uint64_t first, uint64_t last, struct hs_cache_counts *c,
		     enum hs_residency_method *method)
{
	const uint64_t ps = hs_page_size();
	struct cachestat cs;
	int rc;

	c->pages += last - first + 1;
	if (hs_have_cachestat()) {
		if (sys_cachestat(fd, first * ps, (last - first + 1) * ps, &cs) < 0)
			return -errno;
		c->cached += cs.nr_cache;
		c->dirty += cs.nr_dirty;
		c->writeback += cs.nr_writeback;
		c->evicted += cs.nr_evicted;
		c->recently_evicted += cs.nr_recently_evicted;
		*method = HS_RES_CACHESTAT;
		return 0;
	}
	*method = HS_RES_MINCORE;
	if ((rc = mincore_allowed(fd)))
		return rc;
	return mincore_runs(fd, first, last, count_run, &c->cached);
}

int hs_residency_count(int fd, uint64_t size, const struct hs_range *ranges, size_t nranges,
		       struct hs_cache_counts *acc, enum hs_residency_method *method)
{
	const uint64_t ps = hs_page_size();
	const uint64_t npages = (size + ps - 1) / ps;
	const struct hs_range whole = { 0, npages ? npages - 1 : 0 };
	struct hs_cache_counts c = { 0 };
	enum hs_residency_method m = hs_have_cachestat() ? HS_RES_CACHESTAT : HS_RES_MINCORE;
	int rc = 0;

	if (!ranges) {
		ranges = &whole;
		nranges = npages ? 1 : 0;
	}
	for (size_t i = 0; i < nranges && !rc; i++) {
		uint64_t last = ranges[i].last;

		if (ranges[i].first >= npages)
			continue;
		if (last >= npages)
			last = npages - 1;
		rc = count_one(fd, ranges[i].first, last, &c, &m);
	}
	if (rc)
		return rc;
	hs_cache_counts_add(acc, &c);
	if (method)
		*method = m;
	return 0;
}

int hs_residency_runs(int fd, uint64_t size, uint64_t first, uint64_t last,
		      hs_resident_run_fn fn, void *ctx)
{
	const uint64_t ps = hs_page_size();
	const uint64_t npages = (size + ps - 1) / ps;
	struct cachestat cs;
	int rc;

	if (first >= npages)
		return 0;
	if (last >= npages)
		last = npages - 1;
	if (hs_have_cachestat()) {
		if (sys_cachestat(fd, first * ps, (last - first + 1) * ps, &cs) < 0)
			return -errno;
		if (cs.nr_cache == 0)
			return 0;
		if (cs.nr_cache >= last - first + 1)
			return fn(ctx, first, last);
		/* cachestat succeeded, so we may write the file: mincore is truthful */
	} else if ((rc = mincore_allowed(fd))) {
		return rc;
	}
	return mincore_runs(fd, first, last, fn, ctx);
}

int hs_residency_cells(int fd, uint64_t size, double *cells, int ncells)
{
	const uint64_t ps = hs_page_size();
	const uint64_t npages = (size + ps - 1) / ps;

	for (int i = 0; i < ncells; i++) {
		uint64_t a = npages * (uint64_t)i / (uint64_t)ncells;
		uint64_t b = npages * (uint64_t)(i + 1) / (uint64_t)ncells;
		struct hs_range r = { a, b ? b - 1 : 0 };
		struct hs_cache_counts c = { 0 };
		int rc;

		if (b <= a) {	/* fewer pages than cells: reuse the covering page */
			r.first = r.last = a < npages ? a : (npages ? npages - 1 : 0);
		}
		if (!npages) {
			cells[i] = 0;
			continue;
		}
		rc = hs_residency_count(fd, size, &r, 1, &c, NULL);
		if (rc == -EPERM) {
			cells[i] = -1;
			continue;
		}
		if (rc)
			return rc;
		cells[i] = c.pages ? (double)c.cached / (double)c.pages : 0;
	}
	return 0;
}

/* ---- over targets ------------------------------------------------------------- */

/* Does t count page p (its ranges hold it, or it has none: the whole file)? */
static bool counts_page(const struct hs_target *t, uint64_t p)
{
	if (!t->ranges)
		return true;
	for (size_t i = 0; i < t->nranges; i++)
		if (t->ranges[i].first <= p && p <= t->ranges[i].last)
			return true;
	return false;
}

/*
 * r's bytes and resident bytes: whole pages, but for the file's last page,
 * which holds only the file's bytes in it. Whether that page is resident
 * is asked only when the counts cannot tell.
 */
static void count_bytes(const struct hs_target *t, struct hs_target_residency *r)
{
	const uint64_t ps = hs_page_size(), size = (uint64_t)t->st->st_size;
	const uint64_t end = size ? (size - 1) / ps : 0;	/* the last page */
	const struct hs_range last = { end, end };
	const uint64_t gap = size % ps ? ps - size % ps : 0;	/* past the end, in the last page */
	const bool counted = gap && counts_page(t, last.first);
	const struct hs_cache_counts *c = &r->counts;
	struct hs_cache_counts one = { 0 };

	r->bytes = t->pages * ps - (counted ? gap : 0);
	r->resident_bytes = r->rc == 0 ? c->cached * ps : 0;
	if (r->rc == 0 && counted && c->cached &&
	    (c->cached == c->pages ||
	     (hs_residency_count(t->fd, size, &last, 1, &one, NULL) == 0 && one.cached)))
		r->resident_bytes -= gap;
}

int hs_residency_target(const struct hs_target *t, struct hs_target_residency *r)
{
	memset(r, 0, sizeof(*r));
	r->rc = hs_residency_count(t->fd, (uint64_t)t->st->st_size, t->ranges, t->nranges,
				   &r->counts, &r->method);
	if (r->rc == 0 || r->rc == -EPERM)
		count_bytes(t, r);
	return r->rc;
}

bool hs_residency_total_add(struct hs_residency_total *total, const struct hs_target *t,
			    const struct hs_target_residency *r)
{
	if (r->rc && r->rc != -EPERM)
		return false;
	total->files++;
	total->bytes += r->bytes;
	total->resident_bytes += r->resident_bytes;
	if (r->rc == -EPERM) {
		total->unknown_files++;
		total->unknown_pages += t->pages;
	} else {
		total->method = r->method;
		hs_cache_counts_add(&total->known, &r->counts);
	}
	return true;
}

static int add_run(void *ctx, uint64_t first, uint64_t last)
{
	struct hs_resident_entry *e = ctx;

	if (hs_grow_inline(&e->v, &e->cap, e->file.nranges + 1, sizeof(*e->v), e->some))
		return -ENOMEM;
	e->v[e->file.nranges++] = (struct hs_range){ first, last };
	return 0;
}

int hs_residency_entry(const struct hs_target *t, struct hs_resident_entry *e)
{
	const struct stat *st = t->st;
	int rc;

	memset(&e->file, 0, sizeof(e->file));
	e->v = e->some;
	e->cap = sizeof(e->some) / sizeof(e->some[0]);
	e->file.path = t->path;
	e->file.path_len = t->path_len;
	e->file.id.dev = st->st_dev;
	e->file.id.ino = st->st_ino;
	e->file.id.size = (uint64_t)st->st_size;
	e->file.id.mtime_sec = st->st_mtim.tv_sec;
	e->file.id.mtime_nsec = (uint32_t)st->st_mtim.tv_nsec;
	rc = hs_residency_runs(t->fd, (uint64_t)st->st_size, 0, UINT64_MAX, add_run, e);
	e->file.ranges = e->v;
	e->file.pages = rc ? 0 : hs_ranges_pages(e->v, e->file.nranges);
	if (rc)
		e->file.nranges = 0;
	return rc;
}

void hs_residency_entry_release(struct hs_resident_entry *e)
{
	if (e->v != e->some)
		free(e->v);
	e->v = e->some;
	e->file.ranges = NULL;
	e->file.nranges = 0;
}
