/*
 * profile-check.h - what the profile parser promises its consumers, checked.
 *
 * One checker for the fuzz target (tests/fuzz/fuzz-profile.c) and the unit
 * tests (tests/unit/test-profile.c), so that both hold the parser to the
 * same promises, those of docs/profile.md and profile.h:
 *
 *   header   version 1; page-size a power of two from 512 to 16M; source,
 *            backend and mmap-pages among the values the format lists;
 *            host and kernel one printable word or empty; created 0
 *            (unknown) or after the epoch; totals below 2^32 each.
 *   files    numbered 0, 1, 2... in order; an absolute path of 1 to 65536
 *            bytes, no NUL inside (path_len is its length); only the known
 *            flags; a device number of 20 + 20 bits; nanoseconds below 10^9;
 *            ranges first <= last, below the page limit of the page size,
 *            pairwise disjoint (in first-access order, so not sorted);
 *            pages their sum.
 *   outputs  an absolute path as above, no ranges.
 *   traces   a file already listed; at least one range, each within limits
 *            (trace ranges may repeat and overlap).
 *   order    files, then outputs, then traces; line numbers increasing,
 *            after the magic line; the counts at the end equal the totals.
 *   results  hs_profile_next() returns 1 with an item, 0 with END, or
 *            -errno with a message; an error is sticky; a rewind reads the
 *            same items again.
 *
 * Given the text (profile_check_buffer), it also checks that every item's
 * line number is the line it came from, and that an error's line and byte
 * offset point at the same place, as the parser promises.
 *
 * Everything is static inline, so that a test includes it and uses what it
 * needs; the helpers are named pc_*, what a test calls profile_check_*.
 */
#ifndef HOTSET_TESTS_PROFILE_CHECK_H
#define HOTSET_TESTS_PROFILE_CHECK_H

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "profile/profile.h"

#define PROFILE_CHECK_FLAGS (HS_FILE_READ | HS_FILE_MAPPED | HS_FILE_EXEC | HS_FILE_WRITTEN | \
			     HS_FILE_DIRECT)

/* The state of a check through one pass over a profile's items. */
struct profile_check {
	uint32_t page_size;		/* from the header */
	struct hs_profile_totals totals;	/* promised by the trailer */
	struct hs_profile_totals seen;
	enum hs_profile_item_kind last;	/* kind of the last item */
	unsigned last_line;
	bool done;			/* END or an error was returned */
	uint64_t digest;		/* of every item, to compare two passes */
	const char *buf;		/* the text, if known, and a cursor on it: */
	size_t len, pos;		/* the offset of line `line` */
	unsigned line;
	struct hs_range *sorted;	/* scratch for the disjointness check */
	size_t sorted_cap;
	char msg[320];			/* what broke, when a check returns -1 */
};

static inline int pc_fail(struct profile_check *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static inline int pc_fail(struct profile_check *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->msg, sizeof(c->msg), fmt, ap);
	va_end(ap);
	return -1;
}

static inline void pc_mix(struct profile_check *c, const void *p, size_t n)
{
	const unsigned char *s = p;

	for (size_t i = 0; i < n; i++)	/* FNV-1a */
		c->digest = (c->digest ^ s[i]) * UINT64_C(0x100000001b3);
}

/* A string field of the header: NUL-terminated, empty or one printable word. */
static inline bool pc_word(const char *s, size_t cap, bool empty_ok)
{
	size_t n = strnlen(s, cap);

	if (n == cap || (!n && !empty_ok))
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] <= 0x20 || s[i] == 0x7f)
			return false;
	return true;
}

static inline bool pc_among(const char *s, const char *const *allowed)
{
	for (; *allowed; allowed++)
		if (!strcmp(s, *allowed))
			return true;
	return false;
}

/*
 * Start a pass: check the header and the totals, and remember what the
 * items are checked against. buf and len are the profile's text, or NULL
 * and 0 when unknown. Returns 0, or -1 with c->msg. Release with
 * profile_check_release(), whatever the outcome.
 */
