/*
 * record-ptrace-files.c - which file a read was from, for the ptrace
 * backend.
 *
 * A sampled fd gives, from /proc/TID/fdinfo, its mount id and inode number,
 * and from the /proc/TID/fd/N link its path. The identity the profile needs
 * (device, inode, size, mtime) takes a stat(), which is done after the
 * tracee has been resumed (it overlaps with the job instead of stopping
 * it): reads wait in a queue, flushed after each resume. Once a (mount id,
 * inode, path) is known it costs nothing more; the path is compared each
 * time because inode numbers are reused (a compiler's temporary files get
 * the number of the one deleted just before).
 *
 * The profile keys files by (device, inode). When the same number comes
 * back as another file during the run (the job deleted one and created
 * another, or its birth time differs), the new file gets an identity of
 * its own: its inode number with a generation folded into the high bits,
 * as the eBPF backend does.
 *
 * Left out: what hs_record_excluded() says (/proc, /sys, /dev, memfd,
 * pseudo filesystems, tmpfs), files that are not regular, files already
 * deleted when looked up.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>

#include "record/ptrace/record-ptrace.h"

bool pt_magic_excluded(long magic)
{
	return hs_record_excluded("/", magic);
}

/* The filesystem type of device dev, path being a file on it. */
long pt_dev_magic(struct pt_tracer *tr, uint64_t dev, const char *path)
{
	uintptr_t v = (uintptr_t)u64map_get(&tr->dev_magic, dev);
	struct statfs sf;

	if (v)
		return (long)(v & ~PT_MAGIC_SET);
	if (statfs(path, &sf) < 0)
		return 0;
	if (u64map_put(&tr->dev_magic, dev, (void *)(uintptr_t)((uint32_t)sf.f_type | PT_MAGIC_SET)))
		tr->error = -ENOMEM;
	return (long)(uint32_t)sf.f_type;
}

static bool deleted_name(const char *name)
{
	size_t len = strlen(name);

	return len > 10 && !strcmp(name + len - 10, " (deleted)");
}

static struct pt_file *new_file(struct pt_tracer *tr, const struct statx *sx, uint64_t dev,
				const char *name)
{
	struct pt_file *f = calloc(1, sizeof(*f));

	if (!f || !(f->path = strdup(name))) {
		free(f);
		tr->error = -ENOMEM;
		return NULL;
	}
	if (hs_grow(&tr->files, &tr->files_cap, tr->nfiles + 1, sizeof(*tr->files))) {
		free(f->path);
		free(f);
		tr->error = -ENOMEM;
		return NULL;
	}
	f->local = (uint32_t)tr->nfiles;
	tr->files[tr->nfiles++] = f;
	f->ino = sx->stx_ino;
	f->id = (struct hs_file_id){
		.dev = dev, .ino = sx->stx_ino, .size = sx->stx_size,
		.mtime_sec = sx->stx_mtime.tv_sec, .mtime_nsec = sx->stx_mtime.tv_nsec,
	};
	f->size_now = sx->stx_size;
	if (sx->stx_mask & STATX_BTIME) {
		f->btime_sec = sx->stx_btime.tv_sec;
		f->btime_nsec = sx->stx_btime.tv_nsec;
	}
	return f;
}

/*
 * The file at stat_path (a path the tracer can stat: the job's name for it,
 * or /proc/TID/fd/N), to be reported under name. want_ino: the inode the
 * caller saw (0 for any). opts: PT_LOOKUP_CREATED if the job created it.
 * Returns NULL if it is left out, gone, or is another inode by now.
 */
struct pt_file *pt_file_lookup(struct pt_tracer *tr, const char *stat_path, const char *name,
			       uint64_t want_ino, unsigned opts)
{
	struct statx sx;
	struct pt_file *f, *nf;
	uint64_t dev;

	if (hs_record_excluded(name, 0) || deleted_name(name))
		return NULL;
	tr->stats.lookups++;
	if (statx(AT_FDCWD, stat_path, 0, STATX_TYPE | STATX_INO | STATX_SIZE | STATX_MTIME |
		  STATX_BTIME, &sx) < 0)
		return NULL;
	if ((want_ino && sx.stx_ino != want_ino) || !S_ISREG(sx.stx_mode))
		return NULL;
	dev = makedev(sx.stx_dev_major, sx.stx_dev_minor);
	if (pt_magic_excluded(pt_dev_magic(tr, dev, stat_path)))
		return NULL;
	f = u64map_get2(&tr->file_by_inode, dev, sx.stx_ino);
	if (f && f->id.dev == dev && f->ino == sx.stx_ino) {
		bool same = !(opts & PT_LOOKUP_CREATED) &&
			    (!(sx.stx_mask & STATX_BTIME) || !f->btime_sec ||
			     (f->btime_sec == sx.stx_btime.tv_sec &&
			      f->btime_nsec == sx.stx_btime.tv_nsec));

		if (same)
			return f;
	}
	nf = new_file(tr, &sx, dev, name);
	if (!nf)
		return NULL;
	if (f && f->id.dev == dev && f->ino == sx.stx_ino && f->reported) {
		/* the number names another file now: a new identity */
		tr->generation++;
		nf->id.ino ^= (tr->generation << 32) | 1ull << 63;
	}
	if (u64map_put2(&tr->file_by_inode, dev, sx.stx_ino, nf))
		tr->error = -ENOMEM;
	return nf;
}

/*
 * The file of a mapping that /proc/PID/maps shows as dev:ino name (dev as
 * the kernel encodes it there). NULL if left out.
 */
