/* test-recording.c - the working-set model that record backends feed. */
#include <errno.h>
#include <stdint.h>

#include "record/recording.h"
#include "unit.h"

static const char *tmp_profile(void)
{
	static char path[64];

	snprintf(path, sizeof(path), "/tmp/test-recording.%d", (int)getpid());
	return path;
}

static struct hs_file_id id_of(uint64_t ino)
{
	struct hs_file_id id = { .dev = 2049, .ino = ino, .size = 1 << 20 };

	return id;
}

/* Read back file number n of a saved profile into *it; returns 1 if found. */
static int nth_file(struct hs_profile_reader *r, uint64_t n, struct hs_profile_item *it)
{
	hs_profile_rewind(r);
	while (hs_profile_next(r, it, NULL) > 0)
		if (it->kind == HS_ITEM_FILE && it->file.index == n)
			return 1;
	return 0;
}

TEST(ranges_keep_first_access_order_and_merge)
{
	struct hs_recording *r;
	struct hs_profile_reader *pr;
	struct hs_profile_item it;
	struct hs_profile_header h;
	struct hs_recording_stats st;
	int64_t a;

	CHECK(hs_recording_new(false, &r) == 0);
	a = hs_recording_file(r, &(struct hs_file_id){ .dev = 1, .ino = 7 }, "/a", 2);
	CHECK(a == 0);
	CHECK(hs_recording_access(r, a, 10, 12, HS_FILE_READ) == 0);
	CHECK(hs_recording_access(r, a, 13, 15, HS_FILE_READ) == 0);	/* continues: merged */
	CHECK(hs_recording_access(r, a, 0, 3, HS_FILE_READ) == 0);
	CHECK(hs_recording_access(r, a, 2, 11, HS_FILE_MAPPED) == 0);	/* only 4-9 are new */
	hs_recording_stats(r, &st);
	CHECK_EQ_U64(st.pages, 16);
	hs_profile_header_init(&h, "record");
	CHECK(hs_recording_save(r, tmp_profile(), &h) == 0);
	CHECK(hs_profile_open(tmp_profile(), &pr, NULL) == 0);
	CHECK(nth_file(pr, 0, &it));
	/* 4-9 continue 0-3 in both time and place: one range */
	CHECK_EQ_U64(it.file.nranges, 2);
	CHECK_EQ_U64(it.file.ranges[0].first, 10);
	CHECK_EQ_U64(it.file.ranges[0].last, 15);
	CHECK_EQ_U64(it.file.ranges[1].first, 0);
	CHECK_EQ_U64(it.file.ranges[1].last, 9);
	CHECK_EQ_U64(it.file.flags, HS_FILE_READ | HS_FILE_MAPPED);
	hs_profile_close(pr);
	unlink(tmp_profile());
	hs_recording_free(r);
}

/* A better name learnt later (the path an exec used, not a hard link's) */
TEST(rename_keeps_the_file_and_its_pages)
{
	struct hs_recording *r;
	struct hs_profile_reader *pr;
	struct hs_profile_item it;
	struct hs_profile_header h;
	int64_t a;

	CHECK(hs_recording_new(false, &r) == 0);
	a = hs_recording_file(r, &(struct hs_file_id){ .dev = 1, .ino = 7 }, "/root/.debug/x/elf", 18);
	CHECK(hs_recording_access(r, a, 0, 3, HS_FILE_MAPPED) == 0);
	CHECK(hs_recording_rename(r, a, "/usr/bin/x", 10) == 0);
	CHECK(hs_recording_rename(r, 5, "/nope", 5) == -EINVAL);
	CHECK(hs_recording_file(r, &(struct hs_file_id){ .dev = 1, .ino = 7 }, "/other", 6) == a);
	hs_profile_header_init(&h, "record");
	CHECK(hs_recording_save(r, tmp_profile(), &h) == 0);
	CHECK(hs_profile_open(tmp_profile(), &pr, NULL) == 0);
	CHECK(nth_file(pr, 0, &it));
	CHECK_STR(it.file.path, "/usr/bin/x");
	CHECK_EQ_U64(it.file.pages, 4);
	CHECK(!nth_file(pr, 1, &it));
	hs_profile_close(pr);
	unlink(tmp_profile());
	hs_recording_free(r);
}

TEST(files_ordered_by_first_access_not_lookup)
{
	struct hs_recording *r;
	struct hs_profile_reader *pr;
	struct hs_profile_item it;
	struct hs_profile_header h;
	struct hs_file_id x = id_of(1), y = id_of(2), z = id_of(3);
	int64_t a, b, c;

	CHECK(hs_recording_new(false, &r) == 0);
	a = hs_recording_file(r, &x, "/x", 2);
	b = hs_recording_file(r, &y, "/y", 2);
	c = hs_recording_file(r, &z, "/never", 6);	/* looked up, never read */
	CHECK(hs_recording_file(r, &x, "/other-name", 11) == a);	/* identity decides */
	CHECK(hs_recording_access(r, b, 0, 0, HS_FILE_READ) == 0);
	CHECK(hs_recording_access(r, a, 1, 0, HS_FILE_READ) == 0);	/* no pages: empty file */
	hs_profile_header_init(&h, "record");
	CHECK(hs_recording_save(r, tmp_profile(), &h) == 0);
	CHECK(hs_profile_open(tmp_profile(), &pr, NULL) == 0);
	CHECK_EQ_U64(hs_profile_totals(pr)->files, 2);
	CHECK(nth_file(pr, 0, &it));
	CHECK_STR(it.file.path, "/y");
	CHECK(nth_file(pr, 1, &it));
	CHECK_STR(it.file.path, "/x");
	CHECK_EQ_U64(it.file.nranges, 0);
	hs_profile_close(pr);
	unlink(tmp_profile());
	(void)c;
	hs_recording_free(r);
}

