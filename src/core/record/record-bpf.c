/*
 * record-bpf.c - the eBPF record backend, user side: load the programs of
 * record.bpf.c, run the job under them, and turn the events they send
 * through the ring buffer into the recording.
 *
 * Start-up matters (a job may take a second): the programs are raw
 * tracepoints, which need no vmlinux BTF to attach, and their CO-RE
 * relocations are made against a minimal BTF that the build extracted
 * from the kernel it ran on (record.btf.h). It is used only when this
 * kernel's build id is the build's; any other kernel costs the parse of
 * its full BTF (about 0.15 s of CPU), with the same result.
 *
 * The job's first process waits in before_exec, reading a pipe, until the
 * programs are attached; the kernel side recognises that read and starts
 * following the process (the pid that fork() returns to hotset is not the
 * kernel's if hotset runs in a pid namespace). Its exec and everything it
 * starts are then followed until it exits.
 *
 * The kernel reports inodes: (dev, ino, generation) and, once per inode, a
 * path. Paths from an open file are absolute; those from an inode's dentry
 * are relative to its filesystem and completed with /proc/self/mountinfo.
 * A file reaches the recording at its first access once its path is known
 * (accesses that come before it, such as execve's, wait for it) and not
 * excluded (hs_record_excluded, and tmpfs, whose reads the page cache's
 * tracepoints do not see). Outputs are told at the end: see on_flag.
 */
#ifdef HAVE_BPF
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/magic.h>
#include <linux/membarrier.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "hotset/job.h"
#include "hotset/procfs.h"
#include "hotset/record.h"
#include "record-bpf.h"
#include "core/u64map.h"
#include "record.skel.h"
#include "record.btf.h"

_Static_assert(HS_BPF_READ == HS_FILE_READ && HS_BPF_MAPPED == HS_FILE_MAPPED &&
	       HS_BPF_EXEC == HS_FILE_EXEC && HS_BPF_WRITTEN == HS_FILE_WRITTEN &&
	       HS_BPF_DIRECT == HS_FILE_DIRECT, "record-bpf.h flags are the profile's");

#define RINGBUF_BYTES (8u << 20)
#define WAKE_BYTES (RINGBUF_BYTES / 4)

/* ---- libbpf's messages: kept, never printed --------------------------------- */

static char libbpf_last[256];

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_WARN) {
		size_t n;

		vsnprintf(libbpf_last, sizeof(libbpf_last), fmt, ap);
		n = strlen(libbpf_last);
		while (n && libbpf_last[n - 1] == '\n')
			libbpf_last[--n] = '\0';
	}
	return 0;
}

/* ---- can it run here? ---------------------------------------------------------- */

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

static bool has_cap(const struct __user_cap_data_struct *d, int cap)
{
	return d[cap / 32].effective & (1u << (cap % 32));
}

/* The privileges and the kernel BTF that the backend needs (cheap checks). */
static int check_privileges(struct hs_error *why)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct caps[_LINUX_CAPABILITY_U32S_3] = { 0 };

	if (syscall(SYS_capget, &hdr, caps) < 0)
		return hs_error_set(why, errno, "cannot read this process's capabilities: %s",
				    strerror(errno));
	if (!(has_cap(caps, CAP_BPF) && has_cap(caps, CAP_PERFMON)) &&
	    !has_cap(caps, CAP_SYS_ADMIN))
		return hs_error_set(why, EPERM, "the bpf backend needs root: CAP_BPF and "
				    "CAP_PERFMON (or CAP_SYS_ADMIN)");
	if (access("/sys/kernel/btf/vmlinux", R_OK) < 0)
		return hs_error_set(why, ENOTSUP, "the bpf backend needs a kernel with BTF "
				    "(/sys/kernel/btf/vmlinux, CONFIG_DEBUG_INFO_BTF)");
	return 0;
}

