/*
 * run-slurm.c - hotset run --engine slurm: the job file's jobs submitted
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

#include "hotset/jobfile.h"
#include "hotset/memory.h"
#include "hotset/runstate.h"
#include "cli.h"
#include "run.h"

#define POLL_MS 1000		/* squeue's load on the controller: once a second */
#define OUT_MAX 65536

/*
 * Run argv, its output and errors into out (NUL-terminated, cut at size).
 * Returns its exit status, 127 when it could not run, or -errno.
 */
static int capture(char *const argv[], char *out, size_t size)
{
	size_t len = 0;
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
		for (ssize_t i = 0; i < n && len + 1 < size; i++)
			out[len++] = buf[i];
	}
	close(p[0]);
	out[len] = '\0';
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The first line of s, for a message. */
static const char *first_line(char *s)
{
	s[strcspn(s, "\n")] = '\0';
	return s;
}

/*
 * The sbatch command line of job j, into argv (strings in bufs). The
 * batch job runs `hotset run --step NAME`, with this hotset binary.
 */
struct submission {
	char *argv[12];
	char name[HS_JOB_NAME_MAX + 16], output[PATH_MAX + 16], mem[32];
	char comment[PATH_MAX + 48];
	char *wrap;
};

static int build(struct queue *q, struct qjob *j, const char *hotset, struct submission *s)
{
	char profile[PATH_MAX + 16], jobfile[PATH_MAX + 16];
	char *step[] = { (char *)hotset, "run", "--state", (char *)q->state, "--step",
			 j->def->name, jobfile, NULL };
	char *line;
	size_t k = 0;

	snprintf(jobfile, sizeof(jobfile), "%s/jobfile", q->state);
	if (!(line = shell_join(step)))
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
	if (j->s.known && access(profile, R_OK) == 0) {
		snprintf(s->comment, sizeof(s->comment), "--comment=hotset:%s", profile);
		s->argv[k++] = s->comment;
	}
	s->argv[k++] = s->wrap;
	s->argv[k] = NULL;
	return 0;
}

/* This hotset binary, which the nodes run too (the same path on each). */
static int self_path(char *buf, size_t size)
{
	ssize_t n = readlink("/proc/self/exe", buf, size - 1);

	if (n <= 0)
		return error("cannot tell hotset's own path: %s", strerror(errno)), -1;
	buf[n] = '\0';
	return 0;
}

void slurm_plan(struct queue *q)
{
	char hotset[PATH_MAX];

	if (self_path(hotset, sizeof(hotset)))
		return;
	for (size_t i = 0; i < q->n; i++) {
		struct qjob *j = &q->jobs[i];
		struct submission s = { 0 };
		char *line;

		if (j->s.state == HS_Q_DONE) {
			printf("%-20s done\n", j->def->name);
			continue;
		}
		if (build(q, j, hotset, &s) || !(line = shell_join(s.argv))) {
			free(s.wrap);
			error("out of memory");
			return;
		}
		printf("%-20s %s%s\n", j->def->name, j->s.known ? "" : "(no history: no --mem) ",
		       line);
		free(line);
		free(s.wrap);
	}
}

/* The queue's jobs as a job file in the state directory, which the nodes read. */
static void print_jobfile(FILE *f, const void *ctx)
{
	const struct queue *q = ctx;

	fprintf(f, "# hotset run --engine slurm: the queue's jobs\n");
	for (size_t i = 0; i < q->n; i++)
		fprintf(f, "%s %s\n", q->jobs[i].def->name, q->jobs[i].def->command);
}

