/*
 * record.h - running a command and recording which file pages it reads.
 *
 * Two backends follow the job (every descendant: fork, vfork, clone,
 * threads, exec) and feed a struct hs_recording:
 *
 *   ptrace  unprivileged. A seccomp-bpf filter installed in the job makes
 *           only the system calls that matter stop it; the tracer works out
 *           which pages each one read. Mapped files are read from the
 *           processes' page tables (/proc/PID/pagemap): pages faulted in.
 *   bpf     root (CAP_BPF+CAP_PERFMON or CAP_SYS_ADMIN). Tracepoints in the
 *           page cache (filemap) see every page read, at near-zero cost.
 *
 * Both leave out what is not a regular file on a real filesystem (/proc,
 * /sys, /dev, pipes, sockets, memfd, anonymous memory), and report files
 * the job creates or truncates as outputs, not input.
 */
#ifndef HOTSET_RECORD_H
#define HOTSET_RECORD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/hotset.h"
#include "record/recording.h"
#include "job/service.h"
#include "job/usage.h"

enum hs_record_backend {
	HS_BACKEND_AUTO = 0,	/* bpf if it can run here, else ptrace */
	HS_BACKEND_PTRACE,
	HS_BACKEND_BPF,
};

/* "ptrace", "bpf" or "auto". */
const char *hs_record_backend_name(enum hs_record_backend b);

/* The backend named s: auto, ptrace, bpf (or ebpf). Returns 0, or -EINVAL for another name. */
int hs_record_backend_parse(const char *s, enum hs_record_backend *b);

struct hs_record_opts {
	char *const *argv;	/* the command; argv[0] is looked up in PATH */
	/*
	 * If set, what is recorded is this service's reading (its processes
	 * now, those that join it and those they start), not the command's:
	 * the command (the client) runs unrecorded, and its run is the
	 * window. With no command (argv NULL), the window is for_ns (0: no
	 * limit) and ends early when stop_fd (if >= 0) becomes readable.
	 * The bpf backend only: ptrace follows only what hotset starts.
	 */
	const struct hs_service *service;
	uint64_t for_ns;
	int stop_fd;
	/* with a service, told (ctx below) once it is followed, before the command starts; may be NULL */
	void (*following)(void *ctx);
	enum hs_record_backend backend;
	const char *cgroup_procs;	/* if set, the job joins this cgroup first */
	/* The recording keeps a trace: every access must reach it, in order
	 * (the backends otherwise merge what the profile's ranges merge). */
	bool trace;
	/* Told about anything worth a warning (lost events, a file that could
	 * not be identified...); may be NULL. */
	void (*warn)(void *ctx, const char *msg);
	void *ctx;
};

struct hs_record_result {
	enum hs_record_backend backend;	/* the one that ran */
	int wait_status;	/* of the command's first process */
	int exec_error;		/* -errno if the command did not start, else 0 */
	const char *exec_stage;	/* with exec_error: "exec", "setup" or "cgroup" */
	int still_running;	/* descendants left running when it ended */
	size_t service_procs;	/* a service: the processes followed (at the start, joined, started) */
	unsigned long long lost_events;	/* accesses the backend could not see */
	const char *mmap_pages;	/* "faulted" or "touched": what mapped pages mean */
	/* the job as a helper process reaped it, if one did (hs_usage_add_helper) */
	struct hs_usage_helper helper;
};

/*
 * Can backend b run here, for this user? Returns 0, or -errno with why
 * filled (e.g. "the bpf backend needs root (CAP_BPF and CAP_PERFMON)").
 */
int hs_record_probe(enum hs_record_backend b, struct hs_error *why);

/*
 * Run o->argv under the chosen backend (HS_BACKEND_AUTO picks bpf when
 * hs_record_probe() allows, else ptrace) until the job's first process has
 * exited, feeding rec. Signals sent to hotset are forwarded to the job
 * until then, and held from then on (see hs_job_stop_forwarding(): the
 * caller delivers them with hs_job_release_signals() once it has written
 * what it must). Returns 0 when the job ran (whatever its exit status, see *res), or
 * -errno with err filled when recording could not be done; a command that
 * cannot be executed is not an error here (res->exec_error).
 */
int hs_record_run(const struct hs_record_opts *o, struct hs_recording *rec,
		  struct hs_record_result *res, struct hs_error *err);

/* The backends, for hs_record_run(); same contract. */
int hs_record_ptrace(const struct hs_record_opts *o, struct hs_recording *rec,
		     struct hs_record_result *res, struct hs_error *err);
int hs_record_bpf(const struct hs_record_opts *o, struct hs_recording *rec,
		  struct hs_record_result *res, struct hs_error *err);
int hs_record_bpf_probe(struct hs_error *why);
int hs_record_ptrace_probe(struct hs_error *why);

/*
 * Should a file at path, on a filesystem of type fs_magic, be left out of
 * a working set? Yes on a pseudo-filesystem (hs_pseudo_fs_name()), on
 * tmpfs or ramfs, under /proc, /sys or /dev, for a memfd, and for a path
 * that is not absolute. fs_magic 0: judge by the path alone. Shared by
 * both backends.
 */
bool hs_record_excluded(const char *path, long fs_magic);

#endif