int hs_record_bpf_probe(struct hs_error *why)
{
	libbpf_print_fn_t old;
	int rc = check_privileges(why);

	if (rc)
		return rc;
	old = libbpf_set_print(libbpf_quiet);
	/* tiny loads: what a seccomp filter, lockdown or an old kernel refuse */
	if (libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_RAW_TRACEPOINT, NULL) != 1)
		rc = hs_error_set(why, EPERM, "the kernel refuses to load eBPF tracing programs "
				  "here (seccomp, or kernel.unprivileged_bpf_disabled?)");
	else if (libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL) != 1 ||
		 libbpf_probe_bpf_helper(BPF_PROG_TYPE_RAW_TRACEPOINT, BPF_FUNC_loop, NULL) != 1)
		rc = hs_error_set(why, ENOTSUP, "the bpf backend needs Linux 5.17 or later "
				  "(ring buffer, bpf_loop)");
	else if (libbpf_probe_bpf_helper(BPF_PROG_TYPE_RAW_TRACEPOINT,
					 BPF_FUNC_probe_read_kernel, NULL) != 1)
		rc = hs_error_set(why, EPERM, "the kernel does not let eBPF programs read its "
				  "memory (lockdown=confidentiality?)");
	libbpf_set_print(old);
	return rc;
}

/* ---- the BTF to relocate against ------------------------------------------------ */

/* This kernel's GNU build id from /sys/kernel/notes; returns its length or 0. */
static size_t kernel_build_id(unsigned char *id, size_t cap)
{
	unsigned char buf[4096];
	size_t off = 0, len;
	int fd = open("/sys/kernel/notes", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n <= 0)
		return 0;
	len = (size_t)n;
	while (off + 12 <= len) {	/* Elf_Nhdr: namesz, descsz, type; then name, desc */
		uint32_t namesz, descsz, type;
		size_t name_off = off + 12, desc_off;

		memcpy(&namesz, buf + off, 4);
		memcpy(&descsz, buf + off + 4, 4);
		memcpy(&type, buf + off + 8, 4);
		desc_off = name_off + ((namesz + 3) & ~3u);
		if (desc_off + descsz > len)
			break;
		if (type == 3 && namesz == 4 && !memcmp(buf + name_off, "GNU", 4)) {
			if (descsz > cap)
				return 0;
			memcpy(id, buf + desc_off, descsz);
			return descsz;
		}
		off = desc_off + ((descsz + 3) & ~3u);
	}
	return 0;
}

/*
 * If this kernel is the one the build extracted record.btf.h from, put that
 * BTF in a memfd and return its fd (path /proc/self/fd/N), else -1.
 */
static int minimal_btf_fd(void)
{
	unsigned char id[64];
	size_t len = kernel_build_id(id, sizeof(id));
	int fd;

	if (!len || len != sizeof(hs_bpf_build_id) || memcmp(id, hs_bpf_build_id, len))
		return -1;
	fd = (int)syscall(SYS_memfd_create, "hotset-btf", 1 /* MFD_CLOEXEC */);
	if (fd < 0)
		return -1;
	if (write(fd, hs_bpf_min_btf, sizeof(hs_bpf_min_btf)) != (ssize_t)sizeof(hs_bpf_min_btf)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* ---- files seen ----------------------------------------------------------------- */

/*
 * Every inode the kernel tells about gets a struct bfile, found by
 * (dev, ino) in the library's map (u64map), then by generation: the map
 * gives the newest file with that inode number, and each file the one
 * that had the number before it (next_gen), a chain of one file but where
 * the job deleted a file and another got its number. Paths live in an
 * arena, freed at once at the end.
 */

#define NOT_YET (-1)	/* bfile.idx before the file's first access */
#define MAX_HELD 16	/* accesses kept for a file waiting for its path */
#define SKIPPED (-2)	/* ... when it cannot or must not be recorded */

struct bfile {
	uint64_t ino;
	uint32_t dev, gen;	/* dev in the kernel's encoding */
	int64_t idx;		/* in the recording, or NOT_YET, SKIPPED */
	uint64_t rec_ino;	/* the ino given to the recording (see register_file) */
	uint64_t output_time;	/* when the job created or truncated it, or 0 */
	uint64_t fs_magic;
	char *path;		/* absolute, or relative to the fs (FSREL); in the arena */
	struct hs_bpf_pages *held;	/* accesses waiting for a path (malloc'd) */
	uint32_t nheld;
	uint32_t next_gen;	/* index + 1 of the file that had this number before, or 0 */
	uint8_t flags;		/* HS_BPF_WRITTEN/EXEC seen so far */
	uint8_t path_kind;	/* enum hs_bpf_path_kind, 0 if none yet */
	bool deleted, truncated;
	bool by_alias;		/* registered under a name from the inode, not an open */
};

struct arena {
	struct arena *next;
	size_t used, cap;
	char data[];
};

struct mount_entry {
	uint32_t dev;
	char *root, *point;	/* root within the fs; where it is mounted */
};

struct session {
	struct hs_recording *rec;
	struct bfile *files;
	size_t nfiles, files_cap;
	struct u64map by_inode;	/* (dev, ino) -> index + 1 in files, of the newest generation */
	size_t last;		/* the file found last, + 1 (events come in runs) */
	struct arena *arena;
	struct mount_entry *mounts;
	size_t nmounts;
	unsigned mount_reloads;
	uint64_t unnamed, too_long;	/* files left out for want of a path */
	int error;		/* first error feeding the recording */
};

/*
 * Memory for the tables below comes mapped and populated in one call: on
 * some virtual machines a page fault costs 50 us, which the first touch of
 * each page of a table that grows with the job would pay. Returns NULL on
 * failure; release with munmap(p, bytes).
 */
/*
 * The job's first process is forked from this one, and the kernel counts
 * the pages it had before exec in its peak RSS (ru_maxrss): the ring
 * buffer's 16 MiB, mapped and resident, would be the job's. The maps'
 * mappings are not inherited, then.
 */
static void maps_not_inherited(void)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "re");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;

		if (strstr(line, "anon_inode:bpf-map") && sscanf(line, "%lx-%lx", &lo, &hi) == 2)
			madvise((void *)lo, hi - lo, MADV_DONTFORK);
	}
	fclose(f);
}

