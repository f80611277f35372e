/*
 * run-report.c - what hotset run says: the status line as the queue runs,
 * the table or JSON of its jobs at the end, the plan of --dry-run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/curve.h"
#include "run-report.h"
#include "messages.h"
#include "output.h"

void run_progress(void *ctx, const struct hs_runq *q, bool over)
{
	size_t running = 0, waiting = 0, done = 0;
	const char *why = NULL;

	if (!*(const bool *)ctx)
		return;
	if (over) {
		fputs("\r\033[K", stderr);
		return;
	}
	for (size_t i = 0; i < q->n; i++) {
		const struct hs_runq_job *j = &q->jobs[i];

		running += j->s.state == HS_Q_RUNNING;
		done += j->s.state == HS_Q_DONE;
		if (j->s.state == HS_Q_PENDING) {
			waiting++;
			if (!why)
				why = hs_wait_name(j->s.wait);
		}
	}
	fprintf(stderr, "\r\033[Krun: %zu running, %zu waiting%s%s%s, %zu done", running,
		waiting, why ? " (" : "", why ? why : "", why ? ")" : "", done);
	fflush(stderr);
}

static double secs(int64_t ns)
{
	return (double)ns / 1e9;
}

void run_json_report(const struct hs_runq *q)
{
	struct json j;
	int64_t first = 0, last = 0;

	json_begin_report(&j, stdout, "run", false);
	json_string(&j, "engine", q->slurm ? "slurm" : "local");
	/* with Slurm, the cluster's are the CPUs and the memory */
	json_u64_or_null(&j, "slots", q->sched.slots, q->sched.slots);
	json_u64_or_null(&j, "cpus", !q->slurm, (uint64_t)q->sched.cpus);
	json_u64_or_null(&j, "budget_bytes", !q->slurm, q->sched.budget);
	/* the page-cache model of the jobs' memory needs (profile_figures()) */
	json_string(&j, "model", hs_curve_policy_name(HS_CURVE_AUTO));
	json_begin_array(&j, "jobs");
	for (size_t i = 0; i < q->n; i++) {
		const struct hs_runq_job *jb = &q->jobs[i];
		const struct hs_run_record *r = &jb->res;
		bool ran = jb->ran && jb->s.state == HS_Q_DONE;
		bool known = ran && jb->res_known;

		if (ran) {
			if (!first || jb->start_ns < first)
				first = jb->start_ns;
			if (jb->end_ns > last)
				last = jb->end_ns;
		}
		json_begin_object(&j, NULL);
		json_string(&j, "name", jb->def->name);
		json_string(&j, "command", jb->def->command);
		json_string(&j, "state", ran ? "done" : jb->s.state == HS_Q_DONE ? "resumed" :
			    "not-run");
		if (ran) {
			json_i64(&j, "start_ns", jb->start_ns);
			json_i64(&j, "end_ns", jb->end_ns);
			json_double(&j, "wall_seconds", secs(jb->end_ns - jb->start_ns));
			json_i64(&j, "exit_status", jb->exit_status);
		} else {
			json_null(&j, "start_ns");
			json_null(&j, "end_ns");
			json_null(&j, "wall_seconds");
			if (jb->s.state == HS_Q_DONE)
				json_i64(&j, "exit_status", jb->exit_status);
			else
				json_null(&j, "exit_status");
		}
		if (known && r->io_wait_known)
			json_double(&j, "io_wait_seconds", r->io_wait_s);
		else
			json_null(&j, "io_wait_seconds");
		json_u64_or_null(&j, "disk_read_bytes", known && r->io_known, r->read_bytes_disk);
		json_u64_or_null(&j, "memory_needed_bytes", jb->s.known, jb->s.need);
		json_string(&j, "wait_reason", jb->first_wait);
		json_bool(&j, "warmed", jb->s.warmed);
		json_string(&j, "log", jb->log);
		json_u64_or_null(&j, "slurm_job_id", jb->slurm_job > 0, (uint64_t)jb->slurm_job);
		json_end_object(&j);
	}
	json_end_array(&j);
	json_double(&j, "makespan_seconds", first ? secs(last - first) : 0);
	json_end_object(&j);
	json_finish(&j);
}

