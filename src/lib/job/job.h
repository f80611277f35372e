/*
 * job.h - running the user's command as hotset's child.
 *
 * `record` and `time` run a command so that it behaves as if run bare: same
 * standard streams and environment, every signal meant for it delivered
 * once, terminal job control as the shell gives it, and hotset's exit
 * status is the command's. This module does the parts they share: fork and
 * exec with a hook between them, telling "not found" (127) and "cannot
 * execute" (126) from the command's own exit codes, passing on the signals
 * sent to hotset (the job has a process group of its own, see job.c), and
 * collecting descendants that outlive their parents.
 */
#ifndef HOTSET_JOB_H
#define HOTSET_JOB_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

struct hs_job_spec {
	char *const *argv;	/* argv[0] is looked up in PATH */
	/*
	 * Run in the child after fork, before exec (optional). It must only
	 * use async-signal-safe calls. Returning -errno makes the child exit
	 * with 125 after reporting the error (hs_job_exec_result gives it).
	 */
	int (*before_exec)(void *ctx);
	void *ctx;
	/* If set, the child writes its pid to this cgroup.procs file first. */
	const char *cgroup_procs;
};

struct hs_job {
	pid_t pid;		/* the command's first process */
	int status_fd;		/* read end of the exec-status pipe, or -1 */
};

/*
 * Fork, run spec->before_exec in the child, and exec argv. The child leads
 * a new process group (its pid), in hotset's session. Returns 0 with job
 * filled in, or -errno if the fork itself failed.
 */
int hs_job_start(const struct hs_job_spec *spec, struct hs_job *job);

/*
 * How the exec went. Call once the child has exec'd or exited (it blocks
 * until then). Returns 0 if the command runs, or the -errno that exec (or
 * before_exec, or joining the cgroup) failed with. *stage (optional) tells
 * which: "exec", "setup" or "cgroup".
 */
int hs_job_exec_result(struct hs_job *job, const char **stage);

/* The exit code for a failed start: 127 not found, 126 not executable, 125 else. */
int hs_job_failure_code(int err, const char *stage);

/*
 * Why command could not start, as a sentence in buf (cap bytes): err (an
 * errno) at stage ("exec", "cgroup" or "setup", see hs_job_exec_result()),
 * e.g. "CMD: command not found". Returns buf.
 */
const char *hs_job_start_failure_text(char *buf, size_t cap, const char *command, int err,
				      const char *stage);

/* The exit code that mirrors a wait status: the exit code, or 128+signal. */
int hs_job_exit_code(int wait_status);

/*
 * Take SIGCHLD back to its default, as hotset waits for its children: a
 * caller that ignores it (inherited across exec) would have them reaped
 * unseen. Jobs started afterwards get the caller's disposition back. Call
 * it early, before any child is started.
 */
void hs_job_claim_sigchld(void);

/*
 * Pass the signals sent to hotset on to the job's process group (pid, the
 * job's first process, leads it), once each: SIGHUP, SIGINT, SIGQUIT,
 * SIGTERM, SIGUSR1, SIGUSR2, SIGTSTP, SIGCONT and SIGWINCH, whoever sent
 * them (the terminal included, as long as it is hotset's group that has its
 * foreground), except the job itself. And follow the job's stops as a
 * shell's job control would (see job.c): hand it the terminal when it needs
 * it, stop with it, continue it. Returns 0 or -errno.
 */
int hs_job_forward_signals(pid_t pid);

/* The signals hs_job_forward_signals() passes on and hs_job_stop_forwarding() holds. */
void hs_job_signal_set(sigset_t *set);

/*
 * The job's first process entered a stop with signal sig. hotset learns it
 * from SIGCHLD when it is the job's parent; a backend whose tracer is the
 * parent calls this instead (async-signal-safe; it may stop hotset until
 * it is continued).
 */
void hs_job_stopped(int sig);

/*
 * Stop forwarding, once the job is over: take the terminal back if the job
 * had it, put back the dispositions hs_job_forward_signals() replaced, with
 * the signals of hs_job_signal_set() held (blocked), so that one sent while
 * the caller finishes (writes the profile, reports) takes effect only at
 * hs_job_release_signals(), when nothing is half done.
 */
void hs_job_stop_forwarding(void);

/* Deliver the signals hs_job_stop_forwarding() held, if any came. */
void hs_job_release_signals(void);

/* The first SIGHUP, SIGINT, SIGQUIT or SIGTERM passed on so far, or 0 (to note an interrupted run). */
int hs_job_signal_received(void);

/*
 * Make hotset the reaper of orphaned descendants (PR_SET_CHILD_SUBREAPER),
 * so that their resource usage is counted when they are waited for.
 */
int hs_job_become_subreaper(void);

/*
 * Wait for the job's first process (*status gets its wait status), then
 * reap every other child that has already exited (orphans adopted as
 * subreaper), so that their usage is accounted. Descendants still running
 * are not waited for: a job may leave a daemon behind. Returns how many
 * children are still running, or -errno.
 */
int hs_job_wait_all(const struct hs_job *job, int *status);

/*
 * A gate that holds the job's first process between fork and exec until
 * the caller is ready for it (a tracer attached, eBPF programs loaded): a
 * pipe the child reads one byte from. hs_job_gate_init() before
 * hs_job_start(); hs_job_gate_wait() in before_exec; hs_job_gate_open()
 * once ready; hs_job_gate_close() at the end, which makes a child still
 * waiting give up.
 */
struct hs_job_gate {
	int rfd, wfd;
};

/* Returns 0 or -errno. */
int hs_job_gate_init(struct hs_job_gate *g);

/* In the child (async-signal-safe): 0 once opened, -ECANCELED if the caller went away. */
int hs_job_gate_wait(const struct hs_job_gate *g);

/* Let the child go on. Returns 0, or -errno if it could not be told. */
int hs_job_gate_open(struct hs_job_gate *g);

void hs_job_gate_close(struct hs_job_gate *g);

#endif
