/*
 * safeopen.c - the careful open of a file hotset was told of (see
 * safeopen.h for the rules).
 *
 * Every open of a path that someone else chose goes through here: the
 * operands of status, warm, evict and snapshot, the entries of a profile
 * (targets-profile.c), and the files a keeper keeps (keep/set.c), whoever runs it.
 * The cost is one fstatat before each open, about a microsecond with warm
 * dentries, next to the 5 us of an open, fstat and close; an O_PATH open
 * reopened through /proc/self/fd would close the window between the look
 * and the open too, but doubles the cost of a keeper's checks (measured:
 * 9.4 us against 5.7 us a file), and the window gives nothing but an open
 * that cannot block and is closed unread.
 *
 * Whose a replacing file is decides whether it is taken anew. The users
 * who can rename a file over a path are those who may write its
 * directory: in the caller's own tree, the caller (a rebuild, a checkout,
 * an editor's save); in /usr, root (a package upgrade). Neither can harm
 * the caller with a file of its own. In a directory others may write too
 * (/tmp, a shared project tree), another user can, and is trusted no
 * further than a symlink of theirs would be (atomic.c's rule for links):
 * their file is never opened. The owner is known from the look, before
 * any open, and the open's fstat confirms it is the file looked at.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/safeopen.h"

int hs_safe_openat(int dirfd, const char *path, int flags, bool no_symlinks)
{
	static int no_openat2;	/* the kernel (or a seccomp filter) lacks it */
	int fd;

	if (no_symlinks) {
#ifdef SYS_openat2
		if (!__atomic_load_n(&no_openat2, __ATOMIC_RELAXED)) {
			struct open_how how = {
				.flags = (uint64_t)(flags | O_NOFOLLOW),
				.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH,
			};

			fd = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
			if (fd >= 0 || (errno != ENOSYS && errno != EPERM))
				return fd < 0 ? -errno : fd;
			__atomic_store_n(&no_openat2, 1, __ATOMIC_RELAXED);
		}
#endif
		flags |= O_NOFOLLOW;
	}
	fd = openat(dirfd, path, flags);
	return fd < 0 ? -errno : fd;
}

/*
 * The kernel takes paths shorter than PATH_MAX; a tree may hold longer
 * ones. For such a *path, open the directory of a leading part of it, a
 * piece at a time, each relative to the last (as hs_safe_openat does),
 * and point *path past that part: what is left can be opened relative to
 * *prefix. A shorter path is left alone, with *prefix = dirfd.
 */
int hs_safe_prefix(int dirfd, const char **path, bool no_symlinks, int *prefix)
{
	char piece[PATH_MAX];
	const char *p = *path;
	int fd = dirfd;

	while (strlen(p) >= PATH_MAX) {
		size_t cut = PATH_MAX - 1;
		int next;

		while (cut && p[cut] != '/')
			cut--;
		memcpy(piece, p, cut + !cut);	/* "/" for a cut at the root */
		piece[cut + !cut] = '\0';
		next = cut || p[0] == '/' ? hs_safe_openat(fd, piece, O_PATH | O_DIRECTORY | O_CLOEXEC,
							   no_symlinks) : -ENAMETOOLONG;
		if (fd != dirfd)
			close(fd);
		if (next < 0)
			return next;
		fd = next;
		for (p += cut; *p == '/'; p++)
			;
	}
	*path = *p ? p : ".";
	*prefix = fd;
	return 0;
}

void hs_safe_prefix_close(int prefix, int dirfd)
{
	if (prefix != dirfd)
		close(prefix);
}

const char *hs_safe_type_name(mode_t type)
{
	switch (type & S_IFMT) {
	case S_IFREG: return "a regular file";
	case S_IFDIR: return "a directory";
	case S_IFLNK: return "a symbolic link";
	case S_IFIFO: return "a FIFO";
	case S_IFSOCK: return "a socket";
	case S_IFCHR: return "a character device";
	case S_IFBLK: return "a block device";
	default: return "a file of an unknown type";
	}
}

/* May a file of this type be opened, as how allows? */
static bool type_allowed(mode_t mode, unsigned how)
{
	return S_ISREG(mode) || ((how & HS_SAFE_DIRS) && S_ISDIR(mode));
}

static bool same_id(const struct stat *st, const struct hs_safe_id *id)
{
	return (uint64_t)st->st_dev == id->dev && (uint64_t)st->st_ino == id->ino;
}