void run_table_report(const struct hs_runq *q)
{
	static const struct table_column cols[] = {
		{ "NAME", false, 0 }, { "START", true, 0 }, { "END", true, 0 },
		{ "WALL", true, 0 }, { "IO-WAIT", true, 0 }, { "READ", true, 0 },
		{ "STATUS", true, 0 },
	};
	const struct table_column *cp[7];
	struct table t;

	for (size_t i = 0; i < 7; i++)
		cp[i] = &cols[i];
	table_start(&t, stdout, cp, 7, false, false);
	for (size_t i = 0; i < q->n; i++) {
		const struct hs_runq_job *jb = &q->jobs[i];
		const struct hs_run_record *r = &jb->res;
		char c[7][32];
		const char *cells[7];
		size_t lens[7];
		bool ran = jb->ran && jb->s.state == HS_Q_DONE;

		snprintf(c[0], sizeof(c[0]), "%s", "");
		strcpy(c[1], "-"), strcpy(c[2], "-"), strcpy(c[3], "-");
		strcpy(c[4], "-"), strcpy(c[5], "-"), strcpy(c[6], "-");
		if (ran) {
			snprintf(c[1], 32, "%.1f", secs(jb->start_ns - q->start_ns));
			snprintf(c[2], 32, "%.1f", secs(jb->end_ns - q->start_ns));
			snprintf(c[3], 32, "%.1fs", secs(jb->end_ns - jb->start_ns));
			if (jb->res_known && r->io_wait_known)
				snprintf(c[4], 32, "%.1fs", r->io_wait_s);
			if (jb->res_known && r->io_known)
				short_size(r->read_bytes_disk, c[5]);
		}
		if (jb->s.state == HS_Q_DONE)
			snprintf(c[6], 32, "%d%s", jb->exit_status, ran ? "" : " (before)");
		else
			snprintf(c[6], 32, "not run");
		cells[0] = jb->def->name;
		lens[0] = strlen(jb->def->name);
		for (size_t k = 1; k < 7; k++)
			cells[k] = c[k], lens[k] = strlen(c[k]);
		table_row(&t, cells, lens);
	}
	table_end(&t);
}

/* What would start at once, and why the others would wait. */
void run_dry_run(const struct hs_runq *q)
{
	struct hs_sched_job *v = calloc(q->n ? q->n : 1, sizeof(*v));
	char need[24], budget[24];
	ssize_t next;

	if (!v)
		return;
	for (size_t i = 0; i < q->n; i++)
		v[i] = q->jobs[i].s;
	/* start what the scheduler would start, one after another, at the queue's start */
	while ((next = hs_sched_next(&q->sched, v, q->n)) >= 0)
		v[next].state = HS_Q_RUNNING;
	if (q->sched.slots)
		printf("budget %s, at most %u job%s at once\n", short_size(q->sched.budget, budget),
		       q->sched.slots, plural(q->sched.slots));
	else
		printf("budget %s, %.0f CPUs shared by what the jobs use of them\n",
		       short_size(q->sched.budget, budget), q->sched.cpus);
	printf("needs: a warm re-run's cache (the %s model's curve of the last run), what it "
	       "wrote, its peak RSS\n", hs_curve_policy_name(HS_CURVE_AUTO));
	for (size_t i = 0; i < q->n; i++) {
		const struct hs_runq_job *j = &q->jobs[i];
		char cpu[16] = "?";

		if (j->s.known)
			snprintf(cpu, sizeof(cpu), "%.2f", j->s.cpu);
		printf("%-20s %-10s need %-8s cpu %-5s %s%s\n", j->def->name,
		       !j->s.known ? "no-history" : j->s.cpu_bound ? "cpu-bound" : "io-bound",
		       j->s.known ? short_size(j->s.need, need) : "?", cpu,
		       v[i].state == HS_Q_RUNNING ? "starts" :
		       v[i].state == HS_Q_DONE ? "done" : "waits: ",
		       v[i].state == HS_Q_PENDING ? hs_wait_name(v[i].wait) : "");
	}
	free(v);
}


void run_slurm_plan(struct hs_runq *q)
{
	char hotset[PATH_MAX];

	if (hs_runq_self_path(q, hotset, sizeof(hotset)))
		return;
	for (size_t i = 0; i < q->n; i++) {
		struct hs_runq_job *j = &q->jobs[i];
		char *line;

		if (j->s.state == HS_Q_DONE) {
			printf("%-20s done\n", j->def->name);
			continue;
		}
		if (hs_runq_slurm_line(q, j, hotset, &line)) {
			error("out of memory");
			return;
		}
		printf("%-20s %s%s\n", j->def->name, j->s.known ? "" : "(no history: no --mem) ",
		       line);
		free(line);
	}
}
