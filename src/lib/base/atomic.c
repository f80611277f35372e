/*
 * atomic.c - the one way hotset creates and writes files (atomic.h).
 *
 * Everything here starts from one walk: a name is resolved a component at
 * a time, each opened with O_PATH|O_NOFOLLOW relative to the directory
 * before it, so that what is checked is what is used. A symbolic link met
 * on the way is judged on its own descriptor (owner) and its directory's
 * (mode, owner), then read with readlinkat() and spliced into the rest of
 * the name, as the kernel's own walk does. The walk ends with a
 * descriptor of the last directory and the last name in it; writers then
 * act relative to that directory only (openat, renameat, unlinkat), so a
 * link swapped in after the look is never followed either: O_NOFOLLOW and
 * O_EXCL open no link, and rename replaces a link rather than its target.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <pwd.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "base/atomic.h"

/* Symbolic links one name may go through, as the kernel's MAXSYMLINKS. */
#define MAX_LINKS 40

/* ======================================================================
 * The walk
 * ====================================================================== */

/* Where a name leads: a directory, and a name in it. */
struct where {
	int dir;			/* O_PATH descriptor of the directory */
	char name[NAME_MAX + 1];	/* the last component; "" when the name is the directory */
	bool exists;			/* name is there (and is no link: those are followed) */
	bool magic;			/* name is a link of /proc (/proc/self/fd/N), for the
					 * kernel to follow: st is what it leads to */
	struct stat st;			/* of name, when it exists */
	char shown[PATH_MAX];		/* the name as walked, for messages */
};

enum walk_how {
	WALK_LAST,	/* the last component may be anything, or missing */
	WALK_DIRS,	/* every component is a directory, which must exist */
	WALK_MKDIRS,	/* every component is a directory, made if missing */
};

static const char *user_name(uid_t uid, char buf[64])
{
	char tmp[1024];
	struct passwd pw, *res = NULL;

	if (getpwuid_r(uid, &pw, tmp, sizeof(tmp), &res) == 0 && res)
		snprintf(buf, 64, "%s (uid %u)", pw.pw_name, (unsigned)uid);
	else
		snprintf(buf, 64, "uid %u", (unsigned)uid);
	return buf;
}

/* A directory that anyone may write to, but where only owners remove: /tmp. */
static bool sticky_world_writable(const struct stat *dir)
{
	return (dir->st_mode & (S_ISVTX | S_IWOTH)) == (S_ISVTX | S_IWOTH);
}

/*
 * May the walk follow the link open as lfd, an entry of directory dfd?
 * The kernel's rule (fs/namei.c, may_follow_link(), in force when
 * fs.protected_symlinks is 1) follows a link that is the follower's, or in
 * a directory that is not sticky and world-writable, or whose owner owns
 * the directory. That rule alone lets root follow a link that another user
 * planted in a directory of that user's, which is how a file of root's
 * gets replaced by way of a job's scratch directory; so hotset also
 * requires the link to be its user's own or root's (root can write
 * anything anyway). A refusal says which link and whose.
 */
static int may_follow(int dfd, int lfd, const char *shown, struct hs_error *err)
{
	struct stat ds, ls;
	uid_t me = geteuid();
	char who[64], downer[64];

	if (fstat(lfd, &ls) < 0 || fstat(dfd, &ds) < 0)
		return hs_error_set(err, errno, "%s: %s", shown, strerror(errno));
	if (ls.st_uid == me)
		return 0;
	if (ls.st_uid == 0 && (!sticky_world_writable(&ds) || ds.st_uid == 0))
		return 0;
	if (ls.st_uid == 0)
		return hs_error_set(err, EPERM, "%s is a symbolic link of root's in a sticky directory "
				    "of %s that all may write to: not followed (the kernel's "
				    "protected_symlinks rule)", shown, user_name(ds.st_uid, downer));
	return hs_error_set(err, EPERM, "%s is a symbolic link owned by %s: not followed (hotset "
			    "writes through no link of another user's; remove it, or name the file "
			    "it points to)", shown, user_name(ls.st_uid, who));
}

/* What a file is, in words, for refusals. */
static const char *kind(mode_t m)
{
	return S_ISDIR(m) ? "a directory" : S_ISFIFO(m) ? "a FIFO" : S_ISCHR(m) ? "a character device" :
	       S_ISBLK(m) ? "a block device" : S_ISSOCK(m) ? "a socket" : S_ISLNK(m) ? "a symbolic link" :
	       "not a regular file";
}

