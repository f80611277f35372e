/*
 * warm.c - read what is missing of files, or of a profile's ranges, into
 * the page cache, as fast as the device allows (see warm.h for the model).
 *
 * The caller's thread plans: it clips each target to its file, skips holes
 * (SEEK_DATA), asks what is resident (cachestat(2), or mincore(2) on
 * kernels without it: the residency module), spends the budget, and
 * cuts the rest into requests no larger than one POSIX_FADV_WILLNEED call
 * reads in full (max(read_ahead_kb, max_sectors_kb) of the disk). A file's
 * descriptor (a dup of the walk's) stays open until its last request is
 * done; then the file is checked once more (did it shrink, vanish?).
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
 *
 * On rotational disks the pieces of a batch of files are sorted by physical
 * address (FIEMAP) before being queued. A batch holds at most half the
 * descriptors we may keep open, so memory stays bounded for any number of
 * files; it is flushed early when the I/O threads run dry.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#ifdef HAVE_URING
#include <liburing.h>
#endif

#include "kernel/procfs.h"
#include "cache/residency.h"
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

/* ---- small helpers ----------------------------------------------------- */

/*
 * Resident pages in pages [first, last] of fd, pages at or past `npages`
 * (the file's end) left out. Asks the residency module, which falls back
 * to mincore where the kernel has no cachestat (before 6.5: Debian 12's
 * 6.1), and says -EPERM when residency cannot be known (no write
 * permission); another -errno on failure.
 */
static int64_t cached_pages(int fd, uint64_t first, uint64_t last, uint64_t npages)
{
	const struct hs_range r = { first, last };
	struct hs_cache_counts c = { 0 };
	int rc;

	if (first >= npages)
		return 0;
	if (last >= npages)
		last = npages - 1;
	rc = hs_residency_count(fd, (last + 1) * hs_page_size(), &r, 1, &c, NULL);
	return rc < 0 ? rc : (int64_t)c.cached;
}

/* This process's read_bytes from /proc/self/io; false if unavailable. */
static bool proc_read_bytes(uint64_t *out)
{
	struct hs_proc_io io;

	if (hs_proc_io_read(NULL, &io) < 0)
		return false;
	*out = io.read_bytes;
	return true;
}

static bool read_sysfs_u64(const char *dir, const char *name, uint64_t *v)
{
	char buf[32];

	if (hs_procfs_read_at(dir, name, buf, sizeof(buf)) <= 0)
		return false;
	*v = strtoull(buf, NULL, 10);
	return true;
}

/* ---- devices ------------------------------------------------------------ */

struct device {
	dev_t dev;
	bool rotational;
	uint64_t chunk;		/* bytes one WILLNEED call reads in full */
};

/*
 * What the block layer says about the disk under dev: a partition has no
 * queue/ of its own, its parent disk does. Filesystems without a block
 * device (NFS, btrfs...) may still have a bdi with a readahead size.
 */
static void probe_device(dev_t dev, struct device *d)
{
	unsigned maj = major(dev), min = minor(dev);
	uint64_t ra_kb = 0, max_kb = 0, rot = 0;
	char dir[96];
	bool found = false;

	for (int parent = 0; parent < 2 && !found; parent++) {
		snprintf(dir, sizeof(dir), "/sys/dev/block/%u:%u/%squeue", maj, min,
			 parent ? "../" : "");
		if (read_sysfs_u64(dir, "read_ahead_kb", &ra_kb)) {
			found = true;
			read_sysfs_u64(dir, "max_sectors_kb", &max_kb);
			read_sysfs_u64(dir, "rotational", &rot);
		}
	}
	if (!found) {
		snprintf(dir, sizeof(dir), "/sys/class/bdi/%u:%u", maj, min);
		found = read_sysfs_u64(dir, "read_ahead_kb", &ra_kb);
	}
	d->dev = dev;
	d->rotational = rot == 1;
	d->chunk = found ? (ra_kb > max_kb ? ra_kb : max_kb) << 10 : DEFAULT_CHUNK;
	if (d->chunk < MIN_CHUNK)
		d->chunk = MIN_CHUNK;
	if (d->chunk > MAX_CHUNK)
		d->chunk = MAX_CHUNK;
	d->chunk &= ~((uint64_t)hs_page_size() - 1);
}

/* ---- the session ----------------------------------------------------------- */

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

const char *hs_warm_method_name(enum hs_warm_method m)
{
	switch (m) {
	case HS_WARM_WILLNEED: return "willneed";
	case HS_WARM_PREAD: return "pread";
	case HS_WARM_URING: return "io_uring";
	default: return "auto";
	}
}

const char *hs_warm_order_name(enum hs_warm_order o)
{
	switch (o) {
	case HS_ORDER_GIVEN: return "given";
	case HS_ORDER_PHYSICAL: return "physical";
	default: return "auto";
	}
}

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

static const struct device *device_of(struct hs_warm *w, dev_t dev)
{
	struct device d;

	for (size_t i = 0; i < w->ndevs; i++)
		if (w->devs[i].dev == dev)
			return &w->devs[i];
	probe_device(dev, &d);
	if (w->ndevs == MAX_DEVICES)
		w->ndevs--;	/* a pathological number of devices: reuse the last slot */
	w->devs[w->ndevs] = d;
	return &w->devs[w->ndevs++];
}

static void warn_path(struct hs_warm *w, const char *path, int errnum, const char *what)
{
	__atomic_fetch_add(&w->st.skipped_files, 1, __ATOMIC_RELAXED);
	if (w->o.warn)
		w->o.warn(w->o.ctx, path, errnum, what);
}

