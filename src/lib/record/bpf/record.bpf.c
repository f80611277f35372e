/*
 * record.bpf.c - the kernel side of the eBPF record backend: tracepoints
 * that see every page of a regular file the job reads, and tell user space
 * (record-bpf.c) through a ring buffer.
 *
 * The job is a process tree kept in the `tracked` map by thread-group id:
 * its first process is added before its exec (see maybe_hold_read: the
 * kernel itself names it, whatever pid namespace hotset runs in), every process
 * a tracked one forks is added, and a process leaves when it exits.
 *
 * Pages come from the page cache's own tracepoints, so every way of reading
 * a file is seen without a hook per system call:
 *
 *   mm_filemap_get_pages    read, pread, readv, sendfile, splice,
 *                           copy_file_range sources, and execve's reads
 *   mm_filemap_fault        a page faulted in through mmap
 *   mm_filemap_map_pages    the pages mapped around it (fault-around)
 *   iomap_dio_rw_begin      O_DIRECT reads (they bypass the cache)
 *
 * Ranges are clipped to the file's size. A range that starts inside or
 * right after the previous one on the same CPU (same inode, same way, and
 * no file became an output since) is merged into it in a per-CPU slot, so
 * that a file read sequentially in small pieces costs one event, not one
 * per read. The exit of open(2) sends the slot on: a read before an open
 * that truncates is never merged with one after it.
 *
 * With a trace (`exact`), every access must stay, in order: a file read
 * three times over is three accesses, not one range. Then a range is
 * continued only by what the trace's canonical form merges anyway (an
 * access that starts on its last page or right after it, by the same
 * task: recording.c's spool_run), and the rest of a read call is no
 * access of its own (filemap_read() asks for the pages left at each batch
 * of 31 or so: a call is told from the next by the task's count of read
 * calls, ioac.syscr, which each read-like call bumps at its end). The slot
 * is sent on when its task leaves the CPU (sched_switch): a task that goes
 * on elsewhere finds its earlier accesses in the ring before its next.
 *
 * Paths are captured where a struct file is at hand, once per inode: at the
 * exit of open(2) and friends, at mmap, and at exec for the program and its
 * ELF interpreter (found at AT_BASE), which the kernel opens itself.
 * Otherwise (a file opened before the job started) the inode's dentry gives
 * a path relative to its filesystem, which user space completes from
 * /proc/self/mountinfo. The exit of open(2) also tells the files the job
 * creates or truncates (outputs) from those it opens to write, and mmap
 * with PROT_EXEC marks shared libraries.
 *
 * The system-call side is a single raw tracepoint on sys_exit that filters
 * the call numbers itself: detaching it costs about a millisecond, where
 * each per-call tracepoint (syscalls/sys_exit_openat...) costs a grace
 * period of tens of milliseconds.
 *
 * One file, read top to bottom: a BPF object is one compilation unit, and
 * this one's programs share every part of it: the settings, the maps, and
 * the global functions the verifier checks once per program (seen_set,
 * emit_path, record_pages, page_cached). Its sections come in the order
 * they use each other, each using only those above it: settings and
 * system-call numbers, the state shared with user space, maps, inodes, the
 * ring buffer, the current task (is it the job's?), paths, pages (the read
 * path, faults, fault-around, O_DIRECT), the process tree, system calls.
 * Split into headers, each part would be a .h of code that compiles only
 * when included into this file, after the parts it uses: the same unit,
 * harder to read. So it stays whole, over the ~900 lines a library source
 * file is held to (docs/architecture.md says so).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "record/bpf/record-bpf-ring.h"

/* The kernel lets only GPL-compatible programs read kernel memory. */
char LICENSE[] SEC("license") = "Dual MIT/GPL";

#define S_IFMT		00170000
#define S_IFREG		0100000
#define O_TRUNC		00001000
#define O_CREAT		00000100
#define O_WRONLY	00000001
#define PROT_EXEC	0x4
#define FMODE_READ	0x1
#define FMODE_WRITE	0x2
#define FMODE_PATH	0x4000
#define FMODE_CREATED	0x100000

/* ---- settings (user space fills them in before loading) ---------------------- */

const volatile __u32 page_shift = 12;
const volatile __u64 wake_bytes = 2 << 20;	/* wake user space past this much data */
const volatile bool exact = false;		/* keep every access, in order (a trace) */

/*
 * System call numbers, as constants: on_sys_exit runs at every system call
 * of the machine, and loads of settings cost it a third more. (32-bit
 * processes on a 64-bit kernel number their calls otherwise: their opens
 * are not seen, their pages are.)
 */
#if defined(__TARGET_ARCH_x86)
#define NR_read		0
#define NR_open		2
#define NR_mmap		9
#define NR_pread64	17
#define NR_readv	19
#define NR_preadv	295
#define NR_preadv2	327
#define NR_creat	85
#define NR_openat	257
#define NR_openat2	437
#define SYSCALL_NR(regs) BPF_CORE_READ(regs, orig_ax)
#elif defined(__TARGET_ARCH_arm64)
#define NR_read		63
#define NR_open		(-1)
#define NR_mmap		222
#define NR_pread64	67
#define NR_readv	65
#define NR_preadv	69
#define NR_preadv2	286
#define NR_creat	(-1)
#define NR_openat	56
#define NR_openat2	437
#define SYSCALL_NR(regs) BPF_CORE_READ(regs, syscallno)
#else
#error "record.bpf.c: add this architecture's system call numbers"
#endif

