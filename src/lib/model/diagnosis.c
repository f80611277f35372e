/*
 * diagnosis.c - why a job waits for the disk (diagnosis.h): from the facts
 * of a run, or of a profile and the machine now, to findings, one cause,
 * and fixes.
 *
 * The order of the findings is the order a person reads them in: first
 * what could not be seen (a conclusion drawn from a part must say which
 * part), then where the job's memory was looked at, then the run, the
 * memory it needs against what it has, where its files are, what of them
 * is cached, and, when pages were lost, who took them.
 *
 * Only one finding names the cause, and only it and what it rests on call
 * for a fix. The causes, in the order they are tried:
 *
 *   1. a memory limit over the job (its cgroup's, or a parent's, which
 *      the children share) below what a warm re-run needs;
 *   2. when the job's pages were lost to reclaim (a run that read back a
 *      tenth of its reads from pages evicted before it; a profile with a
 *      page in a hundred evicted, as cachestat counts them):
 *      - others under a limited cgroup over the job that is full or has
 *        been (now or at its peak within a tenth of its limit, or the
 *        kernel counted it reaching it) though the job alone fits;
 *      - the machine, when MemAvailable is below what the job needs, or
 *        global reclaim (kswapd, direct) took a tenth of what the job lost
 *        and more than DAMON ever paged out;
 *      - DAMON's pageout, when it paged out a tenth of what the job lost;
 *      - else unknown.
 *
 * Each reclaimer is named only when its own counters show it took at
 * least a tenth of what the job lost: a page stolen with an inode is not
 * a cause, nor is a DAMON scheme that paged nothing out.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/diagnosis-impl.h"

static const char *const cause_ids[] = {
	[HS_CAUSE_NONE] = NULL, [HS_CAUSE_LIMIT] = "memory-limit",
	[HS_CAUSE_SHARED] = "other-activity", [HS_CAUSE_MACHINE] = "machine-memory",
	[HS_CAUSE_DAMON] = "damon", [HS_CAUSE_UNKNOWN] = "unknown",
};

const char *hs_cause_id(enum hs_cause c)
{
	return (unsigned)c < sizeof(cause_ids) / sizeof(cause_ids[0]) ? cause_ids[c] : NULL;
}

const char *hs_severity_name(enum hs_severity s)
{
	return s == HS_SEV_PROBLEM ? "problem" : s == HS_SEV_UNSEEN ? "unseen" : "info";
}

const char *hs_cgroup_source_name(enum hs_cgroup_source s)
{
	static const char *const names[] = {
		[HS_CG_RUN] = "run", [HS_CG_PROFILE] = "profile", [HS_CG_OPTION] = "option",
		[HS_CG_OWN] = "own", [HS_CG_SERVICE] = "service",
	};

	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "own";
}
/* ---- the facts, as the findings ask for them ---------------------------------------- */

uint64_t dg_page(facts *in)
{
	return in->page_size;
}

/*
 * The cgroup before the run (or now, with -p), and as the run left it:
 * NULL if it could not be read. Its fill is judged before the run (what
 * was there when the job's pages went), its limit after (what a re-run
 * will meet).
 */
const struct hs_memcg *dg_memcg_before(facts *in)
{
	return in->memcg_rc ? NULL : in->memcg0;
}

const struct hs_memcg *dg_memcg_now(facts *in)
{
	return in->memcg_rc ? NULL : in->memcg1 ? in->memcg1 : in->memcg0;
}

static bool io_known(facts *in)
{
	return in->ran && in->run->pressure != HS_PRESSURE_UNKNOWN && in->run->wall_s > 0;
}

static double io_fraction(facts *in)
{
	return in->run->io_wait_s / in->run->wall_s;
}

static bool io_bound(facts *in)
{
	return io_known(in) && io_fraction(in) >= IO_BOUND && in->run->io_known &&
	       in->run->read_bytes_disk > 0;
}

static const struct hs_cache_counts *known(facts *in)
{
	return &in->res->known;
}

static uint64_t resident_pages(facts *in)
{
	return known(in)->cached;
}

/* Resident but for a page in a hundred: a few pages dropped do not make a job wait. */
static bool all_resident(facts *in)
{
	const struct hs_cache_counts *k = known(in);

	return !k->pages || resident_pages(in) >= k->pages - k->pages / 100;
}

static bool evicted_known(facts *in)
{
	return in->res->method == HS_RES_CACHESTAT;
}

/* Evicted since last read: a page in a hundred or more. */
static bool many_evicted(facts *in)
{
	const struct hs_cache_counts *k = known(in);

	return evicted_known(in) && k->evicted && k->evicted >= k->pages / 100;
}

/* Within a tenth of the limit: the kernel starts reclaiming before it is reached. */
bool dg_near_limit(uint64_t limit, uint64_t v)
{
	return v >= limit - limit / NEAR;
}

/*
 * A limited cgroup is full when it is used to within a tenth of its limit
 * now or at its peak (a competitor that filled it and left leaves its
 * peak), or when the kernel counted it reaching its limit: what it
 * charged was then reclaimed to make room.
 */
