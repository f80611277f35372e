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
 * readahead), simulated at some sizes it picks (or is given): its points
 * are at the sizes in size[], and it counts the pages read from the disk,
 * which readahead makes more than the accesses that miss.
 *
 * The model of hotset's commands (curve's default, doctor's chart and
 * recommendation, run's memory need, curve --mem-request) is one:
 * hs_curve_from_profile() with HS_CURVE_AUTO, the kernel model; each
 * report names it (hs_curve_model_name()).
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

#include "base/hotset.h"
#include "profile/profile.h"

enum hs_curve_policy {
	HS_CURVE_LRU = 0,	/* least recently used: what Mattson's stack models */
	HS_CURVE_KERNEL,	/* Linux's file LRU lists, refaults and readahead (no MGLRU) */
	/*
	 * hs_curve_from_profile() only: the model of hotset's commands, KERNEL
	 * (its fast path samples a long trace by itself); LRU when SHARDS
	 * sampling is asked for. The curve's policy says which.
	 */
	HS_CURVE_AUTO,
};

/*
 * Kernel: the simulated page accesses (every size, both passes) beyond
 * which the model simulates a spatial sample of the trace rather than all
 * of it: 2^24 (a fraction of a second), or HS_CURVE_STEPS_PER_ACCESS times
 * the trace's accesses if more (bench/curve.sh: within a few times exact
 * LRU's time).
 */
#define HS_CURVE_KERNEL_STEPS (UINT64_C(1) << 24)
#define HS_CURVE_STEPS_PER_ACCESS 16

/* Kernel: each file's readahead window is its device's read_ahead_kb. */
#define HS_CURVE_RA_DEVICE UINT64_MAX

struct hs_curve_opts {
	enum hs_curve_policy policy;
	/*
	 * SHARDS at a fixed rate: follow the pages whose hash is below
	 * rate * 2^64. 0 (or 1): follow every page, exactly. Kernel: simulate
	 * the blocks whose hash is below it, whatever the budget (1: the whole
	 * trace); 0: as the budget allows.
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
	 * Kernel: cache sizes to simulate, in pages, in any order, besides
	 * those the model picks to find the curve's shape and end (the
	 * curve's points are all of them, sorted, each once); with sizes_only,
	 * these alone. points: also points sizes evenly from 0 to the curve's
	 * end (hs_curve_even_size()).
	 */
	const uint64_t *sizes;
	size_t nsizes;
	bool sizes_only;
	unsigned points;
	/* Kernel: the readahead window in pages (0: none), or HS_CURVE_RA_DEVICE. */
	uint64_t read_ahead_pages;
	/*
	 * Kernel: the budget of simulated page accesses, 0 for the default
	 * (HS_CURVE_KERNEL_STEPS...), UINT64_MAX to simulate the whole trace
	 * whatever it costs.
	 */
	uint64_t max_steps;
	/*
	 * Kernel: called now and then (from the calling thread) with the
	 * phase ("reading", "simulating"), the work done and the work
	 * expected in all, in page accesses (total: an estimate, 0 unknown).
	 */
	void (*progress)(void *arg, const char *phase, uint64_t done, uint64_t total);
	void *progress_arg;
};

/*
 * The curves: misses at cache sizes k * step pages (LRU: accesses that
 * miss) or size[k] pages (kernel: pages read from the disk).
 *
 * Kernel, sampled (a long trace): the simulations are miniature ones
 * (Waldspurger et al., ATC '17): only the blocks of pages of a file whose
 * hash falls below a threshold are simulated, in a cache as much smaller
 * as the sample's pages are fewer, and what they read scaled back up.
 * sample_rate is that ratio (sampled distinct pages / distinct pages).
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
	/*
	 * The least size at which both curves have reached their floors (the
	 * least they read at any size), beyond which more cache reads no
	 * less: LRU the working set; kernel found by its search, at least the
	 * working set. Points evenly spaced go from 0 to it.
	 */
	uint64_t end;
	/*
	 * Whether the points reach a size from which more cache changes
	 * nothing (every page the job brings in fits): false only for a
	 * kernel curve of sizes_only that all fall short of it. Then what
	 * is not reached at the last point is not known beyond it.
	 */
	bool complete;
};

/* The name of the model of a curve, as the reports print it: "kernel" or "lru". */
const char *hs_curve_model_name(const struct hs_curve *c);

/* The same of a policy; HS_CURVE_AUTO's without sampling: "kernel". */
const char *hs_curve_policy_name(enum hs_curve_policy p);

/* The cache size of point k, in pages. */
uint64_t hs_curve_size(const struct hs_curve *c, size_t k);

