/*
 * residency.h - which pages of a file are in the page cache.
 *
 * cachestat(2) (Linux 6.5) answers with counts, including dirty, writeback
 * and evicted pages, without mapping anything. Where it is missing we fall
 * back to mincore(2) over bounded windows of a read-only mapping.
 *
 * Both refuse to tell an unprivileged caller about a file it could not
 * write: cachestat fails with EPERM, and mincore pretends every page is
 * resident. We report such files as unknown (-EPERM), never as a number.
 */
#ifndef HOTSET_RESIDENCY_H
#define HOTSET_RESIDENCY_H

#include <stdbool.h>
#include <stdint.h>

#include "hotset/profile.h"

/* Page counts over the part of a file that was asked about. */
struct hs_cache_counts {
	uint64_t pages;		/* pages asked about (within the file's size) */
	uint64_t cached;	/* of those, resident */
	uint64_t dirty;		/* resident and not yet written back */
	uint64_t writeback;	/* being written back */
	uint64_t evicted;	/* evicted, per the kernel's shadow entries */
	uint64_t recently_evicted; /* evicted recently enough to refault */
};

/* Which kernel facility answered. */
enum hs_residency_method {
	HS_RES_CACHESTAT = 1,
	HS_RES_MINCORE = 2,
};

/* Add b's counts to a. */
void hs_cache_counts_add(struct hs_cache_counts *a, const struct hs_cache_counts *b);

/*
 * Count the resident pages of fd (a regular file of size bytes) within the
 * given page ranges (pages past the end of the file are ignored); ranges
 * NULL means the whole file. Counts are added to *acc; *method (optional)
 * says which facility answered, and only cachestat fills dirty, writeback
 * and evicted.
 *
 * Returns 0, or -EPERM when residency cannot be known for this caller (no
 * write permission), or another -errno. *acc is untouched on failure.
 */
int hs_residency_count(int fd, uint64_t size, const struct hs_range *ranges, size_t nranges,
		       struct hs_cache_counts *acc, enum hs_residency_method *method);

/*
 * Call fn for each run of resident pages of fd (size bytes) within
 * [first, last], in order. Uses mincore over bounded windows, after a
 * cachestat check that skips files with nothing (or everything) resident.
 * Returns 0, -EPERM when residency cannot be known, another -errno, or the
 * first non-zero value fn returned.
 */
typedef int (*hs_resident_run_fn)(void *ctx, uint64_t first, uint64_t last);
int hs_residency_runs(int fd, uint64_t size, uint64_t first, uint64_t last,
		      hs_resident_run_fn fn, void *ctx);

/*
 * Fraction resident in each of ncells equal slices of the file (for a
 * residency bar); a cell is -1 when unknown. Returns 0 or -errno.
 */
int hs_residency_cells(int fd, uint64_t size, double *cells, int ncells);

/*
 * Is cachestat(2) available on this kernel? Probed once, by trying it.
 * Every user of cachestat asks this first, so that all of them fall back
 * to mincore together.
 *
 * Test hook: HOTSET_NO_CACHESTAT set in the environment (to anything but
 * "" or "0") before the first call makes the answer false, as on kernels
 * before 6.5 (Debian 12's 6.1), so that the mincore paths can be tested
 * where cachestat exists.
 */
bool hs_have_cachestat(void);

#endif
