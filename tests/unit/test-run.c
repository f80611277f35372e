/*
 * test-run.c - the parts of `hotset run` that need no job: the job file
 * (errors with their line), the records of the state directory (they read
 * back what was written), the scheduler's choices, and the queue's state
 * saved and resumed.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "queue/jobfile.h"
#include "queue/queue.h"
#include "queue/runstate.h"
#include "queue/sched.h"
#include "unit.h"
#include "corpus.h"
#include "scratch.h"

static int parse(const char *text, struct hs_jobfile *jf, struct hs_error *err)
{
	memset(err, 0, sizeof(*err));
	return hs_jobfile_parse(text, strlen(text), jf, err);
}

TEST(a_job_file_gives_names_and_commands)
{
	struct hs_jobfile jf;
	struct hs_error err;

	CHECK(parse("# jobs\n\n  a   sleep 1  \nb.v-2_x\techo 'x  y' # not a comment\r\n", &jf,
		    &err) == 0);
	CHECK_EQ_U64(jf.n, 2);
	CHECK(!strcmp(jf.jobs[0].name, "a") && !strcmp(jf.jobs[0].command, "sleep 1"));
	CHECK(!strcmp(jf.jobs[1].name, "b.v-2_x"));
	CHECK(!strcmp(jf.jobs[1].command, "echo 'x  y' # not a comment"));
	CHECK_EQ_U64(jf.jobs[1].line, 4);
	hs_jobfile_free(&jf);
}

TEST(a_bad_job_file_is_refused_with_its_line)
{
	struct hs_jobfile jf;
	struct hs_error err;
	char big[HS_JOB_LINE_MAX + 16];

	CHECK(parse("a x\n\nonly-a-name\n", &jf, &err) == -EINVAL);
	CHECK_EQ_U64(err.line, 3);
	CHECK(strstr(err.msg, "no command"));
	CHECK(jf.n == 0);
	hs_jobfile_free(&jf);
	CHECK(parse("a x\nb y\na z\n", &jf, &err) == -EINVAL && err.line == 3);
	CHECK(strstr(err.msg, "already named on line 1"));
	CHECK(parse("a/b x\n", &jf, &err) == -EINVAL && err.line == 1);
	CHECK(strstr(err.msg, "not a job name"));
	CHECK(parse(".. x\n", &jf, &err) == -EINVAL);
	CHECK(hs_jobfile_parse("a x\nb \0y\n", 10, &jf, &err) == -EINVAL && err.line == 2);
	CHECK(strstr(err.msg, "NUL"));
	memset(big, 'x', sizeof(big) - 1);
	big[0] = 'a', big[1] = ' ', big[sizeof(big) - 1] = '\0';
	CHECK(parse(big, &jf, &err) == -EINVAL && strstr(err.msg, "longer than"));
	memset(big, 'n', 70);
	strcpy(big + 70, " x");
	CHECK(parse(big, &jf, &err) == -EINVAL && strstr(err.msg, "longer than 64"));
}

TEST(a_name_given_twice_is_refused_at_the_first_line_that_gives_one_again)
{
	struct hs_jobfile jf;
	struct hs_error err;

	/* b comes again before a does, though a sorts first */
	CHECK(parse("b x\na x\nc x\nb y\na z\n", &jf, &err) == -EINVAL);
	CHECK_EQ_U64(err.line, 4);
	CHECK(strstr(err.msg, "job 'b' is already named on line 1"));
	CHECK(jf.n == 0 && !jf.by_name);
	/* a third time says the first */
	CHECK(parse("q x\nz x\nq y\nq z\n", &jf, &err) == -EINVAL && err.line == 3);
	CHECK(strstr(err.msg, "'q' is already named on line 1"));
	/* a name given twice before a bad line is what is wrong first; after it, the bad line */
	CHECK(parse("a x\na y\nb/c x\n", &jf, &err) == -EINVAL && err.line == 2);
	CHECK(strstr(err.msg, "already named"));
	CHECK(parse("a x\nb/c x\na y\n", &jf, &err) == -EINVAL && err.line == 2);
	CHECK(strstr(err.msg, "not a job name"));
}

