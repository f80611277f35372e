/*
 * test-record-bpf.c - the eBPF record backend's user side: the events of
 * the kernel side (record-bpf-ring.h) turned into a recording, without root,
 * libbpf or a kernel program: the events are made here.
 */
#include <errno.h>
#include <linux/magic.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "kernel/procfs.h"
#include "record/recording.h"
#include "record/bpf/record-bpf-events.h"
#include "scratch.h"
#include "unit.h"

#define EXT4 0xEF53
#define DEV (8u << 20 | 1)	/* the kernel's encoding of 8:1 */

static struct hs_bpf_inode inode_of(uint64_t ino, uint32_t gen)
{
	return (struct hs_bpf_inode){ .ino = ino, .dev = DEV, .gen = gen, .size = 1 << 24,
				      .mtime_sec = 1700000000 };
}

static void feed(struct bpf_events *s, void *ev, size_t size)
{
	CHECK(bpf_events_feed(s, ev, size) == 0);
}

static void pages(struct bpf_events *s, struct hs_bpf_inode in, uint32_t how, uint64_t first,
		  uint64_t last, uint64_t time)
{
	struct hs_bpf_pages e = {
		.h = { .type = HS_BPF_PAGES, .how = how, .time = time, .inode = in },
		.first = first, .last = last,
	};

	feed(s, &e, sizeof(e));
}

static void flag(struct bpf_events *s, struct hs_bpf_inode in, uint32_t how, uint64_t time)
{
	struct hs_bpf_event e = { .type = HS_BPF_FLAG, .how = how, .time = time, .inode = in };

	feed(s, &e, sizeof(e));
}

/* A path event for path ("/a/b", or "a/b" relative to the filesystem), as the kernel sends it. */
static void path_event(struct bpf_events *s, struct hs_bpf_inode in, uint32_t kind,
		       const char *path, uint64_t magic, bool deleted, bool truncated)
{
	static struct hs_bpf_path e;
	const char *end = path + strlen(path);
	uint32_t len = 0;

	memset(&e, 0, sizeof(e));
	e.h = (struct hs_bpf_event){ .type = HS_BPF_PATH, .how = kind, .time = 1, .inode = in };
	e.fs_magic = magic;
	e.deleted = deleted;
	e.truncated = truncated;
	/* components leaf first, each with its NUL */
	while (end > path) {
		const char *start = end;

		while (start > path && start[-1] != '/')
			start--;
		if (end > start) {
			memcpy(e.buf + len, start, (size_t)(end - start));
			len += (uint32_t)(end - start);
			e.buf[len++] = '\0';
		}
		end = start > path ? start - 1 : start;
	}
	e.len = len;
	feed(s, &e, offsetof(struct hs_bpf_path, buf) + len);
}

static void named(struct bpf_events *s, struct hs_bpf_inode in, const char *path)
{
	path_event(s, in, HS_BPF_PATH_OPENED, path, EXT4, false, false);
}

static const char *tmp_profile(void)
{
	static char path[64];

	snprintf(path, sizeof(path), "/tmp/test-record-bpf.%d", (int)getpid());
	return path;
}

/*
 * Save rec and describe it: "PATH:RANGES ..." per file, "o:PATH" per
 * output, then "| " and the trace as "INDEX:FIRST-LAST ...".
 */
static void describe(struct hs_recording *rec, char *out, size_t cap)
{
	struct hs_profile_reader *pr;
	struct hs_profile_item it;
	struct hs_profile_header h;
	bool trace = false;

	out[0] = '\0';
	hs_profile_header_init(&h, "record");
	CHECK(hs_recording_save(rec, tmp_profile(), &h) == 0);
	CHECK(hs_profile_open(tmp_profile(), &pr, NULL) == 0);
	while (hs_profile_next(pr, &it, NULL) > 0) {
		size_t n = strlen(out);

		if (it.kind == HS_ITEM_FILE) {
			n += (size_t)snprintf(out + n, cap - n, "%s:", it.file.path);
			for (size_t i = 0; i < it.file.nranges; i++)
				n += (size_t)snprintf(out + n, cap - n, "%s%llu-%llu", i ? "," : "",
						      (unsigned long long)it.file.ranges[i].first,
						      (unsigned long long)it.file.ranges[i].last);
			snprintf(out + n, cap - n, " ");
		} else if (it.kind == HS_ITEM_OUTPUT) {
			snprintf(out + n, cap - n, "o:%s ", it.file.path);
		} else if (it.kind == HS_ITEM_TRACE) {
			if (!trace)
				n += (size_t)snprintf(out + n, cap - n, "| ");
			trace = true;
			for (size_t i = 0; i < it.trace.nranges; i++)
				n += (size_t)snprintf(out + n, cap - n, "%llu:%llu-%llu ",
						      (unsigned long long)it.trace.file,
						      (unsigned long long)it.trace.ranges[i].first,
						      (unsigned long long)it.trace.ranges[i].last);
		}
	}
	hs_profile_close(pr);
	unlink(tmp_profile());
}

