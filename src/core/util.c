/*
 * util.c - small helpers shared by the library: error messages, paths and
 * machine facts that are asked for often and never change while we run.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
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

uint64_t hs_monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint32_t hs_page_size(void)
{
	static uint32_t page_size;

	if (!page_size)
		page_size = (uint32_t)sysconf(_SC_PAGESIZE);
	return page_size;
}

void hs_tidy_path(char *path, bool dotdot)
{
	const size_t len = strlen(path);
	char *out = path;
	const char *in = path;
	bool dir;

	if (!len)
		return;		/* names nothing; left so for the open to say so */
	dir = path[len - 1] == '/' || (path[len - 1] == '.' && (len == 1 || path[len - 2] == '/'));
	if (*in == '/')
		*out++ = *in++;
	while (*in) {
		const char *end;

		while (*in == '/')
			in++;
		if (!*in)
			break;
		end = strchrnul(in, '/');
		if (end - in == 1 && in[0] == '.') {
			in = end;
			continue;
		}
		if (dotdot && end - in == 2 && in[0] == '.' && in[1] == '.' && *path == '/') {
			while (out > path + 1 && *--out != '/')	/* drop the last name */
				;
			in = end;
			continue;
		}
		if (out > path && out[-1] != '/')
			*out++ = '/';
		memmove(out, in, (size_t)(end - in));
		out += end - in;
		in = end;
	}
	if (out == path)
		*out++ = '.';
	else if (dir && out[-1] != '/')
		*out++ = '/';	/* there was room: the input had at least "/" more */
	*out = '\0';
}
