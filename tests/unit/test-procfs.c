/*
 * test-procfs.c - the kernel's filesystems and the parsers of its files.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kernel/cgroup.h"
#include "kernel/procfs.h"
#include "kernel/psi.h"
#include "record/record.h"
#include "scratch.h"
#include "unit.h"
#include "corpus.h"

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

/* ---- small files, I/O counts ------------------------------------------------------- */

TEST(numbers_are_found_after_their_key_and_a_separator)
{
	static const char text[] = "rchar: 10\nread_bytes_x: 1\nread_bytes: 20\nuser_usec 30\n"
				   "k=40\nlast 50";
	uint64_t v = 0;

	CHECK(hs_procfs_find_u64(text, "rchar", &v) && v == 10);
	CHECK(hs_procfs_find_u64(text, "read_bytes", &v) && v == 20);	/* not read_bytes_x */
	CHECK(hs_procfs_find_u64(text, "user_usec", &v) && v == 30);
	CHECK(hs_procfs_find_u64(text, "k", &v) && v == 40);
	CHECK(hs_procfs_find_u64(text, "last", &v) && v == 50);
	CHECK(!hs_procfs_find_u64(text, "char", &v));	/* only at the start of a line */
	CHECK(!hs_procfs_find_u64(text, "read", &v));
	CHECK(!hs_procfs_find_u64("", "rchar", &v));
}

TEST(io_counts_are_parsed_and_read)
{
	static const char text[] = "rchar: 1000\nwchar: 200\nsyscr: 30\nsyscw: 4\n"
				   "read_bytes: 4096\nwrite_bytes: 8192\ncancelled_write_bytes: 512\n";
	struct hs_proc_io io;
	char path[64];
	ssize_t n;

	CHECK(hs_proc_io_parse(text, &io) == 0);
	CHECK(io.rchar == 1000 && io.wchar == 200 && io.syscr == 30 && io.syscw == 4);
	CHECK(io.read_bytes == 4096 && io.write_bytes == 8192 && io.cancelled_write_bytes == 512);
	CHECK(hs_proc_io_parse("rchar: 1\n", &io) == -EINVAL);
	CHECK(hs_proc_io_parse("read_bytes: 1\n", &io) == -EINVAL);
	CHECK(hs_proc_io_parse("", &io) == -EINVAL);
	if (access("/proc/self/io", R_OK) < 0)
		SKIP("no /proc/self/io (task I/O accounting)");
	memset(&io, 0xff, sizeof(io));
	n = hs_proc_io_read(NULL, &io);
	CHECK(n > 0 && io.rchar != UINT64_MAX && io.read_bytes != UINT64_MAX);
	snprintf(path, sizeof(path), "/proc/self/task/%d/io", (int)getpid());
	CHECK(hs_proc_io_read(path, &io) > 0);
	CHECK(hs_proc_io_read("/proc/self/no-such-file", &io) == -ENOENT);
}

TEST(stat_fields_are_parsed_after_the_last_parenthesis)
{
	/* a name with a space and a ") " of its own; 52 fields, as Linux 6 prints */
	static const char text[] =
		"4242 (my) (db d) S 7 4242 4242 0 -1 4194560 100 0 0 0 "
		"250 130 40 20 20 0 12 0 987654 1000 100 18446744073709551615 1 1 0 0 0 0 0 "
		"4096 0 0 0 0 17 1 0 0 33 0 0 0 0 0 0 0 0 0 0\n";
	struct hs_proc_stat st;
	char path[64];

	CHECK(hs_proc_stat_parse(text, &st) == 0);
	CHECK(st.state == 'S' && st.ppid == 7);
	CHECK(st.utime == 250 && st.stime == 130 && st.cutime == 40 && st.cstime == 20);
	CHECK(st.starttime == 987654 && st.blkio_known && st.blkio_ticks == 33);
	/* an old kernel's line, without delay accounting's field */
	CHECK(hs_proc_stat_parse("1 (init) S 0 1 1 0 -1 0 0 0 0 0 5 6 7 8 20 0 1 0 99", &st) == 0);
	CHECK(st.starttime == 99 && !st.blkio_known && st.utime == 5);
	CHECK(hs_proc_stat_parse("1 (init) S 0 1 1", &st) == -EINVAL);
	CHECK(hs_proc_stat_parse("no name here", &st) == -EINVAL);
	CHECK(hs_proc_stat_parse("1 (x) S 0 x", &st) == -EINVAL);
	CHECK(hs_proc_stat_parse("", &st) == -EINVAL);
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)getpid());
	CHECK(hs_proc_stat_read(path, &st) == 0 && st.ppid == getppid() && st.state == 'R');
	CHECK(hs_proc_stat_read("/proc/self/no-such-file", &st) == -ENOENT);
}

