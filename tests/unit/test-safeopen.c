/*
 * test-safeopen.c - the careful open: a regular file is opened; a FIFO, a
 * device, a socket, a symlink where none may be, and another file than
 * the identity asked for are looked at and never opened (inotify sees no
 * open of them); a FIFO's writer waiting for a reader stays waiting; the
 * look alone opens nothing; a path longer than PATH_MAX is opened too.
 * With HS_SAFE_ANEW, another regular file of the filesystem uid's or of
 * root's is taken anew, one of another user's never opened.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "base/safeopen.h"
#include "scratch.h"
#include "unit.h"

static void mkfile(const char *name, const char *text)
{
	int fd = open(path_in(name), O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
		perror(name);
		_exit(1);
	}
	close(fd);
}

/* An inotify watch of the opens in the scratch directory. */
static int watch_opens(void)
{
	int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);

	if (fd < 0 || inotify_add_watch(fd, scratch, IN_OPEN) < 0) {
		perror("inotify");
		_exit(1);
	}
	return fd;
}

/* Was name opened since the watch began (or the last call)? */
static bool was_opened(int ifd, const char *name)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	bool hit = false;
	ssize_t n;

	while ((n = read(ifd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + n;) {
			struct inotify_event *ev = (void *)p;

			if (ev->len && !strcmp(ev->name, name))
				hit = true;
			p += sizeof(*ev) + ev->len;
		}
	}
	return hit;
}

static struct hs_safe_id id_of(const char *name)
{
	struct stat st;

	if (lstat(path_in(name), &st) < 0) {
		perror(name);
		_exit(1);
	}
	return (struct hs_safe_id){ st.st_dev, st.st_ino };
}

