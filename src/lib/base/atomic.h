/*
 * atomic.h - the one way hotset creates and writes files.
 *
 * hotset runs as root from systemd and from Slurm's prolog and epilog, and
 * people run it as root in shared directories (/tmp, a project's scratch
 * space) on machines where fs.protected_symlinks is 0. Every file it
 * writes (profiles, reports, SVG charts, keep's state, lock and pid files,
 * run's queue, histories and logs) goes through this module, which keeps
 * to three rules whatever the sysctls say:
 *
 *  - A name is resolved component by component, and a symbolic link on
 *    the way (the last component included) is followed only if it is the
 *    caller's own or root's, and the kernel's protected_symlinks rule
 *    (may_follow_link() of fs/namei.c) would follow it too: never a link
 *    of root's in a sticky, world-writable directory of another user.
 *    Anything else is refused with a sentence naming the link and its
 *    owner.
 *  - A file written whole is written to a temporary file made with
 *    O_CREAT|O_EXCL beside the name (in the directory the name resolves
 *    to), then renamed over it: nothing is ever written through an
 *    existing inode, and an existing name that is not a regular file (a
 *    FIFO, a device, a socket, a directory) is refused, never opened.
 *  - A file written in place (a log appended to, a lock) is opened only if
 *    it is a regular file, checked on the descriptor itself; in a sticky,
 *    world-writable directory, an existing file of another user's is
 *    refused (the kernel's protected_regular rule), and so is one of
 *    another user's with more than one name (a hard link).
 *
 * Modes are computed without umask(2), which would race any thread making
 * a file: a new file is created with the mode asked, and the kernel applies
 * the umask; a file that replaces another gets the old one's permission
 * bits, at most the mode asked.
 *
 * The library installs no signal handler. A temporary file being written
 * is noted in a table that hs_atomic_cleanup(), async-signal-safe, empties:
 * the program's own handlers of fatal signals call it, so that a signal
 * leaves no temporary file behind.
 */
#ifndef HOTSET_ATOMIC_H
#define HOTSET_ATOMIC_H

#include <stdbool.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "base/hotset.h"

/* ---- files written whole --------------------------------------------- */

struct hs_atomic_file;

/*
 * Start writing path ("-" is standard output, which cannot be atomic).
 * Nothing appears at path until hs_atomic_commit(); then the new file
 * replaces path, or the file a link there names (under the rule above).
 * mode: the mode of a new file before the umask (0666 for what users read,
 * 0600 for private state). The file is written to
 * ".NAME.hotset-tmp.XXXXXX" beside NAME, locked (flock) while it lives;
 * opening one removes such files of the same NAME that nobody holds
 * locked, left by writers that died (SIGKILL, a crash). *fd is the
 * descriptor to write to; it belongs to the file. Returns 0, or -errno
 * with err (if not NULL) saying why.
 */
int hs_atomic_open(const char *path, mode_t mode, struct hs_atomic_file **out, int *fd,
		   struct hs_error *err);

/*
 * Done writing: with rc 0, fsync and rename into place; otherwise (a
 * write that failed with rc) remove the temporary file. Frees f; returns
 * rc or the error of the fsync or rename.
 */
int hs_atomic_commit(struct hs_atomic_file *f, int rc);

/* Give up: remove the temporary file and free f (NULL is ignored). */
void hs_atomic_abort(struct hs_atomic_file *f);

/*
 * write(2) all of buf, again after a short write (which a full disk or a
 * file size limit makes without an errno) or EINTR, until done or an
 * error: returns 0 or -errno (-EIO for a write that wrote nothing and
 * said no more).
 */
int hs_write_all(int fd, const void *buf, size_t len);

/*
 * Whether path could be written by hs_atomic_open(): the rule allows the
 * name, an existing file there is a regular one, and a file can be made
 * beside it (one is made and removed). For a check before long work.
 * Returns 0 or -errno with err saying why.
 */
int hs_atomic_check(const char *path, struct hs_error *err);

/*
 * Remove the temporary files of the writers still open in this process.
 * Async-signal-safe (unlinkat and atomics only): for a handler of a fatal
 * signal, just before the process ends. Writers left open are not to be
 * used after it.
 */
void hs_atomic_cleanup(void);

/* ---- files written in place -------------------------------------------- */

/*
 * open(2) path, a regular file, under the rule above: flags are O_RDONLY,
 * O_WRONLY or O_RDWR, with O_APPEND, O_TRUNC, O_CREAT (mode as for open:
 * the umask applies); O_CLOEXEC and O_NOCTTY are added. A FIFO, device,
 * socket or directory is never opened (a look without opening first, then
 * a check of what was opened). Returns the descriptor, or -errno with err
 * (if not NULL) saying why.
 */
int hs_open_regular(const char *path, int flags, mode_t mode, struct hs_error *err);

/*
 * hs_open_regular() for an output a user names, as a shell's > opens it:
 * a FIFO or a device there (/dev/null, /dev/stderr) is opened too, unless
 * it is another user's in a sticky, world-writable directory (the kernel's
 * protected_fifos rule); links follow the rule above all the same.
 */
int hs_open_output(const char *path, int flags, mode_t mode, struct hs_error *err);

/*
 * Remove the file path names (a link followed under the rule: the file,
 * not the link), if it is still the inode (dev, ino). Returns 0, -ESTALE
 * if another file is there now, or -errno.
 */
int hs_remove_if_same(const char *path, dev_t dev, ino_t ino);

/* ---- directories ---------------------------------------------------------- */

/*
 * mkdir -p path under the rule above; directories it makes get mode (the
 * umask applies). Returns 0 or -errno with err (if not NULL) saying why.
 */
int hs_mkdirs(const char *path, mode_t mode, struct hs_error *err);

/*
 * Whether directory path is safe to keep this user's state in, as ssh's
 * StrictModes judges a home: it must be owned by this user or root, and
 * writable by no one else, unless it is sticky (/tmp) and each of the
 * entries it holds that hotset would use (a NULL-terminated list of
 * names; NULL for none) is this user's own, not a link. Returns 0, or
 * -EPERM (or -errno) with err saying why.
 */
int hs_dir_check(const char *path, const char *const *entries, struct hs_error *err);

#endif
