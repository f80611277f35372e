/*
 * profile-write.c - the profile's writer (profile.h): a header, then
 * items in order, then the trailer with their counts, streamed through a
 * buffer into a temporary file that hs_profile_writer_commit() renames
 * over the target (atomic.h): a reader sees the old profile or the whole
 * new one, never a part.
 *
 * Writes are buffered, and their first error is kept (sticky) rather
 * than returned at once, so that a writer loop checks once, at the end:
 * a profile written short is never committed.
 */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "base/atomic.h"
#include "profile/profile-impl.h"

void hs_profile_header_init(struct hs_profile_header *h, const char *source)
{
	struct utsname u;

	memset(h, 0, sizeof(*h));
	h->version = HS_PROFILE_VERSION;
	h->page_size = hs_page_size();
	h->created = (int64_t)time(NULL);
	snprintf(h->source, sizeof(h->source), "%s", source);
	if (uname(&u) == 0) {
		snprintf(h->host, sizeof(h->host), "%s", u.nodename);
		snprintf(h->kernel, sizeof(h->kernel), "%s", u.release);
	}
}

struct hs_profile_writer {
	struct hs_atomic_file *file;
	int fd;			/* file's */
	enum section sec;
	struct hs_profile_totals count;
	int error;		/* first write error, sticky */
	size_t used;
	char buf[1 << 16];
};

static void flush_buf(struct hs_profile_writer *w)
{
	size_t off = 0;

	while (off < w->used && !w->error) {
		ssize_t n = write(w->fd, w->buf + off, w->used - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			w->error = -errno;
		else
			off += (size_t)n;
	}
	w->used = 0;
}

static void put(struct hs_profile_writer *w, const void *p, size_t n)
{
	const char *s = p;

	while (n) {
		size_t room = sizeof(w->buf) - w->used, k = n < room ? n : room;

		memcpy(w->buf + w->used, s, k);
		w->used += k;
		s += k;
		n -= k;
		if (w->used == sizeof(w->buf))
			flush_buf(w);
	}
}

static void put_str(struct hs_profile_writer *w, const char *s)
{
	put(w, s, strlen(s));
}

static void put_u64(struct hs_profile_writer *w, uint64_t v)
{
	char tmp[24];
	size_t i = sizeof(tmp);

	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	put(w, tmp + i, sizeof(tmp) - i);
}

static void put_mtime(struct hs_profile_writer *w, int64_t sec, uint32_t nsec)
{
	char buf[HS_MTIME_STR_MAX];

	put_str(w, hs_mtime_str(sec, nsec, buf));
}

static void put_escaped(struct hs_profile_writer *w, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (ch == '\\') {
			put(w, "\\\\", 2);
		} else if (ch < 0x20 || ch == 0x7f) {
			char e[4] = { '\\', 'x', hex[ch >> 4], hex[ch & 15] };

			put(w, e, 4);
		} else {
			put(w, s + i, 1);
		}
	}
}

static void put_ranges(struct hs_profile_writer *w, const struct hs_range *r, size_t n)
{
	if (!n) {
		put(w, "-", 1);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		if (i)
			put(w, ",", 1);
		put_u64(w, r[i].first);
		if (r[i].last != r[i].first) {
			put(w, "-", 1);
			put_u64(w, r[i].last);
		}
	}
}

