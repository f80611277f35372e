/*
 * profile-header.c - the reader of a profile's header and trailer
 * (profile-impl.h), which hs_profile_open() checks before any item.
 *
 * The header is a line "hotset-profile VERSION", then a line a key
 * (page-size 4096, source record...), each at most once, in any order,
 * comments ("#") anywhere among them, up to the first item. An unknown
 * key is refused: a newer format gets a new version number
 * (docs/profile.md). The trailer is the last line, read first: "end
 * FILES OUTPUTS TRACE", the counts the items must match.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "profile/profile-impl.h"

/* ---- the header ------------------------------------------------------------- */

static int header_word(struct cursor *c, char *dst, size_t cap, struct hs_error *err,
		       const char *key)
{
	size_t n = (size_t)(c->end - c->p);

	if (!n)
		return pf_fail(err, c, "%s needs a value", key);
	if (n >= cap)
		return pf_fail(err, c, "%s value is longer than %zu bytes", key, cap - 1);
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)c->p[i] < 0x21 || c->p[i] == 0x7f)
			return pf_fail(err, c, "%s value must be one word of printable characters", key);
	memcpy(dst, c->p, n);
	dst[n] = '\0';
	c->p = c->end;
	return 0;
}

/* YYYY-MM-DDTHH:MM:SSZ, in UTC, after the epoch (0 means unknown). */
static int parse_created(struct cursor *c, int64_t *out, struct hs_error *err)
{
	static const char shape[] = "dddd-dd-ddTdd:dd:ddZ";
	int v[6], k = 0;
	struct tm tm = { 0 }, back;
	time_t t;

	if (c->end - c->p != (ptrdiff_t)sizeof(shape) - 1)
		goto bad;
	for (size_t i = 0; shape[i]; i++)
		if (shape[i] == 'd' ? !isdigit((unsigned char)c->p[i]) : c->p[i] != shape[i])
			goto bad;
	for (const char *p = c->p; k < 6; k++) {	/* the six numbers, in order */
		for (v[k] = 0; isdigit((unsigned char)*p); p++)
			v[k] = v[k] * 10 + (*p - '0');
		p++;
	}
	tm.tm_year = v[0] - 1900;
	tm.tm_mon = v[1] - 1;
	tm.tm_mday = v[2];
	tm.tm_hour = v[3];
	tm.tm_min = v[4];
	tm.tm_sec = v[5];
	t = timegm(&tm);
	/* timegm normalises: a date that comes back different did not exist */
	if (t <= 0 || !gmtime_r(&t, &back) || back.tm_year != v[0] - 1900 ||
	    back.tm_mon != v[1] - 1 || back.tm_mday != v[2] || back.tm_hour != v[3] ||
	    back.tm_min != v[4] || back.tm_sec != v[5])
		return pf_fail(err, c, "created is not a time after 1970-01-01T00:00:00Z");
	*out = (int64_t)t;
	c->p = c->end;
	return 0;
bad:
	return pf_fail(err, c, "created must be YYYY-MM-DDTHH:MM:SSZ");
}

/* A header word that must be one of a few (NULL-terminated) values. */
static int header_choice(struct cursor *c, char *dst, size_t cap, struct hs_error *err,
			 const char *key, const char *const *allowed)
{
	int rc = header_word(c, dst, cap, err, key);

	if (rc)
		return rc;
	for (const char *const *a = allowed; *a; a++)
		if (!strcmp(dst, *a))
			return 0;
	return pf_fail(err, c, "unknown %s \"%s\"", key, dst);
}

/* A cgroup's name after a header key: escaped like a path, absolute. */
static int parse_cgroup_name(struct hs_profile_reader *r, struct cursor *c, char **out,
			     struct hs_error *err, const char *what)
{
	const char *start = c->p;
	size_t len;
	int rc;

	if ((rc = pf_parse_string(r, c, &len, err, what)))
		return rc;
	if (r->path[0] != '/') {
		c->p = start;
		return pf_fail(err, c, "%s must be a cgroup's path, from \"/\"", what);
	}
	if (!(*out = strdup(r->path)))
		return hs_error_set(err, ENOMEM, "out of memory");
	return 0;
}

