/*
 * diagnosis-others.c - the findings about what is beside the job
 * (diagnosis-impl.h): the other cgroups under the job's limits and their
 * page cache, the machine's memory, the reclaimers (global reclaim, DAMON)
 * and what each took, the VFS caches, the pages the job lost; then the
 * fixes (keep, warm) the findings call for. hs_diagnose() calls them only
 * when the job's pages were lost or it waited (diagnosis.c).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/diagnosis-impl.h"

/* ---- the others -------------------------------------------------------------------- */

/* Is the cgroup named a an ancestor of b, or b itself? */
static bool within(const char *a, const char *b)
{
	size_t len = strlen(a);

	return !strcmp(a, "/") || (!strncmp(b, a, len) && (b[len] == '/' || !b[len]));
}

/* The one named name in v[0..n), or NULL. */
static const struct hs_memcg_cache *cg_find(const struct hs_memcg_cache *v, ssize_t n,
					     const char *name)
{
	for (ssize_t i = 0; i < n; i++)
		if (!strcmp(v[i].name, name))
			return &v[i];
	return NULL;
}

/* Keep the HS_DIAG_COMPETITORS largest, largest first: one insertion step each. */
static void add_competitor(struct hs_diagnosis *d, const struct hs_memcg_cache *cg, uint64_t bytes,
			   bool grew)
{
	int i;

	if (d->ncomp == HS_DIAG_COMPETITORS && bytes <= d->comp[HS_DIAG_COMPETITORS - 1].bytes)
		return;
	i = d->ncomp < HS_DIAG_COMPETITORS ? d->ncomp++ : HS_DIAG_COMPETITORS - 1;
	d->comp[i] = (struct hs_competitor){ cg, bytes, grew };
	for (; i > 0 && d->comp[i].bytes > d->comp[i - 1].bytes; i--) {
		struct hs_competitor t = d->comp[i];

		d->comp[i] = d->comp[i - 1];
		d->comp[i - 1] = t;
	}
}

/*
 * The cgroups under where (the limited cgroup the job shares, or "/" for
 * the machine) that compete with the job: not the job's own cgroup, nor
 * one above or below it, largest first. By what grew during a run (each
 * one's own page cache and anonymous memory), else by what each holds
 * now, or, for one that no longer does (a heap that ran and ended), by
 * its peak when its cgroup is a leaf that kept it.
 */
static void competitors(facts *in, struct hs_diagnosis *d, const char *where, uint64_t least)
{
	const struct hs_memcg *m = dg_memcg_before(in);
	bool run = in->ran && in->ncg0 >= 0 && in->ncg1 >= 0;
	const struct hs_memcg_cache *now = run ? in->cg1 : in->cg0;
	ssize_t n = run ? in->ncg1 : in->ncg0;

	d->ncomp = 0;
	snprintf(d->comp_where, sizeof(d->comp_where), "%s", where);
	for (ssize_t i = 0; i < n; i++) {
		const struct hs_memcg_cache *c = &now[i];
		bool leaf = i + 1 == n || !within(c->name, now[i + 1].name) || !strcmp(c->name, "/");
		uint64_t by = c->file + c->anon;

		if (!strcmp(c->name, "/") || !within(where, c->name) || !strcmp(where, c->name))
			continue;
		if (m && (within(m->name, c->name) || within(c->name, m->name)))
			continue;
		if (run) {
			const struct hs_memcg_cache *b = cg_find(in->cg0, in->ncg0, c->name);

			by = dg_less(by, b ? b->file + b->anon : 0);
		} else if (leaf && c->peak_known && c->peak > by) {
			by = c->peak;
		}
		if (by >= least && by)
			add_competitor(d, c, by, run);
	}
}

/* One line a competitor: what it holds, of page cache and anonymous memory, and its peak. */
static void competitor_evidence(facts *in, const struct hs_diagnosis *d, struct hs_finding *f)
{
	const struct hs_memcg *m = dg_memcg_before(in);
	char a[16], b[16], c[16], p[32];

	for (int i = 0; i < d->ncomp; i++) {
		const struct hs_memcg_cache *x = d->comp[i].cg;

		if (x->peak_known)
			snprintf(p, sizeof(p), ", peak %s", dg_size_str(x->peak, c));
		else
			p[0] = '\0';
		dg_evidence(f, "%s: %s%s (page cache %s, anonymous %s%s%s)", x->name,
			    d->comp[i].grew ? "+" : "", dg_size_str(d->comp[i].bytes, a),
			    dg_size_str(x->file, b), dg_size_str(x->anon, c), p,
			    m && m->version == 1 ? "; memory.stat cache, rss" : "; memory.stat file, anon");
	}
}

