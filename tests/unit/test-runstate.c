/*
 * test-runstate.c - the state directory of `hotset run` (runstate.h): the
 * records of runs and the queue file read back as written, figures not
 * known kept unknown, what is malformed refused with its line, the files
 * written whole and private, the default directory, and the lock.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pwd.h>
#include <stdbool.h>
#include <sys/file.h>
#include <sys/stat.h>

#include "queue/runstate.h"
#include "scratch.h"
#include "unit.h"

/* What print() writes, as a malloc'd string (*len bytes). */
static char *printed_record(const struct hs_run_record *r, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	if (!f)
		_exit(1);
	hs_run_record_print(f, r);
	fclose(f);
	return buf;
}

static char *printed_queue(const struct hs_queue *q, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	if (!f)
		_exit(1);
	hs_queue_print(f, q);
	fclose(f);
	return buf;
}

/* Parse text as a record: its return value, err.line in *line. */
static int record_of(const char *text, struct hs_run_record *r, unsigned *line, char *msg)
{
	struct hs_error err = { 0 };
	int rc = hs_run_record_parse(text, strlen(text), r, &err);

	*line = err.line;
	if (msg)
		snprintf(msg, sizeof(err.msg), "%s", err.msg);
	return rc;
}

static int queue_of(const char *text, struct hs_queue *q, unsigned *line, char *msg)
{
	struct hs_error err = { 0 };
	int rc = hs_queue_parse(text, strlen(text), q, &err);

	*line = err.line;
	if (msg)
		snprintf(msg, sizeof(err.msg), "%s", err.msg);
	return rc;
}

/* ---- records of runs ------------------------------------------------------ */

TEST(a_record_reads_back_as_written_to_the_microsecond)
{
	struct hs_run_record a = {
		.runs = 4294967295u, .exit_status = 383, .signal = 127,
		.start_ns = -1, .end_ns = INT64_MAX, .wall_s = 12.3456789, .user_s = 0.000001,
		.sys_s = 999999.5, .io_wait_known = true, .io_wait_s = 0.25,
		.io_known = true, .read_bytes_disk = UINT64_MAX, .write_bytes_disk = 0,
		.max_rss_bytes = 1 << 20, .profile_known = true, .working_set_bytes = 4096,
		.rerun_known = true, .rerun_cache_bytes = 8192,
	}, b;
	struct hs_error err = { 0 };
	size_t len;
	char *text = printed_record(&a, &len);

	CHECK(strstr(text, "\nwall_seconds 12.345679\n"));	/* rounded, not cut */
	CHECK(strstr(text, "\nuser_seconds 0.000001\n"));
	CHECK(hs_run_record_parse(text, len, &b, &err) == 0 && err.line == 0);
	CHECK(b.runs == a.runs && b.exit_status == 383 && b.signal == 127);
	CHECK(b.start_ns == -1 && b.end_ns == INT64_MAX);
	CHECK(fabs(b.wall_s - 12.345679) < 1e-9 && b.user_s == 0.000001 && b.sys_s == 999999.5);
	CHECK(b.io_wait_known && b.io_wait_s == 0.25);
	CHECK(b.io_known && b.read_bytes_disk == UINT64_MAX && b.write_bytes_disk == 0);
	CHECK_EQ_U64(b.max_rss_bytes, 1 << 20);
	CHECK(b.profile_known && b.working_set_bytes == 4096);
	CHECK(b.rerun_known && b.rerun_cache_bytes == 8192);
	free(text);
}

/* "-" says unknown, read back as unknown: never a 0 that would look measured. */
TEST(figures_not_known_are_written_as_a_dash_and_read_back_unknown)
{
	struct hs_run_record a = { .runs = 1, .io_wait_s = 5, .read_bytes_disk = 7,
				   .working_set_bytes = 9, .rerun_cache_bytes = 11 }, b;
	struct hs_error err = { 0 };
	size_t len;
	char *text = printed_record(&a, &len);

	CHECK(strstr(text, "\nio_wait_seconds -\n") && strstr(text, "\nread_bytes_disk -\n"));
	CHECK(strstr(text, "\nwrite_bytes_disk -\n") && strstr(text, "\nworking_set_bytes -\n"));
	CHECK(strstr(text, "\nrerun_cache_bytes -\n"));
	CHECK(hs_run_record_parse(text, len, &b, &err) == 0);
	CHECK(!b.io_wait_known && !b.io_known && !b.profile_known && !b.rerun_known);
	CHECK(b.runs == 1);
	free(text);
}

