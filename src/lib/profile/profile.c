/*
 * profile.c - reading and writing the profile text format.
 *
 * The format (docs/profile.md) is line-oriented so that it can be read
 * with a pager, diffed and streamed, yet parses at hundreds of megabytes a
 * second: every line starts with a keyword, fields are separated by single
 * spaces, and the only free-form field, a path, comes last and is escaped
 * so that it holds no newline:
 *
 *   hotset-profile 1
 *   page-size 4096
 *   source record
 *   f 254:0 1048602 23870 1700000000.000000000 r 0-5 /usr/include/stdio.h
 *   o /tmp/out.o
 *   t 0 0-5
 *   end 1 1 1
 *
 * The trailer repeats the counts, so a truncated profile is detected before
 * its first item is used. The reader parses in place from a read-only
 * mapping; only the decoded path and the range list of the current line
 * are copied, into buffers the reader reuses.
 */
#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "base/atomic.h"
#include "profile/profile.h"

#define MAGIC "hotset-profile "

uint64_t hs_ranges_pages(const struct hs_range *r, size_t n)
{
	uint64_t pages = 0;

	for (size_t i = 0; i < n; i++)
		pages += r[i].last - r[i].first + 1;
	return pages;
}

static const char flag_letters[] = "rmxwd"; /* bit i of enum hs_file_flag */

const char *hs_file_flags_str(unsigned flags, char buf[8])
{
	size_t n = 0;

	for (size_t i = 0; flag_letters[i]; i++)
		if (flags & (1u << i))
			buf[n++] = flag_letters[i];
	if (!n)
		buf[n++] = '-';
	buf[n] = '\0';
	return buf;
}

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

/* ======================================================================
 * Reader
 * ====================================================================== */

enum section { SEC_HEADER, SEC_FILES, SEC_OUTPUTS, SEC_TRACE, SEC_END };

struct hs_profile_reader {
	const char *buf;	/* the whole profile */
	size_t len;
	void *map;		/* our mapping of buf, or NULL if borrowed */
	char *copy;		/* buf, if read into memory by us */
	size_t released;	/* map pages before this were given back */
	size_t body;		/* offset of the first item line */
	unsigned body_line;

	struct hs_profile_header header;
	struct hs_profile_totals totals;	/* promised by the trailer */
	char *command, *cwd;	/* decoded header strings */
	char *memcg, *memlimit;	/* memory-cgroup's and memory-limit's cgroups */

	/* iteration state */
	size_t pos;		/* offset of the next line */
	unsigned line;		/* number of the next line */
	enum section sec;
	struct hs_profile_totals seen;
	int failed;		/* sticky error */
	struct hs_error failure;

	/* scratch reused from line to line */
	char *path;
	size_t path_cap;
	struct hs_range *ranges, *sorted;
	size_t ranges_cap, sorted_cap;
};

/* A line being parsed: [p, end) with a cursor. */
struct cursor {
	const char *p, *end;
	const char *line_start;
	unsigned line;
	size_t base;		/* offset of line_start in the buffer */
};

