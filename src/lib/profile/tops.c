/*
 * tops.c - the largest directories and files of a profile (tops.h).
 *
 * Directories are known by a 128-bit hash of their name, never by the
 * name itself: a million-file profile may have as many directories, and
 * the table holds a bounded number of them. Names come back from one
 * more read of the profile, for the few directories printed, from the
 * first file under each (whose index the table keeps).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profile/tops.h"

/*
 * a + b, or UINT64_MAX when that does not fit: a count that saturates
 * reads as "at least this", never as a small number after a wrap.
 */
static uint64_t add_capped(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

/*
 * The directories of a path, from the top: "/" for an absolute path ("."
 * for a relative one), then the name before each later '/'. The hashes
 * are two 64-bit FNV-1a style ones with different primes, run once over
 * the path: the state at a '/' is the hash of the name before it, so a
 * path of any depth costs one pass. 128 bits: no collision in practice.
 */
struct dirs {
	const char *s;
	size_t n, at;		/* the path, and where the scan is */
	uint64_t a, b;		/* the hash state over s[0..at) */
	bool started;
	/* the current directory */
	uint64_t hi, lo;
	size_t len;		/* its name is s[0..len), or "." when len is 0 */
	uint32_t depth;
};

/*
 * One more byte into both hash states. The first is FNV-1a (its 64-bit
 * prime); the second multiplies by another odd constant and folds the
 * high bits down: a second, different function of the same bytes, and
 * 128 bits between the two.
 */
static void hash_byte(struct dirs *w, unsigned char c)
{
	w->a = (w->a ^ c) * 0x100000001b3u;
	w->b = (w->b ^ c) * 0xff51afd7ed558ccdu;
	w->b ^= w->b >> 31;
}

/* The hash of the name s[0..len), from the state over it and its length. */
static void hash_final(struct dirs *w, size_t len)
{
	w->hi = w->a;
	w->lo = (w->b ^ (len * 0x9e3779b97f4a7c15u)) * 0xbf58476d1ce4e5b9u;
	w->lo ^= w->lo >> 29;
	w->len = len;
}

/*
 * Stand before the first directory of path[0..len). The states start from
 * FNV's offset basis and from its halves swapped.
 */
static void dirs_start(struct dirs *w, const char *path, size_t len)
{
	memset(w, 0, sizeof(*w));
	w->s = path;
	w->n = len;
	w->a = 0xcbf29ce484222325u;
	w->b = 0x84222325cbf29ce4u;
}

/* Step to the next directory of the path; false after the last (the file's own). */
static bool dirs_next(struct dirs *w)
{
	if (!w->started) {
		w->started = true;
		w->depth = 0;
		if (w->n && w->s[0] == '/') {
			hash_byte(w, '/');
			w->at = 1;
			hash_final(w, 1);
		} else {
			/* "." is not a prefix of the path: its hash is of "." alone */
			struct dirs dot = *w;

			hash_byte(&dot, '.');
			hash_final(&dot, 0);
			w->hi = dot.hi, w->lo = dot.lo, w->len = 0;
		}
		return true;
	}
	for (; w->at < w->n; w->at++) {
		unsigned char c = (unsigned char)w->s[w->at];

		/* a '/' after a name: s[0..at) is a directory ("a//b" has no empty one) */
		if (c == '/' && w->at > 0 && w->s[w->at - 1] != '/') {
			hash_final(w, w->at);
			w->depth++;
			hash_byte(w, c);
			w->at++;
			return true;
		}
		hash_byte(w, c);
	}
	return false;
}

/*
 * Swap two places of the heap. Each entry knows its place (d[].heap), so
 * that the entry a file just counted can be moved down from where it is,
 * without a search.
 */
static void heap_swap(struct hs_tops *t, uint32_t a, uint32_t b)
{
	uint32_t x = t->heap[a];

	t->heap[a] = t->heap[b];
	t->heap[b] = x;
	t->d[t->heap[a]].heap = a;
	t->d[t->heap[b]].heap = b;
}

/* Counts only grow, so an entry only ever moves down. */
static void heap_down(struct hs_tops *t, uint32_t i)
{
	for (;;) {
		uint32_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < t->dirs_counted && t->d[t->heap[l]].pages < t->d[t->heap[m]].pages)
			m = l;
		if (r < t->dirs_counted && t->d[t->heap[r]].pages < t->d[t->heap[m]].pages)
			m = r;
		if (m == i)
			return;
		heap_swap(t, i, m);
		i = m;
	}
}

