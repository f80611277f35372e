/*
 * test-atomic.c - the one way files are written (atomic.h): the rule for
 * links, what is never opened, modes, directories, cleanup on a signal.
 * The checks of links and files of another user's need root (they chown
 * to nobody, uid 65534), and are skipped without it.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/atomic.h"
#include "scratch.h"
#include "unit.h"

#define NOBODY 65534

static void put(const char *path, const char *s, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

	if (fd < 0 || write(fd, s, strlen(s)) != (ssize_t)strlen(s)) {
		perror(path);
		_exit(1);
	}
	close(fd);
	chmod(path, mode);
}

static char *get(const char *path)
{
	static char buf[256];
	ssize_t n;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return NULL;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n < 0 ? 0 : n] = '\0';
	return buf;
}

/* Write s to path whole; returns hs_atomic_open's or commit's result. */
static int write_whole(const char *path, const char *s, mode_t mode, struct hs_error *err)
{
	struct hs_atomic_file *f;
	int fd, rc;

	if ((rc = hs_atomic_open(path, mode, &f, &fd, err)))
		return rc;
	rc = write(fd, s, strlen(s)) == (ssize_t)strlen(s) ? 0 : -EIO;
	return hs_atomic_commit(f, rc);
}

static void need_root(void)
{
	if (geteuid() != 0)
		SKIP("needs root, to plant files of another user's");
}

/* A link another user owns is never followed, sticky directory or not; the file it names stays. */
TEST(links_of_another_user)
{
	struct hs_error err = { 0 };
	const char *sticky, *theirs;
	char victim[512];

	need_root();
	scratch_dir();
	snprintf(victim, sizeof(victim), "%s", path_in("victim"));	/* path_in's buffers rotate */
	put(victim, "root's\n", 0600);
	sticky = path_in("sticky");
	CHECK(mkdir(sticky, 0777) == 0 && chmod(sticky, 01777) == 0);
	CHECK(symlink(victim, path_in("sticky/out")) == 0);
	CHECK(lchown(path_in("sticky/out"), NOBODY, NOBODY) == 0);
	CHECK(write_whole(path_in("sticky/out"), "x\n", 0666, &err) == -EPERM);
	CHECK(strstr(err.msg, "sticky/out is a symbolic link owned by nobody") != NULL);
	CHECK(hs_atomic_check(path_in("sticky/out"), &err) == -EPERM);
	CHECK(hs_open_regular(path_in("sticky/out"), O_WRONLY | O_APPEND | O_CREAT, 0600, &err) == -EPERM);
	/* a directory of theirs, not sticky: the kernel's rule alone would follow */
	theirs = path_in("theirs");
	CHECK(mkdir(theirs, 0755) == 0 && chown(theirs, NOBODY, NOBODY) == 0);
	CHECK(symlink(victim, path_in("theirs/out")) == 0);
	CHECK(lchown(path_in("theirs/out"), NOBODY, NOBODY) == 0);
	CHECK(write_whole(path_in("theirs/out"), "x\n", 0666, &err) == -EPERM);
	CHECK(hs_open_regular(path_in("theirs/out"), O_WRONLY | O_TRUNC, 0, &err) == -EPERM);
	/* a link on the way, not the last component */
	CHECK(symlink(scratch, path_in("sticky/up")) == 0);
	CHECK(lchown(path_in("sticky/up"), NOBODY, NOBODY) == 0);
	CHECK(write_whole(path_in("sticky/up/victim"), "x\n", 0666, &err) == -EPERM);
	CHECK(strstr(err.msg, "sticky/up is a symbolic link owned by nobody") != NULL);
	CHECK(hs_mkdirs(path_in("sticky/up/made"), 0700, &err) == -EPERM);
	CHECK(access(path_in("made"), F_OK) < 0);
	CHECK_STR(get(victim), "root's\n");
	scratch_done();
}

