/*
 * warm-internal.h - what the parts of a warm session share (private to
 * src/lib/cache/warm*.c; the interface is warm.h).
 *
 * A session is four files, one a stage of warm.h's model:
 *
 *   warm.c        the session: its life, the files in flight (struct job)
 *                 and the queue of pieces between the planner and the I/O
 *                 threads; hs_warm_add() drives the other three
 *   warm-plan.c   plan: a target's pieces, their residency, the budget
 *   warm-order.c  order: the devices under the files, the physical sort
 *                 (FIEMAP) of a batch of files
 *   warm-issue.c  issue: the I/O threads of each lane (a pool of
 *                 synchronous reads, chunked WILLNEED, io_uring)
 *
 * Locking, stated once: w->lock guards the session's fields below it in
 * struct hs_warm and the lanes' queues; functions named *_locked are called
 * with it held. A job's fields are its planner's until it is queued, then
 * read-only but for refs, warned and unsure (atomics).
 */
#ifndef HOTSET_WARM_INTERNAL_H
#define HOTSET_WARM_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cache/warm.h"

#define DEFAULT_CHUNK	(128u << 10)	/* when the device's limits are unknown */
#define MIN_CHUNK	(64u << 10)
#define MAX_CHUNK	(16u << 20)
#define PREAD_BUF	(1u << 20)	/* scratch buffer of a pread thread (bulk) */
#define SMALL_BUF	(128u << 10)	/* scratch buffer of a small-lane thread */
#define SMALL_WAIT	(64u << 10)	/* pieces up to this are waited for with pread */
#define QUEUE_ITEMS	4096		/* pieces queued for the I/O threads */
#define SMALL_PIECE	(64u << 10)	/* pieces up to this go to the small lane */
#define DEFAULT_DEPTH	32		/* small lane: pieces in flight (per thread but pread's) */
#define DEFAULT_INFLIGHT (4u << 20)	/* bulk lane: bytes in flight per thread */
#define BATCH_ITEMS	65536		/* physical order: pieces sorted at once */
#define BATCH_EARLY	256		/* files in a batch worth flushing early */
#define FIEMAP_EXTENTS	64
#define MAX_DEVICES	16
#define URING_BUF	(256u << 10)

/* What the block layer says of a device (warm-order.c). */
struct device {
	dev_t dev;
	bool rotational;
	uint64_t chunk;		/* bytes one WILLNEED call reads in full */
};

/*
 * One file with reads in flight. refs counts its pieces not yet done, plus
 * one held by the planner while it queues them; the last to drop it
 * finishes the file (job_finish).
 */
struct job {
	int fd;
	unsigned refs;
	bool known;		/* residency readable (write permission) */
	bool warned;		/* warn was called for this file */
	bool unsure;		/* a piece was not read to its end: count what is resident */
	uint64_t size;		/* bytes, when planned */
	uint64_t pages;		/* pages in the pieces */
	uint64_t before;	/* of those, resident when planned */
	/* for the file callback: the whole target, as planned */
	uint64_t target_pages, holes, resident;
	uint64_t index;			/* the target's */
	size_t path_len;
	size_t npieces;
	struct hs_range *pieces;	/* in pages; trailing storage */
	char *path;			/* trailing storage */
};

/* One request's worth of a file: bytes [off, off + len). */
struct item {
	struct job *job;
	uint64_t off, len;
	uint64_t phys;		/* physical address, UINT64_MAX if unknown */
	uint64_t seq;		/* keeps given order among equal addresses */
};

/*
 * Pieces wait in one of two lanes, each with its own threads: small files,
 * which cost the device an operation each, and the bulk of large ones,
 * which cost bandwidth. Each lane keeps a bounded amount in flight, so that
 * neither buries the other (or the walk's own metadata reads) under a deep
 * queue: a throttled device then serves both at once.
 */
enum { LANE_SMALL, LANE_BULK, NLANES };

struct lane {
	enum hs_warm_method method;
	struct item *q;		/* circular queue of pieces */
	size_t qhead, qlen, qcap;
	pthread_cond_t work;	/* pieces queued, or closing */
	unsigned threads;
	unsigned depth;		/* pieces in flight per thread */
	uint64_t inflight;	/* bytes in flight per thread */
};

struct worker {
	struct hs_warm *w;
	struct lane *lane;
	pthread_t tid;
	bool started;
	char *buf;		/* scratch for reads */
	size_t buf_size;
	unsigned char *vec;	/* mincore vector, one byte per page of a chunk */
	/* WILLNEED: pieces issued and not yet waited for, oldest first */
	struct item *pend;	/* lane->depth of them */
	size_t phead, plen;
	uint64_t pend_bytes;
};

struct hs_warm {
	struct hs_warm_opts o;
	enum hs_warm_method method;
	unsigned nworkers;
	struct worker *workers;
	size_t max_jobs;	/* files open at once */
	uint64_t bulk_chunk;	/* largest request: half a bulk thread's bytes in flight */
	double t0;
	uint64_t io0;
	bool have_io;
	int sink;		/* /dev/null, for read_once; -1 if it cannot be opened */

