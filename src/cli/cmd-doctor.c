/*
 * cmd-doctor.c - hotset doctor: why a job waits for the disk, in plain
 * words: each finding with the figures it rests on, each fix a command.
 *
 * It gathers the facts (the run as record measures it, the profile's
 * curve, residency and largest directories, the machine's memory, the
 * job's memory cgroup and the limits above it, the other cgroups, the
 * reclaimers); hs_diagnose() (diagnosis.h) turns them into findings, which
 * are printed as text, JSON or HTML. A source that cannot be read is said
 * first, with the privilege it needs.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chart.h"
#include "model/curve.h"
#include "model/diagnosis.h"
#include "kernel/memory.h"
#include "cache/residency.h"
#include "profile/tops.h"
#include "operands.h"
#include "options.h"
#include "record/record-run.h"
#include "usage-report.h"
#include "atomic-write.h"
#include "cmd.h"
#include "commands.h"
#include "messages.h"
#include "output.h"
#include "signals.h"

static const char usage[] =
	"usage: hotset doctor [-q] [-J] [-o REPORT.html] [--profile-output PROFILE]\n"
	"                     [--backend auto|ptrace|bpf] [--] CMD [ARGS...]\n"
	"       hotset doctor [-q] [-J] [-o REPORT.html] [--cgroup CGROUP] -p PROFILE\n"
	"\n"
	"Say why a job waits for the disk, and what to do about it. The first form\n"
	"records CMD as 'hotset record --trace' does and times it, then diagnoses\n"
	"the run; the second diagnoses an earlier profile against what is resident\n"
	"now, in the memory cgroup the profile recorded the job in. What could not\n"
	"be seen is said first, with the privilege it needs; each finding comes\n"
	"with the figures it rests on, each fix with a command to paste. The\n"
	"diagnosis goes to standard output once CMD has ended.\n"
	"\n"
	"  -p, --profile PROFILE  diagnose this profile (recorded with --trace for the\n"
	"                         memory a re-run needs), without running anything\n"
	"      --cgroup CGROUP    with -p: diagnose the memory cgroup CGROUP (\"/a/b\", or\n"
	"                         its directory) instead of the profile's\n"
	"      --profile-output PROFILE\n"
	"                         where to write CMD's profile (default: hotset.profile)\n"
	"      --backend NAME     how to follow CMD: auto, ptrace or bpf (as record)\n"
	"  -o, --output FILE      also write the diagnosis as an HTML report to FILE,\n"
	"                         with the curve, a timeline of the run and the fixes\n"
	"  -J, --json             the diagnosis as JSON\n"
	"  -q, --quiet            no warnings about single files\n"
	"  -V, --version          show hotset's version\n"
	"  -h, --help             show this help\n"
	"\n"
	"Exit status: with CMD, CMD's own (as record); with -p, 0. 2 for a usage\n"
	"error, a malformed profile, a --cgroup that is not one, or a report that\n"
	"could not be written; 125, 126, 127 when CMD did not run (as record).\n";

const struct cmd cmd_doctor;

#define TIMELINE_POINTS 600	/* intervals in the HTML timeline: a minute at 100 ms */

/* TIMELINE_POINTS, or fewer (2 or more) from HOTSET_TIMELINE_POINTS: a test's run of seconds */
static size_t timeline_points(void)
{
	const char *v = getenv("HOTSET_TIMELINE_POINTS");
	char *end;
	unsigned long n = v && *v ? strtoul(v, &end, 10) : 0;

	return n >= 2 && n < TIMELINE_POINTS && !*end ? n : TIMELINE_POINTS;
}
#define MAX_DAMON 16

struct doctor {
	bool json, quiet;
	const char *html, *profile, *cgroup;	/* -o, -p, --cgroup */
	char **argv;			/* CMD, or NULL with -p */

	/* the run */
	struct hs_record_run run;
	struct hs_usage_timeline tl;
	/* what the profile's header says of its recorded run (doctor -p) */
	struct hs_usage recorded;

	/* the profile */
	struct hs_tops tops;
	bool curve_ok;
	struct hs_curve c;
	struct hs_curve_summary cs;
	struct hs_residency_total res;
	unsigned skipped;
	char rec_cgroup[PATH_MAX], rec_holder[PATH_MAX];