static void *populated(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* n bytes that live until the session ends, or NULL. */
static char *arena_alloc(struct session *s, size_t n)
{
	struct arena *a = s->arena;

	if (!a || a->cap - a->used < n) {
		size_t bytes = a ? (sizeof(*a) + a->cap) * 2 : 64 * 1024;

		if (bytes > 4u << 20)
			bytes = 4u << 20;
		if (bytes < sizeof(*a) + n)
			bytes = sizeof(*a) + n;
		a = populated(bytes);
		if (!a)
			return NULL;
		a->next = s->arena;
		a->used = 0;
		a->cap = bytes - sizeof(*a);
		s->arena = a;
	}
	a->used += n;
	return a->data + a->used - n;
}

/* The file for an inode, added if new; NULL (and s->error) without memory. */
static struct bfile *file_of(struct session *s, const struct hs_bpf_inode *in)
{
	void *self = (void *)(uintptr_t)(s->nfiles + 1);	/* if it is new */
	struct bfile *f;
	uint32_t newest = 0;
	void *had;
	int rc;

	if (s->last) {
		f = &s->files[s->last - 1];
		if (f->ino == in->ino && f->dev == in->dev && f->gen == in->gen)
			return f;
	}
	/* room for a new file first, so that the map never names a missing one */
	if (s->nfiles == s->files_cap) {
		size_t cap = s->files_cap ? s->files_cap * 2 : 1024;
		struct bfile *v = populated(cap * sizeof(*v));

		if (!v) {
			s->error = -ENOMEM;
			return NULL;
		}
		if (s->files) {
			memcpy(v, s->files, s->nfiles * sizeof(*v));
			munmap(s->files, s->files_cap * sizeof(*v));
		}
		s->files = v;
		s->files_cap = cap;
	}
	/* one probe: a new inode number is added as it is looked up */
	rc = u64map_add2(&s->by_inode, in->dev, in->ino, self, &had);
	if (rc == 0) {
		newest = (uint32_t)(uintptr_t)had;
		for (uint32_t i = newest; i; i = s->files[i - 1].next_gen) {
			if (s->files[i - 1].gen == in->gen) {
				s->last = i;
				return &s->files[i - 1];
			}
		}
		/* another generation of a known number: it is the newest now */
		rc = u64map_put2(&s->by_inode, in->dev, in->ino, self);
	}
	if (rc < 0) {
		s->error = -ENOMEM;
		return NULL;
	}
	f = &s->files[s->nfiles++];
	*f = (struct bfile){ .ino = in->ino, .dev = in->dev, .gen = in->gen, .idx = NOT_YET,
			     .next_gen = newest };
	s->last = s->nfiles;
	return f;
}

/* Was another generation of f's inode number given to the recording? */
static bool inode_number_reused(const struct session *s, const struct bfile *f)
{
	uint32_t i = (uint32_t)(uintptr_t)u64map_get2(&s->by_inode, f->dev, f->ino);

	for (; i; i = s->files[i - 1].next_gen)
		if (s->files[i - 1].gen != f->gen && s->files[i - 1].idx >= 0)
			return true;
	return false;
}

/* ---- mountinfo: completing filesystem-relative paths ------------------------------- */

static void free_mounts(struct session *s)
{
	for (size_t i = 0; i < s->nmounts; i++) {
		free(s->mounts[i].root);
		free(s->mounts[i].point);
	}
	free(s->mounts);
	s->mounts = NULL;
	s->nmounts = 0;
}

struct mount_table {
	struct session *s;
	size_t cap;
};

static int add_mount(void *ctx, const struct hs_mountinfo *mi)
{
	struct mount_table *t = ctx;
	struct session *s = t->s;
	struct mount_entry *m;

	if (hs_grow(&s->mounts, &t->cap, s->nmounts + 1, sizeof(*s->mounts)))
		return -ENOMEM;
	m = &s->mounts[s->nmounts];
	m->dev = mi->major << 20 | mi->minor;
	m->root = strdup(mi->root);
	m->point = strdup(mi->point);
	if (!m->root || !m->point) {
		free(m->root);
		free(m->point);
		return -ENOMEM;
	}
	s->nmounts++;
	return 0;
}

static int load_mounts(struct session *s)
{
	struct mount_table t = { s, 0 };

	free_mounts(s);
	return hs_mountinfo_each(NULL, add_mount, &t);
}

static bool same_inode(const char *path, const struct bfile *f)
{
	struct stat st;

	return !stat(path, &st) && st.st_ino == f->ino &&
	       st.st_dev == makedev(f->dev >> 20, f->dev & 0xfffff);
}

/*
 * The absolute path for f's filesystem-relative path: where a mount of its
 * filesystem shows it. With several candidates (bind mounts), one that
 * stat() confirms; the later mount wins, as it hides the earlier ones.
 * Returns a new string or NULL.
 */
static char *complete_path(struct session *s, const struct bfile *f)
{
	char *found = NULL;
	bool checked = false;

	for (int attempt = 0; attempt < 2 && !found; attempt++) {
		if (attempt || !s->mounts) {
			/* mounts may have come and gone: read them again, within reason */
			if ((attempt && s->mount_reloads++ >= 16) || load_mounts(s))
				return NULL;
		}
		for (size_t i = s->nmounts; i-- > 0;) {
			const struct mount_entry *m = &s->mounts[i];
			size_t rl = strlen(m->root);
			const char *rest;
			char *c;

			if (m->dev != f->dev)
				continue;
			if (!strcmp(m->root, "/"))
				rest = f->path;
			else if (!strncmp(f->path, m->root, rl) && f->path[rl] == '/')
				rest = f->path + rl;
			else
				continue;
			if (asprintf(&c, "%s%s", strcmp(m->point, "/") ? m->point : "", rest) < 0)
				return found;
			if (!found) {	/* the only one, unless another comes */
				found = c;
				continue;
			}
			if (!checked && (checked = true) && same_inode(found, f)) {
				free(c);
				break;
			}
			if (same_inode(c, f)) {
				free(found);
				found = c;
				break;
			}
			free(c);
		}
	}
	return found;
}

/* ---- events -------------------------------------------------------------------------- */

/* Put a path event's components (leaf first) in order: "/a/b/c", in the arena. */
static char *join_components(struct session *s, const struct hs_bpf_path *e, size_t len)
{
	char *out = arena_alloc(s, len + 2), *o = out;
	size_t end = len;

	if (!out)
		return NULL;
	while (end > 0) {
		size_t start = end - 1;	/* end - 1 is the NUL of the last component */

		while (start > 0 && e->buf[start - 1])
			start--;
		*o++ = '/';
		memcpy(o, e->buf + start, end - 1 - start);
		o += end - 1 - start;
		end = start;
	}
	if (o == out)
		*o++ = '/';
	*o = '\0';
	return out;
}

static void on_pages(struct session *s, const struct hs_bpf_pages *e);

/* Now that f has a path, the accesses it kept. */
static void replay_held(struct session *s, struct bfile *f)
{
	struct hs_bpf_pages *held = f->held;
	uint32_t n = f->nheld;

	f->held = NULL;
	f->nheld = 0;
	for (uint32_t i = 0; i < n; i++)
		on_pages(s, &held[i]);
	free(held);
}

static int on_path(struct session *s, const struct hs_bpf_path *e, size_t size)
{
	struct bfile *f = file_of(s, &e->h.inode);
	size_t len = e->len;
	char *path;

	if (!f)
		return 0;
	/*
	 * Decided already, or a path as good is known; but a file named by
	 * one of its hard links (whichever the inode lists first: perf's
	 * ~/.debug links programs) takes the path an open or exec used.
	 */
	bool better = f->by_alias && e->h.how == HS_BPF_PATH_OPENED;

	if (!better && (f->idx != NOT_YET || (f->path_kind && f->path_kind <= e->h.how)))
		return 0;
	if (len > size - offsetof(struct hs_bpf_path, buf) || (len && e->buf[len - 1]))
		return 0;	/* malformed */
	path = join_components(s, e, len);
	if (!path) {
		s->error = -ENOMEM;
		return 0;
	}
	if (f->idx != NOT_YET) {
		if (f->idx >= 0 && !e->deleted && !e->truncated &&
		    hs_recording_rename(s->rec, f->idx, path, strlen(path)) == 0)
			f->by_alias = false;
		return 0;
	}
	f->path = path;	/* a path it replaces stays in the arena */
	f->path_kind = (uint8_t)e->h.how;
	f->fs_magic = e->fs_magic;
	f->deleted = e->deleted;
	f->truncated = e->truncated;
	replay_held(s, f);
	return 0;
}

/*
 * Give f to the recording, at its first access (or at the end, for an
 * output never read: in is NULL, its size and mtime do not matter). Returns
 * its index, or SKIPPED if it has no usable path or is excluded.
 *
 * The recording keys files by (dev, ino): an inode number reused within the
 * run, with another generation, gets its generation folded into the high
 * bits of the ino it is given, so that it is another file (one that looks
 * stale later: it is the later one, the first keeps the true number).
 */
static int64_t register_file(struct session *s, struct bfile *f, const struct hs_bpf_inode *in)
{
	struct hs_file_id id = { .dev = makedev(f->dev >> 20, f->dev & 0xfffff), .ino = f->ino };
	int64_t idx;

	if (f->idx != NOT_YET)
		return f->idx;
	f->idx = SKIPPED;
	if (!f->path_kind) {
		s->unnamed++;
		return SKIPPED;
	}
	if (f->deleted)
		return SKIPPED;	/* gone (or never linked): nothing to keep in cache */
	if (f->truncated) {
		s->too_long++;
		return SKIPPED;
	}
	if (f->path_kind == HS_BPF_PATH_FSREL) {
		char *abs = complete_path(s, f);
		size_t len = abs ? strlen(abs) + 1 : 0;

		f->path = abs ? arena_alloc(s, len) : NULL;
		if (f->path)
			memcpy(f->path, abs, len);
		free(abs);
		if (!f->path) {
			s->unnamed++;
			return SKIPPED;
		}
		f->path_kind = HS_BPF_PATH_OPENED;
		f->by_alias = true;
	}
	/*
	 * The page cache's tracepoints do not see reads of tmpfs (shmem)
	 * files, only some of their mapped pages: leave them out rather than
	 * record them wrong. Their pages live in memory (or swap) anyway.
	 */
	if (hs_record_excluded(f->path, (long)f->fs_magic) || f->fs_magic == TMPFS_MAGIC)
		return SKIPPED;
	if (inode_number_reused(s, f))
		id.ino ^= (uint64_t)f->gen << 32 | 1ull << 63;
	if (in) {
		id.size = in->size < 0 ? 0 : (uint64_t)in->size;
		id.mtime_sec = in->mtime_sec;
		id.mtime_nsec = in->mtime_nsec;
	}
	idx = hs_recording_file(s->rec, &id, f->path, strlen(f->path));
	if (idx < 0) {
		s->error = (int)idx;
		return SKIPPED;
	}
	f->rec_ino = id.ino;
	f->idx = idx;
	if (f->flags)
		hs_recording_flag(s->rec, idx, f->flags);
	return idx;
}

/*
 * Keep an access to a file with no path yet: execve's reads come before the
 * exec names the program and its interpreter. Returns false if it cannot.
 */
static bool hold(struct session *s, struct bfile *f, const struct hs_bpf_pages *e)
{
	if (f->nheld >= MAX_HELD)
		return false;
	if (!f->held && !(f->held = malloc(MAX_HELD * sizeof(*f->held)))) {
		s->error = -ENOMEM;
		return false;
	}
	f->held[f->nheld++] = *e;
	return true;
}

static void on_pages(struct session *s, const struct hs_bpf_pages *e)
{
	struct bfile *f = file_of(s, &e->h.inode);
	int64_t idx;
	int rc;

	if (!f || (f->output_time && e->h.time >= f->output_time))
		return;	/* reading back what the job wrote is not input */
	if (f->idx == NOT_YET && !f->path_kind && hold(s, f, e))
		return;
	if ((idx = register_file(s, f, &e->h.inode)) < 0)
		return;
	rc = hs_recording_access(s->rec, idx, e->first, e->last,
				 e->h.how & (HS_BPF_READ | HS_BPF_MAPPED | HS_BPF_EXEC | HS_BPF_DIRECT));
	if (rc)
		s->error = rc;
}

/*
 * Outputs are told to the recording at the end: a range of pages read
 * before a file was truncated may arrive after the news of the truncation
 * (it was being merged), and must count as input.
 */
static void on_flag(struct session *s, const struct hs_bpf_event *e)
{
	struct bfile *f = file_of(s, &e->inode);
	unsigned added;

	if (!f)
		return;
	if ((e->how & HS_BPF_OUTPUT) && (!f->output_time || e->time < f->output_time))
		f->output_time = e->time;
	added = e->how & ~f->flags & (HS_BPF_WRITTEN | HS_BPF_EXEC);
	f->flags |= added;
	if (f->idx >= 0 && added)
		hs_recording_flag(s->rec, f->idx, added);
}

/* At the end: accesses still waiting for a path are left out. */
static void drop_held(struct session *s)
{
	for (size_t i = 0; i < s->nfiles; i++) {
		struct bfile *f = &s->files[i];

		if (f->held) {
			s->unnamed++;
			free(f->held);
			f->held = NULL;
			f->nheld = 0;
		}
	}
}

static void record_outputs(struct session *s)
{
	for (size_t i = 0; i < s->nfiles && !s->error; i++) {
		struct bfile *f = &s->files[i];
		struct hs_file_id id = { .dev = makedev(f->dev >> 20, f->dev & 0xfffff) };

		if (!f->output_time || register_file(s, f, NULL) < 0)
			continue;
		id.ino = f->rec_ino;	/* the recording knows the file by it */
		s->error = hs_recording_output(s->rec, &id, f->path, strlen(f->path));
	}
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct session *s = ctx;
	const struct hs_bpf_event *e = data;

	if (size < sizeof(*e) || s->error)
		return 0;
	switch (e->type) {
	case HS_BPF_PAGES:
		if (size >= sizeof(struct hs_bpf_pages))
			on_pages(s, data);
		break;
	case HS_BPF_PATH:
		if (size >= offsetof(struct hs_bpf_path, buf))
			on_path(s, data, size);
		break;
	case HS_BPF_FLAG:
		on_flag(s, e);
		break;
	}
	return 0;
}

static void free_session(struct session *s)
{
	drop_held(s);
	while (s->arena) {
		struct arena *next = s->arena->next;

		munmap(s->arena, sizeof(*s->arena) + s->arena->cap);
		s->arena = next;
	}
	if (s->files)
		munmap(s->files, s->files_cap * sizeof(*s->files));
	u64map_free(&s->by_inode);
	free_mounts(s);
}

/* ---- running the job ------------------------------------------------------------- */

/* In the job's first process: wait until hotset says the programs are attached. */
static int hold_until_attached(void *ctx)
{
	return hs_job_gate_wait(ctx);
}

#define MAX_LINKS 16

static void detach(struct bpf_link **links, int *nlinks)
{
	while (*nlinks > 0)
		bpf_link__destroy(links[--*nlinks]);
}

/*
 * Load the programs and attach them (links[], *nlinks); on failure err says
 * why, and nothing is left loaded.
 */
static int load_programs(struct record_bpf **out, bool exact, struct bpf_link **links,
			 int *nlinks, bool *have_dio, struct hs_error *err)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts);
	struct record_bpf *skel;
	struct bpf_program *prog;
	char btf_path[64];
	int btf_fd = minimal_btf_fd(), rc;

	if (btf_fd >= 0) {
		snprintf(btf_path, sizeof(btf_path), "/proc/self/fd/%d", btf_fd);
		opts.btf_custom_path = btf_path;
	}
	skel = record_bpf__open_opts(&opts);
	if (!skel) {
		rc = -errno;
		goto out;
	}
	skel->rodata->page_shift = (uint32_t)__builtin_ctz(hs_page_size());
	skel->rodata->wake_bytes = WAKE_BYTES;
	skel->rodata->exact = exact;
	/* sched_switch runs at every switch of the machine: only for a trace */
	bpf_program__set_autoload(skel->progs.on_switch, exact);
	bpf_map__set_max_entries(skel->maps.events, RINGBUF_BYTES);
	rc = record_bpf__load(skel);
	if (rc)
		goto out;
	*have_dio = true;
	bpf_object__for_each_program(prog, skel->obj) {
		struct bpf_link *link;

		if (!bpf_program__autoload(prog))
			continue;	/* not loaded: not wanted here */
		if ((link = bpf_program__attach(prog))) {
			links[(*nlinks)++] = link;
			continue;
		}
		rc = -errno;
		if (prog == skel->progs.on_dio_begin) {	/* no such tracepoint: no O_DIRECT */
			*have_dio = false;
			rc = 0;
			continue;
		}
		snprintf(libbpf_last, sizeof(libbpf_last), "%s: %s", bpf_program__name(prog),
			 strerror(-rc));
		goto out;
	}