TEST(small_files_are_read_whole_or_cut)
{
	char path[] = "/tmp/hotset-small-XXXXXX", buf[8];
	int fd = mkstemp(path);

	CHECK(fd >= 0 && write(fd, "0123456789", 10) == 10);
	close(fd);
	CHECK(hs_procfs_read(path, buf, sizeof(buf)) == 7);	/* cut, NUL-terminated */
	CHECK_STR(buf, "0123456");
	CHECK(hs_procfs_read_at("/tmp", path + 5, buf, sizeof(buf)) == 7);
	unlink(path);
	CHECK(hs_procfs_read(path, buf, sizeof(buf)) == -ENOENT);
}

/* ---- pressure, cgroups -------------------------------------------------------------- */

TEST(pressure_lines_are_parsed)
{
	static const char cgroup[] = "some avg10=1.50 avg60=0.25 avg300=0.00 total=123456\n"
				     "full avg10=0.75 avg60=0.10 avg300=0.01 total=65432\n";
	struct hs_psi p;

	CHECK(hs_psi_parse(cgroup, &p) == 0);
	CHECK(p.some.known && p.some.total == 123456 && p.some.avg10 == 1.5 && p.some.avg60 == 0.25);
	CHECK(p.full.known && p.full.total == 65432 && p.full.avg300 > 0.0099 && p.full.avg300 < 0.0101);
	/* cpu before 5.13: no full line */
	CHECK(hs_psi_parse("some avg10=0.00 avg60=0.00 avg300=0.00 total=7\n", &p) == 0);
	CHECK(p.some.total == 7 && !p.full.known && p.full.total == 0);
	/* fields in another order, or unknown ones, do not matter */
	CHECK(hs_psi_parse("full total=3\nsome new=1 total=9 avg10=2.00\n", &p) == 0);
	CHECK(p.some.total == 9 && p.some.avg10 == 2 && p.full.total == 3);
	CHECK(hs_psi_parse("", &p) == -EINVAL);
	CHECK(hs_psi_parse("full total=3\n", &p) == -EINVAL);
	CHECK(hs_psi_parse("some avg10=1.00\n", &p) == -EINVAL);	/* a total is what counts */
	CHECK(hs_psi_parse("some total=\n", &p) == -EINVAL);
	CHECK(hs_psi_parse("somewhat total=1\n", &p) == -EINVAL);
	if (access("/proc/pressure/io", R_OK) == 0)
		CHECK(hs_psi_read("/proc/pressure", "io", &p) == 0 && p.some.known);
	CHECK(hs_psi_read("/proc/pressure", "no-such-resource", &p) == -ENOENT);
}

TEST(the_share_since_the_last_reading_is_the_time_stalled)
{
	const char *dir = scratch_dir();
	struct hs_psi_mark a = { true, 1000000000, 500000 }, b = { true, 3000000000, 800000 }, m;

	/* 0.3 s stalled in 2 s: 15% */
	CHECK(hs_psi_share(&a, &b) > 14.999 && hs_psi_share(&a, &b) < 15.001);
	b.total_us = a.total_us;
	CHECK(hs_psi_share(&a, &b) == 0);
	/* what cannot be told is -1, never a figure */
	b.total_us = a.total_us - 1;	/* went back: another file */
	CHECK(hs_psi_share(&a, &b) == -1);
	b.total_us = a.total_us + 1;
	b.at_ns = a.at_ns;		/* no time between */
	CHECK(hs_psi_share(&a, &b) == -1);
	b.at_ns = a.at_ns + 1;
	b.known = false;
	CHECK(hs_psi_share(&a, &b) == -1);
	CHECK(hs_psi_share(&b, &a) == -1);
	/* a reading: the "some" total, at the instant the caller gives */
	scratch_put(dir, "io", "some avg10=1.00 avg60=0.00 avg300=0.00 total=4242\n"
		    "full avg10=0.00 avg60=0.00 avg300=0.00 total=7\n");
	CHECK(hs_psi_mark(dir, "io", 77, &m) == 0);
	CHECK(m.known && m.at_ns == 77 && m.total_us == 4242);
	CHECK(hs_psi_mark(dir, "memory", 78, &m) == -ENOENT);
	CHECK(!m.known && m.at_ns == 78);
	scratch_done();
}