/*
 * Misses with a cache of cache_pages: the point at or below it (the last
 * beyond the last). Exact at every size for LRU; for the kernel model
 * only at its points (hs_curve_point() says whether a size is one).
 */
double hs_curve_misses(const struct hs_curve *c, uint64_t cache_pages, bool rerun);

/* The index of the point at exactly cache_pages, or -1: not simulated. */
ptrdiff_t hs_curve_point(const struct hs_curve *c, uint64_t cache_pages);

/*
 * Point i of n evenly spaced from 0 to the curve's end:
 * round(end * i / (n - 1)), the sizes opts.points asks the kernel model for.
 */
uint64_t hs_curve_even_size(const struct hs_curve *c, unsigned i, unsigned n);

/*
 * Headline figures, in pages of cache. A size is HS_CURVE_NEVER when no
 * size up to upto reaches it (upto UINT64_MAX: none at all, since beyond
 * the curve's end nothing changes), HS_CURVE_UNKNOWN when the curve says
 * nothing (a sample that followed no page).
 */
#define HS_CURVE_NEVER UINT64_MAX
#define HS_CURVE_UNKNOWN (UINT64_MAX - 1)
struct hs_curve_summary {
	uint64_t rerun_zero;	/* the least cache at which a re-run reads nothing */
	/*
	 * The size at which the re-run reads the least it reads at any size
	 * (rerun_zero when that is nothing; more with O_DIRECT, or readahead
	 * that reads pages the last run left out): the cache a re-run needs.
	 */
	uint64_t rerun_floor;
	/*
	 * The knee of the cold curve: of the points from its highest to the
	 * least size at which it reaches its floor (each page read once, and
	 * what readahead adds), the one furthest below the straight line
	 * between those two; the floor's size itself when no point lies below
	 * the line (a scan: nothing helps until all of it fits); NEVER when the
	 * curve does not fall (a job that reads each page once: no cache
	 * helps a cold start).
	 */
	uint64_t knee;
	uint64_t rerun_hits90, rerun_hits99;	/* least sizes for 90%, 99% of accesses to hit, re-run */
	uint64_t cold_hits90, cold_hits99;	/* the same from cold */
	uint64_t upto;		/* NEVER holds up to this size (UINT64_MAX: at any size) */
};
void hs_curve_summarize(const struct hs_curve *c, struct hs_curve_summary *s);

/*
 * The cache a warm re-run needs, in pages, the one rule of curve, doctor
 * and run: the least at which it reads the least it reads at any size
 * (s->rerun_floor: nothing, most often); the working set when the curve
 * says nothing (a sample that follows no page).
 */
uint64_t hs_curve_rerun_cache(const struct hs_curve *c, const struct hs_curve_summary *s);

/* Release what hs_curve_finish() or hs_curve_from_profile() filled. */
void hs_curve_release(struct hs_curve *c);

/* ---- building from a stream of accesses -------------------------------- */

struct hs_curve_builder;

/* An exact curve's most pages: its time axis of 2M slots fits 32 bits. */
#define HS_CURVE_EXACT_MAX_PAGES (UINT64_C(1) << 30)

/*
 * A builder for accesses to page ids below npages (at most
 * HS_CURVE_EXACT_MAX_PAGES for an exact curve). Returns 0, -EINVAL (bad options), -E2BIG or -ENOMEM.
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
 * at the sizes it picks and those of o (o->read_ahead_pages is not used:
 * each file has its window), simulating a sample of the trace when all
 * of it would take more than o->max_steps. Returns 0, -EINVAL (a run
 * beyond its file, or a bad policy), -E2BIG (more than 2^31 pages to
 * follow) or -ENOMEM.
 */
int hs_curve_kernel(const struct hs_curve_kfile *files, size_t nfiles,
		    const struct hs_curve_krun *runs, size_t nruns, const struct hs_curve_opts *o,
		    struct hs_curve *out);

/*
 * The options of the model of hotset's commands, which curve, doctor and
 * run (and curve --mem-request) start from: HS_CURVE_AUTO, each file's
 * device's readahead window, the default budget.
 */
void hs_curve_model_opts(struct hs_curve_opts *o);

/*
 * The curves of the trace of profile r, by o->policy (HS_CURVE_AUTO: the
 * model of hotset's commands). Returns 0, or what hs_trace_open(),
 * hs_trace_next(), the builder or hs_curve_kernel() returned.
 */
int hs_curve_from_profile(struct hs_profile_reader *r, const struct hs_curve_opts *o,
			  struct hs_curve *out, struct hs_error *err);

#endif