/* Warn about a file once, however many of its pieces fail. */
static void job_warn(struct hs_warm *w, struct job *j, int errnum, const char *what)
{
	if (!__atomic_exchange_n(&j->warned, true, __ATOMIC_RELAXED))
		warn_path(w, j->path, errnum, what);
}

static void report_progress(struct hs_warm *w, bool force)
{
	struct hs_warm_progress p;
	double now;

	if (!w->o.progress || pthread_mutex_trylock(&w->progress_lock))
		return;
	now = hs_monotonic_seconds();
	if (force || now - w->progress_last >= 0.1) {
		w->progress_last = now;
		pthread_mutex_lock(&w->lock);
		p.files = w->st.files;
		p.planned_bytes = w->planned_bytes;
		pthread_mutex_unlock(&w->lock);
		p.done_bytes = __atomic_load_n(&w->done_bytes, __ATOMIC_RELAXED);
		w->o.progress(w->o.ctx, &p);
	}
	pthread_mutex_unlock(&w->progress_lock);
}

/*
 * The file's last piece is done: see whether it changed under us, count
 * what is resident now, and let it go.
 */
static void job_finish(struct hs_warm *w, struct job *j)
{
	const uint64_t ps = hs_page_size();
	struct stat st;
	uint64_t after = 0, pages = j->pages, npages = UINT64_MAX;
	bool known = j->known, unsure = j->unsure;

	if (fstat(j->fd, &st) == 0) {
		if (st.st_nlink == 0) {
			job_warn(w, j, 0, "was deleted or replaced while being warmed");
			/* its pages go with our descriptor: neither read nor missing */
			known = false;
		} else if ((uint64_t)st.st_size < j->size) {
			job_warn(w, j, 0, "shrank while being warmed; the rest was skipped");
			/*
			 * Pages past the new end are gone, not missing: count
			 * only those that still exist, and ask which are there.
			 */
			npages = ((uint64_t)st.st_size + ps - 1) / ps;
			pages = 0;
			for (size_t i = 0; i < j->npieces; i++)
				if (j->pieces[i].first < npages)
					pages += (j->pieces[i].last < npages ? j->pieces[i].last
									   : npages - 1) -
						 j->pieces[i].first + 1;
			unsure = true;
		}
	}
	/*
	 * Reads that completed to the end of every piece prove its pages were
	 * resident then; otherwise ask (what a later reclaim takes is not ours
	 * to count).
	 */
	if (!unsure)
		after = pages;
	for (size_t i = 0; i < j->npieces && known && unsure; i++) {
		int64_t n = cached_pages(j->fd, j->pieces[i].first, j->pieces[i].last, npages);

		if (n < 0)
			known = false;
		else
			after += (uint64_t)n;
	}
	close(j->fd);
	pthread_mutex_lock(&w->lock);
	if (known) {
		w->st.read_pages += after > j->before ? after - j->before : 0;
		w->st.not_resident_pages += pages > after ? pages - after : 0;
	}
	w->jobs_live--;
	w->jobs_ended++;
	pthread_cond_broadcast(&w->room);
	pthread_mutex_unlock(&w->lock);
	if (w->o.file) {
		struct hs_warm_file f = {
			.path = j->path, .path_len = j->path_len, .index = j->index,
			.pages = j->target_pages,
			.hole_pages = j->holes, .requested_pages = j->pages,
			.known_before = j->known, .resident_pages = j->resident,
			.known_after = known,
			.read_pages = known && after > j->before ? after - j->before : 0,
			.not_resident_pages = known && pages > after ? pages - after : 0,
		};

		w->o.file(w->o.ctx, &f);
	}
	free(j);
}

static void job_put(struct hs_warm *w, struct job *j)
{
	if (__atomic_sub_fetch(&j->refs, 1, __ATOMIC_ACQ_REL) == 0)
		job_finish(w, j);
}

/* A piece is done; complete says it was read (or waited for) to its end. */
static void item_done(struct hs_warm *w, const struct item *it, bool complete)
{
	if (!complete)
		__atomic_store_n(&it->job->unsure, true, __ATOMIC_RELAXED);
	__atomic_fetch_add(&w->done_bytes, it->len, __ATOMIC_RELAXED);
	job_put(w, it->job);
}

static void trace(struct hs_warm *w, const struct item *it)
{
	if (w->o.trace)
		w->o.trace(w->o.ctx, it->job->path, it->off, it->len, it->phys);
}

/* ---- the queue ------------------------------------------------------------- */

/* Append to a lane under w->lock, growing its ring if a batch needs it. */
static int queue_push_locked(struct hs_warm *w, struct lane *l, const struct item *it)
{
	if (l->qlen == l->qcap) {
		size_t cap = l->qcap ? l->qcap * 2 : 1024;
		struct item *q = malloc(cap * sizeof(*q));

		if (!q)
			return -ENOMEM;
		for (size_t i = 0; i < l->qlen; i++)
			q[i] = l->q[(l->qhead + i) % l->qcap];
		free(l->q);
		l->q = q;
		l->qcap = cap;
		l->qhead = 0;
	}
	l->q[(l->qhead + l->qlen) % l->qcap] = *it;
	l->qlen++;
	w->qlen++;
	pthread_cond_signal(&l->work);
	return 0;
}

/*
 * Take the lane's next piece. With wait, sleep until there is one; returns
 * false when there is none (with wait: none will ever come).
 */