out:
	if (btf_fd >= 0)
		close(btf_fd);
	if (rc) {
		detach(links, nlinks);
		record_bpf__destroy(skel);
		return hs_error_set(err, -rc, "cannot load the eBPF programs: %s",
				    libbpf_last[0] ? libbpf_last : strerror(-rc));
	}
	*out = skel;
	return 0;
}

/* Move the ranges still being merged in the per-CPU slots to the recording. */
static void drain_pending(struct record_bpf *skel, struct session *s)
{
	int ncpus = libbpf_num_possible_cpus();
	struct hs_bpf_pending *slots;
	uint32_t zero = 0;

	if (ncpus <= 0 || !(slots = calloc((size_t)ncpus, sizeof(*slots))))
		return;
	if (!bpf_map_lookup_elem(bpf_map__fd(skel->maps.pending), &zero, slots))
		for (int i = 0; i < ncpus; i++)
			if (slots[i].ev.h.type == HS_BPF_PAGES)
				on_event(s, &slots[i].ev, sizeof(slots[i].ev));
	free(slots);
}

/* Runs of the page programs skipped because one was already running on the CPU. */
static uint64_t recursion_misses(struct record_bpf *skel)
{
	struct bpf_program *prog;
	uint64_t n = 0;

	bpf_object__for_each_program(prog, skel->obj) {
		struct bpf_prog_info info;
		uint32_t len = sizeof(info);

		memset(&info, 0, sizeof(info));
		if (!bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len))
			n += info.recursion_misses;
	}
	return n;
}

