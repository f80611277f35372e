/*
 * curve-kernel.c - a model of Linux's page cache (the classic file LRU,
 * without MGLRU), and the search that simulates it at the few sizes that
 * tell its curve (see curve.h).
 *
 * What is modelled (mm/swap.c, mm/vmscan.c, mm/workingset.c,
 * mm/readahead.c), per cache of C pages:
 *
 *  - Lists. A page read from the disk enters the head of the inactive
 *    list. An access marks it referenced; an access to a referenced page
 *    on the inactive list moves it to the active list (folio_mark_accessed):
 *    the second access promotes. Pages of mapped files are only marked
 *    young at their fault (the hardware's accessed bit): at the inactive
 *    tail a young page is kept once (moved to the head, referenced), or
 *    activated if its file is executed (folio_check_references).
 *  - Reclaim. When the cache holds more than C pages, the active list's
 *    tail is deactivated (to the inactive head, its referenced bit kept)
 *    while the inactive list is low, inactive * ratio < active, with
 *    ratio int_sqrt(10 * GiB of the file lists), 1 below 1 GiB
 *    (inactive_is_low); else the inactive tail is evicted, leaving a
 *    shadow entry stamped with the lists' non-resident age (evictions and
 *    activations so far).
 *  - Refaults. A page read again whose shadow is younger than the active
 *    list is long (refault distance <= active pages; no swap, so anon
 *    pages do not count) enters the active list (workingset_refault).
 *  - Readahead, per file (a job opens each file once, mostly): a miss at
 *    page 0, or right after the previous access, reads a window of
 *    roundup_pow_of_two(req) * 4 (or * 2, or the maximum) pages, with a
 *    readahead mark at the first page past the request; a miss elsewhere
 *    reads only the request, unless the pages before it are cached (a
 *    stream the state lost), when it reads as many again. Reaching the
 *    mark reads the next window, 4 or 2 times larger, up to the device's
 *    read_ahead_kb (get_init_ra_size, get_next_ra_size,
 *    page_cache_sync_ra, page_cache_async_ra). A fault in a mapped file
 *    reads around it: the window centred on the page, with a mark a
 *    quarter from its end (do_sync_mmap_readahead), until the file's
 *    mmap_miss passes MMAP_LOTSAMISS: faults that found their page
 *    missing count it up (to ten times that), faults that found it cached
 *    count it down (do_async_mmap_readahead), and past it a fault reads
 *    its page alone, read-around only hurting a file that misses much
 *    more than it hits. Fault-around, which maps cached pages next to a
 *    fault and counts them down too, is not modelled as such: the trace
 *    holds the pages a mapping faulted in, once per mapping, in runs, and
 *    a run's pages after the first count as faults that found their page.
 *    The request (req) is
 *    the rest of the trace's run, at most REQ_PAGES: the trace merges
 *    consecutive reads, so a read's own size is lost. O_DIRECT files are
 *    read from the disk at every access and never cached.
 *
 * Pages read count, pass by pass: the first pass is the cold start, the
 * second (the lists as the first left them) the re-run.
 *
 * Not modelled: large folios (the kernel may cache a file in pieces
 * larger than a page), the per-CPU batches that delay list moves, the
 * scan of the active list that refaults also trigger, and anything else
 * in the cgroup (see docs/curve-kernel.md for how far that takes it).
 *
 * The pages followed are those within reach of the accesses: each run's
 * pages widened by the readahead window behind it and two ahead (a window
 * and the one its mark reads), numbered densely per file (spans).
 *
 * THE SEARCH. The policy has no inclusion property (a larger cache can
 * read more: readahead), so no single pass gives every size, as Mattson's
 * stack distances do for LRU: a size is a simulation of its own, two
 * passes of the trace. Simulating 101 sizes evenly up to the working set
 * (what this file did first) cost 101 simulations, stopped short of the
 * sizes where readahead is done reading, and drew nothing between. What is
 * simulated now, each round's sizes side by side on the processors, every
 * simulation its own lists over the one decoded trace:
 *
 *  1. Room for everything: a cache of all the pages followed, which
 *     nothing ever leaves. What its two passes read, U, is all that ever
 *     enters a cache: from U on nothing is evicted and no size reads less,
 *     so the curves end there (the point U is that simulation's).
 *  2. GRID sizes evenly up to U, and the working set M.
 *  3. Between the two neighbouring points that differ most (in either
 *     curve), the size half-way, REFINE times at most and while they
 *     differ by more than a 64th of the larger of N (the accesses) and U:
 *     points where the curve bends, few where it is flat. Coarse to fine
 *     rather than bisection of every feature: the curve is monotone in
 *     practice, bar readahead's bumps below the working set.
 *  4. The least size at which each curve reaches its floor (most often,
 *     the re-run reading nothing): between the least point that does and
 *     the point before it, sizes evenly (as many as threads) until the two
 *     are within U / RES of each other. The headline figures are points
 *     simulated, never read between points.
 *
 * About 40 simulations, where 101 were (or 101 more for --points 101,
 * which asks for its sizes besides).
 *
 * SAMPLING. The cost is the simulations times the accesses. Beyond a
 * budget of simulated accesses (max_steps: HS_CURVE_KERNEL_STEPS, or
 * HS_CURVE_STEPS_PER_ACCESS per access of a longer trace), the model
 * simulates a spatial sample, as miniature simulations do (Waldspurger et
 * al., "Cache Modeling and Optimization using Miniature Simulations",
 * ATC '17): each size C as a cache of C * R pages over the sample, R being
 * the ratio of the sample's distinct pages to the trace's (known exactly:
 * a bitmap of the trace's pages), and what it reads scaled by 1 / R.
 *
 *  - What is drawn: blocks of a file (BLOCK_WINDOWS readahead windows, at
 *    least BLOCK_MIN pages: most files are one), not pages, so that a
 *    stream or a read-around within a block stays one; readahead is
 *    clipped to the block, whose neighbours are not simulated. The blocks
 *    are large since the clipping biases the curve by the share of a
 *    block within a window of its edges: a random reader's curve, drawn
 *    in blocks of 4 windows, was 17% of the working set off, 2% in blocks
 *    of 32.
 *  - How: the trace is read twice. The first pass counts each block's
 *    accesses (and keeps every run, while that stays within the budget:
 *    a short trace is simulated whole, the second pass not made); then
 *    the blocks are drawn systematically, every 1/rate-th along their
 *    order by how their files are read and by accesses (draw_sample());
 *    the second pass keeps the runs of the blocks drawn. A draw by hash
 *    alone, the first way this was done, left to luck the share of hot
 *    blocks and of mapped files, with a few hundred blocks a fifth either
 *    way, and the curve as much: the test-curve.c traces of a random
 *    reader whose hot fifth of the files takes nine accesses in ten, and
 *    of a mix of mapped and read files, were 14% and 21% off (of the
 *    working set, or of what is read where that is more); drawn in order,
 *    2% and 0.2%.
 *
 * The error this costs is measured in docs/curve-kernel.md and held to a
 * bound by tests/unit/test-curve.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "model/curve-kernel.h"
#include "model/trace.h"

#define NIL UINT32_MAX
#define MAX_PAGES (UINT64_C(1) << 31)
#define REQ_PAGES 32		/* a read's request: 128 KiB, cat's and most tools' buffer */
#define DEFAULT_RA_KB 128	/* VM_READAHEAD_PAGES, where a device says nothing */
#define MMAP_LOTSAMISS 100	/* mm/filemap.c: past it, no mmap read-around */
#define LEN_BITS 26		/* a kept run: its pages below, what follows it above */
#define LEN_MAX ((UINT32_C(1) << LEN_BITS) - 1)
#define GRID 8			/* the first sizes, evenly up to U */
#define REFINE 16		/* sizes where the curve bends, at most */
#define RES 4096		/* the floors' sizes found to U / RES */
#define SEARCH_SIMS 40		/* about what a search simulates: to size the sample */
#define BLOCK_WINDOWS 32	/* a block of the sample: readahead windows */
#define BLOCK_MIN 1024		/* pages */
#define MAX_THREADS 4
#define KEPT_MAX (UINT64_C(1) << 22)	/* accesses kept at most (memory), whatever the budget */
#define PROGRESS_EVERY 65536	/* accesses between two reports */

