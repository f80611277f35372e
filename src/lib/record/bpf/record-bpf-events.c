/*
 * record-bpf-events.c - the eBPF record backend's events, turned into the
 * recording (the user side of record-bpf.c, apart from libbpf so that it
 * is tested without root or a kernel: tests/unit/test-record-bpf.c).
 *
 * The kernel reports inodes: (dev, ino, generation) and, once per inode, a
 * path. Paths from an open file are absolute; those from an inode's dentry
 * are relative to its filesystem and completed with /proc/self/mountinfo.
 * A file reaches the recording at its first access once its path is known
 * (accesses that come before it, such as execve's, wait for it) and not
 * excluded (hs_record_excluded, and tmpfs, whose reads the page cache's
 * tracepoints do not see). Outputs are told at the end: see on_flag.
 *
 * Accesses go to the recording one event at a time, in the order of the
 * ring buffer, which is the order the kernel sent them in: with a trace,
 * the kernel side merges only what the trace's canonical form merges
 * anyway, and the recording merges the rest (recording.c's spool_run).
 */
#include <errno.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "kernel/procfs.h"
#include "record/record.h"
#include "record/bpf/record-bpf-events.h"
#include "base/u64map.h"

_Static_assert(HS_BPF_READ == HS_FILE_READ && HS_BPF_MAPPED == HS_FILE_MAPPED &&
	       HS_BPF_EXEC == HS_FILE_EXEC && HS_BPF_WRITTEN == HS_FILE_WRITTEN &&
	       HS_BPF_DIRECT == HS_FILE_DIRECT, "record-bpf-ring.h flags are the profile's");

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

struct bpf_events {
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
static void *populated(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* n bytes that live until the session ends, or NULL. */
static char *arena_alloc(struct bpf_events *s, size_t n)
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
static struct bfile *file_of(struct bpf_events *s, const struct hs_bpf_inode *in)
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
static bool inode_number_reused(const struct bpf_events *s, const struct bfile *f)
{
	uint32_t i = (uint32_t)(uintptr_t)u64map_get2(&s->by_inode, f->dev, f->ino);

	for (; i; i = s->files[i - 1].next_gen)
		if (s->files[i - 1].gen != f->gen && s->files[i - 1].idx >= 0)
			return true;
	return false;
}

/* ---- mountinfo: completing filesystem-relative paths ------------------------------- */

static void free_mounts(struct bpf_events *s)
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
	struct bpf_events *s;
	size_t cap;
};

static int add_mount(void *ctx, const struct hs_mountinfo *mi)
{
	struct mount_table *t = ctx;
	struct bpf_events *s = t->s;
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

static int load_mounts(struct bpf_events *s)
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
static char *complete_path(struct bpf_events *s, const struct bfile *f)
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
static char *join_components(struct bpf_events *s, const struct hs_bpf_path *e, size_t len)
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

static void on_pages(struct bpf_events *s, const struct hs_bpf_pages *e);

/* Now that f has a path, the accesses it kept. */
static void replay_held(struct bpf_events *s, struct bfile *f)
{
	struct hs_bpf_pages *held = f->held;
	uint32_t n = f->nheld;

	f->held = NULL;
	f->nheld = 0;
	for (uint32_t i = 0; i < n; i++)
		on_pages(s, &held[i]);
	free(held);
}

static int on_path(struct bpf_events *s, const struct hs_bpf_path *e, size_t size)
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
static int64_t register_file(struct bpf_events *s, struct bfile *f, const struct hs_bpf_inode *in)
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
static bool hold(struct bpf_events *s, struct bfile *f, const struct hs_bpf_pages *e)
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

static void on_pages(struct bpf_events *s, const struct hs_bpf_pages *e)
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
static void on_flag(struct bpf_events *s, const struct hs_bpf_event *e)
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
static void drop_held(struct bpf_events *s)
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

static void record_outputs(struct bpf_events *s)
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

int bpf_events_feed(void *ctx, void *data, size_t size)
{
	struct bpf_events *s = ctx;
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

int bpf_events_new(struct hs_recording *rec, struct bpf_events **out)
{
	struct bpf_events *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->rec = rec;
	*out = s;
	return 0;
}

void bpf_events_end(struct bpf_events *s)
{
	drop_held(s);
	record_outputs(s);
}

void bpf_events_counts(const struct bpf_events *s, struct bpf_events_counts *c)
{
	c->unnamed = s->unnamed;
	c->too_long = s->too_long;
	c->error = s->error;
}

void bpf_events_free(struct bpf_events *s)
{
	if (!s)
		return;
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
	free(s);
}
