/*
 * curve-kernel.c - a model of Linux's page cache (the classic file LRU,
 * without MGLRU), simulated at each cache size (see curve.h).
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
 *    quarter from its end (do_sync_mmap_readahead). The request (req) is
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
 * and the one its mark reads), numbered densely per file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "core/curve-kernel.h"

#define NIL UINT32_MAX
#define MAX_PAGES (UINT64_C(1) << 31)
#define REQ_PAGES 32		/* a read's request: 128 KiB, cat's and most tools' buffer */
#define DEFAULT_POINTS 101
#define DEFAULT_RA_KB 128	/* VM_READAHEAD_PAGES, where a device says nothing */

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

struct span {
	uint64_t lo, hi;	/* pages lo .. hi - 1 of the file */
	uint32_t base;		/* the id of page lo */
};

struct kfile {
	size_t s0, ns;		/* its spans */
	size_t hint;
	/* file_ra_state: the window, its mark, the last page accessed */
	uint64_t start, size, async, prev;
	bool have_prev;
};

struct sim {
	const struct hs_curve_kfile *files;
	struct kfile *kf;
	size_t nfiles;
	struct span *spans;
	uint32_t npages;	/* ids 0 .. npages - 1; the two lists' heads after them */
	uint32_t *prev, *next;
	uint8_t *flags;
	uint64_t *shadow;	/* the non-resident age at eviction, + 1; 0: none */
	uint64_t count[2], age, cap, reads;
};

/* ---- the lists ------------------------------------------------------------------ */

