/*
 * test-record-ptrace.c - the parts of the ptrace backend that can be tested
 * without tracing: the seccomp filter (run by the kernel in a child, and by
 * a small interpreter for the ABIs this machine may not run), the decoding
 * of trapped calls, the reading of a tracee's memory and paths (this
 * process standing in for the tracee), and the hash map its tables use.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "record/ptrace/record-ptrace.h"
#include "scratch.h"
#include "unit.h"

/* ---- the filter, run by the kernel ------------------------------------------------- */

/*
 * In a child with the filter and no tracer, a trapped call fails with
 * ENOSYS without running; an allowed one runs (and fails otherwise: the
 * arguments are bad on purpose). Returns the errno of each call.
 */
static int errno_of(long nr, long a0, long a1, long a2, long a3)
{
	long r = syscall(nr, a0, a1, a2, a3, 0, 0);

	return r < 0 ? errno : 0;
}

TEST(the_filter_traps_what_moves_positions_and_nothing_else)
{
	struct sock_fprog prog;
	int status;
	pid_t pid;

	CHECK(pt_filter_build(true, &prog) == 0);
	pid = fork();
	if (pid == 0) {
		int bad = 0;

		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
		    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog))
			_exit(2);
#define EXPECT(err, ...)                                                                        \
	do {                                                                                    \
		int e_ = errno_of(__VA_ARGS__);                                                 \
		if (e_ != (err)) {                                                              \
			printf("#   %s:%d: errno %d, expected %d\n", __FILE__, __LINE__, e_, err); \
			bad = 1;                                                                \
		}                                                                               \
	} while (0)
		EXPECT(ENOSYS, SYS_close, -1, 0, 0, 0);
		EXPECT(EBADF, SYS_read, -1, 0, 0, 0);
		EXPECT(EBADF, SYS_readv, -1, 0, 0, 0);
		EXPECT(EBADF, SYS_lseek, -1, 0, SEEK_CUR, 0);
		EXPECT(ENOSYS, SYS_lseek, -1, 1, SEEK_CUR, 0);
		EXPECT(ENOSYS, SYS_lseek, -1, 0, SEEK_SET, 0);
		EXPECT(ENOENT, SYS_openat, AT_FDCWD, (long)"/nonexistent/x", O_RDONLY | O_CLOEXEC, 0);
		EXPECT(ENOSYS, SYS_openat, AT_FDCWD, (long)"/nonexistent/x", O_WRONLY, 0);
		EXPECT(ENOSYS, SYS_openat, AT_FDCWD, (long)"/nonexistent/x", O_RDONLY | O_CREAT, 0);
		EXPECT(EBADF, SYS_fcntl, -1, F_GETFL, 0, 0);
		EXPECT(ENOSYS, SYS_fcntl, -1, F_DUPFD_CLOEXEC, 0, 0);
		EXPECT(ENOSYS, SYS_pread64, -1, 0, 0, 0);
		EXPECT(ENOSYS, SYS_dup, -1, 0, 0, 0);
		EXPECT(EBADF, SYS_sendfile, -1, -1, 0, 1);
		EXPECT(ENOSYS, SYS_sendfile, -1, -1, 8, 1);
		EXPECT(0, SYS_mmap, 0, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS);
		EXPECT(ENOSYS, SYS_mmap, 0, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED);
		EXPECT(EINVAL, SYS_madvise, 1, 4096, MADV_RANDOM, 0);
		EXPECT(ENOSYS, SYS_madvise, 1, 4096, MADV_DONTNEED, 0);
		EXPECT(ENOSYS, SYS_munmap, 1, 0, 0, 0);
		EXPECT(ENOSYS, SYS_io_setup, 1, 0, 0, 0);
		EXPECT(0, SYS_prctl, PR_SET_DUMPABLE, 1, 0, 0);
		EXPECT(ENOSYS, SYS_prctl, PR_SET_DUMPABLE, 0, 0, 0);
		EXPECT(EBADF, SYS_fstat, -1, 0, 0, 0);
		fflush(stdout);
		_exit(bad);
	}
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	free(prog.filter);
}

/* ---- the filter, interpreted (other ABIs) --------------------------------------- */

