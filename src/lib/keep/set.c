/*
 * set.c - the kept set: the profiles loaded in the order given, each read
 * with its owner's credentials (owners.c), their pages cut where the
 * budget runs out; a file of two profiles kept once, with the pages of
 * both; the files waiting to be read back (or locked); and a kept file
 * opened or looked at as its owner, the file loaded or nothing: what took
 * its path is followed if it is its owner's or root's, and the file is
 * dropped otherwise, and when it is deleted.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/safeopen.h"
#include "cache/residency.h"
#include "cache/targets.h"
#include "keep/keep-evict.h"
#include "keep/keeper.h"

void keep_unmap_file(struct kset *s, struct kfile *f)
{
	const uint64_t ps = hs_page_size();

	for (size_t w = 0; w < f->nwins; w++)
		munmap(f->wins[w].addr, f->wins[w].npages * ps);
	free(f->wins);
	f->wins = NULL;
	f->nwins = 0;
	if (f->locked) {
		s->locked_pages -= f->locked;
		s->locked_files--;
	}
	f->locked = 0;
}

void keep_set_free(struct kset *s)
{
	for (size_t i = 0; i < s->n; i++) {
		keep_unmap_file(s, &s->files[i]);
		free(s->files[i].path);
		free(s->files[i].ranges);
	}
	free(s->files);
	free(s->large);
	free(s->small);
	free(s->powner);
	memset(s, 0, sizeof(*s));
}

struct load {
	struct hs_keep *k;
	struct kset *s;
	size_t owner;			/* of the profile being loaded */
	int rc;
};

static void load_warn(void *ctx, const char *path, int errnum, const char *what)
{
	struct load *l = ctx;

	keep_warn(l->k, path, errnum, what);
}

/*
 * Append to *v (n ranges, cap) the pages of r[0..nr) that exist below npages,
 * that none of have[0..nhave) holds, and that the budget still pays for.
 */
static int add_ranges(struct kset *s, struct hs_range **v, size_t *n, size_t *cap,
		      const struct hs_range *r, size_t nr, uint64_t npages,
		      const struct hs_range *have, size_t nhave, uint64_t *added)
{
	for (size_t i = 0; i < nr && s->budget_pages; i++) {
		uint64_t a = r[i].first, b = r[i].last < npages ? r[i].last : npages - 1;

		while (a <= b && a < npages && s->budget_pages) {
			uint64_t end = b;

			/* the first page not already kept, and how far the gap goes
			 * (ranges of one profile are few per file: a scan suffices) */
			for (size_t j = 0; j < nhave; j++) {
				if (a >= have[j].first && a <= have[j].last) {
					a = have[j].last + 1;
					j = (size_t)-1;	/* again from the start */
					if (a > b)
						break;
				}
			}
			if (a > b)
				break;
			for (size_t j = 0; j < nhave; j++)
				if (have[j].first > a && have[j].first <= end)
					end = have[j].first - 1;
			if (end - a + 1 > s->budget_pages)
				end = a + s->budget_pages - 1;
			if (hs_grow(v, cap, *n + 1, sizeof(**v)))
				return -ENOMEM;
			(*v)[(*n)++] = (struct hs_range){ a, end };
			s->budget_pages -= end - a + 1;
			*added += end - a + 1;
			a = end + 1;
		}
	}
	return 0;
}