static int fail(struct hs_error *err, const struct cursor *c, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct hs_error *err, const struct cursor *c, const char *fmt, ...)
{
	if (err) {
		va_list ap;

		err->line = c->line;
		err->offset = c->base + (size_t)(c->p - c->line_start);
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static int expect_space(struct cursor *c, struct hs_error *err, const char *what)
{
	if (c->p >= c->end || *c->p != ' ')
		return fail(err, c, "expected a space before %s", what);
	c->p++;
	return 0;
}

/* Strict unsigned decimal: digits only, no sign, no overflow. */
static int parse_u64(struct cursor *c, uint64_t *out, struct hs_error *err, const char *what)
{
	uint64_t v = 0;
	const char *start = c->p;

	while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
		unsigned d = (unsigned)(*c->p - '0');

		if (v > (UINT64_MAX - d) / 10)
			return fail(err, c, "%s is too large", what);
		v = v * 10 + d;
		c->p++;
	}
	if (c->p == start)
		return fail(err, c, "expected a number for %s", what);
	*out = v;
	return 0;
}

static int hexval(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/*
 * Decode an escaped string running to the end of the line into r->path.
 * Escapes: "\\" for a backslash and "\xHH" for any other byte; raw control
 * characters are refused because the writer never produces them.
 */
static int parse_string(struct hs_profile_reader *r, struct cursor *c,
			size_t *len, struct hs_error *err, const char *what)
{
	size_t n = 0;

	if (c->p >= c->end)
		return fail(err, c, "missing %s", what);
	if (hs_grow(&r->path, &r->path_cap, (size_t)(c->end - c->p) + 1, 1))
		return hs_error_set(err, ENOMEM, "out of memory");
	while (c->p < c->end) {
		unsigned char ch = (unsigned char)*c->p;

		if (ch == '\\') {
			int hi, lo;

			if (c->end - c->p >= 2 && c->p[1] == '\\') {
				r->path[n++] = '\\';
				c->p += 2;
				continue;
			}
			if (c->end - c->p < 4 || c->p[1] != 'x' ||
			    (hi = hexval(c->p[2])) < 0 || (lo = hexval(c->p[3])) < 0)
				return fail(err, c, "bad escape in %s (use \\\\ or \\xHH)", what);
			if (hi == 0 && lo == 0)
				return fail(err, c, "NUL byte in %s", what);
			r->path[n++] = (char)(hi << 4 | lo);
			c->p += 4;
			continue;
		}
		if (ch < 0x20 || ch == 0x7f)
			return fail(err, c, "raw control character 0x%02x in %s (escape it as \\xHH)",
				    ch, what);
		r->path[n++] = (char)ch;
		c->p++;
	}
	if (n > HS_PROFILE_MAX_PATH)
		return fail(err, c, "%s is longer than %d bytes", what, HS_PROFILE_MAX_PATH);
	r->path[n] = '\0';
	*len = n;
	return 0;
}

/* " PATH": the rest of the line, an absolute path. */
static int parse_path(struct hs_profile_reader *r, struct cursor *c, size_t *len,
		      struct hs_error *err)
{
	int rc;

	if ((rc = expect_space(c, err, "the path")) ||
	    (rc = parse_string(r, c, len, err, "the path")))
		return rc;
	if (r->path[0] != '/')
		return fail(err, c, "the path is not absolute");
	return 0;
}

/* "-" or a comma list of "A" / "A-B" into r->ranges. */
static int parse_ranges(struct hs_profile_reader *r, struct cursor *c, size_t *count,
			struct hs_error *err)
{
	size_t n = 0;

	if (c->p < c->end && *c->p == '-') {
		c->p++;
		*count = 0;
		return 0;
	}
	for (;;) {
		struct hs_range rg;
		int rc;

		if ((rc = parse_u64(c, &rg.first, err, "a page number")))
			return rc;
		rg.last = rg.first;
		if (c->p < c->end && *c->p == '-') {
			c->p++;
			if ((rc = parse_u64(c, &rg.last, err, "a page number")))
				return rc;
			if (rg.last < rg.first)
				return fail(err, c, "range %" PRIu64 "-%" PRIu64 " ends before it starts",
					    rg.first, rg.last);
		}
		if (rg.last >= hs_profile_page_limit(r->header.page_size))
			return fail(err, c, "page %" PRIu64 " is beyond the largest possible file",
				    rg.last);
		if (hs_grow(&r->ranges, &r->ranges_cap, n + 1, sizeof(*r->ranges)))
			return hs_error_set(err, ENOMEM, "out of memory");
		r->ranges[n++] = rg;
		if (c->p >= c->end || *c->p != ',')
			break;
		c->p++;
	}
	*count = n;
	return 0;
}

static int cmp_range(const void *a, const void *b)
{
	const struct hs_range *x = a, *y = b;

	return x->first < y->first ? -1 : x->first > y->first;
}

/* A file's ranges must not overlap, or its pages would count twice. */
static int check_disjoint(struct hs_profile_reader *r, size_t n, struct cursor *c,
			  struct hs_error *err)
{
	struct hs_range *s;

	if (n < 2)
		return 0;
	if (hs_grow(&r->sorted, &r->sorted_cap, n, sizeof(*r->sorted)))
		return hs_error_set(err, ENOMEM, "out of memory");
	s = r->sorted;
	memcpy(s, r->ranges, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_range);
	for (size_t i = 1; i < n; i++)
		if (s[i].first <= s[i - 1].last)
			return fail(err, c, "ranges overlap at page %" PRIu64, s[i].first);
	return 0;
}

static int parse_dev(struct cursor *c, uint64_t *dev, struct hs_error *err)
{
	uint64_t maj, min;
	int rc;

	if ((rc = parse_u64(c, &maj, err, "the device major number")))
		return rc;
	if (c->p >= c->end || *c->p != ':')
		return fail(err, c, "expected MAJOR:MINOR for the device");
	c->p++;
	if ((rc = parse_u64(c, &min, err, "the device minor number")))
		return rc;
	if (maj > 0xfffff || min > 0xfffff)
		return fail(err, c, "device number out of range");
	*dev = makedev((unsigned)maj, (unsigned)min);
	return 0;
}

/* SECONDS.NANOSECONDS, exactly nine digits after the dot. */
static int parse_mtime(struct cursor *c, struct hs_file_id *id, struct hs_error *err)
{
	uint64_t sec, nsec;
	bool neg = false;
	const char *frac;
	int rc;

	if (c->p < c->end && *c->p == '-') {
		neg = true;
		c->p++;
	}
	if ((rc = parse_u64(c, &sec, err, "the mtime")))
		return rc;
	/* the writer can write INT64_MIN, so the reader takes it back */
	if (sec > (uint64_t)INT64_MAX + neg)
		return fail(err, c, "mtime out of range");
	if (c->p >= c->end || *c->p != '.')
		return fail(err, c, "expected SECONDS.NANOSECONDS for the mtime");
	c->p++;
	frac = c->p;
	if ((rc = parse_u64(c, &nsec, err, "the mtime nanoseconds")))
		return rc;
	if (c->p - frac != 9)
		return fail(err, c, "mtime nanoseconds must have nine digits");
	/* a decimal: -1.250000000 is a second and a quarter before the epoch,
	   which struct timespec holds as -2 s + 750000000 ns */
	if (neg && nsec) {
		if (sec > INT64_MAX)
			return fail(err, c, "mtime out of range");
		id->mtime_sec = -(int64_t)sec - 1;
		id->mtime_nsec = (uint32_t)(1000000000u - nsec);
	} else {
		id->mtime_sec = neg ? (int64_t)(0 - sec) : (int64_t)sec;
		id->mtime_nsec = (uint32_t)nsec;
	}
	return 0;
}

static int parse_flags(struct cursor *c, unsigned *flags, struct hs_error *err)
{
	unsigned f = 0;

	if (c->p < c->end && *c->p == '-') {
		c->p++;
		*flags = 0;
		return 0;
	}
	while (c->p < c->end && *c->p != ' ') {
		const char *at = strchr(flag_letters, *c->p);
		unsigned bit;

		if (!at || !*c->p)
			return fail(err, c, "unknown flag '%c' (known: %s)", *c->p, flag_letters);
		bit = 1u << (at - flag_letters);
		if (f & bit)
			return fail(err, c, "flag '%c' given twice", *c->p);
		f |= bit;
		c->p++;
	}
	if (!f)
		return fail(err, c, "expected flags (letters from \"%s\", or -)", flag_letters);
	*flags = f;
	return 0;
}

/* f DEV INO SIZE MTIME FLAGS RANGES PATH */
static int parse_file(struct hs_profile_reader *r, struct cursor *c,
		      struct hs_profile_item *it, struct hs_error *err)
{
	struct hs_profile_file *f = &it->file;
	size_t n;
	int rc;

	memset(f, 0, sizeof(*f));
	if ((rc = expect_space(c, err, "the device")) || (rc = parse_dev(c, &f->id.dev, err)) ||
	    (rc = expect_space(c, err, "the inode")) ||
	    (rc = parse_u64(c, &f->id.ino, err, "the inode")) ||
	    (rc = expect_space(c, err, "the size")) ||
	    (rc = parse_u64(c, &f->id.size, err, "the size")) ||
	    (rc = expect_space(c, err, "the mtime")) || (rc = parse_mtime(c, &f->id, err)) ||
	    (rc = expect_space(c, err, "the flags")) || (rc = parse_flags(c, &f->flags, err)) ||
	    (rc = expect_space(c, err, "the ranges")) || (rc = parse_ranges(r, c, &n, err)) ||
	    (rc = check_disjoint(r, n, c, err)) || (rc = parse_path(r, c, &f->path_len, err)))
		return rc;
	f->path = r->path;
	f->ranges = r->ranges;
	f->nranges = n;
	f->pages = hs_ranges_pages(r->ranges, n);
	f->index = r->seen.files;
	return 0;
}

/* t FILE RANGES */
static int parse_trace(struct hs_profile_reader *r, struct cursor *c,
		       struct hs_profile_item *it, struct hs_error *err)
{
	struct hs_profile_trace *t = &it->trace;
	int rc;

	if ((rc = expect_space(c, err, "the file index")) ||
	    (rc = parse_u64(c, &t->file, err, "the file index")))
		return rc;
	if (t->file >= r->seen.files)
		return fail(err, c, "trace refers to file %" PRIu64 " but the profile lists %" PRIu64,
			    t->file, r->seen.files);
	if ((rc = expect_space(c, err, "the ranges")) ||
	    (rc = parse_ranges(r, c, &t->nranges, err)))
		return rc;
	if (!t->nranges)
		return fail(err, c, "a trace line needs at least one range");
	t->ranges = r->ranges;
	return 0;
}

/* Point c at the line starting at offset pos; false at the end of input. */
static bool next_line(const struct hs_profile_reader *r, size_t pos, unsigned line,
		      struct cursor *c)
{
	const char *start = r->buf + pos, *nl;

	if (pos >= r->len)
		return false;
	nl = memchr(start, '\n', r->len - pos);
	c->line_start = c->p = start;
	c->end = nl ? nl : r->buf + r->len;
	c->line = line;
	c->base = pos;
	return true;
}

/* Does the line at c start with keyword kw followed by a space or its end? */
static bool keyword(struct cursor *c, const char *kw)
{
	size_t n = strlen(kw);

	if ((size_t)(c->end - c->p) < n || memcmp(c->p, kw, n) != 0)
		return false;
	if (c->p + n != c->end && c->p[n] != ' ')
		return false;
	c->p += n;
	return true;
}

static int header_word(struct cursor *c, char *dst, size_t cap, struct hs_error *err,
		       const char *key)
{
	size_t n = (size_t)(c->end - c->p);

	if (!n)
		return fail(err, c, "%s needs a value", key);
	if (n >= cap)
		return fail(err, c, "%s value is longer than %zu bytes", key, cap - 1);
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)c->p[i] < 0x21 || c->p[i] == 0x7f)
			return fail(err, c, "%s value must be one word of printable characters", key);
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
		return fail(err, c, "created is not a time after 1970-01-01T00:00:00Z");
	*out = (int64_t)t;
	c->p = c->end;
	return 0;
bad:
	return fail(err, c, "created must be YYYY-MM-DDTHH:MM:SSZ");
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
	return fail(err, c, "unknown %s \"%s\"", key, dst);
}