	/* the machine */
	struct hs_memcg memcg0, memcg1;
	struct hs_memcg_cache *cg0, *cg1;
	struct hs_damon_scheme damon0[MAX_DAMON], damon1[MAX_DAMON];
	char balloon_where[PATH_MAX + 64];

	struct hs_diag_facts in;
	struct hs_diagnosis dx;
};

/* "needs root" for a permission error, else the error itself. */
static const char *why(int err)
{
	return err == -EACCES || err == -EPERM ? "permission denied: it needs root" : strerror(-err);
}

/* ---- facts ------------------------------------------------------------------ */

/* DAMON's schemes, their stats refreshed first (as root: the kernel updates them only when asked). */
static int read_damon(struct hs_damon_scheme *v)
{
	int rc;

	hs_damon_update_stats();
	rc = hs_damon_schemes(v, MAX_DAMON);
	return rc;
}

static void read_machine(struct doctor *d)
{
	struct hs_diag_facts *in = &d->in;
	int rc;

	if ((rc = hs_meminfo_read(&in->mi)))
		hs_diag_unseen(&d->dx, "/proc/meminfo", "%s", why(rc));
	in->mi_ok = !rc;
	rc = read_damon(d->damon0);
	if (rc < 0 && rc != -ENOENT)
		hs_diag_unseen(&d->dx, "DAMON schemes (/sys/kernel/mm/damon/admin)", "%s", why(rc));
	in->ndamon = rc > 0 ? rc : 0;
	in->damon0 = d->damon0;
	in->balloon = hs_balloon_probe(d->balloon_where, sizeof(d->balloon_where));
	in->balloon_where = d->balloon_where;
	if (in->balloon < 0)
		hs_diag_unseen(&d->dx, "a balloon driver (/proc/modules, /sys/bus/virtio/drivers)", "%s",
			       why(in->balloon));
}

/*
 * The memory cgroup to diagnose: --cgroup's, else the one the profile
 * recorded the job in, else (a run, or a profile that does not say) our
 * own. Returns 0, or -1 after an error for a --cgroup that is not one.
 */
static int pick_cgroup(struct doctor *d)
{
	struct hs_diag_facts *in = &d->in;

	if (d->cgroup) {
		in->cg_source = HS_CG_OPTION;
		if ((in->memcg_rc = hs_memcg_named(0, d->cgroup, &d->memcg0)))
			return error("--cgroup %s: %s", d->cgroup, in->memcg_rc == -ENOENT ?
				     "no such memory cgroup (a path such as /a/b, or its directory "
				     "under the memory controller's mount)" : strerror(-in->memcg_rc));
	} else if (!d->argv && in->rec_cgroup) {
		in->cg_source = HS_CG_PROFILE;
		in->memcg_rc = hs_memcg_named(in->rec_version, in->rec_cgroup, &d->memcg0);
	} else {
		in->cg_source = d->argv ? HS_CG_RUN : HS_CG_OWN;
		in->memcg_rc = hs_memcg_of(0, &d->memcg0);
	}
	in->memcg0 = &d->memcg0;
	if (in->memcg_rc && in->memcg_rc != -ENOENT)
		hs_diag_unseen(&d->dx, "the memory cgroup", "%s", why(in->memcg_rc));
	else if (in->memcg_rc && in->cg_source != HS_CG_PROFILE)
		hs_diag_unseen(&d->dx, "the memory cgroup (/proc/self/cgroup)", "no memory controller "
			       "is mounted (cgroup v1 memory or cgroup2)");
	else if (!in->memcg_rc && !d->memcg0.limit_known)
		hs_diag_unseen(&d->dx, d->memcg0.version == 1 ? "memory.limit_in_bytes" : "memory.max",
			       "of %s: it cannot be read", d->memcg0.dir);
	return 0;
}

