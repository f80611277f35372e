/*
 * memory.c - the machine's memory, its cgroups and its reclaimers (memory.h).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hotset/memory.h"
#include "hotset/procfs.h"
#include "hotset/usage.h"

/*
 * The number after key in meminfo's "Key:   123 kB" lines, in bytes: false
 * if there is no such line, or its number is not one (no sign, no
 * overflow).
 */
static bool meminfo_field(const char *buf, const char *key, uint64_t *out)
{
	size_t len = strlen(key);

	for (const char *line = buf; *line; line++) {
		const char *eol = strchrnul(line, '\n'), *p = line + len + 1;
		unsigned long long v;
		char *end;

		if (!strncmp(line, key, len) && line[len] == ':') {
			while (*p == ' ' || *p == '\t')
				p++;
			if (*p < '0' || *p > '9')
				return false;
			errno = 0;
			v = strtoull(p, &end, 10);
			if (errno || end > eol)
				return false;
			if (!strncmp(end, " kB", 3) && end + 3 <= eol) {
				if (v > UINT64_MAX / 1024)
					return false;
				v *= 1024;
			}
			*out = v;
			return true;
		}
		if (!*(line = eol))
			break;
	}
	return false;
}

int hs_meminfo_parse(const char *buf, struct hs_meminfo *m)
{
	struct hs_meminfo x = { 0 };

	if (!meminfo_field(buf, "MemTotal", &x.total) ||
	    !meminfo_field(buf, "MemAvailable", &x.available) ||
	    !meminfo_field(buf, "Cached", &x.cached))
		return -EINVAL;
	*m = x;
	return 0;
}

int hs_meminfo_read(struct hs_meminfo *m)
{
	char buf[8192];
	ssize_t n = hs_procfs_read("/proc/meminfo", buf, sizeof(buf));

	return n < 0 ? (int)n : hs_meminfo_parse(buf, m);
}

int hs_vmstat_read(struct hs_vmstat *v)
{
	char buf[32768];	/* vmstat has a few hundred lines */
	uint64_t a = 0, b = 0;
	ssize_t n = hs_procfs_read("/proc/vmstat", buf, sizeof(buf));

	if (n < 0)
		return (int)n;
	memset(v, 0, sizeof(*v));
	/* before 5.9 there was one counter for file and anonymous pages */
	v->refault_known = hs_procfs_find_u64(buf, "workingset_refault_file", &v->refault_file) ||
			   hs_procfs_find_u64(buf, "workingset_refault", &v->refault_file);
	hs_procfs_find_u64(buf, "pginodesteal", &a);
	hs_procfs_find_u64(buf, "kswapd_inodesteal", &b);
	v->inodesteal = a + b;
	hs_procfs_find_u64(buf, "slabs_scanned", &v->slabs_scanned);
	return 0;
}

/* ---- memory cgroups ------------------------------------------------------ */

struct memcg_mount {
	int version;
	char *root, *point;	/* what the mount shows, and where */
	size_t size;
	bool found;
};

/* Does a comma-separated list hold word? */
static bool has_word(const char *list, const char *word)
{
	size_t len = strlen(word);

	for (const char *p = list; p; p = strchr(p, ','), p = p ? p + 1 : NULL)
		if (!strncmp(p, word, len) && (p[len] == ',' || p[len] == '\0'))
			return true;
	return false;
}

static int memcg_mount(void *ctx, const struct hs_mountinfo *m)
{
	struct memcg_mount *c = ctx;

	if (c->version == 1 ? strcmp(m->fstype, "cgroup") || !has_word(m->super_options, "memory")
			    : strcmp(m->fstype, "cgroup2"))
		return 0;
	snprintf(c->root, c->size, "%s", m->root);
	snprintf(c->point, c->size, "%s", m->point);
	c->found = true;
	return 1;
}

/* The path of the v1 "memory" line, or the v2 "0::" line, of /proc/PID/cgroup. */
static int cgroup_line(const char *buf, int version, char *out, size_t size)
{
	for (const char *line = buf; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		const char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		size_t len;
		char ctl[128];

		if (!c2 || strchr(line, '\n') < c2)
			continue;
		len = (size_t)(c2 - c1 - 1);
		if (len >= sizeof(ctl))
			continue;
		memcpy(ctl, c1 + 1, len);
		ctl[len] = '\0';
		if (version == 1 ? !has_word(ctl, "memory") : len != 0 || strncmp(line, "0:", 2))
			continue;
		len = strcspn(c2 + 1, "\n");
		if (len >= size)
			return -ENAMETOOLONG;
		memcpy(out, c2 + 1, len);
		out[len] = '\0';
		return 0;
	}
	return -ENOENT;
}

static bool read_u64_file(const char *dir, const char *name, uint64_t *out)
{
	char buf[64];
	unsigned long long v;

	if (hs_procfs_read_at(dir, name, buf, sizeof(buf)) <= 0)
		return false;
	if (!strncmp(buf, "max", 3)) {
		*out = UINT64_MAX;
		return true;
	}
	if (sscanf(buf, "%llu", &v) != 1)
		return false;
	*out = v;
	return true;
}