/* Who else fills memory: the cause's competitors, or (no cause of theirs) the largest, for the record. */
void dg_find_others(facts *in, struct hs_diagnosis *d)
{
	const struct hs_memcg *m = dg_memcg_before(in);
	bool run = in->ran && in->ncg0 >= 0 && in->ncg1 >= 0;
	ssize_t nnow = run ? in->ncg1 : in->ncg0;
	struct hs_finding *f;
	uint64_t least;
	char a[16], b[16], c[16], lname[PATH_MAX];

	if (d->cause == HS_CAUSE_SHARED) {
		/* the cause: the level that filled, and who under it filled it */
		const struct hs_memcg_level *l = &m->level[d->cause_level];
		bool own = l->name_len == strlen(m->name) || !strcmp(m->name, "/");
		bool full_now = l->st.usage_known && dg_near_limit(l->limit, l->st.usage);
		uint64_t shown = full_now ? l->st.usage : l->st.peak_known ? l->st.peak : l->st.usage;

		hs_memcg_level_name(m, d->cause_level, lname, sizeof(lname));
		if (nnow >= 0)
			competitors(in, d, lname, 1);
		if (own)
			f = dg_finding(d, "other-activity", HS_SEV_PROBLEM, "Other processes in the job's "
				       "memory cgroup %s evicted its pages: the cgroup %s (%s of its %s "
				       "limit), though the job alone needs %s of it.", m->name, full_now ?
				       (in->ran ? "was full before the run" : "is full now") : "has been full",
				       dg_size_str(shown, a), dg_size_str(l->limit, b), dg_size_str(d->needed, c));
		else
			f = dg_finding(d, "other-activity", HS_SEV_PROBLEM, "Others under %s, whose memory "
				       "limit the job's cgroup %s shares, evicted its pages: %s %s (%s of its "
				       "%s limit), though the job alone needs %s of it%s%s.", lname, m->name,
				       lname, full_now ? (in->ran ? "was full before the run" : "is full now") :
				       "has been full", dg_size_str(shown, a), dg_size_str(l->limit, b),
				       dg_size_str(d->needed, c), d->ncomp ? "; the largest: " : "",
				       d->ncomp ? d->comp[0].cg->name : "");
		dg_figure_u(f, "limit_bytes", "bytes", true, l->limit);
		dg_figure_u(f, "usage_bytes", "bytes", l->st.usage_known, l->st.usage);
		dg_figure_u(f, "peak_bytes", "bytes", l->st.peak_known, l->st.peak);
		dg_figure_u(f, "limit_hits", "count", l->st.hits_known, l->st.hits);
		dg_figure_u(f, "memory_needed_bytes", "bytes", true, d->needed);
		if (l->st.usage_known)
			dg_evidence(f, "%s of %s = %llu%s", dg_usage_file(m), lname,
				    (unsigned long long)l->st.usage, in->ran ? ", before the run" : "");
		if (l->st.peak_known)
			dg_evidence(f, "%s of %s = %llu", dg_peak_file(m), lname, (unsigned long long)l->st.peak);
		if (l->st.hits_known)
			dg_evidence(f, "%s of %s = %llu", dg_hits_file(m), lname, (unsigned long long)l->st.hits);
		dg_evidence(f, "%s = %llu", l->limit_path, (unsigned long long)l->limit);
		if (l->st.file_known && l->st.anon_known)
			dg_evidence(f, "of it page cache %s, anonymous %s (memory.stat)",
				    dg_size_str(l->st.file, a), dg_size_str(l->st.anon, b));
		dg_evidence(f, "memory_needed_bytes = %llu", (unsigned long long)d->needed);
		competitor_evidence(in, d, f);
		if (nnow < 0)
			hs_diag_unseen(d, "the memory of each cgroup (memory.stat)", "%s",
				       strerror((int)-nnow));
		return;
	}
	if (nnow < 0) {
		hs_diag_unseen(d, "the memory of each cgroup (memory.stat)", "%s", strerror((int)-nnow));
		return;
	}
	/* below a tenth of what the job lost (or a MiB), nobody crowded it out */
	least = d->lost_pages * dg_page(in) / MEANINGFUL;
	if (least < (1u << 20))
		least = 1u << 20;
	competitors(in, d, "/", least);
	if (d->cause == HS_CAUSE_MACHINE)
		return;		/* dg_find_machine() names them */
	if (!d->ncomp)
		return;
	f = run ? dg_finding(d, "other-activity", HS_SEV_INFO, "Other cgroups grew during the run; the "
			     "largest: %s (+%s).", d->comp[0].cg->name, dg_size_str(d->comp[0].bytes, a))
		: dg_finding(d, "other-activity", HS_SEV_INFO, "The largest users of memory now, which "
			     "compete with the job for it: %s (%s).", d->comp[0].cg->name,
			     dg_size_str(d->comp[0].bytes, a));
	competitor_evidence(in, d, f);
}

