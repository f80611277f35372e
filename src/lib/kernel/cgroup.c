/*
 * cgroup.c - where this process's cgroup is, what a cgroup holds, and
 * making, joining and removing one (see cgroup.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernel/cgroup.h"
#include "kernel/procfs.h"

/* ---- where ---------------------------------------------------------------- */

/*
 * /proc/self/cgroup has a line a hierarchy, "ID:CONTROLLERS:PATH"; v2's is
 * "0::PATH" (ID 0, no controllers named), and is the only one read here:
 * v1 hierarchies are memory.h's business.
 */
int hs_cgroup_parse_self(const char *buf, char *out, size_t size)
{
	for (const char *line = *buf ? buf : NULL; line; line = hs_procfs_next_line(line)) {
		size_t len;

		if (strncmp(line, "0::", 3))
			continue;
		line += 3;
		len = strcspn(line, "\n");
		if (len >= size)
			return -ENAMETOOLONG;
		memcpy(out, line, len);
		out[len] = '\0';
		return 0;
	}
	return -ENOENT;
}

/*
 * The search of mountinfo for the cgroup2 mount that shows our cgroup. A
 * mount may show a subtree only (its root: a container's namespace, a bind
 * mount), so ours is under a mount when its path starts with that root.
 * Without one that shows it, the first cgroup2 mount is still the mount.
 */
struct cgroup2_search {
	const char *self;	/* our cgroup path, "" if unknown */
	char *own, *mount;
	size_t size;
	bool found;
};

static int cgroup2_mount(void *ctx, const struct hs_mountinfo *m)
{
	struct cgroup2_search *c = ctx;
	const char *self = c->self;
	size_t rlen;

	if (strcmp(m->fstype, "cgroup2"))
		return 0;
	if (!c->found) {
		snprintf(c->mount, c->size, "%s", m->point);
		c->found = true;
	}
	rlen = strcmp(m->root, "/") ? strlen(m->root) : 0;
	if (self[0] == '/' && !strncmp(self, m->root, rlen) &&
	    (self[rlen] == '/' || self[rlen] == '\0')) {
		snprintf(c->mount, c->size, "%s", m->point);
		/* "/" alone would add a trailing slash */
		snprintf(c->own, c->size, "%s%s", m->point, strcmp(self + rlen, "/") ? self + rlen : "");
		return 1;
	}
	return 0;
}

int hs_cgroup2_dirs(char *own, char *mount, size_t size)
{
	char buf[8192], self[PATH_MAX];
	struct cgroup2_search c = { self, own, mount, size, false };

	own[0] = mount[0] = buf[0] = '\0';	/* buf: a string even if the read fails */
	if (hs_procfs_read("/proc/self/cgroup", buf, sizeof(buf)) < 0 ||
	    hs_cgroup_parse_self(buf, self, sizeof(self)) < 0)
		self[0] = '\0';
	if (hs_mountinfo_each(NULL, cgroup2_mount, &c) < 0)
		return -ENOENT;
	return c.found ? 0 : -ENOENT;
}

/*
 * cgroup.procs is a pid a line and may be longer than a read: the lines
 * are counted as they come, never the whole file held.
 */
int hs_cgroup_nprocs(const char *dir)
{
	char path[PATH_MAX + 16], buf[4096];
	int fd, n = 0;
	ssize_t got;

	if ((size_t)snprintf(path, sizeof(path), "%s/cgroup.procs", dir) >= sizeof(path))
		return -ENAMETOOLONG;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	while ((got = read(fd, buf, sizeof(buf))) != 0) {
		if (got < 0) {
			if (errno == EINTR)
				continue;
			n = -errno;
			break;
		}
		for (ssize_t i = 0; i < got; i++)
			n += buf[i] == '\n';
	}
	close(fd);
	return n;
}

/* A relative dir is under the cgroup2 mount, as users name cgroups (systemd's slices). */
int hs_cgroup2_path(const char *dir, char **out)
{
	char own[PATH_MAX], mnt[PATH_MAX];

	*out = NULL;
	if (*dir == '/')
		*out = strdup(dir);
	else if (hs_cgroup2_dirs(own, mnt, sizeof(mnt)) < 0)
		return -ENOENT;
	else if (asprintf(out, "%s/%s", mnt, dir) < 0)
		*out = NULL;
	return *out ? 0 : -ENOMEM;
}

