/*
 * summary.h - what a profile holds, counted for show: its files, pages,
 * ranges, flags, outputs and trace lines, and where its pages are
 * (tops.h), in memory that does not grow with the profile.
 *
 * Use: zero a struct hs_summary, hs_summary_add() each item of one pass
 * over the profile (the caller may print them in the same pass),
 * hs_summary_finish() with the reader (it reads the profile again, for
 * the directories), read the counts and tops; hs_summary_release().
 */
#ifndef HOTSET_SUMMARY_H
#define HOTSET_SUMMARY_H

#include <stdint.h>

#include "profile/profile.h"
#include "profile/tops.h"

#define HS_SUMMARY_FLAGS 5	/* the bits of enum hs_file_flag */

struct hs_summary {
	uint64_t files, outputs, trace_lines;
	uint64_t ranges;		/* of all the files */
	uint64_t one_range, several;	/* files read in one range, in several */
	uint64_t no_pages;		/* files without pages */
	uint64_t max_ranges;		/* the most ranges of one file */
	uint64_t used[HS_SUMMARY_FLAGS];	/* files per flag bit (enum hs_file_flag) */
	/* where the pages are; tops.pages: the pages of all the files (capped at 2^64 - 1) */
	struct hs_tops tops;
};

/* Count item it (of any kind). Returns 0 or -ENOMEM. */
int hs_summary_add(struct hs_summary *s, const struct hs_profile_item *it);

/*
 * After the last item: the largest directories and those that hold the
 * working set (hs_tops_finish(), then hs_tops_cover() by the rule show
 * and doctor share), reading r again. Returns as hs_tops_cover().
 */
int hs_summary_finish(struct hs_summary *s, struct hs_profile_reader *r, struct hs_error *err);

void hs_summary_release(struct hs_summary *s);

#endif
