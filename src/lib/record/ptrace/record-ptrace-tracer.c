/*
 * record-ptrace-tracer.c - the tracer process of the ptrace backend: start
 * the job with the seccomp filter installed, follow every process and
 * thread it starts, and turn each stop into what it means for the working
 * set (see record-ptrace.h for the method).
 *
 * The job's first process is forked, seized (PTRACE_SEIZE, with
 * PTRACE_O_EXITKILL: if the tracer dies, the job dies rather than stay
 * stopped or traced by nobody), and only then installs the filter and
 * execs. Its fork, vfork and clone are followed automatically; exec and
 * exit are events. Group stops (SIGSTOP, ^Z) arrive as PTRACE_EVENT_STOP
 * and are kept with PTRACE_LISTEN; every other signal is handed back to
 * the process it was meant for.
 *
 * When the first process has exited, the tracer samples what the processes
 * left running have read so far, sends hotset the outcome, and goes on
 * following them, without recording, until they exit: letting go of them
 * would make their trapped system calls fail (ENOSYS). hotset meanwhile
 * writes the profile and exits.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/kcmp.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "job/job.h"
#include "record/ptrace/record-ptrace.h"

#ifndef CLOSE_RANGE_UNSHARE
#define CLOSE_RANGE_UNSHARE 2
#define CLOSE_RANGE_CLOEXEC 4
#endif

#define SCAN_INTERVAL_SEC 10	/* background scans of the page tables */
#define LOOK_LEAVE (-1)		/* look_then at an exit: leave the tables, then go on */

/* ---- tasks ------------------------------------------------------------------------- */

static struct pt_task *task_find(struct pt_tracer *tr, pid_t tid)
{
	return u64map_get(&tr->tasks, (uint64_t)tid);
}

/* The task for tid, made if new (a child whose first stop came before its parent's event). */
static struct pt_task *task_get(struct pt_tracer *tr, pid_t tid)
{
	struct pt_task *t = task_find(tr, tid);

	if (t)
		return t;
	t = calloc(1, sizeof(*t));
	if (!t || u64map_put(&tr->tasks, (uint64_t)tid, t)) {
		free(t);
		tr->error = -ENOMEM;
		return NULL;
	}
	t->tid = t->tgid = tid;
	return t;
}

/* t no longer uses its fd table and memory (it exits, or its state moved). */
static void task_leave(struct pt_tracer *tr, struct pt_task *t)
{
	pt_fdtable_put(tr, t->fds, t->tid);
	pt_mm_put(tr, t->mm);
	t->fds = NULL;
	t->mm = NULL;
}

static void task_free(struct pt_tracer *tr, struct pt_task *t)
{
	u64map_del(&tr->tasks, (uint64_t)t->tid);
	pt_seek_end(t, false, 0);
	pt_fdtable_undecided_drop(tr, t);
	pt_fd_look_drop(tr, t);
	task_leave(tr, t);
	free(t->exec.path);
	free(t->truncated);
	free(t);
}

static void resume(struct pt_task *t, int request, int sig)
{
	ptrace(request, t->tid, 0, sig);	/* ESRCH: killed meanwhile; its exit follows */
}

/* ---- the tracee's memory and paths ---------------------------------------------------- */

