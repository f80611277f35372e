/*
 * profile.c - the profile text format, and what its reader and writer
 * share (profile-impl.h names the parts of the module).
 *
 * The format (docs/profile.md) is line-oriented so that it can be read
 * with a pager, diffed and streamed, yet parses at hundreds of megabytes a
 * second: every line starts with a keyword, fields are separated by single
 * spaces, and the only free-form field, a path, comes last and is escaped
 * so that it holds no newline:
 *
 *   hotset-profile 1
 *   page-size 4096
 *   source record
 *   f 254:0 1048602 23870 1700000000.000000000 r 0-5 /usr/include/stdio.h
 *   o /tmp/out.o
 *   t 0 0-5
 *   end 1 1 1
 *
 * The trailer repeats the counts, so a truncated profile is detected before
 * its first item is used (profile-header.c). The reader parses in place
 * from a read-only mapping; only the decoded path and the range list of
 * the current line are copied, into buffers the reader reuses
 * (profile-read.c). The writer streams through a buffer into an atomic
 * file (profile-write.c).
 */
#include <inttypes.h>
#include <stdio.h>

#include "profile/profile-impl.h"

uint64_t hs_ranges_pages(const struct hs_range *r, size_t n)
{
	uint64_t pages = 0;

	for (size_t i = 0; i < n; i++)
		pages += r[i].last - r[i].first + 1;
	return pages;
}

/* bit i of enum hs_file_flag; the reader takes exactly these letters back */
const char hs_profile_flag_letters[] = "rmxwd";

const char *hs_file_flags_str(unsigned flags, char buf[8])
{
	size_t n = 0;

	for (size_t i = 0; hs_profile_flag_letters[i]; i++)
		if (flags & (1u << i))
			buf[n++] = hs_profile_flag_letters[i];
	if (!n)
		buf[n++] = '-';
	buf[n] = '\0';
	return buf;
}

/*
 * The mtime a profile writes, as a decimal: a negative time (before the
 * epoch) is a struct timespec of seconds below and nanoseconds above it,
 * which the decimal turns around.
 */
const char *hs_mtime_str(int64_t sec, uint32_t nsec, char buf[HS_MTIME_STR_MAX])
{
	uint64_t whole = sec < 0 ? (uint64_t)-(sec + 1) + 1 : (uint64_t)sec;

	nsec %= 1000000000u;
	if (sec < 0 && nsec) {	/* -2 s + 750000000 ns is -1.250000000 */
		whole--;
		nsec = 1000000000u - nsec;
	}
	snprintf(buf, HS_MTIME_STR_MAX, "%s%" PRIu64 ".%09u", sec < 0 ? "-" : "", whole,
		 (unsigned)nsec);
	return buf;
}
