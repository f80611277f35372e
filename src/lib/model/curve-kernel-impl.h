/*
 * curve-kernel-impl.h - the kernel model's parts, shared by its files and
 * private to them (curve-kernel.h is the API):
 *
 *   curve-kernel.c        the search over sizes, hs_curve_kernel(), and the
 *                         curves of a profile (the design: its comment)
 *   curve-kernel-trace.c  the trace decoded once: runs kept, the sample
 *                         drawn, the pages followed numbered (struct model)
 *   curve-kernel-sim.c    one simulation: the file LRU lists, refaults,
 *                         readahead, and the threads that run them (struct
 *                         sim)
 *
 * A model is written while the trace is read, then only read: every
 * simulation shares it, each with its own struct sim.
 */
#ifndef HOTSET_CURVE_KERNEL_IMPL_H
#define HOTSET_CURVE_KERNEL_IMPL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/curve-kernel.h"

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

/* ---- the trace, decoded once (curve-kernel-trace.c) ---------------------------- */

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

static inline uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static inline uint64_t pow2_up(uint64_t x)
{
	uint64_t p = 1;

	while (p < x)
		p <<= 1;
	return p;
}

/* The first page and the end of the readahead's reach at page pg of file f. */
static inline void ck_limits(const struct model *m, size_t f, uint64_t pg, uint64_t *lo,
			     uint64_t *hi)
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
 * A model of files[0 .. nfiles) for o (its budget, its rate), ready for
 * the first pass. Returns 0, -E2BIG or -ENOMEM; ck_model_free() after,
 * whatever it returned.
 */
int ck_model_init(struct model *m, const struct hs_curve_kfile *files, size_t nfiles,
		  const struct hs_curve_opts *o);
void ck_model_free(struct model *m);

/* A run of the trace, counted (first pass) and kept if the model keeps it. */
int ck_model_add(struct model *m, uint64_t file, uint64_t first, uint64_t n);

/* The blocks of the sample, drawn from the first pass's counts. */
int ck_draw_sample(struct model *m);

/* The pages to follow, numbered, from the runs kept. */
int ck_model_spans(struct model *m);

/* ---- one simulation (curve-kernel-sim.c) ------------------------------------- */

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

/* The work of a round of simulations, shared by its threads. */
struct round {
	const struct hs_curve_opts *o;
	const uint64_t *caps;	/* the caches to simulate, in pages of the sample */
	uint64_t (*reads)[2];	/* what each read, cold and re-run */
	size_t n, next;		/* next: the next to take (atomic) */
	uint64_t done;		/* accesses simulated (atomic), of the whole search */
	uint64_t total;		/* of the whole search, an estimate */
};

struct worker {
	struct round *rd;
	struct sim sim;
	bool main;
	pthread_t tid;
};

/* A simulation of model m, its cache not yet sized. 0 or -ENOMEM; ck_sim_free() after. */
int ck_sim_alloc(struct sim *s, const struct model *m);
void ck_sim_free(struct sim *s);

/* A worker's thread (struct worker *): the simulations of its round it takes. */
void *ck_work(void *arg);

#endif
