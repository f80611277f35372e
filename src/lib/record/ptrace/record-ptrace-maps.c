/*
 * record-ptrace-maps.c - the pages of mapped files that the job touched,
 * for the ptrace backend.
 *
 * mmap itself does not stop the job. What its mappings brought in is read
 * from the page tables: /proc/PID/maps lists the file mappings, and
 * /proc/PID/pagemap says which of their pages are present (or swapped out,
 * for private pages the job wrote: they were read before being copied).
 * Since Linux 4.2 an unprivileged reader gets these bits, only not the
 * frame numbers. Pages present are pages faulted in, by the job or by the
 * kernel's fault-around: the profile says mmap_pages "faulted".
 *
 * The tables are read whenever pages could leave them: before munmap,
 * mremap, a MAP_FIXED mmap over a mapping, madvise(DONTNEED...), exec and
 * exit, and every few seconds in the background (the kernel may reclaim
 * pages that a long job touched once and left alone).
 *
 * Mappings are found with the PROCMAP_QUERY ioctl where the kernel has it
 * (6.11): one call per file mapping in the range instead of formatting and
 * parsing the whole of /proc/PID/maps at every munmap of anonymous memory.
 * The maps and pagemap handles are opened once per address space; they
 * stay bound to it (not to a thread) for as long as it exists.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "record/ptrace/record-ptrace.h"

/* linux/fs.h of 6.11; older headers do not have it. */
struct procmap_query {
	uint64_t size;
	uint64_t query_flags;
	uint64_t query_addr;
	uint64_t vma_start;
	uint64_t vma_end;
	uint64_t vma_flags;
	uint64_t vma_page_size;
	uint64_t vma_offset;
	uint64_t inode;
	uint32_t dev_major;
	uint32_t dev_minor;
	uint32_t vma_name_size;
	uint32_t build_id_size;
	uint64_t vma_name_addr;
	uint64_t build_id_addr;
};
#define PROCMAP_QUERY _IOWR('f', 17, struct procmap_query)
#define PROCMAP_QUERY_VMA_WRITABLE 0x02
#define PROCMAP_QUERY_VMA_EXECUTABLE 0x04
#define PROCMAP_QUERY_VMA_SHARED 0x08
#define PROCMAP_QUERY_COVERING_OR_NEXT_VMA 0x10
#define PROCMAP_QUERY_FILE_BACKED_VMA 0x20

#define PM_PRESENT (1ull << 63)
#define PM_SWAPPED (1ull << 62)

struct pt_mm *pt_mm_new(struct pt_tracer *tr)
{
	struct pt_mm *mm = calloc(1, sizeof(*mm));

	if (!mm) {
		tr->error = -ENOMEM;
		return NULL;
	}
	mm->users = 1;
	mm->maps_fd = mm->pagemap_fd = -1;
	mm->next = tr->mms;
	if (mm->next)
		mm->next->prev = mm;
	tr->mms = mm;
	return mm;
}

void pt_mm_put(struct pt_tracer *tr, struct pt_mm *mm)
{
	if (!mm || --mm->users > 0)
		return;
	if (mm->maps_fd >= 0)
		close(mm->maps_fd);
	if (mm->pagemap_fd >= 0)
		close(mm->pagemap_fd);
	if (mm->prev)
		mm->prev->next = mm->next;
	else
		tr->mms = mm->next;
	if (mm->next)
		mm->next->prev = mm->prev;
	free(mm);
}

/* Open t's maps and pagemap if this mm has none yet; false if they cannot be. */
static bool open_handles(struct pt_tracer *tr, struct pt_task *t, struct pt_mm *mm)
{
	char path[64];

	if (mm->maps_fd < 0) {
		snprintf(path, sizeof(path), "/proc/%d/maps", (int)t->tid);
		mm->maps_fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	if (mm->pagemap_fd < 0) {
		snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)t->tid);
		mm->pagemap_fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	if (mm->maps_fd >= 0 && mm->pagemap_fd >= 0)
		return true;
	if (errno == EACCES || errno == EPERM) {
		tr->lost++;
		if (!tr->warned_nondumpable) {
			tr->warned_nondumpable = true;
			pt_report_warning(tr, "process %d is not dumpable: the pages it maps are "
					  "not recorded", (int)t->tid);
		}
	}
	return false;
}