/* ---- state shared with user space (.bss, mapped) -------------------------------- */

volatile __u64 lost;		/* events the ring buffer had no room for */
volatile __u64 untracked;	/* processes the tracked map had no room for */
volatile __u32 stopped;		/* set by user space: record nothing more */
volatile __u64 outputs;		/* files created or truncated so far */
volatile __u64 hold_ino;	/* the hold pipe: the job's first process reads it */
volatile __u32 hold_dev;

/* ---- maps ------------------------------------------------------------------------ */

#define TRACK_ARMED	HS_BPF_TRACK_ARMED
#define TRACK_ACTIVE	HS_BPF_TRACK_ACTIVE

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);	/* processes alive at once */
	__uint(map_flags, BPF_F_NO_PREALLOC);	/* preallocation costs at load */
	__type(key, __u32);	/* tgid */
	__type(value, __u8);	/* TRACK_*; user space adds a service's processes */
} tracked SEC(".maps");

/*
 * What was already said about an inode, so that it is said once: a
 * direct-mapped cache of 64-bit words, a 58-bit hash of (dev, ino,
 * generation) over the SEEN_* bits, updated with compare-and-swap. An inode
 * that another evicts is told about again later, which user space ignores;
 * unlike a hash map of that size (15-20 ms), this costs nothing to create.
 */
#define SEEN_FSREL	(1u << 0)
#define SEEN_OPENED	(1u << 1)
#define SEEN_WRITTEN	(1u << 2)
#define SEEN_OUTPUT	(1u << 3)
#define SEEN_EXEC	(1u << 4)
#define SEEN_EMPTY	(1u << 5)
#define SEEN_BITS	6
#define SEEN_SLOTS	(1u << 17)

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SEEN_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} seen SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);	/* user space may resize it */
} events SEC(".maps");

/* A path being built; the slack keeps a masked offset + NAME_MAX in bounds. */
struct path_scratch {
	struct hs_bpf_path ev;
	char slack[HS_BPF_NAME_MAX];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct path_scratch);
} scratch SEC(".maps");

/*
 * The range being merged, per CPU. The programs run with preemption off
 * (the kernel disables it for BPF on syscall tracepoints too), so a CPU's
 * slot has one writer at a time. User space drains the slots at the end.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct hs_bpf_pending);
} pending SEC(".maps");

/*
 * Exact mode: each task's latest read call, to tell the rest of a call
 * from a new one (rest_of_call). The kernel frees it with the task.
 */
struct call_state {
	__u64 syscr;		/* the task's read calls when it was made */
	__u64 ino;
	__u32 dev, gen;
	__u64 first, last;	/* its latest batch: pages asked for */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct call_state);
} calls SEC(".maps");

/* ---- inodes --------------------------------------------------------------------- */

/* mtime moved around struct inode over the kernel versions */
struct inode___v611 {
	__s64 i_mtime_sec;
	__u32 i_mtime_nsec;
} __attribute__((preserve_access_index));
struct inode___v67 {
	struct timespec64 __i_mtime;
} __attribute__((preserve_access_index));
struct inode___old {
	struct timespec64 i_mtime;
} __attribute__((preserve_access_index));

static __always_inline bool is_regular(struct inode *inode)
{
	return inode && (BPF_CORE_READ(inode, i_mode) & S_IFMT) == S_IFREG;
}

static __always_inline void inode_identity(struct inode *inode, struct hs_bpf_inode *id)
{
	id->ino = BPF_CORE_READ(inode, i_ino);
	id->dev = BPF_CORE_READ(inode, i_sb, s_dev);
	id->gen = BPF_CORE_READ(inode, i_generation);
	id->size = BPF_CORE_READ(inode, i_size);
	if (bpf_core_field_exists(struct inode___v611, i_mtime_sec)) {
		struct inode___v611 *i = (void *)inode;

		id->mtime_sec = BPF_CORE_READ(i, i_mtime_sec);
		id->mtime_nsec = BPF_CORE_READ(i, i_mtime_nsec);
	} else if (bpf_core_field_exists(struct inode___v67, __i_mtime)) {
		struct inode___v67 *i = (void *)inode;

		id->mtime_sec = BPF_CORE_READ(i, __i_mtime.tv_sec);
		id->mtime_nsec = BPF_CORE_READ(i, __i_mtime.tv_nsec);
	} else {
		struct inode___old *i = (void *)inode;

		id->mtime_sec = BPF_CORE_READ(i, i_mtime.tv_sec);
		id->mtime_nsec = BPF_CORE_READ(i, i_mtime.tv_nsec);
	}
}

