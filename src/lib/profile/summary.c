/*
 * summary.c - what a profile holds, counted for show (summary.h).
 *
 * Profiles can have a million files, so nothing is kept per file:
 * counters, and the largest directories and files (tops.c), which read
 * the profile again to name them.
 */
#include "profile/summary.h"

int hs_summary_add(struct hs_summary *s, const struct hs_profile_item *it)
{
	const struct hs_profile_file *f = &it->file;

	if (it->kind == HS_ITEM_OUTPUT) {
		s->outputs++;
		return 0;
	}
	if (it->kind == HS_ITEM_TRACE) {
		s->trace_lines++;
		return 0;
	}
	s->files++;
	s->ranges += f->nranges;
	if (f->nranges > s->max_ranges)
		s->max_ranges = f->nranges;
	if (!f->nranges)
		s->no_pages++;
	else if (f->nranges == 1)
		s->one_range++;
	else
		s->several++;
	for (unsigned b = 0; b < HS_SUMMARY_FLAGS; b++)
		s->used[b] += !!(f->flags & (1u << b));
	/* the pages too: each file's fit in 64 bits (the parser sees to it), a sum may not */
	return hs_tops_add(&s->tops, f);
}

int hs_summary_finish(struct hs_summary *s, struct hs_profile_reader *r, struct hs_error *err)
{
	int rc = hs_tops_finish(&s->tops, r, err);

	if (rc)
		return rc;
	return hs_tops_cover(&s->tops, HS_TOPS_COVER_SHARE, HS_TOPS_COVER_MAX, HS_TOPS_COVER_MIN,
			     r, err);
}

void hs_summary_release(struct hs_summary *s)
{
	hs_tops_release(&s->tops);
}