/* A later version may write more: what is not known here is skipped, as are comments. */
TEST(unknown_keys_comments_and_blank_lines_are_skipped)
{
	struct hs_run_record r;
	unsigned line;

	CHECK(record_of("# a comment\n\nruns 2\nnew_figure 17 units\r\nsignal 9", &r, &line,
			NULL) == 0);
	CHECK(r.runs == 2 && r.signal == 9 && line == 0);
	CHECK(record_of("", &r, &line, NULL) == 0 && r.runs == 0);
	/* seconds without a fraction, or with up to nine digits of one */
	CHECK(record_of("wall_seconds 3\nuser_seconds 0.123456789\n", &r, &line, NULL) == 0);
	CHECK(r.wall_s == 3 && fabs(r.user_s - 0.123456789) < 1e-12);
}

TEST(a_malformed_record_is_refused_with_its_line_and_reason)
{
	static const struct {
		const char *text;
		unsigned line;
		const char *says;
	} bad[] = {
		{ "runs 1\nexit_status 384\n", 2, "exit_status: '384' is not a valid value" },
		{ "signal 128\n", 1, "signal: '128'" },
		{ "runs 4294967296\n", 1, "runs: '4294967296'" },
		{ "runs -1\n", 1, "runs: '-1'" },
		{ "runs 1x\n", 1, "runs" },
		{ "read_bytes_disk 18446744073709551616\n", 1, "read_bytes_disk" },
		{ "start_ns 9223372036854775808\n", 1, "start_ns" },
		{ "end_ns --1\n", 1, "end_ns" },
		{ "\n\nwall_seconds 1,5\n", 3, "wall_seconds: '1,5'" },
		{ "wall_seconds 1.\n", 1, "wall_seconds" },
		{ "wall_seconds .5\n", 1, "wall_seconds" },
		{ "wall_seconds 1.1234567890\n", 1, "wall_seconds" },
		{ "wall_seconds -\n", 1, "wall_seconds" },	/* a wall time is always known */
		{ "io_wait_seconds x\n", 1, "io_wait_seconds" },
		{ "# c\nruns\n", 2, "not a 'key value' line" },
		{ "runs \n", 1, "not a 'key value' line" },
		{ " runs 1\n", 1, "not a 'key value' line" },
	};
	struct hs_run_record r;
	char msg[256];
	unsigned line;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = record_of(bad[i].text, &r, &line, msg);

		if (rc != -EINVAL || line != bad[i].line || !strstr(msg, bad[i].says)) {
			printf("#   '%s': %d, line %u, '%s'\n", bad[i].text, rc, line, msg);
			CHECK(!"refused as expected");
		}
	}
}

TEST(a_nul_byte_is_refused_at_its_line)
{
	struct hs_run_record r;
	struct hs_error err = { 0 };

	CHECK(hs_run_record_parse("runs 1\nru\0s 2\n", 14, &r, &err) == -EINVAL);
	CHECK(err.line == 2 && strstr(err.msg, "NUL"));
}

