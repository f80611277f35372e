/*
 * record-ptrace-fds.c - the job's file descriptors, for the ptrace backend:
 * which open file description each fd refers to, and where the stretch of
 * it being read started (see record-ptrace.h, position inference).
 *
 * Descriptors are learnt lazily: an fd the model does not know was opened
 * for reading by a call that did not stop the job, so its description
 * starts at position 0. Descriptions are shared as the kernel shares them:
 * by dup, by fork (the child's table is a copy pointing to the same
 * descriptions, so every fd of the parent gets one at that point) and by
 * threads (one table). The tables follow exec (close-on-exec fds are gone)
 * from the list in /proc/TID/fd.
 *
 * Sampling a position reads /proc/TID/fdinfo/FD through a handle kept open
 * per table and fd: a pread() of it is cheaper than an open/read/close. The
 * handle shows whatever the fd is at the time of reading, so it survives
 * the fd being closed and reused; it is reopened through another thread
 * when the one it was opened through is gone.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/kcmp.h>
#include <sys/ptrace.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "record/ptrace/record-ptrace.h"

#ifndef SYS_close_range
#define SYS_close_range 436
#endif

/* ---- descriptions and tables ------------------------------------------------------ */

struct pt_ofd *pt_ofd_new(int64_t start, int kind)
{
	struct pt_ofd *o = calloc(1, sizeof(*o));

	if (o) {
		o->refs = 1;
		o->start = start;
		o->kind = kind;
	}
	return o;
}

void pt_ofd_put(struct pt_ofd *ofd)
{
	if (ofd && --ofd->refs == 0)
		free(ofd);
}

/* fd slot s stops referring to its description. */
static void slot_clear(struct pt_fdslot *s)
{
	if (s->ofd) {
		s->ofd->slots--;
		pt_ofd_put(s->ofd);
		s->ofd = NULL;
	}
	s->closing = false;
}

/* May another task look at ofd's position while t runs (threads, or a fork's child)? */
bool pt_ofd_seen_elsewhere(const struct pt_task *t, const struct pt_ofd *ofd)
{
	return t->fds->users > 1 || ofd->slots > 1;
}

/*
 * t is let go into an lseek of ofd that others may see: until its exit, a
 * position seen elsewhere may be before the seek or after it.
 */
void pt_seek_begin(struct pt_task *t, struct pt_ofd *ofd)
{
	ofd->seeking++;
	ofd->refs++;
	t->seeking = ofd;
}

/* t's lseek is over; landed: at pos (else it failed, or is not known). */
void pt_seek_end(struct pt_task *t, bool landed, int64_t pos)
{
	struct pt_ofd *ofd = t->seeking;

	if (!ofd)
		return;
	if (landed)
		ofd->start = pos;
	ofd->seeking--;
	t->seeking = NULL;
	pt_ofd_put(ofd);
}

struct pt_fdtable *pt_fdtable_new(struct pt_tracer *tr)
{
	struct pt_fdtable *ft = calloc(1, sizeof(*ft));

	if (!ft) {
		tr->error = -ENOMEM;
		return NULL;
	}
	ft->users = 1;
	ft->next = tr->fdtables;
	if (ft->next)
		ft->next->prev = ft;
	tr->fdtables = ft;
	return ft;
}

/* The slot of fd, grown to if need be; NULL without memory or for fd < 0. */
static struct pt_fdslot *slot_of(struct pt_tracer *tr, struct pt_fdtable *ft, int fd)
{
	if (fd < 0)
		return NULL;
	if (fd >= ft->nslots) {
		size_t n = (size_t)ft->nslots;

		if (hs_grow(&ft->slots, &n, (size_t)fd + 1, sizeof(*ft->slots))) {
			tr->error = -ENOMEM;
			return NULL;
		}
		for (size_t i = (size_t)ft->nslots; i < n; i++)
			ft->slots[i] = (struct pt_fdslot){ .info_fd = -1 };
		ft->nslots = (int)n;
	}
	return &ft->slots[fd];
}

