/*
 * curve-impl.h - the LRU builder's state (curve.c), private to the
 * folder: curve.c follows the accesses (the time axis, distances,
 * SHARDS), curve-finish.c turns what they left into the curves (the
 * re-run's first accesses, the sample's rescaling). Why the builder is
 * so: curve.c's comment.
 */
#ifndef HOTSET_CURVE_IMPL_H
#define HOTSET_CURVE_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/curve.h"

#define NONE UINT32_MAX
#define BLOCK_WORDS 8			/* one cache line of bitmap */
#define BLOCK_SLOTS (64 * BLOCK_WORDS)

/*
 * The loops that count marks want the popcnt instruction, which baseline
 * x86-64 lacks (the compiler calls a function per word instead): the entry
 * points are built twice, and the loader picks the one the CPU runs.
 */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
#define HOT_CLONES __attribute__((target_clones("popcnt", "default")))
#else
#define HOT_CLONES
#endif
#define HOT_INLINE static inline __attribute__((always_inline))
#define PENDING 16		/* exact: histogram updates in flight */
#define PREFETCH 16		/* hs_curve_access_many(): pages looked up ahead */
#define NO_BUCKET SIZE_MAX
#define AHEAD 8			/* sampling: followed accesses between two stages of the queue */
#define RING (2 * AHEAD)
#define TAB_MIN 1024		/* slots of the table of followed pages at the start */

/* A followed page in the table of them, by its hash (unique: the hash is a bijection). */
struct tab_slot {
	uint64_t hash;
	uint32_t ent;		/* NONE: an empty slot */
};

struct hs_curve_builder {
	struct hs_curve_opts o;
	uint64_t npages, accesses, distinct;
	bool sampling, evicted;
	bool count_pages;	/* sampling: count distinct pages in seen[] */
	uint64_t threshold;	/* sampling: follow the pages whose hash is below */
	double weight;		/* accesses an access of a followed page stands for */
	double scale;		/* weight / step: from a distance to its bucket */
	uint64_t *seen;		/* sampling: a bit per page, for the exact count */

	/* entries: the pages followed (exact: the entry is the page id) */
	uint32_t *last;		/* its slot on the time axis, or NONE */
	uint32_t *first;	/* the order of its first access among entries */
	uint64_t *hash;		/* sampling: its page's hash */
	size_t nent, ent_cap;
	uint32_t *free_ent;	/* entries of evicted pages, to reuse */
	size_t nfree, free_cap;
	/*
	 * Sampling: hash -> entry, open addressing with linear probing, at
	 * most half full. Not the library's u64map: keyed by the hash already
	 * computed, in 16-byte slots, and its slot known before the lookup,
	 * to be fetched ahead.
	 */
	struct tab_slot *tab;
	size_t tab_mask, tab_count;
	uint64_t ring[RING];	/* the hashes of followed accesses to come (see RING) */
	unsigned ring_at, ring_len;
	uint32_t *heap;		/* fixed size: entries, a max-heap by hash */
	size_t nheap, heap_cap;
	uint32_t nfirst;

	/* the time axis */
	uint32_t *owner;	/* slot -> entry */
	uint64_t *bits;		/* marked slots: the last access of each entry */
	uint32_t *fen;		/* Fenwick tree of marks per sealed block, 1-based */
	size_t cap, nblocks, next, live;
	size_t sealed;		/* blocks before this are in fen: those behind next's */

	/* distances, in buckets of step pages, as weights */
	double *hist;
	size_t hist_len, hist_cap;
	uint64_t step;
	/*
	 * The buckets of the last few followed accesses, counted PENDING
	 * accesses late so that the bucket's cache line (a random one in a
	 * histogram of M) is fetched meanwhile rather than waited for; each
	 * counts weight (so the threshold moves only once they are counted).
	 */
	size_t pending[PENDING];
	unsigned pending_at;
	double cold;		/* weight of first accesses */
	double drawn;		/* weight of all followed accesses */
};

/* Grow *v to at least need doubles, the new ones 0. 0 or -ENOMEM. */
int cv_grow_zeroed(double **v, size_t *cap, size_t need);

/* Count weight w at distance bucket, growing the histogram. 0 or -ENOMEM. */
HOT_INLINE int count(struct hs_curve_builder *b, size_t bucket, double w)
{
	if (bucket >= b->hist_len) {
		if (cv_grow_zeroed(&b->hist, &b->hist_cap, bucket + 1))
			return -ENOMEM;
		b->hist_len = bucket + 1;
	}
	b->hist[bucket] += w;
	return 0;
}

/* Move the marks, in order, to the start of an axis of at least want slots. */
int cv_compact(struct hs_curve_builder *b, size_t want);

/* Count the buckets still pending (see pending[]), at the current weight. */
void cv_count_pending(struct hs_curve_builder *b);

/* Make every queued access, in order (see RING). 0 or -ENOMEM. */
int cv_drain(struct hs_curve_builder *b);

#endif