static __always_inline __u64 inode_hash(const struct hs_bpf_inode *id)
{
	__u64 h = id->ino * 0x9e3779b97f4a7c15ull ^ (__u64)id->dev * 0xc2b2ae3d27d4eb4full ^
		  (__u64)id->gen * 0x165667b19e3779f9ull;

	h ^= h >> 31;
	h *= 0xd6e8feb86659fd93ull;
	return h ^ (h >> 32);
}

/*
 * Mark bits as said for the inode; returns the bits that were set before.
 * When in doubt (a race for the slot) it returns 0: saying something twice
 * is harmless, not saying it is not. A global function, so that the
 * verifier checks it once per program, not once per call.
 */
__noinline __u32 seen_set(const struct hs_bpf_inode *id, __u32 bits)
{
	__u64 h, tag, old, new;
	__u32 slot;
	__u64 *v;

	if (!id)
		return 0;
	h = inode_hash(id);
	tag = h >> SEEN_BITS;
	slot = (__u32)h & (SEEN_SLOTS - 1);
	v = bpf_map_lookup_elem(&seen, &slot);
	if (!v)
		return 0;
	old = *v;
	if (old >> SEEN_BITS == tag) {
		if ((old & bits) == bits)	/* the common case: no atomic operation */
			return (__u32)old & ((1u << SEEN_BITS) - 1);
		new = old | bits;
	} else {
		new = tag << SEEN_BITS | bits;	/* evicts another inode */
	}
	if (__sync_val_compare_and_swap(v, old, new) != old || old >> SEEN_BITS != tag)
		return 0;
	return (__u32)old & ((1u << SEEN_BITS) - 1);
}

/* Take back bits whose event was lost, so that it is tried again. */
static __always_inline void seen_clear(const struct hs_bpf_inode *id, __u32 bits)
{
	__u64 h = inode_hash(id);
	__u32 slot = (__u32)h & (SEEN_SLOTS - 1);
	__u64 *v = bpf_map_lookup_elem(&seen, &slot);

	if (v && *v >> SEEN_BITS == h >> SEEN_BITS)
		__sync_fetch_and_and(v, ~(__u64)bits);
}

/* ---- the ring buffer ---------------------------------------------------------- */

/*
 * Wake user space only once enough data waits: a wakeup per event would
 * cost an interrupt and a context switch each. User space also wakes when
 * the job ends.
 */
static __always_inline __u64 wakeup_flag(void)
{
	return bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wake_bytes ?
		BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
}

static __always_inline int output(void *data, __u64 size)
{
	if (bpf_ringbuf_output(&events, data, size, wakeup_flag())) {
		__sync_fetch_and_add(&lost, 1);
		return -1;
	}
	return 0;
}

static __always_inline void emit_flag(const struct hs_bpf_inode *id, __u32 how)
{
	struct hs_bpf_event e = {
		.type = HS_BPF_FLAG, .how = how, .time = bpf_ktime_get_ns(), .inode = *id,
	};

	output(&e, sizeof(e));
}

/* ---- the current task -------------------------------------------------------------- */

static __always_inline __u8 track_state(void)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	__u8 *v = bpf_map_lookup_elem(&tracked, &tgid);

	return v ? *v : 0;
}

/* Is the current task inside execve (reading the program it executes)? */
static __always_inline bool in_execve(void)
{
	struct task_struct *t = (void *)bpf_get_current_task();

	if (!bpf_core_field_exists(struct task_struct, in_execve))
		return false;
	return BPF_CORE_READ_BITFIELD_PROBED(t, in_execve);
}

/* The struct file of the current task's fd, or NULL. */
static __always_inline struct file *fd_file(long fd)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct fdtable *fdt = BPF_CORE_READ(t, files, fdt);
	struct file **fds, *f = NULL;

	if (!fdt || fd < 0 || fd >= BPF_CORE_READ(fdt, max_fds))
		return NULL;
	fds = BPF_CORE_READ(fdt, fd);
	bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]);
	return f;
}

/* ---- paths ------------------------------------------------------------------------ */

struct walk {
	struct dentry *d;
	struct mount *m;	/* NULL: stop at the root of the filesystem */
	struct dentry *mnt_root;	/* m's root */
	struct path_scratch *s;
	__u32 off;
	bool done;
};

/* One step up: append d's name, then go to its parent (or mount point). */
static long walk_step(__u32 i, struct walk *w)
{
	struct dentry *d = w->d, *parent;
	struct mount *m = w->m;	/* locals: CO-RE reads through w would not relocate */
	struct path_scratch *s = w->s;
	__u32 o;
	long n;

	if (!s)
		return 1;
	if (m && d == w->mnt_root) {
		struct mount *up = BPF_CORE_READ(m, mnt_parent);

		if (!up || up == m) {
			w->done = true;	/* the root of the mount namespace */
			return 1;
		}
		w->d = BPF_CORE_READ(m, mnt_mountpoint);
		w->m = up;
		w->mnt_root = BPF_CORE_READ(up, mnt.mnt_root);
		return 0;
	}
	parent = BPF_CORE_READ(d, d_parent);
	if (!parent || parent == d) {
		w->done = true;	/* the root of the filesystem */
		return 1;
	}
	o = w->off;
	if (o > HS_BPF_PATH_MAX - HS_BPF_NAME_MAX)
		return 1;	/* too long */
	o &= HS_BPF_PATH_MAX - 1;
	n = bpf_probe_read_kernel_str(&s->ev.buf[o], HS_BPF_NAME_MAX, BPF_CORE_READ(d, d_name.name));
	if (n <= 0)
		return 1;
	w->off = o + (__u32)n;
	w->d = parent;
	return 0;
}

