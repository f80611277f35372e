/*
 * diagnosis.h - why a job waits for the disk, as data: doctor's reasoning.
 *
 * The caller gathers the facts (doctor.h does, for doctor): the run as
 * record measured it (or, for a profile alone, what its header
 * recorded), the profile's curve, residency and largest directories, the
 * machine's memory, the memory cgroup diagnosed with every limit above
 * it, every cgroup's memory, the reclaimers. hs_diagnose() turns them
 * into findings, each with an id, a severity, the figures it rests on
 * (named, for scripts), its evidence in words, and fixes, each a command
 * as argv. The text, JSON and HTML reports render the same findings;
 * nothing here reads a file or prints.
 *
 * Strings in findings are bytes as read: a path may hold any byte but NUL
 * (an escape sequence, a "$(...)"). Whoever shows them escapes them, and
 * a command is only ever built from its argv, quoted.
 */
#ifndef HOTSET_DIAGNOSIS_H
#define HOTSET_DIAGNOSIS_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "kernel/memory.h"
#include "model/need.h"
#include "cache/residency.h"
#include "profile/tops.h"
#include "job/peer.h"
#include "job/usage.h"

/* Why the job's pages were not in the page cache, as far as the figures tell. */
enum hs_cause {
	HS_CAUSE_NONE,		/* nothing lost to reclaim, or never cached (cold) */
	HS_CAUSE_LIMIT,		/* a memory limit over the job is below what a re-run needs */
	HS_CAUSE_SHARED,	/* others under a memory limit over the job filled it */
	HS_CAUSE_MACHINE,	/* the machine was short of memory: global reclaim */
	HS_CAUSE_DAMON,		/* memory to spare: DAMON's pageout took them */
	HS_CAUSE_UNKNOWN,	/* reclaimed, by whom the figures do not say */
};

/* The id of the finding that names the cause ("memory-limit"...), NULL for none. */
const char *hs_cause_id(enum hs_cause c);

enum hs_severity {
	HS_SEV_INFO,		/* a fact, for the record */
	HS_SEV_PROBLEM,		/* calls for a fix */
	HS_SEV_UNSEEN,		/* a part that could not be seen: the rest rests on the others */
};

/* "info", "problem", "unseen". */
const char *hs_severity_name(enum hs_severity s);

/* Where the memory cgroup diagnosed comes from. */
enum hs_cgroup_source {
	HS_CG_RUN,		/* the run's: the job ran in it, under doctor */
	HS_CG_PROFILE,		/* the profile's memory-cgroup: the job was charged there */
	HS_CG_OPTION,		/* the caller's choice (doctor --cgroup) */
	HS_CG_OWN,		/* the caller's own: nothing says where the job ran */
	HS_CG_SERVICE,		/* the service's, which did the job's reading under doctor */
};

/* "run", "profile", "option", "own". */
const char *hs_cgroup_source_name(enum hs_cgroup_source s);

/* Everything hs_diagnose() reads; the caller owns all it points to. */
struct hs_diag_facts {
	const char *profile;		/* its path, as the fixes name it */
	uint32_t page_size;

	/* the run (ran), or what the profile recorded of one (NULL: nothing) */
	bool ran;
	const struct hs_usage *run;
	/* "--cgroup X" when run is a service's figures in the window of the job, or NULL */
	const char *service;
	const struct hs_usage *recorded;

	/* the profile: counts, largest directories, curve, residency now */
	uint64_t files, pages, ranges;
	const struct hs_tops *tops;	/* or NULL */
	bool curve_ok;			/* it has a trace: the two below are known */
	uint64_t curve_pages;		/* distinct pages of the trace */
	uint64_t rerun_zero;		/* the least cache, in pages, at which a re-run reads the least */
	const char *curve_model;	/* the model of that curve (hs_curve_model_name()) */
	const struct hs_residency_total *res;

	/* the machine: before the run (now, without one), and after it */
	bool mi_ok;
	struct hs_meminfo mi;
	bool vm_ok;
	struct hs_vmstat vm0, vm1;

	/*
	 * The memory cgroup diagnosed: memcg0 before the run (or now),
	 * memcg1 after it (NULL: no run); memcg_rc the -errno of finding it.
	 */
	enum hs_cgroup_source cg_source;
	int memcg_rc;
	const struct hs_memcg *memcg0, *memcg1;

	/* what the profile recorded of the job's cgroup (rec_cgroup NULL: nothing) */
	int rec_version;
	const char *rec_cgroup;
	bool rec_limit_known;
	uint64_t rec_limit;		/* UINT64_MAX: none */
	const char *rec_limit_holder;	/* the cgroup whose limit it is, or NULL */

	/* every cgroup's memory, before the run (or now) and after: n < 0 is -errno */
	const struct hs_memcg_cache *cg0, *cg1;
	ssize_t ncg0, ncg1;

	/* DAMON's schemes, before the run (or now) and after it (the same, in order; or NULL) */
	int ndamon;
	const struct hs_damon_scheme *damon0, *damon1;

