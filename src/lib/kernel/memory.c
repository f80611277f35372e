/*
 * memory.c - the machine's memory, its cgroups and its reclaimers (memory.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernel/memory.h"
#include "kernel/procfs.h"

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

int hs_vmstat_parse(const char *buf, struct hs_vmstat *v)
{
	uint64_t a = 0, b = 0;

	memset(v, 0, sizeof(*v));
	/* before 5.9 there was one counter for file and anonymous pages */
	v->refault_known = hs_procfs_find_u64(buf, "workingset_refault_file", &v->refault_file) ||
			   hs_procfs_find_u64(buf, "workingset_refault", &v->refault_file);
	hs_procfs_find_u64(buf, "pginodesteal", &a);
	hs_procfs_find_u64(buf, "kswapd_inodesteal", &b);
	v->inodesteal = a + b;
	hs_procfs_find_u64(buf, "slabs_scanned", &v->slabs_scanned);
	v->global_known = hs_procfs_find_u64(buf, "pgsteal_kswapd", &v->steal_kswapd) &&
			  hs_procfs_find_u64(buf, "pgsteal_direct", &v->steal_direct);
	hs_procfs_find_u64(buf, "pgscan_kswapd", &v->scan_kswapd);
	hs_procfs_find_u64(buf, "pgscan_direct", &v->scan_direct);
	v->steal_file_known = hs_procfs_find_u64(buf, "pgsteal_file", &v->steal_file);
	return 0;
}