static int read_mem(pid_t tid, void *dst, uint64_t addr, size_t len)
{
	struct iovec local = { dst, len }, remote = { (void *)(uintptr_t)addr, len };

	return process_vm_readv(tid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -1;
}

/* A NUL-terminated string at addr (at most cap - 1 bytes); 0 or -1. */
static int read_string(pid_t tid, char *dst, uint64_t addr, size_t cap, uint32_t page_size)
{
	size_t got = 0;

	while (got < cap - 1) {
		size_t chunk = page_size - (size_t)((addr + got) % page_size);
		struct iovec local, remote;
		ssize_t n;

		if (chunk > cap - 1 - got)
			chunk = cap - 1 - got;
		local = (struct iovec){ dst + got, chunk };
		remote = (struct iovec){ (void *)(uintptr_t)(addr + got), chunk };
		n = process_vm_readv(tid, &local, 1, &remote, 1, 0);
		if (n <= 0)
			return -1;
		if (memchr(dst + got, '\0', (size_t)n))
			return 0;
		got += (size_t)n;
	}
	return -1;	/* longer than a path can be */
}

/* The bytes an iovec array of count entries asks for. */
static uint64_t iov_total(pid_t tid, uint64_t addr, uint64_t count, bool compat)
{
	uint64_t total = 0;

	if (count > 1024)
		return 0;	/* the call fails with EINVAL */
	while (count) {
		uint32_t v32[128];
		struct iovec v[64];
		size_t n = count > 64 ? 64 : (size_t)count;

		if (compat) {
			if (read_mem(tid, v32, addr, n * 8))
				break;
			for (size_t i = 0; i < n; i++)
				total += v32[2 * i + 1];
			addr += n * 8;
		} else {
			if (read_mem(tid, v, addr, n * sizeof(v[0])))
				break;
			for (size_t i = 0; i < n; i++)
				total += v[i].iov_len;
			addr += n * sizeof(v[0]);
		}
		count -= n;
	}
	return total;
}

/*
 * A path that names, for the tracer, what `path` (relative to dirfd) names
 * for task t. Returns 0, or -1 if it does not fit.
 */
static int tracee_path(const struct pt_task *t, int dirfd, const char *path, char *out, size_t cap)
{
	int n;

	if (path[0] == '/') {
		if (!strncmp(path, "/proc/self", 10) && (!path[10] || path[10] == '/'))
			n = snprintf(out, cap, "/proc/%d%s", (int)t->tgid, path + 10);
		else if (!strncmp(path, "/proc/thread-self", 17) && (!path[17] || path[17] == '/'))
			n = snprintf(out, cap, "/proc/%d/task/%d%s", (int)t->tgid, (int)t->tid,
				     path + 17);
		else
			n = snprintf(out, cap, "%s", path);
	} else if (dirfd == AT_FDCWD) {
		n = snprintf(out, cap, "/proc/%d/cwd/%s", (int)t->tid, path);
	} else if (!path[0]) {
		n = snprintf(out, cap, "/proc/%d/fd/%d", (int)t->tid, dirfd);
	} else {
		n = snprintf(out, cap, "/proc/%d/fd/%d/%s", (int)t->tid, dirfd, path);
	}
	return n < 0 || (size_t)n >= cap ? -1 : 0;
}

/* The real path of t's path argument at addr, relative to dirfd; NULL if none. */
static char *resolve_arg(struct pt_tracer *tr, const struct pt_task *t, int dirfd, uint64_t addr)
{
	char path[PATH_MAX], full[PATH_MAX + 64];

	if (read_string(t->tid, path, addr, sizeof(path), tr->page_size) ||
	    tracee_path(t, dirfd, path, full, sizeof(full)))
		return NULL;
	return realpath(full, NULL);
}

/* ---- the calls ------------------------------------------------------------------------- */

/* Record the faulted pages of [addr, addr + len) before they may go. */
static void scan_range(struct pt_tracer *tr, struct pt_task *t, uint64_t addr, uint64_t len)
{
	uint64_t ps = tr->page_size, lo = addr & ~(ps - 1), hi = addr + len;

	if (hi < addr)
		hi = UINT64_MAX;
	pt_mm_scan(tr, t, lo, hi);
}

/* t has just got a table of its own (at an unshare's exit): a copy of the one it shared. */
static void unshare_fds(struct pt_tracer *tr, struct pt_task *t)
{
	struct pt_task *peer = t->fds ? pt_fdtable_user(tr, t->fds, t) : NULL;
	struct pt_fdtable *own;

	if (!peer)
		return;	/* it used the table alone: nothing changes */
	own = pt_fdtable_fork(tr, peer, t);
	pt_fdtable_put(tr, t->fds, t->tid);
	t->fds = own;
	t->parked = t->copy_of != NULL;	/* until its copy is settled */
}

/* close_range: returns true to stop at its exit (CLOSE_RANGE_UNSHARE of a shared table). */
static bool on_close_range(struct pt_tracer *tr, struct pt_task *t, const uint64_t *a)
{
	unsigned first = (unsigned)a[0], last = (unsigned)a[1], flags = (unsigned)a[2];
	bool unshare = (flags & CLOSE_RANGE_UNSHARE) && t->fds && t->fds->users > 1;
	struct hs_fdinfo fi;
	int *fds = NULL, n;

	if (flags & CLOSE_RANGE_CLOEXEC)
		return unshare;	/* they go at exec, which samples them */
	n = pt_fd_list(t->tid, &fds);
	/* with the table unshared, the range goes from the copy: the others keep it */
	for (int i = 0; i < n; i++)
		if ((unsigned)fds[i] >= first && (unsigned)fds[i] <= last)
			pt_fd_sample(tr, t, fds[i], !unshare, &fi);
	free(fds);
	return unshare;
}

/* lseek: the stretch read so far ends here; the next starts where it seeks. */
static bool on_lseek(struct pt_tracer *tr, struct pt_task *t, const struct pt_syscall *sc)
{
	const uint64_t *a = sc->args;
	int fd = (int)a[0], whence;
	struct hs_fdinfo fi;
	struct pt_ofd *ofd;
	int64_t off, to;

	if (sc->call == PT_LLSEEK) {	/* _llseek(fd, high, low, result, whence) */
		off = (int64_t)(a[1] << 32 | (uint32_t)a[2]);
		whence = (int)a[4];
	} else {
		off = sc->split64 ? (int64_t)(int32_t)a[1] : (int64_t)a[1];
		whence = (int)a[2];
	}
	ofd = pt_fd_sample(tr, t, fd, false, &fi);
	if (!ofd)
		return false;
	if (pt_ofd_seen_elsewhere(t, ofd) || (whence != SEEK_SET && whence != SEEK_CUR &&
					       whence != SEEK_END)) {
		/* where it lands is the result (others may move the position first) */
		pt_seek_begin(t, ofd);
		return true;
	}
	switch (whence) {
	case SEEK_SET:
		to = off;
		break;
	case SEEK_CUR:
		to = fi.pos + off;
		break;
	case SEEK_END: {
		char path[64];
		struct stat st;

		snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)t->tid, fd);
		to = stat(path, &st) ? -1 : st.st_size + off;
		break;
	}
	default:
		return false;
	}
	if (to >= 0)
		ofd->start = to;	/* else the call fails and the position stays */
	return false;
}

/* The offset a sendfile/splice/copy_file_range reads from, at its pointer argument. */
static bool read_offset(struct pt_task *t, uint64_t ptr, bool four_bytes, int64_t *off)
{
	int32_t o32;

	if (!ptr)
		return false;
	if (four_bytes) {
		if (read_mem(t->tid, &o32, ptr, sizeof(o32)))
			return false;
		*off = o32;
		return true;
	}
	return read_mem(t->tid, off, ptr, sizeof(*off)) == 0;
}

static void warn_abi(struct pt_tracer *tr, struct pt_task *t, uint32_t arch)
{
	tr->lost++;
	if (tr->warned_abi)
		return;
	tr->warned_abi = true;
	pt_report_warning(tr, "process %d uses a system-call ABI the ptrace backend does not "
			  "know (audit arch 0x%x): its reads are not recorded", (int)t->tid, arch);
}