/* The description behind fd, made (at position 0) if unknown. */
struct pt_ofd *pt_ofd_of(struct pt_tracer *tr, struct pt_fdtable *ft, int fd)
{
	struct pt_fdslot *s = slot_of(tr, ft, fd);

	if (!s)
		return NULL;
	s->closing = false;	/* a call on fd: it is open, so opened since */
	if (!s->ofd) {
		if (!(s->ofd = pt_ofd_new(0, PT_OFD_UNKNOWN)))
			tr->error = -ENOMEM;
		else
			s->ofd->slots = 1;
	}
	return s->ofd;
}

/* fd now refers to ofd (dup2, or a fresh open). */
void pt_fd_set(struct pt_tracer *tr, struct pt_fdtable *ft, int fd, struct pt_ofd *ofd)
{
	struct pt_fdslot *s = slot_of(tr, ft, fd);

	if (!s || !ofd)
		return;
	ofd->refs++;
	ofd->slots++;
	slot_clear(s);
	s->ofd = ofd;
}

void pt_fd_drop(struct pt_tracer *tr, struct pt_fdtable *ft, int fd)
{
	if (fd >= 0 && fd < ft->nslots)
		slot_clear(&ft->slots[fd]);
}

void pt_fd_close_handles(struct pt_tracer *tr, struct pt_fdtable *ft)
{
	for (int i = 0; i < ft->nslots; i++) {
		if (ft->slots[i].info_fd >= 0) {
			close(ft->slots[i].info_fd);
			ft->slots[i].info_fd = -1;
			tr->handles--;
		}
	}
	ft->handle_tid = 0;
}

/* Out of file descriptors: close every handle (they are reopened as needed). */
void pt_fd_purge_handles(struct pt_tracer *tr)
{
	for (struct pt_fdtable *ft = tr->fdtables; ft; ft = ft->next)
		pt_fd_close_handles(tr, ft);
}

/* The fds open in task tid, in *fds (malloc'd); returns how many, or -errno. */
int pt_fd_list(pid_t tid, int **fds)
{
	char path[64];
	struct dirent *de;
	int n = 0, *v = NULL;
	size_t cap = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)tid);
	if (!(d = opendir(path)))
		return -errno;
	while ((de = readdir(d))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		if (hs_grow(&v, &cap, (size_t)n + 1, sizeof(*v))) {
			free(v);
			closedir(d);
			return -ENOMEM;
		}
		v[n++] = atoi(de->d_name);
	}
	closedir(d);
	*fds = v;
	return n;
}

/*
 * Has the close that marked slot s run? Its task has stopped since, or is
 * gone, or is blocked in another call (one that does not stop the tracer,
 * a read of a pipe...) or none. Only a closer that is running, or still in
 * close, may not have closed yet.
 */
static bool close_has_run(struct pt_tracer *tr, const struct pt_fdslot *s)
{
	const struct pt_task *c = u64map_get(&tr->tasks, (uint64_t)s->closer);
	long nr;
	int in;

	if (!c || c->stops != s->closer_stops)
		return true;
	in = hs_proc_syscall(s->closer, &nr);
	return in == 0 || (in == 1 && nr != SYS_close && nr != SYS_close_range);
}

/* The same file, position and flags (close-on-exec belongs to the fd, not the description). */
static bool same_description(const struct hs_fdinfo *a, const struct hs_fdinfo *b)
{
	return a->mnt_id == b->mnt_id && a->ino == b->ino && a->pos == b->pos &&
	       (a->flags & ~(unsigned)O_CLOEXEC) == (b->flags & ~(unsigned)O_CLOEXEC);
}

/*
 * At the exit of t's dup of fd into new_fd. If another thread closed fd
 * meanwhile, new_fd refers to the description it closed (the dup ran
 * first: its stretch starts where it is) or to one opened since at fd.
 */
