/*
 * sched.c - which job of `hotset run` starts next (sched.h).
 */
#include <assert.h>
#include <stdlib.h>

#include "queue/sched.h"
#include "model/need.h"
#include "job/usage.h"

const char *hs_wait_name(enum hs_wait w)
{
	static const char *const names[] = {
		[HS_WAIT_NONE] = NULL, [HS_WAIT_CPU] = "cpu", [HS_WAIT_MEMORY] = "memory",
		[HS_WAIT_IO_PRESSURE] = "io-pressure", [HS_WAIT_NO_HISTORY] = "no-history",
		[HS_WAIT_UNKNOWN_RUNNING] = "unknown-running", [HS_WAIT_ORDER] = "order",
	};

	return (unsigned)w < sizeof(names) / sizeof(names[0]) ? names[w] : NULL;
}

/* The one place that says what a warm re-run needs: swap it for a better estimate. */
static uint64_t rerun_cache(const struct hs_run_record *r)
{
	if (r->rerun_known)
		return r->rerun_cache_bytes;
	if (r->profile_known)
		return r->working_set_bytes;
	return r->io_known ? r->read_bytes_disk : 0;
}

uint64_t hs_sched_need(const struct hs_run_record *r)
{
	/* as doctor counts it (memory.h): the cache it reads, what it writes, its peak RSS */
	struct hs_usage u = { .io_known = r->io_known, .write_bytes_disk = r->write_bytes_disk,
			      .max_rss_bytes = r->max_rss_bytes };
	struct hs_rerun_need n;

	return hs_rerun_need(rerun_cache(r), 1, &u, &n);	/* bytes: pages of one byte */
}

bool hs_sched_cpu_bound(const struct hs_run_record *r)
{
	if (r->io_wait_known)
		return r->io_wait_s <= 0.1 * r->wall_s;
	/* no I/O wait known (no cgroup): what it read from the disk says it */
	return r->io_known && r->read_bytes_disk <= r->rerun_cache_bytes / 10;
}

double hs_sched_cpu(const struct hs_run_record *r)
{
	return r->wall_s > 0 ? (r->user_s + r->sys_s) / r->wall_s : 1.0;
}

static uint64_t add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/*
 * The memory counted for a job: a job larger than the budget takes all of
 * it but the slack, and never nothing: a budget of 0 (of less than ten
 * bytes: no slack) has a job that needs memory run alone, where it would
 * have counted for nothing and every job have started at once.
 */
static uint64_t charge(const struct hs_sched *s, const struct hs_sched_job *j)
{
	uint64_t most = s->budget - s->budget / HS_SCHED_SLACK;

	return j->need > s->budget ? (most ? most : 1) : j->need;
}

/* The CPUs counted for a job: 1 without a history, never more than all of them. */
static double cpus_of(const struct hs_sched *s, const struct hs_sched_job *j)
{
	double c = j->known ? j->cpu : 1.0;

	return c > s->cpus ? s->cpus : c;
}

/* Is there a CPU for job j, with running jobs taking cpu_used of them? */
static bool cpu_free(const struct hs_sched *s, const struct hs_sched_job *j, unsigned running,
		     double cpu_used)
{
	if (s->slots)
		return running < s->slots;
	return cpu_used + cpus_of(s, j) <= (s->cpus > 0 ? s->cpus : 1.0) + 1e-9;
}

/* A running job's end as its last run's wall time foretells it: seconds from now, or -1. */
static double time_left(const struct hs_sched_job *r)
{
	double elapsed = r->elapsed > 0 ? r->elapsed : 0;	/* a clock set back */

	if (r->state != HS_Q_RUNNING || !r->known || r->wall <= 0)
		return -1;
	return r->wall > elapsed ? r->wall - elapsed : 0;
}

/*
 * Whether a job whose last run took wall seconds ends within room: with
 * the slack a re-run takes (a colder cache, a busier machine), so that a
 * job that runs a little longer than last time still delays nobody.
 */
static bool ends_within(double wall, double room)
{
	return wall > 0 && wall * HS_SCHED_BACKFILL_SLACK + 1.0 <= room;
}