/* Every cgroup's memory and the reclaim counters, before the run (or now) and after. */
static void snapshot_machine(struct doctor *d, bool after)
{
	struct hs_diag_facts *in = &d->in;
	int rc;

	if (after) {
		in->ncg1 = in->memcg_rc ? in->memcg_rc : hs_memcg_list(&d->memcg0, &d->cg1);
		in->cg1 = d->cg1;
		rc = hs_vmstat_read(&in->vm1);
		in->vm_ok = in->vm_ok && !rc;
		/* the limits and use as the run left them */
		if (!in->memcg_rc && !hs_memcg_of(0, &d->memcg1))
			in->memcg1 = &d->memcg1;
		if (in->ndamon && read_damon(d->damon1) == in->ndamon)
			in->damon1 = d->damon1;
		return;
	}
	in->ncg0 = in->memcg_rc ? in->memcg_rc : hs_memcg_list(&d->memcg0, &d->cg0);
	in->cg0 = d->cg0;
	rc = hs_vmstat_read(&in->vm0);
	in->vm_ok = !rc;
	if (rc)
		hs_diag_unseen(&d->dx, "/proc/vmstat", "%s", why(rc));
}

static int residency_one(void *ctx, const struct hs_target *t)
{
	struct doctor *d = ctx;
	struct hs_target_residency r;
	int rc = hs_residency_target(t, &r);

	if (rc && rc != -EPERM)
		d->skipped++;
	else
		hs_residency_total_add(&d->res, t, &r);
	return 0;
}

/* The profile: its header, largest directories, curve, what of it is resident now. */
static int read_profile(struct doctor *d)
{
	struct hs_diag_facts *in = &d->in;
	struct hs_profile_reader *rd;
	struct hs_profile_item it;
	struct hs_error err = { 0 };
	struct hs_curve_opts co;
	struct operands ops = { .cmd = &cmd_doctor, .profile = d->profile, .quiet = true };
	const struct hs_profile_header *h;
	int rc;

	if ((rc = hs_profile_open(d->profile, &rd, &err)))
		return err.line ? error("%s:%u: %s", d->profile, err.line, err.msg) :
				  error("%s: %s", d->profile, err.msg[0] ? err.msg : strerror(-rc));
	h = hs_profile_header(rd);
	in->page_size = h->page_size;
	d->recorded.io_known = h->write_bytes_known;
	d->recorded.write_bytes_disk = h->write_bytes;
	d->recorded.max_rss_bytes = h->max_rss_known ? h->max_rss : 0;
	if (h->memcg) {
		snprintf(d->rec_cgroup, sizeof(d->rec_cgroup), "%s", h->memcg);
		in->rec_cgroup = d->rec_cgroup;
		in->rec_version = h->memcg_version;
		in->rec_limit_known = h->memcg_limit_known;
		in->rec_limit = h->memcg_limit;
		if (h->memcg_limit_holder) {
			snprintf(d->rec_holder, sizeof(d->rec_holder), "%s", h->memcg_limit_holder);
			in->rec_limit_holder = d->rec_holder;
		}
	}
	while ((rc = hs_profile_next(rd, &it, &err)) > 0 && it.kind == HS_ITEM_FILE) {
		in->files++;
		in->pages += it.file.pages;
		in->ranges += it.file.nranges;
		if (hs_tops_add(&d->tops, &it.file)) {
			rc = -ENOMEM;
			break;
		}
	}
	if (rc >= 0)
		rc = hs_tops_finish(&d->tops, rd, &err);
	if (rc >= 0)
		rc = hs_tops_cover(&d->tops, HS_TOPS_COVER_SHARE, HS_TOPS_COVER_MAX, HS_TOPS_COVER_MIN,
				   rd, &err);
	if (rc >= 0) {
		hs_curve_model_opts(&co);	/* the model curve and run use */
		rc = hs_curve_from_profile(rd, &co, &d->c, &err);
		d->curve_ok = !rc;
		if (rc == -ENODATA) {
			hs_diag_unseen(&d->dx, "the profile's access trace", "%s has none: record with "
				       "--trace for the memory a re-run needs", d->profile);
			rc = 0;
		}
	}
	hs_profile_close(rd);
	if (rc < 0)
		return err.line ? error("%s:%u: %s", d->profile, err.line, err.msg) :
				  error("%s: %s", d->profile, err.msg[0] ? err.msg : strerror(-rc));
	if (d->curve_ok) {
		hs_curve_summarize(&d->c, &d->cs);
		in->curve_ok = true;
		in->curve_pages = d->c.pages;
		in->rerun_zero = hs_curve_rerun_cache(&d->c, &d->cs);
		in->curve_model = hs_curve_model_name(&d->c);
	}
	in->tops = &d->tops;
	in->res = &d->res;
	/* what is resident now, as status -p counts it */
	if ((rc = operands_open(&ops)))
		return -1;
	rc = operands_foreach(&ops, residency_one, d);
	d->skipped += ops.skipped;
	operands_close(&ops);
	return rc < 0 ? -1 : 0;
}

