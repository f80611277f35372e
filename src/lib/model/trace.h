/*
 * trace.h - a profile's access trace in the form both simulations take
 * (curve.h's LRU and kernel models): runs of accesses to dense page ids.
 *
 * A profile names an access by its file and its page in that file
 * ("t 3 10-20"); a simulation wants a page as a small integer, an index
 * into its arrays. The ids are the pages of the file lines, numbered file
 * after file in page order (file i's pages follow file i-1's), so that
 * ids need an array rather than a map. Every page of a trace line is
 * among the pages its file line lists (docs/profile.md): one that is not
 * has no id, and is refused with its line number.
 *
 * Use: hs_trace_open() on a profile (it reads the file lines), then
 * hs_trace_next() until it returns 0, then hs_trace_close(). The trace is
 * streamed from the profile, never held: a run at a time.
 */
#ifndef HOTSET_TRACE_H
#define HOTSET_TRACE_H

#include <stdint.h>

#include "base/hotset.h"
#include "profile/profile.h"

/* A profile's trace lines as runs of dense ids (the file's comment). */
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


/*
 * hs_trace_next(), and where the run is in the profile's terms: its file
 * (the index of its file line) and the run's first page in that file,
 * for a model that follows files (the kernel's readahead).
 */
int hs_trace_next_in_file(struct hs_trace *t, uint64_t *file, uint64_t *page, uint64_t *first,
			  uint64_t *n, struct hs_error *err);

/* Release t (NULL is fine); the profile's reader stays the caller's. */
void hs_trace_close(struct hs_trace *t);

#endif
