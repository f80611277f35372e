/*
 * warm.h - bringing files, or a profile's pages, into the page cache.
 *
 * A warm session takes the same stream of targets as every other command
 * (targets.h) and reads into the cache what is missing from it:
 *
 *   plan     for each target, in the order given: the pages it asks for,
 *            clipped to the file's size, without holes; the residency
 *            module (cachestat(2), or mincore(2) on kernels without it)
 *            says how much of each piece is resident already, and pieces
 *            that are wholly resident cost nothing more. A budget, if any, is
 *            spent here, in target order (files in order, ranges in order).
 *   order    on a rotational disk, the pieces of a batch of files are
 *            sorted by their physical address (FIEMAP); elsewhere they keep
 *            the given order.
 *   read     I/O threads issue the reads, in two lanes with a bounded
 *            amount in flight each: small files (an operation each, read
 *            synchronously by a pool of threads) and large ones (bandwidth,
 *            chunked POSIX_FADV_WILLNEED and a later wait for completion).
 *            Other methods can be asked for: see enum hs_warm_method.
 *   check    a file that shrank, vanished or was replaced meanwhile is
 *            reported to the warn callback and left alone (its pages past
 *            the new end are not counted as missing); nothing is ever
 *            mapped and touched, so truncation cannot raise SIGBUS.
 *
 * Memory stays bounded whatever the number of files: files are open only
 * while their reads are in flight (a bounded number, sized from the
 * descriptors RLIMIT_NOFILE leaves free at hs_warm_new(); when a dup still
 * fails with EMFILE, hs_warm_add() waits for a file to finish), and a
 * physical sort works on bounded batches.
 *
 * Typical use: hs_warm_new(), then hs_warm_add() from an hs_target_fn,
 * then hs_warm_finish() (waits for every read to complete) and
 * hs_warm_free().
 */
#ifndef HOTSET_WARM_H
#define HOTSET_WARM_H

#include <stdbool.h>
#include <stdint.h>

#include "cache/targets.h"

/* How reads are issued. AUTO picks what measured fastest (see warm.c). */
enum hs_warm_method {
	HS_WARM_AUTO = 0,	/* PREAD for small files, WILLNEED for large ones */
	HS_WARM_WILLNEED,	/* chunked POSIX_FADV_WILLNEED, then wait for completion */
	HS_WARM_PREAD,		/* synchronous reads, a thread per read in flight
				   (sendfile(2) into /dev/null: no copy) */
	HS_WARM_URING,		/* io_uring reads (only if built with liburing) */
};

/* In which order reads are issued. */
enum hs_warm_order {
	HS_ORDER_AUTO = 0,	/* PHYSICAL on rotational disks, else GIVEN */
	HS_ORDER_GIVEN,		/* targets in order, ranges in order */
	HS_ORDER_PHYSICAL,	/* by physical address, in batches of files */
};

/* Where a session stands, for a progress display. */
struct hs_warm_progress {
	uint64_t files;		/* targets seen */
	uint64_t planned_bytes;	/* bytes to read, planned so far */
	uint64_t done_bytes;	/* of those, read (or found done) */
};

/*
 * A file skipped, or partly skipped, with a reason (errnum 0 when no errno
 * applies). May be called from several threads at once.
 */
typedef void (*hs_warm_warn_fn)(void *ctx, const char *path, int errnum, const char *what);

/* Called at most about ten times a second, from one thread at a time. */
typedef void (*hs_warm_progress_fn)(void *ctx, const struct hs_warm_progress *p);

/*
 * Called by an I/O thread just before it issues the reads of one piece
 * (byte offset off, length len; phys is the physical byte address, or
 * UINT64_MAX when unknown). For tests and tracing; may be NULL.
 */
typedef void (*hs_warm_trace_fn)(void *ctx, const char *path, uint64_t off, uint64_t len,
				 uint64_t phys);

/* What became of one file, for a row per file (hotset warm -v). */
struct hs_warm_file {
	const char *path;
	size_t path_len;
	uint64_t index;			/* the target's index (struct hs_target) */
	uint64_t pages;			/* targeted: within the file, holes excluded */
	uint64_t hole_pages;		/* targeted pages that are holes */
	uint64_t requested_pages;	/* in the pieces read */
	bool known_before;		/* residency was told when planned */
	uint64_t resident_pages;	/* targeted pages resident before (known_before) */
	/*
	 * What the reads left could be counted: not when residency was
	 * unknown from the start, nor for a file deleted or replaced meanwhile.
	 */
	bool known_after;
	uint64_t read_pages;		/* pages that became resident (known_after) */
	uint64_t not_resident_pages;	/* requested pages still missing (known_after) */
};

