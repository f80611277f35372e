/*
 * util.c - small helpers shared by the library: error messages and
 * machine facts that are asked for often and never change while we run.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "hotset/hotset.h"

int hs_error_set(struct hs_error *err, int errnum, const char *fmt, ...)
{
	if (err) {
		va_list ap;

		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
	}
	return -errnum;
}

uint32_t hs_page_size(void)
{
	static uint32_t page_size;

	if (!page_size)
		page_size = (uint32_t)sysconf(_SC_PAGESIZE);
	return page_size;
}
