/*
 * keep.c - the keeper (keep.h): set up, the loop that waits for signals,
 * pressure triggers, eviction events and the next tick, a tick's checks,
 * reloads, and the state written after what changed it. The parts it
 * calls are listed in keeper.h.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "keep/keep-evict.h"
#include "keep/keeper.h"

void keep_emit(struct hs_keep *k, struct hs_keep_event *e)
{
	if (k->o.event)
		k->o.event(k->o.ctx, e);
}

void keep_warn(struct hs_keep *k, const char *path, int errnum, const char *what)
{
	struct hs_keep_event e = { .kind = HS_KEEP_WARN, .path = path, .errnum = errnum,
				   .what = what };

	keep_emit(k, &e);
}

/*
 * The CPU time of this thread: what the checks cost, whatever else the
 * process does meanwhile (warm's readers are threads of their own).
 */
static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * NS + (uint64_t)ts.tv_nsec;
}

/*
 * A tick checked n files since cpu0 (thread CPU ns) and found lost pages
 * missing: tell the schedule, count them, and bring back what is missing
 * (lock mode: lock what is pending), the rate's worth of period ns (0: of
 * the schedule's period). A tick of files told evicted (n = 0) checks too
 * few, each just woken, to measure the cost of a check in a round: it
 * leaves the estimate alone.
 */
void keep_checked(struct hs_keep *k, size_t n, uint64_t cpu0, uint64_t lost, uint64_t period)
{
	keep_creds_use(k, 0);	/* the checks are done */
	hs_keep_sched_checked(&k->sched, n, n ? thread_cpu_ns() - cpu0 : 0, lost);
	if (lost) {
		k->st.refault_pages += lost;
		k->dirty = true;
	}
	k->st.round_ns = k->sched.round_ns;
	if (k->thrashing) {
		k->thrashing = false;
		keep_pressure_event(k, 0, hs_monotonic_ns(), "thrashing");
		return;
	}
	if (!period)
		period = hs_keep_sched_period(&k->sched, k->set.nlarge);
	if (k->o.mode == HS_KEEP_LOCK)
		keep_lock_pending(k, period);
	else
		keep_rewarm(k, period, lost);
	k->st.locked_files = k->set.locked_files;
	k->st.locked_bytes = k->set.locked_pages * hs_page_size();
}

/* A tick: every large file, then the next slice of the small ones, round-robin. */
static void tick(struct hs_keep *k)
{
	struct kset *s = &k->set;
	size_t slice = hs_keep_sched_slice(&k->sched, s->nsmall, s->nlarge), n = 0;
	uint64_t t0 = thread_cpu_ns(), lost = 0;
	const bool locking = k->o.mode == HS_KEEP_LOCK;

	for (size_t i = 0; i < s->nlarge; i++, n++)
		if (locking)
			keep_check_locked(k, s->large[i]);
		else
			lost += keep_check_file(k, s->large[i]);
	for (size_t j = 0; j < slice; j++, n++) {
		if (k->cursor >= s->nsmall)
			k->cursor = 0;
		if (locking)
			keep_check_locked(k, s->small[k->cursor++]);
		else
			lost += keep_check_file(k, s->small[k->cursor++]);
	}
	keep_checked(k, n, t0, lost, 0);
}

/*
 * The state and the owners' views, written as the keeper (root's files, a
 * root keeper's, are not the owners'); a state that cannot be written is
 * said each time: --status would show an old one.
 */
static int write_state(struct hs_keep *k)
{
	int rc;

	keep_creds_use(k, 0);	/* the state is the keeper's */
	rc = hs_keep_state_write(k->o.state, &k->st);
	keep_write_views(k);

	k->dirty = false;
	if (rc) {
		char what[128];

		snprintf(what, sizeof(what), "cannot write the state file: %s", strerror(-rc));
		keep_warn(k, k->o.state, 0, what);
	}
	return rc;
}

/* The residency of none of the files can be known: nothing to keep. -EPERM with err. */
static int none_known(struct hs_keep *k, struct hs_error *err)
{
	if (geteuid() != 0)
		return hs_error_set(err, EPERM, "the residency of none of the %zu files can be "
				    "known to this user (uid %d): the kernel tells it only to a "
				    "file's owner, to users who may write it, and to root "
				    "(CAP_FOWNER or CAP_DAC_OVERRIDE); run keep as root or as the "
				    "files' owner", k->set.n, (int)geteuid());
	return hs_error_set(err, EPERM, "the residency of none of the %zu files can be "
			    "known to the owners of the profiles, whose credentials a "
			    "root keeper reads a profile's files with: the kernel tells it "
			    "only to a file's owner and to users who may write it; a "
			    "profile of root's is read as root", k->set.n);
}