/*
 * Count f's pages in directory w (whose parent's hash is up_hi, up_lo).
 * Three cases: the directory is in the table; the table has room for it;
 * or it is full, and the directory with the fewest pages makes way
 * (Space-Saving, tops.h). The heap is built the first time the table is
 * full, not before: a profile of fewer directories never pays for it.
 * Returns 0 or -ENOMEM.
 */
static int dir_add(struct hs_tops *t, const struct dirs *w, uint64_t up_hi, uint64_t up_lo,
		   const struct hs_profile_file *f)
{
	struct hs_tops_entry *e;
	void *v;

	if ((v = u64map_get2(&t->map, w->hi, w->lo))) {
		e = &t->d[(uintptr_t)v - 1];
	} else if (t->dirs_counted < HS_TOPS_DIR_MAX) {
		if (hs_grow(&t->d, &t->cap, t->dirs_counted + 1, sizeof(*t->d)) ||
		    u64map_put2(&t->map, w->hi, w->lo, (void *)(uintptr_t)(t->dirs_counted + 1)))
			return -ENOMEM;
		e = &t->d[t->dirs_counted++];
		*e = (struct hs_tops_entry){ .hi = w->hi, .lo = w->lo, .up_hi = up_hi,
					     .up_lo = up_lo, .first = f->index, .depth = w->depth };
	} else {
		if (!t->full) {
			if (!(t->heap = malloc(t->dirs_counted * sizeof(*t->heap))))
				return -ENOMEM;
			for (uint32_t i = 0; i < t->dirs_counted; i++)
				t->heap[i] = i, t->d[i].heap = i;
			for (uint32_t i = (uint32_t)t->dirs_counted / 2; i-- > 0;)
				heap_down(t, i);
			t->full = true;
		}
		/* the smallest makes way; the newcomer inherits its counts */
		e = &t->d[t->heap[0]];
		u64map_del2(&t->map, e->hi, e->lo);
		if (u64map_put2(&t->map, w->hi, w->lo, (void *)(uintptr_t)(t->heap[0] + 1)))
			return -ENOMEM;
		e->hi = w->hi, e->lo = w->lo, e->up_hi = up_hi, e->up_lo = up_lo;
		e->first = f->index, e->depth = w->depth;
	}
	e->pages = add_capped(e->pages, f->pages);
	e->files++;
	if (t->full)
		heap_down(t, e->heap);
	return 0;
}

/*
 * Count f in every directory on its way, from / down: a file of depth d
 * costs d updates, and the table's weight (what Space-Saving's error
 * bound divides) is the pages times the depth.
 */
static int dirs_add(struct hs_tops *t, const struct hs_profile_file *f)
{
	uint64_t up_hi = 0, up_lo = 0;
	struct dirs w;
	int rc;

	dirs_start(&w, f->path, f->path_len);
	while (dirs_next(&w)) {
		if ((rc = dir_add(t, &w, up_hi, up_lo, f)))
			return rc;
		up_hi = w.hi, up_lo = w.lo;
	}
	return 0;
}

/*
 * Keep f if it is among the HS_TOPS_N largest so far (ties: the first in
 * the profile). file[] is sorted, largest first, and small: an insertion.
 * Its paths are copies that t owns (hs_tops_release() frees them); the
 * one that drops out lends its buffer to the newcomer. Returns 0 or
 * -ENOMEM.
 */
static int files_add(struct hs_tops *t, const struct hs_profile_file *f)
{
	struct hs_top_file x = { 0 };
	size_t k = t->nfiles;

	if (!f->pages || (k == HS_TOPS_N && t->file[k - 1].pages >= f->pages))
		return 0;
	if (k == HS_TOPS_N)
		x = t->file[--k];	/* the last makes way: reuse its buffer */
	if (x.cap < f->path_len + 1) {
		char *p = realloc(x.path, f->path_len + 1);

		if (!p)
			return -ENOMEM;	/* the array is as it was */
		x.path = p, x.cap = f->path_len + 1;
	}
	if (k == t->nfiles)
		t->nfiles++;
	memcpy(x.path, f->path, f->path_len + 1);
	x.len = f->path_len, x.pages = f->pages, x.nranges = f->nranges;
	for (; k > 0 && t->file[k - 1].pages < f->pages; k--)
		t->file[k] = t->file[k - 1];
	t->file[k] = x;
	return 0;
}

/* The files, then the total, then the directories (tops.h). */
int hs_tops_add(struct hs_tops *t, const struct hs_profile_file *f)
{
	int rc = files_add(t, f);

	if (rc)
		return rc;
	t->pages = add_capped(t->pages, f->pages);
	return dirs_add(t, f);
}

