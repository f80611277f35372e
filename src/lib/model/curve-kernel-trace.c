/*
 * curve-kernel-trace.c - the kernel model's trace, decoded once
 * (curve-kernel-impl.h): the runs read from the trace, counted by block
 * and kept while the budget allows (the first pass); the blocks of the
 * sample drawn in order (the second pass keeps theirs); the pages to
 * follow, each kept run widened by its file's readahead reach, merged and
 * numbered. Why a sample, and why drawn in order: curve-kernel.c's
 * comment.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model/curve-kernel-impl.h"

/* ---- the trace, decoded once -------------------------------------------------- */

/* splitmix64's finaliser: a deterministic draw. */
static uint64_t mix(uint64_t x)
{
	x += UINT64_C(0x9e3779b97f4a7c15);
	x ^= x >> 30;
	x *= UINT64_C(0xbf58476d1ce4e5b9);
	x ^= x >> 27;
	x *= UINT64_C(0x94d049bb133111eb);
	return x ^ (x >> 31);
}

/*
 * The accesses a sample may keep: the budget spread over the simulations
 * of a search and their two passes, KEPT_MAX at most.
 */
static uint64_t keep_limit(const struct model *m)
{
	uint64_t budget = m->budget, n = m->accesses > m->expect ? m->accesses : m->expect;

	if (budget == UINT64_MAX)
		return UINT64_MAX;
	if (!budget)	/* the default, which grows with the trace */
		budget = n > HS_CURVE_KERNEL_STEPS / HS_CURVE_STEPS_PER_ACCESS ?
			 n * HS_CURVE_STEPS_PER_ACCESS : HS_CURVE_KERNEL_STEPS;
	return min_u64(budget / (2 * SEARCH_SIMS), KEPT_MAX);
}

static int keep_run(struct model *m, uint64_t file, uint64_t first, uint64_t k, uint64_t rest)
{
	if (hs_grow(&m->runs, &m->runs_cap, m->nruns + 1, sizeof(*m->runs)))
		return -ENOMEM;
	m->runs[m->nruns++] = (struct krun){
		first, (uint32_t)file, (uint32_t)k | (uint32_t)min_u64(rest, REQ_PAGES) << LEN_BITS,
	};
	m->kept += k;
	return 0;
}

/*
 * One run of the trace, cut at its blocks, each piece with the pages of
 * the run after it (what the request of its last pages asks for, as if
 * whole). The first pass counts each block's accesses and keeps every
 * piece while the budget allows (no sample then, no second pass); the
 * second keeps the pieces of the blocks drawn.
 */
int ck_model_add(struct model *m, uint64_t file, uint64_t first, uint64_t n)
{
	unsigned sh = m->mf[file].bshift;
	int rc;

	if (m->pass == 1)
		m->accesses += n;
	while (n) {
		uint64_t block = first >> sh, k = min_u64(n, ((block + 1) << sh) - first);
		uint64_t u = m->uoff[file] + block;

		k = min_u64(k, LEN_MAX);
		if (m->pass == 1)
			m->ucount[u] += k;
		if ((m->pass == 1 ? m->storing : (m->ukeep[u / 8] >> u % 8) & 1) &&
		    (rc = keep_run(m, file, first, k, n - k)))
			return rc;
		first += k;
		n -= k;
	}
	if (m->storing && m->kept > keep_limit(m)) {	/* too long to keep whole: a sample */
		m->storing = false;
		free(m->runs);
		m->runs = NULL;
		m->nruns = m->runs_cap = 0;
		m->kept = 0;
	}
	return 0;
}

/* A block of the sample, as the draw orders them. */
struct unit {
	uint64_t kind;		/* its file's flags and readahead window: the strata */
	uint64_t count;		/* its accesses */
	uint64_t id;
};

