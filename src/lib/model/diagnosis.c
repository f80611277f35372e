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

#include "model/diagnosis.h"

/*
 * The thresholds. Each is a share of what the job itself did or lost, never
 * an absolute count: a machine's counters since boot are large on any busy
 * machine, and a small count is no evidence against a large loss.
 */
#define IO_BOUND 0.10		/* a job waiting this share of its time is worth fixing */
#define SMALL_READ 65536	/* average bytes per read below which latency, not bandwidth, rules */
#define REFAULTED 0.10		/* this share of the disk reads refaulted: pages lost before the run */
#define MEANINGFUL 10		/* a reclaimer is named for 1/MEANINGFUL of the job's lost pages */
#define NEAR 10			/* "full": within 1/NEAR of its limit */

/* The facts are read, never written: every finding function takes them so. */
typedef const struct hs_diag_facts facts;

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
		[HS_CG_OWN] = "own",
	};

	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "own";
}

/* ---- findings, figures, fixes as data ------------------------------------------ */

static struct hs_finding *finding(struct hs_diagnosis *d, const char *id, enum hs_severity sev,
				  const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void evidence(struct hs_finding *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static struct hs_fix *fix_begin(struct hs_diagnosis *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static struct hs_finding *finding(struct hs_diagnosis *d, const char *id, enum hs_severity sev,
				  const char *fmt, ...)
{
	static __thread struct hs_finding spare;	/* past the last: written, never shown */
	struct hs_finding *f = d->nf < HS_DIAG_FINDINGS ? &d->f[d->nf++] : &spare;
	va_list ap;

	memset(f, 0, sizeof(*f));
	f->id = id;
	f->severity = sev;
	va_start(ap, fmt);
	vsnprintf(f->text, sizeof(f->text), fmt, ap);
	va_end(ap);
	return f;
}

static void evidence(struct hs_finding *f, const char *fmt, ...)
{
	va_list ap;

	if (f->nev >= HS_DIAG_EVIDENCE)
		return;
	va_start(ap, fmt);
	vsnprintf(f->evidence[f->nev++], sizeof(f->evidence[0]), fmt, ap);
	va_end(ap);
}

/*
 * A figure for scripts, beside the evidence in words. An unknown figure is
 * kept, as unknown (null in JSON), so that a script sees it was looked for.
 */
static void figure_u(struct hs_finding *f, const char *name, const char *unit, bool known, uint64_t v)
{
	if (f->nfig < HS_DIAG_FIGURES)
		f->fig[f->nfig++] = (struct hs_figure){ name, unit, known, true, known ? v : 0, 0 };
}

static void figure_d(struct hs_finding *f, const char *name, const char *unit, bool known, double v)
{
	if (f->nfig < HS_DIAG_FIGURES)
		f->fig[f->nfig++] = (struct hs_figure){ name, unit, known, false, 0, known ? v : 0 };
}

void hs_diag_unseen(struct hs_diagnosis *d, const char *source, const char *fmt, ...)
{
	struct hs_unseen *n;
	va_list ap;

	if (d->nunseen >= HS_DIAG_UNSEEN)
		return;
	n = &d->unseen[d->nunseen++];
	snprintf(n->source, sizeof(n->source), "%s", source);
	va_start(ap, fmt);
	vsnprintf(n->reason, sizeof(n->reason), fmt, ap);
	va_end(ap);
}

/*
 * A fix is built in the next free slot and counted only by fix_end(), once
 * every word of its commands fitted: a command cut short is never offered.
 */
static struct hs_fix *fix_begin(struct hs_diagnosis *d, const char *fmt, ...)
{
	static __thread struct hs_fix spare;
	struct hs_fix *x = d->nfix < HS_DIAG_FIXES ? &d->fix[d->nfix] : &spare;
	va_list ap;

	memset(x, 0, sizeof(*x));
	va_start(ap, fmt);
	vsnprintf(x->text, sizeof(x->text), fmt, ap);
	va_end(ap);
	return x;
}

/* A copy of s in x's storage, or NULL when it is full (x is then not offered). */
static const char *word(struct hs_fix *x, const char *s)
{
	size_t len = strlen(s) + 1;
	char *w;

	if (x->used + len > sizeof(x->buf)) {
		x->used = sizeof(x->buf) + 1;	/* no later word fits either */
		return NULL;
	}
	w = memcpy(x->buf + x->used, s, len);
	x->used += len;
	return w;
}

/*
 * Add a command to x: the words up to NULL, its output to output if not
 * NULL. The words are copied: a fix outlives the strings it was made from
 * (a scheme's path, a size formatted on the stack). Too many words, or
 * steps, spoil the fix as a word that does not fit does.
 */
static void step(struct hs_fix *x, const char *output, ...)
{
	struct hs_fix_step *s;
	const char *a;
	va_list ap;

	if (x->nsteps >= HS_FIX_STEPS) {
		x->used = sizeof(x->buf) + 1;
		return;
	}
	s = &x->step[x->nsteps++];
	va_start(ap, output);
	while ((a = va_arg(ap, const char *))) {
		if (s->argc < HS_FIX_WORDS)
			s->argv[s->argc++] = word(x, a);
		else
			x->used = sizeof(x->buf) + 1;
	}
	va_end(ap);
	s->argv[s->argc] = NULL;
	s->output = output ? word(x, output) : NULL;
}

/* One more word for x's last step. */
static void step_word(struct hs_fix *x, const char *a)
{
	struct hs_fix_step *s = &x->step[x->nsteps - 1];

	if (s->argc < HS_FIX_WORDS)
		s->argv[s->argc++] = word(x, a), s->argv[s->argc] = NULL;
	else
		x->used = sizeof(x->buf) + 1;
}

static void fix_end(struct hs_diagnosis *d, struct hs_fix *x)
{
	if (x == &d->fix[d->nfix] && d->nfix < HS_DIAG_FIXES && x->used <= sizeof(x->buf))
		d->nfix++;
}

/* A size for a command line: whole MiB, rounded up ("1536M"). */
static void size_arg(uint64_t bytes, char *buf, size_t size)
{
	snprintf(buf, size, "%lluM", (unsigned long long)((bytes + (1u << 20) - 1) >> 20));
}

static const char *size_str(uint64_t bytes, char buf[16])
{
	return hs_size_str(bytes, buf);
}

/* pages as the memory they take, labelled so (hotset(1), SIZES): "62.6 MiB of memory" */
static const char *memory_str(uint64_t pages, uint64_t page_size, char buf[32])
{
	char h[16];

	snprintf(buf, 32, "%s of memory", hs_size_str(pages * page_size, h));
	return buf;
}

static const char *plural(uint64_t n)
{
	return n == 1 ? "" : "s";
}

static uint64_t less(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

/*
 * systemd's escaping of a path for a unit's instance (systemd.unit(5),
 * "String Escaping for Inclusion in Unit Names"), written from its
 * description: the path tidied (no "//", "/./" or trailing '/'), its
 * leading '/' dropped, every other '/' a '-', and every byte but ASCII
 * letters, digits, ':', '_' and a '.' that does not start the name as
 * \xHH. Done here, not by $(systemd-escape -p DIR) in the command: the
 * command is then argv, and a directory's name never meets a shell.
 */
int hs_systemd_escape_path(const char *path, char *out, size_t size)
{
	static const char hex[] = "0123456789abcdef";
	char tidy[PATH_MAX];
	size_t n = 0, len;

	if (path[0] != '/' || (size_t)snprintf(tidy, sizeof(tidy), "%s", path) >= sizeof(tidy))
		return -EINVAL;
	hs_tidy_path(tidy, false);
	len = strlen(tidy);
	while (len > 1 && tidy[len - 1] == '/')
		tidy[--len] = '\0';
	/* systemd refuses a path with ".." in it: it is not normalised */
	for (const char *p = tidy; (p = strstr(p, "/..")); p += 3)
		if (p[3] == '/' || !p[3])
			return -EINVAL;
	if (!strcmp(tidy, "/")) {
		if (size < 2)
			return -ENAMETOOLONG;
		memcpy(out, "-", 2);
		return 0;
	}
	/* '/' between names is '-'; a byte but a letter, digit, ':', '_' or a later '.' is \xHH */
	for (const unsigned char *p = (const unsigned char *)tidy + 1; *p; p++) {
		char e[4];
		size_t k = 1;
		bool plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			     (*p >= '0' && *p <= '9') || *p == ':' || *p == '_' ||
			     (*p == '.' && p != (const unsigned char *)tidy + 1);

		if (*p == '/')
			e[0] = '-';
		else if (plain)
			e[0] = (char)*p;
		else
			e[0] = '\\', e[1] = 'x', e[2] = hex[*p >> 4], e[3] = hex[*p & 15], k = 4;
		if (n + k >= size)
			return -ENAMETOOLONG;
		memcpy(out + n, e, k);
		n += k;
	}
	out[n] = '\0';
	return 0;
}

/* ---- the facts, as the findings ask for them ---------------------------------------- */

static uint64_t page(facts *in)
{
	return in->page_size;
}

/*
 * The cgroup before the run (or now, with -p), and as the run left it:
 * NULL if it could not be read. Its fill is judged before the run (what
 * was there when the job's pages went), its limit after (what a re-run
 * will meet).
 */
static const struct hs_memcg *memcg_before(facts *in)
{
	return in->memcg_rc ? NULL : in->memcg0;
}

static const struct hs_memcg *memcg_now(facts *in)
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
static bool near_limit(uint64_t limit, uint64_t v)
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
	return (l->st.usage_known && near_limit(l->limit, l->st.usage)) ||
	       (l->st.peak_known && near_limit(l->limit, l->st.peak)) ||
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

static const char *usage_file(const struct hs_memcg *m)
{
	return m->version == 1 ? "memory.usage_in_bytes" : "memory.current";
}

static const char *peak_file(const struct hs_memcg *m)
{
	return m->version == 1 ? "memory.max_usage_in_bytes" : "memory.peak";
}

static const char *hits_file(const struct hs_memcg *m)
{
	return m->version == 1 ? "memory.failcnt" : "memory.events max";
}

/* DAMON actions that take pages from the page cache (stat, hugepage and the like do not). */
static bool reclaims(const char *action)
{
	return !strcmp(action, "pageout") || !strcmp(action, "lru_deprio") ||
	       !strcmp(action, "cold");
}

/* ---- who reclaimed ------------------------------------------------------------------- */

/*
 * What each reclaimer took, in pages: global reclaim (kswapd and direct,
 * /proc/vmstat) and DAMON's reclaiming schemes that run (their stats),
 * since boot (or their start) until the run, and during the run.
 */
struct reclaim {
	bool global_known;
	uint64_t global, global_run;
	bool damon;			/* a scheme that reclaims is on */
	bool damon_known;		/* and all such have stats */
	uint64_t damon_pages, damon_run;
};

static void count_reclaim(facts *in, struct reclaim *r)
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
			r->global_run = less(in->vm1.steal_kswapd + in->vm1.steal_direct, r->global);
	}
	r->damon_known = true;
	for (int i = 0; i < in->ndamon; i++) {
		const struct hs_damon_scheme *s = &in->damon0[i];

		if (!s->on || !reclaims(s->action))
			continue;
		r->damon = true;
		if (!s->stats_known) {
			r->damon_known = false;
			continue;
		}
		r->damon_pages += s->sz_applied / page(in);
		if (in->ran && in->damon1 && in->damon1[i].stats_known)
			r->damon_run += less(in->damon1[i].sz_applied, s->sz_applied) / page(in);
	}
	if (!r->damon)
		r->damon_known = false;
}

/*
 * Did a reclaimer's figure v take a meaningful share of what the job lost?
 * A reclaimer that took less than a tenth of it cannot be what took it,
 * whatever else it did; with nothing known lost, any take counts.
 */
static bool meaningful(const struct hs_diagnosis *d, uint64_t v)
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
	const struct hs_memcg *a = memcg_before(in), *b = memcg_now(in);

	if (!in->ran)
		return;
	if (a && b && a->st.refault_known && b->st.refault_known && !strcmp(a->dir, b->dir)) {
		d->refaults_known = true;
		d->refaulted = less(b->st.refault_file, a->st.refault_file);
	} else if (in->vm_ok && in->vm1.refault_known) {
		d->refaulted = less(in->vm1.refault_file, in->vm0.refault_file);
	}
}

/*
 * The limited level over the job at fault when others fill it: one whose
 * limit fits the job alone (else the limit is the cause) and that is or
 * was full; of several, the fullest, where reclaim ran hardest.
 */
static int shared_level(facts *in, const struct hs_diagnosis *d)
{
	const struct hs_memcg *m = memcg_before(in);
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
	const struct hs_memcg *m = memcg_before(in);

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
		d->cause_level = memcg_before(in) ? memcg_before(in)->lowest : -1;
		return;
	}
	lost = in->ran ? io_bound(in) && d->refaulted * page(in) >= REFAULTED * in->run->read_bytes_disk
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
	count_reclaim(in, &r);
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
	g = r.global_known && meaningful(d, r.global);
	dm = r.damon && (r.damon_known ? meaningful(d, r.damon_pages) : true);
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
	d->missing_pages = less(in->pages, counted);
	unseen = d->unknown_pages + d->missing_pages;
	d->seen_share = in->pages ? (double)(in->pages - unseen) / (double)in->pages : 1;
	d->seen_enough = unseen <= in->pages / 100 && !(in->pages && unseen == in->pages);
	if (res->unknown_files)
		hs_diag_unseen(d, "residency", "of %llu file%s of the profile: the kernel tells it only "
			       "to who may write a file (its owner, or root)",
			       (unsigned long long)res->unknown_files, plural(res->unknown_files));
	if (res->known.pages && !evicted_known(in))
		hs_diag_unseen(d, "evicted pages", "cachestat(2) is missing (Linux 6.5 and later have "
			       "it): which pages were evicted since they were read is unknown");
	if (!unseen)
		return;
	f = finding(d, "unseen", HS_SEV_UNSEEN, "%.0f%% of the working set could not be seen (%s of "
		    "its %s): %s; %s.", 100.0 * (double)unseen / (double)in->pages,
		    size_str(unseen * page(in), a), size_str(in->pages * page(in), b),
		    !d->missing_pages ? "the kernel tells a file's residency only to who may write it "
		    "(its owner, or root)" : !d->unknown_pages ? "its files are gone, changed or "
		    "unreadable since the profile was made" : "some files' residency the kernel tells "
		    "only to who may write them, others are gone, changed or unreadable",
		    d->seen_enough ? "too little to change what follows" : unseen == in->pages ?
		    "nothing below rests on the working set's residency" : "what follows rests on "
		    "the rest alone, and cannot tell that there is nothing to fix");
	figure_u(f, "unknown_pages", "pages", true, d->unknown_pages);
	figure_u(f, "missing_pages", "pages", true, d->missing_pages);
	figure_d(f, "seen_fraction", "share", true, d->seen_share);
	if (d->unknown_pages)
		evidence(f, "%llu page%s in %llu file%s: residency unknown (no write permission: run "
			 "as root, or as the files' owner)", (unsigned long long)d->unknown_pages,
			 plural(d->unknown_pages), (unsigned long long)res->unknown_files,
			 plural(res->unknown_files));
	if (d->missing_pages)
		evidence(f, "%llu page%s not examined: %llu of the profile's %llu file%s%s",
			 (unsigned long long)d->missing_pages, plural(d->missing_pages),
			 (unsigned long long)less(in->files, res->files),
			 (unsigned long long)in->files, plural(in->files),
			 in->files > res->files ? " are gone or could not be opened" :
			 ": files shorter than when they were recorded");
	evidence(f, "pages seen = %llu of %llu", (unsigned long long)(in->pages - unseen),
		 (unsigned long long)in->pages);
}

