/*
 * need.c - the memory a job needs to re-run without waiting (need.h).
 */
#include <string.h>

#include "model/need.h"

uint64_t hs_rerun_need(uint64_t read_pages, uint64_t page_size, const struct hs_usage *u,
		       struct hs_rerun_need *n)
{
	memset(n, 0, sizeof(*n));
	n->read = read_pages * page_size;
	if (u && u->io_known) {
		n->written_known = true;
		n->written = u->write_bytes_disk;
	}
	if (u && u->max_rss_bytes) {
		n->anon_known = true;
		n->anon = u->max_rss_bytes;
	}
	n->total = n->read + n->written + n->anon;
	return n->total;
}

uint64_t hs_slurm_mem_mib(uint64_t bytes)
{
	uint64_t mib = bytes / (1 << 20) + (bytes % (1 << 20) != 0);

	return mib ? mib : 1;
}
