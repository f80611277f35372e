/*
 * test-keep.c - keep's scheduling and back-off (a fake clock: every
 * instant is a number passed in; pressure events are calls), and its
 * state file.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "keep/keep.h"
#include "keep/protect.h"
#include "scratch.h"
#include "unit.h"
#include "corpus.h"

#define S 1000000000ull

TEST(the_period_tightens_after_a_loss_and_backs_off_when_calm)
{
	struct hs_keep_sched s;

	hs_keep_sched_init(&s, 8 * S, 0);
	CHECK_EQ_U64(s.period, 2 * S);	/* tight at first */
	for (int i = 0; i < 3; i++)
		hs_keep_sched_checked(&s, 10, 10000, 0);
	CHECK_EQ_U64(s.period, 2 * S);	/* not before four calm ticks */
	hs_keep_sched_checked(&s, 10, 10000, 0);
	CHECK_EQ_U64(s.period, 4 * S);
	hs_keep_sched_checked(&s, 10, 10000, 0);
	CHECK_EQ_U64(s.period, 8 * S);
	hs_keep_sched_checked(&s, 10, 10000, 0);
	CHECK_EQ_U64(s.period, 8 * S);	/* never beyond the interval */
	hs_keep_sched_checked(&s, 10, 10000, 5);
	CHECK_EQ_U64(s.period, 2 * S);	/* a loss: four times as often */
	CHECK_EQ_U64(hs_keep_sched_period(&s, 0), 2 * S);
}

TEST(the_cost_follows_what_checks_measure)
{
	struct hs_keep_sched s;

	hs_keep_sched_init(&s, S, 0);
	CHECK_EQ_U64(s.cost, HS_KEEP_COST_GUESS_NS);
	for (int i = 0; i < 40; i++)
		hs_keep_sched_checked(&s, 1000, 1000 * 1000, 0);	/* 1 us a file */
	CHECK(s.cost >= 1000 && s.cost <= 1010);
	hs_keep_sched_checked(&s, 0, 0, 0);	/* nothing checked: no change */
	CHECK(s.cost >= 1000 && s.cost <= 1010);
}

TEST(small_files_are_checked_in_rounds_of_one_interval)
{
	struct hs_keep_sched s;
	size_t slice;

	hs_keep_sched_init(&s, 8 * S, 0.005);
	s.cost = 1000;	/* 1 us: 100 files cost 0.1 ms, far below the share */
	slice = hs_keep_sched_slice(&s, 100, 0);
	CHECK_EQ_U64(slice, 25);	/* period 2 s of an 8 s round */
	CHECK_EQ_U64(s.round_ns, 8 * S);
	s.period = 8 * S;
	CHECK_EQ_U64(hs_keep_sched_slice(&s, 100, 0), 100);
	CHECK_EQ_U64(hs_keep_sched_slice(&s, 1, 0), 1);
	CHECK_EQ_U64(hs_keep_sched_slice(&s, 0, 3), 0);
}

TEST(the_cpu_share_stretches_rounds_of_many_files)
{
	struct hs_keep_sched s;
	size_t slice;

	hs_keep_sched_init(&s, S, 0.005);
	s.period = S;
	s.cost = 1000;
	/* 200,000 files at 1 us: 0.2 s a round, 20% of a CPU each second; at
	 * 0.5% the round takes 40 s, 5,000 files a tick */
	slice = hs_keep_sched_slice(&s, 200000, 0);
	CHECK_EQ_U64(s.round_ns, 40 * S);
	CHECK_EQ_U64(slice, 5000);
	CHECK((double)slice * (double)s.cost / (double)hs_keep_sched_period(&s, 0) <= 0.005 + 1e-9);
}

