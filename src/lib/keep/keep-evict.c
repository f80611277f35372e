/*
 * keep-evict.c - the user side of keep's eviction watch (keep-evict.h):
 * loads keep.bpf.c, fills its map of watched inode numbers, and reads the
 * ring buffer through which it tells deletions.
 *
 * Its CO-RE relocations are made against the kernel's own BTF (libbpf
 * parses it once at the start: about 0.15 s of CPU, nothing for a
 * daemon). Without libbpf at build time, keep_evict_open() says so and
 * keep finds evictions by its checks alone.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keep/keep-evict.h"

#ifdef HAVE_BPF
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "keep.skel.h"

struct keep_evict {
	struct keep_bpf *skel;
	struct ring_buffer *rb;
	int map;
	void (*fn)(void *ctx, uint64_t ino);
	void *ctx;
};

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return 0;
}

static int on_ino(void *ctx, void *data, size_t size)
{
	struct keep_evict *e = ctx;
	uint64_t ino;

	if (size >= sizeof(ino)) {
		memcpy(&ino, data, sizeof(ino));
		e->fn(e->ctx, ino);
	}
	return 0;
}

int keep_evict_open(size_t max, struct keep_evict **out, struct hs_error *why)
{
	struct keep_evict *e = calloc(1, sizeof(*e));
	libbpf_print_fn_t old = libbpf_set_print(quiet);
	int rc = 0;

	*out = NULL;
	if (!e || !(e->skel = keep_bpf__open())) {
		rc = hs_error_set(why, e ? errno : ENOMEM, "cannot open the eBPF program: %s",
				  strerror(e ? errno : ENOMEM));
		goto out;
	}
	bpf_map__set_max_entries(e->skel->maps.watched, (uint32_t)(max ? max : 1));
	if ((rc = keep_bpf__load(e->skel)) || (rc = keep_bpf__attach(e->skel))) {
		rc = rc < 0 ? rc : -EINVAL;
		if (rc == -EPERM || rc == -EACCES)
			hs_error_set(why, -rc, "watching the page cache through eBPF needs root "
				     "(CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN)");
		else
			hs_error_set(why, -rc, "the kernel refuses keep's eBPF program on the "
				     "tracepoint mm_filemap_delete_from_page_cache (%s)",
				     strerror(-rc));
		goto out;
	}
	e->map = bpf_map__fd(e->skel->maps.watched);
	e->rb = ring_buffer__new(bpf_map__fd(e->skel->maps.events), on_ino, e, NULL);
	if (!e->rb)
		rc = hs_error_set(why, errno, "cannot map the eBPF ring buffer: %s", strerror(errno));
out:
	libbpf_set_print(old);
	if (rc)
		keep_evict_free(e);
	else
		*out = e;
	return rc;
}

int keep_evict_watch(struct keep_evict *e, uint64_t ino)
{
	uint64_t zero = 0;

	return bpf_map_update_elem(e->map, &ino, &zero, BPF_ANY) ? -errno : 0;
}

void keep_evict_unwatch(struct keep_evict *e, uint64_t ino)
{
	bpf_map_delete_elem(e->map, &ino);
}

int keep_evict_fd(const struct keep_evict *e)
{
	return ring_buffer__epoll_fd(e->rb);
}

int keep_evict_drain(struct keep_evict *e, void (*fn)(void *ctx, uint64_t ino), void *ctx)
{
	int rc;

	e->fn = fn;
	e->ctx = ctx;
	rc = ring_buffer__consume(e->rb);
	return rc < 0 ? rc : 0;
}

void keep_evict_free(struct keep_evict *e)
{
	if (!e)
		return;
	ring_buffer__free(e->rb);
	keep_bpf__destroy(e->skel);
	free(e);
}

#else

int keep_evict_open(size_t max, struct keep_evict **out, struct hs_error *why)
{
	*out = NULL;
	return hs_error_set(why, ENOTSUP, "this hotset was built without libbpf");
}

int keep_evict_watch(struct keep_evict *e, uint64_t ino) { return -ENOTSUP; }
void keep_evict_unwatch(struct keep_evict *e, uint64_t ino) {}
int keep_evict_fd(const struct keep_evict *e) { return -1; }
int keep_evict_drain(struct keep_evict *e, void (*fn)(void *ctx, uint64_t ino), void *ctx)
{
	return -ENOTSUP;
}
void keep_evict_free(struct keep_evict *e) {}

#endif
