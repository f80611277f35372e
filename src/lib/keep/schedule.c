/*
 * schedule.c - when a keeper checks what, and when it backs off (see
 * schedule.h): arithmetic on the clock readings and costs it is given,
 * nothing read, nothing written.
 */
#include <assert.h>
#include <stdint.h>
#include <string.h>

#include "keep/schedule.h"

void hs_keep_sched_init(struct hs_keep_sched *s, uint64_t interval_ns, double cpu_share)
{
	memset(s, 0, sizeof(*s));
	s->interval = interval_ns;
	s->min_period = interval_ns / 4 ? interval_ns / 4 : 1;
	/* evictions told come in bursts (a file, then its neighbours): gathered a while */
	s->event_gap = s->min_period < HS_KEEP_EVENT_GAP_NS ? s->min_period : HS_KEEP_EVENT_GAP_NS;
	s->quiet = HS_KEEP_QUIET_NS;
	s->calm_ns = HS_KEEP_CALM_NS;
	s->cpu_share = cpu_share > 0 ? cpu_share : HS_KEEP_CPU_SHARE;
	/* tight at first: the first reading has just been done, losses come early */
	s->period = s->min_period;
	s->cost = HS_KEEP_COST_GUESS_NS;
	s->round_ns = interval_ns;
}

/* ---- ticks and rounds -------------------------------------------------------- */

uint64_t hs_keep_sched_period(const struct hs_keep_sched *s, size_t nlarge)
{
	/* n checks of cost ns in a period p take n * cost / p of a CPU: half the share */
	double need = 2.0 * (double)nlarge * (double)s->cost / s->cpu_share;

	return need > (double)s->period ? (uint64_t)need : s->period;
}

size_t hs_keep_sched_slice(struct hs_keep_sched *s, size_t nsmall, size_t nlarge)
{
	double p = (double)hs_keep_sched_period(s, nlarge), left, round, slice;

	if (!nsmall) {
		s->round_ns = (uint64_t)p;
		return 0;
	}
	/* the share the large files leave: at least half, by the period */
	left = s->cpu_share - (double)nlarge * (double)s->cost / p;
	/* a round of the small files within what is left, never faster than the interval */
	round = (double)nsmall * (double)s->cost / left;
	if (round < (double)s->interval)
		round = (double)s->interval;
	if (round < p)
		round = p;
	s->round_ns = (uint64_t)round;
	/* a tick every p: round / p ticks a round, each checks its share of the files */
	slice = (double)nsmall * p / round;
	if (slice < 1)
		return 1;
	return slice >= (double)nsmall ? nsmall : (size_t)(slice + 0.999999);
}

void hs_keep_sched_checked(struct hs_keep_sched *s, size_t nchecked, uint64_t cpu_ns,
			   uint64_t lost_pages)
{
	if (nchecked) {
		uint64_t per = cpu_ns / nchecked;

		/* smoothed, so that one preempted tick does not halve the rounds */
		s->cost = (3 * s->cost + (per ? per : 1)) / 4;
		if (!s->cost)
			s->cost = 1;
	}
	/* pages lost come in bursts (a job allocating): look again soon, then relax */
	if (lost_pages) {
		s->period = s->min_period;
		s->calm_ticks = 0;
	} else if (++s->calm_ticks >= 4 && s->period < s->interval) {
		s->period = s->period * 2 < s->interval ? s->period * 2 : s->interval;
	}
	/* what schedule.h promises: a cost to divide by, a period from min_period to interval */
	assert(s->cost >= 1);
	assert(s->period >= s->min_period && (s->period <= s->interval || s->period == s->min_period));
}

size_t hs_keep_sched_due(const struct hs_keep_sched *s, uint64_t elapsed)
{
	/* the checks the share pays for in that time; a long wait saves up an interval's at most */
	double n = s->cpu_share * (double)(elapsed < s->interval ? elapsed : s->interval) /
		   (double)s->cost;

	return n < 1 ? 1 : n > (double)SIZE_MAX ? SIZE_MAX : (size_t)n;
}

/* ---- backing off ---------------------------------------------------------------- */

bool hs_keep_sched_pressure(struct hs_keep_sched *s, uint64_t now)
{
	bool was = s->backed_off;

	/* a back-off soon after a resume on a low stall: the pressure paused, ask a longer calm */
	if (!was)
		s->calm_ns = !s->resumed_calm || now - s->resumed_at >= s->quiet ? HS_KEEP_CALM_NS :
			     2 * s->calm_ns < s->quiet ? 2 * s->calm_ns : s->quiet;
	s->backed_off = true;
	s->pressure_at = now;
	s->calm_known = false;
	return !was;
}

void hs_keep_sched_memory_stall(struct hs_keep_sched *s, uint64_t now, uint64_t total_us)
{
	if (!s->backed_off)
		return;
	/* the first reading, a total that went back (another file), or more stall: calm anew */
	if (!s->calm_known || total_us < s->calm_total ||
	    total_us - s->calm_total > HS_KEEP_CALM_STALL_US) {
		s->calm_known = true;
		s->calm_at = now;
		s->calm_total = total_us;
	}
}

bool hs_keep_sched_resume(struct hs_keep_sched *s, uint64_t now)
{
	/* calm: a low stall for calm_ns, and no event in that time either */
	bool calm = s->calm_known && now - s->calm_at >= s->calm_ns &&
		    now - s->pressure_at >= s->calm_ns;

	if (!s->backed_off || (!calm && now - s->pressure_at < s->quiet))
		return false;
	s->backed_off = false;
	s->calm_known = false;
	s->resumed_at = now;
	s->resumed_calm = calm;
	/* pages may have gone meanwhile: look closely again */
	s->period = s->min_period;
	s->calm_ticks = 0;
	return true;
}

/* Others' io pressure only slows the reads: it never stops the checks. */
bool hs_keep_sched_io_pressure(struct hs_keep_sched *s, uint64_t now)
{
	bool was = s->trickle;

	s->trickle = true;
	s->trickle_at = now;
	return !was;
}

bool hs_keep_sched_io_resume(struct hs_keep_sched *s, uint64_t now)
{
	if (!s->trickle || now - s->trickle_at < s->quiet)
		return false;
	s->trickle = false;
	return true;
}
