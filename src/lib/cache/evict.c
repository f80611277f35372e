/*
 * evict.c - drop pages from the page cache, and say what stayed.
 *
 * A span that reaches the file's last page is passed on with length 0 ("to
 * the end of the file"), not with the file's size: DONTNEED drops only the
 * folios wholly inside the span, and a large folio can straddle the end of
 * a file (written in large writes, then truncated to mid-folio), so a span
 * ending at st_size leaves it and its pages resident.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <string.h>
#include <sys/vfs.h>

#include "cache/evict.h"

/*
 * Apply one action to the byte span of each range, clipped to the file;
 * len 0 means to the end of the file (see above).
 */
static int each_span(int fd, uint64_t size, const struct hs_range *ranges, size_t nranges,
		     int (*fn)(int fd, uint64_t off, uint64_t len))
{
	const uint64_t ps = hs_page_size(), npages = (size + ps - 1) / ps;
	int rc;

	if (!ranges)
		return size ? fn(fd, 0, 0) : 0;
	for (size_t i = 0; i < nranges; i++) {
		uint64_t off, len;

		/* clip in pages first: (last + 1) * ps may not fit in 64 bits */
		if (ranges[i].first >= npages)
			continue;
		off = ranges[i].first * ps;
		len = ranges[i].last + 1 < npages ? (ranges[i].last + 1) * ps - off : 0;
		if ((rc = fn(fd, off, len)))
			return rc;
	}
	return 0;
}

static int write_back(int fd, uint64_t off, uint64_t len)
{
	if (sync_file_range(fd, (off_t)off, (off_t)len,
			    SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
				    SYNC_FILE_RANGE_WAIT_AFTER) < 0)
		return -errno;
	return 0;
}

static int drop(int fd, uint64_t off, uint64_t len)
{
	/* posix_fadvise returns the error instead of setting errno */
	return -posix_fadvise(fd, (off_t)off, (off_t)len, POSIX_FADV_DONTNEED);
}

int hs_evict(int fd, uint64_t size, const struct hs_range *ranges, size_t nranges, bool writeback,
	     struct hs_evict_result *res)
{
	struct hs_evict_result r = { .known = true };
	enum hs_residency_method how = 0;
	bool clean;
	int rc;

	rc = hs_residency_count(fd, size, ranges, nranges, &r.before, &how);
	if (rc == -EPERM)
		r.known = false;
	else if (rc)
		return rc;
	/* only cachestat can tell that nothing is dirty */
	clean = r.known && how == HS_RES_CACHESTAT && !r.before.dirty && !r.before.writeback;
	if (writeback && !clean &&
	    (rc = each_span(fd, size, ranges, nranges, write_back)))
		return rc;
	if ((rc = each_span(fd, size, ranges, nranges, drop)))
		return rc;
	if (r.known && (rc = hs_residency_count(fd, size, ranges, nranges, &r.after, NULL)))
		return rc;
	if (r.after.cached) {
		struct statfs sf;

		r.memory_only = fstatfs(fd, &sf) == 0 &&
				(sf.f_type == TMPFS_MAGIC || sf.f_type == RAMFS_MAGIC);
	}
	*res = r;
	return 0;
}