struct fixture {
	struct hs_recording *rec;
	struct bpf_events *s;
	char got[4096];
};

static void begin(struct fixture *f, bool trace)
{
	CHECK(hs_recording_new(trace, &f->rec) == 0);
	CHECK(bpf_events_new(f->rec, &f->s) == 0);
}

/* End the session, describe the recording into f->got, free both. */
static void finish(struct fixture *f, struct bpf_events_counts *c)
{
	bpf_events_end(f->s);
	if (c)
		bpf_events_counts(f->s, c);
	describe(f->rec, f->got, sizeof(f->got));
	bpf_events_free(f->s);
	hs_recording_free(f->rec);
}

/* The job: 2,000 pages read three times over, as the kernel reports each read. */
TEST(every_access_in_order)
{
	struct hs_bpf_inode a = inode_of(10, 1), b = inode_of(11, 1);
	struct hs_recording_stats st;
	struct fixture f;
	uint64_t t = 100;

	begin(&f, true);
	named(f.s, a, "/data/a");
	named(f.s, b, "/data/b");
	for (int pass = 0; pass < 3; pass++)
		for (uint64_t p = 0; p < 2000; p += 31)	/* filemap_read()'s batches */
			pages(f.s, a, HS_BPF_READ, p, p + 30 < 1999 ? p + 30 : 1999, t++);
	/* reads of 1,000 bytes: pages 0, 0, 0, 0, 0-1, 1..., one stretch */
	for (uint64_t off = 0; off < 12000; off += 1000)
		pages(f.s, b, HS_BPF_READ, off / 4096, (off + 999) / 4096, t++);
	pages(f.s, a, HS_BPF_MAPPED, 7, 7, t++);
	pages(f.s, a, HS_BPF_MAPPED, 8, 8, t++);	/* continues the fault before */
	pages(f.s, a, HS_BPF_MAPPED, 3, 3, t++);
	hs_recording_stats(f.rec, &st);
	CHECK_EQ_U64(st.pages, 2000 + 3);
	finish(&f, NULL);
	CHECK_STR(f.got, "/data/a:0-1999 /data/b:0-2 | 0:0-1999 0:0-1999 0:0-1999 1:0-2 0:7-8 "
			 "0:3-3 ");
}

/* Accesses before the path (execve's reads) wait for it, in their order. */
TEST(accesses_wait_for_their_path)
{
	struct hs_bpf_inode prog = inode_of(20, 1), data = inode_of(21, 1);
	struct bpf_events_counts c;
	struct fixture f;

	begin(&f, true);
	pages(f.s, prog, HS_BPF_EXEC, 0, 0, 10);
	pages(f.s, prog, HS_BPF_EXEC, 2, 3, 11);
	named(f.s, prog, "/usr/bin/prog");
	named(f.s, data, "/data/in");
	pages(f.s, data, HS_BPF_READ, 5, 5, 12);
	pages(f.s, inode_of(22, 1), HS_BPF_READ, 0, 0, 13);	/* never named */
	finish(&f, &c);
	CHECK_STR(f.got, "/usr/bin/prog:0-0,2-3 /data/in:5-5 | 0:0-0 0:2-3 1:5-5 ");
	CHECK_EQ_U64(c.unnamed, 1);
	CHECK_EQ_U64(c.error, 0);
}

