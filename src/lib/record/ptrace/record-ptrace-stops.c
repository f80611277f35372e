/*
 * record-ptrace-stops.c - the tracer's tasks, and what each stop of one
 * means: a trapped call's entry (record-ptrace-calls.c says what the call
 * means) and the exit it asked for; fork, vfork and clone (what the child
 * shares with its parent: fd table, memory); exec (a new image, fds
 * closed on exec, the #! script read); the exit event (the last look at
 * what it read); a signal, handed back; a group stop, kept.
 *
 * Every stop ends with the task resumed (pt_resume), except where a task
 * must wait for another: a child whose first stop came before its
 * parent's event (held), a copy of an fd table not yet settled (parked),
 * a look that waits for another thread's close (unlooked). The loop
 * (record-ptrace-tracer.c) lets those go once they can.
 */
#include <errno.h>
#include <linux/kcmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "job/job.h"
#include "record/ptrace/record-ptrace.h"

/* ---- tasks ------------------------------------------------------------------------- */

static struct pt_task *task_find(struct pt_tracer *tr, pid_t tid)
{
	return u64map_get(&tr->tasks, (uint64_t)tid);
}

/* The task for tid, made if new (a child whose first stop came before its parent's event). */
struct pt_task *pt_task_get(struct pt_tracer *tr, pid_t tid)
{
	struct pt_task *t = task_find(tr, tid);

	if (t)
		return t;
	t = calloc(1, sizeof(*t));
	if (!t || u64map_put(&tr->tasks, (uint64_t)tid, t)) {
		free(t);
		tr->error = -ENOMEM;
		return NULL;
	}
	t->tid = t->tgid = tid;
	return t;
}

/* t no longer uses its fd table and memory (it exits, or its state moved). */
void pt_task_leave(struct pt_tracer *tr, struct pt_task *t)
{
	pt_fdtable_put(tr, t->fds, t->tid);
	pt_mm_put(tr, t->mm);
	t->fds = NULL;
	t->mm = NULL;
}

/* t is gone: forget it, and what it was waiting for. */
static void task_free(struct pt_tracer *tr, struct pt_task *t)
{
	u64map_del(&tr->tasks, (uint64_t)t->tid);
	pt_seek_end(t, false, 0);
	pt_fdtable_undecided_drop(tr, t);
	pt_fd_look_drop(tr, t);
	pt_task_leave(tr, t);
	free(t->exec.path);
	free(t->truncated);
	free(t);
}

void pt_resume(struct pt_task *t, int request, int sig)
{
	ptrace(request, t->tid, 0, sig);	/* ESRCH: killed meanwhile; its exit follows */
}

/* ---- events ------------------------------------------------------------------------ */

/* Do two tasks share a kernel object (KCMP_FILES, KCMP_VM)? -1 if unknown. */
static int shares(pid_t a, pid_t b, int type)
{
	long r = syscall(SYS_kcmp, a, b, type, 0, 0);

	return r < 0 ? -1 : r == 0;
}

/* The process a new thread belongs to (Tgid in /proc/TID/status); tid if unknown. */
static pid_t tgid_of(pid_t tid)
{
	char path[64], buf[1024];
	uint64_t tgid;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	if (hs_procfs_read(path, buf, sizeof(buf)) > 0 && hs_procfs_find_u64(buf, "Tgid", &tgid))
		return (pid_t)tgid;
	return tid;
}

/* Parent t forked, vforked or cloned child c (ev: the PTRACE_EVENT). */
static void on_new_child(struct pt_tracer *tr, struct pt_task *t, struct pt_task *c, int ev)
{
	int files, vm;

	c->vfork_child = ev == PTRACE_EVENT_VFORK;
	if (!tr->recording)
		goto start;
	c->tgid = ev == PTRACE_EVENT_CLONE ? tgid_of(c->tid) : c->tid;
	files = shares(t->tid, c->tid, KCMP_FILES);
	vm = shares(t->tid, c->tid, KCMP_VM);
	if (files < 0)
		files = ev == PTRACE_EVENT_CLONE;
	if (vm < 0)
		vm = ev != PTRACE_EVENT_FORK;
	if (!c->fds) {
		if (files && t->fds) {
			c->fds = t->fds;
			t->fds->users++;
		} else {
			c->fds = pt_fdtable_fork(tr, t, c);
		}
	}
	if (!c->mm) {
		if (vm && t->mm) {
			c->mm = t->mm;
			t->mm->users++;
		} else {
			c->mm = pt_mm_new(tr);
		}
	}
start:
	c->preexec = false;
	if (c->held && !c->copy_of) {	/* its first stop came first: let it go now */
		c->held = false;
		c->started = true;
		pt_resume(c, PTRACE_CONT, 0);
	}
}