static bool level_full(const struct hs_memcg_level *l)
{
	return (l->st.usage_known && dg_near_limit(l->limit, l->st.usage)) ||
	       (l->st.peak_known && dg_near_limit(l->limit, l->st.peak)) ||
	       (l->st.hits_known && l->st.hits > 0);
}

/* Its fill: the larger of its use and its peak, over its limit. */
static double level_fill(const struct hs_memcg_level *l)
{
	uint64_t v = l->st.usage_known ? l->st.usage : 0;

	if (l->st.peak_known && l->st.peak > v)
		v = l->st.peak;
	return l->limit ? (double)v / (double)l->limit : 0;
}

const char *dg_usage_file(const struct hs_memcg *m)
{
	return m->version == 1 ? "memory.usage_in_bytes" : "memory.current";
}

const char *dg_peak_file(const struct hs_memcg *m)
{
	return m->version == 1 ? "memory.max_usage_in_bytes" : "memory.peak";
}

const char *dg_hits_file(const struct hs_memcg *m)
{
	return m->version == 1 ? "memory.failcnt" : "memory.events max";
}

/* DAMON actions that take pages from the page cache (stat, hugepage and the like do not). */
bool dg_reclaims(const char *action)
{
	return !strcmp(action, "pageout") || !strcmp(action, "lru_deprio") ||
	       !strcmp(action, "cold");
}

/* ---- who reclaimed ------------------------------------------------------------------- */

void dg_count_reclaim(facts *in, struct reclaim *r)
{
	/*
	 * Before a run the counters are since boot; the run's share is the
	 * difference after it. DAMON counts bytes, global reclaim pages.
	 */
	memset(r, 0, sizeof(*r));
	if (in->vm_ok && in->vm0.global_known) {
		r->global_known = true;
		r->global = in->vm0.steal_kswapd + in->vm0.steal_direct;
		if (in->ran && in->vm1.global_known)
			r->global_run = dg_less(in->vm1.steal_kswapd + in->vm1.steal_direct, r->global);
	}
	r->damon_known = true;
	for (int i = 0; i < in->ndamon; i++) {
		const struct hs_damon_scheme *s = &in->damon0[i];

		if (!s->on || !dg_reclaims(s->action))
			continue;
		r->damon = true;
		if (!s->stats_known) {
			r->damon_known = false;
			continue;
		}
		r->damon_pages += s->sz_applied / dg_page(in);
		if (in->ran && in->damon1 && in->damon1[i].stats_known)
			r->damon_run += dg_less(in->damon1[i].sz_applied, s->sz_applied) / dg_page(in);
	}
	if (!r->damon)
		r->damon_known = false;
}

/*
 * Did a reclaimer's figure v take a meaningful share of what the job lost?
 * A reclaimer that took less than a tenth of it cannot be what took it,
 * whatever else it did; with nothing known lost, any take counts.
 */
bool dg_meaningful(const struct hs_diagnosis *d, uint64_t v)
{
	return v > 0 && v >= d->lost_pages / MEANINGFUL;
}

/*
 * The refaults of the job's memory cgroup during the run: pages it read
 * back from the disk that reclaim had evicted not long before (their
 * shadow entries remember them). Machine-wide when the cgroup's are not
 * counted.
 */
static void count_refaults(facts *in, struct hs_diagnosis *d)
{
	const struct hs_memcg *a = dg_memcg_before(in), *b = dg_memcg_now(in);

	if (!in->ran)
		return;
	if (a && b && a->st.refault_known && b->st.refault_known && !strcmp(a->dir, b->dir)) {
		d->refaults_known = true;
		d->refaulted = dg_less(b->st.refault_file, a->st.refault_file);
	} else if (in->vm_ok && in->vm1.refault_known) {
		d->refaulted = dg_less(in->vm1.refault_file, in->vm0.refault_file);
	}
}

/*
 * The limited level over the job at fault when others fill it: one whose
 * limit fits the job alone (else the limit is the cause) and that is or
 * was full; of several, the fullest, where reclaim ran hardest.
 */
static int shared_level(facts *in, const struct hs_diagnosis *d)
{
	const struct hs_memcg *m = dg_memcg_before(in);
	int best = -1;

	for (int i = 0; m && i < m->nlevels; i++) {
		const struct hs_memcg_level *l = &m->level[i];

		if (l->limit < d->needed || !level_full(l))
			continue;
		if (best < 0 || level_fill(l) > level_fill(&m->level[best]))
			best = i;
	}
	return best;
}

/*
 * The lowest limit over the job: the cgroup's now, or, when the cgroup is
 * gone (a server's, removed with it), the one the profile recorded: a
 * limit below the need is the cause whether or not its cgroup is still
 * there to read.
 */
static bool lowest_limit(facts *in, uint64_t *limit)
{
	const struct hs_memcg *m = dg_memcg_before(in);

	if (m && m->lowest >= 0) {
		*limit = m->limit;
		return true;
	}
	if (!m && in->rec_limit_known && in->rec_limit != UINT64_MAX) {
		*limit = in->rec_limit;
		return true;
	}
	return false;
}

