/*
 * readjob - a job that reads known pages of files in every way a program
 * can, for testing `hotset record` backends (ptrace and bpf alike):
 *
 *   readjob prepare DIR       create the input files in DIR (run this
 *                             before recording: a file the job creates is
 *                             its output, not its input); idempotent
 *   readjob SCENARIO DIR      run SCENARIO over DIR's files, then print on
 *                             stdout what a profile of this run must say
 *                             (READJOB_SEED=N: the pseudo-random choices of
 *                             the traced scenarios; flood: see s_flood)
 *   readjob list              print the scenario names ("all" runs every
 *                             scenario but "interrupt", one after another)
 *
 * The expectation lines, one per file (the path is last: it may hold
 * spaces):
 *
 *   exact   INO FLAGS RANGES PATH   the profile lists this file (by path and
 *                                   inode) with exactly these pages
 *   atleast INO FLAGS RANGES PATH   ... with at least these pages (mapped
 *                                   files: the kernel maps neighbours too)
 *   output  INO -     -      PATH   the file is an output (created or
 *                                   truncated by the job), not an input
 *   none    -   -     -      PATH   nothing under PATH (a prefix) may be
 *                                   listed as an input
 *   trace   -   -     RANGE  PATH   with a trace, the next access to the
 *                                   files of these lines is pages RANGE of
 *                                   PATH (see "traces" below)
 *
 * FLAGS are profile flag letters the entry must have (r read-like, m mapped,
 * d O_DIRECT, w written); RANGES are page ranges, sorted and merged
 * ("0-1,4"), or "-" for none. A path may appear on two lines with two
 * inodes (a file replaced by rename in mid-run is two files). Every read is
 * page-aligned and readahead is off (POSIX_FADV_RANDOM), so that the pages
 * a read asks for are exactly the pages it reads; readjob never relies on
 * what is or is not cached.
 *
 * The scenarios read through read, pread, readv, preadv, preadv2,
 * sendfile, splice, copy_file_range (as a source), mmap, O_DIRECT, dup'ed
 * fds, fds inherited across fork and across exec (of itself), a thread,
 * many threads (opening, reading and exiting while others go on; fds
 * handed from a thread that exits to another; a pool that forks; a fork
 * or an exec while a thread closes and reopens a file; an exec while
 * many threads close), a
 * file replaced by rename, an inode number reused by a new file, files
 * that are also written, created or truncated, an empty file, a read that
 * runs past the end of a file, and places that are never part of a
 * working set (/proc, /sys, /dev, pipes, sockets, memfd). The traced
 * scenarios (cyclic, random, strided, mapped, interleave, forked, reread) read in
 * pieces of any size and print the trace a --trace profile must hold too.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

static long ps;			/* page size */
static char dir[PATH_MAX];
static FILE *expect_out;	/* expectations are collected here, printed at the end */