/* exec: what is read before the image goes, and which file it runs. */
static void on_execve(struct pt_tracer *tr, struct pt_task *t, const struct pt_syscall *sc)
{
	const uint64_t *a = sc->args;
	int dirfd = sc->call == PT_EXECVEAT ? (int)a[0] : AT_FDCWD;
	char *path = resolve_arg(tr, t, dirfd, sc->call == PT_EXECVEAT ? a[1] : a[0]);
	struct stat st;

	free(t->exec.path);
	t->exec.path = path;
	t->exec.set = path && stat(path, &st) == 0;
	if (t->exec.set) {
		t->exec.dev = st.st_dev;
		t->exec.ino = st.st_ino;
	}
	if (t->preexec)
		return;	/* hotset's own code looking the command up in PATH */
	pt_fd_look(tr, t);
	if (!t->vfork_child)
		pt_mm_scan(tr, t, 0, UINT64_MAX);
}

static void on_exit_group(struct pt_tracer *tr, struct pt_task *t)
{
	pt_fd_look(tr, t);
	if (!t->vfork_child && t->mm) {	/* a vfork child shares its parent's */
		pt_mm_scan(tr, t, 0, UINT64_MAX);
		t->mm->final_scanned = true;
	}
}

/* open and friends to write, create or truncate: see their result at the exit. */
#define EXISTED (1ull << 40)

static bool on_open(struct pt_tracer *tr, struct pt_task *t, const struct pt_syscall *sc)
{
	const uint64_t *a = sc->args;
	uint64_t flags, path_arg;
	int dirfd = AT_FDCWD;

	switch (sc->call) {
	case PT_OPEN:
		flags = a[1];
		path_arg = a[0];
		break;
	case PT_CREAT:
		flags = O_CREAT | O_WRONLY | O_TRUNC;
		path_arg = a[0];
		break;
	case PT_OPENAT2:	/* struct open_how: flags come first */
		if (a[3] < 8 || read_mem(t->tid, &flags, a[2], sizeof(flags)))
			return false;
		dirfd = (int)a[0];
		path_arg = a[1];
		break;
	default:
		flags = a[2];
		dirfd = (int)a[0];
		path_arg = a[1];
		break;
	}
	flags &= 0xffffffffu;
	if (!(flags & (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC)))
		return false;
	if (flags & O_TRUNC)
		pt_fd_look(tr, t);	/* what was read of it before it is emptied */
	t->aux = (int64_t)flags;
	/* O_CREAT|O_TRUNC of a file that exists (a shell's >) truncates it: the
	   same file, not a new one, so what was read of it before stays input */
	if ((flags & O_CREAT) && !(flags & O_EXCL)) {
		char path[PATH_MAX], full[PATH_MAX + 64];
		struct stat st;

		if (!read_string(t->tid, path, path_arg, sizeof(path), tr->page_size) &&
		    !tracee_path(t, dirfd, path, full, sizeof(full)) && stat(full, &st) == 0)
			t->aux |= (int64_t)EXISTED;
	}
	return true;
}

static void on_opened(struct pt_tracer *tr, struct pt_task *t, int fd)
{
	uint64_t flags = (uint64_t)t->aux;
	unsigned acc = flags & O_ACCMODE;
	bool created = (flags & O_CREAT) && ((flags & O_EXCL) || !(flags & EXISTED)),
	     output = created || (flags & O_TRUNC);
	char link[64], name[PATH_MAX + 16];
	struct pt_ofd *ofd;
	ssize_t n;

	if (!t->fds)
		return;
	ofd = pt_ofd_new(0, output || acc == O_WRONLY ? PT_OFD_SKIP : PT_OFD_UNKNOWN);
	if (!ofd) {
		tr->error = -ENOMEM;
		return;
	}
	pt_fd_set(tr, t->fds, fd, ofd);	/* a fresh description, at position 0 */
	pt_ofd_put(ofd);
	if (!output && acc != O_WRONLY)
		return;	/* read like any other (O_RDWR: flagged written when read) */
	snprintf(link, sizeof(link), "/proc/%d/fd/%d", (int)t->tid, fd);
	n = readlink(link, name, sizeof(name) - 1);
	if (n > 0) {
		struct pt_file *f;

		name[n] = '\0';
		f = pt_file_lookup(tr, link, name, 0, created ? PT_LOOKUP_CREATED : 0);
		if (f && output)
			pt_file_output(tr, f);
		else if (f)
			pt_file_flag(tr, f, HS_FILE_WRITTEN);
	}
}

/* prctl(PR_SET_DUMPABLE, 0): make it PR_SET_DUMPABLE 1, which changes nothing. */
static void keep_dumpable(struct pt_tracer *tr, struct pt_task *t, const struct pt_syscall *sc)
{
	if (sc->args[0] != PR_SET_DUMPABLE || sc->args[1] != 0)
		return;
#ifdef __x86_64__
	/* the second argument: rsi, or ecx for i386 */
	ptrace(PTRACE_POKEUSER, t->tid, sc->split64 ? offsetof(struct user_regs_struct, rcx) :
	       offsetof(struct user_regs_struct, rsi), 1);
#else
	(void)t;
#endif
}

