/*
 * watch.c - watch mode: a kept file's check (open as its owner, fstat,
 * count its resident kept pages, close), and reading back what the checks
 * found missing, in profile order, at most the rate's worth a tick, with
 * warm's reader (warm.h) at the idle I/O priority.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "base/safeopen.h"
#include "cache/residency.h"
#include "cache/targets.h"
#include "cache/warm.h"
#include "keep/keep-evict.h"
#include "keep/keeper.h"

/* Check one file: returns the kept pages found lost since the last look. */
uint64_t keep_check_file(struct hs_keep *k, size_t i)
{
	struct kfile *f = &k->set.files[i];
	struct hs_cache_counts c = { 0 };
	struct stat st;
	uint64_t lost = 0;
	int fd, rc;

	if (f->state != F_WATCHED || (fd = keep_open_file(k, f, &st)) < 0)
		return 0;
	/* rewritten in place, or a new inode of its owner's or root's: read anew */
	if (!keep_unchanged(f, &st)) {
		struct hs_keep_event e = { .kind = HS_KEEP_REPLACED, .path = f->path,
					   .in_place = keep_same_file(f, &st) };
		const uint64_t old_ino = f->ino;
		bool unknown;

		keep_take_stat(f, &st);
		/*
		 * A new file its owner may read but not query (root's, 0644,
		 * in a user's profile) is kept unwatched, and not read back, as
		 * such a file is when a profile is loaded.
		 */
		unknown = !e.in_place && hs_residency_count(fd, f->size, f->ranges, f->nranges, &c,
							   NULL) == -EPERM;
		if (k->evict && !e.in_place) {
			keep_evict_unwatch(k->evict, old_ino);
			if (!unknown)
				keep_evict_watch(k->evict, f->ino);
			k->inos_stale = true;
		}
		f->resident = 0;
		k->dirty = true;
		if (unknown) {
			f->state = F_UNKNOWN;
			f->pending = P_NONE;
			k->set.unknown++;
			k->st.unknown_files++;
			keep_warn(k, f->path, 0, "replaced by a file whose residency is unknown to "
				   "its profile's owner: no longer watched");
			close(fd);
			return 0;
		}
		keep_emit(k, &e);
		/* new contents: what it misses was never kept, so it is no refault */
		if (!f->pending && !keep_pend_add(k, i))
			f->pending = P_FIRST;
		close(fd);
		return 0;
	}
	rc = hs_residency_count(fd, f->size, f->ranges, f->nranges, &c, NULL);
	close(fd);
	if (rc) {
		if (!f->warned) {
			f->warned = true;
			keep_warn(k, f->path, -rc, "cannot read residency");
		}
		return 0;
	}
	if (c.cached < f->resident)
		lost = f->resident - c.cached;
	k->owners[f->owner].st.refault_pages += lost;
	/*
	 * Read back, and evicted again so soon: reading more would thrash. A
	 * few pages are not thrashing: a proactive reclaimer (DAMON's pageout
	 * of a region it found idle) takes some pages just read that happened
	 * to land in such a region; at least HS_KEEP_THRASH_SHARE of them is.
	 * Pages read before the last back-off ended and lost during it were
	 * that back-off's: they do not start another at its end.
	 */
	if (lost && f->read_at && f->read_at >= k->sched.resumed_at &&
	    hs_monotonic_ns() - f->read_at < k->sched.quiet &&
	    lost * HS_KEEP_THRASH_SHARE >= f->resident && keep_stalled_since(k, f))
		k->thrashing = true;
	f->resident = c.cached;
	if (c.cached < c.pages && !f->pending && !keep_pend_add(k, i))
		f->pending = lost ? P_REFAULT : P_FIRST;
	return lost;
}

static void warm_file_done(void *ctx, const struct hs_warm_file *w)
{
	struct hs_keep *k = ctx;
	struct kfile *f = &k->set.files[w->index];

	pthread_mutex_lock(&k->lock);
	if (w->known_after)
		f->resident = w->resident_pages + w->read_pages;
	if (w->read_pages) {
		f->read_at = hs_monotonic_ns();
		f->read_mem = k->mem_before.known ? k->mem_before.total_us : UINT64_MAX;
		k->tick_read += w->read_pages;
		k->tick_files++;
		k->owners[f->owner].tick_read += w->read_pages;
		k->owners[f->owner].tick_files++;
		if (k->o.file_events) {
			struct hs_keep_event e = { .kind = HS_KEEP_FILE_WARMED, .path = f->path,
						   .pages = w->read_pages };

			keep_emit(k, &e);
		}
	}
	pthread_mutex_unlock(&k->lock);
}

static void warm_warn(void *ctx, const char *path, int errnum, const char *what)
{
	keep_warn(ctx, path, errnum, what);
}

/*
 * The pages of files read back since began, read once more from the
 * cache (RWF_NOWAIT: never from the disk). A job's own use touched its
 * pages more than once, so reclaim had them on its active list; read
 * back once, they would be the first taken from a full memory cgroup
 * when the job starts and allocates. A second access puts them back
 * where the job's use had them.
 */