/* Which memory cgroup was looked at, and why that one. */
static void find_cgroup(facts *in, struct hs_diagnosis *d)
{
	const struct hs_memcg *m = memcg_before(in);
	static const char *const why[] = {
		[HS_CG_RUN] = "the job ran in it, and was charged there",
		[HS_CG_PROFILE] = "the profile recorded it: the job was charged there",
		[HS_CG_OPTION] = "as --cgroup asked",
		[HS_CG_OWN] = "doctor's own: the profile does not say where the job ran (recorded "
			      "before hotset wrote it, or a snapshot); give --cgroup to diagnose the job's",
	};
	struct hs_finding *f;

	/* none: the findings on limits and competitors are not made, and that is said here */
	if (!m) {
		if (in->cg_source == HS_CG_PROFILE && in->rec_cgroup)
			f = finding(d, "cgroup", HS_SEV_UNSEEN, "The job's memory cgroup %s (cgroup v%d), "
				    "recorded in the profile, could not be read: %s.", in->rec_cgroup,
				    in->rec_version, in->memcg_rc == -ENOENT ? "it is not on this "
				    "machine now" : strerror(-in->memcg_rc));
		else
			f = finding(d, "cgroup", HS_SEV_UNSEEN, "No memory cgroup could be read (%s).",
				    in->memcg_rc == -ENOENT ? "no memory controller is mounted" :
				    strerror(-in->memcg_rc));
		if (in->rec_cgroup && in->rec_limit_known && in->rec_limit == UINT64_MAX)
			evidence(f, "memory-limit when recorded: none");
		else if (in->rec_cgroup && in->rec_limit_known)
			evidence(f, "memory-limit when recorded: %llu, of %s", (unsigned long long)in->rec_limit,
				 in->rec_limit_holder ? in->rec_limit_holder : in->rec_cgroup);
		return;
	}
	f = finding(d, "cgroup", HS_SEV_INFO, "Memory looked at in the cgroup %s (cgroup v%d): %s.",
		    m->name, m->version, why[in->cg_source]);
	evidence(f, "%s", m->dir);
	if (in->cg_source == HS_CG_PROFILE && in->rec_limit_known) {
		if (in->rec_limit == UINT64_MAX)
			evidence(f, "memory-limit when recorded: none");
		else
			evidence(f, "memory-limit when recorded: %llu, of %s", (unsigned long long)in->rec_limit,
				 in->rec_limit_holder ? in->rec_limit_holder : m->name);
	}
	if (in->cg_source != HS_CG_PROFILE && in->rec_cgroup && strcmp(in->rec_cgroup, m->name))
		evidence(f, "the profile recorded %s", in->rec_cgroup);
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
		f = finding(d, "io-wait", HS_SEV_INFO, "The time the job waited on I/O is unknown%s%s",
			    u->nnotes ? ": " : ".", u->nnotes ? u->notes[0] : "");
		evidence(f, "wall_seconds = %.3f", u->wall_s);
		figure_d(f, "io_wait_seconds", "seconds", false, 0);
		figure_d(f, "wall_seconds", "seconds", true, u->wall_s);
		return;
	}
	f = finding(d, "io-wait", io_bound(in) ? HS_SEV_PROBLEM : HS_SEV_INFO, "The job spent %.0f%% of "
		    "its wall time waiting on I/O (%.2f s of %.2f s)%s", 100 * io_fraction(in),
		    u->io_wait_s, u->wall_s, io_bound(in) ? ": it is I/O-bound." :
		    ": I/O is not what it waits for.");
	figure_d(f, "io_wait_seconds", "seconds", true, u->io_wait_s);
	figure_d(f, "wall_seconds", "seconds", true, u->wall_s);
	figure_d(f, "io_wait_fraction", "share", true, io_fraction(in));
	figure_u(f, "disk_read_bytes", "bytes", u->io_known, u->read_bytes_disk);
	evidence(f, "io_wait_seconds = %.3f (PSI \"some\" of the job's cgroup)", u->io_wait_s);
	evidence(f, "wall_seconds = %.3f", u->wall_s);
	if (u->io_known)
		evidence(f, "disk_read_bytes = %llu (%s read from the disk)",
			 (unsigned long long)u->read_bytes_disk, size_str(u->read_bytes_disk, a));
	evidence(f, "cache_read_bytes = unknown: no counter tells the bytes served from the page "
		 "cache (see hotset-time(1))");
	evidence(f, "user_seconds = %.3f, sys_seconds = %.3f", u->user_s, u->sys_s);
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
	f = finding(d, "device", HS_SEV_INFO, "The disk delivered %s/s while the job waited, in %s%llu "
		    "reads of %s on average: %s.", size_str((uint64_t)rate, a),
		    counted ? "" : "about ", (unsigned long long)reqs, size_str(avg, b),
		    avg < SMALL_READ ? "small reads, so the number of reads (their latency) bounds "
		    "it, not bandwidth" : "large reads, so bandwidth bounds it");
	figure_d(f, "disk_read_bytes_per_second", "bytes", true, rate);
	figure_u(f, "read_requests", "count", true, reqs);
	evidence(f, "disk_read_bytes / io_wait_seconds = %.0f bytes/s", rate);
	if (counted)
		evidence(f, "read_requests = %llu (io.stat rios of the job's cgroup)",
			 (unsigned long long)reqs);
	else
		evidence(f, "read_requests = %llu, an estimate: the profile's page ranges, each a "
			 "contiguous run read (no count of requests could be read: the job's cgroup "
			 "has no io.stat)", (unsigned long long)reqs);
}