void pt_fd_dup(struct pt_tracer *tr, struct pt_task *t, int fd, int new_fd)
{
	struct pt_fdtable *ft = t->fds;
	struct hs_fdinfo fi;
	struct pt_ofd *ofd;

	if (fd >= 0 && fd < ft->nslots && ft->slots[fd].closing &&
	    pt_fdinfo_read(tr, t, new_fd, &fi) == 0 && same_description(&fi, &ft->slots[fd].closed)) {
		if (!(ofd = pt_ofd_new(fi.pos, PT_OFD_UNKNOWN))) {
			tr->error = -ENOMEM;
			return;
		}
		pt_fd_set(tr, ft, new_fd, ofd);
		pt_ofd_put(ofd);
		return;
	}
	pt_fd_set(tr, ft, new_fd, pt_ofd_of(tr, ft, fd));
}

/* fd's fdinfo in task tid, read once (no handle kept); 0 or -errno. */
static int fdinfo_once(pid_t tid, int fd, struct hs_fdinfo *fi)
{
	char path[64], buf[1024];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", (int)tid, fd);
	if ((n = hs_procfs_read(path, buf, sizeof(buf))) <= 0)
		return n < 0 ? (int)n : -ENOENT;
	hs_fdinfo_parse(buf, fi);
	return 0;
}

/*
 * Does the child's fd refer to the description the parent's fd refers to
 * now? The parent's other threads may have closed or replaced it since the
 * fork copied the table.
 */
static bool same_as_parent(struct pt_tracer *tr, struct pt_task *parent, pid_t child, int fd)
{
	struct hs_fdinfo a, b;
	long r = syscall(SYS_kcmp, parent->tid, child, KCMP_FILE, fd, fd);

	if (r >= 0)
		return r == 0;
	/* no kcmp: the same file at the same position, with the same flags */
	return pt_fdinfo_read(tr, parent, fd, &a) == 0 && fdinfo_once(child, fd, &b) == 0 &&
	       same_description(&a, &b);
}

/*
 * Is src's fd being closed by a call that may not have run yet? Then the
 * fd may still show the description being closed, or already show one
 * opened since: nothing tells them apart for sure (the same file at the
 * same position looks the same).
 */
static bool close_pending(struct pt_tracer *tr, struct pt_fdtable *src, int fd)
{
	struct pt_fdslot *s = fd < src->nslots ? &src->slots[fd] : NULL;

	if (!s || !s->closing)
		return false;
	if (close_has_run(tr, s)) {
		s->closing = false;
		return false;
	}
	return true;
}

/*
 * fd of child's copy ft of table src: the description peer's fd refers to
 * now, if it is the same (the two share it from now on), else the child's
 * alone (peer's fd was closed since the copy, which sampled it), whose
 * stretch starts where it is. peer NULL: no task uses src any more.
 */
static void copy_fd(struct pt_tracer *tr, struct pt_fdtable *src, struct pt_task *peer,
		    pid_t child, struct pt_fdtable *ft, int fd)
{
	struct hs_fdinfo fi;
	struct pt_ofd *ofd;

	if (peer && same_as_parent(tr, peer, child, fd)) {
		pt_fd_set(tr, ft, fd, pt_ofd_of(tr, src, fd));
		return;
	}
	if (fdinfo_once(child, fd, &fi))
		return;
	if (!(ofd = pt_ofd_new(fi.pos, PT_OFD_UNKNOWN))) {
		tr->error = -ENOMEM;
		return;
	}
	pt_fd_set(tr, ft, fd, ofd);
	pt_ofd_put(ofd);
}

/*
 * Child c's table, copied by the kernel from parent's (a fork, or an
 * unshare: then c is the unsharing task and parent another user of the
 * table), built from c's own fds. An fd the parent's other threads are
 * closing at that moment cannot be told yet: c's copy may hold the
 * description being closed or one opened since. Those fds wait, with c
 * kept stopped so that its copy does not change, until the close is known
 * to have run (its thread is made to stop: PTRACE_INTERRUPT); then
 * pt_fdtable_decide() compares again. Returns c's table.
 */
