/*
 * record-ptrace.h - the parts of the ptrace record backend, and what they
 * share.
 *
 * hotset forks a tracer process; the tracer starts the job, follows it with
 * ptrace, and reports what it learns through a pipe; hotset applies the
 * reports to the recording. The tracer is a process of its own so that it
 * can outlive hotset: a process the job leaves running when its first
 * process exits stays traced until it exits too (a traced process whose
 * tracer goes away would see its trapped system calls fail with ENOSYS),
 * while hotset writes the profile and exits with the job's status.
 *
 *   record-ptrace.c         hs_record_ptrace(): start the tracer, apply its
 *                           reports, forward signals; the report channel
 *   record-ptrace-tracer.c  the tracer: start the job, the loop over its stops
 *   record-ptrace-stops.c   the tasks, and what each stop means (fork,
 *                           exec, exit, signals, a trapped call's entry and exit)
 *   record-ptrace-calls.c   what a trapped call means, at its entry and its exit
 *   record-ptrace-tracee.c  the tracee's memory and the paths its calls name
 *   record-ptrace-filter.c  the seccomp filter, and what a trapped call means
 *   record-ptrace-fds.c     the job's file descriptors and read positions
 *   record-ptrace-files.c   which file an fd or a mapping is; the queue of
 *                           reads waiting for that answer
 *   record-ptrace-maps.c    the pages of mapped files (maps + pagemap)
 *
 * How reads are seen (position inference): the filter never stops the job
 * on read(2), readv(2) or an open for reading. Through an open file
 * description opened for reading only reads move the file position, so
 * what was read between two events that move it otherwise is exactly
 * [position then, position now). The tracer keeps, per open file
 * description, where the current stretch started, and samples the position
 * (/proc/TID/fdinfo) when the description may stop being observable or is
 * moved: close, dup2 over it, exec, exit, lseek. Reads at an explicit
 * offset (pread, preadv, sendfile/splice/copy_file_range with an offset)
 * stop the job and are recorded from their arguments. Mapped files are read
 * from the page tables (/proc/PID/pagemap) whenever pages could leave them.
 */
#ifndef HOTSET_RECORD_PTRACE_H
#define HOTSET_RECORD_PTRACE_H

#include <linux/filter.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/types.h>

#include "kernel/procfs.h"
#include "record/record.h"
#include "job/job.h"
#include "job/usage.h"
#include "base/u64map.h"

/* madvise(2) advice that drops pages, for C libraries that predate them */
#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif
#ifndef MADV_DONTNEED_LOCKED
#define MADV_DONTNEED_LOCKED 24
#endif

/* ---- system calls (record-ptrace-filter.c) ------------------------------------ */

/* What a trapped system call is, whatever the ABI it came through. */
enum pt_call {
	PT_OTHER = 0,
	PT_CLOSE, PT_CLOSE_RANGE, PT_DUP, PT_DUP2, PT_DUP3, PT_FCNTL,
	PT_LSEEK, PT_LLSEEK,
	PT_PREAD, PT_PREADV, PT_PREADV2,
	PT_SENDFILE, PT_SENDFILE64, PT_SPLICE, PT_COPY_FILE_RANGE,
	PT_MMAP, PT_MMAP_PGOFF, PT_OLD_MMAP, PT_MUNMAP, PT_MREMAP, PT_MADVISE,
	PT_EXECVE, PT_EXECVEAT, PT_EXIT_GROUP,
	PT_OPEN, PT_OPENAT, PT_OPENAT2, PT_CREAT, PT_TRUNCATE, PT_TRUNCATE64,
	PT_RENAME, PT_PRCTL, PT_UNSHARE,
};

/* A system call decoded: arguments as the call sees them. */
struct pt_syscall {
	enum pt_call call;
	bool compat;		/* a 32-bit ABI: pointers and iovecs are 4 bytes */
	bool split64;		/* i386: a 64-bit value takes two arguments */
	uint64_t args[6];
};

/*
 * Build the filter the job installs. trap_dumpable: also stop on
 * prctl(PR_SET_DUMPABLE, 0), which would hide the process's /proc files
 * from an unprivileged tracer. Returns 0 with prog->filter allocated (the
 * caller frees it), or -ENOMEM.
 */
int pt_filter_build(bool trap_dumpable, struct sock_fprog *prog);

