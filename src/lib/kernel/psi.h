/*
 * psi.h - pressure stall information: how long tasks waited for I/O,
 * memory or a CPU, from /proc/pressure (the machine) and a cgroup v2
 * directory's *.pressure files (its tasks).
 *
 * A pressure file tells a "some" total, the microseconds in which at
 * least one task stalled since the start, and averages over 10, 60 and
 * 300 s. The averages lag: avg10 takes about 8 s to fall from 90% to 40%
 * once a disk-bound job ends. What a scheduler or a daemon that backs off
 * needs is the share of the time since its last reading, from two totals
 * (hs_psi_share()): one definition, for keep's "whose stall was it" and
 * run's "is the disk busy now".
 */
#ifndef HOTSET_PSI_H
#define HOTSET_PSI_H

#include <stdbool.h>
#include <stdint.h>

#include "base/hotset.h"

struct hs_psi_line {
	bool known;			/* the line was there, with a total */
	double avg10, avg60, avg300;	/* percent of the last 10, 60, 300 s stalled */
	uint64_t total;			/* microseconds stalled since the start */
};

/*
 * "some" is the time at least one task was stalled, "full" the time all
 * non-idle tasks were at once (absent from cpu files before Linux 5.13).
 */
struct hs_psi {
	struct hs_psi_line some, full;
};

/*
 * Parse "some avg10=0.12 avg60=0.05 avg300=0.01 total=123456" and a
 * "full" line like it. Returns 0, or -EINVAL without a "some" line that
 * has a total; a missing "full" line leaves full.known false (totals 0).
 */
int hs_psi_parse(const char *buf, struct hs_psi *out);

/*
 * Read and parse the pressure file name in dir: ("/proc/pressure", "io")
 * for the machine, (a cgroup v2 directory, "io.pressure") for a cgroup.
 * Returns 0 or -errno: -ENOENT without PSI (CONFIG_PSI, psi=1),
 * -EOPNOTSUPP where a cgroup has it switched off (cgroup.pressure 0),
 * -EINVAL if it does not parse. *out is untouched on failure.
 */
int hs_psi_read(const char *dir, const char *name, struct hs_psi *out);

/*
 * A PSI trigger on the pressure file name in dir: "some STALL WINDOW",
 * an event (POLLPRI on the descriptor returned) whenever tasks stalled
 * for stall_us within a window_us window, at most once per window
 * (the kernel's Documentation/accounting/psi.rst). The trigger lasts
 * until the descriptor is closed. Returns it, or -errno: -EACCES when the
 * file is not writable (unprivileged, before Linux 6.5), -EINVAL for
 * thresholds refused (an unprivileged window must be a multiple of 2 s;
 * windows are 0.5 to 10 s), -EPERM, -ENOENT without PSI, -EOPNOTSUPP
 * for a file that is not the kernel's (on no proc or cgroup filesystem).
 */
int hs_psi_trigger(const char *dir, const char *name, uint64_t stall_us, uint64_t window_us);

/* ---- the share since the last reading ------------------------------------ */

/* A reading of a pressure file's "some" total: what a share is measured from. */
struct hs_psi_mark {
	bool known;		/* false: the file could not be read */
	uint64_t at_ns;		/* when (hs_monotonic_ns()'s clock) */
	uint64_t total_us;	/* the "some" total then */
};

/*
 * Read the "some" total of the pressure file name in dir, as at now_ns
 * (the caller's clock reading, so that a loop measures from the instant
 * it acts on), into *m. Returns 0 or -errno (hs_psi_read()'s), m->known
 * false then.
 */
int hs_psi_mark(const char *dir, const char *name, uint64_t now_ns, struct hs_psi_mark *m);

/*
 * The share of the time from reading from to reading to (of one file) in
 * which some task stalled: 100 * stalled / elapsed, in percent; PSI's
 * per-CPU aggregation may put it a little over 100. -1 when it cannot be
 * told: a reading unknown, no time between them, or a total that went
 * back (not the same file: a cgroup made anew).
 */
double hs_psi_share(const struct hs_psi_mark *from, const struct hs_psi_mark *to);

#endif