struct hs_finding *dg_finding_of(struct hs_diagnosis *d, const char *id)
{
	for (int i = 0; i < d->nf; i++)
		if (!strcmp(d->f[i].id, id))
			return &d->f[i];
	return NULL;
}

/* The machine was short of memory: global reclaim took the pages, and who crowded it. */
void dg_find_machine(facts *in, struct hs_diagnosis *d)
{
	struct hs_finding *f;
	struct reclaim r;
	char a[16], b[16];

	if (d->cause != HS_CAUSE_MACHINE)
		return;
	/* MemAvailable too low has its finding already (find_memory): its evidence grows here */
	dg_count_reclaim(in, &r);
	if (!(f = dg_finding_of(d, "machine-memory"))) {
		if (in->mi_ok && in->mi.available < d->needed)
			f = dg_finding(d, "machine-memory", HS_SEV_PROBLEM, "The machine is short of memory: "
				       "%s available, less than the %s the job needs, and reclaim takes the "
				       "job's pages with the rest.", dg_size_str(in->mi.available, a),
				       dg_size_str(d->needed, b));
		else
			f = dg_finding(d, "machine-memory", HS_SEV_PROBLEM, "The machine ran short of memory "
				       "and reclaimed the job's pages with the rest: global reclaim (kswapd, "
				       "direct reclaim) took %llu pages %s%s%s%s.",
				       (unsigned long long)(in->ran && r.global_run ? r.global_run : r.global),
				       in->ran && r.global_run ? "during the run" : "since boot",
				       in->mi_ok ? ", though " : "", in->mi_ok ? dg_size_str(in->mi.available, a) : "",
				       in->mi_ok ? " is available now" : "");
		dg_figure_u(f, "global_reclaim_pages", "pages", r.global_known, r.global + r.global_run);
		dg_figure_u(f, "mem_available_bytes", "bytes", in->mi_ok, in->mi.available);
	}
	if (r.global_known)
		dg_evidence(f, "pgsteal_kswapd + pgsteal_direct = %llu%s, %s (/proc/vmstat: global reclaim "
			    "only, not a cgroup's limit)", (unsigned long long)r.global,
			    in->ran ? " before the run" : "", in->ran ? "" : "since boot");
	if (in->ran && r.global_known)
		dg_evidence(f, "during the run: +%llu", (unsigned long long)r.global_run);
	if (r.damon && r.damon_known)
		dg_evidence(f, "DAMON paged out %llu pages since it started: %s", (unsigned long long)r.damon_pages,
			    r.global > r.damon_pages ? "less than global reclaim" : "not during the run");
	dg_evidence(f, "pages the job lost = %llu", (unsigned long long)d->lost_pages);
	if (d->ncomp) {
		dg_evidence(f, "the largest users of memory%s: %s (%s%s)", d->comp[0].grew ?
			    ", by growth during the run" : "", d->comp[0].cg->name,
			    d->comp[0].grew ? "+" : "", dg_size_str(d->comp[0].bytes, b));
		competitor_evidence(in, d, f);
	}
}

/*
 * The reclaimers that work whatever the pressure: DAMON's schemes (each
 * with its minimum age and what it paged out, a problem only when it is
 * the cause), a balloon, a memory.reclaim file anyone may write to. They
 * are listed when the job lost pages, so that one that did not take them
 * is seen to have been looked at, and said not to be the cause.
 */
