/*
 * warm-order.c - in which order a warm session's pieces reach the I/O
 * threads (the order stage of warm.h's model), and what each device is.
 *
 * Each device is probed once (sysfs): is it rotational, and how much does
 * one WILLNEED call read in full, the size requests are cut to.
 *
 * On rotational disks the pieces of a batch of files are sorted by physical
 * address (FIEMAP) before being queued. A batch holds at most half the
 * descriptors we may keep open, so memory stays bounded for any number of
 * files; it is flushed early when the I/O threads run dry.
 */
#include <errno.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/sysmacros.h>

#include "kernel/procfs.h"
#include "cache/warm-internal.h"

/* ---- devices ----------------------------------------------------------------- */

static bool read_sysfs_u64(const char *dir, const char *name, uint64_t *v)
{
	char buf[32];

	if (hs_procfs_read_at(dir, name, buf, sizeof(buf)) <= 0)
		return false;
	*v = strtoull(buf, NULL, 10);
	return true;
}

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

const struct device *warm_device_of(struct hs_warm *w, dev_t dev)
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

/* ---- physical order ---------------------------------------------------------- */

static int cmp_phys(const void *a, const void *b)
{
	const struct item *x = a, *y = b;

	if (x->phys != y->phys)
		return x->phys < y->phys ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Sort the batch by physical address and queue it, under w->lock. */
int warm_flush_batch_locked(struct hs_warm *w)
{
	int rc = 0;

	if (!w->nbatch)
		return 0;
	qsort(w->batch, w->nbatch, sizeof(*w->batch), cmp_phys);
	for (size_t i = 0; i < w->nbatch && !rc; i++)
		rc = warm_queue_push_locked(w, warm_lane_for(w, &w->batch[i]), &w->batch[i]);
	w->nbatch = 0;
	w->batch_jobs = 0;
	for (int i = 0; i < NLANES; i++)
		pthread_cond_broadcast(&w->lanes[i].work);
	return rc;
}

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
int warm_map_piece(int fd, uint64_t off, uint64_t end, struct extents *x)
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
