/*
 * test-profile.c - the profile format: what the writer writes the reader
 * reads back, byte for byte; every kind of malformed input is refused with
 * the line it is on and a reason; writes are atomic; the fuzz corpus
 * replays cleanly. Every profile read here is also held to the promises of
 * tests/profile-check.h, the checker the fuzz target uses, which is itself
 * tested on items that break them.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "base/atomic.h"
#include "profile/profile.h"
#include "profile-check.h"
#include "scratch.h"
#include "unit.h"

/* ---- scaffolding ----------------------------------------------------------- */

/* Names in the scratch directory, "." and ".." aside. */
static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	closedir(d);
	return n;
}

static char *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0, k;

	if (!f)
		return NULL;
	do {
		if (hs_grow(&buf, &cap, n + 4096 + 1, 1)) {	/* + 1 for the NUL */
			fclose(f);
			free(buf);
			return NULL;
		}
		k = fread(buf + n, 1, cap - 1 - n, f);
		n += k;
	} while (k > 0);
	fclose(f);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

static void write_all(const char *path, const char *s, size_t n)
{
	FILE *f = fopen(path, "wb");

	if (!f || fwrite(s, 1, n, f) != n || fclose(f)) {
		perror(path);
		_exit(1);
	}
}

static bool ranges_eq(const struct hs_range *a, size_t na, const struct hs_range *b, size_t nb)
{
	if (na != nb)
		return false;
	for (size_t i = 0; i < na; i++)
		if (a[i].first != b[i].first || a[i].last != b[i].last)
			return false;
	return true;
}

static struct hs_profile_writer *start_writer(const char *p, int nfiles);

/*
 * profile_check_buffer() finds every promise kept, and the profile read to
 * its end (want 1) or refused (want 0).
 */
static void check_promises(const char *text, size_t len, int want, int at)
{
	char msg[512];
	int rc = profile_check_buffer(text, len, msg, sizeof(msg));

	if (rc < 0)
		printf("#   line %d: a broken promise: %s\n", at, msg);
	else if (rc != want)
		printf("#   line %d: the profile was %s\n", at, rc ? "accepted" : "refused");
	if (rc != want)
		unit_failed = 1;
}

#define HDR "hotset-profile 1\npage-size 4096\nsource snapshot\n"
/* the last page a profile of 16 KiB pages (full_header) may name: it ends at byte 2^63 */
#define LAST_PAGE_16K ((UINT64_C(1) << 49) - 1)
#define F0 "f 254:0 7 8192 1700000000.000000000 r 0-1 /a\n"

/*
 * The text must be refused: at open or while reading its items, with
 * -EINVAL, err.line == line, err.offset within that line (or at the end of
 * the input), and want somewhere in the message.
 */
static void check_bad(const char *text, size_t len, unsigned line, const char *want, int at)
{
	struct hs_profile_reader *r = NULL;
	struct hs_profile_item it;
	struct hs_error err;
	char *copy = malloc(len ? len : 1);	/* exact size: ASan sees overreads */
	int rc;

	memcpy(copy, text, len);
	check_promises(copy, len, 0, at);
	memset(&err, 0xa5, sizeof(err));
	rc = hs_profile_open_buffer(copy, len, &r, &err);
	if (rc == 0) {
		while ((rc = hs_profile_next(r, &it, &err)) > 0)
			;
		if (rc == 0) {
			printf("#   line %d: profile accepted, expected \"%s\" at line %u\n", at,
			       want, line);
			unit_failed = 1;
			goto out;
		}
		/* the error is sticky */
		struct hs_error again;
		if (hs_profile_next(r, &it, &again) != rc || again.line != err.line) {
			printf("#   line %d: error not sticky\n", at);
			unit_failed = 1;
		}
	}
	if (rc != -EINVAL || err.line != line || !strstr(err.msg, want)) {
		printf("#   line %d: got rc %d, line %u, \"%.200s\"; expected line %u, \"%s\"\n",
		       at, rc, err.line, err.msg, line, want);
		unit_failed = 1;
		goto out;
	}
	/* the offset falls within the reported line, or just past the input */
	{
		size_t start = 0, end;
		unsigned l = 1;

		for (size_t i = 0; i < len && l < line; i++)
			if (text[i] == '\n')
				l++, start = i + 1;
		end = start;
		while (end < len && text[end] != '\n')
			end++;
		if (err.offset < start || err.offset > end) {
			printf("#   line %d: offset %zu outside line %u [%zu, %zu]\n", at, err.offset,
			       line, start, end);
			unit_failed = 1;
		}
	}
out:
	hs_profile_close(r);
	free(copy);
}

#define BAD(text, line, want) check_bad(text, sizeof(text) - 1, line, want, __LINE__)

/* The text parses, and yields nfiles files. */
static void check_good(const char *text, size_t len, uint64_t nfiles, int at)
{
	struct hs_profile_reader *r = NULL;
	struct hs_profile_item it;
	struct hs_error err = { 0 };
	uint64_t files = 0;
	int rc;

	check_promises(text, len, 1, at);
	rc = hs_profile_open_buffer(text, len, &r, &err);

	if (rc == 0) {
		while ((rc = hs_profile_next(r, &it, &err)) > 0)
			files += it.kind == HS_ITEM_FILE;
		hs_profile_close(r);
	}
	if (rc != 0 || files != nfiles) {
		printf("#   line %d: rc %d, %" PRIu64 " files, \"%s\" at line %u\n", at, rc, files,
		       err.msg, err.line);
		unit_failed = 1;
	}
}

#define GOOD(text, nfiles) check_good(text, sizeof(text) - 1, nfiles, __LINE__)

/* ---- round trips ------------------------------------------------------------ */

struct sample {
	const char *path;
	size_t len;
	struct hs_file_id id;
	unsigned flags;
	struct hs_range ranges[4];
	size_t nranges;
};

static char long_path[HS_PROFILE_MAX_PATH + 1];
static char all_bytes[257];	/* "/" and every byte but NUL */

static void fill_samples(struct sample *s, size_t *n)
{
	static const struct sample fixed[] = {
		{ "/usr/include/stdio.h", 0, { 0, 1048602, 23870, 1700000000, 0 }, HS_FILE_READ,
		  { { 0, 5 } }, 1 },
		{ "/with space and  two", 0, { 0, 12, 8192, 1, 123456789 }, HS_FILE_READ | HS_FILE_MAPPED,
		  { { 5, 9 }, { 0, 2 }, { 20, 20 } }, 3 },
		{ "/ leading and trailing ", 0, { 0, 13, 0, 0, 0 }, 0, { { 0 } }, 0 },
		{ "/new\nline\r\tand\x7f", 0, { 0, 14, 1, -1, 999999999 }, HS_FILE_EXEC,
		  { { 7, 7 } }, 1 },
		{ "/back\\slash\\\\ and \\x41 literal\\", 0, { 0, 15, 4096, -1700000000, 5 },
		  HS_FILE_WRITTEN | HS_FILE_DIRECT, { { 1, 1 }, { 0, 0 } }, 2 },
		{ "/bytes \xff\xfe\x80 and caf\xc3\xa9", 0, { 0, UINT64_MAX, UINT64_MAX >> 1,
		  INT64_MAX, 0 }, HS_FILE_READ | HS_FILE_MAPPED | HS_FILE_EXEC | HS_FILE_WRITTEN |
		  HS_FILE_DIRECT, { { LAST_PAGE_16K, LAST_PAGE_16K },
		  { 0, LAST_PAGE_16K - 1 } }, 2 },
		{ "/x", 0, { 0, 0, 0, INT64_MIN, 0 }, 0, { { 3, 4 } }, 1 },
		{ "/y", 0, { 0, 0, 0, INT64_MIN, 1 }, 0, { { 3, 4 } }, 1 },
	};
	size_t k = 0;

	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		s[k] = fixed[i];
		s[k].len = strlen(s[k].path);
		k++;
	}
	s[0].id.dev = makedev(254, 0);
	s[1].id.dev = makedev(0xfffff, 0xfffff);
	s[2].id.dev = makedev(8, 1);
	/* every byte but NUL, and the longest path allowed */
	for (int b = 1; b < 256; b++)
		all_bytes[b] = (char)b;
	all_bytes[0] = '/';
	s[k] = (struct sample){ all_bytes, 256, { makedev(1, 2), 99, 1, 2, 3 }, HS_FILE_READ,
				{ { 0, 0 } }, 1 };
	k++;
	memset(long_path, 'p', HS_PROFILE_MAX_PATH);
	long_path[0] = '/';
	long_path[HS_PROFILE_MAX_PATH - 1] = '\n';	/* escaped: 4 bytes in the text */
	s[k] = (struct sample){ long_path, HS_PROFILE_MAX_PATH, { makedev(1, 2), 100, 1, 2, 3 },
				HS_FILE_READ, { { 1, 3 }, { 0, 0 } }, 2 };
	k++;
	*n = k;
}

