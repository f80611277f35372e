/*
 * curve.c - miss-ratio curves from a page-access trace (see curve.h).
 *
 * LRU, exactly (Mattson): an access hits a cache of C pages when fewer
 * than C other pages were accessed since the page's previous access (its
 * stack distance). Each access takes a new slot on a time axis; a bitmap
 * marks the slot of each page's last access, and a Fenwick tree over
 * blocks of 512 slots counts them, so the distance of an access is the
 * number of marks after its page's previous slot: O(log M). When the axis
 * is full it is compacted (the marks, in order, to its start), which
 * happens at most once per M accesses on an axis of 2M slots.
 *
 * The re-run (the trace once more, after itself) needs no second pass: an
 * access of the second pass that is not its page's first has the same
 * distance as in the first pass, and the first access of page p in the
 * second pass has as distance the pages q whose first access is before
 * p's or whose last access is after p's: all but those whose whole
 * lifetime lies within p's. Those are counted for all pages in
 * O(M log M) at the end.
 *
 * SHARDS: only the pages whose hash is below a threshold T are followed,
 * as above; each access of one stands for 2^64/T accesses and its
 * distance is scaled by as much. At the end, the distinct pages being
 * counted exactly, weights and distances are rescaled to the draw's own
 * ratio (distinct pages per page followed), and what is left of the
 * accesses (accesses minus the weights drawn, the SHARDS-adj correction)
 * goes to distance 0. With a fixed size, the page of the highest hash
 * leaves when one too many is followed, and T drops to its hash.
 *
 * What SHARDS costs is the hash of every access and, for the few it
 * follows, three cache misses in a chain (the page's entry in a table of
 * the followed pages, the entry's last slot, its histogram bucket): each
 * waited for, since two followed accesses are about 1/rate accesses
 * apart, beyond what the processor looks ahead. So the followed accesses
 * go through a short queue (RING): the table's line is fetched when one
 * joins it, the entry's last slot AHEAD followed accesses later, and it is
 * made AHEAD after that; the bucket is counted PENDING accesses late, as
 * the exact curve's are.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model/curve-impl.h"

/*
 * murmur3's finaliser after a golden-ratio increment (as splitmix64 does):
 * consecutive ids spread over all 64 bits, and id 0 is not mapped to 0 (the
 * finaliser alone does: page 0 would always be followed). A bijection, as
 * the table of followed pages needs.
 */
static inline uint64_t mix(uint64_t x)
{
	x += UINT64_C(0x9e3779b97f4a7c15);
	x ^= x >> 33;
	x *= UINT64_C(0xff51afd7ed558ccd);
	x ^= x >> 33;
	x *= UINT64_C(0xc4ceb9fe1a85ec53);
	x ^= x >> 33;
	return x;
}

/* ---- the time axis ------------------------------------------------------ */

HOT_INLINE void fen_add(struct hs_curve_builder *b, size_t block, int delta)
{
	for (size_t i = block + 1; i <= b->nblocks; i += i & (0 - i))
		b->fen[i] += (uint32_t)delta;
}

/* Marks after slot s, up to the end of the axis. */
HOT_INLINE uint64_t marks_after(const struct hs_curve_builder *b, size_t s)
{
	size_t w = s / 64, end = (b->next + 63) / 64, blk = s / BLOCK_SLOTS;
	uint64_t n = 0, upto;

	/* a recent slot (a hot page, or the block being filled): the few words to the end */
	if (end - w <= BLOCK_WORDS) {
		n = (uint64_t)__builtin_popcountll(b->bits[w] & ~(((uint64_t)2 << (s % 64)) - 1));
		for (size_t x = w + 1; x < end; x++)
			n += (uint64_t)__builtin_popcountll(b->bits[x]);
		return n;
	}
	upto = 0;	/* marks up to s: the blocks before, then in its block */
	for (size_t i = blk; i > 0; i -= i & (0 - i))
		upto += b->fen[i];
	for (size_t x = blk * BLOCK_WORDS; x < w; x++)
		upto += (uint64_t)__builtin_popcountll(b->bits[x]);
	upto += (uint64_t)__builtin_popcountll(b->bits[w] & (((uint64_t)2 << (s % 64)) - 1));
	return b->live - upto;
}