/*
 * Decode call nr of ABI arch (AUDIT_ARCH_*). Returns false for an ABI this
 * backend does not know (its calls cannot be interpreted).
 */
bool pt_decode(uint32_t arch, uint64_t nr, const uint64_t args[6], struct pt_syscall *sc);

/* ---- files (record-ptrace-files.c) --------------------------------------------------- */

/* A file as reported to hotset: one identity, one path. */
struct pt_file {
	uint32_t local;		/* its number in the reports */
	struct hs_file_id id;	/* ino has the generation folded in if reused */
	uint64_t ino;		/* the real inode number */
	uint64_t size_now;	/* size at the last stat */
	int64_t btime_sec;	/* birth time (0 if unknown): tells a reused inode */
	uint32_t btime_nsec;
	char *path;
	unsigned flags;		/* HS_FILE_WRITTEN/EXEC... known so far */
	unsigned reported_flags;
	bool reported;		/* told to hotset */
	bool output;		/* created or truncated by the job */
};

/* A file seen through /proc/TID/fdinfo: (mount id, inode) and the fd's path. */
struct pt_ident {
	int mnt_id;
	uint64_t ino;
	char *path;
	enum { PT_IDENT_UNRESOLVED, PT_IDENT_FILE, PT_IDENT_SKIP } state;
	bool path_is_files;	/* path is file->path (not ours to free) */
	struct pt_file *file;
	struct pt_ident *next_retired;
};

/* A read waiting for its file to be identified (after the tracee resumes). */
struct pt_pending {
	struct pt_ident *ident;	/* resolve this, or */
	struct pt_file *file;	/* this file is known */
	struct pt_ofd *ofd;	/* learns the file (a reference is held), or NULL */
	uint64_t start, end;	/* bytes [start, end) */
	unsigned how;		/* HS_FILE_READ or HS_FILE_DIRECT */
	unsigned flags;		/* HS_FILE_WRITTEN if the fd could write */
	bool clip;		/* end is what was asked: clip it to the file's size */
};

/* ---- file descriptors (record-ptrace-fds.c) ------------------------------------------ */

/* An open file description: where the stretch being read started. */
struct pt_ofd {
	int refs;
	enum { PT_OFD_UNKNOWN, PT_OFD_INPUT, PT_OFD_SKIP } kind;
	int64_t start;
	struct pt_file *file;	/* with PT_OFD_INPUT */
	int slots;		/* fd slots referring to it (refs also counts queued reads) */
	/*
	 * lseeks let go that others may see the position of: until they stop
	 * at their exit, where they landed is not known, and a position seen
	 * meanwhile is no read.
	 */
	int seeking;
};

struct pt_fdslot {
	struct pt_ofd *ofd;	/* NULL: not known (opened for reading, untouched) */
	int info_fd;		/* /proc/TID/fdinfo/FD handle, or -1 */
	/*
	 * closing: a thread is closing the fd while other tasks share the
	 * table. The tracer has recorded the description (`closed`) and let
	 * the close run, so for a moment the fd may still show it; a sample
	 * taken meanwhile by anything but a call on this fd must not take it
	 * for a description opened since, nor revive it.
	 */
	bool closing;
	struct hs_fdinfo closed;
	pid_t closer;		/* the task that closed it, */
	unsigned closer_stops;	/* and its stops then: once it stops again, the close has run */
};

/* A file descriptor table, shared by threads (CLONE_FILES). */
struct pt_fdtable {
	int users;
	int pins;		/* copies of it waiting to be decided (pt_fdtable_fork) */
	pid_t handle_tid;	/* the tid the info handles were opened through */
	struct pt_fdslot *slots;
	int nslots;
	unsigned mark;		/* for walks over all tables */
	struct pt_fdtable *prev, *next;	/* all tables, to close handles */
};

/* ---- memory (record-ptrace-maps.c) -------------------------------------------------- */

/* An address space, shared by threads and by a vfork child until it execs. */
struct pt_mm {
	int users;
	int maps_fd, pagemap_fd;	/* bound to this mm when opened; -1 before */
	bool final_scanned;	/* scanned as the process exits */
	unsigned mark;		/* for walks over all address spaces */
	struct pt_mm *prev, *next;	/* all of them, for periodic scans */
};