static void full_header(struct hs_profile_header *h)
{
	hs_profile_header_init(h, "record");
	h->page_size = 16384;
	h->created = 1796020209;	/* 2026-11-30T06:30:09Z */
	snprintf(h->backend, sizeof(h->backend), "ptrace");
	snprintf(h->mmap_pages, sizeof(h->mmap_pages), "faulted");
	snprintf(h->host, sizeof(h->host), "build-host.example");
	snprintf(h->kernel, sizeof(h->kernel), "6.18.44-test");
	h->command = "make -j2 'a b' \\ \n \xff";
	h->cwd = "/src/with\nnewline";
	h->max_rss_known = true;
	h->max_rss = 52428800;
	h->write_bytes_known = true;
	h->write_bytes = 0;
	h->memcg_version = 1;
	h->memcg = "/db box/server\x1b";
	h->memcg_limit_known = true;
	h->memcg_limit = 1073741824;
	h->memcg_limit_holder = "/db box";
	h->lost_events_known = true;
	h->lost_events = 3;
}

TEST(roundtrip_header_and_items)
{
	struct sample s[16];
	size_t n;
	struct hs_profile_header h;
	struct hs_profile_writer *w;
	struct hs_profile_reader *r;
	struct hs_profile_item it;
	struct hs_error err = { 0 };
	const char *p;
	static const struct hs_range t0[] = { { 0, 5 }, { 0, 5 }, { 2, 2 } }, t1[] = { { 9, 9 } };
	const struct hs_profile_trace traces[] = { { 0, t0, 3 }, { 1, t1, 1 }, { 0, t1, 1 } };
	const char *outputs[] = { "/tmp/out.o", "/out\nwith newline \xff" };

	scratch_dir();
	p = path_in("p.prof");
	fill_samples(s, &n);
	full_header(&h);
	CHECK(hs_profile_writer_open(p, &h, &w) == 0);
	for (size_t i = 0; i < n; i++) {
		struct hs_profile_file f = { .path = s[i].path, .path_len = s[i].len, .id = s[i].id,
					     .flags = s[i].flags, .ranges = s[i].ranges,
					     .nranges = s[i].nranges };
		CHECK(hs_profile_write_file(w, &f) == 0);
	}
	for (size_t i = 0; i < 2; i++)
		CHECK(hs_profile_write_output(w, outputs[i], strlen(outputs[i])) == 0);
	for (size_t i = 0; i < 3; i++)
		CHECK(hs_profile_write_trace(w, &traces[i]) == 0);
	CHECK(hs_profile_writer_commit(w) == 0);
	{
		size_t len;
		char *text = read_all(p, &len);

		CHECK(text != NULL);
		if (text)
			check_promises(text, len, 1, __LINE__);
		free(text);
	}

	CHECK(hs_profile_open(p, &r, &err) == 0);
	if (unit_failed) {
		printf("#   %s at line %u\n", err.msg, err.line);
		scratch_done();
		return;
	}
	const struct hs_profile_header *g = hs_profile_header(r);
	CHECK_EQ_U64(g->version, HS_PROFILE_VERSION);
	CHECK_EQ_U64(g->page_size, 16384);
	CHECK_EQ_U64(g->created, 1796020209);
	CHECK_STR(g->source, "record");
	CHECK_STR(g->backend, "ptrace");
	CHECK_STR(g->mmap_pages, "faulted");
	CHECK_STR(g->host, "build-host.example");
	CHECK_STR(g->kernel, "6.18.44-test");
	CHECK_STR(g->command, h.command);
	CHECK_STR(g->cwd, h.cwd);
	CHECK(g->max_rss_known && g->write_bytes_known);
	CHECK_EQ_U64(g->max_rss, 52428800);
	CHECK_EQ_U64(g->write_bytes, 0);
	/* the memory cgroup, escaped like a path, and the limit over it with whose */
	CHECK_EQ_U64(g->memcg_version, 1);
	CHECK(g->memcg && !strcmp(g->memcg, h.memcg));
	CHECK(g->memcg_limit_known && g->memcg_limit == 1073741824);
	CHECK(g->memcg_limit_holder && !strcmp(g->memcg_limit_holder, "/db box"));
	CHECK(g->lost_events_known);
	CHECK_EQ_U64(g->lost_events, 3);
	CHECK_EQ_U64(hs_profile_totals(r)->files, n);
	CHECK_EQ_U64(hs_profile_totals(r)->outputs, 2);
	CHECK_EQ_U64(hs_profile_totals(r)->trace_lines, 3);

	for (int pass = 0; pass < 2; pass++) {
		size_t files = 0, outs = 0, tr = 0;
		int rc;

		while ((rc = hs_profile_next(r, &it, &err)) > 0) {
			if (it.kind == HS_ITEM_FILE) {
				const struct sample *e = &s[files];

				CHECK(files < n);
				if (files >= n)
					break;	/* e is past the samples */
				CHECK_EQ_U64(it.file.index, files);
				CHECK_EQ_U64(it.file.path_len, e->len);
				CHECK(memcmp(it.file.path, e->path, e->len) == 0);
				CHECK(it.file.path[e->len] == '\0');
				CHECK_EQ_U64(it.file.id.dev, e->id.dev);
				CHECK_EQ_U64(it.file.id.ino, e->id.ino);
				CHECK_EQ_U64(it.file.id.size, e->id.size);
				CHECK(it.file.id.mtime_sec == e->id.mtime_sec);
				CHECK_EQ_U64(it.file.id.mtime_nsec, e->id.mtime_nsec);
				CHECK_EQ_U64(it.file.flags, e->flags);
				CHECK(ranges_eq(it.file.ranges, it.file.nranges, e->ranges, e->nranges));
				CHECK_EQ_U64(it.file.pages, hs_ranges_pages(e->ranges, e->nranges));
				if (unit_failed) {
					printf("#   file %zu (pass %d) differs\n", files, pass);
					hs_profile_close(r);
					scratch_done();
					return;
				}
				files++;
			} else if (it.kind == HS_ITEM_OUTPUT) {
				CHECK(files == n && tr == 0 && outs < 2);
				if (outs >= 2)
					break;
				CHECK_EQ_U64(it.file.path_len, strlen(outputs[outs]));
				CHECK_STR(it.file.path, outputs[outs]);
				outs++;
			} else {
				CHECK(it.kind == HS_ITEM_TRACE);
				CHECK(outs == 2 && tr < 3);
				if (tr >= 3)
					break;
				CHECK_EQ_U64(it.trace.file, traces[tr].file);
				CHECK(ranges_eq(it.trace.ranges, it.trace.nranges, traces[tr].ranges,
						traces[tr].nranges));
				tr++;
			}
		}
		CHECK(rc == 0);
		if (rc)
			printf("#   line %u: %s\n", err.line, err.msg);
		CHECK(it.kind == HS_ITEM_END);
		CHECK(files == n && outs == 2 && tr == 3);
		/* the end is sticky too */
		CHECK(hs_profile_next(r, &it, &err) == 0);
		hs_profile_rewind(r);
	}
	hs_profile_close(r);
	scratch_done();
}

/* A profile of nothing: header and trailer only, optional keys absent. */
TEST(roundtrip_minimal)
{
	struct hs_profile_header h = { 0 };
	struct hs_profile_writer *w;
	struct hs_profile_reader *r;
	struct hs_profile_item it;
	struct hs_error err;
	const char *p;

	scratch_dir();
	p = path_in("min.prof");
	snprintf(h.source, sizeof(h.source), "snapshot");
	h.page_size = 4096;
	CHECK(hs_profile_writer_open(p, &h, &w) == 0);
	CHECK(hs_profile_writer_commit(w) == 0);
	CHECK(hs_profile_open(p, &r, &err) == 0);
	if (!unit_failed) {
		CHECK(hs_profile_header(r)->command == NULL);
		CHECK(hs_profile_header(r)->cwd == NULL);
		CHECK_STR(hs_profile_header(r)->backend, "");
		CHECK(hs_profile_next(r, &it, &err) == 0);
		CHECK(it.kind == HS_ITEM_END);
		hs_profile_close(r);
	}
	scratch_done();
}

/* Header words that are not one printable word are dropped, not written. */
TEST(writer_drops_bad_header_words)
{
	struct hs_profile_header h;
	struct hs_profile_writer *w;
	struct hs_profile_reader *r;
	struct hs_error err;
	const char *p;

	scratch_dir();
	p = path_in("w.prof");
	hs_profile_header_init(&h, "snapshot");
	snprintf(h.host, sizeof(h.host), "two words");
	snprintf(h.kernel, sizeof(h.kernel), "tab\there");
	CHECK(hs_profile_writer_open(p, &h, &w) == 0);
	CHECK(hs_profile_writer_commit(w) == 0);
	CHECK(hs_profile_open(p, &r, &err) == 0);
	if (!unit_failed) {
		CHECK_STR(hs_profile_header(r)->host, "");
		CHECK_STR(hs_profile_header(r)->kernel, "");
		CHECK_STR(hs_profile_header(r)->source, "snapshot");
		hs_profile_close(r);
	}
	scratch_done();
}