TEST(jobs_are_found_by_name)
{
	struct hs_jobfile jf;
	struct hs_error err;

	CHECK(parse("m x\nb y\n\nz w\n", &jf, &err) == 0);
	CHECK(hs_jobfile_find(&jf, "m") == 0 && hs_jobfile_find(&jf, "b") == 1);
	CHECK(hs_jobfile_find(&jf, "z") == 2 && hs_jobfile_find(&jf, "c") == -1);
	CHECK(hs_jobfile_find(&jf, "") == -1 && hs_jobfile_find(&jf, "zz") == -1);
	/* one added is found too, and a name taken is refused */
	CHECK(hs_jobfile_add(&jf, "c", "true", 0) == 0 && hs_jobfile_find(&jf, "c") == 3);
	CHECK(hs_jobfile_find(&jf, "b") == 1 && hs_jobfile_find(&jf, "z") == 2);
	CHECK(hs_jobfile_add(&jf, "m", "true", 0) == -EEXIST && jf.n == 4);
	hs_jobfile_free(&jf);
	/* an empty one, and one of -- COMMAND */
	CHECK(parse("# nothing\n", &jf, &err) == 0 && jf.n == 0);
	CHECK(hs_jobfile_find(&jf, "a") == -1);
	CHECK(hs_jobfile_add(&jf, "sleep", "sleep 1", 0) == 0 && hs_jobfile_find(&jf, "sleep") == 0);
	hs_jobfile_free(&jf);
}

/*
 * 200,000 jobs, named in the reverse of their order: each found where it
 * is, and one name again at the end found at its line. (Their speed is
 * bench/run-jobfile.sh's; what they cost in run, t0805-run-jobfile.)
 */
TEST(a_large_job_file_is_indexed_whole)
{
	enum { N = 200000 };
	struct hs_jobfile jf;
	struct hs_error err = { 0 };
	char *text = NULL, name[16];
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	for (int i = 0; i < N; i++)
		fprintf(f, "j%06d run %d\n", N - 1 - i, i);
	fclose(f);
	CHECK(hs_jobfile_parse(text, len, &jf, &err) == 0);
	CHECK_EQ_U64(jf.n, N);
	for (int i = 0; i < N; i += 997) {
		snprintf(name, sizeof(name), "j%06d", i);
		CHECK_EQ_U64(hs_jobfile_find(&jf, name), N - 1 - i);
	}
	hs_jobfile_free(&jf);
	free(text);
	f = open_memstream(&text, &len);
	for (int i = 0; i < N; i++)
		fprintf(f, "j%06d run %d\n", i, i);
	fprintf(f, "j123456 again\n");
	fclose(f);
	CHECK(hs_jobfile_parse(text, len, &jf, &err) == -EINVAL);
	CHECK_EQ_U64(err.line, N + 1);
	CHECK(strstr(err.msg, "already named on line 123457"));
	free(text);
}

TEST(a_record_reads_back_as_written)
{
	struct hs_run_record a = { .runs = 3, .exit_status = 130, .signal = 2,
				   .start_ns = 1700000000123456789, .end_ns = 1700000001000000000,
				   .wall_s = 1.5, .user_s = 0.25, .io_wait_known = true,
				   .io_wait_s = 0.125, .io_known = true, .read_bytes_disk = 1 << 20,
				   .max_rss_bytes = 4096, .rerun_known = true,
				   .rerun_cache_bytes = 8192 }, b;
	struct hs_error err = { 0 };
	char *text = NULL;
	size_t len;
	FILE *f = open_memstream(&text, &len);

	hs_run_record_print(f, &a);
	fclose(f);
	CHECK(hs_run_record_parse(text, len, &b, &err) == 0);
	CHECK(b.runs == 3 && b.exit_status == 130 && b.signal == 2);
	CHECK(b.start_ns == a.start_ns && b.end_ns == a.end_ns);
	CHECK(b.wall_s == 1.5 && b.user_s == 0.25 && b.io_wait_known && b.io_wait_s == 0.125);
	CHECK(b.io_known && b.read_bytes_disk == 1 << 20 && !b.profile_known);
	CHECK(b.rerun_known && b.rerun_cache_bytes == 8192);
	free(text);
	CHECK(hs_run_record_parse("runs 1\nwall_seconds 1,5\n", 23, &b, &err) == -EINVAL);
	CHECK_EQ_U64(err.line, 2);
}

static struct hs_sched_job known(uint64_t need, bool cpu_bound)
{
	return (struct hs_sched_job){ .state = HS_Q_PENDING, .known = true, .need = need,
				      .cpu_bound = cpu_bound };
}

TEST(jobs_start_while_they_fit_the_budget)
{
	struct hs_sched s = { .slots = 4, .budget = 100 };
	struct hs_sched_job j[3] = { known(60, false), known(30, false), known(30, false) };

	CHECK(hs_sched_next(&s, j, 3) == 0);
	j[0].state = HS_Q_RUNNING;
	CHECK(hs_sched_next(&s, j, 3) == 1);
	j[1].state = HS_Q_RUNNING;
	CHECK(hs_sched_next(&s, j, 3) == -1);
	CHECK(j[2].wait == HS_WAIT_MEMORY);
	/* a slot, not memory */
	s.slots = 2, s.budget = 1000;
	CHECK(hs_sched_next(&s, j, 3) == -1 && j[2].wait == HS_WAIT_CPU);
}