/* Links of the caller's own are followed (-o through a link of one's own); root's too, but not planted in another's /tmp. */
TEST(links_followed)
{
	struct hs_error err = { 0 };
	struct stat st;
	const char *sticky;

	scratch_dir();
	put(path_in("real"), "old\n", 0640);
	CHECK(symlink("real", path_in("mine")) == 0);
	CHECK(write_whole(path_in("mine"), "new\n", 0666, &err) == 0);
	CHECK(lstat(path_in("mine"), &st) == 0 && S_ISLNK(st.st_mode));
	CHECK_STR(get(path_in("real")), "new\n");
	CHECK(stat(path_in("real"), &st) == 0);
	CHECK_EQ_U64(st.st_mode & 0777, 0640);	/* the replaced file's mode */
	/* through a link to a directory, and a chain of two */
	CHECK(mkdir(path_in("d"), 0755) == 0 && symlink("d", path_in("dl")) == 0);
	CHECK(symlink("dl/f", path_in("chain")) == 0);
	CHECK(write_whole(path_in("chain"), "f\n", 0666, &err) == 0);
	CHECK_STR(get(path_in("d/f")), "f\n");
	CHECK(symlink("loop2", path_in("loop1")) == 0 && symlink("loop1", path_in("loop2")) == 0);
	CHECK(hs_atomic_check(path_in("loop1"), &err) == -ELOOP);
	if (geteuid() == 0) {
		/* root's link in a sticky directory of another user's: the kernel's rule refuses */
		sticky = path_in("sticky");
		CHECK(mkdir(sticky, 0777) == 0 && chmod(sticky, 01777) == 0);
		CHECK(chown(sticky, NOBODY, NOBODY) == 0);
		CHECK(symlink(path_in("real"), path_in("sticky/l")) == 0);
		CHECK(seteuid(NOBODY) == 0);
		CHECK(hs_atomic_check(path_in("sticky/l"), &err) == -EPERM);
		CHECK(strstr(err.msg, "protected_symlinks") != NULL);
		CHECK(seteuid(0) == 0);
	}
	scratch_done();
}

/* FIFOs, devices, directories: refused by name, never opened (a FIFO would block). */
TEST(never_opened)
{
	struct hs_error err = { 0 };

	scratch_dir();
	CHECK(mkfifo(path_in("fifo"), 0666) == 0);
	CHECK(write_whole(path_in("fifo"), "x", 0666, &err) == -EINVAL);
	CHECK(strstr(err.msg, "not a regular file (a FIFO)") != NULL);
	CHECK(hs_open_regular(path_in("fifo"), O_WRONLY | O_APPEND | O_CREAT, 0600, &err) == -EINVAL);
	CHECK(hs_open_regular(path_in("fifo"), O_RDONLY, 0, &err) == -EINVAL);
	CHECK(hs_open_regular("/dev/null", O_WRONLY, 0, &err) == -EINVAL);
	CHECK(strstr(err.msg, "a character device") != NULL);
	CHECK(write_whole(scratch, "x", 0666, &err) == -EISDIR);
	CHECK(write_whole(path_in("no/such/dir/f"), "x", 0666, &err) == -ENOENT);
	CHECK(write_whole("", "x", 0666, &err) == -ENOENT);
	CHECK(write_whole(path_in("trailing/"), "x", 0666, &err) < 0);
	scratch_done();
}

