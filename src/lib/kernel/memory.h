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

#include "base/hotset.h"

/* /proc/meminfo, in bytes. */
struct hs_meminfo {
	uint64_t total;		/* MemTotal */
	uint64_t available;	/* MemAvailable: what can be had without swapping */
	uint64_t cached;	/* Cached: the page cache */
};
int hs_meminfo_parse(const char *buf, struct hs_meminfo *m);
int hs_meminfo_read(struct hs_meminfo *m);

/*
 * The counters of /proc/vmstat doctor reads, since boot; a counter missing
 * is 0 (and, where a _known says so, not known).
 *
 * Who reclaimed: the kernel counts pgsteal_kswapd and pgsteal_direct only
 * for global reclaim (the machine short of memory: kswapd, or a task that
 * had to reclaim to allocate), never for reclaim inside a memory cgroup at
 * its limit, which pgsteal_file counts with the rest. DAMON's pageout
 * counts in none of them: its schemes' own stats say what it took.
 */
struct hs_vmstat {
	bool refault_known;
	uint64_t refault_file;		/* workingset_refault_file: file pages read again soon after eviction */
	uint64_t inodesteal;		/* pginodesteal + kswapd_inodesteal: page cache freed with inodes */
	uint64_t slabs_scanned;		/* shrinker work: dentries, inodes and other caches */
	bool global_known;		/* pgsteal_kswapd and pgsteal_direct are there */
	uint64_t steal_kswapd;		/* pages global reclaim freed, in kswapd */
	uint64_t steal_direct;		/* and in tasks that had to reclaim to allocate */
	uint64_t scan_kswapd, scan_direct;	/* the pages they looked at */
	bool steal_file_known;
	uint64_t steal_file;		/* pgsteal_file: file pages any LRU reclaim freed, limits too */
};
/* Parse /proc/vmstat's text into v. Always 0: a counter missing is 0, and not known. */
int hs_vmstat_parse(const char *buf, struct hs_vmstat *v);
int hs_vmstat_read(struct hs_vmstat *v);

/* ---- memory cgroups ------------------------------------------------------ */

/*
 * What a memory cgroup holds and has been through, its children included.
 * A figure is known only where this kernel and cgroup version have it.
 */
struct hs_memcg_stat {
	bool usage_known;
	uint64_t usage;			/* memory.usage_in_bytes, memory.current */
	bool peak_known;
	uint64_t peak;			/* the most it ever used: memory.max_usage_in_bytes, memory.peak */
	bool file_known;
	uint64_t file;			/* page cache: memory.stat total_cache (v1), file (v2) */
	bool anon_known;
	uint64_t anon;			/* anonymous memory: total_rss (v1), anon (v2) */
	bool refault_known;
	uint64_t refault_file;		/* pages read back soon after reclaim evicted them */
	bool hits_known;
	uint64_t hits;			/* times it reached its limit: memory.failcnt (v1), memory.events max (v2) */
	bool steal_known;
	uint64_t steal;			/* pages reclaimed from it: memory.stat pgsteal (v2 only) */
};

/* A cgroup, on the way from a memory cgroup to the root, that has a memory limit. */
struct hs_memcg_level {
	size_t name_len;		/* it is the first name_len bytes of hs_memcg.name ("/" if 0) */
	uint64_t limit;
	char limit_path[PATH_MAX + 32];	/* the file that sets it */
	struct hs_memcg_stat st;	/* its figures: its usage and peak count all under it */
};

#define HS_MEMCG_LEVELS 8

/*
 * A memory cgroup and the limits above it. A parent's limit applies to its
 * children together: a job whose own cgroup has room loses its pages all
 * the same when a limited ancestor fills, whoever under it filled it.
 */
struct hs_memcg {
	int version;			/* 1 (memory controller) or 2 (cgroup2) */
	char name[PATH_MAX];		/* its path in the hierarchy: "/" or "/a/b" */
	char dir[PATH_MAX];		/* its directory */
	char root[PATH_MAX];		/* the hierarchy's mount point */
	struct hs_memcg_stat st;	/* its own figures */
	bool limit_known;		/* its limits could be read (v2's root has none to read) */
	uint64_t limit;			/* the lowest on the way to the root; UINT64_MAX: none */
	char limit_path[PATH_MAX + 32];	/* the file that sets it (memory.limit_in_bytes, memory.max) */
	int lowest;			/* the level that holds it, or -1 */
	int nlevels;			/* the limited cgroups from it up: the nearest HS_MEMCG_LEVELS */
	struct hs_memcg_level level[HS_MEMCG_LEVELS];
	bool reclaim_file;		/* memory.reclaim exists (v2): anyone may ask it to reclaim */
};

/* The name of m's level i ("/a"), in buf of size bytes; returns buf. */
const char *hs_memcg_level_name(const struct hs_memcg *m, int i, char *buf, size_t size);

/*
 * The memory cgroup of process pid (0: this one, whose children inherit
 * it): v1 where a memory controller is mounted as such, else v2.
 * Returns 0, or -ENOENT without a memory controller.
 */
int hs_memcg_of(int pid, struct hs_memcg *m);

/*
 * The memory cgroup at path: its name in the hierarchy ("/a/b", as
 * /proc/PID/cgroup names it), or its directory under the hierarchy's
 * mount point. version 1 or 2 asks for that hierarchy, 0 for this
 * machine's memory hierarchy (as hs_memcg_of() picks it). Returns 0,
 * -ENOENT when there is no such hierarchy or cgroup, or -errno.
 */
int hs_memcg_named(int version, const char *path, struct hs_memcg *m);

/*
 * The cgroup name ("/" or "/a/b") of the hierarchy of that version
 * mounted at mount, whose root is the hierarchy's: the reader behind the
 * two above, apart so that a test can give it a tree of its own. Returns
 * 0, or -ENOENT when name's directory is not there.
 */
int hs_memcg_in(int version, const char *mount, const char *name, struct hs_memcg *m);

/* One cgroup's memory, for hs_memcg_list(). */
struct hs_memcg_cache {
	char *name;			/* its path in the hierarchy */
	uint64_t file;			/* bytes of page cache charged to it, not to a child */
	uint64_t anon;			/* bytes of anonymous memory, likewise */
	bool usage_known;
	uint64_t usage;			/* all it uses, its children included */
	bool peak_known;
	uint64_t peak;			/* the most it ever used, its children included */
};

/*
 * Every cgroup under the root of m's hierarchy, with its memory, into a
 * malloc'd array in walk order, a parent before its children (release
 * with hs_memcg_list_free()). Returns the count or -errno.
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
	/*
	 * What it did since its kdamond started (stats/): as fresh as the
	 * last hs_damon_update_stats(), which the kernel needs to refresh them.
	 */
	bool stats_known;
	uint64_t sz_applied;		/* bytes it applied its action to: paged out, for pageout */
	uint64_t nr_applied;		/* regions it applied it to */
};

/*
 * Ask every running kdamond to refresh its schemes' stats files (writing
 * update_schemes_stats to its state file: it changes nothing else).
 * Returns 0, -ENOENT without DAMON, or the first -errno (-EACCES: root only).
 */
int hs_damon_update_stats(void);

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

#endif