/*
 * Called once a file's reads have all completed (at once for a file with
 * nothing to read); not for a file skipped before any read. May be called
 * from several threads at once.
 */
typedef void (*hs_warm_file_fn)(void *ctx, const struct hs_warm_file *f);

struct hs_warm_opts {
	enum hs_warm_method method;
	enum hs_warm_order order;
	unsigned threads;	/* I/O threads per lane; 0 = the method's default */
	unsigned depth;		/* small files: reads in flight (per thread, but for
				 * PREAD, whose threads are the reads); 0 = 32 */
	uint64_t inflight;	/* large files: bytes in flight per thread; 0 = 4 MiB,
				 * at least 512 KiB */
	uint64_t chunk;		/* bytes per request at most; 0 = the device's readahead
				 * limit, and at most half of inflight */
	uint64_t budget;	/* stop once this many bytes would be newly read; 0 = none */
	hs_warm_warn_fn warn;
	hs_warm_progress_fn progress;
	hs_warm_trace_fn trace;
	hs_warm_file_fn file;	/* may be NULL */
	void *ctx;		/* passed to warn, progress, trace and file */
};

/* The outcome of a session, filled by hs_warm_finish(). */
struct hs_warm_stats {
	uint64_t files;			/* targets examined */
	uint64_t pages;			/* pages targeted: within the files, holes excluded */
	uint64_t hole_pages;		/* pages targeted that are holes (never read) */
	uint64_t resident_pages;	/* targeted pages resident before (known files) */
	uint64_t requested_pages;	/* pages in the pieces read (some may have been resident) */
	uint64_t read_pages;		/* pages that became resident (known files) */
	uint64_t not_resident_pages;	/* requested pages still missing at the end (known files) */
	uint64_t unknown_files;		/* residency unknown (no write permission): read blind */
	uint64_t unknown_pages;
	uint64_t skipped_files;		/* files reported to warn */
	uint64_t requests;		/* read requests issued (syscalls or SQEs) */
	uint64_t bytes_read_disk;	/* see disk_source */
	const char *disk_source;	/* "proc-io" (this process's read_bytes, which
					 * includes directory and inode reads) or
					 * "residency" (read_pages, when /proc/self/io
					 * is missing) */
	double seconds;			/* from hs_warm_new() to the last completion */
	bool budget_reached;
	const char *stop_path;		/* where the budget stopped us (owned by the session) */
	uint64_t stop_page;		/* first page of stop_path not warmed (nor
					 * resident before) */
	/* what was used */
	enum hs_warm_method method;	/* asked for */
	enum hs_warm_method small_method, bulk_method;	/* used for small and large pieces */
	enum hs_warm_order order;
	unsigned threads;		/* in all */
	unsigned depth;
	uint64_t inflight;
	uint64_t chunk;			/* largest request, bytes */
};

struct hs_warm;

/*
 * Start a session and its I/O threads. Returns 0, -EINVAL (a method not
 * built in, or bad options), -ENOMEM, or -errno from pthread_create.
 */
int hs_warm_new(const struct hs_warm_opts *o, struct hs_warm **out);

/* hs_warm_add() returns this when the budget is spent: stop the walk. */
#define HS_WARM_STOP 1

/*
 * Plan the target t and queue its reads; t->fd is duplicated, so the caller
 * may close it on return. May block while too many reads are in flight.
 * Thread-safe, but the budget follows call order only when calls are made
 * from one thread. Returns 0, HS_WARM_STOP once the budget is spent (t may
 * have been warmed in part), or -ENOMEM.
 */
int hs_warm_add(struct hs_warm *w, const struct hs_target *t);

/*
 * Wait until every queued read has completed, stop the threads and fill
 * *st. Call once; hs_warm_add() must not be called afterwards. Returns 0.
 */
int hs_warm_finish(struct hs_warm *w, struct hs_warm_stats *st);

/* Release the session (finishing it first if that was not done). */
void hs_warm_free(struct hs_warm *w);

/* The names of methods and orders, as --method and --order take them. */
const char *hs_warm_method_name(enum hs_warm_method m);
const char *hs_warm_order_name(enum hs_warm_order o);

/*
 * The method or order of that name (hs_warm_method_name()'s, and "uring"
 * for io_uring), or -EINVAL for another word.
 */
int hs_warm_method_of(const char *name);
int hs_warm_order_of(const char *name);

/* Is io_uring built in (HAVE_URING) and allowed by the kernel? */
bool hs_warm_have_uring(void);

/*
 * Each file in flight holds a descriptor: raise this process's soft
 * RLIMIT_NOFILE to 65536, or to the hard limit if lower, before
 * hs_warm_new() sizes its sessions from it. For a process that warms
 * (warm, run's warmer), not for a library caller with other plans.
 */
void hs_warm_raise_nofile(void);

#endif