/* The state of this run: the counters go on from the last run's, if its state is there. */
static void state_start(struct hs_keep *k)
{
	const struct hs_keep_opts *o = &k->o;
	struct hs_keep_state old;

	if (hs_keep_state_read(o->state, &old, NULL) == 0) {
		k->st.refault_pages = old.refault_pages;
		k->st.rewarmed_pages = old.rewarmed_pages;
		k->st.rewarms = old.rewarms;
		k->st.backoffs = old.backoffs;
		k->st.last_rewarm_ns = old.last_rewarm_ns;
		k->st.last_backoff_ns = old.last_backoff_ns;
		k->st.since_ns = old.since_ns;
		hs_keep_state_release(&old);
	}
	k->st.started_ns = hs_realtime_ns();
	if (!k->st.since_ns)
		k->st.since_ns = k->st.started_ns;
	k->st.pid = getpid();
	k->st.running = true;
	k->st.budget_bytes = o->budget;
	k->st.interval_ns = o->interval_ns;
	k->st.round_ns = o->interval_ns;
	snprintf(k->st.evictions, sizeof(k->st.evictions), "checks");
	k->st.profiles = (char **)o->profiles;	/* not owned: never released */
	k->st.nprofiles = o->nprofiles;
	snprintf(k->st.mode, sizeof(k->st.mode), "%s", o->mode == HS_KEEP_LOCK ? "lock" : "watch");
	keep_set_counts(k);
}

int hs_keep_new(const struct hs_keep_opts *o, struct hs_keep **out, struct hs_error *err)
{
	struct hs_keep *k = calloc(1, sizeof(*k));
	int rc;

	if (!k)
		return -ENOMEM;
	k->o = *o;
	if (!k->o.interval_ns)
		k->o.interval_ns = 10 * NS;
	if (!k->o.rate)
		k->o.rate = 64u << 20;
	k->trig[0] = k->trig[1] = -1;
	pthread_mutex_init(&k->lock, NULL);
	hs_keep_sched_init(&k->sched, k->o.interval_ns, k->o.cpu_share);
	/* the set first: what it holds decides the rest (the lock limit, memory.low) */
	if ((rc = keep_owner_self(k)) || (rc = keep_set_load(k, &k->set, err)))
		goto fail;
	keep_owners_activate(k);
	if (k->set.n && k->set.unknown == k->set.n) {
		rc = none_known(k, err);
		goto fail;
	}
	state_start(k);
	if ((o->mode == HS_KEEP_LOCK && (rc = keep_lock_limit(k, err))) ||
	    (o->protect && (rc = keep_protect_start(k, err))) || (rc = keep_pend_from_set(k)))
		goto fail;
	k->initial = o->mode == HS_KEEP_LOCK;
	/* here, before a fork: the cgroup is shared with no waiting parent */
	keep_pressure_files(k);
	*out = k;
	return 0;
fail:
	hs_keep_free(k);
	return rc;
}

const struct hs_keep_state *hs_keep_state(const struct hs_keep *k)
{
	return &k->st;
}

/*
 * SIGHUP: the profiles loaded anew, counters kept; a set that cannot be
 * loaded leaves the one kept as it is (a profile being rewritten, say).
 */
static void reload(struct hs_keep *k)
{
	struct hs_error err = { 0 };
	struct kset s;
	int rc;

	if ((rc = keep_set_load(k, &s, &err))) {
		char what[400];

		snprintf(what, sizeof(what), "cannot reload the profiles (%s): keeping the "
			 "previous ones", err.msg[0] ? err.msg : strerror(-rc));
		keep_warn(k, NULL, 0, what);
		return;
	}
	if (k->o.mode == HS_KEEP_LOCK)
		keep_lock_handover(k, &s);
	keep_set_free(&k->set);	/* what it still locks is no longer kept */
	k->set = s;
	k->cursor = 0;
	keep_owners_activate(k);
	keep_set_counts(k);
	keep_pend_from_set(k);
	keep_events_setup(k);
	k->dirty = true;
	keep_protect_update(k);
	{
		struct hs_keep_event e = { .kind = HS_KEEP_RELOADED, .files = s.n, .pages = s.pages,
					   .bytes = s.bytes, .unknown = s.unknown, .stale = s.stale };

		keep_emit(k, &e);
	}
}

/* SIGHUP reloads the profiles; SIGTERM and SIGINT stop the keeper at the end of this turn. */
static void read_signal(struct hs_keep *k)
{
	struct signalfd_siginfo si;

	while (read(k->o.signal_fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGHUP) {
			reload(k);
		} else {
			k->stop = true;
			k->stop_signal = (int)si.ssi_signo;
		}
	}
}

