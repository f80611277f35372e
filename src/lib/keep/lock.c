/*
 * lock.c - lock mode: the kept pages mlock(2)ed, so that the kernel
 * cannot evict them, and the files followed by stat alone.
 *
 * Lock mode maps each file's kept ranges in windows of at most
 * HS_KEEP_LOCK_WINDOW and mlock(2)s them: the first locking at full speed
 * (HS_KEEP_LOCK_BURST a tick, read ahead), later ones a rate's worth a tick; its checks
 * only stat the files. Nothing ever reads the mapped memory: mlock faults
 * pages in through get_user_pages, which reports a page beyond the end of
 * a truncated file as an error, never as SIGBUS, and munmap and the stat
 * touch no page. So a file truncated under its mapping cannot kill the
 * keeper (there is no access a SIGBUS handler could guard); the check that
 * sees it shorter unmaps what lies beyond its end, which the truncation
 * has already taken out of the page cache.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>

#include "base/u64map.h"
#include "keep/keeper.h"
#include "kernel/ioprio.h"
#include "kernel/procfs.h"

/* The fix for a lock refused for its size, said with every such error. */
#define MEMLOCK_FIX "raise it (ulimit -l, LimitMEMLOCK= in the unit), lower --budget, " \
		    "or run as root"

static bool has_ipc_lock(void)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct caps[_LINUX_CAPABILITY_U32S_3] = { 0 };

	return syscall(SYS_capget, &hdr, caps) == 0 &&
	       (caps[CAP_IPC_LOCK / 32].effective & (1u << (CAP_IPC_LOCK % 32)));
}

int keep_lock_limit(struct hs_keep *k, struct hs_error *err)
{
	struct rlimit rl;

	if (has_ipc_lock())
		return 0;
	/* the kernel would refuse the locks one by one: say it once, now */
	if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    k->set.bytes > rl.rlim_cur)
		return hs_error_set(err, ENOMEM, "--mode lock would lock %llu KiB, more than "
				    "RLIMIT_MEMLOCK lets uid %d without CAP_IPC_LOCK (%llu KiB): "
				    MEMLOCK_FIX, (unsigned long long)(k->set.bytes >> 10),
				    (int)geteuid(), (unsigned long long)(rl.rlim_cur >> 10));
	return 0;
}

/*
 * Map f's kept ranges, clipped to its size now, in windows of at most
 * HS_KEEP_LOCK_WINDOW (never one mapping of a huge file), none locked yet.
 */
static int map_file(struct hs_keep *k, struct kfile *f, int fd)
{
	const uint64_t ps = hs_page_size(), most = HS_KEEP_LOCK_WINDOW / ps;
	uint64_t npages = (f->size + ps - 1) / ps;
	size_t cap = 0;

	for (size_t r = 0; r < f->nranges; r++) {
		uint64_t a = f->ranges[r].first, b = f->ranges[r].last;

		for (; a <= b && a < npages; a += most) {
			uint64_t n = b - a + 1 < most ? b - a + 1 : most;
			void *p;

			if (a + n > npages)
				n = npages - a;
			if (hs_grow(&f->wins, &cap, f->nwins + 1, sizeof(*f->wins)))
				return -ENOMEM;
			p = mmap(NULL, n * ps, PROT_READ, MAP_SHARED, fd, (off_t)(a * ps));
			if (p == MAP_FAILED) {
				int e = errno;

				/* out of mappings: said once for all files (say_map_refused) */
				if (e == ENOMEM)
					k->map_refused++;
				else if (!f->warned) {
					f->warned = true;
					keep_warn(k, f->path, e, "cannot map");
				}
				return -e;
			}
			f->wins[f->nwins++] = (struct kwin){ p, a, n, false };
		}
	}
	return 0;
}

/* The windows (mappings) lock mode needs for the kept set, as map_file() cuts them. */
static uint64_t windows_needed(const struct kset *s)
{
	const uint64_t ps = hs_page_size(), most = HS_KEEP_LOCK_WINDOW / ps;
	uint64_t n = 0;

	for (size_t i = 0; i < s->n; i++) {
		const struct kfile *f = &s->files[i];
		uint64_t npages = (f->size + ps - 1) / ps;

		if (f->state != F_WATCHED)
			continue;
		for (size_t r = 0; r < f->nranges; r++) {
			uint64_t a = f->ranges[r].first, b = f->ranges[r].last;

			if (a >= npages)
				continue;
			if (b >= npages)
				b = npages - 1;
			n += (b - a) / most + 1;
		}
	}
	return n;
}