/* Name the cause, in the order of the file's comment; the findings follow it. */
static void find_cause(facts *in, struct hs_diagnosis *d)
{
	struct reclaim r;
	uint64_t limit;
	bool lost, g, dm;

	d->cause_level = -1;
	count_refaults(in, d);
	d->lost_pages = in->ran ? d->refaulted : evicted_known(in) ? known(in)->evicted : 0;
	if (lowest_limit(in, &limit) && limit < d->needed) {
		d->cause = HS_CAUSE_LIMIT;
		d->cause_level = dg_memcg_before(in) ? dg_memcg_before(in)->lowest : -1;
		return;
	}
	lost = in->ran ? io_bound(in) && d->refaulted * dg_page(in) >= REFAULTED * in->run->read_bytes_disk
		       : many_evicted(in);
	/*
	 * Pages gone from a cgroup that filled count as lost there even when
	 * cachestat counts no eviction: under a small cgroup's pressure the
	 * kernel also reclaims the shadow entries that would have told.
	 */
	if ((lost || (!in->ran && !all_resident(in))) && (d->cause_level = shared_level(in, d)) >= 0) {
		if (!lost)
			d->lost_pages = known(in)->pages - resident_pages(in);
		d->cause = HS_CAUSE_SHARED;
		return;
	}
	if (!lost) {
		d->cause = HS_CAUSE_NONE;
		return;
	}
	if (in->mi_ok && in->mi.available < d->needed) {
		d->cause = HS_CAUSE_MACHINE;
		return;
	}
	/* no cgroup of the job's filled: the machine, or a reclaimer that works with memory to spare */
	dg_count_reclaim(in, &r);
	/* reclaim while the job ran says who reclaimed then */
	if (in->ran && r.global_run && !r.damon_run) {
		d->cause = HS_CAUSE_MACHINE;
		return;
	}
	if (in->ran && r.damon_run && !r.global_run) {
		d->cause = HS_CAUSE_DAMON;
		return;
	}
	/* else what each took since boot (or since DAMON started), against what the job lost */
	g = r.global_known && dg_meaningful(d, r.global);
	dm = r.damon && (r.damon_known ? dg_meaningful(d, r.damon_pages) : true);
	if (g && dm)
		d->cause = !r.damon_known ? HS_CAUSE_UNKNOWN :
			   r.global > r.damon_pages ? HS_CAUSE_MACHINE : HS_CAUSE_DAMON;
	else if (g)
		d->cause = HS_CAUSE_MACHINE;
	else if (dm)
		d->cause = HS_CAUSE_DAMON;
	else
		d->cause = HS_CAUSE_UNKNOWN;
}

/* ---- findings --------------------------------------------------------------------------- */

/*
 * What of the working set could not be seen: pages whose residency the
 * kernel would not tell (files the caller may not write), and pages of
 * files gone, changed or not examined. Said first, with the share.
 */
static void find_unseen(facts *in, struct hs_diagnosis *d)
{
	const struct hs_residency_total *res = in->res;
	uint64_t counted = hs_residency_total_pages(res), unseen;
	struct hs_finding *f;
	char a[16], b[16];

	/*
	 * The profile's pages that residency did not count are in files that
	 * could not be examined: gone (deleted, renamed), unreadable, or
	 * shorter than when recorded. They are not resident, and not known
	 * to be evicted either: missing, apart from the unknown.
	 */
	d->unknown_pages = res->unknown_pages;
	d->missing_pages = dg_less(in->pages, counted);
	unseen = d->unknown_pages + d->missing_pages;
	d->seen_share = in->pages ? (double)(in->pages - unseen) / (double)in->pages : 1;
	d->seen_enough = unseen <= in->pages / 100 && !(in->pages && unseen == in->pages);
	if (res->unknown_files)
		hs_diag_unseen(d, "residency", "of %llu file%s of the profile: the kernel tells it only "
			       "to who may write a file (its owner, or root)",
			       (unsigned long long)res->unknown_files, dg_plural(res->unknown_files));
	if (res->known.pages && !evicted_known(in))
		hs_diag_unseen(d, "evicted pages", "cachestat(2) is missing (Linux 6.5 and later have "
			       "it): which pages were evicted since they were read is unknown");
	if (!unseen)
		return;
	f = dg_finding(d, "unseen", HS_SEV_UNSEEN, "%.0f%% of the working set could not be seen (%s of "
		       "its %s): %s; %s.", 100.0 * (double)unseen / (double)in->pages,
		       dg_size_str(unseen * dg_page(in), a), dg_size_str(in->pages * dg_page(in), b),
		       !d->missing_pages ? "the kernel tells a file's residency only to who may write it "
		       "(its owner, or root)" : !d->unknown_pages ? "its files are gone, changed or "
		       "unreadable since the profile was made" : "some files' residency the kernel tells "
		       "only to who may write them, others are gone, changed or unreadable",
		       d->seen_enough ? "too little to change what follows" : unseen == in->pages ?
		       "nothing below rests on the working set's residency" : "what follows rests on "
		       "the rest alone, and cannot tell that there is nothing to fix");
	dg_figure_u(f, "unknown_pages", "pages", true, d->unknown_pages);
	dg_figure_u(f, "missing_pages", "pages", true, d->missing_pages);
	dg_figure_d(f, "seen_fraction", "share", true, d->seen_share);
	if (d->unknown_pages)
		dg_evidence(f, "%llu page%s in %llu file%s: residency unknown (no write permission: run "
			    "as root, or as the files' owner)", (unsigned long long)d->unknown_pages,
			    dg_plural(d->unknown_pages), (unsigned long long)res->unknown_files,
			    dg_plural(res->unknown_files));
	if (d->missing_pages)
		dg_evidence(f, "%llu page%s not examined: %llu of the profile's %llu file%s%s",
			    (unsigned long long)d->missing_pages, dg_plural(d->missing_pages),
			    (unsigned long long)dg_less(in->files, res->files),
			    (unsigned long long)in->files, dg_plural(in->files),
			    in->files > res->files ? " are gone or could not be opened" :
			    ": files shorter than when they were recorded");
	dg_evidence(f, "pages seen = %llu of %llu", (unsigned long long)(in->pages - unseen),
		    (unsigned long long)in->pages);
}