static _Noreturn void die(const char *fmt, ...)
{
	va_list ap;
	int e = errno;

	va_start(ap, fmt);
	fprintf(stderr, "readjob: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, ": %s\n", strerror(e));
	va_end(ap);
	exit(1);
}

static const char *path_of(const char *name)
{
	static __thread char bufs[4][PATH_MAX + 64];	/* threads open files at once */
	static __thread int next;
	char *b = bufs[next++ % 4];

	snprintf(b, PATH_MAX + 64, "%s/%s", dir, name);
	return b;
}

/* Open DIR/name, readahead off. */
static int open_in(const char *name, int flags)
{
	int fd = open(path_of(name), flags | O_CLOEXEC, 0644);

	if (fd < 0)
		die("open %s", path_of(name));
	posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
	return fd;
}

static unsigned long long ino_of(const char *name)
{
	struct stat st;

	if (stat(path_of(name), &st) < 0)
		die("stat %s", path_of(name));
	return (unsigned long long)st.st_ino;
}

static void expect(const char *match, unsigned long long ino, const char *flags,
		   const char *ranges, const char *name)
{
	if (ino)
		fprintf(expect_out, "%s %llu %s %s %s\n", match, ino, flags, ranges, path_of(name));
	else
		fprintf(expect_out, "%s - %s %s %s\n", match, flags, ranges, path_of(name));
}

static char *page_buf(long pages)
{
	void *p;

	if (posix_memalign(&p, (size_t)ps, (size_t)(pages * ps)))
		die("posix_memalign");
	return p;
}

/* Read exactly pages [first, first+n) of fd with pread. */
static void read_pages(int fd, long first, long n)
{
	char *buf = page_buf(n);

	if (pread(fd, buf, (size_t)(n * ps), first * ps) < 0)
		die("pread");
	free(buf);
}

/* ---- prepare: the input files ------------------------------------------------ */

/* The files the threaded scenarios read: threads/0 .. threads/63, 16 pages each. */
#define NTFILES 64
#define TFILE_PAGES 16

static const char *tfile_name(int i)
{
	static __thread char name[32];

	snprintf(name, sizeof(name), "threads/%d", i);
	return name;
}

/* A file of `pages` pages plus `tail` bytes, each page filled with its number. */
static void make_file(const char *name, long pages, long tail)
{
	int fd = open(path_of(name), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	char *buf = page_buf(1);

	if (fd < 0)
		die("create %s", path_of(name));
	for (long p = 0; p < pages; p++) {
		memset(buf, 'a' + (int)(p % 26), (size_t)ps);
		if (write(fd, buf, (size_t)ps) != ps)
			die("write %s", path_of(name));
	}
	if (tail && write(fd, buf, (size_t)tail) != tail)
		die("write %s", path_of(name));
	if (fsync(fd) < 0 || close(fd) < 0)
		die("close %s", path_of(name));
	free(buf);
}

static void prepare_traced(void);

static const char *const inputs[] = {
	"read", "pread", "readv", "preadv", "preadv2", "sendfile", "splice", "copy", "mmap",
	"direct", "dup", "fork", "thread", "exec-a", "exec-b", "rename", "rename.next",
	"written", "trunc", "retrunc", "small", "eof", "reuse", "interrupt",
};

static void prepare(void)
{
	char sub[PATH_MAX + 64];

	for (size_t i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++)
		make_file(inputs[i], 10, 0);
	make_file("eof", 2, ps / 2);	/* 2.5 pages */
	make_file("empty", 0, 0);
	unlink(path_of("created"));
	unlink(path_of("copy.out"));
	unlink(path_of("reuse.new"));
	unlink(path_of("interrupt.ready"));
	snprintf(sub, sizeof(sub), "%s/with space", dir);
	if (mkdir(sub, 0755) < 0 && errno != EEXIST)
		die("mkdir %s", sub);
	make_file("with space/file", 4, 0);
	snprintf(sub, sizeof(sub), "%s/threads", dir);
	if (mkdir(sub, 0755) < 0 && errno != EEXIST)
		die("mkdir %s", sub);
	for (int i = 0; i < NTFILES; i++)
		make_file(tfile_name(i), TFILE_PAGES, 0);
	prepare_traced();
}

/* ---- scenarios ---------------------------------------------------------------- */

static void s_read(void)
{
	int fd = open_in("read", O_RDONLY);
	char *buf = page_buf(2);

	if (read(fd, buf, (size_t)(2 * ps)) != 2 * ps ||
	    lseek(fd, 4 * ps, SEEK_SET) < 0 || read(fd, buf, (size_t)ps) != ps)
		die("read");
	close(fd);
	free(buf);
	expect("exact", ino_of("read"), "r", "0-1,4", "read");

	/* a path with a space */
	fd = open_in("with space/file", O_RDONLY);
	read_pages(fd, 1, 2);
	close(fd);
	expect("exact", ino_of("with space/file"), "r", "1-2", "with space/file");
}

static void s_pread(void)
{
	int fd = open_in("pread", O_RDONLY);

	read_pages(fd, 3, 1);
	read_pages(fd, 7, 2);
	close(fd);
	expect("exact", ino_of("pread"), "r", "3,7-8", "pread");
}

static void s_readv(void)
{
	int fd = open_in("readv", O_RDONLY);
	char *buf = page_buf(2);
	struct iovec iov[2] = { { buf, (size_t)ps }, { buf + ps, (size_t)ps } };

	if (lseek(fd, 2 * ps, SEEK_SET) < 0 || readv(fd, iov, 2) != 2 * ps)
		die("readv");
	close(fd);
	free(buf);
	expect("exact", ino_of("readv"), "r", "2-3", "readv");
}

static void s_preadv(void)
{
	int fd = open_in("preadv", O_RDONLY);
	char *buf = page_buf(2);
	struct iovec iov[2] = { { buf, (size_t)ps }, { buf + ps, (size_t)ps } };

	if (preadv(fd, iov, 2, 5 * ps) != 2 * ps)
		die("preadv");
	close(fd);
	fd = open_in("preadv2", O_RDONLY);
	if (preadv2(fd, iov, 1, 1 * ps, 0) != ps)
		die("preadv2");
	/* offset -1: at the file position, which is 0 */
	if (preadv2(fd, iov, 1, -1, 0) != ps)
		die("preadv2");
	close(fd);
	free(buf);
	expect("exact", ino_of("preadv"), "r", "5-6", "preadv");
	expect("exact", ino_of("preadv2"), "r", "0-1", "preadv2");
}

static void s_sendfile(void)
{
	int fd = open_in("sendfile", O_RDONLY), null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	off_t off = 2 * ps;

	if (null < 0 || sendfile(null, fd, &off, (size_t)(2 * ps)) != 2 * ps)
		die("sendfile");
	close(fd);
	close(null);
	expect("exact", ino_of("sendfile"), "r", "2-3", "sendfile");
}

static void s_splice(void)
{
	int fd = open_in("splice", O_RDONLY), p[2];
	loff_t off = 6 * ps;
	char *buf = page_buf(1);

	if (pipe2(p, O_CLOEXEC) < 0 || splice(fd, &off, p[1], NULL, (size_t)ps, 0) != ps ||
	    read(p[0], buf, (size_t)ps) != ps)
		die("splice");
	close(p[0]);
	close(p[1]);
	close(fd);
	free(buf);
	expect("exact", ino_of("splice"), "r", "6", "splice");
}

static void s_copy(void)
{
	int in = open_in("copy", O_RDONLY), out = open_in("copy.out", O_WRONLY | O_CREAT | O_EXCL);
	loff_t off = 4 * ps;

	if (copy_file_range(in, &off, out, NULL, (size_t)(2 * ps), 0) != 2 * ps)
		die("copy_file_range");
	close(in);
	close(out);
	expect("exact", ino_of("copy"), "r", "4-5", "copy");
	expect("output", 0, "-", "-", "copy.out");
}

static void s_mmap(void)
{
	int fd = open_in("mmap", O_RDONLY);
	volatile char *m = mmap(NULL, (size_t)(10 * ps), PROT_READ, MAP_PRIVATE, fd, 0);
	char c;

	if (m == MAP_FAILED)
		die("mmap");
	madvise((void *)m, (size_t)(10 * ps), MADV_RANDOM);
	c = m[1 * ps];
	c += m[6 * ps + 100];
	(void)c;
	munmap((void *)m, (size_t)(10 * ps));
	close(fd);
	expect("atleast", ino_of("mmap"), "m", "1,6", "mmap");
}

static void s_direct(void)
{
	int fd = open(path_of("direct"), O_RDONLY | O_DIRECT | O_CLOEXEC);
	char *buf = page_buf(2);

	if (fd < 0 && errno == EINVAL)
		return;		/* no O_DIRECT on this filesystem: nothing to expect */
	if (fd < 0 || pread(fd, buf, (size_t)(2 * ps), 2 * ps) != 2 * ps)
		die("O_DIRECT read");
	close(fd);
	free(buf);
	expect("exact", ino_of("direct"), "d", "2-3", "direct");
}

static void s_dup(void)
{
	int fd = open_in("dup", O_RDONLY), d1 = dup(fd), d2 = fcntl(fd, F_DUPFD_CLOEXEC, 100);

	if (d1 < 0 || d2 < 0)
		die("dup");
	close(fd);
	read_pages(d1, 3, 1);
	close(d1);
	read_pages(d2, 5, 1);
	close(d2);
	expect("exact", ino_of("dup"), "r", "3,5", "dup");
}

static void s_fork(void)
{
	int fd = open_in("fork", O_RDONLY), status;
	pid_t pid;

	fflush(NULL);
	pid = fork();

	if (pid < 0)
		die("fork");
	if (pid == 0) {
		read_pages(fd, 2, 1);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) < 0 || status != 0)
		die("child");
	read_pages(fd, 0, 1);
	close(fd);
	expect("exact", ino_of("fork"), "r", "0,2", "fork");
}

static void *thread_main(void *arg)
{
	int fd = open_in("thread", O_RDONLY);

	(void)arg;
	read_pages(fd, 1, 2);
	close(fd);
	return NULL;
}

static void s_thread(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, thread_main, NULL) || pthread_join(t, NULL))
		die("thread");
	expect("exact", ino_of("thread"), "r", "1-2", "thread");
}

/* ---- many threads ----------------------------------------------------------------- */

/*
 * Pages of the threaded scenarios' files read so far, kept by the threads
 * under a lock: the expectation is printed once, when every scenario has
 * run ("all" runs several over the same files).
 */
static pthread_mutex_t tlock = PTHREAD_MUTEX_INITIALIZER;
static unsigned char tread[NTFILES][TFILE_PAGES];
static bool tused;

static void tnote(int file, long first, long n)
{
	pthread_mutex_lock(&tlock);
	for (long p = first; p < first + n; p++)
		tread[file][p] = 1;
	tused = true;
	pthread_mutex_unlock(&tlock);
}