TEST(header_init_fills_machine_facts)
{
	struct hs_profile_header h;

	hs_profile_header_init(&h, "snapshot");
	CHECK_EQ_U64(h.version, HS_PROFILE_VERSION);
	CHECK_EQ_U64(h.page_size, (uint64_t)sysconf(_SC_PAGESIZE));
	CHECK(h.created > 1600000000);
	CHECK_STR(h.source, "snapshot");
	CHECK(h.host[0] && h.kernel[0]);
	CHECK(h.command == NULL && h.cwd == NULL);
}

TEST(flags_and_pages_helpers)
{
	char buf[8];
	const struct hs_range r[] = { { 0, 0 }, { 10, 19 }, { 5, 6 } };

	CHECK_STR(hs_file_flags_str(0, buf), "-");
	CHECK_STR(hs_file_flags_str(HS_FILE_READ, buf), "r");
	CHECK_STR(hs_file_flags_str(HS_FILE_DIRECT | HS_FILE_READ | HS_FILE_EXEC, buf), "rxd");
	CHECK_STR(hs_file_flags_str(0x1f, buf), "rmxwd");
	CHECK_EQ_U64(hs_ranges_pages(r, 3), 13);
	CHECK_EQ_U64(hs_ranges_pages(r, 0), 0);
}

/* mtimes are decimals, before the epoch too (a timespec's nsec is never negative) */
TEST(mtime_text)
{
	char buf[HS_MTIME_STR_MAX];

	CHECK_STR(hs_mtime_str(1700000000, 5, buf), "1700000000.000000005");
	CHECK_STR(hs_mtime_str(0, 0, buf), "0.000000000");
	CHECK_STR(hs_mtime_str(-1, 500000000, buf), "-0.500000000");
	CHECK_STR(hs_mtime_str(-2, 500000000, buf), "-1.500000000");
	CHECK_STR(hs_mtime_str(-2, 0, buf), "-2.000000000");
	CHECK_STR(hs_mtime_str(INT64_MIN, 0, buf), "-9223372036854775808.000000000");
	CHECK_STR(hs_mtime_str(INT64_MIN, 1, buf), "-9223372036854775807.999999999");
	CHECK_STR(hs_mtime_str(INT64_MAX, 999999999, buf), "9223372036854775807.999999999");
}

/* The exact text the writer produces for a known input (docs/profile.md). */
TEST(writer_text_is_stable)
{
	struct hs_profile_header h = { 0 };
	struct hs_profile_writer *w;
	const struct hs_range rg[] = { { 3, 3 }, { 0, 1 } };
	struct hs_profile_file f = { .path = "/a b\n\\\xff", .path_len = 7,
				     .id = { makedev(254, 0), 12, 8192, -2, 5 },
				     .flags = HS_FILE_READ | HS_FILE_MAPPED, .ranges = rg,
				     .nranges = 2 };
	const struct hs_range tr[] = { { 1, 1 } };
	const struct hs_profile_trace t = { 0, tr, 1 };
	char *text;
	const char *p;

	scratch_dir();
	p = path_in("t.prof");
	snprintf(h.source, sizeof(h.source), "record");
	h.page_size = 4096;
	h.created = 0;
	h.cwd = "/";
	CHECK(hs_profile_writer_open(p, &h, &w) == 0);
	CHECK(hs_profile_write_file(w, &f) == 0);
	CHECK(hs_profile_write_output(w, "/o", 2) == 0);
	CHECK(hs_profile_write_trace(w, &t) == 0);
	CHECK(hs_profile_writer_commit(w) == 0);
	text = read_all(p, NULL);
	CHECK_STR(text, "hotset-profile 1\n"
			"# hotset profile: see docs/profile.md\n"
			"source record\n"
			"page-size 4096\n"
			"cwd /\n"
			"f 254:0 12 8192 -1.999999995 rm 3,0-1 /a b\\x0a\\\\\xff\n"
			"o /o\n"
			"t 0 1\n"
			"end 1 1 1\n");
	free(text);
	scratch_done();
}

TEST(writer_to_stdout)
{
	struct hs_profile_header h = { 0 };
	struct hs_profile_writer *w;
	struct hs_profile_reader *r;
	struct hs_error err;
	const char *p;
	int fd, saved;

	scratch_dir();
	p = path_in("stdout.prof");
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	saved = dup(STDOUT_FILENO);
	fflush(stdout);
	dup2(fd, STDOUT_FILENO);
	snprintf(h.source, sizeof(h.source), "snapshot");
	h.page_size = 4096;
	CHECK(hs_profile_writer_open("-", &h, &w) == 0);
	CHECK(hs_profile_writer_commit(w) == 0);
	dup2(saved, STDOUT_FILENO);
	close(fd);
	/* standard output stays open */
	CHECK(fcntl(STDOUT_FILENO, F_GETFD) >= 0);
	CHECK(hs_profile_open(p, &r, &err) == 0);
	if (!unit_failed)
		hs_profile_close(r);
	scratch_done();
}

/* ---- malformed input ----------------------------------------------------------- */

TEST(rejects_bad_magic_and_version)
{
	check_bad("", 0, 1, "not a hotset profile", __LINE__);
	BAD("\n", 1, "not a hotset profile");
	BAD("hotset-profil 1\npage-size 4096\nsource snapshot\nend 0 0 0\n", 1, "not a hotset profile");
	BAD("HOTSET-PROFILE 1\npage-size 4096\nsource snapshot\nend 0 0 0\n", 1, "not a hotset profile");
	BAD("hotset-profile1\npage-size 4096\nsource snapshot\nend 0 0 0\n", 1, "not a hotset profile");
	BAD("hotset-profile\npage-size 4096\nsource snapshot\nend 0 0 0\n", 1, "expected a space");
	BAD("hotset-profile 2\npage-size 4096\nsource snapshot\nend 0 0 0\n", 1, "version 2 is not supported");
	BAD("hotset-profile 0\npage-size 4096\nsource snapshot\nend 0 0 0\n", 1, "version 0 is not supported");
	BAD("hotset-profile x\npage-size 4096\nsource snapshot\nend 0 0 0\n", 1, "expected a number");
	BAD("hotset-profile 1 \npage-size 4096\nsource snapshot\nend 0 0 0\n", 1, "unexpected text after the version");
	BAD("hotset-profile 1\r\npage-size 4096\nsource snapshot\nend 0 0 0\n", 1, "unexpected text after the version");
	BAD("hotset-profile 99999999999999999999999\n", 1, "too large");
	BAD("\xef\xbb\xbfhotset-profile 1\npage-size 4096\nsource snapshot\nend 0 0 0\n", 1, "not a hotset profile");
}