/* What the job reads back after creating or truncating a file is not input. */
TEST(outputs_from_their_time_on)
{
	struct hs_bpf_inode log = inode_of(30, 1), out = inode_of(31, 1);
	struct fixture f;

	begin(&f, true);
	named(f.s, log, "/data/log");
	named(f.s, out, "/data/out");
	pages(f.s, log, HS_BPF_READ, 0, 1, 10);	/* before its truncation */
	flag(f.s, out, HS_BPF_OUTPUT, 15);
	flag(f.s, log, HS_BPF_OUTPUT, 20);
	pages(f.s, log, HS_BPF_READ, 2, 2, 19);	/* sent late (it was merging): still before */
	pages(f.s, log, HS_BPF_READ, 0, 0, 21);
	pages(f.s, out, HS_BPF_READ, 0, 3, 30);
	flag(f.s, log, HS_BPF_WRITTEN, 22);
	finish(&f, NULL);
	CHECK_STR(f.got, "/data/log:0-2 o:/data/out | 0:0-2 ");
}

/* An inode number freed and used again within the run is another file. */
TEST(inode_number_reused)
{
	struct hs_bpf_inode old = inode_of(40, 1), new = inode_of(40, 2);
	struct hs_profile_reader *pr;
	struct hs_profile_item it;
	struct hs_profile_header h;
	struct hs_recording *rec;
	struct bpf_events *s;
	uint64_t inos[2] = { 0, 0 };
	int n = 0;

	CHECK(hs_recording_new(false, &rec) == 0);
	CHECK(bpf_events_new(rec, &s) == 0);
	named(s, old, "/data/old");
	pages(s, old, HS_BPF_READ, 0, 0, 1);
	named(s, new, "/data/new");
	pages(s, new, HS_BPF_READ, 1, 1, 2);
	pages(s, old, HS_BPF_READ, 2, 2, 3);	/* still the first file */
	bpf_events_end(s);
	hs_profile_header_init(&h, "record");
	CHECK(hs_recording_save(rec, tmp_profile(), &h) == 0);
	CHECK(hs_profile_open(tmp_profile(), &pr, NULL) == 0);
	while (hs_profile_next(pr, &it, NULL) > 0)
		if (it.kind == HS_ITEM_FILE && n < 2)
			inos[n++] = it.file.id.ino;
	CHECK(n == 2);
	CHECK_EQ_U64(inos[0], 40);	/* the first keeps the true number */
	CHECK(inos[1] != 40);
	hs_profile_close(pr);
	unlink(tmp_profile());
	bpf_events_free(s);
	hs_recording_free(rec);
}

/* Files that are never part of a working set, or cannot be named, are left out and counted. */
TEST(left_out)
{
	struct bpf_events_counts c;
	struct fixture f;
	struct {
		const char *path;
		uint64_t magic;
		bool deleted, truncated;
	} cases[] = {
		{ "/dev/shm/x", TMPFS_MAGIC, false, false },
		{ "/proc/self/status", PROC_SUPER_MAGIC, false, false },
		{ "/home/u/notes", EXT4, true, false },	/* unlinked */
		{ "/a/very/deep/path", EXT4, false, true },	/* cut short */
		{ "/data/kept", EXT4, false, false },
	};

	begin(&f, false);
	for (uint64_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct hs_bpf_inode in = inode_of(50 + i, 1);

		path_event(f.s, in, HS_BPF_PATH_OPENED, cases[i].path, cases[i].magic,
			   cases[i].deleted, cases[i].truncated);
		pages(f.s, in, HS_BPF_READ, 0, 0, 10 + i);
	}
	finish(&f, &c);
	CHECK_STR(f.got, "/data/kept:0-0 ");
	CHECK_EQ_U64(c.too_long, 1);
	CHECK_EQ_U64(c.unnamed, 0);
}