/*
 * The memory a re-run needs against what it has: the machine's
 * MemAvailable, and the limits over the job. Of the limits, the one at
 * fault is described (the cause's, else the lowest), the others listed
 * as evidence: which cgroup sets it matters, since a parent's is shared.
 */
static void find_memory(facts *in, struct hs_diagnosis *d)
{
	const struct hs_memcg *m = memcg_now(in), *m0 = memcg_before(in);
	const struct hs_rerun_need *n = &d->need;
	struct hs_finding *f;
	char a[16], b[16], c[16], e[16], g[16], rest[160], lname[PATH_MAX];

	if (n->written_known && n->anon_known)
		snprintf(rest, sizeof(rest), ", %s for what it writes and %s of its own (peak RSS)",
			 size_str(n->written, e), size_str(n->anon, g));
	else
		snprintf(rest, sizeof(rest), " (what it writes and its own memory are not known: "
			 "no run, and not in the profile)");
	f = finding(d, "working-set", HS_SEV_INFO, "The job's working set is %s; a warm re-run needs "
		    "%s of memory to read nothing from the disk: %s of page cache for what it "
		    "reads%s%s.", size_str(d->working_set, a), size_str(d->needed, b),
		    size_str(n->read, c), in->curve_ok ? "" : " (no trace: taken as all of the "
		    "profile's pages)", rest);
	figure_u(f, "working_set_bytes", "bytes", true, d->working_set);
	figure_u(f, "memory_needed_bytes", "bytes", true, d->needed);
	evidence(f, "working_set_bytes = %llu", (unsigned long long)d->working_set);
	evidence(f, "memory_needed_bytes = %llu = read %llu + written %llu + RSS %llu",
		 (unsigned long long)d->needed, (unsigned long long)n->read,
		 (unsigned long long)n->written, (unsigned long long)n->anon);
	if (in->curve_ok)
		evidence(f, "read: the least cache at which a re-run reads the least (nothing, most "
			 "often), by the curve of the %s model", in->curve_model);
	else
		evidence(f, "read: the profile's pages");
	if (n->written_known)
		evidence(f, "written: the bytes the job dirtied (write_bytes of /proc/PID/io%s): new "
			 "and temporary files take page cache too, charged to its cgroup",
			 in->ran ? "" : ", of the recorded run: the profile's write-bytes");
	if (n->anon_known)
		evidence(f, "RSS: %llu, the peak of its largest process", (unsigned long long)n->anon);
	if (in->mi_ok) {
		evidence(f, "MemAvailable = %llu, Cached = %llu, MemTotal = %llu (/proc/meminfo)",
			 (unsigned long long)in->mi.available, (unsigned long long)in->mi.cached,
			 (unsigned long long)in->mi.total);
		if (d->needed > in->mi.total) {
			f = finding(d, "machine-memory", HS_SEV_PROBLEM, "A warm re-run needs %s, more "
				    "than the machine has (%s): the job will always read from the disk.",
				    size_str(d->needed, a), size_str(in->mi.total, b));
			evidence(f, "memory_needed_bytes = %llu > MemTotal = %llu",
				 (unsigned long long)d->needed, (unsigned long long)in->mi.total);
		} else if (d->needed > in->mi.available + in->res->resident_bytes) {
			struct hs_fix *x;

			f = finding(d, "machine-memory", HS_SEV_PROBLEM, "A warm re-run needs %s, more "
				    "than the %s available now (besides its %s already cached): other "
				    "memory must be reclaimed to keep it.", size_str(d->needed, a),
				    size_str(in->mi.available, b), size_str(in->res->resident_bytes, c));
			evidence(f, "memory_needed_bytes = %llu > MemAvailable = %llu + resident %llu",
				 (unsigned long long)d->needed, (unsigned long long)in->mi.available,
				 (unsigned long long)in->res->resident_bytes);
			x = fix_begin(d, "Give the machine (VM or container) at least %s more memory, so "
				      "that the job's %s stay cached.", size_str(d->needed -
				      in->mi.available - in->res->resident_bytes, e),
				      size_str(d->needed, a));
			fix_end(d, x);
		}
	}
	if (!m) {
		uint64_t limit;

		/* the cgroup is gone: the limit recorded with the profile still tells */
		if (lowest_limit(in, &limit) && limit < d->needed) {
			f = finding(d, "memory-limit", HS_SEV_PROBLEM, "The job's memory cgroup %s was "
				    "limited to %s when the profile was recorded, below what a warm "
				    "re-run needs: the kernel evicted the job's pages to stay under it.",
				    in->rec_cgroup, size_str(limit, a));
			evidence(f, "memory-limit %llu of %s (the profile)", (unsigned long long)limit,
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
			f = finding(d, "memory-limit", below ? HS_SEV_PROBLEM : HS_SEV_INFO, "The job's "
				    "memory cgroup %s is limited to %s%s", m->name, size_str(l->limit, a),
				    below ? ", below what a warm re-run needs: the kernel evicts the job's "
				    "pages to stay under it." : full ? ", which leaves room for the working "
				    "set, but it has been full: what else runs in it competes with the job "
				    "for that memory." : ", which leaves room for the working set.");
		else
			f = finding(d, "memory-limit", below ? HS_SEV_PROBLEM : HS_SEV_INFO, "The job's "
				    "memory cgroup %s is under %s, limited to %s%s", m->name, lname,
				    size_str(l->limit, a), below ? ", below what a warm re-run needs: the "
				    "kernel evicts the job's pages to keep all under it within it." : full ?
				    ", which leaves room for the working set, but it has been full: what "
				    "else runs under it competes with the job for that memory." :
				    ", which leaves room for the working set.");
		figure_u(f, "limit_bytes", "bytes", true, l->limit);
		figure_u(f, "usage_bytes", "bytes", l->st.usage_known, l->st.usage);
		figure_u(f, "peak_bytes", "bytes", l->st.peak_known, l->st.peak);
		figure_u(f, "limit_hits", "count", l->st.hits_known, l->st.hits);
		evidence(f, "%s = %llu", l->limit_path, (unsigned long long)l->limit);
		if (l->st.usage_known)
			evidence(f, "%s of %s = %llu", usage_file(m), lname, (unsigned long long)l->st.usage);
		if (l->st.file_known)
			evidence(f, "page cache charged to it = %llu (memory.stat %s)",
				 (unsigned long long)l->st.file, m->version == 1 ? "total_cache" : "file");
		if (l->st.peak_known)
			evidence(f, "%s of %s = %llu%s", peak_file(m), lname, (unsigned long long)l->st.peak,
				 near_limit(l->limit, l->st.peak) ? ": it reached its limit" : "");
		if (l->st.hits_known)
			evidence(f, "%s of %s = %llu: the times it reached its limit", hits_file(m), lname,
				 (unsigned long long)l->st.hits);
		/* before the run: whether others had filled it, which the run's own use hides */
		if (in->ran && l0 != l && l0->st.peak_known && l0->st.hits_known)
			evidence(f, "before the run: %s %llu, %s %llu", peak_file(m),
				 (unsigned long long)l0->st.peak, hits_file(m), (unsigned long long)l0->st.hits);
		for (int k = 0; k < m->nlevels; k++) {
			char kn[PATH_MAX];

			if (k == i)
				continue;
			hs_memcg_level_name(m, k, kn, sizeof(kn));
			evidence(f, "also limited: %s, to %llu", kn, (unsigned long long)m->level[k].limit);
		}
		if (below) {
			struct hs_fix *x;
			char sz[32];

			size_arg(d->needed, sz, sizeof(sz));
			x = fix_begin(d, "Raise the memory limit of %s to at least %s (the re-run's page "
				      "cache%s).", lname, sz, in->ran || d->need.anon_known ?
				      ", what the job writes and its peak RSS" : "");
			step(x, l->limit_path, "echo", sz, (char *)NULL);
			fix_end(d, x);
		}
	} else if (m->limit_known) {
		f = finding(d, "memory-limit", HS_SEV_INFO, "The job's memory cgroup %s has no memory "
			    "limit, nor has any cgroup above it.", m->name);
		evidence(f, "%s: no limit on the way to the root", m->version == 1 ?
			 "memory.limit_in_bytes" : "memory.max");
	}
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
	f = finding(d, "top-directories", HS_SEV_INFO, "Most of the working set is under %s (%.0f%% "
		    "of its pages, %llu file%s)%s.", t->under.name, 100.0 * t->under.pages / in->pages,
		    (unsigned long long)t->under.files, plural(t->under.files), held);
	for (size_t k = 0; k < t->ncover; k++)
		evidence(f, "%s: %llu pages (%s), %.1f%%, %llu file%s", t->cover[k].name,
			 (unsigned long long)t->cover[k].pages, memory_str(t->cover[k].pages, page(in), a),
			 100.0 * t->cover[k].pages / in->pages, (unsigned long long)t->cover[k].files,
			 plural(t->cover[k].files));
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
		f = finding(d, "residency", all_resident(in) ? HS_SEV_INFO : HS_SEV_PROBLEM, "%llu of the "
			    "profile's %llu pages%s (%.0f%%, %s) %s in the page cache now.",
			    (unsigned long long)resident_pages(in), (unsigned long long)k->pages,
			    d->seen_enough ? "" : " that could be seen", 100.0 * resident_pages(in) / k->pages,
			    memory_str(resident_pages(in), page(in), a),
			    resident_pages(in) == 1 ? "is" : "are");
		figure_u(f, "resident_pages", "pages", true, resident_pages(in));
		figure_u(f, "known_pages", "pages", true, k->pages);
		evidence(f, "resident pages = %llu of %llu (%s)", (unsigned long long)resident_pages(in),
			 (unsigned long long)k->pages, evicted_known(in) ? "cachestat" : "mincore");
		if (!all_resident(in) && evicted_known(in) && !k->evicted)
			evidence(f, "cachestat remembers no eviction of the missing pages: they were "
				 "dropped (posix_fadvise, hotset evict, drop_caches, a file rewritten) "
				 "rather than reclaimed, never read since boot, or reclaimed with the "
				 "shadow entries that would tell (workingset_nodereclaim)");
		if (in->res->unknown_files)
			evidence(f, "%llu file%s (%llu pages) not counted: residency unknown",
				 (unsigned long long)in->res->unknown_files, plural(in->res->unknown_files),
				 (unsigned long long)in->res->unknown_pages);
	}
	if (evicted_known(in) && k->evicted) {
		f = finding(d, "evicted", many_evicted(in) ? HS_SEV_PROBLEM : HS_SEV_INFO, "%llu of the "
			    "profile's pages (%s) %s evicted since they were last read%s.",
			    (unsigned long long)k->evicted, memory_str(k->evicted, page(in), a),
			    k->evicted == 1 ? "was" : "were", k->recently_evicted ? ", some recently "
			    "enough that reading them again counts as a refault" : "");
		figure_u(f, "evicted_pages", "pages", true, k->evicted);
		figure_u(f, "recently_evicted_pages", "pages", true, k->recently_evicted);
		evidence(f, "evicted pages = %llu, recently evicted = %llu (cachestat)",
			 (unsigned long long)k->evicted, (unsigned long long)k->recently_evicted);
	}
	if (in->ran && in->vm_ok && in->vm1.refault_known) {
		uint64_t n = less(in->vm1.refault_file, in->vm0.refault_file);

		f = finding(d, "refaults", HS_SEV_INFO, "%llu file page%s evicted shortly before %s read "
			    "again on the machine during the run (all processes, not only the job).",
			    (unsigned long long)n, plural(n), n == 1 ? "was" : "were");
		figure_u(f, "refaults", "pages", true, n);
		evidence(f, "workingset_refault_file: +%llu (/proc/vmstat)", (unsigned long long)n);
	}
}

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
	const struct hs_memcg *m = memcg_before(in);
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

			by = less(by, b ? b->file + b->anon : 0);
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
	const struct hs_memcg *m = memcg_before(in);
	char a[16], b[16], c[16], p[32];

	for (int i = 0; i < d->ncomp; i++) {
		const struct hs_memcg_cache *x = d->comp[i].cg;

		if (x->peak_known)
			snprintf(p, sizeof(p), ", peak %s", size_str(x->peak, c));
		else
			p[0] = '\0';
		evidence(f, "%s: %s%s (page cache %s, anonymous %s%s%s)", x->name,
			 d->comp[i].grew ? "+" : "", size_str(d->comp[i].bytes, a),
			 size_str(x->file, b), size_str(x->anon, c), p,
			 m && m->version == 1 ? "; memory.stat cache, rss" : "; memory.stat file, anon");
	}
}

