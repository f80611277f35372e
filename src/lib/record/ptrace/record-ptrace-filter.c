/*
 * record-ptrace-filter.c - the seccomp filter that decides which system
 * calls of the job stop it for the tracer, and what a trapped call means.
 *
 * Every stop costs two context switches and a few system calls of the
 * tracer, so the filter traps as little as position inference allows
 * (record-ptrace.h): never read, readv or an open for reading; lseek only
 * when it moves the position; fcntl only to duplicate; mmap only when it
 * replaces a mapping (MAP_FIXED); madvise only when it drops pages;
 * sendfile, splice and copy_file_range only with an explicit offset (with
 * none, the position moves and sampling sees it); open only to write,
 * create or truncate. Calls whose verdict does not depend on their
 * arguments (read, write, fstat...) are allowed from the kernel's
 * per-filter bitmap without running the filter at all.
 *
 * io_uring_setup and io_setup fail with ENOSYS: their reads happen where
 * no stop can see them, and programs fall back to plain system calls.
 *
 * The native ABI is filtered precisely. A process of another ABI on the
 * same kernel (i386 on x86_64, x32) has every call that matters trapped
 * unconditionally and decoded here; an ABI this file does not know has all
 * its calls trapped, and the tracer lets them through unrecorded.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "record/ptrace/record-ptrace.h"

#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#else
#define NATIVE_ARCH 0	/* no native rules: hs_record_ptrace() refuses to run */
#endif

/* ---- the calls of each ABI ----------------------------------------------------- */

struct call_nr {
	uint32_t nr;
	enum pt_call call;
};

/* The native ABI, from the C library's numbers. */
static const struct call_nr native_calls[] = {
	{ SYS_close, PT_CLOSE }, { SYS_dup, PT_DUP }, { SYS_dup3, PT_DUP3 },
	{ SYS_fcntl, PT_FCNTL }, { SYS_lseek, PT_LSEEK }, { SYS_pread64, PT_PREAD },
	{ SYS_preadv, PT_PREADV }, { SYS_preadv2, PT_PREADV2 },
	{ SYS_sendfile, PT_SENDFILE }, { SYS_splice, PT_SPLICE },
	{ SYS_copy_file_range, PT_COPY_FILE_RANGE }, { SYS_mmap, PT_MMAP },
	{ SYS_munmap, PT_MUNMAP }, { SYS_mremap, PT_MREMAP }, { SYS_madvise, PT_MADVISE },
	{ SYS_execve, PT_EXECVE }, { SYS_execveat, PT_EXECVEAT },
	{ SYS_exit_group, PT_EXIT_GROUP }, { SYS_openat, PT_OPENAT },
	{ SYS_truncate, PT_TRUNCATE }, { SYS_renameat, PT_RENAME },
	{ SYS_renameat2, PT_RENAME }, { SYS_prctl, PT_PRCTL }, { SYS_unshare, PT_UNSHARE },
#ifdef SYS_close_range
	{ SYS_close_range, PT_CLOSE_RANGE },
#endif
#ifdef SYS_openat2
	{ SYS_openat2, PT_OPENAT2 },
#endif
#ifdef SYS_dup2
	{ SYS_dup2, PT_DUP2 },
#endif
#ifdef SYS_open
	{ SYS_open, PT_OPEN },
#endif
#ifdef SYS_creat
	{ SYS_creat, PT_CREAT },
#endif
#ifdef SYS_rename
	{ SYS_rename, PT_RENAME },
#endif
};

/* i386 (arch/x86/entry/syscalls/syscall_32.tbl): 64-bit values in two registers. */
static const struct call_nr i386_calls[] = {
	{ 6, PT_CLOSE }, { 436, PT_CLOSE_RANGE }, { 41, PT_DUP }, { 63, PT_DUP2 },
	{ 330, PT_DUP3 }, { 55, PT_FCNTL }, { 221, PT_FCNTL }, { 19, PT_LSEEK },
	{ 140, PT_LLSEEK }, { 180, PT_PREAD }, { 333, PT_PREADV }, { 378, PT_PREADV2 },
	{ 187, PT_SENDFILE }, { 239, PT_SENDFILE64 }, { 313, PT_SPLICE },
	{ 377, PT_COPY_FILE_RANGE }, { 90, PT_OLD_MMAP }, { 192, PT_MMAP_PGOFF },
	{ 91, PT_MUNMAP }, { 163, PT_MREMAP }, { 219, PT_MADVISE }, { 11, PT_EXECVE },
	{ 358, PT_EXECVEAT }, { 252, PT_EXIT_GROUP }, { 5, PT_OPEN }, { 295, PT_OPENAT },
	{ 437, PT_OPENAT2 }, { 8, PT_CREAT }, { 92, PT_TRUNCATE }, { 193, PT_TRUNCATE64 },
	{ 38, PT_RENAME }, { 302, PT_RENAME }, { 353, PT_RENAME }, { 172, PT_PRCTL },
	{ 310, PT_UNSHARE },
};
static const uint32_t i386_nosys[] = { 425 /* io_uring_setup */, 245 /* io_setup */ };