enum { INACTIVE, ACTIVE };
enum {
	RESIDENT = 1 << 0,
	ON_ACTIVE = 1 << 1,
	REFERENCED = 1 << 2,
	MARK = 1 << 3,		/* PG_readahead */
	YOUNG = 1 << 4,		/* mapped: accessed since reclaim last looked */
	MAPPED = 1 << 5,	/* of a mapped file: kept across simulations */
	EXEC = 1 << 6,		/* of an executed file: the same */
};
#define KIND (MAPPED | EXEC)

/* ---- the trace, decoded once -------------------------------------------------- */

struct span {
	uint64_t lo, hi;	/* pages lo .. hi - 1 of the file */
	uint32_t base;		/* the id of page lo */
};

/* A run of the trace as kept: pages first .. first + n - 1 of a file. */
struct krun {
	uint64_t first;
	uint32_t file;
	uint32_t len;		/* n (LEN_BITS), then the pages of the trace's run after these */
};

struct mfile {
	size_t s0, ns;		/* its spans */
	unsigned bshift;	/* its blocks of the sample: 2^bshift pages */
	uint8_t kind;		/* MAPPED, EXEC */
};

/*
 * What every simulation reads and none writes: the files, the pages
 * followed, the kept runs, the sample.
 */
struct model {
	const struct hs_curve_kfile *files;
	size_t nfiles;
	struct mfile *mf;
	struct span *spans;
	size_t nspans;
	uint32_t npages;	/* pages followed: ids 0 .. npages - 1 */
	struct krun *runs;
	size_t nruns, runs_cap;
	uint64_t accesses;	/* N: the trace's, kept or not */
	uint64_t kept;		/* the accesses of runs[] */
	uint64_t distinct;	/* M: distinct pages of the trace */
	uint64_t kept_distinct;	/* of runs[] */
	uint64_t budget;	/* simulated accesses allowed; 0: the default; UINT64_MAX: no bound */
	uint64_t expect;	/* the accesses the trace has at least (its lines), before they are read */
	double rate;		/* a sample's rate the caller asked for; 0: the budget's */
	/* the blocks of the sample: file f's are units uoff[f] .. uoff[f + 1] - 1 */
	uint64_t *uoff, nunits;
	uint64_t *ucount;	/* accesses to each, counted by the first pass */
	uint8_t *ukeep;		/* the second pass's: a bit a block, kept or not */
	int pass;		/* 1: every run counted, kept while the budget allows; 2: the sample */
	bool storing;		/* the first pass still keeps every run */
	bool sampling;		/* the runs are the sample's (the second pass's) */
	double ratio;		/* kept_distinct / distinct: the sample's share */
};

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

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static uint64_t pow2_up(uint64_t x)
{
	uint64_t p = 1;

	while (p < x)
		p <<= 1;
	return p;
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
static int model_add(struct model *m, uint64_t file, uint64_t first, uint64_t n)
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
static int draw_sample(struct model *m)
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

static int model_init(struct model *m, const struct hs_curve_kfile *files, size_t nfiles,
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

static void model_free(struct model *m)
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

/* The first page and the end of the readahead's reach at page pg of file f. */
static void limits(const struct model *m, size_t f, uint64_t pg, uint64_t *lo, uint64_t *hi)
{
	unsigned sh = m->mf[f].bshift;

	*lo = 0;
	*hi = m->files[f].pages;
	if (m->sampling) {	/* the block: the pages beyond are another block's */
		*lo = pg >> sh << sh;
		*hi = min_u64(*hi, *lo + ((uint64_t)1 << sh));
	}
}

/*
 * The pages to follow: each kept run widened by its file's window (behind
 * it, and two ahead), merged, numbered; and the kept distinct pages.
 */
static int model_spans(struct model *m)
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

		limits(m, r->file, r->first, &lo, &hi);
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

/* ---- one simulation ------------------------------------------------------------ */

struct ra {
	/* file_ra_state: the window, its mark, the last page accessed */
	uint64_t start, size, async, prev;
	size_t hint;		/* the span the last lookup found */
	unsigned mmap_miss;	/* faults that missed, less those that hit */
	bool have_prev;
};

struct sim {
	const struct model *m;
	struct ra *ra;		/* per file */
	uint32_t *prev, *next;	/* the lists: ids, then the two heads */
	uint8_t *flags;
	uint64_t *shadow;	/* the non-resident age at eviction, + 1; 0: none */
	uint64_t count[2], age, cap, reads;
	double gib_per_page;	/* of the cache simulated (a sample's stands for more) */
	uint64_t last_gb, last_ratio;
	uint64_t lim_lo, lim_hi;	/* readahead's reach at the access made */
};

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

static int sim_alloc(struct sim *s, const struct model *m)
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

static void sim_free(struct sim *s)
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

/* The work of a round of simulations, shared by its threads. */
struct round {
	const struct hs_curve_opts *o;
	const uint64_t *caps;	/* the caches to simulate, in pages of the sample */
	uint64_t (*reads)[2];	/* what each read, cold and re-run */
	size_t n, next;		/* next: the next to take (atomic) */
	uint64_t done;		/* accesses simulated (atomic), of the whole search */
	uint64_t total;		/* of the whole search, an estimate */
};

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

		limits(m, r->file, r->first, &s->lim_lo, &s->lim_hi);
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

struct worker {
	struct round *rd;
	struct sim sim;
	bool main;
	pthread_t tid;
};

static void *work(void *arg)
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

/* ---- the search -------------------------------------------------------------------- */

struct point {
	uint64_t size;		/* pages of the cache emulated */
	double cold, rerun;	/* pages read, scaled back from the sample */
};

struct search {
	struct model *m;
	const struct hs_curve_opts *o;
	struct worker *w;	/* w[0] is the calling thread */
	unsigned nw, started;
	struct round rd;	/* the progress of every round */
	struct point *pts;
	size_t npts, pts_cap;
	uint64_t inf[2];	/* what the passes read with room for everything (sample pages) */
	bool have_inf;
	uint64_t u;		/* U: the pages that ever enter a cache */
	uint64_t res;		/* the floors' sizes found to within this */
};

static ptrdiff_t find(const struct search *s, uint64_t size)
{
	for (size_t i = 0; i < s->npts; i++)
		if (s->pts[i].size == size)
			return (ptrdiff_t)i;
	return -1;
}

static int by_size(const void *a, const void *b)
{
	const struct point *x = a, *y = b;

	return x->size < y->size ? -1 : x->size > y->size;
}

/* The cache that stands for size pages in the sample's simulations. */
static uint64_t sample_cap(const struct model *m, uint64_t size)
{
	uint64_t cap;

	if (!m->sampling)
		return size;
	cap = (uint64_t)((double)size * m->ratio + 0.5);
	return cap ? cap : 1;
}

static int add_point(struct search *s, uint64_t size, double cold, double rerun)
{
	if (find(s, size) >= 0)
		return 0;
	if (hs_grow(&s->pts, &s->pts_cap, s->npts + 1, sizeof(*s->pts)))
		return -ENOMEM;
	s->pts[s->npts++] = (struct point){ size, cold, rerun };
	return 0;
}

/*
 * Simulate sizes[0 .. n) (pages; 0 and sizes already simulated are not
 * simulated again) on the workers, the calling thread one of them; the
 * points join s->pts, kept sorted. A cache that holds all the passes read
 * with room for everything evicts nothing: its point is that
 * simulation's, not simulated again. inf: simulate room for everything
 * instead (n is 1), into s->inf.
 */
static int simulate(struct search *s, const uint64_t *sizes, size_t n, bool inf)
{
	const struct model *m = s->m;
	uint64_t *caps = malloc((n ? n : 1) * sizeof(*caps)), *want = malloc((n ? n : 1) * sizeof(*want));
	uint64_t (*reads)[2] = malloc((n ? n : 1) * sizeof(*reads));
	size_t k = 0;
	unsigned threads;
	int rc = -ENOMEM;

	if (!caps || !want || !reads)
		goto out;
	rc = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t cap = inf ? m->npages : sample_cap(m, sizes[i]);
		bool again = !inf && find(s, sizes[i]) >= 0;

		for (size_t j = 0; j < k && !again; j++)
			again = want[j] == sizes[i];
		if (again)
			continue;
		if (!inf && !sizes[i])	/* no cache, no readahead: every access reads */
			rc = add_point(s, 0, (double)m->accesses, (double)m->accesses);
		else if (!inf && s->have_inf && cap >= s->inf[0] + s->inf[1])
			rc = add_point(s, sizes[i], (double)s->inf[0] / m->ratio,
				       (double)s->inf[1] / m->ratio);
		else
			want[k] = sizes[i], caps[k++] = cap;
		if (rc)
			goto out;
	}
	threads = k < s->nw ? (unsigned)k : s->nw;
	for (; s->started < threads; s->started++)	/* a worker's lists, made once */
		if ((rc = sim_alloc(&s->w[s->started].sim, m))) {
			sim_free(&s->w[s->started].sim);
			goto out;
		}
	s->rd.caps = caps;
	s->rd.reads = reads;
	s->rd.n = k;
	s->rd.next = 0;
	for (unsigned t = 1; t < threads; t++) {
		s->w[t].rd = &s->rd;
		if (pthread_create(&s->w[t].tid, NULL, work, &s->w[t])) {
			threads = t;	/* fewer, then: the others take its share */
			break;
		}
	}
	s->w[0].rd = &s->rd;
	s->w[0].main = true;
	work(&s->w[0]);
	for (unsigned t = 1; t < threads; t++)
		pthread_join(s->w[t].tid, NULL);
	rc = 0;
	if (inf && k) {
		s->inf[0] = reads[0][0];
		s->inf[1] = reads[0][1];
		s->have_inf = true;
	}
	for (size_t i = 0; i < k && !inf && !rc; i++)
		rc = add_point(s, want[i], (double)reads[i][0] / m->ratio,
			       (double)reads[i][1] / m->ratio);
	if (s->npts)
		qsort(s->pts, s->npts, sizeof(*s->pts), by_size);
out:
	free(caps);
	free(want);
	free(reads);
	return rc;
}

/* The least of curve rerun (or cold) over the points. */
static double floor_of(const struct search *s, bool rerun)
{
	double v = s->npts ? (rerun ? s->pts[0].rerun : s->pts[0].cold) : 0;

	for (size_t i = 1; i < s->npts; i++)
		if ((rerun ? s->pts[i].rerun : s->pts[i].cold) < v)
			v = rerun ? s->pts[i].rerun : s->pts[i].cold;
	return v;
}

/* The first point at which the curve is at most v + half a page (rounding). */
static size_t first_at(const struct search *s, bool rerun, double v)
{
	for (size_t i = 0; i < s->npts; i++)
		if ((rerun ? s->pts[i].rerun : s->pts[i].cold) <= v + 0.5)
			return i;
	return s->npts;
}

/* Step 3: half-way between the neighbours that differ most, while they differ. */
static int refine(struct search *s)
{
	double tol = (double)(s->m->accesses > s->u ? s->m->accesses : s->u) / 64;
	int rc = 0;

	for (unsigned added = 0; added < REFINE && !rc;) {
		uint64_t mid[MAX_THREADS];
		double gap[MAX_THREADS] = { 0 };
		unsigned n = 0;

		/* the nw largest differences, each above tol, between points far enough apart */
		for (size_t i = 1; i < s->npts; i++) {
			const struct point *a = &s->pts[i - 1], *b = &s->pts[i];
			double d = b->cold > a->cold ? b->cold - a->cold : a->cold - b->cold;
			double e = b->rerun > a->rerun ? b->rerun - a->rerun : a->rerun - b->rerun;
			unsigned j;

			d = d > e ? d : e;
			/* not down to no cache: a cache smaller than a readahead window thrashes */
			if (d <= tol || b->size - a->size < 2 * s->res || !a->size)
				continue;
			for (j = n < s->nw ? n++ : s->nw; j > 0 && gap[j - 1] < d; j--)
				if (j < s->nw)
					gap[j] = gap[j - 1], mid[j] = mid[j - 1];
			if (j < s->nw)
				gap[j] = d, mid[j] = a->size + (b->size - a->size) / 2;
		}
		if (!n)
			break;
		rc = simulate(s, mid, n, false);
		added += n;
	}
	return rc;
}

/*
 * Step 4: the least size at which a curve reaches v: between the least
 * point that does and the one before, until they are res apart.
 */
static int bisect(struct search *s, bool rerun, double v)
{
	int rc = 0;

	for (;;) {
		size_t z = first_at(s, rerun, v);
		uint64_t lo, hi, mid[MAX_THREADS];
		unsigned n;

		if (z == 0 || z == s->npts)
			return 0;
		lo = s->pts[z - 1].size;
		hi = s->pts[z].size;
		if (hi - lo <= s->res)
			return 0;
		n = hi - lo - 1 < s->nw ? (unsigned)(hi - lo - 1) : s->nw;
		for (unsigned i = 0; i < n; i++)
			mid[i] = lo + (hi - lo) * (i + 1) / (n + 1);
		if ((rc = simulate(s, mid, n, false)))
			return rc;
	}
}

static unsigned processors(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : n > MAX_THREADS ? MAX_THREADS : (unsigned)n;
}

/* The search (or the sizes of o alone), into out. */
static int search(struct model *m, const struct hs_curve_opts *o, struct hs_curve *out)
{
	struct search s = { .m = m, .o = o, .nw = processors() };
	uint64_t size, *even = NULL;
	double *cold = NULL, *rerun = NULL;
	uint64_t *sizes = NULL;
	int rc = -ENOMEM;

	if (!(s.w = calloc(s.nw, sizeof(*s.w))))
		return -ENOMEM;
	s.rd.o = o;
	s.rd.total = (uint64_t)SEARCH_SIMS * 2 * m->kept + (o->sizes_only ? 0 : 2 * m->kept *
		     (o->nsizes + o->points));
	/* 1: room for everything */
	size = 1;
	if ((rc = simulate(&s, &size, 1, true)))
		goto out;
	/*
	 * U: with a cache as large as what the two passes read, nothing is
	 * evicted: that cache's point is this one. In the sample, U's cache is
	 * U * ratio rounded, at least what was read (sample_cap()).
	 */
	s.u = (uint64_t)((double)(s.inf[0] + s.inf[1]) / m->ratio + 0.999999);
	if (s.u < m->distinct)
		s.u = m->distinct;
	s.res = s.u / RES;
	if (m->sampling && s.res < (uint64_t)(1 / m->ratio))
		s.res = (uint64_t)(1 / m->ratio);
	s.res = s.res ? s.res : 1;
	if (!o->sizes_only) {
		uint64_t grid[GRID + 2];

		grid[0] = s.u;
		for (unsigned i = 1; i < GRID; i++)	/* 2: evenly, and the working set */
			grid[i] = s.u * i / GRID;
		grid[GRID] = m->distinct;
		grid[GRID + 1] = 0;
		if ((rc = simulate(&s, grid, GRID + 2, false)) || (rc = refine(&s)) ||	/* 3 */
		    (rc = bisect(&s, true, floor_of(&s, true))) ||				/* 4 */
		    (rc = bisect(&s, false, floor_of(&s, false))))
			goto out;
	}
	if (o->nsizes && (rc = simulate(&s, o->sizes, o->nsizes, false)))
		goto out;
	/* the curve's end: where both curves are at their floors */
	out->complete = !o->sizes_only || (s.npts && s.pts[s.npts - 1].size >= s.u);
	if (out->complete) {
		size_t a = first_at(&s, true, floor_of(&s, true)), b = first_at(&s, false, floor_of(&s, false));

		out->end = s.npts ? s.pts[a > b ? a : b].size : 0;
	} else {
		out->end = s.npts ? s.pts[s.npts - 1].size : 0;
	}
	if (out->end < m->distinct && out->complete)
		out->end = m->distinct;
	if (o->points > 1 && !o->sizes_only) {
		if (!(even = malloc(o->points * sizeof(*even))))
			goto nomem;
		for (unsigned i = 0; i < o->points; i++)
			even[i] = (uint64_t)((double)out->end * i / (o->points - 1) + 0.5);
		if ((rc = simulate(&s, even, o->points, false)))
			goto out;
	}
	if (!(sizes = malloc((s.npts ? s.npts : 1) * sizeof(*sizes))) ||
	    !(cold = malloc((s.npts ? s.npts : 1) * sizeof(*cold))) ||
	    !(rerun = malloc((s.npts ? s.npts : 1) * sizeof(*rerun))))
		goto nomem;
	for (size_t i = 0; i < s.npts; i++) {
		sizes[i] = s.pts[i].size;
		cold[i] = s.pts[i].cold;
		rerun[i] = s.pts[i].rerun;
	}
	out->n = s.npts;
	out->size = sizes;
	out->cold = cold;
	out->rerun = rerun;
	sizes = NULL;
	cold = rerun = NULL;
	rc = 0;
	goto out;
nomem:
	rc = -ENOMEM;
out:
	for (unsigned t = 0; t < s.started; t++)
		sim_free(&s.w[t].sim);
	free(s.w);
	free(s.pts);
	free(even);
	free(sizes);
	free(cold);
	free(rerun);
	return rc;
}

/* The curves of a model whose runs are all added. */
static int model_curve(struct model *m, const struct hs_curve_opts *o, struct hs_curve *out)
{
	int rc;

	if ((rc = model_spans(m)))
		return rc;
	m->ratio = m->sampling && m->distinct ? (double)m->kept_distinct / (double)m->distinct : 1;
	if (m->ratio <= 0 || m->ratio > 1)
		m->ratio = 1;
	memset(out, 0, sizeof(*out));
	if ((rc = search(m, o, out)))
		return rc;
	out->policy = HS_CURVE_KERNEL;
	out->accesses = m->accesses;
	out->pages = m->distinct;
	out->sampled = m->sampling;
	out->sample_rate = m->ratio;
	out->sampled_pages = m->kept_distinct;
	out->step = 1;
	for (size_t f = 0; f < m->nfiles; f++)
		if (m->files[f].read_ahead > out->read_ahead_pages)
			out->read_ahead_pages = m->files[f].read_ahead;
	return 0;
}

static int by_file_first(const void *a, const void *b)
{
	const struct hs_curve_krun *x = a, *y = b;

	if (x->file != y->file)
		return x->file < y->file ? -1 : 1;
	return x->first < y->first ? -1 : x->first > y->first;
}

/* The distinct pages of runs: the union of their ranges, file by file. */
static int distinct_of(const struct hs_curve_krun *runs, size_t nruns, uint64_t *out)
{
	struct hs_curve_krun *r = malloc((nruns ? nruns : 1) * sizeof(*r));
	uint64_t n = 0, end = 0;

	if (!r)
		return -ENOMEM;
	if (nruns)
		memcpy(r, runs, nruns * sizeof(*r));
	qsort(r, nruns, sizeof(*r), by_file_first);
	for (size_t i = 0; i < nruns; i++) {
		uint64_t lo = r[i].first, hi = r[i].first + r[i].n;

		if (!i || r[i].file != r[i - 1].file)
			end = 0;	/* a file's first run */
		if (lo < end)
			lo = end;
		if (hi > lo) {
			n += hi - lo;
			end = hi;
		}
	}
	free(r);
	*out = n;
	return 0;
}

int hs_curve_kernel(const struct hs_curve_kfile *files, size_t nfiles,
		    const struct hs_curve_krun *runs, size_t nruns, const struct hs_curve_opts *o,
		    struct hs_curve *out)
{
	struct model m;
	int rc;

	memset(out, 0, sizeof(*out));
	if (o->policy != HS_CURVE_KERNEL)
		return -EINVAL;
	for (size_t i = 0; i < nruns; i++)
		if (runs[i].file >= nfiles || runs[i].first >= files[runs[i].file].pages ||
		    runs[i].n > files[runs[i].file].pages - runs[i].first)
			return -EINVAL;
	if ((rc = model_init(&m, files, nfiles, o)))
		goto out;
	if ((rc = distinct_of(runs, nruns, &m.distinct)))
		goto out;
	for (size_t i = 0; i < nruns && !rc; i++)
		rc = model_add(&m, runs[i].file, runs[i].first, runs[i].n);
	if (!rc && !(rc = draw_sample(&m)) && m.pass == 2)	/* the sample's runs */
		for (size_t i = 0; i < nruns && !rc; i++)
			rc = model_add(&m, runs[i].file, runs[i].first, runs[i].n);
	if (!rc)
		rc = model_curve(&m, o, out);
out:
	model_free(&m);
	if (rc)
		hs_curve_release(out);
	return rc;
}

/* ---- from a profile -------------------------------------------------------------------- */

struct ra_dev {
	uint64_t dev, pages;
};

/* The read_ahead_kb of device dev (its disk's, for a partition), in pages. */
static uint64_t device_ra(uint64_t dev, uint32_t ps, struct ra_dev **cache, size_t *n, size_t *cap)
{
	/* a disk; a partition's disk; a backing device that is no block device */
	static const char *const dir[] = { "/sys/dev/block", "/sys/dev/block", "/sys/class/bdi" };
	static const char *const sub[] = { "queue/", "../queue/", "" };
	unsigned long kb = DEFAULT_RA_KB;

	for (size_t i = 0; i < *n; i++)
		if ((*cache)[i].dev == dev)
			return (*cache)[i].pages;
	for (size_t i = 0; i < sizeof(dir) / sizeof(dir[0]); i++) {
		char path[96];
		FILE *f;

		snprintf(path, sizeof(path), "%s/%u:%u/%sread_ahead_kb", dir[i], major(dev),
			 minor(dev), sub[i]);
		if ((f = fopen(path, "re"))) {
			int ok = fscanf(f, "%lu", &kb) == 1;

			fclose(f);
			if (ok)
				break;
			kb = DEFAULT_RA_KB;
		}
	}
	if (!hs_grow(cache, cap, *n + 1, sizeof(**cache)))
		(*cache)[(*n)++] = (struct ra_dev){ dev, kb * 1024 / ps };
	return kb * 1024 / ps;
}

/* The files of the profile's file lines, as the model takes them. */
static int read_files(struct hs_profile_reader *r, const struct hs_curve_opts *o,
		      struct hs_curve_kfile **out, size_t *nout, struct hs_error *err)
{
	struct hs_curve_kfile *files = NULL;
	struct ra_dev *devs = NULL;
	size_t nfiles = 0, files_cap = 0, ndevs = 0, devs_cap = 0;
	uint32_t ps = hs_profile_header(r)->page_size;
	struct hs_profile_item it;
	int rc;

	hs_profile_rewind(r);
	while ((rc = hs_profile_next(r, &it, err)) > 0 && it.kind != HS_ITEM_TRACE) {
		const struct hs_profile_file *pf = &it.file;
		struct hs_curve_kfile *kf;
		uint64_t pages = (pf->id.size + ps - 1) / ps;

		if (it.kind != HS_ITEM_FILE)
			continue;
		if (hs_grow(&files, &files_cap, nfiles + 1, sizeof(*files))) {
			rc = hs_error_set(err, ENOMEM, "out of memory");
			break;
		}
		kf = &files[nfiles++];
		for (size_t i = 0; i < pf->nranges; i++)	/* a file that shrank since */
			if (pf->ranges[i].last >= pages)
				pages = pf->ranges[i].last + 1;
		kf->pages = pages;
		/* a file only mapped faults; one also read is read (and maps, a little) */
		kf->flags = pf->flags & HS_FILE_READ ? pf->flags & ~(unsigned)HS_FILE_MAPPED : pf->flags;
		kf->read_ahead = o->read_ahead_pages != HS_CURVE_RA_DEVICE ? o->read_ahead_pages
			: device_ra(pf->id.dev, ps, &devs, &ndevs, &devs_cap);
	}
	free(devs);
	if (rc < 0) {
		free(files);
		return rc;
	}
	*out = files;
	*nout = nfiles;
	return 0;
}

/*
 * The distinct pages of the trace are counted in a bitmap of the trace's
 * ids (the file lines' pages) up to this many; beyond, the file lines'
 * pages are taken for them, which is what a profile's are.
 */
#define BITMAP_MAX_PAGES (UINT64_C(1) << 31)

/* One pass of the profile's trace into the model (the first also counts its distinct pages). */
static int read_trace(struct hs_profile_reader *r, struct model *m, const struct hs_curve_opts *o,
		      struct hs_error *err)
{
	struct hs_trace *t = NULL;
	uint64_t *seen = NULL, file, page, id, n, runs = 0;
	int rc;

	if ((rc = hs_trace_open(r, &t, err)))
		return rc;
	if (m->pass == 1 && hs_trace_pages(t) <= BITMAP_MAX_PAGES &&
	    !(seen = calloc(hs_trace_pages(t) / 64 + 1, sizeof(*seen)))) {
		rc = -ENOMEM;
		goto fail;
	}
	while ((rc = hs_trace_next_in_file(t, &file, &page, &id, &n, err)) > 0) {
		if (file >= m->nfiles || page >= m->files[file].pages ||
		    n > m->files[file].pages - page) {
			rc = -EINVAL;	/* the file lines and the trace reader disagree: cannot be */
			goto fail;
		}
		for (uint64_t i = id; seen && i < id + n; i++) {
			m->distinct += !(seen[i / 64] & (UINT64_C(1) << i % 64));
			seen[i / 64] |= UINT64_C(1) << i % 64;
		}
		if ((rc = model_add(m, file, page, n)))
			goto fail;
		if (o->progress && !(++runs % PROGRESS_EVERY))
			o->progress(o->progress_arg, m->pass == 1 ? "reading" : "sampling", runs,
				    m->pass == 1 ? 0 : m->expect);
	}
	if (rc < 0)
		goto out;
	if (m->pass == 1 && !seen)
		m->distinct = hs_trace_pages(t);
	goto out;
fail:
	hs_error_set(err, -rc, "%s", strerror(-rc));
out:
	free(seen);
	hs_trace_close(t);
	return rc;
}

int hs_curve_kernel_from_profile(struct hs_profile_reader *r, const struct hs_curve_opts *o,
				 struct hs_curve *out, struct hs_error *err)
{
	struct hs_curve_kfile *files = NULL;
	size_t nfiles = 0;
	struct model m = { 0 };
	bool inited = false;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = read_files(r, o, &files, &nfiles, err)))
		return rc;
	if ((rc = model_init(&m, files, nfiles, o)))
		goto fail;
	inited = true;
	m.expect = hs_profile_totals(r)->trace_lines;	/* a run a line at least */
	if ((rc = read_trace(r, &m, o, err)))
		goto out;
	if (!m.accesses) {
		rc = hs_error_set(err, ENODATA, "the profile has no access trace");
		goto out;
	}
	if ((rc = draw_sample(&m)))
		goto fail;
	if (m.pass == 2 && (rc = read_trace(r, &m, o, err)))	/* the sample's runs */
		goto out;
	if ((rc = model_curve(&m, o, out)) == -E2BIG)
		hs_error_set(err, E2BIG, "more than %llu pages within reach of readahead: too "
			     "many for the kernel model", (unsigned long long)MAX_PAGES);
	else if (rc)
		goto fail;
	goto out;
fail:
	hs_error_set(err, -rc, "%s", strerror(-rc));
out:
	if (inited)
		model_free(&m);
	free(files);
	if (rc)
		hs_curve_release(out);
	return rc;
}
