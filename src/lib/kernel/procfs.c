/*
 * procfs.c - which filesystems are the kernel's, and readers of its files
 * (see procfs.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "kernel/procfs.h"

/* ---- pseudo-filesystems ------------------------------------------------ */

#ifndef CONFIGFS_MAGIC
#define CONFIGFS_MAGIC 0x62656570
#endif
#ifndef FUSE_CTL_SUPER_MAGIC
#define FUSE_CTL_SUPER_MAGIC 0x65735543
#endif

static const struct {
	long magic;
	const char *name;
} pseudo_fs[] = {
	{ PROC_SUPER_MAGIC, "proc" },	{ SYSFS_MAGIC, "sysfs" },
	{ DEBUGFS_MAGIC, "debugfs" },	{ TRACEFS_MAGIC, "tracefs" },
	{ CGROUP_SUPER_MAGIC, "cgroup" }, { CGROUP2_SUPER_MAGIC, "cgroup2" },
	{ SECURITYFS_MAGIC, "securityfs" }, { BPF_FS_MAGIC, "bpf" },
	{ DEVPTS_SUPER_MAGIC, "devpts" }, { PSTOREFS_MAGIC, "pstore" },
	{ EFIVARFS_MAGIC, "efivarfs" }, { SELINUX_MAGIC, "selinuxfs" },
	{ CONFIGFS_MAGIC, "configfs" }, { FUSE_CTL_SUPER_MAGIC, "fusectl" },
	/* behind pipes, sockets, anon inodes and namespaces: never a path's */
	{ PIPEFS_MAGIC, "pipefs" },	{ SOCKFS_MAGIC, "sockfs" },
	{ ANON_INODE_FS_MAGIC, "anon_inodefs" }, { NSFS_MAGIC, "nsfs" },
};

const char *hs_pseudo_fs_name(long magic)
{
	for (size_t i = 0; i < sizeof(pseudo_fs) / sizeof(pseudo_fs[0]); i++)
		if (pseudo_fs[i].magic == magic)
			return pseudo_fs[i].name;
	return NULL;
}

const char *hs_pseudo_fs(int fd)
{
	struct statfs sf;

	if (fstatfs(fd, &sf) < 0)
		return NULL;
	return hs_pseudo_fs_name((long)sf.f_type);
}

/* ---- small files ------------------------------------------------------ */

ssize_t hs_procfs_read(const char *path, char *buf, size_t size)
{
	size_t len = 0;
	ssize_t n;
	int fd, err;

	if (!size)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (len + 1 < size && (n = read(fd, buf + len, size - 1 - len)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = errno;
			close(fd);
			return -err;
		}
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	return (ssize_t)len;
}

ssize_t hs_procfs_read_at(const char *dir, const char *name, char *buf, size_t size)
{
	char path[PATH_MAX + 64];

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
		return -ENAMETOOLONG;
	return hs_procfs_read(path, buf, size);
}

const char *hs_procfs_next_line(const char *s)
{
	s = strchr(s, '\n');
	return s && s[1] ? s + 1 : NULL;
}

bool hs_procfs_find_u64(const char *buf, const char *key, uint64_t *out)
{
	size_t klen = strlen(key);

	/* NOLINTNEXTLINE(clang-analyzer-core.uninitialized.Branch): hs_procfs_read() ends buf with a NUL on every success, which the analyzer loses in its loop */
	for (const char *line = *buf ? buf : NULL; line; line = hs_procfs_next_line(line)) {
		const char *v = line + klen;

		if (!strncmp(line, key, klen) && (*v == ' ' || *v == ':' || *v == '=')) {
			*out = strtoull(v + 1, NULL, 10);
			return true;
		}
	}
	return false;
}

int hs_proc_syscall(pid_t tid, long *nr)
{
	char path[64], buf[256], *end;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)tid);
	if ((n = hs_procfs_read(path, buf, sizeof(buf))) < 0)
		return (int)n;
	if (!strncmp(buf, "running", 7))
		return -EAGAIN;
	errno = 0;
	*nr = strtol(buf, &end, 10);
	if (errno || end == buf)
		return -EINVAL;
	return *nr >= 0;
}

/* ---- I/O counts ----------------------------------------------------------- */

int hs_proc_io_parse(const char *buf, struct hs_proc_io *io)
{
	struct hs_proc_io v = { 0 };

	if (!hs_procfs_find_u64(buf, "rchar", &v.rchar) ||
	    !hs_procfs_find_u64(buf, "read_bytes", &v.read_bytes))
		return -EINVAL;
	hs_procfs_find_u64(buf, "wchar", &v.wchar);
	hs_procfs_find_u64(buf, "syscr", &v.syscr);
	hs_procfs_find_u64(buf, "syscw", &v.syscw);
	hs_procfs_find_u64(buf, "write_bytes", &v.write_bytes);
	hs_procfs_find_u64(buf, "cancelled_write_bytes", &v.cancelled_write_bytes);
	*io = v;
	return 0;
}

ssize_t hs_proc_io_read(const char *path, struct hs_proc_io *io)
{
	char buf[1024];
	ssize_t n = hs_procfs_read(path ? path : "/proc/self/io", buf, sizeof(buf));

	if (n < 0)
		return n;
	if (n == 0)
		return -ENOENT;	/* a task that ended while being read */
	if (hs_proc_io_parse(buf, io))
		return -EINVAL;
	return n;
}

/* ---- /proc/PID/stat --------------------------------------------------------- */