void dg_find_reclaimers(facts *in, struct hs_diagnosis *d)
{
	const struct hs_memcg *m = dg_memcg_before(in);
	struct hs_finding *f;
	char n[32], kd[128];

	for (int i = 0; i < in->ndamon; i++) {
		const struct hs_damon_scheme *s = &in->damon0[i];
		bool cause = s->on && d->cause == HS_CAUSE_DAMON;
		const char *end;
		struct hs_fix *x;

		if (!dg_reclaims(s->action))
			continue;
		if (!s->age_known) {
			f = dg_finding(d, "damon", cause ? HS_SEV_PROBLEM : HS_SEV_INFO, "A DAMON scheme (%s) "
				       "reclaims with action %s; its minimum age could not be read.", s->path,
				       s->action);
			dg_evidence(f, "%s/action = %s", s->path, s->action);
			continue;
		}
		f = dg_finding(d, "damon", cause ? HS_SEV_PROBLEM : HS_SEV_INFO, "A DAMON scheme %s memory "
			       "idle for %.0f s or more (action %s)%s", s->on ? "pages out" :
			       "would page out", s->min_age_s, s->action, !s->on ?
			       ", but its kdamond is off." : cause ? ": it took the job's pages, "
			       "reclaimed while memory was to spare, and it takes them whenever they sit "
			       "idle that long between runs." : s->stats_known && !s->sz_applied ?
			       ": it has paged out nothing since it started." : d->lost_pages &&
			       d->cause != HS_CAUSE_NONE ? ": the figures do not show it took the job's "
			       "pages." : ": a job whose pages sit idle longer between runs loses them to it.");
		dg_figure_d(f, "min_age_seconds", "seconds", true, s->min_age_s);
		dg_figure_u(f, "applied_bytes", "bytes", s->stats_known, s->sz_applied);
		dg_evidence(f, "%s/action = %s", s->path, s->action);
		dg_evidence(f, "%s = %.0f aggregation intervals of %llu us = %.0f s", s->min_age_path,
			    s->min_age_s * 1e6 / (double)s->aggr_us, (unsigned long long)s->aggr_us,
			    s->min_age_s);
		if (s->stats_known)
			dg_evidence(f, "%s/stats/sz_applied = %llu: bytes paged out since its kdamond "
				    "started", s->path, (unsigned long long)s->sz_applied);
		if (!s->on)
			continue;
		if (cause && in->mi_ok)
			dg_evidence(f, "nothing else reclaimed: MemAvailable = %llu and the job's cgroup "
				    "had room, for the %llu bytes the job needs",
				    (unsigned long long)in->mi.available, (unsigned long long)d->needed);
		if (!cause)
			continue;
		/* the kdamond's state file takes "commit" to apply a changed scheme */
		end = strstr(s->path, "/contexts/");
		snprintf(kd, sizeof(kd), "%.*s/state", end ? (int)(end - s->path) : 0, s->path);
		snprintf(n, sizeof(n), "%llu", (unsigned long long)ceil(600e6 / (double)s->aggr_us));
		x = dg_fix_begin(d, "Raise the DAMON scheme's minimum age above the time between the job's "
				 "runs (600 s here, say), so that it stops paging the job's files out.");
		dg_step(x, s->min_age_path, "echo", n, (char *)NULL);
		dg_step(x, kd, "echo", "commit", (char *)NULL);
		dg_fix_end(d, x);
	}
	if (in->balloon > 0) {
		f = dg_finding(d, "balloon", HS_SEV_INFO, "A memory balloon driver is present: the host can "
			       "take memory back from this VM, and the page cache shrinks when it does.");
		dg_evidence(f, "virtio_balloon: %s", in->balloon_where ? in->balloon_where : "");
	}
	if (m && m->reclaim_file) {
		f = dg_finding(d, "memory-reclaim", HS_SEV_INFO, "%s has memory.reclaim: a process writing "
			       "to it (a proactive reclaimer such as senpai) reclaims without leaving "
			       "a trace hotset can see.", m->name);
		dg_evidence(f, "%s/memory.reclaim exists", m->dir);
	}
}

/*
 * dentry and inode reclaim: vm.vfs_cache_pressure's part. Page cache freed
 * with inodes is a cause only when it is a meaningful share of what the
 * job lost: one stolen page is not.
 */