/* Has the job's first process exited (not reaped yet)? */
static bool job_exited(const struct hs_job *job, int pidfd, const struct pollfd *pfd)
{
	siginfo_t si;

	if (pidfd >= 0)
		return pfd->revents & (POLLIN | POLLHUP | POLLERR);
	memset(&si, 0, sizeof(si));
	return !waitid(P_PID, (id_t)job->pid, &si, WEXITED | WNOHANG | WNOWAIT) && si.si_pid;
}

static bool map_empty(int fd)
{
	uint32_t key;

	return bpf_map_get_next_key(fd, NULL, &key) != 0;
}

static void warnf(const struct hs_record_opts *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void warnf(const struct hs_record_opts *o, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	if (!o->warn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	o->warn(o->ctx, msg);
}

int hs_record_bpf(const struct hs_record_opts *o, struct hs_recording *rec,
		  struct hs_record_result *res, struct hs_error *err)
{
	struct session s = { .rec = rec };
	struct hs_job_gate hold = { -1, -1 };
	struct bpf_link *links[MAX_LINKS];
	struct hs_job_spec spec = {
		.argv = o->argv, .before_exec = hold_until_attached, .ctx = &hold,
		.cgroup_procs = o->cgroup_procs,
	};
	struct hs_job job = { .pid = -1, .status_fd = -1 };
	struct record_bpf *skel = NULL;
	struct ring_buffer *rb = NULL;
	struct pollfd pfd[2];
	libbpf_print_fn_t old_print = libbpf_set_print(libbpf_quiet);
	bool have_dio = false, signals = false;
	struct stat st;
	int pidfd = -1, nlinks = 0, rc, running;

	libbpf_last[0] = '\0';
	if ((rc = check_privileges(err)))
		goto out;
	if ((rc = load_programs(&skel, o->trace, links, &nlinks, &have_dio, err)))
		goto out;
	rb = ring_buffer__new(bpf_map__fd(skel->maps.events), on_event, &s, NULL);
	if (!rb) {
		rc = hs_error_set(err, errno, "cannot read the eBPF ring buffer: %s", strerror(errno));
		goto out;
	}
	maps_not_inherited();
	if ((rc = hs_job_gate_init(&hold))) {
		rc = hs_error_set(err, -rc, "cannot make a pipe: %s", strerror(-rc));
		goto out;
	}
	if (fstat(hold.rfd, &st) < 0) {
		rc = hs_error_set(err, errno, "cannot stat a pipe: %s", strerror(errno));
		goto out;
	}
	skel->bss->hold_dev = major(st.st_dev) << 20 | minor(st.st_dev);
	skel->bss->hold_ino = st.st_ino;
	hs_job_become_subreaper();
	if ((rc = hs_job_start(&spec, &job))) {
		rc = hs_error_set(err, -rc, "cannot start %s: %s", o->argv[0], strerror(-rc));
		goto out;
	}
	hs_job_forward_signals(job.pid);
	signals = true;
#ifdef SYS_pidfd_open
	pidfd = (int)syscall(SYS_pidfd_open, job.pid, 0);
#endif
	/* if this fails, the child saw EOF and gave up: exec_result says so */
	hs_job_gate_open(&hold);
	res->exec_error = hs_job_exec_result(&job, &res->exec_stage);

	pfd[0] = (struct pollfd){ .fd = ring_buffer__epoll_fd(rb), .events = POLLIN };
	pfd[1] = (struct pollfd){ .fd = pidfd, .events = POLLIN };
	for (;;) {
		if (poll(pfd, pidfd >= 0 ? 2 : 1, pidfd >= 0 ? -1 : 50) < 0 && errno != EINTR) {
			rc = hs_error_set(err, errno, "poll: %s", strerror(errno));
			break;
		}
		ring_buffer__consume(rb);
		if (job_exited(&job, pidfd, &pfd[1]))
			break;
	}
	running = hs_job_wait_all(&job, &res->wait_status);
	res->still_running = running > 0 ? running : 0;
	if (running < 0 && !rc)
		rc = hs_error_set(err, -running, "cannot wait for %s: %s", o->argv[0],
				  strerror(-running));

	/* record nothing more; descendants left running may be inside a program */
	skel->bss->stopped = 1;
	if (!map_empty(bpf_map__fd(skel->maps.tracked)))
		syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0);	/* an RCU grace period */
	ring_buffer__consume(rb);
	drain_pending(skel, &s);
	drop_held(&s);
	record_outputs(&s);
	res->lost_events = skel->bss->lost + skel->bss->untracked + recursion_misses(skel);
	res->mmap_pages = "faulted";
	if (s.error && !rc)
		rc = hs_error_set(err, -s.error, "cannot record: %s", strerror(-s.error));
	if (rc)
		goto out;
	if (skel->bss->hold_ino && !res->exec_error)
		warnf(o, "the job's first process was not seen: nothing was recorded");
	if (s.unnamed)
		warnf(o, "%llu files read could not be named (no path known) and are left out",
		      (unsigned long long)s.unnamed);
	if (s.too_long)
		warnf(o, "%llu files read have paths too long to record and are left out",
		      (unsigned long long)s.too_long);
	if (!have_dio)
		warnf(o, "O_DIRECT reads are not seen on this kernel (no iomap_dio_rw_begin "
		      "tracepoint)");
out:
	if (signals)
		hs_job_stop_forwarding();
	if (job.status_fd >= 0)
		close(job.status_fd);
	if (pidfd >= 0)
		close(pidfd);
	hs_job_gate_close(&hold);
	ring_buffer__free(rb);
	detach(links, &nlinks);
	record_bpf__destroy(skel);
	free_session(&s);
	libbpf_set_print(old_print);
	return rc;
}
#endif