/* Read pages [first, first+n) of fd, file number `file`, in one of three ways. */
static void tread_pages(int fd, int file, long first, long n, unsigned how)
{
	char *buf = page_buf(n);

	switch (how % 3) {
	case 0:		/* pread */
		if (pread(fd, buf, (size_t)(n * ps), first * ps) != n * ps)
			die("pread %s", tfile_name(file));
		break;
	case 1:		/* lseek, then read */
		if (lseek(fd, first * ps, SEEK_SET) < 0 || read(fd, buf, (size_t)(n * ps)) != n * ps)
			die("read %s", tfile_name(file));
		break;
	default:	/* read a page at a time from where the position is */
		if (lseek(fd, first * ps, SEEK_SET) < 0)
			die("lseek %s", tfile_name(file));
		for (long i = 0; i < n; i++)
			if (read(fd, buf, (size_t)ps) != ps)
				die("read %s", tfile_name(file));
		break;
	}
	free(buf);
	tnote(file, first, n);
}

/* Deterministic pseudo-random numbers, one stream per caller. */
static unsigned tnext(unsigned *seed)
{
	*seed = *seed * 1103515245u + 12345u;
	return *seed >> 8;
}

static void texpect(void)
{
	for (int i = 0; i < NTFILES; i++) {
		char ranges[TFILE_PAGES * 8] = "", *o = ranges;

		for (int p = 0; p < TFILE_PAGES; p++) {
			int q = p;

			if (!tread[i][p])
				continue;
			while (q + 1 < TFILE_PAGES && tread[i][q + 1])
				q++;
			o += sprintf(o, o == ranges ? "%d" : ",%d", p);
			if (q > p)
				o += sprintf(o, "-%d", q);
			p = q;
		}
		if (o > ranges)	/* a file not read must not be listed: the check says so */
			expect("exact", ino_of(tfile_name(i)), "r", ranges, tfile_name(i));
	}
}

/*
 * threads: 16 threads, thread k reading the files k, k+16, ...: some read
 * one file and exit while others go on opening, reading and closing; fd
 * numbers are reused by one thread right after another closed them.
 */
static void *threads_main(void *arg)
{
	int k = (int)(intptr_t)arg;
	unsigned seed = (unsigned)k * 7919u + 1;

	for (int f = k; f < NTFILES; f += 16 + (k % 3) * 16) {
		int fd = open_in(tfile_name(f), O_RDONLY);
		long first = tnext(&seed) % TFILE_PAGES, n = 1 + tnext(&seed) % (TFILE_PAGES - first);

		tread_pages(fd, f, first, n, tnext(&seed));
		if (tnext(&seed) % 2)
			sched_yield();
		close(fd);
	}
	return NULL;
}

static void s_threads(void)
{
	pthread_t t[16];

	for (int k = 0; k < 16; k++)
		if (pthread_create(&t[k], NULL, threads_main, (void *)(intptr_t)k))
			die("pthread_create");
	for (int k = 0; k < 16; k++)
		pthread_join(t[k], NULL);
}

/*
 * handoff: a thread opens files and reads their first pages, then exits;
 * another, started after it is gone, reads on from where it stopped and
 * closes them.
 */
static int handoff_fds[8];

static void *handoff_open(void *arg)
{
	(void)arg;
	for (int i = 0; i < 8; i++) {
		handoff_fds[i] = open_in(tfile_name(i), O_RDONLY);
		tread_pages(handoff_fds[i], i, 0, 2, 2);	/* the position ends at page 2 */
	}
	return NULL;
}

static void *handoff_finish(void *arg)
{
	char *buf = page_buf(3);

	(void)arg;
	for (int i = 0; i < 8; i++) {
		if (read(handoff_fds[i], buf, (size_t)(3 * ps)) != 3 * ps)
			die("read %s", tfile_name(i));
		tnote(i, 2, 3);
		close(handoff_fds[i]);
	}
	free(buf);
	return NULL;
}

static void s_handoff(void)
{
	pthread_t a, b;

	if (pthread_create(&a, NULL, handoff_open, NULL) || pthread_join(a, NULL) ||
	    pthread_create(&b, NULL, handoff_finish, NULL) || pthread_join(b, NULL))
		die("thread");
}

/*
 * pool: 4 workers take 256 jobs (a file and pages to read) from a queue;
 * each job may start a short-lived helper thread that reads too; the main
 * thread forks children meanwhile, each reading through an fd it inherits.
 */
static pthread_mutex_t qlock = PTHREAD_MUTEX_INITIALIZER;
static int qnext;

struct tjob {
	int file;
	long first, n;
	unsigned how;
};

static void *pool_helper(void *arg)
{
	struct tjob *j = arg;
	int fd = open_in(tfile_name(j->file), O_RDONLY);

	tread_pages(fd, j->file, j->first, j->n, j->how);
	close(fd);
	return NULL;
}

static void *pool_worker(void *arg)
{
	unsigned seed = (unsigned)(intptr_t)arg * 104729u + 3;

	for (;;) {
		struct tjob j;
		pthread_t h;
		int q, fd;

		pthread_mutex_lock(&qlock);
		q = qnext++;
		pthread_mutex_unlock(&qlock);
		if (q >= 256)
			return NULL;
		j.file = (int)(tnext(&seed) % NTFILES);
		j.first = tnext(&seed) % TFILE_PAGES;
		j.n = 1 + tnext(&seed) % (TFILE_PAGES - j.first);
		j.how = tnext(&seed);
		if (q % 16 == 0) {
			if (pthread_create(&h, NULL, pool_helper, &j) || pthread_join(h, NULL))
				die("pthread_create");
			continue;
		}
		fd = open_in(tfile_name(j.file), O_RDONLY);
		tread_pages(fd, j.file, j.first, j.n, j.how);
		close(fd);
	}
}

static void s_pool(void)
{
	static char buf[65536];
	pthread_t w[4];

	qnext = 0;
	for (int k = 0; k < 4; k++)
		if (pthread_create(&w[k], NULL, pool_worker, (void *)(intptr_t)k))
			die("pthread_create");
	for (int c = 0; c < 8; c++) {
		int file = NTFILES - 1 - c, fd = open_in(tfile_name(file), O_RDONLY), status;
		pid_t pid = fork();

		if (pid < 0)
			die("fork");
		if (pid == 0)	/* no malloc here: other threads may hold its lock */
			_exit(pread(fd, buf, (size_t)ps, 3 * ps) == ps ? 0 : 1);
		if (waitpid(pid, &status, 0) < 0 || status != 0)
			die("child");
		tnote(file, 3, 1);
		close(fd);
	}
	for (int k = 0; k < 4; k++)
		pthread_join(w[k], NULL);
}