/* Which memory cgroup was looked at, and why that one. */
static void find_cgroup(facts *in, struct hs_diagnosis *d)
{
	const struct hs_memcg *m = dg_memcg_before(in);
	static const char *const why[] = {
		[HS_CG_RUN] = "the job ran in it, and was charged there",
		[HS_CG_PROFILE] = "the profile recorded it: the job was charged there",
		[HS_CG_OPTION] = "as --cgroup asked",
		[HS_CG_SERVICE] = "the service's: it did the job's reading, and was charged there",
		/* NOLINTNEXTLINE(bugprone-suspicious-missing-comma): one sentence, cut for its length */
		[HS_CG_OWN] = "doctor's own: the profile does not say where the job ran (recorded "
			      "before hotset wrote it, or a snapshot); give --cgroup to diagnose the job's",
	};
	struct hs_finding *f;

	/* none: the findings on limits and competitors are not made, and that is said here */
	if (!m) {
		if (in->cg_source == HS_CG_PROFILE && in->rec_cgroup)
			f = dg_finding(d, "cgroup", HS_SEV_UNSEEN, "The job's memory cgroup %s (cgroup v%d), "
				       "recorded in the profile, could not be read: %s.", in->rec_cgroup,
				       in->rec_version, in->memcg_rc == -ENOENT ? "it is not on this "
				       "machine now" : strerror(-in->memcg_rc));
		else
			f = dg_finding(d, "cgroup", HS_SEV_UNSEEN, "No memory cgroup could be read (%s).",
				       in->memcg_rc == -ENOENT ? "no memory controller is mounted" :
				       strerror(-in->memcg_rc));
		if (in->rec_cgroup && in->rec_limit_known && in->rec_limit == UINT64_MAX)
			dg_evidence(f, "memory-limit when recorded: none");
		else if (in->rec_cgroup && in->rec_limit_known)
			dg_evidence(f, "memory-limit when recorded: %llu, of %s", (unsigned long long)in->rec_limit,
				    in->rec_limit_holder ? in->rec_limit_holder : in->rec_cgroup);
		return;
	}
	f = dg_finding(d, "cgroup", HS_SEV_INFO, "Memory looked at in the cgroup %s (cgroup v%d): %s.",
		       m->name, m->version, why[in->cg_source]);
	dg_evidence(f, "%s", m->dir);
	if (in->cg_source == HS_CG_PROFILE && in->rec_limit_known) {
		if (in->rec_limit == UINT64_MAX)
			dg_evidence(f, "memory-limit when recorded: none");
		else
			dg_evidence(f, "memory-limit when recorded: %llu, of %s", (unsigned long long)in->rec_limit,
				    in->rec_limit_holder ? in->rec_limit_holder : m->name);
	}
	if (in->cg_source != HS_CG_PROFILE && in->rec_cgroup && strcmp(in->rec_cgroup, m->name))
		dg_evidence(f, "the profile recorded %s", in->rec_cgroup);
}

