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

#include "profile/profile.h"
#include "cache/targets.h"

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

/* ---- over the files a command acts on (targets.h) ---------------------- */

/* What is resident of one target. */
struct hs_target_residency {
	int rc;				/* 0, -EPERM (unknown), or another -errno */
	struct hs_cache_counts counts;	/* of its pages, when rc is 0 */
	enum hs_residency_method method;
	/*
	 * The file's bytes in its pages, and in its resident ones: the last
	 * page holds only the bytes before the end of the file, so that
	 * resident bytes never exceed the size (fincore counts it whole).
	 */
	uint64_t bytes, resident_bytes;
};

/*
 * Residency of the pages target t asks about (a profile entry's ranges,
 * or the whole file) into *r. Returns r->rc: 0, -EPERM when residency
 * cannot be known (r->bytes still filled), or another -errno.
 */
int hs_residency_target(const struct hs_target *t, struct hs_target_residency *r);

/*
 * What is resident of a set of targets, as status reports it and as keep
 * and doctor need it: pages asked about, resident, dirty, evicted... over
 * the files whose residency could be known, and apart, the files (and
 * their pages) whose residency could not be known. Initialise to zero.
 */
struct hs_residency_total {
	uint64_t files;			/* files counted, known or not */
	uint64_t bytes;			/* their bytes in the pages asked about */
	uint64_t resident_bytes;	/* of those, resident (known files only) */
	struct hs_cache_counts known;	/* over the files whose residency is known */
	uint64_t unknown_files;		/* residency unknown (no write permission) */
	uint64_t unknown_pages;
	enum hs_residency_method method; /* which facility answered last; 0 if none did */
};

/*
 * Count target t into *total with what hs_residency_target(t, r) said:
 * known counts are added, an unknown file's pages counted apart, and a
 * file that could not be examined (another rc) not at all. Returns
 * whether t was counted. Not thread-safe: callers walking with several
 * threads take a lock around it (hs_residency_target(), the syscalls,
 * needs none).
 */
bool hs_residency_total_add(struct hs_residency_total *total, const struct hs_target *t,
			    const struct hs_target_residency *r);

/* Pages asked about in all: known and unknown. */
static inline uint64_t hs_residency_total_pages(const struct hs_residency_total *total)
{
	return total->known.pages + total->unknown_pages;
}

/*
 * A profile entry of what is resident of target t now, for a snapshot:
 * t's path and identity (device, inode, size, mtime), and its resident
 * pages as ranges in file order (e->file.nranges is 0 when nothing is).
 * The entry's storage is e's (a few ranges inline, more allocated):
 * release it with hs_residency_entry_release(), also after a failure.
 * Returns 0, -EPERM when residency cannot be known, or another -errno.
 */
struct hs_resident_entry {
	struct hs_profile_file file;
	/* private */
	struct hs_range *v;
	size_t cap;
	struct hs_range some[64];
};
int hs_residency_entry(const struct hs_target *t, struct hs_resident_entry *e);
void hs_residency_entry_release(struct hs_resident_entry *e);

#endif
