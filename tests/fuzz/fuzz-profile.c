/*
 * fuzz-profile.c - libFuzzer target for the profile parser.
 *
 * Feeds arbitrary bytes to hs_profile_open_buffer() and reads every item
 * twice, holding the parser to every promise tests/profile-check.h lists
 * (ranges within limits and disjoint within a file, paths absolute, counts
 * equal to the trailer's, errors on the line they name, and so on): a
 * broken promise aborts, as a crash does. What it finds is kept in
 * tests/fuzz/corpus/profile and replayed by the unit tests.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile-check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* a copy, so that reading past the end is caught by ASan */
	char *buf = malloc(size ? size : 1);
	char msg[512];

	memcpy(buf, data, size);
	if (profile_check_buffer(buf, size, msg, sizeof(msg)) < 0) {
		fprintf(stderr, "fuzz-profile: %s\n", msg);
		abort();
	}
	free(buf);
	return 0;
}