/* The run's wait on I/O, from the PSI of its own cgroup; unknown is said, never guessed. */
static void find_io(facts *in, struct hs_diagnosis *d)
{
	const struct hs_usage *u = in->run;
	struct hs_finding *f;
	char a[16];

	if (!in->ran)
		return;
	if (!io_known(in)) {
		f = dg_finding(d, "io-wait", HS_SEV_INFO, "The time the job waited on I/O is unknown%s%s",
			       u->nnotes ? ": " : ".", u->nnotes ? u->notes[0] : "");
		dg_evidence(f, "wall_seconds = %.3f", u->wall_s);
		dg_figure_d(f, "io_wait_seconds", "seconds", false, 0);
		dg_figure_d(f, "wall_seconds", "seconds", true, u->wall_s);
		return;
	}
	f = dg_finding(d, "io-wait", io_bound(in) ? HS_SEV_PROBLEM : HS_SEV_INFO, "The job spent %.0f%% of "
		       "its wall time waiting on I/O (%.2f s of %.2f s)%s", 100 * io_fraction(in),
		       u->io_wait_s, u->wall_s, io_bound(in) ? ": it is I/O-bound." :
		       ": I/O is not what it waits for.");
	dg_figure_d(f, "io_wait_seconds", "seconds", true, u->io_wait_s);
	dg_figure_d(f, "wall_seconds", "seconds", true, u->wall_s);
	dg_figure_d(f, "io_wait_fraction", "share", true, io_fraction(in));
	dg_figure_u(f, "disk_read_bytes", "bytes", u->io_known, u->read_bytes_disk);
	if (in->service)
		dg_evidence(f, "io_wait_seconds = %.3f: the service's (%s) while the job ran, %s",
			    u->io_wait_s, in->service, u->pressure == HS_PRESSURE_JOB_CGROUP ?
			    "PSI \"some\" of its cgroup" : "its threads' delay accounting, at most the "
			    "wall time");
	else
		dg_evidence(f, "io_wait_seconds = %.3f (PSI \"some\" of the job's cgroup)", u->io_wait_s);
	dg_evidence(f, "wall_seconds = %.3f", u->wall_s);
	if (u->io_known)
		dg_evidence(f, "disk_read_bytes = %llu (%s read from the disk)",
			    (unsigned long long)u->read_bytes_disk, dg_size_str(u->read_bytes_disk, a));
	dg_evidence(f, "cache_read_bytes = unknown: no counter tells the bytes served from the page "
		    "cache (see hotset-time(1))");
	dg_evidence(f, "user_seconds = %.3f, sys_seconds = %.3f", u->user_s, u->sys_s);
}

/*
 * What bounds the disk as the run saw it: the bytes read over the time
 * waited, and whether its reads were small (latency: their number) or
 * large (bandwidth). The number of reads is io.stat's where the io
 * controller counts them, else the profile's ranges stand in, said so.
 */
static void find_device(facts *in, struct hs_diagnosis *d)
{
	const struct hs_usage *u = in->run;
	uint64_t reqs, avg;
	struct hs_finding *f;
	char a[16], b[16];
	bool counted;
	double rate;

	if (!io_known(in) || !u->io_known || !u->read_bytes_disk || u->io_wait_s <= 0)
		return;
	counted = u->read_ios_known;
	reqs = counted ? u->read_ios : in->ranges;
	if (!reqs)
		return;
	rate = (double)u->read_bytes_disk / u->io_wait_s;
	avg = u->read_bytes_disk / reqs;
	f = dg_finding(d, "device", HS_SEV_INFO, "The disk delivered %s/s while the job waited, in %s%llu "
		       "reads of %s on average: %s.", dg_size_str((uint64_t)rate, a),
		       counted ? "" : "about ", (unsigned long long)reqs, dg_size_str(avg, b),
		       avg < SMALL_READ ? "small reads, so the number of reads (their latency) bounds "
		       "it, not bandwidth" : "large reads, so bandwidth bounds it");
	dg_figure_d(f, "disk_read_bytes_per_second", "bytes", true, rate);
	dg_figure_u(f, "read_requests", "count", true, reqs);
	dg_evidence(f, "disk_read_bytes / io_wait_seconds = %.0f bytes/s", rate);
	if (counted)
		dg_evidence(f, "read_requests = %llu (io.stat rios of the job's cgroup)",
			    (unsigned long long)reqs);
	else
		dg_evidence(f, "read_requests = %llu, an estimate: the profile's page ranges, each a "
			    "contiguous run read (no count of requests could be read: the job's cgroup "
			    "has no io.stat)", (unsigned long long)reqs);
}

/*
 * The limits over the job. Of the limits, the one at fault is described
 * (the cause's, else the lowest), the others listed as evidence: which
 * cgroup sets it matters, since a parent's is shared.
 */