HOT_INLINE void unmark(struct hs_curve_builder *b, size_t s)
{
	b->bits[s / 64] &= ~((uint64_t)1 << (s % 64));
	if (s / BLOCK_SLOTS < b->sealed)
		fen_add(b, s / BLOCK_SLOTS, -1);
}

static void rebuild_fenwick(struct hs_curve_builder *b)
{
	b->sealed = b->next / BLOCK_SLOTS;
	memset(b->fen, 0, (b->nblocks + 1) * sizeof(*b->fen));
	for (size_t i = 1; i <= b->nblocks; i++) {
		const uint64_t *w = b->bits + (i - 1) * BLOCK_WORDS;
		size_t j = i + (i & (0 - i));

		for (int k = 0; k < BLOCK_WORDS && i <= b->sealed; k++)
			b->fen[i] += (uint32_t)__builtin_popcountll(w[k]);
		if (j <= b->nblocks)
			b->fen[j] += b->fen[i];
	}
}

/* Move the marks, in order, to the start of an axis of at least want slots. */
int cv_compact(struct hs_curve_builder *b, size_t want)
{
	size_t k = 0, words = (b->next + 63) / 64;

	for (size_t w = 0; w < words; w++)
		for (uint64_t x = b->bits[w]; x; x &= x - 1) {
			uint32_t e = b->owner[w * 64 + (size_t)__builtin_ctzll(x)];

			b->owner[k] = e;	/* k <= the slot read: in place */
			b->last[e] = (uint32_t)k++;
		}
	if (want > b->cap) {
		size_t cap = (want + BLOCK_SLOTS - 1) / BLOCK_SLOTS * BLOCK_SLOTS;
		uint32_t *owner = realloc(b->owner, cap * sizeof(*owner));
		uint64_t *bits;
		uint32_t *fen;

		if (!owner)
			return -ENOMEM;
		b->owner = owner;
		if (!(bits = realloc(b->bits, cap / 64 * sizeof(*bits))))
			return -ENOMEM;
		b->bits = bits;
		if (!(fen = realloc(b->fen, (cap / BLOCK_SLOTS + 1) * sizeof(*fen))))
			return -ENOMEM;
		b->fen = fen;
		b->cap = cap;
		b->nblocks = cap / BLOCK_SLOTS;
	}
	memset(b->bits, 0, b->cap / 64 * sizeof(*b->bits));
	for (size_t s = 0; s < k; s += 64)
		b->bits[s / 64] = k - s >= 64 ? UINT64_MAX : ((uint64_t)1 << (k - s)) - 1;
	b->next = k;
	rebuild_fenwick(b);
	return 0;
}

/* A slot for the access being made: the axis of 2M slots compacted or grown. */
HOT_INLINE int take_slot(struct hs_curve_builder *b, uint32_t e)
{
	size_t s;

	if (b->next == b->cap) {
		size_t want = 2 * b->live + 2 * BLOCK_SLOTS;
		int rc = cv_compact(b, want > b->cap ? want : b->cap);

		if (rc)
			return rc;
	}
	s = b->next++;
	b->owner[s] = e;
	b->bits[s / 64] |= (uint64_t)1 << (s % 64);
	b->last[e] = (uint32_t)s;
	/*
	 * The block being filled is counted by popcount (marks_after() looks
	 * at the few words before next directly): it joins the tree once
	 * full, rather than at every mark.
	 */
	if (b->next % BLOCK_SLOTS == 0) {
		const uint64_t *w = b->bits + s / 64 + 1 - BLOCK_WORDS;
		int marks = 0;

		for (int k = 0; k < BLOCK_WORDS; k++)
			marks += __builtin_popcountll(w[k]);
		fen_add(b, b->sealed++, marks);
	}
	return 0;
}

/* ---- distances ------------------------------------------------------------ */

int cv_grow_zeroed(double **v, size_t *cap, size_t need)
{
	size_t old = *cap;

	if (need <= old)
		return 0;
	if (hs_grow(v, cap, need, sizeof(**v)))
		return -ENOMEM;
	memset(*v + old, 0, (*cap - old) * sizeof(**v));
	return 0;
}

