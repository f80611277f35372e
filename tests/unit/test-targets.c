/*
 * test-targets.c - the stream of files a command acts on: tree walks
 * (FIFOs never opened, symlinks and loops, hard links once, each file once
 * across operands, -x, entries without a d_type, files vanishing under the
 * walk, directories swapped for symlinks, /proc reached through -L, any
 * number of threads) and profile entries (missing, replaced, stale, other
 * page sizes, selected before they are opened); the filters -I, -i and -m;
 * walks over a stream of names, and the reader of lists of names.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/inotify.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/un.h>

#include "kernel/procfs.h"
#include "cache/targets.h"
#include "scratch.h"
#include "unit.h"
#include "corpus.h"

static void mkfile(const char *name, size_t bytes)
{
	char *p = path_in(name);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	char buf[4096];

	if (fd < 0) {
		perror(p);
		_exit(1);
	}
	memset(buf, 'x', sizeof(buf));
	while (bytes) {
		size_t n = bytes < sizeof(buf) ? bytes : sizeof(buf);

		if (write(fd, buf, n) != (ssize_t)n)
			_exit(1);
		bytes -= n;
	}
	close(fd);
}

static void mkdir_in(const char *name)
{
	if (mkdir(path_in(name), 0755)) {
		perror(name);
		_exit(1);
	}
}

static void symlink_in(const char *target, const char *name)
{
	if (symlink(target, path_in(name))) {
		perror(name);
		_exit(1);
	}
}

/* ---- what a walk produced -------------------------------------------------------- */

struct seen {
	pthread_mutex_t lock;
	struct entry {
		char *path;	/* relative to the scratch directory */
		uint64_t index, pages;
	} *e;
	size_t n, cap;
	char warnings[4096];	/* "path: what (errno)\n"... */
	unsigned nwarn;
	int stop_at;		/* return 7 at this many files (0: never) */
	/* with hs_targets_profile */
	bool stale[32];
	uint64_t nranges[32];
};

static void seen_init(struct seen *s)
{
	memset(s, 0, sizeof(*s));
	pthread_mutex_init(&s->lock, NULL);
}

static void seen_free(struct seen *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->e[i].path);
	free(s->e);
}

static const char *rel(const char *path)
{
	size_t n = strlen(scratch);

	if (!strncmp(path, scratch, n) && path[n] == '/')
		return path + n + 1;
	return path;
}

static int on_file(void *ctx, const struct hs_target *t)
{
	struct seen *s = ctx;
	struct stat st;
	int rc = 0;

	/* what a callback may rely on */
	CHECK(t->fd >= 0 && fstat(t->fd, &st) == 0 && S_ISREG(st.st_mode));
	CHECK(S_ISREG(t->st->st_mode) && st.st_ino == t->st->st_ino);
	CHECK(strlen(t->path) == t->path_len);
	CHECK(fcntl(t->fd, F_GETFL) & O_NONBLOCK);
	pthread_mutex_lock(&s->lock);
	CHECK(hs_grow(&s->e, &s->cap, s->n + 1, sizeof(*s->e)) == 0);
	if (s->n < 32) {
		s->stale[s->n] = t->stale;
		s->nranges[s->n] = t->nranges;
	}
	s->e[s->n].path = strdup(rel(t->path));
	s->e[s->n].index = t->index;
	s->e[s->n].pages = t->pages;
	s->n++;
	if (s->stop_at && s->n >= (size_t)s->stop_at)
		rc = 7;
	pthread_mutex_unlock(&s->lock);
	return rc;
}

static void on_warn(void *ctx, const char *path, int errnum, const char *what)
{
	struct seen *s = ctx;
	size_t len;

	pthread_mutex_lock(&s->lock);
	len = strlen(s->warnings);
	snprintf(s->warnings + len, sizeof(s->warnings) - len, "%s: %s (%d)\n", rel(path), what,
		 errnum);
	s->nwarn++;
	pthread_mutex_unlock(&s->lock);
}

static int cmp_entry(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->path, ((const struct entry *)b)->path);
}

/* The paths seen, sorted and joined with spaces. */
static const char *seen_list(struct seen *s)
{
	static char out[8192];
	size_t len = 0;

	qsort(s->e, s->n, sizeof(*s->e), cmp_entry);
	out[0] = '\0';
	for (size_t i = 0; i < s->n; i++)
		len += (size_t)snprintf(out + len, sizeof(out) - len, "%s%s", i ? " " : "",
					s->e[i].path);
	return out;
}

static int walk(struct seen *s, const struct hs_target_opts *o, const char *const *names, size_t n)
{
	char *paths[16] = { 0 };
	int rc;

	for (size_t i = 0; i < n && i < 16; i++)
		paths[i] = strdup(names[i][0] == '/' ? names[i] : path_in(names[i]));
	rc = hs_targets_walk((const char *const *)paths, n, o, on_file, on_warn, s);
	for (size_t i = 0; i < n && i < 16; i++)
		free(paths[i]);
	return rc;
}

/* Walk "tree" with o; the sorted list of files. */
static const char *walk_tree(struct seen *s, const struct hs_target_opts *o)
{
	const char *names[] = { "tree" };

	seen_init(s);
	CHECK(walk(s, o, names, 1) == 0);
	return seen_list(s);
}

/* Indexes are 0..n-1, each once. */
static void check_indexes(const struct seen *s)
{
	char *hit = calloc(s->n + 1, 1);

	for (size_t i = 0; i < s->n; i++) {
		CHECK(s->e[i].index < s->n);
		if (s->e[i].index < s->n) {
			CHECK(!hit[s->e[i].index]);
			hit[s->e[i].index] = 1;
		}
	}
	free(hit);
}

/* ---- watching for opens -------------------------------------------------------------- */

/* An inotify watch on dir for opens; returns the descriptor. */
static int watch_opens(const char *dir)
{
	int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);

	if (fd < 0 || inotify_add_watch(fd, dir, IN_OPEN) < 0) {
		perror("inotify");
		_exit(1);
	}
	return fd;
}