/* Task t (or the thread whose tid it took) has exec'd. */
static struct pt_task *on_exec(struct pt_tracer *tr, struct pt_task *t, pid_t former,
			       struct hs_job *job, struct pt_outcome *out)
{
	struct pt_task *old = former != t->tid ? task_find(tr, former) : NULL;
	struct stat exe;
	char path[64];

	if (old) {	/* a thread other than the leader exec'd: it takes the leader's tid */
		pid_t tid = t->tid;

		task_free(tr, t);
		u64map_del(&tr->tasks, (uint64_t)former);
		old->tid = tid;
		if (u64map_put(&tr->tasks, (uint64_t)tid, old))
			tr->error = -ENOMEM;
		t = old;
	}
	if (t->preexec && t->tid == tr->root) {
		const char *stage = NULL;

		/* the exec-status pipe closed with the exec: nothing in it */
		out->exec_error = hs_job_exec_result(job, &stage);
	}
	t->preexec = false;
	t->vfork_child = false;
	if (!tr->recording)
		return t;
	pt_mm_put(tr, t->mm);
	t->mm = pt_mm_new(tr);
	t->fds = pt_fdtable_after_exec(tr, t);
	pt_mm_exec_headers(tr, t);
	/* a #! script: the kernel read its first line, then ran its interpreter */
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)t->tid);
	if (t->exec.set && stat(path, &exe) == 0 &&
	    (exe.st_dev != t->exec.dev || exe.st_ino != t->exec.ino)) {
		struct pt_file *f = pt_file_lookup(tr, t->exec.path, t->exec.path, t->exec.ino, 0);

		if (f)
			pt_queue_access(tr, f, 0, 1, HS_FILE_EXEC);
	}
	return t;
}

/*
 * PTRACE_EVENT_EXIT: t is about to exit; its files and memory are still
 * there. Returns false if t is to stay stopped until its look is done.
 */
static bool on_exit_event(struct pt_tracer *tr, struct pt_task *t)
{
	bool looked = true;

	if (tr->recording && !t->preexec) {
		/* a thread's fds stay with the tasks it shared them with */
		if (t->fds && t->fds->users == 1)
			looked = pt_fd_look(tr, t);
		if (t->mm && !t->mm->final_scanned && !t->vfork_child &&
		    (t->mm->users == 1 || t->tid == t->tgid)) {
			pt_mm_scan(tr, t, 0, UINT64_MAX);
			t->mm->final_scanned = true;
		}
	}
	if (!looked) {
		t->look_then = PT_LOOK_LEAVE;
		return false;
	}
	pt_task_leave(tr, t);
	return true;
}

/* ---- system-call stops ------------------------------------------------------------------ */

/* A call through an ABI pt_decode does not know: its reads are lost; said once. */
static void warn_abi(struct pt_tracer *tr, struct pt_task *t, uint32_t arch)
{
	tr->lost++;
	if (tr->warned_abi)
		return;
	tr->warned_abi = true;
	pt_report_warning(tr, "process %d uses a system-call ABI the ptrace backend does not "
			  "know (audit arch 0x%x): its reads are not recorded", (int)t->tid, arch);
}

/* A stop at a trapped call's entry. */
static void on_seccomp_stop(struct pt_tracer *tr, struct pt_task *t)
{
	struct __ptrace_syscall_info si;
	struct pt_syscall sc;
	bool want_exit = false;

	tr->stats.seccomp++;
	if (!tr->recording ||
	    ptrace(PTRACE_GET_SYSCALL_INFO, t->tid, sizeof(si), &si) <= 0 ||
	    si.op != PTRACE_SYSCALL_INFO_SECCOMP) {
		pt_resume(t, PTRACE_CONT, 0);
		return;
	}
	if (!pt_decode(si.arch, si.seccomp.nr, si.seccomp.args, &sc)) {
		warn_abi(tr, t, si.arch);
	} else if (!t->preexec || sc.call == PT_EXECVE || sc.call == PT_EXECVEAT) {
		t->call = sc;
		if (tr->opts->trace && !t->preexec)
			pt_fd_sample_inputs(tr, t);	/* what was read before this stop, first */
		want_exit = pt_call_entry(tr, t, &sc);
	}
	t->at_exit = want_exit;
	if (t->unlooked) {	/* stays stopped until its look is done */
		t->look_then = want_exit ? PTRACE_SYSCALL : PTRACE_CONT;
		return;
	}
	pt_resume(t, want_exit ? PTRACE_SYSCALL : PTRACE_CONT, 0);
}