/* x32 (syscall_64.tbl, "common" and "x32" rows), without __X32_SYSCALL_BIT. */
#define X32_BIT 0x40000000u
static const struct call_nr x32_calls[] = {
	{ 3, PT_CLOSE }, { 436, PT_CLOSE_RANGE }, { 32, PT_DUP }, { 33, PT_DUP2 },
	{ 292, PT_DUP3 }, { 72, PT_FCNTL }, { 8, PT_LSEEK }, { 17, PT_PREAD },
	{ 534, PT_PREADV }, { 546, PT_PREADV2 }, { 40, PT_SENDFILE64 }, { 275, PT_SPLICE },
	{ 326, PT_COPY_FILE_RANGE }, { 9, PT_MMAP }, { 11, PT_MUNMAP }, { 25, PT_MREMAP },
	{ 28, PT_MADVISE }, { 520, PT_EXECVE }, { 545, PT_EXECVEAT }, { 231, PT_EXIT_GROUP },
	{ 2, PT_OPEN }, { 257, PT_OPENAT }, { 437, PT_OPENAT2 }, { 85, PT_CREAT },
	{ 76, PT_TRUNCATE }, { 82, PT_RENAME }, { 264, PT_RENAME }, { 316, PT_RENAME },
	{ 157, PT_PRCTL }, { 272, PT_UNSHARE },
};
static const uint32_t x32_nosys[] = { 425 /* io_uring_setup */, 543 /* io_setup */ };

#define N(a) (sizeof(a) / sizeof((a)[0]))

static enum pt_call find_call(const struct call_nr *t, size_t n, uint64_t nr)
{
	for (size_t i = 0; i < n; i++)
		if (t[i].nr == nr)
			return t[i].call;
	return PT_OTHER;
}

bool pt_decode(uint32_t arch, uint64_t nr, const uint64_t args[6], struct pt_syscall *sc)
{
	for (int i = 0; i < 6; i++)
		sc->args[i] = args[i];
	sc->compat = sc->split64 = false;
	if (NATIVE_ARCH && arch == NATIVE_ARCH && !(nr & X32_BIT)) {
		sc->call = find_call(native_calls, N(native_calls), nr);
		return true;
	}
#ifdef __x86_64__
	if (arch == AUDIT_ARCH_X86_64) {	/* x32: 64-bit registers, 32-bit pointers */
		sc->call = find_call(x32_calls, N(x32_calls), nr & ~(uint64_t)X32_BIT);
		sc->compat = true;
		return true;
	}
	if (arch == AUDIT_ARCH_I386) {
		sc->call = find_call(i386_calls, N(i386_calls), nr);
		sc->compat = sc->split64 = true;
		for (int i = 0; i < 6; i++)
			sc->args[i] = (uint32_t)args[i];
		return true;
	}
#endif
	sc->call = PT_OTHER;
	return false;
}

/* ---- building the program -------------------------------------------------------- */

struct prog {
	struct sock_filter *insn;
	size_t len, cap;
	size_t rule;		/* index of the current rule's "is it this call" jump */
	bool oom;
};

#define LD_NR offsetof(struct seccomp_data, nr)
#define LD_ARCH offsetof(struct seccomp_data, arch)
/* seccomp_data.args are u64; the low word comes first on little-endian */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ARG_LO(i) (offsetof(struct seccomp_data, args) + 8 * (i))
#define ARG_HI(i) (offsetof(struct seccomp_data, args) + 8 * (i) + 4)
#else
#define ARG_LO(i) (offsetof(struct seccomp_data, args) + 8 * (i) + 4)
#define ARG_HI(i) (offsetof(struct seccomp_data, args) + 8 * (i))
#endif
#define TRACE SECCOMP_RET_TRACE
#define ALLOW SECCOMP_RET_ALLOW
#define NOSYS (SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA))

static void emit(struct prog *p, uint16_t code, uint32_t k, uint8_t jt, uint8_t jf)
{
	if (hs_grow(&p->insn, &p->cap, p->len + 1, sizeof(*p->insn))) {
		p->oom = true;
		return;
	}
	p->insn[p->len++] = (struct sock_filter){ code, jt, jf, k };
}

