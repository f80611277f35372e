/*
 * keep.bpf.c - the kernel side of keep's eviction watch (keep-evict.c):
 * a page of a kept file leaving the page cache tells user space its inode
 * number, once until user space has looked.
 *
 * Every folio the kernel deletes from the page cache (reclaim, truncation,
 * invalidation, fadvise DONTNEED) passes the tracepoint
 * mm_filemap_delete_from_page_cache; the program costs a hash lookup
 * there. `watched` holds the inode numbers of the kept files (keyed by
 * number alone: the device a file's stat gives is not its super block's
 * on btrfs subvolumes and overlayfs, and a number shared with a file of
 * another filesystem costs only a needless check), each with a count of
 * deletions since user space last reset it; the first one sends the inode
 * number through the ring buffer.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

/* The kernel lets only GPL-compatible programs read kernel memory. */
char LICENSE[] SEC("license") = "Dual MIT/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);		/* set by user space: the kept files */
	__type(key, __u64);		/* i_ino */
	__type(value, __u64);		/* deletions since user space looked */
} watched SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);	/* 64 Ki inode numbers */
} events SEC(".maps");

__u64 lost;	/* inode numbers the full ring buffer could not take */

SEC("raw_tp/mm_filemap_delete_from_page_cache")
int BPF_PROG(on_delete, struct folio *folio)
{
	__u64 ino = BPF_CORE_READ(folio, mapping, host, i_ino), *n;

	if (!ino || !(n = bpf_map_lookup_elem(&watched, &ino)))
		return 0;
	if (__sync_fetch_and_add(n, 1) == 0 && bpf_ringbuf_output(&events, &ino, sizeof(ino), 0)) {
		*n = 0;	/* the next deletion tries again */
		__sync_fetch_and_add(&lost, 1);
	}
	return 0;
}