/* A trapped call, before it runs; returns true to stop again at its exit. */
static bool on_entry(struct pt_tracer *tr, struct pt_task *t, const struct pt_syscall *sc)
{
	const uint64_t *a = sc->args;
	int64_t off;

	switch (sc->call) {
	case PT_CLOSE: {
		struct hs_fdinfo fi;

		pt_fd_sample(tr, t, (int)a[0], true, &fi);
		return false;
	}
	case PT_CLOSE_RANGE:
		return on_close_range(tr, t, a);
	case PT_DUP:
		return true;
	case PT_FCNTL:
		return (int)a[1] == F_DUPFD || (int)a[1] == F_DUPFD_CLOEXEC;
	case PT_DUP2:
	case PT_DUP3:
		if ((int)a[0] != (int)a[1]) {
			struct hs_fdinfo fi;

			pt_fd_sample(tr, t, (int)a[1], false, &fi);	/* closed by the call */
		}
		return true;
	case PT_LSEEK:
	case PT_LLSEEK:
		return on_lseek(tr, t, sc);
	case PT_PREAD:
		off = (int64_t)(sc->split64 ? a[3] | a[4] << 32 : a[3]);
		pt_fd_read_at(tr, t, (int)a[0], (uint64_t)off, a[2], true);
		return false;
	case PT_PREADV:
	case PT_PREADV2:
		off = (int64_t)(sc->split64 ? a[3] | a[4] << 32 : a[3]);
		if (off < 0)	/* preadv2 at offset -1: at the position, which moves */
			return false;
		pt_fd_read_at(tr, t, (int)a[0], (uint64_t)off, iov_total(t->tid, a[1], a[2], sc->compat),
			      true);
		return false;
	case PT_SENDFILE:
	case PT_SENDFILE64:
		if (!read_offset(t, a[2], sc->call == PT_SENDFILE && sc->split64, &off))
			return false;	/* from the position: sampling sees it */
		t->aux = off;
		return true;
	case PT_SPLICE:
	case PT_COPY_FILE_RANGE:
		if (!read_offset(t, a[1], false, &off))
			return false;
		t->aux = off;
		return true;
	case PT_MMAP:
	case PT_MMAP_PGOFF:
		if (a[3] & MAP_FIXED)
			scan_range(tr, t, a[0], a[1]);
		return false;
	case PT_OLD_MMAP: {	/* i386 mmap(struct { addr, len, prot, flags, fd, off } *) */
		uint32_t m[6];

		if (!read_mem(t->tid, m, a[0], sizeof(m)) && (m[3] & MAP_FIXED))
			scan_range(tr, t, m[0], m[1]);
		return false;
	}
	case PT_MUNMAP:
	case PT_MREMAP:
		scan_range(tr, t, a[0], a[1]);
		return false;
	case PT_MADVISE:
		switch ((int)a[2]) {
		case MADV_DONTNEED: case MADV_REMOVE: case MADV_PAGEOUT: case MADV_DONTNEED_LOCKED:
			scan_range(tr, t, a[0], a[1]);
		}
		return false;
	case PT_EXECVE:
	case PT_EXECVEAT:
		on_execve(tr, t, sc);
		return false;
	case PT_EXIT_GROUP:
		on_exit_group(tr, t);
		return false;
	case PT_OPEN:
	case PT_OPENAT:
	case PT_OPENAT2:
	case PT_CREAT:
		return on_open(tr, t, sc);
	case PT_TRUNCATE:
	case PT_TRUNCATE64:
		pt_fd_look(tr, t);	/* what was read of it before it is cut */
		free(t->truncated);
		t->truncated = resolve_arg(tr, t, AT_FDCWD, a[0]);
		return t->truncated != NULL;
	case PT_PRCTL:
		keep_dumpable(tr, t, sc);
		return false;
	case PT_UNSHARE:	/* the copy is made by the call: take it at its exit */
		return (a[0] & CLONE_FILES) != 0;
	default:
		return false;	/* rename: stopping is the point (pending stats run first) */
	}
}

/* The exit of the call t was resumed into (only successful ones matter). */
static void on_exit_stop(struct pt_tracer *tr, struct pt_task *t, int64_t rval)
{
	const uint64_t *a = t->call.args;
	struct hs_fdinfo fi;

	switch (t->call.call) {
	case PT_DUP:
	case PT_FCNTL:
	case PT_DUP2:
	case PT_DUP3:
		if (t->fds && (int)rval != (int)a[0])
			pt_fd_dup(tr, t, (int)a[0], (int)rval);
		break;
	case PT_LSEEK:	/* returns where it landed */
		pt_seek_end(t, true, rval);
		break;
	case PT_LLSEEK:	/* writes it to memory: read the position */
		if (t->fds && pt_fdinfo_read(tr, t, (int)a[0], &fi) == 0)
			pt_seek_end(t, true, fi.pos);
		break;
	case PT_SENDFILE:
	case PT_SENDFILE64:
		pt_fd_read_at(tr, t, (int)a[1], (uint64_t)t->aux, (uint64_t)rval, false);
		break;
	case PT_SPLICE:
	case PT_COPY_FILE_RANGE:
		pt_fd_read_at(tr, t, (int)a[0], (uint64_t)t->aux, (uint64_t)rval, false);
		break;
	case PT_OPEN:
	case PT_OPENAT:
	case PT_OPENAT2:
	case PT_CREAT:
		on_opened(tr, t, (int)rval);
		break;
	case PT_UNSHARE:
	case PT_CLOSE_RANGE:	/* with CLOSE_RANGE_UNSHARE: the copy is made */
		unshare_fds(tr, t);
		break;
	case PT_TRUNCATE:
	case PT_TRUNCATE64:
		if (t->truncated) {
			struct pt_file *f = pt_file_lookup(tr, t->truncated, t->truncated, 0, 0);

			if (f)
				pt_file_output(tr, f);
		}
		break;
	default:
		break;
	}
}

/* ---- events ------------------------------------------------------------------------ */

/* Do two tasks share a kernel object (KCMP_FILES, KCMP_VM)? -1 if unknown. */
static int shares(pid_t a, pid_t b, int type)
{
	long r = syscall(SYS_kcmp, a, b, type, 0, 0);

	return r < 0 ? -1 : r == 0;
}

static pid_t tgid_of(pid_t tid)
{
	char path[64], buf[1024];
	uint64_t tgid;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	if (hs_procfs_read(path, buf, sizeof(buf)) > 0 && hs_procfs_find_u64(buf, "Tgid", &tgid))
		return (pid_t)tgid;
	return tid;
}

