/*
 * profile-read.c - the profile's reader (profile.h): opening a profile
 * (mapped, read from a stream, or a caller's buffer), the cursor over a
 * line and its fields, and the items, one at a time.
 *
 * Opening checks the header and the trailer (profile-header.c) before
 * anything is returned, so a caller never acts on half a profile. Then
 * hs_profile_next() parses a line at each call, in place: an item points
 * into the reader's reused buffers (the decoded path, the ranges), never
 * into the input, which a mapped profile gives back as it goes.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "profile/profile-impl.h"

/* ---- the cursor ------------------------------------------------------------- */

int pf_fail(struct hs_error *err, const struct cursor *c, const char *fmt, ...)
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

int pf_expect_space(struct cursor *c, struct hs_error *err, const char *what)
{
	if (c->p >= c->end || *c->p != ' ')
		return pf_fail(err, c, "expected a space before %s", what);
	c->p++;
	return 0;
}

/* Strict unsigned decimal: digits only, no sign, no overflow. */
int pf_parse_u64(struct cursor *c, uint64_t *out, struct hs_error *err, const char *what)
{
	uint64_t v = 0;
	const char *start = c->p;

	while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
		unsigned d = (unsigned)(*c->p - '0');

		if (v > (UINT64_MAX - d) / 10)
			return pf_fail(err, c, "%s is too large", what);
		v = v * 10 + d;
		c->p++;
	}
	if (c->p == start)
		return pf_fail(err, c, "expected a number for %s", what);
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
int pf_parse_string(struct hs_profile_reader *r, struct cursor *c,
		    size_t *len, struct hs_error *err, const char *what)
{
	size_t n = 0;

	if (c->p >= c->end)
		return pf_fail(err, c, "missing %s", what);
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
				return pf_fail(err, c, "bad escape in %s (use \\\\ or \\xHH)", what);
			if (hi == 0 && lo == 0)
				return pf_fail(err, c, "NUL byte in %s", what);
			r->path[n++] = (char)(hi << 4 | lo);
			c->p += 4;
			continue;
		}
		if (ch < 0x20 || ch == 0x7f)
			return pf_fail(err, c, "raw control character 0x%02x in %s (escape it as \\xHH)",
				       ch, what);
		r->path[n++] = (char)ch;
		c->p++;
	}
	if (n > HS_PROFILE_MAX_PATH)
		return pf_fail(err, c, "%s is longer than %d bytes", what, HS_PROFILE_MAX_PATH);
	r->path[n] = '\0';
	*len = n;
	return 0;
}

/* " PATH": the rest of the line, an absolute path. */
static int parse_path(struct hs_profile_reader *r, struct cursor *c, size_t *len,
		      struct hs_error *err)
{
	int rc;

	if ((rc = pf_expect_space(c, err, "the path")) ||
	    (rc = pf_parse_string(r, c, len, err, "the path")))
		return rc;
	if (r->path[0] != '/')
		return pf_fail(err, c, "the path is not absolute");
	return 0;
}

