/*
 * pressure.c - when a keeper stops reading: memory pressure (PSI triggers
 * on the machine's memory, or its averages where the kernel refuses
 * triggers; pages read back and lost again at once) backs it off wholly
 * until the pressure has gone; others' io pressure, told from the stall
 * its own reads cause, slows it to a trickle. The rules of when are
 * schedule.c's; this module reads the files, makes the triggers, and
 * tells the events.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "keep/keeper.h"
#include "kernel/cgroup.h"
#include "kernel/psi.h"

static const char *const resource[2] = { "memory", "io" };

/*
 * Where pressure is read. Memory: the machine's, whatever cgroup the
 * keeper is in: the pages it reads take memory others may need. I/O: the
 * keeper's cgroup v2 when it shares it with other processes (a box, a
 * container, a job's cgroup): the stalls there are those of the jobs it
 * serves, and those of the machine's other jobs, which its reads do not
 * slow, stay out; else (the root cgroup, or one of its own, as a
 * service's) the machine's; or the cgroup named (--io-cgroup: the jobs'
 * slice, for a keeper in a cgroup of its own).
 */
void keep_pressure_files(struct hs_keep *k)
{
	char mnt[PATH_MAX];
	struct hs_psi psi;

	for (int i = 0; i < 2; i++) {
		k->pdir[i] = k->o.pressure_dir ? k->o.pressure_dir : "/proc/pressure";
		k->pname[i] = resource[i];
	}
	if (k->o.io_cgroup) {
		k->pdir[1] = k->o.io_cgroup;
		k->pname[1] = "io.pressure";
	} else if (!k->o.pressure_dir && hs_cgroup2_dirs(k->io_dir, mnt, sizeof(mnt)) == 0 &&
	    k->io_dir[0] && strcmp(k->io_dir, mnt) && hs_cgroup_nprocs(k->io_dir) > 1 &&
	    hs_psi_read(k->io_dir, "io.pressure", &psi) == 0) {
		k->pdir[1] = k->io_dir;
		k->pname[1] = "io.pressure";
	}
	if ((size_t)snprintf(k->st.io_pressure, sizeof(k->st.io_pressure), "%s/%s", k->pdir[1],
			     k->pname[1]) >= sizeof(k->st.io_pressure))
		k->st.io_pressure[0] = '\0';	/* too long to show */
}

/*
 * A trigger for resource i: the thresholds asked for, else the same share
 * over a window of 2 s (unprivileged users may only use multiples of 2 s),
 * else its averages, read each tick, with a note saying why.
 */
void keep_pressure_setup(struct hs_keep *k)
{
	const struct hs_keep_trigger def[2] = { { 100000, 1000000 }, { 150000, 1000000 } };
	const struct hs_keep_trigger *want[2] = { &k->o.memory, &k->o.io };
	int nfail = 0, ntrig = 0;

	for (int i = 0; i < 2; i++) {
		struct hs_keep_trigger t = want[i]->window_us ? *want[i] : def[i];
		const char *dir = k->pdir[i], *name = k->pname[i];
		struct hs_psi psi;
		char note[PATH_MAX + 256];
		int fd;

		k->trig[i] = -1;
		k->threshold[i] = 100.0 * (double)t.stall_us / (double)t.window_us;
		fd = hs_psi_trigger(dir, name, t.stall_us, t.window_us);
		if (fd < 0 && fd != -ENOENT && t.window_us % 2000000) {
			uint64_t w = (t.window_us / 2000000 + 1) * 2000000;
			int again = hs_psi_trigger(dir, name, t.stall_us * w / t.window_us, w);

			if (again >= 0) {
				fd = again;
				t.stall_us = t.stall_us * w / t.window_us;
				t.window_us = w;
			}
		}
		if (fd >= 0) {
			k->trig[i] = fd;
			k->used[i] = t;
			ntrig++;
			continue;
		}
		if (hs_psi_read(dir, name, &psi) < 0) {
			snprintf(note, sizeof(note), "no pressure stall information in %s/%s (%s): "
				 "not backing off under %s pressure", dir, name, strerror(-fd),
				 resource[i]);
			nfail++;
		} else {
			snprintf(note, sizeof(note), "cannot create a PSI trigger on %s/%s (%s%s): "
				 "reading its avg10 each tick instead, backing off above %.1f%%",
				 dir, name, strerror(-fd),
				 fd == -EACCES || fd == -EPERM ?
				 "; triggers need CAP_SYS_RESOURCE before Linux 6.5" : "",
				 k->threshold[i]);
			k->averages[i] = true;
		}
		{
			struct hs_keep_event e = { .kind = HS_KEEP_NOTE, .what = note };

			keep_emit(k, &e);
		}
	}
	snprintf(k->st.pressure, sizeof(k->st.pressure), "%s",
		 ntrig == 2 ? "trigger" : nfail == 2 ? "none" : "averages");
}