/* Parent t forked, vforked or cloned child c (ev: the PTRACE_EVENT). */
static void on_new_child(struct pt_tracer *tr, struct pt_task *t, struct pt_task *c, int ev)
{
	int files, vm;

	c->vfork_child = ev == PTRACE_EVENT_VFORK;
	if (!tr->recording)
		goto start;
	c->tgid = ev == PTRACE_EVENT_CLONE ? tgid_of(c->tid) : c->tid;
	files = shares(t->tid, c->tid, KCMP_FILES);
	vm = shares(t->tid, c->tid, KCMP_VM);
	if (files < 0)
		files = ev == PTRACE_EVENT_CLONE;
	if (vm < 0)
		vm = ev != PTRACE_EVENT_FORK;
	if (!c->fds) {
		if (files && t->fds) {
			c->fds = t->fds;
			t->fds->users++;
		} else {
			c->fds = pt_fdtable_fork(tr, t, c);
		}
	}
	if (!c->mm) {
		if (vm && t->mm) {
			c->mm = t->mm;
			t->mm->users++;
		} else {
			c->mm = pt_mm_new(tr);
		}
	}
start:
	c->preexec = false;
	if (c->held && !c->copy_of) {	/* its first stop came first: let it go now */
		c->held = false;
		c->started = true;
		resume(c, PTRACE_CONT, 0);
	}
}

/* Task t (or the thread whose tid it took) has exec'd. */
static struct pt_task *on_exec(struct pt_tracer *tr, struct pt_task *t, pid_t former,
			       struct hs_job *job, struct pt_outcome *out)
{
	struct pt_task *old = former != t->tid ? task_find(tr, former) : NULL;
	struct stat exe;
	char path[64];

	if (old) {	/* a thread other than the leader exec'd: it takes the leader's tid */
		pid_t tid = t->tid;

		task_free(tr, t);
		u64map_del(&tr->tasks, (uint64_t)former);
		old->tid = tid;
		if (u64map_put(&tr->tasks, (uint64_t)tid, old))
			tr->error = -ENOMEM;
		t = old;
	}
	if (t->preexec && t->tid == tr->root) {
		const char *stage = NULL;

		/* the exec-status pipe closed with the exec: nothing in it */
		out->exec_error = hs_job_exec_result(job, &stage);
	}
	t->preexec = false;
	t->vfork_child = false;
	if (!tr->recording)
		return t;
	pt_mm_put(tr, t->mm);
	t->mm = pt_mm_new(tr);
	t->fds = pt_fdtable_after_exec(tr, t);
	pt_mm_exec_headers(tr, t);
	/* a #! script: the kernel read its first line, then ran its interpreter */
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)t->tid);
	if (t->exec.set && stat(path, &exe) == 0 &&
	    (exe.st_dev != t->exec.dev || exe.st_ino != t->exec.ino)) {
		struct pt_file *f = pt_file_lookup(tr, t->exec.path, t->exec.path, t->exec.ino, 0);

		if (f)
			pt_queue_access(tr, f, 0, 1, HS_FILE_EXEC);
	}
	return t;
}

/*
 * PTRACE_EVENT_EXIT: t is about to exit; its files and memory are still
 * there. Returns false if t is to stay stopped until its look is done.
 */
static bool on_exit_event(struct pt_tracer *tr, struct pt_task *t)
{
	bool looked = true;

	if (tr->recording && !t->preexec) {
		/* a thread's fds stay with the tasks it shared them with */
		if (t->fds && t->fds->users == 1)
			looked = pt_fd_look(tr, t);
		if (t->mm && !t->mm->final_scanned && !t->vfork_child &&
		    (t->mm->users == 1 || t->tid == t->tgid)) {
			pt_mm_scan(tr, t, 0, UINT64_MAX);
			t->mm->final_scanned = true;
		}
	}
	if (!looked) {
		t->look_then = LOOK_LEAVE;
		return false;
	}
	task_leave(tr, t);
	return true;
}

/* A stop at a trapped call's entry. */
static void on_seccomp_stop(struct pt_tracer *tr, struct pt_task *t)
{
	struct __ptrace_syscall_info si;
	struct pt_syscall sc;
	bool want_exit = false;

	tr->stats.seccomp++;
	if (!tr->recording ||
	    ptrace(PTRACE_GET_SYSCALL_INFO, t->tid, sizeof(si), &si) <= 0 ||
	    si.op != PTRACE_SYSCALL_INFO_SECCOMP) {
		resume(t, PTRACE_CONT, 0);
		return;
	}
	if (!pt_decode(si.arch, si.seccomp.nr, si.seccomp.args, &sc)) {
		warn_abi(tr, t, si.arch);
	} else if (!t->preexec || sc.call == PT_EXECVE || sc.call == PT_EXECVEAT) {
		t->call = sc;
		if (tr->opts->trace && !t->preexec)
			pt_fd_sample_inputs(tr, t);	/* what was read before this stop, first */
		want_exit = on_entry(tr, t, &sc);
	}
	t->at_exit = want_exit;
	if (t->unlooked) {	/* stays stopped until its look is done */
		t->look_then = want_exit ? PTRACE_SYSCALL : PTRACE_CONT;
		return;
	}
	resume(t, want_exit ? PTRACE_SYSCALL : PTRACE_CONT, 0);
}

static void on_syscall_exit_stop(struct pt_tracer *tr, struct pt_task *t)
{
	struct __ptrace_syscall_info si;

	tr->stats.exits++;
	if (t->at_exit && tr->recording &&
	    ptrace(PTRACE_GET_SYSCALL_INFO, t->tid, sizeof(si), &si) > 0 &&
	    si.op == PTRACE_SYSCALL_INFO_EXIT && !si.exit.is_error)
		on_exit_stop(tr, t, si.exit.rval);
	pt_seek_end(t, false, 0);	/* a seek that failed: the position stays */
	t->at_exit = false;
	if (!t->parked)
		resume(t, PTRACE_CONT, 0);
}

