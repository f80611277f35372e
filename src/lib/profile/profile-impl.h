/*
 * profile-impl.h - what the parts of the profile module share, and no one
 * else sees (profile.h is the module's interface).
 *
 *   profile.c         what both directions share: the flags' letters,
 *                     pages of ranges, mtimes as the format writes them
 *   profile-read.c    the reader: opening (a mapping, a stream, a buffer),
 *                     the cursor over a line and its fields, the items
 *   profile-header.c  the reader of the header and of the trailer
 *   profile-write.c   the writer, over an atomic file
 *
 * The reader's state is here because both of its files fill it: the
 * header's reader its header and totals, the items' reader the rest.
 */
#ifndef HOTSET_PROFILE_IMPL_H
#define HOTSET_PROFILE_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"

/* The first line's first word and its space: the format's magic. */
#define MAGIC "hotset-profile "

/* The letters of enum hs_file_flag, bit i the letter i: "rmxwd". */
extern const char hs_profile_flag_letters[];

/*
 * Where a reader or a writer stands: the items come in this order, each
 * section after the one before it (outputs and trace lines may be none).
 */
enum section { SEC_HEADER, SEC_FILES, SEC_OUTPUTS, SEC_TRACE, SEC_END };

struct hs_profile_reader {
	const char *buf;	/* the whole profile */
	size_t len;
	void *map;		/* our mapping of buf, or NULL if borrowed */
	char *copy;		/* buf, if read into memory by us */
	size_t released;	/* map pages before this were given back */
	size_t body;		/* offset of the first item line */
	unsigned body_line;

	struct hs_profile_header header;
	struct hs_profile_totals totals;	/* promised by the trailer */
	char *command, *cwd;	/* decoded header strings */
	char *memcg, *memlimit;	/* memory-cgroup's and memory-limit's cgroups */

	/* iteration state */
	size_t pos;		/* offset of the next line */
	unsigned line;		/* number of the next line */
	enum section sec;
	struct hs_profile_totals seen;
	int failed;		/* sticky error */
	struct hs_error failure;

	/* scratch reused from line to line */
	char *path;
	size_t path_cap;
	struct hs_range *ranges, *sorted;
	size_t ranges_cap, sorted_cap;
};

/* A line being parsed: [p, end) with a cursor. */
struct cursor {
	const char *p, *end;
	const char *line_start;
	unsigned line;
	size_t base;		/* offset of line_start in the buffer */
};

/* ---- the cursor's primitives (profile-read.c) ------------------------------ */

/*
 * Fill err (if not NULL) with a message at c's position (its line, the
 * byte offset of c->p in the whole input); returns -EINVAL.
 */
int pf_fail(struct hs_error *err, const struct cursor *c, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Step over the one space before field what, or fail naming it. */
int pf_expect_space(struct cursor *c, struct hs_error *err, const char *what);

/* Strict unsigned decimal: digits only, no sign, no overflow. */
int pf_parse_u64(struct cursor *c, uint64_t *out, struct hs_error *err, const char *what);

/*
 * Decode the escaped string that runs to the end of the line into
 * r->path (NUL-terminated; its length in *len), or fail naming what.
 */
int pf_parse_string(struct hs_profile_reader *r, struct cursor *c, size_t *len,
		    struct hs_error *err, const char *what);

/* Point c at the line starting at offset pos; false at the end of input. */
bool pf_next_line(const struct hs_profile_reader *r, size_t pos, unsigned line,
		  struct cursor *c);

/*
 * Does the line at c start with keyword kw followed by a space or its
 * end? If so c steps over it.
 */
bool pf_keyword(struct cursor *c, const char *kw);

/* ---- the header and the trailer (profile-header.c) ------------------------- */

/*
 * Parse the header lines, up to the first item: fills r->header (its
 * strings owned by r) and r->body, r->body_line, where the items start.
 * Returns 0, or -EINVAL or -ENOMEM with err filled.
 */
int pf_parse_header(struct hs_profile_reader *r, struct hs_error *err);

/*
 * Check that the last line is "end FILES OUTPUTS TRACE" and a newline,
 * and fill r->totals from it: a profile cut short is refused before its
 * first item is used. Returns 0 or -EINVAL with err filled.
 */
int pf_parse_trailer(struct hs_profile_reader *r, struct hs_error *err);

#endif
