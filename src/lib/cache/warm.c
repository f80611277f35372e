/*
 * warm.c - read what is missing of files, or of a profile's ranges, into
 * the page cache, as fast as the device allows (see warm.h for the model).
 *
 * This file is the session: its options and threads, the files in flight
 * and the queue of pieces between the caller's thread, which plans
 * (warm-plan.c) and orders (warm-order.c), and the I/O threads, which
 * issue the reads (warm-issue.c); warm-internal.h says what they share.
 *
 * A file's descriptor (a dup of the walk's) stays open until its last
 * request is done; then the file is checked once more (did it shrink,
 * vanish?) and what became resident is counted.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kernel/procfs.h"
#include "cache/warm-internal.h"

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

int hs_warm_method_of(const char *name)
{
	for (int m = HS_WARM_AUTO; m <= HS_WARM_URING; m++)
		if (!strcmp(name, hs_warm_method_name(m)))
			return m;
	/* the short name, as liburing spells it */
	return strcmp(name, "uring") ? -EINVAL : HS_WARM_URING;
}

int hs_warm_order_of(const char *name)
{
	for (int o = HS_ORDER_AUTO; o <= HS_ORDER_PHYSICAL; o++)
		if (!strcmp(name, hs_warm_order_name(o)))
			return o;
	return -EINVAL;
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

/* ---- files and their pieces -------------------------------------------------- */

static void warn_path(struct hs_warm *w, const char *path, int errnum, const char *what)
{
	__atomic_fetch_add(&w->st.skipped_files, 1, __ATOMIC_RELAXED);
	if (w->o.warn)
		w->o.warn(w->o.ctx, path, errnum, what);
}

/* Warn about a file once, however many of its pieces fail. */
void warm_job_warn(struct hs_warm *w, struct job *j, int errnum, const char *what)
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
			warm_job_warn(w, j, 0, "was deleted or replaced while being warmed");
			/* its pages go with our descriptor: neither read nor missing */
			known = false;
		} else if ((uint64_t)st.st_size < j->size) {
			warm_job_warn(w, j, 0, "shrank while being warmed; the rest was skipped");
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
		int64_t n = warm_cached_pages(j->fd, j->pieces[i].first, j->pieces[i].last, npages);

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
void warm_item_done(struct hs_warm *w, const struct item *it, bool complete)
{
	if (!complete)
		__atomic_store_n(&it->job->unsure, true, __ATOMIC_RELAXED);
	__atomic_fetch_add(&w->done_bytes, it->len, __ATOMIC_RELAXED);
	job_put(w, it->job);
}

void warm_trace(struct hs_warm *w, const struct item *it)
{
	if (w->o.trace)
		w->o.trace(w->o.ctx, it->job->path, it->off, it->len, it->phys);
}

/* ---- the queue --------------------------------------------------------------- */

/* Append to a lane under w->lock, growing its ring if a batch needs it. */
int warm_queue_push_locked(struct hs_warm *w, struct lane *l, const struct item *it)
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
bool warm_queue_pop(struct hs_warm *w, struct lane *l, struct item *it, bool wait)
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

struct lane *warm_lane_for(struct hs_warm *w, const struct item *it)
{
	return &w->lanes[it->len <= SMALL_PIECE ? LANE_SMALL : LANE_BULK];
}

/* Wait, under w->lock, until another file may be opened. */
static void wait_for_room(struct hs_warm *w)
{
	while (w->jobs_live >= w->max_jobs || w->qlen >= QUEUE_ITEMS) {
		if (w->nbatch && w->qlen == 0)
			warm_flush_batch_locked(w);
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
				warm_flush_batch_locked(w);	/* they may wait in the batch */
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
			rc = warm_queue_push_locked(w, warm_lane_for(w, &it), &it);
		}
		__atomic_fetch_add(&j->refs, 1, __ATOMIC_RELAXED);
		off += it.len;
		if (phys != UINT64_MAX)
			phys += it.len;
	}
	return rc;
}

/*
 * Pages past the end: a file that shrank since its profile was made
 * is worth a warning; pages past the size the profile recorded (page 0
 * of an empty file, say) never existed, and are dropped silently.
 */
static void warn_past_eof(struct hs_warm *w, const struct hs_target *t, const struct plan *p)
{
	char what[128];

	if (!p->past_eof || !t->entry || t->entry->id.size <= (uint64_t)t->st->st_size)
		return;
	snprintf(what, sizeof(what),
		 "shrank since the profile was made: %llu of its pages are past the end, skipped",
		 (unsigned long long)p->past_eof);
	warn_path(w, t->path, 0, what);
}

/* Count a planned target into the session's totals, under w->lock. */
static void count_plan_locked(struct hs_warm *w, const struct plan *p)
{
	w->st.files++;
	w->st.pages += p->pages;
	w->st.hole_pages += p->holes;
	if (p->known) {
		w->st.resident_pages += p->resident;
	} else {
		w->st.unknown_files++;
		w->st.unknown_pages += p->pages;
	}
}

/* A target with nothing to read is done already: its row, if rows are asked for. */
static void file_resident(struct hs_warm *w, const struct hs_target *t, const struct plan *p)
{
	struct hs_warm_file f = {
		.path = t->path, .path_len = t->path_len, .index = t->index,
		.pages = p->pages,
		.hole_pages = p->holes, .known_before = p->known,
		.resident_pages = p->resident, .known_after = p->known,
	};

	if (w->o.file)
		w->o.file(w->o.ctx, &f);
}