/* In place: appended, truncated only once checked; another's file in a sticky directory refused. */
TEST(open_in_place)
{
	struct hs_error err = { 0 };
	struct stat st;
	int fd;

	scratch_dir();
	fd = hs_open_regular(path_in("log"), O_WRONLY | O_APPEND | O_CREAT, 0600, &err);
	CHECK(fd >= 0 && write(fd, "a\n", 2) == 2);
	close(fd);
	fd = hs_open_regular(path_in("log"), O_WRONLY | O_APPEND | O_CREAT, 0600, &err);
	CHECK(fd >= 0 && write(fd, "b\n", 2) == 2);
	CHECK(fd >= 0 && fcntl(fd, F_GETFL) & O_APPEND);
	CHECK(fd >= 0 && !(fcntl(fd, F_GETFL) & O_NONBLOCK));
	close(fd);
	CHECK_STR(get(path_in("log")), "a\nb\n");
	CHECK(stat(path_in("log"), &st) == 0);
	CHECK_EQ_U64(st.st_mode & 0777, 0600);
	fd = hs_open_regular(path_in("log"), O_WRONLY | O_TRUNC, 0, &err);
	CHECK(fd >= 0);
	close(fd);
	CHECK_STR(get(path_in("log")), "");
	CHECK(hs_open_regular(path_in("missing"), O_RDONLY, 0, &err) == -ENOENT);
	if (geteuid() == 0) {
		CHECK(mkdir(path_in("sticky"), 0777) == 0 && chmod(path_in("sticky"), 01777) == 0);
		put(path_in("sticky/log"), "theirs\n", 0666);
		CHECK(chown(path_in("sticky/log"), NOBODY, NOBODY) == 0);
		CHECK(hs_open_regular(path_in("sticky/log"), O_WRONLY | O_APPEND | O_CREAT, 0600,
				      &err) == -EPERM);
		CHECK(strstr(err.msg, "protected_regular") != NULL);
		CHECK_STR(get(path_in("sticky/log")), "theirs\n");
		/* reading is not writing: allowed */
		fd = hs_open_regular(path_in("sticky/log"), O_RDONLY, 0, &err);
		CHECK(fd >= 0);
		close(fd);
	}
	scratch_done();
}

/* Private files stay private: a replaced file keeps its mode, at most the mode asked. */
TEST(modes)
{
	struct hs_error err = { 0 };
	struct stat st;
	mode_t old;

	scratch_dir();
	old = umask(022);
	CHECK(write_whole(path_in("new"), "x", 0600, &err) == 0);
	CHECK(stat(path_in("new"), &st) == 0 && (st.st_mode & 0777) == 0600);
	CHECK(write_whole(path_in("report"), "x", 0666, &err) == 0);
	CHECK(stat(path_in("report"), &st) == 0 && (st.st_mode & 0777) == 0644);
	put(path_in("secret"), "s", 0600);
	CHECK(write_whole(path_in("secret"), "x", 0644, &err) == 0);
	CHECK(stat(path_in("secret"), &st) == 0 && (st.st_mode & 0777) == 0600);
	put(path_in("open"), "s", 0666);
	CHECK(write_whole(path_in("open"), "x", 0600, &err) == 0);
	CHECK(stat(path_in("open"), &st) == 0 && (st.st_mode & 0777) == 0600);
	umask(old);
	scratch_done();
}