/*
 * seekback: seek to page 8, read to 12, seek back to 2 and read to 12
 * again, the fd left open for the exit to close: once alone, once with
 * an idle thread sharing the fds.
 */
static int idle_pipe[2] = { -1, -1 };

static void *idle_main(void *arg)
{
	char c;

	(void)arg;
	return read(idle_pipe[0], &c, 1) < 0 ? NULL : NULL;	/* until the process exits */
}

/* Start a thread that shares the fds and does nothing (once). */
static void start_idle_thread(void)
{
	pthread_t t;

	if (idle_pipe[0] >= 0)
		return;
	if (pipe2(idle_pipe, O_CLOEXEC) || pthread_create(&t, NULL, idle_main, NULL))
		die("idle thread");
	pthread_detach(t);
}

static void seek_back(int file)
{
	int fd = open_in(tfile_name(file), O_RDONLY);

	tread_pages(fd, file, 8, 4, 1);
	tread_pages(fd, file, 2, 10, 1);	/* ends where the seek back began */
}

static void s_seekback(void)
{
	seek_back(56);
	start_idle_thread();
	seek_back(57);
}

/*
 * reopen: with the fds shared, read pages 4-7 of a file and close it,
 * then open it again (the same fd number) and read pages 0-7, to the
 * position the close saw; the exit closes it.
 */
static void s_reopen(void)
{
	int fd;

	start_idle_thread();
	fd = open_in(tfile_name(58), O_RDONLY);
	tread_pages(fd, 58, 4, 4, 1);
	close(fd);
	if (open_in(tfile_name(58), O_RDONLY) != fd)
		die("reopen: another fd");
	tread_pages(fd, 58, 0, 8, 2);
}

/*
 * dupclose: a thread duplicates an fd (dup, F_DUPFD, dup3 in turn) while
 * another closes it, then reads two pages through the copy if it got one.
 */
static pthread_barrier_t dc_barrier;
static int dc_fd;

static void *dc_close(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&dc_barrier);
	close(dc_fd);
	return NULL;
}

static void s_dupclose(void)
{
	for (int i = 0; i < 30; i++) {
		pthread_t t;
		int copy;

		dc_fd = open_in(tfile_name(59), O_RDONLY);
		tread_pages(dc_fd, 59, 4, 2, 1);
		if (pthread_barrier_init(&dc_barrier, NULL, 2) ||
		    pthread_create(&t, NULL, dc_close, NULL))
			die("thread");
		pthread_barrier_wait(&dc_barrier);
		copy = i % 3 == 0 ? dup(dc_fd) : i % 3 == 1 ? fcntl(dc_fd, F_DUPFD, 100) :
		       dup3(dc_fd, 101, 0);
		pthread_join(t, NULL);
		pthread_barrier_destroy(&dc_barrier);
		if (copy < 0)
			continue;	/* the close came first */
		tread_pages(copy, 59, 6, 2, 1);
		close(copy);
	}
}

/*
 * unshare: a thread takes a copy of the fds (unshare(CLONE_FILES)), reads
 * on through one and closes it; the original fd, the same description,
 * reads on and is closed after.
 */
static int us_fd;

static void read_on(int fd, int file, long first, long n)
{
	char *buf = page_buf(n);

	if (read(fd, buf, (size_t)(n * ps)) != n * ps)
		die("read %s", tfile_name(file));
	free(buf);
	tnote(file, first, n);
}

static void *unshare_main(void *arg)
{
	(void)arg;
	if (unshare(CLONE_FILES))
		die("unshare");
	read_on(us_fd, 55, 4, 2);
	close(us_fd);
	return NULL;
}

static void s_unshare(void)
{
	pthread_t t;

	us_fd = open_in(tfile_name(55), O_RDONLY);
	tread_pages(us_fd, 55, 2, 2, 1);
	if (pthread_create(&t, NULL, unshare_main, NULL) || pthread_join(t, NULL))
		die("thread");
	read_on(us_fd, 55, 6, 2);
	close(us_fd);
}

/*
 * reopenexec: in a child, a thread reads pages 8-11 of a file, closes it
 * and blocks (in a call that does not stop the tracer); the main thread
 * opens the file again (the same fd number), reads pages 0-11, to the
 * position the close saw, and execs: the exec closes it (O_CLOEXEC).
 */
static int roe_pipe[2], roe_fd;

static void *roe_thread(void *arg)
{
	char c;

	(void)arg;
	roe_fd = open_in(tfile_name(54), O_RDONLY);
	tread_pages(roe_fd, 54, 8, 4, 1);
	close(roe_fd);
	if (write(roe_pipe[1], "c", 1) != 1)
		die("write");
	return read(idle_pipe[0], &c, 1) < 0 ? NULL : NULL;	/* blocked until the exec */
}

static void s_reopenexec(void)
{
	pid_t pid;
	int status;

	if ((pid = fork()) < 0)
		die("fork");
	if (pid == 0) {
		pthread_t t;
		char c;

		if (pipe2(roe_pipe, O_CLOEXEC) || pipe2(idle_pipe, O_CLOEXEC) ||
		    pthread_create(&t, NULL, roe_thread, NULL) || read(roe_pipe[0], &c, 1) != 1)
			_exit(1);
		if (open_in(tfile_name(54), O_RDONLY) != roe_fd)
			_exit(2);
		read_on(roe_fd, 54, 0, 12);	/* from 0: no call that stops */
		execl("/bin/true", "true", (char *)NULL);
		_exit(3);
	}
	if (waitpid(pid, &status, 0) < 0 || status != 0)
		die("reopenexec: child status %d", status);
	tnote(54, 0, 12);
}

/*
 * reopenbusy: reopenexec with the closing thread kept running after its
 * close, computing (no system call) until the exec ends it: nothing but
 * a stop of that thread shows that its close has run. Then the same with
 * exit_group instead of the exec, on another file.
 */
static atomic_int rob_state;
static int rob_file;

static void *rob_thread(void *arg)
{
	(void)arg;
	roe_fd = open_in(tfile_name(rob_file), O_RDONLY);
	tread_pages(roe_fd, rob_file, 8, 4, 1);
	close(roe_fd);
	atomic_store(&rob_state, 1);
	for (;;)
		atomic_fetch_add(&rob_state, 2);	/* running, not in a call */
	return NULL;
}

static void s_reopenbusy(void)
{
	for (int how = 0; how < 2; how++) {
		pid_t pid;
		int status;

		rob_file = 52 - how;
		if ((pid = fork()) < 0)
			die("fork");
		if (pid == 0) {
			pthread_t t;

			atomic_store(&rob_state, 0);
			if (pthread_create(&t, NULL, rob_thread, NULL))
				_exit(1);
			while (atomic_load(&rob_state) == 0)
				;
			if (open_in(tfile_name(rob_file), O_RDONLY) != roe_fd)
				_exit(2);
			read_on(roe_fd, rob_file, 0, 12);	/* from 0: no call that stops */
			if (how == 1)
				_exit(0);
			execl("/bin/true", "true", (char *)NULL);
			_exit(3);
		}
		if (waitpid(pid, &status, 0) < 0 || status != 0)
			die("reopenbusy: child status %d", status);
		tnote(rob_file, 0, 12);
	}
}

