/*
 * doctor-report.c - doctor's diagnosis in words and as JSON (docs/json.md,
 * "doctor"): what could not be read first, then each finding with its
 * evidence, then the fixes, each a command to paste.
 */
#include <stdlib.h>
#include <string.h>

#include "doctor-report.h"
#include "usage-report.h"

/* ---- commands ------------------------------------------------------------------ */

char *doctor_fix_command(const struct hs_fix *x)
{
	char *line = NULL, *cmd, *out = NULL, *next;
	size_t len = 0;

	for (int i = 0; i < x->nsteps; i++) {
		const struct hs_fix_step *s = &x->step[i];
		char *target[2] = { (char *)s->output, NULL };

		cmd = shell_join((char *const *)s->argv);
		out = s->output ? shell_join(target) : NULL;
		if (!cmd || (s->output && !out) ||
		    !(next = realloc(line, len + strlen(cmd) + (out ? strlen(out) : 0) + 8))) {
			free(cmd), free(out), free(line);
			return NULL;
		}
		line = next;
		len += (size_t)sprintf(line + len, "%s%s%s%s", i ? " && " : "", cmd, out ? " > " : "",
				       out ? out : "");
		free(cmd), free(out);
	}
	return line;
}

/* ---- output ------------------------------------------------------------------ */

static void json_figures(struct json *j, const struct hs_finding *f)
{
	json_begin_array(j, "figures");
	for (int i = 0; i < f->nfig; i++) {
		const struct hs_figure *x = &f->fig[i];

		json_begin_object(j, NULL);
		json_string(j, "name", x->name);
		if (!x->known)
			json_null(j, "value");
		else if (x->integer)
			json_u64(j, "value", x->u);
		else
			json_double(j, "value", x->d);
		json_string(j, "unit", x->unit);
		json_end_object(j);
	}
	json_end_array(j);
}

static void json_limits(struct json *j, const struct hs_memcg *m)
{
	char name[PATH_MAX];

	json_begin_array(j, "cgroup_limits");
	for (int i = 0; m && i < m->nlevels; i++) {
		const struct hs_memcg_level *l = &m->level[i];

		json_begin_object(j, NULL);
		json_string(j, "cgroup", hs_memcg_level_name(m, i, name, sizeof(name)));
		json_u64(j, "limit_bytes", l->limit);
		json_u64_or_null(j, "usage_bytes", l->st.usage_known, l->st.usage);
		json_u64_or_null(j, "peak_bytes", l->st.peak_known, l->st.peak);
		json_u64_or_null(j, "limit_hits", l->st.hits_known, l->st.hits);
		json_end_object(j);
	}
	json_end_array(j);
}

/* The run: the command, how it ended, its time, I/O wait and reads (null without a run). */
static void json_run(struct json *j, const struct hs_doctor *d)
{
	const struct hs_diag_facts *in = &d->in;
	const struct hs_usage *u = &d->run.u;
	bool ran = in->ran, disk = ran && u->io_known;
	bool wait = ran && u->pressure != HS_PRESSURE_UNKNOWN && u->wall_s > 0;

	if (d->o.argv) {
		json_begin_array(j, "command");
		for (char *const *a = d->o.argv; *a; a++)
			json_string(j, NULL, *a);
		json_end_array(j);
	} else {
		json_null(j, "command");
	}
	if (ran)
		json_job_status(j, d->run.res.wait_status);
	else
		json_null(j, "exit_status"), json_null(j, "signal");
	if (ran)
		json_double(j, "wall_seconds", u->wall_s);
	else
		json_null(j, "wall_seconds");
	if (wait) {
		json_double(j, "io_wait_seconds", u->io_wait_s);
		json_double(j, "io_wait_fraction", u->io_wait_s / u->wall_s);
	} else {
		json_null(j, "io_wait_seconds");
		json_null(j, "io_wait_fraction");
	}
	json_u64_or_null(j, "disk_read_bytes", disk, u->read_bytes_disk);
	json_null(j, "cache_read_bytes");
	if (wait && disk && u->io_wait_s > 0)
		json_double(j, "disk_read_bytes_per_second", (double)u->read_bytes_disk / u->io_wait_s);
	else
		json_null(j, "disk_read_bytes_per_second");
	if (ran && u->read_ios_known) {
		json_u64(j, "read_requests", u->read_ios);
		json_string(j, "read_requests_source", "io-stat");
	} else if (ran) {
		json_u64(j, "read_requests", in->ranges);
		json_string(j, "read_requests_source", "profile-ranges");
	} else {
		json_null(j, "read_requests");
		json_null(j, "read_requests_source");
	}
	json_u64_or_null(j, "refaults", ran && in->vm_ok && in->vm1.refault_known,
			 in->vm1.refault_file - in->vm0.refault_file);
}

