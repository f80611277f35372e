/*
 * events.c - the kept files the kernel tells evicted.
 *
 * As root, the kernel tells which kept files lose pages (keep-evict.h):
 * those are checked in ticks of their own, at most every second and
 * within the CPU share, so that what is evicted comes back within seconds
 * however long a round of the schedule takes. The schedule goes on beside
 * them: it sees files replaced or deleted, and whatever the events miss.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keep/keep-evict.h"
#include "keep/keeper.h"

static int cmp_ino(const void *a, const void *b)
{
	const struct ino_index *x = a, *y = b;

	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

/* The watched files sorted by inode number, to find those an event names. */
static int inos_build(struct hs_keep *k)
{
	struct kset *s = &k->set;
	struct ino_index *v = malloc((s->n ? s->n : 1) * sizeof(*v));
	size_t n = 0;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < s->n; i++)
		if (s->files[i].state == F_WATCHED)
			v[n++] = (struct ino_index){ s->files[i].ino, i };
	qsort(v, n, sizeof(*v), cmp_ino);
	free(k->inos);
	k->inos = v;
	k->ninos = n;
	k->inos_stale = false;
	return 0;
}

/* The kernel deleted a page of inode ino from the cache: its files are due. */
static void on_evicted(void *ctx, uint64_t ino)
{
	struct hs_keep *k = ctx;
	size_t lo = 0, hi;

	if (k->inos_stale && inos_build(k))
		return;	/* out of memory: the schedule finds it */
	for (hi = k->ninos; lo < hi;) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->inos[mid].ino < ino)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < k->ninos && k->inos[lo].ino == ino; lo++) {
		struct kfile *f = &k->set.files[k->inos[lo].i];

		if (f->state != F_WATCHED || f->due ||
		    hs_grow(&k->due, &k->due_cap, k->ndue + 1, sizeof(*k->due)))
			continue;
		f->due = true;
		k->due[k->ndue++] = k->inos[lo].i;
	}
}

void keep_events_drain(struct hs_keep *k)
{
	keep_evict_drain(k->evict, on_evicted, k);
}

/* Check the files told evicted, as many as the CPU share pays for. */
void keep_events_tick(struct hs_keep *k, uint64_t now)
{
	size_t max = hs_keep_sched_due(&k->sched, now - k->event_tick_at), n;
	uint64_t lost = 0;

	for (n = 0; n < k->ndue && n < max; n++) {
		struct kfile *f = &k->set.files[k->due[n]];

		f->due = false;
		/* re-armed before the look: a page that goes after it is told again */
		keep_evict_watch(k->evict, f->ino);
		lost += keep_check_file(k, k->due[n]);
	}
	k->ndue -= n;
	memmove(k->due, k->due + n, k->ndue * sizeof(*k->due));
	k->event_tick_at = now;
	keep_checked(k, 0, 0, lost, k->sched.event_gap);
}

/*
 * Watch the kept set's evictions through eBPF if this process may: else
 * (not root, an old kernel, a build without libbpf) a note says why, and
 * the schedule alone finds them.
 */
void keep_events_setup(struct hs_keep *k)
{
	struct hs_error why = { 0 };
	int rc;

	keep_evict_free(k->evict);
	k->evict = NULL;
	k->ndue = 0;
	snprintf(k->st.evictions, sizeof(k->st.evictions), "checks");
	/* locked pages are not evicted: lock mode's checks only follow the files */
	if (k->o.checks_only || k->o.mode == HS_KEEP_LOCK || k->set.nsmall + k->set.nlarge == 0)
		return;
	rc = inos_build(k);
	if (!rc)
		rc = keep_evict_open(k->ninos, &k->evict, &why);
	for (size_t i = 0; !rc && i < k->ninos; i++)
		if ((rc = keep_evict_watch(k->evict, k->inos[i].ino)))
			hs_error_set(&why, -rc, "cannot fill the eBPF map: %s", strerror(-rc));
	if (rc) {
		char note[400];
		struct hs_keep_event e = { .kind = HS_KEEP_NOTE, .what = note };

		snprintf(note, sizeof(note), "evictions are found by the checks alone, every file "
			 "within a round (the interval, or longer for many files): %s",
			 why.msg[0] ? why.msg : strerror(-rc));
		keep_emit(k, &e);
		keep_evict_free(k->evict);
		k->evict = NULL;
		return;
	}
	snprintf(k->st.evictions, sizeof(k->st.evictions), "events");
}