/*
 * execstorm: in each of several children, eight threads open a file each,
 * read pages 4-7 (lseek, read), close it and open it again, one of every
 * two after computing for a while (no system call), half of them exiting
 * after a few rounds; the main thread opens, reads and closes a file too,
 * then execs while they go on. The exec may come while any of them is
 * closing: no look at the table may wait for ever, nor leave the job
 * stopped, nor take a description for another (pages 0-3 are never read).
 */
#define ES_THREADS 8
static atomic_int es_rounds[ES_THREADS];

static void *es_thread(void *arg)
{
	int i = (int)(intptr_t)arg, file = 40 + i;
	char *buf = page_buf(4);

	for (int round = 0;; round++) {
		int fd = open_in(tfile_name(file), O_RDONLY);

		if (lseek(fd, 4 * ps, SEEK_SET) < 0 || read(fd, buf, (size_t)(4 * ps)) != 4 * ps)
			_exit(4);
		close(fd);
		atomic_fetch_add(&es_rounds[i], 1);
		if (i % 2)
			for (int k = 0; k < 20000 * (round % 5); k++)
				atomic_fetch_add(&es_rounds[i], 0);	/* running, not in a call */
		if (i >= ES_THREADS / 2 && round == i)
			return NULL;
	}
}

static void s_execstorm(void)
{
	for (int run = 0; run < 20; run++) {
		pid_t pid;
		int status;

		if ((pid = fork()) < 0)
			die("fork");
		if (pid == 0) {
			char *buf = page_buf(4);
			pthread_t t;
			int fd;

			for (int i = 0; i < ES_THREADS; i++) {
				atomic_store(&es_rounds[i], 0);
				if (pthread_create(&t, NULL, es_thread, (void *)(intptr_t)i))
					_exit(1);
			}
			for (int i = 0; i < ES_THREADS; i++)
				while (atomic_load(&es_rounds[i]) < 2)
					;
			fd = open_in(tfile_name(48), O_RDONLY);
			if (lseek(fd, 4 * ps, SEEK_SET) < 0 ||
			    read(fd, buf, (size_t)(4 * ps)) != 4 * ps)
				_exit(2);
			close(fd);
			execl("/bin/true", "true", (char *)NULL);
			_exit(3);
		}
		if (waitpid(pid, &status, 0) < 0 || status != 0)
			die("execstorm: child status %d", status);
	}
	for (int i = 0; i <= ES_THREADS; i++)
		tnote(40 + i, 4, 4);
}

/*
 * forkreopen: a thread reads pages 0-1 of a file and closes it, opens it
 * again (the same fd number) and reads pages 0-1 again, so that the fd
 * shows what the close saw; it goes on computing (no system call) while
 * the main thread forks. Then it seeks to page 8, reads pages 8-9 and
 * closes it; the child, which holds the description too, exits after.
 */
static atomic_int fr_state;
static int fr_pipe[2];

static void *fr_thread(void *arg)
{
	int fd = -1;

	(void)arg;
	for (int round = 0; round < 2; round++) {
		fd = open_in(tfile_name(53), O_RDONLY);
		read_on(fd, 53, 0, 2);
		if (round == 0)
			close(fd);
	}
	atomic_store(&fr_state, 1);
	while (atomic_load(&fr_state) != 2)
		;	/* running, not in a call, while the fork is followed */
	tread_pages(fd, 53, 8, 2, 1);
	if (write(fr_pipe[1], "c", 1) != 1)
		die("write");
	close(fd);
	return NULL;
}

static void s_forkreopen(void)
{
	pthread_t t;
	pid_t pid;
	int status;
	char c;

	atomic_store(&fr_state, 0);
	if (pipe2(fr_pipe, O_CLOEXEC) || pthread_create(&t, NULL, fr_thread, NULL))
		die("thread");
	while (atomic_load(&fr_state) != 1)
		;
	if ((pid = fork()) < 0)
		die("fork");
	if (pid == 0)	/* holds the thread's description until the thread is done */
		_exit(read(fr_pipe[0], &c, 1) == 1 ? 0 : 1);
	atomic_store(&fr_state, 2);
	if (pthread_join(t, NULL) || waitpid(pid, &status, 0) < 0 || status != 0)
		die("forkreopen: child status %d", status);
	close(fr_pipe[0]);
	close(fr_pipe[1]);
}

/* The exec'd image: read page 4 of the inherited fd, pages 0-1 of exec-b. */
static int exec_child(int fd)
{
	int b = open_in("exec-b", O_RDONLY);

	read_pages(fd, 4, 1);
	read_pages(b, 0, 2);
	return 0;
}

static void s_exec(void)
{
	int fd = open(path_of("exec-a"), O_RDONLY), status;	/* inherited across exec */
	char fdarg[16];
	pid_t pid;

	if (fd < 0)
		die("open %s", path_of("exec-a"));
	posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
	snprintf(fdarg, sizeof(fdarg), "%d", fd);
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		execl("/proc/self/exe", "readjob", "exec-child", dir, fdarg, (char *)NULL);
		die("exec /proc/self/exe");
	}
	if (waitpid(pid, &status, 0) < 0 || status != 0)
		die("exec child");
	close(fd);
	expect("exact", ino_of("exec-a"), "r", "4", "exec-a");
	expect("exact", ino_of("exec-b"), "r", "0-1", "exec-b");
}

/* Read pages 0-1 of "rename", replace it by rename, read pages 2-3 of the new one. */
static void s_rename(void)
{
	unsigned long long old_ino = ino_of("rename"), new_ino = ino_of("rename.next");
	int fd = open_in("rename", O_RDONLY);

	read_pages(fd, 0, 2);
	close(fd);
	if (rename(path_of("rename.next"), path_of("rename")) < 0)
		die("rename");
	fd = open_in("rename", O_RDONLY);
	read_pages(fd, 2, 2);
	close(fd);
	expect("exact", old_ino, "r", "0-1", "rename");
	expect("exact", new_ino, "r", "2-3", "rename");
}

/* Read "reuse", delete it, create a file (which may get its inode number). */
static void s_reuse(void)
{
	unsigned long long ino = ino_of("reuse");
	int fd = open_in("reuse", O_RDONLY);
	char *buf = page_buf(1);

	read_pages(fd, 0, 1);
	close(fd);
	if (unlink(path_of("reuse")) < 0)
		die("unlink");
	fd = open_in("reuse.new", O_RDWR | O_CREAT | O_EXCL);
	memset(buf, 'x', (size_t)ps);
	if (write(fd, buf, (size_t)ps) != ps || pread(fd, buf, (size_t)ps, 0) != ps)
		die("write reuse.new");
	close(fd);
	free(buf);
	expect("exact", ino, "r", "0", "reuse");
	expect("output", 0, "-", "-", "reuse.new");
}

