/*
 * names.c - lists of file names (--files-from), read as a stream.
 *
 * A list of a million names is never held whole: a buffer holds what was
 * read and not yet handed out, and a name is handed out in place, ended by
 * a NUL written over its delimiter. A name longer than the limit is never
 * kept: it is reported as soon as it outgrows the buffer's share, and the
 * rest of its line is skipped as it comes.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache/targets.h"

#define NAME_BUF_MIN (64 << 10)

struct hs_name_list {
	hs_read_fn read;
	void *ctx;
	int fd;			/* for read_fd */
	char delim;
	size_t max;		/* longest name handed out */
	char *buf;
	size_t cap, pos, end;	/* buf[pos, end) is read, not yet handed out */
	unsigned done;		/* lines ended so far */
	bool eof;
	bool skipping;		/* in a line already reported too long */
};

static ssize_t read_fd(void *ctx, void *buf, size_t len)
{
	struct hs_name_list *l = ctx;
	ssize_t n;

	while ((n = read(l->fd, buf, len)) < 0 && errno == EINTR)
		;
	return n < 0 ? -errno : n;
}

int hs_name_list_new_fn(hs_read_fn read_fn, void *ctx, char delim, size_t max_len,
			struct hs_name_list **out)
{
	struct hs_name_list *l;

	if (!max_len || max_len > SIZE_MAX / 4)
		return -EINVAL;
	if (!(l = calloc(1, sizeof(*l))))
		return -ENOMEM;
	/* room for a whole name, its NUL, and a read of some size after it */
	l->cap = 2 * max_len + 2 > NAME_BUF_MIN ? 2 * max_len + 2 : NAME_BUF_MIN;
	if (!(l->buf = malloc(l->cap))) {
		free(l);
		return -ENOMEM;
	}
	l->read = read_fn;
	l->ctx = ctx;
	l->fd = -1;
	l->delim = delim;
	l->max = max_len;
	*out = l;
	return 0;
}

int hs_name_list_new(int fd, char delim, struct hs_name_list **out)
{
	int rc = hs_name_list_new_fn(read_fd, NULL, delim, PATH_MAX - 1, out);

	if (!rc) {
		(*out)->ctx = *out;
		(*out)->fd = fd;
	}
	return rc;
}

void hs_name_list_free(struct hs_name_list *l)
{
	if (l) {
		free(l->buf);
		free(l);
	}
}

/* The name s (n bytes, NUL after it) on line: 1, or why it is refused. */
static int take(struct hs_name_list *l, char *s, size_t n, unsigned line, const char **name,
		size_t *len, unsigned *lineno)
{
	*lineno = line;
	if (n > l->max)
		return -ENAMETOOLONG;
	/* a NUL would cut the name short: most likely a -print0 list read without -0 */
	if (l->delim != '\0' && memchr(s, '\0', n))
		return -EILSEQ;
	*name = s;
	*len = n;
	return 1;
}

int hs_name_list_next(struct hs_name_list *l, const char **name, size_t *len, unsigned *line)
{
	for (;;) {
		char *s = l->buf + l->pos, *p = memchr(s, l->delim, l->end - l->pos);
		size_t pending = l->end - l->pos;
		ssize_t n;

		if (p) {
			size_t k = (size_t)(p - s);
			bool skipped = l->skipping;

			*p = '\0';
			l->pos += k + 1;
			l->done++;
			l->skipping = false;
			if (skipped || !k)
				continue;	/* the end of a line told about, or an empty line */
			return take(l, s, k, l->done, name, len, line);
		}
		if (l->skipping || pending > l->max) {
			bool report = !l->skipping;

			/* no delimiter in sight: what is here is dropped unkept */
			l->pos = l->end = pending = 0;
			s = l->buf;
			l->skipping = !l->eof;	/* at the end, no more of the line comes */
			if (report) {
				*line = l->done + 1;
				return -ENAMETOOLONG;
			}
		}
		if (l->eof) {
			if (!pending)
				return 0;
			/* a last name without its delimiter, as xargs takes it */
			l->buf[l->end] = '\0';
			l->pos = l->end;
			return take(l, s, pending, ++l->done, name, len, line);
		}
		memmove(l->buf, s, pending);
		l->pos = 0;
		l->end = pending;
		n = l->read(l->ctx, l->buf + l->end, l->cap - l->end - 1);
		if (n < 0)
			return (int)n;
		if (n == 0)
			l->eof = true;
		l->end += (size_t)n;
	}
}