static bool is_stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/* ---- the loop -------------------------------------------------------------------------- */

struct run {
	struct hs_job job;
	struct pt_outcome out;
	bool root_gone;
};

static void on_status(struct pt_tracer *tr, struct run *run, pid_t tid, int status)
{
	struct pt_task *t = task_find(tr, tid);
	unsigned long msg = 0;
	int sig, ev;

	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		if (tid == tr->root) {
			run->out.wait_status = status;
			run->root_gone = true;
		}
		if (t)
			task_free(tr, t);
		return;
	}
	if (!WIFSTOPPED(status))
		return;
	if (!t && !(t = task_get(tr, tid))) {
		ptrace(PTRACE_CONT, tid, 0, 0);
		return;
	}
	t->stops++;
	if (t->unlooked)	/* kept stopped, it stops again: killed (SIGKILL wakes it) */
		pt_fd_look_drop(tr, t);
	sig = WSTOPSIG(status);
	ev = (unsigned)status >> 16;
	if (ev != PTRACE_EVENT_SECCOMP)
		tr->stats.events++;
	if (sig == (SIGTRAP | 0x80)) {
		on_syscall_exit_stop(tr, t);
		return;
	}
	switch (ev) {
	case 0:	/* a signal for the task: hand it over */
		resume(t, PTRACE_CONT, sig);
		return;
	case PTRACE_EVENT_SECCOMP:
		on_seccomp_stop(tr, t);
		return;
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
	case PTRACE_EVENT_CLONE: {
		struct pt_task *c;

		if (ptrace(PTRACE_GETEVENTMSG, tid, 0, &msg) == 0 && (c = task_get(tr, (pid_t)msg)))
			on_new_child(tr, t, c, ev);
		resume(t, PTRACE_CONT, 0);
		return;
	}
	case PTRACE_EVENT_EXEC:
		if (ptrace(PTRACE_GETEVENTMSG, tid, 0, &msg) < 0)
			msg = (unsigned long)tid;
		t = on_exec(tr, t, (pid_t)msg, &run->job, &run->out);
		resume(t, PTRACE_CONT, 0);
		return;
	case PTRACE_EVENT_EXIT:
		if (on_exit_event(tr, t))
			resume(t, PTRACE_CONT, 0);
		return;
	case PTRACE_EVENT_STOP:
		if (!t->started) {	/* a new child's first stop */
			if ((t->fds && !t->copy_of) || !tr->recording || t->tid == tr->root) {
				t->started = true;
				resume(t, PTRACE_CONT, 0);
			} else {
				t->held = true;	/* until its parent's event says what it shares */
			}
		} else if (is_stop_signal(sig)) {
			resume(t, PTRACE_LISTEN, 0);	/* a group stop: stay stopped */
			if (t->tid == tr->root && tr->recording)
				pt_report_stopped(tr, sig);	/* hotset follows it */
		} else {
			resume(t, PTRACE_CONT, 0);
		}
		return;
	default:
		resume(t, PTRACE_CONT, 0);
	}
}

static volatile sig_atomic_t scan_due;

static void on_alarm(int sig)
{
	(void)sig;
	scan_due = 1;
}

/* Sample every table and scan every address space (periodically, and at the end). */
static void sweep(struct pt_tracer *tr, bool fds_too)
{
	static unsigned mark;
	size_t pos = 0;
	void *val;

	mark++;
	while (u64map_next(&tr->tasks, &pos, NULL, &val)) {
		struct pt_task *t = val;

		if (!t->started || t->preexec)
			continue;
		if (fds_too && t->fds && t->fds->mark != mark) {
			t->fds->mark = mark;
			pt_fd_sample_all(tr, t);
		}
		if (t->mm && t->mm->mark != mark) {
			t->mm->mark = mark;
			pt_mm_scan(tr, t, 0, UINT64_MAX);
		}
	}
	pt_flush(tr);
}

/* A task kept stopped until its copy of a table was settled goes on. */
static void go_on(struct pt_task *t)
{
	if (t->held) {
		t->held = false;
		t->started = true;
		resume(t, PTRACE_CONT, 0);
	} else if (t->parked) {
		t->parked = false;
		resume(t, PTRACE_CONT, 0);
	}
}

/* A task kept stopped until its look was done goes on as it would have. */
static void look_done(struct pt_tracer *tr, struct pt_task *t)
{
	if (t->look_then == LOOK_LEAVE) {
		task_leave(tr, t);
		resume(t, PTRACE_CONT, 0);
	} else {
		resume(t, t->look_then, 0);
	}
}

/*
 * Settle the copies whose fds waited for a close to run (closing:
 * pt_fdtable_fork) and the looks that did (pt_fd_look), or, once
 * recording is over, give them up. A look still waiting after a whole
 * scan interval (a close that does not return, its closer never stops) is
 * given up too, its fds unsampled: the job does not stay stopped for it.
 */
static void settle(struct pt_tracer *tr)
{
	size_t pos = 0;
	void *val;

	while ((tr->deciding || tr->looking) && u64map_next(&tr->tasks, &pos, NULL, &val)) {
		struct pt_task *t = val;

		if (t->unlooked) {
			if (!tr->recording || tr->ticks - t->look_tick >= 2)
				pt_fd_look_drop(tr, t);
			if (pt_fd_look_on(tr, t))
				look_done(tr, t);
		}
		if (!t->copy_of)
			continue;
		if (!tr->recording)
			pt_fdtable_undecided_drop(tr, t);
		if (pt_fdtable_decide(tr, t))
			go_on(t);
	}
}