/* Inputs the job also writes; files it creates or truncates are outputs. */
static void s_write(void)
{
	int fd = open_in("written", O_RDWR);
	char *buf = page_buf(1);

	read_pages(fd, 0, 1);
	memset(buf, 'w', (size_t)ps);
	if (pwrite(fd, buf, (size_t)ps, 3 * ps) != ps)
		die("pwrite");
	close(fd);
	expect("exact", ino_of("written"), "rw", "0", "written");

	fd = open_in("created", O_RDWR | O_CREAT | O_EXCL);
	for (int i = 0; i < 3; i++)
		if (write(fd, buf, (size_t)ps) != ps)
			die("write created");
	read_pages(fd, 1, 1);	/* reading back an output is not input */
	close(fd);
	expect("output", 0, "-", "-", "created");

	fd = open_in("trunc", O_RDWR | O_TRUNC);
	if (write(fd, buf, (size_t)ps) != ps)
		die("write trunc");
	read_pages(fd, 0, 1);
	close(fd);
	expect("output", 0, "-", "-", "trunc");

	/* read, then truncated and rewritten: what was read before is input */
	fd = open_in("retrunc", O_RDONLY);
	read_pages(fd, 2, 1);
	close(fd);
	fd = open_in("retrunc", O_RDWR | O_TRUNC);
	if (write(fd, buf, (size_t)ps) != ps)
		die("write retrunc");
	read_pages(fd, 0, 1);
	close(fd);
	expect("exact", ino_of("retrunc"), "rw", "2", "retrunc");
	free(buf);
}

/* Small sequential reads, a read past the end, an empty file. */
static void s_small(void)
{
	int fd = open_in("small", O_RDONLY);
	char buf[1000];
	long total = 0;

	while (total < 3 * ps) {
		ssize_t n = read(fd, buf, (size_t)(3 * ps - total) < sizeof(buf) ?
				 (size_t)(3 * ps - total) : sizeof(buf));

		if (n <= 0)
			die("read small");
		total += n;
	}
	close(fd);
	expect("exact", ino_of("small"), "r", "0-2", "small");

	fd = open_in("eof", O_RDONLY);	/* 2.5 pages, read as 4 */
	read_pages(fd, 0, 4);
	close(fd);
	expect("exact", ino_of("eof"), "r", "0-2", "eof");

	fd = open_in("empty", O_RDONLY);
	if (read(fd, buf, sizeof(buf)) != 0)
		die("read empty");
	close(fd);
	expect("exact", ino_of("empty"), "r", "-", "empty");
}

static void read_all(const char *path)
{
	char buf[4096];
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	close(fd);
}

