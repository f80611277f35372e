/*
 * recording.c - turning a stream of accesses into a working set.
 *
 * Each file keeps a bitmap of the pages seen so far and the list of ranges
 * in the order they were first read: a new access appends only the pages
 * not seen before, extending the last range when it continues it, so a
 * file read front to back is one range however many reads it took. The
 * bitmap is flat (one bit per page up to the highest page seen): 32 KiB
 * for a 1 GiB file read anywhere near its end.
 *
 * Files are found by (device, inode) in the library's map (u64map). The
 * trace, if kept, is spooled to an unlinked temporary file in binary, in
 * its canonical form (see spool_run): the two backends see a job's reads
 * at different grains (a read(2) each, or a stretch of a file position),
 * and give the same runs once merged by that rule.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record/recording.h"
#include "base/u64map.h"

struct rfile {
	struct hs_file_id id;
	char *path;
	size_t path_len;
	unsigned flags;
	bool output;		/* created or truncated by the job */
	int64_t order;		/* position among accessed files, -1 before */
	uint64_t *seen;		/* bitmap of pages accessed */
	size_t seen_words;
	struct hs_range *ranges;	/* first-access order */
	size_t nranges, ranges_cap;
	uint64_t pages;
};

/* One trace run as spooled: file (internal index) and pages. */
struct run {
	uint64_t file;
	uint64_t first, last;
};

struct hs_recording {
	struct rfile *files;
	size_t nfiles, files_cap;
	struct u64map by_id;	/* (dev, ino) -> index + 1 */
	int64_t *order;		/* order -> internal index */
	size_t order_cap;
	size_t accessed;
	uint64_t pages, accesses;
	FILE *spool;		/* trace runs, NULL without a trace */
	struct run pending;	/* the run being extended */
	bool have_pending;
	uint64_t spooled;
	int spool_error;
};

int hs_recording_new(bool keep_trace, struct hs_recording **out)
{
	struct hs_recording *r = calloc(1, sizeof(*r));

	if (!r)
		return -ENOMEM;
	if (keep_trace) {
		r->spool = tmpfile();	/* unlinked: nothing is left if we die */
		/* close-on-exec: the job must not inherit it */
		if (!r->spool || fcntl(fileno(r->spool), F_SETFD, FD_CLOEXEC) < 0) {
			int rc = -errno;

			if (r->spool)
				fclose(r->spool);
			free(r);
			return rc;
		}
	}
	*out = r;
	return 0;
}

void hs_recording_free(struct hs_recording *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nfiles; i++) {
		free(r->files[i].path);
		free(r->files[i].seen);
		free(r->files[i].ranges);
	}
	free(r->files);
	u64map_free(&r->by_id);
	free(r->order);
	if (r->spool)
		fclose(r->spool);
	free(r);
}

int hs_recording_rename(struct hs_recording *r, int64_t idx, const char *path,
			size_t path_len)
{
	char *copy;

	if (idx < 0 || (size_t)idx >= r->nfiles)
		return -EINVAL;
	if (!(copy = malloc(path_len + 1)))
		return -ENOMEM;
	memcpy(copy, path, path_len);
	copy[path_len] = '\0';
	free(r->files[idx].path);
	r->files[idx].path = copy;
	r->files[idx].path_len = path_len;
	return 0;
}

int64_t hs_recording_file(struct hs_recording *r, const struct hs_file_id *id, const char *path,
			  size_t path_len)
{
	uintptr_t known = (uintptr_t)u64map_get2(&r->by_id, id->dev, id->ino);
	struct rfile *f;

	if (known)
		return (int64_t)known - 1;
	if (hs_grow(&r->files, &r->files_cap, r->nfiles + 1, sizeof(*r->files)) ||
	    hs_grow(&r->order, &r->order_cap, r->nfiles + 1, sizeof(*r->order)))
		return -ENOMEM;
	f = &r->files[r->nfiles];
	memset(f, 0, sizeof(*f));
	f->path = malloc(path_len + 1);
	if (!f->path)
		return -ENOMEM;
	memcpy(f->path, path, path_len);
	f->path[path_len] = '\0';
	f->path_len = path_len;
	f->id = *id;
	f->order = -1;
	if (u64map_put2(&r->by_id, id->dev, id->ino, (void *)(uintptr_t)(r->nfiles + 1))) {
		free(f->path);
		return -ENOMEM;
	}
	return (int64_t)r->nfiles++;
}

static int add_range(struct rfile *f, uint64_t first, uint64_t last)
{
	if (f->nranges && f->ranges[f->nranges - 1].last + 1 == first) {
		f->ranges[f->nranges - 1].last = last;
		return 0;
	}
	if (hs_grow(&f->ranges, &f->ranges_cap, f->nranges + 1, sizeof(*f->ranges)))
		return -ENOMEM;
	f->ranges[f->nranges++] = (struct hs_range){ first, last };
	return 0;
}

static bool page_seen(const struct rfile *f, uint64_t p)
{
	return p / 64 < f->seen_words && (f->seen[p / 64] >> (p % 64) & 1);
}

/* Append the pages of [first, last] not seen before, and mark them. */
static int add_new_pages(struct rfile *f, uint64_t first, uint64_t last, uint64_t *added)
{
	size_t had = f->seen_words;
	int rc;

	if (hs_grow(&f->seen, &f->seen_words, last / 64 + 1, sizeof(*f->seen)))
		return -ENOMEM;
	memset(f->seen + had, 0, (f->seen_words - had) * sizeof(*f->seen));
	for (uint64_t p = first; p <= last;) {
		uint64_t q;

		if (page_seen(f, p)) {
			p++;
			continue;
		}
		for (q = p; q < last && !page_seen(f, q + 1); q++)
			;
		if ((rc = add_range(f, p, q)))
			return rc;
		for (uint64_t k = p; k <= q; k++)
			f->seen[k / 64] |= 1ull << (k % 64);
		*added += q - p + 1;
		if (q == UINT64_MAX)
			break;
		p = q + 1;
	}
	return 0;
}