/* Processes (not threads) still traced, the first one aside. */
static int processes_left(struct pt_tracer *tr)
{
	struct u64map seen = { 0 };
	size_t pos = 0;
	void *val;
	int n = 0;

	while (u64map_next(&tr->tasks, &pos, NULL, &val)) {
		struct pt_task *t = val;

		if (t->tgid != tr->root && !u64map_get(&seen, (uint64_t)t->tgid)) {
			u64map_put(&seen, (uint64_t)t->tgid, t);
			n++;
		}
	}
	u64map_free(&seen);
	return n;
}

/* HOTSET_PTRACE_STATS=1: what the tracer did, as a warning. */
static void report_stats(struct pt_tracer *tr)
{
	struct rusage ru;
	const char *env = getenv("HOTSET_PTRACE_STATS");

	if (!env || strcmp(env, "1") || getrusage(RUSAGE_SELF, &ru))
		return;
	pt_report_warning(tr, "ptrace stats: %llu seccomp stops, %llu exit stops, %llu other "
			  "stops; %llu samples, %llu reads at offsets, %llu idents, %llu stats, "
			  "%llu scans; tracer CPU %.3f s user %.3f s system",
			  (unsigned long long)tr->stats.seccomp, (unsigned long long)tr->stats.exits,
			  (unsigned long long)tr->stats.events, (unsigned long long)tr->stats.samples,
			  (unsigned long long)tr->stats.reads_at, (unsigned long long)tr->stats.idents,
			  (unsigned long long)tr->stats.lookups, (unsigned long long)tr->stats.scans,
			  ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
			  ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
}

/* The first process is gone: tell hotset, and let go of anything stopped. */
static void finish(struct pt_tracer *tr, struct run *run)
{
	size_t pos = 0;
	void *val;

	sweep(tr, true);	/* what processes left running have read so far */
	tr->recording = false;
	settle(tr);
	report_stats(tr);
	if (tr->too_long)
		pt_report_warning(tr, "%llu read%s of files whose paths are too long to record "
				  "(over PATH_MAX) left out", (unsigned long long)tr->too_long,
				  tr->too_long == 1 ? "" : "s");
	if (run->job.status_fd >= 0) {	/* it never exec'd */
		const char *stage = "exec";
		int rc = hs_job_exec_result(&run->job, &stage);

		if (rc) {
			run->out.exec_error = rc;
			run->out.exec_stage = !strcmp(stage, "cgroup") ? 1 :
					      !strcmp(stage, "setup") ? 2 : 3;
		}
	}
	run->out.still_running = processes_left(tr);
	run->out.lost = tr->lost;
	run->out.tracer_stays = tr->tasks.count > 0;
	/* hotset counts the job as we reaped it: its own children hold us too */
	hs_usage_reaped(&run->out.usage);
	if (tr->error && !run->out.error) {
		run->out.error = tr->error;
		snprintf(run->out.message, sizeof(run->out.message), "%s", strerror(-tr->error));
	}
	pt_report_end(tr, &run->out);
	while (u64map_next(&tr->tasks, &pos, NULL, &val)) {
		struct pt_task *t = val;

		if (t->held) {
			t->held = false;
			t->started = true;
			resume(t, PTRACE_CONT, 0);
		}
	}
}

/* ---- starting the job -------------------------------------------------------------- */

struct launch {
	struct hs_job_gate gate;	/* the job waits until it is seized */
	struct sock_fprog prog;
};

/* In the job's first process, after fork: wait, install the filter (async-signal-safe). */
static int before_exec(void *ctx)
{
	const struct launch *l = ctx;

	if (hs_job_gate_wait(&l->gate))
		return -ECANCELED;	/* the tracer went away */
	/* without CAP_SYS_ADMIN a filter needs no_new_privs (setuid programs lose it) */
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &l->prog) == 0)
		return 0;
	if (errno != EACCES)
		return -errno;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &l->prog) < 0)
		return -errno;
	return 0;
}

void pt_explain_seize(int err, char *msg, size_t cap)
{
	char buf[64] = "";
	FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
	int scope = -1;

	if (f) {
		if (fgets(buf, sizeof(buf), f))
			scope = atoi(buf);
		fclose(f);
	}
	if (err == EPERM && scope >= 2)
		snprintf(msg, cap, "ptrace is not allowed here (kernel.yama.ptrace_scope = %d%s); "
			 "the bpf backend (root) does not need it", scope,
			 scope == 2 ? ": it needs CAP_SYS_PTRACE" : "");
	else if (err == EPERM)
		snprintf(msg, cap, "ptrace is not allowed here (%s): is hotset itself traced "
			 "(strace, a debugger), or in a container that forbids ptrace?",
			 strerror(err));
	else
		snprintf(msg, cap, "cannot trace the job: PTRACE_SEIZE: %s", strerror(err));
}

/*
 * Signals the tracer must survive, being in hotset's process group: those
 * hotset passes on to the job (the job gets them from hotset) and the
 * terminal's.
 */
static const int ignored[] = { SIGPIPE, SIGTSTP, SIGTTIN, SIGTTOU };

static void tracer_signals(void)
{
	struct sigaction sa;
	struct itimerval it = { { SCAN_INTERVAL_SEC, 0 }, { SCAN_INTERVAL_SEC, 0 } };
	sigset_t passed_on;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	hs_job_signal_set(&passed_on);
	for (int sig = 1; sig < NSIG; sig++)
		if (sigismember(&passed_on, sig) == 1)
			sigaction(sig, &sa, NULL);
	for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
		sigaction(ignored[i], &sa, NULL);
	sa.sa_handler = on_alarm;	/* no SA_RESTART: waitpid returns to scan */
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
}

/* After the outcome is sent: follow what is left, quietly, until it exits. */
static void stay_for_the_rest(void)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	struct itimerval off = { { 0, 0 }, { 0, 0 } };

	setitimer(ITIMER_REAL, &off, NULL);
	prctl(PR_SET_PDEATHSIG, 0, 0, 0, 0);	/* hotset exits now; we stay */
	if (null >= 0) {	/* do not hold hotset's output open */
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		close(null);
	}
}