void dg_find_vfs_cache(facts *in, struct hs_diagnosis *d)
{
	struct hs_finding *f;
	uint64_t steal, scanned;
	const char *when = in->ran ? "during the run" : "since boot";

	if (!in->vm_ok)
		return;
	steal = in->ran ? dg_less(in->vm1.inodesteal, in->vm0.inodesteal) : in->vm0.inodesteal;
	scanned = in->ran ? dg_less(in->vm1.slabs_scanned, in->vm0.slabs_scanned) : in->vm0.slabs_scanned;
	if (d->lost_pages && dg_meaningful(d, steal))
		f = dg_finding(d, "vfs-cache", HS_SEV_INFO, "Reclaiming inodes freed %llu page%s of page "
			       "cache %s, %.0f%% of the %llu the job lost: vm.vfs_cache_pressure plays a "
			       "part.", (unsigned long long)steal, dg_plural(steal), when,
			       100.0 * (double)steal / (double)d->lost_pages,
			       (unsigned long long)d->lost_pages);
	else if (steal)
		f = dg_finding(d, "vfs-cache", HS_SEV_INFO, "Reclaiming inodes freed %llu page%s of page "
			       "cache %s, too few against the %llu the job lost to matter: tuning "
			       "vm.vfs_cache_pressure cannot help.", (unsigned long long)steal,
			       dg_plural(steal), when, (unsigned long long)d->lost_pages);
	else
		f = dg_finding(d, "vfs-cache", HS_SEV_INFO, "Reclaiming inodes freed no page cache %s: "
			       "tuning vm.vfs_cache_pressure cannot help.", when);
	dg_figure_u(f, "inode_steal_pages", "pages", true, steal);
	dg_figure_u(f, "lost_pages", "pages", true, d->lost_pages);
	dg_evidence(f, "pginodesteal + kswapd_inodesteal: %s%llu (/proc/vmstat)", in->ran ? "+" : "",
		    (unsigned long long)steal);
	dg_evidence(f, "slabs_scanned: %s%llu", in->ran ? "+" : "", (unsigned long long)scanned);
	dg_evidence(f, "pages the job lost to reclaim: %llu (%s)", (unsigned long long)d->lost_pages,
		    in->ran ? "its refaults" : "the profile's evicted pages");
}

/* The pages the run read back after reclaim took them before it. */
void dg_find_lost(facts *in, struct hs_diagnosis *d)
{
	const struct hs_usage *u = in->run;
	const struct hs_memcg *m0 = dg_memcg_before(in), *m = dg_memcg_now(in);
	struct hs_finding *f;
	char a[16];
	static const char *const by[] = {
		[HS_CAUSE_SHARED] = "by other processes under its memory limit, which was full",
		[HS_CAUSE_MACHINE] = "by reclaim, the machine being short of memory",
		/* NOLINTNEXTLINE(bugprone-suspicious-missing-comma): one sentence, cut for its length */
		[HS_CAUSE_DAMON] = "while its cgroup had room and the machine memory to spare: by a "
				   "proactive reclaimer (DAMON)",
		[HS_CAUSE_UNKNOWN] = "by reclaim; which reclaimer, the figures do not tell",
	};

	/* the limit's own finding says what it evicts; a cold start lost nothing */
	if (!in->ran || d->cause == HS_CAUSE_NONE || d->cause == HS_CAUSE_LIMIT)
		return;
	f = dg_finding(d, "evicted-before-run", HS_SEV_PROBLEM, "%s of what the job read from the disk "
		       "(%.0f%%) had been in the page cache and was evicted before the run, %s.",
		       dg_size_str(d->refaulted * dg_page(in), a),
		       100.0 * (double)(d->refaulted * dg_page(in)) / (double)u->read_bytes_disk, by[d->cause]);
	dg_figure_u(f, "refaulted_pages", "pages", true, d->refaulted);
	dg_figure_u(f, "disk_read_bytes", "bytes", true, u->read_bytes_disk);
	if (d->refaults_known)
		dg_evidence(f, "workingset_refault_file of %s: +%llu pages (memory.stat)", m->name,
			    (unsigned long long)d->refaulted);
	else
		dg_evidence(f, "workingset_refault_file: +%llu pages (/proc/vmstat: the whole machine)",
			    (unsigned long long)d->refaulted);
	dg_evidence(f, "disk_read_bytes = %llu", (unsigned long long)u->read_bytes_disk);
	if (m0 && m0->st.usage_known)
		dg_evidence(f, "%s before the run: %llu used of %s", m0->name,
			    (unsigned long long)m0->st.usage, m0->lowest >= 0 ?
			    dg_size_str(m0->limit, a) : "no limit");
	if (in->mi_ok)
		dg_evidence(f, "MemAvailable before the run = %llu", (unsigned long long)in->mi.available);
}