/*
 * The files whose windows mmap refused for want of mappings, in one line:
 * a set of 200,000 files past vm.max_map_count would otherwise say it for
 * each of the 130,000 files beyond it. How many, the sysctl's value and
 * what the set needs, which is what to raise it to.
 */
static void say_map_refused(struct hs_keep *k)
{
	char what[512], max[32];
	ssize_t n = hs_procfs_read("/proc/sys/vm/max_map_count", max, sizeof(max));

	if (n > 0 && max[n - 1] == '\n')
		max[n - 1] = '\0';
	snprintf(what, sizeof(what), "%llu file%s not locked: mmap refused %s windows (ENOMEM): the "
		 "kept set needs %llu mappings beside the keeper's own, more than vm.max_map_count "
		 "(%s) allows a process, or than the address space limit (ulimit -v) holds: raise "
		 "vm.max_map_count (sysctl -w vm.max_map_count=N), or lower --budget",
		 (unsigned long long)k->map_refused, k->map_refused == 1 ? "" : "s",
		 k->map_refused == 1 ? "its" : "their", (unsigned long long)windows_needed(&k->set),
		 n > 0 ? max : "unknown");
	keep_warn(k, NULL, 0, what);
	k->map_refused = 0;
}

/*
 * mlock f's windows not locked yet (counted in s, its set), until
 * *allowance pages are spent (one window at least). Plain mlock, not
 * mlock2(MLOCK_ONFAULT): the point is to hold the profile's pages, so each
 * window is faulted in once, now; on-fault locking would lock only pages
 * touched later, and the keeper touches none. Returns the pages locked; f is done when all are.
 */
static uint64_t lock_file(struct hs_keep *k, struct kset *s, struct kfile *f,
			  uint64_t *allowance)
{
	const uint64_t ps = hs_page_size();
	uint64_t done = 0;
	size_t w = 0;

	while (w < f->nwins && *allowance) {
		struct kwin *x = &f->wins[w];

		if (x->locked) {
			w++;
			continue;
		}
		if (mlock(x->addr, x->npages * ps) < 0) {
			int e = errno;

			if (!f->warned) {
				f->warned = true;
				keep_warn(k, f->path, e, e == ENOMEM || e == EAGAIN || e == EPERM ?
					   "cannot lock: beyond RLIMIT_MEMLOCK? " MEMLOCK_FIX :
					   "cannot lock");
			}
			/* unmapped, not retried until the file changes */
			munmap(x->addr, x->npages * ps);
			f->wins[w] = f->wins[--f->nwins];
			continue;
		}
		x->locked = true;
		if (!f->locked)
			s->locked_files++;
		f->locked += x->npages;
		s->locked_pages += x->npages;
		done += x->npages;
		*allowance = *allowance > x->npages ? *allowance - x->npages : 0;
		w++;
	}
	for (w = 0; w < f->nwins && f->wins[w].locked; w++)
		;
	if (w == f->nwins)
		f->pending = P_NONE;
	return done;
}

/*
 * f shrank to npages pages: unmap what lies beyond (the truncation took
 * those pages out of the cache; a mapping left there is only a trap).
 * Returns the locked pages released.
 */
static uint64_t clip_file(struct kset *s, struct kfile *f, uint64_t npages)
{
	const uint64_t ps = hs_page_size();
	uint64_t released = 0;
	size_t w = 0;

	while (w < f->nwins) {
		struct kwin *x = &f->wins[w];
		uint64_t cut;

		if (x->first + x->npages <= npages) {
			w++;
			continue;
		}
		cut = x->first >= npages ? x->npages : x->first + x->npages - npages;
		munmap(x->addr + (x->npages - cut) * ps, cut * ps);
		if (x->locked) {
			released += cut;
			f->locked -= cut;
			s->locked_pages -= cut;
		}
		x->npages -= cut;
		if (!x->npages)
			f->wins[w] = f->wins[--f->nwins];
		else
			w++;
	}
	if (released && !f->locked)
		s->locked_files--;
	return released;
}