static int load_one(void *ctx, const struct hs_target *t)
{
	struct load *l = ctx;
	struct kset *s = l->s;
	const uint64_t ps = hs_page_size();
	uint64_t npages = ((uint64_t)t->st->st_size + ps - 1) / ps, added = 0;
	struct hs_cache_counts c = { 0 };
	struct kfile *f;
	void *had = NULL;
	size_t cap, idx;
	int rc;

	if (!s->budget_pages)
		return 1;	/* spent: the rest of the profiles is not kept */
	/* a file of profiles of two owners is kept for each: read with the credentials of each */
	rc = u64map_add2(&l->k->owners[l->owner].ids, t->st->st_dev, t->st->st_ino,
			 (void *)(uintptr_t)(s->n + 1), &had);
	if (rc < 0)
		return rc;
	if (!rc) {	/* in an earlier profile too: its pages not kept yet are added */
		f = &s->files[(uintptr_t)had - 1];
		cap = f->nranges;
		{
			struct hs_range *have = malloc((f->nranges ? f->nranges : 1) * sizeof(*have));

			if (!have)
				return -ENOMEM;
			memcpy(have, f->ranges, f->nranges * sizeof(*have));
			rc = add_ranges(s, &f->ranges, &f->nranges, &cap, t->ranges, t->nranges,
					npages, have, f->nranges, &added);
			free(have);
		}
		if (rc)
			return rc;
		f->pages += added;
		s->pages += added;
		f->large = f->pages * ps >= HS_KEEP_LARGE_BYTES;
		return 0;
	}
	if (hs_grow(&s->files, &s->cap, s->n + 1, sizeof(*s->files)))
		return -ENOMEM;
	idx = s->n;
	f = &s->files[idx];
	memset(f, 0, sizeof(*f));
	cap = 0;
	if (t->ranges)
		rc = add_ranges(s, &f->ranges, &f->nranges, &cap, t->ranges, t->nranges, npages,
				NULL, 0, &added);
	else if (npages)	/* never: profile targets have ranges; kept for safety */
		rc = add_ranges(s, &f->ranges, &f->nranges, &cap,
				&(struct hs_range){ 0, npages - 1 }, 1, npages, NULL, 0, &added);
	if (rc || !(f->path = strdup(t->path))) {
		free(f->ranges);
		return rc ? rc : -ENOMEM;
	}
	s->n++;
	f->pages = added;
	f->owner = (unsigned)l->owner;
	f->dev = t->st->st_dev;
	f->ino = t->st->st_ino;
	f->size = (uint64_t)t->st->st_size;
	f->mtime_sec = t->st->st_mtim.tv_sec;
	f->mtime_nsec = (uint32_t)t->st->st_mtim.tv_nsec;
	f->large = added * ps >= HS_KEEP_LARGE_BYTES;
	s->pages += added;
	s->stale += t->stale;
	if (l->k->o.mode == HS_KEEP_LOCK) {
		/* locking needs no residency: only that the file can be read */
		f->pending = P_FIRST;
		return 0;
	}
	rc = hs_residency_count(t->fd, f->size, f->ranges, f->nranges, &c, NULL);
	if (rc == -EPERM) {
		f->state = F_UNKNOWN;
		s->unknown++;
	} else if (rc) {
		keep_warn(l->k, f->path, -rc, "cannot read residency, not watched");
		f->state = F_UNKNOWN;
		s->unknown++;
	} else {
		f->resident = c.cached;
		if (c.cached < c.pages)
			f->pending = P_FIRST;
	}
	return 0;
}

/* Index lists of the large and small watched files. */
static int kset_index(struct kset *s)
{
	const uint64_t ps = hs_page_size();

	s->large = malloc((s->n ? s->n : 1) * sizeof(*s->large));
	s->small = malloc((s->n ? s->n : 1) * sizeof(*s->small));
	if (!s->large || !s->small)
		return -ENOMEM;
	s->bytes = 0;
	for (size_t i = 0; i < s->n; i++) {
		struct kfile *f = &s->files[i];

		s->bytes += f->pages * ps;
		if (f->state != F_WATCHED)
			continue;
		if (f->large)
			s->large[s->nlarge++] = i;
		else
			s->small[s->nsmall++] = i;
	}
	return 0;
}

/*
 * Open profile i as the keeper (its owner is the owner of the file read,
 * not of whatever its path names a moment later): *r, and *owner, the
 * owner whose credentials read its files. Returns 0 or -errno with err.
 */
static int profile_load_open(struct hs_keep *k, size_t i, struct hs_profile_reader **r,
			     size_t *owner, struct hs_error *err)
{
	const char *path = k->o.profiles[i];
	struct hs_error e = { 0 };
	struct stat st;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC), rc;

	*r = NULL;	/* hs_profile_close() of it is safe on every path */
	if (fd < 0)
		return hs_error_set(err, errno, "%s: %s", path, strerror(errno));
	if (fstat(fd, &st) < 0)
		rc = -errno;
	else
		rc = hs_profile_open_fd(fd, r, &e);
	close(fd);
	if (rc) {
		if (rc == -EINVAL && e.line)
			return hs_error_set(err, EINVAL, "%s:%u: %s", path, e.line, e.msg);
		return hs_error_set(err, -rc, "%s: %s", path, e.msg[0] ? e.msg : strerror(-rc));
	}
	if ((rc = keep_owner_of(k, st.st_uid, owner, &e))) {
		hs_profile_close(*r);
		return hs_error_set(err, -rc, "%s: %s", path, e.msg[0] ? e.msg : strerror(-rc));
	}
	return 0;
}

