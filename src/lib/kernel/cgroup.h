/*
 * cgroup.h - control groups, as hotset uses them: where this process's
 * cgroup v2 directory is, what a cgroup holds, and making, joining and
 * removing one.
 *
 * Two modules make cgroups of their own: usage (a job's, to measure its
 * pressure stalls: hotset-job.PID under hotset's cgroup) and keep
 * (--protect's, when the keeper runs in the root, which has no
 * memory.low: hotset-STATE). Both find the hierarchy, make a child, move
 * a process in and out and remove the child through the functions here,
 * which are the one statement of those facts: a cgroup is a directory
 * (mkdir makes it, rmdir removes it once no process is left in it), a
 * process is moved by writing its pid to the cgroup.procs file of the
 * cgroup it goes to ("0": the writer itself), and a cgroup's files exist
 * already (they are written, never created).
 *
 * Memory cgroups as doctor reads them, v1 or v2, with their limits and
 * figures, are memory.h's.
 */
#ifndef HOTSET_CGROUP_H
#define HOTSET_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "base/hotset.h"

/* ---- where ---------------------------------------------------------------- */

/*
 * The cgroup v2 path ("/user.slice/x") in the text of /proc/PID/cgroup,
 * its "0::" line, into out (size bytes). Returns 0, -ENOENT without such a
 * line, or -ENAMETOOLONG.
 */
int hs_cgroup_parse_self(const char *buf, char *out, size_t size);

/*
 * Where this process's cgroup v2 directory is: *own its directory under a
 * cgroup2 mount, *mount that mount point (each size bytes). With a cgroup
 * namespace, or a mount of a subtree, the mount's root is a prefix of the
 * path to take off; when it is not, *own is left empty. Returns 0, or
 * -ENOENT when no cgroup2 is mounted.
 */
int hs_cgroup2_dirs(char *own, char *mount, size_t size);

/* How many processes the cgroup directory dir holds (lines of cgroup.procs), or -errno. */
int hs_cgroup_nprocs(const char *dir);

/*
 * The cgroup v2 directory a user named: an absolute path as it is, a
 * relative one under the cgroup2 mount. Returns 0 with *out (malloc'd),
 * -ENOENT when no cgroup2 is mounted, or -ENOMEM.
 */
int hs_cgroup2_path(const char *dir, char **out);

/* ---- what a cgroup holds --------------------------------------------------- */

/* Does the cgroup at dir hold process pid alone (its cgroup.procs one line, pid)? */
bool hs_cgroup_holds_only(const char *dir, pid_t pid);

/* Is controller name ("memory", "io") enabled in the cgroup at dir (cgroup.controllers)? */
bool hs_cgroup_has_controller(const char *dir, const char *name);

/* ---- making, joining, removing ------------------------------------------------ */

/*
 * Write text to the file name of the cgroup at dir (memory.low, cgroup.procs):
 * an existing file, never created, truncated. Returns 0 or -errno.
 */
int hs_cgroup_write(const char *dir, const char *name, const char *text);

/*
 * Make the cgroup parent/name (mode 0755), its path into dir (size
 * bytes). Returns 0, -EEXIST when it is there already (dir set: a caller
 * that wants a cgroup of its own tries another name), -ENAMETOOLONG, or
 * mkdir's -errno.
 */
int hs_cgroup_make(const char *parent, const char *name, char *dir, size_t size);

/*
 * Move the calling process into the cgroup whose cgroup.procs file is
 * procs (it writes "0"). Only open, write and close: async-signal-safe,
 * for a child between fork and exec. Returns 0 or -errno.
 */
int hs_cgroup_enter(const char *procs);

/* Move process pid into the cgroup at dir. Returns 0 or -errno. */
int hs_cgroup_move(const char *dir, pid_t pid);

/*
 * Remove the cgroup at dir, moving the processes still in it to the
 * cgroup at parent (a daemon a job left running goes back where it came
 * from). A task that has exited leaves its cgroup a little after wait()
 * returns, so a busy cgroup is tried again, for about a second. Returns 0
 * (also when it is gone already) or -errno.
 */
int hs_cgroup_remove(const char *dir, const char *parent);

#endif