/* Point c at the line starting at offset pos; false at the end of input. */
bool pf_next_line(const struct hs_profile_reader *r, size_t pos, unsigned line,
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
bool pf_keyword(struct cursor *c, const char *kw)
{
	size_t n = strlen(kw);

	if ((size_t)(c->end - c->p) < n || memcmp(c->p, kw, n) != 0)
		return false;
	if (c->p + n != c->end && c->p[n] != ' ')
		return false;
	c->p += n;
	return true;
}

/* ---- the items -------------------------------------------------------------- */

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

		if ((rc = pf_parse_u64(c, &rg.first, err, "a page number")))
			return rc;
		rg.last = rg.first;
		if (c->p < c->end && *c->p == '-') {
			c->p++;
			if ((rc = pf_parse_u64(c, &rg.last, err, "a page number")))
				return rc;
			if (rg.last < rg.first)
				return pf_fail(err, c, "range %" PRIu64 "-%" PRIu64 " ends before it starts",
					       rg.first, rg.last);
		}
		if (rg.last >= hs_profile_page_limit(r->header.page_size))
			return pf_fail(err, c, "page %" PRIu64 " is beyond the largest possible file",
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
			return pf_fail(err, c, "ranges overlap at page %" PRIu64, s[i].first);
	return 0;
}

static int parse_dev(struct cursor *c, uint64_t *dev, struct hs_error *err)
{
	uint64_t maj, min;
	int rc;

	if ((rc = pf_parse_u64(c, &maj, err, "the device major number")))
		return rc;
	if (c->p >= c->end || *c->p != ':')
		return pf_fail(err, c, "expected MAJOR:MINOR for the device");
	c->p++;
	if ((rc = pf_parse_u64(c, &min, err, "the device minor number")))
		return rc;
	if (maj > 0xfffff || min > 0xfffff)
		return pf_fail(err, c, "device number out of range");
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
	if ((rc = pf_parse_u64(c, &sec, err, "the mtime")))
		return rc;
	/* the writer can write INT64_MIN, so the reader takes it back */
	if (sec > (uint64_t)INT64_MAX + neg)
		return pf_fail(err, c, "mtime out of range");
	if (c->p >= c->end || *c->p != '.')
		return pf_fail(err, c, "expected SECONDS.NANOSECONDS for the mtime");
	c->p++;
	frac = c->p;
	if ((rc = pf_parse_u64(c, &nsec, err, "the mtime nanoseconds")))
		return rc;
	if (c->p - frac != 9)
		return pf_fail(err, c, "mtime nanoseconds must have nine digits");
	/* a decimal: -1.250000000 is a second and a quarter before the epoch,
	   which struct timespec holds as -2 s + 750000000 ns */
	if (neg && nsec) {
		if (sec > INT64_MAX)
			return pf_fail(err, c, "mtime out of range");
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
		const char *at = strchr(hs_profile_flag_letters, *c->p);
		unsigned bit;

		if (!at || !*c->p)
			return pf_fail(err, c, "unknown flag '%c' (known: %s)", *c->p, hs_profile_flag_letters);
		bit = 1u << (at - hs_profile_flag_letters);
		if (f & bit)
			return pf_fail(err, c, "flag '%c' given twice", *c->p);
		f |= bit;
		c->p++;
	}
	if (!f)
		return pf_fail(err, c, "expected flags (letters from \"%s\", or -)", hs_profile_flag_letters);
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
	if ((rc = pf_expect_space(c, err, "the device")) || (rc = parse_dev(c, &f->id.dev, err)) ||
	    (rc = pf_expect_space(c, err, "the inode")) ||
	    (rc = pf_parse_u64(c, &f->id.ino, err, "the inode")) ||
	    (rc = pf_expect_space(c, err, "the size")) ||
	    (rc = pf_parse_u64(c, &f->id.size, err, "the size")) ||
	    (rc = pf_expect_space(c, err, "the mtime")) || (rc = parse_mtime(c, &f->id, err)) ||
	    (rc = pf_expect_space(c, err, "the flags")) || (rc = parse_flags(c, &f->flags, err)) ||
	    (rc = pf_expect_space(c, err, "the ranges")) || (rc = parse_ranges(r, c, &n, err)) ||
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

	if ((rc = pf_expect_space(c, err, "the file index")) ||
	    (rc = pf_parse_u64(c, &t->file, err, "the file index")))
		return rc;
	if (t->file >= r->seen.files)
		return pf_fail(err, c, "trace refers to file %" PRIu64 " but the profile lists %" PRIu64,
			       t->file, r->seen.files);
	if ((rc = pf_expect_space(c, err, "the ranges")) ||
	    (rc = parse_ranges(r, c, &t->nranges, err)))
		return rc;
	if (!t->nranges)
		return pf_fail(err, c, "a trace line needs at least one range");
	t->ranges = r->ranges;
	return 0;
}

/* ---- opening ---------------------------------------------------------------- */

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
	if ((rc = pf_parse_header(r, err)) || (rc = pf_parse_trailer(r, err))) {
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
	return pf_fail(err, c, "the end line promises %" PRIu64 " %s but the profile has %" PRIu64,
		       promised, what, found);
}

static int next_item(struct hs_profile_reader *r, struct hs_profile_item *it,
		     struct hs_error *err)
{
	struct cursor c;
	int rc;

	while (pf_next_line(r, r->pos, r->line, &c)) {
		r->pos = (size_t)(c.end - r->buf) + 1;
		r->line++;
		memset(it, 0, sizeof(*it));
		it->line = c.line;
		if (pf_keyword(&c, "f")) {
			if (r->sec != SEC_FILES)
				return pf_fail(err, &c, "file lines must come before output and trace lines");
			if ((rc = parse_file(r, &c, it, err)))
				return rc;
			it->kind = HS_ITEM_FILE;
			r->seen.files++;
		} else if (pf_keyword(&c, "o")) {
			if (r->sec > SEC_OUTPUTS)
				return pf_fail(err, &c, "output lines must come before trace lines");
			r->sec = SEC_OUTPUTS;
			if ((rc = parse_path(r, &c, &it->file.path_len, err)))
				return rc;
			it->file.path = r->path;
			it->kind = HS_ITEM_OUTPUT;
			r->seen.outputs++;
		} else if (pf_keyword(&c, "t")) {
			r->sec = SEC_TRACE;
			if ((rc = parse_trace(r, &c, it, err)))
				return rc;
			it->kind = HS_ITEM_TRACE;
			r->seen.trace_lines++;
		} else if (pf_keyword(&c, "end")) {
			/* pf_parse_trailer() checked that this is the last line */
			if (r->pos < r->len)
				return pf_fail(err, &c, "\"end\" before the last line");
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
			return pf_fail(err, &c, "unknown line (expected \"f\", \"o\", \"t\" or \"end\")");
		}
		if (c.p != c.end)
			return pf_fail(err, &c, "unexpected text at the end of the line");
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
