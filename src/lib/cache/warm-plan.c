/*
 * warm-plan.c - what a warm session reads of each target (the plan stage
 * of warm.h's model).
 *
 * The caller's thread plans: it clips each target to its file, skips holes
 * (SEEK_DATA), asks what is resident (cachestat(2), or mincore(2) on
 * kernels without it: the residency module) and spends the budget; the
 * session cuts the rest into requests no larger than one
 * POSIX_FADV_WILLNEED call reads in full (max(read_ahead_kb,
 * max_sectors_kb) of the disk: warm-order.c). Planning takes no lock but
 * for the budget, which is spent in call order.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache/residency.h"
#include "cache/warm-internal.h"

/*
 * Resident pages in pages [first, last] of fd, pages at or past `npages`
 * (the file's end) left out. Asks the residency module, which falls back
 * to mincore where the kernel has no cachestat (before 6.5: Debian 12's
 * 6.1), and says -EPERM when residency cannot be known (no write
 * permission); another -errno on failure.
 */
int64_t warm_cached_pages(int fd, uint64_t first, uint64_t last, uint64_t npages)
{
	const struct hs_range r = { first, last };
	struct hs_cache_counts c = { 0 };
	int rc;

	if (first >= npages)
		return 0;
	if (last >= npages)
		last = npages - 1;
	rc = hs_residency_count(fd, (last + 1) * hs_page_size(), &r, 1, &c, NULL);
	return rc < 0 ? rc : (int64_t)c.cached;
}

/* ---- planning ---------------------------------------------------------------- */

static int plan_push(struct plan *p, uint64_t first, uint64_t last)
{
	int64_t cached;

	if (hs_grow_inline(&p->pieces, &p->cap, p->npieces + 1, sizeof(*p->pieces),
			   p->inline_pieces))
		return -ENOMEM;
	p->pages += last - first + 1;
	cached = p->known ? warm_cached_pages(p->t->fd, first, last, UINT64_MAX) : -EPERM;
	if (cached < 0) {
		p->known = false;
		cached = 0;
	} else if ((uint64_t)cached >= last - first + 1) {
		p->resident += last - first + 1;
		return 0;	/* all there: nothing to do */
	}
	p->resident += (uint64_t)cached;
	p->pieces[p->npieces++] = (struct piece){ first, last, (uint64_t)cached };
	return 0;
}

/* Pages [first, last] of a sparse file: its data only, per SEEK_DATA. */
static int plan_data(struct plan *p, uint64_t first, uint64_t last, uint64_t size)
{
	const uint64_t ps = hs_page_size();
	uint64_t pos = first * ps, end = (last + 1) * ps < size ? (last + 1) * ps : size;
	uint64_t data_pages = 0;
	int rc = 0;

	while (pos < end && !rc) {
		off_t data = lseek(p->t->fd, (off_t)pos, SEEK_DATA), hole;

		if (data < 0) {
			if (errno != ENXIO)	/* no SEEK_DATA here: all data */
				data = (off_t)pos;
			else
				break;		/* a hole up to the end */
		}
		if ((uint64_t)data >= end)
			break;
		hole = lseek(p->t->fd, data, SEEK_HOLE);
		if (hole < 0 || (uint64_t)hole > end)
			hole = (off_t)end;
		if (hole <= data)
			break;
		/* pages that hold any data */
		rc = plan_push(p, (uint64_t)data / ps, ((uint64_t)hole - 1) / ps);
		data_pages += ((uint64_t)hole - 1) / ps - (uint64_t)data / ps + 1;
		pos = ((uint64_t)hole + ps - 1) / ps * ps;
	}
	if (data_pages < last - first + 1)
		p->holes += last - first + 1 - data_pages;
	return rc;
}

static int by_first_page(const void *a, const void *b)
{
	const struct piece *x = a, *y = b;

	return x->first < y->first ? -1 : x->first > y->first;
}

/*
 * A profile lists a file's ranges in the order they were first read, so
 * neighbours often come apart ("0-3,8-9,4-7"): in page order, and joined
 * where they touch, they cost the device one read instead of several. Only
 * a budget, spent in profile order, keeps the order as it is.
 */
