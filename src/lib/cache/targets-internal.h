/*
 * targets-internal.h - what the parts of the targets module share
 * (private to src/lib/cache/targets*.c; the interface is targets.h).
 *
 *   targets.c          the rules every target passes, however it was
 *                      named: pseudo-filesystems, the filters, the flags
 *                      files are opened with
 *   targets-walk.c     the parallel tree walk over operands or names
 *   targets-profile.c  a profile's entries, each the file it names
 */
#ifndef HOTSET_TARGETS_INTERNAL_H
#define HOTSET_TARGETS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "cache/targets.h"

/*
 * statfs is asked once per device: the answer for a device never changes,
 * and a tree or a profile touches few devices.
 */
struct fs_cache {
	struct {
		dev_t dev;
		const char *pseudo;
	} e[16];
	size_t n;
};

/*
 * The pseudo-filesystem fd is on (hs_pseudo_fs), or NULL, asked once per
 * device of c. Not thread-safe: a cache is one thread's, or locked.
 */
const char *targets_pseudo_fs(struct fs_cache *c, int fd, dev_t dev);

/* Do the globs leave out path by its own name (a directory's: by -i only)? */
bool targets_name_filtered(const struct hs_target_opts *o, const char *path, bool dir);

/*
 * The flags a target's file is opened with: read-only, never blocking
 * (a FIFO swapped in), no controlling terminal, no atime update where the
 * caller may ask for none.
 */
int targets_open_flags(void);

#endif
