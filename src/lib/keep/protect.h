/*
 * protect.h - keep's --protect: memory.low of the keeper's cgroup (v2)
 * set to the kept bytes, so that reclaim takes others' memory before the
 * pages it keeps. Private to src/lib/keep (the keeper calls it;
 * the unit tests run it on a fake cgroup tree).
 */
#ifndef HOTSET_KEEP_PROTECT_H
#define HOTSET_KEEP_PROTECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/hotset.h"

/*
 * --protect: set memory.low of a cgroup v2 directory to bytes. mount and
 * own: the cgroup2 mount and this process's directory under it (NULL:
 * found from /proc/self). When own is the root, which has no memory.low, a
 * cgroup of its own, mount/name, is made and the process moved into it
 * (*made true). Refused (-EBUSY) when own holds other processes too, whose
 * memory the protection would cover. *dir (size bytes) receives the
 * directory set. Returns 0, or -errno with err saying what cannot be done
 * and how to get it (-ENOTSUP: no memory controller on cgroup v2, as with
 * cgroup v1, which has no low protection at all).
 */
int hs_keep_protect(const char *mount, const char *own, const char *name, uint64_t bytes,
		    char *dir, size_t size, bool *made, struct hs_error *err);
/* Undo it: memory.low 0; a cgroup made is left (for its parent) and removed. */
void hs_keep_unprotect(const char *dir, bool made);

#endif