/* Parse header lines up to the first item; fills r->header. */
/* A cgroup's name after a header key: escaped like a path, absolute. */
static int parse_cgroup_name(struct hs_profile_reader *r, struct cursor *c, char **out,
			     struct hs_error *err, const char *what)
{
	const char *start = c->p;
	size_t len;
	int rc;

	if ((rc = parse_string(r, c, &len, err, what)))
		return rc;
	if (r->path[0] != '/') {
		c->p = start;
		return fail(err, c, "%s must be a cgroup's path, from \"/\"", what);
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

	if ((rc = parse_u64(c, &v, err, "the cgroup version")))
		return rc;
	if (v != 1 && v != 2)
		return fail(err, c, "memory-cgroup's version must be 1 or 2");
	if ((rc = expect_space(c, err, "the cgroup")) ||
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

	if (keyword(c, "none")) {
		h->memcg_limit = UINT64_MAX;
	} else if ((rc = parse_u64(c, &h->memcg_limit, err, "memory-limit")) ||
		   (rc = expect_space(c, err, "the cgroup that sets it")) ||
		   (rc = parse_cgroup_name(r, c, &r->memlimit, err, "memory-limit's cgroup"))) {
		return rc;
	} else if (h->memcg_limit == UINT64_MAX) {
		return fail(err, c, "memory-limit is \"none\" or below 2^64 - 1");
	}
	h->memcg_limit_known = true;
	return 0;
}

static int parse_header(struct hs_profile_reader *r, struct hs_error *err)
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
	if (!next_line(r, pos, line, &c) || !keyword(&c, "hotset-profile"))
		return fail(err, &c, "not a hotset profile (it must start with \"" MAGIC "%d\")",
			    HS_PROFILE_VERSION);
	if ((rc = expect_space(&c, err, "the version")) ||
	    (rc = parse_u64(&c, &v, err, "the version")))
		return rc;
	if (v != HS_PROFILE_VERSION)
		return fail(err, &c, "profile version %" PRIu64 " is not supported (this hotset reads version %d)",
			    v, HS_PROFILE_VERSION);
	if (c.p != c.end)
		return fail(err, &c, "unexpected text after the version");
	h->version = (unsigned)v;

	for (;;) {
		unsigned bit;
		size_t len;

		pos = (size_t)(c.end - r->buf) + 1;
		line++;
		if (!next_line(r, pos, line, &c))
			return fail(err, &c, "truncated profile: no \"end\" line");
		if (c.p < c.end && *c.p == '#')
			continue;
		if (keyword(&c, "f") || keyword(&c, "o") || keyword(&c, "t") || keyword(&c, "end"))
			break;
		c.p = c.line_start;
		if (keyword(&c, "created"))
			bit = K_CREATED;
		else if (keyword(&c, "host"))
			bit = K_HOST;
		else if (keyword(&c, "kernel"))
			bit = K_KERNEL;
		else if (keyword(&c, "page-size"))
			bit = K_PAGE;
		else if (keyword(&c, "source"))
			bit = K_SOURCE;
		else if (keyword(&c, "backend"))
			bit = K_BACKEND;
		else if (keyword(&c, "mmap-pages"))
			bit = K_MMAP;
		else if (keyword(&c, "command"))
			bit = K_COMMAND;
		else if (keyword(&c, "cwd"))
			bit = K_CWD;
		else if (keyword(&c, "max-rss"))
			bit = K_MAX_RSS;
		else if (keyword(&c, "write-bytes"))
			bit = K_WRITE_BYTES;
		else if (keyword(&c, "memory-cgroup"))
			bit = K_MEMCG;
		else if (keyword(&c, "memory-limit"))
			bit = K_MEMLIMIT;
		else if (keyword(&c, "lost-events"))
			bit = K_LOST;
		else
			return fail(err, &c, "unknown header line (expected a key such as page-size, or a file line \"f ...\")");
		if (seen & bit)
			return fail(err, &c, "header key %.*s given twice", (int)(c.p - c.line_start),
				    c.line_start);
		seen |= bit;
		if ((rc = expect_space(&c, err, "the value")))
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
			if ((rc = parse_u64(&c, &v, err, "page-size")))
				break;
			if (v < 512 || v > (1u << 24) || (v & (v - 1)))
				rc = fail(err, &c, "page-size must be a power of two from 512 to 16M");
			h->page_size = (uint32_t)v;
			break;
		case K_MAX_RSS:
			rc = parse_u64(&c, &h->max_rss, err, "max-rss");
			h->max_rss_known = !rc;
			break;
		case K_WRITE_BYTES:
			rc = parse_u64(&c, &h->write_bytes, err, "write-bytes");
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
			rc = parse_u64(&c, &h->lost_events, err, "lost-events");
			h->lost_events_known = !rc;
			break;
		case K_COMMAND:
		case K_CWD:
			if ((rc = parse_string(r, &c, &len, err, bit == K_COMMAND ? "command" : "cwd")))
				break;
			if (!(bit == K_COMMAND ? (r->command = strdup(r->path)) : (r->cwd = strdup(r->path))))
				rc = hs_error_set(err, ENOMEM, "out of memory");
			break;
		}
		if (rc)
			return rc;
		if (c.p != c.end)
			return fail(err, &c, "unexpected text after the value");
	}
	if (!(seen & K_PAGE))
		return fail(err, &c, "the header has no page-size line");
	if (!(seen & K_SOURCE))
		return fail(err, &c, "the header has no source line");
	if ((seen & K_MEMLIMIT) && !(seen & K_MEMCG))
		return fail(err, &limit_at, "memory-limit without a memory-cgroup line: the limit of what");
	h->command = r->command;
	h->cwd = r->cwd;
	h->memcg = r->memcg;
	h->memcg_limit_holder = r->memlimit;
	r->body = pos;
	r->body_line = line;
	return 0;
}

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

	if (!keyword(c, "end"))
		return fail(err, c, "expected \"end\"");
	if ((rc = expect_space(c, err, "the file count")) ||
	    (rc = parse_u64(c, &t->files, err, "the file count")) ||
	    (rc = expect_space(c, err, "the output count")) ||
	    (rc = parse_u64(c, &t->outputs, err, "the output count")) ||
	    (rc = expect_space(c, err, "the trace count")) ||
	    (rc = parse_u64(c, &t->trace_lines, err, "the trace count")))
		return rc;
	if (c->p != c->end)
		return fail(err, c, "unexpected text after the counts");
	if (t->files >= HS_PROFILE_MAX_ITEMS || t->outputs >= HS_PROFILE_MAX_ITEMS ||
	    t->trace_lines >= HS_PROFILE_MAX_ITEMS)
		return fail(err, c, "more items than a profile may hold");
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
		next_line(r, start, 0, &c);
		if (keyword(&c, "end")) {
			next_line(r, pos, lines_before(r, pos) + 1, &c);
			return fail(err, &c, "text after the \"end\" line");
		}
		pos = start;
	}
	next_line(r, last, lines_before(r, last) + 1, &c);
	return fail(err, &c, "truncated profile: the last line is not \"end\"");
}