/* Count bucket (a weight) later, fetching its line now (see pending). */
HOT_INLINE int count_later(struct hs_curve_builder *b, size_t bucket)
{
	size_t old = b->pending[b->pending_at];

	if (bucket >= b->hist_len) {
		if (cv_grow_zeroed(&b->hist, &b->hist_cap, bucket + 1))
			return -ENOMEM;
		b->hist_len = bucket + 1;
	}
	__builtin_prefetch(&b->hist[bucket], 1);
	if (old != NO_BUCKET)
		b->hist[old] += b->weight;
	b->pending[b->pending_at] = bucket;
	b->pending_at = (b->pending_at + 1) % PENDING;
	return 0;
}

void cv_count_pending(struct hs_curve_builder *b)
{
	for (unsigned i = 0; i < PENDING; i++) {
		if (b->pending[i] != NO_BUCKET)
			b->hist[b->pending[i]] += b->weight;
		b->pending[i] = NO_BUCKET;
	}
}

/* The bucket of a distance of d followed pages: d scaled, in steps. */
HOT_INLINE size_t bucket_of(const struct hs_curve_builder *b, uint64_t d)
{
	return b->sampling ? (size_t)((double)d * b->scale) : (size_t)d;
}

/* An access to entry e. */
HOT_INLINE int follow(struct hs_curve_builder *b, uint32_t e)
{
	uint32_t l = b->last[e];
	int rc;

	b->drawn += b->weight;
	/*
	 * Again the page of the latest slot: no other page between, and its
	 * mark stays the latest where it is (a hot page followed twice in a
	 * row, or a page read twice in a row).
	 */
	if (l != NONE && l + 1 == b->next)
		return count_later(b, 0);
	if (l == NONE) {
		b->first[e] = b->nfirst++;
		b->cold += b->weight;
		b->live++;
	} else {
		if ((rc = count_later(b, bucket_of(b, marks_after(b, l)))))
			return rc;
		unmark(b, l);
	}
	return take_slot(b, e);
}

/* ---- SHARDS ------------------------------------------------------------------ */

static void heap_sift_down(struct hs_curve_builder *b, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < b->nheap && b->hash[b->heap[l]] > b->hash[b->heap[m]])
			m = l;
		if (r < b->nheap && b->hash[b->heap[r]] > b->hash[b->heap[m]])
			m = r;
		if (m == i)
			return;
		uint32_t t = b->heap[i];
		b->heap[i] = b->heap[m];
		b->heap[m] = t;
		i = m;
	}
}

static int heap_push(struct hs_curve_builder *b, uint32_t e)
{
	size_t i;

	if (hs_grow(&b->heap, &b->heap_cap, b->nheap + 1, sizeof(*b->heap)))
		return -ENOMEM;
	i = b->nheap++;
	b->heap[i] = e;
	while (i > 0 && b->hash[b->heap[(i - 1) / 2]] < b->hash[b->heap[i]]) {
		uint32_t t = b->heap[i];

		b->heap[i] = b->heap[(i - 1) / 2];
		b->heap[(i - 1) / 2] = t;
		i = (i - 1) / 2;
	}
	return 0;
}

static void set_threshold(struct hs_curve_builder *b, uint64_t t)
{
	cv_count_pending(b);	/* at the weight they were drawn with, before the buckets merge */
	b->threshold = t;
	b->weight = 18446744073709551616.0 / (double)(t ? t : 1);
	/*
	 * buckets as wide as the distances are coarse: at most about S of them
	 * (a threshold of 0 or 1 makes the weight 2^64: step stops at 2^63
	 * rather than wrap to 0 and double forever)
	 */
	while (b->step <= UINT64_MAX / 2 && (double)b->step * 2 <= b->weight) {
		size_t n = (b->hist_len + 1) / 2;

		for (size_t i = 0; i < n; i++)
			b->hist[i] = b->hist[2 * i] + (2 * i + 1 < b->hist_len ? b->hist[2 * i + 1] : 0);
		if (b->hist_len)
			memset(b->hist + n, 0, (b->hist_len - n) * sizeof(*b->hist));
		b->hist_len = n;
		b->step *= 2;
	}
	b->scale = b->weight / (double)b->step;
}

