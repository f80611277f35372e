/*
 * evict.h - dropping a file's pages from the page cache.
 *
 * POSIX_FADV_DONTNEED drops clean, unmapped pages. Dirty pages are written
 * back first (unless the caller says not to), so that they can go too;
 * pages that are mapped by a process, locked, or redirtied meanwhile stay,
 * and the caller is told how many. Files on tmpfs and ramfs live only in
 * the cache: nothing drops them but deleting them.
 */
#ifndef HOTSET_EVICT_H
#define HOTSET_EVICT_H

#include <stdbool.h>

#include "cache/residency.h"

struct hs_evict_result {
	struct hs_cache_counts before;	/* residency before */
	struct hs_cache_counts after;	/* what stayed */
	bool known;			/* false: residency unknown (-EPERM) */
	bool memory_only;		/* what stayed is on tmpfs or ramfs */
};

/*
 * Evict the given page ranges of fd (size bytes; ranges NULL = whole file),
 * writing dirty pages back first if writeback is set. Returns 0 or -errno;
 * *res is filled on success, with known false when residency could not be
 * read (the eviction was still done).
 */
int hs_evict(int fd, uint64_t size, const struct hs_range *ranges, size_t nranges, bool writeback,
	     struct hs_evict_result *res);

#endif