int keep_set_load(struct hs_keep *k, struct kset *s, struct hs_error *err)
{
	struct load l = { .k = k, .s = s };
	int rc = 0;

	memset(s, 0, sizeof(*s));
	s->budget_pages = k->o.budget / hs_page_size();
	if (!(s->powner = malloc((k->o.nprofiles ? k->o.nprofiles : 1) * sizeof(*s->powner))))
		return -ENOMEM;
	for (size_t i = 0; i < k->o.nprofiles; i++)
		s->powner[i] = SIZE_MAX;	/* not loaded: the budget was spent before it */
	for (size_t i = 0; i < k->o.nprofiles && !rc; i++) {
		struct hs_profile_reader *r = NULL;
		struct hs_error e = { 0 };

		if ((rc = profile_load_open(k, i, &r, &l.owner, err)))
			break;
		s->powner[i] = l.owner;
		/* its files opened, and their residency asked, as its owner */
		if ((rc = keep_creds_use(k, l.owner))) {
			hs_error_set(err, EPERM, "%s: cannot take the credentials of its owner, uid %u",
				     k->o.profiles[i], (unsigned)k->owners[l.owner].uid);
			hs_profile_close(r);
			break;
		}
		rc = hs_targets_profile(r, load_one, load_warn, &l, &e);
		hs_profile_close(r);
		if (rc == 1) {
			rc = 0;	/* the budget is spent */
			break;
		}
		if (rc == -EINVAL)
			hs_error_set(err, EINVAL, "%s:%u: %s", k->o.profiles[i], e.line, e.msg);
		else if (rc)
			hs_error_set(err, -rc, "%s: %s", k->o.profiles[i], strerror(-rc));
	}
	if (keep_creds_use(k, 0) && !rc)
		rc = hs_error_set(err, EPERM, "cannot take back the keeper's own credentials");
	for (size_t i = 0; i < k->nowners; i++)
		u64map_free(&k->owners[i].ids);
	if (!rc)
		rc = kset_index(s);
	if (rc)
		keep_set_free(s);
	/* the budget paid for what is kept, page for page */
	assert(rc || s->pages + s->budget_pages == k->o.budget / hs_page_size());
	return rc;
}

/* Files waiting to be read: those of a new set, for the first reading. */
int keep_pend_add(struct hs_keep *k, size_t i)
{
	if (hs_grow(&k->pend, &k->pend_cap, k->npend + 1, sizeof(*k->pend)))
		return -ENOMEM;
	k->pend[k->npend++] = i;
	return 0;
}

int keep_pend_from_set(struct hs_keep *k)
{
	k->npend = 0;
	for (size_t i = 0; i < k->set.n; i++)
		if (k->set.files[i].pending && keep_pend_add(k, i))
			return -ENOMEM;
	return 0;
}

static int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? -1 : x > y;
}

/* Indices in ascending order are profile order: the order the set was loaded in. */
void keep_pend_sort(struct hs_keep *k)
{
	qsort(k->pend, k->npend, sizeof(*k->pend), cmp_size);
}

void keep_set_counts(struct hs_keep *k)
{
	k->st.files = k->set.n;
	k->st.pages = k->set.pages;
	k->st.bytes = k->set.bytes;
	k->st.unknown_files = k->set.unknown;
	k->st.dropped_files = 0;
	k->st.replaced_files = 0;
	k->st.locked_files = k->set.locked_files;
	k->st.locked_bytes = k->set.locked_pages * hs_page_size();
	for (size_t i = 0; i < k->nowners; i++)
		k->owners[i].st.dropped_files = k->owners[i].st.replaced_files = 0;
}

/* ---- a kept file, as its owner ---------------------------------------------------- */

/*
 * f is kept no longer: deleted, or replaced (what: by what, for the
 * event). Its pages are unlocked (never pin a deleted file's pages, nor
 * the old inode of one replaced), the eBPF map forgets its inode.
 */