uid_t hs_safe_fsuid(void)
{
	return (uid_t)syscall(SYS_setfsuid, (uid_t)-1);	/* an invalid id: changes nothing */
}

/*
 * May st, a regular file at the path in place of the one asked for, be
 * taken anew? Only if the user the open is done for could not be harmed
 * by it: its own file, or root's. The fsuid is asked only here, when a
 * file was replaced: the usual open costs no system call more.
 */
static bool anew_allowed(const struct stat *st, unsigned how)
{
	return (how & HS_SAFE_ANEW) && S_ISREG(st->st_mode) &&
	       (st->st_uid == 0 || st->st_uid == hs_safe_fsuid());
}

/*
 * The look, relative to prefix (the path already cut to what the kernel
 * takes): 0 if rest is a file that may be opened, else the value the
 * caller returns, res filled.
 */
static int look_at(int prefix, const char *rest, unsigned how, const struct hs_safe_id *want,
		   struct stat *st, struct hs_safe_result *res)
{
	if (fstatat(prefix, rest, st, how & HS_SAFE_NOFOLLOW ? AT_SYMLINK_NOFOLLOW : 0) < 0) {
		res->found = HS_SAFE_ERROR;
		return -errno;
	}
	res->type = st->st_mode & S_IFMT;
	if (!type_allowed(st->st_mode, how)) {
		res->found = HS_SAFE_TYPE;
		return -EINVAL;
	}
	if (want && !same_id(st, want)) {
		if (!anew_allowed(st, how)) {
			res->found = HS_SAFE_OTHER;
			return -ESTALE;
		}
		res->found = HS_SAFE_NEW;	/* the caller's or root's: the file anew */
	}
	return 0;
}

int hs_safe_look(int dirfd, const char *path, unsigned how, const struct hs_safe_id *want,
		 struct stat *st, struct hs_safe_result *res)
{
	int prefix, rc;

	*res = (struct hs_safe_result){ HS_SAFE_FILE, 0 };
	if ((rc = hs_safe_prefix(dirfd, &path, false, &prefix)) < 0) {
		res->found = HS_SAFE_ERROR;
		return rc;
	}
	rc = look_at(prefix, path, how, want, st, res);
	hs_safe_prefix_close(prefix, dirfd);
	return rc;
}

int hs_safe_open(int dirfd, const char *path, int flags, unsigned how,
		 const struct hs_safe_id *want, struct stat *st, struct hs_safe_result *res)
{
	struct stat look;
	int prefix, fd;

	*res = (struct hs_safe_result){ HS_SAFE_FILE, 0 };
	if ((fd = hs_safe_prefix(dirfd, &path, false, &prefix)) < 0) {
		res->found = HS_SAFE_ERROR;
		return fd;
	}
	if ((fd = look_at(prefix, path, how, want, &look, res)) < 0) {
		if (res->found != HS_SAFE_ERROR)
			*st = look;	/* what is there instead, for the caller to tell */
		goto out;
	}
	flags |= O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (how & HS_SAFE_NOFOLLOW ? O_NOFOLLOW : 0);
	fd = openat(prefix, path, flags);
	/* O_NOATIME is the owner's: a caller reading as another user loses it */
	if (fd < 0 && errno == EPERM && (flags & O_NOATIME))
		fd = openat(prefix, path, flags & ~O_NOATIME);
	if (fd < 0) {
		fd = -errno;
		/* a symlink put there since the look */
		if (fd == -ELOOP && (how & HS_SAFE_NOFOLLOW)) {
			res->found = HS_SAFE_TYPE;
			res->type = S_IFLNK;
			fd = -EINVAL;
		} else {
			res->found = HS_SAFE_ERROR;
		}
		goto out;
	}
	/* what was opened is what was looked at, or it was swapped in between */
	if (fstat(fd, st) < 0) {
		int e = errno;

		close(fd);
		res->found = HS_SAFE_ERROR;
		fd = -e;
	} else if (!type_allowed(st->st_mode, how)) {
		close(fd);
		res->found = HS_SAFE_TYPE;
		res->type = st->st_mode & S_IFMT;
		fd = -EINVAL;
	} else if (st->st_dev != look.st_dev || st->st_ino != look.st_ino) {
		/* whoever owns it: the look decided on another file */
		close(fd);
		res->found = HS_SAFE_SWAPPED;
		res->type = st->st_mode & S_IFMT;
		fd = -ESTALE;
	}
out:
	hs_safe_prefix_close(prefix, dirfd);
	return fd;
}
