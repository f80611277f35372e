/*
 * cmd-doctor.c - hotset doctor: why a job waits for the disk, in plain
 * words: each finding with the figures it rests on, each fix a command.
 *
 * It gathers facts first (the run as record measures it, the profile's
 * curve, residency and largest directories, the machine's memory, its
 * cgroups and reclaimers), then turns them into findings. A source that
 * cannot be read is said, with the privilege it needs; a finding is only
 * made from what was read.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chart.h"
#include "hotset/curve.h"
#include "hotset/memory.h"
#include "hotset/residency.h"
#include "hotset/tops.h"
#include "operands.h"
#include "options.h"
#include "record-run.h"
#include "usage-report.h"

static const char usage[] =
	"usage: hotset doctor [-q] [-J] [-o REPORT.html] [--profile-output PROFILE]\n"
	"                     [--backend auto|ptrace|bpf] [--] CMD [ARGS...]\n"
	"       hotset doctor [-q] [-J] [-o REPORT.html] -p PROFILE\n"
	"\n"
	"Say why a job waits for the disk, and what to do about it. The first form\n"
	"records CMD as 'hotset record --trace' does and times it, then diagnoses\n"
	"the run; the second diagnoses an earlier profile against what is resident\n"
	"now. Each finding comes with the figures it rests on, each fix with a\n"
	"command to paste; what could not be read is said, with the privilege it\n"
	"needs. The diagnosis goes to standard output once CMD has ended.\n"
	"\n"
	"  -p, --profile PROFILE  diagnose this profile (recorded with --trace for the\n"
	"                         memory a re-run needs), without running anything\n"
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
	"error, a malformed profile, or a report that could not be written; 125,\n"
	"126, 127 when CMD did not run (as record).\n";

const struct cmd cmd_doctor;

#define TIMELINE_POINTS 600	/* intervals in the HTML timeline: a minute at 100 ms */
#define MAX_FINDINGS 24
#define MAX_EVIDENCE 8
#define MAX_RECS 8
#define MAX_NOT_READ 12
#define MAX_DAMON 16
#define IO_BOUND 0.10		/* a job waiting this share of its time is worth fixing */
#define SMALL_READ 65536	/* average bytes per read below which latency, not bandwidth, rules */
#define REFAULTED 0.10		/* this share of the disk reads refaulted: pages lost before the run */

/* Why the job's pages were not in the page cache, as far as the figures tell. */
enum cause {
	CAUSE_NONE,		/* nothing lost, or never cached (cold) */
	CAUSE_LIMIT,		/* its memory limit is below what a re-run needs */
	CAUSE_SHARED,		/* others in the same memory limit filled it */
	CAUSE_MACHINE,		/* the machine is short of memory */
	CAUSE_DAMON,		/* memory to spare: a proactive reclaimer took them */
	CAUSE_UNKNOWN,		/* reclaimed, by whom the figures do not say */
};

static const char *const cause_id[] = {
	[CAUSE_NONE] = NULL, [CAUSE_LIMIT] = "memory-limit", [CAUSE_SHARED] = "other-activity",
	[CAUSE_MACHINE] = "machine-memory", [CAUSE_DAMON] = "damon", [CAUSE_UNKNOWN] = "unknown",
};

struct finding {
	const char *id;
	bool problem;		/* calls for a fix */
	char text[640];
	char evidence[MAX_EVIDENCE][320];
	int nev;
};

struct recommendation {
	char text[480];
	char command[PATH_MAX + 256];	/* "" for none */
};

struct not_read {
	char source[160];
	char reason[320];
};

struct doctor {
	bool json, quiet;
	const char *html, *profile;
	char **argv;			/* CMD, or NULL with -p */
	uint32_t ps;

	/* the run */
	bool ran;
	struct record_run run;
	struct hs_usage_timeline tl;
	bool vm_ok;
	struct hs_vmstat vm0, vm1;
	struct hs_memcg_cache *cg0, *cg1;
	ssize_t ncg0, ncg1;

	/* the profile */
	uint64_t files, pages, ranges;
	struct hs_tops tops;
	bool curve_ok;
	struct hs_curve c;
	struct hs_curve_summary cs;
	struct hs_residency_total res;
	unsigned skipped;

	/* the machine */
	bool mi_ok;
	struct hs_meminfo mi;
	int memcg_rc, memcg0_rc;
	struct hs_memcg memcg;
	struct hs_memcg memcg0;		/* before the run */
	int ndamon;
	struct hs_damon_scheme damon[MAX_DAMON];
	int balloon;
	char balloon_where[PATH_MAX + 64];

	/* what the profile's header says of its recorded run (doctor -p) */
	struct hs_usage recorded;

	/* the diagnosis */
	uint64_t working_set, needed;	/* needed: need.total */
	struct hs_rerun_need need;
	const char *needed_source;
	enum cause cause;
	bool refaults_known;		/* refaulted counts the job's cgroup's refaults during the run */
	uint64_t refaulted;
	struct finding f[MAX_FINDINGS];
	int nf;
	struct recommendation r[MAX_RECS];
	int nr;
	struct not_read nrd[MAX_NOT_READ];
	int nnr;
};