/* ---- what a cgroup holds --------------------------------------------------- */

bool hs_cgroup_holds_only(const char *dir, pid_t pid)
{
	char buf[64];
	char *end;
	long first;

	if (hs_procfs_read_at(dir, "cgroup.procs", buf, sizeof(buf)) <= 0)
		return false;
	/* one line, and it is pid's: a second line would follow the first newline */
	first = strtol(buf, &end, 10);
	return first == (long)pid && end[0] == '\n' && end[1] == '\0';
}

/*
 * cgroup.controllers lists, space-separated, the controllers the parent
 * enabled for this cgroup: only those have their files (memory.low...) here.
 */
bool hs_cgroup_has_controller(const char *dir, const char *name)
{
	char buf[512], *save = NULL;

	if (hs_procfs_read_at(dir, "cgroup.controllers", buf, sizeof(buf)) < 0)
		return false;
	for (char *t = strtok_r(buf, " \n", &save); t; t = strtok_r(NULL, " \n", &save))
		if (!strcmp(t, name))
			return true;
	return false;
}

/* ---- making, joining, removing ------------------------------------------------ */

int hs_cgroup_write(const char *dir, const char *name, const char *text)
{
	char path[PATH_MAX + 64];
	size_t len = strlen(text);
	int fd, rc = 0;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
		return -ENAMETOOLONG;
	/* never O_CREAT: a name the kernel does not have is an error, not a new file */
	if ((fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC)) < 0)
		return -errno;
	/* one write(2): the kernel takes a cgroup file's value whole from each */
	if (write(fd, text, len) != (ssize_t)len)
		rc = -errno;
	if (close(fd) < 0 && !rc)
		rc = -errno;
	return rc;
}

int hs_cgroup_make(const char *parent, const char *name, char *dir, size_t size)
{
	int len = snprintf(dir, size, "%s/%s", parent, name);

	if (len < 0 || (size_t)len >= size)
		return -ENAMETOOLONG;
	/* readable by all, as the cgroups above it are; its files writable by its maker */
	return mkdir(dir, 0755) < 0 ? -errno : 0;
}

/* No snprintf, no allocation: a child between fork and exec may call it. */
int hs_cgroup_enter(const char *procs)
{
	int fd = open(procs, O_WRONLY | O_CLOEXEC);
	int rc = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, "0", 1) != 1)
		rc = -errno;
	close(fd);
	return rc;
}

/* One pid a write: the kernel moves one process (all its threads) at a time. */
int hs_cgroup_move(const char *dir, pid_t pid)
{
	char num[32];

	snprintf(num, sizeof(num), "%d\n", (int)pid);
	return hs_cgroup_write(dir, "cgroup.procs", num);
}

/*
 * A job's cgroup outlives the job by a moment (and longer if the job left
 * a process behind): 40 tries, 1 ms apart at first, then doubling up to
 * 64 ms, wait a little over 2 s in all before the error is returned.
 */
int hs_cgroup_remove(const char *dir, const char *parent)
{
	char parent_procs[PATH_MAX + 16], buf[4096];
	useconds_t delay = 1000;
	int err = 0;

	snprintf(parent_procs, sizeof(parent_procs), "%s/cgroup.procs", parent);
	/* rmdir removes a cgroup that holds no process: its files are the kernel's */
	for (int attempt = 0; attempt < 40; attempt++) {
		if (rmdir(dir) == 0 || errno == ENOENT)
			return 0;
		err = errno;
		if (err != EBUSY)
			break;
		/* leftover processes (a daemon the job started) go back where they came from */
		if (hs_procfs_read_at(dir, "cgroup.procs", buf, sizeof(buf)) > 0) {
			int fd = open(parent_procs, O_WRONLY | O_CLOEXEC);

			for (char *s = buf, *end; fd >= 0 && *s; s = end) {
				end = strchr(s, '\n');
				end = end ? end + 1 : s + strlen(s);
				if (write(fd, s, (size_t)(end - s)) < 0 && errno != ESRCH)
					err = errno;
			}
			if (fd >= 0)
				close(fd);
		}
		/* an exited task leaves its cgroup a little after wait() returns */
		usleep(delay);
		if (delay < 50000)
			delay *= 2;
	}
	return -err;
}