static int by_stratum(const void *a, const void *b)
{
	const struct unit *x = a, *y = b;

	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->count != y->count)	/* most accesses first */
		return x->count > y->count ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/*
 * Draw the sample's blocks, after the first pass: a share rate of the
 * blocks accessed, systematically along their order by how their files
 * are read (mapped, executed, O_DIRECT, the readahead window) and then by
 * accesses (every 1/rate-th, from a deterministic start), so that each
 * kind of file, and hot and cold blocks, are drawn in their proportions,
 * which a draw by hash alone leaves to luck: with a few hundred blocks,
 * the hot ones' share varied by a fifth, and the curve by as much. Then
 * the second pass keeps their runs. Returns 0 or -ENOMEM; whether the
 * pass is needed: m->pass == 2.
 */
int ck_draw_sample(struct model *m)
{
	double rate = m->rate, at;
	struct unit *order = NULL;
	size_t n = 0, f = 0;

	if (m->storing && !(m->rate > 0 && m->rate < 1))
		return 0;	/* all of it kept: no sample */
	if (!rate)
		rate = (double)keep_limit(m) / (double)(m->accesses ? m->accesses : 1);
	if (!(m->ukeep = calloc(m->nunits / 8 + 1, 1)) ||
	    !(order = malloc((m->nunits ? m->nunits : 1) * sizeof(*order)))) {
		free(order);
		return -ENOMEM;
	}
	for (uint64_t u = 0; u < m->nunits; u++) {
		while (u >= m->uoff[f + 1])	/* its file */
			f++;
		if (m->ucount[u])
			order[n++] = (struct unit){
				(uint64_t)(m->files[f].flags & (HS_FILE_MAPPED | HS_FILE_EXEC |
								HS_FILE_DIRECT)) << 48 |
				min_u64(m->files[f].read_ahead, (UINT64_C(1) << 48) - 1),
				m->ucount[u], u };
	}
	qsort(order, n, sizeof(*order), by_stratum);
	at = (double)(mix(n) >> 11) / 9007199254740992.0;	/* the start, in [0, 1) */
	for (size_t i = 0; i < n; i++) {
		if ((at += rate) < 1)
			continue;
		at -= 1;
		m->ukeep[order[i].id / 8] |= (uint8_t)(1 << order[i].id % 8);
	}
	if (n && rate < 1 / (double)n)	/* fewer than one: the first, rather than none */
		m->ukeep[order[0].id / 8] |= (uint8_t)(1 << order[0].id % 8);
	free(order);
	free(m->runs);
	m->runs = NULL;
	m->nruns = m->runs_cap = 0;
	m->kept = 0;
	m->storing = false;
	m->sampling = true;
	m->pass = 2;
	return 0;
}

int ck_model_init(struct model *m, const struct hs_curve_kfile *files, size_t nfiles,
		  const struct hs_curve_opts *o)
{
	memset(m, 0, sizeof(*m));
	m->files = files;
	m->nfiles = nfiles;
	m->budget = o->max_steps;
	m->pass = 1;
	m->storing = true;
	if (o->sample_rate > 0) {	/* the caller's sample (1: none), whatever it costs */
		m->rate = o->sample_rate;
		m->budget = UINT64_MAX;
	}
	if (nfiles > UINT32_MAX)
		return -E2BIG;
	if (!(m->mf = calloc(nfiles ? nfiles : 1, sizeof(*m->mf))) ||
	    !(m->uoff = malloc((nfiles + 1) * sizeof(*m->uoff))))
		return -ENOMEM;
	for (size_t f = 0; f < nfiles; f++) {
		uint64_t b = pow2_up(BLOCK_WINDOWS * files[f].read_ahead);

		b = b < BLOCK_MIN ? BLOCK_MIN : b;
		while (b >> m->mf[f].bshift > 1)
			m->mf[f].bshift++;
		/* at most 2^16 blocks a file, however large: a bounded table of them */
		while ((files[f].pages >> m->mf[f].bshift) >= (1 << 16))
			m->mf[f].bshift++;
		m->uoff[f] = m->nunits;
		m->nunits += (files[f].pages >> m->mf[f].bshift) + 1;
		m->mf[f].kind = (uint8_t)((files[f].flags & HS_FILE_MAPPED ? MAPPED : 0) |
					  (files[f].flags & HS_FILE_EXEC ? EXEC : 0));
	}
	m->uoff[nfiles] = m->nunits;
	if (!(m->ucount = calloc(m->nunits ? m->nunits : 1, sizeof(*m->ucount))))
		return -ENOMEM;
	return 0;
}