/* Events that are cut short or malformed change nothing. */
TEST(malformed_events_are_ignored)
{
	struct hs_bpf_inode in = inode_of(60, 1);
	struct hs_bpf_pages p = { .h = { .type = HS_BPF_PAGES, .how = HS_BPF_READ, .inode = in },
				  .first = 0, .last = 0 };
	static struct hs_bpf_path bad;
	struct hs_bpf_event unknown = { .type = 99, .inode = in };
	struct fixture f;

	begin(&f, true);
	feed(f.s, &p, sizeof(p) - 1);		/* too short for its type */
	feed(f.s, &p, 4);
	feed(f.s, &unknown, sizeof(unknown));
	bad.h = (struct hs_bpf_event){ .type = HS_BPF_PATH, .how = HS_BPF_PATH_OPENED, .inode = in };
	bad.fs_magic = EXT4;
	memcpy(bad.buf, "abc", 3);		/* no NUL at its end */
	bad.len = 3;
	feed(f.s, &bad, offsetof(struct hs_bpf_path, buf) + 3);
	bad.len = 100;				/* longer than the event */
	feed(f.s, &bad, offsetof(struct hs_bpf_path, buf) + 4);
	finish(&f, NULL);
	CHECK_STR(f.got, "");
}

struct mount_of {
	dev_t dev;
	const char *path;
	char root[512], point[512];
	size_t best;
};

static int find_mount(void *ctx, const struct hs_mountinfo *m)
{
	struct mount_of *w = ctx;
	size_t n = strlen(m->point);

	if (makedev(m->major, m->minor) != w->dev)
		return 0;
	if (strcmp(m->point, "/") &&
	    (strncmp(w->path, m->point, n) || (w->path[n] != '/' && w->path[n])))
		return 0;
	if (n >= w->best) {
		w->best = n;
		snprintf(w->root, sizeof(w->root), "%s", m->root);
		snprintf(w->point, sizeof(w->point), "%s", m->point);
	}
	return 0;
}

/*
 * A file opened before the job (no open names it) is named from its inode,
 * relative to its filesystem, and completed from /proc/self/mountinfo;
 * the path an open gives later replaces it (it may be another hard link).
 */
TEST(paths_relative_to_the_filesystem)
{
	struct mount_of w = { .best = 0 };
	struct hs_bpf_inode in;
	struct fixture f;
	struct stat st;
	char rel[1024], want[2048], *file;
	FILE *fp;

	scratch_dir();
	file = path_in("data");
	fp = fopen(file, "w");
	CHECK(fp && fputs("x", fp) >= 0 && fclose(fp) == 0);
	CHECK(stat(file, &st) == 0);
	w.dev = st.st_dev;
	w.path = file;
	CHECK(hs_mountinfo_each(NULL, find_mount, &w) == 0);
	if (!w.best && strcmp(w.point, "/"))
		SKIP("the scratch directory's mount is not in mountinfo");
	/* the path within the filesystem: its root's, then the rest after the mount point */
	snprintf(rel, sizeof(rel), "%s%s", strcmp(w.root, "/") ? w.root : "",
		 file + (strcmp(w.point, "/") ? strlen(w.point) : 0));
	in = (struct hs_bpf_inode){ .ino = st.st_ino, .gen = 1, .size = 1,
				    .dev = major(st.st_dev) << 20 | minor(st.st_dev) };
	begin(&f, false);
	path_event(f.s, in, HS_BPF_PATH_FSREL, rel + 1, EXT4, false, false);
	pages(f.s, in, HS_BPF_READ, 0, 0, 5);
	named(f.s, in, "/the/path/an/open/used");	/* learnt later: it renames */
	finish(&f, NULL);
	snprintf(want, sizeof(want), "/the/path/an/open/used:0-0 ");
	CHECK_STR(f.got, want);

	begin(&f, false);
	path_event(f.s, in, HS_BPF_PATH_FSREL, rel + 1, EXT4, false, false);
	pages(f.s, in, HS_BPF_READ, 0, 0, 5);
	finish(&f, NULL);
	snprintf(want, sizeof(want), "%s:0-0 ", file);
	CHECK_STR(f.got, want);
	scratch_done();
}

/* An empty file read is in the working set with no pages, and in no trace line. */
TEST(empty_file)
{
	struct hs_bpf_inode in = inode_of(70, 1);
	struct fixture f;

	begin(&f, true);
	named(f.s, in, "/data/empty");
	pages(f.s, in, HS_BPF_READ, 1, 0, 3);
	finish(&f, NULL);
	CHECK_STR(f.got, "/data/empty: ");
}

int main(void)
{
	return RUN_TESTS(every_access_in_order, accesses_wait_for_their_path,
			 outputs_from_their_time_on, inode_number_reused, left_out,
			 malformed_events_are_ignored, paths_relative_to_the_filesystem, empty_file);
}