static uint32_t head(const struct sim *s, int l)
{
	return s->npages + (uint32_t)l;
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

static bool inactive_is_low(const struct sim *s)
{
	uint64_t gb = (s->count[INACTIVE] + s->count[ACTIVE]) * 4096 >> 30, ratio = 1;

	if (gb)	/* int_sqrt(10 * gb) */
		while ((ratio + 1) * (ratio + 1) <= 10 * gb)
			ratio++;
	return s->count[INACTIVE] * ratio < s->count[ACTIVE];
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

/* The id of page pg of file f, or NIL if not followed. */
static uint32_t id_of(struct sim *s, size_t f, uint64_t pg)
{
	struct kfile *k = &s->kf[f];
	const struct span *sp = s->spans + k->s0;
	size_t lo = 0, hi = k->ns;

	if (k->hint < k->ns && sp[k->hint].lo <= pg && pg < sp[k->hint].hi)
		return sp[k->hint].base + (uint32_t)(pg - sp[k->hint].lo);
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (sp[mid].hi <= pg)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == k->ns || sp[lo].lo > pg)
		return NIL;
	k->hint = lo;
	return sp[lo].base + (uint32_t)(pg - sp[lo].lo);
}

static bool cached(struct sim *s, size_t f, uint64_t pg)
{
	uint32_t p = id_of(s, f, pg);

	return p != NIL && (s->flags[p] & RESIDENT);
}

/* ---- readahead ------------------------------------------------------------------------ */

static uint64_t pow2_up(uint64_t x)
{
	uint64_t p = 1;

	while (p < x)
		p <<= 1;
	return p;
}

static uint64_t init_ra_size(uint64_t req, uint64_t max)
{
	uint64_t n = pow2_up(req);

	return n <= max / 32 ? 4 * n : n <= max / 4 ? 2 * n : max;
}

static uint64_t next_ra_size(uint64_t cur, uint64_t max)
{
	return cur < max / 16 ? 4 * cur : cur <= max / 2 ? 2 * cur : max;
}

/* Read pages start .. start + size - 1 of file f that are not cached; mark one. */
static void read_window(struct sim *s, size_t f, uint64_t start, uint64_t size, uint64_t async)
{
	uint64_t end = start + size, mark = async ? end - async : UINT64_MAX;

	if (end > s->files[f].pages)
		end = s->files[f].pages;
	for (uint64_t pg = start; pg < end; pg++) {
		uint32_t p = id_of(s, f, pg);

		if (p == NIL || (s->flags[p] & RESIDENT))
			continue;
		insert(s, p);
		if (pg == mark && (s->flags[p] & RESIDENT))
			s->flags[p] |= MARK;
	}
}

static void set_window(struct kfile *k, uint64_t start, uint64_t size, uint64_t async)
{
	k->start = start;
	k->size = size;
	k->async = async;
}

/* A miss at page pg of file f, with req pages asked for: page_cache_sync_ra(). */
static void sync_ra(struct sim *s, size_t f, uint64_t pg, uint64_t req)
{
	struct kfile *k = &s->kf[f];
	uint64_t max = s->files[f].read_ahead, size, contig = 0;

	if (!max)	/* no readahead: the page alone */
		return;
	if (s->files[f].flags & HS_FILE_MAPPED) {	/* mmap read-around */
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
	while (contig < max && contig < pg && cached(s, f, pg - 1 - contig))
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
	struct kfile *k = &s->kf[f];
	uint64_t max = s->files[f].read_ahead, start, size;

	if (!max)
		return;
	if (k->size && pg == k->start + k->size - k->async) {	/* the expected one: ramp up */
		size = next_ra_size(k->size, max);
		set_window(k, k->start + k->size, size > k->size ? size : k->size, 0);
		k->async = k->size;
	} else {	/* a mark without its state: from the next page not cached */
		for (start = pg + 1; start <= pg + max && cached(s, f, start); start++)
			;
		if (start > pg + max)
			return;
		size = next_ra_size(start - pg + req, max);
		set_window(k, start, size, size);
	}
	read_window(s, f, k->start, k->size, k->async);
}

/* One access to page pg of file f, rest pages of its run still to come. */
static void access_page(struct sim *s, size_t f, uint64_t pg, uint64_t rest)
{
	struct kfile *k = &s->kf[f];
	uint64_t req = rest < REQ_PAGES ? rest : REQ_PAGES;
	uint32_t p = id_of(s, f, pg);

	if (s->files[f].flags & HS_FILE_DIRECT) {	/* past the cache, every time */
		s->reads++;
		return;
	}
	if (!(s->flags[p] & RESIDENT)) {
		sync_ra(s, f, pg, req);
		if (!(s->flags[p] & RESIDENT))	/* beyond the window, or a window of nothing */
			insert(s, p);
	} else if (s->flags[p] & MARK) {
		s->flags[p] &= (uint8_t)~MARK;
		async_ra(s, f, pg, req);
	}
	mark_accessed(s, p);
	k->prev = pg;
	k->have_prev = true;
}

/* ---- the simulation ------------------------------------------------------------------- */

static void reset(struct sim *s, uint64_t cap)
{
	for (uint32_t p = 0; p < s->npages; p++)
		s->flags[p] &= KIND;
	memset(s->shadow, 0, s->npages * sizeof(*s->shadow));
	for (int l = 0; l < 2; l++)
		s->prev[head(s, l)] = s->next[head(s, l)] = head(s, l);
	s->count[0] = s->count[1] = 0;
	s->age = s->reads = 0;
	s->cap = cap;
}

static void new_pass(struct sim *s)
{
	for (size_t f = 0; f < s->nfiles; f++) {	/* the files opened anew */
		s->kf[f].have_prev = false;
		set_window(&s->kf[f], 0, 0, 0);
	}
}

static void run_pass(struct sim *s, const struct hs_curve_krun *runs, size_t nruns)
{
	new_pass(s);
	for (size_t i = 0; i < nruns; i++)
		for (uint64_t j = 0; j < runs[i].n; j++)
			access_page(s, runs[i].file, runs[i].first + j, runs[i].n - j);
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

/* The pages to follow: each run widened by its file's window, merged, numbered. */
static int build_spans(struct sim *s, const struct hs_curve_krun *runs, size_t nruns)
{
	struct ext *e = malloc((nruns ? nruns : 1) * sizeof(*e));
	size_t n = 0, f = 0;
	uint64_t next_id = 0;

	if (!e)
		return -ENOMEM;
	for (size_t i = 0; i < nruns; i++) {
		const struct hs_curve_kfile *kf = &s->files[runs[i].file];
		uint64_t w = kf->flags & HS_FILE_DIRECT ? 0 : kf->read_ahead;
		uint64_t hi = runs[i].first + runs[i].n + 2 * w;

		e[i].file = runs[i].file;
		e[i].lo = runs[i].first > w ? runs[i].first - w : 0;
		e[i].hi = hi < kf->pages ? hi : kf->pages;
	}
	qsort(e, nruns, sizeof(*e), by_file_lo);
	for (size_t i = 0; i < nruns; i++) {	/* merged in place */
		if (n && e[n - 1].file == e[i].file && e[i].lo <= e[n - 1].hi) {
			if (e[i].hi > e[n - 1].hi)
				e[n - 1].hi = e[i].hi;
		} else {
			e[n++] = e[i];
		}
	}
	if (!(s->spans = malloc((n ? n : 1) * sizeof(*s->spans)))) {
		free(e);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		if (next_id + (e[i].hi - e[i].lo) > MAX_PAGES) {
			free(e);
			return -E2BIG;
		}
		while (f < e[i].file)
			s->kf[++f].s0 = i;
		s->spans[i] = (struct span){ e[i].lo, e[i].hi, (uint32_t)next_id };
		s->kf[f].ns++;
		next_id += e[i].hi - e[i].lo;
	}
	while (f + 1 < s->nfiles)
		s->kf[++f].s0 = n;
	s->npages = (uint32_t)next_id;
	free(e);
	return 0;
}

static int by_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int hs_curve_kernel(const struct hs_curve_kfile *files, size_t nfiles,
		    const struct hs_curve_krun *runs, size_t nruns, const struct hs_curve_opts *o,
		    struct hs_curve *out)
{
	struct sim s = { .files = files, .nfiles = nfiles };
	uint64_t accesses = 0, distinct = 0, *sizes = NULL;
	double *cold = NULL, *rerun = NULL;
	size_t n = 0;
	int rc = -ENOMEM;

	memset(out, 0, sizeof(*out));
	if (o->policy != HS_CURVE_KERNEL)
		return -EINVAL;
	for (size_t i = 0; i < nruns; i++)
		if (runs[i].file >= nfiles || runs[i].first >= files[runs[i].file].pages ||
		    runs[i].n > files[runs[i].file].pages - runs[i].first)
			return -EINVAL;
	if (!(s.kf = calloc(nfiles ? nfiles : 1, sizeof(*s.kf))))
		return -ENOMEM;
	if ((rc = build_spans(&s, runs, nruns)))
		goto out;
	rc = -ENOMEM;
	if (!(s.prev = malloc(((size_t)s.npages + 2) * sizeof(*s.prev))) ||
	    !(s.next = malloc(((size_t)s.npages + 2) * sizeof(*s.next))) ||
	    !(s.flags = calloc((size_t)s.npages + 1, 1)) ||
	    !(s.shadow = malloc(((size_t)s.npages + 1) * sizeof(*s.shadow))))
		goto out;
	/* the working set: distinct pages accessed (RESIDENT as a mark, cleared by reset) */
	for (size_t i = 0; i < nruns; i++) {
		accesses += runs[i].n;
		for (uint64_t j = 0; j < runs[i].n; j++) {
			uint32_t p = id_of(&s, runs[i].file, runs[i].first + j);

			distinct += !(s.flags[p] & RESIDENT);
			s.flags[p] |= RESIDENT;
		}
	}
	for (size_t f = 0; f < nfiles; f++) {	/* what reclaim asks of a page's file */
		uint8_t kind = (uint8_t)((files[f].flags & HS_FILE_MAPPED ? MAPPED : 0) |
					 (files[f].flags & HS_FILE_EXEC ? EXEC : 0));

		for (size_t sp = s.kf[f].s0; sp < s.kf[f].s0 + s.kf[f].ns; sp++)
			for (uint64_t q = 0; q < s.spans[sp].hi - s.spans[sp].lo; q++)
				s.flags[s.spans[sp].base + q] |= kind;
	}
	n = o->nsizes ? o->nsizes : o->points ? o->points : DEFAULT_POINTS;
	if (!(sizes = malloc(n * sizeof(*sizes))) || !(cold = malloc(n * sizeof(*cold))) ||
	    !(rerun = malloc(n * sizeof(*rerun))))
		goto out;
	for (size_t k = 0; k < n; k++)
		sizes[k] = o->nsizes ? o->sizes[k] :
			   n > 1 ? (uint64_t)((double)distinct * (double)k / (double)(n - 1) + 0.5) : distinct;
	qsort(sizes, n, sizeof(*sizes), by_u64);
	for (size_t k = 0; k < n; k++) {
		if (!sizes[k]) {	/* no cache, no readahead: every access reads, as with LRU */
			cold[k] = rerun[k] = (double)accesses;
			continue;
		}
		reset(&s, sizes[k]);
		run_pass(&s, runs, nruns);
		cold[k] = (double)s.reads;
		s.reads = 0;
		run_pass(&s, runs, nruns);
		rerun[k] = (double)s.reads;
	}
	out->policy = HS_CURVE_KERNEL;
	out->accesses = accesses;
	out->pages = distinct;
	out->sample_rate = 1;
	out->step = 1;
	out->n = n;
	out->cold = cold;
	out->rerun = rerun;
	out->size = sizes;
	for (size_t f = 0; f < nfiles; f++)
		if (files[f].read_ahead > out->read_ahead_pages)
			out->read_ahead_pages = files[f].read_ahead;
	cold = rerun = NULL;
	sizes = NULL;
	rc = 0;
out:
	free(sizes);
	free(cold);
	free(rerun);
	free(s.kf);
	free(s.spans);
	free(s.prev);
	free(s.next);
	free(s.flags);
	free(s.shadow);
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

/* Every trace page among its file line's: hs_trace_next() says which is not. */
static int check_trace(struct hs_profile_reader *r, struct hs_error *err)
{
	struct hs_trace *t;
	uint64_t first, n;
	int rc;

	if ((rc = hs_trace_open(r, &t, err)))
		return rc;
	while ((rc = hs_trace_next(t, &first, &n, err)) > 0)
		;
	hs_trace_close(t);
	return rc;
}

int hs_curve_kernel_from_profile(struct hs_profile_reader *r, const struct hs_curve_opts *o,
				 uint64_t max_steps, struct hs_curve *out, struct hs_error *err)
{
	struct hs_curve_kfile *files = NULL;
	struct hs_curve_krun *runs = NULL;
	struct ra_dev *devs = NULL;
	size_t nfiles = 0, files_cap = 0, nruns = 0, runs_cap = 0, ndevs = 0, devs_cap = 0;
	uint32_t ps = hs_profile_header(r)->page_size;
	struct hs_profile_item it;
	uint64_t accesses = 0;
	int rc;

	/* the trace checked against the file lines, as the LRU path does it */
	if ((rc = check_trace(r, err)))
		return rc;
	hs_profile_rewind(r);
	while ((rc = hs_profile_next(r, &it, err)) > 0) {
		if (it.kind == HS_ITEM_FILE) {
			const struct hs_profile_file *pf = &it.file;
			struct hs_curve_kfile *kf;
			uint64_t pages = (pf->id.size + ps - 1) / ps;

			if (hs_grow(&files, &files_cap, nfiles + 1, sizeof(*files)))
				goto nomem;
			kf = &files[nfiles++];
			for (size_t i = 0; i < pf->nranges; i++)	/* a file that shrank since */
				if (pf->ranges[i].last >= pages)
					pages = pf->ranges[i].last + 1;
			kf->pages = pages;
			/* a file only mapped faults; one also read is read (and maps, a little) */
			kf->flags = pf->flags & HS_FILE_READ ? pf->flags & ~(unsigned)HS_FILE_MAPPED
							      : pf->flags;
			kf->read_ahead = o->read_ahead_pages != HS_CURVE_RA_DEVICE ? o->read_ahead_pages
				: device_ra(pf->id.dev, ps, &devs, &ndevs, &devs_cap);
		} else if (it.kind == HS_ITEM_TRACE) {
			const struct hs_profile_trace *t = &it.trace;

			if (t->file >= nfiles) {
				rc = hs_error_set(err, EINVAL, "the trace names file %llu, which is "
						  "not listed", (unsigned long long)t->file);
				err->line = it.line;
				goto out;
			}
			if (hs_grow(&runs, &runs_cap, nruns + t->nranges, sizeof(*runs)))
				goto nomem;
			for (size_t i = 0; i < t->nranges; i++) {
				if (t->ranges[i].last >= files[t->file].pages)
					files[t->file].pages = t->ranges[i].last + 1;
				runs[nruns++] = (struct hs_curve_krun){
					t->file, t->ranges[i].first,
					t->ranges[i].last - t->ranges[i].first + 1 };
				accesses += runs[nruns - 1].n;
			}
		}
	}
	if (rc < 0)
		goto out;
	if (!nruns) {
		rc = hs_error_set(err, ENODATA, "the profile has no access trace");
		goto out;
	}
	/* two passes at each size */
	if (max_steps && (double)accesses * 2 * (double)(o->nsizes ? o->nsizes : o->points ?
			  o->points : DEFAULT_POINTS) > (double)max_steps) {
		rc = 1;
		goto out;
	}
	if ((rc = hs_curve_kernel(files, nfiles, runs, nruns, o, out)) == -E2BIG)
		hs_error_set(err, E2BIG, "more than %llu pages within reach of readahead: too "
			     "many for the kernel model", (unsigned long long)MAX_PAGES);
	else if (rc)
		hs_error_set(err, -rc, "%s", strerror(-rc));
	goto out;
nomem:
	rc = hs_error_set(err, ENOMEM, "out of memory");
out:
	free(files);
	free(runs);
	free(devs);
	return rc;
}
