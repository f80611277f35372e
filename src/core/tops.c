/*
 * tops.c - the largest directories and files of a profile (tops.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hotset/tops.h"

static uint64_t add_capped(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

/* The directory part of a path: "/" for "/x", "." for a name without '/'. */
static const char *dir_name(const char *path, size_t len, size_t *dlen)
{
	const char *slash = memrchr(path, '/', len);

	*dlen = 1;
	if (!slash)
		return ".";
	if (slash == path)
		return "/";
	*dlen = (size_t)(slash - path);
	return path;
}

/* Two 64-bit FNV-1a style hashes with different primes: 128 bits, no collision in practice. */
static void hash128(const char *s, size_t n, uint64_t *hi, uint64_t *lo)
{
	uint64_t a = 0xcbf29ce484222325u, b = 0x84222325cbf29ce4u ^ n;

	for (size_t i = 0; i < n; i++) {
		a = (a ^ (unsigned char)s[i]) * 0x100000001b3u;
		b = (b ^ (unsigned char)s[i]) * 0xff51afd7ed558ccdu;
		b ^= b >> 31;
	}
	*hi = a;
	*lo = b;
}

static void dir_key(const struct hs_profile_file *f, uint64_t *hi, uint64_t *lo)
{
	size_t dlen;
	const char *d = dir_name(f->path, f->path_len, &dlen);

	hash128(d, dlen, hi, lo);
}

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

static int dirs_add(struct hs_tops *t, const struct hs_profile_file *f)
{
	struct hs_tops_entry *e;
	uint64_t hi, lo;
	void *v;

	dir_key(f, &hi, &lo);
	if ((v = u64map_get2(&t->map, hi, lo))) {
		e = &t->d[(uintptr_t)v - 1];
	} else if (t->dirs_counted < HS_TOPS_DIR_MAX) {
		if (hs_grow(&t->d, &t->cap, t->dirs_counted + 1, sizeof(*t->d)) ||
		    u64map_put2(&t->map, hi, lo, (void *)(uintptr_t)(t->dirs_counted + 1)))
			return -ENOMEM;
		e = &t->d[t->dirs_counted++];
		*e = (struct hs_tops_entry){ .hi = hi, .lo = lo, .first = f->index };
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
		if (u64map_put2(&t->map, hi, lo, (void *)(uintptr_t)(t->heap[0] + 1)))
			return -ENOMEM;
		e->hi = hi, e->lo = lo, e->first = f->index;
	}
	e->pages = add_capped(e->pages, f->pages);
	e->files++;
	if (t->full)
		heap_down(t, e->heap);
	return 0;
}

/* Keep f if it is among the HS_TOPS_N largest so far (ties: the first in the profile). */
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

int hs_tops_add(struct hs_tops *t, const struct hs_profile_file *f)
{
	int rc = files_add(t, f);

	return rc ? rc : dirs_add(t, f);
}

/* After replacements: the survivors' figures, exactly. */
static int dirs_recount(struct hs_tops *t, struct hs_profile_reader *r, struct hs_error *err)
{
	struct hs_profile_item it;
	uint64_t hi, lo;
	void *v;
	int rc;

	for (size_t i = 0; i < t->dirs_counted; i++)
		t->d[i].pages = t->d[i].files = 0, t->d[i].first = UINT64_MAX;
	hs_profile_rewind(r);
	while ((rc = hs_profile_next(r, &it, err)) > 0 && it.kind == HS_ITEM_FILE) {
		dir_key(&it.file, &hi, &lo);
		if (!(v = u64map_get2(&t->map, hi, lo)))
			continue;
		struct hs_tops_entry *e = &t->d[(uintptr_t)v - 1];

		e->pages = add_capped(e->pages, it.file.pages);
		e->files++;
		if (e->first == UINT64_MAX)
			e->first = it.file.index;
	}
	return rc < 0 ? rc : 0;
}

/* Is directory a larger than b: more pages, or as many and first seen earlier. */
static bool dir_before(const struct hs_tops_entry *a, const struct hs_tops_entry *b)
{
	return a->pages > b->pages || (a->pages == b->pages && a->first < b->first);
}

int hs_tops_finish(struct hs_tops *t, struct hs_profile_reader *r, struct hs_error *err)
{
	struct hs_profile_item it;
	size_t top[HS_TOPS_N], ntop = 0, named = 0, dlen;
	uint64_t hi, lo;
	int rc = 0;

	if (t->full && (rc = dirs_recount(t, r, err)))
		return rc;
	for (size_t i = 0; i < t->dirs_counted; i++) {
		size_t k = ntop;

		if (!t->d[i].pages || (k == HS_TOPS_N && !dir_before(&t->d[i], &t->d[top[k - 1]])))
			continue;
		if (k < HS_TOPS_N)
			ntop++;
		else
			k--;
		for (; k > 0 && dir_before(&t->d[i], &t->d[top[k - 1]]); k--)
			top[k] = top[k - 1];
		top[k] = i;
	}
	for (size_t k = 0; k < ntop; k++)
		t->dir[k] = (struct hs_top_dir){ t->d[top[k]].pages, t->d[top[k]].files, NULL };
	t->ndirs = ntop;
	/* names from one more pass: the first file of each */
	hs_profile_rewind(r);
	while (named < ntop && (rc = hs_profile_next(r, &it, err)) > 0 && it.kind == HS_ITEM_FILE) {
		dir_key(&it.file, &hi, &lo);
		for (size_t k = 0; k < ntop; k++) {
			const struct hs_tops_entry *e = &t->d[top[k]];
			const char *d;

			if (t->dir[k].name || e->hi != hi || e->lo != lo)
				continue;
			d = dir_name(it.file.path, it.file.path_len, &dlen);
			if (!(t->dir[k].name = strndup(d, dlen)))
				return -ENOMEM;
			named++;
		}
	}
	if (named == ntop)
		return 0;
	return rc < 0 ? rc : hs_error_set(err, EINVAL, "a directory of the profile vanished "
					   "between two reads");
}

void hs_tops_release(struct hs_tops *t)
{
	u64map_free(&t->map);
	free(t->d);
	free(t->heap);
	for (size_t k = 0; k < t->ndirs; k++)
		free(t->dir[k].name);
	for (size_t k = 0; k < t->nfiles; k++)
		free(t->file[k].path);
	memset(t, 0, sizeof(*t));
}
