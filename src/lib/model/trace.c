/*
 * trace.c - a profile's access trace as runs of dense page ids (trace.h).
 *
 * The file lines come first in a profile: hs_trace_open() reads them all,
 * keeping each file's ranges sorted and merged, and the id of the first
 * page of each range (a prefix sum of the pages before it). Then each
 * trace line is cut into runs that lie within one range, whose ids are
 * consecutive: a lookup per run, not per page, by bisection over the
 * file's ranges after a try of the range the file's last run fell in
 * (a trace mostly goes on where it was).
 *
 * Memory: the file lines' ranges, never the trace.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "model/trace.h"

struct tfile {
	size_t r0, nr;		/* its ranges: ranges[r0 .. r0 + nr), sorted, merged */
	size_t hint;		/* the one the last access fell in */
};

struct hs_trace {
	struct hs_profile_reader *r;
	struct tfile *files;
	size_t nfiles, files_cap;
	struct hs_range *ranges;
	uint64_t *id;		/* id of ranges[i].first */
	size_t nranges, ranges_cap, id_cap;
	uint64_t pages;
	struct hs_profile_item it;	/* the trace line being read */
	size_t ri;			/* its range being read */
	uint64_t pos;			/* the next page of that range */
	bool have;
};

/* Ranges by their first page: a file line's are in profile order, not sorted. */
static int cmp_first(const void *x, const void *y)
{
	const struct hs_range *a = x, *b = y;

	return a->first < b->first ? -1 : a->first > b->first;
}

/*
 * Take file line f's ranges: sorted, those that touch merged (so that a
 * run of the trace crosses a range's end only where its file has a gap),
 * and numbered after the pages of the files before it. Returns 0, -ENOMEM,
 * or -E2BIG when the ids would pass 2^63 (the curves count in them).
 */
static int add_file(struct hs_trace *t, const struct hs_profile_file *f)
{
	struct tfile *tf;
	size_t n = 0;

	if (hs_grow(&t->files, &t->files_cap, t->nfiles + 1, sizeof(*t->files)) ||
	    hs_grow(&t->ranges, &t->ranges_cap, t->nranges + f->nranges, sizeof(*t->ranges)) ||
	    hs_grow(&t->id, &t->id_cap, t->nranges + f->nranges, sizeof(*t->id)))
		return -ENOMEM;
	tf = &t->files[t->nfiles++];
	tf->r0 = t->nranges;
	tf->hint = 0;
	memcpy(t->ranges + t->nranges, f->ranges, f->nranges * sizeof(*f->ranges));
	qsort(t->ranges + t->nranges, f->nranges, sizeof(*t->ranges), cmp_first);
	/* the parser saw that they are disjoint: merge those that touch */
	for (size_t i = 0; i < f->nranges; i++) {
		struct hs_range *rg = &t->ranges[t->nranges + i], *prev;

		if (n && (prev = &t->ranges[t->nranges + n - 1])->last + 1 == rg->first) {
			prev->last = rg->last;
			continue;
		}
		t->ranges[t->nranges + n] = *rg;
		n++;
	}
	for (size_t i = 0; i < n; i++) {
		const struct hs_range *rg = &t->ranges[t->nranges + i];

		if (t->pages > (UINT64_MAX >> 1) - (rg->last - rg->first + 1))
			return -E2BIG;
		t->id[t->nranges + i] = t->pages;
		t->pages += rg->last - rg->first + 1;
	}
	tf->nr = n;
	t->nranges += n;
	return 0;
}