static int submit(struct queue *q, struct qjob *j, const char *hotset)
{
	struct submission s = { 0 };
	char path[PATH_MAX + 16], *out = malloc(OUT_MAX);
	long id;
	int rc;

	if (!out || build(q, j, hotset, &s)) {
		free(out);
		free(s.wrap);
		return error("out of memory"), -ENOMEM;
	}
	if ((rc = hs_mkdirs(j->dir))) {
		error("%s: %s", j->dir, strerror(-rc));
		goto out;
	}
	snprintf(path, sizeof(path), "%s/result", j->dir);
	unlink(path);
	/* a queue killed while sbatch runs finds the job by its log (find_submitted) */
	j->s.state = HS_Q_RUNNING;
	j->slurm_job = 0;
	j->start_ns = now_ns();	/* submitted after this: find_submitted() */
	save_queue(q);
	rc = capture(s.argv, out, OUT_MAX);
	id = rc == 0 ? strtol(out, NULL, 10) : 0;	/* "ID" or "ID;CLUSTER" */
	if (rc || id <= 0 || id > INT32_MAX) {
		error("job '%s': sbatch failed%s%s", j->def->name, rc < 0 ? "" : ": ",
		      rc < 0 ? "" : first_line(out));
		snprintf(j->slurm_wait, sizeof(j->slurm_wait), "slurm:sbatch-failed");
		j->first_wait = j->slurm_wait;
		j->slurm_job = -1;	/* not run, and not submitted again */
		j->s.state = HS_Q_PENDING;
		save_queue(q);
		rc = -EIO;
		goto out;
	}
	j->slurm_job = (int)id;
	j->s.state = HS_Q_RUNNING;
	j->ran = true;
	j->start_ns = now_ns();	/* the step's result says when it really started */
	rc = 0;
	save_queue(q);
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

/*
 * Job j has left squeue: its end, from the step's result file, else from
 * what scontrol says of it (a job cancelled, or killed before its step
 * could write; cancelled before it started: not run). Returns false when
 * neither tells (scontrol has forgotten it).
 */
static bool finish(struct qjob *j)
{
	char path[PATH_MAX + 16], id[16], *out = malloc(OUT_MAX), val[64];
	struct hs_error err = { 0 };
	char *argv[] = { "scontrol", "-o", "show", "job", id, NULL };
	int code = 0, sig = 0;

	snprintf(path, sizeof(path), "%s/result", j->dir);
	if (hs_run_record_load(path, &j->res, &err) == 0) {
		free(out);
		j->res_known = true;
		j->exit_status = j->res.exit_status;
		j->start_ns = j->res.start_ns;
		j->end_ns = j->res.end_ns;
		j->s.state = HS_Q_DONE;
		return true;
	}
	snprintf(id, sizeof(id), "%d", j->slurm_job);
	if (!out || capture(argv, out, OUT_MAX) || !field(out, "JobState", val, sizeof(val))) {
		free(out);
		return false;
	}
	if (!field(out, "BatchHost", path, sizeof(path))) {	/* it never started */
		if (!j->first_wait) {
			snprintf(j->slurm_wait, sizeof(j->slurm_wait), "slurm:%s", val);
			j->first_wait = j->slurm_wait;
		}
		j->ran = false;
		j->s.state = HS_Q_PENDING;	/* not run; its id keeps it from a second sbatch */
		free(out);
		return true;
	}
	if (strcmp(val, "COMPLETED") && field(out, "ExitCode", val, sizeof(val)))
		sscanf(val, "%d:%d", &code, &sig);
	else if (strcmp(val, "COMPLETED"))
		code = 1;
	j->exit_status = sig ? 128 + sig : code ? code : strcmp(val, "COMPLETED") ? 1 : 0;
	if (field(out, "StartTime", val, sizeof(val)) && slurm_time(val))
		j->start_ns = slurm_time(val);
	if (field(out, "EndTime", val, sizeof(val)) && slurm_time(val))
		j->end_ns = slurm_time(val);
	if (!j->end_ns || j->end_ns < j->start_ns)
		j->end_ns = now_ns();
	j->s.state = HS_Q_DONE;
	free(out);
	return true;
}

/*
 * scancel: the jobs still waiting in Slurm's queue are cancelled; with
 * sig, those that run get it, once. Slurm tells the states itself
 * (--state), so that a job that starts meanwhile is signalled, not
 * cancelled; --batch signals the batch step's own process alone, the
 * step of hotset that passes it to the job (--full would signal the job's
 * processes too: twice).
 */
static void cancel(struct queue *q, int sig)
{
	char **argv = calloc(q->n + 5, sizeof(*argv)), signame[32], *out = malloc(OUT_MAX);
	char (*ids)[16] = calloc(q->n ? q->n : 1, sizeof(*ids));
	size_t k = 0, first;

	if (!argv || !out || !ids)
		goto out;
	snprintf(signame, sizeof(signame), "--signal=%d", sig);
	argv[k++] = "scancel";
	argv[k++] = "--state=PENDING";
	first = k;
	for (size_t i = 0; i < q->n; i++) {
		struct qjob *j = &q->jobs[i];

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
static int look(struct queue *q, bool adopting)
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
	/* squeue exits 1 for ids it no longer knows, listing the others */
	if (capture(argv, out, OUT_MAX) < 0)
		goto out;
	/* it knows none of them (Slurm forgets a job MinJobAge after its end): none listed */
	if (!strncmp(out, "slurm_load_jobs error: Invalid job id", 37))
		out[0] = '\0';
	/* any other line than "ID STATE REASON": the controller did not answer, no conclusion */
	for (char *line = out; *line; line += strcspn(line, "\n") + (line[strcspn(line, "\n")] != 0))
		if (*line < '0' || *line > '9')
			goto out;
	for (size_t i = 0; i < q->n; i++) {
		struct qjob *j = &q->jobs[i];
		char *line = out, state[32], reason[48];
		bool listed = false;

		if (j->s.state != HS_Q_RUNNING)
			continue;
		for (; *line; line += strcspn(line, "\n") + (line[strcspn(line, "\n")] != 0)) {
			long id = strtol(line, NULL, 10);

			if (id != j->slurm_job)
				continue;
			if (sscanf(line, "%*s %31s %47s", state, reason) != 2)
				break;
			listed = true;
			if (!strcmp(state, "PENDING") && strcmp(reason, "None") && !j->first_wait) {
				snprintf(j->slurm_wait, sizeof(j->slurm_wait), "slurm:%s", reason);
				j->first_wait = j->slurm_wait;
			}
			break;
		}
		if (listed)
			continue;
		if (!finish(j)) {
			if (adopting) {
				j->s.state = HS_Q_PENDING, j->ran = false, j->slurm_job = 0;
			} else {
				j->s.state = HS_Q_DONE;
				j->exit_status = 125;	/* ended, and nothing says how */
				j->end_ns = now_ns();
			}
		}
		if (j->s.state == HS_Q_DONE && j->exit_status && q->halt)
			q->halted = true;
		save_queue(q);
	}
	rc = 0;
out:
	free(out);
	free(ids);
	return rc;
}

/*
 * A job that a killed queue was submitting when it died: Slurm may have
 * it. It is the newest job of the job's name whose output is the job's log
 * (a path of this state directory's alone), submitted since the queue
 * said so (start_ns; not the job of a run before). Returns its id, or 0.
 */
static int find_submitted(const struct qjob *j)
{
	/* the jobs of its name first (squeue -t all: those ended too), then each one's fields */
	char *list[] = { "squeue", "-h", "-t", "all", "-n", j->def->name, "-o", "%i", NULL };
	char id[16], *show[] = { "scontrol", "-o", "show", "job", id, NULL };
	char *ids = malloc(OUT_MAX), *out = malloc(OUT_MAX), val[PATH_MAX];
	int64_t since = j->start_ns / 1000000000 * 1000000000;	/* Slurm's are in seconds */
	int found = 0;

	if (!ids || !out || capture(list, ids, OUT_MAX))
		goto out;
	for (char *p = ids; *p; p += strcspn(p, "\n") + (p[strcspn(p, "\n")] != '\0')) {
		int n = atoi(p);

		if (n <= found)
			continue;
		snprintf(id, sizeof(id), "%d", n);
		if (capture(show, out, OUT_MAX) == 0 &&
		    field(out, "JobName", val, sizeof(val)) && !strcmp(val, j->def->name) &&
		    field(out, "StdOut", val, sizeof(val)) && !strcmp(val, j->log) &&
		    field(out, "SubmitTime", val, sizeof(val)) && slurm_time(val) >= since)
			found = n;
	}
out:
	free(ids);
	free(out);
	return found;
}

int slurm_leftovers(struct queue *q)
{
	char *argv[] = { "squeue", "-h", "-o", "%i", "-j", NULL, NULL };
	struct hs_error err = { 0 };
	struct hs_queue st;
	char *ids = NULL, *out = NULL;
	size_t len = 0;
	FILE *m;
	int found = 0;

	if (hs_queue_load(q->queue_path, &st, &err))
		return 0;	/* no queue, or none to read: nothing left */
	if (st.slurm && (m = open_memstream(&ids, &len))) {
		for (size_t i = 0; i < st.n; i++)
			if (st.jobs[i].state == HS_Q_RUNNING && st.jobs[i].supervisor > 0)
				fprintf(m, "%s%d", ftell(m) ? "," : "", (int)st.jobs[i].supervisor);
		fclose(m);
		argv[5] = ids;
		if (len && (out = malloc(OUT_MAX)) && capture(argv, out, OUT_MAX) == 0 &&
		    (found = atoi(out)) > 0)
			error("the queue in %s left jobs in Slurm that have not ended (job %d%s): "
			      "go on with --resume, or scancel them", q->state, found,
			      strchr(out, '\n') && strchr(out, '\n')[1] ? " and others" : "");
	}
	free(ids);
	free(out);
	hs_queue_free(&st);
	return found > 0;
}

int slurm_queue(struct queue *q)
{
	char hotset[PATH_MAX], jobfile[PATH_MAX + 16];
	bool adopting = false, cancelled = false;

	if (self_path(hotset, sizeof(hotset)))
		return -1;
	snprintf(jobfile, sizeof(jobfile), "%s/jobfile", q->state);
	if (write_atomically(jobfile, print_jobfile, q))
		return -1;
	for (size_t i = 0; i < q->n; i++) {
		struct qjob *j = &q->jobs[i];

		if (j->s.state == HS_Q_RUNNING && !j->slurm_job &&
		    !(j->slurm_job = find_submitted(j)))
			j->s.state = HS_Q_PENDING, j->ran = false;
		adopting |= j->s.state == HS_Q_RUNNING;	/* --resume: still in Slurm? */
	}
	for (;;) {
		size_t running = 0;

		if (look(q, adopting) == 0)
			adopting = false;
		if (!stop_signal && !q->halted && !q->state_lost && !adopting)
			for (size_t i = 0; i < q->n; i++)
				if (q->jobs[i].s.state == HS_Q_PENDING && !q->jobs[i].slurm_job)
					submit(q, &q->jobs[i], hotset);
		if ((stop_signal || q->halted) && !cancelled) {
			cancel(q, stop_signal);	/* --halt: the running ones finish */
			cancelled = true;
		}
		for (size_t i = 0; i < q->n; i++)
			running += q->jobs[i].s.state == HS_Q_RUNNING;
		if (!running)
			break;
		if (poll(&(struct pollfd){ .fd = sig_pipe[0], .events = POLLIN }, 1, POLL_MS) > 0) {
			char buf[64];

			if (read(sig_pipe[0], buf, sizeof(buf)) < 0) {
				/* nothing to do: stop_signal says it */
			}
		}
	}
	return 0;
}