TEST(large_files_take_at_most_half_the_share)
{
	struct hs_keep_sched s;
	uint64_t p;

	hs_keep_sched_init(&s, S, 0.01);
	s.period = S / 4;
	s.cost = 1000;
	CHECK_EQ_U64(hs_keep_sched_period(&s, 100), S / 4);	/* 0.1 ms a tick: no stretch */
	/* 10,000 large files, 10 ms a tick: at most 0.5% of a CPU, 2 s ticks */
	p = hs_keep_sched_period(&s, 10000);
	CHECK_EQ_U64(p, 2 * S);
	/* and the small ones share the other half */
	hs_keep_sched_slice(&s, 10000, 10000);
	CHECK_EQ_U64(s.round_ns, 2 * S);
}

TEST(files_told_evicted_are_checked_within_the_share)
{
	struct hs_keep_sched s;

	hs_keep_sched_init(&s, 10 * S, 0.005);
	CHECK_EQ_U64(s.event_gap, S);	/* a second, not a quarter of the interval */
	s.cost = 5000;			/* 5 us a check */
	CHECK_EQ_U64(hs_keep_sched_due(&s, S), 1000);	/* 0.5% of a second */
	CHECK_EQ_U64(hs_keep_sched_due(&s, 60 * S), 10000);	/* an interval's worth at most */
	CHECK_EQ_U64(hs_keep_sched_due(&s, 1000), 1);	/* never none */
	hs_keep_sched_init(&s, S / 5, 0.005);
	CHECK_EQ_U64(s.event_gap, S / 20);	/* the tighter period of a short interval */
}

TEST(pressure_backs_off_until_quiet_for_a_while)
{
	struct hs_keep_sched s;
	uint64_t t = 1000 * S;

	hs_keep_sched_init(&s, S, 0);
	CHECK(!hs_keep_sched_resume(&s, t));	/* not backed off: nothing to resume */
	CHECK(hs_keep_sched_pressure(&s, t));
	CHECK(s.backed_off);
	CHECK(!hs_keep_sched_pressure(&s, t + 2 * S));	/* again: already backed off */
	CHECK(!hs_keep_sched_resume(&s, t + 2 * S + HS_KEEP_QUIET_NS - 1));
	/* events keep it backed off: the quiet time counts from the last */
	CHECK(!hs_keep_sched_pressure(&s, t + 5 * S));
	CHECK(!hs_keep_sched_resume(&s, t + 2 * S + HS_KEEP_QUIET_NS));
	CHECK(hs_keep_sched_resume(&s, t + 5 * S + HS_KEEP_QUIET_NS));
	CHECK(!s.backed_off);
	CHECK_EQ_U64(s.period, s.min_period);	/* then it looks closely again */
	CHECK(!hs_keep_sched_resume(&s, t + 100 * S));
}