/* ---- the followed pages, by hash ------------------------------------------ */

HOT_INLINE struct tab_slot *tab_home(const struct hs_curve_builder *b, uint64_t h)
{
	return &b->tab[h & b->tab_mask];	/* the low bits: those below T are the high ones */
}

/* The entry of the page of hash h, or NONE. */
HOT_INLINE uint32_t tab_get(const struct hs_curve_builder *b, uint64_t h)
{
	for (size_t s = h & b->tab_mask;; s = (s + 1) & b->tab_mask)
		if (b->tab[s].ent == NONE || b->tab[s].hash == h)
			return b->tab[s].ent;
}

/* An empty table of cap slots (a power of two). */
static int tab_alloc(struct hs_curve_builder *b, size_t cap)
{
	if (!(b->tab = malloc(cap * sizeof(*b->tab))))
		return -ENOMEM;
	memset(b->tab, 0xff, cap * sizeof(*b->tab));	/* every ent NONE */
	b->tab_mask = cap - 1;
	return 0;
}

/* Add h (absent) -> e, doubling the table past half full. */
static int tab_put(struct hs_curve_builder *b, uint64_t h, uint32_t e)
{
	size_t s;

	if (2 * (b->tab_count + 1) > b->tab_mask + 1) {
		struct tab_slot *old = b->tab;
		size_t cap = b->tab_mask + 1;

		if (tab_alloc(b, 2 * cap)) {
			b->tab = old;
			return -ENOMEM;
		}
		for (size_t i = 0; i < cap; i++) {
			if (old[i].ent == NONE)
				continue;
			for (s = old[i].hash & b->tab_mask; b->tab[s].ent != NONE; s = (s + 1) & b->tab_mask)
				;
			b->tab[s] = old[i];
		}
		free(old);
	}
	for (s = h & b->tab_mask; b->tab[s].ent != NONE; s = (s + 1) & b->tab_mask)
		;
	b->tab[s].hash = h;
	b->tab[s].ent = e;
	b->tab_count++;
	return 0;
}

/* Remove h (present), shifting back the slots after it rather than leaving a tombstone. */
static void tab_del(struct hs_curve_builder *b, uint64_t h)
{
	size_t mask = b->tab_mask, hole = h & mask;

	while (b->tab[hole].hash != h)
		hole = (hole + 1) & mask;
	for (size_t s = (hole + 1) & mask; b->tab[s].ent != NONE; s = (s + 1) & mask) {
		size_t home = b->tab[s].hash & mask;

		/* s may fill the hole unless its home lies cyclically in (hole, s] */
		if (((s - home) & mask) >= ((s - hole) & mask)) {
			b->tab[hole] = b->tab[s];
			hole = s;
		}
	}
	b->tab[hole].ent = NONE;
	b->tab_count--;
}

/* ---- SHARDS: following the pages sampled ------------------------------------- */

/* Fixed size: drop the followed page of the highest hash; T falls to it. */
static void evict_max(struct hs_curve_builder *b)
{
	uint32_t e = b->heap[0];

	b->heap[0] = b->heap[--b->nheap];
	heap_sift_down(b, 0);
	unmark(b, b->last[e]);
	b->last[e] = NONE;
	b->live--;
	tab_del(b, b->hash[e]);
	b->free_ent[b->nfree++] = e;	/* room made when e was added */
	b->evicted = true;
	set_threshold(b, b->hash[e]);
}