static inline int profile_check_init(struct profile_check *c, const struct hs_profile_header *h,
				     const struct hs_profile_totals *t, const char *buf, size_t len)
{
	static const char *const sources[] = { "record", "snapshot", NULL },
		*const backends[] = { "", "ptrace", "bpf", NULL },
		*const mmap_pages[] = { "", "faulted", "touched", NULL };

	memset(c, 0, sizeof(*c));
	c->digest = UINT64_C(0xcbf29ce484222325);
	c->page_size = h->page_size;
	c->totals = *t;
	c->buf = buf;
	c->len = len;
	c->line = 1;
	if (h->version != HS_PROFILE_VERSION)
		return pc_fail(c, "header: version %u", h->version);
	if (h->page_size < 512 || h->page_size > (1u << 24) || (h->page_size & (h->page_size - 1)))
		return pc_fail(c, "header: page size %" PRIu32, h->page_size);
	if (!pc_word(h->source, sizeof(h->source), false) || !pc_among(h->source, sources))
		return pc_fail(c, "header: source \"%.16s\"", h->source);
	if (!pc_word(h->backend, sizeof(h->backend), true) || !pc_among(h->backend, backends))
		return pc_fail(c, "header: backend \"%.16s\"", h->backend);
	if (!pc_word(h->mmap_pages, sizeof(h->mmap_pages), true) ||
	    !pc_among(h->mmap_pages, mmap_pages))
		return pc_fail(c, "header: mmap-pages \"%.16s\"", h->mmap_pages);
	if (!pc_word(h->host, sizeof(h->host), true))
		return pc_fail(c, "header: host is not one printable word");
	if (!pc_word(h->kernel, sizeof(h->kernel), true))
		return pc_fail(c, "header: kernel is not one printable word");
	if (h->created < 0)
		return pc_fail(c, "header: created %" PRId64, h->created);
	if (t->files >= HS_PROFILE_MAX_ITEMS || t->outputs >= HS_PROFILE_MAX_ITEMS ||
	    t->trace_lines >= HS_PROFILE_MAX_ITEMS)
		return pc_fail(c, "totals: %" PRIu64 " %" PRIu64 " %" PRIu64 " items",
			       t->files, t->outputs, t->trace_lines);
	return 0;
}

static inline void profile_check_release(struct profile_check *c)
{
	free(c->sorted);
	c->sorted = NULL;
	c->sorted_cap = 0;
}

static inline int pc_cmp_range(const void *a, const void *b)
{
	const struct hs_range *x = a, *y = b;

	return x->first < y->first ? -1 : x->first > y->first;
}

/* Ranges within limits; for a file's, also disjoint. */
static inline int pc_ranges(struct profile_check *c, const struct hs_range *r, size_t n,
			    bool disjoint, const char *what)
{
	uint64_t limit = hs_profile_page_limit(c->page_size);

	if (n && !r)
		return pc_fail(c, "%s: %zu ranges at NULL", what, n);
	for (size_t i = 0; i < n; i++) {
		if (r[i].first > r[i].last)
			return pc_fail(c, "%s: range %" PRIu64 "-%" PRIu64 " ends before it starts",
				       what, r[i].first, r[i].last);
		if (r[i].last >= limit)
			return pc_fail(c, "%s: page %" PRIu64 " beyond the limit %" PRIu64,
				       what, r[i].last, limit);
		pc_mix(c, &r[i], sizeof(r[i]));
	}
	if (!disjoint || n < 2)
		return 0;
	if (hs_grow(&c->sorted, &c->sorted_cap, n, sizeof(*c->sorted)))
		return pc_fail(c, "out of memory");
	memcpy(c->sorted, r, n * sizeof(*r));
	qsort(c->sorted, n, sizeof(*r), pc_cmp_range);
	for (size_t i = 1; i < n; i++)
		if (c->sorted[i].first <= c->sorted[i - 1].last)
			return pc_fail(c, "%s: ranges overlap at page %" PRIu64, what,
				       c->sorted[i].first);
	return 0;
}

static inline int pc_path(struct profile_check *c, const char *path, size_t len,
			  const char *what)
{
	if (!path)
		return pc_fail(c, "%s: no path", what);
	if (strlen(path) != len)
		return pc_fail(c, "%s: path_len %zu, but the path has %zu bytes", what, len,
			       strlen(path));
	if (!len || len > HS_PROFILE_MAX_PATH)
		return pc_fail(c, "%s: a path of %zu bytes", what, len);
	if (path[0] != '/')
		return pc_fail(c, "%s: path \"%.40s\" is not absolute", what, path);
	pc_mix(c, path, len + 1);
	return 0;
}

/*
 * Advance the text cursor to line n (lines only increase) and check that it
 * starts with kw, or (kw NULL) that the line exists; with no text, nothing.
 */
