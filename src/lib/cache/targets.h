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
 *     open descriptor before anything else happens; operands and profile
 *     entries are looked at before they are opened (safeopen.h);
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
#include <sys/types.h>

#include "profile/profile.h"

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
	/*
	 * Filters (vmtouch's -I, -i, -m), for every file however it was
	 * named (operand, list, profile entry): what they leave out is
	 * skipped silently. A glob matches a base name, or, if it has a '/',
	 * the whole path as produced (as find's -name and -path: '*' matches
	 * '/' there, and a leading '.' anywhere). -i leaves out a directory
	 * and all under it: in a walk it is not read, and a path with such a
	 * directory on its way is left out too.
	 */
	const char *const *include;	/* if any: only files matching one of them */
	size_t ninclude;
	const char *const *exclude;	/* files and directories matching one: left out */
	size_t nexclude;
	uint64_t max_size;	/* files of more bytes are left out; 0 = no limit */
};

/*
 * Do the globs of o leave out path, a directory if dir (-I is for files
 * only)? By its name and by those of the directories on its way. The base
 * name of "/", "." or ".." is no name: no glob matches it, so that
 * "-i '.*' ." still walks ".".
 */
bool hs_target_filtered(const struct hs_target_opts *o, const char *path, bool dir);

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
 * Paths come one at a time, each walked to its end before the next, so
 * that named files and trees come out in the order they were named.
 */
int hs_targets_walk(const char *const *paths, size_t npaths, const struct hs_target_opts *o,
		    hs_target_fn fn, hs_target_warn_fn warn, void *ctx);

/*
 * Where hs_targets_walk_names() takes its names: 1 with *name set (valid
 * until the next call), 0 at the end, or a negative value that stops the
 * walk and is returned. Called by one walking thread at a time.
 */
typedef int (*hs_target_next_fn)(void *ctx, const char **name);

/*
 * hs_targets_walk() over names as next gives them, one at a time (a list
 * of any length is never held whole), and any file may come twice. Unlike
 * hs_targets_walk()'s operands, a name is taken by any thread that has no
 * directory to read, so that named files are looked at in parallel: with
 * one thread, files come in the order named, each tree walked to its end
 * before the next name; with more, in no particular order. next has the
 * context next_ctx.
 */
int hs_targets_walk_names(hs_target_next_fn next, void *next_ctx, const struct hs_target_opts *o,
			  hs_target_fn fn, hs_target_warn_fn warn, void *ctx);

/* ---- lists of names (--files-from) ---------------------------------------- */

/*
 * A list of file names read as a stream: names end with delim ('\n' or
 * '\0'), the last one maybe with the end of the input instead. Names are
 * taken as they are (no blanks trimmed); empty ones are skipped.
 */
struct hs_name_list;

/* Gives up to len bytes into buf: their count, 0 at the end, or -errno. */
typedef ssize_t (*hs_read_fn)(void *ctx, void *buf, size_t len);

/* A list read from fd (not closed by the list), names below PATH_MAX bytes. */
int hs_name_list_new(int fd, char delim, struct hs_name_list **out);

/* A list read with read_fn, names of at most max_len bytes. */
int hs_name_list_new_fn(hs_read_fn read_fn, void *ctx, char delim, size_t max_len,
			struct hs_name_list **out);

/*
 * The next name: 1 with *name (NUL-terminated, valid until the next call)
 * and *len set, 0 at the end, or -errno from reading. A name refused is
 * told with its line (1-based, empty lines counted) and skipped: the next
 * call goes on after it. -ENAMETOOLONG: longer than the limit;
 * -EILSEQ: a NUL byte in a name ended by '\n' (a list of -print0).
 */
int hs_name_list_next(struct hs_name_list *l, const char **name, size_t *len, unsigned *line);

void hs_name_list_free(struct hs_name_list *l);

/*
 * Every file of the profile r, in profile order, with its ranges: each the
 * file its entry names, opened carefully (safeopen.h: no symlink in its
 * place, the entry's device and inode where it gives them). A regular
 * file of the caller's (the filesystem uid's) or root's put in its place
 * since is the entry's file anew, stale; anything else there (another
 * user's file, a FIFO, a symlink) replaced it, is never opened, and is
 * told to warn ("replaced by a FIFO since the profile was made, not
 * opened"). Returns
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