/* The cause, the memory a re-run needs and of what, what is resident, the machine's memory. */
static void json_memory(struct json *j, const struct hs_doctor *d)
{
	const struct hs_diag_facts *in = &d->in;
	const struct hs_diagnosis *x = &d->dx;
	bool cachestat = d->res.method == HS_RES_CACHESTAT;

	json_u64_or_null(j, "cgroup_refaults", x->refaults_known, x->refaulted);
	json_string(j, "cause", hs_cause_id(x->cause));
	json_u64(j, "lost_pages", x->lost_pages);
	json_u64(j, "page_size", in->page_size);
	json_u64(j, "working_set_bytes", x->working_set);
	json_u64(j, "memory_needed_bytes", x->needed);
	json_string(j, "memory_needed_source", x->needed_source);
	if (in->curve_ok)
		json_string(j, "model", in->curve_model);
	else
		json_null(j, "model");
	json_u64(j, "memory_needed_read_bytes", x->need.read);
	json_u64_or_null(j, "memory_needed_written_bytes", x->need.written_known, x->need.written);
	json_u64_or_null(j, "memory_needed_rss_bytes", x->need.anon_known, x->need.anon);
	json_u64(j, "resident_bytes", d->res.known.cached * in->page_size);
	json_u64(j, "resident_memory_bytes", d->res.known.cached * in->page_size);	/* named for what it is */
	json_u64(j, "unknown_pages", d->res.unknown_pages);
	json_u64(j, "missing_pages", x->missing_pages);
	json_double(j, "seen_fraction", x->seen_share);
	json_u64_or_null(j, "evicted_pages", cachestat, d->res.known.evicted);
	json_u64_or_null(j, "recently_evicted_pages", cachestat, d->res.known.recently_evicted);
	json_u64_or_null(j, "mem_total_bytes", in->mi_ok, in->mi.total);
	json_u64_or_null(j, "mem_available_bytes", in->mi_ok, in->mi.available);
	json_u64_or_null(j, "page_cache_bytes", in->mi_ok, in->mi.cached);
}

/* The memory cgroup diagnosed (after the run, if there was one), its limits, what the profile recorded. */
static void json_cgroup(struct json *j, const struct hs_diag_facts *in)
{
	const struct hs_memcg *m = in->memcg_rc ? NULL : in->memcg1 ? in->memcg1 : in->memcg0;
	char name[PATH_MAX];

	json_string(j, "cgroup", m ? m->name : NULL);
	json_string(j, "cgroup_source", hs_cgroup_source_name(in->cg_source));
	json_u64_or_null(j, "cgroup_version", m != NULL, m ? (uint64_t)m->version : 0);
	json_u64_or_null(j, "cgroup_memory_limit_bytes", m != NULL && m->lowest >= 0, m ? m->limit : 0);
	json_string(j, "cgroup_memory_limit_cgroup", m && m->lowest >= 0 ?
		    hs_memcg_level_name(m, m->lowest, name, sizeof(name)) : NULL);
	json_u64_or_null(j, "cgroup_memory_usage_bytes", m != NULL && m->st.usage_known, m ? m->st.usage : 0);
	json_limits(j, m);
	json_string(j, "recorded_cgroup", in->rec_cgroup);
	json_u64_or_null(j, "recorded_memory_limit_bytes", in->rec_limit_known &&
			 in->rec_limit != UINT64_MAX, in->rec_limit);
}

static void json_competitors(struct json *j, const struct hs_diagnosis *x)
{
	json_string(j, "competitors_under", x->ncomp ? x->comp_where : NULL);
	json_begin_array(j, "competitors");
	for (int i = 0; i < x->ncomp; i++) {
		const struct hs_memcg_cache *c = x->comp[i].cg;

		json_begin_object(j, NULL);
		json_string(j, "cgroup", c->name);
		json_u64(j, "bytes", x->comp[i].bytes);
		json_bool(j, "growth", x->comp[i].grew);
		json_u64(j, "file_bytes", c->file);
		json_u64(j, "anon_bytes", c->anon);
		json_u64_or_null(j, "peak_bytes", c->peak_known, c->peak);
		json_end_object(j);
	}
	json_end_array(j);
}