/* Who else fills memory: the cause's competitors, or (no cause of theirs) the largest, for the record. */
static void find_others(facts *in, struct hs_diagnosis *d)
{
	const struct hs_memcg *m = memcg_before(in);
	bool run = in->ran && in->ncg0 >= 0 && in->ncg1 >= 0;
	ssize_t nnow = run ? in->ncg1 : in->ncg0;
	struct hs_finding *f;
	uint64_t least;
	char a[16], b[16], c[16], lname[PATH_MAX];

	if (d->cause == HS_CAUSE_SHARED) {
		/* the cause: the level that filled, and who under it filled it */
		const struct hs_memcg_level *l = &m->level[d->cause_level];
		bool own = l->name_len == strlen(m->name) || !strcmp(m->name, "/");
		bool full_now = l->st.usage_known && near_limit(l->limit, l->st.usage);
		uint64_t shown = full_now ? l->st.usage : l->st.peak_known ? l->st.peak : l->st.usage;

		hs_memcg_level_name(m, d->cause_level, lname, sizeof(lname));
		if (nnow >= 0)
			competitors(in, d, lname, 1);
		if (own)
			f = finding(d, "other-activity", HS_SEV_PROBLEM, "Other processes in the job's "
				    "memory cgroup %s evicted its pages: the cgroup %s (%s of its %s "
				    "limit), though the job alone needs %s of it.", m->name, full_now ?
				    (in->ran ? "was full before the run" : "is full now") : "has been full",
				    size_str(shown, a), size_str(l->limit, b), size_str(d->needed, c));
		else
			f = finding(d, "other-activity", HS_SEV_PROBLEM, "Others under %s, whose memory "
				    "limit the job's cgroup %s shares, evicted its pages: %s %s (%s of its "
				    "%s limit), though the job alone needs %s of it%s%s.", lname, m->name,
				    lname, full_now ? (in->ran ? "was full before the run" : "is full now") :
				    "has been full", size_str(shown, a), size_str(l->limit, b),
				    size_str(d->needed, c), d->ncomp ? "; the largest: " : "",
				    d->ncomp ? d->comp[0].cg->name : "");
		figure_u(f, "limit_bytes", "bytes", true, l->limit);
		figure_u(f, "usage_bytes", "bytes", l->st.usage_known, l->st.usage);
		figure_u(f, "peak_bytes", "bytes", l->st.peak_known, l->st.peak);
		figure_u(f, "limit_hits", "count", l->st.hits_known, l->st.hits);
		figure_u(f, "memory_needed_bytes", "bytes", true, d->needed);
		if (l->st.usage_known)
			evidence(f, "%s of %s = %llu%s", usage_file(m), lname,
				 (unsigned long long)l->st.usage, in->ran ? ", before the run" : "");
		if (l->st.peak_known)
			evidence(f, "%s of %s = %llu", peak_file(m), lname, (unsigned long long)l->st.peak);
		if (l->st.hits_known)
			evidence(f, "%s of %s = %llu", hits_file(m), lname, (unsigned long long)l->st.hits);
		evidence(f, "%s = %llu", l->limit_path, (unsigned long long)l->limit);
		if (l->st.file_known && l->st.anon_known)
			evidence(f, "of it page cache %s, anonymous %s (memory.stat)",
				 size_str(l->st.file, a), size_str(l->st.anon, b));
		evidence(f, "memory_needed_bytes = %llu", (unsigned long long)d->needed);
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
	least = d->lost_pages * page(in) / MEANINGFUL;
	if (least < (1u << 20))
		least = 1u << 20;
	competitors(in, d, "/", least);
	if (d->cause == HS_CAUSE_MACHINE)
		return;		/* find_machine() names them */
	if (!d->ncomp)
		return;
	f = run ? finding(d, "other-activity", HS_SEV_INFO, "Other cgroups grew during the run; the "
			  "largest: %s (+%s).", d->comp[0].cg->name, size_str(d->comp[0].bytes, a))
		: finding(d, "other-activity", HS_SEV_INFO, "The largest users of memory now, which "
			  "compete with the job for it: %s (%s).", d->comp[0].cg->name,
			  size_str(d->comp[0].bytes, a));
	competitor_evidence(in, d, f);
}

static struct hs_finding *finding_of(struct hs_diagnosis *d, const char *id)
{
	for (int i = 0; i < d->nf; i++)
		if (!strcmp(d->f[i].id, id))
			return &d->f[i];
	return NULL;
}

/* The machine was short of memory: global reclaim took the pages, and who crowded it. */
static void find_machine(facts *in, struct hs_diagnosis *d)
{
	struct hs_finding *f;
	struct reclaim r;
	char a[16], b[16];

	if (d->cause != HS_CAUSE_MACHINE)
		return;
	/* MemAvailable too low has its finding already (find_memory): its evidence grows here */
	count_reclaim(in, &r);
	if (!(f = finding_of(d, "machine-memory"))) {
		if (in->mi_ok && in->mi.available < d->needed)
			f = finding(d, "machine-memory", HS_SEV_PROBLEM, "The machine is short of memory: "
				    "%s available, less than the %s the job needs, and reclaim takes the "
				    "job's pages with the rest.", size_str(in->mi.available, a),
				    size_str(d->needed, b));
		else
			f = finding(d, "machine-memory", HS_SEV_PROBLEM, "The machine ran short of memory "
				    "and reclaimed the job's pages with the rest: global reclaim (kswapd, "
				    "direct reclaim) took %llu pages %s%s%s%s.",
				    (unsigned long long)(in->ran && r.global_run ? r.global_run : r.global),
				    in->ran && r.global_run ? "during the run" : "since boot",
				    in->mi_ok ? ", though " : "", in->mi_ok ? size_str(in->mi.available, a) : "",
				    in->mi_ok ? " is available now" : "");
		figure_u(f, "global_reclaim_pages", "pages", r.global_known, r.global + r.global_run);
		figure_u(f, "mem_available_bytes", "bytes", in->mi_ok, in->mi.available);
	}
	if (r.global_known)
		evidence(f, "pgsteal_kswapd + pgsteal_direct = %llu%s, %s (/proc/vmstat: global reclaim "
			 "only, not a cgroup's limit)", (unsigned long long)r.global,
			 in->ran ? " before the run" : "", in->ran ? "" : "since boot");
	if (in->ran && r.global_known)
		evidence(f, "during the run: +%llu", (unsigned long long)r.global_run);
	if (r.damon && r.damon_known)
		evidence(f, "DAMON paged out %llu pages since it started: %s", (unsigned long long)r.damon_pages,
			 r.global > r.damon_pages ? "less than global reclaim" : "not during the run");
	evidence(f, "pages the job lost = %llu", (unsigned long long)d->lost_pages);
	if (d->ncomp) {
		evidence(f, "the largest users of memory%s: %s (%s%s)", d->comp[0].grew ?
			 ", by growth during the run" : "", d->comp[0].cg->name,
			 d->comp[0].grew ? "+" : "", size_str(d->comp[0].bytes, b));
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
static void find_reclaimers(facts *in, struct hs_diagnosis *d)
{
	const struct hs_memcg *m = memcg_before(in);
	struct hs_finding *f;
	char n[32], kd[128];

	for (int i = 0; i < in->ndamon; i++) {
		const struct hs_damon_scheme *s = &in->damon0[i];
		bool cause = s->on && d->cause == HS_CAUSE_DAMON;
		const char *end;
		struct hs_fix *x;

		if (!reclaims(s->action))
			continue;
		if (!s->age_known) {
			f = finding(d, "damon", cause ? HS_SEV_PROBLEM : HS_SEV_INFO, "A DAMON scheme (%s) "
				    "reclaims with action %s; its minimum age could not be read.", s->path,
				    s->action);
			evidence(f, "%s/action = %s", s->path, s->action);
			continue;
		}
		f = finding(d, "damon", cause ? HS_SEV_PROBLEM : HS_SEV_INFO, "A DAMON scheme %s memory "
			    "idle for %.0f s or more (action %s)%s", s->on ? "pages out" :
			    "would page out", s->min_age_s, s->action, !s->on ?
			    ", but its kdamond is off." : cause ? ": it took the job's pages, "
			    "reclaimed while memory was to spare, and it takes them whenever they sit "
			    "idle that long between runs." : s->stats_known && !s->sz_applied ?
			    ": it has paged out nothing since it started." : d->lost_pages &&
			    d->cause != HS_CAUSE_NONE ? ": the figures do not show it took the job's "
			    "pages." : ": a job whose pages sit idle longer between runs loses them to it.");
		figure_d(f, "min_age_seconds", "seconds", true, s->min_age_s);
		figure_u(f, "applied_bytes", "bytes", s->stats_known, s->sz_applied);
		evidence(f, "%s/action = %s", s->path, s->action);
		evidence(f, "%s = %.0f aggregation intervals of %llu us = %.0f s", s->min_age_path,
			 s->min_age_s * 1e6 / (double)s->aggr_us, (unsigned long long)s->aggr_us,
			 s->min_age_s);
		if (s->stats_known)
			evidence(f, "%s/stats/sz_applied = %llu: bytes paged out since its kdamond "
				 "started", s->path, (unsigned long long)s->sz_applied);
		if (!s->on)
			continue;
		if (cause && in->mi_ok)
			evidence(f, "nothing else reclaimed: MemAvailable = %llu and the job's cgroup "
				 "had room, for the %llu bytes the job needs",
				 (unsigned long long)in->mi.available, (unsigned long long)d->needed);
		if (!cause)
			continue;
		/* the kdamond's state file takes "commit" to apply a changed scheme */
		end = strstr(s->path, "/contexts/");
		snprintf(kd, sizeof(kd), "%.*s/state", end ? (int)(end - s->path) : 0, s->path);
		snprintf(n, sizeof(n), "%llu", (unsigned long long)ceil(600e6 / (double)s->aggr_us));
		x = fix_begin(d, "Raise the DAMON scheme's minimum age above the time between the job's "
			      "runs (600 s here, say), so that it stops paging the job's files out.");
		step(x, s->min_age_path, "echo", n, (char *)NULL);
		step(x, kd, "echo", "commit", (char *)NULL);
		fix_end(d, x);
	}
	if (in->balloon > 0) {
		f = finding(d, "balloon", HS_SEV_INFO, "A memory balloon driver is present: the host can "
			    "take memory back from this VM, and the page cache shrinks when it does.");
		evidence(f, "virtio_balloon: %s", in->balloon_where ? in->balloon_where : "");
	}
	if (m && m->reclaim_file) {
		f = finding(d, "memory-reclaim", HS_SEV_INFO, "%s has memory.reclaim: a process writing "
			    "to it (a proactive reclaimer such as senpai) reclaims without leaving "
			    "a trace hotset can see.", m->name);
		evidence(f, "%s/memory.reclaim exists", m->dir);
	}
}

/*
 * dentry and inode reclaim: vm.vfs_cache_pressure's part. Page cache freed
 * with inodes is a cause only when it is a meaningful share of what the
 * job lost: one stolen page is not.
 */
static void find_vfs_cache(facts *in, struct hs_diagnosis *d)
{
	struct hs_finding *f;
	uint64_t steal, scanned;
	const char *when = in->ran ? "during the run" : "since boot";

	if (!in->vm_ok)
		return;
	steal = in->ran ? less(in->vm1.inodesteal, in->vm0.inodesteal) : in->vm0.inodesteal;
	scanned = in->ran ? less(in->vm1.slabs_scanned, in->vm0.slabs_scanned) : in->vm0.slabs_scanned;
	if (d->lost_pages && meaningful(d, steal))
		f = finding(d, "vfs-cache", HS_SEV_INFO, "Reclaiming inodes freed %llu page%s of page "
			    "cache %s, %.0f%% of the %llu the job lost: vm.vfs_cache_pressure plays a "
			    "part.", (unsigned long long)steal, plural(steal), when,
			    100.0 * (double)steal / (double)d->lost_pages,
			    (unsigned long long)d->lost_pages);
	else if (steal)
		f = finding(d, "vfs-cache", HS_SEV_INFO, "Reclaiming inodes freed %llu page%s of page "
			    "cache %s, too few against the %llu the job lost to matter: tuning "
			    "vm.vfs_cache_pressure cannot help.", (unsigned long long)steal,
			    plural(steal), when, (unsigned long long)d->lost_pages);
	else
		f = finding(d, "vfs-cache", HS_SEV_INFO, "Reclaiming inodes freed no page cache %s: "
			    "tuning vm.vfs_cache_pressure cannot help.", when);
	figure_u(f, "inode_steal_pages", "pages", true, steal);
	figure_u(f, "lost_pages", "pages", true, d->lost_pages);
	evidence(f, "pginodesteal + kswapd_inodesteal: %s%llu (/proc/vmstat)", in->ran ? "+" : "",
		 (unsigned long long)steal);
	evidence(f, "slabs_scanned: %s%llu", in->ran ? "+" : "", (unsigned long long)scanned);
	evidence(f, "pages the job lost to reclaim: %llu (%s)", (unsigned long long)d->lost_pages,
		 in->ran ? "its refaults" : "the profile's evicted pages");
}

/* The pages the run read back after reclaim took them before it. */
static void find_lost(facts *in, struct hs_diagnosis *d)
{
	const struct hs_usage *u = in->run;
	const struct hs_memcg *m0 = memcg_before(in), *m = memcg_now(in);
	struct hs_finding *f;
	char a[16];
	static const char *const by[] = {
		[HS_CAUSE_SHARED] = "by other processes under its memory limit, which was full",
		[HS_CAUSE_MACHINE] = "by reclaim, the machine being short of memory",
		[HS_CAUSE_DAMON] = "while its cgroup had room and the machine memory to spare: by a "
				   "proactive reclaimer (DAMON)",
		[HS_CAUSE_UNKNOWN] = "by reclaim; which reclaimer, the figures do not tell",
	};

	/* the limit's own finding says what it evicts; a cold start lost nothing */
	if (!in->ran || d->cause == HS_CAUSE_NONE || d->cause == HS_CAUSE_LIMIT)
		return;
	f = finding(d, "evicted-before-run", HS_SEV_PROBLEM, "%s of what the job read from the disk "
		    "(%.0f%%) had been in the page cache and was evicted before the run, %s.",
		    size_str(d->refaulted * page(in), a),
		    100.0 * (double)(d->refaulted * page(in)) / (double)u->read_bytes_disk, by[d->cause]);
	figure_u(f, "refaulted_pages", "pages", true, d->refaulted);
	figure_u(f, "disk_read_bytes", "bytes", true, u->read_bytes_disk);
	if (d->refaults_known)
		evidence(f, "workingset_refault_file of %s: +%llu pages (memory.stat)", m->name,
			 (unsigned long long)d->refaulted);
	else
		evidence(f, "workingset_refault_file: +%llu pages (/proc/vmstat: the whole machine)",
			 (unsigned long long)d->refaulted);
	evidence(f, "disk_read_bytes = %llu", (unsigned long long)u->read_bytes_disk);
	if (m0 && m0->st.usage_known)
		evidence(f, "%s before the run: %llu used of %s", m0->name,
			 (unsigned long long)m0->st.usage, m0->lowest >= 0 ?
			 size_str(m0->limit, a) : "no limit");
	if (in->mi_ok)
		evidence(f, "MemAvailable before the run = %llu", (unsigned long long)in->mi.available);
}

/* ---- fixes ----------------------------------------------------------------------- */

/* keep where the job's pages are taken from under it, by others or a reclaimer */
static void recommend_keep(facts *in, struct hs_diagnosis *d)
{
	const struct hs_memcg *m = memcg_before(in);
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
	size_arg(d->need.read, sz, sizeof(sz));
	if (d->cause == HS_CAUSE_DAMON) {
		x = fix_begin(d, "Keep the working set resident: hotset keep reads back what the "
			      "reclaimer pages out, at most --interval later (10 s by default).");
		step(x, NULL, "hotset", "keep", "--budget", sz, in->profile, (char *)NULL);
		fix_end(d, x);
		return;
	}
	hs_memcg_level_name(m, d->cause_level, lname, sizeof(lname));
	x = fix_begin(d, "Keep the working set resident in %s while the others run: hotset keep "
		      "reads back what they evict. Run it in that cgroup, where the job's pages are "
		      "charged.", m->name);
	step(x, NULL, "hotset", "keep", "--budget", sz, in->profile, (char *)NULL);
	fix_end(d, x);
	size_arg(m->level[d->cause_level].limit + d->needed, sz, sizeof(sz));
	x = fix_begin(d, "Or make room in %s for both: raise its limit by the job's %s (or run the "
		      "others in a memory cgroup of their own).", lname, size_str(d->needed, a));
	step(x, m->level[d->cause_level].limit_path, "echo", sz, (char *)NULL);
	fix_end(d, x);
}

/*
 * The fixes for pages that are not there: warm them before the job, keep
 * their tree across reboots (the directory that holds most of them, as
 * its systemd unit, only for an absolute path that makes a unit name),
 * keep them resident where this hotset has keep and nobody takes them.
 */
static void recommend_warm(facts *in, struct hs_diagnosis *d)
{
	bool keep = in->have_keep && d->cause != HS_CAUSE_SHARED && d->cause != HS_CAUSE_DAMON;
	char sz[32], unit[512], esc[400];
	struct hs_fix *x;

	x = fix_begin(d, "Read the working set into the page cache before the job runs (at login, "
		      "or from a timer).");
	step(x, NULL, "hotset", "warm", "-p", in->profile, (char *)NULL);
	fix_end(d, x);
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

		x = fix_begin(d, "-");
		step(x, NULL, "systemctl", "enable", "--now", (char *)NULL);
		for (size_t k = 0; k < t->ncover; k++) {
			if (hs_systemd_escape_path(t->cover[k].name, esc, sizeof(esc)) ||
			    (size_t)snprintf(unit, sizeof(unit), "hotset-persist@%s.service", esc) > 255)
				continue;
			step_word(x, unit);
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
			fix_end(d, x);
	}
	/* keep comes in its own time: offer it only where this hotset has it */
	if (keep) {
		size_arg(d->need.read, sz, sizeof(sz));
		x = fix_begin(d, "Keep the working set resident as the job's memory needs it.");
		step(x, NULL, "hotset", "keep", "--budget", sz, in->profile, (char *)NULL);
		fix_end(d, x);
	}
}

/* ---- the diagnosis --------------------------------------------------------------- */

const struct hs_finding *hs_diag_finding(const struct hs_diagnosis *d, const char *id)
{
	return finding_of((struct hs_diagnosis *)d, id);
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
	d->working_set = (in->curve_ok ? in->curve_pages : in->pages) * page(in);
	d->needed = hs_rerun_need(in->curve_ok ? in->rerun_zero : in->pages, page(in),
				  in->ran ? in->run : in->recorded, &d->need);
	d->needed_source = in->curve_ok ? "curve" : "profile";
	/* what could not be seen and where the job's memory was looked at come first */
	find_unseen(in, d);
	find_cgroup(in, d);
	/* the cause before the findings, which say whether they are it */
	find_cause(in, d);
	find_io(in, d);
	find_device(in, d);
	find_memory(in, d);
	find_dirs(in, d);
	find_residency(in, d);
	find_lost(in, d);
	/* causes only when the job's pages were lost, or it waited */
	lost = io_bound(in) || !all_resident(in) || many_evicted(in);
	if (lost) {
		recommend_keep(in, d);
		recommend_warm(in, d);
		find_others(in, d);
		find_machine(in, d);
		find_reclaimers(in, d);
		find_vfs_cache(in, d);
	}
	if (hs_diag_nothing_to_fix(d))
		finding(d, "nothing-to-fix", HS_SEV_INFO, "Nothing to fix: %s.", in->ran ?
			"the job did not wait for the disk, and its pages are cached" :
			"the profile's pages are all in the page cache");
	else if (!d->seen_enough && !lost && !io_bound(in))
		finding(d, "inconclusive", HS_SEV_UNSEEN, "No conclusion: nothing calls for a fix in "
			"the %.0f%% of the working set that could be seen, and the rest could not be.",
			100 * d->seen_share);
}
