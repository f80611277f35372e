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
 *    order by how their files are read and by accesses (ck_draw_sample(), curve-kernel-trace.c);
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

#include "model/curve-kernel-impl.h"
#include "model/trace.h"

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
		if ((rc = ck_sim_alloc(&s->w[s->started].sim, m))) {
			ck_sim_free(&s->w[s->started].sim);
			goto out;
		}
	s->rd.caps = caps;
	s->rd.reads = reads;
	s->rd.n = k;
	s->rd.next = 0;
	for (unsigned t = 1; t < threads; t++) {
		s->w[t].rd = &s->rd;
		if (pthread_create(&s->w[t].tid, NULL, ck_work, &s->w[t])) {
			threads = t;	/* fewer, then: the others take its share */
			break;
		}
	}
	s->w[0].rd = &s->rd;
	s->w[0].main = true;
	ck_work(&s->w[0]);
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
		ck_sim_free(&s.w[t].sim);
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

	if ((rc = ck_model_spans(m)))
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
	if ((rc = ck_model_init(&m, files, nfiles, o)))
		goto out;
	if ((rc = distinct_of(runs, nruns, &m.distinct)))
		goto out;
	for (size_t i = 0; i < nruns && !rc; i++)
		rc = ck_model_add(&m, runs[i].file, runs[i].first, runs[i].n);
	if (!rc && !(rc = ck_draw_sample(&m)) && m.pass == 2)	/* the sample's runs */
		for (size_t i = 0; i < nruns && !rc; i++)
			rc = ck_model_add(&m, runs[i].file, runs[i].first, runs[i].n);
	if (!rc)
		rc = model_curve(&m, o, out);
out:
	ck_model_free(&m);
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
		if ((rc = ck_model_add(m, file, page, n)))
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
	struct model m = { 0 };	/* ck_model_free() of it is safe whatever happens */
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = read_files(r, o, &files, &nfiles, err)))
		return rc;
	/* a failed ck_model_init() may hold some of its tables: freed below all the same */
	if ((rc = ck_model_init(&m, files, nfiles, o)))
		goto fail;
	m.expect = hs_profile_totals(r)->trace_lines;	/* a run a line at least */
	if ((rc = read_trace(r, &m, o, err)))
		goto out;
	if (!m.accesses) {
		rc = hs_error_set(err, ENODATA, "the profile has no access trace");
		goto out;
	}
	if ((rc = ck_draw_sample(&m)))
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
	ck_model_free(&m);
	free(files);
	if (rc)
		hs_curve_release(out);
	return rc;
}