/* avg10 of "some" for resource i, or -1. */
double keep_avg10(struct hs_keep *k, int i)
{
	struct hs_psi psi;

	return hs_psi_read(k->pdir[i], k->pname[i], &psi) < 0 ? -1 : psi.some.avg10;
}

/* What the keeper backs off for: memory, or io if it only trickles. */
static void set_reason(struct hs_keep *k)
{
	k->st.backed_off = k->sched.backed_off || k->sched.trickle;
	snprintf(k->st.backoff_reason, sizeof(k->st.backoff_reason), "%s",
		 k->sched.backed_off ? "memory" : k->sched.trickle ? "io" : "");
	k->dirty = true;
}

void keep_pressure_event(struct hs_keep *k, int i, uint64_t now, const char *how)
{
	double v = keep_avg10(k, i);

	if (!hs_keep_sched_pressure(&k->sched, now))
		return;
	k->st.backoffs++;
	k->st.last_backoff_ns = hs_realtime_ns();
	set_reason(k);
	{
		struct hs_keep_event e = { .kind = HS_KEEP_BACKOFF, .resource = resource[i],
					   .value = v, .how = how, .trigger = k->used[i],
					   .threshold = k->threshold[i], .share = -1 };

		keep_emit(k, &e);
	}
}

/* Others' io pressure (share: their stall measured, percent, or -1): a trickle. */
static void io_pressure(struct hs_keep *k, uint64_t now, const char *how, double share)
{
	if (!hs_keep_sched_io_pressure(&k->sched, now))
		return;
	k->st.backoffs++;
	k->st.last_backoff_ns = hs_realtime_ns();
	set_reason(k);
	{
		struct hs_keep_event e = { .kind = HS_KEEP_BACKOFF, .resource = "io",
					   .value = keep_avg10(k, 1), .how = how, .trigger = k->used[1],
					   .threshold = k->threshold[1], .share = share };

		keep_emit(k, &e);
	}
}

/* ns: the span an io event tells of (the trigger's window; avg10's 10 s) */
static uint64_t io_span(const struct hs_keep *k)
{
	return k->trig[1] >= 0 && k->used[1].window_us ? k->used[1].window_us * 1000 : 10 * NS;
}

/* Others' io stall is measured from now: the total now. */
static void io_mark(struct hs_keep *k, uint64_t now)
{
	hs_psi_mark(k->pdir[1], k->pname[1], now, &k->mark);
}

/*
 * io pressure told at now (by the trigger, or the averages). PSI counts
 * our own reads' stalls too and cannot say whose a stall was; but the
 * reads are ours to stop. So if we read within the span the event tells
 * of, we read nothing for a window and take the stall of that window,
 * which is all others' (io_decide); else the stall was others' already.
 */
void keep_io_event(struct hs_keep *k, uint64_t now, const char *how)
{
	uint64_t w = k->used[1].window_us ? k->used[1].window_us * 1000 : NS;

	if (!k->read_end || now >= k->read_end + io_span(k)) {
		io_pressure(k, now, how, -1);
		return;
	}
	if (!k->io_check_at) {
		if (k->read_end + w <= now)	/* a window since already: measured from now */
			io_mark(k, now);
		k->io_check_at = k->mark.at_ns + w;
		k->io_check_how = how;
	}
}

/* Our reads of bytes, begun at began, ended now. */
void keep_read_done(struct hs_keep *k, uint64_t began, uint64_t bytes)
{
	uint64_t now = hs_monotonic_ns();

	k->read_end = now;
	io_mark(k, now);
	/* a trickle reads at most an HS_KEEP_TRICKLE-th of the time */
	k->next_read_at = now + (HS_KEEP_TRICKLE - 1) * (now - began);
	if (bytes && now > began)
		k->read_bps = (double)bytes * 1e9 / (double)(now - began);
}