	pthread_mutex_t lock;	/* guards everything below */
	pthread_cond_t room;	/* queue space, or a file done */
	struct lane lanes[NLANES];
	size_t qlen;		/* pieces queued in all lanes */
	size_t jobs_live;
	uint64_t jobs_ended;	/* files finished or given up: a descriptor may be free */
	size_t fd_waiters;	/* planners waiting for a descriptor */
	unsigned workers_started;
	bool closing, finished, stopped;
	uint64_t seq;
	struct item *batch;	/* physical order: pieces waiting to be sorted */
	size_t nbatch, batch_cap, batch_jobs;
	double batch_started;
	struct device devs[MAX_DEVICES];
	size_t ndevs;
	uint64_t budget_used;
	uint64_t planned_bytes;
	struct hs_warm_stats st;
	char *stop_path;

	uint64_t done_bytes;	/* atomic */
	uint64_t requests;	/* atomic */
	pthread_mutex_t progress_lock;
	double progress_last;
};

/* A piece of a target in pages, and how much of it is resident. */
struct piece {
	uint64_t first, last;
	uint64_t cached;
};

/* What one target comes to, built by the caller's thread without locks. */
struct plan {
	const struct hs_target *t;
	bool in_order;		/* keep the pieces in the target's order (a budget) */
	bool known;		/* residency was told for every piece */
	uint64_t pages, holes, resident, past_eof;
	struct piece *pieces;
	size_t npieces, cap;
	struct piece inline_pieces[4];
};

/* A run of a file at a known physical address, for the physical sort. */
struct extent {
	uint64_t off, len, phys;
};

struct extents {
	struct extent *v;
	size_t n, cap;
	bool holes;		/* some of the pieces are not backed by an extent */
};

/* ---- warm.c: files in flight, the queue --------------------------------- */

/* Warn about j's file once, however many of its pieces fail; counts it skipped. */
void warm_job_warn(struct hs_warm *w, struct job *j, int errnum, const char *what);

/*
 * A piece is done; complete says it was read (or waited for) to its end.
 * Drops the piece's reference to its job, which may finish the file.
 */
void warm_item_done(struct hs_warm *w, const struct item *it, bool complete);

/* Tell the trace callback, if any, that a piece is being issued. */
void warm_trace(struct hs_warm *w, const struct item *it);

/* Append a piece to lane l (w->lock held), growing its ring; 0 or -ENOMEM. */
int warm_queue_push_locked(struct hs_warm *w, struct lane *l, const struct item *it);

/*
 * Take lane l's next piece into *it. With wait, sleep until there is one;
 * returns false when there is none (with wait: none will ever come).
 */
bool warm_queue_pop(struct hs_warm *w, struct lane *l, struct item *it, bool wait);

/* The lane a piece goes to, by its length. */
struct lane *warm_lane_for(struct hs_warm *w, const struct item *it);

/* ---- warm-plan.c ---------------------------------------------------------- */

/*
 * Resident pages in pages [first, last] of fd, pages at or past npages
 * left out; -EPERM when residency cannot be known, another -errno on
 * failure.
 */
int64_t warm_cached_pages(int fd, uint64_t first, uint64_t last, uint64_t npages);

/*
 * Plan p->t into p's pieces (p->t and p->in_order set by the caller):
 * clipped to the file, holes left out, wholly resident pieces dropped.
 * p->pieces is p->inline_pieces or malloc'd: the caller frees it when it
 * is not. Returns 0 or -ENOMEM.
 */
int warm_plan_target(struct plan *p);

/*
 * Spend the budget on p's pieces in order, w->lock held. Cuts the piece
 * where the budget runs out, drops those after it, and records where the
 * session stopped. Returns true when the budget is spent.
 */
bool warm_spend_budget(struct hs_warm *w, struct plan *p);

/* ---- warm-order.c --------------------------------------------------------- */

/* The device dev, probed the first time it is asked for (w->lock held). */
const struct device *warm_device_of(struct hs_warm *w, dev_t dev);

/* Sort the batch by physical address and queue it, w->lock held; 0 or -ENOMEM. */
int warm_flush_batch_locked(struct hs_warm *w);

/*
 * Append to x where bytes [off, end) of fd lie on the disk: an extent per
 * run, holes left out (x->holes set); without FIEMAP, the whole piece at
 * an unknown address. Returns 0 or -ENOMEM.
 */
int warm_map_piece(int fd, uint64_t off, uint64_t end, struct extents *x);

/* ---- warm-issue.c: the I/O threads' bodies (arg: their struct worker) ----- */

void *warm_pread_main(void *arg);
void *warm_willneed_main(void *arg);
#ifdef HAVE_URING
void *warm_uring_main(void *arg);

/* Reads in flight for an io_uring thread of lane l (its buffer holds as many). */
unsigned warm_uring_depth(const struct lane *l);
#endif

#endif
