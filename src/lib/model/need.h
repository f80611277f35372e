/*
 * need.h - the memory a job needs to re-run without waiting for the disk:
 * the one rule of `curve --mem-request`, `doctor` and `run` (and, through
 * curve, of Slurm's --mem from the prolog).
 */
#ifndef HOTSET_MODEL_NEED_H
#define HOTSET_MODEL_NEED_H

#include <stdbool.h>
#include <stdint.h>

#include "job/usage.h"

/*
 * The memory a warm re-run of a job needs, in bytes, and of what. Its
 * memory cgroup is charged for all of it, and a limit below the sum evicts
 * what the job reads (a scan then reads all of it again, LRU or not):
 *
 *   read     the page cache for its reads: the curve's least cache at
 *            which a re-run reads nothing (rerun_zero), or all of the
 *            profile's pages without a trace;
 *   written  the pages it dirties (write_bytes of its processes): the new
 *            files, temporary files (a sort's runs, unlinked at once,
 *            which no profile lists) and rewritten pages, all of which
 *            take page cache until written back and reclaimed. Counted as
 *            if all were cached at once: an upper bound;
 *   anon     its own memory: the peak RSS of its largest process.
 *
 * A figure not known (a profile with no run) counts 0, and its _known is false.
 */
struct hs_rerun_need {
	uint64_t read;
	bool written_known;
	uint64_t written;
	bool anon_known;
	uint64_t anon;
	uint64_t total;		/* the sum: the least memory limit for a re-run with no wait */
};

/*
 * Fill n from a profile's figures: read_pages of page_size bytes (rerun_zero,
 * or the profile's pages), and the run's usage u (NULL: none known).
 * Returns n->total.
 */
uint64_t hs_rerun_need(uint64_t read_pages, uint64_t page_size, const struct hs_usage *u,
		       struct hs_rerun_need *n);

/*
 * Slurm's --mem for a need of bytes: MiB (its default unit), rounded up,
 * and at least 1, since --mem=0 asks for all of a node's memory.
 */
uint64_t hs_slurm_mem_mib(uint64_t bytes);

#endif
