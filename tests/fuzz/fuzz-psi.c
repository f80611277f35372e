/*
 * fuzz-psi.c - libFuzzer target for the pressure stall parser (psi.h).
 *
 * Feeds arbitrary bytes to hs_psi_parse(). A success must have a "some"
 * total; what it read, written back in the kernel's format, must read
 * back the same totals, and the same averages to the precision printed.
 */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/psi.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int print_line(char *out, size_t cap, const char *name, const struct hs_psi_line *l)
{
	return snprintf(out, cap, "%s avg10=%.2f avg60=%.2f avg300=%.2f total=%llu\n", name,
			l->avg10, l->avg60, l->avg300, (unsigned long long)l->total);
}

static void same_avg(double a, double b)
{
	assert(a >= 0 && b >= 0);	/* no sign is ever read */
	if (isfinite(a) && a < 1e12)
		assert(fabs(a - b) <= 0.0051);
}

static void same_line(const struct hs_psi_line *a, const struct hs_psi_line *b)
{
	assert(a->known == b->known && a->total == b->total);
	same_avg(a->avg10, b->avg10);
	same_avg(a->avg60, b->avg60);
	same_avg(a->avg300, b->avg300);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* a copy, so that reading past its end is caught by ASan */
	char *buf = malloc(size + 1);
	static char text[4096];
	struct hs_psi a, b;

	memcpy(buf, data, size);
	buf[size] = '\0';
	if (hs_psi_parse(buf, &a) == 0) {
		int n;

		assert(a.some.known);
		assert(a.full.known || (a.full.total == 0 && a.full.avg10 == 0));
		n = print_line(text, sizeof(text), "some", &a.some);
		if (a.full.known && n > 0 && (size_t)n < sizeof(text))
			n += print_line(text + n, sizeof(text) - (size_t)n, "full", &a.full);
		if (n > 0 && (size_t)n < sizeof(text)) {	/* huge averages do not fit: skipped */
			assert(hs_psi_parse(text, &b) == 0);
			same_line(&a.some, &b.some);
			same_line(&a.full, &b.full);
		}
	}
	free(buf);
	return 0;
}