/* The page cache charged to the cgroup at dir. */
static bool memcg_file(int version, const char *dir, uint64_t *out)
{
	static char buf[16384];

	return hs_procfs_read_at(dir, "memory.stat", buf, sizeof(buf)) > 0 &&
	       hs_procfs_find_u64(buf, version == 1 ? "cache" : "file", out);
}

/*
 * Its anonymous memory and file refaults, with its children's: v1 keeps
 * them as total_rss and total_workingset_refault_file, v2 counts children
 * in anon and workingset_refault_file.
 */
static void memcg_stat(struct hs_memcg *m)
{
	char buf[16384];
	bool v1 = m->version == 1;

	if (hs_procfs_read_at(m->dir, "memory.stat", buf, sizeof(buf)) <= 0)
		return;
	m->anon_known = hs_procfs_find_u64(buf, v1 ? "total_rss" : "anon", &m->anon);
	m->refault_known = hs_procfs_find_u64(buf, v1 ? "total_workingset_refault_file" :
					      "workingset_refault_file", &m->refault_file);
}

int hs_memcg_of(int pid, struct hs_memcg *m)
{
	char buf[8192], path[64], mroot[PATH_MAX], rel[PATH_MAX], d[PATH_MAX];
	struct memcg_mount c = { 1, mroot, m->root, sizeof(mroot), false };
	const char *limit_name;
	size_t rlen;
	ssize_t n;
	int rc;

	memset(m, 0, sizeof(*m));
	snprintf(path, sizeof(path), pid ? "/proc/%d/cgroup" : "/proc/self/cgroup", pid);
	if ((n = hs_procfs_read(path, buf, sizeof(buf))) < 0)
		return (int)n;
	/* a v1 memory controller if one is mounted, else cgroup2 (where memory may be off) */
	if (cgroup_line(buf, 1, m->name, sizeof(m->name)) || hs_mountinfo_each(NULL, memcg_mount, &c) < 0 ||
	    !c.found) {
		c.version = 2;
		c.found = false;
		if ((rc = cgroup_line(buf, 2, m->name, sizeof(m->name))))
			return rc;
		if (hs_mountinfo_each(NULL, memcg_mount, &c) < 0 || !c.found)
			return -ENOENT;
	}
	m->version = c.version;
	rlen = strcmp(mroot, "/") ? strlen(mroot) : 0;
	snprintf(rel, sizeof(rel), "%s", !strncmp(m->name, mroot, rlen) ? m->name + rlen : m->name);
	if ((size_t)snprintf(m->dir, sizeof(m->dir), "%s%s", m->root, strcmp(rel, "/") ? rel : "") >=
	    sizeof(m->dir))
		return -ENAMETOOLONG;
	limit_name = m->version == 1 ? "memory.limit_in_bytes" : "memory.max";
	m->usage_known = read_u64_file(m->dir, m->version == 1 ? "memory.usage_in_bytes" :
				       "memory.current", &m->usage);
	m->file_known = memcg_file(m->version, m->dir, &m->file);
	m->peak_known = read_u64_file(m->dir, m->version == 1 ? "memory.max_usage_in_bytes" :
				      "memory.peak", &m->peak);
	memcg_stat(m);
	if (m->version == 2) {
		char reclaim[PATH_MAX + 32];

		snprintf(reclaim, sizeof(reclaim), "%s/memory.reclaim", m->dir);
		m->reclaim_file = !stat(reclaim, &(struct stat){ 0 });
	}
	/* the lowest limit from here to the root: a parent's applies to its children */
	m->limit = UINT64_MAX;
	snprintf(d, sizeof(d), "%s", m->dir);
	for (;;) {
		uint64_t v;
		char *slash;

		if (read_u64_file(d, limit_name, &v)) {
			m->limit_known = true;
			/* v1 writes "no limit" as the largest multiple of the page size */
			if (v < ((uint64_t)1 << 62) && v < m->limit) {
				m->limit = v;
				snprintf(m->limit_path, sizeof(m->limit_path), "%s/%s", d, limit_name);
			}
		}
		if (strlen(d) <= strlen(m->root) || !(slash = strrchr(d, '/')))
			break;
		*slash = '\0';
	}
	if (m->version == 2 && !strcmp(m->dir, m->root))
		m->limit_known = true;	/* the root is never limited */
	return 0;
}

struct memcg_walk {
	const struct hs_memcg *m;
	struct hs_memcg_cache *v;
	size_t n, cap;
};

static int walk_dir(struct memcg_walk *w, const char *dir, int depth)
{
	struct dirent *de;
	uint64_t file;
	DIR *d;

	if (memcg_file(w->m->version, dir, &file)) {
		const char *name = dir + strlen(w->m->root);

		if (hs_grow(&w->v, &w->cap, w->n + 1, sizeof(*w->v)))
			return -ENOMEM;
		if (!(w->v[w->n].name = strdup(*name ? name : "/")))
			return -ENOMEM;
		w->v[w->n++].file = file;
	}
	if (depth > 16 || !(d = opendir(dir)))
		return 0;
	while ((de = readdir(d))) {
		char sub[PATH_MAX];
		int rc;

		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		if ((size_t)snprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name) >= sizeof(sub))
			continue;
		if ((rc = walk_dir(w, sub, depth + 1))) {
			closedir(d);
			return rc;
		}
	}
	closedir(d);
	return 0;
}