static void json_findings(struct json *j, const struct hs_diagnosis *x)
{
	json_begin_array(j, "findings");
	for (int i = 0; i < x->nf; i++) {
		const struct hs_finding *f = &x->f[i];

		json_begin_object(j, NULL);
		json_string(j, "id", f->id);
		json_bool(j, "problem", f->severity == HS_SEV_PROBLEM);
		json_string(j, "severity", hs_severity_name(f->severity));
		json_string(j, "text", f->text);
		json_begin_array(j, "evidence");
		for (int e = 0; e < f->nev; e++)
			json_string(j, NULL, f->evidence[e]);
		json_end_array(j);
		json_figures(j, f);
		json_end_object(j);
	}
	json_end_array(j);
}

static void json_fixes(struct json *j, const struct hs_diagnosis *x)
{
	json_begin_array(j, "recommendations");
	for (int i = 0; i < x->nfix; i++) {
		const struct hs_fix *r = &x->fix[i];
		char *cmd = doctor_fix_command(r);

		json_begin_object(j, NULL);
		json_string(j, "text", r->text);
		json_string(j, "command", cmd);
		json_begin_array(j, "steps");
		for (int s = 0; s < r->nsteps; s++) {
			json_begin_object(j, NULL);
			json_begin_array(j, "argv");
			for (int a = 0; a < r->step[s].argc; a++)
				json_string(j, NULL, r->step[s].argv[a]);
			json_end_array(j);
			json_string(j, "output", r->step[s].output);
			json_end_object(j);
		}
		json_end_array(j);
		json_end_object(j);
		free(cmd);
	}
	json_end_array(j);
}

void doctor_json_report(const struct hs_doctor *d, const char *html)
{
	const struct hs_diagnosis *x = &d->dx;
	struct json j;

	json_begin_report(&j, stdout, "doctor", false);
	json_string(&j, "profile", d->o.profile);
	json_run(&j, d);
	json_memory(&j, d);
	json_cgroup(&j, &d->in);
	json_competitors(&j, x);
	json_bool(&j, "nothing_to_fix", hs_diag_nothing_to_fix(x));
	json_findings(&j, x);
	json_fixes(&j, x);
	json_begin_array(&j, "not_read");
	for (int i = 0; i < x->nunseen; i++) {
		json_begin_object(&j, NULL);
		json_string(&j, "source", x->unseen[i].source);
		json_string(&j, "reason", x->unseen[i].reason);
		json_end_object(&j);
	}
	json_end_array(&j);
	json_string(&j, "html", html);
	json_end_object(&j);
	json_finish(&j);
}

/* A line of the report: text escaped as show escapes paths (control bytes as \xHH). */
static void say(const char *prefix, const char *text)
{
	fputs(prefix, stdout);
	print_path(stdout, text, strlen(text));
	putchar('\n');
}

void doctor_print_human(const struct hs_doctor *d)
{
	const struct hs_diagnosis *x = &d->dx;
	static const char mark[] = { [HS_SEV_INFO] = '-', [HS_SEV_PROBLEM] = '!', [HS_SEV_UNSEEN] = '?' };

	fputs("Diagnosis of ", stdout);
	print_path(stdout, d->o.profile, strlen(d->o.profile));
	fputs(d->in.ran ? " (the run just recorded)\n" : " (what is resident now)\n", stdout);
	/* what could not be seen comes first: the findings leave it out */
	if (x->nunseen)
		fputs("\nNot read (the findings leave them out):\n", stdout);
	for (int i = 0; i < x->nunseen; i++) {
		fputs("  ", stdout);
		print_path(stdout, x->unseen[i].source, strlen(x->unseen[i].source));
		say(": ", x->unseen[i].reason);
	}
	for (int i = 0; i < x->nf; i++) {
		printf("\n%c ", mark[x->f[i].severity]);
		say("", x->f[i].text);
		for (int e = 0; e < x->f[i].nev; e++)
			say("    ", x->f[i].evidence[e]);
	}
	if (x->nfix)
		fputs("\nWhat to do:\n", stdout);
	for (int i = 0; i < x->nfix; i++) {
		char *cmd = doctor_fix_command(&x->fix[i]);

		printf("\n  %d. ", i + 1);
		say("", x->fix[i].text);
		/* shell_join() leaves no byte a terminal would obey */
		if (cmd)
			printf("     $ %s\n", cmd);
		free(cmd);
	}
}