/* Places that are never part of a working set. */
static void s_pseudo(void)
{
	int p[2], sv[2], mfd;
	char buf[4096] = "data";
	volatile char *m;

	read_all("/proc/self/status");
	read_all("/proc/self/maps");
	read_all("/sys/kernel/mm/transparent_hugepage/enabled");
	read_all("/sys/devices/system/cpu/online");
	mfd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	if (mfd >= 0) {
		if (read(mfd, buf, sizeof(buf)) < 0)
			die("read /dev/zero");
		m = mmap(NULL, (size_t)ps, PROT_READ, MAP_SHARED, mfd, 0);
		if (m != MAP_FAILED) {
			buf[0] = m[0];
			munmap((void *)m, (size_t)ps);
		}
		close(mfd);
	}
	if (pipe2(p, O_CLOEXEC) == 0) {
		if (write(p[1], buf, 10) != 10 || read(p[0], buf, 10) != 10)
			die("pipe");
		close(p[0]);
		close(p[1]);
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0) {
		if (write(sv[0], buf, 10) != 10 || read(sv[1], buf, 10) != 10)
			die("socketpair");
		close(sv[0]);
		close(sv[1]);
	}
	mfd = (int)syscall(SYS_memfd_create, "readjob", 0);
	if (mfd >= 0) {
		memset(buf, 'm', sizeof(buf));
		for (int i = 0; i < 4; i++)
			if (write(mfd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
				die("write memfd");
		if (pread(mfd, buf, sizeof(buf), 0) < 0)
			die("read memfd");
		m = mmap(NULL, (size_t)(4 * ps), PROT_READ, MAP_SHARED, mfd, 0);
		if (m != MAP_FAILED) {
			buf[0] = m[2 * ps];
			munmap((void *)m, (size_t)(4 * ps));
		}
		close(mfd);
	}
	/* anonymous shared memory is a shmem file too */
	m = mmap(NULL, (size_t)(2 * ps), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (m != MAP_FAILED) {
		m[0] = 1;
		buf[0] = m[ps];
		munmap((void *)m, (size_t)(2 * ps));
	}
	fprintf(expect_out, "none - - - /proc/\nnone - - - /sys/\nnone - - - /dev/\n"
		"none - - - /memfd:\n");
}

/*
 * Read pages 0-1, say so in DIR/interrupt.ready, then wait to be killed
 * (by SIGINT too: a shell starts background jobs with SIGINT ignored).
 */
static void s_interrupt(void)
{
	int fd = open_in("interrupt", O_RDONLY);

	signal(SIGINT, SIG_DFL);
	signal(SIGQUIT, SIG_DFL);
	read_pages(fd, 0, 2);
	expect("exact", ino_of("interrupt"), "r", "0-1", "interrupt");
	fflush(expect_out);
	close(open_in("interrupt.ready", O_WRONLY | O_CREAT));
	for (;;)
		pause();
}

/* ---- traces: every access, in order ------------------------------------------------ */

/*
 * The scenarios below read files of their own (trace/...) in patterns
 * whose every access both record backends see in order, and print what a
 * --trace profile must hold: the accesses to these files, in the trace's
 * canonical form (docs/profile.md: an access that starts on the last page
 * of the one before it, to the same file, or right after it, continues
 * it), as "trace - - FIRST-LAST PATH" lines in order, after an "exact"
 * line per file. Each access's pages are the pages its bytes fall in,
 * clipped to the file's size. They draw their offsets and sizes from the
 * seed READJOB_SEED (default 1), so that a test can run many.
 */
static const struct traced {
	const char *name;
	long pages, tail;	/* size: pages * page size + tail bytes */
} traced[] = {
	{ "trace/a", 50, 300 }, { "trace/b", 40, 0 }, { "trace/m", 320, 0 },
	{ "trace/big", 2000, 0 }, { "trace/flood", 256, 0 },
};
#define NTRACED (sizeof(traced) / sizeof(traced[0]))
enum { TA, TB, TM, TBIG, TFLOOD };

static unsigned char *traced_seen[NTRACED];	/* pages accessed, per file */
static struct taccess {
	int file;
	long first, last;
} *accesses;
static size_t naccesses, accesses_cap;
static unsigned trace_seed;

/* Create the traced files, unless they are there with their size (they are only read). */
static void prepare_traced(void)
{
	char sub[PATH_MAX + 64];
	struct stat st;

	snprintf(sub, sizeof(sub), "%s/trace", dir);
	if (mkdir(sub, 0755) < 0 && errno != EEXIST)
		die("mkdir %s", sub);
	for (size_t i = 0; i < NTRACED; i++)
		if (stat(path_of(traced[i].name), &st) < 0 ||
		    st.st_size != traced[i].pages * ps + traced[i].tail)
			make_file(traced[i].name, traced[i].pages, traced[i].tail);
	unlink(path_of("trace/ready"));
	unlink(path_of("trace/go"));
	unlink(path_of("trace/done"));
}

static long traced_size(int file)
{
	return traced[file].pages * ps + traced[file].tail;
}

/* Bytes [off, off + len) of a traced file were accessed (clipped to its size). */
static void access_bytes(int file, long off, long len)
{
	long size = traced_size(file), first, last;
	struct taccess *prev = naccesses ? &accesses[naccesses - 1] : NULL;

	if (off + len > size)
		len = size - off;
	if (len <= 0)
		return;
	first = off / ps;
	last = (off + len - 1) / ps;
	if (!traced_seen[file] && !(traced_seen[file] = calloc((size_t)traced[file].pages + 1, 1)))
		die("calloc");
	memset(traced_seen[file] + first, 1, (size_t)(last - first + 1));
	if (prev && prev->file == file && (first == prev->last || first == prev->last + 1)) {
		if (last > prev->last)
			prev->last = last;
		return;
	}
	if (naccesses == accesses_cap) {
		struct taccess *grown;

		accesses_cap = accesses_cap ? 2 * accesses_cap : 64;
		if (!(grown = realloc(accesses, accesses_cap * sizeof(*accesses))))
			die("realloc");
		accesses = grown;
	}
	accesses[naccesses++] = (struct taccess){ file, first, last };
}

static int open_traced(int file)
{
	return open_in(traced[file].name, O_RDONLY);
}

static long trand(long n)
{
	return (long)(tnext(&trace_seed) % (unsigned)n);
}

/* pread of len bytes at off. */
static void tpread(int fd, int file, long off, long len)
{
	char *buf = page_buf(len / ps + 1);

	if (pread(fd, buf, (size_t)len, off) < 0)
		die("pread %s", traced[file].name);
	free(buf);
	access_bytes(file, off, len);
}

/* read of len bytes from where the position is (pos, kept by the caller). */
static void tread_on(int fd, int file, long *pos, long len)
{
	char *buf = page_buf(len / ps + 1);
	ssize_t n = read(fd, buf, (size_t)len);

	if (n < 0)
		die("read %s", traced[file].name);
	free(buf);
	access_bytes(file, *pos, n);
	*pos += n;
}

static void tseek(int fd, int file, long *pos, long off)
{
	if (lseek(fd, off, SEEK_SET) != off)
		die("lseek %s", traced[file].name);
	*pos = off;
}

/* cyclic: a file read front to back, again and again, in pieces of any size. */
static void s_cyclic(void)
{
	int fd = open_traced(TA);
	long size = traced_size(TA), pos = 0;

	for (long pass = 0, passes = 2 + trand(3); pass < passes; pass++) {
		long piece = 1 + trand(3 * ps);

		if (trand(2)) {		/* read(2) from the start */
			tseek(fd, TA, &pos, 0);
			while (pos < size)
				tread_on(fd, TA, &pos, piece);
		} else {		/* pread(2) */
			for (long off = 0; off < size; off += piece)
				tpread(fd, TA, off, piece);
		}
	}
	close(fd);
}

/* random: pieces of two files at random, by pread, lseek and read, preadv. */
static void s_random(void)
{
	int fds[2] = { open_traced(TA), open_traced(TB) };
	long pos[2] = { 0, 0 };

	for (int i = 0, n = 20 + (int)trand(20); i < n; i++) {
		int k = (int)trand(2);
		long off = trand(traced_size(k)), len = 1 + trand(3 * ps);

		switch (trand(3)) {
		case 0:
			tpread(fds[k], k, off, len);
			break;
		case 1:
			tseek(fds[k], k, &pos[k], off);
			tread_on(fds[k], k, &pos[k], len);
			break;
		default: {
			char *buf = page_buf(len / ps + 1);
			struct iovec iov = { buf, (size_t)len };

			if (preadv(fds[k], &iov, 1, off) < 0)
				die("preadv");
			free(buf);
			access_bytes(k, off, len);
		}
		}
	}
	close(fds[0]);
	close(fds[1]);
}

/* strided: every s-th page, pass after pass, by pread or by lseek and read. */
static void s_strided(void)
{
	int fd = open_traced(TB);
	long size = traced_size(TB), pos = 0;

	for (int pass = 0; pass < 3; pass++) {
		long stride = (2 + trand(6)) * ps, len = 1 + trand(ps), start = trand(stride);

		for (long off = start; off < size; off += stride) {
			if (pass == 1) {
				tseek(fd, TB, &pos, off);
				tread_on(fd, TB, &pos, len);
			} else {
				tpread(fd, TB, off, len);
			}
		}
	}
	close(fd);
}

/*
 * mapped: a file mapped, not in the cache, and touched page after page
 * upwards, 16 pages apart at least (the kernel's fault-around maps only
 * cached pages, up to 16 around a fault: none here), then unmapped and
 * dropped from the cache; twice. The ptrace backend sees the pages when
 * the mapping goes, in page order; eBPF each fault: the same trace.
 */
static void s_mapped(void)
{
	long pages = traced[TM].pages;

	for (int pass = 0; pass < 2; pass++) {
		int fd = open_traced(TM);
		volatile char *m;
		char c = 0;

		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		m = mmap(NULL, (size_t)(pages * ps), PROT_READ, MAP_PRIVATE, fd, 0);
		if (m == MAP_FAILED)
			die("mmap");
		madvise((void *)m, (size_t)(pages * ps), MADV_RANDOM);
		for (long p = trand(16); p < pages; p += 16 + trand(24)) {
			c += m[p * ps + trand(ps)];
			access_bytes(TM, p * ps, 1);
		}
		(void)c;
		munmap((void *)m, (size_t)(pages * ps));
		close(fd);
	}
}

/*
 * interleave: a file read on through its position, between reads of
 * another at offsets: each piece is an access of its own.
 */
static void s_interleave(void)
{
	int a = open_traced(TA), b = open_traced(TB);
	long pos = 0;

	tseek(a, TA, &pos, trand(ps));
	for (int i = 0; i < 12 && pos < traced_size(TA); i++) {
		tread_on(a, TA, &pos, 1 + trand(2 * ps));
		tpread(b, TB, trand(traced_size(TB)), 1 + trand(ps));
	}
	close(a);
	close(b);
}

/*
 * forked: a process reads a piece of a file, starts a child that reads a
 * piece of another and waits for it, then reads on; a few times. What
 * the parent read before the fork comes before what the child reads.
 */
static void s_forked(void)
{
	int a = open_traced(TA), b = open_traced(TB);

	for (int i = 0; i < 6; i++) {
		long off = trand(traced_size(TA) - 2 * ps), boff = trand(traced_size(TB));
		int status;
		pid_t pid;

		tpread(a, TA, off, 1 + trand(ps));
		fflush(NULL);
		if ((pid = fork()) < 0)
			die("fork");
		if (pid == 0) {
			char buf[64];

			_exit(pread(b, buf, sizeof(buf), boff) < 0);
		}
		if (waitpid(pid, &status, 0) < 0 || status != 0)
			die("forked: child status %d", status);
		access_bytes(TB, boff, 64);
		tpread(a, TA, off + ps, 1 + trand(ps));
	}
	close(a);
	close(b);
}

/*
 * reread: 2,000 pages read three times over with pread, in pieces of
 * 100,000 bytes: three accesses of 2,000 pages, 6,000 page accesses.
 */
static void s_reread(void)
{
	int fd = open_traced(TBIG);

	for (int pass = 0; pass < 3; pass++)
		for (long off = 0; off < traced_size(TBIG); off += 100000)
			tpread(fd, TBIG, off, 100000);
	close(fd);
}

/* Write a line to the FIFO DIR/name (made by the caller): it waits for a reader. */
static void fifo_say(const char *name)
{
	FILE *f = fopen(path_of(name), "we");

	if (!f || fputs("ok\n", f) < 0 || fclose(f))
		die("%s", name);
}

/*
 * flood (not in "list" nor "all"): say so on the FIFO trace/ready, wait
 * for a line on the FIFO trace/go, read 400,000 random pieces of
 * trace/flood with pread, each an access of its own, more than the eBPF
 * backend's ring buffer holds, then say so on the FIFO trace/done. The
 * caller stops the recorder meanwhile: accesses are lost, and the profile
 * must say so.
 */
static void s_flood(void)
{
	int fd = open_traced(TFLOOD);
	char line[16], buf[64];
	FILE *go;

	fifo_say("trace/ready");
	if (!(go = fopen(path_of("trace/go"), "re")) || !fgets(line, sizeof(line), go))
		die("trace/go");
	fclose(go);
	for (long i = 0; i < 400000; i++)
		if (pread(fd, buf, sizeof(buf), trand(traced[TFLOOD].pages) * ps) < 0)
			die("pread");
	close(fd);
	fifo_say("trace/done");
}

/* The expectations of the traced files: their pages, then the trace. */
static void trace_expect(void)
{
	for (size_t i = 0; i < NTRACED; i++) {
		char ranges[16384] = "", *o = ranges;

		if (!traced_seen[i])
			continue;
		for (long p = 0; p <= traced[i].pages; p++) {
			long q = p;

			if (!traced_seen[i][p])
				continue;
			while (q + 1 <= traced[i].pages && traced_seen[i][q + 1])
				q++;
			if ((size_t)(o - ranges) > sizeof(ranges) - 32)
				die("trace_expect: too many ranges");
			o += sprintf(o, o == ranges ? "%ld" : ",%ld", p);
			if (q > p)
				o += sprintf(o, "-%ld", q);
			p = q;
		}
		expect("exact", ino_of(traced[i].name), i == TM ? "m" : "r", ranges, traced[i].name);
	}
	for (size_t i = 0; i < naccesses; i++) {
		char r[64];

		snprintf(r, sizeof(r), "%ld-%ld", accesses[i].first, accesses[i].last);
		expect("trace", 0, "-", r, traced[accesses[i].file].name);
	}
}

static const struct scenario {
	const char *name;
	void (*run)(void);
} scenarios[] = {
	{ "read", s_read }, { "pread", s_pread }, { "readv", s_readv }, { "preadv", s_preadv },
	{ "sendfile", s_sendfile }, { "splice", s_splice }, { "copy", s_copy },
	{ "mmap", s_mmap }, { "direct", s_direct }, { "dup", s_dup }, { "fork", s_fork },
	{ "thread", s_thread }, { "threads", s_threads }, { "handoff", s_handoff },
	{ "pool", s_pool }, { "seekback", s_seekback }, { "reopen", s_reopen },
	{ "dupclose", s_dupclose }, { "unshare", s_unshare }, { "reopenexec", s_reopenexec },
	{ "reopenbusy", s_reopenbusy }, { "execstorm", s_execstorm },
	{ "forkreopen", s_forkreopen },
	{ "exec", s_exec }, { "rename", s_rename }, { "reuse", s_reuse },
	{ "write", s_write }, { "small", s_small }, { "pseudo", s_pseudo },
	{ "cyclic", s_cyclic }, { "random", s_random }, { "strided", s_strided },
	{ "mapped", s_mapped }, { "interleave", s_interleave }, { "forked", s_forked },
	{ "reread", s_reread },
	{ "interrupt", s_interrupt },
};
#define NSCENARIOS (sizeof(scenarios) / sizeof(scenarios[0]))

int main(int argc, char **argv)
{
	ps = sysconf(_SC_PAGESIZE);
	expect_out = stdout;
	if (argc == 2 && !strcmp(argv[1], "list")) {
		for (size_t i = 0; i < NSCENARIOS; i++)
			printf("%s\n", scenarios[i].name);
		printf("all\n");
		return 0;
	}
	if (argc < 3) {
		fprintf(stderr, "usage: readjob prepare DIR | SCENARIO DIR | list\n");
		return 2;
	}
	if (!realpath(argv[2], dir))
		die("%s", argv[2]);
	if (!strcmp(argv[1], "prepare")) {
		prepare();
		return 0;
	}
	if (!strcmp(argv[1], "exec-child") && argc == 4)
		return exec_child(atoi(argv[3]));
	trace_seed = getenv("READJOB_SEED") ? (unsigned)strtoul(getenv("READJOB_SEED"), NULL, 10) : 1;
	if (!strcmp(argv[1], "flood")) {
		s_flood();
		return 0;
	}
	bool all = !strcmp(argv[1], "all"), ran = false;

	for (size_t i = 0; i < NSCENARIOS; i++) {
		if ((!all && strcmp(argv[1], scenarios[i].name)) ||
		    (all && scenarios[i].run == s_interrupt))
			continue;
		scenarios[i].run();
		ran = true;
	}
	if (!ran) {
		fprintf(stderr, "readjob: no scenario %s (readjob list)\n", argv[1]);
		return 2;
	}
	if (tused)
		texpect();
	trace_expect();
	return fflush(stdout) != 0;
}