static void find_limit(facts *in, struct hs_diagnosis *d)
{
	const struct hs_memcg *m = dg_memcg_now(in), *m0 = dg_memcg_before(in);
	struct hs_finding *f;
	char a[16], lname[PATH_MAX];

	if (!m) {
		uint64_t limit;

		/* the cgroup is gone: the limit recorded with the profile still tells */
		if (lowest_limit(in, &limit) && limit < d->needed) {
			f = dg_finding(d, "memory-limit", HS_SEV_PROBLEM, "The job's memory cgroup %s was "
				       "limited to %s when the profile was recorded, below what a warm "
				       "re-run needs: the kernel evicted the job's pages to stay under it.",
				       in->rec_cgroup, dg_size_str(limit, a));
			dg_evidence(f, "memory-limit %llu of %s (the profile)", (unsigned long long)limit,
				    in->rec_limit_holder ? in->rec_limit_holder : in->rec_cgroup);
		}
		return;
	}
	if (m->lowest >= 0) {
		/* the level at fault, else the lowest limit; its peak and hits from before the run */
		int i = d->cause_level >= 0 && d->cause_level < m->nlevels ? d->cause_level : m->lowest;
		const struct hs_memcg_level *l = &m->level[i];
		const struct hs_memcg_level *l0 = m0 && i < m0->nlevels ? &m0->level[i] : l;
		bool below = l->limit < d->needed, own = l->name_len == strlen(m->name) ||
			     !strcmp(m->name, "/");
		/* full is no fault of the limit when the job fits: who filled it is the cause */
		bool full = !below && level_full(l0);

		hs_memcg_level_name(m, i, lname, sizeof(lname));
		if (own)
			f = dg_finding(d, "memory-limit", below ? HS_SEV_PROBLEM : HS_SEV_INFO, "The job's "
				       "memory cgroup %s is limited to %s%s", m->name, dg_size_str(l->limit, a),
				       below ? ", below what a warm re-run needs: the kernel evicts the job's "
				       "pages to stay under it." : full ? ", which leaves room for the working "
				       "set, but it has been full: what else runs in it competes with the job "
				       "for that memory." : ", which leaves room for the working set.");
		else
			f = dg_finding(d, "memory-limit", below ? HS_SEV_PROBLEM : HS_SEV_INFO, "The job's "
				       "memory cgroup %s is under %s, limited to %s%s", m->name, lname,
				       dg_size_str(l->limit, a), below ? ", below what a warm re-run needs: the "
				       "kernel evicts the job's pages to keep all under it within it." : full ?
				       ", which leaves room for the working set, but it has been full: what "
				       "else runs under it competes with the job for that memory." :
				       ", which leaves room for the working set.");
		dg_figure_u(f, "limit_bytes", "bytes", true, l->limit);
		dg_figure_u(f, "usage_bytes", "bytes", l->st.usage_known, l->st.usage);
		dg_figure_u(f, "peak_bytes", "bytes", l->st.peak_known, l->st.peak);
		dg_figure_u(f, "limit_hits", "count", l->st.hits_known, l->st.hits);
		dg_evidence(f, "%s = %llu", l->limit_path, (unsigned long long)l->limit);
		if (l->st.usage_known)
			dg_evidence(f, "%s of %s = %llu", dg_usage_file(m), lname, (unsigned long long)l->st.usage);
		if (l->st.file_known)
			dg_evidence(f, "page cache charged to it = %llu (memory.stat %s)",
				    (unsigned long long)l->st.file, m->version == 1 ? "total_cache" : "file");
		if (l->st.peak_known)
			dg_evidence(f, "%s of %s = %llu%s", dg_peak_file(m), lname, (unsigned long long)l->st.peak,
				    dg_near_limit(l->limit, l->st.peak) ? ": it reached its limit" : "");
		if (l->st.hits_known)
			dg_evidence(f, "%s of %s = %llu: the times it reached its limit", dg_hits_file(m), lname,
				    (unsigned long long)l->st.hits);
		/* before the run: whether others had filled it, which the run's own use hides */
		if (in->ran && l0 != l && l0->st.peak_known && l0->st.hits_known)
			dg_evidence(f, "before the run: %s %llu, %s %llu", dg_peak_file(m),
				    (unsigned long long)l0->st.peak, dg_hits_file(m), (unsigned long long)l0->st.hits);
		for (int k = 0; k < m->nlevels; k++) {
			char kn[PATH_MAX];

			if (k == i)
				continue;
			hs_memcg_level_name(m, k, kn, sizeof(kn));
			dg_evidence(f, "also limited: %s, to %llu", kn, (unsigned long long)m->level[k].limit);
		}
		if (below) {
			struct hs_fix *x;
			char sz[32];

			dg_size_arg(d->needed, sz, sizeof(sz));
			x = dg_fix_begin(d, "Raise the memory limit of %s to at least %s (the re-run's page "
					 "cache%s).", lname, sz, in->ran || d->need.anon_known ?
					 ", what the job writes and its peak RSS" : "");
			dg_step(x, l->limit_path, "echo", sz, (char *)NULL);
			dg_fix_end(d, x);
		}
	} else if (m->limit_known) {
		f = dg_finding(d, "memory-limit", HS_SEV_INFO, "The job's memory cgroup %s has no memory "
			       "limit, nor has any cgroup above it.", m->name);
		dg_evidence(f, "%s: no limit on the way to the root", m->version == 1 ?
			    "memory.limit_in_bytes" : "memory.max");
	}
}

/*
 * The memory a re-run needs against what it has: the machine's
 * MemAvailable, and the limits over the job (find_limit()).
 */