TEST(a_job_larger_than_the_budget_leaves_only_the_slack_and_is_not_passed)
{
	struct hs_sched s = { .slots = 4, .budget = 100 };
	struct hs_sched_job j[4] = { known(20, false), known(500, false), known(10, true),
				     known(20, true) };

	CHECK(hs_sched_next(&s, j, 4) == 0);
	j[0].state = HS_Q_RUNNING;
	/* counted as 90 of the 100: it does not fit beside 20, and holds its place */
	CHECK(hs_sched_next(&s, j, 4) == -1);
	CHECK(j[1].wait == HS_WAIT_MEMORY && j[2].wait == HS_WAIT_ORDER);
	j[0].state = HS_Q_DONE;
	CHECK(hs_sched_next(&s, j, 4) == 1);	/* never skipped */
	j[1].state = HS_Q_RUNNING;
	/* a job that needs little runs beside it, in the slack; one that needs more waits */
	CHECK(hs_sched_next(&s, j, 4) == 2);
	j[2].state = HS_Q_RUNNING;
	CHECK(hs_sched_next(&s, j, 4) == -1 && j[3].wait == HS_WAIT_MEMORY);
}

TEST(without_slots_jobs_share_the_cpus_by_what_they_use)
{
	struct hs_sched s = { .cpus = 2, .budget = 1000 };
	struct hs_sched_job j[4] = { known(10, false), known(10, true), known(10, true),
				     known(10, false) };

	j[0].cpu = 0.15, j[1].cpu = 1.0, j[2].cpu = 1.0, j[3].cpu = 0.1;
	j[0].state = HS_Q_RUNNING;
	CHECK(hs_sched_next(&s, j, 4) == 1);	/* 0.15 + 1 */
	j[1].state = HS_Q_RUNNING;
	/* 2.15 would not fit the 2 CPUs; the job that mostly waits does: 1.25 */
	CHECK(hs_sched_next(&s, j, 4) == 3 && j[2].wait == HS_WAIT_CPU);
	j[3].state = HS_Q_RUNNING;
	j[2].cpu = 0.7;
	CHECK(hs_sched_next(&s, j, 4) == 2);	/* 1.95 */
	j[2].state = HS_Q_RUNNING;
	j[3].state = HS_Q_DONE;
	/* a job with no history counts one CPU, a multi-threaded one no more than all */
	j[1].state = j[2].state = HS_Q_DONE;
	j[3] = (struct hs_sched_job){ .state = HS_Q_PENDING, .known = true, .cpu_bound = true,
				      .need = 10, .cpu = 7.5 };
	CHECK(hs_sched_next(&s, j, 4) == -1 && j[3].wait == HS_WAIT_CPU);
	j[0].state = HS_Q_DONE;
	CHECK(hs_sched_next(&s, j, 4) == 3);
}

TEST(a_later_job_passes_one_waiting_for_memory_only_if_both_fit)
{
	struct hs_sched s = { .slots = 4, .budget = 100 };
	struct hs_sched_job j[4] = { known(50, false), known(60, false), known(30, false),
				     known(45, false) };

	j[0].state = HS_Q_RUNNING;
	/* 1 waits for memory; 3 would fit now (50 + 45) but not beside 1: it waits */
	CHECK(hs_sched_next(&s, j, 4) == -1);
	CHECK(j[1].wait == HS_WAIT_MEMORY && j[2].wait == HS_WAIT_ORDER &&
	      j[3].wait == HS_WAIT_ORDER);
	s.budget = 150;	/* room for 1 now: it goes first, in file order */
	CHECK(hs_sched_next(&s, j, 4) == 1);
}