/* Was name opened since the watch began? */
static bool was_opened(int ifd, const char *name, bool *any_file)
{
	char buf[65536] __attribute__((aligned(__alignof__(struct inotify_event))));
	bool hit = false;
	ssize_t n;

	while ((n = read(ifd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + n;) {
			struct inotify_event *ev = (void *)p;

			if (ev->len && !strcmp(ev->name, name))
				hit = true;
			if (ev->len && !(ev->mask & IN_ISDIR) && any_file)
				*any_file = true;
			p += sizeof(*ev) + ev->len;
		}
	}
	return hit;
}

/* The names opened since the watch began, each between slashes: "/a//b/". */
static void opened_names(int ifd, char *out, size_t size)
{
	char buf[65536] __attribute__((aligned(__alignof__(struct inotify_event))));
	size_t len = 0;
	ssize_t n;

	out[0] = '\0';
	while ((n = read(ifd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + n;) {
			struct inotify_event *ev = (void *)p;

			if (ev->len && len < size)
				len += (size_t)snprintf(out + len, size - len, "/%s/", ev->name);
			p += sizeof(*ev) + ev->len;
		}
	}
}

/* ---- tree walks -------------------------------------------------------------------------- */

TEST(walk_regular_files_only)
{
	struct hs_target_opts o = { 0 };
	struct seen s;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int sock, ifd;
	bool opened_files = false;

	scratch_dir();
	mkdir_in("tree");
	mkdir_in("tree/b");
	mkdir_in("tree/b/d");
	mkdir_in("tree/empty-dir");
	mkfile("tree/a", 1);
	mkfile("tree/b/c", 8192);
	mkfile("tree/b/d/e", 0);
	mkfile("tree/b/with\nnewline \xff", 4097);
	CHECK(mkfifo(path_in("tree/b/fifo"), 0644) == 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path_in("tree/b/sock"));
	sock = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK(bind(sock, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	symlink_in("a", "tree/lnk");
	symlink_in("b", "tree/dlnk");
	symlink_in("nowhere", "tree/dangling");
	symlink_in("self", "tree/self");
	symlink_in(".", "tree/b/loop");
	ifd = watch_opens(path_in("tree/b"));

	for (unsigned threads = 1; threads <= 4; threads += 3) {
		o.threads = threads;
		CHECK_STR(walk_tree(&s, &o), "tree/a tree/b/c tree/b/d/e tree/b/with\nnewline \xff");
		CHECK_EQ_U64(s.nwarn, 0);
		check_indexes(&s);
		for (size_t i = 0; i < s.n; i++) {
			uint64_t bytes = !strcmp(s.e[i].path, "tree/a") ? 1 :
					 !strcmp(s.e[i].path, "tree/b/c") ? 8192 :
					 !strcmp(s.e[i].path, "tree/b/d/e") ? 0 : 4097;
			CHECK_EQ_U64(s.e[i].pages, (bytes + hs_page_size() - 1) / hs_page_size());
		}
		seen_free(&s);
	}
	/* the FIFO was never opened; the files were (the watch works) */
	CHECK(!was_opened(ifd, "fifo", &opened_files));
	CHECK(opened_files);
	close(ifd);
	close(sock);
	scratch_done();
}

/* -L: symlinks are followed, each directory and file walked once, loops end. */
TEST(walk_follow_symlinks)
{
	struct hs_target_opts o = { .follow_symlinks = true };
	struct seen s;

	scratch_dir();
	mkdir_in("tree");
	mkdir_in("tree/b");
	mkdir_in("outside");
	mkfile("tree/a", 1);
	mkfile("tree/b/c", 1);
	mkfile("outside/o", 1);
	symlink_in("a", "tree/lnk");		/* a file already in the tree */
	symlink_in("../outside", "tree/out");	/* a directory outside it */
	symlink_in("../outside/o", "tree/olnk");	/* a file reached twice from outside */
	symlink_in("nowhere", "tree/dangling");
	symlink_in("self", "tree/self");	/* ELOOP */
	symlink_in("..", "tree/b/up");		/* a directory loop */
	symlink_in("b", "tree/b2");		/* the same directory twice */

	for (unsigned threads = 1; threads <= 4; threads += 3) {
		o.threads = threads;
		walk_tree(&s, &o);
		/* every file once, whichever path reached it first */
		CHECK_EQ_U64(s.n, 3);
		/* the ELOOP and the loop up to tree; b2, an alias of b, is no loop */
		CHECK_EQ_U64(s.nwarn, 2);
		CHECK(strstr(s.warnings, "tree/self: broken symlink (40)") != NULL);
		CHECK(strstr(s.warnings, "/up: symlink loop, not followed") != NULL);
		/* a dangling symlink is like a file that vanished: not worth a word */
		CHECK(strstr(s.warnings, "dangling") == NULL);
		seen_free(&s);
	}
	/* without -L the same tree has two files and no warnings */
	o.follow_symlinks = false;
	CHECK_STR(walk_tree(&s, &o), "tree/a tree/b/c");
	CHECK_EQ_U64(s.nwarn, 0);
	seen_free(&s);
	scratch_done();
}

TEST(walk_hard_links_once)
{
	struct hs_target_opts o = { 0 };
	struct seen s;
	char name[64];

	scratch_dir();
	mkdir_in("tree");
	mkdir_in("tree/x");
	mkdir_in("tree/y");
	mkfile("tree/x/f", 10);
	mkfile("tree/x/g", 10);
	for (int i = 0; i < 10; i++) {
		snprintf(name, sizeof(name), "tree/%s/link%d", i % 2 ? "x" : "y", i);
		CHECK(link(path_in("tree/x/f"), path_in(name)) == 0);
	}
	for (unsigned threads = 1; threads <= 8; threads *= 2) {
		o.threads = threads;
		walk_tree(&s, &o);
		CHECK_EQ_U64(s.n, 2);
		check_indexes(&s);
		seen_free(&s);
	}
	/* across operands too */
	{
		const char *names[] = { "tree/x/f", "tree/y/link0", "tree" };

		seen_init(&s);
		CHECK(walk(&s, &o, names, 3) == 0);
		CHECK_STR(seen_list(&s), "tree/x/f tree/x/g");
		seen_free(&s);
	}
	scratch_done();
}

/* Many directories, any number of threads: the same files. */
TEST(walk_threads_same_set)
{
	struct hs_target_opts o = { 0 };
	struct seen s;
	char name[128], *want = NULL;

	scratch_dir();
	mkdir_in("tree");
	for (int i = 0; i < 12; i++) {
		snprintf(name, sizeof(name), "tree/d%d", i);
		mkdir_in(name);
		for (int j = 0; j < 6; j++) {
			snprintf(name, sizeof(name), "tree/d%d/s%d", i, j);
			mkdir_in(name);
			for (int k = 0; k < 5; k++) {
				snprintf(name, sizeof(name), "tree/d%d/s%d/f%d", i, j, k);
				mkfile(name, (size_t)k * 100);
			}
		}
		snprintf(name, sizeof(name), "tree/d%d/top", i);
		mkfile(name, 1);
	}
	for (unsigned threads = 1; threads <= 16; threads *= 2) {
		for (int rep = 0; rep < 3; rep++) {
			o.threads = threads;
			walk_tree(&s, &o);
			CHECK_EQ_U64(s.n, 12 * 6 * 5 + 12);
			check_indexes(&s);
			if (!want)
				want = strdup(seen_list(&s));
			else
				CHECK(!strcmp(seen_list(&s), want));
			CHECK_EQ_U64(s.nwarn, 0);
			seen_free(&s);
		}
	}
	free(want);
	scratch_done();
}

/* The callback's non-zero value stops every thread and is returned. */
TEST(walk_stops_on_callback_error)
{
	struct hs_target_opts o = { 0 };
	struct seen s;
	const char *names[] = { "tree" };
	char name[64];

	scratch_dir();
	mkdir_in("tree");
	for (int i = 0; i < 20; i++) {
		snprintf(name, sizeof(name), "tree/d%d", i);
		mkdir_in(name);
		snprintf(name, sizeof(name), "tree/d%d/f", i);
		mkfile(name, 1);
	}
	for (unsigned threads = 1; threads <= 4; threads += 3) {
		o.threads = threads;
		seen_init(&s);
		s.stop_at = 3;
		CHECK(walk(&s, &o, names, 1) == 7);
		if (threads == 1)
			CHECK_EQ_U64(s.n, 3);
		CHECK(s.n >= 3 && s.n < 20);
		seen_free(&s);
	}
	scratch_done();
}

/* Operands: in order; a FIFO, a missing file, /proc are told, not read. */
TEST(walk_operands)
{
	struct hs_target_opts o = { .threads = 4 };
	struct seen s;
	int ifd;
	bool any = false;

	scratch_dir();
	mkdir_in("tree");
	mkfile("b", 1);
	mkfile("a", 1);
	mkfile("tree/c", 1);
	CHECK(mkfifo(path_in("fifo"), 0644) == 0);
	symlink_in("loop", "loop");
	symlink_in("a", "alink");
	ifd = watch_opens(scratch);
	{
		const char *names[] = { "b", "missing", "fifo", "/proc/self/status", "loop", "a/",
					"tree", "alink" };

		seen_init(&s);
		CHECK(walk(&s, &o, names, 8) == 0);
		CHECK_EQ_U64(s.n, 3);
		/* operands one at a time, in order */
		CHECK_STR(s.e[0].path, "b");
		CHECK_STR(s.e[1].path, "tree/c");
		CHECK_STR(s.e[2].path, "alink");	/* a symlink operand is followed */
		CHECK(s.e[0].index == 0 && s.e[1].index == 1 && s.e[2].index == 2);
		CHECK(strstr(s.warnings, "missing: cannot open (2)") != NULL);
		CHECK(strstr(s.warnings, "fifo: not a regular file or directory") != NULL);
		CHECK(strstr(s.warnings, "/proc/self/status: on a proc filesystem, never read") != NULL);
		CHECK(strstr(s.warnings, "loop: cannot open (40)") != NULL);
		CHECK(strstr(s.warnings, "a/: cannot open (20)") != NULL);
		CHECK_EQ_U64(s.nwarn, 5);
		seen_free(&s);
	}
	CHECK(!was_opened(ifd, "fifo", &any));
	CHECK(any);
	close(ifd);
	scratch_done();
}

/*
 * Files that vanish, or turn into something else, between readdir and
 * open are skipped: no crash, no hang, the walk goes on.
 */
struct vanish {
	struct seen s;
	bool done;
};

static int vanish_first(void *ctx, const struct hs_target *t)
{
	struct vanish *v = ctx;
	char name[64];

	if (!v->done) {
		v->done = true;
		for (int i = 0; i < 10; i++) {
			snprintf(name, sizeof(name), "tree/x/f%d", i);
			if (!strcmp(rel(t->path), name))
				continue;
			if (i == 9) {	/* shrinks to nothing */
				truncate(path_in(name), 0);
				continue;
			}
			unlink(path_in(name));
			if (i == 3)
				mkfifo(path_in(name), 0644);	/* replaced by a FIFO */
			if (i == 4)
				mkdir(path_in(name), 0755);	/* by a directory */
			if (i == 5)
				symlink("/etc/passwd", path_in(name));	/* by a symlink */
		}
		unlink(path_in("tree/y/g"));
		rmdir(path_in("tree/y"));
	}
	return on_file(&v->s, t);
}

TEST(walk_survives_vanishing_files)
{
	struct hs_target_opts o = { .threads = 1 };
	const char *paths[1];
	struct vanish v = { 0 };
	char name[64];

	scratch_dir();
	mkdir_in("tree");
	mkdir_in("tree/x");
	mkdir_in("tree/y");
	mkfile("tree/y/g", 1);
	for (int i = 0; i < 10; i++) {
		snprintf(name, sizeof(name), "tree/x/f%d", i);
		mkfile(name, 100);
	}
	paths[0] = path_in("tree/x");
	seen_init(&v.s);
	CHECK(hs_targets_walk(paths, 1, &o, vanish_first, on_warn, &v.s) == 0);
	/* the first file, and f9 (shrunk) unless it was the first */
	CHECK_EQ_U64(v.s.n, strcmp(v.s.e[0].path, "tree/x/f9") ? 2 : 1);
	if (v.s.n == 2) {
		CHECK_STR(v.s.e[1].path, "tree/x/f9");
		CHECK_EQ_U64(v.s.e[1].pages, 0);
	}
	/* the 5 or 6 files deleted (not replaced) are reported, the rest skipped quietly */
	CHECK(v.s.nwarn >= 5 && v.s.nwarn <= 6);
	seen_free(&v.s);

	/* a whole tree, with a subdirectory gone before it is read */
	mkdir_in("tree/y");
	mkfile("tree/y/g", 1);
	for (int i = 0; i < 10; i++) {
		snprintf(name, sizeof(name), "tree/x/f%d", i);
		unlink(path_in(name));
		rmdir(path_in(name));
		mkfile(name, 100);
	}
	memset(&v, 0, sizeof(v));
	seen_init(&v.s);
	paths[0] = path_in("tree");
	CHECK(hs_targets_walk(paths, 1, &o, vanish_first, on_warn, &v.s) == 0);
	CHECK(v.s.n >= 1 && v.s.n <= 2);	/* tree/y/g may have been reached first */
	seen_free(&v.s);
	scratch_done();
}

/*
 * A directory queued by the walk and replaced by a symlink before it is
 * read (a race anyone who can write in the tree may run) must not take
 * the walk out of the tree. The callback does the swap at a moment the
 * walk cannot avoid: tree has two directories, p and q, each with one
 * file; when the file of the first one read is visited, the other one is
 * queued but not yet opened. Which one comes first does not matter.
 */
struct swap {
	struct seen s;
	const char *top;	/* the directory holding p and q, relative to scratch */
	bool parent;		/* swap top itself rather than the other directory */
	bool done;
};

static int swap_other(void *ctx, const struct hs_target *t)
{
	struct swap *sw = ctx;
	char from[512], to[520], target[512];

	if (!sw->done) {
		const char *path = rel(t->path);
		size_t n = strlen(sw->top);
		char other = !strncmp(path + n, "/p/", 3) ? 'q' : 'p';

		sw->done = true;
		if (sw->parent) {
			snprintf(from, sizeof(from), "%s", path_in(sw->top));
			snprintf(target, sizeof(target), "%s", path_in("outside"));
		} else {
			snprintf(from, sizeof(from), "%s/%c", path_in(sw->top), other);
			snprintf(target, sizeof(target), "%s/%c", path_in("outside"), other);
		}
		snprintf(to, sizeof(to), "%s.old", from);
		CHECK(rename(from, to) == 0);
		CHECK(symlink(target, from) == 0);
	}
	return on_file(&sw->s, t);
}

static void swap_check(const char *top, bool parent, bool follow)
{
	struct hs_target_opts o = { .threads = 1, .follow_symlinks = follow };
	struct swap sw = { .top = top, .parent = parent };
	const char *paths[1];
	char name[128];

	scratch_dir();
	mkdir_in("top");
	mkdir_in("top/tree");
	mkdir_in("outside");
	for (const char *d = "pq"; *d; d++) {
		snprintf(name, sizeof(name), "top/tree/%c", *d);
		mkdir_in(name);
		snprintf(name, sizeof(name), "top/tree/%c/f%c", *d, *d);
		mkfile(name, 1);
		snprintf(name, sizeof(name), "outside/%c", *d);
		mkdir_in(name);
		snprintf(name, sizeof(name), "outside/%c/secret", *d);
		mkfile(name, 1);
	}
	seen_init(&sw.s);
	paths[0] = path_in(parent ? "top" : top);
	CHECK(hs_targets_walk(paths, 1, &o, swap_other, on_warn, &sw.s) == 0);
	CHECK(sw.done);
	CHECK_EQ_U64(sw.s.n, 1);	/* the first file; nothing from outside */
	CHECK(!strstr(seen_list(&sw.s), "secret"));
	CHECK(strstr(sw.s.warnings, "directory replaced during the walk, skipped (0)") != NULL);
	CHECK_EQ_U64(sw.s.nwarn, 1);
	seen_free(&sw.s);
	scratch_done();
}

TEST(walk_refuses_directory_swapped_for_symlink)
{
	for (int follow = 0; follow < 2; follow++) {
		swap_check("top/tree", false, follow);	/* the directory itself */
		swap_check("top/tree", true, follow);	/* its parent, inside the operand */
	}
}

/* The same where openat2 is missing: O_NOFOLLOW and the identity check. */
TEST(walk_refuses_swapped_directory_without_openat2)
{
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat2, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(code) / sizeof(code[0]), .filter = code };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog))
		SKIP("cannot install a seccomp filter");
	CHECK(syscall(SYS_openat2, AT_FDCWD, "/", NULL, 0) < 0 && errno == ENOSYS);
	for (int follow = 0; follow < 2; follow++) {
		swap_check("top/tree", false, follow);
		swap_check("top/tree", true, follow);
	}
}

/*
 * -L follows symlinks to files, but not onto proc or sysfs: a file there
 * is never opened, like the directories there. Nor is a file of proc
 * bind-mounted into the tree (root only).
 */
TEST(walk_follow_never_reaches_pseudo_fs)
{
	struct hs_target_opts o = { .follow_symlinks = true };
	struct seen s;
	bool bound = false;

	scratch_dir();
	mkdir_in("tree");
	mkfile("tree/a", 1);
	symlink_in("/proc/self/status", "tree/st");
	symlink_in("/proc/version", "tree/ver");
	if (access("/sys/kernel/mm/transparent_hugepage/enabled", F_OK) == 0)
		symlink_in("/sys/kernel/mm/transparent_hugepage/enabled", "tree/sysf");
	mkfile("tree/bind", 0);
	if (geteuid() == 0)
		bound = mount("/proc/version", path_in("tree/bind"), NULL, MS_BIND, NULL) == 0;
	for (unsigned threads = 1; threads <= 4; threads += 3) {
		o.threads = threads;
		o.follow_symlinks = true;
		CHECK_STR(walk_tree(&s, &o), bound ? "tree/a" : "tree/a tree/bind");
		CHECK_EQ_U64(s.nwarn, 0);
		seen_free(&s);
		o.follow_symlinks = false;
		CHECK_STR(walk_tree(&s, &o), bound ? "tree/a" : "tree/a tree/bind");
		CHECK_EQ_U64(s.nwarn, 0);
		seen_free(&s);
	}
	if (bound)
		CHECK(umount2(path_in("tree/bind"), MNT_DETACH) == 0);
	scratch_done();
}

/*
 * Several operands: a file named twice, or reached through two of them,
 * comes once; a tree named twice is walked once, without a word (even
 * with -L, where a directory met twice in one walk means a loop).
 */
TEST(walk_each_file_once_across_operands)
{
	struct hs_target_opts o = { 0 };
	struct seen s;

	scratch_dir();
	mkdir_in("tree");
	mkdir_in("tree/sub");
	mkfile("a", 1);
	mkfile("tree/c", 1);
	mkfile("tree/sub/d", 1);
	for (int follow = 0; follow < 2; follow++) {
		for (unsigned threads = 1; threads <= 4; threads += 3) {
			const char *names[] = { "a", "a", "./a", "tree/sub", "tree", "tree/c",
						"tree/", "tree/sub/d" };

			o.threads = threads;
			o.follow_symlinks = follow;
			seen_init(&s);
			CHECK(walk(&s, &o, names, 8) == 0);
			CHECK_STR(seen_list(&s), "a tree/c tree/sub/d");
			check_indexes(&s);
			CHECK_EQ_U64(s.nwarn, 0);
			seen_free(&s);
		}
	}
	scratch_done();
}

/* Operands are tidied: "//" and "." go, ".." and a trailing slash stay. */
TEST(walk_tidies_operands)
{
	struct hs_target_opts o = { .threads = 1 };
	struct seen s;
	char slashes[512];

	scratch_dir();
	mkdir_in("tree");
	mkdir_in("tree/sub");
	mkfile("tree/sub/f", 1);
	mkfile("g", 1);
	snprintf(slashes, sizeof(slashes), "/%s//tree/./sub/.", scratch);
	{
		const char *names[] = { slashes };

		seen_init(&s);
		CHECK(walk(&s, &o, names, 1) == 0);
		CHECK_EQ_U64(s.n, 1);
		CHECK_STR(s.e[0].path, "tree/sub/f");
		seen_free(&s);
	}
	{
		const char *names[] = { "./tree//sub/../sub/" };

		seen_init(&s);
		CHECK(walk(&s, &o, names, 1) == 0);
		CHECK_EQ_U64(s.n, 1);
		CHECK_STR(s.e[0].path, "tree/sub/../sub/f");
		seen_free(&s);
	}
	{
		const char *names[] = { "./g", "g/." };

		seen_init(&s);
		CHECK(walk(&s, &o, names, 2) == 0);
		CHECK_EQ_U64(s.n, 1);
		CHECK_STR(s.e[0].path, "g");
		/* still not a directory */
		CHECK(strstr(s.warnings, "g/: cannot open (20)") != NULL);
		seen_free(&s);
	}
	/* relative to the working directory, where "." is all that is left */
	CHECK(chdir(path_in("tree/sub")) == 0);
	{
		const char *const paths[] = { "./", ".//." };

		seen_init(&s);
		CHECK(hs_targets_walk(paths, 1, &o, on_file, on_warn, &s) == 0);
		CHECK_EQ_U64(s.n, 1);
		CHECK_STR(s.e[0].path, "./f");
		seen_free(&s);
		seen_init(&s);
		CHECK(hs_targets_walk(paths + 1, 1, &o, on_file, on_warn, &s) == 0);
		CHECK_EQ_U64(s.n, 1);
		CHECK_STR(s.e[0].path, "./f");
		seen_free(&s);
	}
	CHECK(chdir("/") == 0);
	scratch_done();
}

/* ---- mounts (root only) --------------------------------------------------------------- */

static bool try_mount(const char *src, const char *dir, const char *type, const char *opts)
{
	return mount(src, dir, type, 0, opts) == 0;
}

/* -x stays on one filesystem; pseudo-filesystems are never walked. */
TEST(walk_one_filesystem)
{
	struct hs_target_opts o = { 0 };
	struct seen s;
	bool proc;

	if (geteuid() != 0)
		SKIP("needs root to mount");
	scratch_dir();
	mkdir_in("tree");
	mkdir_in("tree/mnt");
	mkdir_in("tree/proc");
	mkfile("tree/a", 1);
	if (!try_mount("none", path_in("tree/mnt"), "tmpfs", "size=1m")) {
		scratch_done();
		SKIP("cannot mount tmpfs here");
	}
	proc = try_mount("proc", path_in("tree/proc"), "proc", NULL);
	mkfile("tree/mnt/m", 1);
	mkdir_in("tree/mnt/sub");
	mkfile("tree/mnt/sub/n", 1);

	CHECK_STR(walk_tree(&s, &o), "tree/a tree/mnt/m tree/mnt/sub/n");
	CHECK_EQ_U64(s.nwarn, 0);
	seen_free(&s);
	o.one_filesystem = true;
	o.threads = 4;
	CHECK_STR(walk_tree(&s, &o), "tree/a");
	seen_free(&s);
	/* -x from inside the mount: its own filesystem only */
	{
		const char *names[] = { "tree/mnt" };

		seen_init(&s);
		CHECK(walk(&s, &o, names, 1) == 0);
		CHECK_STR(seen_list(&s), "tree/mnt/m tree/mnt/sub/n");
		seen_free(&s);
	}
	if (proc)
		CHECK(umount2(path_in("tree/proc"), MNT_DETACH) == 0);
	CHECK(umount2(path_in("tree/mnt"), MNT_DETACH) == 0);
	scratch_done();
}

/* Does dir report every entry's type as DT_UNKNOWN? */
static bool all_dt_unknown(const char *dir)
{
	char buf[8192];
	int fd = open(dir, O_RDONLY | O_DIRECTORY);
	long n;
	bool all = true;

	while ((n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0)
		for (long off = 0; off < n;) {
			struct linux_dirent64 *de = (void *)(buf + off);

			all &= de->d_type == DT_UNKNOWN;
			off += de->d_reclen;
		}
	close(fd);
	return all;
}

/*
 * Some filesystems (ext4 without the filetype feature, old XFS...) give
 * no d_type: each entry is then stat'ed before anything is opened.
 */
TEST(walk_without_d_type)
{
	struct hs_target_opts o = { 0 };
	struct seen s;
	char cmd[2048];
	int ifd;
	bool any = false;

	if (geteuid() != 0)
		SKIP("needs root to mount");
	scratch_dir();
	mkdir_in("tree");
	snprintf(cmd, sizeof(cmd),
		 "truncate -s 16M %s/img && mkfs.ext4 -q -F -O ^filetype,^has_journal %s/img "
		 ">/dev/null 2>&1 && mount -o loop %s/img %s/tree 2>/dev/null",
		 scratch, scratch, scratch, scratch);
	if (system(cmd) != 0) {
		scratch_done();
		SKIP("cannot make and loop-mount an ext4 without filetype");
	}
	rmdir(path_in("tree/lost+found"));
	mkdir_in("tree/d");
	mkfile("tree/a", 5000);
	mkfile("tree/d/b", 1);
	CHECK(mkfifo(path_in("tree/d/fifo"), 0644) == 0);
	symlink_in("a", "tree/lnk");
	symlink_in("d", "tree/dlnk");
	if (!all_dt_unknown(path_in("tree"))) {
		umount2(path_in("tree"), MNT_DETACH);
		scratch_done();
		SKIP("this ext4 still fills d_type");
	}
	ifd = watch_opens(path_in("tree/d"));
	for (unsigned threads = 1; threads <= 2; threads++) {
		o.threads = threads;
		o.follow_symlinks = false;
		CHECK_STR(walk_tree(&s, &o), "tree/a tree/d/b");
		CHECK_EQ_U64(s.nwarn, 0);
		seen_free(&s);
		o.follow_symlinks = true;
		walk_tree(&s, &o);
		CHECK_EQ_U64(s.n, 2);	/* lnk is a, dlnk is d: each once */
		seen_free(&s);
	}
	CHECK(!was_opened(ifd, "fifo", &any));
	CHECK(any);
	close(ifd);
	CHECK(umount2(path_in("tree"), MNT_DETACH) == 0);
	scratch_done();
}

TEST(pseudo_fs_named)
{
	int fd = open("/proc/self", O_RDONLY | O_DIRECTORY);

	CHECK(fd >= 0);
	CHECK_STR(hs_pseudo_fs(fd), "proc");
	close(fd);
	fd = open("/sys", O_RDONLY | O_DIRECTORY);
	if (fd >= 0) {
		CHECK_STR(hs_pseudo_fs(fd), "sysfs");
		close(fd);
	}
	fd = open("/var/tmp", O_RDONLY | O_DIRECTORY);
	CHECK(hs_pseudo_fs(fd) == NULL);
	close(fd);
}

/* ---- profiles --------------------------------------------------------------------------- */

/* "f DEV INO SIZE MTIME r RANGES PATH" for a file as it is now. */
static size_t file_line(char *out, size_t cap, const char *name, const char *ranges, bool exact)
{
	struct stat st;
	const char *p = path_in(name);

	if (stat(p, &st) != 0)
		memset(&st, 0, sizeof(st));
	return (size_t)snprintf(out, cap, "f %u:%u %llu %llu %lld.%09ld r %s %s\n",
				major(st.st_dev), minor(st.st_dev), (unsigned long long)st.st_ino,
				(unsigned long long)st.st_size,
				(long long)st.st_mtim.tv_sec + (exact ? 0 : 1), st.st_mtim.tv_nsec,
				ranges, p);
}

static struct hs_profile_reader *open_text(const char *text)
{
	struct hs_profile_reader *r = NULL;
	struct hs_error err;

	if (hs_profile_open_buffer(text, strlen(text), &r, &err)) {
		printf("#   profile refused: line %u: %s\n", err.line, err.msg);
		unit_failed = 1;
	}
	return r;
}

TEST(profile_entries)
{
	static char text[16384];
	struct hs_profile_reader *r;
	struct hs_error err;
	struct seen s;
	size_t n;
	int ifd;
	bool any = false;

	scratch_dir();
	mkfile("a", 10 * 4096);
	mkfile("b", 3 * 4096);
	mkdir_in("dir");
	CHECK(mkfifo(path_in("fifo"), 0644) == 0);
	n = (size_t)snprintf(text, sizeof(text), "hotset-profile 1\npage-size 4096\nsource record\n");
	n += file_line(text + n, sizeof(text) - n, "a", "8-20,0-1", true);
	n += file_line(text + n, sizeof(text) - n, "missing", "0", true);
	n += file_line(text + n, sizeof(text) - n, "fifo", "0", true);
	n += file_line(text + n, sizeof(text) - n, "dir", "0", true);
	n += (size_t)snprintf(text + n, sizeof(text) - n,
			      "f 0:0 0 0 0.000000000 r 0 /proc/self/status\n");
	n += file_line(text + n, sizeof(text) - n, "b", "-", false);
	n += (size_t)snprintf(text + n, sizeof(text) - n, "end 6 0 0\n");
	ifd = watch_opens(scratch);
	r = open_text(text);
	if (!r) {
		scratch_done();
		return;
	}
	for (int pass = 0; pass < 2; pass++) {
		seen_init(&s);
		CHECK(hs_targets_profile(r, on_file, on_warn, &s, &err) == 0);
		CHECK_EQ_U64(s.n, 2);
		CHECK_STR(s.e[0].path, "a");
		CHECK_EQ_U64(s.e[0].pages, 2 + 2);	/* 8-20 clipped to 8-9 */
		CHECK(!s.stale[0]);
		CHECK_EQ_U64(s.nranges[0], 2);
		CHECK_STR(s.e[1].path, "b");
		CHECK_EQ_U64(s.e[1].pages, 0);
		CHECK(s.stale[1]);	/* its mtime differs */
		CHECK(s.e[0].index == 0 && s.e[1].index == 1);
		CHECK_EQ_U64(s.nwarn, 4);
		CHECK(strstr(s.warnings, "missing: no longer exists, skipped (2)") != NULL);
		CHECK(strstr(s.warnings, "fifo: replaced by a FIFO since the profile was made, "
				  "not opened") != NULL);
		CHECK(strstr(s.warnings, "dir: replaced by a directory since the profile was made, "
				  "not opened") != NULL);
		CHECK(strstr(s.warnings, "/proc/self/status: is on a pseudo-filesystem") != NULL);
		seen_free(&s);
		hs_profile_rewind(r);
	}
	CHECK(!was_opened(ifd, "fifo", &any));
	CHECK(any);
	close(ifd);
	/* a stop from the callback */
	seen_init(&s);
	s.stop_at = 1;
	CHECK(hs_targets_profile(r, on_file, on_warn, &s, &err) == 7);
	seen_free(&s);
	hs_profile_close(r);
	scratch_done();
}

TEST(profile_malformed_part_way)
{
	static char text[4096];
	struct hs_profile_reader *r;
	struct hs_error err = { 0 };
	struct seen s;
	size_t n;

	scratch_dir();
	mkfile("a", 4096);
	n = (size_t)snprintf(text, sizeof(text), "hotset-profile 1\npage-size 4096\nsource record\n");
	n += file_line(text + n, sizeof(text) - n, "a", "0", true);
	n += (size_t)snprintf(text + n, sizeof(text) - n, "f nonsense\nend 2 0 0\n");
	r = open_text(text);
	if (!r) {
		scratch_done();
		return;
	}
	seen_init(&s);
	CHECK(hs_targets_profile(r, on_file, on_warn, &s, &err) == -EINVAL);
	CHECK_EQ_U64(err.line, 5);
	CHECK_EQ_U64(s.n, 1);
	seen_free(&s);
	hs_profile_close(r);
	scratch_done();
}

/*
 * A profile written with another page size is counted in this machine's
 * pages: a range may grow to cover whole pages, and several ranges of
 * small pages may fall in one page here, which must then count once.
 */
struct page_check {
	struct seen s;
	struct hs_range r[8];
	size_t n;
};

static int keep_ranges(void *ctx, const struct hs_target *t)
{
	struct page_check *pc = ctx;

	pc->n = t->nranges < 8 ? t->nranges : 8;
	memcpy(pc->r, t->ranges, pc->n * sizeof(*t->ranges));
	return on_file(&pc->s, t);
}

TEST(profile_other_page_sizes)
{
	static char text[4096];
	const uint64_t ps = hs_page_size();
	struct hs_profile_reader *r;
	struct hs_error err;
	struct page_check pc;
	size_t n;

	scratch_dir();
	mkfile("a", 10 * ps);

	/* 512-byte pages 0, 2 and 4 all lie in our page 0; 16 is in page 2 */
	n = (size_t)snprintf(text, sizeof(text), "hotset-profile 1\npage-size 512\nsource record\n");
	n += file_line(text + n, sizeof(text) - n, "a", "4,0,2,16", true);
	snprintf(text + n, sizeof(text) - n, "end 1 0 0\n");
	r = open_text(text);
	memset(&pc, 0, sizeof(pc));
	seen_init(&pc.s);
	CHECK(r && hs_targets_profile(r, keep_ranges, on_warn, &pc, &err) == 0);
	CHECK_EQ_U64(pc.s.n, 1);
	CHECK_EQ_U64(pc.s.e[0].pages, ps == 4096 ? 2 : 1 + (16 * 512 >= ps));
	CHECK_EQ_U64(hs_ranges_pages(pc.r, pc.n), pc.s.e[0].pages);
	seen_free(&pc.s);
	hs_profile_close(r);

	/*
	 * 16 MiB pages: page 0 is the whole file; the largest page number is
	 * far past it (2^39 - 1: its end, 2^63 bytes, is the most a profile
	 * may name)
	 */
	n = (size_t)snprintf(text, sizeof(text), "hotset-profile 1\npage-size 16777216\nsource record\n");
	n += file_line(text + n, sizeof(text) - n, "a", "549755813887,0", true);
	snprintf(text + n, sizeof(text) - n, "end 1 0 0\n");
	r = open_text(text);
	memset(&pc, 0, sizeof(pc));
	seen_init(&pc.s);
	CHECK(r && hs_targets_profile(r, keep_ranges, on_warn, &pc, &err) == 0);
	CHECK_EQ_U64(pc.s.n, 1);
	CHECK_EQ_U64(pc.s.e[0].pages, 10);
	for (size_t i = 0; i < pc.n; i++)
		CHECK(pc.r[i].first <= pc.r[i].last);
	seen_free(&pc.s);
	hs_profile_close(r);
	scratch_done();
}

/*
 * Entries a command was not asked about (-p PROFILE PATH) are dropped
 * before their file is looked at: not opened, not warned about if gone,
 * no index taken.
 */
static bool only_a(void *ctx, const char *path, size_t len)
{
	const char *name = rel(path);

	(void)ctx;
	CHECK(strlen(path) == len);
	return !strcmp(name, "a");
}

TEST(profile_selected_before_opened)
{
	static char text[8192];
	struct hs_profile_reader *r;
	struct hs_error err;
	struct seen s;
	size_t n;
	int ifd;
	bool any = false;

	scratch_dir();
	mkfile("a", 4096);
	mkfile("b", 4096);
	CHECK(mkfifo(path_in("fifo"), 0644) == 0);
	n = (size_t)snprintf(text, sizeof(text), "hotset-profile 1\npage-size 4096\nsource record\n");
	n += file_line(text + n, sizeof(text) - n, "b", "0", true);
	n += file_line(text + n, sizeof(text) - n, "missing", "0", true);
	n += file_line(text + n, sizeof(text) - n, "fifo", "0", true);
	n += file_line(text + n, sizeof(text) - n, "a", "0", true);
	n += (size_t)snprintf(text + n, sizeof(text) - n, "end 4 0 0\n");
	r = open_text(text);
	if (!r) {
		scratch_done();
		return;
	}
	ifd = watch_opens(scratch);
	seen_init(&s);
	CHECK(hs_targets_profile_select(r, only_a, on_file, on_warn, &s, &err) == 0);
	CHECK_EQ_U64(s.n, 1);
	CHECK_STR(s.e[0].path, "a");
	CHECK_EQ_U64(s.e[0].index, 0);
	CHECK_EQ_U64(s.nwarn, 0);
	seen_free(&s);
	CHECK(was_opened(ifd, "a", &any));
	CHECK(!was_opened(ifd, "b", &any));
	close(ifd);
	/* no filter: all of them, as hs_targets_profile */
	hs_profile_rewind(r);
	seen_init(&s);
	CHECK(hs_targets_profile_select(r, NULL, on_file, on_warn, &s, &err) == 0);
	CHECK_EQ_U64(s.n, 2);
	CHECK_EQ_U64(s.nwarn, 2);
	seen_free(&s);
	hs_profile_close(r);
	scratch_done();
}

/*
 * Entries whose path now names something else than the profile's file: a
 * symlink (to the file it was, even), a FIFO, and (as root) a file of
 * another user's renamed over it. None is opened; each is said to be
 * replaced, with what replaced it and whose. A file of the caller's own
 * renamed over an entry (a rebuild, an editor's save) is the entry's file
 * anew: opened, stale. An entry without an identity (0:0 0) is taken by
 * its path, stale.
 */
TEST(profile_entries_replaced_never_opened)
{
	static char text[8192], names[4096];
	const bool root = geteuid() == 0;
	struct hs_profile_reader *r;
	struct hs_error err;
	struct seen s;
	size_t n;
	int ifd;

	scratch_dir();
	mkfile("renamed", 4096);
	mkfile("linked", 4096);
	mkfile("piped", 4096);
	mkfile("kept", 4096);
	mkfile("byname", 4096);
	mkfile("theirs", 4096);
	n = (size_t)snprintf(text, sizeof(text), "hotset-profile 1\npage-size 4096\nsource record\n");
	n += file_line(text + n, sizeof(text) - n, "renamed", "0", true);
	n += file_line(text + n, sizeof(text) - n, "linked", "0", true);
	n += file_line(text + n, sizeof(text) - n, "piped", "0", true);
	n += file_line(text + n, sizeof(text) - n, "kept", "0", true);
	n += (size_t)snprintf(text + n, sizeof(text) - n, "f 0:0 0 0 0.000000000 r 0 %s\n",
			      path_in("byname"));
	if (root)
		n += file_line(text + n, sizeof(text) - n, "theirs", "0", true);
	n += (size_t)snprintf(text + n, sizeof(text) - n, "end %d 0 0\n", root ? 6 : 5);
	/* the substitutions, after the profile was made */
	mkfile("new", 4096);
	CHECK(rename(path_in("new"), path_in("renamed")) == 0);
	CHECK(rename(path_in("linked"), path_in("linked.real")) == 0);
	CHECK(symlink("linked.real", path_in("linked")) == 0);
	CHECK(unlink(path_in("piped")) == 0 && mkfifo(path_in("piped"), 0644) == 0);
	mkfile("new", 4096);
	CHECK(rename(path_in("new"), path_in("byname")) == 0);
	mkfile("new", 4096);
	if (root)
		CHECK(chown(path_in("new"), 65534, 65534) == 0);
	CHECK(rename(path_in("new"), path_in("theirs")) == 0);
	r = open_text(text);
	if (!r) {
		scratch_done();
		return;
	}
	ifd = watch_opens(scratch);
	seen_init(&s);
	CHECK(hs_targets_profile(r, on_file, on_warn, &s, &err) == 0);
	CHECK_EQ_U64(s.n, 3);
	CHECK_STR(s.e[0].path, "renamed");
	CHECK(s.stale[0]);
	CHECK_STR(s.e[1].path, "kept");
	CHECK(!s.stale[1]);
	CHECK_STR(s.e[2].path, "byname");
	CHECK(s.stale[2]);
	CHECK_EQ_U64(s.nwarn, root ? 3 : 2);
	CHECK(strstr(s.warnings, "linked: replaced by a symbolic link since the profile was made, "
			  "not opened") != NULL);
	CHECK(strstr(s.warnings, "piped: replaced by a FIFO since the profile was made, "
			  "not opened") != NULL);
	if (root)
		CHECK(strstr(s.warnings, "theirs: replaced by another user's file (uid 65534) since "
				  "the profile was made, not opened") != NULL);
	seen_free(&s);
	opened_names(ifd, names, sizeof(names));
	CHECK(!strstr(names, "/linked.real/") && !strstr(names, "/piped/") &&
	      !strstr(names, "/theirs/"));
	CHECK(strstr(names, "/renamed/") && strstr(names, "/kept/") && strstr(names, "/byname/"));
	close(ifd);
	hs_profile_close(r);
	scratch_done();
}

/*
 * A filesystem without a block device (tmpfs here, as btrfs, NFS) is
 * numbered at mount: the same inode, size and mtime under another minor
 * is the same file, not a replaced one, whoever owns it; another mtime is
 * another file: the caller's own is taken anew (stale), another user's
 * (as root: nobody's) is not opened.
 */
TEST(profile_entries_renumbered_device)
{
	static char text[4096];
	char path[] = "/dev/shm/hotset-unit.XXXXXX";
	struct hs_profile_reader *r;
	struct hs_error err;
	struct stat st;
	struct seen s;
	int fd = mkstemp(path);

	if (fd < 0 || fstat(fd, &st) < 0 || major(st.st_dev) != 0)
		SKIP("no tmpfs at /dev/shm");
	for (int pass = 0; pass < 4; pass++) {
		bool later = pass & 1, theirs = pass & 2;

		if (theirs && (geteuid() != 0 || fchown(fd, 65534, 65534) < 0))
			break;
		snprintf(text, sizeof(text), "hotset-profile 1\npage-size 4096\nsource record\n"
			 "f 0:%u %llu 0 %lld.%09ld r - %s\nend 1 0 0\n", minor(st.st_dev) + 1,
			 (unsigned long long)st.st_ino, (long long)st.st_mtim.tv_sec + later,
			 st.st_mtim.tv_nsec, path);
		r = open_text(text);
		if (!r)
			break;
		seen_init(&s);
		CHECK(hs_targets_profile(r, on_file, on_warn, &s, &err) == 0);
		if (later && theirs) {
			CHECK_EQ_U64(s.n, 0);
			CHECK(strstr(s.warnings, "replaced by another user's file (uid 65534)") != NULL);
		} else {
			CHECK_EQ_U64(s.n, 1);
			CHECK(s.n != 1 || s.stale[0] == later);
		}
		seen_free(&s);
		hs_profile_close(r);
	}
	close(fd);
	unlink(path);
}

/* ---- filters, lists of names --------------------------------------------------------- */

TEST(filters_leave_out_files_and_trees_silently)
{
	const char *c_files[] = { "*.c" }, *objects[] = { "*.o", "*/skip/*" }, *dots[] = { ".*" };
	struct hs_target_opts o = { .threads = 3 };
	struct seen s;

	scratch_dir();
	mkdir_in("tree");
	mkdir_in("tree/lib.o");	/* a directory matched by -i: not read */
	mkdir_in("tree/skip");
	mkdir_in("tree/.git");
	mkfile("tree/a.c", 10);
	mkfile("tree/b.o", 10);
	mkfile("tree/big.c", 3 * 4096);
	mkfile("tree/lib.o/in.c", 1);
	mkfile("tree/skip/x.c", 1);
	mkfile("tree/.git/config", 1);
	CHECK_STR(walk_tree(&s, &o), "tree/.git/config tree/a.c tree/b.o tree/big.c "
		  "tree/lib.o/in.c tree/skip/x.c");
	seen_free(&s);
	o.include = c_files;
	o.ninclude = 1;
	CHECK_STR(walk_tree(&s, &o), "tree/a.c tree/big.c tree/lib.o/in.c tree/skip/x.c");
	seen_free(&s);
	o.exclude = objects;
	o.nexclude = 2;	/* a base name, and a path (with a '/') */
	CHECK_STR(walk_tree(&s, &o), "tree/a.c tree/big.c");
	seen_free(&s);
	o.max_size = 4096;	/* larger than, not as large as */
	CHECK_STR(walk_tree(&s, &o), "tree/a.c");
	CHECK_EQ_U64(s.nwarn, 0);
	seen_free(&s);
	/* named files are filtered too, and so is what lies in a directory matched */
	{
		const char *names[] = { "tree/b.o", "tree/lib.o/in.c", "tree/big.c", "tree/a.c" };

		o.max_size = 0;
		seen_init(&s);
		CHECK(walk(&s, &o, names, 4) == 0);
		CHECK_STR(seen_list(&s), "tree/a.c tree/big.c");
		seen_free(&s);
	}
	/* ".", ".." and "/" are no names: "-i '.*'" walks "." but not ".git" */
	CHECK(chdir(path_in("tree")) == 0);
	{
		struct hs_target_opts d = { .exclude = dots, .nexclude = 1 };
		const char *names[] = { "." };

		seen_init(&s);
		CHECK(hs_targets_walk(names, 1, &d, on_file, on_warn, &s) == 0);
		CHECK_STR(seen_list(&s), "./a.c ./b.o ./big.c ./lib.o/in.c ./skip/x.c");
		seen_free(&s);
		CHECK(hs_target_filtered(&d, "..", true) == false);
		CHECK(hs_target_filtered(&d, "/", true) == false);
		CHECK(hs_target_filtered(&d, "x/.git/", true) == true);
		CHECK(hs_target_filtered(&d, "/home/.cache/f", false) == true);
		CHECK(hs_target_filtered(&d, "/home/cache/f", false) == false);
	}
	CHECK(chdir("/") == 0);
	scratch_done();
}

/* A list of names, as next gives them: the strings of names[0..] up to NULL. */
static int next_in_list(void *ctx, const char **name)
{
	const char ***p = ctx;

	if (!**p)
		return 0;
	*name = *(*p)++;
	return 1;
}

TEST(walk_names_takes_them_one_at_a_time)
{
	struct hs_target_opts o = { .threads = 4 };
	char *names[8] = { 0 };
	const char **at = (const char **)names;
	struct seen s;

	scratch_dir();
	mkdir_in("tree");
	mkdir_in("tree/sub");
	mkfile("tree/a", 1);
	mkfile("tree/sub/b", 1);
	mkfile("c", 1);
	/* a file named twice, and under a directory named after it: once */
	names[0] = strdup(path_in("tree/sub/b"));
	names[1] = strdup(path_in("c"));
	names[2] = strdup(path_in("missing"));
	names[3] = strdup(path_in("tree"));
	names[4] = strdup(path_in("c"));
	seen_init(&s);
	CHECK(hs_targets_walk_names(next_in_list, &at, &o, on_file, on_warn, &s) == 0);
	CHECK_STR(seen_list(&s), "c tree/a tree/sub/b");
	CHECK(strstr(s.warnings, "missing: cannot open (2)") != NULL);
	CHECK_EQ_U64(s.nwarn, 1);
	check_indexes(&s);
	seen_free(&s);
	/* with one thread, in the order named */
	o.threads = 1;
	at = (const char **)names + 1;
	seen_init(&s);
	CHECK(hs_targets_walk_names(next_in_list, &at, &o, on_file, on_warn, &s) == 0);
	CHECK_EQ_U64(s.n, 3);
	CHECK_STR(s.e[0].path, "c");
	CHECK(s.e[0].index == 0 && s.e[1].index == 1 && s.e[2].index == 2);
	seen_free(&s);
	for (int i = 0; i < 8; i++)
		free(names[i]);
	scratch_done();
}

/* A pipe that gives text, then its end. */
static int pipe_of(const char *text, size_t len)
{
	int fds[2];

	CHECK(pipe(fds) == 0);
	CHECK(write(fds[1], text, len) == (ssize_t)len);
	close(fds[1]);
	return fds[0];
}

TEST(name_lists_are_streamed_from_a_descriptor)
{
	static char text[3 * 4096 + 64];
	struct hs_name_list *l;
	const char *name;
	size_t len, n;
	unsigned line;
	int fd;

	/* as they are, blanks kept; empty lines skipped, counted; a long name refused */
	n = (size_t)snprintf(text, sizeof(text), " a b \n\n/x/y\n");
	memset(text + n, 'z', 2 * 4096);
	n += 2 * 4096;
	n += (size_t)snprintf(text + n, sizeof(text) - n, "\nlast");
	fd = pipe_of(text, n);
	CHECK(hs_name_list_new(fd, '\n', &l) == 0);
	CHECK(hs_name_list_next(l, &name, &len, &line) == 1 && line == 1 && len == 5);
	CHECK_STR(name, " a b ");
	CHECK(hs_name_list_next(l, &name, &len, &line) == 1 && line == 3);
	CHECK_STR(name, "/x/y");
	CHECK(hs_name_list_next(l, &name, &len, &line) == -ENAMETOOLONG && line == 4);
	CHECK(hs_name_list_next(l, &name, &len, &line) == 1 && line == 5);
	CHECK_STR(name, "last");	/* without its newline */
	CHECK(hs_name_list_next(l, &name, &len, &line) == 0);
	hs_name_list_free(l);
	close(fd);
	/* NUL-ended names hold newlines; a NUL in a newline-ended name is refused */
	fd = pipe_of("a\nb\0\0c\0", 7);
	CHECK(hs_name_list_new(fd, '\0', &l) == 0);
	CHECK(hs_name_list_next(l, &name, &len, &line) == 1 && line == 1 && len == 3);
	CHECK_STR(name, "a\nb");
	CHECK(hs_name_list_next(l, &name, &len, &line) == 1 && line == 3);
	CHECK_STR(name, "c");
	CHECK(hs_name_list_next(l, &name, &len, &line) == 0);
	hs_name_list_free(l);
	close(fd);
	fd = pipe_of("a\0b\nc\n", 6);
	CHECK(hs_name_list_new(fd, '\n', &l) == 0);
	CHECK(hs_name_list_next(l, &name, &len, &line) == -EILSEQ && line == 1);
	CHECK(hs_name_list_next(l, &name, &len, &line) == 1 && line == 2);
	CHECK_STR(name, "c");
	hs_name_list_free(l);
	close(fd);
}

#define LLVMFuzzerTestOneInput fuzz_names
#include "../fuzz/fuzz-names.c"
#undef LLVMFuzzerTestOneInput

TEST(names_fuzz_corpus_replays)
{
	CHECK(replay("names", fuzz_names) > 0);
}

int main(void)
{
	return RUN_TESTS(walk_regular_files_only, walk_follow_symlinks, walk_hard_links_once,
			 walk_threads_same_set, walk_stops_on_callback_error, walk_operands,
			 walk_survives_vanishing_files, walk_one_filesystem, walk_without_d_type,
			 walk_refuses_directory_swapped_for_symlink,
			 walk_refuses_swapped_directory_without_openat2,
			 walk_follow_never_reaches_pseudo_fs, walk_each_file_once_across_operands,
			 walk_tidies_operands, pseudo_fs_named, profile_entries, profile_malformed_part_way,
			 profile_other_page_sizes, profile_selected_before_opened,
			 profile_entries_replaced_never_opened, profile_entries_renumbered_device,
			 filters_leave_out_files_and_trees_silently, walk_names_takes_them_one_at_a_time,
			 name_lists_are_streamed_from_a_descriptor, names_fuzz_corpus_replays);
}