static void touch_read_back(struct hs_keep *k, uint64_t began)
{
	static char buf[256 << 10];
	const uint64_t ps = hs_page_size();

	for (size_t i = 0; i < k->set.n; i++) {
		struct kfile *f = &k->set.files[i];
		const struct hs_safe_id id = { f->dev, f->ino };
		struct hs_safe_result res;
		struct stat st;
		int fd;

		/* the file it read back, not what took its name since (the next check tells) */
		if (f->state != F_WATCHED || f->read_at < began || keep_creds_use(k, f->owner) ||
		    (fd = hs_safe_open(AT_FDCWD, f->path, O_RDONLY, HS_SAFE_NOFOLLOW, &id, &st,
				       &res)) < 0)
			continue;
		for (size_t r = 0; r < f->nranges; r++) {
			uint64_t off = f->ranges[r].first * ps, end = (f->ranges[r].last + 1) * ps;

			while (off < end) {
				struct iovec v = { buf, end - off < sizeof(buf) ? end - off : sizeof(buf) };
				ssize_t n = preadv2(fd, &v, 1, (off_t)off, RWF_NOWAIT);

				if (n == 0 || (n < 0 && errno != EAGAIN))
					break;	/* its end, or it cannot be read */
				off += n > 0 ? (uint64_t)n : ps;	/* a page not cached: skipped */
			}
		}
		close(fd);
	}
	keep_creds_use(k, 0);
}

/*
 * A re-warm begun at began read pages back (k->tick_read, each owner's
 * tick_read): touched once more, counted, and told (refaults of them;
 * first_only: all of them were files' first readings).
 */
static void rewarmed(struct hs_keep *k, uint64_t began, uint64_t refaults, bool first_only)
{
	touch_read_back(k, began);
	/*
	 * In a memory cgroup at its limit (a box whose cache fills it, as a
	 * small machine's does) each page read back is charged after a
	 * reclaim, and that reclaim is a memory stall, counted by the PSI of
	 * the system: a trigger within a window of our reads is taken as
	 * pressure only if the 10 s average says it is more than our burst.
	 */
	k->own_mem_until = hs_monotonic_ns() + (k->used[0].window_us ? k->used[0].window_us : 1000000) * 1000;
	k->st.rewarmed_pages += k->tick_read;
	k->st.rewarms++;
	k->st.last_rewarm_ns = hs_realtime_ns();
	for (size_t o = 0; o < k->nowners; o++) {
		struct kowner *ow = &k->owners[o];

		if (!ow->tick_read)
			continue;
		ow->st.rewarmed_pages += ow->tick_read;
		ow->st.rewarms++;
		ow->st.last_rewarm_ns = k->st.last_rewarm_ns;
	}
	k->dirty = true;
	{
		struct hs_keep_event e = { .kind = HS_KEEP_WARMED, .pages = k->tick_read,
					   .files = k->tick_files, .refault_pages = refaults,
					   .initial = first_only };

		keep_emit(k, &e);
	}
}

/*
 * Read back the pending files, in profile order, at most the rate's worth
 * for this period; what the budget leaves stays pending for the next tick.
 */
void keep_rewarm(struct hs_keep *k, uint64_t period, uint64_t refaults)
{
	uint64_t budget = (uint64_t)((double)k->o.rate * (double)period / 1e9);
	struct hs_warm_opts wo = { .order = HS_ORDER_GIVEN, .depth = 4, .inflight = 1 << 20,
				   .warn = warm_warn, .file = warm_file_done, .ctx = k };
	struct hs_warm_stats ws;
	struct hs_warm *w;
	size_t kept = 0, i;
	bool first_only = true, added = false;
	uint64_t began = hs_monotonic_ns();

	if (!k->npend || keep_reads_wait(k, began))
		return;
	hs_psi_mark(k->pdir[0], k->pname[0], began, &k->mem_before);
	wo.budget = budget > (1u << 20) ? budget : 1u << 20;
	if (k->sched.trickle)
		wo.budget = keep_trickle_budget(k, wo.budget);
	keep_pend_sort(k);
	keep_creds_use(k, 0);	/* its threads start with the keeper's credentials */
	if (hs_warm_new(&wo, &w))
		return;	/* out of memory or threads: tried again next tick */
	k->tick_read = k->tick_files = 0;
	for (size_t o = 0; o < k->nowners; o++)
		k->owners[o].tick_read = k->owners[o].tick_files = 0;
	for (i = 0; i < k->npend; i++) {
		struct kfile *f = &k->set.files[k->pend[i]];
		struct hs_target t = { 0 };
		struct stat st;
		int fd, rc;

		if (f->state != F_WATCHED || !f->pending)
			continue;
		if ((fd = keep_open_file(k, f, &st)) < 0)
			continue;
		if (!keep_unchanged(f, &st)) {	/* the next check tells it */
			close(fd);
			k->pend[kept++] = k->pend[i];
			continue;
		}
		t.path = f->path;
		t.path_len = strlen(f->path);
		t.fd = fd;
		t.st = &st;
		t.ranges = f->ranges;
		t.nranges = f->nranges;
		t.pages = f->pages;
		t.index = k->pend[i];
		first_only &= f->pending == P_FIRST;
		rc = hs_warm_add(w, &t);
		close(fd);
		added = true;
		if (rc)
			break;	/* the budget is spent (this file perhaps in part) */
		f->pending = P_NONE;
	}
	keep_creds_use(k, 0);
	for (; i < k->npend; i++)
		if (k->set.files[k->pend[i]].pending)
			k->pend[kept++] = k->pend[i];
	k->npend = kept;
	hs_warm_finish(w, &ws);
	hs_warm_free(w);
	if (added)
		keep_read_done(k, began, k->tick_read * hs_page_size());
	if (k->tick_read)
		rewarmed(k, began, refaults, first_only);
}