/*
 * Emit the path of dentry d (within mount m, or its filesystem if m is 0).
 * Kernel pointers come as integers: this is a global function, checked
 * once per program by the verifier, and it only reads through them with
 * probes. Returns 0 or -1 if nothing was sent.
 */
__noinline int emit_path(__u64 dentry, __u64 mount, __u32 kind, __u64 inode_ptr,
			 const struct hs_bpf_inode *id)
{
	struct inode *inode = (void *)inode_ptr;
	__u32 zero = 0, len;
	struct path_scratch *s = bpf_map_lookup_elem(&scratch, &zero);
	struct mount *m = (void *)mount;
	struct walk w = { .d = (void *)dentry, .m = m, .s = s };

	if (!s || !dentry || !id)
		return -1;
	if (m)
		w.mnt_root = BPF_CORE_READ(m, mnt.mnt_root);
	s->ev.h.type = HS_BPF_PATH;
	s->ev.h.how = kind;
	s->ev.h.time = bpf_ktime_get_ns();
	s->ev.h.inode = *id;
	s->ev.fs_magic = BPF_CORE_READ(inode, i_sb, s_magic);
	s->ev.deleted = BPF_CORE_READ(inode, i_nlink) == 0;
	bpf_loop(HS_BPF_PATH_MAX / 2, walk_step, &w, 0);
	s->ev.truncated = !w.done;
	len = w.off;
	if (len > HS_BPF_PATH_MAX)
		len = HS_BPF_PATH_MAX;
	s->ev.len = len;
	return output(&s->ev, offsetof(struct hs_bpf_path, buf) + len);
}

/* The path of an open file, as the job's mount namespace sees it, once per inode. */
static __always_inline void say_opened_path(struct file *f, struct inode *inode,
					    const struct hs_bpf_inode *id)
{
	struct vfsmount *vm = BPF_CORE_READ(f, f_path.mnt);
	struct mount *m = (void *)vm - bpf_core_field_offset(struct mount, mnt);

	if (seen_set(id, SEEN_OPENED) & SEEN_OPENED)
		return;
	if (emit_path((__u64)BPF_CORE_READ(f, f_path.dentry), (__u64)m, HS_BPF_PATH_OPENED,
		      (__u64)inode, id))
		seen_clear(id, SEEN_OPENED);
}

/* A path relative to the inode's filesystem, when no open gave one. */
static __always_inline void say_fsrel_path(struct inode *inode, const struct hs_bpf_inode *id)
{
	struct hlist_node *alias;

	if (seen_set(id, SEEN_FSREL) & (SEEN_FSREL | SEEN_OPENED))
		return;
	alias = BPF_CORE_READ(inode, i_dentry.first);
	if (!alias || emit_path((__u64)alias - bpf_core_field_offset(struct dentry, d_u.d_alias),
				0, HS_BPF_PATH_FSREL, (__u64)inode, id))
		seen_clear(id, SEEN_FSREL);
}

/* ---- pages -------------------------------------------------------------------------- */

static __always_inline void flush(struct hs_bpf_pending *p)
{
	output(&p->ev, sizeof(p->ev));
	p->ev.h.type = 0;
}

/* Send this CPU's pending range on, if there is one. */
static __always_inline void flush_pending(void)
{
	__u32 zero = 0;
	struct hs_bpf_pending *p = bpf_map_lookup_elem(&pending, &zero);

	if (p && p->ev.h.type)
		flush(p);
}

/* The current task's read calls so far (0 without CONFIG_TASK_XACCT). */
static __always_inline __u64 read_calls(struct task_struct *t)
{
	if (!bpf_core_field_exists(t->ioac))
		return 0;
	return BPF_CORE_READ(t, ioac.syscr);
}

/*
 * The byte where the current task's read(2)-like call on inode started
 * reading, or -1 if it is in no such call (sendfile, splice, execve and
 * io_uring read through the page cache too). filemap_read() reports a
 * batch of pages to mm_filemap_get_pages only when the batch's last page
 * is ready: a batch cut short at a page still being read from the disk
 * is copied without a word, and the call's next batch starts after it.
 * So the pages of a call are taken from where the call started: pread's
 * offset, or the file position, which read(2) moves only once it is done.
 * (The other ways keep that blind spot: sendfile and splice ask in batches
 * as well.) The fd must be the inode's (a 32-bit process numbers its calls
 * otherwise; its arguments then mean something else).
 */
static __always_inline __s64 call_start(struct task_struct *t, struct inode *inode)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(t);
	long nr = SYSCALL_NR(regs);
	struct file *f;
	__s64 off;

	if (nr != NR_read && nr != NR_pread64 && nr != NR_readv && nr != NR_preadv &&
	    nr != NR_preadv2)
		return -1;
	f = fd_file(PT_REGS_PARM1_CORE_SYSCALL(regs));
	if (!f || BPF_CORE_READ(f, f_inode) != inode)
		return -1;
	off = nr == NR_read || nr == NR_readv ? -1 : (__s64)PT_REGS_PARM4_CORE_SYSCALL(regs);
	return off < 0 ? BPF_CORE_READ(f, f_pos) : off;	/* preadv2 at -1: the position */
}