/*
 * Lock mode's check of one file: a look, nothing opened; follow it if it
 * changed in place or is a new inode of its owner's or root's. One
 * replaced otherwise was dropped by the look.
 */
void keep_check_locked(struct hs_keep *k, size_t i)
{
	const uint64_t ps = hs_page_size();
	struct kfile *f = &k->set.files[i];
	struct stat st;

	if (f->state != F_WATCHED || keep_look_file(k, f, &st) < 0 || keep_unchanged(f, &st))
		return;
	k->dirty = true;
	if (!f->nwins) {	/* not mapped (yet, or it failed): mapped as it is now */
		keep_take_stat(f, &st);
		f->warned = false;
		if (!f->pending && !keep_pend_add(k, i))
			f->pending = P_FIRST;
		return;
	}
	if (keep_same_file(f, &st) && (uint64_t)st.st_size < f->size) {
		struct hs_keep_event e = { .kind = HS_KEEP_TRUNCATED, .path = f->path };

		keep_take_stat(f, &st);
		e.pages = clip_file(&k->set, f, ((uint64_t)st.st_size + ps - 1) / ps);
		keep_emit(k, &e);
	} else {
		/* a new inode, or rewritten: the old mapping goes, the file is mapped anew */
		struct hs_keep_event e = { .kind = HS_KEEP_REPLACED, .path = f->path,
					   .in_place = keep_same_file(f, &st) };

		keep_emit(k, &e);
		keep_unmap_file(&k->set, f);
		keep_take_stat(f, &st);
		f->warned = false;
		if (!f->pending && !keep_pend_add(k, i))
			f->pending = P_FIRST;
	}
}

/* Map f as it is now, if it is not; false if it cannot be (warned). */
static bool map_pending(struct hs_keep *k, struct kfile *f)
{
	struct stat st;
	int fd, rc;

	if (f->nwins)
		return true;
	if ((fd = keep_open_file(k, f, &st)) < 0)
		return false;
	keep_take_stat(f, &st);	/* mapped as it is now */
	rc = map_file(k, f, fd);
	close(fd);
	if (rc) {
		keep_unmap_file(&k->set, f);
		f->pending = P_NONE;	/* warned; again when it changes */
		return false;
	}
	return true;
}

/*
 * Ask the kernel to read the windows about to be locked, up to pages of
 * them (MADV_WILLNEED: readahead of each whole window, in large requests,
 * all queued at once). mlock then finds them in flight or resident, where
 * its own faults would read a readahead window at a time, each waited for.
 */
static void lock_readahead(struct hs_keep *k, uint64_t pages)
{
	const uint64_t ps = hs_page_size();

	for (size_t i = 0; i < k->npend && pages; i++) {
		struct kfile *f = &k->set.files[k->pend[i]];

		if (f->state != F_WATCHED || !f->pending || !map_pending(k, f))
			continue;
		for (size_t w = 0; w < f->nwins && pages; w++) {
			struct kwin *x = &f->wins[w];

			if (x->locked)
				continue;
			madvise(x->addr, x->npages * ps, MADV_WILLNEED);
			pages = pages > x->npages ? pages - x->npages : 0;
		}
	}
}

/*
 * Map and lock the pending files, in profile order. The first locking is
 * the user's asking, as `hotset warm` is: at the device's speed and the
 * process's own I/O priority, HS_KEEP_LOCK_BURST a tick (ticks follow at
 * once until it is done, so that signals are seen between). Later ones
 * (files replaced, reloads) go at the rate, at the idle priority, a
 * trickle under others' io pressure.
 */
