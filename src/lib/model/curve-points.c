/*
 * curve-points.c - a curve once made (curve.h): its points read at a cache
 * size, its summary (the sizes at which it reaches a share of hits, its
 * floor, its knee), its release.
 *
 * Both policies' curves are read here: LRU's, whose points are every step
 * pages (size[] is NULL), and the kernel model's, whose points are at the
 * sizes in size[], found by bisection. Nothing here allocates.
 */
#include <stdlib.h>
#include <string.h>

#include "model/curve.h"

void hs_curve_release(struct hs_curve *c)
{
	free(c->cold);
	free(c->rerun);
	free(c->size);
	c->cold = c->rerun = NULL;
	c->size = NULL;
	c->n = 0;
}

/* ---- reading the curve ------------------------------------------------------- */

uint64_t hs_curve_size(const struct hs_curve *c, size_t k)
{
	return c->size ? c->size[k] : k * c->step;
}

/*
 * What no estimate may contradict, as the distinct pages are counted
 * exactly: a cold start reads each of them once at least, and (for LRU)
 * a cache that holds them all misses nothing else. A sampled curve, whose
 * buckets are coarse and whose weights are estimates, is held to it. The
 * kernel model may read more than that (readahead), never less.
 */
double hs_curve_misses(const struct hs_curve *c, uint64_t cache_pages, bool rerun)
{
	uint64_t k = cache_pages / (c->step ? c->step : 1);
	double floor = rerun ? 0 : (double)c->pages, v;

	if (!c->n)
		return 0;
	if (c->sampled && !c->size && cache_pages >= c->pages)	/* LRU: nothing changes beyond */
		return floor;
	if (c->size) {	/* the last point at or below, by bisection; the first below them all */
		size_t lo = 0, hi = c->n;

		while (hi - lo > 1) {
			size_t mid = lo + (hi - lo) / 2;

			if (c->size[mid] <= cache_pages)
				lo = mid;
			else
				hi = mid;
		}
		k = lo;
	}
	if (k >= c->n)
		k = c->n - 1;
	v = rerun ? c->rerun[k] : c->cold[k];
	return v > floor ? v : floor;
}


const char *hs_curve_policy_name(enum hs_curve_policy p)
{
	return p == HS_CURVE_LRU ? "lru" : "kernel";
}

const char *hs_curve_model_name(const struct hs_curve *c)
{
	return hs_curve_policy_name(c->policy);
}

ptrdiff_t hs_curve_point(const struct hs_curve *c, uint64_t cache_pages)
{
	size_t lo = 0, hi = c->n;

	if (!c->size)	/* LRU: every step is a point */
		return cache_pages % c->step == 0 && cache_pages / c->step < c->n ?
		       (ptrdiff_t)(cache_pages / c->step) : -1;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->size[mid] < cache_pages)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < c->n && c->size[lo] == cache_pages ? (ptrdiff_t)lo : -1;
}

uint64_t hs_curve_even_size(const struct hs_curve *c, unsigned i, unsigned n)
{
	return n > 1 ? (uint64_t)((double)c->end * i / (n - 1) + 0.5) : c->end;
}

/* The point at which curve v first falls to at most limit (c->n: never). */
static size_t first_at_most(const struct hs_curve *c, const double *v, double limit)
{
	for (size_t k = 0; k < c->n; k++)
		if (v[k] <= limit)
			return k;
	return c->n;
}

/*
 * The size of point k (NEVER past the last); a sampled LRU one no more than
 * the working set (see hs_curve_misses()).
 */
static uint64_t size_at(const struct hs_curve *c, size_t k)
{
	uint64_t size = k < c->n ? hs_curve_size(c, k) : HS_CURVE_NEVER;

	return c->sampled && !c->size && size != HS_CURVE_NEVER && size > c->pages ? c->pages : size;
}

/*
 * The knee (see curve.h): from the highest point before the floor's (the
 * kernel model's cold start can read more with a small cache than with
 * none: readahead thrashing) to the floor's. The kernel model's point 0
 * is left out: with no cache there is no readahead either, and each
 * access reads its page, less than any cache reads, which would be the
 * curve's floor.
 */
static uint64_t knee_of(const struct hs_curve *c)
{
	size_t k0 = c->size && c->n > 1 && !c->size[0], floor_at = k0, top = k0;
	double least = c->cold[k0], best = 0, x0, x1;
	uint64_t knee;

	for (size_t k = k0 + 1; k < c->n; k++)
		least = c->cold[k] < least ? c->cold[k] : least;
	while (floor_at < c->n && c->cold[floor_at] > least + 0.5)
		floor_at++;
	for (size_t k = k0 + 1; k < floor_at; k++)
		if (c->cold[k] > c->cold[top])
			top = k;
	/* a gap of less than half an access is no fall (rounding) */
	if (c->cold[top] - c->cold[floor_at] < 0.5)
		return HS_CURVE_NEVER;
	knee = hs_curve_size(c, floor_at);
	x0 = (double)hs_curve_size(c, top);
	x1 = (double)hs_curve_size(c, floor_at);
	for (size_t k = top + 1; k < floor_at; k++) {
		double x = ((double)hs_curve_size(c, k) - x0) / (x1 - x0);
		double chord = c->cold[top] - (c->cold[top] - c->cold[floor_at]) * x;

		if (chord - c->cold[k] > best && chord - c->cold[k] >= 0.5) {
			best = chord - c->cold[k];
			knee = hs_curve_size(c, k);
		}
	}
	return c->sampled && !c->size && knee > c->pages ? c->pages : knee;
}

void hs_curve_summarize(const struct hs_curve *c, struct hs_curve_summary *s)
{
	double n = (double)c->accesses, least;

	memset(s, 0, sizeof(*s));
	if (!c->n || (c->sampled && !c->sampled_pages)) {	/* a sample of nothing */
		s->rerun_zero = s->rerun_floor = s->knee = HS_CURVE_UNKNOWN;
		s->rerun_hits90 = s->rerun_hits99 = s->cold_hits90 = s->cold_hits99 = HS_CURVE_UNKNOWN;
		return;
	}
	s->upto = c->complete ? UINT64_MAX : hs_curve_size(c, c->n - 1);
	least = c->rerun[0];
	for (size_t k = 1; k < c->n; k++)
		least = c->rerun[k] < least ? c->rerun[k] : least;
	/* half a page: a sample's scaled figures are not whole */
	s->rerun_zero = size_at(c, first_at_most(c, c->rerun, 0.5));
	s->rerun_floor = size_at(c, first_at_most(c, c->rerun, least + 0.5));
	s->rerun_hits90 = size_at(c, first_at_most(c, c->rerun, n * 0.1));
	s->rerun_hits99 = size_at(c, first_at_most(c, c->rerun, n * 0.01));
	/* a cold start hits at best the accesses that are not first ones */
	s->cold_hits90 = (double)c->pages <= n * 0.1 ?
		size_at(c, first_at_most(c, c->cold, n * 0.1)) : HS_CURVE_NEVER;
	s->cold_hits99 = (double)c->pages <= n * 0.01 ?
		size_at(c, first_at_most(c, c->cold, n * 0.01)) : HS_CURVE_NEVER;
	s->knee = knee_of(c);
}

uint64_t hs_curve_rerun_cache(const struct hs_curve *c, const struct hs_curve_summary *s)
{
	return s->rerun_floor < HS_CURVE_UNKNOWN ? s->rerun_floor : c->pages;
}
