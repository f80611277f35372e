/*
 * targets-profile.c - a profile's entries as a stream of targets (see
 * targets.h): each the file the entry names or nothing, opened carefully
 * (safeopen.h), its ranges in this machine's pages, stale or not.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "base/safeopen.h"
#include "cache/targets-internal.h"

/* ---- profiles ------------------------------------------------------------- */

static int cmp_first(const void *a, const void *b)
{
	const struct hs_range *x = a, *y = b;

	return x->first < y->first ? -1 : x->first > y->first;
}

/*
 * Ranges of a profile recorded with another page size, in this machine's
 * pages (a page of the profile may straddle two of ours, or hold several).
 * Byte offsets past 2^64 saturate: no file reaches them. Small pages can
 * fall into one of ours from several ranges; unless they still come in
 * increasing order, the ranges are then sorted and merged (their access
 * order is lost), so that no page counts twice.
 */
static int convert_ranges(const struct hs_profile_file *f, uint32_t from, struct hs_range **buf,
			  size_t *cap, size_t *count)
{
	const uint64_t to = hs_page_size(), max = UINT64_MAX / from;
	struct hs_range *v;
	size_t n = 0;
	bool sorted = true;

	if (hs_grow(buf, cap, f->nranges, sizeof(**buf)))
		return -ENOMEM;
	v = *buf;
	for (size_t i = 0; i < f->nranges; i++) {
		uint64_t a = f->ranges[i].first, b = f->ranges[i].last;

		v[i].first = a < max ? a * from / to : UINT64_MAX / to;
		v[i].last = b < max ? ((b + 1) * from - 1) / to : UINT64_MAX / to;
		sorted &= !i || v[i].first > v[i - 1].last;
	}
	if (sorted || from > to) {	/* large pages never share one of ours */
		*count = f->nranges;
		return 0;
	}
	qsort(v, f->nranges, sizeof(*v), cmp_first);
	for (size_t i = 0; i < f->nranges; i++) {
		if (n && v[i].first <= v[n - 1].last + 1) {
			if (v[i].last > v[n - 1].last)
				v[n - 1].last = v[i].last;
		} else {
			v[n++] = v[i];
		}
	}
	*count = n;
	return 0;
}

static uint64_t pages_within(const struct hs_range *r, size_t n, uint64_t npages)
{
	uint64_t pages = 0;

	for (size_t i = 0; i < n; i++) {
		if (r[i].first >= npages)
			continue;
		pages += (r[i].last < npages ? r[i].last : npages - 1) - r[i].first + 1;
	}
	return pages;
}

/*
 * Does the entry give the file's identity? Profiles made by hand may not:
 * device 0:0 and inode 0 is none (no file has it).
 */
static bool has_id(const struct hs_file_id *id)
{
	return id->dev || id->ino;
}

/*
 * Is st the entry's file on a filesystem numbered anew? Filesystems
 * without a block device of their own (btrfs subvolumes, NFS, overlayfs:
 * major 0) get their device number when mounted, in an order a reboot may
 * change; a file there whose inode, size and modification time are the
 * profile's, to the nanosecond, is the same file under another number.
 */
static bool renumbered(const struct hs_file_id *id, const struct stat *st)
{
	return major(id->dev) == 0 && major(st->st_dev) == 0 && id->ino == st->st_ino &&
	       id->size == (uint64_t)st->st_size && id->mtime_sec == st->st_mtim.tv_sec &&
	       id->mtime_nsec == st->st_mtim.tv_nsec;
}

static bool is_stale(const struct hs_file_id *id, const struct stat *st)
{
	return (id->dev != st->st_dev && !renumbered(id, st)) || id->ino != st->st_ino ||
	       id->size != (uint64_t)st->st_size ||
	       id->mtime_sec != st->st_mtim.tv_sec || id->mtime_nsec != st->st_mtim.tv_nsec;
}

/*
 * Why a profile entry was not opened (hs_safe_open said res, st the stat
 * of what it found), told to warn_fn: gone, replaced (by what, and by
 * whose file), or an error.
 */
