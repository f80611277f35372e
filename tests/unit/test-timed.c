/*
 * test-timed.c - hs_time_command() (job/timed.c), what `time` and `run`
 * run a job with.
 */
#include <string.h>
#include <sys/wait.h>

#include "job/timed.h"
#include "unit.h"

/* started: counts its calls */
static void note_procs(void *ctx, const char *procs)
{
	*(int *)ctx += 1;
}

/*
 * The spec is the caller's, as given: hs_time_command() used to leave in
 * it the address of its own signal mask (a local) and the probe's cgroup
 * path, both gone once it returned.
 */
TEST(time_command_leaves_the_callers_spec_as_given)
{
	char *argv[] = { "sh", "-c", "exit 3", NULL };
	int marker = 0, calls = 0, status = 0;
	struct hs_job_spec spec = { .argv = argv, .ctx = &marker };
	struct hs_usage u;
	char msg[256] = "";

	CHECK(hs_time_command(&spec, NULL, note_procs, &calls, &status, &u, msg, sizeof(msg)) == 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 3);
	CHECK(calls == 1);
	CHECK(spec.argv == argv && spec.ctx == &marker);
	CHECK(spec.before_exec == NULL && spec.cgroup_procs == NULL);
	/* and a command that cannot run: its code, the spec still as given */
	argv[0] = "/nonexistent/command";
	CHECK(hs_time_command(&spec, NULL, NULL, NULL, &status, &u, msg, sizeof(msg)) == 127);
	CHECK(strstr(msg, "command not found"));
	CHECK(spec.ctx == &marker && spec.before_exec == NULL && spec.cgroup_procs == NULL);
}

int main(void)
{
	return RUN_TESTS(time_command_leaves_the_callers_spec_as_given);
}