/*
 * After replacements: the survivors' figures, exactly. A count inherited
 * from a directory that made way is an upper bound only; a second read of
 * the profile counts each file again, in the directories still in the
 * table alone, and their first files anew. Returns 0, or what
 * hs_profile_next() returned (err filled).
 */
static int dirs_recount(struct hs_tops *t, struct hs_profile_reader *r, struct hs_error *err)
{
	struct hs_profile_item it;
	struct dirs w;
	void *v;
	int rc;

	for (size_t i = 0; i < t->dirs_counted; i++)
		t->d[i].pages = t->d[i].files = 0, t->d[i].first = UINT64_MAX;
	hs_profile_rewind(r);
	while ((rc = hs_profile_next(r, &it, err)) > 0 && it.kind == HS_ITEM_FILE) {
		dirs_start(&w, it.file.path, it.file.path_len);
		while (dirs_next(&w)) {
			if (!(v = u64map_get2(&t->map, w.hi, w.lo)))
				continue;
			struct hs_tops_entry *e = &t->d[(uintptr_t)v - 1];

			e->pages = add_capped(e->pages, it.file.pages);
			e->files++;
			if (e->first == UINT64_MAX)
				e->first = it.file.index;
		}
	}
	return rc < 0 ? rc : 0;
}

/* Is directory a larger than b: more pages, or as many and first seen earlier. */
static bool dir_before(const struct hs_tops_entry *a, const struct hs_tops_entry *b)
{
	return a->pages > b->pages || (a->pages == b->pages && a->first < b->first);
}

/*
 * Name the directories want[0..n) into out[] (names still NULL), from
 * the first file under each: the profile is read again until each has
 * its name. The table knows each directory's first file, so a file is
 * looked at only when it is one of those. The names are allocated and
 * out[]'s (t's in the end: hs_tops_release() frees them), those made
 * before a failure too. Returns 0, -ENOMEM, what hs_profile_next()
 * returned, or -EINVAL if the profile changed between two reads.
 */
static int name_dirs(const struct hs_tops *t, struct hs_profile_reader *r, const uint32_t *want,
		     struct hs_top_dir *out, size_t n, struct hs_error *err)
{
	struct hs_profile_item it;
	size_t named = 0;
	struct dirs w;
	int rc = 0;

	if (!n)
		return 0;
	hs_profile_rewind(r);
	while (named < n && (rc = hs_profile_next(r, &it, err)) > 0 && it.kind == HS_ITEM_FILE) {
		for (size_t k = 0; k < n; k++) {
			const struct hs_tops_entry *e = &t->d[want[k]];

			if (out[k].name || e->first != it.file.index)
				continue;
			dirs_start(&w, it.file.path, it.file.path_len);
			while (dirs_next(&w) && (w.hi != e->hi || w.lo != e->lo))
				;
			if (w.hi != e->hi || w.lo != e->lo)
				continue;	/* not under it after all: reported below */
			out[k].name = w.len ? strndup(it.file.path, w.len) : strdup(".");
			if (!out[k].name)
				return -ENOMEM;
			named++;
		}
	}
	if (named == n)
		return 0;
	return rc < 0 ? rc : hs_error_set(err, EINVAL, "a directory of the profile vanished "
					   "between two reads");
}

/*
 * Each directory's parent in the table, and the pages of its largest
 * subdirectory. A parent is missing only for a small directory: a
 * directory's true count is at least its child's, so when the child is
 * large enough to be sure of its place, so is the parent; a small child
 * may have outlived its parent by inheriting a larger count.
 */
static void link_dirs(struct hs_tops *t)
{
	void *v;

	for (size_t i = 0; i < t->dirs_counted; i++)
		t->d[i].most = 0, t->d[i].up = 0;
	for (size_t i = 0; i < t->dirs_counted; i++) {
		struct hs_tops_entry *e = &t->d[i];

		if (!e->depth || !(v = u64map_get2(&t->map, e->up_hi, e->up_lo)))
			continue;	/* a top, or a small directory whose parent made way */
		e->up = (uint32_t)(uintptr_t)v;
		if (t->d[e->up - 1].most < e->pages)
			t->d[e->up - 1].most = e->pages;
	}
}

/*
 * Everything here is a pass over the table, never over the files: the
 * counts are exact by now, and the table is all there is to rank.
 */