static bool can_trace_nondumpable(void)
{
	char buf[4096], *s;
	unsigned long long eff = 0;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return false;
	while (fgets(buf, sizeof(buf), f))
		if ((s = strstr(buf, "CapEff:")) == buf)
			eff = strtoull(s + 7, NULL, 16);
	fclose(f);
	return eff >> 19 & 1;	/* CAP_SYS_PTRACE */
}

/*
 * The next stop of any task. A job that stops every few tens of µs (tar
 * of many small files: a stop per file) would also pay, at each stop, for
 * waking the sleeping tracer, and on a virtual machine's idle CPU that
 * costs about a fifth of the stop. While stops come that fast, the tracer
 * polls for up to SPIN_NS before it sleeps: it polls again only after a
 * wait shorter than that, so a job that stops seldom costs nothing. With
 * one CPU, polling would only keep the job from running: *spin starts
 * false and stays so (see can_spin).
 */
#define SPIN_NS 50000

static bool can_spin;	/* the tracer may run on more than one CPU */

static pid_t wait_next(bool *spin, int *status)
{
	uint64_t t0 = hs_monotonic_ns();
	pid_t tid;

	if (*spin) {
		do {
			if ((tid = waitpid(-1, status, __WALL | WNOHANG)) != 0)
				return tid;
		} while (hs_monotonic_ns() - t0 < SPIN_NS);
	}
	tid = waitpid(-1, status, __WALL);
	*spin = can_spin && hs_monotonic_ns() - t0 < SPIN_NS;
	return tid;
}

int pt_tracer_run(const struct hs_record_opts *o, int report_fd)
{
	struct pt_tracer tr = {
		.opts = o, .page_size = hs_page_size(), .report_fd = report_fd,
		.recording = true, .procmap_query = -1,
	};
	struct launch l = { { -1, -1 }, { 0, NULL } };
	struct hs_job_spec spec = {
		.argv = o->argv, .before_exec = before_exec, .ctx = &l,
		.cgroup_procs = o->cgroup_procs,
	};
	struct run run = { .job = { .pid = -1, .status_fd = -1 } };
	const long options = PTRACE_O_TRACESECCOMP | PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK |
			     PTRACE_O_TRACEVFORK | PTRACE_O_TRACEEXEC | PTRACE_O_TRACEEXIT |
			     PTRACE_O_EXITKILL | PTRACE_O_TRACESYSGOOD;
	pid_t hotset = getppid();
	struct pt_task *root;
	struct rlimit rl;
	bool spin = false;
	cpu_set_t cpus;
	int rc, status;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != hotset)
		return 1;	/* hotset is gone already */
	prctl(PR_SET_NAME, "hotset-tracer", 0, 0, 0);	/* for ps, when it outlives hotset */
	if ((rc = pt_filter_build(!can_trace_nondumpable(), &l.prog)) ||
	    (rc = hs_job_gate_init(&l.gate))) {
		run.out.error = rc;
		snprintf(run.out.message, sizeof(run.out.message), "%s", strerror(-run.out.error));
		goto report;
	}
	if ((rc = hs_job_start(&spec, &run.job))) {
		run.out.error = rc;
		snprintf(run.out.message, sizeof(run.out.message), "cannot start %s: %s",
			 o->argv[0], strerror(-rc));
		goto report;
	}
	tracer_signals();
	if (sched_getaffinity(0, sizeof(cpus), &cpus) == 0)
		can_spin = CPU_COUNT(&cpus) > 1;
	/* fdinfo handles: one per fd sampled, as many as allowed */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	tr.root = run.job.pid;
	if (ptrace(PTRACE_SEIZE, tr.root, 0, options) < 0) {
		run.out.error = -errno;
		pt_explain_seize(errno, run.out.message, sizeof(run.out.message));
		hs_job_gate_close(&l.gate);	/* the child sees EOF and gives up */
		waitpid(tr.root, &status, 0);
		goto report;
	}
	if (!(root = task_get(&tr, tr.root)) || !(root->fds = pt_fdtable_new(&tr)) ||
	    !(root->mm = pt_mm_new(&tr))) {
		kill(tr.root, SIGKILL);
		run.out.error = -ENOMEM;
		snprintf(run.out.message, sizeof(run.out.message), "out of memory");
		goto report;
	}
	root->started = root->preexec = true;
	pt_fdtable_adopt_inherited(&tr, root);	/* positions now: reads start there */
	pt_report_started(&tr, tr.root);
	if (hs_job_gate_open(&l.gate))
		kill(tr.root, SIGKILL);

	for (;;) {
		pid_t tid = wait_next(&spin, &status);

		if (tid < 0 && errno != EINTR)
			break;	/* ECHILD: nobody left */
		if (tid > 0)
			on_status(&tr, &run, tid, status);
		if (scan_due) {	/* the timer rang (waitpid returned, or after the stop) */
			scan_due = 0;
			tr.ticks++;
			if (tr.recording)
				sweep(&tr, false);
		}
		if (tr.deciding || tr.looking)
			settle(&tr);
		if (tr.npending)
			pt_flush(&tr);
		if (run.root_gone && tr.recording) {
			finish(&tr, &run);
			if (!tr.tasks.count)
				break;
			stay_for_the_rest();
		}
	}
	if (tr.recording) {	/* ECHILD before the first process's exit: cannot be */
		run.out.error = -ECHILD;
		snprintf(run.out.message, sizeof(run.out.message), "lost track of the job");
		goto report;
	}
	goto out;
report:
	pt_report_end(&tr, &run.out);
out:
	hs_job_gate_close(&l.gate);
	free(l.prog.filter);
	return 0;
}