TEST(a_job_that_ends_before_there_is_room_for_the_held_one_passes_it)
{
	struct hs_sched s = { .slots = 4, .budget = 100 };
	struct hs_sched_job j[4] = { known(80, false), known(90, false), known(15, true),
				     known(15, true) };

	j[0].state = HS_Q_RUNNING, j[0].wall = 60, j[0].elapsed = 20;	/* 40 s left */
	j[2].wall = 30;		/* ends in 30 s: before 1 could start */
	j[3].wall = 50;		/* would end after: it waits */
	CHECK(hs_sched_next(&s, j, 4) == 2);
	CHECK(j[1].wait == HS_WAIT_MEMORY && j[2].wait == HS_WAIT_NONE);
	j[2].state = HS_Q_RUNNING, j[2].elapsed = 0;
	CHECK(hs_sched_next(&s, j, 4) == -1 && j[3].wait == HS_WAIT_ORDER);
	/* the running job outlived its last run: room any moment, no one passes */
	j[2].state = HS_Q_PENDING, j[0].elapsed = 70;
	CHECK(hs_sched_next(&s, j, 4) == -1 && j[2].wait == HS_WAIT_ORDER);
	/* no wall time known for the running job: never */
	j[0].wall = 0, j[0].elapsed = 0;
	CHECK(hs_sched_next(&s, j, 4) == -1 && j[2].wait == HS_WAIT_ORDER);
	/* nor for the one that would pass; the next one ends in time (50 of 60 s) */
	j[0].wall = 60, j[2].wall = 0;
	CHECK(hs_sched_next(&s, j, 4) == 3 && j[2].wait == HS_WAIT_ORDER);
}

/* The first end that makes room counts, whatever order the running jobs are listed in. */
TEST(room_for_the_held_job_comes_with_the_first_end_that_makes_it)
{
	struct hs_sched s = { .slots = 8, .budget = 100 };
	struct hs_sched_job j[5] = { known(10, false), known(40, false), known(90, false),
				     known(5, true), known(5, true) };

	j[0].state = HS_Q_RUNNING, j[0].wall = 40, j[0].elapsed = 10;	/* 30 s left */
	j[1].state = HS_Q_RUNNING, j[1].wall = 15, j[1].elapsed = 5;	/* 10 s left: then 90 fits */
	j[3].wall = 25;		/* would end after 10 s: waits */
	j[4].wall = 8;		/* 8 x 1.1 + 1 s: ends in time */
	CHECK(hs_sched_next(&s, j, 5) == 4);
	CHECK(j[2].wait == HS_WAIT_MEMORY && j[3].wait == HS_WAIT_ORDER);
}

/* 0 would count a job larger than the budget as needing nothing: all would start at once. */
TEST(a_budget_of_0_runs_jobs_that_need_memory_one_at_a_time)
{
	struct hs_sched s = { .slots = 4, .budget = 0 };
	struct hs_sched_job j[3] = { known(60, false), known(30, true), known(0, true) };

	CHECK(hs_sched_next(&s, j, 3) == 0);
	j[0].state = HS_Q_RUNNING;
	CHECK(hs_sched_next(&s, j, 3) == -1);
	CHECK(j[1].wait == HS_WAIT_MEMORY && j[2].wait == HS_WAIT_ORDER);
	j[0].state = HS_Q_DONE;
	CHECK(hs_sched_next(&s, j, 3) == 1);
	/* below ten bytes a tenth is nothing: the larger job takes it all */
	s.budget = 5, j[2].need = 3;
	j[1].state = HS_Q_RUNNING;
	CHECK(hs_sched_next(&s, j, 3) == -1 && j[2].wait == HS_WAIT_MEMORY);
}

TEST(a_job_passes_the_held_one_only_with_time_to_spare)
{
	struct hs_sched s = { .slots = 4, .budget = 100 };
	struct hs_sched_job j[3] = { known(50, false), known(60, false), known(45, true) };

	j[0].state = HS_Q_RUNNING, j[0].wall = 60, j[0].elapsed = 20;	/* 40 s left */
	/* it fits beside the running one, not beside the held one: 1.1 x 36 + 1 s > 40 s */
	j[2].wall = 36;
	CHECK(hs_sched_next(&s, j, 3) == -1);
	CHECK(j[1].wait == HS_WAIT_MEMORY && j[2].wait == HS_WAIT_ORDER);
	j[2].wall = 35.4;	/* 39.94 s: in time */
	CHECK(hs_sched_next(&s, j, 3) == 2);
	/* a clock set back makes the elapsed time negative: no more time left than the wall */
	j[0].elapsed = -1000, j[2].wall = 100;
	CHECK(hs_sched_next(&s, j, 3) == -1 && j[2].wait == HS_WAIT_ORDER);
}

