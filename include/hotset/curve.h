/*
 * curve.h - the miss-ratio curve of a recorded job: how many of its page
 * accesses would read from the disk with a page cache of each size.
 *
 * The input is the job's ordered page-access trace (hotset record --trace)
 * with each page named by a dense id, 0 to npages-1. Two curves come out:
 *
 *   cold    the job starts with nothing cached;
 *   re-run  the job starts with the pages of its previous run cached, as
 *           far as they fit: the trace replayed after itself, counting the
 *           misses of the second pass.
 *
 * A policy turns the trace into the curves. LRU is exact (Mattson's stack
 * distances, in O(N log M) for N accesses to M distinct pages) or sampled
 * (SHARDS, Waldspurger et al., FAST '15: only the pages whose hash falls
 * below a threshold are followed, and their distances scaled up): misses
 * at cache sizes 0, step, 2 step... pages. KERNEL is a model of Linux's
 * page cache (active and inactive file lists, refault activation,
 * readahead), simulated at each of a few sizes: its points are at the
 * sizes in size[], and it counts the pages read from the disk, which
 * readahead makes more than the accesses that miss.
 *
 * Building:  hs_curve_new(), hs_curve_access() per access (or
 *            hs_curve_access_run() for a run of consecutive ids),
 *            hs_curve_finish() to get a struct hs_curve; or
 *            hs_curve_from_profile() for all of it from a profile.
 */
#ifndef HOTSET_CURVE_H
#define HOTSET_CURVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hotset/hotset.h"
#include "hotset/profile.h"

enum hs_curve_policy {
	HS_CURVE_LRU = 0,	/* least recently used: what Mattson's stack models */
	HS_CURVE_KERNEL,	/* Linux's file LRU lists, refaults and readahead (no MGLRU) */
	/*
	 * hs_curve_from_profile() only: KERNEL when its simulations take at
	 * most HS_CURVE_AUTO_STEPS page accesses in all (a few seconds), and
	 * without sampling; else LRU. The curve's policy says which.
	 */
	HS_CURVE_AUTO,
};
#define HS_CURVE_AUTO_STEPS (UINT64_C(1) << 29)

/* Kernel: each file's readahead window is its device's read_ahead_kb. */
#define HS_CURVE_RA_DEVICE UINT64_MAX

struct hs_curve_opts {
	enum hs_curve_policy policy;
	/*
	 * SHARDS at a fixed rate: follow the pages whose hash is below
	 * rate * 2^64. 0 (or 1): follow every page, exactly.
	 */
	double sample_rate;
	/*
	 * SHARDS of fixed size: follow at most this many pages, lowering the
	 * threshold (from sample_rate, or 1) to drop the page of the highest
	 * hash when one more would be needed. 0: no bound.
	 */
	uint64_t sample_size;
	/*
	 * When sampling: the distinct pages of the trace, if the caller knows
	 * them (a profile's file lines list the pages its trace accesses),
	 * rather than counted at every access, which costs sampling much of
	 * its speed. 0: counted. An exact curve always counts.
	 */
	uint64_t known_pages;
	/*
	 * Kernel: the cache sizes to simulate, in pages, in any order (the
	 * curve's points are sorted); NULL: points sizes evenly from 0 to the
	 * working set, as round(M * i / (points - 1)), 101 if points is 0.
	 */
	const uint64_t *sizes;
	size_t nsizes;
	unsigned points;
	/* Kernel: the readahead window in pages (0: none), or HS_CURVE_RA_DEVICE. */
	uint64_t read_ahead_pages;
};

/*
 * The curves: misses at cache sizes k * step pages (LRU: accesses that
 * miss) or size[k] pages (kernel: pages read from the disk).
 */
struct hs_curve {
	enum hs_curve_policy policy;
	uint64_t accesses;	/* N: every access, sampled or not */
	uint64_t pages;		/* M: distinct pages accessed (exact even when sampling) */
	bool sampled;		/* SHARDS: the curves are estimates */
	double sample_rate;	/* the rate at the end (1 when exact) */
	uint64_t sampled_pages;	/* pages followed at the end */
	uint64_t step;		/* pages between two points (1 when exact) */
	size_t n;		/* points: sizes 0 .. (n - 1) * step */
	double *cold;		/* cold[k]: accesses that miss with k * step pages */
	double *rerun;		/* the same for the re-run; LRU: 0 at the last point */
	uint64_t *size;		/* kernel: the size of point k, ascending; NULL: k * step */
	uint64_t read_ahead_pages;	/* kernel: the largest readahead window used */
};

/* The cache size of point k, in pages. */
uint64_t hs_curve_size(const struct hs_curve *c, size_t k);

/* Misses with a cache of cache_pages (the point at or below it; the last beyond). */
double hs_curve_misses(const struct hs_curve *c, uint64_t cache_pages, bool rerun);

