/*
 * test-memory.c - the readers of the machine's memory (memory.h): what
 * /proc/meminfo says, in bytes, and nothing made up from a line that is
 * not a number.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "kernel/memory.h"
#include "model/need.h"
#include "job/usage.h"
#include "unit.h"
#include "corpus.h"
#include "scratch.h"

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

/* Who reclaimed: global reclaim apart from the rest; a counter missing is 0 and not known. */
TEST(vmstat_reclaim_counters)
{
	struct hs_vmstat v;

	CHECK(hs_vmstat_parse("workingset_refault_file 10\npgsteal_kswapd 7\npgsteal_direct 3\n"
			      "pgscan_kswapd 70\npgscan_direct 30\npgsteal_file 500\npginodesteal 1\n"
			      "kswapd_inodesteal 2\nslabs_scanned 9\n", &v) == 0);
	CHECK(v.refault_known && v.refault_file == 10);
	CHECK(v.global_known && v.steal_kswapd == 7 && v.steal_direct == 3);
	CHECK(v.scan_kswapd == 70 && v.scan_direct == 30);
	CHECK(v.steal_file_known && v.steal_file == 500);
	CHECK_EQ_U64(v.inodesteal, 3);
	CHECK(hs_vmstat_parse("pgsteal_kswapd_foo 7\nworkingset_refault 4\n", &v) == 0);
	CHECK(!v.global_known && !v.steal_file_known && v.refault_known && v.refault_file == 4);
}

static void put(const char *dir, const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static const char *sub(const char *name)
{
	static char path[4][256];
	static int k;
	char *p = path[k++ % 4];

	snprintf(p, 256, "%s%s", scratch, name);
	mkdir(p, 0755);
	return p;
}

/*
 * A v1 tree: /db limited to 1 GiB and full at its peak, /db/server (the
 * job's) with no limit of its own, /db/heap beside it. The job's limits
 * are its parent's, with the parent's figures.
 */
TEST(memcg_limits_above_with_their_figures)
{
	struct hs_memcg *m = calloc(1, sizeof(*m));
	const char *root, *db, *server;
	char name[64];

	scratch_dir();
	root = sub("");
	db = sub("/db");
	server = sub("/db/server");
	sub("/db/heap");
	put(root, "memory.limit_in_bytes", "9223372036854771712\n");
	put(db, "memory.limit_in_bytes", "1073741824\n");
	put(db, "memory.usage_in_bytes", "900000000\n");
	put(db, "memory.max_usage_in_bytes", "1073741824\n");
	put(db, "memory.failcnt", "12\n");
	put(db, "memory.stat", "cache 0\nrss 0\ntotal_cache 700\ntotal_rss 1400\n");
	put(server, "memory.limit_in_bytes", "9223372036854771712\n");
	put(server, "memory.usage_in_bytes", "700\n");
	put(server, "memory.stat", "cache 600\nrss 100\ntotal_cache 600\ntotal_rss 100\n"
	    "total_workingset_refault_file 5\n");
	CHECK(hs_memcg_in(1, root, "/db/server", m) == 0);
	CHECK_STR(m->name, "/db/server");
	CHECK(m->st.usage_known && m->st.usage == 700 && m->st.file == 600 && m->st.anon == 100);
	CHECK(m->st.refault_known && m->st.refault_file == 5);
	CHECK(m->limit_known && m->limit == 1073741824 && m->nlevels == 1 && m->lowest == 0);
	CHECK_STR(hs_memcg_level_name(m, 0, name, sizeof(name)), "/db");
	CHECK(m->level[0].st.peak_known && m->level[0].st.peak == 1073741824);
	CHECK(m->level[0].st.hits_known && m->level[0].st.hits == 12);
	CHECK(m->level[0].st.usage == 900000000 && m->level[0].st.anon == 1400);
	CHECK(strstr(m->limit_path, "/db/memory.limit_in_bytes") != NULL);
	/* the root's "no limit" is none; a cgroup that is not there is -ENOENT */
	CHECK(hs_memcg_in(1, root, "/", m) == 0 && m->limit == UINT64_MAX && m->nlevels == 0);
	CHECK_STR(m->name, "/");
	CHECK(hs_memcg_in(1, root, "/db/nope", m) == -ENOENT);
	free(m);
	scratch_done();
}

/*
 * v2 counts a cgroup's children in its memory.stat: each one's own page
 * cache and anonymous memory are its figures less its children's, and a
 * limit below the nearest is still one of the levels.
 */
TEST(memcg_list_own_memory_v2)
{
	struct hs_memcg *m = calloc(1, sizeof(*m));
	struct hs_memcg_cache *v = NULL;
	const char *root, *a, *b, *c;
	ssize_t n;
	int seen = 0;

	scratch_dir();
	root = sub("");
	a = sub("/a");
	b = sub("/a/b");
	c = sub("/a/c");
	put(root, "memory.stat", "file 1000\nanon 2000\n");
	put(a, "memory.stat", "file 600\nanon 1500\n");
	put(a, "memory.max", "8192\n");
	put(a, "memory.events", "low 0\nhigh 0\nmax 7\noom 0\n");
	put(a, "memory.peak", "8000\n");
	put(b, "memory.stat", "file 400\nanon 1000\npgsteal 3\n");
	put(b, "memory.max", "max\n");
	put(b, "memory.current", "1400\n");
	put(c, "memory.stat", "file 100\nanon 200\n");
	put(c, "memory.max", "4096\n");
	CHECK(hs_memcg_in(2, root, "/a/b", m) == 0);
	CHECK(m->nlevels == 1 && m->limit == 8192 && m->level[0].st.hits == 7);
	CHECK(m->st.steal_known && m->st.steal == 3 && m->st.usage == 1400);
	n = hs_memcg_list(m, &v);
	CHECK(n == 4);
	for (ssize_t i = 0; i < n; i++) {
		if (!strcmp(v[i].name, "/"))
			{ seen++; CHECK(v[i].file == 400 && v[i].anon == 500); }
		else if (!strcmp(v[i].name, "/a"))
			{ seen++; CHECK(v[i].file == 100 && v[i].anon == 300 && v[i].peak == 8000); }
		else if (!strcmp(v[i].name, "/a/b"))
			{ seen++; CHECK(v[i].file == 400 && v[i].anon == 1000 && v[i].usage == 1400); }
		else if (!strcmp(v[i].name, "/a/c"))
			{ seen++; CHECK(v[i].file == 100 && v[i].anon == 200); }
	}
	CHECK(seen == 4);
	if (n > 0)
		hs_memcg_list_free(v, (size_t)n);
	free(m);
	scratch_done();
}

int main(void)
{
	return RUN_TESTS(meminfo_fields_in_bytes, meminfo_refuses_what_is_not_a_size,
			 meminfo_of_this_machine, meminfo_fuzz_corpus_replays,
			 rerun_need_counts_reads_writes_and_rss, slurm_mem_rounds_up_to_mib,
			 vmstat_reclaim_counters, memcg_limits_above_with_their_figures,
			 memcg_list_own_memory_v2);
}