/*
 * Exact mode: is [first, last] of inode id the rest of the read call the
 * task made last (the call's next batch of pages)? Then it is no access
 * of its own. A call is told from the next by the task's count of read
 * calls, which each read-like call bumps at its end. Kept per task, since
 * a call that waits for the disk leaves the CPU between its batches, and
 * may come back on another. whole: first is the call's own (call_start),
 * the same for all its batches.
 */
static __always_inline bool rest_of_call(struct task_struct *t, const struct hs_bpf_inode *id,
					 __u64 first, __u64 last, bool whole)
{
	struct call_state *c = bpf_task_storage_get(&calls, t, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	__u64 syscr = read_calls(t);

	if (!c)
		return false;
	if (c->syscr == syscr && c->ino == id->ino && c->dev == id->dev && c->gen == id->gen &&
	    last == c->last && (whole ? first == c->first : first > c->first)) {
		c->first = first;
		return true;
	}
	c->syscr = syscr;
	c->ino = id->ino;
	c->dev = id->dev;
	c->gen = id->gen;
	c->first = first;
	c->last = last;
	return false;
}

/*
 * Record pages [first, last] of inode, accessed `how`: merged into this
 * CPU's pending range when it starts inside or right after it (same inode,
 * same way, no file became an output since), else sent after it. In exact
 * mode, merged only when it starts on the range's last page or right after
 * it, by the same task (the trace's canonical form), and dropped when it
 * is the rest of the read call before (rest_of_call).
 */
static __always_inline void record_pages_in(struct inode *inode, __u64 first, __u64 last,
					    __u32 how)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct hs_bpf_pending *p;
	struct hs_bpf_pages *r;
	struct hs_bpf_inode id;
	__u32 zero = 0, tid = 0;
	bool whole = false;
	__s64 size, start;
	__u64 eof;

	if (!is_regular(inode))
		return;
	size = BPF_CORE_READ(inode, i_size);
	if (size <= 0)
		return;
	eof = ((__u64)size - 1) >> page_shift;
	if (how != HS_BPF_MAPPED && (start = call_start(t, inode)) >= 0 &&
	    ((__u64)start >> page_shift) <= first) {
		first = (__u64)start >> page_shift;
		whole = true;
	}
	if (first > eof)
		return;
	if (last > eof)
		last = eof;
	p = bpf_map_lookup_elem(&pending, &zero);
	if (!p)
		return;
	r = &p->ev;
	id.ino = BPF_CORE_READ(inode, i_ino);
	id.dev = BPF_CORE_READ(inode, i_sb, s_dev);
	id.gen = BPF_CORE_READ(inode, i_generation);
	if (exact) {
		/* faults are no calls: each is an access */
		if (how != HS_BPF_MAPPED && rest_of_call(t, &id, first, last, whole))
			return;
		tid = (__u32)bpf_get_current_pid_tgid();
	}
	if (r->h.type && r->h.how == how && p->outputs == outputs && r->h.inode.ino == id.ino &&
	    r->h.inode.dev == id.dev && r->h.inode.gen == id.gen) {
		if (!exact && first >= r->first && first <= r->last + 1) {
			if (last > r->last)
				r->last = last;
			return;
		}
		/* (last >= first >= r->last: the range grows) */
		if (exact && p->tid == tid && (first == r->last || first == r->last + 1)) {
			r->last = last;
			return;
		}
	}
	if (r->h.type)
		flush(p);
	r->h.type = HS_BPF_PAGES;
	r->h.how = how;
	r->h.time = bpf_ktime_get_ns();
	inode_identity(inode, &r->h.inode);
	r->first = first;
	r->last = last;
	p->outputs = outputs;
	p->tid = tid;
	/*
	 * The path goes first: it is in the ring before these pages leave the
	 * slot. Not for execve's reads: the inode's first dentry may be any of
	 * its hard links (perf's ~/.debug cache links ld.so, for one), and the
	 * exec names the program and its interpreter by the paths it used.
	 */
	if (how != HS_BPF_EXEC)
		say_fsrel_path(inode, &r->h.inode);
}

/*
 * The same as a global function (the inode an integer): the verifier checks
 * it once per program, however many paths of the program call it.
 */
__noinline int record_pages(__u64 inode, __u64 first, __u64 last, __u32 how)
{
	record_pages_in((struct inode *)inode, first, last, how);
	return 0;
}

/* How the current task's page accesses count (0: not at all). */
static __always_inline __u32 page_access(__u32 how)
{
	__u8 state;

	if (stopped)
		return 0;
	state = track_state();
	if (state == TRACK_ACTIVE)
		return how == HS_BPF_READ && in_execve() ? HS_BPF_EXEC : how;
	/* before its exec the first process runs hotset: only exec's own reads count */
	if (state == TRACK_ARMED && how == HS_BPF_READ && in_execve())
		return HS_BPF_EXEC;
	return 0;
}