/* One file mapping, as either source describes it. */
struct vma {
	uint64_t start, end, offset, ino, dev;
	bool exec, shared_write;
	const char *name;
};

/* Report the pages of v within [lo, hi) that the page tables hold. */
static void scan_vma(struct pt_tracer *tr, struct pt_mm *mm, const struct vma *v, uint64_t lo,
		     uint64_t hi)
{
	uint64_t buf[1024], first_page, run_first = 0, run_last = 0;
	uint64_t a = v->start > lo ? v->start : lo, b = v->end < hi ? v->end : hi;
	uint32_t ps = tr->page_size;
	unsigned how = HS_FILE_MAPPED | (v->exec ? HS_FILE_EXEC : 0);
	struct pt_file *f = NULL;
	bool in_run = false;

	if (a >= b || hs_record_excluded(v->name, 0))
		return;
	a &= ~(uint64_t)(ps - 1);
	first_page = v->offset / ps + (a - v->start) / ps;
	for (uint64_t addr = a; addr < b;) {
		size_t n = (size_t)((b - addr + ps - 1) / ps);
		ssize_t got;

		if (n > sizeof(buf) / sizeof(buf[0]))
			n = sizeof(buf) / sizeof(buf[0]);
		got = pread(mm->pagemap_fd, buf, n * 8, (off_t)(addr / ps * 8));
		if (got <= 0)
			break;
		n = (size_t)got / 8;
		for (size_t i = 0; i < n; i++) {
			uint64_t page = first_page + (addr - a) / ps + i;

			if (!(buf[i] & (PM_PRESENT | PM_SWAPPED)))
				continue;
			if (in_run && page == run_last + 1) {
				run_last = page;
				continue;
			}
			if (!f && !(f = pt_file_of_mapping(tr, v->dev, v->ino, v->name)))
				return;
			if (in_run)
				pt_queue_access(tr, f, run_first * ps, (run_last + 1) * ps, how);
			run_first = run_last = page;
			in_run = true;
		}
		addr += n * ps;
	}
	if (in_run) {
		pt_queue_access(tr, f, run_first * ps, (run_last + 1) * ps, how);
		if (v->shared_write)
			pt_file_flag(tr, f, HS_FILE_WRITTEN);
	}
}

/* Does the name end in " (deleted)"? The file is gone: nothing to keep. */
static bool gone(const char *name, size_t len)
{
	return len > 10 && !memcmp(name + len - 10, " (deleted)", 10);
}

/* Visit the file mappings overlapping [lo, hi) with PROCMAP_QUERY; -ENOTTY if absent. */
static int walk_query(struct pt_tracer *tr, struct pt_mm *mm, uint64_t lo, uint64_t hi,
		      void (*fn)(struct pt_tracer *, struct pt_mm *, const struct vma *, uint64_t,
				 uint64_t))
{
	char name[4096 + 16];
	uint64_t addr = lo;

	while (addr < hi) {
		struct procmap_query q = {
			.size = sizeof(q), .query_addr = addr,
			.query_flags = PROCMAP_QUERY_COVERING_OR_NEXT_VMA |
				       PROCMAP_QUERY_FILE_BACKED_VMA,
			.vma_name_addr = (uint64_t)(uintptr_t)name, .vma_name_size = sizeof(name),
		};
		struct vma v;

		if (ioctl(mm->maps_fd, PROCMAP_QUERY, &q) < 0)
			return errno == ENOENT ? 0 : -errno;
		if (q.vma_start >= hi)
			break;
		v = (struct vma){
			.start = q.vma_start, .end = q.vma_end, .offset = q.vma_offset,
			.ino = q.inode, .dev = makedev(q.dev_major, q.dev_minor),
			.exec = q.vma_flags & PROCMAP_QUERY_VMA_EXECUTABLE,
			.shared_write = (q.vma_flags & PROCMAP_QUERY_VMA_SHARED) &&
					(q.vma_flags & PROCMAP_QUERY_VMA_WRITABLE),
			.name = name,
		};
		if (q.vma_name_size && q.inode && !gone(name, strlen(name)))
			fn(tr, mm, &v, lo, hi);
		addr = q.vma_end;
	}
	return 0;
}