static bool queue_pop(struct hs_warm *w, struct lane *l, struct item *it, bool wait)
{
	pthread_mutex_lock(&w->lock);
	while (!l->qlen && wait && !w->closing)
		pthread_cond_wait(&l->work, &w->lock);
	if (!l->qlen) {
		pthread_mutex_unlock(&w->lock);
		return false;
	}
	*it = l->q[l->qhead];
	l->qhead = (l->qhead + 1) % l->qcap;
	l->qlen--;
	if (--w->qlen < QUEUE_ITEMS)
		pthread_cond_broadcast(&w->room);
	pthread_mutex_unlock(&w->lock);
	return true;
}

static struct lane *lane_for(struct hs_warm *w, const struct item *it)
{
	return &w->lanes[it->len <= SMALL_PIECE ? LANE_SMALL : LANE_BULK];
}

static int cmp_phys(const void *a, const void *b)
{
	const struct item *x = a, *y = b;

	if (x->phys != y->phys)
		return x->phys < y->phys ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Sort the batch by physical address and queue it, under w->lock. */
static int flush_batch_locked(struct hs_warm *w)
{
	int rc = 0;

	if (!w->nbatch)
		return 0;
	qsort(w->batch, w->nbatch, sizeof(*w->batch), cmp_phys);
	for (size_t i = 0; i < w->nbatch && !rc; i++)
		rc = queue_push_locked(w, lane_for(w, &w->batch[i]), &w->batch[i]);
	w->nbatch = 0;
	w->batch_jobs = 0;
	for (int i = 0; i < NLANES; i++)
		pthread_cond_broadcast(&w->lanes[i].work);
	return rc;
}

/* ---- reading ------------------------------------------------------------------ */

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
			job_warn(k->w, j, errno, "read error, the rest was skipped");
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
	item_done(k->w, it, complete);
}

static void willneed_wait_oldest(struct worker *k)
{
	struct item it = k->pend[k->phead];

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
	trace(k->w, it);
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

static void *willneed_main(void *arg)
{
	struct worker *k = arg;
	struct item it;

	for (;;) {
		if (queue_pop(k->w, k->lane, &it, k->plen == 0)) {
			willneed_issue(k, &it);
			continue;
		}
		if (!k->plen)
			break;
		willneed_drain(k);	/* nothing queued: wait for ours meanwhile */
	}
	return NULL;
}

static void *pread_main(void *arg)
{
	struct worker *k = arg;
	struct item it;

	while (queue_pop(k->w, k->lane, &it, true)) {
		trace(k->w, &it);
		item_done(k->w, &it, read_range(k, it.job, it.off, it.len, true));
	}
	return NULL;
}

#ifdef HAVE_URING
/* Reads in flight for a thread of lane l: its depth, or its bytes in reads. */
static unsigned uring_depth(const struct lane *l)
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
	item_done(k->w, &p->it, !p->failed);
	free(p);
}

static void uring_submit_slot(struct io_uring *ring, struct uring_slot *s)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);	/* depth slots, depth SQEs */

	io_uring_prep_read(sqe, s->piece->it.job->fd, s->buf, s->len, s->off);
	io_uring_sqe_set_data(sqe, s);
}