TEST(a_job_that_fits_beside_the_held_one_once_it_starts_passes_it)
{
	struct hs_sched s = { .slots = 4, .budget = 300 };
	struct hs_sched_job j[4] = { known(500, false), known(500, false), known(4, true),
				     known(44, false) };

	/* each large one counted as 270; 20 s until the held one starts, 30 left then */
	j[0].state = HS_Q_RUNNING, j[0].wall = 20;
	j[2].wall = 30;		/* it runs on beside the held one, in what is left */
	j[3].wall = 8;		/* it would end in time, but does not fit now */
	CHECK(hs_sched_next(&s, j, 4) == 2);
	CHECK(j[1].wait == HS_WAIT_MEMORY && j[2].wait == HS_WAIT_NONE);
	j[2].state = HS_Q_RUNNING;
	CHECK(hs_sched_next(&s, j, 4) == -1 && j[3].wait == HS_WAIT_ORDER);
	/* more than is left beside the held one: it waits */
	j[2].state = HS_Q_PENDING, j[2].need = 31;
	CHECK(hs_sched_next(&s, j, 4) == -1 && j[2].wait == HS_WAIT_ORDER);
	/* no end of the running one in sight: no one passes */
	j[2].need = 4, j[0].wall = 0;
	CHECK(hs_sched_next(&s, j, 4) == -1 && j[2].wait == HS_WAIT_ORDER);
}

TEST(the_first_job_waiting_for_a_cpu_keeps_its_memory)
{
	struct hs_sched s = { .cpus = 2, .budget = 100 };
	struct hs_sched_job j[3] = { known(30, true), known(60, false), known(30, false) };

	j[0].cpu = 1.5, j[1].cpu = 1.0, j[2].cpu = 0.2;
	j[0].state = HS_Q_RUNNING;
	/* 1 waits for a CPU; 2 would fit now (30 + 30), not beside 1's 60 */
	CHECK(hs_sched_next(&s, j, 3) == -1);
	CHECK(j[1].wait == HS_WAIT_CPU && j[2].wait == HS_WAIT_ORDER);
	j[2].need = 10;		/* 30 + 10 + 60: beside it */
	CHECK(hs_sched_next(&s, j, 3) == 2);
}

TEST(a_job_with_no_history_runs_alone_or_beside_cpu_bound_ones)
{
	struct hs_sched s = { .slots = 4, .budget = 1000 };
	struct hs_sched_job j[3] = { known(10, false), { .state = HS_Q_PENDING }, known(10, true) };

	j[0].state = HS_Q_RUNNING;
	CHECK(hs_sched_next(&s, j, 3) == -1);
	CHECK(j[1].wait == HS_WAIT_NO_HISTORY && j[2].wait == HS_WAIT_ORDER);
	j[0] = known(10, true);
	j[0].state = HS_Q_RUNNING;
	CHECK(hs_sched_next(&s, j, 3) == 1);	/* beside a CPU-bound job */
	j[1].state = HS_Q_RUNNING;
	CHECK(hs_sched_next(&s, j, 3) == 2);	/* a CPU-bound job joins it */
	j[2] = known(10, false);
	CHECK(hs_sched_next(&s, j, 3) == -1 && j[2].wait == HS_WAIT_UNKNOWN_RUNNING);
}

TEST(a_job_with_no_history_does_not_pass_one_held)
{
	struct hs_sched s = { .slots = 4, .budget = 100 };
	struct hs_sched_job j[3] = { known(60, true), known(60, false), { .state = HS_Q_PENDING } };

	j[0].state = HS_Q_RUNNING;
	/* beside CPU-bound jobs only, but its memory could be what 1 waits for */
	CHECK(hs_sched_next(&s, j, 3) == -1);
	CHECK(j[1].wait == HS_WAIT_MEMORY && j[2].wait == HS_WAIT_ORDER);
	/* nor one waiting for a CPU */
	s.slots = 1;
	CHECK(hs_sched_next(&s, j, 3) == -1);
	CHECK(j[1].wait == HS_WAIT_CPU && j[2].wait == HS_WAIT_CPU);
	s.slots = 0, s.cpus = 2, j[0].cpu = 0.5, j[1].cpu = 2;
	CHECK(hs_sched_next(&s, j, 3) == -1);
	CHECK(j[1].wait == HS_WAIT_CPU && j[2].wait == HS_WAIT_ORDER);
	j[0].state = HS_Q_DONE;
	CHECK(hs_sched_next(&s, j, 3) == 1);
}

TEST(io_pressure_holds_io_bound_jobs_only)
{
	struct hs_sched s = { .slots = 4, .budget = 1000, .pressure_known = true,
			      .io_pressure = HS_SCHED_IO_PRESSURE + 1 };
	struct hs_sched_job j[3] = { known(10, false), known(10, false), known(10, true) };

	j[0].state = HS_Q_RUNNING;
	CHECK(hs_sched_next(&s, j, 3) == 2);
	CHECK(j[1].wait == HS_WAIT_IO_PRESSURE);
	j[0].state = HS_Q_DONE, j[2].state = HS_Q_DONE;
	CHECK(hs_sched_next(&s, j, 3) == 1);	/* nothing runs: it goes */
}