/*
 * The last line must be "end FILES OUTPUTS TRACE" followed by a newline.
 * Its line number is only counted for a message, so that opening a big
 * profile does not read all of it.
 */
static int parse_trailer(struct hs_profile_reader *r, struct hs_error *err)
{
	struct cursor c;
	size_t start;
	int rc;

	if (!r->len || r->buf[r->len - 1] != '\n') {
		c.line_start = c.p = c.end = r->buf + r->len;
		c.line = lines_before(r, r->len) + 1;
		c.base = r->len;
		return fail(err, &c, "truncated profile: it does not end with a newline");
	}
	start = r->len - 1;
	while (start > 0 && r->buf[start - 1] != '\n')
		start--;
	next_line(r, start, 0, &c);
	if (!keyword(&c, "end"))
		return trailer_missing(r, start, err);
	c.p = c.line_start;
	rc = parse_end_line(r, &c, err);
	if (rc && err)
		err->line = lines_before(r, start) + 1;
	return rc;
}

int hs_profile_open_buffer(const void *buf, size_t len, struct hs_profile_reader **out,
			   struct hs_error *err)
{
	struct hs_profile_reader *r = calloc(1, sizeof(*r));
	int rc;

	if (!r)
		return hs_error_set(err, ENOMEM, "out of memory");
	r->buf = buf;
	r->len = len;
	if (err)
		memset(err, 0, sizeof(*err));
	if ((rc = parse_header(r, err)) || (rc = parse_trailer(r, err))) {
		hs_profile_close(r);
		return rc;
	}
	hs_profile_rewind(r);
	*out = r;
	return 0;
}