/* ---- commands ------------------------------------------------------------------ */

/*
 * A fix's commands as one line to paste: each quoted by shell_join() (so
 * a path such as x$(touch y) stays one word), "> FILE" for its output,
 * joined by &&. Malloc'd; NULL for a fix without a command, or out of memory.
 */
static char *fix_command(const struct hs_fix *x)
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

static void json_report(struct doctor *d)
{
	const struct hs_diag_facts *in = &d->in;
	const struct hs_diagnosis *x = &d->dx;
	const struct hs_usage *u = &d->run.u;
	const struct hs_memcg *m = in->memcg_rc ? NULL : in->memcg1 ? in->memcg1 : in->memcg0;
	bool ran = in->ran, disk = ran && u->io_known;
	bool wait = ran && u->pressure != HS_PRESSURE_UNKNOWN && u->wall_s > 0;
	char name[PATH_MAX];
	struct json j;

	json_begin_report(&j, stdout, "doctor", false);
	json_string(&j, "profile", d->profile);
	if (d->argv) {
		json_begin_array(&j, "command");
		for (char **a = d->argv; *a; a++)
			json_string(&j, NULL, *a);
		json_end_array(&j);
	} else {
		json_null(&j, "command");
	}
	if (ran)
		json_job_status(&j, d->run.res.wait_status);
	else
		json_null(&j, "exit_status"), json_null(&j, "signal");
	if (ran)
		json_double(&j, "wall_seconds", u->wall_s);
	else
		json_null(&j, "wall_seconds");
	if (wait) {
		json_double(&j, "io_wait_seconds", u->io_wait_s);
		json_double(&j, "io_wait_fraction", u->io_wait_s / u->wall_s);
	} else {
		json_null(&j, "io_wait_seconds");
		json_null(&j, "io_wait_fraction");
	}
	json_u64_or_null(&j, "disk_read_bytes", disk, u->read_bytes_disk);
	json_null(&j, "cache_read_bytes");
	if (wait && disk && u->io_wait_s > 0)
		json_double(&j, "disk_read_bytes_per_second", (double)u->read_bytes_disk / u->io_wait_s);
	else
		json_null(&j, "disk_read_bytes_per_second");
	if (ran && u->read_ios_known) {
		json_u64(&j, "read_requests", u->read_ios);
		json_string(&j, "read_requests_source", "io-stat");
	} else if (ran) {
		json_u64(&j, "read_requests", in->ranges);
		json_string(&j, "read_requests_source", "profile-ranges");
	} else {
		json_null(&j, "read_requests");
		json_null(&j, "read_requests_source");
	}
	json_u64_or_null(&j, "refaults", ran && in->vm_ok && in->vm1.refault_known,
			 in->vm1.refault_file - in->vm0.refault_file);
	json_u64_or_null(&j, "cgroup_refaults", x->refaults_known, x->refaulted);
	json_string(&j, "cause", hs_cause_id(x->cause));
	json_u64(&j, "lost_pages", x->lost_pages);
	json_u64(&j, "page_size", in->page_size);
	json_u64(&j, "working_set_bytes", x->working_set);
	json_u64(&j, "memory_needed_bytes", x->needed);
	json_string(&j, "memory_needed_source", x->needed_source);
	if (in->curve_ok)
		json_string(&j, "model", in->curve_model);
	else
		json_null(&j, "model");
	json_u64(&j, "memory_needed_read_bytes", x->need.read);
	json_u64_or_null(&j, "memory_needed_written_bytes", x->need.written_known, x->need.written);
	json_u64_or_null(&j, "memory_needed_rss_bytes", x->need.anon_known, x->need.anon);
	json_u64(&j, "resident_bytes", d->res.known.cached * in->page_size);
	json_u64(&j, "resident_memory_bytes", d->res.known.cached * in->page_size);	/* named for what it is */
	json_u64(&j, "unknown_pages", d->res.unknown_pages);
	json_u64(&j, "missing_pages", x->missing_pages);
	json_double(&j, "seen_fraction", x->seen_share);
	json_u64_or_null(&j, "evicted_pages", d->res.method == HS_RES_CACHESTAT, d->res.known.evicted);
	json_u64_or_null(&j, "recently_evicted_pages", d->res.method == HS_RES_CACHESTAT,
			 d->res.known.recently_evicted);
	json_u64_or_null(&j, "mem_total_bytes", in->mi_ok, in->mi.total);
	json_u64_or_null(&j, "mem_available_bytes", in->mi_ok, in->mi.available);
	json_u64_or_null(&j, "page_cache_bytes", in->mi_ok, in->mi.cached);
	json_string(&j, "cgroup", m ? m->name : NULL);
	json_string(&j, "cgroup_source", hs_cgroup_source_name(in->cg_source));
	json_u64_or_null(&j, "cgroup_version", m != NULL, m ? (uint64_t)m->version : 0);
	json_u64_or_null(&j, "cgroup_memory_limit_bytes", m != NULL && m->lowest >= 0, m ? m->limit : 0);
	json_string(&j, "cgroup_memory_limit_cgroup", m && m->lowest >= 0 ?
		    hs_memcg_level_name(m, m->lowest, name, sizeof(name)) : NULL);
	json_u64_or_null(&j, "cgroup_memory_usage_bytes", m != NULL && m->st.usage_known, m ? m->st.usage : 0);
	json_limits(&j, m);
	json_string(&j, "recorded_cgroup", in->rec_cgroup);
	json_u64_or_null(&j, "recorded_memory_limit_bytes", in->rec_limit_known &&
			 in->rec_limit != UINT64_MAX, in->rec_limit);
	json_string(&j, "competitors_under", x->ncomp ? x->comp_where : NULL);
	json_begin_array(&j, "competitors");
	for (int i = 0; i < x->ncomp; i++) {
		const struct hs_memcg_cache *c = x->comp[i].cg;

		json_begin_object(&j, NULL);
		json_string(&j, "cgroup", c->name);
		json_u64(&j, "bytes", x->comp[i].bytes);
		json_bool(&j, "growth", x->comp[i].grew);
		json_u64(&j, "file_bytes", c->file);
		json_u64(&j, "anon_bytes", c->anon);
		json_u64_or_null(&j, "peak_bytes", c->peak_known, c->peak);
		json_end_object(&j);
	}
	json_end_array(&j);
	json_bool(&j, "nothing_to_fix", hs_diag_nothing_to_fix(x));
	json_begin_array(&j, "findings");
	for (int i = 0; i < x->nf; i++) {
		const struct hs_finding *f = &x->f[i];

		json_begin_object(&j, NULL);
		json_string(&j, "id", f->id);
		json_bool(&j, "problem", f->severity == HS_SEV_PROBLEM);
		json_string(&j, "severity", hs_severity_name(f->severity));
		json_string(&j, "text", f->text);
		json_begin_array(&j, "evidence");
		for (int e = 0; e < f->nev; e++)
			json_string(&j, NULL, f->evidence[e]);
		json_end_array(&j);
		json_figures(&j, f);
		json_end_object(&j);
	}
	json_end_array(&j);
	json_begin_array(&j, "recommendations");
	for (int i = 0; i < x->nfix; i++) {
		const struct hs_fix *r = &x->fix[i];
		char *cmd = fix_command(r);

		json_begin_object(&j, NULL);
		json_string(&j, "text", r->text);
		json_string(&j, "command", cmd);
		json_begin_array(&j, "steps");
		for (int s = 0; s < r->nsteps; s++) {
			json_begin_object(&j, NULL);
			json_begin_array(&j, "argv");
			for (int a = 0; a < r->step[s].argc; a++)
				json_string(&j, NULL, r->step[s].argv[a]);
			json_end_array(&j);
			json_string(&j, "output", r->step[s].output);
			json_end_object(&j);
		}
		json_end_array(&j);
		json_end_object(&j);
		free(cmd);
	}
	json_end_array(&j);
	json_begin_array(&j, "not_read");
	for (int i = 0; i < x->nunseen; i++) {
		json_begin_object(&j, NULL);
		json_string(&j, "source", x->unseen[i].source);
		json_string(&j, "reason", x->unseen[i].reason);
		json_end_object(&j);
	}
	json_end_array(&j);
	json_string(&j, "html", d->html);
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

static void print_human(const struct doctor *d)
{
	const struct hs_diagnosis *x = &d->dx;
	static const char mark[] = { [HS_SEV_INFO] = '-', [HS_SEV_PROBLEM] = '!', [HS_SEV_UNSEEN] = '?' };

	fputs("Diagnosis of ", stdout);
	print_path(stdout, d->profile, strlen(d->profile));
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
		char *cmd = fix_command(&x->fix[i]);

		printf("\n  %d. ", i + 1);
		say("", x->fix[i].text);
		/* shell_join() leaves no byte a terminal would obey */
		if (cmd)
			printf("     $ %s\n", cmd);
		free(cmd);
	}
}