ssize_t hs_memcg_list(const struct hs_memcg *m, struct hs_memcg_cache **out)
{
	struct memcg_walk w = { m, NULL, 0, 0 };
	int rc = walk_dir(&w, m->root, 0);

	if (rc) {
		hs_memcg_list_free(w.v, w.n);
		return rc;
	}
	*out = w.v;
	return (ssize_t)w.n;
}

void hs_memcg_list_free(struct hs_memcg_cache *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].name);
	free(v);
}

/* ---- reclaimers ------------------------------------------------------------ */

#define DAMON "/sys/kernel/mm/damon/admin/kdamonds"

/* The count in dir/nr_NAME (nr_kdamonds, nr_contexts, nr_schemes). */
static int nr_of(const char *dir, const char *name)
{
	char buf[32];
	ssize_t n = hs_procfs_read_at(dir, name, buf, sizeof(buf));

	return n < 0 ? (int)n : atoi(buf);
}

int hs_damon_schemes(struct hs_damon_scheme *out, size_t max)
{
	int nk = nr_of(DAMON, "nr_kdamonds"), count = 0;

	if (nk < 0)
		return nk;
	for (int k = 0; k < nk; k++) {
		char kd[96], ctxs[128], state[16] = "";
		int nc;

		snprintf(kd, sizeof(kd), DAMON "/%d", k);
		snprintf(ctxs, sizeof(ctxs), "%s/contexts", kd);
		hs_procfs_read_at(kd, "state", state, sizeof(state));
		if ((nc = nr_of(ctxs, "nr_contexts")) < 0)
			return nc;
		for (int c = 0; c < nc; c++) {
			char cx[160], schemes[176], attrs[208];
			uint64_t aggr = 0;
			int ns;

			snprintf(cx, sizeof(cx), "%s/%d", ctxs, c);
			snprintf(schemes, sizeof(schemes), "%s/schemes", cx);
			snprintf(attrs, sizeof(attrs), "%s/monitoring_attrs/intervals", cx);
			read_u64_file(attrs, "aggr_us", &aggr);
			if ((ns = nr_of(schemes, "nr_schemes")) < 0)
				return ns;
			for (int s = 0; s < ns && (size_t)count < max; s++) {
				struct hs_damon_scheme *x = &out[count++];
				uint64_t age;
				char age_dir[224];

				memset(x, 0, sizeof(*x));
				snprintf(x->path, sizeof(x->path), "%s/%d", schemes, s);
				if (hs_procfs_read_at(x->path, "action", x->action, sizeof(x->action)) > 0)
					x->action[strcspn(x->action, "\n")] = '\0';
				x->on = !strncmp(state, "on", 2);
				x->aggr_us = aggr;
				snprintf(age_dir, sizeof(age_dir), "%s/access_pattern/age", x->path);
				snprintf(x->min_age_path, sizeof(x->min_age_path), "%s/min", age_dir);
				if (aggr && read_u64_file(age_dir, "min", &age)) {
					x->age_known = true;
					x->min_age_s = (double)age * (double)aggr / 1e6;
				}
			}
		}
	}
	return count;
}

int hs_balloon_probe(char *where, size_t size)
{
	static char buf[65536];
	ssize_t n = hs_procfs_read("/proc/modules", buf, sizeof(buf));
	const char *drv = "/sys/bus/virtio/drivers/virtio_balloon";
	struct dirent *de;
	DIR *d;

	if (n >= 0 && (!strncmp(buf, "virtio_balloon ", 15) || strstr(buf, "\nvirtio_balloon "))) {
		snprintf(where, size, "/proc/modules");
		return 1;
	}
	if (!(d = opendir(drv)))
		return n >= 0 || errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		/* a device bound to the driver: a link named after it */
		if (!strncmp(de->d_name, "virtio", 6)) {
			snprintf(where, size, "%s/%s", drv, de->d_name);
			closedir(d);
			return 1;
		}
	}
	closedir(d);
	return 0;
}

uint64_t hs_rerun_need(uint64_t read_pages, uint64_t page_size, const struct hs_usage *u,
		       struct hs_rerun_need *n)
{
	memset(n, 0, sizeof(*n));
	n->read = read_pages * page_size;
	if (u && u->io_known) {
		n->written_known = true;
		n->written = u->write_bytes_disk;
	}
	if (u && u->max_rss_bytes) {
		n->anon_known = true;
		n->anon = u->max_rss_bytes;
	}
	n->total = n->read + n->written + n->anon;
	return n->total;
}

uint64_t hs_slurm_mem_mib(uint64_t bytes)
{
	uint64_t mib = bytes / (1 << 20) + (bytes % (1 << 20) != 0);

	return mib ? mib : 1;
}