/* A stop at the exit of a call whose entry asked for it (PTRACE_SYSCALL). */
static void on_syscall_exit_stop(struct pt_tracer *tr, struct pt_task *t)
{
	struct __ptrace_syscall_info si;

	tr->stats.exits++;
	if (t->at_exit && tr->recording &&
	    ptrace(PTRACE_GET_SYSCALL_INFO, t->tid, sizeof(si), &si) > 0 &&
	    si.op == PTRACE_SYSCALL_INFO_EXIT && !si.exit.is_error)
		pt_call_exit(tr, t, si.exit.rval);
	pt_seek_end(t, false, 0);	/* a seek that failed: the position stays */
	t->at_exit = false;
	if (!t->parked)
		pt_resume(t, PTRACE_CONT, 0);
}

/* The signals that stop a process group (a group stop, kept with PTRACE_LISTEN). */
static bool is_stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/* ---- a stop, or an end ---------------------------------------------------------------- */

/*
 * An end (a task exited or was killed), or a stop: a trapped call, the exit
 * of one, an event the tracer asked for (PTRACE_O_*), or a signal.
 */
void pt_on_status(struct pt_tracer *tr, struct pt_run *run, pid_t tid, int status)
{
	struct pt_task *t = task_find(tr, tid);
	unsigned long msg = 0;
	int sig, ev;

	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		if (tid == tr->root) {
			run->out.wait_status = status;
			run->root_gone = true;
		}
		if (t)
			task_free(tr, t);
		return;
	}
	if (!WIFSTOPPED(status))
		return;
	if (!t && !(t = pt_task_get(tr, tid))) {
		ptrace(PTRACE_CONT, tid, 0, 0);
		return;
	}
	t->stops++;
	if (t->unlooked)	/* kept stopped, it stops again: killed (SIGKILL wakes it) */
		pt_fd_look_drop(tr, t);
	sig = WSTOPSIG(status);
	ev = (unsigned)status >> 16;
	if (ev != PTRACE_EVENT_SECCOMP)
		tr->stats.events++;
	if (sig == (SIGTRAP | 0x80)) {
		on_syscall_exit_stop(tr, t);
		return;
	}
	switch (ev) {
	case 0:	/* a signal for the task: hand it over */
		pt_resume(t, PTRACE_CONT, sig);
		return;
	case PTRACE_EVENT_SECCOMP:
		on_seccomp_stop(tr, t);
		return;
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
	case PTRACE_EVENT_CLONE: {
		struct pt_task *c;

		if (ptrace(PTRACE_GETEVENTMSG, tid, 0, &msg) == 0 && (c = pt_task_get(tr, (pid_t)msg)))
			on_new_child(tr, t, c, ev);
		pt_resume(t, PTRACE_CONT, 0);
		return;
	}
	case PTRACE_EVENT_EXEC:
		if (ptrace(PTRACE_GETEVENTMSG, tid, 0, &msg) < 0)
			msg = (unsigned long)tid;
		t = on_exec(tr, t, (pid_t)msg, &run->job, &run->out);
		pt_resume(t, PTRACE_CONT, 0);
		return;
	case PTRACE_EVENT_EXIT:
		if (on_exit_event(tr, t))
			pt_resume(t, PTRACE_CONT, 0);
		return;
	case PTRACE_EVENT_STOP:
		if (!t->started) {	/* a new child's first stop */
			if ((t->fds && !t->copy_of) || !tr->recording || t->tid == tr->root) {
				t->started = true;
				pt_resume(t, PTRACE_CONT, 0);
			} else {
				t->held = true;	/* until its parent's event says what it shares */
			}
		} else if (is_stop_signal(sig)) {
			pt_resume(t, PTRACE_LISTEN, 0);	/* a group stop: stay stopped */
			if (t->tid == tr->root && tr->recording)
				pt_report_stopped(tr, sig);	/* hotset follows it */
		} else {
			pt_resume(t, PTRACE_CONT, 0);
		}
		return;
	default:
		pt_resume(t, PTRACE_CONT, 0);
	}
}
