/*
 * test-usage.c - what a job cost (usage.h): the pressure totals, CPU time
 * and read requests of a cgroup, read from its files and turned into
 * stall times (a made-up cgroup: a directory of such files, the probe's
 * dir); the counts of reaped children; the notes for what is unknown or a
 * lower bound, never a guess; and, as root, the job's own cgroup made,
 * joined and removed.
 *
 * usage.c is included whole, for its snapshots and compute(): the figures
 * of a run are checked from snapshots made up for each case.
 */
#include <fcntl.h>
#include <math.h>
#include <sys/stat.h>

#include "job/usage.c"
#include "job/job.h"
#include "scratch.h"
#include "unit.h"

/* name in the scratch directory holds text. */
static void put(const char *name, const char *text)
{
	int fd = open(path_in(name), O_WRONLY | O_CREAT | O_TRUNC, 0644);

	CHECK(fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	close(fd);
}

/* The pressure files of a cgroup whose stall totals are these (microseconds). */
static void pressure(uint64_t io_some, uint64_t io_full, uint64_t cpu_some, uint64_t mem_some)
{
	char buf[512];

	snprintf(buf, sizeof(buf), "some avg10=1.00 avg60=0.50 avg300=0.10 total=%llu\n"
		 "full avg10=0.00 avg60=0.00 avg300=0.00 total=%llu\n",
		 (unsigned long long)io_some, (unsigned long long)io_full);
	put("io.pressure", buf);
	snprintf(buf, sizeof(buf), "some avg10=0.00 avg60=0.00 avg300=0.00 total=%llu\n"
		 "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", (unsigned long long)cpu_some);
	put("cpu.pressure", buf);
	snprintf(buf, sizeof(buf), "some avg10=0.00 avg60=0.00 avg300=0.00 total=%llu\n"
		 "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", (unsigned long long)mem_some);
	put("memory.pressure", buf);
}

static void cpu_stat(uint64_t user_us, uint64_t sys_us)
{
	char buf[256];

	snprintf(buf, sizeof(buf), "usage_usec %llu\nuser_usec %llu\nsystem_usec %llu\n"
		 "nr_periods 0\n", (unsigned long long)user_us + (unsigned long long)sys_us,
		 (unsigned long long)user_us, (unsigned long long)sys_us);
	put("cpu.stat", buf);
}

/* A probe of the made-up cgroup in the scratch directory, from source. */
static struct hs_usage_probe *fake_probe(enum hs_pressure_source source)
{
	struct hs_usage_probe *p = calloc(1, sizeof(*p));

	if (!p)
		_exit(1);
	p->source = source;
	snprintf(p->dir, sizeof(p->dir), "%s", scratch);
	put("cgroup.procs", "");
	return p;
}

/* A time for struct rusage. */
static struct timeval tv(double s)
{
	return (struct timeval){ (time_t)s, (suseconds_t)((s - (double)(time_t)s) * 1e6 + 0.5) };
}

/* ---- pressure, CPU and requests from the cgroup's files ------------------- */

TEST(the_job_cgroups_pressure_totals_are_its_stall_times)
{
	struct hs_usage_probe *p;
	struct snapshot a, b;
	struct hs_usage u;

	scratch_dir();
	p = fake_probe(HS_PRESSURE_JOB_CGROUP);
	pressure(1000000, 400000, 7, 11);
	cpu_stat(5000000, 1000000);
	put("io.stat", "8:0 rbytes=4096 wbytes=0 rios=3 wios=0 dbytes=0 dios=0\n");
	take_snapshot(p, 0, &a);
	CHECK(a.cg_ok && a.rios_ok && a.rios == 3);
	CHECK(a.io.some.total == 1000000 && a.io.full.total == 400000);
	pressure(2500000, 900000, 250007, 100011);
	cpu_stat(6500000, 1250000);
	put("io.stat", "8:0 rbytes=8192 wbytes=0 rios=8 wios=0 dbytes=0 dios=0\n"
		       "8:16 rbytes=4096 wbytes=0 rios=5 wios=1 dbytes=0 dios=0\n");
	take_snapshot(p, 0, &b);
	b.t = a.t + 2;	/* a run of 2 s */
	/* the reaped used more: a process run beside the job (a tracer) among them */
	a.children = (struct rusage){ 0 };
	b.children = (struct rusage){ .ru_utime = tv(2), .ru_stime = tv(0.5) };
	compute(p, &a, &b, 0, &u);
	CHECK(u.pressure == HS_PRESSURE_JOB_CGROUP);
	CHECK(fabs(u.wall_s - 2) < 1e-9);
	CHECK(fabs(u.io_wait_s - 1.5) < 1e-9 && fabs(u.io_wait_full_s - 0.5) < 1e-9);
	CHECK(fabs(u.cpu_wait_s - 0.25) < 1e-9 && fabs(u.memory_wait_s - 0.1) < 1e-9);
	/* a cgroup of the job's own holds the job alone: its CPU time is the job's */
	CHECK(fabs(u.user_s - 1.5) < 1e-9 && fabs(u.sys_s - 0.25) < 1e-9);
	CHECK(u.read_ios_known && u.read_ios == 10);	/* both devices */
	CHECK(u.still_running == 0);
	free(p);
	scratch_done();
}

/* PSI's aggregation can round a stall over the run's length: never more than the run. */
TEST(stall_times_are_no_longer_than_the_run_and_full_no_longer_than_some)
{
	struct hs_usage_probe *p;
	struct snapshot a, b;
	struct hs_usage u;

	scratch_dir();
	p = fake_probe(HS_PRESSURE_JOB_CGROUP);
	pressure(0, 0, 0, 0);
	cpu_stat(0, 0);
	take_snapshot(p, 0, &a);
	pressure(3000000, 3500000, 0, 0);
	take_snapshot(p, 0, &b);
	b.t = a.t + 2;
	compute(p, &a, &b, 0, &u);
	CHECK(fabs(u.io_wait_s - 2) < 1e-9 && fabs(u.io_wait_full_s - 2) < 1e-9);
	/* a total that went down (a cgroup made anew): nothing, not a huge figure */
	take_snapshot(p, 0, &a);
	pressure(10, 10, 0, 0);
	take_snapshot(p, 0, &b);
	compute(p, &a, &b, 0, &u);
	CHECK(u.io_wait_s == 0 && u.io_wait_full_s == 0);
	free(p);
	scratch_done();
}

TEST(read_requests_are_summed_over_devices_and_unknown_without_io_stat)
{
	uint64_t rios = 99;

	scratch_dir();
	CHECK(!io_stat_rios(scratch, &rios) && rios == 99);	/* no io controller */
	put("io.stat", "");
	CHECK(io_stat_rios(scratch, &rios) && rios == 0);	/* no I/O yet */
	put("io.stat", "259:0 rbytes=1 wbytes=2 rios=17 wios=3 dbytes=0 dios=0\n"
		       "8:0 rbytes=1 wbytes=2 rios=25 wios=3 dbytes=0 dios=0\n");
	CHECK(io_stat_rios(scratch, &rios) && rios == 42);
	put("io.stat", "8:0 rbytes=1 wbytes=2\n");
	CHECK(!io_stat_rios(scratch, &rios));
	scratch_done();
}

/* Pressure files gone at the end (the cgroup removed under us): unknown, said why. */
TEST(pressure_unreadable_at_the_end_is_unknown_with_a_note)
{
	struct hs_usage_probe *p;
	struct snapshot a, b;
	struct hs_usage u;

	scratch_dir();
	p = fake_probe(HS_PRESSURE_JOB_CGROUP);
	pressure(1, 1, 1, 1);
	cpu_stat(1, 1);
	take_snapshot(p, 0, &a);
	unlink(path_in("io.pressure"));
	take_snapshot(p, 0, &b);
	CHECK(a.cg_ok && !b.cg_ok);
	compute(p, &a, &b, 0, &u);
	CHECK(u.pressure == HS_PRESSURE_UNKNOWN && u.io_wait_s == 0);
	CHECK(p->nnotes == 1 && strstr(p->notes[0], "io_wait is unknown"));
	free(p);
	scratch_done();
}

/* ---- the counts of the reaped children --------------------------------------- */

/*
 * hotset's own cgroup (the job shares it): the CPU time it saw, less
 * hotset's own, is more than the children reaped used: some ended unseen
 * (a parent that ignored SIGCHLD). The cgroup's figure is taken, and the
 * counts only the reaped give are said to be lower bounds.
 */
TEST(cpu_time_of_processes_nobody_waited_for_comes_from_the_cgroup)
{
	struct hs_usage_probe *p;
	struct snapshot a, b;
	struct hs_usage u;

	scratch_dir();
	p = fake_probe(HS_PRESSURE_OWN_CGROUP);
	pressure(0, 0, 0, 0);
	cpu_stat(0, 0);
	put("cgroup.procs", "1\n");	/* hotset alone: no process of the job left */
	take_snapshot(p, 0, &a);
	cpu_stat(4000000, 1000000);
	take_snapshot(p, 0, &b);
	a.children = (struct rusage){ 0 };
	b.children = (struct rusage){ .ru_utime = tv(1), .ru_stime = tv(0.5), .ru_maxrss = 2048,
				      .ru_majflt = 3, .ru_minflt = 40 };
	a.self = (struct rusage){ 0 };
	b.self = (struct rusage){ .ru_utime = tv(0.5), .ru_stime = tv(0.25) };
	compute(p, &a, &b, 0, &u);
	CHECK(u.pressure == HS_PRESSURE_OWN_CGROUP);
	CHECK(fabs(u.user_s - 3.5) < 1e-6 && fabs(u.sys_s - 0.75) < 1e-6);	/* less hotset's */
	CHECK(u.major_faults == 3 && u.minor_faults == 40);
	CHECK(u.max_rss_bytes == 2048 * 1024);	/* a peak, in bytes */
	CHECK(u.read_ios_known == false);	/* hotset's own requests would be in there */
	CHECK(u.still_running == 0);
	CHECK(p->nnotes == 1 && strstr(p->notes[0], "without being waited for"));

	/* within the slack of what was reaped: the children's own figures stand */
	free(p);
	p = fake_probe(HS_PRESSURE_OWN_CGROUP);
	put("cgroup.procs", "1\n");
	cpu_stat(0, 0);
	take_snapshot(p, 0, &a);
	cpu_stat(1020000, 500000);
	take_snapshot(p, 0, &b);
	a.children = a.self = b.self = (struct rusage){ 0 };
	b.children = (struct rusage){ .ru_utime = tv(1), .ru_stime = tv(0.5) };
	compute(p, &a, &b, 0, &u);
	CHECK(fabs(u.user_s - 1) < 1e-6 && fabs(u.sys_s - 0.5) < 1e-6 && p->nnotes == 0);
	free(p);
	scratch_done();
}

TEST(processes_left_running_are_counted_and_said)
{
	struct hs_usage_probe *p;
	struct snapshot a, b;
	struct hs_usage u;

	scratch_dir();
	p = fake_probe(HS_PRESSURE_JOB_CGROUP);
	pressure(0, 0, 0, 0);
	cpu_stat(0, 0);
	take_snapshot(p, 0, &a);
	put("cgroup.procs", "100\n200\n300\n");	/* more than the caller knew of */
	take_snapshot(p, 0, &b);
	compute(p, &a, &b, 2, &u);
	CHECK(u.still_running == 3);
	CHECK(p->nnotes == 1 && strstr(p->notes[0], "3 processes started by the command were "
					   "still running"));
	free(p);
	p = fake_probe(HS_PRESSURE_UNKNOWN);
	compute(p, &a, &b, 1, &u);
	CHECK(u.still_running == 1 && strstr(p->notes[p->nnotes - 1], "1 process started by the "
						  "command was still running"));
	free(p);
	scratch_done();
}

/* Counts the reaped children's I/O, less this process's live threads'. */
TEST(a_reaped_childs_io_is_counted_and_ours_is_not)
{
	struct hs_proc_io before, after;
	struct hs_usage_helper x;
	char buf[65536] = { 0 };
	int fd, status;
	pid_t pid;

	if (!children_io(0, &before))
		SKIP("no per-task I/O accounting (/proc/self/io)");
	if ((pid = fork()) == 0) {
		fd = open("/dev/null", O_WRONLY);
		for (int i = 0; i < 4; i++)
			if (write(fd, buf, sizeof(buf)) != sizeof(buf))
				_exit(1);
		_exit(0);
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && status == 0);
	/* our own writes, after the child: not the child's */
	fd = open("/dev/null", O_WRONLY);
	CHECK(write(fd, buf, 1000) == 1000);
	close(fd);
	CHECK(children_io(0, &after));
	CHECK_EQ_U64(after.wchar - before.wchar, 4 * sizeof(buf));
	/* in a helper (a fork of ours), the same counts from zero */
	hs_usage_reaped(&x);
	CHECK(x.known && x.io_known && x.wchar == after.wchar);
}

/* ---- the job's own cgroup, made for real -------------------------------------- */

/*
 * As root: a cgroup for the job under hotset's own (a dead hotset's empty
 * one removed first), that a job joins as it starts, whose figures are
 * the run's, and that is removed at the end.
 */
TEST(the_jobs_cgroup_is_made_joined_and_removed)
{
	char own[PATH_MAX], mount[PATH_MAX], stale[PATH_MAX + 64], dir[PATH_MAX];
	struct hs_usage_probe *p;
	struct hs_usage u;
	struct hs_job job;
	struct hs_job_spec spec = { .argv = (char *[]){ "grep", "-q", "hotset-job\\.",
							 "/proc/self/cgroup", NULL } };
	struct stat st;
	int status = 0;
	pid_t dead;

	if (geteuid() != 0)
		SKIP("needs root (to make a cgroup)");
	if (hs_cgroup2_dirs(own, mount, sizeof(own)) < 0)
		SKIP("no cgroup2 filesystem");
	/* an empty cgroup of a hotset that was killed: a pid that is no more */
	if ((dead = fork()) == 0)
		_exit(0);
	waitpid(dead, NULL, 0);
	snprintf(stale, sizeof(stale), "%s/" CGROUP_PREFIX "%d", own[0] ? own : mount, (int)dead);
	if (mkdir(stale, 0755))
		SKIP("cannot make a cgroup here");
	if (hs_usage_begin(&p) != 0) {
		CHECK(!"hs_usage_begin() failed");
		rmdir(stale);
		return;
	}
	CHECK(stat(stale, &st) < 0 && errno == ENOENT);
	rmdir(stale);
	if (!hs_usage_cgroup_procs(p)) {
		printf("#   %s\n", p->nnotes ? p->notes[0] : "no note");
		hs_usage_end(p, 0, NULL);
		SKIP("no cgroup for the job on this machine");
	}
	snprintf(dir, sizeof(dir), "%s", p->dir);
	CHECK(stat(dir, &st) == 0 && S_ISDIR(st.st_mode));
	CHECK(strstr(dir, CGROUP_PREFIX) && strtol(strrchr(dir, '.') + 1, NULL, 10) == getpid());
	spec.cgroup_procs = hs_usage_cgroup_procs(p);
	CHECK(hs_job_start(&spec, &job) == 0);
	CHECK(hs_job_exec_result(&job, NULL) == 0);
	CHECK(waitpid(job.pid, &status, 0) == job.pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);	/* it ran in there */
	CHECK(hs_usage_end(p, 0, &u) == 0);
	CHECK(u.pressure == HS_PRESSURE_JOB_CGROUP && u.wall_s > 0);
	CHECK(u.read_ios_known || !u.read_ios);
	CHECK(stat(dir, &st) < 0 && errno == ENOENT);	/* removed */
}

/*
 * nobody may make no cgroup in the root one (not delegated), and shares
 * a cgroup with other processes: pressure is unknown, and the note says
 * why and what to do, rather than a figure of the whole machine.
 */
TEST(without_a_cgroup_of_its_own_io_wait_is_unknown_and_said_why)
{
	char own[PATH_MAX], mount[PATH_MAX];
	int pipefd[2], status = 0;
	pid_t pid;

	if (geteuid() != 0)
		SKIP("needs root (to become nobody)");
	if (hs_cgroup2_dirs(own, mount, sizeof(own)) < 0 || hs_cgroup_nprocs(own[0] ? own : mount) < 2)
		SKIP("no cgroup2, or hotset is alone in its cgroup");
	CHECK(pipe(pipefd) == 0);
	if ((pid = fork()) == 0) {
		struct hs_usage_probe *p;
		struct hs_usage u;

		if (setgid(65534) || setuid(65534) || hs_usage_begin(&p))
			_exit(2);
		hs_usage_end(p, 0, &u);
		if (u.pressure != HS_PRESSURE_UNKNOWN || u.io_wait_s != 0 || !u.nnotes)
			_exit(1);
		dprintf(pipefd[1], "%s\n", u.notes[0]);
		_exit(0);
	}
	close(pipefd[1]);
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
	char note_text[HS_USAGE_NOTE_LEN + 2] = "";
	ssize_t n = read(pipefd[0], note_text, sizeof(note_text) - 1);

	note_text[n > 0 ? n : 0] = '\0';
	printf("#   %s", note_text);
	CHECK(strstr(note_text, "io_wait is unknown"));
	CHECK(strstr(note_text, "uid 65534 may not create one") && strstr(note_text, "delegated"));
	close(pipefd[0]);
}

int main(void)
{
	return RUN_TESTS(the_job_cgroups_pressure_totals_are_its_stall_times,
			 stall_times_are_no_longer_than_the_run_and_full_no_longer_than_some,
			 read_requests_are_summed_over_devices_and_unknown_without_io_stat,
			 pressure_unreadable_at_the_end_is_unknown_with_a_note,
			 cpu_time_of_processes_nobody_waited_for_comes_from_the_cgroup,
			 processes_left_running_are_counted_and_said,
			 a_reaped_childs_io_is_counted_and_ours_is_not,
			 the_jobs_cgroup_is_made_joined_and_removed,
			 without_a_cgroup_of_its_own_io_wait_is_unknown_and_said_why);
}
