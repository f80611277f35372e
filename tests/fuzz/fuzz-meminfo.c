/*
 * fuzz-meminfo.c - libFuzzer target for the /proc/meminfo parser
 * (memory.h), which doctor reads on any machine.
 *
 * Feeds arbitrary text to hs_meminfo_parse(). A success must have read
 * the three fields; the same text read again gives the same figures.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/memory.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hs_meminfo a, b;
	char *text = malloc(size + 1);

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';	/* the reader hands over a string */
	if (hs_meminfo_parse(text, &a) == 0) {
		assert(hs_meminfo_parse(text, &b) == 0);
		assert(a.total == b.total && a.available == b.available && a.cached == b.cached);
	}
	free(text);
	return 0;
}
