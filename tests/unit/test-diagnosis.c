/*
 * test-diagnosis.c - doctor's reasoning (diagnosis.h) on facts made up
 * for each case: only a real cause is blamed (a page stolen with an inode
 * is not one, DAMON is not when global reclaim took the pages, a parent's
 * limit that a sibling filled is), what could not be seen is said first
 * and never concluded from, and each fix is a command as argv, whatever
 * the names in it.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/diagnosis.h"
#include "unit.h"

#define PAGES 10000

static struct hs_residency_total res;
static struct hs_memcg memcg;
static struct hs_diagnosis dx;

/*
 * A profile of PAGES pages, all evicted by reclaim (cachestat counts
 * them), in a memory cgroup /job with no limit, on a machine with memory
 * to spare that never reclaimed globally, with no DAMON.
 */
static void facts(struct hs_diag_facts *in)
{
	memset(in, 0, sizeof(*in));
	memset(&res, 0, sizeof(res));
	memset(&memcg, 0, sizeof(memcg));
	memset(&dx, 0, sizeof(dx));
	in->profile = "p.prof";
	in->page_size = 4096;
	in->files = 10;
	in->pages = PAGES;
	res.files = 10;
	res.known.pages = PAGES;
	res.known.evicted = PAGES;
	res.method = HS_RES_CACHESTAT;
	in->res = &res;
	in->mi_ok = true;
	in->mi.total = 24ull << 30;
	in->mi.available = 20ull << 30;
	in->vm_ok = true;
	in->vm0.global_known = true;
	in->vm0.steal_file_known = true;
	snprintf(memcg.name, sizeof(memcg.name), "/job");
	snprintf(memcg.dir, sizeof(memcg.dir), "/sys/fs/cgroup/memory/job");
	snprintf(memcg.root, sizeof(memcg.root), "/sys/fs/cgroup/memory");
	memcg.version = 1;
	memcg.limit_known = true;
	memcg.limit = UINT64_MAX;
	memcg.lowest = -1;
	in->cg_source = HS_CG_PROFILE;
	in->memcg0 = &memcg;
	in->have_keep = true;
}

static const struct hs_finding *find(const char *id)
{
	return hs_diag_finding(&dx, id);
}

/* One page stolen with an inode against ten thousand lost: vfs_cache_pressure plays no part. */
TEST(inode_steal_only_when_a_share_of_what_was_lost)
{
	struct hs_diag_facts in;
	const struct hs_finding *f;

	facts(&in);
	in.vm0.inodesteal = 1;
	hs_diagnose(&in, &dx);
	CHECK_EQ_U64(dx.lost_pages, PAGES);
	CHECK((f = find("vfs-cache")) != NULL);
	CHECK(f && !strstr(f->text, "plays a part") && strstr(f->text, "cannot help"));
	/* a tenth of what the job lost is a part */
	facts(&in);
	in.vm0.inodesteal = PAGES / 10;
	hs_diagnose(&in, &dx);
	CHECK((f = find("vfs-cache")) != NULL && strstr(f->text, "plays a part"));
}

/* DAMON is there, and paged out: but global reclaim took more, and it is the cause. */
TEST(global_reclaim_not_damon)
{
	struct hs_damon_scheme s = { .action = "pageout", .on = true, .age_known = true,
				     .min_age_s = 60, .aggr_us = 5000000, .stats_known = true,
				     .sz_applied = 2000ull * 4096 };
	struct hs_diag_facts in;
	const struct hs_finding *f;

	facts(&in);
	snprintf(s.path, sizeof(s.path), "/sys/kernel/mm/damon/admin/kdamonds/0/contexts/0/schemes/0");
	in.ndamon = 1;
	in.damon0 = &s;
	in.vm0.steal_kswapd = 30000;
	in.vm0.steal_direct = 5000;
	hs_diagnose(&in, &dx);
	CHECK_STR(hs_cause_id(dx.cause), "machine-memory");
	CHECK((f = find("damon")) != NULL && f->severity == HS_SEV_INFO);
	CHECK((f = find("machine-memory")) != NULL && f->severity == HS_SEV_PROBLEM);
	/* no global reclaim: DAMON, with its fix */
	facts(&in);
	in.ndamon = 1;
	in.damon0 = &s;
	hs_diagnose(&in, &dx);
	CHECK_STR(hs_cause_id(dx.cause), "damon");
	CHECK((f = find("damon")) != NULL && f->severity == HS_SEV_PROBLEM);
	/* a scheme that paged nothing out is no cause either */
	s.sz_applied = 0;
	facts(&in);
	in.ndamon = 1;
	in.damon0 = &s;
	hs_diagnose(&in, &dx);
	CHECK_STR(hs_cause_id(dx.cause), "unknown");
	CHECK((f = find("damon")) != NULL && f->severity == HS_SEV_INFO &&
	      strstr(f->text, "paged out nothing"));
}

/*
 * The job's cgroup /db/server has room; its parent /db, limited to 1 GiB,
 * was filled by /db/heap: the parent and the sibling are named, not
 * /other, which is larger but under no limit the job shares.
 */