TEST(the_need_is_a_warm_reruns_cache_writes_and_peak_memory)
{
	struct hs_run_record r = { .max_rss_bytes = 100, .profile_known = true,
				   .working_set_bytes = 5000, .io_known = true,
				   .read_bytes_disk = 7000 };

	CHECK_EQ_U64(hs_sched_need(&r), 5100);
	r.rerun_known = true, r.rerun_cache_bytes = 3000;
	CHECK_EQ_U64(hs_sched_need(&r), 3100);
	r.rerun_known = r.profile_known = false;
	CHECK_EQ_U64(hs_sched_need(&r), 7100);
	r.write_bytes_disk = 40;	/* what it writes takes page cache too */
	CHECK_EQ_U64(hs_sched_need(&r), 7140);
}

TEST(the_warmer_takes_the_next_job_waiting_for_a_cpu_beside_cpu_bound_ones)
{
	struct hs_sched s = { .slots = 1, .budget = 1000 };
	struct hs_sched_job j[3] = {
		{ .state = HS_Q_RUNNING, .known = true, .cpu_bound = true, .need = 400 },
		{ .state = HS_Q_PENDING, .known = true, .need = 500, .wait = HS_WAIT_CPU },
		{ .state = HS_Q_PENDING, .known = true, .need = 100, .wait = HS_WAIT_CPU },
	};

	CHECK(hs_sched_warm_next(&s, j, 3) == 1);
	j[1].warmed = true;	/* once: not again, and not the one after it */
	CHECK(hs_sched_warm_next(&s, j, 3) == -1);
	j[1].warmed = false, j[1].need = 601;	/* it would not fit beside the running one */
	CHECK(hs_sched_warm_next(&s, j, 3) == -1);
	j[1].need = 600, j[1].wait = HS_WAIT_MEMORY;	/* it waits for more than a CPU */
	CHECK(hs_sched_warm_next(&s, j, 3) == -1);
	j[1].wait = HS_WAIT_CPU, j[1].known = false;
	CHECK(hs_sched_warm_next(&s, j, 3) == -1);
	j[1].known = true, j[0].cpu_bound = false;	/* a job waits for the disk: leave it alone */
	CHECK(hs_sched_warm_next(&s, j, 3) == -1);
	j[0].cpu_bound = true, j[0].known = false;
	CHECK(hs_sched_warm_next(&s, j, 3) == -1);
	j[0].known = true, j[0].state = HS_Q_DONE;	/* nothing runs: it starts at once */
	CHECK(hs_sched_warm_next(&s, j, 3) == -1);
	j[0].state = HS_Q_RUNNING, j[1].state = HS_Q_DONE;
	CHECK(hs_sched_warm_next(&s, j, 3) == 2);
}