int hs_proc_stat_parse(const char *buf, struct hs_proc_stat *st)
{
	struct hs_proc_stat v = { 0 };
	const char *s = strrchr(buf, ')');
	unsigned field;

	/* after the name, field 3 (the state) onwards, separated by one space */
	if (!s || s[1] != ' ' || !s[2])
		return -EINVAL;
	v.state = s[2];
	s += 3;
	for (field = 4; *s == ' '; field++) {
		uint64_t n = 0;
		bool neg = false, digits = false;

		s++;
		if (*s == '-')	/* tty_pgrp and the like may be -1 */
			neg = true, s++;
		for (; *s >= '0' && *s <= '9'; s++, digits = true)
			n = n * 10 + (uint64_t)(*s - '0');
		if (!digits)
			return -EINVAL;
		if (neg)
			n = 0;
		switch (field) {
		case 4: v.ppid = (pid_t)n; break;
		case 14: v.utime = n; break;
		case 15: v.stime = n; break;
		case 16: v.cutime = n; break;
		case 17: v.cstime = n; break;
		case 22: v.starttime = n; break;
		case 42: v.blkio_ticks = n; v.blkio_known = true; break;
		}
	}
	if (field <= 22)
		return -EINVAL;
	*st = v;
	return 0;
}

int hs_proc_stat_read(const char *path, struct hs_proc_stat *st)
{
	char buf[1024];
	ssize_t n = hs_procfs_read(path, buf, sizeof(buf));

	if (n < 0)
		return (int)n;
	if (n == 0)
		return -ENOENT;	/* a task that ended while being read */
	return hs_proc_stat_parse(buf, st);
}

/* ---- mount tables ------------------------------------------------------------ */

void hs_mountinfo_unescape(char *s)
{
	char *out = s;

	while (*s) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*out++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 4;
		} else {
			*out++ = *s++;
		}
	}
	*out = '\0';
}

/* The next space-separated field of *s, NUL-terminated in place; NULL at the end. */
static char *field(char **s)
{
	char *f = *s, *end;

	if (!f || !*f)
		return NULL;
	end = f + strcspn(f, " \n");
	if (*end == ' ') {
		*end = '\0';
		*s = end + 1;
	} else {
		*end = '\0';
		*s = NULL;
	}
	return f;
}

/* A decimal int at s, all of it; false if s is not one. */
static bool whole_int(const char *s, int *out)
{
	char *end;
	long v;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtol(s, &end, 10);
	if (*end || errno || v > INT_MAX)
		return false;
	*out = (int)v;
	return true;
}

/* "MAJOR:MINOR" */
static bool dev_numbers(const char *s, unsigned *major, unsigned *minor)
{
	int a, b;
	char copy[32];
	const char *colon = strchr(s, ':');

	if (!colon || (size_t)(colon - s) >= sizeof(copy))
		return false;
	memcpy(copy, s, (size_t)(colon - s));
	copy[colon - s] = '\0';
	if (!whole_int(copy, &a) || !whole_int(colon + 1, &b))
		return false;
	*major = (unsigned)a;
	*minor = (unsigned)b;
	return true;
}

/*
 * id parent major:minor root point options [optional fields...] - fstype
 * source super_options
 */
int hs_mountinfo_parse(char *line, struct hs_mountinfo *m)
{
	char *s = line, *id, *parent, *dev, *f;

	if (!(id = field(&s)) || !(parent = field(&s)) || !(dev = field(&s)) ||
	    !(m->root = field(&s)) || !(m->point = field(&s)) || !(m->options = field(&s)))
		return -EINVAL;
	if (!whole_int(id, &m->mnt_id) || !whole_int(parent, &m->parent_id) ||
	    !dev_numbers(dev, &m->major, &m->minor))
		return -EINVAL;
	while ((f = field(&s)) && strcmp(f, "-"))
		;	/* optional fields: "shared:1", "master:2"... */
	if (!f || !(m->fstype = field(&s)))
		return -EINVAL;
	/* absent: the empty string at the end of fstype */
	m->source = (f = field(&s)) ? f : m->fstype + strlen(m->fstype);
	m->super_options = (f = field(&s)) ? f : m->source + strlen(m->source);
	hs_mountinfo_unescape(m->root);
	hs_mountinfo_unescape(m->point);
	hs_mountinfo_unescape(m->fstype);
	hs_mountinfo_unescape(m->source);
	/* never empty in the kernel's tables (a source may be: a mount of "") */
	if (!*m->root || !*m->point || !*m->options || !*m->fstype)
		return -EINVAL;
	return 0;
}

int hs_mountinfo_each(const char *path, hs_mountinfo_fn fn, void *ctx)
{
	FILE *f = fopen(path ? path : "/proc/self/mountinfo", "re");
	char *line = NULL;
	size_t cap = 0;
	int rc = 0;

	if (!f)
		return -errno;
	while (!rc && getline(&line, &cap, f) > 0) {
		struct hs_mountinfo m;

		if (hs_mountinfo_parse(line, &m) == 0)
			rc = fn(ctx, &m);
	}
	if (!rc && ferror(f))
		rc = -EIO;
	free(line);
	fclose(f);
	return rc;
}

/* ---- file positions ------------------------------------------------------------ */

void hs_fdinfo_parse(const char *buf, struct hs_fdinfo *fi)
{
	memset(fi, 0, sizeof(*fi));
	for (const char *s = *buf ? buf : NULL; s; s = hs_procfs_next_line(s)) {
		if (!strncmp(s, "pos:", 4))
			fi->pos = strtoll(s + 4, NULL, 10);
		else if (!strncmp(s, "flags:", 6))
			fi->flags = (unsigned)strtoul(s + 6, NULL, 8);
		else if (!strncmp(s, "mnt_id:", 7))
			fi->mnt_id = (int)strtol(s + 7, NULL, 10);
		else if (!strncmp(s, "ino:", 4))
			fi->ino = strtoull(s + 4, NULL, 10);
	}
}