/* A memory stall below 1% for 2 s ends a back-off before the quiet time */
TEST(a_low_stall_ends_a_back_off_early_and_a_soon_one_doubles_it)
{
	struct hs_keep_sched s;
	uint64_t t = 1000 * S, us = 5000000;

	hs_keep_sched_init(&s, S, 0);
	hs_keep_sched_memory_stall(&s, t, us);	/* not backed off: nothing to measure */
	CHECK(!s.calm_known);
	CHECK(hs_keep_sched_pressure(&s, t));
	CHECK_EQ_U64(s.calm_ns, HS_KEEP_CALM_NS);
	/* stalls of 100 ms a half second go on: no calm */
	for (int i = 1; i <= 8; i++) {
		us += 100000;
		hs_keep_sched_memory_stall(&s, t + (uint64_t)i * S / 2, us);
		CHECK(!hs_keep_sched_resume(&s, t + (uint64_t)i * S / 2));
	}
	/* then 10 ms in all over 2 s: calm from t + 4 s, resumed at t + 6 s */
	hs_keep_sched_memory_stall(&s, t + 5 * S, us + 5000);
	hs_keep_sched_memory_stall(&s, t + 6 * S - 1, us + 10000);
	CHECK(!hs_keep_sched_resume(&s, t + 6 * S - 1));
	CHECK(hs_keep_sched_resume(&s, t + 6 * S));
	CHECK(s.resumed_calm && !s.backed_off);
	/* back off again 3 s later: a pressure with pauses, twice the calm now */
	CHECK(hs_keep_sched_pressure(&s, t + 9 * S));
	CHECK_EQ_U64(s.calm_ns, 2 * HS_KEEP_CALM_NS);
	hs_keep_sched_memory_stall(&s, t + 9 * S, us);
	CHECK(!hs_keep_sched_resume(&s, t + 9 * S + HS_KEEP_CALM_NS));
	CHECK(hs_keep_sched_resume(&s, t + 9 * S + 2 * HS_KEEP_CALM_NS));
	/* each back-off a second after a resume: 8 s, then the quiet time at most */
	uint64_t at = t + 9 * S + 2 * HS_KEEP_CALM_NS;
	const uint64_t want[] = { 4 * HS_KEEP_CALM_NS, HS_KEEP_QUIET_NS, HS_KEEP_QUIET_NS };

	for (int i = 0; i < 3; i++) {
		at += S;
		CHECK(hs_keep_sched_pressure(&s, at));
		CHECK_EQ_U64(s.calm_ns, want[i]);
		hs_keep_sched_memory_stall(&s, at, us);
		at += s.calm_ns;
		CHECK(hs_keep_sched_resume(&s, at));
	}
	/* a back-off long after the last resume starts from 2 s again */
	CHECK(hs_keep_sched_pressure(&s, t + 200 * S));
	CHECK_EQ_U64(s.calm_ns, HS_KEEP_CALM_NS);
	/* a stall that cannot be read: the quiet time alone */
	CHECK(!hs_keep_sched_resume(&s, t + 200 * S + HS_KEEP_QUIET_NS - 1));
	CHECK(hs_keep_sched_resume(&s, t + 200 * S + HS_KEEP_QUIET_NS));
	CHECK(!s.resumed_calm);
}

TEST(io_pressure_slows_to_a_trickle_apart_from_memory_back_offs)
{
	struct hs_keep_sched s;
	uint64_t t = 1000 * S;

	hs_keep_sched_init(&s, S, 0);
	CHECK(!hs_keep_sched_io_resume(&s, t));	/* not trickling: nothing to resume */
	CHECK(hs_keep_sched_io_pressure(&s, t));
	CHECK(s.trickle);
	CHECK(!s.backed_off);			/* io alone does not stop it */
	CHECK(!hs_keep_sched_io_pressure(&s, t + 3 * S));	/* again: already */
	/* memory pressure comes and goes meanwhile: the trickle is apart */
	CHECK(hs_keep_sched_pressure(&s, t + 4 * S));
	CHECK(!hs_keep_sched_io_resume(&s, t + 3 * S + HS_KEEP_QUIET_NS - 1));
	CHECK(hs_keep_sched_io_resume(&s, t + 3 * S + HS_KEEP_QUIET_NS));
	CHECK(!s.trickle);
	CHECK(s.backed_off);
	CHECK(hs_keep_sched_resume(&s, t + 4 * S + HS_KEEP_QUIET_NS));
	CHECK(!hs_keep_sched_io_resume(&s, t + 100 * S));
}

