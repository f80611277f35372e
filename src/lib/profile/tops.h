/*
 * tops.h - which directories and files hold most of a profile's pages: the
 * summary that show prints and doctor reports, in bounded memory.
 *
 * A directory's figures are those of every file under it, at any depth,
 * as du counts: /usr/include/boost holds the pages of boost/asio/x.hpp
 * too, and / holds them all. From those totals come three answers:
 *
 *   - the largest directories (dir[]), leaving out a directory whose
 *     pages are all in one of its subdirectories (/usr/lib/gcc when
 *     /usr/lib/gcc/x86_64-linux-gnu/12 holds them all): its line would
 *     repeat that subdirectory's;
 *   - the deepest directory that holds most (more than half) of the
 *     pages (under): "most of the working set is under DIR";
 *   - the directories that hold the working set (cover[], hs_tops_cover()):
 *     the fewest directories, as deep as they can be, that together hold
 *     90% of it, for a fix that keeps whole directories cached.
 *
 * Profiles can have a million files, so nothing is kept per file:
 * the HS_TOPS_N largest files, and a table of at most HS_TOPS_DIR_MAX
 * directories. Each file counts in each directory on its way (a file
 * of depth d in d of them). Up to that many directories the figures are
 * exact. Past it, a new directory takes the place of the one with the
 * fewest pages and starts from its counts (Space-Saving, Metwally et al.
 * 2005, with weights): a directory's count is then never below its true
 * one and above it by at most W/HS_TOPS_DIR_MAX, W being the pages
 * counted over all directories (the pages times the files' mean depth),
 * so every directory with more than that many pages is still in the
 * table, its ancestors too; hs_tops_finish() recounts the survivors
 * exactly. The listing can then only miss a directory of a tiny share of
 * the pages (under 1/3000 for paths 10 directories deep), and its figures
 * are always exact. Memory: about 4 MiB.
 *
 * Use: zero a struct hs_tops, hs_tops_add() each file line of a profile,
 * hs_tops_finish() with the reader (it reads the profile again, once or
 * twice), read dir[], under and file[]; hs_tops_cover() if wanted (once
 * more); hs_tops_release().
 */
#ifndef HOTSET_TOPS_H
#define HOTSET_TOPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/u64map.h"
#include "profile/profile.h"

#define HS_TOPS_N 10		/* rows of the largest directories and files */
#define HS_TOPS_DIR_MAX 32768	/* directories counted exactly */

/*
 * hs_tops_cover()'s rule, as show and doctor apply it: at most
 * HS_TOPS_COVER_MAX directories that hold at least HS_TOPS_COVER_SHARE
 * percent of the pages, and of a directory's subdirectories only those
 * of at least 1/HS_TOPS_COVER_MIN of all the pages stand on their own.
 */
#define HS_TOPS_COVER_SHARE 90
#define HS_TOPS_COVER_MAX 8
#define HS_TOPS_COVER_MIN 100

/* One of the largest files, its path copied (the reader's is short-lived). */
struct hs_top_file {
	uint64_t pages;
	size_t nranges;
	char *path;
	size_t len, cap;
};

/*
 * A directory, with the pages and files of everything under it. name is
 * "/" for the root (a path that is not absolute, which no profile has,
 * would be under "."); NULL in an empty slot (under, when no directory
 * holds most of the pages).
 */
struct hs_top_dir {
	uint64_t pages, files;
	char *name;
};

struct hs_tops_entry {
	uint64_t hi, lo;	/* a 128-bit hash of its name: names are not kept */
	uint64_t up_hi, up_lo;	/* its parent's (0, 0 for / and .) */
	uint64_t pages, files;
	uint64_t first;		/* index of its first file: ties go to profile order */
	uint64_t most;		/* after finish: the pages of its largest subdirectory */
	uint32_t heap;		/* its position in the heap */
	uint32_t depth;		/* 0 for / and ., 1 for /usr... */
	uint32_t up;		/* after finish: its parent's index + 1, 0 if not in the table */
};

struct hs_tops {
	/* the result, largest first (ties: first in the profile) */
	struct hs_top_file file[HS_TOPS_N];
	size_t nfiles;
	struct hs_top_dir dir[HS_TOPS_N];	/* filled by hs_tops_finish() */
	size_t ndirs;
	struct hs_top_dir under;	/* hs_tops_finish(): the deepest directory with
					   more than half the pages (name NULL if none) */
	struct hs_top_dir cover[HS_TOPS_COVER_MAX];	/* hs_tops_cover(), largest first */
	size_t ncover;
	uint64_t cover_pages;		/* the pages of cover[] together */
	uint64_t pages;			/* pages of all the files (capped at 2^64 - 1) */
	size_t dirs_counted;	/* directories in the table */
	bool full;		/* more than HS_TOPS_DIR_MAX directories: "more than" that */
	/* private */
	bool finished;
	struct u64map map;	/* (hi, lo) -> index into d, plus 1 */
	struct hs_tops_entry *d;
	size_t cap;
	uint32_t *heap;		/* once full: indices into d, a min-heap by pages */
};

/* Count file f. Returns 0 or -ENOMEM. */
int hs_tops_add(struct hs_tops *t, const struct hs_profile_file *f);

/*
 * Pick and name the largest directories and the one that holds most of
 * the pages, reading r again (rewound). Returns 0, -ENOMEM, or what
 * hs_profile_next() returned (err filled).
 */
int hs_tops_finish(struct hs_tops *t, struct hs_profile_reader *r, struct hs_error *err);

/*
 * After hs_tops_finish(): the directories that hold the working set, in
 * cover[] (ncover of them, cover_pages together), named from r (read
 * again): the fewest directories, each as deep as it can be, that hold
 * share percent of the pages. The rule, down from the top (/): a
 * directory gives way to its largest subdirectories of at least
 * 1/min_part of all the pages, as many as there is room for within max
 * directories (HS_TOPS_COVER_MAX at most), when they hold share percent
 * of its own pages and what is kept still holds share percent of all of
 * them (its own files and the other subdirectories are lost); the
 * replacements that lose fewest pages go first, so that a directory
 * whose pages are all in one subdirectory always gives way to it. Then
 * the smallest directories are left out while the others still hold
 * share percent. The result: none under another, largest first. No
 * pages: none. Returns as hs_tops_finish(); -EINVAL (err filled) if
 * called before it.
 */
int hs_tops_cover(struct hs_tops *t, unsigned share, size_t max, uint64_t min_part,
		  struct hs_profile_reader *r, struct hs_error *err);

void hs_tops_release(struct hs_tops *t);

#endif