struct pt_fdtable *pt_fdtable_fork(struct pt_tracer *tr, struct pt_task *parent,
				   struct pt_task *c)
{
	struct pt_fdtable *src = parent->fds, *ft = pt_fdtable_new(tr);
	int *fds = NULL, n;

	if (!ft || !src)
		return ft;
	n = pt_fd_list(c->tid, &fds);
	for (int i = 0; i < n; i++) {
		if (close_pending(tr, src, fds[i])) {
			if (hs_grow(&c->undecided, &c->undecided_cap, (size_t)c->nundecided + 1,
				    sizeof(*c->undecided))) {
				tr->error = -ENOMEM;
				continue;
			}
			c->undecided[c->nundecided++] = fds[i];
			ptrace(PTRACE_INTERRUPT, src->slots[fds[i]].closer, 0, 0);
			continue;
		}
		copy_fd(tr, src, parent, c->tid, ft, fds[i]);
	}
	free(fds);
	if (c->nundecided) {
		c->copy_of = src;
		src->pins++;
		tr->deciding++;
	}
	return ft;
}

/* A task other than c that uses ft, or NULL. */
struct pt_task *pt_fdtable_user(struct pt_tracer *tr, struct pt_fdtable *ft, struct pt_task *c)
{
	size_t pos = 0;
	void *val;

	while (u64map_next(&tr->tasks, &pos, NULL, &val)) {
		struct pt_task *t = val;

		if (t != c && t->fds == ft)
			return t;
	}
	return NULL;
}

static void fdtable_free_unused(struct pt_tracer *tr, struct pt_fdtable *ft);

/* c's copy is settled, or no longer matters (c goes, recording ended). */
void pt_fdtable_undecided_drop(struct pt_tracer *tr, struct pt_task *c)
{
	if (!c->copy_of)
		return;
	c->copy_of->pins--;
	fdtable_free_unused(tr, c->copy_of);
	c->copy_of = NULL;
	free(c->undecided);
	c->undecided = NULL;
	c->nundecided = 0;
	c->undecided_cap = 0;
	tr->deciding--;
}

/*
 * Decide what c's waiting fds are, those whose close has run by now.
 * Returns true once none waits (c may go on).
 */
bool pt_fdtable_decide(struct pt_tracer *tr, struct pt_task *c)
{
	struct pt_fdtable *src = c->copy_of;
	struct pt_task *peer;
	int left = 0;

	if (!src)
		return true;
	peer = pt_fdtable_user(tr, src, c);
	for (int i = 0; i < c->nundecided; i++) {
		int fd = c->undecided[i];

		if (peer && close_pending(tr, src, fd))
			c->undecided[left++] = fd;
		else if (c->fds)
			copy_fd(tr, src, peer, c->tid, c->fds, fd);
	}
	c->nundecided = left;
	if (left)
		return false;
	pt_fdtable_undecided_drop(tr, c);
	return true;
}

/* Task `leaving` stops using ft (exit, exec, unshare). */
void pt_fdtable_put(struct pt_tracer *tr, struct pt_fdtable *ft, pid_t leaving)
{
	if (!ft)
		return;
	if (ft->handle_tid == leaving)
		pt_fd_close_handles(tr, ft);
	ft->users--;
	fdtable_free_unused(tr, ft);
}

/* ft goes once no task uses it and no copy of it waits to be decided. */
static void fdtable_free_unused(struct pt_tracer *tr, struct pt_fdtable *ft)
{
	if (ft->users > 0 || ft->pins > 0)
		return;
	pt_fd_close_handles(tr, ft);
	for (int i = 0; i < ft->nslots; i++)
		slot_clear(&ft->slots[i]);
	free(ft->slots);
	if (ft->prev)
		ft->prev->next = ft->next;
	else
		tr->fdtables = ft->next;
	if (ft->next)
		ft->next->prev = ft->prev;
	free(ft);
}

