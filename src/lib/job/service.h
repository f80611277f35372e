/*
 * service.h - a service: processes hotset did not start (a database
 * server, a build server) that do the work of a job sent to them by a
 * client, and what they cost while the job runs.
 *
 * A service is named one of three ways, and resolved once, before the job
 * runs, so that a name that is wrong costs no run:
 *
 *   --pid PID      the process, its threads, and the processes it starts
 *                  (a descendant stays a member until it ends, even once
 *                  its parent has ended and it was re-parented);
 *   --cgroup PATH  the processes of a cgroup: PATH is its directory on a
 *                  cgroup filesystem (v1 or v2, "/sys/fs/cgroup/memory/db"),
 *                  or its name in a hierarchy ("/system.slice/db.service"),
 *                  looked up in the cgroup v2 hierarchy first, then in each
 *                  v1 hierarchy in mount order; the first that has it;
 *   --unit NAME    a systemd unit's cgroup (systemctl show -p ControlGroup),
 *                  looked up as --cgroup's names are.
 *
 * Its members can be listed at any time; the probe below lists them every
 * 100 ms while the job runs, and sums what each process did in the window.
 */
#ifndef HOTSET_SERVICE_H
#define HOTSET_SERVICE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/hotset.h"

enum hs_service_kind {
	HS_SERVICE_PID = 1,
	HS_SERVICE_CGROUP,
	HS_SERVICE_UNIT,
};

/* A resolved service: plain data, nothing to release. */
struct hs_service {
	enum hs_service_kind kind;
	char arg[PATH_MAX];		/* as the user gave it */
	pid_t pid;			/* HS_SERVICE_PID: the process */
	unsigned long long pid_start;	/* its start time (clock ticks since boot): a reused pid is not it */
	int cg_version;			/* cgroup or unit: 1 or 2 */
	char cg_dir[PATH_MAX];		/* its directory */
	char cg_name[PATH_MAX];		/* its name in the hierarchy ("/a/b") */
};

/* The option that names a kind of service ("--pid", "--cgroup", "--unit"). */
const char *hs_service_option(enum hs_service_kind kind);

/*
 * Resolve arg as a service of that kind into *out. Returns 0, or -errno
 * with a sentence in err that names what was given: -EINVAL (not a pid,
 * an empty name), -ESRCH (no such process), -ENOENT (no such cgroup or
 * unit, no systemd for --unit), -ENOTDIR (a path that is not a cgroup's
 * directory). The service may be empty (a cgroup that holds no process):
 * the probe says so.
 */
int hs_service_resolve(enum hs_service_kind kind, const char *arg, struct hs_service *out,
		       struct hs_error *err);

/*
 * The pids of the service's processes now, into *pids (a malloc'd array
 * of *cap elements, grown with hs_grow; the caller frees it). For a pid
 * target, its descendants are those of the process table as it is: the
 * probe keeps re-parented ones itself. Returns the count (0: none; for a
 * pid target, the process has ended), or -errno.
 */
ssize_t hs_service_pids(const struct hs_service *s, pid_t **pids, size_t *cap);

/*
 * The memory cgroup the service is charged in (that of its first process
 * now) into *m, as hs_memcg_of() gives it. Returns 0, -ESRCH (it holds no
 * process), or hs_memcg_of()'s -errno.
 */
struct hs_memcg;
int hs_service_memcg(const struct hs_service *s, struct hs_memcg *m);

/* ---- what a service did while a job ran ------------------------------------ */

struct hs_service_probe;

/* Where the service's I/O wait comes from. */
enum hs_service_wait {
	HS_SERVICE_WAIT_UNKNOWN = 0,	/* not measured: a note says why */
	HS_SERVICE_WAIT_PSI,		/* io.pressure "some" of its cgroup v2: wall time */
	HS_SERVICE_WAIT_DELAYACCT,	/* delay accounting: blkio ticks summed over its threads */
};

#define HS_SERVICE_NOTES 6
#define HS_SERVICE_NOTE_LEN 320

struct hs_service_usage {
	double wall_s;			/* the window: from begin to end */
	size_t procs_seen;		/* processes counted (members at any sample) */
	size_t procs_now;		/* members at the end */
	size_t threads_max;		/* the most threads seen at once */
	bool ended;			/* a pid target ended during the window */

	/* Bytes read from and written for storage (/proc/PID/io): exact unless partial. */
	bool io_known;
	bool io_partial;		/* a lower bound: a process ended unseen by a member parent */
	uint64_t read_bytes, write_bytes;

	/* CPU time of its processes (and the children they reaped), likewise. */
	bool cpu_known;
	bool cpu_partial;
	double user_s, sys_s;

	enum hs_service_wait wait;
	bool wait_partial;		/* delay accounting: threads ended between samples */
	double io_wait_s;		/* PSI: wall time some task waited; delayacct: thread-seconds */

	/* The memory cgroup of its first process at the start, and the lowest limit above it. */
	bool memcg_known;
	int memcg_version;
	char memcg_name[PATH_MAX];
	bool limit_known;
	uint64_t limit;			/* UINT64_MAX: none */

	int nnotes;
	char notes[HS_SERVICE_NOTES][HS_SERVICE_NOTE_LEN];
};

/*
 * Start watching s: list its members, take each one's counts as the
 * baseline, and start a thread that lists and reads them every 100 ms
 * (so that a process that comes and goes is counted, and one that ends
 * is counted up to its last sample). The thread blocks all signals and
 * holds no lock when this returns but its own, so that the caller may
 * fork. Returns 0 and sets *out (release with hs_service_end()), or
 * -errno with a sentence in err: -ESRCH (the service holds no process),
 * -EACCES or -EPERM (a member's counts are not readable: another user's
 * process, which needs CAP_SYS_PTRACE), -ENOMEM.
 */
int hs_service_begin(const struct hs_service *s, struct hs_service_probe **out,
		     struct hs_error *err);

/*
 * Stop watching: a last sample, then the figures of the window into *out
 * (if not NULL), and p freed. Always returns 0: what could not be
 * measured is unknown or partial in *out, with a note.
 */
int hs_service_end(struct hs_service_probe *p, struct hs_service_usage *out);

#endif