static int new_entry(struct hs_curve_builder *b, uint64_t h, uint32_t *out)
{
	uint32_t e;
	int rc;

	if (b->nfree) {
		e = b->free_ent[--b->nfree];
	} else {
		size_t cap = b->ent_cap;

		if (b->nent >= NONE - 1)
			return -E2BIG;
		if (b->nent == cap) {
			cap = b->ent_cap;
			if (hs_grow(&b->last, &cap, b->nent + 1, sizeof(*b->last)))
				return -ENOMEM;
			cap = b->ent_cap;
			if (hs_grow(&b->first, &cap, b->nent + 1, sizeof(*b->first)))
				return -ENOMEM;
			cap = b->ent_cap;
			if (hs_grow(&b->hash, &cap, b->nent + 1, sizeof(*b->hash)))
				return -ENOMEM;
			cap = b->ent_cap;
			if (hs_grow(&b->free_ent, &cap, b->nent + 1, sizeof(*b->free_ent)))
				return -ENOMEM;
			b->ent_cap = cap;
		}
		e = (uint32_t)b->nent++;
	}
	b->last[e] = NONE;
	b->hash[e] = h;
	if ((rc = tab_put(b, h, e)) || (b->o.sample_size && (rc = heap_push(b, e))))
		return rc;
	*out = e;
	return 0;
}

/* A page seen for the first time, sampled or not: the exact count of pages. */
HOT_INLINE void see(struct hs_curve_builder *b, uint64_t page)
{
	uint64_t *w = &b->seen[page / 64], bit = (uint64_t)1 << (page % 64);

	b->distinct += !(*w & bit);
	*w |= bit;
}

/*
 * An access to the page of hash h, queued while it was below the
 * threshold: followed if it still is (a fixed size lowers it meanwhile,
 * and every access skipped since was above the old one, so the order of
 * what is followed is the trace's).
 */
HOT_INLINE int access_followed(struct hs_curve_builder *b, uint64_t h)
{
	uint32_t e;
	int rc;

	if (h >= b->threshold)
		return 0;
	if ((e = tab_get(b, h)) == NONE && (rc = new_entry(b, h, &e)))
		return rc;
	if ((rc = follow(b, e)))
		return rc;
	if (b->o.sample_size && b->live > b->o.sample_size)
		evict_max(b);
	return 0;
}

/*
 * Queue an access to a page below the threshold (see RING): its table
 * slot is fetched now; the entry of the access AHEAD before it is looked
 * up, its last slot fetched; the oldest, RING before, is made.
 */
HOT_INLINE int queue_followed(struct hs_curve_builder *b, uint64_t h)
{
	unsigned at = b->ring_at;
	int rc = 0;

	__builtin_prefetch(tab_home(b, h));
	if (b->ring_len >= AHEAD) {
		uint32_t e = tab_get(b, b->ring[(at + RING - AHEAD) % RING]);

		if (e != NONE)
			__builtin_prefetch(&b->last[e]);
	}
	if (b->ring_len == RING)	/* the oldest is in the slot taken now */
		rc = access_followed(b, b->ring[at]);
	else
		b->ring_len++;
	b->ring[at] = h;
	b->ring_at = (at + 1) % RING;
	return rc;
}

/* Make every queued access, in order. */
int cv_drain(struct hs_curve_builder *b)
{
	int rc = 0;

	for (; b->ring_len && !rc; b->ring_len--)
		rc = access_followed(b, b->ring[(b->ring_at + RING - b->ring_len) % RING]);
	return rc;
}

HOT_INLINE int access_sampled(struct hs_curve_builder *b, uint64_t page)
{
	uint64_t h = mix(page);

	if (b->count_pages)
		see(b, page);
	return h < b->threshold ? queue_followed(b, h) : 0;
}

/* ---- building ---------------------------------------------------------------- */