/*
 * After t's exec: a table of its own (exec unshares it) holding the fds
 * that survived, with their descriptions.
 */
struct pt_fdtable *pt_fdtable_after_exec(struct pt_tracer *tr, struct pt_task *t)
{
	struct pt_fdtable *old = t->fds, *ft = pt_fdtable_new(tr);
	int *fds = NULL, n;

	if (ft && old) {
		n = pt_fd_list(t->tid, &fds);
		for (int i = 0; i < n; i++)
			if (fds[i] < old->nslots && old->slots[fds[i]].ofd)
				pt_fd_set(tr, ft, fds[i], old->slots[fds[i]].ofd);
		free(fds);
	}
	pt_fdtable_put(tr, old, t->tid);
	return ft;
}

/* ---- fdinfo --------------------------------------------------------------------- */

static void warn_nondumpable(struct pt_tracer *tr, pid_t tid)
{
	char path[64], comm[64] = "?";
	FILE *f;

	tr->lost++;
	if (tr->warned_nondumpable)
		return;
	tr->warned_nondumpable = true;
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)tid);
	if ((f = fopen(path, "re"))) {
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
	}
	pt_report_warning(tr, "process %d (%s) is not dumpable (it ran a program it may not "
			  "read, or changed credentials): its reads are not recorded; as root, "
			  "or with CAP_SYS_PTRACE, they would be", (int)tid, comm);
}

/*
 * Read fd's fdinfo in task t. Returns 0, -ENOENT if fd is not open, or
 * another -errno (-EACCES: the process hides its /proc files).
 */
int pt_fdinfo_read(struct pt_tracer *tr, struct pt_task *t, int fd, struct hs_fdinfo *fi)
{
	struct pt_fdtable *ft = t->fds;
	struct pt_fdslot *s;
	char path[64], buf[1024];
	ssize_t n;
	int h;

	if (!ft || !(s = slot_of(tr, ft, fd)))
		return -ENOENT;
	if (s->info_fd >= 0) {
		n = pread(s->info_fd, buf, sizeof(buf) - 1, 0);
		if (n > 0)
			goto parse;
		if (n < 0 && errno == ENOENT && ft->handle_tid == t->tid)
			return -ENOENT;
		/*
		 * The task it was opened through is gone (a thread that went
		 * without an exit stop shows no fds at all): ask through t.
		 */
		pt_fd_close_handles(tr, ft);
	}
	if (ft->handle_tid != t->tid) {
		struct pt_task *ht = u64map_get(&tr->tasks, (uint64_t)ft->handle_tid);

		if (!ht || ht->fds != ft) {
			pt_fd_close_handles(tr, ft);
			ft->handle_tid = t->tid;
		}
	}
	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", (int)ft->handle_tid, fd);
	h = open(path, O_RDONLY | O_CLOEXEC);
	if (h < 0 && (errno == EMFILE || errno == ENFILE)) {
		pt_fd_purge_handles(tr);
		ft->handle_tid = t->tid;
		snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", (int)t->tid, fd);
		h = open(path, O_RDONLY | O_CLOEXEC);
	}
	if (h < 0) {
		if (errno == EACCES || errno == EPERM) {
			warn_nondumpable(tr, t->tid);
			return -EACCES;
		}
		return -errno;
	}
	s->info_fd = h;
	tr->handles++;
	n = pread(h, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return n < 0 ? -errno : -ENOENT;
parse:
	buf[n] = '\0';
	hs_fdinfo_parse(buf, fi);
	return 0;
}

/* ---- sampling --------------------------------------------------------------------- */

/* Is the filesystem of mount mnt_id (where t's fd is) left out? */
static bool mount_excluded(struct pt_tracer *tr, struct pt_task *t, int fd, int mnt_id)
{
	uintptr_t v = (uintptr_t)u64map_get(&tr->mount_magic, (uint64_t)(uint32_t)mnt_id);
	struct statfs sf;
	char path[64];

	if (!v) {
		snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)t->tid, fd);
		if (statfs(path, &sf) < 0)
			return false;
		v = (uint32_t)sf.f_type | PT_MAGIC_SET;
		if (u64map_put(&tr->mount_magic, (uint64_t)(uint32_t)mnt_id, (void *)v))
			tr->error = -ENOMEM;
	}
	return pt_magic_excluded((long)(v & ~PT_MAGIC_SET));
}

