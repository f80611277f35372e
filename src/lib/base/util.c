/*
 * util.c - small helpers shared by the library: error messages, paths and
 * machine facts that are asked for often and never change while we run.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/hotset.h"

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

/* The capacity that holds need, or 0 if its size in bytes would overflow. */
static size_t grown_cap(size_t cap, size_t need, size_t elem)
{
	size_t n = cap ? cap : 1;

	while (n < need) {
		if (n > SIZE_MAX / 2)
			return 0;
		n *= 2;
	}
	return n > SIZE_MAX / elem ? 0 : n;
}

/*
 * arrayp is a T ** passed as void *: the pointer is read and written with
 * memcpy, not through a void ** (which would be another type than T *).
 */
static int grow(void *arrayp, size_t *cap, size_t need, size_t elem, const void *inline_buf)
{
	void *old, *v;
	size_t n;

	if (need <= *cap)
		return 0;
	if (!(n = grown_cap(*cap, need, elem)))
		return -ENOMEM;
	memcpy(&old, arrayp, sizeof(old));
	if (inline_buf && old == inline_buf) {
		if ((v = malloc(n * elem)))
			memcpy(v, old, *cap * elem);
	} else {
		v = realloc(old, n * elem);
	}
	if (!v)
		return -ENOMEM;
	memcpy(arrayp, &v, sizeof(v));
	*cap = n;
	return 0;
}

int hs_grow(void *arrayp, size_t *cap, size_t need, size_t elem)
{
	return grow(arrayp, cap, need, elem, NULL);
}

int hs_grow_inline(void *arrayp, size_t *cap, size_t need, size_t elem, const void *inline_buf)
{
	return grow(arrayp, cap, need, elem, inline_buf);
}

const char *hs_size_str(uint64_t bytes, char buf[16])
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	double v = (double)bytes;
	int u = 0;

	while (v >= 1024.0 && u < 6) {
		v /= 1024.0;
		u++;
	}
	if (u == 0)
		snprintf(buf, 16, "%llu B", (unsigned long long)bytes);
	else
		snprintf(buf, 16, "%.1f %s", v, units[u]);
	return buf;
}

uint64_t hs_monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int64_t hs_realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
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