/* ---- the tracer --------------------------------------------------------------------- */

/*
 * All of this lives in the tracer process. It frees what it stops using
 * during the run (tasks, tables, descriptions); what it holds at the end
 * goes with the process.
 */

struct pt_task {
	pid_t tid, tgid;
	struct pt_fdtable *fds;
	struct pt_mm *mm;
	bool started;		/* resumed after its first stop */
	bool held;		/* first stop came before its parent's fork event */
	bool preexec;		/* the first process before its exec: hotset's code */
	bool vfork_child;	/* shares its parent's memory until it execs */
	bool at_exit;		/* resumed to the exit of `call` */
	unsigned stops;		/* stops handled so far */
	struct pt_ofd *seeking;	/* an lseek's description, until its exit (a reference) */
	/* fds of its copy of copy_of (a pin) that wait for a close to run; it stays stopped */
	struct pt_fdtable *copy_of;
	int *undecided;
	int nundecided;
	size_t undecided_cap;
	bool parked;		/* stopped at an unshare's exit until they are decided */
	/*
	 * fds a look at its table (before exec, exit, a truncation) waits to
	 * sample until another thread's close of them has run; it stays
	 * stopped, and goes on with look_then once they are sampled.
	 */
	int *unlooked;
	int nunlooked;
	unsigned look_tick;	/* tr->ticks when it began waiting */
	int look_then;		/* PTRACE_CONT, PTRACE_SYSCALL, or PT_LOOK_LEAVE */
	struct pt_syscall call;
	int64_t aux;		/* what the entry of `call` learnt for its exit */
	struct {		/* the file execve was asked to run */
		bool set;
		uint64_t dev, ino;
		char *path;
	} exec;
	char *truncated;	/* the file truncate(2) was asked to cut */
};

#define PT_LOOK_LEAVE (-1)	/* look_then at its exit: leave the tables, then go on */

struct pt_tracer {
	const struct hs_record_opts *opts;
	uint32_t page_size;
	pid_t root;
	bool recording;		/* false once the first process is gone */

	/* reports to hotset (record-ptrace.c) */
	int report_fd;
	char *out;
	size_t out_len, out_cap;
	bool report_broken;

	struct u64map tasks;		/* tid -> struct pt_task */
	struct pt_fdtable *fdtables;
	struct pt_mm *mms;
	int handles;			/* fdinfo handles open */
	int deciding;			/* tasks with fds of a copy undecided */
	int looking;			/* tasks with fds of a look waiting */
	unsigned ticks;			/* periodic scans so far */

	struct pt_file **files;		/* by local number */
	size_t nfiles, files_cap;
	struct u64map file_by_inode;	/* (dev, ino) -> latest struct pt_file */
	struct u64map file_by_mapping;	/* maps' (dev, ino) -> struct pt_file */
	struct u64map idents;		/* (mnt_id, ino) -> struct pt_ident */
	struct pt_ident *retired;	/* replaced idents, freed after a flush */
	struct u64map mount_magic;	/* mnt_id -> fs magic | PT_MAGIC_SET */
	struct u64map dev_magic;	/* st_dev -> fs magic | PT_MAGIC_SET */
	uint64_t generation;		/* reused inode numbers so far */

	struct pt_pending *pending;
	size_t npending, pending_cap;

	int procmap_query;		/* PROCMAP_QUERY works: 1, no: 0, unknown: -1 */
	uint64_t lost;			/* reads that could not be recorded */
	uint64_t too_long;		/* reads of files whose path is over PATH_MAX */
	struct {			/* for HOTSET_PTRACE_STATS=1 */
		uint64_t seccomp, exits, events, samples, reads_at, idents, lookups, scans;
	} stats;
	bool warned_nondumpable, warned_abi;
	int error;			/* first error (-ENOMEM...) */
};

#define PT_MAGIC_SET (1ull << 40)	/* makes a stored magic non-NULL */

/* How the run went, for hotset. */
struct pt_outcome {
	int error;		/* -errno if the recording failed, else 0 */
	char message[256];	/* why, with error */
	int wait_status;	/* of the first process */
	int exec_error;		/* -errno if the command did not start */
	int exec_stage;		/* with exec_error: 1 cgroup, 2 setup, 3 exec */
	int still_running;	/* processes left running */
	uint64_t lost;
	bool tracer_stays;	/* the tracer follows processes left running */
	struct hs_usage_helper usage;	/* what the job's processes the tracer reaped used */
};

