/*
 * fuzz-names.c - libFuzzer target for the reader of --files-from lists
 * (hs_name_list_next in targets.h).
 *
 * The first byte picks the delimiter ('\n' or NUL) and the longest name,
 * the second the sizes of the reads the list is given in; the rest is the
 * list. What the reader tells, name by name, must be what a plain split
 * of the whole input on the delimiter gives: every non-empty line in
 * order, with its line number, refused as too long past the limit, or
 * for a NUL in a newline-ended name, else handed out byte for byte.
 */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "cache/targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct feed {
	const char *p;
	size_t left;
	uint32_t rng;
};

/* Reads of 1 to 97 bytes, as a pipe may give them. */
static ssize_t feed_read(void *ctx, void *buf, size_t len)
{
	struct feed *f = ctx;
	size_t n;

	f->rng = f->rng * 1103515245u + 12345u;
	n = 1 + (f->rng >> 16) % 97;
	if (n > len)
		n = len;
	if (n > f->left)
		n = f->left;
	memcpy(buf, f->p, n);
	f->p += n;
	f->left -= n;
	return (ssize_t)n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hs_name_list *l;
	struct feed f;
	char *copy, delim;
	size_t max, at = 0;
	unsigned line = 0;
	int made;

	if (size < 2)
		return 0;
	delim = data[0] & 1 ? '\0' : '\n';
	max = (data[0] >> 1) == 127 ? 4095 : 1 + (data[0] >> 1) % 64;
	/* a copy, so that reading past its end is caught by ASan */
	copy = malloc(size - 2 ? size - 2 : 1);
	memcpy(copy, data + 2, size - 2);
	f = (struct feed){ copy, size - 2, data[1] };
	made = hs_name_list_new_fn(feed_read, &f, delim, max, &l);
	assert(made == 0);	/* out of the assert: it must run under NDEBUG too */
	(void)made;
	for (;;) {
		const char *name = NULL;
		size_t len = 0, n;
		unsigned got_line = 0;
		int rc = hs_name_list_next(l, &name, &len, &got_line);
		const char *s, *end;

		/* the next non-empty line of the plain split */
		do {
			if (at >= size - 2) {
				s = NULL;
				break;
			}
			s = copy + at;
			end = memchr(s, delim, size - 2 - at);
			n = end ? (size_t)(end - s) : size - 2 - at;
			at += n + (end != NULL);
			line++;
		} while (!n);
		if (!s) {
			assert(rc == 0);
			break;
		}
		assert(got_line == line);
		if (n > max) {
			assert(rc == -ENAMETOOLONG);
		} else if (delim == '\n' && memchr(s, '\0', n)) {
			assert(rc == -EILSEQ);
		} else {
			assert(rc == 1 && len == n && !memcmp(name, s, n) && name[n] == '\0');
		}
	}
	assert(hs_name_list_next(l, &(const char *){ NULL }, &(size_t){ 0 }, &(unsigned){ 0 }) == 0);
	hs_name_list_free(l);
	free(copy);
	return 0;
}