int hs_curve_new(const struct hs_curve_opts *o, uint64_t npages, struct hs_curve_builder **out)
{
	struct hs_curve_builder *b;
	size_t slots;

	if (o->policy != HS_CURVE_LRU || !(o->sample_rate >= 0 && o->sample_rate <= 1) ||
	    npages >= UINT64_MAX / 2)
		return -EINVAL;
	if (!(b = calloc(1, sizeof(*b))))
		return -ENOMEM;
	b->o = *o;
	b->npages = npages;
	b->sampling = (o->sample_rate > 0 && o->sample_rate < 1) || o->sample_size;
	b->weight = 1;
	b->step = 1;
	for (unsigned i = 0; i < PENDING; i++)
		b->pending[i] = NO_BUCKET;
	if (!b->sampling) {
		if (npages > HS_CURVE_EXACT_MAX_PAGES) {
			free(b);
			return -E2BIG;
		}
		b->nent = b->ent_cap = npages;
		slots = 2 * npages;
		if (!(b->last = malloc((npages ? npages : 1) * sizeof(*b->last))) ||
		    !(b->first = malloc((npages ? npages : 1) * sizeof(*b->first))))
			goto nomem;
		memset(b->last, 0xff, npages * sizeof(*b->last));
	} else {
		double rate = o->sample_rate > 0 ? o->sample_rate : 1;

		b->count_pages = !o->known_pages;
		b->distinct = o->known_pages;
		if (b->count_pages && !(b->seen = calloc(npages / 64 + 1, sizeof(*b->seen))))
			goto nomem;
		slots = 0;
		set_threshold(b, rate >= 1 ? UINT64_MAX : (uint64_t)(rate * 18446744073709551616.0));
		if (tab_alloc(b, TAB_MIN))
			goto nomem;
	}
	b->cap = (slots + 2 * BLOCK_SLOTS) / BLOCK_SLOTS * BLOCK_SLOTS;
	b->nblocks = b->cap / BLOCK_SLOTS;
	if (!(b->owner = malloc(b->cap * sizeof(*b->owner))) ||
	    !(b->bits = calloc(b->cap / 64, sizeof(*b->bits))) ||
	    !(b->fen = calloc(b->nblocks + 1, sizeof(*b->fen))))
		goto nomem;
	*out = b;
	return 0;
nomem:
	hs_curve_builder_free(b);
	return -ENOMEM;
}

HOT_CLONES int hs_curve_access(struct hs_curve_builder *b, uint64_t page)
{
	if (page >= b->npages)
		return -EINVAL;
	b->accesses++;
	if (b->sampling)
		return access_sampled(b, page);
	if (b->last[page] == NONE)
		b->distinct++;
	return follow(b, (uint32_t)page);
}

HOT_CLONES int hs_curve_access_many(struct hs_curve_builder *b, const uint64_t *pages, size_t n)
{
	size_t i = 0;
	int rc = 0;

	if (b->sampling && !b->count_pages) {
		/* the loop SHARDS is fast for: most pages are only hashed */
		uint64_t npages = b->npages, t = b->threshold;

		for (; i < n && !rc; i++) {
			uint64_t p = pages[i], h = mix(p);

			if (p >= npages)
				break;
			if (h < t) {
				rc = queue_followed(b, h);
				t = b->threshold;	/* a fixed size lowers it */
			}
		}
	} else if (b->sampling) {
		for (; i < n && !rc; i++) {
			uint64_t p = pages[i], h = mix(p);

			if (p >= b->npages)
				break;
			if (i + PREFETCH < n)
				__builtin_prefetch(&b->seen[pages[i + PREFETCH] / 64 % (b->npages / 64 + 1)]);
			see(b, p);
			if (h < b->threshold)
				rc = queue_followed(b, h);
		}
	} else {
		for (; i < n && !rc; i++) {
			uint64_t p = pages[i];

			if (p >= b->npages)
				break;
			if (i + PREFETCH < n && pages[i + PREFETCH] < b->npages)
				__builtin_prefetch(&b->last[pages[i + PREFETCH]]);
			b->distinct += b->last[p] == NONE;
			rc = follow(b, (uint32_t)p);
		}
	}
	b->accesses += i;
	return rc ? rc : i < n ? -EINVAL : 0;
}

HOT_CLONES int hs_curve_access_run(struct hs_curve_builder *b, uint64_t first, uint64_t n)
{
	int rc = 0;

	if (first >= b->npages || n > b->npages - first)
		return -EINVAL;
	b->accesses += n;
	for (uint64_t p = first; p < first + n && !rc; p++) {
		if (b->sampling) {
			rc = access_sampled(b, p);
		} else {
			b->distinct += b->last[p] == NONE;
			rc = follow(b, (uint32_t)p);
		}
	}
	return rc;
}

void hs_curve_builder_free(struct hs_curve_builder *b)
{
	if (!b)
		return;
	free(b->seen);
	free(b->last);
	free(b->first);
	free(b->hash);
	free(b->free_ent);
	free(b->tab);
	free(b->heap);
	free(b->owner);
	free(b->bits);
	free(b->fen);
	free(b->hist);
	free(b);
}