TEST(the_cgroup_v2_path_is_found)
{
	char out[32];

	CHECK(hs_cgroup_parse_self("12:memory:/a\n0::/user.slice/x.scope\n", out, sizeof(out)) == 0);
	CHECK_STR(out, "/user.slice/x.scope");
	CHECK(hs_cgroup_parse_self("0::/\n", out, sizeof(out)) == 0);
	CHECK_STR(out, "/");
	CHECK(hs_cgroup_parse_self("0::/last-line-without-newline", out, sizeof(out)) == 0);
	CHECK_STR(out, "/last-line-without-newline");
	CHECK(hs_cgroup_parse_self("12:memory:/a\n1:name=systemd:/b\n", out, sizeof(out)) == -ENOENT);
	CHECK(hs_cgroup_parse_self("", out, sizeof(out)) == -ENOENT);
	CHECK(hs_cgroup_parse_self("0::/a-path-longer-than-the-buffer-given\n", out, sizeof(out)) ==
	      -ENAMETOOLONG);
}

TEST(this_process_cgroup_is_found_and_counted)
{
	char own[4096], mount[4096];

	if (hs_cgroup2_dirs(own, mount, sizeof(own)) < 0)
		SKIP("no cgroup2 filesystem mounted");
	CHECK(mount[0] == '/');
	if (!own[0])
		SKIP("this process's cgroup is not under the cgroup2 mount (a namespace?)");
	CHECK(!strncmp(own, mount, strlen(mount)));
	CHECK(hs_cgroup_nprocs(own) >= 1);	/* this process at least */
	CHECK(hs_cgroup_nprocs("/no/such/cgroup") == -ENOENT);
}

TEST(cgroups_are_made_written_joined_and_removed)
{
	const char *dir = scratch_dir();
	char cg[128], made[256], me[256], *path;
	struct stat st;

	/* a fake cgroup tree: dir is the parent, cg a child made in it */
	CHECK(hs_cgroup_make(dir, "hotset-x", cg, sizeof(cg)) == 0);
	CHECK(stat(cg, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 07777) == 0755);
	CHECK(hs_cgroup_make(dir, "hotset-x", made, sizeof(made)) == -EEXIST);
	CHECK_STR(made, cg);	/* said where, for a caller that takes it as it is */
	CHECK(hs_cgroup_make(dir, "a-name-too-long-for-the-buffer", made, 16) == -ENAMETOOLONG);
	/* its files are written, truncated, never created */
	scratch_put(cg, "memory.low", "123456789\n");
	CHECK(hs_cgroup_write(cg, "memory.low", "0\n") == 0);
	CHECK_STR(scratch_get(cg, "memory.low"), "0\n");
	CHECK(hs_cgroup_write(cg, "memory.high", "1\n") == -ENOENT);
	CHECK(access(made, F_OK) < 0);
	/* controllers, and whether it holds one process alone */
	scratch_put(cg, "cgroup.controllers", "cpu io memory pids\n");
	CHECK(hs_cgroup_has_controller(cg, "memory") && hs_cgroup_has_controller(cg, "io"));
	CHECK(!hs_cgroup_has_controller(cg, "mem") && !hs_cgroup_has_controller(dir, "memory"));
	scratch_put(cg, "cgroup.procs", "1234\n");
	CHECK(hs_cgroup_holds_only(cg, 1234) && !hs_cgroup_holds_only(cg, 123));
	CHECK(hs_cgroup_nprocs(cg) == 1);
	scratch_put(cg, "cgroup.procs", "1234\n5678\n");
	CHECK(!hs_cgroup_holds_only(cg, 1234) && hs_cgroup_nprocs(cg) == 2);
	/* a process moves by its pid; the caller itself by "0" */
	CHECK(hs_cgroup_move(cg, 4321) == 0);
	CHECK_STR(scratch_get(cg, "cgroup.procs"), "4321\n");
	snprintf(me, sizeof(me), "%s/cgroup.procs", cg);
	CHECK(hs_cgroup_enter(me) == 0);
	CHECK_STR(scratch_get(cg, "cgroup.procs"), "0321\n");	/* "0" over its start: not truncated */
	CHECK(hs_cgroup_enter("/no/such/cgroup/cgroup.procs") == -ENOENT);
	/* removed (a directory with files is not a cgroup: refused, not retried) */
	CHECK(hs_cgroup_remove(cg, dir) == -ENOTEMPTY);
	unlink(me);
	snprintf(made, sizeof(made), "%s/memory.low", cg);
	unlink(made);
	snprintf(made, sizeof(made), "%s/cgroup.controllers", cg);
	unlink(made);
	CHECK(hs_cgroup_remove(cg, dir) == 0);
	CHECK(access(cg, F_OK) < 0);
	CHECK(hs_cgroup_remove(cg, dir) == 0);	/* gone already */
	/* a directory named: absolute as it is, relative under the cgroup2 mount */
	CHECK(hs_cgroup2_path("/sys/fs/cgroup/x", &path) == 0);
	CHECK_STR(path, "/sys/fs/cgroup/x");
	free(path);
	if (hs_cgroup2_path("jobs.slice", &path) == 0) {
		CHECK(path[0] == '/' && strlen(path) > 11 && !strcmp(path + strlen(path) - 11, "/jobs.slice"));
		free(path);
	}
	scratch_done();
}