static void find_memory(facts *in, struct hs_diagnosis *d)
{
	const struct hs_rerun_need *n = &d->need;
	struct hs_finding *f;
	char a[16], b[16], c[16], e[16], g[16], rest[160];

	if (n->written_known && n->anon_known)
		snprintf(rest, sizeof(rest), ", %s for what it writes and %s of its own (peak RSS)",
			 dg_size_str(n->written, e), dg_size_str(n->anon, g));
	else
		snprintf(rest, sizeof(rest), " (what it writes and its own memory are not known: "
			 "no run, and not in the profile)");
	f = dg_finding(d, "working-set", HS_SEV_INFO, "The job's working set is %s; a warm re-run needs "
		       "%s of memory to read nothing from the disk: %s of page cache for what it "
		       "reads%s%s.", dg_size_str(d->working_set, a), dg_size_str(d->needed, b),
		       dg_size_str(n->read, c), in->curve_ok ? "" : " (no trace: taken as all of the "
		       "profile's pages)", rest);
	dg_figure_u(f, "working_set_bytes", "bytes", true, d->working_set);
	dg_figure_u(f, "memory_needed_bytes", "bytes", true, d->needed);
	dg_evidence(f, "working_set_bytes = %llu", (unsigned long long)d->working_set);
	dg_evidence(f, "memory_needed_bytes = %llu = read %llu + written %llu + RSS %llu",
		    (unsigned long long)d->needed, (unsigned long long)n->read,
		    (unsigned long long)n->written, (unsigned long long)n->anon);
	if (in->curve_ok)
		dg_evidence(f, "read: the least cache at which a re-run reads the least (nothing, most "
			    "often), by the curve of the %s model", in->curve_model);
	else
		dg_evidence(f, "read: the profile's pages");
	if (n->written_known)
		dg_evidence(f, "written: the bytes the job dirtied (write_bytes of /proc/PID/io%s): new "
			    "and temporary files take page cache too, charged to its cgroup",
			    in->ran ? "" : ", of the recorded run: the profile's write-bytes");
	if (n->anon_known)
		dg_evidence(f, "RSS: %llu, the peak of its largest process", (unsigned long long)n->anon);
	if (in->mi_ok) {
		dg_evidence(f, "MemAvailable = %llu, Cached = %llu, MemTotal = %llu (/proc/meminfo)",
			    (unsigned long long)in->mi.available, (unsigned long long)in->mi.cached,
			    (unsigned long long)in->mi.total);
		if (d->needed > in->mi.total) {
			f = dg_finding(d, "machine-memory", HS_SEV_PROBLEM, "A warm re-run needs %s, more "
				       "than the machine has (%s): the job will always read from the disk.",
				       dg_size_str(d->needed, a), dg_size_str(in->mi.total, b));
			dg_evidence(f, "memory_needed_bytes = %llu > MemTotal = %llu",
				    (unsigned long long)d->needed, (unsigned long long)in->mi.total);
		} else if (d->needed > in->mi.available + in->res->resident_bytes) {
			struct hs_fix *x;

			f = dg_finding(d, "machine-memory", HS_SEV_PROBLEM, "A warm re-run needs %s, more "
				       "than the %s available now (besides its %s already cached): other "
				       "memory must be reclaimed to keep it.", dg_size_str(d->needed, a),
				       dg_size_str(in->mi.available, b), dg_size_str(in->res->resident_bytes, c));
			dg_evidence(f, "memory_needed_bytes = %llu > MemAvailable = %llu + resident %llu",
				    (unsigned long long)d->needed, (unsigned long long)in->mi.available,
				    (unsigned long long)in->res->resident_bytes);
			x = dg_fix_begin(d, "Give the machine (VM or container) at least %s more memory, so "
					 "that the job's %s stay cached.", dg_size_str(d->needed -
					 in->mi.available - in->res->resident_bytes, e),
					 dg_size_str(d->needed, a));
			dg_fix_end(d, x);
		}
	}
	find_limit(in, d);
}

/*
 * Where the working set lives, as show counts it (totals that roll up):
 * the deepest directory with most of it, and the few that hold it, which
 * a persistent warm-up names.
 */
static void find_dirs(facts *in, struct hs_diagnosis *d)
{
	const struct hs_tops *t = in->tops;
	struct hs_finding *f;
	char a[32], held[96] = "";

	if (!t || !t->under.name || !in->pages)
		return;
	if (t->ncover > 1 || (t->ncover == 1 && strcmp(t->cover[0].name, t->under.name)))
		snprintf(held, sizeof(held), "; %zu director%s hold%s %.0f%% of it", t->ncover,
			 t->ncover == 1 ? "y" : "ies", t->ncover == 1 ? "s" : "",
			 100.0 * t->cover_pages / in->pages);
	f = dg_finding(d, "top-directories", HS_SEV_INFO, "Most of the working set is under %s (%.0f%% "
		       "of its pages, %llu file%s)%s.", t->under.name, 100.0 * t->under.pages / in->pages,
		       (unsigned long long)t->under.files, dg_plural(t->under.files), held);
	for (size_t k = 0; k < t->ncover; k++)
		dg_evidence(f, "%s: %llu pages (%s), %.1f%%, %llu file%s", t->cover[k].name,
			    (unsigned long long)t->cover[k].pages, dg_memory_str(t->cover[k].pages, dg_page(in), a),
			    100.0 * t->cover[k].pages / in->pages, (unsigned long long)t->cover[k].files,
			    dg_plural(t->cover[k].files));
}

/*
 * What of the profile is resident now, and what cachestat says was
 * evicted by reclaim since (a shadow entry left behind); during a run,
 * the machine's refaults. Counted over the files whose residency is known
 * alone: the unknown ones were said first.
 */