/* mkdir -p with the mode asked; a directory for state judged as ssh's StrictModes would. */
TEST(directories)
{
	static const char *const entries[] = { "lock", "queue", NULL };
	struct hs_error err = { 0 };
	struct stat st;

	scratch_dir();
	CHECK(hs_mkdirs(path_in("a/b/c"), 0700, &err) == 0);
	CHECK(stat(path_in("a/b/c"), &st) == 0 && (st.st_mode & 07777) == 0700);
	CHECK(hs_mkdirs(path_in("a/b/c"), 0700, &err) == 0);	/* there already */
	CHECK(hs_dir_check(path_in("a/b/c"), entries, &err) == 0);
	CHECK(chmod(path_in("a/b/c"), 0777) == 0);
	CHECK(hs_dir_check(path_in("a/b/c"), entries, &err) == -EPERM);
	CHECK(strstr(err.msg, "may be written by all") != NULL);
	CHECK(chmod(path_in("a/b/c"), 0775) == 0);
	CHECK(hs_dir_check(path_in("a/b/c"), entries, &err) == -EPERM);
	CHECK(strstr(err.msg, "its group") != NULL);
	CHECK(chmod(path_in("a/b/c"), 01777) == 0);
	CHECK(hs_dir_check(path_in("a/b/c"), entries, &err) == 0);
	CHECK(hs_dir_check(path_in("missing"), entries, &err) == -ENOENT);
	put(path_in("file"), "", 0600);
	CHECK(hs_dir_check(path_in("file"), entries, &err) == -ENOTDIR);
	if (geteuid() == 0) {
		put(path_in("a/b/c/queue"), "", 0600);
		CHECK(chown(path_in("a/b/c/queue"), NOBODY, NOBODY) == 0);
		CHECK(hs_dir_check(path_in("a/b/c"), entries, &err) == -EPERM);
		CHECK(strstr(err.msg, "queue is a file of nobody") != NULL);
		CHECK(hs_dir_check(path_in("a/b/c"), NULL, &err) == 0);
		CHECK(chmod(path_in("a/b/c"), 0700) == 0 && chown(path_in("a/b/c"), NOBODY, NOBODY) == 0);
		CHECK(hs_dir_check(path_in("a/b/c"), entries, &err) == -EPERM);
		CHECK(strstr(err.msg, "is owned by nobody") != NULL);
	}
	scratch_done();
}

/* hs_atomic_cleanup(), as a fatal signal's handler calls it: no temporary file left. */
TEST(cleanup_on_signal)
{
	struct hs_atomic_file *f;
	struct stat st;
	int fd;

	scratch_dir();
	CHECK(hs_atomic_open(path_in("out"), 0666, &f, &fd, NULL) == 0);
	CHECK(write(fd, "x", 1) == 1);
	hs_atomic_cleanup();
	CHECK(rmdir(scratch) == 0);	/* empty: the temporary file is gone */
	CHECK(mkdir(scratch, 0755) == 0);
	hs_atomic_abort(f);
	CHECK(stat(path_in("out"), &st) < 0);
	scratch_done();
}

/* The pid file's removal: only the file that was read, not one written there since. */
TEST(remove_if_same)
{
	struct stat st;

	scratch_dir();
	put(path_in("pid"), "1\n", 0644);
	CHECK(stat(path_in("pid"), &st) == 0);
	put(path_in("other"), "2\n", 0644);
	CHECK(rename(path_in("other"), path_in("pid")) == 0);
	CHECK(hs_remove_if_same(path_in("pid"), st.st_dev, st.st_ino) == -ESTALE);
	CHECK(stat(path_in("pid"), &st) == 0);
	CHECK(symlink("pid", path_in("link")) == 0);
	CHECK(hs_remove_if_same(path_in("link"), st.st_dev, st.st_ino) == 0);
	CHECK(stat(path_in("pid"), &st) < 0);
	scratch_done();
}

/* A short write (a file size limit cuts it, no errno) is written on, and so fails with the reason. */
TEST(write_all_short)
{
	struct rlimit rl = { 1, 1 };
	int fd;

	scratch_dir();
	fd = open(path_in("f"), O_WRONLY | O_CREAT, 0600);
	CHECK(fd >= 0);
	CHECK(hs_write_all(fd, "12345\n", 6) == 0);
	CHECK(ftruncate(fd, 0) == 0 && lseek(fd, 0, SEEK_SET) == 0);
	signal(SIGXFSZ, SIG_IGN);
	CHECK(setrlimit(RLIMIT_FSIZE, &rl) == 0);
	CHECK(write(fd, "12345\n", 6) == 1);	/* what a single write() does: cut short */
	CHECK(hs_write_all(fd, "2345\n", 5) == -EFBIG);
	close(fd);
	scratch_done();
}

int main(void)
{
	return RUN_TESTS(links_of_another_user, links_followed, never_opened, open_in_place, modes,
			 directories, cleanup_on_signal, remove_if_same, write_all_short);
}
