/*
 * warm-issue.c - the I/O threads of a warm session (the read stage of
 * warm.h's model): each takes pieces from its lane's queue and reads them
 * into the cache, then hands them back done (warm_item_done).
 *
 * Requests wait in one of two lanes, each drained by threads of its own:
 *
 *   small  pieces of at most 64 KiB, a file's worth each: they cost the
 *          device an operation apiece. By default a pool of `depth`
 *          threads, each doing one synchronous read: one syscall per
 *          file, completion included (sendfile(2) into /dev/null, so that
 *          nothing is copied; see read_once).
 *   bulk   larger pieces, which cost bandwidth. By default one thread
 *          issuing POSIX_FADV_WILLNEED and keeping about `inflight` bytes in
 *          flight; it waits for the oldest without copying: mincore(2)
 *          counts only up-to-date pages, and a one-byte pread of the first
 *          that is not sleeps until its read completes.
 *
 * Bounding both lanes keeps either from burying the other, or the walk's
 * own directory and inode reads, under a deep queue. That matters on a
 * device throttled for both IOPS and bytes (blk-throttle, io.max): its
 * queue is served in order, so a deep queue of large reads starves the
 * small ones and the two costs add up; a steady mix of both is served at
 * both limits at once. Measured with bench/warm.sh (the figures are in its
 * report): under 150 IOPS + 20 MiB/s, a tree whose bytes need 28 s and
 * whose reads need 26 s took 43 s with a deep small lane, 30 s with the
 * default mix (32 small reads per 4 MiB in flight, the ratio of that
 * throttle); vmtouch -t took 48.5 s. Pieces of 64 KiB to 256 KiB cost the
 * throttle bytes more than a request: in the small lane, 32 of them at
 * once made a deep queue of large reads (128 files of 256 KiB and 48 MiB,
 * bench/slurm-stagein.sh's: 4.5 to 4.9 s where the bytes need 4.0 s); in
 * the bulk lane, 3.9 s.
 *
 * Other methods, for comparison and for odd devices: WILLNEED or PREAD in
 * both lanes, or io_uring reads (HAVE_URING), which did no better than
 * the default here (buffered io_uring reads of cold pages).
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <unistd.h>

#ifdef HAVE_URING
#include <liburing.h>
#endif

#include "cache/warm-internal.h"

bool hs_warm_have_uring(void)
{
#ifdef HAVE_URING
	static int have;	/* 0 unknown, 1 yes, 2 no */

	if (!have) {
		struct io_uring ring;

		have = io_uring_queue_init(2, &ring, 0) == 0 ? 1 : 2;
		if (have == 1)
			io_uring_queue_exit(&ring);
	}
	return have == 1;
#else
	return false;
#endif
}

/* ---- reading ----------------------------------------------------------------- */

/*
 * One synchronous read of up to n bytes at off. Spliced into /dev/null
 * (sendfile), the cached pages are only referenced, never copied: pread's
 * copy took a sixth of warm's CPU on a tree of small files, and warm is
 * CPU-bound on a fast disk. A filesystem that cannot splice is read with
 * pread.
 */
static ssize_t read_once(struct worker *k, int fd, uint64_t off, size_t n)
{
	if (k->w->sink >= 0) {
		off_t pos = (off_t)off;
		ssize_t got = sendfile(k->w->sink, fd, &pos, n);

		if (got >= 0 || (errno != EINVAL && errno != ENOSYS))
			return got;
	}
	return pread(fd, k->buf, n, (off_t)off);
}

/*
 * Read bytes [off, off + len) of the job's file (see read_once),
 * which waits for any read in flight and reads what is missing. Returns
 * false at an early end of file or an error (reported).
 */
static bool read_range(struct worker *k, struct job *j, uint64_t off, uint64_t len, bool count)
{
	uint64_t end = off + len;

	while (off < end) {
		size_t n = end - off < k->buf_size ? (size_t)(end - off) : k->buf_size;
		ssize_t got = read_once(k, j->fd, off, n);

		if (count)
			__atomic_fetch_add(&k->w->requests, 1, __ATOMIC_RELAXED);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			warm_job_warn(k->w, j, errno, "read error, the rest was skipped");
			return false;
		}
		if (got == 0)
			return false;	/* it shrank: job_finish says so */
		off += (uint64_t)got;
	}
	return true;
}