TEST(the_state_file_round_trips_and_is_written_whole)
{
	const char *dir = scratch_dir();
	char path[128], other[128];
	char *profiles[] = { "/a b/p.prof", "/with\\back\nslash" };
	struct hs_keep_state st = {
		.refault_pages = 12, .rewarmed_pages = 34, .rewarms = 5, .backoffs = 6,
		.last_rewarm_ns = 7, .last_backoff_ns = -8, .since_ns = 9, .started_ns = 10,
		.pid = 4242, .running = true, .backed_off = true, .budget_bytes = 1 << 20,
		.files = 3, .pages = 4, .bytes = 16384, .unknown_files = 1, .dropped_files = 2,
		.interval_ns = 200000000, .round_ns = 300000000, .profiles = profiles,
		.nprofiles = 2, .mode = "lock", .locked_files = 3, .locked_bytes = 12288,
		.protected_bytes = 16384, .protect_cgroup = "/sys/fs/cgroup/a b\\c",
	}, back;
	struct hs_error err = { 0 };
	FILE *f;

	snprintf(st.pressure, sizeof(st.pressure), "trigger");
	snprintf(st.evictions, sizeof(st.evictions), "events");
	snprintf(st.io_pressure, sizeof(st.io_pressure), "/sys/fs/cgroup/a b/io.pressure");
	snprintf(st.backoff_reason, sizeof(st.backoff_reason), "memory");
	snprintf(path, sizeof(path), "%s/s.state", dir);
	CHECK(hs_keep_state_write(path, &st) == 0);
	CHECK(hs_keep_state_read(path, &back, &err) == 0);
	CHECK_EQ_U64(back.refault_pages, 12);
	CHECK_EQ_U64(back.rewarmed_pages, 34);
	CHECK_EQ_U64(back.rewarms, 5);
	CHECK_EQ_U64(back.backoffs, 6);
	CHECK(back.last_backoff_ns == -8);
	CHECK_EQ_U64(back.pid, 4242);
	CHECK(back.running && back.backed_off);
	CHECK_EQ_U64(back.dropped_files, 2);
	CHECK_EQ_U64(back.round_ns, 300000000);
	CHECK_STR(back.pressure, "trigger");
	CHECK_STR(back.evictions, "events");
	CHECK_STR(back.io_pressure, "/sys/fs/cgroup/a b/io.pressure");
	CHECK_STR(back.backoff_reason, "memory");
	CHECK(back.updated_ns > 0);
	CHECK_STR(back.mode, "lock");
	CHECK_EQ_U64(back.locked_files, 3);
	CHECK_EQ_U64(back.locked_bytes, 12288);
	CHECK_EQ_U64(back.protected_bytes, 16384);
	CHECK_STR(back.protect_cgroup, "/sys/fs/cgroup/a b\\c");
	CHECK_EQ_U64(back.nprofiles, 2);
	if (back.nprofiles == 2) {
		CHECK_STR(back.profiles[0], "/a b/p.prof");
		CHECK_STR(back.profiles[1], "/with\\back\nslash");
	}
	hs_keep_state_release(&back);
	/* a file cut short, or of another kind, is refused with a reason */
	snprintf(other, sizeof(other), "%s/cut.state", dir);
	f = fopen(other, "w");
	fputs("hotset-keep-state 1\nrefault_pages 3\n", f);
	fclose(f);
	CHECK(hs_keep_state_read(other, &back, &err) == -EINVAL);
	CHECK(strstr(err.msg, "cut short") != NULL);
	f = fopen(other, "w");
	fputs("hotset-keep-state 1\nrefault_pages -3\nend\n", f);
	fclose(f);
	CHECK(hs_keep_state_read(other, &back, &err) == -EINVAL);
	CHECK(strstr(err.msg, "line 2") != NULL);
	f = fopen(other, "w");
	fputs("hotset-profile 1\n", f);
	fclose(f);
	CHECK(hs_keep_state_read(other, &back, &err) == -EINVAL);
	scratch_done();
}

/*
 * The state is its writer's alone (0600), whatever the umask; a view is
 * the user's it shows (0400), and says whose it is.
 */
TEST(the_state_is_its_writers_alone_a_view_its_users)
{
	const char *dir = scratch_dir();
	struct hs_keep_state st = { .files = 2, .replaced_files = 1, .mode = "watch" }, back;
	struct hs_error err = { 0 };
	char path[128], *view;
	struct stat sb;

	snprintf(path, sizeof(path), "%s/s.state", dir);
	umask(0);
	CHECK(hs_keep_state_write(path, &st) == 0);
	CHECK(stat(path, &sb) == 0 && (sb.st_mode & 07777) == 0600);
	CHECK(hs_keep_state_read(path, &back, &err) == 0);
	CHECK(!back.view);
	CHECK_EQ_U64(back.replaced_files, 1);
	hs_keep_state_release(&back);
	view = hs_keep_view_path(path, 65534);
	CHECK(view != NULL && strstr(view, "/s.state.uid-65534") != NULL);
	st.view = true;
	st.view_uid = 65534;
	if (geteuid() != 0) {
		free(view);
		scratch_done();
		SKIP("a view is made its user's by root");
	}
	CHECK(hs_keep_state_write_view(view, &st, 65534, 65534) == 0);
	CHECK(stat(view, &sb) == 0 && (sb.st_mode & 07777) == 0400 && sb.st_uid == 65534);
	CHECK(hs_keep_state_read(view, &back, &err) == 0);
	CHECK(back.view && back.view_uid == 65534);
	CHECK_EQ_U64(back.files, 2);
	hs_keep_state_release(&back);
	free(view);
	scratch_done();
}