/*
 * Fill p with what fd (description ofd, fdinfo fi) is, for a read of
 * [p->start, p->end). Returns false if it is not an input (ofd says so
 * from now on).
 */
static bool identify(struct pt_tracer *tr, struct pt_task *t, int fd, struct pt_ofd *ofd,
		     const struct hs_fdinfo *fi, struct pt_pending *p)
{
	unsigned acc = fi->flags & O_ACCMODE;
	char link[64], name[4096 + 16];
	struct pt_ident *id;
	ssize_t n;

	if (acc == O_WRONLY || (fi->flags & (O_PATH | O_DIRECTORY)) ||
	    mount_excluded(tr, t, fd, fi->mnt_id)) {
		ofd->kind = PT_OFD_SKIP;
		return false;
	}
	p->how = fi->flags & O_DIRECT ? HS_FILE_DIRECT : HS_FILE_READ;
	p->flags = acc == O_RDWR ? HS_FILE_WRITTEN : 0;
	if (ofd->kind == PT_OFD_INPUT) {
		p->file = ofd->file;
		return true;
	}
	snprintf(link, sizeof(link), "/proc/%d/fd/%d", (int)t->tid, fd);
	n = readlink(link, name, sizeof(name) - 1);
	tr->stats.idents++;
	if (n < 0 && errno == ENAMETOOLONG)
		tr->too_long++;	/* the kernel names no path over PATH_MAX */
	if (n <= 0)
		return false;
	name[n] = '\0';
	if (name[0] != '/' || hs_record_excluded(name, 0)) {
		ofd->kind = PT_OFD_SKIP;
		return false;
	}
	if (!(id = pt_ident_get(tr, fi->mnt_id, fi->ino, name)))
		return false;
	switch (id->state) {
	case PT_IDENT_SKIP:
		ofd->kind = PT_OFD_SKIP;
		return false;
	case PT_IDENT_FILE:
		ofd->kind = PT_OFD_INPUT;
		ofd->file = p->file = id->file;
		return true;
	default:
		p->ident = id;	/* stat()ed after the tracee resumes */
		p->ofd = ofd;
		return true;
	}
}

enum sample_how {
	SAMPLE_CALL,		/* a call on the fd that leaves it open (lseek, dup2 onto it) */
	SAMPLE_CLOSE,		/* a call that closes it */
	SAMPLE_LOOK,		/* a look at every fd of the table, while its other users run */
};

static struct pt_ofd *sample(struct pt_tracer *tr, struct pt_task *t, int fd,
			     enum sample_how how, struct hs_fdinfo *fi)
{
	struct pt_fdtable *ft = t->fds;
	struct pt_pending p = { 0 };
	struct pt_ofd *ofd;
	bool known = false, shared;