static void put_header(struct hs_profile_writer *w, const struct hs_profile_header *h)
{
	char when[32];
	time_t t = (time_t)h->created;
	struct tm tm;

	put_str(w, MAGIC);
	put_u64(w, HS_PROFILE_VERSION);
	put_str(w, "\n# hotset profile: see docs/profile.md\n");
	if (t > 0 && gmtime_r(&t, &tm) && strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm)) {
		put_str(w, "created ");
		put_str(w, when);
		put(w, "\n", 1);
	}
	/* header words must be one printable word; anything else is dropped */
	const struct { const char *key, *val; } words[] = {
		{ "host", h->host }, { "kernel", h->kernel }, { "source", h->source },
		{ "backend", h->backend }, { "mmap-pages", h->mmap_pages },
	};
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		const char *v = words[i].val;
		bool ok = *v;

		for (const char *p = v; *p; p++)
			ok &= (unsigned char)*p > 0x20 && *p != 0x7f;
		if (!ok)
			continue;
		put_str(w, words[i].key);
		put(w, " ", 1);
		put_str(w, v);
		put(w, "\n", 1);
	}
	put_str(w, "page-size ");
	put_u64(w, h->page_size ? h->page_size : hs_page_size());
	put(w, "\n", 1);
	if (h->max_rss_known) {
		put_str(w, "max-rss ");
		put_u64(w, h->max_rss);
		put(w, "\n", 1);
	}
	if (h->write_bytes_known) {
		put_str(w, "write-bytes ");
		put_u64(w, h->write_bytes);
		put(w, "\n", 1);
	}
	if (h->memcg_version && h->memcg && h->memcg[0] == '/') {
		put_str(w, "memory-cgroup ");
		put_u64(w, (uint64_t)h->memcg_version);
		put(w, " ", 1);
		put_escaped(w, h->memcg, strlen(h->memcg));
		put(w, "\n", 1);
		if (h->memcg_limit_known && h->memcg_limit == UINT64_MAX) {
			put_str(w, "memory-limit none\n");
		} else if (h->memcg_limit_known && h->memcg_limit_holder &&
			   h->memcg_limit_holder[0] == '/') {
			put_str(w, "memory-limit ");
			put_u64(w, h->memcg_limit);
			put(w, " ", 1);
			put_escaped(w, h->memcg_limit_holder, strlen(h->memcg_limit_holder));
			put(w, "\n", 1);
		}
	}
	if (h->lost_events_known) {
		put_str(w, "lost-events ");
		put_u64(w, h->lost_events);
		put(w, "\n", 1);
	}
	if (h->command && *h->command) {
		put_str(w, "command ");
		put_escaped(w, h->command, strlen(h->command));
		put(w, "\n", 1);
	}
	if (h->cwd && *h->cwd) {
		put_str(w, "cwd ");
		put_escaped(w, h->cwd, strlen(h->cwd));
		put(w, "\n", 1);
	}
}

int hs_profile_writer_open(const char *path, const struct hs_profile_header *h,
			   struct hs_profile_writer **out)
{
	struct hs_profile_writer *w = calloc(1, sizeof(*w));
	int rc;

	if (!w)
		return -ENOMEM;
	w->sec = SEC_FILES;
	if ((rc = hs_atomic_open(path, 0666, &w->file, &w->fd, NULL))) {
		free(w);
		return rc;
	}
	put_header(w, h);
	*out = w;
	return 0;
}

int hs_profile_write_file(struct hs_profile_writer *w, const struct hs_profile_file *f)
{
	char flags[8];

	assert(w->sec == SEC_FILES);
	assert(f->path_len > 0 && f->path[0] == '/');
	put(w, "f ", 2);
	put_u64(w, major(f->id.dev));
	put(w, ":", 1);
	put_u64(w, minor(f->id.dev));
	put(w, " ", 1);
	put_u64(w, f->id.ino);
	put(w, " ", 1);
	put_u64(w, f->id.size);
	put(w, " ", 1);
	put_mtime(w, f->id.mtime_sec, f->id.mtime_nsec);
	put(w, " ", 1);
	put_str(w, hs_file_flags_str(f->flags, flags));
	put(w, " ", 1);
	put_ranges(w, f->ranges, f->nranges);
	put(w, " ", 1);
	put_escaped(w, f->path, f->path_len);
	put(w, "\n", 1);
	w->count.files++;
	return w->error;
}

int hs_profile_write_output(struct hs_profile_writer *w, const char *path, size_t len)
{
	assert(w->sec <= SEC_OUTPUTS);
	assert(len > 0 && path[0] == '/');
	w->sec = SEC_OUTPUTS;
	put(w, "o ", 2);
	put_escaped(w, path, len);
	put(w, "\n", 1);
	w->count.outputs++;
	return w->error;
}

int hs_profile_write_trace(struct hs_profile_writer *w, const struct hs_profile_trace *t)
{
	assert(t->file < w->count.files);
	assert(t->nranges > 0);
	w->sec = SEC_TRACE;
	put(w, "t ", 2);
	put_u64(w, t->file);
	put(w, " ", 1);
	put_ranges(w, t->ranges, t->nranges);
	put(w, "\n", 1);
	w->count.trace_lines++;
	return w->error;
}

int hs_profile_writer_commit(struct hs_profile_writer *w)
{
	int rc;

	put_str(w, "end ");
	put_u64(w, w->count.files);
	put(w, " ", 1);
	put_u64(w, w->count.outputs);
	put(w, " ", 1);
	put_u64(w, w->count.trace_lines);
	put(w, "\n", 1);
	flush_buf(w);
	rc = hs_atomic_commit(w->file, w->error);
	free(w);
	return rc;
}

int hs_profile_writer_fd(const struct hs_profile_writer *w)
{
	return w->fd;
}

void hs_profile_writer_abort(struct hs_profile_writer *w)
{
	if (!w)
		return;
	hs_atomic_abort(w->file);
	free(w);
}
