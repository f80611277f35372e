/*
 * record-bpf-ring.h - what the eBPF record backend's kernel side (record.bpf.c)
 * tells its user side (record-bpf.c) through the ring buffer.
 *
 * Every event starts with struct hs_bpf_event: its type, when it happened,
 * and the identity of the inode it is about, read from the inode then.
 * Inodes are keyed by (dev, ino, generation): an inode number freed and
 * reused within a run is another file.
 */
#ifndef HOTSET_RECORD_BPF_RING_H
#define HOTSET_RECORD_BPF_RING_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define HS_BPF_PATH_MAX 4096	/* bytes of path components in one event */
#define HS_BPF_NAME_MAX 256	/* one component, with its NUL */

enum hs_bpf_event_type {
	HS_BPF_PAGES = 1,	/* pages [first, last] of the inode were accessed */
	HS_BPF_PATH,		/* a path of the inode */
	HS_BPF_FLAG,		/* the inode was used in a way worth a flag */
};

/*
 * How pages were accessed (hs_bpf_event.how of a HS_BPF_PAGES event). The
 * values are the profile's enum hs_file_flag bits.
 */
#define HS_BPF_READ	(1u << 0)	/* read-like system calls */
#define HS_BPF_MAPPED	(1u << 1)	/* faulted in (or around) through mmap */
#define HS_BPF_EXEC	(1u << 2)	/* read by execve, mapped executable */
#define HS_BPF_DIRECT	(1u << 4)	/* O_DIRECT */

/* Flags (hs_bpf_event.how of a HS_BPF_FLAG event). */
#define HS_BPF_WRITTEN	(1u << 3)	/* opened for writing, or O_DIRECT written */
#define HS_BPF_OUTPUT	(1u << 8)	/* created or truncated by the job */
/* HS_BPF_EXEC too: mapped with PROT_EXEC (a shared library) */

/*
 * A process's state in the `tracked` map (its value). User space adds the
 * processes of a service it records as active: they are past their exec.
 */
#define HS_BPF_TRACK_ARMED	1	/* the job's first process before its exec: hotset's code */
#define HS_BPF_TRACK_ACTIVE	2	/* every page it reads is recorded */

/* Kinds of HS_BPF_PATH events, from the most trusted to the least. */
enum hs_bpf_path_kind {
	HS_BPF_PATH_OPENED = 1,	/* from a struct file: dentries and mounts up to
				   the root of the job's mount namespace */
	HS_BPF_PATH_FSREL,	/* from the inode's dentry: relative to the root
				   of its filesystem, mount point unknown */
};

/* The inode an event is about. */
struct hs_bpf_inode {
	__u64 ino;
	__u32 dev;		/* kernel encoding: major << 20 | minor */
	__u32 gen;		/* i_generation */
	__s64 size;
	__s64 mtime_sec;
	__u32 mtime_nsec;
	__u32 pad;
};

struct hs_bpf_event {
	__u32 type;		/* enum hs_bpf_event_type */
	__u32 how;		/* HS_BPF_* bits (pages, flags) or path kind */
	__u64 time;		/* CLOCK_MONOTONIC ns: of the first access of a
				   range of pages (merged ranges are sent late) */
	struct hs_bpf_inode inode;
};

struct hs_bpf_pages {
	struct hs_bpf_event h;
	__u64 first, last;	/* page indexes, inclusive; first > last: no page */
};

/* A CPU's range being merged (record.bpf.c's `pending` map). */
struct hs_bpf_pending {
	struct hs_bpf_pages ev;	/* ev.h.type is 0 when there is none */
	__u64 outputs;		/* `outputs` when it started: no merging across one */
	__u32 tid;		/* exact mode (a trace): the task whose range it is */
	__u32 pad;
};

struct hs_bpf_path {
	struct hs_bpf_event h;
	__u64 fs_magic;		/* the super block's s_magic */
	__u32 len;		/* bytes used in buf */
	__u16 truncated;	/* too deep or too long: buf is not the whole path */
	__u16 deleted;		/* no link left (unlinked, O_TMPFILE, replaced) */
	/* the components leaf first, each ending with a NUL */
	char buf[HS_BPF_PATH_MAX];
};

#endif