TEST(a_record_is_saved_whole_private_and_loaded_back)
{
	struct hs_run_record a = { .runs = 3, .exit_status = 1, .wall_s = 2 }, b;
	struct hs_error err = { 0 };
	struct stat st;
	char *path;
	FILE *f;

	scratch_dir();
	path = path_in("history");
	CHECK(hs_run_record_load(path, &b, &err) == -ENOENT);
	CHECK(hs_run_record_save(path, &a) == 0);
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
	CHECK(hs_run_record_load(path, &b, &err) == 0 && b.runs == 3 && b.exit_status == 1);
	/* saved again over it: the new one, whole */
	a.runs = 4;
	CHECK(hs_run_record_save(path, &a) == 0);
	CHECK(hs_run_record_load(path, &b, &err) == 0 && b.runs == 4);
	/* a file spoiled by hand: refused with its line */
	f = fopen(path, "a");
	CHECK(f && fputs("max_rss_bytes lots\n", f) >= 0 && fclose(f) == 0);
	CHECK(hs_run_record_load(path, &b, &err) == -EINVAL && err.line == 16);
	CHECK(strstr(err.msg, "max_rss_bytes"));
	/* in a directory that is not there: the directory's error */
	CHECK(hs_run_record_save(path_in("no/history"), &a) == -ENOENT);
	scratch_done();
}

/* ---- the queue file --------------------------------------------------------- */

/* Two jobs of a queue alike, field by field (memcmp would compare their padding too). */
static bool job_eq(const struct hs_queue_job *a, const struct hs_queue_job *b)
{
	return !strcmp(a->name, b->name) && a->state == b->state &&
	       a->exit_status == b->exit_status && a->start_ns == b->start_ns &&
	       a->end_ns == b->end_ns && a->supervisor == b->supervisor;
}

TEST(a_queue_reads_back_as_written)
{
	struct hs_queue_job jobs[] = {
		{ .name = "a", .state = HS_Q_PENDING },
		{ .name = "build.v2", .state = HS_Q_RUNNING, .start_ns = 17, .supervisor = 4242 },
		{ .name = "Z_9-x", .state = HS_Q_DONE, .exit_status = 137, .start_ns = -5,
		  .end_ns = INT64_MAX, .supervisor = INT32_MAX },
	};
	struct hs_queue a = { .jobfile = "/srv/jobs file", .hash = 0x0123456789abcdefu,
			      .slurm = true, .jobs = jobs, .n = 3 }, b;
	struct hs_error err = { 0 };
	size_t len;
	char *text = printed_queue(&a, &len);

	CHECK(strstr(text, "\nhash 0123456789abcdef\n") && strstr(text, "\nengine slurm\n"));
	CHECK(strstr(text, "\njob build.v2 running 0 17 0 4242\n"));
	CHECK(hs_queue_parse(text, len, &b, &err) == 0);
	CHECK_STR(b.jobfile, "/srv/jobs file");
	CHECK(b.hash == a.hash && b.slurm && b.n == 3);
	for (size_t i = 0; i < 3 && b.n == 3; i++)
		CHECK(job_eq(&b.jobs[i], &jobs[i]));
	hs_queue_free(&b);
	CHECK(b.jobs == NULL && b.n == 0 && b.cap == 0);
	free(text);

	/* no job file (one command): no line for it, and none read back */
	a = (struct hs_queue){ 0 };
	text = printed_queue(&a, &len);
	CHECK(!strstr(text, "jobfile") && strstr(text, "\nengine local\n"));
	CHECK(hs_queue_parse(text, len, &b, &err) == 0 && !b.jobfile[0] && !b.slurm && !b.n);
	hs_queue_free(&b);
	free(text);
}

TEST(a_malformed_queue_is_refused_with_its_line_and_reason)
{
	static const struct {
		const char *text;
		unsigned line;
		const char *says;
	} bad[] = {
		{ "hash 0123456789ABCDEF\n", 1, "hash: not 16 hexadecimal digits" },
		{ "hash 123\n", 1, "hash: not 16" },
		{ "engine local\nengine pbs\n", 2, "engine: give local or slurm" },
		{ "job a pending 0 0 0\n", 1, "job: give NAME STATE EXIT START END PID" },
		{ "job a pending 0 0 0 0 7\n", 1, "job: give NAME" },
		{ "job a pending 0 0  0 0\n", 1, "job: give" },	/* an empty field */
		{ "job .. pending 0 0 0 0\n", 1, "job: not a job name" },
		{ "job a/b pending 0 0 0 0\n", 1, "job: not a job name" },
		{ "job a waiting 0 0 0 0\n", 1, "job: the state is pending, running or done" },
		{ "job a done 384 0 0 0\n", 1, "job: not an exit status" },
		{ "job a done -1 0 0 0\n", 1, "job: not an exit status" },
		{ "job a done 0 x 0 0\n", 1, "job: not a time" },
		{ "job a running 0 0 0 2147483648\n", 1, "job: not a pid" },
		{ "job a pending 0 0 0 0\njob b pending 0 0 0\n", 2, "job: give" },
	};
	struct hs_queue q;
	char msg[256];
	unsigned line;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = queue_of(bad[i].text, &q, &line, msg);

		if (rc != -EINVAL || line != bad[i].line || !strstr(msg, bad[i].says)) {
			printf("#   '%s': %d, line %u, '%s'\n", bad[i].text, rc, line, msg);
			CHECK(!"refused as expected");
		}
		/* refused whole: nothing kept (the jobs of the lines before are freed) */
		CHECK(q.jobs == NULL && q.n == 0);
	}
}