/* A running job's foretold end: seconds from now, and the memory counted for it. */
struct ending {
	double t;
	uint64_t charge;
};

static int by_end(const void *a, const void *b)
{
	double x = ((const struct ending *)a)->t, y = ((const struct ending *)b)->t;

	return (x > y) - (x < y);
}

/*
 * Seconds until the running jobs, ending as their last runs foretell,
 * leave room for job h (whose charge is h_charge) beside those still
 * running; -1 when no end in sight makes room. *spare: the memory left
 * beside h then, which a job started now may hold without delaying it.
 *
 * The running jobs in the order they end, the memory they free summed on
 * the way: the first end after which h fits. O(n + r log r) for r running
 * jobs (each end against every other was O(n^2) on a queue of n jobs: 100
 * million steps a call at 10,000). Out of memory, -1: no backfilling.
 */
static double room_in(const struct hs_sched *s, const struct hs_sched_job *jobs, size_t n,
		      uint64_t used, uint64_t h_charge, uint64_t *spare)
{
	struct ending *e;
	size_t r = 0;
	uint64_t freed = 0;
	double best = -1;

	*spare = 0;
	for (size_t i = 0; i < n; i++)
		r += time_left(&jobs[i]) >= 0;
	if (!r || !(e = malloc(r * sizeof(*e))))
		return -1;
	r = 0;
	for (size_t i = 0; i < n; i++) {
		double t = time_left(&jobs[i]);

		if (t >= 0)
			e[r++] = (struct ending){ t, charge(s, &jobs[i]) };
	}
	qsort(e, r, sizeof(*e), by_end);
	for (size_t i = 0; i < r; i++) {
		uint64_t then;

		freed = add(freed, e[i].charge);
		if (i + 1 < r && e[i + 1].t == e[i].t)
			continue;	/* the jobs that end at the same time free theirs together */
		then = add(used - (freed < used ? freed : used), h_charge);
		if (then <= s->budget) {
			best = e[i].t;
			*spare = s->budget - then;
			break;
		}
	}
	free(e);
	return best;
}

/* What runs now, as hs_sched_next() weighs a pending job against it. */
struct running {
	unsigned n;		/* jobs running */
	double cpus;		/* the CPUs they take */
	uint64_t used;		/* the memory charged to those whose history is known */
	bool unknown;		/* one of them has no history: its memory is unknown */
	bool all_cpu_bound;	/* each of them is known and CPU-bound */
};

static void tally_running(const struct hs_sched *s, const struct hs_sched_job *jobs, size_t n,
			  struct running *r)
{
	*r = (struct running){ .all_cpu_bound = true };
	for (size_t i = 0; i < n; i++) {
		/* what the queue knows, never a file's text: parsed and checked before */
		assert((unsigned)jobs[i].state <= HS_Q_DONE);
		assert(!jobs[i].known || (jobs[i].cpu >= 0 && jobs[i].wall >= 0));
		if (jobs[i].state != HS_Q_RUNNING)
			continue;
		r->n++;
		r->cpus += cpus_of(s, &jobs[i]);
		if (!jobs[i].known)
			r->unknown = true, r->all_cpu_bound = false;
		else {
			r->used = add(r->used, charge(s, &jobs[i]));
			r->all_cpu_bound &= jobs[i].cpu_bound;
		}
	}
}

