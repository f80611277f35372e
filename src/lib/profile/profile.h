/*
 * profile.h - the profile: one job's working set, as a file.
 *
 * A profile lists the regular files a job read, in the order it first
 * touched them, and for each file the page ranges it read, also in
 * first-access order. It may carry the job's outputs (files it created or
 * truncated: not part of its input working set) and an ordered page-access
 * trace (every access, repeats included) from which `curve` computes a
 * miss-ratio curve. docs/profile.md specifies the text format.
 *
 * Profiles are streamed both ways, so that a profile of a million files
 * costs neither a million allocations nor its own size in heap:
 *
 *   reader:  hs_profile_open() maps the file read-only, checks the header
 *            and the trailer, then hs_profile_next() yields one item at a
 *            time. Everything an item points to lives until the next call.
 *   writer:  hs_profile_writer_open() writes to a temporary file beside the
 *            target; hs_profile_writer_commit() syncs it and renames it over
 *            the target, so a crash never leaves half a profile behind.
 */
#ifndef HOTSET_PROFILE_H
#define HOTSET_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/hotset.h"

#define HS_PROFILE_VERSION 1

/* Limits the parser enforces; a profile beyond them is rejected. */
#define HS_PROFILE_MAX_PATH 65536          /* bytes of one decoded path */
#define HS_PROFILE_MAX_PAGE (UINT64_C(1) << 52)  /* page numbers below this */
#define HS_PROFILE_MAX_ITEMS (UINT64_C(1) << 32) /* files, outputs, trace lines */
#define HS_PROFILE_MAX_BYTES (UINT64_C(1) << 63) /* ranges end below this byte */

/* Page numbers a profile with this page size may name are below this. */
static inline uint64_t hs_profile_page_limit(uint32_t page_size)
{
	uint64_t by_bytes = HS_PROFILE_MAX_BYTES / page_size;

	return by_bytes < HS_PROFILE_MAX_PAGE ? by_bytes : HS_PROFILE_MAX_PAGE;
}

/* An inclusive range of page numbers: pages first..last. */
struct hs_range {
	uint64_t first;
	uint64_t last;
};

/* Number of pages in a range list. */
uint64_t hs_ranges_pages(const struct hs_range *r, size_t n);

/*
 * Which file a profile entry was taken from, so that a later reader can
 * tell whether the file changed since (stale entry).
 */
struct hs_file_id {
	uint64_t dev;		/* st_dev, as makedev(major, minor) */
	uint64_t ino;
	uint64_t size;		/* bytes */
	int64_t mtime_sec;
	uint32_t mtime_nsec;
};

/* How a file was used; several may be set. Letters are the text form. */
enum hs_file_flag {
	HS_FILE_READ = 1 << 0,	 /* 'r' read through read-like syscalls */
	HS_FILE_MAPPED = 1 << 1, /* 'm' pages faulted in through mmap */
	HS_FILE_EXEC = 1 << 2,	 /* 'x' executed, or the interpreter of one */
	HS_FILE_WRITTEN = 1 << 3, /* 'w' the job also wrote to it */
	HS_FILE_DIRECT = 1 << 4, /* 'd' read with O_DIRECT (bypassed cache) */
};

/* One file of the working set. */
struct hs_profile_file {
	const char *path;	/* decoded, NUL-terminated */
	size_t path_len;	/* may contain any byte but NUL */
	struct hs_file_id id;
	unsigned flags;		/* enum hs_file_flag bits */
	const struct hs_range *ranges; /* disjoint, in first-access order */
	size_t nranges;
	uint64_t pages;		/* hs_ranges_pages(ranges, nranges) */
	uint64_t index;		/* position in the file list, from 0 */
};

/* One line of the access trace: file `file` accessed at these ranges. */
struct hs_profile_trace {
	uint64_t file;		/* index into the file list */
	const struct hs_range *ranges;	/* in access order; may repeat */
	size_t nranges;
};

/* Strings are bounded so that a header never needs freeing. */
struct hs_profile_header {
	unsigned version;
	uint32_t page_size;	/* bytes per page that ranges count in */
	int64_t created;	/* seconds since the epoch */
	char source[16];	/* "record" or "snapshot" */
	char backend[16];	/* record backend ("ptrace", "bpf"), or "" */
	char mmap_pages[16];	/* "faulted", "touched", or "" */
	char host[256];
	char kernel[128];
	const char *command;	/* decoded, or NULL; see owner below */
	const char *cwd;	/* decoded, or NULL */
	/* what the recorded run cost, for the memory it needs (hs_rerun_need) */
	bool max_rss_known;
	uint64_t max_rss;	/* max-rss: the peak RSS of its largest process, bytes */
	bool write_bytes_known;
	uint64_t write_bytes;	/* write-bytes: the bytes it wrote for storage */
	/* the memory cgroup the recorded job was charged in, and the limit over it */
	int memcg_version;		/* memory-cgroup: 1 or 2; 0 when not recorded */
	const char *memcg;		/* its name in the hierarchy ("/a/b"), decoded, or NULL */
	bool memcg_limit_known;		/* memory-limit */
	uint64_t memcg_limit;		/* the lowest limit over it; UINT64_MAX: none */
	const char *memcg_limit_holder;	/* the cgroup that sets it, or NULL (none) */
	/* lost-events: accesses the recorder could not see (its pages and
	 * trace lack them) */
	bool lost_events_known;
	uint64_t lost_events;
};

