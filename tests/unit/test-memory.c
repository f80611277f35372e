/*
 * test-memory.c - the readers of the machine's memory (memory.h): what
 * /proc/meminfo says, in bytes, and nothing made up from a line that is
 * not a number.
 */
#include <stdint.h>
#include <string.h>

#include "hotset/memory.h"
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

int main(void)
{
	return RUN_TESTS(meminfo_fields_in_bytes, meminfo_refuses_what_is_not_a_size,
			 meminfo_of_this_machine, meminfo_fuzz_corpus_replays);
}