struct pt_file *pt_file_of_mapping(struct pt_tracer *tr, uint64_t dev, uint64_t ino,
				   const char *name)
{
	struct pt_file *f = u64map_get2(&tr->file_by_mapping, dev, ino);

	if (f && f->ino == ino && !strcmp(f->path, name))
		return f;
	f = pt_file_lookup(tr, name, name, ino, 0);
	if (f && u64map_put2(&tr->file_by_mapping, dev, ino, f))
		tr->error = -ENOMEM;
	return f;
}

/* The job created or truncated f. */
void pt_file_output(struct pt_tracer *tr, struct pt_file *f)
{
	if (f->output)
		return;
	f->output = true;
	f->flags |= HS_FILE_WRITTEN;
	pt_report_file(tr, f);
}

void pt_file_flag(struct pt_tracer *tr, struct pt_file *f, unsigned flags)
{
	f->flags |= flags;
}

/* Bytes [start, end) of f were read (how: HS_FILE_READ...); start == end: none. */
void pt_file_access(struct pt_tracer *tr, struct pt_file *f, uint64_t start, uint64_t end,
		    unsigned how)
{
	uint32_t ps = tr->page_size;

	if (f->output || !tr->recording)
		return;
	if (end > start)
		pt_report_access(tr, f, start / ps, (end - 1) / ps, how);
	else
		pt_report_access(tr, f, 1, 0, how);	/* in the working set, no page */
}

/*
 * The same, behind the reads queued so far (pt_queue): what a scan of the
 * page tables finds comes after what was read before it, in the trace too.
 */
void pt_queue_access(struct pt_tracer *tr, struct pt_file *f, uint64_t start, uint64_t end,
		     unsigned how)
{
	struct pt_pending p = { .file = f, .start = start, .end = end, .how = how };

	pt_queue(tr, &p);
}

/* ---- files seen through fdinfo ----------------------------------------------------- */

/*
 * The ident for (mnt_id, ino) seen at path. A known one whose path differs
 * is replaced (the old one is retired: pending reads may point to it).
 * Returns NULL without memory.
 */
struct pt_ident *pt_ident_get(struct pt_tracer *tr, int mnt_id, uint64_t ino, const char *path)
{
	struct pt_ident *id = u64map_get2(&tr->idents, (uint32_t)mnt_id, ino), *nid;

	if (id && id->mnt_id == mnt_id && id->ino == ino && !strcmp(id->path, path))
		return id;
	nid = calloc(1, sizeof(*nid));
	if (!nid || !(nid->path = strdup(path))) {
		free(nid);
		tr->error = -ENOMEM;
		return NULL;
	}
	nid->mnt_id = mnt_id;
	nid->ino = ino;
	if (u64map_put2(&tr->idents, (uint32_t)mnt_id, ino, nid)) {
		free(nid->path);
		free(nid);
		tr->error = -ENOMEM;
		return NULL;
	}
	if (id) {
		id->next_retired = tr->retired;
		tr->retired = id;
	}
	return nid;
}

static struct pt_file *resolve(struct pt_tracer *tr, struct pt_ident *id)
{
	if (id->state == PT_IDENT_UNRESOLVED) {
		id->file = pt_file_lookup(tr, id->path, id->path, id->ino, 0);
		id->state = id->file ? PT_IDENT_FILE : PT_IDENT_SKIP;
		if (id->file && !strcmp(id->path, id->file->path)) {	/* one copy is enough */
			free(id->path);
			id->path = id->file->path;
			id->path_is_files = true;
		}
	}
	return id->file;
}

void pt_queue(struct pt_tracer *tr, const struct pt_pending *p)
{
	if (hs_grow(&tr->pending, &tr->pending_cap, tr->npending + 1, sizeof(*tr->pending))) {
		tr->error = -ENOMEM;
		return;
	}
	tr->pending[tr->npending++] = *p;
	if (p->ofd)
		p->ofd->refs++;
}

/* The size of f now, if end is past the size last seen. */
static uint64_t size_for(struct pt_tracer *tr, struct pt_file *f, uint64_t end)
{
	struct statx sx;

	if (end > f->size_now && !statx(AT_FDCWD, f->path, 0, STATX_INO | STATX_SIZE, &sx) &&
	    sx.stx_ino == f->ino)
		f->size_now = sx.stx_size;
	return f->size_now;
}

/* Identify and report the queued reads (the tracee runs meanwhile). */
void pt_flush(struct pt_tracer *tr)
{
	for (size_t i = 0; i < tr->npending; i++) {
		struct pt_pending *p = &tr->pending[i];
		struct pt_file *f = p->file ? p->file : resolve(tr, p->ident);
		uint64_t end = p->end;

		if (p->ofd) {
			if (p->ofd->kind == PT_OFD_UNKNOWN) {
				p->ofd->kind = f ? PT_OFD_INPUT : PT_OFD_SKIP;
				p->ofd->file = f;
			}
			pt_ofd_put(p->ofd);
		}
		if (!f)
			continue;
		if (p->flags)
			pt_file_flag(tr, f, p->flags);
		if (p->clip) {
			uint64_t size = size_for(tr, f, end);

			if (end > size)
				end = size > p->start ? size : p->start;
			if (end == p->start)
				continue;	/* at or past the end: nothing read */
		} else if (end == p->start && (p->start || size_for(tr, f, 1) != 0)) {
			continue;	/* only an empty file is read by reading nothing */
		}
		pt_file_access(tr, f, p->start, end, p->how);
	}
	tr->npending = 0;
	while (tr->retired) {
		struct pt_ident *id = tr->retired;

		tr->retired = id->next_retired;
		if (!id->path_is_files)
			free(id->path);
		free(id);
	}
}