int hs_trace_open(struct hs_profile_reader *r, struct hs_trace **out, struct hs_error *err)
{
	struct hs_trace *t;
	int rc;

	if (!hs_profile_totals(r)->trace_lines)
		return hs_error_set(err, ENODATA, "the profile has no access trace");
	if (!(t = calloc(1, sizeof(*t))))
		return hs_error_set(err, ENOMEM, "out of memory");
	t->r = r;
	hs_profile_rewind(r);
	while ((rc = hs_profile_next(r, &t->it, err)) > 0) {
		if (t->it.kind == HS_ITEM_TRACE)
			break;
		if (t->it.kind == HS_ITEM_FILE && (rc = add_file(t, &t->it.file))) {
			hs_error_set(err, -rc, rc == -E2BIG ? "more pages than a curve can number"
							    : "out of memory");
			break;
		}
	}
	if (rc == 0)	/* the trailer promised trace lines that never came */
		rc = hs_error_set(err, ENODATA, "the profile has no access trace");
	if (rc < 0) {
		hs_trace_close(t);
		return rc;
	}
	t->have = true;
	t->ri = 0;
	t->pos = t->it.trace.ranges[0].first;
	*out = t;
	return 0;
}

uint64_t hs_trace_pages(const struct hs_trace *t)
{
	return t->pages;
}

/* The range of file f that holds page p, or -1. */
static ptrdiff_t find_range(const struct hs_trace *t, struct tfile *f, uint64_t p)
{
	const struct hs_range *rg = t->ranges + f->r0;
	size_t lo = 0, hi = f->nr;

	if (f->hint < f->nr && rg[f->hint].first <= p && p <= rg[f->hint].last)
		return (ptrdiff_t)f->hint;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (rg[mid].last < p)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == f->nr || rg[lo].first > p)
		return -1;
	f->hint = lo;
	return (ptrdiff_t)lo;
}

/* LRU wants the ids alone: where they are in the profile is dropped. */
int hs_trace_next(struct hs_trace *t, uint64_t *first, uint64_t *n, struct hs_error *err)
{
	uint64_t file, page;

	return hs_trace_next_in_file(t, &file, &page, first, n, err);
}

int hs_trace_next_in_file(struct hs_trace *t, uint64_t *file, uint64_t *page, uint64_t *first,
			  uint64_t *n, struct hs_error *err)
{
	/*
	 * The run is the rest of the trace line's current range, cut where
	 * its file's range ends (ids are consecutive within one range only);
	 * then the position moves on: within the range, to the line's next
	 * range, or to the next trace line.
	 */
	const struct hs_profile_trace *tr = &t->it.trace;
	struct tfile *f;
	const struct hs_range *rg;
	ptrdiff_t k;
	uint64_t end;
	int rc;

	if (!t->have)
		return 0;
	f = &t->files[tr->file];
	if ((k = find_range(t, f, t->pos)) < 0) {
		if (err) {
			hs_error_set(err, EINVAL, "page %llu of file %llu is in the trace but not "
				     "among the file's pages", (unsigned long long)t->pos,
				     (unsigned long long)tr->file);
			err->line = t->it.line;
		}
		return -EINVAL;
	}
	rg = &t->ranges[f->r0 + (size_t)k];
	end = tr->ranges[t->ri].last < rg->last ? tr->ranges[t->ri].last : rg->last;
	*file = tr->file;
	*page = t->pos;
	*first = t->id[f->r0 + (size_t)k] + (t->pos - rg->first);
	*n = end - t->pos + 1;
	if (end < tr->ranges[t->ri].last) {
		t->pos = end + 1;
	} else if (++t->ri < tr->nranges) {
		t->pos = tr->ranges[t->ri].first;
	} else {
		/* the next trace line; its ranges replace this one's */
		if ((rc = hs_profile_next(t->r, &t->it, err)) < 0)
			return rc;
		t->have = rc > 0 && t->it.kind == HS_ITEM_TRACE;
		t->ri = 0;
		if (t->have)
			t->pos = t->it.trace.ranges[0].first;
	}
	return 1;
}

void hs_trace_close(struct hs_trace *t)
{
	if (!t)
		return;
	free(t->files);
	free(t->ranges);
	free(t->id);
	free(t);
}