TEST(rejects_bad_header)
{
	BAD("hotset-profile 1\nsource snapshot\nend 0 0 0\n", 3, "no page-size");
	BAD("hotset-profile 1\npage-size 4096\nend 0 0 0\n", 3, "no source");
	BAD("hotset-profile 1\npage-size 4096\nsource snapshot\npage-size 4096\nend 0 0 0\n", 4, "given twice");
	BAD("hotset-profile 1\nsource record\npage-size 4096\nsource snapshot\nend 0 0 0\n", 4, "given twice");
	BAD("hotset-profile 1\nsource bogus\npage-size 4096\nend 0 0 0\n", 2, "unknown source");
	BAD("hotset-profile 1\nsource record\nbackend strace\npage-size 4096\nend 0 0 0\n", 3, "unknown backend");
	BAD("hotset-profile 1\nsource record\nmmap-pages some\npage-size 4096\nend 0 0 0\n", 3, "unknown mmap-pages");
	BAD("hotset-profile 1\npage-size 4096\nsource snapshot\ncolour blue\nend 0 0 0\n", 4, "unknown header line");
	BAD("hotset-profile 1\npage-size 4096\nsource record\nmax-rss 1M\nend 0 0 0\n", 4, "unexpected text after the value");
	BAD("hotset-profile 1\npage-size 4096\nsource record\nwrite-bytes -1\nend 0 0 0\n", 4, "write-bytes");
	BAD("hotset-profile 1\npage-size 4096\nsource record\nlost-events x\nend 0 0 0\n", 4, "lost-events");
	BAD("hotset-profile 1\npage-size 4096\nsource record\nmax-rss 1\nmax-rss 1\nend 0 0 0\n", 5, "given twice");
	BAD("hotset-profile 1\npage-size 4096\nsource record\nmemory-cgroup 3 /a\nend 0 0 0\n", 4, "version must be 1 or 2");
	BAD("hotset-profile 1\npage-size 4096\nsource record\nmemory-cgroup 1 a/b\nend 0 0 0\n", 4, "from \"/\"");
	BAD("hotset-profile 1\npage-size 4096\nsource record\nmemory-cgroup 1\nend 0 0 0\n", 4, "expected a space");
	BAD("hotset-profile 1\npage-size 4096\nsource record\nmemory-cgroup 2 /a\x01\nend 0 0 0\n", 4, "raw control");
	BAD("hotset-profile 1\npage-size 4096\nsource record\nmemory-cgroup 2 /a\nmemory-limit 5\nend 0 0 0\n", 5, "expected a space");
	BAD("hotset-profile 1\npage-size 4096\nsource record\nmemory-cgroup 2 /a\nmemory-limit max /a\nend 0 0 0\n", 5, "expected a number");
	BAD("hotset-profile 1\npage-size 4096\nsource record\nmemory-cgroup 2 /a\nmemory-limit none /a\nend 0 0 0\n", 5, "unexpected text");
	BAD("hotset-profile 1\npage-size 4096\nsource record\nmemory-cgroup 2 /a\nmemory-limit 18446744073709551615 /a\nend 0 0 0\n", 5, "below 2^64");
	BAD("hotset-profile 1\npage-size 4096\nsource record\nmemory-limit 5 /a\nend 0 0 0\n", 4, "without a memory-cgroup");
	BAD("hotset-profile 1\npage-size 4096\nsource record\nmemory-cgroup 2 /a\nmemory-cgroup 2 /a\nend 0 0 0\n", 5, "given twice");
	BAD("hotset-profile 1\npage-size 4096\nsource snapshot\n\nend 0 0 0\n", 4, "unknown header line");
	BAD("hotset-profile 1\npage-size 4096\nsource snapshot\nsources x\nend 0 0 0\n", 4, "unknown header line");
	BAD("hotset-profile 1\npage-size 4095\nsource snapshot\nend 0 0 0\n", 2, "power of two");
	BAD("hotset-profile 1\npage-size 256\nsource snapshot\nend 0 0 0\n", 2, "power of two");
	BAD("hotset-profile 1\npage-size 33554432\nsource snapshot\nend 0 0 0\n", 2, "power of two");
	BAD("hotset-profile 1\npage-size 0\nsource snapshot\nend 0 0 0\n", 2, "power of two");
	BAD("hotset-profile 1\npage-size -4096\nsource snapshot\nend 0 0 0\n", 2, "expected a number");
	BAD("hotset-profile 1\npage-size 4096k\nsource snapshot\nend 0 0 0\n", 2, "unexpected text after the value");
	BAD("hotset-profile 1\npage-size 18446744073709551616\nsource snapshot\nend 0 0 0\n", 2, "too large");
	BAD("hotset-profile 1\npage-size\nsource snapshot\nend 0 0 0\n", 2, "expected a space");
	BAD("hotset-profile 1\npage-size 4096\nsource \nend 0 0 0\n", 3, "needs a value");
	BAD("hotset-profile 1\npage-size 4096\nsource two words\nend 0 0 0\n", 3, "one word");
	BAD("hotset-profile 1\npage-size 4096\nsource snapshot-and-more\nend 0 0 0\n", 3, "longer than 15 bytes");
	BAD("hotset-profile 1\npage-size 4096\nsource s\x01\nend 0 0 0\n", 3, "one word");
	BAD("hotset-profile 1\npage-size 4096\nsource snap\0shot\nend 0 0 0\n", 3, "one word");
	BAD("hotset-profile 1\npage-size 4096\nsource snapshot\ncreated yesterday\nend 0 0 0\n", 4, "YYYY-MM-DD");
	BAD("hotset-profile 1\npage-size 4096\nsource snapshot\ncreated 2026-11-30T06:14:14\nend 0 0 0\n", 4, "YYYY-MM-DD");
	BAD("hotset-profile 1\npage-size 4096\nsource snapshot\ncreated 2026-11-30T06:14:14Zjunk\nend 0 0 0\n", 4, "YYYY-MM-DD");
	BAD("hotset-profile 1\npage-size 4096\nsource snapshot\ncreated 2026-11-30T06:14:14Z\0junk\nend 0 0 0\n", 4, "YYYY-MM-DD");
	BAD("hotset-profile 1\npage-size 4096\nsource snapshot\ncreated 2026-1-1T1:2:3Z\nend 0 0 0\n", 4, "YYYY-MM-DD");
	BAD("hotset-profile 1\npage-size 4096\nsource snapshot\ncreated  2026-11-30T06:14:14Z\nend 0 0 0\n", 4, "YYYY-MM-DD");
	BAD("hotset-profile 1\npage-size 4096\nsource snapshot\ncreated 2026-02-31T00:00:00Z\nend 0 0 0\n", 4, "not a time");
	BAD("hotset-profile 1\npage-size 4096\nsource snapshot\ncreated 2026-11-30T06:14:61Z\nend 0 0 0\n", 4, "not a time");
	BAD("hotset-profile 1\npage-size 4096\nsource snapshot\ncreated 1970-01-01T00:00:00Z\nend 0 0 0\n", 4, "not a time");
	BAD("hotset-profile 1\npage-size 4096\nsource snapshot\ncommand a\\qb\nend 0 0 0\n", 4, "bad escape in command");
	BAD("hotset-profile 1\npage-size 4096\nsource snapshot\ncommand a\\x00b\nend 0 0 0\n", 4, "NUL byte in command");
	BAD("hotset-profile 1\npage-size 4096\nsource snapshot\ncwd a\tb\nend 0 0 0\n", 4, "raw control character 0x09 in cwd");
	BAD("hotset-profile 1\npage-size 4096\nsource snapshot\ncwd \nend 0 0 0\n", 4, "missing cwd");
	BAD("hotset-profile 1\npage-size 4096\nsource snapshot\ncwd /a\ncwd /b\nend 0 0 0\n", 5, "given twice");
	/* a comment is fine in the header, not in the body */
	GOOD("hotset-profile 1\n# c\npage-size 4096\n#\nsource snapshot\nend 0 0 0\n", 0);
	BAD(HDR F0 "# c\nend 1 0 0\n", 5, "unknown line");
	/* the header created is UTC */
	{
		struct hs_profile_reader *r;
		static const char t[] = "hotset-profile 1\ncreated 2026-11-30T06:14:14Z\n"
					"page-size 65536\nsource snapshot\nend 0 0 0\n";

		CHECK(hs_profile_open_buffer(t, sizeof(t) - 1, &r, NULL) == 0);
		if (!unit_failed) {
			CHECK_EQ_U64(hs_profile_header(r)->created, 1796019254);
			CHECK_EQ_U64(hs_profile_header(r)->page_size, 65536);
			hs_profile_close(r);
		}
	}
}

TEST(rejects_bad_file_lines)
{
	GOOD(HDR F0 "end 1 0 0\n", 1);
	BAD(HDR "f\nend 1 0 0\n", 4, "expected a space before the device");
	BAD(HDR "f  254:0 7 8192 1700000000.000000000 r 0-1 /a\nend 1 0 0\n", 4, "device major");
	BAD(HDR "f 254 7 8192 1700000000.000000000 r 0-1 /a\nend 1 0 0\n", 4, "MAJOR:MINOR");
	BAD(HDR "f 254: 7 8192 1700000000.000000000 r 0-1 /a\nend 1 0 0\n", 4, "minor");
	BAD(HDR "f 1048576:0 7 8192 1700000000.000000000 r 0-1 /a\nend 1 0 0\n", 4, "device number out of range");
	BAD(HDR "f 254:0 x 8192 1700000000.000000000 r 0-1 /a\nend 1 0 0\n", 4, "expected a number for the inode");
	BAD(HDR "f 254:0 18446744073709551616 8192 1700000000.000000000 r 0-1 /a\nend 1 0 0\n", 4, "the inode is too large");
	BAD(HDR "f 254:0 7 -1 1700000000.000000000 r 0-1 /a\nend 1 0 0\n", 4, "the size");
	BAD(HDR "f 254:0 7 8192 1700000000 r 0-1 /a\nend 1 0 0\n", 4, "SECONDS.NANOSECONDS");
	BAD(HDR "f 254:0 7 8192 1700000000.5 r 0-1 /a\nend 1 0 0\n", 4, "nine digits");
	BAD(HDR "f 254:0 7 8192 1700000000.0000000000 r 0-1 /a\nend 1 0 0\n", 4, "nine digits");
	BAD(HDR "f 254:0 7 8192 .000000000 r 0-1 /a\nend 1 0 0\n", 4, "the mtime");
	BAD(HDR "f 254:0 7 8192 9223372036854775808.000000000 r 0-1 /a\nend 1 0 0\n", 4, "mtime out of range");
	BAD(HDR "f 254:0 7 8192 -9223372036854775809.000000000 r 0-1 /a\nend 1 0 0\n", 4, "mtime out of range");
	BAD(HDR "f 254:0 7 8192 1.000000000 q 0-1 /a\nend 1 0 0\n", 4, "unknown flag 'q'");
	BAD(HDR "f 254:0 7 8192 1.000000000 rr 0-1 /a\nend 1 0 0\n", 4, "flag 'r' given twice");
	BAD(HDR "f 254:0 7 8192 1.000000000  0-1 /a\nend 1 0 0\n", 4, "expected flags");
	BAD(HDR "f 254:0 7 8192 1.000000000 -r 0-1 /a\nend 1 0 0\n", 4, "expected a space before the ranges");
	BAD(HDR "f 254:0 7 8192 1.000000000 r\0 0-1 /a\nend 1 0 0\n", 4, "unknown flag");
	BAD(HDR "f 254:0 7 8192 1.000000000 r 5-3 /a\nend 1 0 0\n", 4, "5-3 ends before it starts");
	BAD(HDR "f 254:0 7 8192 1.000000000 r 0-5,3 /a\nend 1 0 0\n", 4, "ranges overlap at page 3");
	BAD(HDR "f 254:0 7 8192 1.000000000 r 9,0-9 /a\nend 1 0 0\n", 4, "ranges overlap at page 9");
	BAD(HDR "f 254:0 7 8192 1.000000000 r 2,2 /a\nend 1 0 0\n", 4, "ranges overlap at page 2");
	BAD(HDR "f 254:0 7 8192 1.000000000 r 4503599627370496 /a\nend 1 0 0\n", 4, "beyond the largest possible file");
	BAD(HDR "f 254:0 7 8192 1.000000000 r 0-4503599627370496 /a\nend 1 0 0\n", 4, "beyond the largest possible file");
	BAD(HDR "f 254:0 7 8192 1.000000000 r 0-18446744073709551616 /a\nend 1 0 0\n", 4, "too large");
	BAD(HDR "f 254:0 7 8192 1.000000000 r 1, /a\nend 1 0 0\n", 4, "expected a number for a page number");
	BAD(HDR "f 254:0 7 8192 1.000000000 r 1- /a\nend 1 0 0\n", 4, "expected a number for a page number");
	BAD(HDR "f 254:0 7 8192 1.000000000 r x /a\nend 1 0 0\n", 4, "expected a number for a page number");
	BAD(HDR "f 254:0 7 8192 1.000000000 r 1;2 /a\nend 1 0 0\n", 4, "expected a space before the path");
	BAD(HDR "f 254:0 7 8192 1.000000000 r 0-1\nend 1 0 0\n", 4, "expected a space before the path");
	BAD(HDR "f 254:0 7 8192 1.000000000 r 0-1 \nend 1 0 0\n", 4, "missing the path");
	/* the largest page and the most ranges still parse */
	GOOD(HDR "f 254:0 7 8192 1.000000000 r 2251799813685247,0-2251799813685246 /a\nend 1 0 0\n", 1);
	/* a page beyond 2^63 bytes, or whose bytes would not fit in 64 bits */
	BAD(HDR "f 254:0 7 8192 1.000000000 r 2251799813685248 /a\nend 1 0 0\n", 4, "beyond the largest possible file");
	BAD("hotset-profile 1\npage-size 16777216\nsource snapshot\n"
	    "f 254:0 7 8192 1.000000000 r 0-549755813888 /a\nend 1 0 0\n", 4, "beyond the largest possible file");
	GOOD(HDR "f 254:0 7 8192 -1.000000000 - - /a\nend 1 0 0\n", 1);
}