static uint64_t earliest(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* Before the loop: the pressure watch, --protect said, the state written, STARTED. */
static void run_start(struct hs_keep *k)
{
	k->st.pid = getpid();	/* the caller may have forked since hs_keep_new() */
	keep_pressure_setup(k);
	if (k->st.protect_cgroup[0]) {
		struct hs_keep_event e = { .kind = HS_KEEP_PROTECTED, .path = k->st.protect_cgroup,
					   .bytes = k->st.protected_bytes };

		keep_emit(k, &e);
	}
	keep_events_setup(k);
	/* the state first: STARTED says the keeper is ready, --status finds it */
	write_state(k);
	{
		struct hs_keep_event e = { .kind = HS_KEEP_STARTED, .profiles = k->o.nprofiles,
					   .files = k->set.n, .pages = k->set.pages,
					   .bytes = k->set.bytes, .budget = k->o.budget,
					   .stale = k->set.stale, .unknown = k->set.unknown };

		keep_emit(k, &e);
	}
}

/*
 * What is due at now: a tick (next: when, updated), the files told
 * evicted. Returns the clock after them.
 */
static uint64_t run_due(struct hs_keep *k, uint64_t now, uint64_t *next)
{
	if (now >= *next) {
		keep_pressure_averages(k, now);
		if (!k->sched.backed_off)
			tick(k);
		if (k->dirty)
			write_state(k);
		now = hs_monotonic_ns();
		/* the first locking goes on at once, a burst a tick (not while backed off) */
		*next = k->initial && k->npend && !k->sched.backed_off ? now :
			now + hs_keep_sched_period(&k->sched, k->set.nlarge);
	}
	if (k->ndue && !k->sched.backed_off &&
	    now >= k->event_tick_at + k->sched.event_gap) {
		keep_events_tick(k, now);
		if (k->dirty)
			write_state(k);
		now = hs_monotonic_ns();
	}
	return now;
}

/* ms to wait at now for the earliest of what is due (next: the tick), rounded up. */
static int run_timeout(const struct hs_keep *k, uint64_t now, uint64_t next)
{
	uint64_t wake = next, wait_ns;

	/* any of it may be past (a long event tick) */
	if (k->ndue && !k->sched.backed_off)
		wake = earliest(wake, k->event_tick_at + k->sched.event_gap);
	if (k->sched.backed_off)	/* the stall is read a few times a calm */
		wake = earliest(earliest(wake, k->sched.pressure_at + k->sched.quiet),
				now + HS_KEEP_CALM_NS / 4);
	if (k->sched.trickle)
		wake = earliest(wake, k->sched.trickle_at + k->sched.quiet);
	if (k->io_check_at)
		wake = earliest(wake, k->io_check_at);
	wait_ns = wake > now ? wake - now : 0;
	return wait_ns / 1000000 < INT_MAX ? (int)((wait_ns + 999999) / 1000000) : INT_MAX;
}

/* Wait up to timeout ms for a signal, a trigger or eviction events, and take them. 0 or -errno. */
static int run_wait(struct hs_keep *k, int timeout)
{
	struct pollfd p[4];
	int n = 0, rc;

	if (k->o.signal_fd >= 0)
		p[n++] = (struct pollfd){ .fd = k->o.signal_fd, .events = POLLIN };
	for (int i = 0; i < 2; i++)
		if (k->trig[i] >= 0)
			p[n++] = (struct pollfd){ .fd = k->trig[i], .events = POLLPRI };
	if (k->evict)
		p[n++] = (struct pollfd){ .fd = keep_evict_fd(k->evict), .events = POLLIN };
	rc = poll(p, (nfds_t)n, timeout);
	if (rc < 0 && errno != EINTR)
		return -errno;
	for (int i = 0; rc > 0 && i < n; i++) {
		if (!p[i].revents)
			continue;
		if (p[i].fd == k->o.signal_fd) {
			read_signal(k);
			continue;
		}
		if (k->evict && p[i].fd == keep_evict_fd(k->evict)) {
			keep_events_drain(k);
			continue;
		}
		for (int r = 0; r < 2; r++)
			if (p[i].fd == k->trig[r])
				keep_pressure_trigger(k, r, p[i].revents);
	}
	return 0;
}

int hs_keep_run(struct hs_keep *k)
{
	uint64_t next = 0;
	int rc;

	run_start(k);
	/* each turn: the end of a back-off, what is due, then a wait for the next or an event */
	while (!k->stop) {
		uint64_t now = hs_monotonic_ns();

		if (keep_pressure_resume(k, now))
			next = now;
		now = run_due(k, now, &next);
		if ((rc = run_wait(k, run_timeout(k, now, next))))
			return rc;
	}
	{
		struct hs_keep_event e = { .kind = HS_KEEP_EXITING, .signal = k->stop_signal };

		keep_emit(k, &e);
	}
	k->st.running = false;
	/* what it did to the machine undone, then the state says it ended cleanly */
	keep_unmap_all(&k->set);	/* lock mode: everything unlocked */
	k->st.locked_files = k->st.locked_bytes = 0;
	keep_protect_end(k);
	write_state(k);
	return k->stop_signal;
}

void hs_keep_free(struct hs_keep *k)
{
	if (!k)
		return;
	keep_protect_end(k);	/* if hs_keep_run() did not */
	keep_creds_use(k, 0);
	keep_set_free(&k->set);
	keep_owners_free(k);
	free(k->pend);
	keep_evict_free(k->evict);
	free(k->inos);
	free(k->due);
	for (int i = 0; i < 2; i++)
		if (k->trig[i] >= 0)
			close(k->trig[i]);
	pthread_mutex_destroy(&k->lock);
	free(k);
}