static struct finding *finding(struct doctor *d, const char *id, bool problem, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void evidence(struct finding *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void recommend(struct doctor *d, const char *command, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void not_read(struct doctor *d, const char *source, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static struct finding *finding(struct doctor *d, const char *id, bool problem, const char *fmt, ...)
{
	static struct finding spare;	/* past the last: written, never shown */
	struct finding *f = d->nf < MAX_FINDINGS ? &d->f[d->nf++] : &spare;
	va_list ap;

	memset(f, 0, sizeof(*f));
	f->id = id;
	f->problem = problem;
	va_start(ap, fmt);
	vsnprintf(f->text, sizeof(f->text), fmt, ap);
	va_end(ap);
	return f;
}

static void evidence(struct finding *f, const char *fmt, ...)
{
	va_list ap;

	if (f->nev >= MAX_EVIDENCE)
		return;
	va_start(ap, fmt);
	vsnprintf(f->evidence[f->nev++], sizeof(f->evidence[0]), fmt, ap);
	va_end(ap);
}

static void recommend(struct doctor *d, const char *command, const char *fmt, ...)
{
	struct recommendation *r;
	va_list ap;

	if (d->nr >= MAX_RECS)
		return;
	r = &d->r[d->nr++];
	snprintf(r->command, sizeof(r->command), "%s", command ? command : "");
	va_start(ap, fmt);
	vsnprintf(r->text, sizeof(r->text), fmt, ap);
	va_end(ap);
}

static void not_read(struct doctor *d, const char *source, const char *fmt, ...)
{
	struct not_read *n;
	va_list ap;

	if (d->nnr >= MAX_NOT_READ)
		return;
	n = &d->nrd[d->nnr++];
	snprintf(n->source, sizeof(n->source), "%s", source);
	va_start(ap, fmt);
	vsnprintf(n->reason, sizeof(n->reason), fmt, ap);
	va_end(ap);
}

/* "needs root" for a permission error, else the error itself. */
static const char *why(int err)
{
	return err == -EACCES || err == -EPERM ? "permission denied: it needs root" : strerror(-err);
}

static char *size_str(uint64_t bytes, char buf[16])
{
	return (char *)human_size(bytes, buf);
}

/* A size for a command line: whole MiB, rounded up ("1536M"). */
static void size_arg(uint64_t bytes, char *buf, size_t size)
{
	snprintf(buf, size, "%lluM", (unsigned long long)((bytes + (1u << 20) - 1) >> 20));
}

/* ---- facts ------------------------------------------------------------------ */

static void read_machine(struct doctor *d)
{
	int rc;

	if ((rc = hs_meminfo_read(&d->mi)))
		not_read(d, "/proc/meminfo", "%s", why(rc));
	d->mi_ok = !rc;
	if ((d->memcg_rc = hs_memcg_of(0, &d->memcg)))
		not_read(d, "memory cgroup (/proc/self/cgroup)", "%s", d->memcg_rc == -ENOENT ?
			 "no memory controller is mounted (cgroup v1 memory or cgroup2)" :
			 why(d->memcg_rc));
	else if (!d->memcg.limit_known)
		not_read(d, d->memcg.version == 1 ? "memory.limit_in_bytes" : "memory.max",
			 "of %s: it cannot be read", d->memcg.dir);
	d->memcg0_rc = d->memcg_rc;
	d->memcg0 = d->memcg;
	rc = hs_damon_schemes(d->damon, MAX_DAMON);
	if (rc < 0 && rc != -ENOENT)
		not_read(d, "DAMON schemes (/sys/kernel/mm/damon/admin)", "%s", why(rc));
	d->ndamon = rc > 0 ? rc : 0;
	d->balloon = hs_balloon_probe(d->balloon_where, sizeof(d->balloon_where));
	if (d->balloon < 0)
		not_read(d, "a balloon driver (/proc/modules, /sys/bus/virtio/drivers)", "%s",
			 why(d->balloon));
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

/* The profile: its largest directories, its curve, what of it is resident now. */
static int read_profile(struct doctor *d)
{
	struct hs_profile_reader *rd;
	struct hs_profile_item it;
	struct hs_error err = { 0 };
	struct hs_curve_opts co;
	struct operands ops = { .cmd = &cmd_doctor, .profile = d->profile, .quiet = true };
	int rc;

	if ((rc = hs_profile_open(d->profile, &rd, &err)))
		return err.line ? error("%s:%u: %s", d->profile, err.line, err.msg) :
				  error("%s: %s", d->profile, err.msg[0] ? err.msg : strerror(-rc));
	d->ps = hs_profile_header(rd)->page_size;
	{
		const struct hs_profile_header *h = hs_profile_header(rd);

		d->recorded.io_known = h->write_bytes_known;
		d->recorded.write_bytes_disk = h->write_bytes;
		d->recorded.max_rss_bytes = h->max_rss_known ? h->max_rss : 0;
	}
	while ((rc = hs_profile_next(rd, &it, &err)) > 0 && it.kind == HS_ITEM_FILE) {
		d->files++;
		d->pages += it.file.pages;
		d->ranges += it.file.nranges;
		if (hs_tops_add(&d->tops, &it.file)) {
			rc = -ENOMEM;
			break;
		}
	}
	if (rc >= 0)
		rc = hs_tops_finish(&d->tops, rd, &err);
	if (rc >= 0) {
		hs_curve_model_opts(&co);	/* the model curve and run use */
		rc = hs_curve_from_profile(rd, &co, &d->c, &err);
		d->curve_ok = !rc;
		if (rc == -ENODATA) {
			not_read(d, "the profile's access trace", "%s has none: record with --trace "
				 "for the memory a re-run needs", d->profile);
			rc = 0;
		}
	}
	hs_profile_close(rd);
	if (rc < 0)
		return err.line ? error("%s:%u: %s", d->profile, err.line, err.msg) :
				  error("%s: %s", d->profile, err.msg[0] ? err.msg : strerror(-rc));
	if (d->curve_ok)
		hs_curve_summarize(&d->c, &d->cs);
	/* what is resident now, as status -p counts it */
	if ((rc = operands_open(&ops)))
		return -1;
	rc = operands_foreach(&ops, residency_one, d);
	d->skipped += ops.skipped;
	operands_close(&ops);
	if (d->res.unknown_files)
		not_read(d, "residency", "of %llu file%s of the profile: the kernel tells it only to "
			 "who may write a file (its owner, or root)",
			 (unsigned long long)d->res.unknown_files, plural(d->res.unknown_files));
	if (d->res.known.pages && d->res.method != HS_RES_CACHESTAT)
		not_read(d, "evicted pages", "cachestat(2) is missing (Linux 6.5 and later have it): "
			 "which pages were evicted since they were read is unknown");
	return rc < 0 ? -1 : 0;
}

/* ---- findings ---------------------------------------------------------------- */

static bool io_known(const struct doctor *d)
{
	return d->ran && d->run.u.pressure != HS_PRESSURE_UNKNOWN && d->run.u.wall_s > 0;
}

static double io_fraction(const struct doctor *d)
{
	return d->run.u.io_wait_s / d->run.u.wall_s;
}

static bool io_bound(const struct doctor *d)
{
	return io_known(d) && io_fraction(d) >= IO_BOUND && d->run.u.io_known &&
	       d->run.u.read_bytes_disk > 0;
}

static void find_io(struct doctor *d)
{
	const struct hs_usage *u = &d->run.u;
	struct finding *f;
	char a[16];

	if (!d->ran)
		return;
	if (!io_known(d)) {
		f = finding(d, "io-wait", false, "The time the job waited on I/O is unknown%s%s",
			    u->nnotes ? ": " : ".", u->nnotes ? u->notes[0] : "");
		evidence(f, "wall_seconds = %.3f", u->wall_s);
		return;
	}
	f = finding(d, "io-wait", io_bound(d), "The job spent %.0f%% of its wall time waiting on "
		    "I/O (%.2f s of %.2f s)%s", 100 * io_fraction(d), u->io_wait_s, u->wall_s,
		    io_bound(d) ? ": it is I/O-bound." : ": I/O is not what it waits for.");
	evidence(f, "io_wait_seconds = %.3f (PSI \"some\" of the job's cgroup)", u->io_wait_s);
	evidence(f, "wall_seconds = %.3f", u->wall_s);
	if (u->io_known)
		evidence(f, "disk_read_bytes = %llu (%s read from the disk)",
			 (unsigned long long)u->read_bytes_disk, size_str(u->read_bytes_disk, a));
	evidence(f, "cache_read_bytes = unknown: no counter tells the bytes served from the page "
		 "cache (see hotset-time(1))");
	evidence(f, "user_seconds = %.3f, sys_seconds = %.3f", u->user_s, u->sys_s);
}

static void find_device(struct doctor *d)
{
	const struct hs_usage *u = &d->run.u;
	uint64_t reqs, avg;
	struct finding *f;
	char a[16], b[16];
	bool counted = u->read_ios_known;
	double rate;

	if (!io_known(d) || !u->io_known || !u->read_bytes_disk || u->io_wait_s <= 0)
		return;
	reqs = counted ? u->read_ios : d->ranges;
	if (!reqs)
		return;
	rate = (double)u->read_bytes_disk / u->io_wait_s;
	avg = u->read_bytes_disk / reqs;
	f = finding(d, "device", false, "The disk delivered %s/s while the job waited, in %s%llu "
		    "reads of %s on average: %s.", size_str((uint64_t)rate, a),
		    counted ? "" : "about ", (unsigned long long)reqs, size_str(avg, b),
		    avg < SMALL_READ ? "small reads, so the number of reads (their latency) bounds "
		    "it, not bandwidth" : "large reads, so bandwidth bounds it");
	evidence(f, "disk_read_bytes / io_wait_seconds = %.0f bytes/s", rate);
	if (counted)
		evidence(f, "read_requests = %llu (io.stat rios of the job's cgroup)",
			 (unsigned long long)reqs);
	else
		evidence(f, "read_requests = %llu, an estimate: the profile's page ranges, each a "
			 "contiguous run read (no count of requests could be read: the job's cgroup "
			 "has no io.stat)", (unsigned long long)reqs);
}

static bool limited(const struct hs_memcg *m)
{
	return m->limit_known && m->limit != UINT64_MAX;
}

static bool near_limit(const struct hs_memcg *m, uint64_t v)
{
	return v >= m->limit - m->limit / 10;
}

/*
 * Used to within a tenth of its limit, now or at its peak (a competitor
 * that filled it and left leaves its peak): what it charged was reclaimed.
 */
static bool memcg_full(const struct hs_memcg *m)
{
	return limited(m) && ((m->usage_known && near_limit(m, m->usage)) ||
			      (m->peak_known && near_limit(m, m->peak)));
}

static void find_memory(struct doctor *d)
{
	const struct hs_memcg *m = &d->memcg;
	struct finding *f;
	char a[16], b[16], c[16], e[16], g[16], cmd[PATH_MAX + 128], sz[32], rest[96];

	if (d->need.written_known && d->need.anon_known)
		snprintf(rest, sizeof(rest), ", %s for what it writes and %s of its own (peak RSS)",
			 size_str(d->need.written, e), size_str(d->need.anon, g));
	else
		snprintf(rest, sizeof(rest), " (what it writes and its own memory are not known: "
			 "no run, and not in the profile)");
	f = finding(d, "working-set", false, "The job's working set is %s; a warm re-run needs "
		    "%s of memory to read nothing from the disk: %s of page cache for what it "
		    "reads%s%s.", size_str(d->working_set, a), size_str(d->needed, b),
		    size_str(d->need.read, c),
		    d->curve_ok ? "" : " (no trace: taken as all of the profile's pages)", rest);
	evidence(f, "working_set_bytes = %llu", (unsigned long long)d->working_set);
	evidence(f, "memory_needed_bytes = %llu = read %llu + written %llu + RSS %llu",
		 (unsigned long long)d->needed, (unsigned long long)d->need.read,
		 (unsigned long long)d->need.written, (unsigned long long)d->need.anon);
	if (d->curve_ok)
		evidence(f, "read: the least cache at which a re-run reads the least (nothing, most "
			 "often), by the curve of the %s model", hs_curve_model_name(&d->c));
	else
		evidence(f, "read: the profile's pages");
	if (d->need.written_known)
		evidence(f, "written: the bytes the job dirtied (write_bytes of /proc/PID/io%s): new "
			 "and temporary files take page cache too, charged to its cgroup",
			 d->ran ? "" : ", of the recorded run: the profile's write-bytes");
	if (d->need.anon_known)
		evidence(f, "RSS: %llu, the peak of its largest process",
			 (unsigned long long)d->need.anon);
	if (d->mi_ok) {
		evidence(f, "MemAvailable = %llu, Cached = %llu, MemTotal = %llu (/proc/meminfo)",
			 (unsigned long long)d->mi.available, (unsigned long long)d->mi.cached,
			 (unsigned long long)d->mi.total);
		if (d->needed > d->mi.total) {
			f = finding(d, "machine-memory", true, "A warm re-run needs %s, more than "
				    "the machine has (%s): the job will always read from the disk.",
				    size_str(d->needed, a), size_str(d->mi.total, b));
			evidence(f, "memory_needed_bytes = %llu > MemTotal = %llu",
				 (unsigned long long)d->needed, (unsigned long long)d->mi.total);
		} else if (d->needed > d->mi.available + d->res.resident_bytes) {
			f = finding(d, "machine-memory", true, "A warm re-run needs %s, more than "
				    "the %s available now (besides its %s already cached): other "
				    "memory must be reclaimed to keep it.", size_str(d->needed, a),
				    size_str(d->mi.available, b), size_str(d->res.resident_bytes, c));
			evidence(f, "memory_needed_bytes = %llu > MemAvailable = %llu + resident "
				 "%llu", (unsigned long long)d->needed,
				 (unsigned long long)d->mi.available,
				 (unsigned long long)d->res.resident_bytes);
			recommend(d, NULL, "Give the machine (VM or container) at least %s more "
				  "memory, so that the job's %s stay cached.",
				  size_str(d->needed - d->mi.available - d->res.resident_bytes, e),
				  size_str(d->needed, a));
		}
	}
	if (d->memcg_rc)
		return;
	if (limited(m)) {
		bool below = m->limit < d->needed;
		/* full is no fault of the limit when the job fits: who filled it is the cause */
		bool full = memcg_full(&d->memcg0);

		f = finding(d, "memory-limit", below, "The job's memory cgroup %s is "
			    "limited to %s%s", m->name, size_str(m->limit, a),
			    below ? ", below what a warm re-run needs: the kernel evicts the job's "
			    "pages to stay under it." : full ? ", which leaves room for the working "
			    "set, but it has been full: what else runs in it competes with the job "
			    "for that memory." : ", which leaves room for the working set.");
		evidence(f, "%s = %llu", m->limit_path, (unsigned long long)m->limit);
		if (m->usage_known)
			evidence(f, "%s = %llu", m->version == 1 ? "memory.usage_in_bytes" :
				 "memory.current", (unsigned long long)m->usage);
		if (m->file_known)
			evidence(f, "page cache charged to it = %llu (memory.stat %s)",
				 (unsigned long long)m->file, m->version == 1 ? "cache" : "file");
		if (full && d->memcg0.peak_known)
			evidence(f, "%s = %llu", m->version == 1 ? "memory.max_usage_in_bytes" :
				 "memory.peak", (unsigned long long)d->memcg0.peak);
		if (below) {
			size_arg(d->needed, sz, sizeof(sz));
			snprintf(cmd, sizeof(cmd), "echo %s > %s", sz, m->limit_path);
			recommend(d, cmd, "Raise the memory limit of %s to at least %s (the re-run's "
				  "page cache%s).", m->name, sz, d->ran ? ", what the job writes and its "
				  "peak RSS" : "");
		}
	} else if (m->limit_known) {
		f = finding(d, "memory-limit", false, "The job's memory cgroup %s has no memory "
			    "limit.", m->name);
		evidence(f, "%s: no limit on the way to the root", m->version == 1 ?
			 "memory.limit_in_bytes" : "memory.max");
	}
}

static void find_dirs(struct doctor *d)
{
	const struct hs_tops *t = &d->tops;
	struct finding *f;
	char a[16];

	if (!t->ndirs || !d->pages)
		return;
	f = finding(d, "top-directories", false, "Most of the working set is in %s (%.0f%% of its "
		    "pages, %llu file%s).", t->dir[0].name, 100.0 * t->dir[0].pages / d->pages,
		    (unsigned long long)t->dir[0].files, plural(t->dir[0].files));
	for (size_t k = 0; k < t->ndirs && k < 5; k++)
		evidence(f, "%s: %s, %.1f%%, %llu file%s", t->dir[k].name,
			 size_str(t->dir[k].pages * d->ps, a), 100.0 * t->dir[k].pages / d->pages,
			 (unsigned long long)t->dir[k].files, plural(t->dir[k].files));
}

static uint64_t resident_pages(const struct doctor *d)
{
	return d->res.known.cached;
}

/* Resident but for a page in a hundred: a few pages dropped do not make a job wait. */
static bool all_resident(const struct doctor *d)
{
	return !d->res.known.pages || resident_pages(d) >= d->res.known.pages - d->res.known.pages / 100;
}

/* Evicted since last read: a page in a hundred or more. */
static bool many_evicted(const struct doctor *d)
{
	return d->res.method == HS_RES_CACHESTAT && d->res.known.evicted &&
	       d->res.known.evicted >= d->res.known.pages / 100;
}

static bool evicted_known(const struct doctor *d)
{
	return d->res.method == HS_RES_CACHESTAT;
}

static void find_residency(struct doctor *d)
{
	const struct hs_cache_counts *k = &d->res.known;
	struct finding *f;
	char a[16], b[16];

	if (k->pages) {
		f = finding(d, "residency", !all_resident(d), "%s of the profile's %s (%.0f%%) %s in "
			    "the page cache now.", size_str(resident_pages(d) * d->ps, a),
			    size_str(k->pages * d->ps, b), 100.0 * resident_pages(d) / k->pages,
			    resident_pages(d) == 1 ? "is" : "are");
		evidence(f, "resident pages = %llu of %llu (%s)", (unsigned long long)resident_pages(d),
			 (unsigned long long)k->pages, evicted_known(d) ? "cachestat" : "mincore");
		if (!all_resident(d) && evicted_known(d) && !k->evicted)
			evidence(f, "cachestat remembers no eviction of the missing pages: they were "
				 "dropped (posix_fadvise, hotset evict, drop_caches, a file rewritten) "
				 "rather than reclaimed, or never read since boot");
		if (d->res.unknown_files)
			evidence(f, "%llu file%s (%llu pages) not counted: residency unknown",
				 (unsigned long long)d->res.unknown_files, plural(d->res.unknown_files),
				 (unsigned long long)d->res.unknown_pages);
	}
	if (evicted_known(d) && k->evicted) {
		f = finding(d, "evicted", many_evicted(d), "%s of the profile's pages were evicted since they "
			    "were last read%s.", size_str(k->evicted * d->ps, a),
			    k->recently_evicted ? ", some recently enough that reading them again "
			    "counts as a refault" : "");
		evidence(f, "evicted pages = %llu, recently evicted = %llu (cachestat)",
			 (unsigned long long)k->evicted, (unsigned long long)k->recently_evicted);
	}
	if (d->ran && d->vm_ok && d->vm1.refault_known) {
		uint64_t n = d->vm1.refault_file - d->vm0.refault_file;

		f = finding(d, "refaults", false, "%llu file page%s evicted shortly before %s read "
			    "again on the machine during the run (all processes, not only the job).",
			    (unsigned long long)n, plural(n), n == 1 ? "was" : "were");
		evidence(f, "workingset_refault_file: +%llu (/proc/vmstat)", (unsigned long long)n);
	}
}

struct grown {
	const char *name;
	uint64_t by;
};

static int by_growth(const void *a, const void *b)
{
	const struct grown *x = a, *y = b;

	return x->by < y->by ? 1 : x->by > y->by ? -1 : 0;
}

/* Who else fills memory: cgroups whose page cache grew during the run, or the largest now. */
static void find_others(struct doctor *d)
{
	struct grown g[3] = { 0 };
	struct finding *f;
	size_t ng = 0;
	char a[16];
	bool run = d->ran && d->ncg0 >= 0 && d->ncg1 >= 0;
	struct hs_memcg_cache *now = run ? d->cg1 : d->cg0;
	ssize_t nnow = run ? d->ncg1 : d->ncg0;

	if (d->cause == CAUSE_SHARED) {
		const struct hs_memcg *m = &d->memcg0;
		char b[16], c[16], e[16];

		bool full_now = m->usage_known && near_limit(m, m->usage);

		f = finding(d, "other-activity", true, "Other processes in the job's memory cgroup %s "
			    "evicted its pages: the cgroup %s (%s of its %s limit), though the job "
			    "alone needs %s of it.", m->name, full_now ? (d->ran ? "was full before the run" :
			    "is full now") : "has been full", size_str(full_now ? m->usage : m->peak, a),
			    size_str(m->limit, b), size_str(d->needed, c));
		if (m->usage_known)
			evidence(f, "%s = %llu%s", m->version == 1 ? "memory.usage_in_bytes" :
				 "memory.current", (unsigned long long)m->usage,
				 d->ran ? ", before the run" : "");
		if (m->peak_known)
			evidence(f, "%s = %llu", m->version == 1 ? "memory.max_usage_in_bytes" :
				 "memory.peak", (unsigned long long)m->peak);
		evidence(f, "%s = %llu", m->limit_path, (unsigned long long)m->limit);
		if (m->file_known && m->anon_known)
			evidence(f, "of it page cache %s, anonymous %s (memory.stat)",
				 size_str(m->file, a), size_str(m->anon, e));
		evidence(f, "memory_needed_bytes = %llu", (unsigned long long)d->needed);
		return;
	}
	if (nnow < 0) {
		not_read(d, "the page cache of each cgroup (memory.stat)", "%s", why((int)nnow));
		return;
	}
	for (ssize_t i = 0; i < nnow; i++) {
		uint64_t by = now[i].file;
		struct grown x;

		/* the job runs in hotset's memory cgroup: its own growth is the job's */
		if (!strcmp(now[i].name, "/") || (!d->memcg_rc && !strcmp(now[i].name, d->memcg.name)))
			continue;
		if (run) {
			uint64_t before = 0;

			for (ssize_t j = 0; j < d->ncg0; j++)
				if (!strcmp(d->cg0[j].name, now[i].name))
					before = d->cg0[j].file;
			by = by > before ? by - before : 0;
		}
		if (by < (1u << 20))
			continue;
		x = (struct grown){ now[i].name, by };
		if (ng < 3)
			g[ng++] = x;
		else if (x.by > g[2].by)
			g[2] = x;
		qsort(g, ng, sizeof(g[0]), by_growth);
	}
	if (!ng)
		return;
	f = run ? finding(d, "other-activity", false, "Other cgroups filled the page cache during "
			  "the run; the largest growth: %s (+%s).", g[0].name, size_str(g[0].by, a))
		: finding(d, "other-activity", false, "The largest holders of page cache now, which "
			  "compete with the job for memory: %s (%s).", g[0].name, size_str(g[0].by, a));
	for (size_t i = 0; i < ng; i++)
		evidence(f, "%s: %s%s (memory.stat %s)", g[i].name, run ? "+" : "",
			 size_str(g[i].by, a), d->memcg.version == 1 ? "cache" : "file");
}

static bool reclaims(const char *action)
{
	return !strcmp(action, "pageout") || !strcmp(action, "lru_deprio") ||
	       !strcmp(action, "cold");
}

static void find_reclaimers(struct doctor *d)
{
	struct finding *f;
	char cmd[1024], kd[128];

	for (int i = 0; i < d->ndamon; i++) {
		const struct hs_damon_scheme *s = &d->damon[i];
		const char *end;

		if (!reclaims(s->action))
			continue;
		if (!s->age_known) {
			f = finding(d, "damon", s->on, "A DAMON scheme (%s) reclaims with action %s; "
				    "its minimum age could not be read.", s->path, s->action);
			evidence(f, "%s/action = %s", s->path, s->action);
			continue;
		}
		f = finding(d, "damon", s->on && d->cause == CAUSE_DAMON, "A DAMON scheme %s memory "
			    "idle for %.0f s or more (action %s)%s", s->on ? "pages out" :
			    "would page out", s->min_age_s, s->action, !s->on ?
			    ", but its kdamond is off." : d->cause == CAUSE_DAMON ? ": it took the "
			    "job's pages, reclaimed while memory was to spare, and it takes them "
			    "whenever they sit idle that long between runs." : ": a job whose pages "
			    "sit idle longer between runs loses them to it.");
		evidence(f, "%s/action = %s", s->path, s->action);
		evidence(f, "%s = %.0f aggregation intervals of %llu us = %.0f s", s->min_age_path,
			 s->min_age_s * 1e6 / (double)s->aggr_us, (unsigned long long)s->aggr_us,
			 s->min_age_s);
		if (!s->on)
			continue;
		if (d->cause == CAUSE_DAMON && d->mi_ok)
			evidence(f, "nothing else reclaimed: MemAvailable = %llu and the job's cgroup "
				 "had room, for the %llu bytes the job needs",
				 (unsigned long long)d->mi.available, (unsigned long long)d->needed);
		/* the kdamond's state file takes "commit" to apply a changed scheme */
		end = strstr(s->path, "/contexts/");
		snprintf(kd, sizeof(kd), "%.*s", end ? (int)(end - s->path) : 0, s->path);
		snprintf(cmd, sizeof(cmd), "echo %llu > %s && echo commit > %s/state",
			 (unsigned long long)ceil(600e6 / (double)s->aggr_us), s->min_age_path, kd);
		recommend(d, cmd, "Raise the DAMON scheme's minimum age above the time between the "
			  "job's runs (600 s here, say), so that it stops paging the job's files out.");
	}
	if (d->balloon > 0) {
		f = finding(d, "balloon", false, "A memory balloon driver is present: the host can "
			    "take memory back from this VM, and the page cache shrinks when it does.");
		evidence(f, "virtio_balloon: %s", d->balloon_where);
	}
	if (!d->memcg_rc && d->memcg.reclaim_file) {
		f = finding(d, "memory-reclaim", false, "%s has memory.reclaim: a process writing "
			    "to it (a proactive reclaimer such as senpai) reclaims without leaving "
			    "a trace hotset can see.", d->memcg.name);
		evidence(f, "%s/memory.reclaim exists", d->memcg.dir);
	}
}

/* dentry and inode reclaim: vm.vfs_cache_pressure's part. */
static void find_vfs_cache(struct doctor *d)
{
	struct finding *f;
	uint64_t steal, scanned;

	if (!d->vm_ok)
		return;
	steal = d->ran ? d->vm1.inodesteal - d->vm0.inodesteal : d->vm0.inodesteal;
	scanned = d->ran ? d->vm1.slabs_scanned - d->vm0.slabs_scanned : d->vm0.slabs_scanned;
	if (steal)
		f = finding(d, "vfs-cache", false, "Reclaiming inodes freed %llu page%s of page cache "
			    "%s: vm.vfs_cache_pressure plays a part.", (unsigned long long)steal,
			    plural(steal), d->ran ? "during the run" : "since boot");
	else
		f = finding(d, "vfs-cache", false, "Reclaiming inodes freed no page cache %s: tuning "
			    "vm.vfs_cache_pressure cannot help.", d->ran ? "during the run" : "since boot");
	evidence(f, "pginodesteal + kswapd_inodesteal: %s%llu (/proc/vmstat)", d->ran ? "+" : "",
		 (unsigned long long)steal);
	evidence(f, "slabs_scanned: %s%llu", d->ran ? "+" : "", (unsigned long long)scanned);
}

static bool damon_reclaims(const struct doctor *d)
{
	for (int i = 0; i < d->ndamon; i++)
		if (d->damon[i].on && reclaims(d->damon[i].action))
			return true;
	return false;
}

/*
 * The refaults of the job's memory cgroup during the run: pages it read
 * back from the disk that reclaim had evicted not long before (their
 * shadow entries remember them). Machine-wide when the cgroup's are not
 * counted.
 */
static void count_refaults(struct doctor *d)
{
	const struct hs_memcg *a = &d->memcg0, *b = &d->memcg;

	if (!d->ran)
		return;
	if (!d->memcg0_rc && !d->memcg_rc && a->refault_known && b->refault_known &&
	    !strcmp(a->dir, b->dir)) {
		d->refaults_known = true;
		d->refaulted = b->refault_file > a->refault_file ? b->refault_file - a->refault_file : 0;
	} else if (d->vm_ok && d->vm1.refault_known) {
		d->refaulted = d->vm1.refault_file - d->vm0.refault_file;
	}
}

/*
 * Who took the pages: the limit if the job does not fit in it; else, when
 * the run read back pages reclaimed before it (or -p finds them evicted),
 * the others in a cgroup that was full, a machine short of memory, or,
 * with memory to spare, a proactive reclaimer.
 */
static void find_cause(struct doctor *d)
{
	const struct hs_memcg *m = &d->memcg0;
	bool lost;

	count_refaults(d);
	if (!d->memcg0_rc && limited(m) && m->limit < d->needed) {
		d->cause = CAUSE_LIMIT;
		return;
	}
	lost = d->ran ? io_bound(d) && d->refaulted * d->ps >= REFAULTED * d->run.u.read_bytes_disk
		      : many_evicted(d);
	if (!lost)
		d->cause = CAUSE_NONE;
	else if (!d->memcg0_rc && memcg_full(m))
		d->cause = CAUSE_SHARED;
	else if (d->mi_ok && d->mi.available < d->needed)
		d->cause = CAUSE_MACHINE;
	else if (damon_reclaims(d))
		d->cause = CAUSE_DAMON;
	else
		d->cause = CAUSE_UNKNOWN;
}

/* The pages the run read back after reclaim took them before it. */
static void find_lost(struct doctor *d)
{
	const struct hs_usage *u = &d->run.u;
	struct finding *f;
	char a[16];
	static const char *const by[] = {
		[CAUSE_SHARED] = "by other processes in its memory cgroup, which was full",
		[CAUSE_MACHINE] = "by reclaim, the machine being short of memory",
		[CAUSE_DAMON] = "while its cgroup had room and the machine memory to spare: by a "
				"proactive reclaimer (DAMON)",
		[CAUSE_UNKNOWN] = "by reclaim; which reclaimer, the figures do not tell",
	};

	if (!d->ran || d->cause == CAUSE_NONE || d->cause == CAUSE_LIMIT)
		return;
	f = finding(d, "evicted-before-run", true, "%s of what the job read from the disk (%.0f%%) "
		    "had been in the page cache and was evicted before the run, %s.",
		    size_str(d->refaulted * d->ps, a),
		    100.0 * d->refaulted * d->ps / u->read_bytes_disk, by[d->cause]);
	if (d->refaults_known)
		evidence(f, "workingset_refault_file of %s: +%llu pages (memory.stat)", d->memcg.name,
			 (unsigned long long)d->refaulted);
	else
		evidence(f, "workingset_refault_file: +%llu pages (/proc/vmstat: the whole machine)",
			 (unsigned long long)d->refaulted);
	evidence(f, "disk_read_bytes = %llu", (unsigned long long)u->read_bytes_disk);
	if (!d->memcg0_rc && d->memcg0.usage_known)
		evidence(f, "%s before the run: %llu used of %s", d->memcg0.name,
			 (unsigned long long)d->memcg0.usage, limited(&d->memcg0) ?
			 size_str(d->memcg0.limit, a) : "no limit");
	if (d->mi_ok)
		evidence(f, "MemAvailable before the run = %llu", (unsigned long long)d->mi.available);
}

/* keep where the job's pages are taken from under it, by others or a reclaimer */
static void recommend_keep(struct doctor *d)
{
	char cmd[PATH_MAX * 2 + 128], sz[32], lim[32];

	if (!find_command("keep") || (d->cause != CAUSE_SHARED && d->cause != CAUSE_DAMON))
		return;
	size_arg(d->need.read, sz, sizeof(sz));
	snprintf(cmd, sizeof(cmd), "hotset keep --budget %s %s", sz, d->profile);
	if (d->cause == CAUSE_DAMON) {
		recommend(d, cmd, "Keep the working set resident: hotset keep reads back what the "
			  "reclaimer pages out, at most --interval later (10 s by default).");
		return;
	}
	recommend(d, cmd, "Keep the working set resident in %s while the others run: hotset keep "
		  "reads back what they evict. Run it in that cgroup, where the job's pages are "
		  "charged.", d->memcg0.name);
	size_arg(d->memcg0.limit + d->needed, lim, sizeof(lim));
	snprintf(cmd, sizeof(cmd), "echo %s > %s", lim, d->memcg0.limit_path);
	recommend(d, cmd, "Or make room in %s for both: raise its limit by the job's %s (or run "
		  "the others in a memory cgroup of their own).", d->memcg0.name,
		  size_str(d->needed, sz));
}

static void recommend_warm(struct doctor *d)
{
	char cmd[PATH_MAX * 2 + 128], sz[32];
	const struct cmd *keep = d->cause == CAUSE_SHARED || d->cause == CAUSE_DAMON ? NULL :
				 find_command("keep");

	snprintf(cmd, sizeof(cmd), "hotset warm -p %s", d->profile);
	recommend(d, cmd, "Read the working set into the page cache before the job runs (at login, "
		  "or from a timer).");
	if (d->tops.ndirs) {
		snprintf(cmd, sizeof(cmd), "systemctl enable --now hotset-persist@$(systemd-escape "
			 "-p %s).service", d->tops.dir[0].name);
		recommend(d, cmd, "Keep %s cached across reboots: hotset-persist@.service snapshots "
			  "it at shutdown and warms it at boot (hotset(1), KEEPING THE CACHE ACROSS "
			  "REBOOTS).", d->tops.dir[0].name);
	}
	/* keep comes in its own time: offer it only where this hotset has it */
	if (keep) {
		size_arg(d->need.read, sz, sizeof(sz));
		snprintf(cmd, sizeof(cmd), "hotset keep --budget %s %s", sz, d->profile);
		recommend(d, cmd, "Keep the working set resident as the job's memory needs it.");
	}
}

static bool nothing_to_fix(const struct doctor *d)
{
	for (int i = 0; i < d->nf; i++)
		if (d->f[i].problem)
			return false;
	return true;
}

static void diagnose(struct doctor *d)
{
	bool lost;

	d->working_set = (d->curve_ok ? d->c.pages : d->pages) * d->ps;
	d->needed = hs_rerun_need(d->curve_ok ? hs_curve_rerun_cache(&d->c, &d->cs) :
				  d->working_set / d->ps, d->ps,
				  d->ran ? &d->run.u : &d->recorded, &d->need);
	d->needed_source = d->curve_ok ? "curve" : "profile";
	find_cause(d);
	find_io(d);
	find_device(d);
	find_memory(d);
	find_dirs(d);
	find_residency(d);
	find_lost(d);
	/* causes only when the job's pages were lost, or it waited */
	lost = io_bound(d) || !all_resident(d) || many_evicted(d);
	if (lost) {
		recommend_keep(d);
		recommend_warm(d);
		find_others(d);
		find_reclaimers(d);
		find_vfs_cache(d);
	}
	if (nothing_to_fix(d))
		finding(d, "nothing-to-fix", false, "Nothing to fix: %s.", d->ran ?
			"the job did not wait for the disk, and its pages are cached" :
			"the profile's pages are all in the page cache");
}

/* ---- output ------------------------------------------------------------------ */

static void json_report(struct doctor *d)
{
	const struct hs_usage *u = &d->run.u;
	bool io = d->ran && u->io_known;
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
	if (d->ran)
		json_job_status(&j, d->run.res.wait_status);
	else
		json_null(&j, "exit_status"), json_null(&j, "signal");
	if (d->ran)
		json_double(&j, "wall_seconds", u->wall_s);
	else
		json_null(&j, "wall_seconds");
	if (io_known(d)) {
		json_double(&j, "io_wait_seconds", u->io_wait_s);
		json_double(&j, "io_wait_fraction", io_fraction(d));
	} else {
		json_null(&j, "io_wait_seconds");
		json_null(&j, "io_wait_fraction");
	}
	json_u64_or_null(&j, "disk_read_bytes", io, u->read_bytes_disk);
	json_null(&j, "cache_read_bytes");
	if (io_known(d) && io && u->io_wait_s > 0)
		json_double(&j, "disk_read_bytes_per_second", (double)u->read_bytes_disk / u->io_wait_s);
	else
		json_null(&j, "disk_read_bytes_per_second");
	if (d->ran && u->read_ios_known) {
		json_u64(&j, "read_requests", u->read_ios);
		json_string(&j, "read_requests_source", "io-stat");
	} else if (d->ran) {
		json_u64(&j, "read_requests", d->ranges);
		json_string(&j, "read_requests_source", "profile-ranges");
	} else {
		json_null(&j, "read_requests");
		json_null(&j, "read_requests_source");
	}
	json_u64_or_null(&j, "refaults", d->ran && d->vm_ok && d->vm1.refault_known,
			 d->vm1.refault_file - d->vm0.refault_file);
	json_u64_or_null(&j, "cgroup_refaults", d->refaults_known, d->refaulted);
	json_string(&j, "cause", cause_id[d->cause]);
	json_u64(&j, "page_size", d->ps);
	json_u64(&j, "working_set_bytes", d->working_set);
	json_u64(&j, "memory_needed_bytes", d->needed);
	json_string(&j, "memory_needed_source", d->needed_source);
	if (d->curve_ok)
		json_string(&j, "model", hs_curve_model_name(&d->c));
	else
		json_null(&j, "model");
	json_u64(&j, "memory_needed_read_bytes", d->need.read);
	json_u64_or_null(&j, "memory_needed_written_bytes", d->need.written_known, d->need.written);
	json_u64_or_null(&j, "memory_needed_rss_bytes", d->need.anon_known, d->need.anon);
	json_u64(&j, "resident_bytes", resident_pages(d) * d->ps);
	json_u64(&j, "unknown_pages", d->res.unknown_pages);
	json_u64_or_null(&j, "evicted_pages", evicted_known(d), d->res.known.evicted);
	json_u64_or_null(&j, "recently_evicted_pages", evicted_known(d),
			 d->res.known.recently_evicted);
	json_u64_or_null(&j, "mem_total_bytes", d->mi_ok, d->mi.total);
	json_u64_or_null(&j, "mem_available_bytes", d->mi_ok, d->mi.available);
	json_u64_or_null(&j, "page_cache_bytes", d->mi_ok, d->mi.cached);
	json_string(&j, "cgroup", d->memcg_rc ? NULL : d->memcg.name);
	json_u64_or_null(&j, "cgroup_memory_limit_bytes", !d->memcg_rc && d->memcg.limit_known &&
			 d->memcg.limit != UINT64_MAX, d->memcg.limit);
	json_u64_or_null(&j, "cgroup_memory_usage_bytes", !d->memcg_rc && d->memcg.usage_known,
			 d->memcg.usage);
	json_bool(&j, "nothing_to_fix", nothing_to_fix(d));
	json_begin_array(&j, "findings");
	for (int i = 0; i < d->nf; i++) {
		json_begin_object(&j, NULL);
		json_string(&j, "id", d->f[i].id);
		json_bool(&j, "problem", d->f[i].problem);
		json_string(&j, "text", d->f[i].text);
		json_begin_array(&j, "evidence");
		for (int e = 0; e < d->f[i].nev; e++)
			json_string(&j, NULL, d->f[i].evidence[e]);
		json_end_array(&j);
		json_end_object(&j);
	}
	json_end_array(&j);
	json_begin_array(&j, "recommendations");
	for (int i = 0; i < d->nr; i++) {
		json_begin_object(&j, NULL);
		json_string(&j, "text", d->r[i].text);
		json_string(&j, "command", d->r[i].command[0] ? d->r[i].command : NULL);
		json_end_object(&j);
	}
	json_end_array(&j);
	json_begin_array(&j, "not_read");
	for (int i = 0; i < d->nnr; i++) {
		json_begin_object(&j, NULL);
		json_string(&j, "source", d->nrd[i].source);
		json_string(&j, "reason", d->nrd[i].reason);
		json_end_object(&j);
	}
	json_end_array(&j);
	json_string(&j, "html", d->html);
	json_end_object(&j);
	json_finish(&j);
}

static void print_human(const struct doctor *d)
{
	int n = 0;

	fputs("Diagnosis of ", stdout);
	print_path(stdout, d->profile, strlen(d->profile));
	fputs(d->ran ? " (the run just recorded)\n" : " (what is resident now)\n", stdout);
	for (int i = 0; i < d->nf; i++) {
		printf("\n%s %s\n", d->f[i].problem ? "!" : "-", d->f[i].text);
		for (int e = 0; e < d->f[i].nev; e++)
			printf("    %s\n", d->f[i].evidence[e]);
	}
	if (d->nr)
		fputs("\nWhat to do:\n", stdout);
	for (int i = 0; i < d->nr; i++) {
		printf("\n  %d. %s\n", ++n, d->r[i].text);
		if (d->r[i].command[0])
			printf("     $ %s\n", d->r[i].command);
	}
	if (d->nnr)
		fputs("\nNot read (the findings leave them out):\n", stdout);
	for (int i = 0; i < d->nnr; i++)
		printf("  %s: %s\n", d->nrd[i].source, d->nrd[i].reason);
}

/* Text for HTML: markup characters as entities, control characters dropped. */
static void html_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '&')
			fputs("&amp;", f);
		else if (c == '<')
			fputs("&lt;", f);
		else if (c == '>')
			fputs("&gt;", f);
		else if (c == '"')
			fputs("&quot;", f);
		else if (c >= 0x20 && c != 0x7f)
			putc(c, f);
	}
}

static const char html_style[] =
	"body{font-family:system-ui,sans-serif;margin:0 auto;padding:1em;max-width:60em;"
	"overflow-wrap:anywhere;"
	"line-height:1.45;color:#111}\n"
	"h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em}\n"
	"svg{width:100%;height:auto;display:block}\n"
	".finding{border-left:4px solid #999;padding:.2em .8em;margin:.8em 0}\n"
	".problem{border-color:#d62728}\n"
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
	char a[16];

	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	      "<title>hotset doctor: ", f);
	html_text(f, d->profile);
	fprintf(f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<h1>Why the job waits for "
		   "the disk</h1>\n<p>", html_style);
	html_text(f, d->ran ? "The run just recorded, profile " : "Profile ");
	html_text(f, d->profile);
	fputs("</p>\n<h2>Findings</h2>\n", f);
	for (int i = 0; i < d->nf; i++) {
		fprintf(f, "<div class=\"finding%s\" id=\"%s\"><p>", d->f[i].problem ? " problem" : "",
			d->f[i].id);
		html_text(f, d->f[i].text);
		fputs("</p>\n<ul class=\"evidence\">\n", f);
		for (int e = 0; e < d->f[i].nev; e++) {
			fputs("<li>", f);
			html_text(f, d->f[i].evidence[e]);
			fputs("</li>\n", f);
		}
		fputs("</ul></div>\n", f);
	}
	if (d->nr)
		fputs("<h2>What to do</h2>\n<ol>\n", f);
	for (int i = 0; i < d->nr; i++) {
		fputs("<li><p>", f);
		html_text(f, d->r[i].text);
		fputs("</p>", f);
		if (d->r[i].command[0]) {
			fputs("<pre><code>", f);
			html_text(f, d->r[i].command);
			fputs("</code></pre>", f);
		}
		fputs("</li>\n", f);
	}
	if (d->nr)
		fputs("</ol>\n", f);
	if (d->curve_ok) {
		fputs("<h2>Memory and bytes read</h2>\n<div class=\"chart\" id=\"curve\">\n", f);
		curve_svg(f, &d->c, d->ps, NULL, 101, false);
		fputs("</div>\n", f);
	}
	if (d->ran && d->tl.n > 1) {
		/*
		 * At most TIMELINE_POINTS intervals: a long run's samples are
		 * taken every stride-th (and the last), and each interval's
		 * shares are of the whole interval (the samples are running
		 * totals), so only detail is lost, and the chart stays as
		 * legible and as small as a minute's.
		 */
		size_t stride = (d->tl.n - 2) / TIMELINE_POINTS + 1, m = 0;
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
				human_size(d->tops.dir[k].pages * d->ps, a),
				d->pages ? 100.0 * d->tops.dir[k].pages / d->pages : 0,
				(unsigned long long)d->tops.dir[k].files);
		}
		fputs("</table>\n", f);
	}
	if (d->nnr) {
		fputs("<h2>Not read</h2>\n<ul>\n", f);
		for (int i = 0; i < d->nnr; i++) {
			fputs("<li>", f);
			html_text(f, d->nrd[i].source);
			fputs(": ", f);
			html_text(f, d->nrd[i].reason);
			fputs("</li>\n", f);
		}
		fputs("</ul>\n", f);
	}
	fputs("<p><small>hotset " HOTSET_VERSION " doctor</small></p>\n</body>\n</html>\n", f);
}

