/*
 * tops.h - which directories and files hold most of a profile's pages: the
 * summary that show prints and doctor reports, in bounded memory.
 *
 * Profiles can have a million files, so nothing is kept per file:
 * the HS_TOPS_N largest files, and a table of at most HS_TOPS_DIR_MAX
 * directories. Up to that many directories the figures are exact. Past
 * it, a new directory takes the place of the one with the fewest pages and
 * starts from its counts (Space-Saving, Metwally et al. 2005): a
 * directory's count is then never below its true one and above it by at
 * most total/HS_TOPS_DIR_MAX, so every directory with more than that many
 * pages is still in the table; hs_tops_finish() recounts the survivors
 * exactly. The listing can then only miss a directory of under 1/32768 of
 * the pages, and its figures are always exact. Memory: about 3 MiB.
 *
 * Use: zero a struct hs_tops, hs_tops_add() each file line of a profile,
 * hs_tops_finish() with the reader (it reads the profile again, once or
 * twice), read dir[] and file[], hs_tops_release().
 */
#ifndef HOTSET_TOPS_H
#define HOTSET_TOPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/u64map.h"
#include "hotset/profile.h"

#define HS_TOPS_N 10		/* rows of the largest directories and files */
#define HS_TOPS_DIR_MAX 32768	/* directories counted exactly */

/* One of the largest files, its path copied (the reader's is short-lived). */
struct hs_top_file {
	uint64_t pages;
	size_t nranges;
	char *path;
	size_t len, cap;
};

/* One of the largest directories, by the pages of the files directly in it. */
struct hs_top_dir {
	uint64_t pages, files;
	char *name;
};

struct hs_tops_entry {
	uint64_t hi, lo;	/* a 128-bit hash of its name: names are not kept */
	uint64_t pages, files;
	uint64_t first;		/* index of its first file: ties go to profile order */
	uint32_t heap;		/* its position in the heap */
};

struct hs_tops {
	/* the result, largest first (ties: first in the profile) */
	struct hs_top_file file[HS_TOPS_N];
	size_t nfiles;
	struct hs_top_dir dir[HS_TOPS_N];	/* filled by hs_tops_finish() */
	size_t ndirs;
	size_t dirs_counted;	/* directories in the table */
	bool full;		/* more than HS_TOPS_DIR_MAX directories: "more than" that */
	/* private */
	struct u64map map;	/* (hi, lo) -> index into d, plus 1 */
	struct hs_tops_entry *d;
	size_t cap;
	uint32_t *heap;		/* once full: indices into d, a min-heap by pages */
};

/* Count file f. Returns 0 or -ENOMEM. */
int hs_tops_add(struct hs_tops *t, const struct hs_profile_file *f);

/*
 * Pick and name the largest directories, reading r again (rewound).
 * Returns 0, -ENOMEM, or what hs_profile_next() returned (err filled).
 */
int hs_tops_finish(struct hs_tops *t, struct hs_profile_reader *r, struct hs_error *err);

void hs_tops_release(struct hs_tops *t);

#endif