static inline int pc_line(struct profile_check *c, unsigned n, const char *kw)
{
	const char *nl;

	if (!c->buf)
		return 0;
	while (c->line < n && c->pos < c->len &&
	       (nl = memchr(c->buf + c->pos, '\n', c->len - c->pos))) {
		c->pos = (size_t)(nl - c->buf) + 1;
		c->line++;
	}
	if (c->line != n || (c->pos == c->len && (n > 1 || c->len)))
		return pc_fail(c, "line %u: the text has no such line", n);
	if (kw && (c->len - c->pos < strlen(kw) || memcmp(c->buf + c->pos, kw, strlen(kw))))
		return pc_fail(c, "line %u: does not start with \"%s\"", n, kw);
	return 0;
}

/* An error's line and offset: the offset is on that line, or at the end of the text. */
static inline int pc_at(struct profile_check *c, unsigned line, size_t offset)
{
	const char *nl;
	size_t end;

	if (!c->buf)
		return 0;
	if (offset > c->len)
		return pc_fail(c, "error at offset %zu, past the end (%zu)", offset, c->len);
	if (pc_line(c, line, NULL))
		return -1;
	nl = memchr(c->buf + c->pos, '\n', c->len - c->pos);
	end = nl ? (size_t)(nl - c->buf) : c->len;
	if (offset < c->pos || offset > end)
		return pc_fail(c, "error at line %u, offset %zu: the line is bytes %zu to %zu",
			       line, offset, c->pos, end);
	return 0;
}

static inline int pc_file(struct profile_check *c, const struct hs_profile_file *f)
{
	if (f->index != c->seen.files)
		return pc_fail(c, "file %" PRIu64 ": index %" PRIu64, c->seen.files, f->index);
	if (pc_path(c, f->path, f->path_len, "file"))
		return -1;
	if (f->flags & ~(unsigned)PROFILE_CHECK_FLAGS)
		return pc_fail(c, "file %" PRIu64 ": flags %#x", f->index, f->flags);
	if (major(f->id.dev) > 0xfffff || minor(f->id.dev) > 0xfffff)
		return pc_fail(c, "file %" PRIu64 ": device %" PRIu64, f->index, f->id.dev);
	if (f->id.mtime_nsec >= 1000000000u)
		return pc_fail(c, "file %" PRIu64 ": mtime nanoseconds %" PRIu32, f->index,
			       f->id.mtime_nsec);
	if (pc_ranges(c, f->ranges, f->nranges, true, "file"))
		return -1;
	if (f->pages != hs_ranges_pages(f->ranges, f->nranges))
		return pc_fail(c, "file %" PRIu64 ": %" PRIu64 " pages, its ranges hold %" PRIu64,
			       f->index, f->pages, hs_ranges_pages(f->ranges, f->nranges));
	pc_mix(c, &f->id, sizeof(f->id));
	pc_mix(c, &f->flags, sizeof(f->flags));
	c->seen.files++;
	return 0;
}

/*
 * Check what one call of hs_profile_next() gave: its return rc, the item,
 * and err (for rc < 0). Returns 0, or -1 with c->msg.
 */