static void find_residency(facts *in, struct hs_diagnosis *d)
{
	const struct hs_cache_counts *k = known(in);
	struct hs_finding *f;
	char a[32];

	if (k->pages) {
		f = dg_finding(d, "residency", all_resident(in) ? HS_SEV_INFO : HS_SEV_PROBLEM, "%llu of the "
			       "profile's %llu pages%s (%.0f%%, %s) %s in the page cache now.",
			       (unsigned long long)resident_pages(in), (unsigned long long)k->pages,
			       d->seen_enough ? "" : " that could be seen", 100.0 * resident_pages(in) / k->pages,
			       dg_memory_str(resident_pages(in), dg_page(in), a),
			       resident_pages(in) == 1 ? "is" : "are");
		dg_figure_u(f, "resident_pages", "pages", true, resident_pages(in));
		dg_figure_u(f, "known_pages", "pages", true, k->pages);
		dg_evidence(f, "resident pages = %llu of %llu (%s)", (unsigned long long)resident_pages(in),
			    (unsigned long long)k->pages, evicted_known(in) ? "cachestat" : "mincore");
		if (!all_resident(in) && evicted_known(in) && !k->evicted)
			dg_evidence(f, "cachestat remembers no eviction of the missing pages: they were "
				    "dropped (posix_fadvise, hotset evict, drop_caches, a file rewritten) "
				    "rather than reclaimed, never read since boot, or reclaimed with the "
				    "shadow entries that would tell (workingset_nodereclaim)");
		if (in->res->unknown_files)
			dg_evidence(f, "%llu file%s (%llu pages) not counted: residency unknown",
				    (unsigned long long)in->res->unknown_files, dg_plural(in->res->unknown_files),
				    (unsigned long long)in->res->unknown_pages);
	}
	if (evicted_known(in) && k->evicted) {
		f = dg_finding(d, "evicted", many_evicted(in) ? HS_SEV_PROBLEM : HS_SEV_INFO, "%llu of the "
			       "profile's pages (%s) %s evicted since they were last read%s.",
			       (unsigned long long)k->evicted, dg_memory_str(k->evicted, dg_page(in), a),
			       k->evicted == 1 ? "was" : "were", k->recently_evicted ? ", some recently "
			       "enough that reading them again counts as a refault" : "");
		dg_figure_u(f, "evicted_pages", "pages", true, k->evicted);
		dg_figure_u(f, "recently_evicted_pages", "pages", true, k->recently_evicted);
		dg_evidence(f, "evicted pages = %llu, recently evicted = %llu (cachestat)",
			    (unsigned long long)k->evicted, (unsigned long long)k->recently_evicted);
	}
	if (in->ran && in->vm_ok && in->vm1.refault_known) {
		uint64_t n = dg_less(in->vm1.refault_file, in->vm0.refault_file);

		f = dg_finding(d, "refaults", HS_SEV_INFO, "%llu file page%s evicted shortly before %s read "
			       "again on the machine during the run (all processes, not only the job).",
			       (unsigned long long)n, dg_plural(n), n == 1 ? "was" : "were");
		dg_figure_u(f, "refaults", "pages", true, n);
		dg_evidence(f, "workingset_refault_file: +%llu (/proc/vmstat)", (unsigned long long)n);
	}
}

/* ---- the diagnosis --------------------------------------------------------------- */

const struct hs_finding *hs_diag_finding(const struct hs_diagnosis *d, const char *id)
{
	return dg_finding_of((struct hs_diagnosis *)d, id);
}

/*
 * Nothing to fix needs both: no problem found, and enough seen that none
 * could hide in the rest. A profile seen in part says so instead.
 */
bool hs_diag_nothing_to_fix(const struct hs_diagnosis *d)
{
	if (!d->seen_enough)
		return false;
	for (int i = 0; i < d->nf; i++)
		if (d->f[i].severity == HS_SEV_PROBLEM)
			return false;
	return true;
}

void hs_diagnose(const struct hs_diag_facts *in, struct hs_diagnosis *d)
{
	bool lost;

	/* what a re-run needs: its reads (the curve's, else all its pages), writes and RSS */
	d->working_set = (in->curve_ok ? in->curve_pages : in->pages) * dg_page(in);
	d->needed = hs_rerun_need(in->curve_ok ? in->rerun_zero : in->pages, dg_page(in),
				  in->ran ? in->run : in->recorded, &d->need);
	d->needed_source = in->curve_ok ? "curve" : "profile";
	/* what could not be seen and where the job's memory was looked at come first */
	find_unseen(in, d);
	find_cgroup(in, d);
	/* the cause before the findings, which say whether they are it */
	find_cause(in, d);
	find_io(in, d);
	dg_find_peer(in, d);
	find_device(in, d);
	find_memory(in, d);
	find_dirs(in, d);
	find_residency(in, d);
	dg_find_lost(in, d);
	/* causes only when the job's pages were lost, or it waited */
	lost = io_bound(in) || !all_resident(in) || many_evicted(in);
	if (lost) {
		dg_recommend_keep(in, d);
		dg_recommend_warm(in, d);
		dg_find_others(in, d);
		dg_find_machine(in, d);
		dg_find_reclaimers(in, d);
		dg_find_vfs_cache(in, d);
	}
	if (hs_diag_nothing_to_fix(d))
		dg_finding(d, "nothing-to-fix", HS_SEV_INFO, "Nothing to fix: %s.", in->ran ?
			   "the job did not wait for the disk, and its pages are cached" :
			   "the profile's pages are all in the page cache");
	else if (!d->seen_enough && !lost && !io_bound(in))
		dg_finding(d, "inconclusive", HS_SEV_UNSEEN, "No conclusion: nothing calls for a fix in "
			   "the %.0f%% of the working set that could be seen, and the rest could not be.",
			   100 * d->seen_share);
}
