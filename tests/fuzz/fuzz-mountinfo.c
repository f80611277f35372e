/*
 * fuzz-mountinfo.c - libFuzzer target for the mountinfo parser (procfs.h).
 *
 * Feeds arbitrary bytes, as one line, to hs_mountinfo_parse(). A success
 * must give strings inside the line, and the fields, escaped again as the
 * kernel escapes them and put back on one line, must parse to the same
 * mount.
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/procfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Append s to out, with space, tab, newline and backslash as octal escapes. */
static char *escape(char *out, const char *s)
{
	for (; *s; s++) {
		if (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\\')
			out += sprintf(out, "\\%03o", (unsigned char)*s);
		else
			*out++ = *s;
	}
	return out;
}

static void inside(const char *s, const char *buf, size_t size)
{
	assert(s >= buf && s + strlen(s) <= buf + size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* a copy, so that reading past its end is caught by ASan */
	char *buf = malloc(size + 1), *line, *o;
	struct hs_mountinfo a, b;

	memcpy(buf, data, size);
	buf[size] = '\0';
	if (hs_mountinfo_parse(buf, &a) == 0) {
		const char *const fields[] = { a.root, a.point, a.options, a.fstype, a.source,
					       a.super_options };

		for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
			inside(fields[i], buf, size);
		assert(a.mnt_id >= 0 && a.parent_id >= 0);
		/* escaping at most quadruples a byte */
		line = malloc(4 * size + 64);
		o = line + sprintf(line, "%d %d %u:%u ", a.mnt_id, a.parent_id, a.major, a.minor);
		o = escape(o, a.root);
		*o++ = ' ';
		o = escape(o, a.point);
		o += sprintf(o, " %s - ", a.options);
		o = escape(o, a.fstype);
		if (*a.source || *a.super_options) {
			*o++ = ' ';
			o = escape(o, a.source);
		}
		if (*a.super_options)
			o += sprintf(o, " %s", a.super_options);
		*o = '\0';
		assert(hs_mountinfo_parse(line, &b) == 0);
		assert(a.mnt_id == b.mnt_id && a.parent_id == b.parent_id);
		assert(a.major == b.major && a.minor == b.minor);
		assert(!strcmp(a.root, b.root) && !strcmp(a.point, b.point));
		assert(!strcmp(a.options, b.options) && !strcmp(a.fstype, b.fstype));
		assert(!strcmp(a.source, b.source) && !strcmp(a.super_options, b.super_options));
		free(line);
	}
	free(buf);
	return 0;
}
