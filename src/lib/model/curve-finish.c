/*
 * curve-finish.c - the LRU curves from what the builder counted
 * (curve-impl.h): hs_curve_finish() drains the accesses still queued,
 * counts the distances of the re-run's first accesses (those that are
 * not counted as the trace goes: curve.c's comment), rescales a sample's
 * weights and distances to the draw's own ratio, and turns the histogram
 * into the cold and re-run curves.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/curve-impl.h"

static int by_first(const void *x, const void *y, void *first)
{
	const uint32_t *f = first;
	uint32_t a = f[*(const uint32_t *)x], c = f[*(const uint32_t *)y];

	return a < c ? -1 : a > c;
}

/*
 * The second pass's first accesses: page p's distance is the pages that
 * are not nested in its lifetime (first access after p's, last before).
 * Adds their weights to rerun (rerun_cap buckets, zeroed beyond use).
 */
static int rerun_firsts(struct hs_curve_builder *b, double w, double **rerun, size_t *rerun_cap,
			size_t *rerun_len)
{
	size_t live = b->live, k = 0;
	uint32_t *order = malloc((live ? live : 1) * sizeof(*order));
	uint32_t *fen = calloc(live + 1, sizeof(*fen));
	/*
	 * Sampling: a distance here counts the other followed pages, out of
	 * live - 1 drawn for the distinct - 1 there are (known exactly), not
	 * 1/rate each: the draw's luck would otherwise move the step of a job
	 * that reads each page once (every distance distinct - 1) by about
	 * 1/sqrt(live) of the working set, a tenth with a hundred pages.
	 */
	double scale = b->sampling && live > 1 && b->distinct > 1 ?
		       (double)(b->distinct - 1) / (double)(live - 1) / (double)b->step : b->scale;
	int rc = 0;

	if (!order || !fen) {
		rc = -ENOMEM;
		goto out;
	}
	/* entries in the order of their first access; last[] are ranks now */
	if (!b->evicted && b->nfirst == live) {
		for (size_t e = 0; e < b->nent; e++)
			if (b->last[e] != NONE)
				order[b->first[e]] = (uint32_t)e;
	} else {
		for (size_t e = 0; e < b->nent; e++)
			if (b->last[e] != NONE)
				order[k++] = (uint32_t)e;
		qsort_r(order, live, sizeof(*order), by_first, b->first);
	}
	for (size_t i = live; i-- > 0;) {
		uint32_t e = order[i], r = b->last[e];
		uint64_t nested = 0;
		size_t bucket;

		for (size_t j = r; j > 0; j -= j & (0 - j))	/* inserted with an earlier last */
			nested += fen[j];
		for (size_t j = (size_t)r + 1; j <= live; j += j & (0 - j))
			fen[j]++;
		bucket = b->sampling ? (size_t)((double)(live - 1 - nested) * scale) : live - 1 - nested;
		if (bucket >= *rerun_len) {
			if ((rc = cv_grow_zeroed(rerun, rerun_cap, bucket + 1)))
				goto out;
			*rerun_len = bucket + 1;
		}
		(*rerun)[bucket] += w;
	}
out:
	free(order);
	free(fen);
	return rc;
}

/*
 * Sampling: the distances were scaled by 1/rate as they came; scale them
 * by the draw's own ratio instead, the other followed pages standing for
 * the distinct - 1 others there are (as rerun_firsts() does), so that the
 * largest distance, distinct - 1, is not moved by the draw's luck. A
 * bucket moves by its middle; none beyond the largest distance.
 */