static void *uring_main(void *arg)
{
	struct worker *k = arg;
	struct hs_warm *w = k->w;
	const unsigned depth = uring_depth(k->lane);
	struct io_uring ring;
	struct uring_slot *slots = calloc(depth, sizeof(*slots));
	struct uring_slot **free_slots = calloc(depth, sizeof(*free_slots));
	struct uring_piece *cur = NULL;
	unsigned nfree = depth, inflight = 0;

	if (!slots || !free_slots || io_uring_queue_init(depth, &ring, 0) < 0) {
		/* cannot happen after hs_warm_have_uring(), but never lose pieces */
		free(slots);
		free(free_slots);
		return pread_main(arg);
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

				if (!queue_pop(w, k->lane, &it, inflight == 0)) {
					ended = inflight == 0;
					break;
				}
				cur = calloc(1, sizeof(*cur));
				if (!cur) {	/* read it the slow way rather than lose it */
					item_done(w, &it, read_range(k, it.job, it.off, it.len, true));
					continue;
				}
				cur->it = it;
				cur->next = it.off;
				trace(w, &it);
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
				job_warn(w, p->it.job, -res, "read error, the rest was skipped");
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

/* ---- planning -------------------------------------------------------------------- */

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

static int plan_push(struct plan *p, uint64_t first, uint64_t last)
{
	int64_t cached;

	if (hs_grow_inline(&p->pieces, &p->cap, p->npieces + 1, sizeof(*p->pieces),
			   p->inline_pieces))
		return -ENOMEM;
	p->pages += last - first + 1;
	cached = p->known ? cached_pages(p->t->fd, first, last, UINT64_MAX) : -EPERM;
	if (cached < 0) {
		p->known = false;
		cached = 0;
	} else if ((uint64_t)cached >= last - first + 1) {
		p->resident += last - first + 1;
		return 0;	/* all there: nothing to do */
	}
	p->resident += (uint64_t)cached;
	p->pieces[p->npieces++] = (struct piece){ first, last, (uint64_t)cached };
	return 0;
}

/* Pages [first, last] of a sparse file: its data only, per SEEK_DATA. */
static int plan_data(struct plan *p, uint64_t first, uint64_t last, uint64_t size)
{
	const uint64_t ps = hs_page_size();
	uint64_t pos = first * ps, end = (last + 1) * ps < size ? (last + 1) * ps : size;
	uint64_t data_pages = 0;
	int rc = 0;

	while (pos < end && !rc) {
		off_t data = lseek(p->t->fd, (off_t)pos, SEEK_DATA), hole;

		if (data < 0) {
			if (errno != ENXIO)	/* no SEEK_DATA here: all data */
				data = (off_t)pos;
			else
				break;		/* a hole up to the end */
		}
		if ((uint64_t)data >= end)
			break;
		hole = lseek(p->t->fd, data, SEEK_HOLE);
		if (hole < 0 || (uint64_t)hole > end)
			hole = (off_t)end;
		if (hole <= data)
			break;
		/* pages that hold any data */
		rc = plan_push(p, (uint64_t)data / ps, ((uint64_t)hole - 1) / ps);
		data_pages += ((uint64_t)hole - 1) / ps - (uint64_t)data / ps + 1;
		pos = ((uint64_t)hole + ps - 1) / ps * ps;
	}
	if (data_pages < last - first + 1)
		p->holes += last - first + 1 - data_pages;
	return rc;
}

static int by_first_page(const void *a, const void *b)
{
	const struct piece *x = a, *y = b;

	return x->first < y->first ? -1 : x->first > y->first;
}

/*
 * A profile lists a file's ranges in the order they were first read, so
 * neighbours often come apart ("0-3,8-9,4-7"): in page order, and joined
 * where they touch, they cost the device one read instead of several. Only
 * a budget, spent in profile order, keeps the order as it is.
 */
static void join_pieces(struct plan *p)
{
	size_t n = 0;

	if (p->in_order || p->npieces < 2)
		return;
	qsort(p->pieces, p->npieces, sizeof(*p->pieces), by_first_page);
	for (size_t i = 1; i < p->npieces; i++) {
		struct piece *last = &p->pieces[n];

		if (p->pieces[i].first == last->last + 1) {
			last->last = p->pieces[i].last;
			last->cached += p->pieces[i].cached;
		} else {
			p->pieces[++n] = p->pieces[i];
		}
	}
	p->npieces = n + 1;
}

static int plan_target(struct plan *p)
{
	const struct hs_target *t = p->t;
	const uint64_t ps = hs_page_size(), size = (uint64_t)t->st->st_size;
	const uint64_t npages = (size + ps - 1) / ps;
	const struct hs_range whole = { 0, npages ? npages - 1 : 0 };
	const struct hs_range *r = t->ranges ? t->ranges : &whole;
	size_t nr = t->ranges ? t->nranges : npages ? 1 : 0;
	bool sparse = (uint64_t)t->st->st_blocks * 512 < size;
	int rc = 0;

	p->known = true;
	p->pieces = p->inline_pieces;
	p->cap = sizeof(p->inline_pieces) / sizeof(p->inline_pieces[0]);
	for (size_t i = 0; i < nr && !rc; i++) {
		uint64_t first = r[i].first, last = r[i].last;

		if (last >= npages) {
			p->past_eof += last - (first > npages ? first : npages) + 1;
			if (first >= npages)
				continue;
			last = npages - 1;
		}
		rc = sparse ? plan_data(p, first, last, size) : plan_push(p, first, last);
	}
	if (!rc)
		join_pieces(p);
	return rc;
}

static uint64_t missing(const struct plan *p, const struct piece *pc)
{
	return pc->last - pc->first + 1 - (p->known ? pc->cached : 0);
}

struct cut {
	uint64_t at, allowed;	/* stop at page `at`: `allowed` missing pages before it */
};

static int find_cut(void *ctx, uint64_t first, uint64_t last)
{
	struct cut *c = ctx;
	uint64_t gap = first - c->at;

	if (gap > c->allowed) {
		c->at += c->allowed;
		c->allowed = 0;
		return 1;
	}
	/*
	 * The missing pages before this run fit, even when they spend the
	 * budget exactly: the run itself is there already, so the first page
	 * not warmed is the one after it (a run is maximal: that one is
	 * missing, or past the piece).
	 */
	c->allowed -= gap;
	c->at = last + 1;
	return c->allowed ? 0 : 1;
}

/*
 * Spend the budget on p's pieces in order, under w->lock. Cuts the piece
 * where the budget runs out, drops those after it, and records where we
 * stopped. Returns true when the budget is spent.
 */
static bool spend_budget(struct hs_warm *w, struct plan *p)
{
	const uint64_t ps = hs_page_size(), size = (uint64_t)p->t->st->st_size;

	for (size_t i = 0; i < p->npieces; i++) {
		struct piece *pc = &p->pieces[i];
		uint64_t need = missing(p, pc) * ps, left = w->o.budget - w->budget_used;
		struct cut c = { pc->first, left / ps };

		if (need <= left) {
			w->budget_used += need;
			continue;
		}
		/* the budget ends inside this piece: find the page where it does */
		if (p->known && pc->cached)
			hs_residency_runs(p->t->fd, size, pc->first, pc->last, find_cut, &c);
		c.at += c.allowed;	/* what is left of it falls after the last resident run */
		if (c.at > pc->last + 1)
			c.at = pc->last + 1;
		w->budget_used += left / ps * ps;
		__atomic_store_n(&w->stopped, true, __ATOMIC_RELAXED);
		w->st.budget_reached = true;
		w->stop_path = strdup(p->t->path);
		w->st.stop_page = c.at;
		p->npieces = i;
		if (c.at > pc->first) {
			int64_t n = p->known ? cached_pages(p->t->fd, pc->first, c.at - 1, UINT64_MAX) : 0;

			pc->last = c.at - 1;
			pc->cached = n > 0 ? (uint64_t)n : 0;
			/* nothing missing before the cut (the budget was spent already) */
			if (!p->known || pc->cached < c.at - pc->first)
				p->npieces = i + 1;
		}
		return true;
	}
	return false;
}

/* Wait, under w->lock, until another file may be opened. */
static void wait_for_room(struct hs_warm *w)
{
	while (w->jobs_live >= w->max_jobs || w->qlen >= QUEUE_ITEMS) {
		if (w->nbatch && w->qlen == 0)
			flush_batch_locked(w);
		pthread_cond_wait(&w->room, &w->lock);
	}
}

/*
 * Descriptors ran out before max_jobs files were open (the caller holds
 * more than we counted on, or the system is short): hold no more files
 * than are open now, and wait for one of them to finish. Returns false,
 * errno kept, when no other file of ours is open and *tries retries (a
 * millisecond apart) are spent: there is nothing to wait for.
 */
static bool wait_for_descriptor(struct hs_warm *w, unsigned *tries)
{
	int err = errno;
	uint64_t ended;
	size_t others;

	pthread_mutex_lock(&w->lock);
	/* live files but ours and those of planners waiting here hold a descriptor */
	others = w->jobs_live - 1 - w->fd_waiters;
	if (others) {
		if (w->max_jobs > others)
			w->max_jobs = others;
		ended = w->jobs_ended;
		w->fd_waiters++;
		while (w->jobs_ended == ended) {
			if (w->nbatch)
				flush_batch_locked(w);	/* they may wait in the batch */
			pthread_cond_wait(&w->room, &w->lock);
		}
		w->fd_waiters--;
	}
	pthread_mutex_unlock(&w->lock);
	/*
	 * None of ours to wait for: the descriptors are the caller's, maybe
	 * for a moment (a walk's threads open directories and files): retry
	 * a little while before giving up.
	 */
	if (!others && ++*tries <= 100) {
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
		others = 1;
	}
	errno = err;
	return others != 0;
}

static struct job *job_new(const struct hs_target *t, const struct plan *p)
{
	size_t pieces_size = p->npieces * sizeof(struct hs_range);
	struct job *j = malloc(sizeof(*j) + pieces_size + t->path_len + 1);

	if (!j)
		return NULL;
	memset(j, 0, sizeof(*j));
	j->fd = -1;
	j->refs = 1;
	j->known = p->known;
	j->size = (uint64_t)t->st->st_size;
	j->target_pages = p->pages;
	j->holes = p->holes;
	j->resident = p->resident;
	j->index = t->index;
	j->path_len = t->path_len;
	j->npieces = p->npieces;
	j->pieces = (struct hs_range *)(j + 1);
	j->path = (char *)j->pieces + pieces_size;
	memcpy(j->path, t->path, t->path_len + 1);
	for (size_t i = 0; i < p->npieces; i++) {
		j->pieces[i].first = p->pieces[i].first;
		j->pieces[i].last = p->pieces[i].last;
		j->pages += p->pieces[i].last - p->pieces[i].first + 1;
		j->before += p->known ? p->pieces[i].cached : 0;
	}
	return j;
}

/* Queue bytes [off, end) of j in requests of at most chunk, under w->lock. */
static int queue_span(struct hs_warm *w, struct job *j, uint64_t off, uint64_t end,
		      uint64_t chunk, uint64_t phys, bool batch)
{
	int rc = 0;

	while (off < end && !rc) {
		struct item it = { j, off, end - off < chunk ? end - off : chunk, phys, w->seq++ };

		if (batch) {
			if (hs_grow(&w->batch, &w->batch_cap, w->nbatch + 1, sizeof(*w->batch)))
				return -ENOMEM;
			w->batch[w->nbatch++] = it;
		} else {
			while (w->qlen >= QUEUE_ITEMS + 1024)	/* full: let the threads catch up */
				pthread_cond_wait(&w->room, &w->lock);
			rc = queue_push_locked(w, lane_for(w, &it), &it);
		}
		__atomic_fetch_add(&j->refs, 1, __ATOMIC_RELAXED);
		off += it.len;
		if (phys != UINT64_MAX)
			phys += it.len;
	}
	return rc;
}

/* A run of a file at a known physical address, for the physical sort. */
struct extent {
	uint64_t off, len, phys;
};

struct extents {
	struct extent *v;
	size_t n, cap;
	bool holes;		/* some of the pieces are not backed by an extent */
};

static int extents_push(struct extents *x, uint64_t off, uint64_t len, uint64_t phys)
{
	if (hs_grow(&x->v, &x->cap, x->n + 1, sizeof(*x->v)))
		return -ENOMEM;
	x->v[x->n++] = (struct extent){ off, len, phys };
	return 0;
}

/*
 * Where bytes [off, end) of fd lie on the disk, per FIEMAP: one extent per
 * run, holes left out; without FIEMAP, the whole piece at an unknown
 * address. Called without the session's lock: it is a syscall per file.
 */
static int map_piece(int fd, uint64_t off, uint64_t end, struct extents *x)
{
	union {
		struct fiemap fm;
		char buf[sizeof(struct fiemap) + FIEMAP_EXTENTS * sizeof(struct fiemap_extent)];
	} u;
	uint64_t pos = off, mapped = 0;
	int rc = 0;

	while (pos < end && !rc) {
		const struct fiemap_extent *e;
		uint64_t next = pos;

		memset(&u.fm, 0, sizeof(u.fm));
		u.fm.fm_start = pos;
		u.fm.fm_length = end - pos;
		u.fm.fm_extent_count = FIEMAP_EXTENTS;
		if (ioctl(fd, FS_IOC_FIEMAP, &u.fm) < 0)
			return extents_push(x, pos, end - pos, UINT64_MAX);
		if (!u.fm.fm_mapped_extents)
			break;	/* holes to the end */
		for (unsigned i = 0; i < u.fm.fm_mapped_extents && !rc; i++) {
			uint64_t a, b, phys;

			e = &u.fm.fm_extents[i];
			a = e->fe_logical > pos ? e->fe_logical : pos;
			b = e->fe_logical + e->fe_length < end ? e->fe_logical + e->fe_length : end;
			phys = e->fe_flags & (FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DELALLOC)
				       ? UINT64_MAX : e->fe_physical + (a - e->fe_logical);
			if (a < b) {
				rc = extents_push(x, a, b - a, phys);
				mapped += b - a;
			}
			if (e->fe_logical + e->fe_length > next)
				next = e->fe_logical + e->fe_length;
		}
		e = &u.fm.fm_extents[u.fm.fm_mapped_extents - 1];
		if ((e->fe_flags & FIEMAP_EXTENT_LAST) || next <= pos)
			break;
		pos = next;
	}
	if (mapped < end - off)
		x->holes = true;
	return rc;
}

int hs_warm_add(struct hs_warm *w, const struct hs_target *t)
{
	const uint64_t ps = hs_page_size(), size = (uint64_t)t->st->st_size;
	struct plan p = { .t = t, .in_order = w->o.budget != 0 };
	struct extents x = { 0 };
	const struct device *dev;
	struct job *j = NULL;
	uint64_t chunk;
	bool physical, cut = false;
	unsigned tries = 0;
	int rc, fd;

	if (__atomic_load_n(&w->stopped, __ATOMIC_RELAXED))
		return HS_WARM_STOP;
	if ((rc = plan_target(&p)))
		goto out;
	/*
	 * Pages past the end: a file that shrank since its profile was made
	 * is worth a warning; pages past the size the profile recorded (page 0
	 * of an empty file, say) never existed, and are dropped silently.
	 */
	if (p.past_eof && t->entry && t->entry->id.size > size) {
		char what[128];

		snprintf(what, sizeof(what),
			 "shrank since the profile was made: %llu of its pages are past the end, skipped",
			 (unsigned long long)p.past_eof);
		warn_path(w, t->path, 0, what);
	}

	pthread_mutex_lock(&w->lock);
	if (w->stopped) {
		pthread_mutex_unlock(&w->lock);
		rc = HS_WARM_STOP;
		goto out;
	}
	if (w->o.budget)
		cut = spend_budget(w, &p);
	w->st.files++;
	w->st.pages += p.pages;
	w->st.hole_pages += p.holes;
	if (p.known) {
		w->st.resident_pages += p.resident;
	} else {
		w->st.unknown_files++;
		w->st.unknown_pages += p.pages;
	}
	if (!p.npieces) {
		pthread_mutex_unlock(&w->lock);
		if (w->o.file) {	/* nothing to read: done already */
			struct hs_warm_file f = {
				.path = t->path, .path_len = t->path_len, .index = t->index,
				.pages = p.pages,
				.hole_pages = p.holes, .known_before = p.known,
				.resident_pages = p.resident, .known_after = p.known,
			};

			w->o.file(w->o.ctx, &f);
		}
		rc = cut ? HS_WARM_STOP : 0;
		goto out;
	}
	dev = device_of(w, t->st->st_dev);
	chunk = w->o.chunk ? w->o.chunk : dev->chunk;
	if (chunk > w->bulk_chunk)
		chunk = w->bulk_chunk;	/* at least two in flight per bulk thread */
	physical = w->o.order == HS_ORDER_PHYSICAL || (w->o.order == HS_ORDER_AUTO && dev->rotational);
	wait_for_room(w);
	w->jobs_live++;
	pthread_mutex_unlock(&w->lock);

	rc = -ENOMEM;
	if (!(j = job_new(t, &p)))
		goto undo;
	while ((fd = fcntl(t->fd, F_DUPFD_CLOEXEC, 0)) < 0 && (errno == EMFILE || errno == ENFILE) &&
	       wait_for_descriptor(w, &tries))
		;
	if (fd < 0) {
		warn_path(w, t->path, errno, "cannot warm");
		rc = 0;
		goto undo;
	}
	j->fd = fd;
	/*
	 * Only the pages asked for: keep readahead from reading past a
	 * profile's ranges or the budget, or into holes (pages of zeros).
	 */
	if (t->ranges || cut || p.holes)
		posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
	rc = 0;
	for (size_t i = 0; i < p.npieces && physical && !rc; i++)
		rc = map_piece(fd, p.pieces[i].first * ps,
			       (p.pieces[i].last + 1) * ps < size ? (p.pieces[i].last + 1) * ps : size, &x);
	if (x.holes)
		j->unsure = true;	/* not all of the pieces will be read */

	pthread_mutex_lock(&w->lock);
	for (size_t i = 0; i < p.npieces && !rc; i++) {
		uint64_t off = p.pieces[i].first * ps, end = (p.pieces[i].last + 1) * ps;

		if (end > size)
			end = size;
		w->st.requested_pages += p.pieces[i].last - p.pieces[i].first + 1;
		w->planned_bytes += end - off;
		if (!physical)
			rc = queue_span(w, j, off, end, chunk, UINT64_MAX, false);
	}
	for (size_t i = 0; i < x.n && !rc; i++)
		rc = queue_span(w, j, x.v[i].off, x.v[i].off + x.v[i].len, chunk, x.v[i].phys, true);
	if (physical) {
		if (!w->batch_jobs++)
			w->batch_started = hs_monotonic_seconds();
		if (!rc && (w->batch_jobs >= w->max_jobs / 2 || w->nbatch >= BATCH_ITEMS ||
			    (w->qlen == 0 && (w->batch_jobs >= BATCH_EARLY ||
					      hs_monotonic_seconds() - w->batch_started > 0.05))))
			rc = flush_batch_locked(w);
	}
	pthread_mutex_unlock(&w->lock);
	job_put(w, j);	/* the planner's reference */
	j = NULL;
	if (!rc && cut)
		rc = HS_WARM_STOP;
	report_progress(w, false);
	goto out;

undo:
	free(j);
	pthread_mutex_lock(&w->lock);
	w->jobs_live--;
	w->jobs_ended++;
	pthread_cond_broadcast(&w->room);
	pthread_mutex_unlock(&w->lock);
out:
	if (p.pieces != p.inline_pieces)
		free(p.pieces);
	free(x.v);
	return rc;
}

/* ---- the session's life ------------------------------------------------------ */

/*
 * The default method and concurrency, measured with bench/warm.sh on the
 * machine this was written on (2 busy CPUs, a fast virtio disk, 6.18; the
 * numbers are in the bench's report): small files are read fastest by a
 * pool of threads doing one synchronous read each, large ones by WILLNEED
 * from one thread with a bounded number of bytes in flight; io_uring's
 * buffered reads did no better than either.
 */
static void choose_method(struct hs_warm *w)
{
	struct lane *small = &w->lanes[LANE_SMALL], *bulk = &w->lanes[LANE_BULK];
	enum hs_warm_method m = w->o.method;

	w->method = m;
	small->method = m == HS_WARM_AUTO ? HS_WARM_PREAD : m;
	bulk->method = m == HS_WARM_AUTO ? HS_WARM_WILLNEED : m;
	small->inflight = UINT64_MAX;
	bulk->inflight = w->o.inflight ? w->o.inflight : DEFAULT_INFLIGHT;
	if (bulk->inflight < 2 * SMALL_PIECE)
		bulk->inflight = 2 * SMALL_PIECE;
	w->bulk_chunk = bulk->inflight / 2 < MAX_CHUNK ? bulk->inflight / 2 : MAX_CHUNK;
	/* bulk pieces are over SMALL_PIECE: this many fill its bytes in flight */
	bulk->depth = (unsigned)(bulk->inflight / SMALL_PIECE) + 1;
	small->depth = w->o.depth ? w->o.depth : DEFAULT_DEPTH;
	small->threads = bulk->threads = 1;
	/* pread keeps one read in flight per thread */
	if (small->method == HS_WARM_PREAD)
		small->threads = small->depth < 256 ? small->depth : 256;
	if (bulk->method == HS_WARM_PREAD)
		bulk->threads = bulk->inflight >= 2 * PREAD_BUF ? (unsigned)(bulk->inflight / PREAD_BUF) : 1;
	if (w->o.threads) {
		small->threads = bulk->threads = w->o.threads;
		if (small->method == HS_WARM_PREAD)
			small->depth = w->o.threads;
	}
	w->nworkers = small->threads + bulk->threads;
}

/* Descriptors this process has open now; a guess if /proc is missing. */
static size_t fds_in_use(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	size_t n = 0;

	if (!d)
		return 16;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n ? n - 1 : 0;	/* less the directory's own */
}

/*
 * Files we may hold open at once: what RLIMIT_NOFILE leaves of the
 * descriptors free now, less a margin for the caller (a tree walk opens
 * directories and files on several threads while we hold ours): 128 of a
 * large limit, half of a small one. Never 0: a session must make progress,
 * and hs_warm_add() waits for a file to finish when a dup still fails.
 */
static size_t open_files_allowed(void)
{
	struct rlimit rl;
	size_t n, used;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 256;
	if (rl.rlim_cur == RLIM_INFINITY)
		return 16384;
	used = fds_in_use();
	n = rl.rlim_cur > used ? (size_t)(rl.rlim_cur - used) : 0;
	n = n > 256 ? n - 128 : n / 2;
	return n < 1 ? 1 : n > 16384 ? 16384 : n;
}

static int worker_init(struct hs_warm *w, struct worker *k, struct lane *l)
{
	size_t buf = l == &w->lanes[LANE_SMALL] ? SMALL_BUF : PREAD_BUF;

	k->w = w;
	k->lane = l;
#ifdef HAVE_URING
	if (l->method == HS_WARM_URING)
		buf = (size_t)uring_depth(l) * URING_BUF;
#endif
	k->buf = malloc(buf);
	k->buf_size = buf;
	k->vec = malloc(MAX_CHUNK / hs_page_size() + 2);
	if (l->method == HS_WARM_WILLNEED)
		k->pend = malloc(l->depth * sizeof(*k->pend));
	if (!k->buf || !k->vec || (l->method == HS_WARM_WILLNEED && !k->pend))
		return -ENOMEM;
	return 0;
}

int hs_warm_new(const struct hs_warm_opts *o, struct hs_warm **out)
{
	struct hs_warm *w;
	pthread_condattr_t attr;
	void *(*main_fn)(void *);
	unsigned n = 0;
	int rc = 0;

	if (o->method == HS_WARM_URING && !hs_warm_have_uring())
		return -EINVAL;
	if (o->threads > 256 || o->depth > 4096 || (o->chunk && o->chunk < hs_page_size()))
		return -EINVAL;
	if (!(w = calloc(1, sizeof(*w))))
		return -ENOMEM;
	w->o = *o;
	w->sink = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (w->o.chunk > MAX_CHUNK)
		w->o.chunk = MAX_CHUNK;	/* the wait's mincore vector is sized for this */
	if (w->o.chunk)
		w->o.chunk &= ~((uint64_t)hs_page_size() - 1);
	choose_method(w);
	w->max_jobs = open_files_allowed();
	w->t0 = hs_monotonic_seconds();
	w->have_io = proc_read_bytes(&w->io0);
	pthread_mutex_init(&w->lock, NULL);
	pthread_mutex_init(&w->progress_lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&w->room, &attr);
	pthread_condattr_destroy(&attr);
	for (int i = 0; i < NLANES; i++)
		pthread_cond_init(&w->lanes[i].work, NULL);
	if (!(w->workers = calloc(w->nworkers, sizeof(*w->workers)))) {
		hs_warm_free(w);
		return -ENOMEM;
	}
	for (int l = 0; l < NLANES && !rc; l++) {
		main_fn = w->lanes[l].method == HS_WARM_PREAD ? pread_main : willneed_main;
#ifdef HAVE_URING
		if (w->lanes[l].method == HS_WARM_URING)
			main_fn = uring_main;
#endif
		for (unsigned i = 0; i < w->lanes[l].threads && !rc; i++) {
			struct worker *k = &w->workers[n++];

			if ((rc = worker_init(w, k, &w->lanes[l])))
				break;
			rc = -pthread_create(&k->tid, NULL, main_fn, k);
			k->started = rc == 0;
			if (k->started)
				w->workers_started++;
		}
	}
	if (rc) {
		hs_warm_free(w);
		return rc;
	}
	*out = w;
	return 0;
}

int hs_warm_finish(struct hs_warm *w, struct hs_warm_stats *st)
{
	uint64_t io1;

	if (!w->finished) {
		pthread_mutex_lock(&w->lock);
		flush_batch_locked(w);
		w->closing = true;
		for (int i = 0; i < NLANES; i++)
			pthread_cond_broadcast(&w->lanes[i].work);
		/* wait for the last file, reporting progress meanwhile */
		while (w->jobs_live) {
			/* on the clock of hs_monotonic_ns(), as w->room waits */
			const uint64_t at = hs_monotonic_ns() + 100 * 1000 * 1000;
			const struct timespec ts = { (time_t)(at / 1000000000u),
						     (long)(at % 1000000000u) };

			pthread_cond_timedwait(&w->room, &w->lock, &ts);
			pthread_mutex_unlock(&w->lock);
			report_progress(w, false);
			pthread_mutex_lock(&w->lock);
		}
		pthread_mutex_unlock(&w->lock);
		for (unsigned i = 0; i < w->nworkers; i++)
			if (w->workers[i].started)
				pthread_join(w->workers[i].tid, NULL);
		w->finished = true;
		w->st.seconds = hs_monotonic_seconds() - w->t0;
		w->st.requests = w->requests;
		w->st.method = w->method;
		w->st.small_method = w->lanes[LANE_SMALL].method;
		w->st.bulk_method = w->lanes[LANE_BULK].method;
		w->st.order = w->o.order;
		w->st.threads = w->nworkers;
		w->st.depth = w->lanes[LANE_SMALL].depth;
		w->st.inflight = w->lanes[LANE_BULK].inflight;
		w->st.chunk = 0;
		for (size_t i = 0; i < w->ndevs; i++)
			if (w->devs[i].chunk > w->st.chunk)
				w->st.chunk = w->devs[i].chunk;
		if (w->o.chunk)
			w->st.chunk = w->o.chunk;
		if (w->st.chunk > w->bulk_chunk)
			w->st.chunk = w->bulk_chunk;
		if (w->o.order == HS_ORDER_AUTO && w->ndevs) {
			w->st.order = HS_ORDER_GIVEN;
			for (size_t i = 0; i < w->ndevs; i++)
				if (w->devs[i].rotational)
					w->st.order = HS_ORDER_PHYSICAL;
		}
		if (w->have_io && proc_read_bytes(&io1)) {
			w->st.bytes_read_disk = io1 - w->io0;
			w->st.disk_source = "proc-io";
		} else {
			w->st.bytes_read_disk = w->st.read_pages * hs_page_size();
			w->st.disk_source = "residency";
		}
		w->st.stop_path = w->stop_path;
		report_progress(w, true);
	}
	*st = w->st;
	return 0;
}

void hs_warm_free(struct hs_warm *w)
{
	struct hs_warm_stats st;

	if (!w)
		return;
	if (w->workers_started && !w->finished)
		hs_warm_finish(w, &st);
	for (unsigned i = 0; w->workers && i < w->nworkers; i++) {
		free(w->workers[i].buf);
		free(w->workers[i].vec);
		free(w->workers[i].pend);
	}
	free(w->workers);
	for (int i = 0; i < NLANES; i++) {
		free(w->lanes[i].q);
		pthread_cond_destroy(&w->lanes[i].work);
	}
	free(w->batch);
	free(w->stop_path);
	if (w->sink >= 0)
		close(w->sink);
	pthread_mutex_destroy(&w->lock);
	pthread_mutex_destroy(&w->progress_lock);
	pthread_cond_destroy(&w->room);
	free(w);
}