/* ---- fixes ----------------------------------------------------------------------- */

/* keep where the job's pages are taken from under it, by others or a reclaimer */
void dg_recommend_keep(facts *in, struct hs_diagnosis *d)
{
	const struct hs_memcg *m = dg_memcg_before(in);
	char sz[32], lname[PATH_MAX], a[16];
	struct hs_fix *x;

	/*
	 * keep's budget is the page cache the re-run reads (not its writes
	 * or RSS): what keep holds. The keeper must run where the job's pages
	 * are charged, or its reads would be charged elsewhere and the others
	 * would still evict the job's.
	 */
	if (!in->have_keep || (d->cause != HS_CAUSE_SHARED && d->cause != HS_CAUSE_DAMON))
		return;
	dg_size_arg(d->need.read, sz, sizeof(sz));
	if (d->cause == HS_CAUSE_DAMON) {
		x = dg_fix_begin(d, "Keep the working set resident: hotset keep reads back what the "
				 "reclaimer pages out, at most --interval later (10 s by default).");
		dg_step(x, NULL, "hotset", "keep", "--budget", sz, in->profile, (char *)NULL);
		dg_fix_end(d, x);
		return;
	}
	hs_memcg_level_name(m, d->cause_level, lname, sizeof(lname));
	x = dg_fix_begin(d, "Keep the working set resident in %s while the others run: hotset keep "
			 "reads back what they evict. Run it in that cgroup, where the job's pages are "
			 "charged.", m->name);
	dg_step(x, NULL, "hotset", "keep", "--budget", sz, in->profile, (char *)NULL);
	dg_fix_end(d, x);
	dg_size_arg(m->level[d->cause_level].limit + d->needed, sz, sizeof(sz));
	x = dg_fix_begin(d, "Or make room in %s for both: raise its limit by the job's %s (or run the "
			 "others in a memory cgroup of their own).", lname, dg_size_str(d->needed, a));
	dg_step(x, m->level[d->cause_level].limit_path, "echo", sz, (char *)NULL);
	dg_fix_end(d, x);
}

/*
 * The fixes for pages that are not there: warm them before the job, keep
 * their tree across reboots (the directory that holds most of them, as
 * its systemd unit, only for an absolute path that makes a unit name),
 * keep them resident where this hotset has keep and nobody takes them.
 */
void dg_recommend_warm(facts *in, struct hs_diagnosis *d)
{
	bool keep = in->have_keep && d->cause != HS_CAUSE_SHARED && d->cause != HS_CAUSE_DAMON;
	char sz[32], unit[512], esc[400];
	struct hs_fix *x;

	x = dg_fix_begin(d, "Read the working set into the page cache before the job runs (at login, "
			 "or from a timer).");
	dg_step(x, NULL, "hotset", "warm", "-p", in->profile, (char *)NULL);
	dg_fix_end(d, x);
	/*
	 * The directories that hold the working set, a unit each: the
	 * directory escaped as systemd does (never through a shell), and only
	 * an absolute path that makes a unit name.
	 */
	if (in->tops && in->tops->ncover) {
		const struct hs_tops *t = in->tops;
		const char *one = NULL;
		uint64_t pages = 0;
		size_t n = 0;

		x = dg_fix_begin(d, "-");
		dg_step(x, NULL, "systemctl", "enable", "--now", (char *)NULL);
		for (size_t k = 0; k < t->ncover; k++) {
			if (hs_systemd_escape_path(t->cover[k].name, esc, sizeof(esc)) ||
			    (size_t)snprintf(unit, sizeof(unit), "hotset-persist@%s.service", esc) > 255)
				continue;
			dg_step_word(x, unit);
			one = t->cover[k].name;
			pages += t->cover[k].pages;
			n++;
		}
		if (n == 1)
			snprintf(x->text, sizeof(x->text), "Keep %s cached across reboots: "
				 "hotset-persist@.service snapshots it at shutdown and warms it at boot "
				 "(hotset(1), KEEPING THE CACHE ACROSS REBOOTS).", one);
		else
			snprintf(x->text, sizeof(x->text), "Keep the %zu directories that hold %.0f%% of "
				 "the working set cached across reboots: hotset-persist@.service "
				 "snapshots each at shutdown and warms it at boot (hotset(1), KEEPING THE "
				 "CACHE ACROSS REBOOTS).", n, 100.0 * pages / in->pages);
		if (n)
			dg_fix_end(d, x);
	}
	/* keep comes in its own time: offer it only where this hotset has it */
	if (keep) {
		dg_size_arg(d->need.read, sz, sizeof(sz));
		x = dg_fix_begin(d, "Keep the working set resident as the job's memory needs it.");
		dg_step(x, NULL, "hotset", "keep", "--budget", sz, in->profile, (char *)NULL);
		dg_fix_end(d, x);
	}
}