TEST(outputs_are_not_input)
{
	struct hs_recording *r;
	struct hs_profile_reader *pr;
	struct hs_profile_item it;
	struct hs_profile_header h;
	struct hs_file_id o = id_of(9), in = id_of(10);
	struct hs_recording_stats st;
	int64_t idx, k;
	int outputs = 0;

	CHECK(hs_recording_new(false, &r) == 0);
	CHECK(hs_recording_output(r, &o, "/out.o", 6) == 0);
	idx = hs_recording_file(r, &o, "/out.o", 6);
	CHECK(hs_recording_access(r, idx, 0, 5, HS_FILE_READ) == 0);	/* reading its own output */
	k = hs_recording_file(r, &in, "/in.c", 5);
	CHECK(hs_recording_access(r, k, 0, 1, HS_FILE_READ) == 0);
	hs_profile_header_init(&h, "record");
	CHECK(hs_recording_save(r, tmp_profile(), &h) == 0);
	CHECK(hs_profile_open(tmp_profile(), &pr, NULL) == 0);
	CHECK_EQ_U64(hs_profile_totals(pr)->files, 1);
	CHECK_EQ_U64(hs_profile_totals(pr)->outputs, 1);
	while (hs_profile_next(pr, &it, NULL) > 0)
		if (it.kind == HS_ITEM_OUTPUT) {
			CHECK_STR(it.file.path, "/out.o");
			outputs++;
		}
	CHECK(outputs == 1);
	hs_profile_close(pr);
	/* a file read, then truncated, stays input only: the stats agree */
	k = hs_recording_file(r, &(struct hs_file_id){ .dev = 2049, .ino = 11 }, "/log", 4);
	CHECK(hs_recording_access(r, k, 0, 0, HS_FILE_READ) == 0);
	CHECK(hs_recording_output(r, &(struct hs_file_id){ .dev = 2049, .ino = 11 }, "/log", 4) == 0);
	hs_recording_stats(r, &st);
	CHECK_EQ_U64(st.outputs, 1);
	unlink(tmp_profile());
	hs_recording_free(r);
}

TEST(trace_keeps_every_access_in_order)
{
	struct hs_recording *r;
	struct hs_profile_reader *pr;
	struct hs_profile_item it;
	struct hs_profile_header h;
	struct hs_file_id x = id_of(1), y = id_of(2);
	int64_t a, b;
	char got[256] = "";

	CHECK(hs_recording_new(true, &r) == 0);
	a = hs_recording_file(r, &x, "/x", 2);
	b = hs_recording_file(r, &y, "/y", 2);
	CHECK(hs_recording_access(r, b, 0, 1, HS_FILE_READ) == 0);
	CHECK(hs_recording_access(r, b, 2, 3, HS_FILE_READ) == 0);	/* merged into 0-3 */
	CHECK(hs_recording_access(r, a, 5, 5, HS_FILE_READ) == 0);
	CHECK(hs_recording_access(r, b, 0, 0, HS_FILE_READ) == 0);	/* a repeat: kept */
	CHECK(hs_recording_access(r, b, 7, 7, HS_FILE_READ) == 0);
	hs_profile_header_init(&h, "record");
	CHECK(hs_recording_save(r, tmp_profile(), &h) == 0);
	CHECK(hs_profile_open(tmp_profile(), &pr, NULL) == 0);
	while (hs_profile_next(pr, &it, NULL) > 0) {
		if (it.kind != HS_ITEM_TRACE)
			continue;
		for (size_t i = 0; i < it.trace.nranges; i++)
			snprintf(got + strlen(got), sizeof(got) - strlen(got), "%llu:%llu-%llu ",
				 (unsigned long long)it.trace.file,
				 (unsigned long long)it.trace.ranges[i].first,
				 (unsigned long long)it.trace.ranges[i].last);
	}
	/* y is file 0 (read first), x is file 1 */
	CHECK_STR(got, "0:0-3 1:5-5 0:0-0 0:7-7 ");
	CHECK_EQ_U64(hs_profile_totals(pr)->trace_lines, 3);
	hs_profile_close(pr);
	unlink(tmp_profile());
	hs_recording_free(r);
}

