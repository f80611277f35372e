/*
 * record-ptrace-tracee.c - reading a tracee stopped at a system call: its
 * memory (process_vm_readv: the arguments a call points to) and the paths
 * its calls name, made into paths the tracer can use.
 *
 * A path argument means something only in the tracee: relative to its
 * working directory or to one of its fds, and "/proc/self" there is the
 * tracee, not the tracer. pt_tracee_path rewrites it through /proc/TID so
 * that the tracer names the same file; an absolute path is taken as it is.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "record/ptrace/record-ptrace.h"

/* len bytes at the tracee's addr into dst: 0, or -1 unless all were read. */
int pt_read_mem(pid_t tid, void *dst, uint64_t addr, size_t len)
{
	struct iovec local = { dst, len }, remote = { (void *)(uintptr_t)addr, len };

	return process_vm_readv(tid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -1;
}

/* A NUL-terminated string at addr (at most cap - 1 bytes); 0 or -1. */
int pt_read_string(pid_t tid, char *dst, uint64_t addr, size_t cap, uint32_t page_size)
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
uint64_t pt_iov_total(pid_t tid, uint64_t addr, uint64_t count, bool compat)
{
	uint64_t total = 0;

	if (count > 1024)
		return 0;	/* the call fails with EINVAL */
	while (count) {
		uint32_t v32[128];
		struct iovec v[64];
		size_t n = count > 64 ? 64 : (size_t)count;

		if (compat) {
			if (pt_read_mem(tid, v32, addr, n * 8))
				break;
			for (size_t i = 0; i < n; i++)
				total += v32[2 * i + 1];
			addr += n * 8;
		} else {
			if (pt_read_mem(tid, v, addr, n * sizeof(v[0])))
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
int pt_tracee_path(const struct pt_task *t, int dirfd, const char *path, char *out, size_t cap)
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
char *pt_resolve_arg(struct pt_tracer *tr, const struct pt_task *t, int dirfd, uint64_t addr)
{
	char path[PATH_MAX], full[PATH_MAX + 64];

	if (pt_read_string(t->tid, path, addr, sizeof(path), tr->page_size) ||
	    pt_tracee_path(t, dirfd, path, full, sizeof(full)))
		return NULL;
	return realpath(full, NULL);
}
