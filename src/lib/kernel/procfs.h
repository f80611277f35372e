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
 *
 * Pressure stall information has a module of its own (psi.h), and so do
 * cgroups (cgroup.h): both read their files through the readers here.
 */
#ifndef HOTSET_PROCFS_H
#define HOTSET_PROCFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/hotset.h"

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

/* ---- directory entries: getdents64(2) --------------------------------- */

/*
 * One entry as getdents64(2) writes it into a buffer: d_reclen bytes
 * long, the next entry right after it, d_name NUL-terminated, d_type a
 * DT_* value, or DT_UNKNOWN where the filesystem does not say. The
 * kernel's own layout, d_name as long as the entry's name (glibc's
 * struct dirent64 declares 256 bytes, more than a short entry at the end
 * of a buffer has).
 */
struct linux_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

/* ---- small files ------------------------------------------------------ */

/*
 * Read the file at path whole into buf (size bytes, NUL-terminated; what
 * does not fit is left out). Returns its length or -errno.
 */
ssize_t hs_procfs_read(const char *path, char *buf, size_t size);

/* hs_procfs_read() of dir/name (a cgroup's io.pressure, a queue's rotational...). */
ssize_t hs_procfs_read_at(const char *dir, const char *name, char *buf, size_t size);

/*
 * The start of the line after the one at s in a file's text, or NULL at
 * its end: how the parsers of line-oriented files walk them.
 */
const char *hs_procfs_next_line(const char *s);

/*
 * The number after key and one of ' ', ':' or '=' at the start of a line
 * of buf ("read_bytes: 42", "user_usec 7", "key=3"). Returns false if no
 * line has it.
 */
bool hs_procfs_find_u64(const char *buf, const char *key, uint64_t *out);

/*
 * The system call task tid is blocked in, from /proc/TID/syscall: 1 with
 * its number in *nr, 0 if it is in none (stopped or preempted in user
 * space), -EAGAIN if it is running (the kernel cannot say), or -errno.
 */
int hs_proc_syscall(pid_t tid, long *nr);

/* ---- I/O counts: /proc/PID/io ------------------------------------------ */

/* What a task (or a process with its reaped children) read and wrote. */
struct hs_proc_io {
	uint64_t rchar, wchar;		/* bytes through read(2) and write(2) and friends */
	uint64_t syscr, syscw;		/* such calls */
	uint64_t read_bytes;		/* bytes it made the kernel fetch from storage */
	uint64_t write_bytes, cancelled_write_bytes;
};

/* Parse the text of an io file. Returns 0, or -EINVAL without rchar and read_bytes. */
int hs_proc_io_parse(const char *buf, struct hs_proc_io *io);

/*
 * Read the io file at path (NULL: /proc/self/io). Returns the bytes read
 * from the file, which count in the reader's own rchar, or -errno
 * (-EINVAL when it cannot be parsed; -ENOENT without task I/O accounting,
 * or for a task that ended). *io is untouched on failure.
 */
ssize_t hs_proc_io_read(const char *path, struct hs_proc_io *io);

/* ---- a task's state and times: /proc/PID/stat ---------------------------- */

/*
 * The fields of a stat file (proc(5)) that hotset reads. Times are in
 * clock ticks (sysconf(_SC_CLK_TCK)); for a process, utime and stime count
 * its threads, ended ones too, and cutime and cstime the children it has
 * reaped, so that their sum does not drop when a child is reaped.
 */
struct hs_proc_stat {
	char state;			/* 'R', 'S', 'D', 'Z'... */
	pid_t ppid;
	uint64_t utime, stime, cutime, cstime;
	uint64_t starttime;		/* since boot: with the pid, names the process */
	bool blkio_known;		/* the field is there (Linux 2.6.18 and later) */
	uint64_t blkio_ticks;		/* delayacct_blkio_ticks: 0 unless kernel.task_delayacct */
};

/*
 * Parse the text of a stat file; the command name, which may hold spaces
 * and parentheses, ends at the last ')'. Returns 0, or -EINVAL when the
 * fields up to starttime are not all there.
 */
int hs_proc_stat_parse(const char *buf, struct hs_proc_stat *st);

/* Read and parse the stat file at path. Returns 0 or -errno; *st untouched on failure. */
int hs_proc_stat_read(const char *path, struct hs_proc_stat *st);

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
 * not one (*m then undefined): too few fields, ids or device numbers that
 * are not decimal, no "-" before the filesystem type, or an empty root,
 * mount point, options or type.
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

/* ---- file positions: /proc/PID/fdinfo/FD --------------------------------- */

struct hs_fdinfo {
	int64_t pos;		/* the file position */
	unsigned flags;		/* open(2) flags, O_ACCMODE included */
	int mnt_id;		/* the mount it was opened on (mountinfo's mnt_id) */
	uint64_t ino;		/* its inode number */
};

/* Parse the text of an fdinfo file; what it lacks is 0. */
void hs_fdinfo_parse(const char *buf, struct hs_fdinfo *fi);

#endif