SEC("raw_tp/mm_filemap_get_pages")
int BPF_PROG(on_get_pages, struct address_space *mapping, unsigned long index,
	     unsigned long last_index)
{
	__u32 how = page_access(HS_BPF_READ);

	if (how)
		record_pages((__u64)BPF_CORE_READ(mapping, host), index, last_index, how);
	return 0;
}

SEC("raw_tp/mm_filemap_fault")
int BPF_PROG(on_fault, struct address_space *mapping, unsigned long index)
{
	__u32 how = page_access(HS_BPF_MAPPED);

	if (how)
		record_pages((__u64)BPF_CORE_READ(mapping, host), index, index, how);
	return 0;
}

/*
 * Is page index of mapping in the page cache, up to date? A walk down the
 * xarray of the cache (include/linux/xarray.h): an entry whose low bits are
 * 10 is internal, a node above 4096, a sibling of a large folio's first
 * slot below 63 << 2; one with its low bit set is a value (the shadow of an
 * evicted page); anything else not NULL is a folio. A global function, its
 * pointer an integer read through probes: the verifier checks its loop
 * once, not once for each path that leads to it (inlined in on_map_pages,
 * that took 0.6 s at every load).
 */
#define XA_LEVELS 11	/* 64-bit indexes, 6 bits a level */

__noinline int page_cached(__u64 mapping_ptr, __u64 index)
{
	struct address_space *mapping = (void *)mapping_ptr;
	unsigned long e = (unsigned long)BPF_CORE_READ(mapping, i_pages.xa_head), flags = 0;
	bool root = true;

	for (int level = 0; level < XA_LEVELS; level++) {
		struct xa_node *node;
		__u64 off;
		__u8 shift;

		if ((e & 3) != 2 || e <= 4096)
			break;
		node = (void *)(e - 2);
		shift = BPF_CORE_READ(node, shift);
		if (shift > 63 || (root && (index >> shift) > 63))
			return false;	/* beyond what the tree holds */
		root = false;
		off = (index >> shift) & 63;
		bpf_probe_read_kernel(&e, sizeof(e), &node->slots[off]);
		if ((e & 3) == 2 && e >> 2 < 63) {	/* a sibling: the folio is at its slot */
			off = (e >> 2) & 63;
			bpf_probe_read_kernel(&e, sizeof(e), &node->slots[off]);
		}
	}
	if ((root && index) || !e || (e & 3))
		return false;	/* nothing, a shadow, or an internal entry (retry...) */
	bpf_probe_read_kernel(&flags, sizeof(flags),
			      (void *)e + bpf_core_field_offset(struct folio, flags));
	return flags >> bpf_core_enum_value(enum pageflags, PG_uptodate) & 1;
}

struct map_walk {
	struct inode *inode;
	struct address_space *mapping;
	__u64 start, run_first;
	__u32 pages, how;
	bool in_run;
};

/* Page start + i of a fault-around window: extend the run of cached pages, or end it. */
static long map_step(__u32 i, struct map_walk *w)
{
	__u64 index = w->start + i;
	bool last = i + 1 >= w->pages, cached = page_cached((__u64)w->mapping, index);

	if (cached && !w->in_run) {
		w->run_first = index;
		w->in_run = true;
	}
	if (w->in_run && (!cached || last)) {
		record_pages((__u64)w->inode, w->run_first, cached ? index : index - 1, w->how);
		w->in_run = false;
	}
	return last;
}

/*
 * Fault-around: the kernel maps the pages around a fault that are in the
 * cache, up to date (and not mapped yet), and the tracepoint names the
 * whole window [start, end]. Only the cached ones are brought into the
 * process: the rest, not mapped, fault when touched (a cold fault that
 * waited for the disk comes back here for its own page, now cached).
 */
SEC("raw_tp/mm_filemap_map_pages")
int BPF_PROG(on_map_pages, struct address_space *mapping, unsigned long start,
	     unsigned long end)
{
	struct map_walk w = { .mapping = mapping, .start = start };

	if (end < start || !(w.how = page_access(HS_BPF_MAPPED)))
		return 0;
	w.inode = BPF_CORE_READ(mapping, host);
	w.pages = end - start >= 4096 ? 4096 : (__u32)(end - start + 1);
	bpf_loop(w.pages, map_step, &w, 0);
	return 0;
}

