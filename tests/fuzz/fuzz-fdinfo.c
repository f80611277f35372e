/*
 * fuzz-fdinfo.c - libFuzzer target for the fdinfo parser (procfs.h).
 *
 * Feeds arbitrary bytes to hs_fdinfo_parse() and checks that what it
 * read, written back as fdinfo text, reads back the same: every field is
 * taken from its own line, whatever the other lines hold.
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/procfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* a copy, so that reading past its end is caught by ASan */
	char *buf = malloc(size + 1), text[256];
	struct hs_fdinfo a, b;

	memcpy(buf, data, size);
	buf[size] = '\0';
	hs_fdinfo_parse(buf, &a);
	snprintf(text, sizeof(text), "pos:\t%lld\nflags:\t0%o\nmnt_id:\t%d\nino:\t%llu\n",
		 (long long)a.pos, a.flags, a.mnt_id, (unsigned long long)a.ino);
	hs_fdinfo_parse(text, &b);
	assert(a.pos == b.pos && a.flags == b.flags && a.mnt_id == b.mnt_id && a.ino == b.ino);
	free(buf);
	return 0;
}
