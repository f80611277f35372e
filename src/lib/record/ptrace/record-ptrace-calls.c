/*
 * record-ptrace-calls.c - what a trapped system call means for the working
 * set: at its entry, before it runs (the position of an fd sampled before
 * close lets go of it or lseek moves it, a read at an offset recorded from
 * its arguments, the pages of a mapping scanned before munmap drops them),
 * and at its exit, for the calls whose result matters (the fd dup
 * returned, where lseek landed, what sendfile read, the file open created).
 *
 * Which calls stop the job at all is the filter's (record-ptrace-filter.c,
 * which also decodes them); what a stop is, and when it comes, is
 * record-ptrace-stops.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/user.h>
#include <unistd.h>

#include "record/ptrace/record-ptrace.h"

#ifndef CLOSE_RANGE_UNSHARE
#define CLOSE_RANGE_UNSHARE 2
#define CLOSE_RANGE_CLOEXEC 4
#endif

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
		if (pt_read_mem(t->tid, &o32, ptr, sizeof(o32)))
			return false;
		*off = o32;
		return true;
	}
	return pt_read_mem(t->tid, off, ptr, sizeof(*off)) == 0;
}

/* exec: what is read before the image goes, and which file it runs. */
static void on_execve(struct pt_tracer *tr, struct pt_task *t, const struct pt_syscall *sc)
{
	const uint64_t *a = sc->args;
	int dirfd = sc->call == PT_EXECVEAT ? (int)a[0] : AT_FDCWD;
	char *path = pt_resolve_arg(tr, t, dirfd, sc->call == PT_EXECVEAT ? a[1] : a[0]);
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

/*
 * exit_group: the process's fds and pages, looked at while all its threads
 * still hold them (a thread's exit event looks only at a table it alone uses).
 */
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
		if (a[3] < 8 || pt_read_mem(t->tid, &flags, a[2], sizeof(flags)))
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

		if (!pt_read_string(t->tid, path, path_arg, sizeof(path), tr->page_size) &&
		    !pt_tracee_path(t, dirfd, path, full, sizeof(full)) && stat(full, &st) == 0)
			t->aux |= (int64_t)EXISTED;
	}
	return true;
}

/* The exit of such an open: a fresh description at fd; its file an output, or written. */
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

/*
 * A trapped call, before it runs; returns true to stop again at its exit.
 * One switch over the calls the filter traps, a case each, so that what
 * each call means is read in one place: it is long because the calls are
 * many, and each case is a line or two or a function of its own above.
 */
bool pt_call_entry(struct pt_tracer *tr, struct pt_task *t, const struct pt_syscall *sc)
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
		pt_fd_read_at(tr, t, (int)a[0], (uint64_t)off, pt_iov_total(t->tid, a[1], a[2], sc->compat),
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

		if (!pt_read_mem(t->tid, m, a[0], sizeof(m)) && (m[3] & MAP_FIXED))
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
		t->truncated = pt_resolve_arg(tr, t, AT_FDCWD, a[0]);
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
void pt_call_exit(struct pt_tracer *tr, struct pt_task *t, int64_t rval)
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
