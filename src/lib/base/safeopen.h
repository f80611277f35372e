/*
 * safeopen.h - the one careful open of a file hotset was told of.
 *
 * hotset opens files that others name: a path on the command line, an
 * entry of a profile someone else wrote, a file a keeper running as root
 * has kept for hours while its directory is anyone's. Whatever is at that
 * path now is opened only if it is what was asked for:
 *
 *   - it is looked at first (fstatat), and opened only if it is a regular
 *     file (or a directory, where one is allowed): a FIFO, a device or a
 *     socket is never opened, since opening one acts (a FIFO's open
 *     releases a writer waiting for a reader; a device's open is its
 *     driver's to define: /dev/ptmx makes a terminal);
 *   - where the last part of the path must not be a symlink (a profile
 *     names files, never links), a symlink there is refused, not followed,
 *     and the open says O_NOFOLLOW;
 *   - where an identity (device, inode) is given, another file at the path
 *     was put there since: the path was replaced. A rebuild, a checkout,
 *     an editor saving by rename, a package upgrade all replace files so,
 *     and what they put there is the file anew; what another user could
 *     plant is not. So, where the caller asks (HS_SAFE_ANEW), a regular
 *     file of the user the open is done for (the filesystem uid: the
 *     caller's effective uid, or the user a root keeper reads a profile
 *     as) or of root is taken as the file anew; one of any other owner
 *     (or any other file, where the caller does not ask) is refused
 *     before it is opened;
 *   - the open itself can have no side effect (O_NONBLOCK, O_NOCTTY), and
 *     the descriptor is fstat'ed: what the look saw must be what was
 *     opened, or it is closed unread.
 *
 * The look decides, on what fstatat says (type, identity, owner); the
 * open only confirms it. The look and the open are two system calls: a swap in
 * between still reaches an open (non-blocking, without a controlling
 * terminal), but never a read, and the file is closed unread.
 */
#ifndef HOTSET_SAFEOPEN_H
#define HOTSET_SAFEOPEN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/* The file a path must name: st_dev and st_ino of stat(2). */
struct hs_safe_id {
	uint64_t dev, ino;
};

/* How to open (hs_safe_open's how). */
#define HS_SAFE_DIRS	 0x1u	/* a directory may be opened too */
#define HS_SAFE_NOFOLLOW 0x2u	/* a symlink as the last part is refused, never followed */
#define HS_SAFE_ANEW	 0x4u	/* with an identity: another regular file there, of the
				 * filesystem uid's or of root's, is taken anew (HS_SAFE_NEW) */

/* What was found at the path: the file opened (or looked at), or why not. */
enum hs_safe_found {
	HS_SAFE_FILE = 0,	/* the file asked for (opened, or looked at) */
	HS_SAFE_NEW,		/* another regular file than the identity asked for, of the
				 * filesystem uid's or root's, taken anew (HS_SAFE_ANEW):
				 * opened, or looked at, as HS_SAFE_FILE is */
	HS_SAFE_ERROR,		/* it could not be looked at or opened: the -errno returned
				 * (-ENOENT: nothing there) */
	HS_SAFE_TYPE,		/* not a regular file (nor a directory where allowed): type
				 * says what (S_IFLNK for a symlink refused) */
	HS_SAFE_OTHER,		/* a regular file, but another than the identity asked for,
				 * not taken: anyone's, or with HS_SAFE_ANEW another user's
				 * (st_uid of the stat returned says whose) */
	HS_SAFE_SWAPPED,	/* the file opened is not the one looked at (swapped in
				 * between): closed unread */
};

struct hs_safe_result {
	enum hs_safe_found found;
	mode_t type;		/* S_IFMT bits of what is at the path, when looked at */
};

/*
 * Open path (relative to dirfd, or AT_FDCWD; of any length) with flags,
 * to which O_NONBLOCK, O_NOCTTY and O_CLOEXEC are added, as the rules
 * above say; want (optional) is the identity it must have. Returns the
 * descriptor with *st its fstat (res: HS_SAFE_FILE, or HS_SAFE_NEW), or a
 * negative value with res saying why (-errno for HS_SAFE_ERROR, -EINVAL
 * for HS_SAFE_TYPE, -ESTALE for HS_SAFE_OTHER and HS_SAFE_SWAPPED: tell
 * them apart by res, since open(2) itself may fail with those); with
 * HS_SAFE_TYPE, HS_SAFE_OTHER or HS_SAFE_SWAPPED, *st is the stat of what
 * was found instead.
 */
int hs_safe_open(int dirfd, const char *path, int flags, unsigned how,
		 const struct hs_safe_id *want, struct stat *st, struct hs_safe_result *res);

/*
 * The look alone, for a caller that needs the file's stat but not the
 * file (a check that it is still the same): 0 with *st (res: HS_SAFE_FILE
 * or HS_SAFE_NEW), or a negative value as hs_safe_open() returns. Nothing
 * is opened.
 */
int hs_safe_look(int dirfd, const char *path, unsigned how, const struct hs_safe_id *want,
		 struct stat *st, struct hs_safe_result *res);

/* What a file type is, in words: "a FIFO", "a symbolic link", "a directory"... */
const char *hs_safe_type_name(mode_t type);

/*
 * The filesystem uid this thread opens files with: the effective uid,
 * unless setfsuid(2) set another (a root keeper reading as a profile's
 * owner). The kernel checks permissions with it, and HS_SAFE_ANEW takes
 * its files anew.
 */
uid_t hs_safe_fsuid(void);

/*
 * The pieces the careful open is made of, for callers that walk trees
 * (targets-walk.c): openat(2) through no symlink at all if no_symlinks
 * (openat2's RESOLVE_NO_SYMLINKS, O_NOFOLLOW where it is missing), and a
 * path longer than PATH_MAX reduced to a rest that can be opened relative
 * to *prefix (close it with hs_safe_prefix_close()). Both return 0 or a
 * descriptor, or -errno.
 */
int hs_safe_openat(int dirfd, const char *path, int flags, bool no_symlinks);
int hs_safe_prefix(int dirfd, const char **path, bool no_symlinks, int *prefix);
void hs_safe_prefix_close(int prefix, int dirfd);

#endif