/* ---- the peer it waited on ---------------------------------------------------- */

/* Who is at the other end, in words: what the caller may know of it, no more. */
static void peer_words(const struct hs_peer *p, char *out, size_t size)
{
	switch (p->where) {
	case HS_PEER_PROCESS:
		snprintf(out, size, "%s (pid %d%s%s)", p->name, (int)p->pid,
			 p->cgroup[0] ? ", cgroup " : "", p->cgroup);
		break;
	case HS_PEER_HIDDEN:
		if (p->uid_known)
			snprintf(out, size, "a process of uid %u that this user cannot see",
				 (unsigned)p->uid);
		else
			snprintf(out, size, "a process this user cannot see");
		break;
	case HS_PEER_GONE:
		snprintf(out, size, "a process of this machine that could not be found");
		break;
	case HS_PEER_REMOTE:
		snprintf(out, size, "another host");
		break;
	}
}

/*
 * A client waits on its server: the time the run was neither on a CPU nor
 * waiting on its disk, and the process at the other end of the socket it
 * held (hs_peer_waited(): the rule `time` applies). The page cache of the
 * job is not where its time went; the fix measures the peer while the job
 * runs again, a command whose words must all fit (else it is not offered).
 */
void dg_find_peer(facts *in, struct hs_diagnosis *d)
{
	const struct hs_peer *p;
	struct hs_waited_on w;
	struct hs_finding *f;
	struct hs_fix *x;
	const char *opt, *arg;
	char who[PATH_MAX + 64], pid[16];

	if (!in->ran || !hs_peer_waited(in->run, in->peers, &w))
		return;
	p = w.peer;
	peer_words(p, who, sizeof(who));
	f = dg_finding(d, "waited-on-peer", HS_SEV_PROBLEM, "The job spent %.0f%% of its wall time "
		       "(%.2f s) %s, holding a socket to %s: the work it waits for is done there.",
		       100 * w.share, w.seconds, w.io_wait_known ? "neither on a CPU nor waiting on "
		       "its disk" : "off a CPU (its I/O wait is unknown)", who);
	dg_figure_d(f, "waited_seconds", "seconds", true, w.seconds);
	dg_figure_d(f, "waited_fraction", "share", true, w.share);
	dg_figure_u(f, "peer_pid", "count", p->where == HS_PEER_PROCESS, (uint64_t)p->pid);
	dg_figure_d(f, "peer_held_seconds", "seconds", true, p->held_s);
	dg_evidence(f, "wall_seconds = %.3f, user_seconds = %.3f, sys_seconds = %.3f",
		    in->run->wall_s, in->run->user_s, in->run->sys_s);
	if (w.io_wait_known)
		dg_evidence(f, "io_wait_seconds = %.3f", in->run->io_wait_s);
	dg_evidence(f, "%s socket %s%s%s, held %.1f s%s", p->transport == HS_PEER_UNIX ? "unix" :
		    "TCP", p->address[0] ? p->address : "(unnamed)", p->local[0] ? " from " : "",
		    p->local, p->held_s, p->uid_known ? "" : "; its owner unknown");
	if (p->uid_known)
		dg_evidence(f, "the other end's socket belongs to uid %u", (unsigned)p->uid);
	if (!in->argv || !hs_peer_measure(p, pid, &opt, &arg))
		return;
	x = dg_fix_begin(d, "Diagnose %s while the job runs again: what it reads, its I/O wait and "
			 "its memory cgroup are where the job's time goes (recording it needs root; "
			 "hotset time %s %s measures it without).", who, opt, arg);
	dg_step(x, NULL, "hotset", "doctor", opt, arg, "--", (char *)NULL);
	for (char *const *a = in->argv; *a; a++)
		dg_step_word(x, *a);
	dg_fix_end(d, x);
}