static inline int profile_check_next(struct profile_check *c, int rc,
				     const struct hs_profile_item *it, const struct hs_error *err)
{
	static const char *const kw[] = { [HS_ITEM_FILE] = "f ", [HS_ITEM_OUTPUT] = "o ",
					   [HS_ITEM_TRACE] = "t ", [HS_ITEM_END] = "end " };

	if (c->done)
		return pc_fail(c, "an item after the end or an error");
	if (rc < 0) {
		c->done = true;
		if (!err || !memchr(err->msg, '\0', sizeof(err->msg)) || !err->msg[0])
			return pc_fail(c, "error %d without a message", rc);
		if (rc == -ENOMEM)
			return 0;
		if (rc != -EINVAL)
			return pc_fail(c, "error %d (%s)", rc, err->msg);
		if (err->line <= c->last_line)
			return pc_fail(c, "error at line %u, before or at the last item's (%u)",
				       err->line, c->last_line);
		return pc_at(c, err->line, err->offset);
	}
	if (rc > 1)
		return pc_fail(c, "returned %d", rc);
	if ((rc == 0) != (it->kind == HS_ITEM_END) || (unsigned)it->kind > HS_ITEM_TRACE)
		return pc_fail(c, "returned %d with an item of kind %d", rc, (int)it->kind);
	if (it->line <= c->last_line || it->line < 2)
		return pc_fail(c, "line %u after line %u", it->line, c->last_line);
	if (rc && it->kind < c->last)	/* END is 0 */
		return pc_fail(c, "line %u: an item of kind %d after one of kind %d", it->line,
			       (int)it->kind, (int)c->last);
	if (pc_line(c, it->line, kw[it->kind]))
		return -1;
	c->last = it->kind;
	c->last_line = it->line;
	pc_mix(c, &it->kind, sizeof(it->kind));
	switch (it->kind) {
	case HS_ITEM_FILE:
		return pc_file(c, &it->file);
	case HS_ITEM_OUTPUT:
		if (pc_path(c, it->file.path, it->file.path_len, "output"))
			return -1;
		if (it->file.nranges)
			return pc_fail(c, "output %" PRIu64 " has ranges", c->seen.outputs);
		c->seen.outputs++;
		return 0;
	case HS_ITEM_TRACE:
		if (it->trace.file >= c->seen.files)
			return pc_fail(c, "trace line %" PRIu64 ": file %" PRIu64 " of %" PRIu64,
				       c->seen.trace_lines, it->trace.file, c->seen.files);
		if (!it->trace.nranges)
			return pc_fail(c, "trace line %" PRIu64 ": no range", c->seen.trace_lines);
		if (pc_ranges(c, it->trace.ranges, it->trace.nranges, false, "trace"))
			return -1;
		pc_mix(c, &it->trace.file, sizeof(it->trace.file));
		c->seen.trace_lines++;
		return 0;
	case HS_ITEM_END:
		c->done = true;
		if (c->seen.files != c->totals.files || c->seen.outputs != c->totals.outputs ||
		    c->seen.trace_lines != c->totals.trace_lines)
			return pc_fail(c, "end after %" PRIu64 " %" PRIu64 " %" PRIu64
				       " items; the totals say %" PRIu64 " %" PRIu64 " %" PRIu64,
				       c->seen.files, c->seen.outputs, c->seen.trace_lines,
				       c->totals.files, c->totals.outputs, c->totals.trace_lines);
		return 0;
	}
	return 0;
}

/*
 * Check a whole profile: open buf (len bytes), read every item twice (the
 * second time after a rewind, which must give the same items or the same
 * error), check that the error is sticky, close. Returns 1 if the profile
 * was read to its end, 0 if it was refused (at open or on an item) as the
 * parser promises, -1 if a promise is broken, with the reason in msg.
 */
static inline int profile_check_buffer(const void *buf, size_t len, char *msg, size_t cap)
{
	struct hs_profile_reader *r = NULL;
	struct hs_profile_item it;
	struct hs_error err, again;
	struct profile_check c = { 0 };
	uint64_t digest = 0;
	int rc, first_rc = 0, ret = -1;
	unsigned first_line = 0;

	memset(&err, 0, sizeof(err));
	rc = hs_profile_open_buffer(buf, len, &r, &err);
	if (rc) {
		c.buf = buf;
		c.len = len;
		c.line = 1;
		if (profile_check_next(&c, rc, NULL, &err) == 0)
			ret = 0;
		goto out;
	}
	for (int pass = 0; pass < 2; pass++) {
		if (profile_check_init(&c, hs_profile_header(r), hs_profile_totals(r), buf, len))
			goto out;
		do {
			memset(&it, 0xa5, sizeof(it));
			rc = hs_profile_next(r, &it, &err);
			if (profile_check_next(&c, rc, &it, &err))
				goto out;
		} while (rc > 0);
		if (rc < 0 && (hs_profile_next(r, &it, &again) != rc || again.line != err.line ||
			       again.offset != err.offset || strcmp(again.msg, err.msg))) {
			pc_fail(&c, "the error at line %u is not sticky", err.line);
			goto out;
		}
		if (rc == 0 && (hs_profile_next(r, &it, &again) != 0 || it.kind != HS_ITEM_END)) {
			pc_fail(&c, "the end is not sticky");
			goto out;
		}
		if (pass && (rc != first_rc || c.digest != digest ||
			     (rc && err.line != first_line))) {
			pc_fail(&c, "after a rewind, other items (%d at line %u, then %d at %u)",
				first_rc, first_line, rc, err.line);
			goto out;
		}
		first_rc = rc;
		first_line = rc ? err.line : 0;
		digest = c.digest;
		profile_check_release(&c);
		hs_profile_rewind(r);
	}
	ret = rc == 0;
out:
	if (ret < 0)
		snprintf(msg, cap, "%s", c.msg);
	profile_check_release(&c);
	hs_profile_close(r);
	return ret;
}

#endif