/* ---- mount tables ------------------------------------------------------------------- */

TEST(mountinfo_lines_are_parsed_and_unescaped)
{
	char line[] = "36 35 98:0 /my\\040root /mnt/a\\040b\\011c rw,noatime shared:1 master:2 - "
		      "ext4 /dev/sda\\0401 rw,errors=continue\n";
	char plain[] = "22 1 0:21 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw";
	char bare[] = "22 1 0:21 / /x rw - tmpfs";
	char empty_source[] = "22 1 0:21 / /x rw - tmpfs  rw";
	struct hs_mountinfo m;

	CHECK(hs_mountinfo_parse(line, &m) == 0);
	CHECK(m.mnt_id == 36 && m.parent_id == 35 && m.major == 98 && m.minor == 0);
	CHECK_STR(m.root, "/my root");
	CHECK_STR(m.point, "/mnt/a b\tc");
	CHECK_STR(m.options, "rw,noatime");
	CHECK_STR(m.fstype, "ext4");
	CHECK_STR(m.source, "/dev/sda 1");
	CHECK_STR(m.super_options, "rw,errors=continue");
	CHECK(hs_mountinfo_parse(plain, &m) == 0);
	CHECK_STR(m.fstype, "cgroup2");
	CHECK_STR(m.point, "/sys/fs/cgroup");
	CHECK(hs_mountinfo_parse(bare, &m) == 0);	/* no source, no super options */
	CHECK_STR(m.fstype, "tmpfs");
	CHECK_STR(m.source, "");
	CHECK_STR(m.super_options, "");
	CHECK(hs_mountinfo_parse(empty_source, &m) == 0);	/* a mount of "" */
	CHECK_STR(m.source, "");
	CHECK_STR(m.super_options, "rw");
}

TEST(what_is_not_a_mountinfo_line_is_refused)
{
	static const char *const bad[] = {
		"", "\n", "36", "36 35 98:0 / /mnt rw", "36 35 98:0 / /mnt rw shared:1",
		"36 35 98:0 / /mnt rw -", "x 35 98:0 / /mnt rw - ext4 /dev/sda rw",
		"36 35 98 / /mnt rw - ext4 /dev/sda rw", "36 35 98:x / /mnt rw - ext4 a b",
		"36 35 :0 / /mnt rw - ext4 a b", "-1 35 98:0 / /mnt rw - ext4 a b",
		"99999999999 35 98:0 / /mnt rw - ext4 a b", "36 35 98:0 / /mnt rw -  ",
		"36 35 98:0  /mnt rw - ext4 a b", "36 35 98:0 / /mnt  - ext4 a b",
	};
	struct hs_mountinfo m;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char buf[128];

		snprintf(buf, sizeof(buf), "%s", bad[i]);
		CHECK(hs_mountinfo_parse(buf, &m) == -EINVAL);
	}
	/* escapes that are not three octal digits stay as they are */
	char s[] = "a\\0b\\400c\\\\d\\12";

	hs_mountinfo_unescape(s);
	CHECK_STR(s, "a\\0b\\400c\\\\d\\12");
}

static int find_root(void *ctx, const struct hs_mountinfo *m)
{
	int *n = ctx;

	(*n)++;
	return strcmp(m->point, "/") ? 0 : 42;
}

static int count(void *ctx, const struct hs_mountinfo *m)
{
	(*(int *)ctx)++;
	return 0;
}

TEST(mount_tables_are_read_from_a_file)
{
	char path[] = "/tmp/hotset-mountinfo-XXXXXX";
	int fd = mkstemp(path), n = 0;
	static const char text[] = "1 0 8:1 / / rw - ext4 /dev/sda1 rw\n"
				   "not a mount\n"
				   "2 1 0:5 / /proc rw - proc proc rw\n";

	CHECK(fd >= 0 && write(fd, text, sizeof(text) - 1) == (ssize_t)sizeof(text) - 1);
	close(fd);
	CHECK(hs_mountinfo_each(path, count, &n) == 0 && n == 2);	/* the bad line skipped */
	n = 0;
	CHECK(hs_mountinfo_each(path, find_root, &n) == 42 && n == 1);	/* stops at fn's word */
	unlink(path);
	CHECK(hs_mountinfo_each(path, count, &n) == -ENOENT);
	/* this process's own table has a root */
	n = 0;
	CHECK(hs_mountinfo_each(NULL, find_root, &n) == 42);
}