static void load(struct prog *p, uint32_t off)
{
	emit(p, BPF_LD | BPF_W | BPF_ABS, off, 0, 0);
}

static void ret(struct prog *p, uint32_t action)
{
	emit(p, BPF_RET | BPF_K, action, 0, 0);
}

/* A rule: "if nr == call { body }"; the body ends in returns. */
static void rule_begin(struct prog *p, uint32_t nr)
{
	load(p, LD_NR);
	p->rule = p->len;
	emit(p, BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 0);
}

static void rule_end(struct prog *p)
{
	if (!p->oom)
		p->insn[p->rule].jf = (uint8_t)(p->len - p->rule - 1);
}

static void rule_always(struct prog *p, uint32_t nr, uint32_t action)
{
	rule_begin(p, nr);
	ret(p, action);
	rule_end(p);
}

/* Trap when an int argument has one of the bits of mask. */
static void rule_bits(struct prog *p, uint32_t nr, int arg, uint32_t mask)
{
	rule_begin(p, nr);
	load(p, ARG_LO(arg));
	emit(p, BPF_JMP | BPF_JSET | BPF_K, mask, 0, 1);
	ret(p, TRACE);
	ret(p, ALLOW);
	rule_end(p);
}

/* Trap when an int argument is one of n values (the kernel reads 32 bits). */
static void rule_in(struct prog *p, uint32_t nr, int arg, const uint32_t *v, int n)
{
	rule_begin(p, nr);
	load(p, ARG_LO(arg));
	for (int i = 0; i < n; i++)
		emit(p, BPF_JMP | BPF_JEQ | BPF_K, v[i], (uint8_t)(n - i), 0);
	ret(p, ALLOW);
	ret(p, TRACE);
	rule_end(p);
}

/* Trap when a pointer argument is not NULL. */
static void rule_pointer(struct prog *p, uint32_t nr, int arg)
{
	rule_begin(p, nr);
	load(p, ARG_LO(arg));
	emit(p, BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0);
	ret(p, TRACE);
	load(p, ARG_HI(arg));
	emit(p, BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0);
	ret(p, TRACE);
	ret(p, ALLOW);
	rule_end(p);
}

/* lseek: trap unless lseek(fd, 0, SEEK_CUR), which only asks the position. */
static void rule_lseek(struct prog *p, uint32_t nr)
{
	rule_begin(p, nr);
	load(p, ARG_LO(1));
	emit(p, BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0);
	ret(p, TRACE);
	load(p, ARG_HI(1));
	emit(p, BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0);
	ret(p, TRACE);
	load(p, ARG_LO(2));
	emit(p, BPF_JMP | BPF_JEQ | BPF_K, SEEK_CUR, 0, 1);
	ret(p, ALLOW);
	ret(p, TRACE);
	rule_end(p);
}

/* prctl(PR_SET_DUMPABLE, 0) */
static void rule_nodump(struct prog *p, uint32_t nr)
{
	rule_begin(p, nr);
	load(p, ARG_LO(0));
	emit(p, BPF_JMP | BPF_JEQ | BPF_K, PR_SET_DUMPABLE, 1, 0);
	ret(p, ALLOW);
	load(p, ARG_LO(1));
	emit(p, BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0);
	ret(p, ALLOW);
	load(p, ARG_HI(1));
	emit(p, BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1);
	ret(p, TRACE);
	ret(p, ALLOW);
	rule_end(p);
}