int hs_profile_open(const char *path, struct hs_profile_reader **out, struct hs_error *err)
{
	int fd, rc;

	/* O_NONBLOCK: opening a FIFO must not wait for a writer. */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return hs_error_set(err, errno, "%s", strerror(errno));
	rc = hs_profile_open_fd(fd, out, err);
	close(fd);
	return rc;
}

int hs_profile_open_fd(int fd, struct hs_profile_reader **out, struct hs_error *err)
{
	struct hs_profile_reader *r = NULL;
	struct stat st;
	void *map;
	int rc;

	if (fstat(fd, &st) < 0)
		return hs_error_set(err, errno, "%s", strerror(errno));
	if (!S_ISREG(st.st_mode)) {
		rc = hs_error_set(err, S_ISDIR(st.st_mode) ? EISDIR : EINVAL,
				  "not a regular file");
		goto out;
	}
	if (st.st_size == 0) {	/* nothing to map: the parser says what is wrong */
		rc = hs_profile_open_buffer("", 0, &r, err);
		goto out;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED) {
		rc = hs_error_set(err, errno, "cannot map: %s", strerror(errno));
		goto out;
	}
	/*
	 * A profile being truncated under us would raise SIGBUS on access; the
	 * writer never truncates (it renames a new file into place), so only a
	 * foreign writer can do that (the CLI catches the signal to say so).
	 */
	madvise(map, (size_t)st.st_size, MADV_SEQUENTIAL);
	rc = hs_profile_open_buffer(map, (size_t)st.st_size, &r, err);
	if (rc) {
		munmap(map, (size_t)st.st_size);
		goto out;
	}
	r->map = map;
	*out = r;
out:
	return rc;
}

