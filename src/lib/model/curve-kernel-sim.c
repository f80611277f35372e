/*
 * curve-kernel-sim.c - one simulation of the kernel model
 * (curve-kernel-impl.h): the file LRU lists (inactive and active, the
 * refault distance from shadow entries), the pages of the files followed,
 * readahead (sync and async windows, mmap read-around), and the threads
 * that run a round of simulations, each its own cache size over the same
 * model. What each mirrors in the kernel: curve-kernel.c's comment.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model/curve-kernel-impl.h"

/* ---- one simulation ------------------------------------------------------------ */

static uint32_t head(const struct sim *s, int l)
{
	return s->m->npages + (uint32_t)l;
}

static void unlink_page(struct sim *s, uint32_t p)
{
	s->next[s->prev[p]] = s->next[p];
	s->prev[s->next[p]] = s->prev[p];
	s->count[s->flags[p] & ON_ACTIVE ? ACTIVE : INACTIVE]--;
}

static void push(struct sim *s, uint32_t p, int l)
{
	uint32_t h = head(s, l);

	s->prev[p] = h;
	s->next[p] = s->next[h];
	s->prev[s->next[h]] = p;
	s->next[h] = p;
	s->count[l]++;
	if (l == ACTIVE)
		s->flags[p] |= ON_ACTIVE;
	else
		s->flags[p] &= (uint8_t)~ON_ACTIVE;
}

static void move_to(struct sim *s, uint32_t p, int l)
{
	unlink_page(s, p);
	push(s, p, l);
}

static bool inactive_is_low(struct sim *s)
{
	uint64_t gb = (uint64_t)((double)(s->count[INACTIVE] + s->count[ACTIVE]) * s->gib_per_page);

	if (gb != s->last_gb) {	/* int_sqrt(10 * gb), 1 below a GiB */
		uint64_t ratio = 1;

		if (gb)
			while ((ratio + 1) * (ratio + 1) <= 10 * gb)
				ratio++;
		s->last_gb = gb;
		s->last_ratio = ratio;
	}
	return s->count[INACTIVE] * s->last_ratio < s->count[ACTIVE];
}

/* One step of reclaim: deactivate the active list's tail, or evict the inactive one's. */
static void reclaim_one(struct sim *s)
{
	uint32_t p;

	if (inactive_is_low(s)) {
		p = s->prev[head(s, ACTIVE)];
		/* shrink_active_list(): a young page of an executed file goes round again */
		if ((s->flags[p] & (EXEC | YOUNG)) == (EXEC | YOUNG)) {
			s->flags[p] &= (uint8_t)~YOUNG;
			move_to(s, p, ACTIVE);
		} else {
			s->flags[p] &= (uint8_t)~YOUNG;
			move_to(s, p, INACTIVE);
		}
		return;
	}
	p = s->prev[head(s, INACTIVE)];
	if (s->flags[p] & YOUNG) {	/* mapped, faulted since: folio_check_references() */
		s->flags[p] &= (uint8_t)~YOUNG;
		if (s->flags[p] & (EXEC | REFERENCED)) {
			s->flags[p] &= (uint8_t)~REFERENCED;
			move_to(s, p, ACTIVE);
		} else {
			s->flags[p] |= REFERENCED;
			move_to(s, p, INACTIVE);
		}
		return;
	}
	unlink_page(s, p);
	s->flags[p] &= KIND;
	s->shadow[p] = s->age + 1;
	s->age++;
}

/* Page p read from the disk (counted) into the cache. */
static void insert(struct sim *s, uint32_t p)
{
	/* workingset_test_recent(): evicted fewer pages ago than the active list holds */
	bool recent = s->shadow[p] && s->age - (s->shadow[p] - 1) <= s->count[ACTIVE];

	s->reads++;
	s->shadow[p] = 0;
	s->flags[p] = (uint8_t)((s->flags[p] & KIND) | RESIDENT);
	push(s, p, recent ? ACTIVE : INACTIVE);
	if (recent)
		s->age++;
	while (s->count[INACTIVE] + s->count[ACTIVE] > s->cap)
		reclaim_one(s);
}

/* folio_mark_accessed(), or the accessed bit of a mapping */
static void mark_accessed(struct sim *s, uint32_t p)
{
	uint8_t *fl = &s->flags[p];

	if (!(*fl & RESIDENT))
		return;
	if (*fl & MAPPED) {
		*fl |= YOUNG;
	} else if (!(*fl & REFERENCED)) {
		*fl |= REFERENCED;
	} else if (!(*fl & ON_ACTIVE)) {
		*fl &= (uint8_t)~REFERENCED;
		move_to(s, p, ACTIVE);
		s->age++;
	}
}

/* ---- pages of files ---------------------------------------------------------------- */

/* The first span of file f that ends past page pg (ns if none). */
static size_t span_after(struct sim *s, size_t f, uint64_t pg)
{
	const struct mfile *mf = &s->m->mf[f];
	const struct span *sp = s->m->spans + mf->s0;
	size_t lo = 0, hi = mf->ns, h = s->ra[f].hint;

	if (h < mf->ns && sp[h].lo <= pg && pg < sp[h].hi)
		return h;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (sp[mid].hi <= pg)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < mf->ns)
		s->ra[f].hint = lo;
	return lo;
}