TEST(a_parents_limit_filled_by_a_sibling)
{
	struct hs_memcg_cache cgs[] = {
		{ .name = "/", .file = 1 << 20 },
		{ .name = "/db", .anon = 0 },
		{ .name = "/db/heap", .anon = 1400ull << 20, .peak_known = true, .peak = 1450ull << 20 },
		{ .name = "/db/server", .file = 10 << 20, .anon = 100 << 20 },
		{ .name = "/other", .anon = 5ull << 30 },
	};
	struct hs_diag_facts in;
	const struct hs_finding *f;

	facts(&in);
	snprintf(memcg.name, sizeof(memcg.name), "/db/server");
	memcg.limit = 1ull << 30;
	memcg.lowest = 0;
	memcg.nlevels = 1;
	memcg.level[0].name_len = 3;
	memcg.level[0].limit = 1ull << 30;
	snprintf(memcg.level[0].limit_path, sizeof(memcg.level[0].limit_path),
		 "/sys/fs/cgroup/memory/db/memory.limit_in_bytes");
	memcg.level[0].st.usage_known = memcg.level[0].st.peak_known = memcg.level[0].st.hits_known = true;
	memcg.level[0].st.usage = 700ull << 20;
	memcg.level[0].st.peak = 1ull << 30;
	memcg.level[0].st.hits = 5;
	in.cg0 = cgs;
	in.ncg0 = 5;
	hs_diagnose(&in, &dx);
	CHECK_STR(hs_cause_id(dx.cause), "other-activity");
	CHECK(dx.cause_level == 0 && dx.ncomp == 1 && dx.comp[0].cg == &cgs[2]);
	CHECK_STR(dx.comp_where, "/db");
	CHECK((f = find("other-activity")) != NULL && strstr(f->text, "Others under /db") &&
	      strstr(f->text, "/db/heap"));
	CHECK(dx.nfix >= 2 && !strcmp(dx.fix[0].step[0].argv[1], "keep"));
	CHECK(dx.nfix >= 2 && dx.fix[1].step[0].output &&
	      !strcmp(dx.fix[1].step[0].output, memcg.level[0].limit_path));
	/* the same limit, never full: no cause of theirs */
	{
		struct hs_memcg *keep = malloc(sizeof(*keep));

		*keep = memcg;
		facts(&in);
		memcg = *keep;
		free(keep);
	}
	memcg.level[0].st.peak = 500ull << 20;
	memcg.level[0].st.hits = 0;
	in.cg0 = cgs;
	in.ncg0 = 5;
	hs_diagnose(&in, &dx);
	CHECK(dx.cause != HS_CAUSE_SHARED);
}

/* 4 pages of 10,000 seen (as nobody): said first, and no "nothing to fix" from them. */
TEST(unseen_first_never_nothing_to_fix)
{
	struct hs_diag_facts in;

	facts(&in);
	res.known.pages = 4;
	res.known.cached = 4;
	res.known.evicted = 0;
	res.unknown_files = 9;
	res.unknown_pages = PAGES - 4;
	hs_diagnose(&in, &dx);
	CHECK(dx.nf > 0 && !strcmp(dx.f[0].id, "unseen") && dx.f[0].severity == HS_SEV_UNSEEN);
	CHECK(!hs_diag_nothing_to_fix(&dx) && !find("nothing-to-fix") && find("inconclusive"));
	CHECK(dx.seen_share > 0 && dx.seen_share < 0.001);
	/* the files deleted: nothing resident, nothing unknown, all missing */
	facts(&in);
	res.files = 0;
	res.known.pages = res.known.evicted = 0;
	hs_diagnose(&in, &dx);
	CHECK(dx.missing_pages == PAGES && !strcmp(dx.f[0].id, "unseen"));
	CHECK(!hs_diag_nothing_to_fix(&dx) && !find("nothing-to-fix"));
	/* all seen, all resident: nothing to fix, and said */
	facts(&in);
	res.known.cached = PAGES;
	res.known.evicted = 0;
	hs_diagnose(&in, &dx);
	CHECK(hs_diag_nothing_to_fix(&dx) && find("nothing-to-fix") && !find("unseen"));
}

/* Each fix is argv: a name with a quote and a $(...) is one word, and a unit name is escaped. */
TEST(fixes_are_argv)
{
	struct hs_diag_facts in;
	bool warm = false;

	facts(&in);
	in.profile = "it's $(touch x).prof";
	res.known.evicted = 0;	/* not resident: warm is the fix */
	hs_diagnose(&in, &dx);
	for (int i = 0; i < dx.nfix; i++) {
		const struct hs_fix_step *s = &dx.fix[i].step[0];

		if (dx.fix[i].nsteps && !strcmp(s->argv[1], "warm")) {
			warm = s->argc == 4 && !strcmp(s->argv[3], in.profile) && !s->argv[4];
		}
	}
	CHECK(warm);
}

/*
 * A client that waited on its server: a problem named with the peer, and
 * the fix is the command that measures it, the job's words each one word.
 * Under the thresholds, or with another user's peer, no fix names a pid.
 */