int hs_profile_read(int fd, struct hs_profile_reader **out, struct hs_error *err)
{
	size_t len = 0, cap = 0;
	char *buf = NULL, probe;
	ssize_t n;
	int rc;

	for (;;) {
		if (len == cap && cap >= HS_PROFILE_MAX_READ) {
			/* full: fine only if the stream ends here */
			while ((n = read(fd, &probe, 1)) < 0 && errno == EINTR)
				;
			if (n > 0) {
				free(buf);
				return hs_error_set(err, EFBIG, "a profile read as a stream may hold at "
						    "most %llu MiB; name its file instead",
						    (unsigned long long)(HS_PROFILE_MAX_READ >> 20));
			}
			break;
		}
		/* 64 KiB, then twice as much each time */
		if (len == cap && hs_grow(&buf, &cap, cap ? cap + 1 : 1 << 16, 1)) {
			free(buf);
			return hs_error_set(err, ENOMEM, "out of memory");
		}
		n = read(fd, buf + len, cap - len);
		if (n > 0)
			len += (size_t)n;
		else if (n == 0 || errno != EINTR)
			break;
	}
	if (n < 0) {
		rc = hs_error_set(err, errno, "%s", strerror(errno));
		free(buf);
		return rc;
	}
	if ((rc = hs_profile_open_buffer(buf, len, out, err))) {
		free(buf);
		return rc;
	}
	(*out)->copy = buf;
	return 0;
}