/* ---- file positions ----------------------------------------------------------------- */

TEST(fdinfo_is_parsed)
{
	static const char text[] = "pos:\t4096\nflags:\t0102002\nmnt_id:\t29\nino:\t1234567\n"
				   "lock:\t1: POSIX\n";
	struct hs_fdinfo fi;
	char path[64];
	int fd;

	hs_fdinfo_parse(text, &fi);
	CHECK(fi.pos == 4096 && fi.flags == 0102002 && fi.mnt_id == 29 && fi.ino == 1234567);
	hs_fdinfo_parse("", &fi);
	CHECK(fi.pos == 0 && fi.flags == 0 && fi.mnt_id == 0 && fi.ino == 0);
	hs_fdinfo_parse("ino:\t5", &fi);	/* the last line needs no newline */
	CHECK(fi.ino == 5 && fi.pos == 0);
	/* against the kernel's own */
	fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0 && lseek(fd, 7, SEEK_SET) == 7);
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	{
		char buf[1024];
		struct stat st;

		CHECK(hs_procfs_read(path, buf, sizeof(buf)) > 0 && fstat(fd, &st) == 0);
		hs_fdinfo_parse(buf, &fi);
		CHECK(fi.pos == 7 && (fi.flags & O_ACCMODE) == O_RDONLY && (fi.flags & O_CLOEXEC));
		CHECK(fi.ino == st.st_ino && fi.mnt_id > 0);
	}
	close(fd);
}

/* ---- the fuzz corpora ----------------------------------------------------------------- */

/*
 * The fuzz targets themselves, renamed, so that every input their fuzzing
 * kept (tests/fuzz/corpus/NAME, crashes included) goes through the parser
 * again here, with the same invariants, in both builds.
 */
#define LLVMFuzzerTestOneInput fuzz_fdinfo
#include "../fuzz/fuzz-fdinfo.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_mountinfo
#include "../fuzz/fuzz-mountinfo.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_psi
#include "../fuzz/fuzz-psi.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_stat
#include "../fuzz/fuzz-stat.c"
#undef LLVMFuzzerTestOneInput

TEST(the_call_a_task_is_blocked_in_is_told)
{
	int pipefd[2], in = -EAGAIN, status;
	long nr = -1;
	pid_t pid;

	CHECK(pipe(pipefd) == 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		char c;

		_exit(read(pipefd[0], &c, 1) == 1 ? 0 : 1);
	}
	/* running at first ("running"), then blocked in read */
	for (int i = 0; i < 400 && (in == -EAGAIN || (in == 1 && nr != SYS_read)); i++) {
		in = hs_proc_syscall(pid, &nr);
		usleep(5000);
	}
	CHECK(in == 1 && nr == SYS_read);
	CHECK(write(pipefd[1], "x", 1) == 1);
	CHECK(waitpid(pid, &status, 0) == pid && status == 0);
	close(pipefd[0]);
	close(pipefd[1]);
	CHECK(hs_proc_syscall(pid, &nr) == -ENOENT);	/* gone */
}

TEST(fuzz_corpora_replay)
{
	CHECK(replay("fdinfo", fuzz_fdinfo) > 0);
	CHECK(replay("mountinfo", fuzz_mountinfo) > 0);
	CHECK(replay("psi", fuzz_psi) > 0);
	CHECK(replay("stat", fuzz_stat) > 0);
}

int main(void)
{
	return RUN_TESTS(one_table_of_pseudo_filesystems_serves_the_walk_and_record,
			 pseudo_filesystems_are_told_from_a_descriptor,
			 mountinfo_lines_are_parsed_and_unescaped, what_is_not_a_mountinfo_line_is_refused,
			 mount_tables_are_read_from_a_file, numbers_are_found_after_their_key_and_a_separator,
			 io_counts_are_parsed_and_read,
			 stat_fields_are_parsed_after_the_last_parenthesis, small_files_are_read_whole_or_cut,
			 pressure_lines_are_parsed, the_share_since_the_last_reading_is_the_time_stalled,
			 the_cgroup_v2_path_is_found, cgroups_are_made_written_joined_and_removed,
			 this_process_cgroup_is_found_and_counted, fdinfo_is_parsed,
			 the_call_a_task_is_blocked_in_is_told, fuzz_corpora_replay);
}