TEST(a_job_file_path_too_long_for_the_queue_is_refused)
{
	char text[4200] = "jobfile /";
	struct hs_queue q;
	char msg[256];
	unsigned line;

	memset(text + 9, 'a', 4095);
	strcat(text, "\n");
	CHECK(queue_of(text, &q, &line, msg) == -EINVAL && line == 1);
	CHECK(strstr(msg, "too long"));
	text[9 + 4094] = '\n';	/* 4095 bytes in all: the longest that fits */
	text[9 + 4095] = '\0';
	CHECK(queue_of(text, &q, &line, NULL) == 0 && strlen(q.jobfile) == 4095);
	hs_queue_free(&q);
}

TEST(a_queue_is_saved_whole_private_and_loaded_back)
{
	struct hs_queue_job job = { .name = "j", .state = HS_Q_DONE, .exit_status = 2 };
	struct hs_queue a = { .jobfile = "jobs", .jobs = &job, .n = 1 }, b;
	struct hs_error err = { 0 };
	struct stat st;
	char *path;

	scratch_dir();
	path = path_in("queue");
	CHECK(hs_queue_load(path, &b, &err) == -ENOENT);
	CHECK(hs_queue_save(path, &a) == 0);
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
	CHECK(hs_queue_load(path, &b, &err) == 0 && b.n == 1 && b.jobs[0].exit_status == 2);
	CHECK_STR(b.jobs[0].name, "j");
	hs_queue_free(&b);
	/* a directory in its place: an error, not a hang or a crash */
	CHECK(hs_queue_load(scratch, &b, &err) == -EISDIR);
	scratch_done();
}

/* ---- the directory ------------------------------------------------------------ */

/* In a child as nobody (the default differs for root): its result, or 255. */
static int default_dir_as_nobody(const char *xdg, const char *home, char *buf, size_t size)
{
	int pipefd[2], status = 0, rc = 255;
	pid_t pid;

	if (geteuid() != 0 || pipe(pipefd))
		return 255;
	if ((pid = fork()) == 0) {
		char out[4200];
		int r;

		close(pipefd[0]);
		if (setgid(65534) || setuid(65534))
			_exit(255);
		if (xdg)
			setenv("XDG_STATE_HOME", xdg, 1);
		else
			unsetenv("XDG_STATE_HOME");
		setenv("HOME", home, 1);
		r = hs_runstate_default_dir(out, size);
		if (!r && write(pipefd[1], out, strlen(out) + 1) < 0)
			_exit(255);
		_exit(-r);
	}
	close(pipefd[1]);
	if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status)) {
		ssize_t n = read(pipefd[0], buf, size);

		buf[n > 0 ? n - 1 : 0] = '\0';
		rc = -WEXITSTATUS(status);
	}
	close(pipefd[0]);
	return rc;
}