/* "memory-cgroup VERSION PATH": cgroup v1 (the memory controller's) or v2. */
static int parse_memcg(struct hs_profile_reader *r, struct cursor *c, struct hs_profile_header *h,
		       struct hs_error *err)
{
	uint64_t v;
	int rc;

	if ((rc = pf_parse_u64(c, &v, err, "the cgroup version")))
		return rc;
	if (v != 1 && v != 2)
		return pf_fail(err, c, "memory-cgroup's version must be 1 or 2");
	if ((rc = pf_expect_space(c, err, "the cgroup")) ||
	    (rc = parse_cgroup_name(r, c, &r->memcg, err, "memory-cgroup")))
		return rc;
	h->memcg_version = (int)v;
	return 0;
}

/* "memory-limit none", or "memory-limit BYTES PATH": the lowest limit over the job, and whose. */
static int parse_memlimit(struct hs_profile_reader *r, struct cursor *c, struct hs_profile_header *h,
			  struct hs_error *err)
{
	int rc;

	if (pf_keyword(c, "none")) {
		h->memcg_limit = UINT64_MAX;
	} else if ((rc = pf_parse_u64(c, &h->memcg_limit, err, "memory-limit")) ||
		   (rc = pf_expect_space(c, err, "the cgroup that sets it")) ||
		   (rc = parse_cgroup_name(r, c, &r->memlimit, err, "memory-limit's cgroup"))) {
		return rc;
	} else if (h->memcg_limit == UINT64_MAX) {
		return pf_fail(err, c, "memory-limit is \"none\" or below 2^64 - 1");
	}
	h->memcg_limit_known = true;
	return 0;
}

/*
 * Parse header lines up to the first item; fills r->header. Long because
 * it is the table of the header's keys: each key's bit, the check that
 * none comes twice, a case a key for its value (the longer ones in
 * functions of their own above), then the checks of the keys together.
 * Cut in parts, the one table would be read in several places.
 */