/* The same from the text of /proc/PID/maps (kernels before 6.11). */
static int walk_text(struct pt_tracer *tr, struct pt_mm *mm, uint64_t lo, uint64_t hi,
		     void (*fn)(struct pt_tracer *, struct pt_mm *, const struct vma *, uint64_t,
				uint64_t))
{
	int fd = dup(mm->maps_fd);
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	FILE *fp;

	if (fd < 0 || lseek(fd, 0, SEEK_SET) < 0 || !(fp = fdopen(fd, "re"))) {
		int rc = -errno;

		if (fd >= 0)
			close(fd);
		return rc;
	}
	errno = 0;
	while ((len = getline(&line, &cap, fp)) > 0) {
		unsigned major, minor;
		char perms[8];
		int name_at = 0;
		struct vma v;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %x:%x %" SCNu64 " %n",
			   &v.start, &v.end, perms, &v.offset, &major, &minor, &v.ino,
			   &name_at) < 7 || !name_at || !v.ino)
			continue;
		if (v.end <= lo || v.start >= hi)
			continue;
		if (line[len - 1] == '\n')
			line[--len] = '\0';
		if (gone(line + name_at, strlen(line + name_at)))
			continue;
		v.dev = makedev(major, minor);
		v.exec = perms[2] == 'x';
		v.shared_write = perms[1] == 'w' && perms[3] == 's';
		v.name = line + name_at;
		fn(tr, mm, &v, lo, hi);
	}
	len = ferror(fp) ? -errno : 0;
	free(line);
	fclose(fp);	/* the dup: mm->maps_fd stays */
	return (int)len;
}

static void walk(struct pt_tracer *tr, struct pt_task *t, uint64_t lo, uint64_t hi,
		 void (*fn)(struct pt_tracer *, struct pt_mm *, const struct vma *, uint64_t, uint64_t))
{
	struct pt_mm *mm = t->mm;
	int rc = 0;

	/* twice: the text of maps needs the thread it was opened through */
	for (int attempt = 0; mm && attempt < 2 && open_handles(tr, t, mm); attempt++) {
		if (tr->procmap_query != 0) {
			rc = walk_query(tr, mm, lo, hi, fn);
			if (rc == -ENOTTY || rc == -EINVAL)
				tr->procmap_query = 0;
			else
				tr->procmap_query = 1;
		}
		if (tr->procmap_query == 0)
			rc = walk_text(tr, mm, lo, hi, fn);
		if (rc != -ESRCH)
			return;
		close(mm->maps_fd);
		close(mm->pagemap_fd);
		mm->maps_fd = mm->pagemap_fd = -1;
	}
}

/* Record the faulted pages of t's file mappings overlapping [lo, hi). */
void pt_mm_scan(struct pt_tracer *tr, struct pt_task *t, uint64_t lo, uint64_t hi)
{
	if (hi > lo) {
		tr->stats.scans++;
		walk(tr, t, lo, hi, scan_vma);
	}
}

static void header_page(struct pt_tracer *tr, struct pt_mm *mm, const struct vma *v, uint64_t lo,
			uint64_t hi)
{
	struct pt_file *f;

	if (v->offset || hs_record_excluded(v->name, 0))
		return;
	f = pt_file_of_mapping(tr, v->dev, v->ino, v->name);
	if (f)
		pt_queue_access(tr, f, 0, 1, HS_FILE_EXEC);
}

/*
 * Right after exec, the only file mappings are the program and its ELF
 * interpreter, whose first page the kernel read to load them.
 */
void pt_mm_exec_headers(struct pt_tracer *tr, struct pt_task *t)
{
	walk(tr, t, 0, UINT64_MAX, header_page);
}
