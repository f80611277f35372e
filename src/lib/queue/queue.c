/*
 * queue.c - the queue of `hotset run` as its engines share it: its jobs
 * with their paths and histories, the queue file written as it changes,
 * and the one way the engines speak (hs_runq_say(): the caller words
 * nothing, it only shows).
 */
#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/atomic.h"
#include "kernel/memory.h"
#include "queue/queue.h"

void hs_runq_say(const struct hs_runq *q, enum hs_runq_level level, const char *fmt, ...)
{
	/* the longest sentence names two paths and a reason */
	char msg[2 * PATH_MAX + 256];
	va_list ap;

	if (!q->ops.say)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	q->ops.say(q->ops.ctx, level, msg);
}

int hs_runq_path_of(char *buf, size_t size, const char *a, const char *mid, const char *b,
		    const char *suffix)
{
	int n = snprintf(buf, size, "%s%s%s%s", a, mid, b, suffix);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int hs_runq_job_paths(struct hs_runq *q, struct hs_runq_job *j)
{
	char dir[PATH_MAX], log[PATH_MAX];

	if (hs_runq_path_of(dir, sizeof(dir), q->state, "/jobs/", j->def->name, "") ||
	    hs_runq_path_of(log, sizeof(log), q->logs, "/", j->def->name, ".log"))
		return -ENAMETOOLONG;
	free(j->dir), free(j->log);
	j->dir = strdup(dir), j->log = strdup(log);
	if (!j->dir || !j->log)
		return -ENOMEM;
	return 0;
}

int hs_runq_setup_jobs(struct hs_runq *q)
{
	if (!(q->jobs = calloc(q->jf.n ? q->jf.n : 1, sizeof(*q->jobs))))
		return -ENOMEM;
	q->n = q->jf.n;
	for (size_t i = 0; i < q->n; i++) {
		struct hs_runq_job *j = &q->jobs[i];
		struct hs_error err = { 0 };
		char path[PATH_MAX + 16];
		int rc;

		j->def = &q->jf.jobs[i];
		j->pidfd = -1;
		if ((rc = hs_runq_job_paths(q, j)))
			return rc;
		snprintf(path, sizeof(path), "%s/history", j->dir);
		rc = hs_run_record_load(path, &j->hist, &err);
		if (rc && rc != -ENOENT)
			hs_runq_say(q, HS_RUNQ_WARNING, "%s%s%.0u: %s: the job runs as one with no history",
				    path, err.line ? ":" : "", err.line,
				    err.line ? err.msg : strerror(-rc));
		/* what the scheduler knows of it: its last run's, or nothing */
		j->s.known = rc == 0;
		if (j->s.known) {
			j->s.need = hs_sched_need(&j->hist);
			j->s.cpu_bound = hs_sched_cpu_bound(&j->hist);
			j->s.cpu = hs_sched_cpu(&j->hist);
			j->s.wall = j->hist.wall_s;
		}
	}
	return 0;
}

void hs_runq_release(struct hs_runq *q)
{
	for (size_t i = 0; i < q->n; i++)
		free(q->jobs[i].dir), free(q->jobs[i].log);
	hs_jobfile_free(&q->jf);
	free(q->jobs);
	q->jobs = NULL;
	q->n = 0;
}

/*
 * The queue file holds each job's state and, while it runs, who runs it
 * (its supervisor's pid, or its Slurm job id): what --resume and a queue
 * started after a killed one read back.
 */
int hs_runq_save(struct hs_runq *q)
{
	struct hs_queue st = { 0 };
	struct hs_queue_job *v = calloc(q->n ? q->n : 1, sizeof(*v));
	int rc;

	assert(q->n == q->jf.n);	/* a job of the queue for each of the job file */
	if (!v)
		return -ENOMEM;
	snprintf(st.jobfile, sizeof(st.jobfile), "%s", q->jobfile);
	st.hash = q->jf.hash;
	st.slurm = q->slurm;
	st.jobs = v;
	st.n = q->n;
	for (size_t i = 0; i < q->n; i++) {
		struct hs_runq_job *j = &q->jobs[i];

		memcpy(v[i].name, j->def->name, sizeof(v[i].name));
		v[i].state = j->s.state;
		v[i].exit_status = j->exit_status;
		v[i].start_ns = j->start_ns;
		v[i].end_ns = j->end_ns;
		v[i].supervisor = j->s.state != HS_Q_RUNNING ? 0 : q->slurm ? j->slurm_job : j->pid;
	}
	rc = hs_queue_save(q->queue_path, &st);
	free(v);
	/* said once: each later write would fail alike */
	if (rc && !q->state_lost)
		hs_runq_say(q, HS_RUNQ_ERROR,
			    "%s: cannot write the queue's state: %s; no job starts from now on",
			    q->queue_path, strerror(-rc));
	if (rc)
		q->state_lost = true;
	return rc;
}

/* ---- the state and log directories ------------------------------------------ */

/* What run keeps in its state directory (runstate.h), and engine-slurm.c's jobfile and stop. */
static const char *const state_entries[] = {
	"lock", "queue", "jobs", "logs", "jobfile", "stop", NULL
};

/*
 * A state or log directory given (or the default) must be the user's own
 * and writable by no one else, or sticky with hotset's entries the user's
 * own (hs_dir_check()): job output and histories are not to be read, or
 * planted, by others. One yet to be made (0700) must be made in such a
 * directory: the nearest that exists is checked, for the name to be made.
 */
static int check_dir(const struct hs_runq *q, const char *dir, const char *const *entries)
{
	struct hs_error err = { 0 };
	const char *made[2] = { NULL, NULL };
	size_t dlen = strlen(dir);
	char *at = malloc(dlen + 3), *slash;	/* room for "." or "/" before the name */
	struct stat st;
	int rc = 0;

	if (!at)
		return hs_runq_say(q, HS_RUNQ_ERROR, "out of memory"), -EIO;
	memcpy(at, dir, dlen + 1);
	while (stat(at, &st) < 0 && errno == ENOENT) {
		size_t len = strlen(at);

		while (len > 1 && at[len - 1] == '/')
			at[--len] = '\0';
		if (!(slash = strrchr(at, '/'))) {
			memmove(at + 2, at, len + 1);
			memcpy(at, ".", 2);	/* at holds ".\0name": "." */
			made[0] = at + 2;
			break;
		}
		made[0] = slash + 1;
		*slash = '\0';
		if (slash == at) {
			/* "/name": the root is the directory */
			memmove(at + 2, slash + 1, strlen(slash + 1) + 1);
			memcpy(at, "/", 2);
			made[0] = at + 2;
			break;
		}
	}
	if (hs_dir_check(at, made[0] ? made : entries, &err)) {
		if (made[0])
			hs_runq_say(q, HS_RUNQ_ERROR, "%s: cannot be made in %s, which is not safe "
				    "for the queue's state and logs: %s", dir, at, err.msg);
		else
			hs_runq_say(q, HS_RUNQ_ERROR, "%s: not a safe directory for the queue's "
				    "state and logs: %s", dir, err.msg);
		rc = -EINVAL;
	}
	free(at);
	return rc;
}

int hs_runq_check_state(const struct hs_runq *q)
{
	return check_dir(q, q->state, state_entries);
}

/* The log directory, with the names of the jobs' logs as its entries. */
int hs_runq_check_logs(const struct hs_runq *q)
{
	const char **names = calloc(q->n + 1, sizeof(*names));
	int rc;

	if (!names)
		return hs_runq_say(q, HS_RUNQ_ERROR, "out of memory"), -EIO;
	for (size_t i = 0; i < q->n; i++)
		names[i] = strrchr(q->jobs[i].log, '/') + 1;
	rc = check_dir(q, q->logs, names);
	free(names);
	return rc;
}

/* mkdir -p the state and log directories, 0700 (hs_mkdirs: never through another's link). */
int hs_runq_make_dirs(const struct hs_runq *q)
{
	const char *dirs[] = { q->state, q->logs };

	for (size_t i = 0; i < 2; i++) {
		struct hs_error err = { 0 };
		int rc = hs_mkdirs(dirs[i], 0700, &err);

		if (rc)
			return hs_runq_say(q, HS_RUNQ_ERROR, "%s: cannot make the directory: %s",
					   dirs[i], err.msg), rc == -EPERM ? -EINVAL : rc;
	}
	return 0;
}

/* ---- a queue resumed -------------------------------------------------------- */

/*
 * --resume: the jobs the queue file says are done stay done; act: stop
 * what the jobs that were running left (not for --dry-run).
 */
int hs_runq_resume(struct hs_runq *q, bool act)
{
	struct hs_queue st;
	struct hs_error err = { 0 };
	int rc;

	if ((rc = hs_queue_load(q->queue_path, &st, &err))) {
		if (rc == -ENOENT)
			return hs_runq_say(q, HS_RUNQ_ERROR, "%s: no queue to resume",
					   q->queue_path), -EINVAL;
		if (err.line)
			return hs_runq_say(q, HS_RUNQ_ERROR, "%s:%u: %s", q->queue_path, err.line,
					   err.msg), -EIO;
		return hs_runq_say(q, HS_RUNQ_ERROR, "%s: %s", q->queue_path, strerror(-rc)), -EIO;
	}
	if (st.hash != q->jf.hash) {
		hs_queue_free(&st);
		return hs_runq_say(q, HS_RUNQ_ERROR, "%s is not the job file of the queue in %s "
				   "(it was %s, or has changed since): run it without --resume",
				   q->jobfile, q->state, st.jobfile), -EINVAL;
	}
	if (st.slurm != q->slurm) {
		hs_queue_free(&st);
		return hs_runq_say(q, HS_RUNQ_ERROR, "the queue in %s ran with --engine %s: "
				   "resume it with that engine", q->state,
				   st.slurm ? "slurm" : "local"), -EINVAL;
	}
	for (size_t i = 0; i < st.n; i++) {
		/* the queue's jobs are the job file's, in its order */
		ssize_t k = hs_jobfile_find(&q->jf, st.jobs[i].name);
		struct hs_runq_job *j;

		if (k < 0)
			continue;
		j = &q->jobs[k];
		/* in Slurm, a job goes on without the queue: the resumed one adopts it */
		if (q->slurm && st.jobs[i].state == HS_Q_RUNNING) {	/* id 0: being submitted */
			j->s.state = HS_Q_RUNNING;
			j->ran = true;
			j->slurm_job = (int)st.jobs[i].supervisor;
			j->start_ns = st.jobs[i].start_ns;
			continue;
		}
		/* a job that was running is run again: its supervisor died with the queue */
		if (act && !q->slurm && st.jobs[i].state == HS_Q_RUNNING) {
			unsigned n = hs_runq_stop_leftovers(j);

			if (n)
				hs_runq_say(q, HS_RUNQ_WARNING, "job '%s': killed %u process%s it "
					    "left running when the queue was killed", j->def->name,
					    n, n == 1 ? "" : "es");
		}
		if (st.jobs[i].state == HS_Q_DONE) {
			j->s.state = HS_Q_DONE;
			j->exit_status = st.jobs[i].exit_status;
			j->start_ns = st.jobs[i].start_ns;
			j->end_ns = st.jobs[i].end_ns;
		}
	}
	hs_queue_free(&st);
	return 0;
}


int hs_runq_add_command(struct hs_runq *q, char *const *argv, const char *name)
{
	char *cmdline = q->ops.join(argv), *base = strrchr(argv[0], '/');
	char def[HS_JOB_NAME_MAX + 1];
	size_t k = 0;
	int rc;

	if (!cmdline)
		return -ENOMEM;
	if (!name) {
		for (const char *s = base ? base + 1 : argv[0]; *s && k < HS_JOB_NAME_MAX; s++)
			def[k++] = hs_job_name_ok(s, 1) ? *s : '_';
		def[k] = '\0';
		name = k && hs_job_name_ok(def, k) ? def : "job";
	} else if (!hs_job_name_ok(name, strlen(name))) {
		free(cmdline);
		return -EINVAL;
	}
	/* no file: "-" names it, and the command's hash stands for the file's in the queue file */
	q->jobfile = "-";
	q->jf.hash = hs_fnv1a(cmdline, strlen(cmdline));
	rc = hs_jobfile_add(&q->jf, name, cmdline, 0);
	free(cmdline);
	return rc ? -ENOMEM : 0;
}

uint64_t hs_runq_default_budget(void)
{
	struct hs_meminfo m;
	struct hs_memcg cg;
	uint64_t b = 0;

	if (hs_meminfo_read(&m) == 0)
		b = m.available;
	/* a limit below what the machine has free is what the jobs can have */
	if (hs_memcg_of(0, &cg) == 0 && cg.limit_known && cg.limit != UINT64_MAX && cg.limit < b)
		b = cg.limit;
	return b;
}

/* The lock's holder is gone (killed) while the lock stays: its jobs still hold it. */
static bool holder_gone(pid_t holder)
{
	return holder && kill(holder, 0) && errno == ESRCH;
}

int hs_runq_lock(const struct hs_runq *q, bool tell)
{
	pid_t holder;
	int lock;

	/* 300 turns of 100 ms: jobs that take longer to stop are said to hold it */
	for (int tries = 0; (lock = hs_runstate_lock(q->state, &holder)) == -EWOULDBLOCK &&
			    holder_gone(holder) && tries < 300; tries++) {
		if (tries == 0 && tell)
			hs_runq_say(q, HS_RUNQ_WARNING, "the jobs of the queue that was killed "
				    "(pid %d) are stopping: waiting for them", (int)holder);
		usleep(100000);
	}
	if (lock >= 0)
		return lock;
	if (lock == -EWOULDBLOCK && holder_gone(holder))
		hs_runq_say(q, HS_RUNQ_ERROR, "%s is still locked by the jobs of the queue of pid "
			    "%d, which was killed: they have not stopped", q->state, (int)holder);
	else if (lock == -EWOULDBLOCK && holder)
		hs_runq_say(q, HS_RUNQ_ERROR, "%s is in use by another queue (pid %d): give another "
			    "--state", q->state, (int)holder);
	else if (lock == -EWOULDBLOCK)
		hs_runq_say(q, HS_RUNQ_ERROR, "%s is in use by another queue: give another --state",
			    q->state);
	else
		hs_runq_say(q, HS_RUNQ_ERROR, "%s/lock: %s", q->state, strerror(-lock));
	return lock;
}

bool hs_runq_succeeded(const struct hs_runq *q)
{
	for (size_t i = 0; i < q->n; i++)
		if (q->jobs[i].s.state != HS_Q_DONE || q->jobs[i].exit_status)
			return false;
	return true;
}
