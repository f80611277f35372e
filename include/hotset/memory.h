/*
 * memory.h - the machine's memory as doctor needs it: what is available
 * and cached (/proc/meminfo), the reclaim counters (/proc/vmstat), the
 * memory cgroup a job runs in and its limit (cgroup v1 or v2, probed),
 * every cgroup's page cache, DAMON's reclaim schemes, and a balloon driver.
 *
 * Each reader returns 0 (or a count) or -errno, so that the caller can say
 * what could not be read and which privilege it needs (DAMON's sysfs files
 * are root's only, say).
 */
#ifndef HOTSET_MEMORY_H
#define HOTSET_MEMORY_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "hotset/hotset.h"

/* /proc/meminfo, in bytes. */
struct hs_meminfo {
	uint64_t total;		/* MemTotal */
	uint64_t available;	/* MemAvailable: what can be had without swapping */
	uint64_t cached;	/* Cached: the page cache */
};
int hs_meminfo_parse(const char *buf, struct hs_meminfo *m);
int hs_meminfo_read(struct hs_meminfo *m);

/* The counters of /proc/vmstat doctor reads; a counter missing is 0 (and not known). */
struct hs_vmstat {
	bool refault_known;
	uint64_t refault_file;		/* workingset_refault_file: file pages read again soon after eviction */
	uint64_t inodesteal;		/* pginodesteal + kswapd_inodesteal: page cache freed with inodes */
	uint64_t slabs_scanned;		/* shrinker work: dentries, inodes and other caches */
};
int hs_vmstat_read(struct hs_vmstat *v);

/* ---- memory cgroups ------------------------------------------------------ */

/* A memory cgroup, with the lowest limit on the way to the root. */
struct hs_memcg {
	int version;			/* 1 (memory controller) or 2 (cgroup2) */
	char name[PATH_MAX];		/* its path in the hierarchy: "/" or "/a/b" */
	char dir[PATH_MAX];		/* its directory */
	char root[PATH_MAX];		/* the hierarchy's mount point */
	bool limit_known;
	uint64_t limit;			/* UINT64_MAX: no limit */
	char limit_path[PATH_MAX + 32];	/* the file that sets it (memory.limit_in_bytes, memory.max) */
	bool usage_known;
	uint64_t usage;			/* memory.usage_in_bytes, memory.current */
	bool file_known;
	uint64_t file;			/* its page cache: memory.stat cache (v1), file (v2) */
	bool peak_known;
	uint64_t peak;			/* the most it ever used: memory.max_usage_in_bytes, memory.peak */
	bool anon_known;
	uint64_t anon;			/* anonymous memory: memory.stat total_rss (v1), anon (v2) */
	bool refault_known;
	uint64_t refault_file;		/* pages read back soon after reclaim evicted them (memory.stat) */
	bool reclaim_file;		/* memory.reclaim exists (v2): anyone may ask it to reclaim */
};

/*
 * The memory cgroup of process pid (0: this one, whose children inherit
 * it): v1 where a memory controller is mounted as such, else v2.
 * Returns 0, or -ENOENT without a memory controller.
 */
int hs_memcg_of(int pid, struct hs_memcg *m);

/* One cgroup's page cache, for hs_memcg_list(). */
struct hs_memcg_cache {
	char *name;			/* its path in the hierarchy */
	uint64_t file;			/* bytes: v1 its own (cache), v2 with its children (file) */
};

/*
 * Every cgroup under the root of m's hierarchy, with its page cache, into
 * a malloc'd array (release with hs_memcg_list_free()). Returns the count
 * or -errno.
 */
ssize_t hs_memcg_list(const struct hs_memcg *m, struct hs_memcg_cache **out);
void hs_memcg_list_free(struct hs_memcg_cache *v, size_t n);

/* ---- reclaimers ------------------------------------------------------------ */

/* A DAMON-based operation scheme (/sys/kernel/mm/damon/admin). */
struct hs_damon_scheme {
	char path[192];			/* its directory */
	char action[32];		/* pageout, lru_deprio, cold... */
	bool on;			/* its kdamond's state is "on" */
	bool age_known;
	double min_age_s;		/* access_pattern/age/min x the aggregation interval */
	char min_age_path[240];		/* the file that sets it, in aggregation intervals */
	uint64_t aggr_us;		/* the context's aggregation interval */
};

/*
 * The schemes of every kdamond, at most max into out. Returns the count,
 * -ENOENT without DAMON's sysfs interface, or -errno (-EACCES: root only).
 */
int hs_damon_schemes(struct hs_damon_scheme *out, size_t max);

/*
 * A memory balloon: 1 when the virtio_balloon driver is loaded (in
 * /proc/modules) or bound to a device (/sys/bus/virtio/drivers), 0 when
 * neither, -errno when neither could be read.
 */
int hs_balloon_probe(char *where, size_t size);

/* ---- what a job needs -------------------------------------------------------- */

/*
 * The memory a warm re-run of a job needs, in bytes, and of what. Its
 * memory cgroup is charged for all of it, and a limit below the sum evicts
 * what the job reads (a scan then reads all of it again, LRU or not):
 *
 *   read     the page cache for its reads: the curve's least cache at
 *            which a re-run reads nothing (rerun_zero), or all of the
 *            profile's pages without a trace;
 *   written  the pages it dirties (write_bytes of its processes): the new
 *            files, temporary files (a sort's runs, unlinked at once,
 *            which no profile lists) and rewritten pages, all of which
 *            take page cache until written back and reclaimed. Counted as
 *            if all were cached at once: an upper bound;
 *   anon     its own memory: the peak RSS of its largest process.
 *
 * A figure not known (a profile with no run) counts 0, and its _known is false.
 */
struct hs_rerun_need {
	uint64_t read;
	bool written_known;
	uint64_t written;
	bool anon_known;
	uint64_t anon;
	uint64_t total;		/* the sum: the least memory limit for a re-run with no wait */
};

/*
 * Fill n from a profile's figures: read_pages of page_size bytes (rerun_zero,
 * or the profile's pages), and the run's usage u (NULL: none known).
 * Returns n->total.
 */
struct hs_usage;
uint64_t hs_rerun_need(uint64_t read_pages, uint64_t page_size, const struct hs_usage *u,
		       struct hs_rerun_need *n);

/*
 * Slurm's --mem for a need of bytes: MiB (its default unit), rounded up,
 * and at least 1, since --mem=0 asks for all of a node's memory.
 */
uint64_t hs_slurm_mem_mib(uint64_t bytes);

#endif