int pf_parse_header(struct hs_profile_reader *r, struct hs_error *err)
{
	struct hs_profile_header *h = &r->header;
	struct cursor c, limit_at = { 0 };
	size_t pos = 0;
	unsigned line = 1;
	uint64_t v;
	unsigned seen = 0;
	int rc;
	enum { K_CREATED = 1, K_HOST = 2, K_KERNEL = 4, K_PAGE = 8, K_SOURCE = 16,
	       K_BACKEND = 32, K_MMAP = 64, K_COMMAND = 128, K_CWD = 256, K_MAX_RSS = 512,
	       K_WRITE_BYTES = 1024, K_MEMCG = 2048, K_MEMLIMIT = 4096,
	       K_LOST = 8192 };
	static const char *const sources[] = { "record", "snapshot", NULL },
		*const backends[] = { "ptrace", "bpf", NULL },
		*const mmap_pages[] = { "faulted", "touched", NULL };

	memset(h, 0, sizeof(*h));
	/* an empty input has no line to point at: say line 1, offset 0 */
	c.line_start = c.p = c.end = r->buf;
	c.line = line;
	c.base = 0;
	if (!pf_next_line(r, pos, line, &c) || !pf_keyword(&c, "hotset-profile"))
		return pf_fail(err, &c, "not a hotset profile (it must start with \"" MAGIC "%d\")",
			       HS_PROFILE_VERSION);
	if ((rc = pf_expect_space(&c, err, "the version")) ||
	    (rc = pf_parse_u64(&c, &v, err, "the version")))
		return rc;
	if (v != HS_PROFILE_VERSION)
		return pf_fail(err, &c, "profile version %" PRIu64 " is not supported (this hotset reads version %d)",
			       v, HS_PROFILE_VERSION);
	if (c.p != c.end)
		return pf_fail(err, &c, "unexpected text after the version");
	h->version = (unsigned)v;

	for (;;) {
		unsigned bit;
		size_t len;

		pos = (size_t)(c.end - r->buf) + 1;
		line++;
		if (!pf_next_line(r, pos, line, &c))
			return pf_fail(err, &c, "truncated profile: no \"end\" line");
		if (c.p < c.end && *c.p == '#')
			continue;
		if (pf_keyword(&c, "f") || pf_keyword(&c, "o") || pf_keyword(&c, "t") || pf_keyword(&c, "end"))
			break;
		c.p = c.line_start;
		if (pf_keyword(&c, "created"))
			bit = K_CREATED;
		else if (pf_keyword(&c, "host"))
			bit = K_HOST;
		else if (pf_keyword(&c, "kernel"))
			bit = K_KERNEL;
		else if (pf_keyword(&c, "page-size"))
			bit = K_PAGE;
		else if (pf_keyword(&c, "source"))
			bit = K_SOURCE;
		else if (pf_keyword(&c, "backend"))
			bit = K_BACKEND;
		else if (pf_keyword(&c, "mmap-pages"))
			bit = K_MMAP;
		else if (pf_keyword(&c, "command"))
			bit = K_COMMAND;
		else if (pf_keyword(&c, "cwd"))
			bit = K_CWD;
		else if (pf_keyword(&c, "max-rss"))
			bit = K_MAX_RSS;
		else if (pf_keyword(&c, "write-bytes"))
			bit = K_WRITE_BYTES;
		else if (pf_keyword(&c, "memory-cgroup"))
			bit = K_MEMCG;
		else if (pf_keyword(&c, "memory-limit"))
			bit = K_MEMLIMIT;
		else if (pf_keyword(&c, "lost-events"))
			bit = K_LOST;
		else
			return pf_fail(err, &c, "unknown header line (expected a key such as page-size, or a file line \"f ...\")");
		if (seen & bit)
			return pf_fail(err, &c, "header key %.*s given twice", (int)(c.p - c.line_start),
				       c.line_start);
		seen |= bit;
		if ((rc = pf_expect_space(&c, err, "the value")))
			return rc;
		switch (bit) {
		case K_CREATED: rc = parse_created(&c, &h->created, err); break;
		case K_HOST: rc = header_word(&c, h->host, sizeof(h->host), err, "host"); break;
		case K_KERNEL: rc = header_word(&c, h->kernel, sizeof(h->kernel), err, "kernel"); break;
		case K_SOURCE:
			rc = header_choice(&c, h->source, sizeof(h->source), err, "source", sources);
			break;
		case K_BACKEND:
			rc = header_choice(&c, h->backend, sizeof(h->backend), err, "backend", backends);
			break;
		case K_MMAP:
			rc = header_choice(&c, h->mmap_pages, sizeof(h->mmap_pages), err, "mmap-pages",
					   mmap_pages);
			break;
		case K_PAGE:
			if ((rc = pf_parse_u64(&c, &v, err, "page-size")))
				break;
			if (v < 512 || v > (1u << 24) || (v & (v - 1)))
				rc = pf_fail(err, &c, "page-size must be a power of two from 512 to 16M");
			h->page_size = (uint32_t)v;
			break;
		case K_MAX_RSS:
			rc = pf_parse_u64(&c, &h->max_rss, err, "max-rss");
			h->max_rss_known = !rc;
			break;
		case K_WRITE_BYTES:
			rc = pf_parse_u64(&c, &h->write_bytes, err, "write-bytes");
			h->write_bytes_known = !rc;
			break;
		case K_MEMCG:
			rc = parse_memcg(r, &c, h, err);
			break;
		case K_MEMLIMIT:
			limit_at = c;
			limit_at.p = c.line_start;
			rc = parse_memlimit(r, &c, h, err);
			break;
		case K_LOST:
			rc = pf_parse_u64(&c, &h->lost_events, err, "lost-events");
			h->lost_events_known = !rc;
			break;
		case K_COMMAND:
		case K_CWD:
			if ((rc = pf_parse_string(r, &c, &len, err, bit == K_COMMAND ? "command" : "cwd")))
				break;
			if (!(bit == K_COMMAND ? (r->command = strdup(r->path)) : (r->cwd = strdup(r->path))))
				rc = hs_error_set(err, ENOMEM, "out of memory");
			break;
		}
		if (rc)
			return rc;
		if (c.p != c.end)
			return pf_fail(err, &c, "unexpected text after the value");
	}
	if (!(seen & K_PAGE))
		return pf_fail(err, &c, "the header has no page-size line");
	if (!(seen & K_SOURCE))
		return pf_fail(err, &c, "the header has no source line");
	if ((seen & K_MEMLIMIT) && !(seen & K_MEMCG))
		return pf_fail(err, &limit_at, "memory-limit without a memory-cgroup line: the limit of what");
	h->command = r->command;
	h->cwd = r->cwd;
	h->memcg = r->memcg;
	h->memcg_limit_holder = r->memlimit;
	r->body = pos;
	r->body_line = line;
	return 0;
}

