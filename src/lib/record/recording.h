/*
 * recording.h - a working set being recorded.
 *
 * The record backends (ptrace, eBPF) see a stream of accesses: "process P
 * read pages 3-9 of the file with this identity". A recording turns that
 * stream into the profile's model:
 *
 *   - files in the order of their first access, identified by device and
 *     inode (a path can name several files over a run: one replaced by
 *     rename is a new file);
 *   - for each file, the pages read, as ranges in first-access order;
 *   - the job's outputs (files it created or truncated), which are not
 *     part of its input working set;
 *   - optionally, the ordered access trace, repeats included, spooled to
 *     an unlinked temporary file so that memory stays bounded however long
 *     the job runs.
 *
 * A recording is not thread-safe: one backend thread feeds it.
 */
#ifndef HOTSET_RECORDING_H
#define HOTSET_RECORDING_H

#include <stdbool.h>
#include <stdint.h>

#include "profile/profile.h"

struct hs_recording;

/*
 * Start an empty recording; with keep_trace, accesses are also kept in
 * order. Returns 0 and sets *out, or -errno.
 */
int hs_recording_new(bool keep_trace, struct hs_recording **out);

void hs_recording_free(struct hs_recording *r);

/*
 * The file with identity id, added (with path, copied) if it is new.
 * Returns its index (first-access order) or -errno. For a known file the
 * path is not compared: the identity decides.
 */
int64_t hs_recording_file(struct hs_recording *r, const struct hs_file_id *id, const char *path,
			  size_t path_len);

/*
 * Name file idx by path from now on: a better name learnt after the file
 * was registered (the path the job used, where a hard link had named it).
 * Returns 0, or -ENOMEM (the old name stays).
 */
int hs_recording_rename(struct hs_recording *r, int64_t idx, const char *path,
			size_t path_len);

/*
 * Record that pages [first, last] of file idx were accessed, how being an
 * enum hs_file_flag (HS_FILE_READ, HS_FILE_MAPPED...). first > last records
 * an access that read no page (an empty file, a read at end of file): the
 * file is part of the working set with no pages. Accesses to a file the
 * job created (see hs_recording_output) are ignored. Returns 0 or -errno.
 */
int hs_recording_access(struct hs_recording *r, int64_t idx, uint64_t first, uint64_t last,
			unsigned how);

/* Mark file idx with flags (e.g. HS_FILE_WRITTEN) without an access. */
void hs_recording_flag(struct hs_recording *r, int64_t idx, unsigned flags);

/*
 * The job created or truncated the file with identity id (at path): it is
 * an output, and its later accesses are not input. Returns 0 or -errno.
 */
int hs_recording_output(struct hs_recording *r, const struct hs_file_id *id, const char *path,
			size_t path_len);

/* Totals so far. */
struct hs_recording_stats {
	uint64_t files;		/* files with at least one access */
	uint64_t pages;		/* distinct pages accessed */
	uint64_t accesses;	/* accesses recorded (trace runs before merging) */
	uint64_t outputs;
};
void hs_recording_stats(const struct hs_recording *r, struct hs_recording_stats *st);

/*
 * Write the recording as a profile at path (atomically), with header h.
 * Files created by the job that were never input are listed as outputs.
 * The recording stays usable. Returns 0 or -errno.
 */
int hs_recording_save(struct hs_recording *r, const char *path, const struct hs_profile_header *h);

#endif