TEST(regular_file_opened)
{
	struct hs_safe_result res;
	struct hs_safe_id want;
	struct stat st;
	int ifd, fd;

	scratch_dir();
	mkfile("a", "hello");
	want = id_of("a");
	ifd = watch_opens();
	fd = hs_safe_open(AT_FDCWD, path_in("a"), O_RDONLY, HS_SAFE_NOFOLLOW, &want, &st, &res);
	CHECK(fd >= 0);
	CHECK(res.found == HS_SAFE_FILE);
	CHECK_EQ_U64(st.st_size, 5);
	CHECK(st.st_ino == want.ino);
	/* never a blocking descriptor, never a controlling terminal */
	CHECK((fcntl(fd, F_GETFL) & O_NONBLOCK) != 0);
	CHECK((fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0);
	CHECK(was_opened(ifd, "a"));
	close(fd);
	close(ifd);
	scratch_done();
}

/*
 * A FIFO with a writer blocked in open(): a reader's open would release
 * it. The careful open refuses the FIFO, and the writer stays blocked.
 */
TEST(fifo_never_opened_its_writer_still_waits)
{
	struct hs_safe_result res;
	struct stat st;
	int ifd, fd, status;
	pid_t writer;

	scratch_dir();
	CHECK(mkfifo(path_in("fifo"), 0644) == 0);
	writer = fork();
	if (writer == 0) {
		int w = open(path_in("fifo"), O_WRONLY);	/* blocks until a reader opens */

		_exit(w < 0 ? 2 : 3);
	}
	ifd = watch_opens();
	for (unsigned how = 0; how <= HS_SAFE_NOFOLLOW; how += HS_SAFE_NOFOLLOW) {
		fd = hs_safe_open(AT_FDCWD, path_in("fifo"), O_RDONLY, how, NULL, &st, &res);
		CHECK(fd == -EINVAL);
		CHECK(res.found == HS_SAFE_TYPE);
		CHECK(res.type == S_IFIFO);
	}
	CHECK(hs_safe_look(AT_FDCWD, path_in("fifo"), 0, NULL, &st, &res) == -EINVAL);
	CHECK(res.found == HS_SAFE_TYPE && res.type == S_IFIFO);
	CHECK(!was_opened(ifd, "fifo"));
	/* still blocked: no reader ever came */
	CHECK(waitpid(writer, &status, WNOHANG) == 0);
	/* release it (the watch is read: this open is ours) */
	fd = open(path_in("fifo"), O_RDONLY | O_NONBLOCK);
	CHECK(fd >= 0);
	CHECK(waitpid(writer, &status, 0) == writer && WIFEXITED(status) &&
	      WEXITSTATUS(status) == 3);
	close(fd);
	close(ifd);
	scratch_done();
}

TEST(devices_and_sockets_never_opened)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct hs_safe_result res;
	struct stat st;
	int sock, fd;

	scratch_dir();
	/* a link to a character device, followed: the device is not opened */
	CHECK(symlink("/dev/null", path_in("null")) == 0);
	fd = hs_safe_open(AT_FDCWD, path_in("null"), O_RDONLY, 0, NULL, &st, &res);
	CHECK(fd == -EINVAL && res.found == HS_SAFE_TYPE && res.type == S_IFCHR);
	CHECK_STR(hs_safe_type_name(res.type), "a character device");
	sock = socket(AF_UNIX, SOCK_STREAM, 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path_in("sock"));
	CHECK(sock >= 0 && bind(sock, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	fd = hs_safe_open(AT_FDCWD, path_in("sock"), O_RDONLY, 0, NULL, &st, &res);
	CHECK(fd == -EINVAL && res.found == HS_SAFE_TYPE && res.type == S_IFSOCK);
	close(sock);
	scratch_done();
}

TEST(symlink_refused_where_none_may_be)
{
	struct hs_safe_result res;
	struct stat st;
	int ifd, fd;

	scratch_dir();
	mkfile("target", "x");
	CHECK(symlink("target", path_in("link")) == 0);
	ifd = watch_opens();
	fd = hs_safe_open(AT_FDCWD, path_in("link"), O_RDONLY, HS_SAFE_NOFOLLOW, NULL, &st, &res);
	CHECK(fd == -EINVAL && res.found == HS_SAFE_TYPE && res.type == S_IFLNK);
	CHECK(!was_opened(ifd, "target"));
	/* followed where links are: the file it names */
	fd = hs_safe_open(AT_FDCWD, path_in("link"), O_RDONLY, 0, NULL, &st, &res);
	CHECK(fd >= 0 && res.found == HS_SAFE_FILE && st.st_ino == id_of("target").ino);
	if (fd >= 0)
		close(fd);
	close(ifd);
	scratch_done();
}

/* Another file at the path than the identity asked for: replaced, never opened. */
TEST(another_file_never_opened)
{
	struct hs_safe_result res;
	struct hs_safe_id was;
	struct stat st;
	int ifd, fd;

	scratch_dir();
	mkfile("f", "old");
	was = id_of("f");
	mkfile("new", "new");
	CHECK(rename(path_in("new"), path_in("f")) == 0);
	ifd = watch_opens();
	fd = hs_safe_open(AT_FDCWD, path_in("f"), O_RDONLY, HS_SAFE_NOFOLLOW, &was, &st, &res);
	CHECK(fd == -ESTALE && res.found == HS_SAFE_OTHER && res.type == S_IFREG);
	CHECK(hs_safe_look(AT_FDCWD, path_in("f"), HS_SAFE_NOFOLLOW, &was, &st, &res) == -ESTALE);
	CHECK(res.found == HS_SAFE_OTHER);
	CHECK(!was_opened(ifd, "f"));
	/* the look of the file asked for: its stat, nothing opened */
	was = id_of("f");
	CHECK(hs_safe_look(AT_FDCWD, path_in("f"), HS_SAFE_NOFOLLOW, &was, &st, &res) == 0);
	CHECK(res.found == HS_SAFE_FILE && st.st_size == 3);
	CHECK(!was_opened(ifd, "f"));
	close(ifd);
	scratch_done();
}

/*
 * A file of one's own renamed over the path (a rebuild, an editor's
 * save): with HS_SAFE_ANEW, the file anew, opened and looked at; without,
 * refused as before. A FIFO of one's own is refused all the same.
 */
TEST(own_file_taken_anew)
{
	struct hs_safe_result res;
	struct hs_safe_id was, now;
	struct stat st;
	int ifd, fd;

	scratch_dir();
	mkfile("f", "old");
	was = id_of("f");
	mkfile("new", "newer");
	CHECK(rename(path_in("new"), path_in("f")) == 0);
	now = id_of("f");
	ifd = watch_opens();
	CHECK(hs_safe_look(AT_FDCWD, path_in("f"), HS_SAFE_NOFOLLOW | HS_SAFE_ANEW, &was, &st,
			   &res) == 0);
	CHECK(res.found == HS_SAFE_NEW && st.st_ino == now.ino && st.st_size == 5);
	CHECK(!was_opened(ifd, "f"));
	fd = hs_safe_open(AT_FDCWD, path_in("f"), O_RDONLY, HS_SAFE_NOFOLLOW | HS_SAFE_ANEW, &was,
			  &st, &res);
	CHECK(fd >= 0 && res.found == HS_SAFE_NEW && st.st_ino == now.ino);
	CHECK(was_opened(ifd, "f"));
	if (fd >= 0)
		close(fd);
	/* the file asked for is still HS_SAFE_FILE with the flag */
	fd = hs_safe_open(AT_FDCWD, path_in("f"), O_RDONLY, HS_SAFE_NOFOLLOW | HS_SAFE_ANEW, &now,
			  &st, &res);
	CHECK(fd >= 0 && res.found == HS_SAFE_FILE);
	if (fd >= 0)
		close(fd);
	was_opened(ifd, "f");
	/* without the flag: replaced, never opened */
	fd = hs_safe_open(AT_FDCWD, path_in("f"), O_RDONLY, HS_SAFE_NOFOLLOW, &was, &st, &res);
	CHECK(fd == -ESTALE && res.found == HS_SAFE_OTHER);
	CHECK(!was_opened(ifd, "f"));
	/* anything but a regular file, one's own or not, is refused */
	CHECK(unlink(path_in("f")) == 0 && mkfifo(path_in("f"), 0644) == 0);
	fd = hs_safe_open(AT_FDCWD, path_in("f"), O_RDONLY, HS_SAFE_NOFOLLOW | HS_SAFE_ANEW, &was,
			  &st, &res);
	CHECK(fd == -EINVAL && res.found == HS_SAFE_TYPE && res.type == S_IFIFO);
	mkfile("new", "x");
	CHECK(unlink(path_in("f")) == 0 && symlink("new", path_in("f")) == 0);
	was_opened(ifd, "new");	/* the watch read: mkfile's open was ours */
	fd = hs_safe_open(AT_FDCWD, path_in("f"), O_RDONLY, HS_SAFE_NOFOLLOW | HS_SAFE_ANEW, &was,
			  &st, &res);
	CHECK(fd == -EINVAL && res.found == HS_SAFE_TYPE && res.type == S_IFLNK);
	CHECK(!was_opened(ifd, "new"));
	close(ifd);
	scratch_done();
}

#define NOBODY 65534u
#define STRANGER 4242u	/* a uid no one logs in as */

/*
 * A file of uid's renamed over name, made as root whoever the thread
 * reads as; its open is read off the watch ifd.
 */
static void replace_with(int ifd, const char *name, uid_t uid)
{
	uid_t fsuid = hs_safe_fsuid();

	syscall(SYS_setfsuid, 0);
	mkfile("new", "replacement");
	if (chown(path_in("new"), uid, uid) < 0 || rename(path_in("new"), path_in(name)) < 0) {
		perror(name);
		_exit(1);
	}
	syscall(SYS_setfsuid, fsuid);
	was_opened(ifd, "new");
}

/* Open f as the thread's filesystem uid is now, asking for was: what was found. */
static enum hs_safe_found open_anew(const char *name, const struct hs_safe_id *was, struct stat *st)
{
	struct hs_safe_result res;
	int fd = hs_safe_open(AT_FDCWD, path_in(name), O_RDONLY, HS_SAFE_NOFOLLOW | HS_SAFE_ANEW,
			      was, st, &res);

	if (fd >= 0)
		close(fd);
	else if (fd != -ESTALE)
		return HS_SAFE_ERROR;
	return res.found;
}

/*
 * Whose the new file is decides, as the filesystem uid sees it: root
 * takes its own anew and refuses nobody's (its uid said); a thread that
 * reads as nobody (setfsuid, as a root keeper reads a profile as its
 * owner) takes nobody's and root's anew, and refuses a third user's.
 */
TEST(another_users_file_never_opened)
{
	struct hs_safe_id was;
	struct stat st;
	int ifd;

	if (geteuid() != 0)
		SKIP("needs root, to plant files of another user's");
	scratch_dir();
	mkfile("f", "old");
	was = id_of("f");
	CHECK(link(path_in("f"), path_in("f.was")) == 0);	/* its inode not reused */
	ifd = watch_opens();
	replace_with(ifd, "f", NOBODY);
	CHECK(open_anew("f", &was, &st) == HS_SAFE_OTHER);
	CHECK(st.st_uid == NOBODY);
	CHECK(!was_opened(ifd, "f"));
	replace_with(ifd, "f", 0);
	CHECK(open_anew("f", &was, &st) == HS_SAFE_NEW && st.st_uid == 0);
	CHECK(was_opened(ifd, "f"));
	CHECK(hs_safe_fsuid() == 0);
	syscall(SYS_setfsuid, NOBODY);
	CHECK(hs_safe_fsuid() == NOBODY);
	CHECK(open_anew("f", &was, &st) == HS_SAFE_NEW && st.st_uid == 0);	/* root's */
	replace_with(ifd, "f", NOBODY);
	CHECK(open_anew("f", &was, &st) == HS_SAFE_NEW && st.st_uid == NOBODY);
	CHECK(was_opened(ifd, "f"));
	replace_with(ifd, "f", STRANGER);
	CHECK(open_anew("f", &was, &st) == HS_SAFE_OTHER && st.st_uid == STRANGER);
	CHECK(!was_opened(ifd, "f"));
	syscall(SYS_setfsuid, 0);
	CHECK(hs_safe_fsuid() == 0);
	close(ifd);
	scratch_done();
}

TEST(directories_only_where_allowed_missing_files_said)
{
	struct hs_safe_result res;
	struct stat st;
	int fd;

	scratch_dir();
	CHECK(mkdir(path_in("d"), 0755) == 0);
	fd = hs_safe_open(AT_FDCWD, path_in("d"), O_RDONLY, 0, NULL, &st, &res);
	CHECK(fd == -EINVAL && res.found == HS_SAFE_TYPE && res.type == S_IFDIR);
	fd = hs_safe_open(AT_FDCWD, path_in("d"), O_RDONLY, HS_SAFE_DIRS, NULL, &st, &res);
	CHECK(fd >= 0 && S_ISDIR(st.st_mode));
	if (fd >= 0)
		close(fd);
	fd = hs_safe_open(AT_FDCWD, path_in("none"), O_RDONLY, 0, NULL, &st, &res);
	CHECK(fd == -ENOENT && res.found == HS_SAFE_ERROR);
	scratch_done();
}

int main(void)
{
	return RUN_TESTS(regular_file_opened, fifo_never_opened_its_writer_still_waits,
			 devices_and_sockets_never_opened, symlink_refused_where_none_may_be,
			 another_file_never_opened, own_file_taken_anew, another_users_file_never_opened,
			 directories_only_where_allowed_missing_files_said);
}