TEST(rejects_bad_paths)
{
	BAD(HDR "f 254:0 7 8192 1.000000000 r 0 /a\\\nend 1 0 0\n", 4, "bad escape in the path");
	BAD(HDR "f 254:0 7 8192 1.000000000 r 0 /a\\x4\nend 1 0 0\n", 4, "bad escape in the path");
	BAD(HDR "f 254:0 7 8192 1.000000000 r 0 /a\\xg0\nend 1 0 0\n", 4, "bad escape in the path");
	BAD(HDR "f 254:0 7 8192 1.000000000 r 0 /a\\n\nend 1 0 0\n", 4, "bad escape in the path");
	BAD(HDR "f 254:0 7 8192 1.000000000 r 0 /a\\X41\nend 1 0 0\n", 4, "bad escape in the path");
	BAD(HDR "f 254:0 7 8192 1.000000000 r 0 /a\\x00b\nend 1 0 0\n", 4, "NUL byte in the path");
	BAD(HDR "f 254:0 7 8192 1.000000000 r 0 /a\x01\nend 1 0 0\n", 4, "raw control character 0x01");
	BAD(HDR "f 254:0 7 8192 1.000000000 r 0 /a\x7f\nend 1 0 0\n", 4, "raw control character 0x7f");
	BAD(HDR "f 254:0 7 8192 1.000000000 r 0 /a\r\nend 1 0 0\n", 4, "raw control character 0x0d");
	BAD(HDR "f 254:0 7 8192 1.000000000 r 0 /a\0b\nend 1 0 0\n", 4, "raw control character 0x00");
	BAD(HDR "o /a\\q\nend 0 1 0\n", 4, "bad escape in the path");
	BAD(HDR "o\nend 0 1 0\n", 4, "expected a space before the path");
	BAD(HDR "o \nend 0 1 0\n", 4, "missing the path");
	BAD(HDR "o a/b\nend 0 1 0\n", 4, "the path is not absolute");
	BAD(HDR "f 254:0 7 8192 1.000000000 r 0 a\nend 1 0 0\n", 4, "the path is not absolute");
	/* escapes in either case decode */
	{
		static const char t[] = HDR "f 254:0 7 8192 1.000000000 r 0 /a\\xFF\\xfe\\\\\\x0A\nend 1 0 0\n";
		struct hs_profile_reader *r;
		struct hs_profile_item it;

		CHECK(hs_profile_open_buffer(t, sizeof(t) - 1, &r, NULL) == 0);
		if (!unit_failed) {
			CHECK(hs_profile_next(r, &it, NULL) == 1);
			CHECK_EQ_U64(it.file.path_len, 6);
			CHECK(memcmp(it.file.path, "/a\xff\xfe\\\n", 6) == 0);
			hs_profile_close(r);
		}
	}
}

/* A path may decode to HS_PROFILE_MAX_PATH bytes, not one more. */
TEST(path_length_limit)
{
	const size_t head = sizeof(HDR F0) - 1 - 3;	/* without "/a\n" */
	size_t n = HS_PROFILE_MAX_PATH;
	char *t = malloc(head + n + 64);
	size_t len;

	for (int extra = 0; extra < 2; extra++) {
		memcpy(t, HDR F0, head);
		t[head] = '/';
		memset(t + head + 1, 'x', n + extra - 1);
		len = head + n + extra;
		len += (size_t)sprintf(t + len, "\nend 1 0 0\n");
		if (extra)
			check_bad(t, len, 4, "longer than 65536 bytes", __LINE__);
		else
			check_good(t, len, 1, __LINE__);
	}
	free(t);
}

TEST(rejects_bad_traces_and_order)
{
	GOOD(HDR F0 "o /out\nt 0 1,0,1,0-1\nend 1 1 1\n", 1);
	GOOD(HDR F0 "t 0 1\nend 1 0 1\n", 1);
	BAD(HDR F0 "t 1 0\nend 1 0 1\n", 5, "trace refers to file 1 but the profile lists 1");
	BAD(HDR "t 0 0\nend 0 0 1\n", 4, "trace refers to file 0 but the profile lists 0");
	BAD(HDR F0 "t 0 -\nend 1 0 1\n", 5, "at least one range");
	BAD(HDR F0 "t x 0\nend 1 0 1\n", 5, "expected a number for the file index");
	BAD(HDR F0 "t 0\nend 1 0 1\n", 5, "expected a space before the ranges");
	BAD(HDR F0 "t 0 0 x\nend 1 0 1\n", 5, "unexpected text at the end of the line");
	BAD(HDR F0 "t 0 3-2\nend 1 0 1\n", 5, "ends before it starts");
	BAD(HDR F0 "t 0 4503599627370496\nend 1 0 1\n", 5, "beyond the largest possible file");
	BAD(HDR "o /out\n" F0 "end 1 1 0\n", 5, "file lines must come before output and trace lines");
	BAD(HDR F0 "t 0 0\n" F0 "end 2 0 1\n", 6, "file lines must come before output and trace lines");
	BAD(HDR F0 "t 0 0\no /out\nend 1 1 1\n", 6, "output lines must come before trace lines");
	BAD(HDR F0 "x 1 2\nend 1 0 0\n", 5, "unknown line");
	BAD(HDR F0 "\nend 1 0 0\n", 5, "unknown line");
	BAD(HDR F0 "ff 1\nend 1 0 0\n", 5, "unknown line");
	BAD(HDR F0 " f 1\nend 1 0 0\n", 5, "unknown line");
	BAD(HDR "end 0 0 0\n" F0 "end 1 0 0\n", 4, "\"end\" before the last line");
}