/* ---- the trailer ------------------------------------------------------------ */

/* How many lines end before offset pos. */
static unsigned lines_before(const struct hs_profile_reader *r, size_t pos)
{
	unsigned lines = 0;

	for (const char *p = r->buf, *end = r->buf + pos;
	     (p = memchr(p, '\n', (size_t)(end - p))); p++)
		lines++;
	return lines;
}

/* The "end" line at c: the counts the profile promises. */
static int parse_end_line(struct hs_profile_reader *r, struct cursor *c, struct hs_error *err)
{
	struct hs_profile_totals *t = &r->totals;
	int rc;

	if (!pf_keyword(c, "end"))
		return pf_fail(err, c, "expected \"end\"");
	if ((rc = pf_expect_space(c, err, "the file count")) ||
	    (rc = pf_parse_u64(c, &t->files, err, "the file count")) ||
	    (rc = pf_expect_space(c, err, "the output count")) ||
	    (rc = pf_parse_u64(c, &t->outputs, err, "the output count")) ||
	    (rc = pf_expect_space(c, err, "the trace count")) ||
	    (rc = pf_parse_u64(c, &t->trace_lines, err, "the trace count")))
		return rc;
	if (c->p != c->end)
		return pf_fail(err, c, "unexpected text after the counts");
	if (t->files >= HS_PROFILE_MAX_ITEMS || t->outputs >= HS_PROFILE_MAX_ITEMS ||
	    t->trace_lines >= HS_PROFILE_MAX_ITEMS)
		return pf_fail(err, c, "more items than a profile may hold");
	return 0;
}

/*
 * The last line (starting at last) is not "end ...": the profile was cut
 * short, unless an end line comes earlier and something was added after it.
 * Only an error costs this backward scan.
 */
static int trailer_missing(const struct hs_profile_reader *r, size_t last, struct hs_error *err)
{
	struct cursor c;

	for (size_t pos = last; pos > 0; ) {
		size_t start = pos - 1;

		while (start > 0 && r->buf[start - 1] != '\n')
			start--;
		pf_next_line(r, start, 0, &c);
		if (pf_keyword(&c, "end")) {
			pf_next_line(r, pos, lines_before(r, pos) + 1, &c);
			return pf_fail(err, &c, "text after the \"end\" line");
		}
		pos = start;
	}
	pf_next_line(r, last, lines_before(r, last) + 1, &c);
	return pf_fail(err, &c, "truncated profile: the last line is not \"end\"");
}

/*
 * The last line must be "end FILES OUTPUTS TRACE" followed by a newline.
 * Its line number is only counted for a message, so that opening a big
 * profile does not read all of it.
 */
int pf_parse_trailer(struct hs_profile_reader *r, struct hs_error *err)
{
	struct cursor c;
	size_t start;
	int rc;

	if (!r->len || r->buf[r->len - 1] != '\n') {
		c.line_start = c.p = c.end = r->buf + r->len;
		c.line = lines_before(r, r->len) + 1;
		c.base = r->len;
		return pf_fail(err, &c, "truncated profile: it does not end with a newline");
	}
	start = r->len - 1;
	while (start > 0 && r->buf[start - 1] != '\n')
		start--;
	pf_next_line(r, start, 0, &c);
	if (!pf_keyword(&c, "end"))
		return trailer_missing(r, start, err);
	c.p = c.line_start;
	rc = parse_end_line(r, &c, err);
	if (rc && err)
		err->line = lines_before(r, start) + 1;
	return rc;
}