/* O_DIRECT: the request as it enters iomap (ext4, xfs, btrfs...). */
SEC("raw_tp/iomap_dio_rw_begin")
int BPF_PROG(on_dio_begin, struct kiocb *iocb, struct iov_iter *iter, unsigned int dio_flags,
	     size_t done_before)
{
	struct hs_bpf_pages e = {
		.h.type = HS_BPF_PAGES, .h.how = HS_BPF_DIRECT, .h.time = bpf_ktime_get_ns(),
	};
	struct file *f;
	struct inode *inode;
	__s64 pos;
	__u64 count;

	if (stopped || track_state() != TRACK_ACTIVE)
		return 0;
	f = BPF_CORE_READ(iocb, ki_filp);
	inode = BPF_CORE_READ(f, f_inode);
	if (!is_regular(inode))
		return 0;
	inode_identity(inode, &e.h.inode);
	/* (kernels without data_source lack this tracepoint too: the test lets it load) */
	if (bpf_core_field_exists(iter->data_source) && BPF_CORE_READ(iter, data_source)) {
		/* a write */
		if (!(seen_set(&e.h.inode, SEEN_WRITTEN) & SEEN_WRITTEN))
			emit_flag(&e.h.inode, HS_BPF_WRITTEN);
		return 0;
	}
	pos = BPF_CORE_READ(iocb, ki_pos);
	count = BPF_CORE_READ(iter, count);
	if (pos < 0 || !count || e.h.inode.size <= 0)
		return 0;
	e.first = (__u64)pos >> page_shift;
	e.last = ((__u64)pos + count - 1) >> page_shift;
	if (e.first > ((__u64)e.h.inode.size - 1) >> page_shift)
		return 0;
	if (e.last > ((__u64)e.h.inode.size - 1) >> page_shift)
		e.last = ((__u64)e.h.inode.size - 1) >> page_shift;
	say_opened_path(f, inode, &e.h.inode);
	if (exact)
		flush_pending();	/* what this CPU read before comes first */
	output(&e, sizeof(e));
	return 0;
}

/*
 * Exact mode: a task leaving the CPU sends its pending range on (it may go
 * on elsewhere). Runs at every context switch of the machine, loaded only
 * with a trace: a lookup in a per-CPU array, a compare, nothing else most
 * of the time. The tracepoint runs before the switch, as the task leaving.
 */
