/*
 * procfs.c - which filesystems are the kernel's, and readers of its files
 * (see procfs.h).
 */
#include <errno.h>
#include <linux/magic.h>
#include <sys/statfs.h>

#include "hotset/procfs.h"

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