const struct hs_profile_header *hs_profile_header(const struct hs_profile_reader *r)
{
	return &r->header;
}

const struct hs_profile_totals *hs_profile_totals(const struct hs_profile_reader *r)
{
	return &r->totals;
}

void hs_profile_rewind(struct hs_profile_reader *r)
{
	r->released = 0;
	r->pos = r->body;
	r->line = r->body_line;
	r->sec = SEC_FILES;
	memset(&r->seen, 0, sizeof(r->seen));
	r->failed = 0;
}

static int count_mismatch(struct hs_error *err, struct cursor *c, const char *what,
			  uint64_t promised, uint64_t found)
{
	return fail(err, c, "the end line promises %" PRIu64 " %s but the profile has %" PRIu64,
		    promised, what, found);
}

static int next_item(struct hs_profile_reader *r, struct hs_profile_item *it,
		     struct hs_error *err)
{
	struct cursor c;
	int rc;

	while (next_line(r, r->pos, r->line, &c)) {
		r->pos = (size_t)(c.end - r->buf) + 1;
		r->line++;
		memset(it, 0, sizeof(*it));
		it->line = c.line;
		if (keyword(&c, "f")) {
			if (r->sec != SEC_FILES)
				return fail(err, &c, "file lines must come before output and trace lines");
			if ((rc = parse_file(r, &c, it, err)))
				return rc;
			it->kind = HS_ITEM_FILE;
			r->seen.files++;
		} else if (keyword(&c, "o")) {
			if (r->sec > SEC_OUTPUTS)
				return fail(err, &c, "output lines must come before trace lines");
			r->sec = SEC_OUTPUTS;
			if ((rc = parse_path(r, &c, &it->file.path_len, err)))
				return rc;
			it->file.path = r->path;
			it->kind = HS_ITEM_OUTPUT;
			r->seen.outputs++;
		} else if (keyword(&c, "t")) {
			r->sec = SEC_TRACE;
			if ((rc = parse_trace(r, &c, it, err)))
				return rc;
			it->kind = HS_ITEM_TRACE;
			r->seen.trace_lines++;
		} else if (keyword(&c, "end")) {
			/* parse_trailer() checked that this is the last line */
			if (r->pos < r->len)
				return fail(err, &c, "\"end\" before the last line");
			if (r->seen.files != r->totals.files)
				return count_mismatch(err, &c, "files", r->totals.files, r->seen.files);
			if (r->seen.outputs != r->totals.outputs)
				return count_mismatch(err, &c, "outputs", r->totals.outputs,
						      r->seen.outputs);
			if (r->seen.trace_lines != r->totals.trace_lines)
				return count_mismatch(err, &c, "trace lines", r->totals.trace_lines,
						      r->seen.trace_lines);
			r->sec = SEC_END;
			it->kind = HS_ITEM_END;
			return 0;
		} else {
			return fail(err, &c, "unknown line (expected \"f\", \"o\", \"t\" or \"end\")");
		}
		if (c.p != c.end)
			return fail(err, &c, "unexpected text at the end of the line");
		return 1;
	}
	return hs_error_set(err, EINVAL, "truncated profile");
}