static void join_pieces(struct plan *p)
{
	size_t n = 0;

	if (p->in_order || p->npieces < 2)
		return;
	qsort(p->pieces, p->npieces, sizeof(*p->pieces), by_first_page);
	for (size_t i = 1; i < p->npieces; i++) {
		struct piece *last = &p->pieces[n];

		if (p->pieces[i].first == last->last + 1) {
			last->last = p->pieces[i].last;
			last->cached += p->pieces[i].cached;
		} else {
			p->pieces[++n] = p->pieces[i];
		}
	}
	p->npieces = n + 1;
}

int warm_plan_target(struct plan *p)
{
	const struct hs_target *t = p->t;
	const uint64_t ps = hs_page_size(), size = (uint64_t)t->st->st_size;
	const uint64_t npages = (size + ps - 1) / ps;
	const struct hs_range whole = { 0, npages ? npages - 1 : 0 };
	const struct hs_range *r = t->ranges ? t->ranges : &whole;
	size_t nr = t->ranges ? t->nranges : npages ? 1 : 0;
	bool sparse = (uint64_t)t->st->st_blocks * 512 < size;
	int rc = 0;

	p->known = true;
	p->pieces = p->inline_pieces;
	p->cap = sizeof(p->inline_pieces) / sizeof(p->inline_pieces[0]);
	for (size_t i = 0; i < nr && !rc; i++) {
		uint64_t first = r[i].first, last = r[i].last;

		if (last >= npages) {
			p->past_eof += last - (first > npages ? first : npages) + 1;
			if (first >= npages)
				continue;
			last = npages - 1;
		}
		rc = sparse ? plan_data(p, first, last, size) : plan_push(p, first, last);
	}
	if (!rc)
		join_pieces(p);
	return rc;
}

static uint64_t missing(const struct plan *p, const struct piece *pc)
{
	return pc->last - pc->first + 1 - (p->known ? pc->cached : 0);
}

struct cut {
	uint64_t at, allowed;	/* stop at page `at`: `allowed` missing pages before it */
};

static int find_cut(void *ctx, uint64_t first, uint64_t last)
{
	struct cut *c = ctx;
	uint64_t gap = first - c->at;

	if (gap > c->allowed) {
		c->at += c->allowed;
		c->allowed = 0;
		return 1;
	}
	/*
	 * The missing pages before this run fit, even when they spend the
	 * budget exactly: the run itself is there already, so the first page
	 * not warmed is the one after it (a run is maximal: that one is
	 * missing, or past the piece).
	 */
	c->allowed -= gap;
	c->at = last + 1;
	return c->allowed ? 0 : 1;
}

/*
 * Spend the budget on p's pieces in order, under w->lock. Cuts the piece
 * where the budget runs out, drops those after it, and records where we
 * stopped. Returns true when the budget is spent.
 */
bool warm_spend_budget(struct hs_warm *w, struct plan *p)
{
	const uint64_t ps = hs_page_size(), size = (uint64_t)p->t->st->st_size;

	for (size_t i = 0; i < p->npieces; i++) {
		struct piece *pc = &p->pieces[i];
		uint64_t need = missing(p, pc) * ps, left = w->o.budget - w->budget_used;
		struct cut c = { pc->first, left / ps };

		if (need <= left) {
			w->budget_used += need;
			continue;
		}
		/* the budget ends inside this piece: find the page where it does */
		if (p->known && pc->cached)
			hs_residency_runs(p->t->fd, size, pc->first, pc->last, find_cut, &c);
		c.at += c.allowed;	/* what is left of it falls after the last resident run */
		if (c.at > pc->last + 1)
			c.at = pc->last + 1;
		w->budget_used += left / ps * ps;
		__atomic_store_n(&w->stopped, true, __ATOMIC_RELAXED);
		w->st.budget_reached = true;
		w->stop_path = strdup(p->t->path);
		w->st.stop_page = c.at;
		p->npieces = i;
		if (c.at > pc->first) {
			int64_t n = p->known ? warm_cached_pages(p->t->fd, pc->first, c.at - 1, UINT64_MAX) : 0;

			pc->last = c.at - 1;
			pc->cached = n > 0 ? (uint64_t)n : 0;
			/* nothing missing before the cut (the budget was spent already) */
			if (!p->known || pc->cached < c.at - pc->first)
				p->npieces = i + 1;
		}
		return true;
	}
	return false;
}