/* Append "/comp" (or comp, first) to the name shown in messages, cut to fit. */
static void shown_add(char *shown, const char *comp, size_t len)
{
	size_t have = strlen(shown);

	if (have && shown[have - 1] != '/' && have + 1 < PATH_MAX)
		shown[have++] = '/';
	if (len > PATH_MAX - 1 - have)
		len = PATH_MAX - 1 - have;
	memcpy(shown + have, comp, len);
	shown[have + len] = '\0';
}

/*
 * Walk path as the kernel would, with the rule of may_follow() at each
 * link: fills *w (w->dir to be closed by the caller) and returns 0, or
 * -errno with err filled. With WALK_LAST the last component is left for
 * the caller (w->name, w->exists, w->st); a link there is followed too.
 *
 * It is long because it is the kernel's walk done by hand, a component at
 * a time, and each step works on the state of the walk as a whole: the
 * directory held, the name shown in messages, the rest of the path (which
 * a link's text replaces in place) and the count of links followed. Split
 * into functions, each would take and give back all of it.
 */
static int walk(const char *path, enum walk_how how, mode_t dmode, struct where *w,
		struct hs_error *err)
{
	size_t cap = 2 * PATH_MAX, len = strlen(path);
	char *rest, *p, target[PATH_MAX];
	int links = 0, rc = 0, fd = -1;