/* Headline figures, in pages of cache. */
struct hs_curve_summary {
	uint64_t rerun_zero;	/* the least cache at which a re-run reads nothing */
	/*
	 * The knee of the cold curve: the size furthest below the straight
	 * line from (0, N) to the least size at which the cold curve reaches
	 * its floor (each page read once); that size itself when no point
	 * lies below the line (a scan: nothing helps until all of it fits).
	 */
	uint64_t knee;
	uint64_t rerun_hits90, rerun_hits99;	/* least sizes for 90%, 99% of accesses to hit, re-run */
	uint64_t cold_hits90, cold_hits99;	/* the same from cold; UINT64_MAX if never */
};
void hs_curve_summarize(const struct hs_curve *c, struct hs_curve_summary *s);

/* Release what hs_curve_finish() or hs_curve_from_profile() filled. */
void hs_curve_release(struct hs_curve *c);

/* ---- building from a stream of accesses -------------------------------- */

struct hs_curve_builder;

/*
 * A builder for accesses to page ids below npages (at most 2^30 for an
 * exact curve). Returns 0, -EINVAL (bad options), -E2BIG or -ENOMEM.
 */
int hs_curve_new(const struct hs_curve_opts *o, uint64_t npages, struct hs_curve_builder **out);

/* One access to page id (< npages). Returns 0 or -ENOMEM. */
int hs_curve_access(struct hs_curve_builder *b, uint64_t page);

/*
 * Accesses to pages[0], pages[1], ... pages[n - 1], in that order: the
 * same as one call per page, but faster on a large trace (the pages to
 * come are looked up ahead). Stops at a page >= npages (-EINVAL).
 */
int hs_curve_access_many(struct hs_curve_builder *b, const uint64_t *pages, size_t n);

/* Accesses to pages first, first + 1, ..., first + n - 1, in that order. */
int hs_curve_access_run(struct hs_curve_builder *b, uint64_t first, uint64_t n);

/*
 * Compute the curves into *out (the caller releases it with
 * hs_curve_release()). The builder is spent: free it after. Returns 0 or
 * -ENOMEM.
 */
int hs_curve_finish(struct hs_curve_builder *b, struct hs_curve *out);

void hs_curve_builder_free(struct hs_curve_builder *b);

/* ---- the trace of a profile, as dense page ids ------------------------- */

/*
 * A profile's trace lines as runs of dense ids: the pages of the file
 * lines, numbered file after file in page order (file i's pages follow
 * file i-1's), so that ids need an array rather than a map.
 */
struct hs_trace;

/*
 * Read the file lines of r (rewound first) and stand before its trace.
 * -ENODATA when the profile has no trace lines; -EINVAL (err says where)
 * for a malformed profile; -E2BIG beyond 2^63 pages; -ENOMEM.
 */
int hs_trace_open(struct hs_profile_reader *r, struct hs_trace **out, struct hs_error *err);

/* The pages the ids number: every page of the file lines. */
uint64_t hs_trace_pages(const struct hs_trace *t);

/*
 * The next run of accesses: ids *first .. *first + *n - 1, in order.
 * Returns 1, 0 at the end, or -EINVAL with err filled (a malformed line,
 * or a trace page that its file line does not list).
 */
int hs_trace_next(struct hs_trace *t, uint64_t *first, uint64_t *n, struct hs_error *err);

void hs_trace_close(struct hs_trace *t);

/* ---- the kernel's policy, simulated ------------------------------------- */

/* A file of a kernel simulation. */
struct hs_curve_kfile {
	uint64_t pages;		/* its size, in pages: readahead stops there */
	uint64_t read_ahead;	/* its readahead window, in pages (0: none) */
	unsigned flags;		/* enum hs_file_flag: mapped (faults read around), direct */
};

/* Accesses to pages first .. first + n - 1 of a file, in that order. */
struct hs_curve_krun {
	uint64_t file, first, n;
};

/*
 * The kernel model's curves of runs[0 .. nruns) over files[0 .. nfiles),
 * at the sizes of o (o->read_ahead_pages is not used: each file has its
 * window). Returns 0, -EINVAL (a run beyond its file, or a bad policy),
 * -E2BIG (more than 2^31 pages to follow) or -ENOMEM.
 */
int hs_curve_kernel(const struct hs_curve_kfile *files, size_t nfiles,
		    const struct hs_curve_krun *runs, size_t nruns, const struct hs_curve_opts *o,
		    struct hs_curve *out);

/*
 * The curves of the trace of profile r, by o->policy. Returns 0, or what
 * hs_trace_open(), hs_trace_next(), the builder or hs_curve_kernel()
 * returned.
 */
int hs_curve_from_profile(struct hs_profile_reader *r, const struct hs_curve_opts *o,
			  struct hs_curve *out, struct hs_error *err);

#endif