ssize_t hs_sched_next(const struct hs_sched *s, struct hs_sched_job *jobs, size_t n)
{
	struct running r;
	unsigned running;
	bool unknown_running, all_cpu_bound, high_pressure;
	uint64_t used, reserved = 0;
	double cpu_used;
	bool held = false;	/* a job waits for memory: later ones must fit beside it */
	bool alone_held = false;	/* that job has no history: no one passes */
	double room = -1;	/* seconds until there is room for the held job, or -1 */
	uint64_t spare = 0;	/* the memory left beside it then */
	ssize_t chosen = -1;

	assert(n == 0 || jobs);
	assert(s->slots || s->cpus >= 0);
	tally_running(s, jobs, n, &r);
	running = r.n, cpu_used = r.cpus, used = r.used;
	unknown_running = r.unknown, all_cpu_bound = r.all_cpu_bound;
	high_pressure = s->pressure_known && s->io_pressure > HS_SCHED_IO_PRESSURE;
	for (size_t i = 0; i < n; i++) {
		struct hs_sched_job *j = &jobs[i];

		if (j->state != HS_Q_PENDING)
			continue;
		j->wait = HS_WAIT_NONE;
		if (chosen >= 0)
			continue;	/* decided on the next call, once it runs */
		if (running && !cpu_free(s, j, running, cpu_used)) {
			j->wait = HS_WAIT_CPU;
			/*
			 * The first job that waits keeps its place for memory
			 * too: those after it start only if they fit beside it,
			 * or it would find the memory taken once a CPU is free.
			 */
			if (!held && j->known) {
				held = true;
				reserved = charge(s, j);
			}
			continue;
		}
		if (running == 0) {
			chosen = (ssize_t)i;	/* nothing runs: the first pending job goes */
			continue;
		}
		if (!j->known) {
			/* its memory is not known: it could take what the held one needs */
			j->wait = held		? HS_WAIT_ORDER
				  : all_cpu_bound ? HS_WAIT_NONE
						  : HS_WAIT_NO_HISTORY;
		} else if (unknown_running && !j->cpu_bound) {
			j->wait = HS_WAIT_UNKNOWN_RUNNING;
		} else if (alone_held) {
			j->wait = HS_WAIT_ORDER;
		} else if (add(add(used, charge(s, j)), reserved) > s->budget) {
			j->wait = HS_WAIT_MEMORY;
		} else if (!j->cpu_bound && high_pressure) {
			j->wait = HS_WAIT_IO_PRESSURE;
		}
		if (j->wait == HS_WAIT_NONE) {
			chosen = (ssize_t)i;
			continue;
		}
		if (j->wait == HS_WAIT_MEMORY && held) {
			/*
			 * It would not fit beside the one held and all that runs
			 * now. It may still run now if it fits, and its last run
			 * says it ends before the running jobs leave room for the
			 * held one, or it fits in what is left beside the held
			 * one then: it delays nobody (backfilling, as EASY
			 * schedulers do).
			 */
			if (room > 0 && (ends_within(j->wall, room) || charge(s, j) <= spare) &&
			    add(used, charge(s, j)) <= s->budget &&
			    (j->cpu_bound || !high_pressure)) {
				j->wait = HS_WAIT_NONE;
				chosen = (ssize_t)i;
				continue;
			}
			j->wait = HS_WAIT_ORDER;
		}
		if (!held && (j->wait == HS_WAIT_MEMORY || j->wait == HS_WAIT_NO_HISTORY ||
			      j->wait == HS_WAIT_UNKNOWN_RUNNING)) {
			/* the first job that waits for room keeps its place */
			held = true;
			if (!j->known) {
				alone_held = true;
			} else {
				reserved = charge(s, j);
				if (j->wait == HS_WAIT_MEMORY)
					room = room_in(s, jobs, n, used, reserved, &spare);
			}
		}
	}
	return chosen;
}

ssize_t hs_sched_warm_next(const struct hs_sched *s, const struct hs_sched_job *jobs, size_t n)
{
	uint64_t used = 0;
	size_t running = 0;

	for (size_t i = 0; i < n; i++) {
		const struct hs_sched_job *j = &jobs[i];

		if (j->state != HS_Q_RUNNING)
			continue;
		/* a job that waits for the disk (or may) would wait longer for the warmer */
		if (!j->known || !j->cpu_bound)
			return -1;
		running++;
		used += j->need;
	}
	if (!running)
		return -1;	/* it starts at once: nothing to warm ahead of it */
	for (size_t i = 0; i < n; i++) {
		const struct hs_sched_job *j = &jobs[i];

		if (j->state != HS_Q_PENDING)
			continue;
		if (j->wait != HS_WAIT_CPU || !j->known || j->warmed ||
		    used + j->need > s->budget)
			return -1;	/* the next job, not one further down */
		return (ssize_t)i;
	}
	return -1;
}
