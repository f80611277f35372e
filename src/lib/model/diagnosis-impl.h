/*
 * diagnosis-impl.h - the parts of the diagnosis (diagnosis.h) that its
 * files share, private to them:
 *
 *   diagnosis.c         the facts as the findings ask for them, who
 *                       reclaimed, the cause, the findings about the job
 *                       (the run, its memory, its files, their residency),
 *                       hs_diagnose() (the order and the causes: its comment)
 *   diagnosis-others.c  the findings about the others (cgroups beside the
 *                       job, the machine, the reclaimers, the VFS caches,
 *                       the pages lost) and the fixes
 *   diagnosis-data.c    findings, figures and fixes as data: how each is
 *                       written into a struct hs_diagnosis
 *
 * The names are dg_*: they link into the library, static no longer.
 */
#ifndef HOTSET_DIAGNOSIS_IMPL_H
#define HOTSET_DIAGNOSIS_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/* ---- findings, figures, fixes as data (diagnosis-data.c) ------------------------ */

/*
 * A new finding of d (past HS_DIAG_FINDINGS: a spare one, written and
 * never shown), its evidence and figures; a fix begun, its steps, ended
 * (a fix whose words did not fit is not offered).
 */
struct hs_finding *dg_finding(struct hs_diagnosis *d, const char *id, enum hs_severity sev,
			      const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void dg_evidence(struct hs_finding *f, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void dg_figure_u(struct hs_finding *f, const char *name, const char *unit, bool known, uint64_t v);
void dg_figure_d(struct hs_finding *f, const char *name, const char *unit, bool known, double v);
struct hs_fix *dg_fix_begin(struct hs_diagnosis *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void dg_step(struct hs_fix *x, const char *output, ...);
void dg_step_word(struct hs_fix *x, const char *a);
void dg_fix_end(struct hs_diagnosis *d, struct hs_fix *x);
void dg_size_arg(uint64_t bytes, char *buf, size_t size);
const char *dg_size_str(uint64_t bytes, char buf[16]);
const char *dg_memory_str(uint64_t pages, uint64_t page_size, char buf[32]);
const char *dg_plural(uint64_t n);
uint64_t dg_less(uint64_t a, uint64_t b);

/* ---- the facts (diagnosis.c) ------------------------------------------------- */

uint64_t dg_page(facts *in);
const struct hs_memcg *dg_memcg_before(facts *in);
const struct hs_memcg *dg_memcg_now(facts *in);
bool dg_near_limit(uint64_t limit, uint64_t v);
const char *dg_usage_file(const struct hs_memcg *m);
const char *dg_peak_file(const struct hs_memcg *m);
const char *dg_hits_file(const struct hs_memcg *m);
bool dg_reclaims(const char *action);
void dg_count_reclaim(facts *in, struct reclaim *r);
bool dg_meaningful(const struct hs_diagnosis *d, uint64_t v);

/* ---- the others and the fixes (diagnosis-others.c) ------------------------------ */

void dg_find_others(facts *in, struct hs_diagnosis *d);
struct hs_finding *dg_finding_of(struct hs_diagnosis *d, const char *id);
void dg_find_machine(facts *in, struct hs_diagnosis *d);
void dg_find_reclaimers(facts *in, struct hs_diagnosis *d);
void dg_find_vfs_cache(facts *in, struct hs_diagnosis *d);
void dg_find_peer(facts *in, struct hs_diagnosis *d);
void dg_find_lost(facts *in, struct hs_diagnosis *d);
void dg_recommend_keep(facts *in, struct hs_diagnosis *d);
void dg_recommend_warm(facts *in, struct hs_diagnosis *d);

#endif