SEC("raw_tp/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev)
{
	__u32 zero = 0;
	struct hs_bpf_pending *p = bpf_map_lookup_elem(&pending, &zero);

	if (p && p->ev.h.type && p->tid == (__u32)bpf_get_current_pid_tgid())
		flush(p);
	return 0;
}

/* ---- the process tree ---------------------------------------------------------------- */

SEC("raw_tp/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid), ctgid = BPF_CORE_READ(child, tgid);
	__u8 *state, copy;

	/* exact: what the parent read before comes before what the child reads */
	if (exact)
		flush_pending();
	if (ptgid == ctgid)
		return 0;	/* a thread: its process is tracked or not already */
	state = bpf_map_lookup_elem(&tracked, &ptgid);
	if (!state)
		return 0;
	copy = *state;
	if (bpf_map_update_elem(&tracked, &ctgid, &copy, BPF_ANY))
		__sync_fetch_and_add(&untracked, 1);
	return 0;
}

SEC("raw_tp/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *p)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);

	/* the last thread out removes the process (it cannot read after that) */
	if (BPF_CORE_READ(p, signal, live.counter) == 0)
		bpf_map_delete_elem(&tracked, &tgid);
	return 0;
}

struct vma_file {
	struct file *file;
};

static long vma_file_of(struct task_struct *task, struct vm_area_struct *vma, struct vma_file *out)
{
	out->file = BPF_CORE_READ(vma, vm_file);
	return 0;
}

#define AT_BASE 7	/* auxv: where the ELF interpreter is loaded */
#define AUXV_PAIRS 28

struct auxv_walk {
	unsigned long *auxv;
	__u64 base;
};

static long auxv_step(__u32 i, struct auxv_walk *w)
{
	unsigned long pair[2];

	if (bpf_probe_read_kernel(pair, sizeof(pair), w->auxv + 2 * i) || !pair[0])
		return 1;	/* AT_NULL ends the vector */
	if (pair[0] == AT_BASE) {
		w->base = pair[1];
		return 1;
	}
	return 0;
}

/* Name the file of an open struct file (the exec'd program, its interpreter). */
static __always_inline void say_exec_path(struct file *f)
{
	struct hs_bpf_inode id;
	struct inode *inode = BPF_CORE_READ(f, f_inode);

	if (!f || !is_regular(inode))
		return;
	inode_identity(inode, &id);
	say_opened_path(f, inode, &id);
}

SEC("raw_tp/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	__u8 *state = bpf_map_lookup_elem(&tracked, &tgid);
	struct task_struct *task;
	struct auxv_walk w = {};
	struct vma_file vf = {};

	if (!state)
		return 0;
	*state = TRACK_ACTIVE;
	if (stopped)
		return 0;
	say_exec_path(BPF_CORE_READ(bprm, file));
	/* the ELF interpreter: the file mapped at AT_BASE */
	task = bpf_get_current_task_btf();
	w.auxv = (void *)BPF_CORE_READ(task, mm) + bpf_core_field_offset(struct mm_struct, saved_auxv);
	bpf_loop(AUXV_PAIRS, auxv_step, &w, 0);
	if (w.base && !bpf_find_vma(task, w.base, vma_file_of, &vf, 0) && vf.file)
		say_exec_path(vf.file);
	return 0;
}

/* ---- system calls ---------------------------------------------------------------------- */

/*
 * The job's first process, held in hotset's code before its exec, reads the
 * hold pipe once the programs are attached: that read names it. Only one
 * read matches, then hold_ino is cleared.
 */
static __always_inline void maybe_hold_read(struct pt_regs *regs)
{
	__u64 want = hold_ino;
	struct file *f;
	struct inode *inode;
	__u32 tgid;
	__u8 armed = TRACK_ARMED;

	if (!want)
		return;
	f = fd_file(PT_REGS_PARM1_CORE_SYSCALL(regs));
	inode = BPF_CORE_READ(f, f_inode);
	if (!f || BPF_CORE_READ(inode, i_ino) != want ||
	    BPF_CORE_READ(inode, i_sb, s_dev) != hold_dev)
		return;
	if (__sync_val_compare_and_swap(&hold_ino, want, 0) != want)
		return;
	tgid = bpf_get_current_pid_tgid() >> 32;
	if (bpf_map_update_elem(&tracked, &tgid, &armed, BPF_ANY))
		__sync_fetch_and_add(&untracked, 1);
}

/* open, openat, openat2, creat returned fd: path, and what it means for writes. */
static __always_inline void opened(struct pt_regs *regs, long nr, long fd)
{
	struct hs_bpf_inode id;
	struct inode *inode;
	struct file *f = fd_file(fd);
	__u32 fmode;
	long flags = 0;

	if (!f)
		return;
	/*
	 * Send the range being merged on this CPU: a read before this open
	 * must not be merged with one after it (the file may be truncated).
	 */
	flush_pending();
	inode = BPF_CORE_READ(f, f_inode);
	fmode = BPF_CORE_READ(f, f_mode);
	if (!is_regular(inode) || (fmode & FMODE_PATH))
		return;
	/* O_TRUNC is gone from f_flags: take it from the call's arguments */
	if (nr == NR_openat)
		flags = PT_REGS_PARM3_CORE_SYSCALL(regs);
	else if (nr == NR_open)
		flags = PT_REGS_PARM2_CORE_SYSCALL(regs);
	else if (nr == NR_creat)
		flags = O_CREAT | O_WRONLY | O_TRUNC;
	else	/* openat2(dfd, path, struct open_how *how, size): how->flags first */
		bpf_probe_read_user(&flags, sizeof(flags), (void *)PT_REGS_PARM3_CORE_SYSCALL(regs));
	inode_identity(inode, &id);
	say_opened_path(f, inode, &id);
	/* O_TRUNC truncates even with O_RDONLY (given write permission) */
	if ((fmode & FMODE_CREATED) || (flags & O_TRUNC)) {
		__sync_fetch_and_add(&outputs, 1);
		if (!(seen_set(&id, SEEN_OUTPUT) & SEEN_OUTPUT))
			emit_flag(&id, HS_BPF_OUTPUT);
	} else if (fmode & FMODE_WRITE) {
		if (!(seen_set(&id, SEEN_WRITTEN) & SEEN_WRITTEN))
			emit_flag(&id, HS_BPF_WRITTEN);
	}
	/* reading an empty file reads no page, yet the file is in the working set */
	if ((fmode & FMODE_READ) && id.size == 0 && !(fmode & FMODE_CREATED) &&
	    !(flags & O_TRUNC) && !(seen_set(&id, SEEN_EMPTY) & SEEN_EMPTY)) {
		struct hs_bpf_pages e = {
			.h.type = HS_BPF_PAGES, .h.how = HS_BPF_READ, .h.time = bpf_ktime_get_ns(),
			.h.inode = id, .first = 1, .last = 0,
		};

		output(&e, sizeof(e));
	}
}

/* mmap(addr, len, prot, flags, fd, off) of a file with PROT_EXEC: a library. */
static __always_inline void mapped(struct pt_regs *regs)
{
	struct hs_bpf_inode id;
	struct inode *inode;
	struct file *f;

	if (!(PT_REGS_PARM3_CORE_SYSCALL(regs) & PROT_EXEC))
		return;
	f = fd_file(PT_REGS_PARM5_CORE_SYSCALL(regs));
	if (!f)
		return;
	inode = BPF_CORE_READ(f, f_inode);
	if (!is_regular(inode))
		return;
	inode_identity(inode, &id);
	if (seen_set(&id, SEEN_EXEC) & SEEN_EXEC)
		return;
	say_opened_path(f, inode, &id);
	emit_flag(&id, HS_BPF_EXEC);
}

/*
 * Runs at the exit of every system call of every process: it must be cheap
 * for the others. The call number, read first, turns most away; the map
 * lookup (several times dearer) is for the calls that matter.
 */
SEC("raw_tp/sys_exit")
int BPF_PROG(on_sys_exit, struct pt_regs *regs, long ret)
{
	long nr;

	if (ret < 0)
		return 0;
	nr = SYSCALL_NR(regs);
	if (nr == NR_read) {
		if (hold_ino)
			maybe_hold_read(regs);
		return 0;
	}
	if (nr != NR_openat && nr != NR_mmap && nr != NR_open && nr != NR_openat2 &&
	    nr != NR_creat)
		return 0;
	if (stopped || track_state() != TRACK_ACTIVE)
		return 0;
	if (nr == NR_mmap)
		mapped(regs);
	else
		opened(regs, nr, ret);
	return 0;
}