	if (!ft || fd < 0)
		return NULL;
	tr->stats.samples++;
	shared = ft->users > 1;
	/* the fd shows the description being closed (sampled by the close) or one opened since */
	if (how == SAMPLE_LOOK && close_pending(tr, ft, fd))
		return NULL;
	if (fd < ft->nslots && ft->slots[fd].closing)
		pt_fd_drop(tr, ft, fd);	/* a call on fd after it was closed: opened since */
	ofd = fd < ft->nslots ? ft->slots[fd].ofd : NULL;
	/* closing one of a shared table's fds takes its description, to know it again */
	if (ofd && ofd->kind == PT_OFD_SKIP && !(how == SAMPLE_CLOSE && shared)) {
		ofd = NULL;
		goto out;
	}
	if (pt_fdinfo_read(tr, t, fd, fi)) {
		ofd = NULL;
		goto out;
	}
	known = true;
	if (ofd && ofd->kind == PT_OFD_SKIP)
		goto out;
	if (!ofd && !(ofd = pt_ofd_of(tr, ft, fd)))
		goto out;
	if (ofd->seeking)
		goto out;	/* before or after an lseek: its exit will tell */
	if (fi->pos < ofd->start) {	/* moved back by something unseen */
		ofd->start = fi->pos;
		goto out;
	}
	/* nothing read, unless it is an empty file nobody identified yet */
	if (fi->pos == ofd->start && (fi->pos || ofd->kind != PT_OFD_UNKNOWN))
		goto out;
	p.start = (uint64_t)ofd->start;
	p.end = (uint64_t)fi->pos;
	if (identify(tr, t, fd, ofd, fi, &p))
		pt_queue(tr, &p);
	ofd->start = fi->pos;
out:
	if (how == SAMPLE_CLOSE) {
		pt_fd_drop(tr, ft, fd);
		if (shared && known) {
			struct pt_fdslot *s = slot_of(tr, ft, fd);

			if (s) {
				s->closing = true;
				s->closed = *fi;
				s->closer = t->tid;
				s->closer_stops = t->stops;
			}
		}
		return NULL;
	}
	return ofd && ofd->kind != PT_OFD_SKIP ? ofd : NULL;
}

/*
 * Record what was read through t's fd since its stretch started, and start
 * a new stretch there: t is stopped in a call on fd. closing: the call
 * closes it (close, close_range). Returns the fd's description, with *fi
 * filled, if it may be an input (and is not closing); else NULL.
 */
struct pt_ofd *pt_fd_sample(struct pt_tracer *tr, struct pt_task *t, int fd, bool closing,
			    struct hs_fdinfo *fi)
{
	return sample(tr, t, fd, closing ? SAMPLE_CLOSE : SAMPLE_CALL, fi);
}

/*
 * Sample every fd t has open, t running or not (a sweep): an fd whose
 * close by another thread may not have run yet is left as it is.
 */
void pt_fd_sample_all(struct pt_tracer *tr, struct pt_task *t)
{
	int *fds = NULL, n = pt_fd_list(t->tid, &fds);
	struct hs_fdinfo fi;

	for (int i = 0; i < n; i++)
		sample(tr, t, fds[i], SAMPLE_LOOK, &fi);
	free(fds);
}

/*
 * With a trace: record what t's table's inputs read since they were last
 * sampled, t stopped at a call (its other users may be running). The
 * reads through a file position are seen only as stretches; sampling them
 * all at each stop puts them in the trace before what the call itself
 * reads or maps, and after what came before the stop, so that the order
 * of accesses to different files is exact wherever a stop separates them.
 * Reads of two files between the same two stops come in the order of
 * their fds. Costs a read of fdinfo per open fd that may be an input.
 */
void pt_fd_sample_inputs(struct pt_tracer *tr, struct pt_task *t)
{
	struct pt_fdtable *ft = t->fds;
	struct hs_fdinfo fi;

	for (int fd = 0; ft && fd < ft->nslots; fd++) {
		const struct pt_fdslot *s = &ft->slots[fd];

		if (s->ofd && s->ofd->kind != PT_OFD_SKIP && !s->closing)
			sample(tr, t, fd, SAMPLE_LOOK, &fi);
	}
}

/*
 * Sample t's fd for a look, or, if another thread's close of it may not
 * have run yet, return false: the fd may show the description being
 * closed (the close sampled it) or one opened since at that fd, and the
 * same file at the same position looks alike. Its closer is made to stop
 * (PTRACE_INTERRUPT); once it has, the close has run. t's own close of it
 * has not run (t is stopped before it): the fd shows what the close sampled.
 */
