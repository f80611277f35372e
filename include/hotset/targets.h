/*
 * targets.h - the files a command acts on.
 *
 * status, warm, evict and snapshot all act on a stream of regular files,
 * each with the pages that matter: either every file under some paths
 * (whole files), or the entries of a profile (their recorded ranges). This
 * module produces that stream, so that the rules live in one place:
 *
 *   - only regular files are opened, with O_NONBLOCK so that a FIFO swapped
 *     in at the last moment cannot hang us, and their type is checked on the
 *     open descriptor before anything else happens;
 *   - nothing on proc, sysfs, debugfs and other pseudo-filesystems is read;
 *   - directories are walked without following symlinks (unless asked),
 *     staying on one filesystem if asked, counting each file once;
 *   - a file that vanished, or that is unreadable, is reported to the warn
 *     callback and skipped; the walk goes on.
 */
#ifndef HOTSET_TARGETS_H
#define HOTSET_TARGETS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "hotset/profile.h"

struct hs_target {
	const char *path;	/* NUL-terminated; may contain any byte but NUL */
	size_t path_len;
	int fd;			/* open read-only; closed after the callback */
	const struct stat *st;	/* of fd */
	const struct hs_range *ranges;	/* in this machine's pages; NULL = whole file */
	size_t nranges;
	uint64_t pages;		/* pages targeted that exist in the file now */
	uint64_t index;		/* 0, 1, 2... in the order produced */
	/* From a profile only: */
	const struct hs_profile_file *entry;
	bool stale;		/* device, inode, size or mtime changed since */
};

struct hs_target_opts {
	bool one_filesystem;	/* do not cross mount points (-x) */
	bool follow_symlinks;	/* follow symlinks found in trees (-L) */
	unsigned threads;	/* threads walking directories; 0 or 1 = the caller's */
};

/*
 * Called once per target; a non-zero return stops the walk and is returned.
 * With threads > 1, fn and warn are called from several threads at once,
 * and files come in no particular order.
 */
typedef int (*hs_target_fn)(void *ctx, const struct hs_target *t);

/*
 * Called for each file or directory that is skipped with a reason worth
 * telling: errnum is an errno value (0 when none applies), what a short
 * phrase ("cannot open", "not a regular file", ...).
 */
typedef void (*hs_target_warn_fn)(void *ctx, const char *path, int errnum, const char *what);

/*
 * Every regular file named by paths or found under them, each once even if
 * named twice or under two of the paths (by device and inode). Symlinks
 * named on the command line are followed; "//" and "." in them are
 * collapsed in the paths produced ("./d//f" gives "d/f"), ".." is not. A
 * directory replaced (by a symlink, say) between being found and being
 * read is skipped with a warning. Returns 0 when the walk completed (even
 * if some files were skipped), the callback's non-zero value, or -ENOMEM.
 */
int hs_targets_walk(const char *const *paths, size_t npaths, const struct hs_target_opts *o,
		    hs_target_fn fn, hs_target_warn_fn warn, void *ctx);

/*
 * Every file of the profile r, in profile order, with its ranges. Returns
 * 0, the callback's non-zero value, -ENOMEM, or -EINVAL with err filled if
 * the profile turns out malformed part way.
 */
int hs_targets_profile(struct hs_profile_reader *r, hs_target_fn fn, hs_target_warn_fn warn,
		       void *ctx, struct hs_error *err);

/*
 * Does the caller want the profile entry at path (path_len bytes)? Asked
 * before the file is looked at: an entry refused is neither opened nor
 * warned about, and takes no index.
 */
typedef bool (*hs_target_select_fn)(void *ctx, const char *path, size_t path_len);

/* hs_targets_profile() for the entries select accepts (all if NULL). */
int hs_targets_profile_select(struct hs_profile_reader *r, hs_target_select_fn select,
			      hs_target_fn fn, hs_target_warn_fn warn, void *ctx,
			      struct hs_error *err);

#endif
