/*
 * engine-slurm.c - hotset run --engine slurm: the job file's jobs submitted
 * to a Slurm cluster, which schedules them, and followed to the same
 * table and JSON as the local queue.
 *
 * hotset adds what only it knows: each job's --mem, the memory with which
 * its re-run reads nothing from the disk (as the local scheduler counts it,
 * from the job's history), and --comment=hotset:PROFILE, for the prolog
 * of contrib/slurm to warm its working set on the node before it starts.
 * Each batch job runs `hotset run --step NAME`, which does what a local
 * supervisor does: the state directory must be on a file system that the
 * nodes share. Jobs are followed with squeue; the figures come from each
 * step's result file, or from scontrol when the step never wrote one.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/atomic.h"
#include "model/need.h"
#include "queue/queue.h"

#define POLL_MS 1000		/* squeue's load on the controller: once a second */
#define OUT_MAX 65536

extern char **environ;

/*
 * The child's environment for Slurm's tools: the user's SQUEUE_* settings
 * would filter or reshape the lines read here (SQUEUE_STATES, _NAMES,
 * _PARTITION...), and SLURM_TIME_FORMAT the times slurm_time() parses.
 */
static void slurm_environment(void)
{
	for (size_t i = 0; environ[i];) {
		char name[256];

		if (strncmp(environ[i], "SQUEUE_", 7)) {
			i++;
			continue;
		}
		snprintf(name, sizeof(name), "%.*s", (int)strcspn(environ[i], "="), environ[i]);
		if (unsetenv(name))
			i++;
	}
	setenv("SLURM_TIME_FORMAT", "standard", 1);
}

/*
 * Run argv, its output and errors into out (NUL-terminated). It runs in a
 * process group of its own: a terminal's ^C stops the queue, which then
 * cancels its jobs, not an sbatch whose job would go on untold. Returns
 * its exit status, 127 when it could not run, -E2BIG when its output did
 * not fit in size (nothing is concluded from part of it), or -errno.
 */