	/*
	 * The other ends of the run's sockets (hs_peer_end() of a probe begun
	 * with the run's cgroup.procs), or NULL: not watched; and the job's
	 * command, for the fix that measures the peer (NULL: no fix).
	 */
	const struct hs_peers *peers;
	char *const *argv;

	int balloon;			/* hs_balloon_probe() */
	const char *balloon_where;
	bool have_keep;			/* hotset keep can be offered */
};

#define HS_DIAG_FINDINGS 28
#define HS_DIAG_EVIDENCE 10
#define HS_DIAG_FIGURES 6
#define HS_DIAG_FIXES 8
#define HS_DIAG_UNSEEN 16
#define HS_DIAG_COMPETITORS 3
#define HS_FIX_STEPS 2
#define HS_FIX_WORDS 12	/* systemctl enable --now and a unit per directory (HS_TOPS_COVER_MAX) */

/* A figure a finding rests on, for scripts: "io_wait_seconds" 2.5 "seconds". */
struct hs_figure {
	const char *name;		/* a static string */
	const char *unit;		/* "bytes", "pages", "seconds", "share", "count" */
	bool known;
	bool integer;			/* u holds it; else d */
	uint64_t u;
	double d;
};

struct hs_finding {
	const char *id;
	enum hs_severity severity;
	char text[1024];
	int nev;
	char evidence[HS_DIAG_EVIDENCE][512];
	int nfig;
	struct hs_figure fig[HS_DIAG_FIGURES];
};

/*
 * One command of a fix: argv[0..argc), and, when output is not NULL, its
 * standard output written to that file (a limit set with "echo 51M >
 * FILE"). The strings are the fix's own.
 */
struct hs_fix_step {
	int argc;
	const char *argv[HS_FIX_WORDS + 1];
	const char *output;
};

/* A fix: what to do and why, and its commands, run in order while each succeeds. */
struct hs_fix {
	char text[1024];
	int nsteps;			/* 0: no command (more memory for a VM) */
	struct hs_fix_step step[HS_FIX_STEPS];
	size_t used;			/* of buf */
	char buf[2 * PATH_MAX + 512];	/* the words */
};

/* A source that could not be read, and why. */
struct hs_unseen {
	char source[256];
	char reason[512];
};

/* A cgroup that competes with the job for memory, and by how much. */
struct hs_competitor {
	const struct hs_memcg_cache *cg;	/* in the facts' cg0 or cg1 */
	uint64_t bytes;			/* its memory (or its growth during the run) */
	bool grew;			/* bytes is its growth during the run */
};

struct hs_diagnosis {
	/* the figures the findings rest on */
	uint64_t working_set;		/* the distinct pages the job read, in bytes */
	uint64_t needed;		/* need.total */
	struct hs_rerun_need need;
	const char *needed_source;	/* "curve" or "profile" */
	enum hs_cause cause;
	int cause_level;		/* the level of the memcg whose limit is at fault, or -1 */
	bool refaults_known;		/* refaulted counts the cgroup's refaults during the run */
	uint64_t refaulted;		/* pages the run read back that reclaim had evicted */
	uint64_t lost_pages;		/* the job's pages lost to reclaim: refaulted, or evicted (-p) */
	uint64_t unknown_pages;		/* the profile's pages whose residency the kernel would not tell */
	uint64_t missing_pages;		/* in files gone, changed or not examined */
	double seen_share;		/* of the profile's pages, those whose residency is known */
	bool seen_enough;		/* all but a page in a hundred: a conclusion can be drawn */
	int ncomp;
	struct hs_competitor comp[HS_DIAG_COMPETITORS];
	char comp_where[PATH_MAX];	/* the cgroup they compete under ("/" the machine), or "" */

	int nf;
	struct hs_finding f[HS_DIAG_FINDINGS];
	int nfix;
	struct hs_fix fix[HS_DIAG_FIXES];
	int nunseen;
	struct hs_unseen unseen[HS_DIAG_UNSEEN];
};

/*
 * Record a source that could not be read, before hs_diagnose(): the
 * reports list them first, and no finding rests on them.
 */
void hs_diag_unseen(struct hs_diagnosis *d, const char *source, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Diagnose: fill d's figures, findings and fixes from the facts (d zeroed
 * by the caller, or holding only what hs_diag_unseen() added).
 */
void hs_diagnose(const struct hs_diag_facts *in, struct hs_diagnosis *d);

/* No finding calls for a fix, and enough was seen to say so. */
bool hs_diag_nothing_to_fix(const struct hs_diagnosis *d);

/* The finding with that id, or NULL. */
const struct hs_finding *hs_diag_finding(const struct hs_diagnosis *d, const char *id);

/*
 * The systemd unit instance name of path, as systemd-escape -p gives it:
 * "/srv/my db" is "srv-my\x20db". Returns 0, or -EINVAL for a path that
 * is not absolute or not normalised ("..": systemd refuses it), or
 * -ENAMETOOLONG when it does not fit in size.
 */
int hs_systemd_escape_path(const char *path, char *out, size_t size);

#endif