TEST(the_default_directory_is_roots_or_the_users_state_home)
{
	char buf[4200];
	char home[300];

	if (geteuid() != 0)
		SKIP("needs root (to be root, then nobody)");
	CHECK(hs_runstate_default_dir(buf, sizeof(buf)) == 0);
	CHECK_STR(buf, "/var/lib/hotset/run");
	CHECK(hs_runstate_default_dir(buf, 10) == -ENAMETOOLONG);

	CHECK(default_dir_as_nobody("/x/state", "/h", buf, sizeof(buf)) == 0);
	CHECK_STR(buf, "/x/state/hotset/run");
	/* a relative XDG_STATE_HOME is ignored, as the XDG rules say */
	CHECK(default_dir_as_nobody("state", "/h", buf, sizeof(buf)) == 0);
	CHECK_STR(buf, "/h/.local/state/hotset/run");
	/* without HOME (or a relative one): the password file's home */
	struct passwd *pw = getpwuid(65534);

	if (pw && pw->pw_dir[0] == '/') {
		snprintf(home, sizeof(home), "%s/.local/state/hotset/run", pw->pw_dir);
		CHECK(default_dir_as_nobody(NULL, "rel", buf, sizeof(buf)) == 0);
		CHECK_STR(buf, home);
	}
	CHECK(default_dir_as_nobody(NULL, "/h", buf, 10) == -ENAMETOOLONG);
}

/* Another process tries the lock: its result, with the holder it was told in *holder. */
static int lock_elsewhere(const char *dir, pid_t *holder)
{
	int pipefd[2], status = 0;
	pid_t pid;

	if (pipe(pipefd))
		return -EIO;
	if ((pid = fork()) == 0) {
		pid_t h = -1;
		int fd = hs_runstate_lock(dir, &h);

		if (write(pipefd[1], &h, sizeof(h)) != sizeof(h))
			_exit(255);
		_exit(fd >= 0 ? 0 : -fd);
	}
	close(pipefd[1]);
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    read(pipefd[0], holder, sizeof(*holder)) != sizeof(*holder))
		status = 255 << 8;
	close(pipefd[0]);
	return -WEXITSTATUS(status);
}

TEST(one_queue_holds_the_lock_and_the_others_are_told_its_pid)
{
	pid_t holder = -1;
	char buf[64] = "";
	int fd, rfd;

	scratch_dir();
	fd = hs_runstate_lock(scratch, &holder);
	CHECK(fd >= 0 && holder == 0);
	/* the lock file says who holds it, for people and for the next queue */
	rfd = open(path_in("lock"), O_RDONLY);
	CHECK(rfd >= 0 && read(rfd, buf, sizeof(buf) - 1) > 0);
	CHECK(atoi(buf) == getpid() && strchr(buf, '\n'));
	close(rfd);
	CHECK(lock_elsewhere(scratch, &holder) == -EWOULDBLOCK && holder == getpid());
	/* let go (the queue ended, or was killed): the next one takes it */
	close(fd);
	CHECK(lock_elsewhere(scratch, &holder) == 0 && holder == 0);
	scratch_done();
}

TEST(a_lock_that_is_no_regular_file_is_refused_without_opening_it)
{
	pid_t holder = -1;

	scratch_dir();
	CHECK(mkfifo(path_in("lock"), 0600) == 0);	/* opening it would hang */
	CHECK(hs_runstate_lock(scratch, &holder) < 0 && holder == 0);
	CHECK(hs_runstate_lock(path_in("none"), &holder) == -ENOENT);
	scratch_done();
}

int main(void)
{
	return RUN_TESTS(a_record_reads_back_as_written_to_the_microsecond,
			 figures_not_known_are_written_as_a_dash_and_read_back_unknown,
			 unknown_keys_comments_and_blank_lines_are_skipped,
			 a_malformed_record_is_refused_with_its_line_and_reason,
			 a_nul_byte_is_refused_at_its_line,
			 a_record_is_saved_whole_private_and_loaded_back,
			 a_queue_reads_back_as_written,
			 a_malformed_queue_is_refused_with_its_line_and_reason,
			 a_job_file_path_too_long_for_the_queue_is_refused,
			 a_queue_is_saved_whole_private_and_loaded_back,
			 the_default_directory_is_roots_or_the_users_state_home,
			 one_queue_holds_the_lock_and_the_others_are_told_its_pid,
			 a_lock_that_is_no_regular_file_is_refused_without_opening_it);
}