static int capture(char *const argv[], char *out, size_t size)
{
	size_t len = 0;
	bool cut = false;
	int p[2], status;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		return -errno;
	if ((pid = fork()) < 0) {
		close(p[0]), close(p[1]);
		return -errno;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY);

		if (null >= 0)
			dup2(null, 0);
		dup2(p[1], 1);
		dup2(p[1], 2);
		setpgid(0, 0);
		slurm_environment();
		execvp(argv[0], argv);
		dprintf(2, "%s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(p[1]);
	for (;;) {
		char buf[4096];
		ssize_t n = read(p[0], buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		for (ssize_t i = 0; i < n; i++) {
			if (len + 1 < size)
				out[len++] = buf[i];
			else
				cut = true;
		}
	}
	close(p[0]);
	out[len] = '\0';
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (cut)
		return -E2BIG;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Slurm's answer for a job it no longer knows (MinJobAge after its end) */
static bool forgotten(const char *out)
{
	return strstr(out, "Invalid job id") != NULL;
}

/* The first line of s, for a message. */
static const char *first_line(char *s)
{
	s[strcspn(s, "\n")] = '\0';
	return s;
}

/*
 * The sbatch command line of job j, into argv (strings in bufs). The
 * batch job runs `hotset run --step NAME`, with this hotset binary. Its
 * comment holds hotset:PROFILE for the prolog, when it has one, and
 * hotset-submit:NS, the time the queue saved before sbatch (j->start_ns):
 * what finds the job again when the queue died as sbatch ran.
 */
struct submission {
	char *argv[12];
	char name[HS_JOB_NAME_MAX + 16], output[PATH_MAX + 16], mem[32];
	char comment[PATH_MAX + 96];
	char *wrap;
};

#define SUBMIT_TOKEN "hotset-submit:"

static int build(struct hs_runq *q, struct hs_runq_job *j, const char *hotset, struct submission *s)
{
	char profile[PATH_MAX + 16], jobfile[PATH_MAX + 16];
	char *step[] = { (char *)hotset, "run", "--state", (char *)q->state, "--step",
			 j->def->name, jobfile, NULL };
	char *line;
	size_t k = 0;

	snprintf(jobfile, sizeof(jobfile), "%s/jobfile", q->state);
	if (!(line = q->ops.join(step)))
		return -ENOMEM;
	if (asprintf(&s->wrap, "--wrap=exec %s", line) < 0) {
		free(line);
		return -ENOMEM;
	}
	free(line);
	snprintf(s->name, sizeof(s->name), "--job-name=%s", j->def->name);
	snprintf(s->output, sizeof(s->output), "--output=%s", j->log);
	s->argv[k++] = "sbatch";
	s->argv[k++] = "--parsable";
	s->argv[k++] = s->name;
	s->argv[k++] = s->output;
	if (j->s.known) {
		snprintf(s->mem, sizeof(s->mem), "--mem=%" PRIu64 "M", hs_slurm_mem_mib(j->s.need));
		s->argv[k++] = s->mem;
	}
	snprintf(profile, sizeof(profile), "%s/profile", j->dir);
	if (j->s.known && access(profile, R_OK) == 0)
		snprintf(s->comment, sizeof(s->comment), "--comment=hotset:%s " SUBMIT_TOKEN "%" PRId64,
			 profile, j->start_ns);
	else
		snprintf(s->comment, sizeof(s->comment), "--comment=" SUBMIT_TOKEN "%" PRId64,
			 j->start_ns);
	s->argv[k++] = s->comment;
	s->argv[k++] = s->wrap;
	s->argv[k] = NULL;
	return 0;
}

/* The same path on each node: the state directory's users run one hotset. */
int hs_runq_self_path(const struct hs_runq *q, char *buf, size_t size)
{
	ssize_t n = readlink("/proc/self/exe", buf, size - 1);

	if (n <= 0) {
		hs_runq_say(q, HS_RUNQ_ERROR, "cannot tell hotset's own path: %s", strerror(errno));
		return -1;
	}
	buf[n] = '\0';
	return 0;
}

int hs_runq_slurm_line(struct hs_runq *q, struct hs_runq_job *j, const char *hotset, char **line)
{
	struct submission s = { 0 };
	int rc = 0;

	if (build(q, j, hotset, &s) || !(*line = q->ops.join(s.argv)))
		rc = -ENOMEM;
	free(s.wrap);
	return rc;
}

/* Write a file of the state directory, or say why not. */
static int write_state(struct hs_runq *q, const char *path, void (*print)(FILE *, const void *),
		       const void *ctx)
{
	struct hs_error err = { 0 };
	int rc = hs_runstate_write(path, print, ctx, &err);

	if (rc)
		hs_runq_say(q, HS_RUNQ_ERROR, "%s: cannot write: %s", path,
			    err.msg[0] ? err.msg : strerror(-rc));
	return rc;
}

/*
 * --engine slurm: sbatch at hand (not for a dry run), and the state and log
 * directories named by absolute paths, which the nodes use.
 */
int hs_runq_slurm_ready(struct hs_runq *q, bool dry)
{
	char *argv[] = { "sbatch", "--version", NULL }, cwd[PATH_MAX], state[PATH_MAX], logs[PATH_MAX];
	pid_t pid;
	int status, rc;

	if (!dry && (pid = fork()) == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1), dup2(null, 2);
		execvp(argv[0], argv);
		_exit(127);
	}
	if (!dry && (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
		     WEXITSTATUS(status) == 127))
		return hs_runq_say(q, HS_RUNQ_ERROR, "--engine slurm: sbatch cannot be run (is "
				   "Slurm's client installed, and in PATH?)"), -EIO;
	if ((q->state[0] != '/' || q->logs[0] != '/') && !getcwd(cwd, sizeof(cwd)))
		return hs_runq_say(q, HS_RUNQ_ERROR, "cannot tell the working directory: %s",
				   strerror(errno)), -EIO;
	if (hs_runq_path_of(state, sizeof(state), q->state[0] == '/' ? "" : cwd,
		    q->state[0] == '/' ? "" : "/", q->state, "") ||
	    hs_runq_path_of(logs, sizeof(logs), q->logs[0] == '/' ? "" : cwd, q->logs[0] == '/' ? "" : "/",
		    q->logs, ""))
		return hs_runq_say(q, HS_RUNQ_ERROR, "%s: the path is too long", q->state), -EINVAL;
	/* sbatch reads %j and the like in --output; scontrol's lines are split at blanks */
	if (strpbrk(state, "% \t\n") || strpbrk(logs, "% \t\n"))
		return hs_runq_say(q, HS_RUNQ_ERROR, "--engine slurm: the paths of the state and "
				   "log directories may not hold '%%' (sbatch's file name "
				   "patterns) or blanks"), -EINVAL;
	snprintf(q->state_buf, sizeof(q->state_buf), "%s", state);
	snprintf(q->logs_buf, sizeof(q->logs_buf), "%s", logs);
	q->state = q->state_buf, q->logs = q->logs_buf;
	snprintf(q->queue_path, sizeof(q->queue_path), "%s/queue", q->state);
	for (size_t i = 0; i < q->n; i++) {
		struct hs_runq_job *j = &q->jobs[i];

		if ((rc = hs_runq_job_paths(q, j)) == -ENAMETOOLONG)
			return hs_runq_say(q, HS_RUNQ_ERROR, "%s: the path is too long", q->state), -EINVAL;
		if (rc)
			return hs_runq_say(q, HS_RUNQ_ERROR, "out of memory"), -EIO;
	}
	return dry ? 0 : hs_runq_make_dirs(q);
}

/* The queue's jobs as a job file in the state directory, which the nodes read. */
static void print_jobfile(FILE *f, const void *ctx)
{
	const struct hs_runq *q = ctx;

	fprintf(f, "# hotset run --engine slurm: the queue's jobs\n");
	for (size_t i = 0; i < q->n; i++)
		fprintf(f, "%s %s\n", q->jobs[i].def->name, q->jobs[i].def->command);
}

/*
 * sbatch --parsable's job id: the line "ID" or "ID;CLUSTER" of its output
 * (warnings and a job_submit plugin's message come on lines of their own,
 * before or after it); 0 when there is none.
 */
static long parsable_id(const char *out)
{
	long id = 0;

	for (const char *l = out; *l; l += strcspn(l, "\n") + (l[strcspn(l, "\n")] != '\0')) {
		char *e;
		long v = strtol(l, &e, 10);

		if (e != l && *l >= '0' && *l <= '9' && (*e == ';' || *e == '\n' || !*e))
			id = v;
	}
	return id;
}

static int find_submitted(const struct hs_runq_job *j);

static int submit(struct hs_runq *q, struct hs_runq_job *j, const char *hotset)
{
	struct submission s = { 0 };
	struct hs_error err = { 0 };
	char path[PATH_MAX + 16], *out = malloc(OUT_MAX);
	long id;
	int rc;

	/* submitted once: a job sbatch refused keeps its -1, one submitted its id */
	assert(j->s.state == HS_Q_PENDING && !j->slurm_job);
	j->start_ns = hs_realtime_ns();	/* submitted after this; its token (find_submitted) */
	if (!out || build(q, j, hotset, &s)) {
		free(out);
		free(s.wrap);
		hs_runq_say(q, HS_RUNQ_ERROR, "out of memory");
		return -ENOMEM;
	}
	if ((rc = hs_mkdirs(j->dir, 0700, &err))) {
		hs_runq_say(q, HS_RUNQ_ERROR, "%s: %s", j->dir, err.msg);
		goto out;
	}
	snprintf(path, sizeof(path), "%s/result", j->dir);
	unlink(path);
	/* a queue killed while sbatch runs finds the job by its token (find_submitted) */
	j->s.state = HS_Q_RUNNING;
	j->slurm_job = 0;
	hs_runq_save(q);
	rc = capture(s.argv, out, OUT_MAX);
	id = rc == 0 ? parsable_id(out) : 0;
	/* it said nothing readable, or was killed: the controller may have the job all the same */
	if ((rc == 0 && id <= 0) || rc >= 128 || rc == -E2BIG)
		id = find_submitted(j);
	if (id <= 0 || id > INT32_MAX) {
		hs_runq_say(q, HS_RUNQ_ERROR, "job '%s': sbatch failed%s%s", j->def->name, rc < 0 ? "" : ": ",
		      rc < 0 ? "" : first_line(out));
		snprintf(j->slurm_wait, sizeof(j->slurm_wait), "slurm:sbatch-failed");
		j->first_wait = j->slurm_wait;
		j->slurm_job = -1;	/* not run, and not submitted again */
		j->s.state = HS_Q_PENDING;
		hs_runq_save(q);
		rc = -EIO;
		goto out;
	}
	j->slurm_job = (int)id;
	j->s.state = HS_Q_RUNNING;
	j->ran = true;
	j->start_ns = hs_realtime_ns();	/* the step's result says when it really started */
	rc = 0;
	hs_runq_save(q);
out:
	free(out);
	free(s.wrap);
	return rc;
}

/* Parse "2026-12-02T01:02:03" (local time, as scontrol prints it) into ns. */
static int64_t slurm_time(const char *s)
{
	struct tm tm = { 0 };
	const char *e = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);

	if (!e)
		return 0;
	tm.tm_isdst = -1;
	return (int64_t)mktime(&tm) * 1000000000;
}

/* The value of KEY= in one line of scontrol -o, into buf. */
static bool field(const char *line, const char *key, char *buf, size_t size)
{
	size_t kl = strlen(key);

	for (const char *p = line; (p = strstr(p, key)); p += kl) {
		if ((p == line || p[-1] == ' ') && p[kl] == '=') {
			size_t n = strcspn(p + kl + 1, " \n");

			snprintf(buf, size, "%.*s", (int)n, p + kl + 1);
			return true;
		}
	}
	return false;
}

/* Job j's step wrote its result (its end, as the step saw it): done. */
static bool result_of(struct hs_runq_job *j)
{
	char path[PATH_MAX + 16];
	struct hs_error err = { 0 };

	snprintf(path, sizeof(path), "%s/result", j->dir);
	if (hs_run_record_load(path, &j->res, &err))
		return false;
	j->res_known = true;
	j->exit_status = j->res.exit_status;
	j->start_ns = j->res.start_ns;
	j->end_ns = j->res.end_ns;
	j->s.state = HS_Q_DONE;
	return true;
}

/* Slurm's states of a job that has ended (squeue(1), JOB STATE CODES) */
static bool final_state(const char *state)
{
	static const char *const final[] = { "COMPLETED", "CANCELLED", "FAILED", "TIMEOUT",
		"NODE_FAIL", "PREEMPTED", "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY", "REVOKED", NULL };

	for (size_t i = 0; final[i]; i++)
		if (!strcmp(state, final[i]))
			return true;
	return false;
}

enum end { END_TOLD, END_NOT_YET, END_FORGOTTEN };

/*
 * Job j has left squeue's list: its end, from the step's result file, else
 * from what scontrol says of it (a job cancelled, or killed before its
 * step could write; cancelled before it started: not run). END_NOT_YET
 * when it has not ended after all (squeue's answer was short) or scontrol
 * did not answer: looked at again later. END_FORGOTTEN when Slurm no
 * longer knows the job and it left no result.
 */
static enum end finish(struct hs_runq_job *j)
{
	char id[16], *out, state[64], val[256];
	char *argv[] = { "scontrol", "-o", "show", "job", id, NULL };
	int code = 0, sig = 0, rc;

	if (result_of(j))
		return END_TOLD;
	if (!(out = malloc(OUT_MAX)))
		return END_NOT_YET;
	snprintf(id, sizeof(id), "%d", j->slurm_job);
	rc = capture(argv, out, OUT_MAX);
	if (rc == 1 && forgotten(out)) {
		free(out);
		return result_of(j) ? END_TOLD : END_FORGOTTEN;	/* it may have ended since */
	}
	if (rc || !field(out, "JobState", state, sizeof(state)) || !final_state(state)) {
		free(out);
		return END_NOT_YET;
	}
	if (result_of(j)) {	/* written as it ended, after the first look */
		free(out);
		return END_TOLD;
	}
	if (!field(out, "BatchHost", val, sizeof(val))) {	/* it never started */
		if (!j->first_wait) {
			snprintf(j->slurm_wait, sizeof(j->slurm_wait), "slurm:%s", state);
			j->first_wait = j->slurm_wait;
		}
		j->ran = false;
		j->s.state = HS_Q_PENDING;	/* not run; its id keeps it from a second sbatch */
		free(out);
		return END_TOLD;
	}
	if (strcmp(state, "COMPLETED") && field(out, "ExitCode", val, sizeof(val)))
		sscanf(val, "%d:%d", &code, &sig);
	j->exit_status = sig ? 128 + sig : code ? code : strcmp(state, "COMPLETED") ? 1 : 0;
	if (field(out, "StartTime", val, sizeof(val)) && slurm_time(val))
		j->start_ns = slurm_time(val);
	if (field(out, "EndTime", val, sizeof(val)) && slurm_time(val))
		j->end_ns = slurm_time(val);
	if (!j->end_ns || j->end_ns < j->start_ns)
		j->end_ns = hs_realtime_ns();
	j->s.state = HS_Q_DONE;
	free(out);
	return END_TOLD;
}

/* STATE/stop: the signal the queue was stopped by, for the steps not yet started */
static void print_stop(FILE *f, const void *ctx)
{
	fprintf(f, "%d\n", *(const int *)ctx);
}

int hs_runq_slurm_stopped(const char *state)
{
	char path[PATH_MAX + 8];
	int sig = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/stop", state);
	if (!(f = fopen(path, "re")))
		return 0;
	if (fscanf(f, "%d", &sig) != 1 || sig <= 0 || sig >= 65)
		sig = 0;
	fclose(f);
	return sig;
}

/*
 * scancel: the jobs still waiting in Slurm's queue are cancelled; with
 * sig, those that run get it, once. Slurm tells the states itself
 * (--state), so that a job that starts meanwhile is signalled, not
 * cancelled; --batch signals the batch step's own process alone, the
 * step of hotset that passes it to the job (--full would signal the job's
 * processes too: twice). A job that Slurm counts as running may have no
 * batch step yet (its prolog runs: --batch finds no one to signal), so
 * STATE/stop tells its step, once it starts, not to run the job.
 */
static void cancel(struct hs_runq *q, int sig)
{
	char **argv = calloc(q->n + 5, sizeof(*argv)), signame[32], *out = malloc(OUT_MAX);
	char (*ids)[16] = calloc(q->n ? q->n : 1, sizeof(*ids));
	size_t k = 0, first;

	if (!argv || !out || !ids)
		goto out;
	if (sig) {
		char path[PATH_MAX + 8];

		snprintf(path, sizeof(path), "%s/stop", q->state);
		write_state(q, path, print_stop, &sig);
	}
	snprintf(signame, sizeof(signame), "--signal=%d", sig);
	argv[k++] = "scancel";
	argv[k++] = "--state=PENDING";
	first = k;
	for (size_t i = 0; i < q->n; i++) {
		struct hs_runq_job *j = &q->jobs[i];

		if (j->s.state != HS_Q_RUNNING || j->signalled)
			continue;
		snprintf(ids[i], sizeof(ids[i]), "%d", j->slurm_job);
		argv[k++] = ids[i];
		j->signalled = sig != 0;
	}
	argv[k] = NULL;
	if (k == first)
		goto out;
	capture(argv, out, OUT_MAX);
	if (sig) {
		memmove(argv + 4, argv + first, (k - first + 1) * sizeof(*argv));
		argv[1] = "--state=RUNNING", argv[2] = "--batch", argv[3] = signame;
		capture(argv, out, OUT_MAX);
	}
out:
	free(argv);
	free(out);
	free(ids);
}

/*
 * One look at the cluster: squeue's line for each job that is not done;
 * a job it no longer lists has ended. adopting: jobs of a resumed queue
 * that ended with no word of how go back to pending, to be submitted again.
 * Returns 0, or -1 when squeue failed (nothing is concluded then).
 */
static int look(struct hs_runq *q, bool adopting)
{
	char *argv[] = { "squeue", "-h", "-o", "%i %T %r", "-j", NULL, NULL };
	char *out = malloc(OUT_MAX), *ids = NULL;
	size_t len = 0;
	FILE *m;
	int rc = -1;

	if (!out || !(m = open_memstream(&ids, &len))) {
		free(out);
		return -1;
	}
	for (size_t i = 0; i < q->n; i++)
		if (q->jobs[i].s.state == HS_Q_RUNNING)
			fprintf(m, "%s%d", len ? "," : "", q->jobs[i].slurm_job), fflush(m);
	fclose(m);
	if (!len) {
		rc = 0;
		goto out;
	}
	argv[5] = ids;
	/* squeue exits 1 for ids it no longer knows, listing the others; killed, it said nothing */
	rc = capture(argv, out, OUT_MAX);
	rc = rc == 0 || rc == 1 ? 0 : -1;
	if (rc)
		goto out;
	rc = -1;
	/* it knows none of them (Slurm forgets a job MinJobAge after its end): none listed */
	if (forgotten(out) && !strncmp(out, "slurm_load_jobs error", 21))
		out[0] = '\0';
	/* any other line than "ID STATE REASON": the controller did not answer, no conclusion */
	for (char *line = out; *line; line += strcspn(line, "\n") + (line[strcspn(line, "\n")] != 0))
		if (*line < '0' || *line > '9')
			goto out;
	for (size_t i = 0; i < q->n; i++) {
		struct hs_runq_job *j = &q->jobs[i];
		char *line = out, state[32];
		bool listed = false;

		if (j->s.state != HS_Q_RUNNING)
			continue;
		for (; *line; line += strcspn(line, "\n") + (line[strcspn(line, "\n")] != 0)) {
			long id = strtol(line, NULL, 10);
			const char *reason;	/* the rest of the line: some hold blanks */
			int at = 0, rlen;	/* ("ReqNodeNotAvail, UnavailableNodes:n1") */

			if (id != j->slurm_job)
				continue;
			if (sscanf(line, "%*s %31s%n", state, &at) != 1)
				break;
			listed = true;
			reason = line + at + strspn(line + at, " \t");
			rlen = (int)strcspn(reason, "\n");
			if (!strcmp(state, "PENDING") && rlen && !(rlen == 4 && !strncmp(reason, "None", 4)) &&
			    !j->first_wait) {
				snprintf(j->slurm_wait, sizeof(j->slurm_wait), "slurm:%.*s", rlen, reason);
				j->first_wait = j->slurm_wait;
			}
			break;
		}
		if (listed)
			continue;
		switch (finish(j)) {
		case END_TOLD:
			break;
		case END_NOT_YET:
			continue;
		case END_FORGOTTEN:
			if (adopting) {
				j->s.state = HS_Q_PENDING, j->ran = false, j->slurm_job = 0;
			} else {
				j->s.state = HS_Q_DONE;
				j->exit_status = 125;	/* ended, and nothing says how */
				j->end_ns = hs_realtime_ns();
			}
			break;
		}
		if (j->s.state == HS_Q_DONE && j->exit_status && q->halt)
			q->halted = true;
		hs_runq_save(q);
	}
	rc = 0;
out:
	free(out);
	free(ids);
	return rc;
}

/*
 * A job that a killed queue was submitting when it died: Slurm may have
 * it. It is the job of the job's name whose output is the job's log (a
 * path of this state directory's alone) and whose comment holds the
 * submission's token (hotset-submit: and the start_ns the queue saved
 * before sbatch ran: not the job of a run before). Returns its id, 0 when
 * Slurm has no such job, or -1 when it cannot tell (squeue failed).
 */
static int find_submitted(const struct hs_runq_job *j)
{
	/* the jobs of its name first (squeue -t all: those ended too), then each one's fields */
	char *list[] = { "squeue", "-h", "-t", "all", "-n", j->def->name, "-o", "%i", NULL };
	char id[16], *show[] = { "scontrol", "-o", "show", "job", id, NULL };
	char *ids = malloc(OUT_MAX), *out = malloc(OUT_MAX), val[PATH_MAX], token[64];
	int found = -1, rc;

	snprintf(token, sizeof(token), SUBMIT_TOKEN "%" PRId64, j->start_ns);
	if (!ids || !out)
		goto out;
	rc = capture(list, ids, OUT_MAX);
	if (rc == 1 && forgotten(ids))
		ids[0] = '\0';
	else if (rc)
		goto out;
	found = 0;
	for (char *p = ids; *p; p += strcspn(p, "\n") + (p[strcspn(p, "\n")] != '\0')) {
		int n = atoi(p);
		const char *t;

		snprintf(id, sizeof(id), "%d", n);
		if (n <= 0 || capture(show, out, OUT_MAX) ||
		    !field(out, "JobName", val, sizeof(val)) || strcmp(val, j->def->name) ||
		    !field(out, "StdOut", val, sizeof(val)) || strcmp(val, j->log))
			continue;
		/* the comment's words: the token whole, not the start of a longer one */
		for (t = out; (t = strstr(t, token)); t += strlen(token))
			if ((t == out || t[-1] == ' ' || t[-1] == '=') &&
			    strchr(" \n", t[strlen(token)]))
				found = n;
	}
out:
	free(ids);
	free(out);
	return found;
}

int hs_runq_slurm_leftovers(struct hs_runq *q)
{
	char *argv[] = { "squeue", "-h", "-o", "%i", "-j", NULL, NULL };
	struct hs_error err = { 0 };
	struct hs_queue st;
	char *ids = NULL, *out = NULL;
	size_t len = 0;
	FILE *m;
	int found = 0, rc, left = 0;

	if (hs_queue_load(q->queue_path, &st, &err))
		return 0;	/* no queue, or none to read: nothing left */
	if (st.slurm && (m = open_memstream(&ids, &len))) {
		for (size_t i = 0; i < st.n; i++) {
			if (st.jobs[i].state != HS_Q_RUNNING)
				continue;
			if (st.jobs[i].supervisor > 0)
				fprintf(m, "%s%d", ftell(m) ? "," : "", (int)st.jobs[i].supervisor);
			else
				left = -1;	/* killed as sbatch ran: Slurm may have it */
		}
		fclose(m);
		argv[5] = ids;
		if (len && !(out = malloc(OUT_MAX)))
			left = -1;
		else if (len && (rc = capture(argv, out, OUT_MAX)) == 0 && (found = atoi(out)) > 0)
			left = found;
		else if (len && !(rc == 1 && forgotten(out)) && rc != 0)
			left = -1;	/* squeue failed: it cannot tell */
	}
	if (left > 0)
		hs_runq_say(q, HS_RUNQ_ERROR, "the queue in %s left jobs in Slurm that have not "
			    "ended (job %d%s): go on with --resume, or scancel them", q->state,
			    found, strchr(out, '\n') && strchr(out, '\n')[1] ? " and others" : "");
	else if (left < 0)
		hs_runq_say(q, HS_RUNQ_ERROR, "the queue in %s was killed with jobs that Slurm "
			    "may still have, and it cannot tell%s%s: go on with --resume", q->state,
			    out && *out ? ": " : "", out && *out ? first_line(out) : "");
	free(ids);
	free(out);
	hs_queue_free(&st);
	return left != 0;
}

int hs_runq_slurm(struct hs_runq *q)
{
	char hotset[PATH_MAX], jobfile[PATH_MAX + 16], stop[PATH_MAX + 16];
	bool adopting = false, cancelled = false;

	if (hs_runq_self_path(q, hotset, sizeof(hotset)))
		return -1;
	snprintf(jobfile, sizeof(jobfile), "%s/jobfile", q->state);
	if (write_state(q, jobfile, print_jobfile, q))
		return -1;
	snprintf(stop, sizeof(stop), "%s/stop", q->state);	/* a stop of a queue before */
	if (unlink(stop) && errno != ENOENT) {
		hs_runq_say(q, HS_RUNQ_ERROR, "%s: %s", stop, strerror(errno));
		return -1;
	}
	for (size_t i = 0; i < q->n; i++) {
		struct hs_runq_job *j = &q->jobs[i];

		if (j->s.state == HS_Q_RUNNING && !j->slurm_job) {	/* killed as sbatch ran */
			int id = find_submitted(j);

			if (id < 0) {
				hs_runq_say(q, HS_RUNQ_ERROR, "job '%s': cannot tell whether Slurm "
					    "has it (squeue failed): --resume again later",
					    j->def->name);
				return -1;
			}
			if (id > 0)
				j->slurm_job = id;
			else if (!result_of(j))	/* ended, and forgotten: it left its result */
				j->s.state = HS_Q_PENDING, j->ran = false;
		}
		adopting |= j->s.state == HS_Q_RUNNING;	/* --resume: still in Slurm? */
	}
	for (;;) {
		size_t running = 0;

		if (look(q, adopting) == 0)
			adopting = false;
		/* a stop signal between two submissions stops the next */
		for (size_t i = 0; i < q->n && !adopting; i++)
			if (!*q->stop && !q->halted && !q->state_lost &&
			    q->jobs[i].s.state == HS_Q_PENDING && !q->jobs[i].slurm_job)
				submit(q, &q->jobs[i], hotset);
		if ((*q->stop || q->halted) && !cancelled) {
			cancel(q, *q->stop);	/* --halt: the running ones finish */
			cancelled = true;
		}
		for (size_t i = 0; i < q->n; i++)
			running += q->jobs[i].s.state == HS_Q_RUNNING;
		if (!running)
			break;
		if (poll(&(struct pollfd){ .fd = q->wake[0], .events = POLLIN }, 1, POLL_MS) > 0) {
			char buf[64];

			if (read(q->wake[0], buf, sizeof(buf)) < 0) {
				/* nothing to do: *q->stop says it */
			}
		}
	}
	unlink(stop);	/* every job has ended: none is left to start */
	return 0;
}
