/*
 * targets-walk.c - walking trees into a stream of open regular files
 * (see targets.h for the rules).
 *
 * The tree walk reads directories with getdents64 into one buffer per
 * thread and keeps a shared stack of directories still to read, so memory
 * is bounded by the width of one path through the tree, not by its size.
 * The only sets that grow with the tree are those of files with more than
 * one hard link (to count them once) and, with -L or several operands, of
 * directories (to stop symlink loops, and to walk a tree named twice once)
 * and of all files (a symlink, or another operand, may lead to a file met
 * elsewhere). Several threads may walk at once: on a warm cache the cost
 * is all in syscalls, which run in parallel.
 *
 * Names to walk (operands, or a list of any length) are taken one at a
 * time by a thread that has no directory to read, so that directories
 * already queued go first and the stack stays small: operands once the
 * one before is walked to its end, a list's names by any idle thread.
 *
 * A queued directory is opened again later, by then maybe replaced by a
 * symlink to somewhere else (/proc, say). So it is opened relative to the
 * descriptor of the operand it is under, through no symlink unless -L, and only read if it
 * is still the directory (device and inode) that was queued. Files are
 * opened relative to their directory's descriptor.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kernel/procfs.h"
#include "base/safeopen.h"
#include "base/u64map.h"
#include "cache/targets-internal.h"

/* ---- a set of (dev, ino) for hard links and symlink loops -------------- */

/* Add st's file to set: 1 if it was new, 0 if there already, -ENOMEM. */
static int id_set_add(struct u64map *set, const struct stat *st)
{
	return u64map_add2(set, st->st_dev, st->st_ino, (void *)1, NULL);
}

/* ---- the tree walk -------------------------------------------------------- */

/*
 * Directories waiting to be read, shared by the walking threads. It is a
 * stack, so the walk stays depth-first-ish and the stack stays small: at
 * most the subdirectories of the directories on one path.
 */
/* An operand directory: those under it are opened relative to fd. */
struct walk_root {
	int fd;
	size_t skip;		/* its path's length with the '/' after it */
	unsigned refs;		/* queued jobs under it (the walk's lock) */
};

struct dir_job {
	char *path;	/* as the walk reached it, for messages and targets */
	struct walk_root *root;
	char *real;	/* with -L, under a symlink: where it really is (absolute,
			 * through no symlink, so that no lookup meets more than
			 * the kernel's 40), else NULL */
	dev_t dev;	/* what it was when queued: it is read only if */
	ino_t ino;	/* it is still that directory */
};

struct walk {
	const struct hs_target_opts *o;
	hs_target_fn fn;
	hs_target_warn_fn warn;
	void *ctx;
	int open_flags;
	bool several;		/* more than one operand: any file may come twice */
	bool track_dirs;	/* -L or several operands: each directory once */
	hs_target_next_fn next;	/* the operands */
	void *next_ctx;
	bool in_order;		/* each operand walked to its end before the next */
	pthread_mutex_t next_lock;	/* one thread at a time takes a name */

	pthread_mutex_t lock;	/* guards everything below */
	pthread_cond_t more;	/* a job was pushed, or the walk ended */
	struct dir_job *jobs;
	size_t njobs, jobs_cap;
	bool names_done;	/* next said the end (or failed) */
	unsigned busy;		/* threads reading a directory or a name */
	int rc;			/* first failure; stops every thread */
	struct u64map links;	/* files already seen (hard links, or all: see visit_file) */
	struct u64map dirs;	/* directories seen, if track_dirs */
	struct fs_cache fs;
	uint64_t index;
};

/* What one walking thread owns. */
struct walker {
	struct walk *w;
	char *path;		/* the path being looked at */
	size_t cap;
	char *dents;		/* getdents64 buffer */
	struct fs_cache fs;	/* for operands: a list's, one after another, without a lock */
	bool queued;		/* the operand was a directory, queued */
};

#define DENTS_SIZE (64 << 10)

static int path_set(struct walker *t, size_t at, const char *name)
{
	size_t n = strlen(name);

	if (hs_grow(&t->path, &t->cap, at + n + 2, 1))
		return -ENOMEM;
	memcpy(t->path + at, name, n + 1);
	return 0;
}

