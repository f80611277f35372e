/*
 * test-memory.c - the readers of the machine's memory (memory.h): what
 * /proc/meminfo says, in bytes, and nothing made up from a line that is
 * not a number.
 */
#include <stdint.h>
#include <string.h>

#include "hotset/memory.h"
#include "hotset/usage.h"
#include "unit.h"
#include "corpus.h"

TEST(meminfo_fields_in_bytes)
{
	struct hs_meminfo m;

	CHECK(hs_meminfo_parse("MemTotal:       24576000 kB\nMemFree:  1 kB\n"
			       "MemAvailable:   20000000 kB\nBuffers: 5 kB\nCached:  3000 kB\n"
			       "SwapCached: 7 kB\n", &m) == 0);
	CHECK_EQ_U64(m.total, 24576000ull * 1024);
	CHECK_EQ_U64(m.available, 20000000ull * 1024);
	CHECK_EQ_U64(m.cached, 3000ull * 1024);	/* not SwapCached's */
}

TEST(meminfo_refuses_what_is_not_a_size)
{
	struct hs_meminfo m = { 1, 2, 3 };

	/* a field missing, a sign, an overflow, no number: nothing is set */
	CHECK(hs_meminfo_parse("MemTotal: 1 kB\nCached: 2 kB\n", &m) < 0);
	CHECK(hs_meminfo_parse("MemTotal: 1 kB\nMemAvailable: -1 kB\nCached: 2 kB\n", &m) < 0);
	CHECK(hs_meminfo_parse("MemTotal: 18446744073709551615 kB\nMemAvailable: 1 kB\n"
			       "Cached: 2 kB\n", &m) < 0);
	CHECK(hs_meminfo_parse("MemTotal:\nMemAvailable: 1 kB\nCached: 2 kB\n", &m) < 0);
	CHECK(m.total == 1 && m.available == 2 && m.cached == 3);
}

TEST(meminfo_of_this_machine)
{
	struct hs_meminfo m;

	CHECK(hs_meminfo_read(&m) == 0);
	CHECK(m.total > 0 && m.available <= m.total && m.cached < m.total);
}

#define LLVMFuzzerTestOneInput fuzz_meminfo
#include "../fuzz/fuzz-meminfo.c"
#undef LLVMFuzzerTestOneInput

TEST(meminfo_fuzz_corpus_replays)
{
	CHECK(replay("meminfo", fuzz_meminfo) > 0);
}

/* What a re-run needs: its reads, what it wrote and its RSS; without a run, its reads. */
TEST(rerun_need_counts_reads_writes_and_rss)
{
	struct hs_usage u = { .io_known = true, .write_bytes_disk = 100 << 20, .max_rss_bytes = 36 << 20 };
	struct hs_rerun_need n;

	CHECK_EQ_U64(hs_rerun_need(86979, 4096, &u, &n), 86979ull * 4096 + (136ull << 20));
	CHECK(n.written_known && n.anon_known);
	CHECK_EQ_U64(n.read, 86979ull * 4096);
	CHECK_EQ_U64(n.written, 100 << 20);
	CHECK_EQ_U64(n.anon, 36 << 20);
	CHECK_EQ_U64(n.total, n.read + n.written + n.anon);
	CHECK_EQ_U64(hs_rerun_need(10, 4096, NULL, &n), 40960);
	CHECK(!n.written_known && !n.anon_known && n.written == 0 && n.anon == 0);
	/* no per-task I/O accounting: what it wrote is not known */
	u.io_known = false;
	hs_rerun_need(10, 4096, &u, &n);
	CHECK(!n.written_known && n.anon_known && n.total == 40960 + (36ull << 20));
}

/* Slurm's --mem: MiB rounded up, never 0 (which would ask for a whole node). */
TEST(slurm_mem_rounds_up_to_mib)
{
	CHECK_EQ_U64(hs_slurm_mem_mib(0), 1);
	CHECK_EQ_U64(hs_slurm_mem_mib(1), 1);
	CHECK_EQ_U64(hs_slurm_mem_mib(1 << 20), 1);
	CHECK_EQ_U64(hs_slurm_mem_mib((1 << 20) + 1), 2);
	CHECK_EQ_U64(hs_slurm_mem_mib(468ull << 20), 468);
	CHECK_EQ_U64(hs_slurm_mem_mib(UINT64_MAX), UINT64_C(1) << 44);
}

int main(void)
{
	return RUN_TESTS(meminfo_fields_in_bytes, meminfo_refuses_what_is_not_a_size,
			 meminfo_of_this_machine, meminfo_fuzz_corpus_replays,
			 rerun_need_counts_reads_writes_and_rss, slurm_mem_rounds_up_to_mib);
}