/* The id of page pg of file f, or NIL if not followed. */
static uint32_t id_of(struct sim *s, size_t f, uint64_t pg)
{
	size_t k = span_after(s, f, pg);
	const struct span *sp = s->m->spans + s->m->mf[f].s0 + k;

	if (k == s->m->mf[f].ns || sp->lo > pg)
		return NIL;
	return sp->base + (uint32_t)(pg - sp->lo);
}

static bool cached(struct sim *s, size_t f, uint64_t pg)
{
	uint32_t p = id_of(s, f, pg);

	return p != NIL && (s->flags[p] & RESIDENT);
}

/* ---- readahead ------------------------------------------------------------------------ */

static uint64_t init_ra_size(uint64_t req, uint64_t max)
{
	uint64_t n = pow2_up(req);

	return n <= max / 32 ? 4 * n : n <= max / 4 ? 2 * n : max;
}

static uint64_t next_ra_size(uint64_t cur, uint64_t max)
{
	return cur < max / 16 ? 4 * cur : cur <= max / 2 ? 2 * cur : max;
}

/*
 * Read pages start .. start + size - 1 of file f that are not cached,
 * within readahead's reach; mark the one async pages before the end.
 */
static void read_window(struct sim *s, size_t f, uint64_t start, uint64_t size, uint64_t async)
{
	const struct mfile *mf = &s->m->mf[f];
	uint64_t end = min_u64(start + size, s->lim_hi), mark = async ? start + size - async : UINT64_MAX;

	if (start < s->lim_lo)
		start = s->lim_lo;
	for (size_t k = span_after(s, f, start); k < mf->ns && start < end; k++) {
		const struct span *sp = s->m->spans + mf->s0 + k;
		uint64_t pg = start > sp->lo ? start : sp->lo, stop = min_u64(end, sp->hi);

		if (pg >= stop)
			break;
		for (uint32_t p = sp->base + (uint32_t)(pg - sp->lo); pg < stop; pg++, p++) {
			if (s->flags[p] & RESIDENT)
				continue;
			insert(s, p);
			if (pg == mark && (s->flags[p] & RESIDENT))
				s->flags[p] |= MARK;
		}
		start = stop;
	}
}

static void set_window(struct ra *k, uint64_t start, uint64_t size, uint64_t async)
{
	k->start = start;
	k->size = size;
	k->async = async;
}

/* A miss at page pg of file f, with req pages asked for: page_cache_sync_ra(). */
static void sync_ra(struct sim *s, size_t f, uint64_t pg, uint64_t req)
{
	struct ra *k = &s->ra[f];
	uint64_t max = s->m->files[f].read_ahead, size, contig = 0;

	if (!max)	/* no readahead: the page alone */
		return;
	if (s->m->files[f].flags & HS_FILE_MAPPED) {	/* mmap read-around */
		if (k->mmap_miss < MMAP_LOTSAMISS * 10)
			k->mmap_miss++;
		if (k->mmap_miss > MMAP_LOTSAMISS)	/* it misses much more than it hits */
			return;
		set_window(k, pg > max / 2 ? pg - max / 2 : 0, max, max / 4);
		read_window(s, f, k->start, k->size, k->async);
		return;
	}
	if (!pg || (k->have_prev && pg - k->prev <= 1 && pg >= k->prev)) {
		size = init_ra_size(req, max);
		set_window(k, pg, size, size > req ? size - req : size / 2);
		read_window(s, f, k->start, k->size, k->async);
		return;
	}
	/* the pages a stream would have left behind it (page_cache_prev_miss()) */
	while (contig < max && contig < pg - s->lim_lo && cached(s, f, pg - 1 - contig))
		contig++;
	if (contig <= req) {	/* a small random read: as is, the state untouched */
		read_window(s, f, pg, req, 0);
		return;
	}
	if (contig == pg)	/* cached from the start of the file: a long stream */
		contig *= 2;
	set_window(k, pg, contig + req < max ? contig + req : max, 1);
	read_window(s, f, k->start, k->size, k->async);
}

/* The mark reached at page pg of file f: page_cache_async_ra(). */
static void async_ra(struct sim *s, size_t f, uint64_t pg, uint64_t req)
{
	struct ra *k = &s->ra[f];
	uint64_t max = s->m->files[f].read_ahead, start, size;

	if (!max)
		return;
	if (k->size && pg == k->start + k->size - k->async) {	/* the expected one: ramp up */
		size = next_ra_size(k->size, max);
		set_window(k, k->start + k->size, size > k->size ? size : k->size, 0);
		k->async = k->size;
	} else {	/* a mark without its state: from the next page not cached */
		for (start = pg + 1; start <= pg + max && start < s->lim_hi && cached(s, f, start);
		     start++)
			;
		if (start > pg + max || start >= s->lim_hi)
			return;
		size = next_ra_size(start - pg + req, max);
		set_window(k, start, size, size);
	}
	read_window(s, f, k->start, k->size, k->async);
}