/*
 * Fill h with this machine's facts (version, page size, now, host, kernel);
 * source/backend/command are left empty for the caller to set.
 */
void hs_profile_header_init(struct hs_profile_header *h, const char *source);

/* ---- reading ------------------------------------------------------------ */

enum hs_profile_item_kind {
	HS_ITEM_END = 0,
	HS_ITEM_FILE,
	HS_ITEM_OUTPUT,
	HS_ITEM_TRACE,
};

struct hs_profile_item {
	enum hs_profile_item_kind kind;
	unsigned line;			/* where it was read, from 1 */
	struct hs_profile_file file;	/* FILE; OUTPUT fills path only */
	struct hs_profile_trace trace;	/* TRACE */
};

struct hs_profile_reader;

/*
 * Open the profile at path and check its header and trailer. A FIFO,
 * device or directory is refused without being read. On success *out owns
 * a mapping of the file; release it with hs_profile_close(). On failure
 * returns -errno and, for a malformed profile (-EINVAL), err says where.
 */
int hs_profile_open(const char *path, struct hs_profile_reader **out,
		    struct hs_error *err);

/*
 * hs_profile_open() of the file open at fd (which stays the caller's, and
 * may be closed at once): for a caller that must know whose file the
 * profile it reads is (keep reads a profile's files as its owner).
 */
int hs_profile_open_fd(int fd, struct hs_profile_reader **out, struct hs_error *err);

/*
 * As hs_profile_open(), over what fd (a pipe, say) gives until its end,
 * read into memory first: at most HS_PROFILE_MAX_READ bytes (-EFBIG past
 * that, a profile too big to be read other than from a file).
 */
#define HS_PROFILE_MAX_READ (UINT64_C(1) << 30)
int hs_profile_read(int fd, struct hs_profile_reader **out, struct hs_error *err);

/*
 * As hs_profile_open(), over len bytes at buf, which the caller keeps
 * alive and unchanged until hs_profile_close().
 */
int hs_profile_open_buffer(const void *buf, size_t len,
			   struct hs_profile_reader **out, struct hs_error *err);

/* The header; valid until hs_profile_close(). */
const struct hs_profile_header *hs_profile_header(const struct hs_profile_reader *r);

/* Totals from the trailer: the counts the profile promises. */
struct hs_profile_totals {
	uint64_t files, outputs, trace_lines;
};
const struct hs_profile_totals *hs_profile_totals(const struct hs_profile_reader *r);

/*
 * Read the next item into *item. Returns 1 with an item, 0 at the end
 * (item->kind == HS_ITEM_END), or -EINVAL with err filled when the profile
 * is malformed; after an error, further calls return the same error.
 * Items come in order: files, then outputs, then trace lines. The strings
 * and ranges an item points to stay valid until the next call.
 */
int hs_profile_next(struct hs_profile_reader *r, struct hs_profile_item *item,
		    struct hs_error *err);

/* Start again from the first item. */
void hs_profile_rewind(struct hs_profile_reader *r);

void hs_profile_close(struct hs_profile_reader *r);

/* ---- writing ------------------------------------------------------------ */

struct hs_profile_writer;

/*
 * Start writing a profile to path ("-" for standard output, which cannot be
 * atomic), as hs_atomic_open() writes files (atomic.h: links followed only
 * under its rule, never anything but a regular file replaced, a temporary
 * file beside the target renamed over it). Nothing appears at path until
 * hs_profile_writer_commit(). hs_atomic_check() tells why a path would be
 * refused, before long work.
 */
int hs_profile_writer_open(const char *path, const struct hs_profile_header *h,
			   struct hs_profile_writer **out);

/*
 * Append one file, named by an absolute path; f->index is ignored (files
 * are numbered in order).
 */
int hs_profile_write_file(struct hs_profile_writer *w, const struct hs_profile_file *f);

/* Append one output (an absolute path); call after the last file. */
int hs_profile_write_output(struct hs_profile_writer *w, const char *path, size_t len);

/* Append one trace line; call after the last output. */
int hs_profile_write_trace(struct hs_profile_writer *w, const struct hs_profile_trace *t);

/*
 * Write the trailer, flush, fsync and rename into place. Frees w whatever
 * the outcome; on failure the target is left as it was.
 */
int hs_profile_writer_commit(struct hs_profile_writer *w);

/* Give up: remove the temporary file and free w. */
void hs_profile_writer_abort(struct hs_profile_writer *w);

/*
 * The descriptor w writes to (the temporary file, or standard output), so
 * that a caller walking a tree can tell the profile being written from the
 * files it profiles. It belongs to w.
 */
int hs_profile_writer_fd(const struct hs_profile_writer *w);

/* ---- text helpers shared with the CLI ----------------------------------- */

/* Letters for flags ("rmx"), or "-" for none; buf holds at least 8 bytes. */
const char *hs_file_flags_str(unsigned flags, char buf[8]);

/*
 * An mtime as the decimal the profile writes ("-1.250000000" for -2 s +
 * 750000000 ns): exact, where a double would round the nanoseconds.
 */
#define HS_MTIME_STR_MAX 32
const char *hs_mtime_str(int64_t sec, uint32_t nsec, char buf[HS_MTIME_STR_MAX]);

#endif