static bool look_at(struct pt_tracer *tr, struct pt_task *t, int fd)
{
	struct pt_fdslot *s = fd < t->fds->nslots ? &t->fds->slots[fd] : NULL;
	struct hs_fdinfo fi;

	if (s && close_pending(tr, t->fds, fd)) {
		if (s->closer == t->tid)
			return true;
		ptrace(PTRACE_INTERRUPT, s->closer, 0, 0);
		return false;
	}
	sample(tr, t, fd, SAMPLE_LOOK, &fi);
	return true;
}

/*
 * Sample every fd t has open, t stopped before its exec, its exit or a
 * truncation (the table's other users may be running, closing and opening
 * fds meanwhile). Returns true if that is done; else the fds whose close
 * may not have run yet wait (t->unlooked), t is to stay stopped, and
 * pt_fd_look_on() takes them once their closers have stopped.
 */
bool pt_fd_look(struct pt_tracer *tr, struct pt_task *t)
{
	int *fds = NULL, n, left = 0;

	if (!t->fds || (n = pt_fd_list(t->tid, &fds)) <= 0)
		return true;
	for (int i = 0; i < n; i++)
		if (!look_at(tr, t, fds[i]))
			fds[left++] = fds[i];
	if (!left) {
		free(fds);
		return true;
	}
	pt_fd_look_drop(tr, t);
	t->unlooked = fds;
	t->nunlooked = left;
	t->look_tick = tr->ticks;
	tr->looking++;
	return false;
}

/* Sample the fds of t's look whose close has run by now; true once none waits. */
bool pt_fd_look_on(struct pt_tracer *tr, struct pt_task *t)
{
	int left = 0;

	for (int i = 0; t->fds && i < t->nunlooked; i++)
		if (!look_at(tr, t, t->unlooked[i]))
			t->unlooked[left++] = t->unlooked[i];
	t->nunlooked = left;
	if (left)
		return false;
	pt_fd_look_drop(tr, t);
	return true;
}

/* t's look is over, or given up (t goes, recording ended): its waiting fds are not sampled. */
void pt_fd_look_drop(struct pt_tracer *tr, struct pt_task *t)
{
	if (!t->unlooked)
		return;
	free(t->unlooked);
	t->unlooked = NULL;
	t->nunlooked = 0;
	tr->looking--;
}

/* A read of len bytes at offset off of t's fd (pread, sendfile with an offset...). */
void pt_fd_read_at(struct pt_tracer *tr, struct pt_task *t, int fd, uint64_t off, uint64_t len,
		   bool clip)
{
	struct pt_fdtable *ft = t->fds;
	struct pt_pending p = { .start = off, .clip = clip };
	struct hs_fdinfo fi;
	struct pt_ofd *ofd;

	if (!ft || fd < 0 || !len || (int64_t)off < 0)
		return;
	tr->stats.reads_at++;
	ofd = fd < ft->nslots ? ft->slots[fd].ofd : NULL;
	if ((ofd && ofd->kind == PT_OFD_SKIP) || pt_fdinfo_read(tr, t, fd, &fi))
		return;
	if (!ofd && !(ofd = pt_ofd_of(tr, ft, fd)))
		return;
	p.end = off + len < off ? UINT64_MAX : off + len;
	if (identify(tr, t, fd, ofd, &fi, &p))
		pt_queue(tr, &p);
}

/*
 * The first process's table: the fds it inherits from hotset's caller,
 * each starting where its position is now.
 */
int pt_fdtable_adopt_inherited(struct pt_tracer *tr, struct pt_task *t)
{
	int *fds = NULL, n = pt_fd_list(t->tid, &fds);

	if (n < 0)
		return n;
	for (int i = 0; i < n; i++) {
		struct hs_fdinfo fi;
		struct pt_ofd *ofd;

		if (pt_fdinfo_read(tr, t, fds[i], &fi) == 0 && (ofd = pt_ofd_of(tr, t->fds, fds[i])))
			ofd->start = fi.pos;
	}
	free(fds);
	return 0;
}