int hs_tops_finish(struct hs_tops *t, struct hs_profile_reader *r, struct hs_error *err)
{
	uint32_t top[HS_TOPS_N + 1] = { 0 };
	size_t ntop = 0;
	int64_t under = -1;
	int rc = 0;

	if (t->full && (rc = dirs_recount(t, r, err)))
		return rc;
	link_dirs(t);
	for (size_t i = 0; i < t->dirs_counted; i++) {
		const struct hs_tops_entry *e = &t->d[i];
		size_t k = ntop;

		/* more than half, and deeper than any other such: they nest, one chain */
		if (e->pages > t->pages - e->pages &&
		    (under < 0 || e->depth > t->d[under].depth))
			under = (int64_t)i;
		/* a directory whose pages are all in one subdirectory says nothing more */
		if (!e->pages || e->most == e->pages ||
		    (k == HS_TOPS_N && !dir_before(e, &t->d[top[k - 1]])))
			continue;
		if (k < HS_TOPS_N)
			ntop++;
		else
			k--;
		for (; k > 0 && dir_before(e, &t->d[top[k - 1]]); k--)
			top[k] = top[k - 1];
		top[k] = (uint32_t)i;
	}
	for (size_t k = 0; k < ntop; k++)
		t->dir[k] = (struct hs_top_dir){ t->d[top[k]].pages, t->d[top[k]].files, NULL };
	t->ndirs = ntop;
	if (under >= 0) {
		t->under = (struct hs_top_dir){ t->d[under].pages, t->d[under].files, NULL };
		top[ntop] = (uint32_t)under;
	}
	/* one pass names them all: the largest, then the one with most of the pages */
	{
		struct hs_top_dir names[HS_TOPS_N + 1] = { { 0 } };
		size_t n = ntop + (under >= 0);

		rc = name_dirs(t, r, top, names, n, err);
		for (size_t k = 0; k < n; k++) {
			if (k < ntop)
				t->dir[k].name = names[k].name;
			else
				t->under.name = names[k].name;
		}
	}
	t->finished = true;
	return rc;
}

/* ---- the directories that hold the working set --------------------------- */

/*
 * A fix that keeps whole directories cached (hotset-persist@ snapshots
 * what is resident under one at shutdown) wants directories that hold
 * the job's pages and little else: / holds them all, and everything else
 * cached too. hs_tops_cover() walks down from / as long as that loses
 * little of the working set (tops.h has the rule), on the tree the table
 * already holds: each directory's subdirectories, largest first, found
 * by sorting the table once by parent.
 */
struct cover {
	const struct hs_tops *t;
	uint32_t *kids;		/* every linked directory, grouped by parent, largest first */
	uint32_t *start;	/* kids of directory i: kids[start[i]..start[i + 1]) */
};

/* Order for kids: by parent, then larger first (ties: first in the profile). */
static int kid_cmp(const void *a, const void *b, void *ctx)
{
	const struct hs_tops_entry *d = ctx;
	const struct hs_tops_entry *x = &d[*(const uint32_t *)a], *y = &d[*(const uint32_t *)b];

	if (x->up != y->up)
		return x->up < y->up ? -1 : 1;
	if (dir_before(x, y))
		return -1;
	return dir_before(y, x) ? 1 : 0;
}

/*
 * Group the linked directories by parent, each group largest first:
 * kids[] and start[], which the caller frees (even on failure: they are
 * NULL or whole). Sorted once, so that a split looks at a directory's
 * children in order and stops at the first one too small. Returns 0 or
 * -ENOMEM.
 */
static int cover_index(struct cover *c)
{
	const struct hs_tops *t = c->t;
	size_t n = 0, j = 0;

	c->kids = malloc((t->dirs_counted + 1) * sizeof(*c->kids));
	c->start = malloc((t->dirs_counted + 1) * sizeof(*c->start));
	if (!c->kids || !c->start)
		return -ENOMEM;
	for (size_t i = 0; i < t->dirs_counted; i++)
		if (t->d[i].up)
			c->kids[n++] = (uint32_t)i;
	qsort_r(c->kids, n, sizeof(*c->kids), kid_cmp, t->d);
	for (size_t i = 0; i <= t->dirs_counted; i++) {
		while (j < n && t->d[c->kids[j]].up - 1 < i)
			j++;
		c->start[i] = (uint32_t)j;
	}
	return 0;
}

/*
 * What replacing directory i by its largest subdirectories of at least
 * minp pages, room at most of them, would keep: their number (0 if none),
 * and the pages lost (its own files', and the other subdirectories').
 */