void ck_model_free(struct model *m)
{
	free(m->mf);
	free(m->spans);
	free(m->runs);
	free(m->uoff);
	free(m->ucount);
	free(m->ukeep);
}

struct ext {
	uint64_t file, lo, hi;
};

static int by_file_lo(const void *a, const void *b)
{
	const struct ext *x = a, *y = b;

	if (x->file != y->file)
		return x->file < y->file ? -1 : 1;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/*
 * The pages to follow: each kept run widened by its file's window (behind
 * it, and two ahead), merged, numbered; and the kept distinct pages.
 */
int ck_model_spans(struct model *m)
{
	struct ext *e = malloc((m->nruns ? m->nruns : 1) * sizeof(*e));
	uint8_t *seen = NULL;
	size_t n = 0, f = 0;
	uint64_t next_id = 0;
	int rc = -ENOMEM;

	if (!e)
		return -ENOMEM;
	for (size_t i = 0; i < m->nruns; i++) {
		const struct krun *r = &m->runs[i];
		const struct hs_curve_kfile *kf = &m->files[r->file];
		uint64_t w = kf->flags & HS_FILE_DIRECT ? 0 : kf->read_ahead, lo, hi;
		uint64_t end = r->first + (r->len & LEN_MAX);

		ck_limits(m, r->file, r->first, &lo, &hi);
		e[i].file = r->file;
		e[i].lo = r->first - lo > w ? r->first - w : lo;
		e[i].hi = min_u64(end + 2 * w, hi);
	}
	qsort(e, m->nruns, sizeof(*e), by_file_lo);
	for (size_t i = 0; i < m->nruns; i++) {	/* merged in place */
		if (n && e[n - 1].file == e[i].file && e[i].lo <= e[n - 1].hi) {
			if (e[i].hi > e[n - 1].hi)
				e[n - 1].hi = e[i].hi;
		} else {
			e[n++] = e[i];
		}
	}
	if (!(m->spans = malloc((n ? n : 1) * sizeof(*m->spans))))
		goto out;
	for (size_t i = 0; i < n; i++) {
		if (next_id + (e[i].hi - e[i].lo) > MAX_PAGES) {
			rc = -E2BIG;
			goto out;
		}
		while (f < e[i].file)
			m->mf[++f].s0 = i;
		m->spans[i] = (struct span){ e[i].lo, e[i].hi, (uint32_t)next_id };
		m->mf[f].ns++;
		next_id += e[i].hi - e[i].lo;
	}
	while (f + 1 < m->nfiles)
		m->mf[++f].s0 = n;
	m->nspans = n;
	m->npages = (uint32_t)next_id;
	/* the kept distinct pages */
	if (!(seen = calloc(m->npages / 8 + 1, 1)))
		goto out;
	for (size_t i = 0; i < m->nruns; i++) {
		const struct krun *r = &m->runs[i];
		const struct span *sp = m->spans + m->mf[r->file].s0;
		size_t lo = 0, hi = m->mf[r->file].ns;

		while (lo < hi) {	/* the span that holds the run */
			size_t mid = lo + (hi - lo) / 2;

			if (sp[mid].hi <= r->first)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (uint64_t j = 0, id = sp[lo].base + (r->first - sp[lo].lo);
		     j < (r->len & LEN_MAX); j++, id++) {
			m->kept_distinct += !(seen[id / 8] & (1u << id % 8));
			seen[id / 8] |= (uint8_t)(1u << id % 8);
		}
	}
	rc = 0;
out:
	free(seen);
	free(e);
	return rc;
}
