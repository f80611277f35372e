/*
 * keep-evict.h - evictions of kept files as the kernel makes them
 * (keep.bpf.c), for events.c: files are checked when their pages go, not
 * only when the schedule comes to them.
 */
#ifndef HOTSET_KEEP_EVICT_H
#define HOTSET_KEEP_EVICT_H

#include <stddef.h>
#include <stdint.h>

#include "base/hotset.h"

struct keep_evict;

/*
 * Load and attach the eBPF program, for at most max inode numbers.
 * Returns 0, or -errno with why saying what is missing (root, a kernel
 * with BTF, a build with libbpf).
 */
int keep_evict_open(size_t max, struct keep_evict **out, struct hs_error *why);

/* Watch inode number ino (again): its next deletion is told. Returns 0 or -errno. */
int keep_evict_watch(struct keep_evict *e, uint64_t ino);
void keep_evict_unwatch(struct keep_evict *e, uint64_t ino);

/* A descriptor that polls readable (POLLIN) when inode numbers wait. */
int keep_evict_fd(const struct keep_evict *e);

/*
 * fn(ctx, ino) for each inode number told since the last drain. An inode
 * is told once until keep_evict_watch() re-arms it. Returns 0 or -errno.
 */
int keep_evict_drain(struct keep_evict *e, void (*fn)(void *ctx, uint64_t ino), void *ctx);

void keep_evict_free(struct keep_evict *e);

#endif