/* Text for HTML: what the text report shows (control bytes as \xHH), as entities. */
static void html_text(FILE *f, const char *s)
{
	print_html(f, s, strlen(s), true);
}

static const char html_style[] =
	"body{font-family:system-ui,sans-serif;margin:0 auto;padding:1em;max-width:60em;"
	"overflow-wrap:anywhere;"
	"line-height:1.45;color:#111}\n"
	"h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em}\n"
	"svg{width:100%;height:auto;display:block}\n"
	".finding{border-left:4px solid #999;padding:.2em .8em;margin:.8em 0}\n"
	".problem{border-color:#d62728}\n"
	".unseen{border-color:#ff7f0e}\n"
	".evidence{color:#444;font-size:.9em;margin:.3em 0 0 1em;padding:0}\n"
	"pre{background:#f4f4f4;padding:.6em;overflow-x:auto;white-space:pre-wrap;"
	"word-break:break-all}\n"
	"table{border-collapse:collapse;width:100%}td,th{text-align:left;padding:.2em .4em;"
	"border-bottom:1px solid #ddd;word-break:break-all}td.n{text-align:right}\n"
	"@media print{body{max-width:none;font-size:10pt}pre{border:1px solid #ccc}"
	".chart{break-inside:avoid}}\n";

static void write_html(FILE *f, const void *ctx)
{
	const struct doctor *d = ctx;
	const struct hs_diagnosis *x = &d->dx;
	uint32_t ps = d->in.page_size;
	char a[16];

	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	      "<title>hotset doctor: ", f);
	html_text(f, d->profile);
	fprintf(f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<h1>Why the job waits for "
		   "the disk</h1>\n<p>", html_style);
	html_text(f, d->in.ran ? "The run just recorded, profile " : "Profile ");
	html_text(f, d->profile);
	fputs("</p>\n", f);
	if (x->nunseen) {
		fputs("<h2>Not read</h2>\n<ul>\n", f);
		for (int i = 0; i < x->nunseen; i++) {
			fputs("<li>", f);
			html_text(f, x->unseen[i].source);
			fputs(": ", f);
			html_text(f, x->unseen[i].reason);
			fputs("</li>\n", f);
		}
		fputs("</ul>\n", f);
	}
	fputs("<h2>Findings</h2>\n", f);
	for (int i = 0; i < x->nf; i++) {
		const struct hs_finding *g = &x->f[i];

		fprintf(f, "<div class=\"finding%s\" id=\"%s\"><p>", g->severity == HS_SEV_PROBLEM ?
			" problem" : g->severity == HS_SEV_UNSEEN ? " unseen" : "", g->id);
		html_text(f, g->text);
		fputs("</p>\n<ul class=\"evidence\">\n", f);
		for (int e = 0; e < g->nev; e++) {
			fputs("<li>", f);
			html_text(f, g->evidence[e]);
			fputs("</li>\n", f);
		}
		fputs("</ul></div>\n", f);
	}
	if (x->nfix)
		fputs("<h2>What to do</h2>\n<ol>\n", f);
	for (int i = 0; i < x->nfix; i++) {
		char *cmd = fix_command(&x->fix[i]);

		fputs("<li><p>", f);
		html_text(f, x->fix[i].text);
		fputs("</p>", f);
		if (cmd) {
			/* the command as it is pasted: its quoting's backslashes stay single */
			fputs("<pre><code>", f);
			print_html(f, cmd, strlen(cmd), false);
			fputs("</code></pre>", f);
		}
		fputs("</li>\n", f);
		free(cmd);
	}
	if (x->nfix)
		fputs("</ol>\n", f);
	if (d->curve_ok) {
		fputs("<h2>Memory and bytes read</h2>\n<div class=\"chart\" id=\"curve\">\n", f);
		curve_svg(f, &d->c, ps, NULL, 101, false);
		fputs("</div>\n", f);
	}
	if (d->in.ran && d->tl.n > 1) {
		/*
		 * At most TIMELINE_POINTS intervals: a long run's samples are
		 * taken every stride-th (and the last), and each interval's
		 * shares are of the whole interval (the samples are running
		 * totals), so only detail is lost, and the chart stays as
		 * legible and as small as a minute's.
		 */
		size_t stride = (d->tl.n - 2) / timeline_points() + 1, m = 0;
		size_t cap = (d->tl.n - 1) / stride + 2;
		double *t = malloc(cap * sizeof(*t)), *cpu = malloc(cap * sizeof(*cpu));
		double *io = malloc(cap * sizeof(*io));
		char title[96];

		if (t && cpu && io) {
			const struct hs_usage_sample *p = &d->tl.v[0];

			for (size_t i = 0;; i = i + stride < d->tl.n ? i + stride : d->tl.n - 1) {
				const struct hs_usage_sample *s = &d->tl.v[i];
				double dt = s->t - p->t;

				/* each interval's share of time on CPU (of one CPU) and blocked on I/O */
				t[m] = s->t;
				cpu[m] = dt > 0 ? (s->cpu_s - p->cpu_s) / dt : 0;
				io[m] = dt > 0 ? (s->io_wait_s - p->io_wait_s) / dt : 0;
				m++;
				p = s;
				if (i == d->tl.n - 1)
					break;
			}
			if (stride == 1)
				snprintf(title, sizeof(title), "Share of each 100 ms on a CPU and waiting "
					 "on I/O");
			else
				snprintf(title, sizeof(title), "Share of each %.3g s on a CPU and waiting "
					 "on I/O", stride * 0.1);
			fputs("<h2>The run: CPU and I/O wait</h2>\n<div class=\"chart\" "
			      "id=\"timeline\">\n", f);
			timeline_svg(f, title, t, cpu, "on a CPU", io, "waiting on I/O", m);
			fputs("</div>\n", f);
		}
		free(t), free(cpu), free(io);
	}
	if (d->tops.ndirs) {
		fputs("<h2>Largest directories of the working set</h2>\n<table>\n<tr><th>directory"
		      "</th><th>size</th><th>share</th><th>files</th></tr>\n", f);
		for (size_t k = 0; k < d->tops.ndirs; k++) {
			fputs("<tr><td>", f);
			html_text(f, d->tops.dir[k].name);
			fprintf(f, "</td><td class=\"n\">%s</td><td class=\"n\">%.1f%%</td><td "
				   "class=\"n\">%llu</td></tr>\n",
				human_size(d->tops.dir[k].pages * ps, a),
				d->in.pages ? 100.0 * d->tops.dir[k].pages / d->in.pages : 0,
				(unsigned long long)d->tops.dir[k].files);
		}
		fputs("</table>\n", f);
	}
	fputs("<p><small>hotset " HOTSET_VERSION " doctor</small></p>\n</body>\n</html>\n", f);
}

