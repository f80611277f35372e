/*
 * schedule.h - when a keeper checks what, and when it stops reading: the
 * pure part of keep's scheduling. Every instant is a number passed in and
 * every pressure event a call, so that the rules are tested with a fake
 * clock (tests/unit/test-keep.c); the keeper (keep.h) feeds them what it
 * measures and acts on what they say.
 *
 * It owns struct hs_keep_sched: how long a check costs, how often ticks
 * come, how many small files a tick checks, and the back-off state of a
 * keeper under memory pressure (no reads, no checks) or others' io
 * pressure (reads at a trickle).
 */
#ifndef HOTSET_KEEP_SCHEDULE_H
#define HOTSET_KEEP_SCHEDULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Files whose kept part is at least this many bytes are "large": checked
 * every tick, since one check covers many pages. The others are checked in
 * rounds, a slice each tick.
 */
#define HS_KEEP_LARGE_BYTES (UINT64_C(1) << 20)

struct hs_keep_sched {
	/* settings (hs_keep_sched_init) */
	uint64_t interval;	/* ns: a round of every file takes this long, at most
				 * (unless the CPU share stretches it) */
	uint64_t min_period;	/* ns: ticks this close after refaults (interval / 4) */
	uint64_t event_gap;	/* ns between ticks of files told evicted (min_period,
				 * 1 s at most) */
	uint64_t quiet;		/* ns without pressure events before resuming */
	double cpu_share;	/* checks use at most this fraction of one CPU */
	/* state */
	uint64_t period;	/* ns between ticks, min_period .. interval */
	uint64_t cost;		/* ns of CPU per file check, measured (smoothed) */
	unsigned calm_ticks;	/* ticks since pages were last found missing */
	bool backed_off;	/* memory pressure: no checks, no reads */
	uint64_t pressure_at;	/* ns: the last pressure event */
	bool calm_known;	/* backed off, the memory stall read since calm_at */
	uint64_t calm_at;	/* ns: since then the stall stayed low */
	uint64_t calm_total;	/* us: memory "some total" at calm_at */
	uint64_t calm_ns;	/* ns of low stall that end a back-off (HS_KEEP_CALM_NS,
				 * doubled when a back-off follows one soon) */
	uint64_t resumed_at;	/* ns: the last resume */
	bool resumed_calm;	/* it came from a low stall, not from quiet */
	bool trickle;		/* others' io pressure: reads at a trickle */
	uint64_t trickle_at;	/* ns: the last such event */
	uint64_t round_ns;	/* what the last slice implied a round takes */
};

/* Defaults: the first check cost is a guess, corrected by the first tick. */
#define HS_KEEP_CPU_SHARE 0.005		/* 0.5% of one CPU */
#define HS_KEEP_QUIET_NS (UINT64_C(10) * 1000000000)
/*
 * A memory back-off also ends once tasks stalled on memory for less than
 * HS_KEEP_CALM_STALL_US in HS_KEEP_CALM_NS (1%, a tenth of the trigger's
 * 10%): the pressure has ended, and each second more costs a gap between
 * jobs the re-reads must fit in. A back-off within HS_KEEP_QUIET_NS of
 * such a resume doubles the calm asked for, up to HS_KEEP_QUIET_NS, so
 * that a pressure with pauses is not raced every two seconds.
 */
#define HS_KEEP_CALM_NS (UINT64_C(2) * 1000000000)
#define HS_KEEP_CALM_STALL_US 20000
#define HS_KEEP_COST_GUESS_NS 2000
#define HS_KEEP_EVENT_GAP_NS UINT64_C(1000000000)
/*
 * Under others' io pressure (and no memory pressure) the keeper reads on
 * at a trickle: an HS_KEEP_TRICKLE-th of its rate, and reading at most
 * an HS_KEEP_TRICKLE-th of the time (docs/man/hotset-keep.1).
 */
#define HS_KEEP_TRICKLE 8
/* and in bursts of what the last reads' speed takes in 250 ms, 64 KiB at least */
#define HS_KEEP_TRICKLE_BURST_NS (UINT64_C(250) * 1000000)
#define HS_KEEP_TRICKLE_MIN (UINT64_C(64) << 10)
/*
 * Pages read back within quiet ns and lost again: thrashing from 1/16 of
 * a file's, when tasks stalled on memory (1 ms of "some") since the read.
 */
#define HS_KEEP_THRASH_SHARE 16
#define HS_KEEP_THRASH_STALL_US 1000

void hs_keep_sched_init(struct hs_keep_sched *s, uint64_t interval_ns, double cpu_share);

/*
 * The time until the next tick (ns), given nlarge large files to check in
 * it: the period, stretched so that large files alone take at most half
 * the CPU share.
 */
uint64_t hs_keep_sched_period(const struct hs_keep_sched *s, size_t nlarge);

/*
 * How many of nsmall small files to check in a tick, when nlarge large
 * ones are checked too: enough that a round of them takes interval, or
 * longer when the CPU share left by the large files does not allow it
 * (s->round_ns says how long). At least 1 when nsmall > 0.
 */
size_t hs_keep_sched_slice(struct hs_keep_sched *s, size_t nsmall, size_t nlarge);

/*
 * A tick checked nchecked files in cpu_ns of CPU and found lost_pages
 * pages missing: the cost estimate follows, and the period tightens to
 * min_period after a loss, or backs off (doubling, up to interval) once
 * four ticks in a row have found nothing missing.
 */
void hs_keep_sched_checked(struct hs_keep_sched *s, size_t nchecked, uint64_t cpu_ns,
			   uint64_t lost_pages);

/*
 * How many of the files that eviction events named (keep-evict.h) to
 * check in a tick elapsed ns after the last such tick: what the CPU share
 * pays for in that time, an interval's worth at most; at least 1. Such
 * ticks come at most every event_gap.
 */
size_t hs_keep_sched_due(const struct hs_keep_sched *s, uint64_t elapsed);

/* A pressure event at now: returns true if the keeper backs off now (was not). */
bool hs_keep_sched_pressure(struct hs_keep_sched *s, uint64_t now);

/*
 * Backed off: the memory stall, "some total" (us), read at now. A stall
 * of more than HS_KEEP_CALM_STALL_US since calm_at starts the calm anew.
 */
void hs_keep_sched_memory_stall(struct hs_keep_sched *s, uint64_t now, uint64_t total_us);

/*
 * Returns true if, backed off, it resumes at now: quiet ns since the last
 * event, or calm_ns of them with a low stall all along (resumed_calm).
 */
bool hs_keep_sched_resume(struct hs_keep_sched *s, uint64_t now);

/*
 * Others' io pressure at now: returns true if the keeper starts reading at
 * a trickle now (did not already). hs_keep_sched_io_resume() returns true
 * if it goes back to its full rate at now: quiet ns since the last one.
 */
bool hs_keep_sched_io_pressure(struct hs_keep_sched *s, uint64_t now);
bool hs_keep_sched_io_resume(struct hs_keep_sched *s, uint64_t now);

#endif
