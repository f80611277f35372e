/*
 * procfs.h - the kernel's own filesystems: which filesystems are the
 * kernel's interfaces rather than storage, and readers of the files hotset
 * needs in /proc and /sys.
 *
 * What a command must never read as data (proc, sysfs, cgroup...) is
 * decided here, once, for the tree walk and for both record backends.
 *
 * Each file format has a parser of text already in memory (hs_*_parse:
 * no I/O, any bytes accepted, fuzzed by tests/fuzz) and, where the library
 * reads the file itself, a reader on top of it. The readers take whole
 * paths, so that the same code serves /proc/self, /proc/PID and a cgroup
 * directory of any job; they return 0 (or a length) or -errno, as the
 * rest of the library does (hotset.h).
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

/* ---- mount tables: /proc/PID/mountinfo ------------------------------------ */

/*
 * One line of mountinfo, with its strings unescaped ("\040" is a space):
 * each points into the line that was parsed.
 */
struct hs_mountinfo {
	int mnt_id, parent_id;
	unsigned major, minor;		/* of st_dev for files under it */
	char *root;			/* the directory of the filesystem mounted here */
	char *point;			/* where, relative to the reader's root */
	char *options;			/* per mount: "rw,noatime" */
	char *fstype;			/* "ext4", "cgroup2", "fuse.sshfs" */
	char *source;			/* "/dev/sda1", "none"; "" if absent */
	char *super_options;		/* per filesystem; "" if absent */
};

/*
 * Parse one line of mountinfo in place (its spaces become NULs, its
 * escapes are undone) into *m. Returns 0, or -EINVAL for a line that is
 * not one (*m then undefined).
 */
int hs_mountinfo_parse(char *line, struct hs_mountinfo *m);

/* Undo mountinfo's octal escapes ("\040" for a space...) in s, in place. */
void hs_mountinfo_unescape(char *s);

/*
 * Call fn for each mount in the mountinfo file at path (NULL:
 * /proc/self/mountinfo), in order; lines that do not parse are skipped.
 * What *m points to lasts until fn returns. Returns 0, -errno, or the
 * first non-zero value fn returned.
 */
typedef int (*hs_mountinfo_fn)(void *ctx, const struct hs_mountinfo *m);
int hs_mountinfo_each(const char *path, hs_mountinfo_fn fn, void *ctx);

#endif