/*
 * Queue j's pieces under w->lock: in the given order straight to the
 * lanes, or, in physical order, x's extents into the batch, which is
 * sorted and queued once it is large enough, or at once when the I/O
 * threads have nothing left to do.
 */
static int queue_job_locked(struct hs_warm *w, struct job *j, const struct plan *p,
			    const struct extents *x, uint64_t chunk, bool physical)
{
	const uint64_t ps = hs_page_size(), size = j->size;
	int rc = 0;

	for (size_t i = 0; i < p->npieces && !rc; i++) {
		uint64_t off = p->pieces[i].first * ps, end = (p->pieces[i].last + 1) * ps;

		if (end > size)
			end = size;
		w->st.requested_pages += p->pieces[i].last - p->pieces[i].first + 1;
		w->planned_bytes += end - off;
		if (!physical)
			rc = queue_span(w, j, off, end, chunk, UINT64_MAX, false);
	}
	for (size_t i = 0; i < x->n && !rc; i++)
		rc = queue_span(w, j, x->v[i].off, x->v[i].off + x->v[i].len, chunk, x->v[i].phys, true);
	if (physical) {
		if (!w->batch_jobs++)
			w->batch_started = hs_monotonic_seconds();
		if (!rc && (w->batch_jobs >= w->max_jobs / 2 || w->nbatch >= BATCH_ITEMS ||
			    (w->qlen == 0 && (w->batch_jobs >= BATCH_EARLY ||
					      hs_monotonic_seconds() - w->batch_started > 0.05))))
			rc = warm_flush_batch_locked(w);
	}
	return rc;
}

/*
 * Open t's file for its planned reads (p) and queue them. Called with
 * w->lock held, which it releases. cut says the budget ended in this
 * file. Returns 0 (a file that cannot be opened is warned about and
 * skipped) or -ENOMEM.
 */
static int start_job(struct hs_warm *w, const struct hs_target *t, const struct plan *p, bool cut)
{
	const uint64_t ps = hs_page_size(), size = (uint64_t)t->st->st_size;
	const struct device *dev = warm_device_of(w, t->st->st_dev);
	uint64_t chunk = w->o.chunk ? w->o.chunk : dev->chunk;
	const bool physical = w->o.order == HS_ORDER_PHYSICAL ||
			      (w->o.order == HS_ORDER_AUTO && dev->rotational);
	struct extents x = { 0 };
	struct job *j;
	unsigned tries = 0;
	int rc, fd;

	if (chunk > w->bulk_chunk)
		chunk = w->bulk_chunk;	/* at least two in flight per bulk thread */
	wait_for_room(w);
	w->jobs_live++;
	pthread_mutex_unlock(&w->lock);

	rc = -ENOMEM;
	if (!(j = job_new(t, p)))
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
	if (t->ranges || cut || p->holes)
		posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
	rc = 0;
	for (size_t i = 0; i < p->npieces && physical && !rc; i++)
		rc = warm_map_piece(fd, p->pieces[i].first * ps,
				    (p->pieces[i].last + 1) * ps < size ? (p->pieces[i].last + 1) * ps : size,
				    &x);
	if (x.holes)
		j->unsure = true;	/* not all of the pieces will be read */

	pthread_mutex_lock(&w->lock);
	if (!rc)
		rc = queue_job_locked(w, j, p, &x, chunk, physical);
	pthread_mutex_unlock(&w->lock);
	job_put(w, j);	/* the planner's reference */
	free(x.v);
	report_progress(w, false);
	return rc;

undo:
	free(j);
	pthread_mutex_lock(&w->lock);
	w->jobs_live--;
	w->jobs_ended++;
	pthread_cond_broadcast(&w->room);
	pthread_mutex_unlock(&w->lock);
	return rc;
}

int hs_warm_add(struct hs_warm *w, const struct hs_target *t)
{
	struct plan p = { .t = t, .in_order = w->o.budget != 0 };
	bool cut = false;
	int rc;

	if (__atomic_load_n(&w->stopped, __ATOMIC_RELAXED))
		return HS_WARM_STOP;
	if ((rc = warm_plan_target(&p)))
		goto out;
	warn_past_eof(w, t, &p);

	pthread_mutex_lock(&w->lock);
	if (w->stopped) {
		pthread_mutex_unlock(&w->lock);
		rc = HS_WARM_STOP;
		goto out;
	}
	if (w->o.budget)
		cut = warm_spend_budget(w, &p);
	count_plan_locked(w, &p);
	if (!p.npieces) {
		pthread_mutex_unlock(&w->lock);
		file_resident(w, t, &p);
		rc = cut ? HS_WARM_STOP : 0;
		goto out;
	}
	rc = start_job(w, t, &p, cut);	/* releases w->lock */
	if (!rc && cut)
		rc = HS_WARM_STOP;
out:
	if (p.pieces != p.inline_pieces)
		free(p.pieces);
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

void hs_warm_raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 65536 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max < 65536 ? rl.rlim_max : 65536;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static int worker_init(struct hs_warm *w, struct worker *k, struct lane *l)
{
	size_t buf = l == &w->lanes[LANE_SMALL] ? SMALL_BUF : PREAD_BUF;

	k->w = w;
	k->lane = l;
#ifdef HAVE_URING
	if (l->method == HS_WARM_URING)
		buf = (size_t)warm_uring_depth(l) * URING_BUF;
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
		main_fn = w->lanes[l].method == HS_WARM_PREAD ? warm_pread_main : warm_willneed_main;
#ifdef HAVE_URING
		if (w->lanes[l].method == HS_WARM_URING)
			main_fn = warm_uring_main;
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
		warm_flush_batch_locked(w);
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