/* Append "/name" to the directory path of length at. */
static int path_join(struct walker *t, size_t at, const char *name)
{
	int rc;

	if (at > 0 && t->path[at - 1] == '/')
		return path_set(t, at, name);
	if ((rc = path_set(t, at + 1, name)))
		return rc;
	t->path[at] = '/';
	return 0;
}

static void warn(struct walker *t, int errnum, const char *what)
{
	if (t->w->warn)
		t->w->warn(t->w->ctx, t->path, errnum, what);
}

/* Record st's file in set under the walk's lock: 1 new, 0 seen, -ENOMEM. */
static int seen_once(struct walk *w, struct u64map *set, const struct stat *st)
{
	int rc;

	pthread_mutex_lock(&w->lock);
	rc = id_set_add(set, st);
	pthread_mutex_unlock(&w->lock);
	return rc;
}

static const char *walk_pseudo_fs(struct walk *w, int fd, dev_t dev)
{
	const char *name;

	pthread_mutex_lock(&w->lock);
	name = targets_pseudo_fs(&w->fs, fd, dev);
	pthread_mutex_unlock(&w->lock);
	return name;
}

/*
 * Is name in dirfd on a pseudo-filesystem? 1 yes, 0 no, -1 when it cannot
 * be looked at. It is looked at through an O_PATH descriptor, which runs
 * none of the file's own open code (some files on debugfs or tracefs act
 * when opened), and the device is taken from that descriptor rather than
 * from an earlier stat, so that a swap in between cannot put a wrong
 * answer in the cache.
 */
static int pseudo_fs_at(struct walk *w, int dirfd, const char *name, bool follow)
{
	struct stat st;
	int fd = openat(dirfd, name, O_PATH | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW)), rc = -1;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) == 0)
		rc = walk_pseudo_fs(w, fd, st.st_dev) != NULL;
	close(fd);
	return rc;
}

/* Hand an open regular file (fd, st) to the callback; closes fd. */
static int visit_file(struct walker *t, int fd, const struct stat *st)
{
	const uint64_t ps = hs_page_size();
	struct walk *w = t->w;
	struct hs_target tg = { 0 };
	int rc;

	if (w->o->max_size && (uint64_t)st->st_size > w->o->max_size) {
		close(fd);
		return 0;	/* -m: left out silently */
	}
	/*
	 * Hard links, and with -L or several operands any file (a symlink, or
	 * an operand inside another, may lead to a file the walk also meets
	 * by its own name): each file once. One operand without -L keeps the
	 * set small: a file with one link is met once.
	 */
	if ((st->st_nlink > 1 || w->o->follow_symlinks || w->several) &&
	    (rc = seen_once(w, &w->links, st)) <= 0) {
		close(fd);
		return rc;	/* 0: already counted */
	}
	tg.path = t->path;
	tg.path_len = strlen(t->path);
	tg.fd = fd;
	tg.st = st;
	tg.pages = ((uint64_t)st->st_size + ps - 1) / ps;
	tg.index = __atomic_fetch_add(&w->index, 1, __ATOMIC_RELAXED);
	rc = w->fn(w->ctx, &tg);
	close(fd);
	return rc;
}

/*
 * Open name in dirfd, a directory on device dir_dev, as a regular file and
 * visit it. Anything that turns out not to be a regular file is closed
 * unread; so is a file on a pseudo-filesystem, which only a symlink (-L)
 * or a bind mount can bring into a tree. pre is the stat of name when the
 * caller has one (symlinks, entries without d_type), NULL otherwise.
 */
static int open_file(struct walker *t, int dirfd, const char *name, dev_t dir_dev,
		     const struct stat *pre)
{
	struct walk *w = t->w;
	const bool follow = w->o->follow_symlinks;
	struct stat st;
	int fd;

	/* a file on another device: look at its filesystem before opening it */
	if (pre && pre->st_dev != dir_dev && pseudo_fs_at(w, dirfd, name, follow) == 1)
		return 0;	/* /proc, /sys...: never read, silently, like their directories */
	fd = openat(dirfd, name, w->open_flags | (follow ? 0 : O_NOFOLLOW));
	if (fd < 0) {
		if (errno == ENOENT)
			warn(t, 0, "vanished during the walk, skipped");
		else if (!(errno == ELOOP && !follow))	/* became a symlink: not followed */
			warn(t, errno, "cannot open");
		return 0;
	}
	if (fstat(fd, &st) < 0) {
		warn(t, errno, "cannot stat");
		close(fd);
		return 0;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return 0;
	}
	/* again on the open descriptor: the name may have changed meanwhile */
	if (st.st_dev != dir_dev && walk_pseudo_fs(w, fd, st.st_dev)) {
		close(fd);
		return 0;
	}
	return visit_file(t, fd, &st);
}