/*
 * Wait until bytes [off, off + len) are up to date, without copying them:
 * mincore(2) counts only up-to-date pages, and a one-byte pread of the
 * first page that is not sleeps until its read completes (or reads it, if
 * readahead dropped it). Nothing is ever touched through the mapping.
 */
static bool wait_range(struct worker *k, struct job *j, uint64_t off, uint64_t len)
{
	const uint64_t ps = hs_page_size();
	uint64_t npages, p = 0;
	char *map, byte;

	len += off % ps;	/* extents of small-block filesystems may start mid-page */
	off -= off % ps;
	npages = (len + ps - 1) / ps;
	map = mmap(NULL, len, PROT_READ, MAP_SHARED, j->fd, (off_t)off);

	if (map == MAP_FAILED)
		return read_range(k, j, off, len, false);
	while (p < npages) {
		uint64_t q;

		if (mincore(map + p * ps, (npages - p) * ps, k->vec) < 0) {
			munmap(map, len);
			return read_range(k, j, off + p * ps, len - p * ps, false);
		}
		for (q = p; q < npages && (k->vec[q - p] & 1); q++)
			;
		if (q == npages)
			break;
		if (pread(j->fd, &byte, 1, (off_t)(off + q * ps)) <= 0)
			break;	/* shrank, or an error that the next reader will meet */
		p = q + 1;
	}
	munmap(map, len);
	return p >= npages;
}

static void willneed_wait(struct worker *k, const struct item *it)
{
	bool complete;

	if (!it->job->known || it->len <= SMALL_WAIT)
		complete = read_range(k, it->job, it->off, it->len, false);
	else
		complete = wait_range(k, it->job, it->off, it->len);
	warm_item_done(k->w, it, complete);
}

static void willneed_wait_oldest(struct worker *k)
{
	struct item it = k->pend[k->phead];

	assert(k->lane->depth > 0);	/* warm.c sets each lane's at 1 at least */
	k->phead = (k->phead + 1) % k->lane->depth;
	k->plen--;
	k->pend_bytes -= it.len;
	willneed_wait(k, &it);
}

static void willneed_drain(struct worker *k)
{
	while (k->plen)
		willneed_wait_oldest(k);
}

static void willneed_issue(struct worker *k, const struct item *it)
{
	warm_trace(k->w, it);
	/* an error here (a filesystem without readahead...) is made up for by the wait */
	posix_fadvise(it->job->fd, (off_t)it->off, (off_t)it->len, POSIX_FADV_WILLNEED);
	__atomic_fetch_add(&k->w->requests, 1, __ATOMIC_RELAXED);
	while (k->plen == k->lane->depth ||
	       (k->plen && k->pend_bytes + it->len > k->lane->inflight))
		willneed_wait_oldest(k);
	k->pend[(k->phead + k->plen) % k->lane->depth] = *it;
	k->plen++;
	k->pend_bytes += it->len;
}

void *warm_willneed_main(void *arg)
{
	struct worker *k = arg;
	struct item it;

	for (;;) {
		if (warm_queue_pop(k->w, k->lane, &it, k->plen == 0)) {
			willneed_issue(k, &it);
			continue;
		}
		if (!k->plen)
			break;
		willneed_drain(k);	/* nothing queued: wait for ours meanwhile */
	}
	return NULL;
}

void *warm_pread_main(void *arg)
{
	struct worker *k = arg;
	struct item it;

	while (warm_queue_pop(k->w, k->lane, &it, true)) {
		warm_trace(k->w, &it);
		warm_item_done(k->w, &it, read_range(k, it.job, it.off, it.len, true));
	}
	return NULL;
}

#ifdef HAVE_URING
/* Reads in flight for a thread of lane l: its depth, or its bytes in reads. */
unsigned warm_uring_depth(const struct lane *l)
{
	uint64_t n = l->inflight / URING_BUF;

	return n < 2 ? 2 : n < l->depth ? (unsigned)n : l->depth;
}

