/*
 * hotset.h - conventions shared by the whole hotset library.
 *
 * The library finds, measures and keeps a job's working set in the page
 * cache. It never prints and never exits: every function that can fail
 * returns 0 (or a count) on success and a negative errno value on failure,
 * and leaves its output parameters untouched on failure unless its comment
 * says otherwise. Where an errno alone would not tell the user what went
 * wrong (a malformed profile, say), the function also fills a caller-owned
 * struct hs_error with a sentence and a position.
 *
 * Ownership rule, stated once: whoever calls a function named *_open,
 * *_new, *_load or *_init owns what it returns and releases it with the
 * matching *_close, *_free or *_release. Strings and arrays reached through
 * a returned structure belong to that structure unless documented otherwise.
 */
#ifndef HOTSET_HOTSET_H
#define HOTSET_HOTSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HOTSET_VERSION "0.1.0"

/*
 * What went wrong, in words, for errors that deserve more than an errno.
 * line is 1-based (0 when not applicable); offset is the byte offset in the
 * input where the problem starts.
 */
struct hs_error {
	unsigned line;
	size_t offset;
	char msg[256];
};

/* Fill err (if not NULL) with a printf-style message; returns -errnum. */
int hs_error_set(struct hs_error *err, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Make room for need elements of elem bytes in a malloc'd array: arrayp
 * points to the array's pointer (a T **, NULL for no array yet), *cap is
 * its capacity in elements. When need > *cap the array is reallocated to
 * the first of cap, 2 cap, 4 cap... (1, 2, 4... for an empty array) that
 * holds need, and *cap updated; elements past the old capacity are
 * uninitialised. Returns 0, or -ENOMEM (out of memory, or a size that
 * would overflow) with the array and *cap untouched. The one growth rule
 * of the library: amortised O(1) appends, never an overflowing size.
 */
int hs_grow(void *arrayp, size_t *cap, size_t need, size_t elem);

/*
 * hs_grow() for an array that starts in storage of the caller's (a small
 * array on the stack or inside a struct, *cap elements long): while the
 * array is still there, the first growth moves it to a malloc'd copy.
 * The caller frees the array only once it is no longer inline.
 */
int hs_grow_inline(void *arrayp, size_t *cap, size_t need, size_t elem, const void *inline_buf);

/* Bytes per page on this machine (sysconf(_SC_PAGESIZE), cached). */
uint32_t hs_page_size(void);

/*
 * Collapse "//", "/./" and a leading "./" in path, in place: the same file
 * under the name a person would write ("." when nothing is left). A
 * trailing slash (or "/."), which asks for a directory, is kept. ".." is
 * kept too, since after a symlink it does not undo the step before it,
 * unless dotdot is set and path is absolute: then it drops the name
 * before it, as a shell's cd does.
 */
void hs_tidy_path(char *path, bool dotdot);

/*
 * A size for people, in powers of 1024: "512 B", "12.3 MiB"; buf holds at
 * least 16 bytes. Returns buf. The one such format, of the library's
 * sentences and the commands' reports (human_size()).
 */
const char *hs_size_str(uint64_t bytes, char buf[16]);

/*
 * Nanoseconds on CLOCK_MONOTONIC: for durations and deadlines, never for
 * dates. The one clock of the library and of the commands.
 */
uint64_t hs_monotonic_ns(void);

/* The same clock in seconds. */
static inline double hs_monotonic_seconds(void)
{
	return (double)hs_monotonic_ns() / 1e9;
}

/*
 * Nanoseconds since the epoch on CLOCK_REALTIME: for dates (when a keeper
 * started, when a job ran: times that other processes and other machines
 * compare), never for durations, since the clock may be set back. The one
 * wall clock of the library and of the commands.
 */
int64_t hs_realtime_ns(void);

#endif