static void rescale_distances(struct hs_curve_builder *b)
{
	size_t top, n = b->hist_len;
	double h;

	if (b->live < 2 || b->distinct < 2 || !n)
		return;
	h = (double)(b->distinct - 1) / (double)(b->live - 1) / b->weight;
	top = (size_t)((b->distinct - 1) / b->step);
	if (h == 1)
		return;
	if (h < 1) {	/* buckets move down: walk up */
		for (size_t k = 1; k < n; k++) {
			size_t to = (size_t)(((double)k + 0.5) * h);
			double v = b->hist[k];

			to = to > top ? top : to;
			b->hist[k] = 0;
			b->hist[to] += v;
		}
		return;
	}
	/* up: into a copy, the histogram grown to the top bucket */
	{
		double *old = malloc(n * sizeof(*old));

		if (!old || cv_grow_zeroed(&b->hist, &b->hist_cap, top + 1)) {
			free(old);
			return;	/* left as it was: scaled by 1/rate */
		}
		memcpy(old, b->hist, n * sizeof(*old));
		memset(b->hist, 0, n * sizeof(*old));
		for (size_t k = 0; k < n; k++) {
			size_t to = k ? (size_t)(((double)k + 0.5) * h) : 0;

			b->hist[to > top ? top : to] += old[k];
		}
		if (top + 1 > b->hist_len)
			b->hist_len = top + 1;
		free(old);
	}
}

int hs_curve_finish(struct hs_curve_builder *b, struct hs_curve *out)
{
	double *rerun = NULL, n_acc = (double)b->accesses, sum, drawn2 = 0, w;
	size_t rerun_cap = 0, rerun_len = 0, n;
	int rc;

	if ((rc = cv_drain(b)))
		return rc;
	cv_count_pending(b);
	if ((rc = cv_compact(b, 0)))
		return rc;
	/* the axis is not needed any more: give its memory back first */
	free(b->owner);
	free(b->bits);
	free(b->fen);
	b->owner = NULL, b->bits = NULL, b->fen = NULL;
	/*
	 * Sampling: each followed page stands for distinct / live pages (the
	 * pages are counted exactly), not 1/rate: weights by the draw's own
	 * ratio, so that a draw short of pages does not leave its deficit of
	 * accesses to SHARDS-adj, which would count them as hits at distance
	 * 0 (a scan, all misses, showed a tenth of them as hits at 10%).
	 */
	w = b->weight;	/* after cv_drain(): a fixed size may have lowered the threshold */
	if (b->sampling && b->live && b->distinct) {
		double g = (double)b->distinct / ((double)b->live * b->weight);

		for (size_t k = 0; k < b->hist_len; k++)
			b->hist[k] *= g;
		rescale_distances(b);
		b->cold *= g;
		b->drawn *= g;
		w *= g;
	}
	if ((rc = rerun_firsts(b, w, &rerun, &rerun_cap, &rerun_len))) {
		free(rerun);
		return rc;
	}
	/* SHARDS-adj: what the draw missed of the accesses, at distance 0 */
	if (b->sampling && b->accesses) {
		if ((rc = count(b, 0, n_acc - b->drawn)))
			goto fail;
		drawn2 = b->drawn - b->cold + (double)b->live * w;
	}
	n = (rerun_len > b->hist_len ? rerun_len : b->hist_len) + 1;
	if ((rc = cv_grow_zeroed(&rerun, &rerun_cap, n)) || (rc = cv_grow_zeroed(&b->hist, &b->hist_cap, n)))
		goto fail;
	if (b->sampling && b->accesses)
		rerun[0] += n_acc - drawn2;
	/* suffix sums: misses at k steps are the accesses of bucket k and beyond */
	sum = 0;
	for (size_t k = n; k-- > 0;) {
		sum += rerun[k] + b->hist[k];
		rerun[k] = sum < n_acc ? (sum > 0 ? sum : 0) : n_acc;
	}
	sum = b->cold;
	for (size_t k = n; k-- > 0;) {
		sum += b->hist[k];
		b->hist[k] = sum < n_acc ? (sum > 0 ? sum : 0) : n_acc;
	}
	b->hist[0] = rerun[0] = n_acc;	/* no cache: every access reads */
	memset(out, 0, sizeof(*out));
	out->policy = b->o.policy;
	out->accesses = b->accesses;
	out->pages = b->distinct;
	out->sampled = b->sampling;
	out->sample_rate = b->sampling ? 1 / b->weight : 1;
	out->sampled_pages = b->live;
	out->step = b->step;
	out->n = n;
	out->cold = b->hist;
	out->rerun = rerun;
	out->end = b->distinct;	/* LRU: a cache of them all misses nothing but first accesses */
	out->complete = true;
	b->hist = NULL;
	b->hist_cap = b->hist_len = 0;
	return 0;
fail:
	free(rerun);
	return rc;
}