/* The run of the job, as the loop follows it. */
struct pt_run {
	struct hs_job job;	/* its first process */
	struct pt_outcome out;	/* what is sent to hotset at the end */
	bool root_gone;		/* the first process has exited */
};

/* record-ptrace.c: the report channel (tracer side). */
void pt_report_started(struct pt_tracer *tr, pid_t root);
void pt_report_end(struct pt_tracer *tr, const struct pt_outcome *out);
/* The job's first process entered a group stop with sig (sent at once: hotset may stop too). */
void pt_report_stopped(struct pt_tracer *tr, int sig);
void pt_report_file(struct pt_tracer *tr, struct pt_file *f);
void pt_report_access(struct pt_tracer *tr, struct pt_file *f, uint64_t first, uint64_t last,
		      unsigned how);
void pt_report_warning(struct pt_tracer *tr, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void pt_report_flush(struct pt_tracer *tr);

/* record-ptrace.c: can this build trace here at all (architecture)? 0 or -ENOTSUP. */
int hs_record_ptrace_probe_arch(struct hs_error *why);

/* record-ptrace-tracer.c: the tracer process's body; returns its exit code. */
int pt_tracer_run(const struct hs_record_opts *o, int report_fd);
/* Why PTRACE_SEIZE failed with err, in words (for msg). */
void pt_explain_seize(int err, char *msg, size_t cap);

/* record-ptrace-stops.c */
/* The task for tid, made if new; NULL (tr->error set) without memory. Freed at its end. */
struct pt_task *pt_task_get(struct pt_tracer *tr, pid_t tid);
/* t no longer uses its fd table and memory (it exits, or its state moved). */
void pt_task_leave(struct pt_tracer *tr, struct pt_task *t);
/* Let a stopped t go on (request: PTRACE_CONT, PTRACE_SYSCALL, PTRACE_LISTEN). */
void pt_resume(struct pt_task *t, int request, int sig);
/*
 * What wait status `status` of tid means; resumes the task unless it must
 * stay stopped (held, parked or unlooked: the loop lets it go). The first
 * process's end goes to run.
 */
void pt_on_status(struct pt_tracer *tr, struct pt_run *run, pid_t tid, int status);

/* record-ptrace-calls.c */
/* Call sc of t (its entry stop) before it runs; true: stop at its exit too. */
bool pt_call_entry(struct pt_tracer *tr, struct pt_task *t, const struct pt_syscall *sc);
/* The successful exit of t->call, which returned rval. */
void pt_call_exit(struct pt_tracer *tr, struct pt_task *t, int64_t rval);

/* record-ptrace-tracee.c: reading a stopped tracee (tid: any of its threads) */
/* len bytes at the tracee's addr into dst: 0, or -1 unless all were read. */
int pt_read_mem(pid_t tid, void *dst, uint64_t addr, size_t len);
/* The NUL-terminated string at addr, at most cap - 1 bytes: 0, or -1 (unreadable, too long). */
int pt_read_string(pid_t tid, char *dst, uint64_t addr, size_t cap, uint32_t page_size);
/* The bytes asked for by the iovec array at addr (count entries; compat: 32-bit); 0 if invalid. */
uint64_t pt_iov_total(pid_t tid, uint64_t addr, uint64_t count, bool compat);
/*
 * In out (cap bytes), a path that names for the tracer what path, relative
 * to dirfd (AT_FDCWD: the working directory), names for t: through
 * /proc/TID, /proc/self made t's own. 0, or -1 if it does not fit.
 */
int pt_tracee_path(const struct pt_task *t, int dirfd, const char *path, char *out, size_t cap);
/* The real path of t's path argument at addr, relative to dirfd; NULL if none. Caller frees. */
char *pt_resolve_arg(struct pt_tracer *tr, const struct pt_task *t, int dirfd, uint64_t addr);

/* record-ptrace-files.c */
enum { PT_LOOKUP_CREATED = 1 };	/* the job just created it: a new file */
struct pt_file *pt_file_lookup(struct pt_tracer *tr, const char *stat_path, const char *name,
			       uint64_t want_ino, unsigned opts);
struct pt_file *pt_file_of_mapping(struct pt_tracer *tr, uint64_t dev, uint64_t ino,
				   const char *name);
void pt_file_output(struct pt_tracer *tr, struct pt_file *f);
void pt_file_flag(struct pt_tracer *tr, struct pt_file *f, unsigned flags);
void pt_file_access(struct pt_tracer *tr, struct pt_file *f, uint64_t start, uint64_t end,
		    unsigned how);
void pt_queue_access(struct pt_tracer *tr, struct pt_file *f, uint64_t start, uint64_t end,
		     unsigned how);
struct pt_ident *pt_ident_get(struct pt_tracer *tr, int mnt_id, uint64_t ino, const char *path);
void pt_queue(struct pt_tracer *tr, const struct pt_pending *p);
void pt_flush(struct pt_tracer *tr);
bool pt_magic_excluded(long magic);
long pt_dev_magic(struct pt_tracer *tr, uint64_t dev, const char *path);

/* record-ptrace-fds.c (struct hs_fdinfo: procfs.h) */
struct pt_fdtable *pt_fdtable_new(struct pt_tracer *tr);
struct pt_fdtable *pt_fdtable_fork(struct pt_tracer *tr, struct pt_task *parent,
				   struct pt_task *c);
struct pt_task *pt_fdtable_user(struct pt_tracer *tr, struct pt_fdtable *ft, struct pt_task *c);
bool pt_fdtable_decide(struct pt_tracer *tr, struct pt_task *c);
void pt_fdtable_undecided_drop(struct pt_tracer *tr, struct pt_task *c);
void pt_fdtable_put(struct pt_tracer *tr, struct pt_fdtable *ft, pid_t leaving);
struct pt_fdtable *pt_fdtable_after_exec(struct pt_tracer *tr, struct pt_task *t);
int pt_fdtable_adopt_inherited(struct pt_tracer *tr, struct pt_task *t);
struct pt_ofd *pt_ofd_of(struct pt_tracer *tr, struct pt_fdtable *ft, int fd);
void pt_fd_set(struct pt_tracer *tr, struct pt_fdtable *ft, int fd, struct pt_ofd *ofd);
void pt_fd_drop(struct pt_tracer *tr, struct pt_fdtable *ft, int fd);
struct pt_ofd *pt_ofd_new(int64_t start, int kind);
void pt_ofd_put(struct pt_ofd *ofd);
bool pt_ofd_seen_elsewhere(const struct pt_task *t, const struct pt_ofd *ofd);
void pt_fd_dup(struct pt_tracer *tr, struct pt_task *t, int fd, int new_fd);
void pt_seek_begin(struct pt_task *t, struct pt_ofd *ofd);
void pt_seek_end(struct pt_task *t, bool landed, int64_t pos);
int pt_fdinfo_read(struct pt_tracer *tr, struct pt_task *t, int fd, struct hs_fdinfo *fi);
struct pt_ofd *pt_fd_sample(struct pt_tracer *tr, struct pt_task *t, int fd, bool closing,
			    struct hs_fdinfo *fi);
void pt_fd_sample_all(struct pt_tracer *tr, struct pt_task *t);
void pt_fd_sample_inputs(struct pt_tracer *tr, struct pt_task *t);
bool pt_fd_look(struct pt_tracer *tr, struct pt_task *t);
bool pt_fd_look_on(struct pt_tracer *tr, struct pt_task *t);
void pt_fd_look_drop(struct pt_tracer *tr, struct pt_task *t);
void pt_fd_read_at(struct pt_tracer *tr, struct pt_task *t, int fd, uint64_t off, uint64_t len,
		   bool clip);
int pt_fd_list(pid_t tid, int **fds);
void pt_fd_close_handles(struct pt_tracer *tr, struct pt_fdtable *ft);
void pt_fd_purge_handles(struct pt_tracer *tr);

/* record-ptrace-maps.c */
struct pt_mm *pt_mm_new(struct pt_tracer *tr);
void pt_mm_put(struct pt_tracer *tr, struct pt_mm *mm);
void pt_mm_scan(struct pt_tracer *tr, struct pt_task *t, uint64_t lo, uint64_t hi);
void pt_mm_exec_headers(struct pt_tracer *tr, struct pt_task *t);

#endif