	w->dir = -1;
	w->name[0] = '\0';
	w->exists = w->magic = false;
	w->shown[0] = '\0';
	if (!*path)
		return hs_error_set(err, ENOENT, "an empty path");
	if (len >= PATH_MAX)
		return hs_error_set(err, ENAMETOOLONG, "%s", strerror(ENAMETOOLONG));
	if (!(rest = malloc(cap)))
		return hs_error_set(err, ENOMEM, "out of memory");
	memcpy(rest, path, len + 1);
	if (path[0] == '/')
		strcpy(w->shown, "/");
	w->dir = open(path[0] == '/' ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (w->dir < 0) {
		rc = hs_error_set(err, errno, "%s", strerror(errno));
		goto out;
	}
	p = rest;
	for (;;) {
		struct stat st;
		char *comp, *end;
		bool last, must_dir;
		size_t clen;
		ssize_t n;

		while (*p == '/')
			p++;
		if (!*p)
			break;	/* the directory itself: w->name stays "" */
		comp = p;
		end = strchr(p, '/');
		clen = end ? (size_t)(end - p) : strlen(p);
		p = comp + clen;
		last = !*p || !p[strspn(p, "/")];
		must_dir = how != WALK_LAST || !last || *p == '/';
		if (clen > NAME_MAX) {
			rc = hs_error_set(err, ENAMETOOLONG, "%.*s...: %s", 32, comp,
					  strerror(ENAMETOOLONG));
			goto out;
		}
		if (clen == 1 && comp[0] == '.')
			continue;
		char name[NAME_MAX + 1];

		memcpy(name, comp, clen);
		name[clen] = '\0';
		fd = openat(w->dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 && errno == ENOENT && how == WALK_MKDIRS) {
			if (mkdirat(w->dir, name, dmode) < 0 && errno != EEXIST) {
				shown_add(w->shown, name, clen);
				rc = hs_error_set(err, errno, "cannot make the directory %s: %s",
						  w->shown, strerror(errno));
				goto out;
			}
			fd = openat(w->dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		}
		if (fd < 0 && errno == ENOENT && !must_dir) {
			snprintf(w->name, sizeof(w->name), "%s", name);
			break;	/* a file yet to be */
		}
		if (fd < 0 || fstat(fd, &st) < 0) {
			int e = errno;

			shown_add(w->shown, name, clen);
			rc = hs_error_set(err, e, "%s: %s", w->shown, strerror(e));
			goto out;
		}
		if (S_ISLNK(st.st_mode)) {
			char at[PATH_MAX];
			size_t tlen, rlen = strlen(p);
			struct statfs sf;

			memcpy(at, w->shown, sizeof(at));
			shown_add(at, name, clen);
			if (++links > MAX_LINKS) {
				rc = hs_error_set(err, ELOOP, "%s: %s", at, strerror(ELOOP));
				goto out;
			}
			if ((rc = may_follow(w->dir, fd, at, err)))
				goto out;
			/*
			 * /proc/self/fd/2 (what /dev/stderr names) reads as "pipe:[N]":
			 * a link only the kernel can follow. Left to it, as the last name.
			 */
			if (!must_dir && fstatfs(w->dir, &sf) == 0 && sf.f_type == PROC_SUPER_MAGIC) {
				if (fstatat(w->dir, name, &w->st, 0) < 0) {
					rc = hs_error_set(err, errno, "%s: %s", at, strerror(errno));
					goto out;
				}
				snprintf(w->name, sizeof(w->name), "%s", name);
				w->exists = w->magic = true;
				break;
			}
			if ((n = readlinkat(fd, "", target, sizeof(target) - 1)) < 0) {
				rc = hs_error_set(err, errno, "%s: %s", at, strerror(errno));
				goto out;
			}
			close(fd);
			fd = -1;
			target[n] = '\0';
			tlen = (size_t)n;
			if (tlen + 1 + rlen + 1 > cap) {
				rc = hs_error_set(err, ENAMETOOLONG, "%s: %s", at, strerror(ENAMETOOLONG));
				goto out;
			}
			/* the link's text takes its place: "target" + what followed it */
			memmove(rest + tlen, p, rlen + 1);
			memcpy(rest, target, tlen);
			p = rest;
			if (target[0] == '/') {
				close(w->dir);
				if ((w->dir = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0) {
					rc = hs_error_set(err, errno, "/: %s", strerror(errno));
					goto out;
				}
				strcpy(w->shown, "/");
			}
			continue;
		}
		if (!must_dir) {
			snprintf(w->name, sizeof(w->name), "%s", name);
			w->exists = true;
			w->st = st;
			close(fd);
			fd = -1;
			break;
		}
		if (!S_ISDIR(st.st_mode)) {
			shown_add(w->shown, name, clen);
			rc = hs_error_set(err, ENOTDIR, "%s: %s", w->shown, strerror(ENOTDIR));
			goto out;
		}
		close(w->dir);
		w->dir = fd;
		fd = -1;
		shown_add(w->shown, name, clen);
	}
	if (w->name[0])
		shown_add(w->shown, w->name, strlen(w->name));
	else if (!w->shown[0])
		strcpy(w->shown, ".");
out:
	if (fd >= 0)
		close(fd);
	if (rc && w->dir >= 0) {
		close(w->dir);
		w->dir = -1;
	}
	free(rest);
	return rc;
}

/* The walk to a file (not a directory), which must be a regular one if it exists. */
static int walk_file(const char *path, struct where *w, struct hs_error *err)
{
	int rc = walk(path, WALK_LAST, 0, w, err);

	if (rc)
		return rc;
	if (!w->name[0])
		rc = hs_error_set(err, EISDIR, "a directory");
	else if (w->exists && S_ISDIR(w->st.st_mode))
		rc = hs_error_set(err, EISDIR, "a directory");
	else if (w->exists && !S_ISREG(w->st.st_mode))
		rc = hs_error_set(err, EINVAL, "not a regular file (%s)", kind(w->st.st_mode));
	else if (w->magic)
		rc = hs_error_set(err, EINVAL, "a link of /proc, which cannot be replaced");
	if (rc) {
		close(w->dir);
		w->dir = -1;
	}
	return rc;
}

/* ======================================================================
 * Temporary files
 * ======================================================================
 *
 * A file is written to ".NAME.hotset-tmp.XXXXXX" beside its target NAME
 * (NAME cut to fit NAME_MAX), then renamed over it. Two things keep such
 * files from piling up:
 *
 *  - A signal that would end the process first removes the temporary
 *    files being written, through hs_atomic_cleanup(): their directory
 *    descriptors and names wait in a table of slots that a handler can
 *    read (atomics, fixed buffers).
 *  - Against what no handler sees (SIGKILL, a crash, a power cut), the
 *    writer holds an flock() on its temporary file as long as it lives, and
 *    the next writer of the same target removes the temporaries of NAME it
 *    can lock: their writer is gone. A lock rather than a pid in the name:
 *    it is released by the kernel when the writer dies, cannot be fooled by
 *    a reused pid or another pid namespace, and works over NFS.
 *
 * A writer locks its file just after creating it. A remover that locked it
 * in between (a newborn file is unlocked) removes it; the writer, blocked
 * until then, finds its file unlinked and makes another.
 */
#define TMP_INFIX ".hotset-tmp."
#define TMP_SLOTS 8

static atomic_int tmp_state[TMP_SLOTS];	/* 0 free, 1 being filled, 2 live */
static int tmp_dir[TMP_SLOTS];
static char tmp_name[TMP_SLOTS][NAME_MAX + 1];

/* Note (dir, name) as a file to remove on a fatal signal: its slot, or -1. */
static int tmp_register(int dir, const char *name)
{
	for (int i = 0; i < TMP_SLOTS; i++) {
		int expect = 0;

		if (!atomic_compare_exchange_strong(&tmp_state[i], &expect, 1))
			continue;
		tmp_dir[i] = dir;
		memcpy(tmp_name[i], name, strlen(name) + 1);
		atomic_store(&tmp_state[i], 2);
		return i;
	}
	return -1;	/* more writers than slots: the lock still lets it be removed later */
}

static void tmp_unregister(int slot)
{
	if (slot >= 0)
		atomic_store(&tmp_state[slot], 0);
}

void hs_atomic_cleanup(void)
{
	for (int i = 0; i < TMP_SLOTS; i++)
		if (atomic_load(&tmp_state[i]) == 2)
			unlinkat(tmp_dir[i], tmp_name[i], 0);
}

/* ".NAME.hotset-tmp." for target NAME. */
static void tmp_prefix(const char *name, char prefix[NAME_MAX + 1])
{
	size_t room = NAME_MAX - 1 - strlen(TMP_INFIX) - 6, len = strlen(name);

	snprintf(prefix, NAME_MAX + 1, ".%.*s%s", (int)(len < room ? len : room), name, TMP_INFIX);
}

/* Six random letters and digits after prefix, as mkstemp's XXXXXX. */
static void tmp_random_name(const char *prefix, char out[NAME_MAX + 1])
{
	static const char set[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	unsigned char r[6];
	size_t plen = strlen(prefix);

	if (getrandom(r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r)) {
		/* no entropy yet (early boot): the clock and the pid, as unique as needed */
		uint64_t x = hs_monotonic_ns() ^ ((uint64_t)getpid() << 32);

		for (size_t i = 0; i < sizeof(r); i++, x >>= 8)
			r[i] = (unsigned char)x;
	}
	memcpy(out, prefix, plen);
	for (size_t i = 0; i < sizeof(r); i++)
		out[plen + i] = set[r[i] % (sizeof(set) - 1)];
	out[plen + 6] = '\0';
}

/*
 * Remove the temporary files of dead writers of the same target: the
 * entries of dir named prefix + 6 characters, regular files of ours, that
 * nobody holds locked. Best effort: what cannot be checked is left.
 */
static void remove_stale_temporaries(int dir, const char *prefix)
{
	size_t plen = strlen(prefix);
	int dfd = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct dirent *de;
	DIR *d;

	if (dfd < 0)
		return;
	if (!(d = fdopendir(dfd))) {
		close(dfd);
		return;
	}
	while ((de = readdir(d))) {
		struct stat st, now;
		int fd;

		if (strncmp(de->d_name, prefix, plen) || strlen(de->d_name + plen) != 6)
			continue;
		/* a look before the open: a FIFO or a device of that name is never opened */
		if (fstatat(dirfd(d), de->d_name, &now, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(now.st_mode))
			continue;
		fd = openat(dirfd(d), de->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
		    flock(fd, LOCK_EX | LOCK_NB) == 0 &&
		    fstatat(dirfd(d), de->d_name, &now, AT_SYMLINK_NOFOLLOW) == 0 &&
		    now.st_dev == st.st_dev && now.st_ino == st.st_ino)
			unlinkat(dirfd(d), de->d_name, 0);	/* its writer is gone */
		close(fd);
	}
	closedir(d);
}

/*
 * Create the temporary file beside name in dir, locked and registered for
 * removal on a fatal signal, with mode (the umask applies): its name in
 * tmp, its slot in *slot, its descriptor returned; or -errno. With
 * clean_up, remove the leftovers of dead writers of name too.
 */
static int create_temp(int dir, const char *name, mode_t mode, char tmp[NAME_MAX + 1],
		       int *slot, bool clean_up)
{
	char prefix[NAME_MAX + 1];
	int fd = -EEXIST;

	*slot = -1;
	tmp_prefix(name, prefix);
	for (int attempt = 0; attempt < 100; attempt++) {
		struct stat st;

		tmp_random_name(prefix, tmp);
		/* O_EXCL: a new file, never one (nor a link) already there */
		fd = openat(dir, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
		if (fd < 0 && errno == EEXIST)
			continue;
		if (fd < 0)
			return -errno;
		/* a filesystem without flock: no lock, and so never removed by others */
		if (flock(fd, LOCK_EX) < 0 && errno != ENOLCK && errno != EINVAL &&
		    errno != EOPNOTSUPP) {
			int e = errno;

			close(fd);
			unlinkat(dir, tmp, 0);
			return -e;
		}
		if (fstat(fd, &st) == 0 && st.st_nlink > 0)
			break;
		close(fd);	/* removed by a writer that took it for a leftover: again */
		fd = -EEXIST;
	}
	if (fd < 0)
		return fd;
	*slot = tmp_register(dir, tmp);
	if (clean_up)
		remove_stale_temporaries(dir, prefix);
	return fd;
}

/* ======================================================================
 * Files written whole
 * ====================================================================== */

struct hs_atomic_file {
	int fd;
	int dir;			/* -1 when writing to standard output */
	int slot;			/* tmp's in the table of temporaries, or -1 */
	char name[NAME_MAX + 1];
	char tmp[NAME_MAX + 1];
};

int hs_atomic_check(const char *path, struct hs_error *err)
{
	char tmp[NAME_MAX + 1];
	struct where w;
	int rc, fd, slot;

	if (strcmp(path, "-") == 0)
		return 0;
	if ((rc = walk_file(path, &w, err)))
		return rc;
	/*
	 * access() can say yes where no file can be made (/proc, as root):
	 * make the temporary file the writer would, and remove it.
	 */
	if ((fd = create_temp(w.dir, w.name, 0600, tmp, &slot, false)) < 0) {
		rc = hs_error_set(err, -fd, "cannot create files beside it: %s", strerror(-fd));
	} else {
		unlinkat(w.dir, tmp, 0);
		tmp_unregister(slot);
		close(fd);
	}
	close(w.dir);
	return rc;
}

int hs_atomic_open(const char *path, mode_t mode, struct hs_atomic_file **out, int *fd,
		   struct hs_error *err)
{
	struct hs_atomic_file *f = calloc(1, sizeof(*f));
	struct where w;
	int rc;

	if (!f)
		return hs_error_set(err, ENOMEM, "out of memory");
	f->slot = -1;
	f->dir = -1;
	if (strcmp(path, "-") == 0) {
		f->fd = STDOUT_FILENO;
		goto done;
	}
	if ((rc = walk_file(path, &w, err)))
		goto fail;
	f->dir = w.dir;
	snprintf(f->name, sizeof(f->name), "%s", w.name);
	/*
	 * A new file: the mode asked, less the umask, which the kernel applies
	 * (umask() to read it would race other threads making files). A file
	 * replaced: its own permissions, at most those asked, so that a file
	 * someone made private stays private.
	 */
	f->fd = create_temp(f->dir, f->name, w.exists ? 0600 : mode, f->tmp, &f->slot, true);
	if (f->fd < 0) {
		rc = hs_error_set(err, -f->fd, "cannot create files beside it: %s", strerror(-f->fd));
		goto fail;
	}
	if (w.exists && fchmod(f->fd, w.st.st_mode & mode & 0777) < 0) {
		rc = hs_error_set(err, errno, "%s", strerror(errno));
		unlinkat(f->dir, f->tmp, 0);
		tmp_unregister(f->slot);
		close(f->fd);
		goto fail;
	}
done:
	*out = f;
	*fd = f->fd;
	return 0;
fail:
	if (f->dir >= 0)
		close(f->dir);
	free(f);
	return rc;
}

static void atomic_free(struct hs_atomic_file *f)
{
	tmp_unregister(f->slot);	/* renamed or removed by now */
	if (f->dir >= 0) {
		close(f->fd);	/* and so unlocked */
		close(f->dir);
	}
	free(f);
}

int hs_atomic_commit(struct hs_atomic_file *f, int rc)
{
	if (f->dir >= 0) {
		if (!rc && fsync(f->fd) < 0)
			rc = -errno;
		/* rename replaces the entry: a link put there since is replaced, not followed */
		if (!rc && renameat(f->dir, f->tmp, f->dir, f->name) < 0)
			rc = -errno;
		if (rc)
			unlinkat(f->dir, f->tmp, 0);
	}
	atomic_free(f);
	return rc;
}

int hs_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

void hs_atomic_abort(struct hs_atomic_file *f)
{
	if (!f)
		return;
	if (f->dir >= 0)
		unlinkat(f->dir, f->tmp, 0);
	atomic_free(f);
}

/* ======================================================================
 * Files written in place
 * ====================================================================== */

/*
 * May an existing file st of directory dir be opened for writing in place?
 * In a sticky, world-writable directory, a file of another user's that is
 * not the directory owner's is refused (the kernel's protected_regular
 * rule: it may have been put there for us to write into); anywhere, a file
 * of another user's with more than one name is refused (a hard link to a
 * file elsewhere, where fs.protected_hardlinks is 0).
 */
static int may_write_in_place(const struct where *w, struct hs_error *err)
{
	struct stat ds;
	uid_t me = geteuid();
	char who[64];

	if (w->st.st_uid == me)
		return 0;
	if (fstat(w->dir, &ds) < 0)
		return hs_error_set(err, errno, "%s", strerror(errno));
	if (sticky_world_writable(&ds) && w->st.st_uid != ds.st_uid)
		return hs_error_set(err, EPERM, "%s is a file of %s in a sticky directory that all "
				    "may write to: not opened (the kernel's protected_regular rule); "
				    "remove it, or give another name", w->shown,
				    user_name(w->st.st_uid, who));
	if (S_ISREG(w->st.st_mode) && w->st.st_nlink > 1)
		return hs_error_set(err, EPERM, "%s is a file of %s with %ju names (hard links): not "
				    "opened", w->shown, user_name(w->st.st_uid, who),
				    (uintmax_t)w->st.st_nlink);
	return 0;
}

/*
 * hs_open_regular(), or with any_type hs_open_output(): then a FIFO or a
 * device that the walk reaches is opened as named, as a shell's > does
 * (blocking on a FIFO until it has a reader), unless in a sticky,
 * world-writable directory and not the caller's (protected_fifos).
 */
static int open_in_place(const char *path, int flags, mode_t mode, bool any_type,
			 struct hs_error *err)
{
	int acc = flags & (O_ACCMODE | O_APPEND), rc = -EAGAIN;

	/* a few tries: each one that loses a race to another process's change starts over */
	for (int attempt = 0; attempt < 5 && rc == -EAGAIN; attempt++) {
		struct where w;
		struct stat st;
		bool other;
		int fd;

		if ((rc = walk(path, WALK_LAST, 0, &w, err)))
			return rc;
		other = w.exists && !S_ISREG(w.st.st_mode);
		if (!w.name[0] || (w.exists && S_ISDIR(w.st.st_mode))) {
			rc = hs_error_set(err, EISDIR, "a directory");
		} else if (other && (!any_type || S_ISSOCK(w.st.st_mode))) {
			rc = hs_error_set(err, EINVAL, "not a regular file (%s)", kind(w.st.st_mode));
		} else if (!w.exists && !(flags & O_CREAT)) {
			rc = hs_error_set(err, ENOENT, "%s", strerror(ENOENT));
		} else if (!w.exists) {
			fd = openat(w.dir, w.name, acc | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC |
				    O_NOCTTY, mode);
			if (fd >= 0)
				rc = fd;
			else if (errno == EEXIST)
				rc = -EAGAIN;	/* made meanwhile: look at it again */
			else
				rc = hs_error_set(err, errno, "%s", strerror(errno));
		} else if ((acc & O_ACCMODE) != O_RDONLY && (rc = may_write_in_place(&w, err))) {
			/* refused, said why */
		} else {
			/*
			 * O_NONBLOCK: should a FIFO have taken the regular file's place
			 * since the look, the open does not wait for a reader; it is
			 * refused below. O_TRUNC only once the file is known.
			 */
			fd = openat(w.dir, w.name, acc | (w.magic ? 0 : O_NOFOLLOW) | O_CLOEXEC |
				    O_NOCTTY | (other ? flags & O_TRUNC : O_NONBLOCK));
			if (fd < 0) {
				rc = errno == ELOOP || errno == ENXIO ? -EAGAIN :
				     hs_error_set(err, errno, "%s", strerror(errno));
			} else if (fstat(fd, &st) < 0 || (st.st_mode & S_IFMT) != (w.st.st_mode & S_IFMT) ||
				   st.st_dev != w.st.st_dev || st.st_ino != w.st.st_ino) {
				close(fd);
				rc = -EAGAIN;	/* not the file looked at */
			} else if (!other && (fcntl(fd, F_SETFL, acc & O_APPEND) < 0 ||
					      ((flags & O_TRUNC) && ftruncate(fd, 0) < 0))) {
				rc = hs_error_set(err, errno, "%s", strerror(errno));
				close(fd);
			} else {
				rc = fd;
			}
		}
		close(w.dir);
	}
	if (rc == -EAGAIN)
		rc = hs_error_set(err, EAGAIN, "changed by another process while it was opened");
	return rc;
}

int hs_open_regular(const char *path, int flags, mode_t mode, struct hs_error *err)
{
	return open_in_place(path, flags, mode, false, err);
}

int hs_open_output(const char *path, int flags, mode_t mode, struct hs_error *err)
{
	return open_in_place(path, flags, mode, true, err);
}

int hs_remove_if_same(const char *path, dev_t dev, ino_t ino)
{
	struct where w;
	int rc;

	if ((rc = walk_file(path, &w, NULL)))
		return rc;
	if (!w.exists)
		rc = -ENOENT;
	else if (w.st.st_dev != dev || w.st.st_ino != ino)
		rc = -ESTALE;
	else if (unlinkat(w.dir, w.name, 0) < 0)
		rc = -errno;
	close(w.dir);
	return rc;
}

/* ======================================================================
 * Directories
 * ====================================================================== */

int hs_mkdirs(const char *path, mode_t mode, struct hs_error *err)
{
	struct where w;
	int rc = walk(path, WALK_MKDIRS, mode, &w, err);

	if (!rc)
		close(w.dir);
	return rc;
}

int hs_dir_check(const char *path, const char *const *entries, struct hs_error *err)
{
	struct where w;
	struct stat ds, st;
	uid_t me = geteuid();
	char who[64];
	int rc;

	if ((rc = walk(path, WALK_DIRS, 0, &w, err)))
		return rc;
	if (fstat(w.dir, &ds) < 0) {
		rc = hs_error_set(err, errno, "%s: %s", w.shown, strerror(errno));
	} else if (ds.st_uid != me && ds.st_uid != 0) {
		rc = hs_error_set(err, EPERM, "%s is owned by %s: give a directory of your own",
				  w.shown, user_name(ds.st_uid, who));
	} else if ((ds.st_mode & (S_IWGRP | S_IWOTH)) && !(ds.st_mode & S_ISVTX)) {
		rc = hs_error_set(err, EPERM, "%s may be written by %s (mode %04o): give a directory "
				  "that only you may write to", w.shown,
				  ds.st_mode & S_IWOTH ? "all" : "its group",
				  (unsigned)(ds.st_mode & 07777));
	} else if (ds.st_mode & (S_IWGRP | S_IWOTH)) {
		/* sticky: others cannot remove what is ours, but they may have made it first */
		for (size_t i = 0; entries && entries[i] && !rc; i++) {
			if (fstatat(w.dir, entries[i], &st, AT_SYMLINK_NOFOLLOW) < 0) {
				if (errno != ENOENT)
					rc = hs_error_set(err, errno, "%s/%s: %s", w.shown, entries[i],
							  strerror(errno));
			} else if (st.st_uid != me || S_ISLNK(st.st_mode)) {
				rc = hs_error_set(err, EPERM, "%s/%s is %s of %s, in a directory all "
						  "may write to: give a directory of your own",
						  w.shown, entries[i],
						  S_ISLNK(st.st_mode) ? "a symbolic link" : "a file",
						  user_name(st.st_uid, who));
			}
		}
	}
	close(w.dir);
	return rc;
}