static void warn_entry(hs_target_warn_fn warn_fn, void *ctx, const char *path, int rc,
		       const struct hs_safe_result *res, const struct stat *st)
{
	char what[128];

	switch (res->found) {
	case HS_SAFE_ERROR:
		warn_fn(ctx, path, -rc, rc == -ENOENT ? "no longer exists, skipped" : "cannot open");
		return;
	case HS_SAFE_OTHER:	/* asked with HS_SAFE_ANEW: the file of another user */
		snprintf(what, sizeof(what), "replaced by another user's file (uid %u) since the "
			 "profile was made, not opened", (unsigned)st->st_uid);
		break;
	case HS_SAFE_SWAPPED:
		snprintf(what, sizeof(what), "replaced while it was opened, not read");
		break;
	default:
		snprintf(what, sizeof(what), "replaced by %s since the profile was made, not opened",
			 hs_safe_type_name(res->type));
		break;
	}
	warn_fn(ctx, path, 0, what);
}

/* Non-NULL, so that 0 ranges mean no pages rather than the whole file. */
static const struct hs_range no_ranges[1];

int hs_targets_profile(struct hs_profile_reader *r, hs_target_fn fn, hs_target_warn_fn warn_fn,
		       void *ctx, struct hs_error *err)
{
	return hs_targets_profile_select(r, NULL, fn, warn_fn, ctx, err);
}

int hs_targets_profile_select(struct hs_profile_reader *r, hs_target_select_fn select,
			      hs_target_fn fn, hs_target_warn_fn warn_fn, void *ctx,
			      struct hs_error *err)
{
	const uint32_t from = hs_profile_header(r)->page_size, ps = hs_page_size();
	const int flags = targets_open_flags();
	struct hs_profile_item it;
	struct hs_range *conv = NULL;
	size_t conv_cap = 0;
	struct fs_cache fs = { 0 };
	uint64_t index = 0;
	int rc;

	while ((rc = hs_profile_next(r, &it, err)) > 0) {
		struct hs_target t = { 0 };
		struct hs_safe_result found;
		struct hs_safe_id want;
		struct stat st;
		int fd;

		if (it.kind != HS_ITEM_FILE)
			continue;
		/* before any stat: an entry not asked for costs nothing and is not told about */
		if (select && !select(ctx, it.file.path, it.file.path_len))
			continue;
		/*
		 * The file the entry names, or nothing: not a symlink in its
		 * place, nor a FIFO or a device; where the profile gives an
		 * identity, another regular file there is the entry's file
		 * anew (stale) if it is the caller's or root's, and replaced
		 * (never opened) if it is another user's.
		 */
		want = (struct hs_safe_id){ it.file.id.dev, it.file.id.ino };
		fd = hs_safe_open(AT_FDCWD, it.file.path, flags, HS_SAFE_NOFOLLOW | HS_SAFE_ANEW,
				  has_id(&it.file.id) ? &want : NULL, &st, &found);
		if (fd < 0 && found.found == HS_SAFE_OTHER && renumbered(&it.file.id, &st)) {
			want.dev = st.st_dev;
			fd = hs_safe_open(AT_FDCWD, it.file.path, flags, HS_SAFE_NOFOLLOW, &want,
					  &st, &found);
		}
		if (fd < 0) {
			if (warn_fn)
				warn_entry(warn_fn, ctx, it.file.path, fd, &found, &st);
			continue;
		}
		if (targets_pseudo_fs(&fs, fd, st.st_dev)) {
			if (warn_fn)
				warn_fn(ctx, it.file.path, 0, "is on a pseudo-filesystem, never read");
			close(fd);
			continue;
		}
		t.ranges = it.file.ranges;
		t.nranges = it.file.nranges;
		if (from != ps) {
			if ((rc = convert_ranges(&it.file, from, &conv, &conv_cap, &t.nranges))) {
				close(fd);
				break;
			}
			t.ranges = conv;
		}
		if (!t.ranges)
			t.ranges = no_ranges;	/* an entry without pages is not the whole file */
		t.path = it.file.path;
		t.path_len = it.file.path_len;
		t.fd = fd;
		t.st = &st;
		t.pages = pages_within(t.ranges, t.nranges, ((uint64_t)st.st_size + ps - 1) / ps);
		t.index = index++;
		t.entry = &it.file;
		t.stale = is_stale(&it.file.id, &st);
		rc = fn(ctx, &t);
		close(fd);
		if (rc)
			break;
	}
	free(conv);
	return rc;
}