static uint32_t run_filter(const struct sock_fprog *prog, uint32_t arch, uint32_t nr,
			   const uint64_t *args)
{
	struct seccomp_data d = { .nr = (int)nr, .arch = arch };
	uint32_t a = 0;

	for (int i = 0; i < 6; i++)
		d.args[i] = args ? args[i] : 0;
	for (size_t pc = 0; pc < prog->len; pc++) {
		const struct sock_filter *in = &prog->filter[pc];

		switch (in->code) {
		case BPF_LD | BPF_W | BPF_ABS:
			memcpy(&a, (const char *)&d + in->k, 4);
			break;
		case BPF_JMP | BPF_JA:
			pc += in->k;
			break;
		case BPF_JMP | BPF_JEQ | BPF_K:
			pc += a == in->k ? in->jt : in->jf;
			break;
		case BPF_JMP | BPF_JGE | BPF_K:
			pc += a >= in->k ? in->jt : in->jf;
			break;
		case BPF_JMP | BPF_JSET | BPF_K:
			pc += a & in->k ? in->jt : in->jf;
			break;
		case BPF_RET | BPF_K:
			return in->k;
		default:
			return 0xdeadbeef;
		}
	}
	return 0xdeadbeef;	/* ran off the end */
}

TEST(other_abis_have_every_call_that_matters_trapped)
{
	struct sock_fprog prog;
	const uint64_t wronly[6] = { (uint64_t)AT_FDCWD, 0, O_WRONLY };

	CHECK(pt_filter_build(false, &prog) == 0);
#ifdef __x86_64__
	/* i386: close, _llseek, pread64, mmap2, openat, execve; not read (3) */
	CHECK_EQ_U64(run_filter(&prog, AUDIT_ARCH_I386, 6, NULL), SECCOMP_RET_TRACE);
	CHECK_EQ_U64(run_filter(&prog, AUDIT_ARCH_I386, 140, NULL), SECCOMP_RET_TRACE);
	CHECK_EQ_U64(run_filter(&prog, AUDIT_ARCH_I386, 180, NULL), SECCOMP_RET_TRACE);
	CHECK_EQ_U64(run_filter(&prog, AUDIT_ARCH_I386, 192, NULL), SECCOMP_RET_TRACE);
	CHECK_EQ_U64(run_filter(&prog, AUDIT_ARCH_I386, 295, NULL), SECCOMP_RET_TRACE);
	CHECK_EQ_U64(run_filter(&prog, AUDIT_ARCH_I386, 11, NULL), SECCOMP_RET_TRACE);
	CHECK_EQ_U64(run_filter(&prog, AUDIT_ARCH_I386, 3, NULL), SECCOMP_RET_ALLOW);
	CHECK_EQ_U64(run_filter(&prog, AUDIT_ARCH_I386, 425, NULL), SECCOMP_RET_ERRNO | ENOSYS);
	/* x32: the x86_64 numbers with the x32 bit, and its own execve (520) */
	CHECK_EQ_U64(run_filter(&prog, AUDIT_ARCH_X86_64, 3 | 0x40000000, NULL), SECCOMP_RET_TRACE);
	CHECK_EQ_U64(run_filter(&prog, AUDIT_ARCH_X86_64, 520 | 0x40000000, NULL), SECCOMP_RET_TRACE);
	CHECK_EQ_U64(run_filter(&prog, AUDIT_ARCH_X86_64, 0 | 0x40000000, NULL), SECCOMP_RET_ALLOW);
	/* native, the same as the kernel said; prctl is not trapped when asked not to */
	CHECK_EQ_U64(run_filter(&prog, AUDIT_ARCH_X86_64, SYS_close, NULL), SECCOMP_RET_TRACE);
	CHECK_EQ_U64(run_filter(&prog, AUDIT_ARCH_X86_64, SYS_openat, wronly), SECCOMP_RET_TRACE);
	CHECK_EQ_U64(run_filter(&prog, AUDIT_ARCH_X86_64, SYS_prctl, (uint64_t[6]){ PR_SET_DUMPABLE }),
		     SECCOMP_RET_ALLOW);
#endif
	/* an ABI nobody knows: everything stops */
	CHECK_EQ_U64(run_filter(&prog, 0x12345678, 0, NULL), SECCOMP_RET_TRACE);
	free(prog.filter);
}