/* Queue directory path under root (really at real, if not NULL: taken over). */
static int push_job(struct walk *w, const char *path, char *real, const struct stat *st,
		    struct walk_root *root)
{
	char *copy = strdup(path);
	int rc = 0;

	if (!copy) {
		free(real);
		return -ENOMEM;
	}
	pthread_mutex_lock(&w->lock);
	rc = hs_grow(&w->jobs, &w->jobs_cap, w->njobs + 1, sizeof(*w->jobs));
	if (!rc) {
		w->jobs[w->njobs++] = (struct dir_job){ copy, root, real, st->st_dev, st->st_ino };
		root->refs++;
		pthread_cond_signal(&w->more);
	} else {
		free(copy);
		free(real);
	}
	pthread_mutex_unlock(&w->lock);
	return rc;
}

/*
 * Is the directory target dir itself, or one of its ancestors in the
 * filesystem (whatever path the walk took to dir)? Then a symlink in dir
 * to target is a loop.
 */
static bool is_real_ancestor(int dir, const struct stat *target)
{
	struct stat st, up_st;
	int fd = openat(dir, ".", O_PATH | O_DIRECTORY | O_CLOEXEC), up;
	bool found = false;

	while (fd >= 0 && fstat(fd, &st) == 0) {
		if (st.st_dev == target->st_dev && st.st_ino == target->st_ino) {
			found = true;
			break;
		}
		up = openat(fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		close(fd);
		fd = up;
		if (fd >= 0 && fstat(fd, &up_st) == 0 && up_st.st_dev == st.st_dev &&
		    up_st.st_ino == st.st_ino)
			break;	/* the root: its parent is itself */
	}
	if (fd >= 0)
		close(fd);
	return found;
}

/*
 * Where the directory name in dirfd (a symlink followed) really is: an
 * absolute path through no symlink, from /proc/self/fd, or NULL.
 */
static char *real_path_at(int dirfd, const char *name, const struct stat *st)
{
	char link[64], buf[PATH_MAX];
	struct stat now;
	char *real = NULL;
	ssize_t n;
	int fd = openat(dirfd, name, O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, buf, sizeof(buf));
	if (n > 0 && (size_t)n < sizeof(buf) && buf[0] == '/' && fstat(fd, &now) == 0 &&
	    now.st_dev == st->st_dev && now.st_ino == st->st_ino)
		real = strndup(buf, (size_t)n);
	close(fd);
	return real;
}

/*
 * A subdirectory found in the directory job is reading: queue it, if the
 * options allow. Its path is in t->path; link: it was reached through a
 * symlink (-L).
 */
static int found_dir(struct walker *t, int dirfd, const char *name, const struct dir_job *job,
		     bool follow, bool link)
{
	const dev_t parent_dev = job->dev;
	struct walk *w = t->w;
	struct stat st;
	char *real = NULL;
	int rc;

	if (fstatat(dirfd, name, &st, follow ? 0 : AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno != ENOENT)
			warn(t, errno, "cannot stat");
		return 0;
	}
	if (!S_ISDIR(st.st_mode))
		return 0;
	if (st.st_dev != parent_dev) {
		if (w->o->one_filesystem)
			return 0;
		if (pseudo_fs_at(w, dirfd, name, follow) != 0)
			return 0;	/* /proc, /sys...: never read, silently */
	}
	/* whatever the walk met first: the directory's own path walks it */
	if (link && is_real_ancestor(dirfd, &st)) {
		warn(t, 0, "symlink loop, not followed");
		return 0;
	}
	if (w->track_dirs) {
		rc = seen_once(w, &w->dirs, &st);
		if (rc < 0)
			return rc;
		if (rc == 0)
			return 0;	/* met elsewhere (or under an earlier operand): walked */
	}
	if (link)
		real = real_path_at(dirfd, name, &st);
	else if (job->real && asprintf(&real, "%s/%s", job->real, name) < 0)
		return -ENOMEM;
	return push_job(w, t->path, real, &st, job->root);
}

/*
 * Open the queued directory job again, relative to the operand's
 * descriptor, so that what became of the operand's path or of the
 * directory's ancestors since does not matter. Without -L the walk went
 * through no symlink to get there, so none may be met now (hs_safe_openat); the
 * identity check in read_dir does the rest. Returns the descriptor or
 * -errno.
 */
static int reopen_dir(struct walk *w, const struct dir_job *job, size_t len)
{
	const char *rel = len > job->root->skip ? job->path + job->root->skip : ".";
	const bool no_symlinks = !w->o->follow_symlinks;
	const int base = job->real ? AT_FDCWD : job->root->fd;
	int prefix, fd;

	if (job->real)
		rel = job->real;
	if ((fd = hs_safe_prefix(base, &rel, no_symlinks, &prefix)) < 0)
		return fd;
	fd = hs_safe_openat(prefix, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC, no_symlinks);
	hs_safe_prefix_close(prefix, base);
	return fd;
}

/* Read one directory: visit its files, queue its subdirectories. */
static int read_dir(struct walker *t, const struct dir_job *job)
{
	struct walk *w = t->w;
	const bool follow = w->o->follow_symlinks;
	struct stat st;
	size_t base;
	int dirfd, rc = 0;
	long n;

	if ((rc = path_set(t, 0, job->path)))
		return rc;
	base = strlen(t->path);
	dirfd = reopen_dir(w, job, base);
	if (dirfd == -ENOENT)
		return 0;	/* gone: nothing left to count */
	if (dirfd == -ELOOP || dirfd == -ENOTDIR || dirfd == -EXDEV) {
		warn(t, 0, "directory replaced during the walk, skipped");
		return 0;
	}
	if (dirfd < 0) {
		warn(t, -dirfd, "cannot open directory");
		return 0;
	}
	if (fstat(dirfd, &st) < 0 || st.st_dev != job->dev || st.st_ino != job->ino) {
		warn(t, 0, "directory replaced during the walk, skipped");
		close(dirfd);
		return 0;
	}
	while (!rc && (n = syscall(SYS_getdents64, dirfd, t->dents, DENTS_SIZE)) > 0) {
		for (long off = 0; off < n && !rc; ) {
			struct linux_dirent64 *de = (void *)(t->dents + off);
			const char *name = de->d_name;
			unsigned char type = de->d_type;
			const struct stat *pre = NULL;	/* &st once stat'ed */
			bool link = type == DT_LNK;

			off += de->d_reclen;
			if (name[0] == '.' && (!name[1] || (name[1] == '.' && !name[2])))
				continue;
			if ((rc = path_join(t, base, name)))
				break;
			/* -i: by name, before any syscall (a directory is not even read) */
			if (w->o->nexclude && targets_name_filtered(w->o, t->path, true))
				continue;
			if (type == DT_UNKNOWN || (type == DT_LNK && follow)) {
				if (fstatat(dirfd, name, &st, follow ? 0 : AT_SYMLINK_NOFOLLOW) < 0) {
					if (errno != ENOENT)
						warn(t, errno, type == DT_LNK ? "broken symlink" : "cannot stat");
					continue;
				}
				if (type == DT_UNKNOWN && follow && S_ISDIR(st.st_mode)) {
					struct stat l;	/* the filesystem does not give types */

					link = fstatat(dirfd, name, &l, AT_SYMLINK_NOFOLLOW) == 0 &&
					       S_ISLNK(l.st_mode);
				}
				type = S_ISREG(st.st_mode) ? DT_REG : S_ISDIR(st.st_mode) ? DT_DIR : DT_UNKNOWN;
				pre = &st;
			}
			if (type == DT_REG && !(w->o->ninclude && targets_name_filtered(w->o, t->path, false)))
				rc = open_file(t, dirfd, name, job->dev, pre);
			else if (type == DT_DIR)
				rc = found_dir(t, dirfd, name, job, follow, link);
			/* FIFOs, sockets, devices and unfollowed symlinks: never opened */
		}
	}
	if (n < 0 && !rc) {
		t->path[base] = '\0';
		warn(t, errno, "cannot read directory");
	}
	close(dirfd);
	return rc;
}

/* Under the walk's lock: a job is done with its root. */
static void root_put(struct walk_root *root)
{
	if (--root->refs == 0) {
		close(root->fd);
		free(root);
	}
}

/*
 * One operand, in t->path: a file to visit, or a directory to queue (a
 * root of its own, which its jobs hold).
 */
static int walk_operand(struct walker *t)
{
	struct walk *w = t->w;
	struct walk_root *root;
	struct stat st;
	struct hs_safe_result found;
	const char *pseudo, *operand;
	size_t len;
	int fd, rc;

	hs_tidy_path(t->path, false);
	operand = t->path;
	len = strlen(operand);
	/* -i: a directory on the way, or the operand itself (named or not) */
	if (w->o->nexclude && hs_target_filtered(w->o, operand, true))
		return 0;
	/* symlinks named are followed; a FIFO or a device is never opened */
	fd = hs_safe_open(AT_FDCWD, operand, O_RDONLY, HS_SAFE_DIRS, NULL, &st, &found);
	if (fd < 0) {
		if (found.found == HS_SAFE_ERROR)
			warn(t, -fd, "cannot open");
		else if (found.found == HS_SAFE_SWAPPED)
			warn(t, 0, "replaced while it was opened, skipped");
		else
			warn(t, 0, "not a regular file or directory, skipped");
		return 0;
	}
	if ((pseudo = targets_pseudo_fs(&t->fs, fd, st.st_dev))) {
		char what[64];

		snprintf(what, sizeof(what), "on a %s filesystem, never read", pseudo);
		warn(t, 0, what);
		close(fd);
		return 0;
	}
	if (S_ISREG(st.st_mode)) {
		if (w->o->ninclude && hs_target_filtered(w->o, operand, false)) {
			close(fd);
			return 0;
		}
		return visit_file(t, fd, &st);
	}
	/* a tree named twice, or inside one walked already: walked once */
	if (w->track_dirs && (rc = seen_once(w, &w->dirs, &st)) <= 0) {
		close(fd);
		return rc;
	}
	/* kept open: the directories under it are opened relative to it */
	if (!(root = calloc(1, sizeof(*root)))) {
		close(fd);
		return -ENOMEM;
	}
	root->fd = fd;
	root->skip = len + (operand[len - 1] != '/');
	pthread_mutex_lock(&w->lock);
	root->refs = 1;	/* ours, until the job is queued */
	pthread_mutex_unlock(&w->lock);
	rc = push_job(w, operand, NULL, &st, root);
	pthread_mutex_lock(&w->lock);
	root_put(root);
	pthread_mutex_unlock(&w->lock);
	t->queued = true;
	return rc;
}

/* Take the next operand into t->path: 1, 0 at the end, or what next failed with. */
static int take_name(struct walker *t)
{
	struct walk *w = t->w;
	const char *name;
	int rc;

	pthread_mutex_lock(&w->next_lock);
	rc = w->next(w->next_ctx, &name);
	if (rc > 0 && (rc = path_set(t, 0, name)) == 0)
		rc = 1;
	pthread_mutex_unlock(&w->next_lock);
	return rc;
}

/*
 * The body of each walking thread: read queued directories, else take the
 * next operand, until neither is left and no thread can queue more.
 */
static void *walker_main(void *arg)
{
	struct walker *t = arg;
	struct walk *w = t->w;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		struct dir_job job;
		int rc;

#define CAN_TAKE_NAME (!w->names_done && (!w->in_order || !w->busy))
		while (!w->njobs && !CAN_TAKE_NAME && w->busy && !w->rc)
			pthread_cond_wait(&w->more, &w->lock);
		if (w->rc || (!w->njobs && !CAN_TAKE_NAME))
			break;	/* nothing queued, no names left, nobody can queue more */
#undef CAN_TAKE_NAME
		w->busy++;
		if (w->njobs) {
			job = w->jobs[--w->njobs];
			pthread_mutex_unlock(&w->lock);
			rc = read_dir(t, &job);
			free(job.path);
			free(job.real);
			pthread_mutex_lock(&w->lock);
			root_put(job.root);
		} else {
			int got;

			pthread_mutex_unlock(&w->lock);
			/*
			 * A list's names one after another, without the walk's
			 * lock, until one is a directory to walk (its jobs go
			 * first) or the walk stops.
			 */
			t->queued = false;
			do {
				got = take_name(t);
				rc = got > 0 ? walk_operand(t) : got;
			} while (got > 0 && !rc && !t->queued && !w->in_order &&
				 !__atomic_load_n(&w->rc, __ATOMIC_RELAXED));
			pthread_mutex_lock(&w->lock);
			if (got == 0)
				w->names_done = true;
		}
		w->busy--;
		if (rc && !w->rc)
			__atomic_store_n(&w->rc, rc, __ATOMIC_RELAXED);	/* read unlocked above */
		if (!w->busy || w->rc)
			pthread_cond_broadcast(&w->more);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

static int walk_names(hs_target_next_fn next, void *next_ctx, bool several, bool in_order,
		      const struct hs_target_opts *o, hs_target_fn fn, hs_target_warn_fn warn_fn,
		      void *ctx)
{
	struct walk w = { .o = o, .fn = fn, .warn = warn_fn, .ctx = ctx, .next = next,
			  .next_ctx = next_ctx, .several = several, .in_order = in_order };
	unsigned nthreads = o->threads ? o->threads : 1, started;
	struct walker *t = calloc(nthreads, sizeof(*t));
	pthread_t *tid = calloc(nthreads, sizeof(*tid));
	int rc = 0;

	if (!t || !tid) {
		free(t);
		free(tid);
		return -ENOMEM;
	}
	w.open_flags = targets_open_flags();
	w.track_dirs = o->follow_symlinks || w.several;
	pthread_mutex_init(&w.lock, NULL);
	pthread_mutex_init(&w.next_lock, NULL);
	pthread_cond_init(&w.more, NULL);
	for (unsigned i = 0; i < nthreads; i++) {
		t[i].w = &w;
		t[i].dents = malloc(DENTS_SIZE);
		if (!t[i].dents)
			rc = -ENOMEM;
	}
	if (!rc) {
		for (started = 1; started < nthreads; started++)
			if (pthread_create(&tid[started], NULL, walker_main, &t[started]))
				break;
		walker_main(&t[0]);
		for (unsigned k = 1; k < started; k++)
			pthread_join(tid[k], NULL);
		rc = w.rc;
	}
	/* jobs left by a walk stopped early */
	for (size_t i = 0; i < w.njobs; i++) {
		free(w.jobs[i].path);
		free(w.jobs[i].real);
		root_put(w.jobs[i].root);
	}
	for (unsigned i = 0; i < nthreads; i++) {
		free(t[i].path);
		free(t[i].dents);
	}
	free(t);
	free(tid);
	free(w.jobs);
	u64map_free(&w.links);
	u64map_free(&w.dirs);
	pthread_mutex_destroy(&w.lock);
	pthread_mutex_destroy(&w.next_lock);
	pthread_cond_destroy(&w.more);
	return rc;
}

int hs_targets_walk_names(hs_target_next_fn next, void *next_ctx, const struct hs_target_opts *o,
			  hs_target_fn fn, hs_target_warn_fn warn_fn, void *ctx)
{
	/* a list may name a file twice, or a file and a directory above it */
	return walk_names(next, next_ctx, true, false, o, fn, warn_fn, ctx);
}

struct name_array {
	const char *const *paths;
	size_t n, i;
};

static int next_in_array(void *ctx, const char **name)
{
	struct name_array *a = ctx;

	if (a->i == a->n)
		return 0;
	*name = a->paths[a->i++];
	return 1;
}

int hs_targets_walk(const char *const *paths, size_t npaths, const struct hs_target_opts *o,
		    hs_target_fn fn, hs_target_warn_fn warn_fn, void *ctx)
{
	struct name_array a = { paths, npaths, 0 };

	/*
	 * Operands one at a time, each walked to the end before the next, so
	 * that named files and trees come out in the order they were named.
	 */
	return walk_names(next_in_array, &a, npaths > 1, true, o, fn, warn_fn, ctx);
}