void keep_lock_pending(struct hs_keep *k, uint64_t period)
{
	const uint64_t ps = hs_page_size();
	uint64_t bytes = (uint64_t)((double)k->o.rate * (double)period / 1e9);
	uint64_t allowance = (bytes > (1u << 20) ? bytes : 1u << 20) / ps, pages = 0, files = 0;
	uint64_t began = hs_monotonic_ns();
	bool first_only = true;
	size_t kept = 0, i;
	int prio = -1;

	if (!k->npend) {
		k->initial = false;
		if (k->map_refused)
			say_map_refused(k);
		return;
	}
	if (k->initial) {
		allowance = HS_KEEP_LOCK_BURST / ps;
		if ((prio = hs_ioprio_get()) >= 0)
			hs_ioprio_set(HS_IOPRIO_NONE);	/* as the process's nice says */
	} else if (keep_reads_wait(k, began)) {
		return;
	} else if (k->sched.trickle) {
		allowance = keep_trickle_budget(k, allowance * ps) / ps;
	}
	keep_pend_sort(k);
	lock_readahead(k, allowance);
	for (i = 0; i < k->npend && allowance; i++) {
		struct kfile *f = &k->set.files[k->pend[i]];
		uint64_t got;

		if (f->state != F_WATCHED || !f->pending)
			continue;
		if (!map_pending(k, f))
			continue;
		first_only &= f->pending == P_FIRST;
		got = lock_file(k, &k->set, f, &allowance);
		pages += got;
		files += got > 0;
		if (f->pending)
			k->pend[kept++] = k->pend[i];
	}
	keep_creds_use(k, 0);
	for (; i < k->npend; i++)
		if (k->set.files[k->pend[i]].pending)
			k->pend[kept++] = k->pend[i];
	k->npend = kept;
	if (prio >= 0)
		hs_ioprio_set(prio);
	/* done, or stuck on files that cannot be opened now: those wait for the rate's passes */
	if (!k->npend || !pages)
		k->initial = false;
	/* the first locking says it once at its end; later passes once each */
	if (k->map_refused && !k->initial)
		say_map_refused(k);
	if (!pages)
		return;
	keep_read_done(k, began, pages * ps);
	k->dirty = true;
	{
		struct hs_keep_event e = { .kind = HS_KEEP_LOCKED, .pages = pages, .files = files,
					   .bytes = k->set.locked_pages * ps, .initial = first_only };

		keep_emit(k, &e);
	}
}

void keep_unmap_all(struct kset *s)
{
	for (size_t i = 0; i < s->n; i++)
		keep_unmap_file(s, &s->files[i]);
}

static bool same_ranges(const struct kfile *a, const struct kfile *b)
{
	return a->nranges == b->nranges &&
	       !memcmp(a->ranges, b->ranges, a->nranges * sizeof(*a->ranges));
}

/*
 * Lock mode's reload, before the old set goes: a file of the new set that
 * the old one kept whole, unchanged and with the same ranges, takes over
 * its windows, still locked; one the old set had locked otherwise (other
 * ranges, say) is locked anew now, whatever the rate: its pages are
 * resident, and unlocking the old set first would leave them, for a tick,
 * to anyone's eviction. Files new to the set wait for their turn as usual.
 */
void keep_lock_handover(struct hs_keep *k, struct kset *s)
{
	struct u64map old = { 0 };

	for (size_t i = 0; i < k->set.n; i++) {
		struct kfile *o = &k->set.files[i];

		if (o->locked && u64map_put2(&old, o->dev, o->ino, (void *)(uintptr_t)(i + 1)))
			goto out;	/* no memory: the old set unlocked first, as before */
	}
	for (size_t i = 0; i < s->n; i++) {
		struct kfile *f = &s->files[i], *o;
		uintptr_t at = (uintptr_t)u64map_get2(&old, f->dev, f->ino);
		uint64_t all = UINT64_MAX;
		struct stat st;
		int fd;

		if (!at || f->state != F_WATCHED)
			continue;
		o = &k->set.files[at - 1];
		if (o->owner != f->owner)
			continue;	/* another owner's: locked as its own, in its turn */
		if (!o->pending && o->nwins && o->size == f->size && o->mtime_sec == f->mtime_sec &&
		    o->mtime_nsec == f->mtime_nsec && same_ranges(o, f)) {
			f->wins = o->wins;
			f->nwins = o->nwins;
			f->locked = o->locked;
			o->wins = NULL;
			o->nwins = 0;
			k->set.locked_pages -= o->locked;
			k->set.locked_files--;
			o->locked = 0;
			s->locked_pages += f->locked;
			s->locked_files++;
			f->pending = P_NONE;
			continue;
		}
		if ((fd = keep_open_file(k, f, &st)) < 0)
			continue;
		keep_take_stat(f, &st);
		if (map_file(k, f, fd)) {
			keep_unmap_file(s, f);
			f->pending = P_NONE;	/* warned; again when it changes */
		} else {
			lock_file(k, s, f, &all);
		}
		close(fd);
	}
	keep_creds_use(k, 0);
out:
	u64map_free(&old);
}