TEST(rejects_truncated)
{
	/* no trailer at all */
	BAD("hotset-profile 1\n", 1, "no \"end\" line");
	BAD("hotset-profile 1", 1, "no \"end\" line");
	BAD("hotset-profile 1\npage-size 4096\nsource snapshot\n", 3, "no \"end\" line");
	BAD(HDR F0, 4, "the last line is not \"end\"");
	BAD(HDR F0 F0, 5, "the last line is not \"end\"");
	/* cut mid-line: no final newline */
	BAD(HDR "end 0 0 0", 4, "does not end with a newline");
	BAD(HDR "f 254:0 7 8192 1700000", 4, "does not end with a newline");
	BAD(HDR F0 "f 254:0 7 8192 1700000", 5, "does not end with a newline");
	/* the counts do not match what is there */
	BAD(HDR F0 "end 2 0 0\n", 5, "promises 2 files but the profile has 1");
	BAD(HDR F0 F0 "end 1 0 0\n", 6, "promises 1 files but the profile has 2");
	BAD(HDR F0 "end 1 1 0\n", 5, "promises 1 outputs but the profile has 0");
	BAD(HDR F0 "end 1 0 3\n", 5, "promises 3 trace lines but the profile has 0");
	BAD(HDR "end 0 0\n", 4, "expected a space before the trace count");
	BAD(HDR "end 0 0 0 0\n", 4, "unexpected text after the counts");
	BAD(HDR "end 0 0 x\n", 4, "expected a number for the trace count");
	BAD(HDR "end 4294967296 0 0\n", 4, "more items than a profile may hold");
	BAD(HDR "end 0 0 0\n\n", 5, "text after the \"end\" line");
	BAD(HDR "end 1 0 0\n" F0, 5, "text after the \"end\" line");
	BAD(HDR "end 0 0 0\r\n", 4, "unexpected text after the counts");
}

/* Totals are known as soon as the profile is open, before any item. */
TEST(totals_before_items)
{
	static const char t[] = HDR F0 "f 254:0 8 1 1.000000000 - - /b\no /o\nend 2 1 0\n";
	struct hs_profile_reader *r;
	struct hs_error err;

	CHECK(hs_profile_open_buffer(t, sizeof(t) - 1, &r, &err) == 0);
	if (unit_failed)
		return;
	CHECK_EQ_U64(hs_profile_totals(r)->files, 2);
	CHECK_EQ_U64(hs_profile_totals(r)->outputs, 1);
	CHECK_EQ_U64(hs_profile_totals(r)->trace_lines, 0);
	hs_profile_close(r);
}

/* Rewind restarts from the first item, from anywhere, and clears an error. */
TEST(rewind_restarts)
{
	static const char t[] = HDR F0 "f 254:0 8 1 1.000000000 - 3 /b\nf 254:0 9 1 1.000000000 - 4 /c\n"
				"end 3 0 0\n";
	static const char bad[] = HDR F0 "f 254:0 8 1 1.000000000 - 3 /b\nbogus\nend 3 0 0\n";
	struct hs_profile_reader *r;
	struct hs_profile_item it;
	struct hs_error err;

	CHECK(hs_profile_open_buffer(t, sizeof(t) - 1, &r, &err) == 0);
	if (unit_failed)
		return;
	CHECK(hs_profile_next(r, &it, &err) == 1);
	CHECK(hs_profile_next(r, &it, &err) == 1);
	CHECK_STR(it.file.path, "/b");
	CHECK_EQ_U64(it.line, 5);
	hs_profile_rewind(r);
	CHECK(hs_profile_next(r, &it, &err) == 1);
	CHECK_STR(it.file.path, "/a");
	CHECK_EQ_U64(it.file.index, 0);
	CHECK_EQ_U64(it.line, 4);
	while (hs_profile_next(r, &it, &err) > 0)
		;
	hs_profile_rewind(r);
	CHECK(hs_profile_next(r, &it, &err) == 1);
	CHECK_STR(it.file.path, "/a");
	hs_profile_close(r);

	CHECK(hs_profile_open_buffer(bad, sizeof(bad) - 1, &r, &err) == 0);
	if (unit_failed)
		return;
	CHECK(hs_profile_next(r, &it, &err) == 1);
	CHECK(hs_profile_next(r, &it, &err) == 1);
	CHECK(hs_profile_next(r, &it, &err) == -EINVAL);
	CHECK_EQ_U64(err.line, 6);
	hs_profile_rewind(r);
	CHECK(hs_profile_next(r, &it, &err) == 1);
	CHECK_STR(it.file.path, "/a");
	hs_profile_close(r);
}

/*
 * A mapped profile gives back the pages it has parsed (so that a million
 * entries do not stay resident): reading on, and reading again after a
 * rewind, from anywhere, still sees every item intact.
 */
TEST(big_profile_reads_twice)
{
	const int nfiles = 100000;	/* about 5 MB of text */
	struct hs_profile_writer *w;
	struct hs_profile_reader *r;
	struct hs_profile_item it;
	struct hs_error err;
	const char *p;
	char want[64];

	scratch_dir();
	p = path_in("big.prof");
	w = start_writer(p, nfiles);
	CHECK(w && hs_profile_writer_commit(w) == 0);
	CHECK(hs_profile_open(p, &r, &err) == 0);
	if (unit_failed) {
		scratch_done();
		return;
	}
	for (int pass = 0; pass < 3; pass++) {
		int n = 0, stop = pass == 1 ? nfiles / 2 : nfiles;
		int rc;

		while (n < stop && (rc = hs_profile_next(r, &it, &err)) > 0) {
			snprintf(want, sizeof(want), "/some/path/to/file-%d", n);
			if (strcmp(it.file.path, want) || it.file.id.ino != (uint64_t)n ||
			    it.file.nranges != 1 || it.file.ranges[0].last != 9) {
				printf("#   pass %d, item %d: %s\n", pass, n, it.file.path);
				unit_failed = 1;
				break;
			}
			n++;
		}
		CHECK_EQ_U64(n, stop);
		if (stop == nfiles)
			CHECK(hs_profile_next(r, &it, &err) == 0);
		hs_profile_rewind(r);
	}
	hs_profile_close(r);
	scratch_done();
}

/* ---- hs_profile_open on files that are not profiles ---------------------------- */

static void on_alarm(int sig)
{
	(void)sig;
	static const char msg[] = "#   timed out: hs_profile_open blocked\n";
	write(STDOUT_FILENO, msg, sizeof(msg) - 1);
	_exit(1);
}

TEST(open_refuses_non_files)
{
	struct hs_profile_reader *r = NULL;
	struct hs_error err;
	const char *p;

	scratch_dir();
	signal(SIGALRM, on_alarm);
	alarm(10);
	CHECK(hs_profile_open(path_in("missing"), &r, &err) == -ENOENT);
	CHECK(hs_profile_open(scratch, &r, &err) == -EISDIR);
	p = path_in("fifo");
	CHECK(mkfifo(p, 0644) == 0);
	CHECK(hs_profile_open(p, &r, &err) == -EINVAL);	/* does not wait for a writer */
	CHECK(strstr(err.msg, "not a regular file") != NULL);
	p = path_in("empty");
	write_all(p, "", 0);
	CHECK(hs_profile_open(p, &r, &err) == -EINVAL);
	CHECK(err.line == 1 && strstr(err.msg, "not a hotset profile") != NULL);
	p = path_in("bad");
	write_all(p, HDR "end 1 0 0\n", sizeof(HDR "end 1 0 0\n") - 1);
	CHECK(hs_profile_open(p, &r, &err) == 0);
	if (r) {
		struct hs_profile_item it;

		CHECK(hs_profile_next(r, &it, &err) == -EINVAL);
		CHECK_EQ_U64(err.line, 4);
		hs_profile_close(r);
	}
	p = path_in("good");
	write_all(p, HDR F0 "end 1 0 0\n", sizeof(HDR F0 "end 1 0 0\n") - 1);
	r = NULL;
	CHECK(hs_profile_open(p, &r, &err) == 0);
	hs_profile_close(r);
	alarm(0);
	scratch_done();
}

/* ---- atomic writes ---------------------------------------------------------------- */

static struct hs_profile_writer *start_writer(const char *p, int nfiles)
{
	struct hs_profile_header h;
	struct hs_profile_writer *w = NULL;
	const struct hs_range rg[] = { { 0, 9 } };

	hs_profile_header_init(&h, "snapshot");
	if (hs_profile_writer_open(p, &h, &w))
		return NULL;
	for (int i = 0; i < nfiles; i++) {
		char path[64];
		struct hs_profile_file f = { .path = path, .ranges = rg, .nranges = 1 };

		f.path_len = (size_t)snprintf(path, sizeof(path), "/some/path/to/file-%d", i);
		f.id.ino = (uint64_t)i;
		if (hs_profile_write_file(w, &f))
			break;
	}
	return w;
}

TEST(abort_leaves_nothing)
{
	struct hs_profile_writer *w;

	scratch_dir();
	w = start_writer(path_in("p.prof"), 5000);	/* more than one buffer */
	CHECK(w != NULL);
	CHECK_EQ_U64(count_entries(scratch), 1);	/* the temporary file */
	hs_profile_writer_abort(w);
	CHECK_EQ_U64(count_entries(scratch), 0);
	hs_profile_writer_abort(NULL);
	scratch_done();
}