TEST(calls_are_decoded_whatever_their_abi)
{
	const uint64_t args[6] = { 3, 1, 2, 0xffffffff00000010ull, 5, 6 };
	struct pt_syscall sc;

	CHECK(pt_decode(AUDIT_ARCH_X86_64, SYS_pread64, args, &sc));
	CHECK(sc.call == PT_PREAD && !sc.compat && !sc.split64 && sc.args[3] == args[3]);
	CHECK(pt_decode(AUDIT_ARCH_X86_64, SYS_read, args, &sc) && sc.call == PT_OTHER);
#ifdef __x86_64__
	CHECK(pt_decode(AUDIT_ARCH_I386, 180, args, &sc));
	CHECK(sc.call == PT_PREAD && sc.compat && sc.split64 && sc.args[3] == 0x10);
	CHECK(pt_decode(AUDIT_ARCH_I386, 90, args, &sc) && sc.call == PT_OLD_MMAP);
	CHECK(pt_decode(AUDIT_ARCH_X86_64, 534 | 0x40000000, args, &sc));
	CHECK(sc.call == PT_PREADV && sc.compat && !sc.split64);
#endif
	CHECK(!pt_decode(0x12345678, 3, args, &sc));
}

/* ---- the tracee's memory and paths ----------------------------------------------- */

TEST(a_tracee_path_names_for_the_tracer_what_it_names_for_the_tracee)
{
	const struct pt_task t = { .tid = 1234, .tgid = 1200 };
	char out[64];

	CHECK(pt_tracee_path(&t, AT_FDCWD, "a/b", out, sizeof(out)) == 0);
	CHECK_STR(out, "/proc/1234/cwd/a/b");
	CHECK(pt_tracee_path(&t, 5, "x", out, sizeof(out)) == 0);
	CHECK_STR(out, "/proc/1234/fd/5/x");
	CHECK(pt_tracee_path(&t, 5, "", out, sizeof(out)) == 0);	/* AT_EMPTY_PATH */
	CHECK_STR(out, "/proc/1234/fd/5");
	CHECK(pt_tracee_path(&t, 5, "/etc/passwd", out, sizeof(out)) == 0);
	CHECK_STR(out, "/etc/passwd");
	/* /proc/self is the tracee's process, /proc/thread-self its thread */
	CHECK(pt_tracee_path(&t, AT_FDCWD, "/proc/self/fd/3", out, sizeof(out)) == 0);
	CHECK_STR(out, "/proc/1200/fd/3");
	CHECK(pt_tracee_path(&t, AT_FDCWD, "/proc/self", out, sizeof(out)) == 0);
	CHECK_STR(out, "/proc/1200");
	CHECK(pt_tracee_path(&t, AT_FDCWD, "/proc/thread-self/comm", out, sizeof(out)) == 0);
	CHECK_STR(out, "/proc/1200/task/1234/comm");
	CHECK(pt_tracee_path(&t, AT_FDCWD, "/proc/selfish", out, sizeof(out)) == 0);
	CHECK_STR(out, "/proc/selfish");
	/* what does not fit is refused, not cut */
	CHECK(pt_tracee_path(&t, AT_FDCWD, "012345678", out, 24) == -1);
	CHECK(pt_tracee_path(&t, AT_FDCWD, "01234567", out, 24) == 0);
	CHECK_STR(out, "/proc/1234/cwd/01234567");
}

/*
 * Two readable pages, then one that is not: a string ending just before it
 * is read, one running into it is not; an iovec array is summed whole.
 */