/*
 * Append an access to the trace. The canonical form: an access to the
 * same file as the one before that starts on that one's last page, or
 * right after it, continues it (the run grows to its last page). Reads of
 * a file front to back in pieces that are not page-aligned are then one
 * run whatever their size, as the stretch of a file position that the
 * ptrace backend sees is; and a page read again by the very next read
 * counts once, as the kernel counts it (filemap_read() marks a page
 * accessed once for reads that follow each other within it). Anything
 * else, a read that goes back or skips ahead, is an access of its own.
 * Since a continued run's last page is its latest access's, merging
 * merged runs again changes nothing: a backend may merge by this rule
 * before the recording sees its accesses.
 */
static void spool_run(struct hs_recording *r, uint64_t idx, uint64_t first, uint64_t last)
{
	struct run *p = &r->pending;

	if (r->have_pending && p->file == idx && (first == p->last || first == p->last + 1)) {
		if (last > p->last)
			p->last = last;
		return;
	}
	if (r->have_pending && fwrite(p, sizeof(*p), 1, r->spool) != 1)
		r->spool_error = -EIO;
	r->spooled += r->have_pending;
	*p = (struct run){ idx, first, last };
	r->have_pending = true;
}

int hs_recording_access(struct hs_recording *r, int64_t idx, uint64_t first, uint64_t last,
			unsigned how)
{
	struct rfile *f;
	uint64_t added = 0;
	int rc;

	if (idx < 0 || (size_t)idx >= r->nfiles)
		return -EINVAL;
	f = &r->files[idx];
	if (f->output)
		return 0;
	if (last >= hs_profile_page_limit(hs_page_size()))
		last = hs_profile_page_limit(hs_page_size()) - 1;
	if (f->order < 0) {
		f->order = (int64_t)r->accessed;
		r->order[r->accessed++] = idx;
	}
	f->flags |= how;
	r->accesses++;
	if (first > last)
		return 0;
	if ((rc = add_new_pages(f, first, last, &added)))
		return rc;
	f->pages += added;
	r->pages += added;
	if (r->spool)
		spool_run(r, (uint64_t)idx, first, last);
	return 0;
}

void hs_recording_flag(struct hs_recording *r, int64_t idx, unsigned flags)
{
	if (idx >= 0 && (size_t)idx < r->nfiles)
		r->files[idx].flags |= flags;
}

int hs_recording_output(struct hs_recording *r, const struct hs_file_id *id, const char *path,
			size_t path_len)
{
	int64_t idx = hs_recording_file(r, id, path, path_len);

	if (idx < 0)
		return (int)idx;
	r->files[idx].output = true;
	r->files[idx].flags |= HS_FILE_WRITTEN;
	return 0;
}

void hs_recording_stats(const struct hs_recording *r, struct hs_recording_stats *st)
{
	st->files = r->accessed;
	st->pages = r->pages;
	st->accesses = r->accesses;
	/* as listed: a file read before the job truncated it stays input only */
	st->outputs = 0;
	for (size_t i = 0; i < r->nfiles; i++)
		st->outputs += r->files[i].output && r->files[i].order < 0;
}

/* Emit the spooled trace, a "t" line per stretch of runs on one file. */
static int save_trace(struct hs_recording *r, struct hs_profile_writer *w)
{
	struct hs_range ranges[1024];
	struct hs_profile_trace t = { .ranges = ranges };
	struct run run;
	int rc = 0;

	if (r->have_pending) {	/* flush the run being extended */
		if (fwrite(&r->pending, sizeof(r->pending), 1, r->spool) != 1)
			return -EIO;
		r->spooled++;
		r->have_pending = false;
	}
	if (r->spool_error || fflush(r->spool) != 0)
		return -EIO;
	rewind(r->spool);
	for (uint64_t i = 0; i < r->spooled && !rc; i++) {
		uint64_t order;

		if (fread(&run, sizeof(run), 1, r->spool) != 1)
			return -EIO;
		order = (uint64_t)r->files[run.file].order;
		if (t.nranges && (t.file != order || t.nranges == 1024)) {
			rc = hs_profile_write_trace(w, &t);
			t.nranges = 0;
		}
		t.file = order;
		ranges[t.nranges++] = (struct hs_range){ run.first, run.last };
	}
	if (!rc && t.nranges)
		rc = hs_profile_write_trace(w, &t);
	fseek(r->spool, 0, SEEK_END);	/* a later access appends */
	return rc;
}

int hs_recording_save(struct hs_recording *r, const char *path, const struct hs_profile_header *h)
{
	struct hs_profile_writer *w;
	int rc;

	if ((rc = hs_profile_writer_open(path, h, &w)))
		return rc;
	for (size_t i = 0; i < r->accessed && !rc; i++) {
		const struct rfile *f = &r->files[r->order[i]];
		struct hs_profile_file pf = {
			.path = f->path, .path_len = f->path_len, .id = f->id, .flags = f->flags,
			.ranges = f->ranges, .nranges = f->nranges, .pages = f->pages,
		};

		rc = hs_profile_write_file(w, &pf);
	}
	for (size_t i = 0; i < r->nfiles && !rc; i++)
		if (r->files[i].output && r->files[i].order < 0)
			rc = hs_profile_write_output(w, r->files[i].path, r->files[i].path_len);
	if (!rc && r->spool)
		rc = save_trace(r, w);
	if (rc) {
		hs_profile_writer_abort(w);
		return rc;
	}
	return hs_profile_writer_commit(w);
}