/* A piece being read through io_uring, in reads of at most URING_BUF. */
struct uring_piece {
	struct item it;
	uint64_t next;		/* next byte to submit */
	unsigned inflight;
	bool failed;
};

struct uring_slot {
	struct uring_piece *piece;
	char *buf;
	uint64_t off;
	unsigned len;
};

static void uring_piece_put(struct worker *k, struct uring_piece *p)
{
	if (--p->inflight || (!p->failed && p->next < p->it.off + p->it.len))
		return;
	warm_item_done(k->w, &p->it, !p->failed);
	free(p);
}

static void uring_submit_slot(struct io_uring *ring, struct uring_slot *s)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);	/* depth slots, depth SQEs */

	io_uring_prep_read(sqe, s->piece->it.job->fd, s->buf, s->len, s->off);
	io_uring_sqe_set_data(sqe, s);
}

void *warm_uring_main(void *arg)
{
	struct worker *k = arg;
	struct hs_warm *w = k->w;
	const unsigned depth = warm_uring_depth(k->lane);
	struct io_uring ring;
	struct uring_slot *slots = calloc(depth, sizeof(*slots));
	struct uring_slot **free_slots = calloc(depth, sizeof(*free_slots));
	struct uring_piece *cur = NULL;
	unsigned nfree = depth, inflight = 0;

	if (!slots || !free_slots || io_uring_queue_init(depth, &ring, 0) < 0) {
		/* cannot happen after hs_warm_have_uring(), but never lose pieces */
		free(slots);
		free(free_slots);
		return warm_pread_main(arg);
	}
	for (unsigned i = 0; i < depth; i++) {
		slots[i].buf = k->buf + (size_t)i * URING_BUF;
		free_slots[i] = &slots[i];
	}
	for (;;) {
		struct io_uring_cqe *cqe;
		unsigned head, seen = 0;
		bool ended = false;

		while (nfree) {
			struct uring_slot *s;
			uint64_t end;

			if (!cur) {
				struct item it;

				if (!warm_queue_pop(w, k->lane, &it, inflight == 0)) {
					ended = inflight == 0;
					break;
				}
				cur = calloc(1, sizeof(*cur));
				if (!cur) {	/* read it the slow way rather than lose it */
					warm_item_done(w, &it, read_range(k, it.job, it.off, it.len, true));
					continue;
				}
				cur->it = it;
				cur->next = it.off;
				warm_trace(w, &it);
			}
			end = cur->it.off + cur->it.len;
			s = free_slots[--nfree];
			s->piece = cur;
			s->off = cur->next;
			s->len = end - cur->next < URING_BUF ? (unsigned)(end - cur->next) : URING_BUF;
			cur->next += s->len;
			cur->inflight++;
			inflight++;
			uring_submit_slot(&ring, s);
			__atomic_fetch_add(&w->requests, 1, __ATOMIC_RELAXED);
			if (cur->next >= end)
				cur = NULL;
		}
		if (ended)
			break;
		io_uring_submit_and_wait(&ring, 1);	/* -EINTR: the loop comes back */
		io_uring_for_each_cqe(&ring, head, cqe) {
			struct uring_slot *s = io_uring_cqe_get_data(cqe);
			struct uring_piece *p = s->piece;
			int res = cqe->res;

			seen++;
			if (res == -EINTR || res == -EAGAIN) {
				uring_submit_slot(&ring, s);	/* try again */
				continue;
			}
			if (res > 0 && (unsigned)res < s->len) {
				s->off += (unsigned)res;	/* short read: the rest */
				s->len -= (unsigned)res;
				uring_submit_slot(&ring, s);
				continue;
			}
			if (res < 0) {
				warm_job_warn(w, p->it.job, -res, "read error, the rest was skipped");
				p->failed = true;
			} else if (res == 0) {
				p->failed = true;	/* it shrank: job_finish says so */
			}
			if (p->failed && cur == p)
				cur = NULL;	/* submit no more of it */
			free_slots[nfree++] = s;
			inflight--;
			uring_piece_put(k, p);
		}
		io_uring_cq_advance(&ring, seen);
	}
	io_uring_queue_exit(&ring);
	free(slots);
	free(free_slots);
	return NULL;
}
#endif