static void write_text(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	CHECK(fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	close(fd);
}

TEST(a_job_file_is_read_from_a_file_or_a_pipe_never_a_named_fifo)
{
	struct hs_jobfile jf = { 0 };
	struct hs_error err = { 0 };
	char path[64];
	int p[2];

	scratch_dir();
	write_text(path_in("jobs"), "a true\n# b\nb sleep 1\n");
	CHECK(hs_jobfile_load(path_in("jobs"), &jf, &err) == 0);
	CHECK_EQ_U64(jf.n, 2);
	CHECK_EQ_U64(jf.jobs[1].line, 3);
	hs_jobfile_free(&jf);
	write_text(path_in("empty"), "# nothing\n\n");
	CHECK(hs_jobfile_load(path_in("empty"), &jf, &err) == -EINVAL);
	CHECK(!strcmp(err.msg, "no job in the file") && err.line == 0);
	hs_jobfile_free(&jf);
	write_text(path_in("bad"), "a true\nonly-a-name\n");
	memset(&err, 0, sizeof(err));
	CHECK(hs_jobfile_load(path_in("bad"), &jf, &err) < 0 && err.line == 2);
	hs_jobfile_free(&jf);
	/* a named FIFO with no writer: refused at once, not read for ever */
	CHECK(mkfifo(path_in("fifo"), 0600) == 0);
	memset(&err, 0, sizeof(err));
	CHECK(hs_jobfile_load(path_in("fifo"), &jf, &err) == -EINVAL);
	CHECK(strstr(err.msg, "a named FIFO") != NULL);
	CHECK(hs_jobfile_load(scratch, &jf, &err) == -EINVAL);
	CHECK(!strcmp(err.msg, "not a regular file"));
	CHECK(hs_jobfile_load(path_in("none"), &jf, &err) == -ENOENT);
	/* a pipe the shell made: read to its end */
	CHECK(pipe(p) == 0);
	CHECK(write(p[1], "c echo c\n", 9) == 9);
	close(p[1]);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", p[0]);
	CHECK(hs_jobfile_load(path, &jf, &err) == 0 && jf.n == 1);
	CHECK(!strcmp(jf.jobs[0].command, "echo c"));
	hs_jobfile_free(&jf);
	close(p[0]);
	scratch_done();
}

static char said[512];

static void remember(void *ctx, enum hs_runq_level level, const char *msg)
{
	snprintf(said, sizeof(said), "%s%s", level == HS_RUNQ_WARNING ? "warning: " : "", msg);
}

/* A queue of the job file text in the scratch directory's state, its jobs set up. */
static void new_queue(struct hs_runq *q, const char *text)
{
	struct hs_error err = { 0 };

	memset(q, 0, sizeof(*q));
	q->ops.say = remember;
	q->warm_fd = -1;
	q->jobfile = "jobs";
	q->state = scratch;
	snprintf(q->logs_buf, sizeof(q->logs_buf), "%s/logs", scratch);
	q->logs = q->logs_buf;
	snprintf(q->queue_path, sizeof(q->queue_path), "%s/queue", scratch);
	CHECK(hs_jobfile_parse(text, strlen(text), &q->jf, &err) == 0);
	q->jf.hash = hs_fnv1a(text, strlen(text));
	CHECK(hs_runq_setup_jobs(q) == 0);
}

TEST(a_queue_saved_is_resumed_with_its_done_jobs_and_only_with_its_job_file)
{
	static const char text[] = "a true\nb false\nc true\n";
	struct hs_runq q, r;

	scratch_dir();
	new_queue(&q, text);
	CHECK(hs_runq_check_state(&q) == 0 && hs_runq_make_dirs(&q) == 0);
	CHECK(hs_runq_check_logs(&q) == 0);
	CHECK(!strcmp(q.jobs[1].dir, path_in("jobs/b")));
	CHECK(!strcmp(q.jobs[1].log, path_in("logs/b.log")));
	CHECK(!q.jobs[0].s.known);	/* no history yet */
	new_queue(&r, text);
	said[0] = '\0';
	CHECK(hs_runq_resume(&r, false) == -EINVAL);	/* nothing saved yet */
	CHECK(strstr(said, "no queue to resume") != NULL);
	q.jobs[1].s.state = HS_Q_DONE, q.jobs[1].exit_status = 1;
	q.jobs[1].start_ns = 10, q.jobs[1].end_ns = 20;
	q.jobs[2].s.state = HS_Q_RUNNING, q.jobs[2].pid = 1234;
	CHECK(hs_runq_save(&q) == 0 && !q.state_lost);
	CHECK(hs_runq_resume(&r, false) == 0);
	CHECK(r.jobs[0].s.state == HS_Q_PENDING);
	CHECK(r.jobs[1].s.state == HS_Q_DONE && r.jobs[1].exit_status == 1);
	CHECK(r.jobs[1].start_ns == 10 && r.jobs[1].end_ns == 20);
	CHECK(r.jobs[2].s.state == HS_Q_PENDING);	/* it was running: it runs again */
	hs_runq_release(&r);
	/* another engine's queue, another job file: refused, said */
	new_queue(&r, text);
	r.slurm = true;
	CHECK(hs_runq_resume(&r, false) == -EINVAL && strstr(said, "--engine local") != NULL);
	hs_runq_release(&r);
	new_queue(&r, "a true\n");
	CHECK(hs_runq_resume(&r, false) == -EINVAL);
	CHECK(strstr(said, "is not the job file of the queue") != NULL);
	hs_runq_release(&r);
	hs_runq_release(&q);
	scratch_done();
}

/* argv joined by spaces, unquoted: enough for the words below */
static char *join(char *const *argv)
{
	size_t n = 1;
	char *s;

	for (char *const *a = argv; *a; a++)
		n += strlen(*a) + 1;
	if (!(s = calloc(1, n)))
		return NULL;
	for (char *const *a = argv; *a; a++)
		strcat(strcat(s, a == argv ? "" : " "), *a);
	return s;
}

TEST(a_command_is_a_queue_of_one_job_named_after_it)
{
	char *cmd[] = { "/usr/bin/my tool+1", "-x", NULL }, *dir[] = { "bin/", NULL };
	struct hs_runq q = { .ops.join = join };

	CHECK(hs_runq_add_command(&q, cmd, NULL) == 0);
	CHECK_EQ_U64(q.jf.n, 1);
	if (q.jf.n != 1 || !q.jf.jobs)
		return;
	CHECK_STR(q.jf.jobs[0].name, "my_tool_1");	/* its basename, bytes a name cannot hold as _ */
	CHECK_STR(q.jf.jobs[0].command, "/usr/bin/my tool+1 -x");
	CHECK_STR(q.jobfile, "-");
	CHECK(q.jf.hash == hs_fnv1a("/usr/bin/my tool+1 -x", 21));
	hs_jobfile_free(&q.jf);
	memset(&q.jf, 0, sizeof(q.jf));
	CHECK(hs_runq_add_command(&q, dir, NULL) == 0);
	CHECK_STR(q.jf.jobs[0].name, "job");	/* no basename to name it after */
	hs_jobfile_free(&q.jf);
	memset(&q.jf, 0, sizeof(q.jf));
	CHECK(hs_runq_add_command(&q, cmd, "a/b") == -EINVAL && q.jf.n == 0);
	CHECK(hs_runq_add_command(&q, cmd, "build-1") == 0);
	CHECK_STR(q.jf.jobs[0].name, "build-1");
	hs_jobfile_free(&q.jf);
}

TEST(a_queue_succeeded_when_every_job_ran_and_exited_0)
{
	struct hs_runq q;

	scratch_dir();
	new_queue(&q, "a true\nb true\n");
	CHECK(!hs_runq_succeeded(&q));	/* pending */
	q.jobs[0].s.state = q.jobs[1].s.state = HS_Q_DONE;
	CHECK(hs_runq_succeeded(&q));
	q.jobs[1].exit_status = 3;
	CHECK(!hs_runq_succeeded(&q));
	hs_runq_release(&q);
	scratch_done();
}

TEST(a_state_directory_locked_by_a_live_queue_is_refused_and_said)
{
	struct hs_runq q;
	char pid[32];
	int lock;

	scratch_dir();
	new_queue(&q, "a true\n");
	CHECK(hs_runq_make_dirs(&q) == 0);
	CHECK((lock = hs_runq_lock(&q, true)) >= 0);
	said[0] = '\0';
	/* the holder is this process, alive: no waiting, the other queue named */
	CHECK(hs_runq_lock(&q, true) == -EWOULDBLOCK);
	snprintf(pid, sizeof(pid), "(pid %d)", (int)getpid());
	CHECK(strstr(said, "is in use by another queue") && strstr(said, pid));
	close(lock);
	CHECK((lock = hs_runq_lock(&q, true)) >= 0);
	close(lock);
	hs_runq_release(&q);
	scratch_done();
}

#define LLVMFuzzerTestOneInput fuzz_jobfile
#include "../fuzz/fuzz-jobfile.c"
#undef LLVMFuzzerTestOneInput

TEST(jobfile_fuzz_corpus_replays)
{
	CHECK(replay("jobfile", fuzz_jobfile) > 0);
}

int main(void)
{
	return RUN_TESTS(a_command_is_a_queue_of_one_job_named_after_it,
			 a_queue_succeeded_when_every_job_ran_and_exited_0,
			 a_state_directory_locked_by_a_live_queue_is_refused_and_said,
			 a_job_file_gives_names_and_commands, a_bad_job_file_is_refused_with_its_line,
			 a_name_given_twice_is_refused_at_the_first_line_that_gives_one_again,
			 jobs_are_found_by_name, a_large_job_file_is_indexed_whole,
			 a_record_reads_back_as_written, jobs_start_while_they_fit_the_budget,
			 a_job_larger_than_the_budget_leaves_only_the_slack_and_is_not_passed,
			 without_slots_jobs_share_the_cpus_by_what_they_use,
			 a_job_that_ends_before_there_is_room_for_the_held_one_passes_it,
			 a_later_job_passes_one_waiting_for_memory_only_if_both_fit,
			 a_job_passes_the_held_one_only_with_time_to_spare,
			 room_for_the_held_job_comes_with_the_first_end_that_makes_it,
			 a_budget_of_0_runs_jobs_that_need_memory_one_at_a_time,
			 a_job_that_fits_beside_the_held_one_once_it_starts_passes_it,
			 the_first_job_waiting_for_a_cpu_keeps_its_memory,
			 a_job_with_no_history_runs_alone_or_beside_cpu_bound_ones,
			 a_job_with_no_history_does_not_pass_one_held,
			 io_pressure_holds_io_bound_jobs_only,
			 the_need_is_a_warm_reruns_cache_writes_and_peak_memory,
			 the_warmer_takes_the_next_job_waiting_for_a_cpu_beside_cpu_bound_ones,
			 a_job_file_is_read_from_a_file_or_a_pipe_never_a_named_fifo,
			 a_queue_saved_is_resumed_with_its_done_jobs_and_only_with_its_job_file,
			 jobfile_fuzz_corpus_replays);
}