TEST(one_keeper_per_state)
{
	const char *dir = scratch_dir();
	char path[128];
	pid_t holder = -1;
	int fd, again;

	snprintf(path, sizeof(path), "%s/s.state", dir);
	CHECK(hs_keep_lock_holder(path) == -ENOENT);	/* never ran */
	fd = hs_keep_lock(path, &holder);
	CHECK(fd >= 0);
	CHECK(hs_keep_lock_holder(path) == getpid());
	/* a second lock on its own descriptor is refused, naming the holder */
	again = hs_keep_lock(path, &holder);
	CHECK(again == -EWOULDBLOCK);
	CHECK_EQ_U64(holder, getpid());
	close(fd);
	CHECK(hs_keep_lock_holder(path) == 0);	/* released with its descriptor */
	scratch_done();
}

TEST(a_profile_set_has_its_own_default_state)
{
	char *a[] = { "/var/tmp/job.profile", "/var/tmp/b.profile" };
	char *b[] = { "/var/tmp/job.profile" };
	char *odd[] = { "/var/tmp/my job;1.profile" };
	char *s1 = hs_keep_state_name("/run/x", a, 2), *s2 = hs_keep_state_name("/run/x", a, 2);
	char *s3 = hs_keep_state_name("/run/x", b, 1), *s4 = hs_keep_state_name("/run/x", odd, 1);

	CHECK(s1 && s2 && s3 && s4);
	CHECK_STR(s1, s2);			/* found again from the same PROFILEs */
	CHECK(strcmp(s1, s3) != 0);		/* another set, another state */
	CHECK(strncmp(s1, "/run/x/keep-job-", 16) == 0 && strlen(s1) == 16 + 8 + 6);
	CHECK(strncmp(s4, "/run/x/keep-my_job_1-", 21) == 0);
	free(s1);
	free(s2);
	free(s3);
	free(s4);
}

