/*
 * queue.c - the queue of `hotset run` as its engines share it: its jobs
 * with their paths and histories, the queue file written as it changes,
 * and the one way the engines speak (hs_runq_say(): the caller words
 * nothing, it only shows).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
