/*
 * fuzz-size.c - libFuzzer target for parse_size(), the parser of sizes
 * given on the command line ("512M", "1.5G", "10%").
 *
 * Feeds arbitrary bytes to parse_size(). It must answer 0 or -1; a plain
 * decimal number of up to 19 digits is its own value, exactly; and a size
 * it accepted, written back in bytes, must be accepted again as the same
 * size.
 */
#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/options.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* a copy, so that reading past its end is caught by ASan */
	char *buf = malloc(size + 1), text[32];
	uint64_t v = 0, again = 0;
	bool digits = size > 0 && size <= 19;	/* below 2^64 */
	int rc;

	memcpy(buf, data, size);
	buf[size] = '\0';
	for (size_t i = 0; i < size; i++)
		digits &= isdigit((unsigned char)buf[i]) != 0;
	rc = parse_size(buf, &v);
	assert(rc == 0 || rc == -1);
	if (digits) {
		assert(rc == 0);
		assert(v == strtoull(buf, NULL, 10));
	}
	if (rc == 0 && !strchr(buf, '%')) {	/* a share of RAM: the machine's to say */
		snprintf(text, sizeof(text), "%llu", (unsigned long long)v);
		assert(parse_size(text, &again) == 0 && again == v);
	}
	free(buf);
	return 0;
}