TEST(target_intact_until_commit)
{
	struct hs_profile_writer *w;
	struct hs_profile_reader *r;
	struct hs_error err;
	const char *p;
	char *text;
	struct stat st;

	scratch_dir();
	p = path_in("p.prof");
	write_all(p, "old contents\n", 13);
	CHECK(chmod(p, 0604) == 0);
	w = start_writer(p, 5000);
	CHECK(w != NULL);
	text = read_all(p, NULL);
	CHECK_STR(text, "old contents\n");
	free(text);
	CHECK_EQ_U64(count_entries(scratch), 2);
	CHECK(hs_profile_writer_commit(w) == 0);
	CHECK_EQ_U64(count_entries(scratch), 1);
	CHECK(hs_profile_open(p, &r, &err) == 0);
	if (!unit_failed) {
		CHECK_EQ_U64(hs_profile_totals(r)->files, 5000);
		hs_profile_close(r);
	}
	/* the mode of the file it replaced, whatever the umask */
	CHECK(stat(p, &st) == 0);
	CHECK_EQ_U64(st.st_mode & 0777, 0604);
	/* a new file: the mode a plain creat() would give under the umask of the time */
	mode_t old = umask(027);
	w = start_writer(path_in("new.prof"), 1);
	umask(old);
	CHECK(w && hs_profile_writer_commit(w) == 0);
	CHECK(stat(path_in("new.prof"), &st) == 0);
	CHECK_EQ_U64(st.st_mode & 0777, 0640);
	scratch_done();
}

/* rename() fails (the target is a directory): the target stays as it was. */
TEST(commit_failure_rename)
{
	struct hs_profile_writer *w;
	const char *p;
	char *keep;
	struct stat st;

	scratch_dir();
	p = path_in("dir.prof");
	w = start_writer(p, 10);
	CHECK(w != NULL);
	/* a directory that appears at the path meanwhile is not replaced */
	CHECK(mkdir(p, 0755) == 0);
	keep = path_in("dir.prof/keep");
	write_all(keep, "k", 1);
	CHECK(hs_profile_writer_commit(w) < 0);
	CHECK(stat(p, &st) == 0 && S_ISDIR(st.st_mode));
	CHECK(stat(path_in("dir.prof/keep"), &st) == 0);
	CHECK_EQ_U64(count_entries(scratch), 1);	/* no temporary file left */
	scratch_done();
}

/* Never replace a directory, FIFO or device; write through a symlink. */
TEST(writer_refuses_what_is_not_a_file)
{
	struct hs_profile_header h;
	struct hs_profile_writer *w = NULL;
	struct hs_error err = { 0 };
	struct stat st;
	const char *p;

	scratch_dir();
	hs_profile_header_init(&h, "snapshot");
	p = path_in("dir");
	CHECK(mkdir(p, 0755) == 0);
	CHECK(hs_atomic_check(p, &err) == -EISDIR);
	CHECK(hs_profile_writer_open(p, &h, &w) == -EISDIR && !w);
	p = path_in("fifo");
	CHECK(mkfifo(p, 0644) == 0);
	CHECK(hs_atomic_check(p, &err) == -EINVAL);
	CHECK(strstr(err.msg, "not a regular file") != NULL);
	CHECK(hs_profile_writer_open(p, &h, &w) == -EINVAL && !w);
	CHECK(hs_profile_writer_open("/dev/null", &h, &w) == -EINVAL && !w);
	CHECK(hs_atomic_check(path_in("no/such/dir/p"), &err) == -ENOENT);
	/* a symlink to a file yet to be: the file is written, the link stays */
	CHECK(symlink("real.prof", path_in("link.prof")) == 0);
	CHECK(hs_profile_writer_open(path_in("link.prof"), &h, &w) == 0);
	CHECK(hs_profile_writer_commit(w) == 0);
	CHECK(lstat(path_in("link.prof"), &st) == 0 && S_ISLNK(st.st_mode));
	CHECK(lstat(path_in("real.prof"), &st) == 0 && S_ISREG(st.st_mode));
	CHECK(symlink("loop2", path_in("loop1")) == 0 && symlink("loop1", path_in("loop2")) == 0);
	CHECK(hs_atomic_check(path_in("loop1"), &err) == -ELOOP);
	CHECK_EQ_U64(count_entries(scratch), 6);	/* no temporary file left */
	scratch_done();
}

/* write() fails part way (file size limit): commit reports it, cleans up. */
TEST(commit_failure_write)
{
	struct hs_profile_writer *w;
	struct rlimit rl = { 32768, 32768 };
	const char *p;
	char *text;

	scratch_dir();
	p = path_in("p.prof");
	write_all(p, "old contents\n", 13);
	signal(SIGXFSZ, SIG_IGN);
	CHECK(setrlimit(RLIMIT_FSIZE, &rl) == 0);
	w = start_writer(p, 20000);	/* about 900 KB */
	CHECK(w != NULL);
	if (w)
		CHECK(hs_profile_writer_commit(w) == -EFBIG);
	text = read_all(p, NULL);
	CHECK_STR(text, "old contents\n");
	free(text);
	CHECK_EQ_U64(count_entries(scratch), 1);
	scratch_done();
}

TEST(writer_open_fails_cleanly)
{
	struct hs_profile_header h;
	struct hs_profile_writer *w = NULL;

	scratch_dir();
	hs_profile_header_init(&h, "snapshot");
	CHECK(hs_profile_writer_open(path_in("no/such/dir/p.prof"), &h, &w) == -ENOENT);
	CHECK(w == NULL);
	CHECK_EQ_U64(count_entries(scratch), 0);
	scratch_done();
}

/* ---- the fuzz corpus ---------------------------------------------------------------- */

/*
 * Every input the fuzzer kept (tests/fuzz/corpus/profile, crashes included)
 * goes through the parser again here, held to the same promises as in the
 * fuzz target (profile-check.h), so that a fixed crash stays fixed in the
 * ASan build.
 */
TEST(fuzz_corpus_replays)
{
	const char *dir = "tests/fuzz/corpus/profile";
	DIR *d = opendir(dir);
	struct dirent *de;
	unsigned n = 0, accepted = 0;

	if (!d)
		SKIP("tests/fuzz/corpus/profile not found (run from the source tree)");
	while (!unit_failed && (de = readdir(d))) {
		char path[512], msg[512];
		size_t len;
		char *buf, *copy;
		int rc;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (!(buf = read_all(path, &len)))
			continue;
		/* an exact-size copy, so that ASan catches reads past the end */
		copy = malloc(len ? len : 1);
		memcpy(copy, buf, len);
		free(buf);
		n++;
		rc = profile_check_buffer(copy, len, msg, sizeof(msg));
		if (rc < 0) {
			printf("#   %s: %s\n", path, msg);
			unit_failed = 1;
		}
		accepted += rc == 1;
		free(copy);
	}
	closedir(d);
	CHECK(n > 0);
	CHECK(accepted > 0);	/* the corpus reaches past the header */
}

/* ---- the checker itself ------------------------------------------------------------ */

/* A small profile's items, as the reader gives them, and the text they come from. */
#define CHECKED_TEXT HDR "f 8:1 7 8192 1.000000000 r 5-9,0-2 /a\n" \
	"f 8:1 8 0 1.000000000 - - /b\no /out\nt 1 0,0\nend 2 1 1\n"

static const struct hs_range checked_r0[] = { { 5, 9 }, { 0, 2 } }, checked_t0[] = { { 0, 0 }, { 0, 0 } };

static void checked_items(struct hs_profile_header *h, struct hs_profile_totals *t,
			  struct hs_profile_item it[5])
{
	memset(h, 0, sizeof(*h));
	h->version = 1;
	h->page_size = 4096;
	snprintf(h->source, sizeof(h->source), "snapshot");
	*t = (struct hs_profile_totals){ 2, 1, 1 };
	memset(it, 0, 5 * sizeof(*it));
	it[0].kind = HS_ITEM_FILE;
	it[0].line = 4;
	it[0].file = (struct hs_profile_file){ .path = "/a", .path_len = 2,
		.id = { makedev(8, 1), 7, 8192, 1, 0 }, .flags = HS_FILE_READ,
		.ranges = checked_r0, .nranges = 2, .pages = 8, .index = 0 };
	it[1].kind = HS_ITEM_FILE;
	it[1].line = 5;
	it[1].file = (struct hs_profile_file){ .path = "/b", .path_len = 2,
		.id = { makedev(8, 1), 8, 0, 1, 0 }, .index = 1 };
	it[2].kind = HS_ITEM_OUTPUT;
	it[2].line = 6;
	it[2].file.path = "/out";
	it[2].file.path_len = 4;
	it[3].kind = HS_ITEM_TRACE;
	it[3].line = 7;
	it[3].trace = (struct hs_profile_trace){ 1, checked_t0, 2 };
	it[4].kind = HS_ITEM_END;
	it[4].line = 8;
}

/*
 * Feed the checker h, t and the items (with rc 1, 0 for END; err, if not
 * NULL, comes last with rc -EINVAL), over text if not NULL. Returns the
 * checker's verdict, its message in msg.
 */
static int run_checker(const struct hs_profile_header *h, const struct hs_profile_totals *t,
		       const struct hs_profile_item *it, size_t n, const struct hs_error *err,
		       const char *text, char *msg)
{
	struct profile_check c;
	int rc = profile_check_init(&c, h, t, text, text ? strlen(text) : 0);

	for (size_t i = 0; !rc && i < n; i++)
		rc = profile_check_next(&c, it[i].kind == HS_ITEM_END ? 0 : 1, &it[i], NULL);
	if (!rc && err)
		rc = profile_check_next(&c, -EINVAL, NULL, err);
	snprintf(msg, 320, "%s", rc ? c.msg : "");
	profile_check_release(&c);
	return rc;
}