/* The access to page pg (id p) of file f, rest pages of its run still to come. */
static void access_page(struct sim *s, size_t f, uint64_t pg, uint32_t p, uint64_t rest)
{
	struct ra *k = &s->ra[f];
	uint64_t req = rest < REQ_PAGES ? rest : REQ_PAGES;

	if (s->m->files[f].flags & HS_FILE_DIRECT) {	/* past the cache, every time */
		s->reads++;
		return;
	}
	if (!(s->flags[p] & RESIDENT)) {
		sync_ra(s, f, pg, req);
		if (!(s->flags[p] & RESIDENT))	/* beyond the window, or a window of nothing */
			insert(s, p);
	} else {
		if ((s->flags[p] & MAPPED) && k->mmap_miss)	/* a fault that found its page */
			k->mmap_miss--;
		if (s->flags[p] & MARK) {
			s->flags[p] &= (uint8_t)~MARK;
			async_ra(s, f, pg, req);
		}
	}
	mark_accessed(s, p);
	k->prev = pg;
	k->have_prev = true;
}

/* ---- running simulations ----------------------------------------------------------- */

int ck_sim_alloc(struct sim *s, const struct model *m)
{
	size_t n = (size_t)m->npages;

	memset(s, 0, sizeof(*s));
	s->m = m;
	if (!(s->ra = calloc(m->nfiles ? m->nfiles : 1, sizeof(*s->ra))) ||
	    !(s->prev = malloc((n + 2) * sizeof(*s->prev))) ||
	    !(s->next = malloc((n + 2) * sizeof(*s->next))) ||
	    !(s->flags = calloc(n + 1, 1)) || !(s->shadow = malloc((n + 1) * sizeof(*s->shadow))))
		return -ENOMEM;
	for (size_t f = 0; f < m->nfiles; f++)	/* what reclaim asks of a page's file */
		for (size_t k = m->mf[f].s0; k < m->mf[f].s0 + m->mf[f].ns; k++)
			memset(s->flags + m->spans[k].base, m->mf[f].kind,
			       m->spans[k].hi - m->spans[k].lo);
	return 0;
}

void ck_sim_free(struct sim *s)
{
	free(s->ra);
	free(s->prev);
	free(s->next);
	free(s->flags);
	free(s->shadow);
}

static void sim_reset(struct sim *s, uint64_t cap)
{
	for (uint32_t p = 0; p < s->m->npages; p++)
		s->flags[p] &= KIND;
	memset(s->shadow, 0, s->m->npages * sizeof(*s->shadow));
	for (int l = 0; l < 2; l++)
		s->prev[head(s, l)] = s->next[head(s, l)] = head(s, l);
	s->count[0] = s->count[1] = 0;
	s->age = s->reads = 0;
	s->cap = cap;
	s->last_gb = UINT64_MAX;
	s->gib_per_page = 4096.0 / s->m->ratio / (double)(UINT64_C(1) << 30);
}

/* One pass of the trace; progress told by the calling thread only (main). */
static void run_pass(struct sim *s, struct round *rd, bool main)
{
	const struct model *m = s->m;
	uint64_t since = 0;

	for (size_t f = 0; f < m->nfiles; f++) {	/* the files opened anew */
		s->ra[f].have_prev = false;
		s->ra[f].mmap_miss = 0;
		set_window(&s->ra[f], 0, 0, 0);
	}
	s->lim_lo = 0;
	for (size_t i = 0; i < m->nruns; i++) {
		const struct krun *r = &m->runs[i];
		uint64_t n = r->len & LEN_MAX, tail = r->len >> LEN_BITS;
		size_t k = span_after(s, r->file, r->first);
		const struct span *sp = m->spans + m->mf[r->file].s0 + k;
		uint32_t p = sp->base + (uint32_t)(r->first - sp->lo);

		ck_limits(m, r->file, r->first, &s->lim_lo, &s->lim_hi);
		for (uint64_t j = 0; j < n; j++)
			access_page(s, r->file, r->first + j, p + (uint32_t)j, n - j + tail);
		if ((since += n) >= PROGRESS_EVERY) {
			uint64_t done = __atomic_add_fetch(&rd->done, since, __ATOMIC_RELAXED);

			since = 0;
			if (main && rd->o->progress)
				rd->o->progress(rd->o->progress_arg, "simulating", done, rd->total);
		}
	}
	__atomic_add_fetch(&rd->done, since, __ATOMIC_RELAXED);
}

void *ck_work(void *arg)
{
	struct worker *w = arg;
	struct round *rd = w->rd;
	size_t i;

	while ((i = __atomic_fetch_add(&rd->next, 1, __ATOMIC_RELAXED)) < rd->n) {
		sim_reset(&w->sim, rd->caps[i]);
		run_pass(&w->sim, rd, w->main);
		rd->reads[i][0] = w->sim.reads;
		w->sim.reads = 0;
		run_pass(&w->sim, rd, w->main);
		rd->reads[i][1] = w->sim.reads;
	}
	return NULL;
}