/* hs_keep_state_only() in $XDG_RUNTIME_DIR/hotset, as a user (root's is /run/hotset). */
static int only_state_as_user(const char *runtime, char *found, size_t size)
{
	struct hs_error err = { 0 };
	int p[2], rc = -EIO;
	pid_t pid;

	if (pipe(p) < 0 || (pid = fork()) < 0)
		return -errno;
	if (pid == 0) {
		char *state = NULL;
		int r;

		close(p[0]);
		setenv("XDG_RUNTIME_DIR", runtime, 1);
		if (geteuid() == 0 && setresuid(65534, 65534, 65534) < 0)
			_exit(1);
		r = hs_keep_state_only(&state, &err);
		if (write(p[1], &r, sizeof(r)) != sizeof(r) ||
		    (state && write(p[1], state, strlen(state) + 1) < 0))
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	memset(found, 0, size);
	if (read(p[0], &rc, sizeof(rc)) != sizeof(rc))
		rc = -EIO;
	else if (read(p[0], found, size - 1) < 0)
		rc = -EIO;
	close(p[0]);
	waitpid(pid, NULL, 0);
	return rc;
}

TEST(status_finds_the_one_state_of_the_directory)
{
	const char *dir = scratch_dir();
	char states[128], want[192], found[256];

	snprintf(states, sizeof(states), "%s/hotset", dir);
	CHECK(mkdir(states, 0755) == 0);
	CHECK(only_state_as_user(dir, found, sizeof(found)) == -ENOENT);
	/* its lock and views are not states */
	scratch_put(states, "keep-a-00000001.state.lock", "1\n");
	scratch_put(states, "keep-a-00000001.state.uid-1000", "");
	CHECK(only_state_as_user(dir, found, sizeof(found)) == -ENOENT);
	scratch_put(states, "keep-a-00000001.state", "");
	snprintf(want, sizeof(want), "%s/keep-a-00000001.state", states);
	CHECK(only_state_as_user(dir, found, sizeof(found)) == 0);
	CHECK_STR(found, want);
	scratch_put(states, "keep-b-00000002.state", "");
	CHECK(only_state_as_user(dir, found, sizeof(found)) == -EEXIST);
	scratch_done();
}

TEST(protect_sets_memory_low_of_a_cgroup_of_its_own_only)
{
	const char *dir = scratch_dir();
	char mount[128], own[160], set[256];
	struct hs_error err = { 0 };
	bool made = true;

	/* a fake cgroup2 tree: mount/own holds this process alone */
	snprintf(mount, sizeof(mount), "%s/cg", dir);
	snprintf(own, sizeof(own), "%s/keep.service", mount);
	mkdir(mount, 0755);
	mkdir(own, 0755);
	scratch_put(own, "cgroup.controllers", "cpu io memory pids\n");
	scratch_put(own, "cgroup.procs", "1234\n");
	scratch_put(own, "memory.low", "0\n");
	CHECK(hs_keep_protect(mount, own, "x", 1 << 20, set, sizeof(set), &made, &err) == 0);
	CHECK(!made);
	CHECK_STR(set, own);
	CHECK_STR(scratch_get(own, "memory.low"), "1048576\n");
	hs_keep_unprotect(own, false);
	CHECK_STR(scratch_get(own, "memory.low"), "0\n");
	/* shared with other processes: their memory would be protected too */
	scratch_put(own, "cgroup.procs", "1234\n5678\n");
	CHECK(hs_keep_protect(mount, own, "x", 1 << 20, set, sizeof(set), &made, &err) == -EBUSY);
	CHECK(strstr(err.msg, "holds 2 processes") != NULL);
	/* no memory controller: said, with where to enable it */
	scratch_put(own, "cgroup.procs", "1234\n");
	scratch_put(own, "cgroup.controllers", "cpu io pids\n");
	CHECK(hs_keep_protect(mount, own, "x", 1 << 20, set, sizeof(set), &made, &err) == -ENOTSUP);
	CHECK(strstr(err.msg, "cannot be done here") != NULL);
	CHECK_STR(scratch_get(own, "memory.low"), "0\n");
	scratch_done();
}

#define LLVMFuzzerTestOneInput fuzz_keepstate
#include "../fuzz/fuzz-keepstate.c"
#undef LLVMFuzzerTestOneInput

TEST(keepstate_fuzz_corpus_replays)
{
	CHECK(replay("keepstate", fuzz_keepstate) > 0);
}

int main(void)
{
	return RUN_TESTS(keepstate_fuzz_corpus_replays, the_period_tightens_after_a_loss_and_backs_off_when_calm,
			 the_cost_follows_what_checks_measure,
			 small_files_are_checked_in_rounds_of_one_interval,
			 the_cpu_share_stretches_rounds_of_many_files,
			 large_files_take_at_most_half_the_share,
			 files_told_evicted_are_checked_within_the_share,
			 pressure_backs_off_until_quiet_for_a_while,
			 a_low_stall_ends_a_back_off_early_and_a_soon_one_doubles_it,
			 io_pressure_slows_to_a_trickle_apart_from_memory_back_offs,
			 the_state_file_round_trips_and_is_written_whole,
			 the_state_is_its_writers_alone_a_view_its_users, one_keeper_per_state,
			 a_profile_set_has_its_own_default_state,
			 status_finds_the_one_state_of_the_directory,
			 protect_sets_memory_low_of_a_cgroup_of_its_own_only);
}