static void native_rules(struct prog *p, bool trap_dumpable)
{
	static const uint32_t dup_cmds[] = { F_DUPFD, F_DUPFD_CLOEXEC };
	static const uint32_t drop_advice[] = {
		MADV_DONTNEED, MADV_REMOVE, MADV_PAGEOUT, MADV_DONTNEED_LOCKED,
	};
	const uint32_t to_write = O_WRONLY | O_RDWR | O_CREAT | O_TRUNC;

	/* the most frequent first */
	rule_always(p, SYS_close, TRACE);
	rule_lseek(p, SYS_lseek);
	rule_bits(p, SYS_openat, 2, to_write);
	rule_bits(p, SYS_mmap, 3, MAP_FIXED);
	rule_always(p, SYS_munmap, TRACE);
	rule_in(p, SYS_fcntl, 1, dup_cmds, 2);
	rule_always(p, SYS_pread64, TRACE);
	rule_always(p, SYS_preadv, TRACE);
	rule_always(p, SYS_preadv2, TRACE);
	rule_always(p, SYS_dup, TRACE);
	rule_always(p, SYS_dup3, TRACE);
	rule_in(p, SYS_madvise, 2, drop_advice, 4);
	rule_always(p, SYS_mremap, TRACE);
	rule_pointer(p, SYS_sendfile, 2);
	rule_pointer(p, SYS_splice, 1);
	rule_pointer(p, SYS_copy_file_range, 1);
	rule_always(p, SYS_execve, TRACE);
	rule_always(p, SYS_execveat, TRACE);
	rule_always(p, SYS_exit_group, TRACE);
	rule_always(p, SYS_truncate, TRACE);
	rule_always(p, SYS_renameat, TRACE);
	rule_always(p, SYS_renameat2, TRACE);
	rule_bits(p, SYS_unshare, 0, CLONE_FILES);
	rule_always(p, SYS_io_setup, NOSYS);
#ifdef SYS_io_uring_setup
	rule_always(p, SYS_io_uring_setup, NOSYS);
#endif
#ifdef SYS_dup2
	rule_always(p, SYS_dup2, TRACE);
#endif
#ifdef SYS_open
	rule_bits(p, SYS_open, 1, to_write);
#endif
#ifdef SYS_creat
	rule_always(p, SYS_creat, TRACE);
#endif
#ifdef SYS_rename
	rule_always(p, SYS_rename, TRACE);
#endif
#ifdef SYS_close_range
	rule_always(p, SYS_close_range, TRACE);
#endif
#ifdef SYS_openat2
	rule_always(p, SYS_openat2, TRACE);
#endif
	if (trap_dumpable)
		rule_nodump(p, SYS_prctl);
	ret(p, ALLOW);
}

/* Another ABI: trap every call that matters, whatever its arguments. */
static void list_rules(struct prog *p, const struct call_nr *calls, size_t n,
		       const uint32_t *nosys, size_t nnosys, uint32_t bias)
{
	load(p, LD_NR);
	for (size_t i = 0; i < nnosys; i++) {
		emit(p, BPF_JMP | BPF_JEQ | BPF_K, nosys[i] | bias, 0, 1);
		ret(p, NOSYS);
	}
	for (size_t i = 0; i < n; i++) {
		emit(p, BPF_JMP | BPF_JEQ | BPF_K, calls[i].nr | bias, 0, 1);
		ret(p, TRACE);
	}
	ret(p, ALLOW);
}

/* Point the long jump at `at` (a BPF_JA) to the next instruction emitted. */
static void land(struct prog *p, size_t at)
{
	if (!p->oom)
		p->insn[at].k = (uint32_t)(p->len - at - 1);
}

int pt_filter_build(bool trap_dumpable, struct sock_fprog *out)
{
	struct prog p = { 0 };
	size_t to_other_abi, to_x32;

	/*
	 * arch == native? (nr < X32_BIT? native rules : x32) : other ABIs.
	 * Conditional jumps reach 255 instructions: long ones are BPF_JA.
	 */
	load(&p, LD_ARCH);
	emit(&p, BPF_JMP | BPF_JEQ | BPF_K, NATIVE_ARCH, 1, 0);
	to_other_abi = p.len;
	emit(&p, BPF_JMP | BPF_JA, 0, 0, 0);
	load(&p, LD_NR);
	emit(&p, BPF_JMP | BPF_JGE | BPF_K, X32_BIT, 0, 1);
	to_x32 = p.len;
	emit(&p, BPF_JMP | BPF_JA, 0, 0, 0);
	native_rules(&p, trap_dumpable);
	land(&p, to_x32);
#ifdef __x86_64__
	list_rules(&p, x32_calls, N(x32_calls), x32_nosys, N(x32_nosys), X32_BIT);
	land(&p, to_other_abi);
	load(&p, LD_ARCH);
	emit(&p, BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_I386, 0, 1);
	to_x32 = p.len;	/* reused: the jump into the i386 rules */
	emit(&p, BPF_JMP | BPF_JA, 0, 0, 0);
	ret(&p, TRACE);	/* an ABI we do not know: stop on everything */
	land(&p, to_x32);
	list_rules(&p, i386_calls, N(i386_calls), i386_nosys, N(i386_nosys), 0);
#else
	ret(&p, TRACE);	/* no x32 here */
	land(&p, to_other_abi);
	ret(&p, TRACE);	/* an ABI we do not know: stop on everything */
#endif
	if (p.oom) {
		free(p.insn);
		return -ENOMEM;
	}
	out->filter = p.insn;
	out->len = (unsigned short)p.len;
	return 0;
}