int hs_vmstat_read(struct hs_vmstat *v)
{
	char buf[32768];	/* vmstat has a few hundred lines */
	ssize_t n = hs_procfs_read("/proc/vmstat", buf, sizeof(buf));

	return n < 0 ? (int)n : hs_vmstat_parse(buf, v);
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

/* Where the hierarchy of c->version is mounted: true if it is. */
static bool find_mount(struct memcg_mount *c)
{
	c->found = false;
	return hs_mountinfo_each(NULL, memcg_mount, c) >= 0 && c->found;
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

/*
 * The figures of the cgroup at dir, its children included: v1 keeps them
 * in memory.stat's total_* keys (cache and rss are its own alone), v2
 * counts children in every key. How often it reached its limit: v1's
 * memory.failcnt (charges that failed and made it reclaim), v2's "max"
 * in memory.events (the times it was about to go over memory.max).
 */
static void memcg_stat(int version, const char *dir, struct hs_memcg_stat *st)
{
	char buf[16384];
	bool v1 = version == 1;

	memset(st, 0, sizeof(*st));
	st->usage_known = read_u64_file(dir, v1 ? "memory.usage_in_bytes" : "memory.current", &st->usage);
	st->peak_known = read_u64_file(dir, v1 ? "memory.max_usage_in_bytes" : "memory.peak", &st->peak);
	if (v1)
		st->hits_known = read_u64_file(dir, "memory.failcnt", &st->hits);
	else if (hs_procfs_read_at(dir, "memory.events", buf, sizeof(buf)) > 0)
		st->hits_known = hs_procfs_find_u64(buf, "max", &st->hits);
	if (hs_procfs_read_at(dir, "memory.stat", buf, sizeof(buf)) <= 0)
		return;
	st->file_known = hs_procfs_find_u64(buf, v1 ? "total_cache" : "file", &st->file);
	st->anon_known = hs_procfs_find_u64(buf, v1 ? "total_rss" : "anon", &st->anon);
	st->refault_known = hs_procfs_find_u64(buf, v1 ? "total_workingset_refault_file" :
					       "workingset_refault_file", &st->refault_file);
	if (!v1)
		st->steal_known = hs_procfs_find_u64(buf, "pgsteal", &st->steal);
}

const char *hs_memcg_level_name(const struct hs_memcg *m, int i, char *buf, size_t size)
{
	size_t len = m->level[i].name_len;

	if (!len)
		snprintf(buf, size, "/");
	else
		snprintf(buf, size, "%.*s", (int)len, m->name);
	return buf;
}

/*
 * Fill m for the cgroup name of the hierarchy of version mounted at mount,
 * which shows the hierarchy from mroot ("/" but in a cgroup namespace or a
 * bind mount of a part): its figures, and every limit from it to the top
 * of the mount, nearest first.
 */
static int memcg_fill(struct hs_memcg *m, int version, const char *mount, const char *mroot,
		      const char *name)
{
	size_t rlen = strcmp(mroot, "/") ? strlen(mroot) : 0, rootlen;
	const char *limit_name = version == 1 ? "memory.limit_in_bytes" : "memory.max";
	const char *rel = name;
	char d[PATH_MAX];
	struct stat st;

	memset(m, 0, sizeof(*m));
	m->lowest = -1;
	if (rlen && !strncmp(name, mroot, rlen) && (name[rlen] == '/' || !name[rlen]))
		rel = name + rlen;
	if ((size_t)snprintf(m->name, sizeof(m->name), "%s", name) >= sizeof(m->name) ||
	    (size_t)snprintf(m->root, sizeof(m->root), "%s", mount) >= sizeof(m->root) ||
	    (size_t)snprintf(m->dir, sizeof(m->dir), "%s%s", mount,
			     strcmp(rel, "/") && *rel ? rel : "") >= sizeof(m->dir))
		return -ENAMETOOLONG;
	if (stat(m->dir, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOENT;
	m->version = version;
	memcg_stat(version, m->dir, &m->st);
	if (version == 2) {
		char reclaim[PATH_MAX + 32];

		snprintf(reclaim, sizeof(reclaim), "%s/memory.reclaim", m->dir);
		m->reclaim_file = !stat(reclaim, &(struct stat){ 0 });
	}
	/* every limit from here to the root: a parent's applies to its children */
	m->limit = UINT64_MAX;
	rootlen = strlen(m->root);
	snprintf(d, sizeof(d), "%s", m->dir);
	for (;;) {
		uint64_t v;
		char *slash;

		if (read_u64_file(d, limit_name, &v))
			m->limit_known = true;
		else
			v = UINT64_MAX;
		/* v1 writes "no limit" as the largest multiple of the page size */
		if (v < ((uint64_t)1 << 62)) {
			int at = m->nlevels < HS_MEMCG_LEVELS ? m->nlevels++ : -1;
			struct hs_memcg_level *l;

			/* past the nearest HS_MEMCG_LEVELS, only a lower limit takes the last place */
			if (at < 0 && v < m->limit)
				at = HS_MEMCG_LEVELS - 1;
			if (at >= 0) {
				l = &m->level[at];
				/* its name: the job's, less what the job's directory has below d */
				l->name_len = strlen(m->name) - (strlen(m->dir) - strlen(d));
				if (!strcmp(m->name, "/"))
					l->name_len = 0;
				l->limit = v;
				snprintf(l->limit_path, sizeof(l->limit_path), "%s/%s", d, limit_name);
				memcg_stat(version, d, &l->st);
			}
			if (v < m->limit) {
				m->limit = v;
				m->lowest = at;
				snprintf(m->limit_path, sizeof(m->limit_path), "%s/%s", d, limit_name);
			}
		}
		if (strlen(d) <= rootlen || !(slash = strrchr(d, '/')))
			break;
		*slash = '\0';
	}
	if (m->version == 2 && !strcmp(m->dir, m->root))
		m->limit_known = true;	/* the root is never limited */
	return 0;
}

int hs_memcg_in(int version, const char *mount, const char *name, struct hs_memcg *m)
{
	return memcg_fill(m, version, mount, "/", name);
}

int hs_memcg_of(int pid, struct hs_memcg *m)
{
	char buf[8192], path[64], mroot[PATH_MAX], point[PATH_MAX], name[PATH_MAX];
	struct memcg_mount c = { 1, mroot, point, sizeof(mroot), false };
	ssize_t n;
	int rc;

	snprintf(path, sizeof(path), pid ? "/proc/%d/cgroup" : "/proc/self/cgroup", pid);
	if ((n = hs_procfs_read(path, buf, sizeof(buf))) < 0)
		return (int)n;
	/* a v1 memory controller if one is mounted, else cgroup2 (where memory may be off) */
	if (cgroup_line(buf, 1, name, sizeof(name)) || !find_mount(&c)) {
		c.version = 2;
		if ((rc = cgroup_line(buf, 2, name, sizeof(name))))
			return rc;
		if (!find_mount(&c))
			return -ENOENT;
	}
	return memcg_fill(m, c.version, point, mroot, name);
}

int hs_memcg_named(int version, const char *path, struct hs_memcg *m)
{
	char mroot[PATH_MAX], point[PATH_MAX], name[PATH_MAX];
	struct memcg_mount c = { version == 2 ? 2 : 1, mroot, point, sizeof(mroot), false };
	size_t plen;

	if (!find_mount(&c)) {
		if (version)
			return -ENOENT;
		c.version = 2;
		if (!find_mount(&c))
			return -ENOENT;
	}
	/* a directory under the mount point names the cgroup below the mount's root */
	plen = strlen(point);
	if (!strncmp(path, point, plen) && (path[plen] == '/' || !path[plen])) {
		const char *rest = path + plen;

		if ((size_t)snprintf(name, sizeof(name), "%s%s", strcmp(mroot, "/") ? mroot : "",
				     *rest ? rest : strcmp(mroot, "/") ? "" : "/") >= sizeof(name))
			return -ENAMETOOLONG;
	} else if (path[0] != '/') {
		return -ENOENT;
	} else if ((size_t)snprintf(name, sizeof(name), "%s", path) >= sizeof(name)) {
		return -ENAMETOOLONG;
	}
	/* "/a/b/" and "/a//b" name "/a/b" */
	hs_tidy_path(name, false);
	plen = strlen(name);
	while (plen > 1 && name[plen - 1] == '/')
		name[--plen] = '\0';
	return memcg_fill(m, c.version, point, mroot, name);
}

struct memcg_walk {
	const struct hs_memcg *m;
	struct hs_memcg_cache *v;
	size_t n, cap;
};

static int walk_dir(struct memcg_walk *w, const char *dir, int depth)
{
	struct hs_memcg_cache *x;
	struct dirent *de;
	char buf[16384];
	bool v1 = w->m->version == 1;
	DIR *d;

	/* v1: its own cache and rss; v2: with its children, its own found once all are read */
	if (hs_procfs_read_at(dir, "memory.stat", buf, sizeof(buf)) > 0) {
		const char *name = dir + strlen(w->m->root);

		if (hs_grow(&w->v, &w->cap, w->n + 1, sizeof(*w->v)))
			return -ENOMEM;
		x = &w->v[w->n];
		memset(x, 0, sizeof(*x));
		hs_procfs_find_u64(buf, v1 ? "cache" : "file", &x->file);
		hs_procfs_find_u64(buf, v1 ? "rss" : "anon", &x->anon);
		x->usage_known = read_u64_file(dir, v1 ? "memory.usage_in_bytes" : "memory.current",
					       &x->usage);
		x->peak_known = read_u64_file(dir, v1 ? "memory.max_usage_in_bytes" : "memory.peak",
					      &x->peak);
		if (!(x->name = strdup(*name ? name : "/")))
			return -ENOMEM;
		w->n++;
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

/* Is the cgroup named a an ancestor of the one named b? */
static bool ancestor(const char *a, const char *b)
{
	size_t len = strlen(a);

	if (!strcmp(a, "/"))
		return strcmp(b, "/") != 0;
	return !strncmp(b, a, len) && b[len] == '/';
}

static uint64_t less(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

/*
 * v2: a cgroup's own memory is its total less its children's totals. The
 * walk lists a parent before its children, so the nearest listed
 * ancestor still on the stack is a cgroup's parent, and a child's totals
 * are taken from its parent before the child's own children change it.
 */
static int own_memory(struct hs_memcg_cache *v, size_t n)
{
	size_t *stack = malloc((n ? n : 1) * sizeof(*stack)), sp = 0;

	if (!stack)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		while (sp && !ancestor(v[stack[sp - 1]].name, v[i].name))
			sp--;
		if (sp) {
			struct hs_memcg_cache *p = &v[stack[sp - 1]];

			p->file = less(p->file, v[i].file);
			p->anon = less(p->anon, v[i].anon);
		}
		stack[sp++] = i;
	}
	free(stack);
	return 0;
}

ssize_t hs_memcg_list(const struct hs_memcg *m, struct hs_memcg_cache **out)
{
	struct memcg_walk w = { m, NULL, 0, 0 };
	int rc = walk_dir(&w, m->root, 0);

	if (!rc && m->version == 2)
		rc = own_memory(w.v, w.n);
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

int hs_damon_update_stats(void)
{
	int nk = nr_of(DAMON, "nr_kdamonds"), rc = 0;

	if (nk < 0)
		return nk;
	for (int k = 0; k < nk; k++) {
		char state[PATH_MAX], now[16] = "";
		int fd;

		snprintf(state, sizeof(state), DAMON "/%d", k);
		/* an idle kdamond has nothing to refresh, and refuses the command */
		if (hs_procfs_read_at(state, "state", now, sizeof(now)) <= 0 || strncmp(now, "on", 2))
			continue;
		snprintf(state, sizeof(state), DAMON "/%d/state", k);
		if ((fd = open(state, O_WRONLY | O_CLOEXEC)) < 0) {
			rc = rc ? rc : -errno;
			continue;
		}
		if (write(fd, "update_schemes_stats", 20) < 0)
			rc = rc ? rc : -errno;
		close(fd);
	}
	return rc;
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
				char age_dir[224], stats[208];

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
				snprintf(stats, sizeof(stats), "%s/stats", x->path);
				x->stats_known = read_u64_file(stats, "sz_applied", &x->sz_applied) &&
						 read_u64_file(stats, "nr_applied", &x->nr_applied);
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