TEST(strings_and_iovecs_are_read_from_the_tracee_up_to_what_it_can_read)
{
	uint32_t ps = (uint32_t)sysconf(_SC_PAGESIZE);
	char *m = mmap(NULL, 3 * (size_t)ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	char buf[4096], *edge;
	pid_t self = getpid();
	struct iovec v[3];
	uint32_t v32[6] = { 0, 10, 0, 20, 0, 4000 };

	CHECK(m != MAP_FAILED);
	if (m == MAP_FAILED)
		return;
	CHECK(mprotect(m + 2 * ps, ps, PROT_NONE) == 0);
	edge = m + 2 * ps;
	/* across the boundary of the readable pages */
	memcpy(m + ps - 3, "across", 7);
	CHECK(pt_read_string(self, buf, (uintptr_t)(m + ps - 3), sizeof(buf), ps) == 0);
	CHECK_STR(buf, "across");
	/* ending two bytes before the unreadable page */
	memcpy(edge - 2, "e", 2);
	CHECK(pt_read_string(self, buf, (uintptr_t)(edge - 2), sizeof(buf), ps) == 0);
	CHECK_STR(buf, "e");
	/* running into it, or longer than the buffer */
	memset(edge - 8, 'x', 8);
	CHECK(pt_read_string(self, buf, (uintptr_t)(edge - 8), sizeof(buf), ps) == -1);
	memset(m, 'y', ps);
	m[ps] = '\0';
	CHECK(pt_read_string(self, buf, (uintptr_t)m, 64, ps) == -1);
	CHECK(pt_read_string(self, buf, (uintptr_t)(m + ps - 62), 64, ps) == 0);
	CHECK_EQ_U64(strlen(buf), 62);
	/* all the bytes asked for, or nothing */
	CHECK(pt_read_mem(self, buf, (uintptr_t)m, 16) == 0 && buf[15] == 'y');
	CHECK(pt_read_mem(self, buf, (uintptr_t)(edge - 8), 16) == -1);
	/* iovecs, native and 32-bit; a count the call refuses asks for nothing */
	v[0] = (struct iovec){ buf, 100 };
	v[1] = (struct iovec){ buf, 0 };
	v[2] = (struct iovec){ buf, 4000 };
	CHECK_EQ_U64(pt_iov_total(self, (uintptr_t)v, 3, false), 4100);
	CHECK_EQ_U64(pt_iov_total(self, (uintptr_t)v32, 3, true), 4030);
	CHECK_EQ_U64(pt_iov_total(self, (uintptr_t)v, 1025, false), 0);
	CHECK_EQ_U64(pt_iov_total(self, (uintptr_t)edge, 2, false), 0);
	munmap(m, 3 * (size_t)ps);
}

TEST(a_path_argument_resolves_where_the_tracee_stands)
{
	struct pt_tracer tr = { .page_size = (uint32_t)sysconf(_SC_PAGESIZE) };
	const struct pt_task t = { .tid = getpid(), .tgid = getpid() };
	char real[PATH_MAX], *got;
	int dir;

	scratch_dir();
	CHECK(realpath(scratch, real) != NULL);
	CHECK(mkdir(path_in("d"), 0755) == 0 && symlink("d", path_in("link")) == 0);
	CHECK(chdir(scratch) == 0);
	/* relative to the working directory, links resolved */
	got = pt_resolve_arg(&tr, &t, AT_FDCWD, (uintptr_t)"link");
	CHECK(got && !strcmp(got + strlen(real), "/d") && !strncmp(got, real, strlen(real)));
	free(got);
	/* relative to an fd */
	dir = open(path_in("d"), O_RDONLY | O_DIRECTORY);
	CHECK(dir >= 0);
	CHECK(close(open(path_in("d/f"), O_CREAT | O_WRONLY, 0644)) == 0);
	got = pt_resolve_arg(&tr, &t, dir, (uintptr_t)"f");
	CHECK(got && !strcmp(got + strlen(real), "/d/f"));
	free(got);
	/* nothing there, or no string to read */
	CHECK(pt_resolve_arg(&tr, &t, AT_FDCWD, (uintptr_t)"missing") == NULL);
	CHECK(pt_resolve_arg(&tr, &t, AT_FDCWD, 0) == NULL);
	close(dir);
	scratch_done();
}

/* ---- u64map ------------------------------------------------------------------- */

TEST(the_map_keeps_every_key_through_deletions)
{
	struct u64map m = { 0 };
	const int n = 5000;
	size_t pos = 0, seen = 0;
	uint64_t key;
	void *val;

	for (int i = 1; i <= n; i++)
		CHECK(u64map_put(&m, (uint64_t)i * 4096, (void *)(uintptr_t)i) == 0);
	CHECK_EQ_U64(m.count, n);
	for (int i = 1; i <= n; i += 3)	/* delete a third: entries behind them move back */
		CHECK(u64map_del(&m, (uint64_t)i * 4096) == (void *)(uintptr_t)i);
	for (int i = 1; i <= n; i++)
		CHECK(u64map_get(&m, (uint64_t)i * 4096) == ((i - 1) % 3 ? (void *)(uintptr_t)i : NULL));
	CHECK(u64map_del(&m, 1) == NULL);
	CHECK(u64map_put(&m, 8192, (void *)1) == 0 && u64map_get(&m, 8192) == (void *)1);
	while (u64map_next(&m, &pos, &key, &val))
		seen++;
	CHECK_EQ_U64(seen, m.count);
	u64map_free(&m);
	CHECK(u64map_get(&m, 8192) == NULL && m.count == 0);
}

int main(void)
{
	return RUN_TESTS(the_filter_traps_what_moves_positions_and_nothing_else,
			 other_abis_have_every_call_that_matters_trapped,
			 calls_are_decoded_whatever_their_abi,
			 a_tracee_path_names_for_the_tracer_what_it_names_for_the_tracee,
			 strings_and_iovecs_are_read_from_the_tracee_up_to_what_it_can_read,
			 a_path_argument_resolves_where_the_tracee_stands,
			 the_map_keeps_every_key_through_deletions);
}