/*
 * What a trickle may read in one go, of budget bytes at the full rate: an
 * HS_KEEP_TRICKLE-th, and no more than the last reads' speed takes in
 * HS_KEEP_TRICKLE_BURST_NS (a slow or throttled disk: short bursts, not
 * one long one every so often).
 */
uint64_t keep_trickle_budget(const struct hs_keep *k, uint64_t budget)
{
	double burst = k->read_bps * (double)HS_KEEP_TRICKLE_BURST_NS / 1e9;

	budget /= HS_KEEP_TRICKLE;
	if (k->read_bps > 0 && burst < (double)budget)
		budget = (uint64_t)burst;
	return budget > HS_KEEP_TRICKLE_MIN ? budget : HS_KEEP_TRICKLE_MIN;
}

bool keep_reads_wait(const struct hs_keep *k, uint64_t now)
{
	/* measuring whose the io stall is, or a trickle that has read its share of the time */
	return k->io_check_at || (k->sched.trickle && now < k->next_read_at);
}

/* The window after an io event, without reads of ours, is over: whose was it? */
static void io_decide(struct hs_keep *k, uint64_t now)
{
	struct hs_psi_mark m;
	double share;

	k->io_check_at = 0;
	if (!k->mark.known || now <= k->mark.at_ns)
		return;	/* nothing to measure from: the file is not read again */
	hs_psi_mark(k->pdir[1], k->pname[1], now, &m);
	share = hs_psi_share(&k->mark, &m);
	if (share >= 0 && share >= k->threshold[1])
		io_pressure(k, now, k->io_check_how, share > 100 ? 100 : share);
}

/*
 * Whether anyone stalled on memory since f was read back: pages evicted
 * again with no stall at all were taken by a proactive reclaimer (DAMON's
 * pageout, memory.reclaim), not by a shortage, and are read back as any
 * refault. Unknown (no PSI) counts as stalled.
 */
bool keep_stalled_since(struct hs_keep *k, const struct kfile *f)
{
	struct hs_psi psi;

	if (f->read_mem == UINT64_MAX || hs_psi_read(k->pdir[0], k->pname[0], &psi) < 0)
		return true;
	return psi.some.total >= f->read_mem + HS_KEEP_THRASH_STALL_US;
}

void keep_pressure_trigger(struct hs_keep *k, int r, short revents)
{
	if (revents & POLLERR) {	/* the pressure file went away */
		close(k->trig[r]);
		k->trig[r] = -1;
	} else if (r == 1) {
		keep_io_event(k, hs_monotonic_ns(), "trigger");
	} else if (hs_monotonic_ns() >= k->own_mem_until || keep_avg10(k, 0) >= k->threshold[0]) {
		/* within a window of our reads, only if more than our burst (keep_rewarm) */
		keep_pressure_event(k, 0, hs_monotonic_ns(), "trigger");
	}
}

void keep_pressure_averages(struct hs_keep *k, uint64_t now)
{
	if (k->averages[0] && keep_avg10(k, 0) >= k->threshold[0])
		keep_pressure_event(k, 0, now, "averages");
	if (k->averages[1] && keep_avg10(k, 1) >= k->threshold[1])
		keep_io_event(k, now, "averages");
}

bool keep_pressure_resume(struct hs_keep *k, uint64_t now)
{
	struct hs_psi psi;
	bool tick = false;

	if (k->sched.backed_off && hs_psi_read(k->pdir[0], k->pname[0], &psi) == 0)
		hs_keep_sched_memory_stall(&k->sched, now, psi.some.total);
	for (int i = 0; i < 2; i++) {
		struct hs_keep_event e = { .kind = HS_KEEP_RESUMED, .resource = resource[i] };

		if (i == 0 ? !k->sched.backed_off || !hs_keep_sched_resume(&k->sched, now) :
			     !k->sched.trickle || !hs_keep_sched_io_resume(&k->sched, now))
			continue;
		set_reason(k);
		e.trickle = k->sched.trickle;
		e.calm_ns = i == 0 && k->sched.resumed_calm ? k->sched.calm_ns : 0;
		keep_emit(k, &e);
		tick = true;
	}
	if (k->io_check_at && now >= k->io_check_at) {
		io_decide(k, now);
		if (k->npend)
			tick = true;	/* the reads it held back */
	}
	return tick;
}
