/*
 * procfs.h - the kernel's own filesystems: which filesystems are the
 * kernel's interfaces rather than storage, and readers of the files hotset
 * needs in /proc and /sys.
 *
 * What a command must never read as data (proc, sysfs, cgroup...) is
 * decided here, once, for the tree walk and for both record backends.
 */
#ifndef HOTSET_PROCFS_H
#define HOTSET_PROCFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "hotset/hotset.h"

/* ---- pseudo-filesystems ------------------------------------------------ */

/*
 * The name ("proc", "sysfs", "cgroup2"...) of the pseudo-filesystem whose
 * statfs(2) f_type is magic, or NULL for any other filesystem. Pseudo
 * filesystems are the kernel's interfaces (proc, sysfs, debugfs, tracefs,
 * cgroup, securityfs, bpf, devpts, pstore, efivarfs, selinuxfs, configfs,
 * fusectl) and the internal ones behind pipes, sockets, anonymous inodes
 * and namespaces: reading their files acts on the kernel (or blocks), and
 * no page cache holds them. tmpfs and ramfs are not in the list: their
 * files are data, only always in memory.
 */
const char *hs_pseudo_fs_name(long magic);

/* hs_pseudo_fs_name() of the filesystem of fd (NULL if fstatfs fails). */
const char *hs_pseudo_fs(int fd);

#endif