TEST(checker_passes_what_the_parser_gives)
{
	struct hs_profile_header h;
	struct hs_profile_totals t;
	struct hs_profile_item it[5];
	char msg[320];

	checked_items(&h, &t, it);
	CHECK(run_checker(&h, &t, it, 5, NULL, NULL, msg) == 0);
	CHECK(run_checker(&h, &t, it, 5, NULL, CHECKED_TEXT, msg) == 0);
	if (unit_failed)
		printf("#   %s\n", msg);
	/* and the parser gives those items */
	check_promises(CHECKED_TEXT, sizeof(CHECKED_TEXT) - 1, 1, __LINE__);
}

/*
 * Each promise broken once, in a copy of the good items: the checker must
 * say so, with want in its message.
 */
TEST(checker_catches_broken_promises)
{
	static const struct hs_range overlap[] = { { 5, 9 }, { 9, 12 } }, backwards[] = { { 3, 2 } },
		far[] = { { 0, UINT64_C(1) << 52 } }, far16m[] = { { 0, UINT64_C(1) << 39 } }, none[1];
	struct hs_profile_header h;
	struct hs_profile_totals t;
	struct hs_profile_item it[5];
	struct hs_error err;
	char msg[320];

#define BROKEN(change, want, text)                                                         \
	do {                                                                               \
		checked_items(&h, &t, it);                                                 \
		change;                                                                    \
		if (run_checker(&h, &t, it, 5, NULL, text, msg) != -1 || !strstr(msg, want)) { \
			printf("#   %s: not caught as \"%s\" (\"%s\")\n", #change, want, msg); \
			unit_failed = 1;                                                   \
		}                                                                          \
	} while (0)

	/* the header and the totals */
	BROKEN(h.version = 2, "version", NULL);
	BROKEN(h.page_size = 4095, "page size", NULL);
	BROKEN(h.page_size = 256, "page size", NULL);
	BROKEN(snprintf(h.source, sizeof(h.source), "bogus"), "source", NULL);
	BROKEN(h.source[0] = 0, "source", NULL);
	BROKEN(snprintf(h.backend, sizeof(h.backend), "strace"), "backend", NULL);
	BROKEN(snprintf(h.mmap_pages, sizeof(h.mmap_pages), "some"), "mmap-pages", NULL);
	BROKEN(snprintf(h.host, sizeof(h.host), "two words"), "host", NULL);
	BROKEN(memset(h.kernel, 'k', sizeof(h.kernel)), "kernel", NULL);	/* no NUL */
	BROKEN(h.created = -1, "created", NULL);
	BROKEN(t.outputs = HS_PROFILE_MAX_ITEMS, "totals", NULL);
	/* file ranges */
	BROKEN((it[0].file.ranges = overlap, it[0].file.pages = 9), "overlap at page 9", NULL);
	BROKEN((it[0].file.ranges = backwards, it[0].file.nranges = 1), "ends before it starts", NULL);
	BROKEN((it[0].file.ranges = far, it[0].file.nranges = 1), "beyond the limit", NULL);
	/* 16M pages: page 2^39 starts at byte 2^63, within 2^52 pages but past the bytes */
	BROKEN((h.page_size = 1u << 24, it[0].file.ranges = far16m, it[0].file.nranges = 1,
		it[0].file.pages = (UINT64_C(1) << 39) + 1), "beyond the limit", NULL);
	BROKEN(it[0].file.ranges = NULL, "ranges at NULL", NULL);
	BROKEN(it[0].file.pages = 9, "its ranges hold 8", NULL);
	/* file identity and path */
	BROKEN(it[1].file.index = 0, "index", NULL);
	BROKEN((it[0].file.path = "a", it[0].file.path_len = 1), "not absolute", NULL);
	BROKEN((it[0].file.path = "", it[0].file.path_len = 0), "a path of 0 bytes", NULL);
	BROKEN(it[0].file.path_len = 3, "path_len", NULL);
	BROKEN(it[0].file.path = NULL, "no path", NULL);
	BROKEN(it[0].file.flags = 1u << 5, "flags", NULL);
	BROKEN(it[0].file.id.dev = makedev(1u << 20, 0), "device", NULL);
	BROKEN(it[0].file.id.mtime_nsec = 1000000000u, "nanoseconds", NULL);
	/* outputs and traces */
	BROKEN((it[2].file.path = "out", it[2].file.path_len = 3), "not absolute", NULL);
	BROKEN(it[2].file.nranges = 1, "has ranges", NULL);
	BROKEN(it[3].trace.file = 2, "file 2 of 2", NULL);
	BROKEN(it[3].trace.nranges = 0, "no range", NULL);
	BROKEN((it[3].trace.ranges = none, it[3].trace.nranges = 0), "no range", NULL);
	BROKEN(it[3].trace.ranges = far, "beyond the limit", NULL);
	/* order, lines, kinds, counts */
	BROKEN((it[2] = it[3], it[2].line = 6, it[3].kind = HS_ITEM_OUTPUT, it[3].file.path = "/o",
		it[3].file.path_len = 2), "after one of kind", NULL);
	BROKEN(it[1].line = 4, "after line 4", NULL);
	BROKEN(it[0].line = 1, "line 1", NULL);
	BROKEN(it[2].kind = 7, "kind 7", NULL);
	BROKEN(t.files = 3, "the totals say 3 1 1", NULL);
	BROKEN(t.trace_lines = 0, "the totals say 2 1 0", NULL);
	/* against the text: each item on the line it names */
	BROKEN(it[2].line = 7, "line 7: does not start with \"o \"", CHECKED_TEXT);
	BROKEN(it[4].line = 9, "line 9: the text has no such line", CHECKED_TEXT);
#undef BROKEN

	/* what hs_profile_next() returns goes with the item's kind */
	{
		struct profile_check c;

		checked_items(&h, &t, it);
		CHECK(profile_check_init(&c, &h, &t, NULL, 0) == 0);
		CHECK(profile_check_next(&c, 0, &it[0], NULL) == -1 && strstr(c.msg, "returned 0"));
		profile_check_release(&c);
		CHECK(profile_check_init(&c, &h, &t, NULL, 0) == 0);
		CHECK(profile_check_next(&c, 1, &it[4], NULL) == -1 && strstr(c.msg, "returned 1"));
		profile_check_release(&c);
		CHECK(profile_check_init(&c, &h, &t, NULL, 0) == 0);
		CHECK(profile_check_next(&c, 2, &it[0], NULL) == -1 && strstr(c.msg, "returned 2"));
		profile_check_release(&c);
		CHECK(profile_check_init(&c, &h, &t, NULL, 0) == 0);
		for (int i = 0; i < 5; i++)
			CHECK(profile_check_next(&c, i < 4, &it[i], NULL) == 0);
		CHECK(profile_check_next(&c, 0, &it[4], NULL) == -1 && strstr(c.msg, "after the end"));
		profile_check_release(&c);
	}

	/* errors: a message, a line after the last item, an offset on it */
	checked_items(&h, &t, it);
	memset(&err, 0, sizeof(err));
	err.line = 5;
	CHECK(run_checker(&h, &t, it, 1, &err, CHECKED_TEXT, msg) == -1 &&
	      strstr(msg, "without a message"));
	snprintf(err.msg, sizeof(err.msg), "broken");
	err.offset = strlen(HDR "f 8:1 7 8192 1.000000000 r 5-9,0-2 /a\n") + 3;
	CHECK(run_checker(&h, &t, it, 1, &err, CHECKED_TEXT, msg) == 0);
	err.line = 4;
	CHECK(run_checker(&h, &t, it, 1, &err, CHECKED_TEXT, msg) == -1 &&
	      strstr(msg, "before or at the last item"));
	err.line = 6;
	CHECK(run_checker(&h, &t, it, 1, &err, CHECKED_TEXT, msg) == -1 &&
	      strstr(msg, "the line is bytes"));
	err.line = 5;
	err.offset = 10000;
	CHECK(run_checker(&h, &t, it, 1, &err, CHECKED_TEXT, msg) == -1 &&
	      strstr(msg, "past the end"));
}

int main(void)
{
	return RUN_TESTS(roundtrip_header_and_items, roundtrip_minimal, writer_drops_bad_header_words,
			 header_init_fills_machine_facts, flags_and_pages_helpers,
			 mtime_text, writer_text_is_stable, writer_to_stdout, rejects_bad_magic_and_version,
			 rejects_bad_header, rejects_bad_file_lines, rejects_bad_paths,
			 path_length_limit, rejects_bad_traces_and_order, rejects_truncated,
			 totals_before_items, rewind_restarts, big_profile_reads_twice,
			 open_refuses_non_files,
			 abort_leaves_nothing, target_intact_until_commit, commit_failure_rename,
			 writer_refuses_what_is_not_a_file,
			 commit_failure_write, writer_open_fails_cleanly, fuzz_corpus_replays,
			 checker_passes_what_the_parser_gives, checker_catches_broken_promises);
}