static void drop(struct hs_keep *k, struct kfile *f, const char *what)
{
	struct hs_keep_event e = { .kind = what ? HS_KEEP_REPLACED : HS_KEEP_DELETED,
				   .path = f->path, .what = what };
	struct hs_keep_state *own = &k->owners[f->owner].st;

	if (k->evict && f->state == F_WATCHED) {
		keep_evict_unwatch(k->evict, f->ino);
		k->inos_stale = true;
	}
	f->state = what ? F_REPLACED : F_DROPPED;
	f->pending = P_NONE;
	keep_unmap_file(&k->set, f);
	if (what) {
		k->st.replaced_files++;
		own->replaced_files++;
	} else {
		k->st.dropped_files++;
		own->dropped_files++;
	}
	k->dirty = true;
	keep_emit(k, &e);
}

void keep_take_stat(struct kfile *f, const struct stat *st)
{
	f->dev = st->st_dev;
	f->ino = st->st_ino;
	f->size = (uint64_t)st->st_size;
	f->mtime_sec = st->st_mtim.tv_sec;
	f->mtime_nsec = (uint32_t)st->st_mtim.tv_nsec;
}

bool keep_same_file(const struct kfile *f, const struct stat *st)
{
	return f->dev == st->st_dev && f->ino == st->st_ino;
}

bool keep_unchanged(const struct kfile *f, const struct stat *st)
{
	return keep_same_file(f, st) && f->size == (uint64_t)st->st_size &&
	       f->mtime_sec == st->st_mtim.tv_sec && f->mtime_nsec == (uint32_t)st->st_mtim.tv_nsec;
}

/*
 * What is at f's path was not opened (hs_safe_open() or hs_safe_look()
 * returned rc, said res; st: what it found): f is dropped if it is gone
 * or replaced, or the error said once (and tried again each round).
 */
static void not_opened(struct hs_keep *k, struct kfile *f, int rc, const struct hs_safe_result *res,
		       const struct stat *st)
{
	char whose[64];

	if (res->found == HS_SAFE_OTHER) {
		/* asked with HS_SAFE_ANEW: neither the owner's nor root's */
		snprintf(whose, sizeof(whose), "another user's file, uid %u", (unsigned)st->st_uid);
		drop(k, f, whose);
	} else if (res->found == HS_SAFE_SWAPPED) {
		drop(k, f, "another file");	/* swapped in as it was opened: closed unread */
	} else if (res->found == HS_SAFE_TYPE) {
		drop(k, f, hs_safe_type_name(res->type));
	} else if (rc == -ENOENT || rc == -ENOTDIR) {
		drop(k, f, NULL);
	} else if (!f->warned) {
		f->warned = true;
		keep_warn(k, f->path, -rc, "cannot open");
	}
}

/* This thread takes f's owner's credentials: false if it cannot (said once). */
static bool as_owner(struct hs_keep *k, struct kfile *f)
{
	if (!keep_creds_use(k, f->owner))
		return true;
	if (!f->warned) {
		f->warned = true;
		keep_warn(k, f->path, EPERM, "cannot take its owner's credentials");
	}
	return false;
}

/*
 * Open f, the file loaded (device and inode), as its owner: the careful
 * open (safeopen.h). A regular file of its owner's or root's renamed over
 * it since (a rebuild, a package upgrade) is opened too, as the file anew:
 * the caller sees another device or inode in *st, and the check takes it
 * (keep_check_file(), keep_check_locked()). -1 if nothing can be opened
 * (f dropped, or warned about).
 */
int keep_open_file(struct hs_keep *k, struct kfile *f, struct stat *st)
{
	const struct hs_safe_id id = { f->dev, f->ino };
	struct hs_safe_result res;
	int fd;

	if (!as_owner(k, f))
		return -1;
	if ((fd = hs_safe_open(AT_FDCWD, f->path, O_RDONLY, HS_SAFE_NOFOLLOW | HS_SAFE_ANEW, &id, st,
			       &res)) < 0) {
		not_opened(k, f, fd, &res, st);
		return -1;
	}
	return fd;
}

/*
 * Look at f, the file loaded, as its owner, without opening it: 0 with
 * *st, or -1 (f dropped, or warned about).
 */
int keep_look_file(struct hs_keep *k, struct kfile *f, struct stat *st)
{
	const struct hs_safe_id id = { f->dev, f->ino };
	struct hs_safe_result res;
	int rc;

	if (!as_owner(k, f))
		return -1;
	if ((rc = hs_safe_look(AT_FDCWD, f->path, HS_SAFE_NOFOLLOW | HS_SAFE_ANEW, &id, st,
			       &res)) < 0) {
		not_opened(k, f, rc, &res, st);
		return -1;
	}
	return 0;
}