/*
 * A mapped profile is read once, front to back: give back the pages of the
 * mapping already parsed, so that a profile of a million files does not
 * end up resident in our address space (an item points only to copies).
 * After a rewind they are mapped again from the page cache.
 */
#define RELEASE_CHUNK (1u << 20)

static void release_parsed(struct hs_profile_reader *r)
{
	size_t upto;

	if (!r->map || r->pos < r->released + RELEASE_CHUNK)
		return;
	upto = r->pos & ~(size_t)(hs_page_size() - 1);
	madvise((char *)r->map + r->released, upto - r->released, MADV_DONTNEED);
	r->released = upto;
}

int hs_profile_next(struct hs_profile_reader *r, struct hs_profile_item *item,
		    struct hs_error *err)
{
	int rc;

	if (r->failed) {
		if (err)
			*err = r->failure;
		return r->failed;
	}
	if (r->sec == SEC_END) {
		memset(item, 0, sizeof(*item));
		return 0;
	}
	rc = next_item(r, item, &r->failure);
	release_parsed(r);
	if (rc < 0) {
		r->failed = rc;
		if (err)
			*err = r->failure;
	}
	return rc;
}

void hs_profile_close(struct hs_profile_reader *r)
{
	if (!r)
		return;
	if (r->map)
		munmap(r->map, r->len);
	free(r->copy);
	free(r->command);
	free(r->cwd);
	free(r->memcg);
	free(r->memlimit);
	free(r->path);
	free(r->ranges);
	free(r->sorted);
	free(r);
}

/* ======================================================================
 * Writer
 * ====================================================================== */

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

const char *hs_mtime_str(int64_t sec, uint32_t nsec, char buf[HS_MTIME_STR_MAX])
{
	uint64_t whole = sec < 0 ? (uint64_t)-(sec + 1) + 1 : (uint64_t)sec;

	nsec %= 1000000000u;
	if (sec < 0 && nsec) {	/* -2 s + 750000000 ns is -1.250000000 */
		whole--;
		nsec = 1000000000u - nsec;
	}
	snprintf(buf, HS_MTIME_STR_MAX, "%s%" PRIu64 ".%09u", sec < 0 ? "-" : "", whole,
		 (unsigned)nsec);
	return buf;
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
