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

/* ---- small files ------------------------------------------------------ */

/*
 * Read the file at path whole into buf (size bytes, NUL-terminated; what
 * does not fit is left out). Returns its length or -errno.
 */
ssize_t hs_procfs_read(const char *path, char *buf, size_t size);

/* hs_procfs_read() of dir/name (a cgroup's io.pressure, a queue's rotational...). */
ssize_t hs_procfs_read_at(const char *dir, const char *name, char *buf, size_t size);

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

/* ---- pressure stall information: /proc/pressure, cgroups' *.pressure ---- */

struct hs_psi_line {
	bool known;			/* the line was there, with a total */
	double avg10, avg60, avg300;	/* percent of the last 10, 60, 300 s stalled */
	uint64_t total;			/* microseconds stalled since the start */
};

/*
 * "some" is the time at least one task was stalled, "full" the time all
 * non-idle tasks were at once (absent from cpu files before Linux 5.13).
 */
struct hs_psi {
	struct hs_psi_line some, full;
};

/*
 * Parse "some avg10=0.12 avg60=0.05 avg300=0.01 total=123456" and a
 * "full" line like it. Returns 0, or -EINVAL without a "some" line that
 * has a total; a missing "full" line leaves full.known false (totals 0).
 */
int hs_psi_parse(const char *buf, struct hs_psi *out);

/*
 * Read and parse the pressure file name in dir: ("/proc/pressure", "io")
 * for the machine, (a cgroup v2 directory, "io.pressure") for a cgroup.
 * Returns 0 or -errno: -ENOENT without PSI (CONFIG_PSI, psi=1),
 * -EOPNOTSUPP where a cgroup has it switched off (cgroup.pressure 0),
 * -EINVAL if it does not parse. *out is untouched on failure.
 */
int hs_psi_read(const char *dir, const char *name, struct hs_psi *out);

/*
 * A PSI trigger on the pressure file name in dir: "some STALL WINDOW",
 * an event (POLLPRI on the descriptor returned) whenever tasks stalled
 * for stall_us within a window_us window, at most once per window
 * (the kernel's Documentation/accounting/psi.rst). The trigger lasts
 * until the descriptor is closed. Returns it, or -errno: -EACCES when the
 * file is not writable (unprivileged, before Linux 6.5), -EINVAL for
 * thresholds refused (an unprivileged window must be a multiple of 2 s;
 * windows are 0.5 to 10 s), -EPERM, -ENOENT without PSI, -EOPNOTSUPP
 * for a file that is not the kernel's (on no proc or cgroup filesystem).
 */
int hs_psi_trigger(const char *dir, const char *name, uint64_t stall_us, uint64_t window_us);

/* ---- cgroups ------------------------------------------------------------- */

/*
 * The cgroup v2 path ("/user.slice/x") in the text of /proc/PID/cgroup,
 * its "0::" line, into out (size bytes). Returns 0, -ENOENT without such a
 * line, or -ENAMETOOLONG.
 */
int hs_cgroup_parse_self(const char *buf, char *out, size_t size);

/*
 * Where this process's cgroup v2 directory is: *own its directory under a
 * cgroup2 mount, *mount that mount point (each size bytes). With a cgroup
 * namespace, or a mount of a subtree, the mount's root is a prefix of the
 * path to take off; when it is not, *own is left empty. Returns 0, or
 * -ENOENT when no cgroup2 is mounted.
 */
int hs_cgroup2_dirs(char *own, char *mount, size_t size);

/* How many processes the cgroup directory dir holds (lines of cgroup.procs), or -errno. */
int hs_cgroup_nprocs(const char *dir);

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