static size_t split_of(const struct cover *c, uint32_t i, uint64_t minp, size_t room,
		       uint64_t *lost)
{
	const struct hs_tops_entry *d = c->t->d;
	uint64_t kept = 0;
	size_t n = 0;

	for (uint32_t k = c->start[i];
	     k < c->start[i + 1] && n < room && d[c->kids[k]].pages >= minp; k++)
		kept += d[c->kids[k]].pages, n++;
	*lost = d[i].pages - kept;	/* the subdirectories hold at most their parent's */
	return n;
}

/* share percent of pages, rounded up, without overflow. */
static uint64_t share_of(uint64_t pages, unsigned share)
{
	return pages / 100 * share + ((pages % 100) * share + 99) / 100;
}

int hs_tops_cover(struct hs_tops *t, unsigned share, size_t max, uint64_t min_part,
		  struct hs_profile_reader *r, struct hs_error *err)
{
	struct cover c = { .t = t };
	uint32_t set[HS_TOPS_COVER_MAX];
	size_t n = 0;
	uint64_t held = 0, target, minp;
	int rc;

	if (!t->finished)
		return hs_error_set(err, EINVAL, "hs_tops_cover() before hs_tops_finish()");
	for (size_t k = 0; k < t->ncover; k++)
		free(t->cover[k].name);
	t->ncover = 0, t->cover_pages = 0;
	if (max > HS_TOPS_COVER_MAX)
		max = HS_TOPS_COVER_MAX;
	if (share > 100)
		share = 100;
	if (!t->pages || !max)
		return 0;
	target = share_of(t->pages, share);
	minp = min_part ? t->pages / min_part : 0;
	minp = minp ? minp : 1;
	if ((rc = cover_index(&c)))
		goto out;
	/*
	 * Ties in the loss go to the larger directory, then to profile order,
	 * so that the result never depends on where the table put an entry.
	 */
	/* the top: / (and ., were a path not absolute) */
	for (size_t i = 0; i < t->dirs_counted && n < max; i++)
		if (!t->d[i].depth && t->d[i].pages)
			set[n++] = (uint32_t)i, held += t->d[i].pages;
	/* down: the split that loses least, while the share holds */
	for (;;) {
		size_t best = SIZE_MAX, best_kids = 0;
		uint64_t best_lost = 0, lost;

		for (size_t s = 0; s < n; s++) {
			const uint64_t pages = t->d[set[s]].pages;
			size_t kids = split_of(&c, set[s], minp, max - n + 1, &lost);

			/* it gives way only to what holds most of its own pages too */
			if (!kids || held - lost < target || pages - lost < share_of(pages, share))
				continue;
			if (best == SIZE_MAX || lost < best_lost ||
			    (lost == best_lost && dir_before(&t->d[set[s]], &t->d[set[best]])))
				best = s, best_kids = kids, best_lost = lost;
		}
		if (best == SIZE_MAX)
			break;
		uint32_t i = set[best];

		set[best] = set[--n];
		for (size_t k = 0; k < best_kids; k++)
			set[n++] = c.kids[c.start[i] + k];
		held -= best_lost;
	}
	/* largest first */
	for (size_t a = 1; a < n; a++)
		for (size_t b = a; b > 0 && dir_before(&t->d[set[b]], &t->d[set[b - 1]]); b--) {
			uint32_t x = set[b];

			set[b] = set[b - 1], set[b - 1] = x;
		}
	/* then as few as hold the share: the smallest go while the rest still do */
	while (n > 1 && held - t->d[set[n - 1]].pages >= target)
		held -= t->d[set[--n]].pages;
	for (size_t k = 0; k < n; k++)
		t->cover[k] = (struct hs_top_dir){ t->d[set[k]].pages, t->d[set[k]].files, NULL };
	rc = name_dirs(t, r, set, t->cover, n, err);
	t->ncover = n;	/* names that failed are NULL: released all the same */
	t->cover_pages = held;
out:
	free(c.kids);
	free(c.start);
	return rc;
}

/* Everything t owns: the table, the heap, the names and paths it made. */
void hs_tops_release(struct hs_tops *t)
{
	u64map_free(&t->map);
	free(t->d);
	free(t->heap);
	for (size_t k = 0; k < t->ndirs; k++)
		free(t->dir[k].name);
	for (size_t k = 0; k < t->ncover; k++)
		free(t->cover[k].name);
	free(t->under.name);
	for (size_t k = 0; k < t->nfiles; k++)
		free(t->file[k].path);
	memset(t, 0, sizeof(*t));
}