/* ---- the command -------------------------------------------------------------- */

static void snapshot_machine(struct doctor *d, bool after)
{
	struct hs_memcg_cache **v = after ? &d->cg1 : &d->cg0;
	ssize_t *n = after ? &d->ncg1 : &d->ncg0;
	int rc;

	if (d->memcg_rc)
		*n = d->memcg_rc;
	else
		*n = hs_memcg_list(&d->memcg, v);
	rc = hs_vmstat_read(after ? &d->vm1 : &d->vm0);
	if (!after)
		d->vm_ok = !rc;
	else
		d->vm_ok = d->vm_ok && !rc;
	if (rc && !after)
		not_read(d, "/proc/vmstat", "%s", why(rc));
}

static int run_doctor(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "profile", required_argument, NULL, 'p' },
		{ "profile-output", required_argument, NULL, OPT_PROFILE_OUTPUT },
		{ "output", required_argument, NULL, 'o' },
		{ "backend", required_argument, NULL, OPT_BACKEND },
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
		case OPT_BACKEND:
			if (parse_backend(optarg, &d->run.o.backend)) {
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
	if (d->html && !*d->html) {
		free(d);
		return usage_error(&cmd_doctor, "an empty -o FILE names no file");
	}
	read_machine(d);
	if (!d->profile) {
		d->argv = argv + optind;
		d->profile = out ? out : "hotset.profile";
		d->run.o.argv = d->argv;
		d->run.out = d->profile;
		d->run.trace = true;
		d->run.timeline = &d->tl;
		snapshot_machine(d, false);
		if (record_run(&d->run)) {
			error("%s", d->run.msg);
			rc = d->run.code;
			record_run_release(&d->run);
			goto out;
		}
		snapshot_machine(d, true);
		/* the limit and use as the run left them */
		if (!d->memcg_rc)
			d->memcg_rc = hs_memcg_of(0, &d->memcg);
		d->ran = true;
		record_run_release(&d->run);
		if (d->run.save_rc) {
			rc = EXIT_HOTSET;
			goto out;
		}
		for (int i = 0; i < d->run.u.nnotes; i++)
			if (!d->quiet)
				warning("%s", d->run.u.notes[i]);
	} else {
		snapshot_machine(d, false);
	}
	if (read_profile(d)) {
		rc = EXIT_USAGE;
		goto out;
	}
	if (d->skipped && !d->quiet)
		warning("%u file%s of the profile could not be examined (gone, or unreadable)",
			d->skipped, plural(d->skipped));
	diagnose(d);
	if (d->html && write_atomically(d->html, write_html, d))
		rc = EXIT_FAILED;
	if (d->json)
		json_report(d);
	else
		print_human(d);
out:
	hs_memcg_list_free(d->cg0, d->ncg0 > 0 ? (size_t)d->ncg0 : 0);
	hs_memcg_list_free(d->cg1, d->ncg1 > 0 ? (size_t)d->ncg1 : 0);
	hs_tops_release(&d->tops);
	if (d->curve_ok)
		hs_curve_release(&d->c);
	hs_usage_timeline_release(&d->tl);
	if (d->ran && rc == EXIT_OK) {
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