/* The trace of a saved recording as "file:first-last " items. */
static void trace_of(struct hs_recording *r, char *got, size_t cap)
{
	struct hs_profile_reader *pr;
	struct hs_profile_item it;
	struct hs_profile_header h;

	got[0] = '\0';
	hs_profile_header_init(&h, "record");
	CHECK(hs_recording_save(r, tmp_profile(), &h) == 0);
	CHECK(hs_profile_open(tmp_profile(), &pr, NULL) == 0);
	while (hs_profile_next(pr, &it, NULL) > 0) {
		if (it.kind != HS_ITEM_TRACE)
			continue;
		for (size_t i = 0; i < it.trace.nranges; i++)
			snprintf(got + strlen(got), cap - strlen(got), "%llu:%llu-%llu ",
				 (unsigned long long)it.trace.file,
				 (unsigned long long)it.trace.ranges[i].first,
				 (unsigned long long)it.trace.ranges[i].last);
	}
	hs_profile_close(pr);
	unlink(tmp_profile());
}

/*
 * The canonical form: an access that starts on the previous one's last
 * page, or right after it, continues it; the reads of one stretch of a
 * file position (what ptrace sees) and of each read(2) (what eBPF sees)
 * give the same trace.
 */
TEST(trace_canonical_form)
{
	struct hs_recording *r, *bytes;
	struct hs_file_id x = id_of(1), y = id_of(2);
	char got[512], want[512];
	int64_t a, b;

	CHECK(hs_recording_new(true, &r) == 0);
	a = hs_recording_file(r, &x, "/x", 2);
	b = hs_recording_file(r, &y, "/y", 2);
	/* reads of 1,000 bytes: pages 0, 0, 0, 0, 0-1, 1, 1, 1, 1-2 */
	for (uint64_t off = 0; off < 9000; off += 1000)
		CHECK(hs_recording_access(r, a, off / 4096, (off + 999) / 4096, HS_FILE_READ) == 0);
	CHECK(hs_recording_access(r, a, 2, 2, HS_FILE_READ) == 0);	/* the same page again */
	CHECK(hs_recording_access(r, a, 0, 2, HS_FILE_READ) == 0);	/* back: a re-read */
	CHECK(hs_recording_access(r, a, 1, 1, HS_FILE_READ) == 0);	/* back within it */
	CHECK(hs_recording_access(r, a, 3, 3, HS_FILE_READ) == 0);	/* ahead, a gap */
	CHECK(hs_recording_access(r, b, 3, 4, HS_FILE_READ) == 0);	/* another file */
	CHECK(hs_recording_access(r, a, 3, 5, HS_FILE_READ) == 0);	/* not continued across b */
	CHECK(hs_recording_access(r, a, 6, 6, HS_FILE_MAPPED) == 0);	/* continues, however read */
	trace_of(r, got, sizeof(got));
	CHECK_STR(got, "0:0-2 0:0-2 0:1-1 0:3-3 1:3-4 0:3-6 ");

	/* the same reads as one stretch of bytes [0, 9000): the same trace */
	CHECK(hs_recording_new(true, &bytes) == 0);
	a = hs_recording_file(bytes, &x, "/x", 2);
	b = hs_recording_file(bytes, &y, "/y", 2);
	CHECK(hs_recording_access(bytes, a, 0, 8999 / 4096, HS_FILE_READ) == 0);
	CHECK(hs_recording_access(bytes, a, 2, 2, HS_FILE_READ) == 0);
	CHECK(hs_recording_access(bytes, a, 0, 2, HS_FILE_READ) == 0);
	CHECK(hs_recording_access(bytes, a, 1, 1, HS_FILE_READ) == 0);
	CHECK(hs_recording_access(bytes, a, 3, 3, HS_FILE_READ) == 0);
	CHECK(hs_recording_access(bytes, b, 3, 4, HS_FILE_READ) == 0);
	CHECK(hs_recording_access(bytes, a, 3, 6, HS_FILE_READ) == 0);
	trace_of(bytes, want, sizeof(want));
	CHECK_STR(got, want);
	hs_recording_free(bytes);
	hs_recording_free(r);
}

TEST(many_files_and_sparse_pages)
{
	struct hs_recording *r;
	struct hs_recording_stats st;

	CHECK(hs_recording_new(false, &r) == 0);
	for (uint64_t i = 0; i < 50000; i++) {
		struct hs_file_id id = id_of(i + 100);
		int64_t idx = hs_recording_file(r, &id, "/f", 2);

		CHECK(idx == (int64_t)i);
		CHECK(hs_recording_access(r, idx, i % 7, i % 7 + 2, HS_FILE_READ) == 0);
	}
	CHECK(hs_recording_access(r, 0, (1ull << 30), (1ull << 30) + 1, HS_FILE_READ) == 0);
	hs_recording_stats(r, &st);
	CHECK_EQ_U64(st.files, 50000);
	CHECK_EQ_U64(st.pages, 50000 * 3 + 2);
	hs_recording_free(r);
}

int main(void)
{
	return RUN_TESTS(ranges_keep_first_access_order_and_merge, rename_keeps_the_file_and_its_pages,
			 files_ordered_by_first_access_not_lookup,
			 outputs_are_not_input, trace_keeps_every_access_in_order, trace_canonical_form,
			 many_files_and_sparse_pages);
}