/* ---- the command -------------------------------------------------------------- */

/* Record CMD as record does, with the machine before and after. Returns 0, or the exit code. */
static int run_job(struct doctor *d, const char *out)
{
	char *command;
	int rc;

	d->profile = out ? out : "hotset.profile";
	d->run.o.argv = d->argv;
	d->run.out = d->profile;
	d->run.trace = true;
	d->run.timeline = &d->tl;
	d->run.o.warn = say_warning;
	d->run.command = command = shell_join(d->argv);
	snapshot_machine(d, false);
	rc = hs_record_command(&d->run);
	report_after_job();
	free(command);
	if (rc) {
		error("%s", d->run.msg);
		hs_record_run_release(&d->run);
		return d->run.code;
	}
	report_record_end(&d->run);
	snapshot_machine(d, true);
	d->in.ran = true;
	d->in.run = &d->run.u;
	hs_record_run_release(&d->run);
	if (d->run.save_rc)
		return EXIT_HOTSET;
	for (int i = 0; i < d->run.u.nnotes; i++)
		if (!d->quiet)
			warning("%s", d->run.u.notes[i]);
	return EXIT_OK;
}

static int run_doctor(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "profile", required_argument, NULL, 'p' },
		{ "profile-output", required_argument, NULL, OPT_PROFILE_OUTPUT },
		{ "output", required_argument, NULL, 'o' },
		{ "backend", required_argument, NULL, OPT_BACKEND },
		{ "cgroup", required_argument, NULL, OPT_CGROUP },
		COMMON_LONGOPTS,
		{ 0 },
	};
	struct doctor *d = calloc(1, sizeof(*d));
	const char *out = NULL;
	int opt, rc = EXIT_OK;

	if (!d)
		return error("out of memory"), EXIT_HOTSET;
	while ((opt = getopt_long(argc, argv, "+" OPTS_START "p:o:", longopts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			if ((rc = option_profile(&cmd_doctor, &d->profile, optarg))) {
				free(d);
				return rc;
			}
			break;
		case OPT_PROFILE_OUTPUT: out = optarg; break;
		case 'o': d->html = optarg; break;
		case OPT_CGROUP: d->cgroup = optarg; break;
		case OPT_BACKEND:
			if (hs_record_backend_parse(optarg, &d->run.o.backend)) {
				free(d);
				return usage_error(&cmd_doctor, "--backend is auto, ptrace or bpf");
			}
			break;
		case 'q': d->quiet = true; break;
		case 'J': d->json = true; break;
		default: free(d); return option_other(&cmd_doctor, opt, argv, longopts);
		}
	}
	if (d->profile && (optind < argc || out)) {
		free(d);
		return usage_error(&cmd_doctor, "-p diagnoses a profile: no CMD%s with it",
				   out ? " nor --profile-output" : "");
	}
	if (d->profile && !strcmp(d->profile, "-")) {
		free(d);
		return usage_error(&cmd_doctor, "doctor reads the profile more than once: give a "
				   "file, not standard input");
	}
	if (!d->profile && optind >= argc) {
		free(d);
		return usage_error(&cmd_doctor, "give the command to diagnose after --, or -p PROFILE");
	}
	if (d->cgroup && !d->profile) {
		free(d);
		return usage_error(&cmd_doctor, "--cgroup goes with -p: CMD is diagnosed where it runs");
	}
	if (d->html && !*d->html) {
		free(d);
		return usage_error(&cmd_doctor, "an empty -o FILE names no file");
	}
	d->in.have_keep = find_command("keep") != NULL;
	if (!d->profile) {
		d->argv = argv + optind;
		if (pick_cgroup(d)) {
			rc = EXIT_USAGE;
			goto out;
		}
		read_machine(d);
		if ((rc = run_job(d, out)))
			goto out;
		if (read_profile(d)) {
			rc = EXIT_USAGE;
			goto out;
		}
	} else {
		/* the profile first: it names the cgroup the job was charged in */
		if (read_profile(d) || pick_cgroup(d)) {
			rc = EXIT_USAGE;
			goto out;
		}
		read_machine(d);
		snapshot_machine(d, false);
	}
	d->in.profile = d->profile;
	d->in.recorded = &d->recorded;
	if (d->skipped && !d->quiet)
		warning("%u file%s of the profile could not be examined (gone, or unreadable)",
			d->skipped, plural(d->skipped));
	hs_diagnose(&d->in, &d->dx);
	if (d->html && write_atomically(d->html, write_html, d))
		rc = EXIT_FAILED;
	if (d->json)
		json_report(d);
	else
		print_human(d);
out:
	hs_memcg_list_free(d->cg0, d->in.ncg0 > 0 ? (size_t)d->in.ncg0 : 0);
	hs_memcg_list_free(d->cg1, d->in.ncg1 > 0 ? (size_t)d->in.ncg1 : 0);
	hs_tops_release(&d->tops);
	if (d->curve_ok)
		hs_curve_release(&d->c);
	hs_usage_timeline_release(&d->tl);
	if (d->in.ran && rc == EXIT_OK) {
		int status = d->run.res.wait_status;

		free(d);
		return exit_as_job(status);
	}
	free(d);
	return finish_stdout(rc);
}

const struct cmd cmd_doctor = {
	"doctor", run_doctor, "why a job waits for the disk, with the evidence and the fixes",
	usage,
};
