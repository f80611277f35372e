/*
 * test-procfs.c - the kernel's filesystems and the parsers of its files.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdint.h>

#include "hotset/procfs.h"
#include "hotset/record.h"
#include "unit.h"

/* ---- pseudo-filesystems ------------------------------------------------------------ */

TEST(one_table_of_pseudo_filesystems_serves_the_walk_and_record)
{
	static const long pseudo[] = {
		PROC_SUPER_MAGIC, SYSFS_MAGIC, DEBUGFS_MAGIC, TRACEFS_MAGIC, CGROUP_SUPER_MAGIC,
		CGROUP2_SUPER_MAGIC, SECURITYFS_MAGIC, BPF_FS_MAGIC, DEVPTS_SUPER_MAGIC,
		PSTOREFS_MAGIC, EFIVARFS_MAGIC, SELINUX_MAGIC, 0x62656570 /* configfs */,
		0x65735543 /* fusectl */, PIPEFS_MAGIC, SOCKFS_MAGIC, ANON_INODE_FS_MAGIC,
		NSFS_MAGIC,
	};
	static const long data[] = { EXT4_SUPER_MAGIC, BTRFS_SUPER_MAGIC, XFS_SUPER_MAGIC,
				     NFS_SUPER_MAGIC, OVERLAYFS_SUPER_MAGIC, 0 };

	for (size_t i = 0; i < sizeof(pseudo) / sizeof(pseudo[0]); i++) {
		CHECK(hs_pseudo_fs_name(pseudo[i]) != NULL);
		/* whatever the walk refuses, a recording leaves out too */
		CHECK(hs_record_excluded("/mnt/x", pseudo[i]));
	}
	/* the three the record backends used to let through */
	CHECK_STR(hs_pseudo_fs_name(0x62656570), "configfs");
	CHECK_STR(hs_pseudo_fs_name(PSTOREFS_MAGIC), "pstore");
	CHECK_STR(hs_pseudo_fs_name(EFIVARFS_MAGIC), "efivarfs");
	CHECK_STR(hs_pseudo_fs_name(CGROUP2_SUPER_MAGIC), "cgroup2");
	for (size_t i = 0; i < sizeof(data) / sizeof(data[0]); i++) {
		CHECK(hs_pseudo_fs_name(data[i]) == NULL);
		CHECK(!hs_record_excluded("/mnt/x", data[i]));
	}
	/* data that is always in memory: walked (status tells it is resident), not recorded */
	CHECK(hs_pseudo_fs_name(TMPFS_MAGIC) == NULL && hs_record_excluded("/mnt/x", TMPFS_MAGIC));
	CHECK(hs_pseudo_fs_name(RAMFS_MAGIC) == NULL && hs_record_excluded("/mnt/x", RAMFS_MAGIC));
	/* by path alone */
	CHECK(hs_record_excluded("/proc/self/status", 0) && hs_record_excluded("/dev/null", 0));
	CHECK(hs_record_excluded("/memfd:x (deleted)", 0) && hs_record_excluded("rel", 0));
	CHECK(!hs_record_excluded("/usr/lib/libc.so.6", 0));
}

TEST(pseudo_filesystems_are_told_from_a_descriptor)
{
	int fd = open("/proc/self", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	CHECK(fd >= 0);
	CHECK_STR(hs_pseudo_fs(fd), "proc");
	close(fd);
	fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(hs_pseudo_fs(fd) == NULL);
	close(fd);
	CHECK(hs_pseudo_fs(-1) == NULL);
}

int main(void)
{
	return RUN_TESTS(one_table_of_pseudo_filesystems_serves_the_walk_and_record,
			 pseudo_filesystems_are_told_from_a_descriptor);
}
