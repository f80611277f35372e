/*
 * fuzz-stat.c - libFuzzer target for the /proc/PID/stat parser (procfs.h).
 *
 * Feeds arbitrary bytes to hs_proc_stat_parse(). A success must have
 * found a ')' and every field up to starttime; the figures it read,
 * written back in the kernel's format after the same name, must read back
 * the same.
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
	char *buf = malloc(size + 1);
	static char text[8192];
	struct hs_proc_stat a, b;

	memcpy(buf, data, size);
	buf[size] = '\0';
	if (hs_proc_stat_parse(buf, &a) == 0) {
		const char *paren = strrchr(buf, ')');
		int n;

		assert(paren && a.state);
		/* fields 3 to 42 (or 22 without blkio), the ones not kept as 0 */
		n = snprintf(text, sizeof(text), "1 (x) %c %d 0 0 0 0 0 0 0 0 0 %llu %llu %llu %llu "
			     "0 0 0 0 %llu", a.state, (int)a.ppid, (unsigned long long)a.utime,
			     (unsigned long long)a.stime, (unsigned long long)a.cutime,
			     (unsigned long long)a.cstime, (unsigned long long)a.starttime);
		if (a.blkio_known && n > 0 && (size_t)n < sizeof(text))
			n += snprintf(text + n, sizeof(text) - (size_t)n,
				      " 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 %llu",
				      (unsigned long long)a.blkio_ticks);
		/* a state of ' ' or a digit reads as something else: only letters go round */
		if (n > 0 && (size_t)n < sizeof(text) && a.state >= 'A' && a.state <= 'Z' &&
		    a.ppid >= 0) {
			assert(hs_proc_stat_parse(text, &b) == 0);
			assert(b.state == a.state && b.ppid == a.ppid && b.utime == a.utime &&
			       b.stime == a.stime && b.cutime == a.cutime && b.cstime == a.cstime &&
			       b.starttime == a.starttime && b.blkio_known == a.blkio_known &&
			       b.blkio_ticks == a.blkio_ticks);
		}
	}
	free(buf);
	return 0;
}