TEST(a_client_waiting_on_its_server_is_told_with_the_command_to_measure_it)
{
	static char *const argv[] = { "mariadb", "-e", "SELECT 'a b'", NULL };
	struct hs_usage run = { .wall_s = 110, .user_s = 2, .sys_s = 1, .io_wait_s = 0.5,
				.pressure = HS_PRESSURE_JOB_CGROUP };
	struct hs_peers peers = { .n = 1 };
	const struct hs_finding *f;
	const struct hs_fix_step *s = NULL;
	struct hs_diag_facts in;

	peers.v[0] = (struct hs_peer){ .transport = HS_PEER_UNIX, .where = HS_PEER_PROCESS,
				       .pid = 1234, .held_s = 109, .uid_known = true };
	snprintf(peers.v[0].name, sizeof(peers.v[0].name), "mariadbd");
	snprintf(peers.v[0].cgroup, sizeof(peers.v[0].cgroup), "/system.slice/mariadb.service");
	snprintf(peers.v[0].address, sizeof(peers.v[0].address), "/run/mysqld/mysqld.sock");
	facts(&in);
	res.known.evicted = 0;
	in.ran = true;
	in.run = &run;
	in.peers = &peers;
	in.argv = argv;
	hs_diagnose(&in, &dx);
	CHECK((f = find("waited-on-peer")) && f->severity == HS_SEV_PROBLEM &&
	      strstr(f->text, "mariadbd (pid 1234, cgroup /system.slice/mariadb.service)"));
	CHECK(!find("nothing-to-fix"));
	for (int i = 0; i < dx.nfix; i++)
		if (dx.fix[i].nsteps && !strcmp(dx.fix[i].step[0].argv[1], "doctor"))
			s = &dx.fix[i].step[0];
	CHECK(s && s->argc == 8 && !strcmp(s->argv[2], "--unit") &&
	      !strcmp(s->argv[3], "mariadb.service") && !strcmp(s->argv[4], "--") &&
	      !strcmp(s->argv[7], "SELECT 'a b'"));
	/* another user's server: named by its uid alone, and no command to run */
	peers.v[0].where = HS_PEER_HIDDEN;
	memset(&dx, 0, sizeof(dx));
	hs_diagnose(&in, &dx);
	CHECK((f = find("waited-on-peer")) && strstr(f->text, "a process of uid 0") &&
	      !strstr(f->text, "1234"));
	for (int i = 0; i < dx.nfix; i++)
		CHECK(!dx.fix[i].nsteps || strcmp(dx.fix[i].step[0].argv[1], "doctor"));
	/* most of the time on the disk: not a peer's doing */
	run.io_wait_s = 100;
	memset(&dx, 0, sizeof(dx));
	hs_diagnose(&in, &dx);
	CHECK(!find("waited-on-peer"));
	/* not watched */
	run.io_wait_s = 0.5;
	in.peers = NULL;
	memset(&dx, 0, sizeof(dx));
	hs_diagnose(&in, &dx);
	CHECK(!find("waited-on-peer"));
}

TEST(systemd_escape_as_systemd)
{
	char out[256];

	CHECK(hs_systemd_escape_path("/srv/my db", out, sizeof(out)) == 0);
	CHECK_STR(out, "srv-my\\x20db");
	CHECK(hs_systemd_escape_path("/", out, sizeof(out)) == 0);
	CHECK_STR(out, "-");
	CHECK(hs_systemd_escape_path("/.hidden/x-y", out, sizeof(out)) == 0);
	CHECK_STR(out, "\\x2ehidden-x\\x2dy");
	CHECK(hs_systemd_escape_path("/a//b/", out, sizeof(out)) == 0);
	CHECK_STR(out, "a-b");
	CHECK(hs_systemd_escape_path("/a/.b", out, sizeof(out)) == 0);
	CHECK_STR(out, "a-.b");
	CHECK(hs_systemd_escape_path("/a\xff" "b:c_d.e", out, sizeof(out)) == 0);
	CHECK_STR(out, "a\\xffb:c_d.e");
	CHECK(hs_systemd_escape_path("/x$(touch PWNED)y", out, sizeof(out)) == 0);
	CHECK_STR(out, "x\\x24\\x28touch\\x20PWNED\\x29y");
	CHECK(hs_systemd_escape_path("/a/../b", out, sizeof(out)) == -EINVAL);
	CHECK(hs_systemd_escape_path("rel/x", out, sizeof(out)) == -EINVAL);
	CHECK(hs_systemd_escape_path("/abc", out, 3) == -ENAMETOOLONG);
}

int main(void)
{
	return RUN_TESTS(inode_steal_only_when_a_share_of_what_was_lost, global_reclaim_not_damon,
			 a_parents_limit_filled_by_a_sibling, unseen_first_never_nothing_to_fix,
			 fixes_are_argv,
			 a_client_waiting_on_its_server_is_told_with_the_command_to_measure_it, systemd_escape_as_systemd);
}
