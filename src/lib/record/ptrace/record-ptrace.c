/*
 * record-ptrace.c - the ptrace + seccomp record backend, hotset's side:
 * fork the tracer process (record-ptrace-tracer.c), apply the reports it
 * sends through a pipe to the recording, and forward the signals sent to
 * hotset to the job. Also the report channel itself, both ends.
 *
 * Reports are records in a byte stream: a header (type, length), then the
 * fields. The tracer numbers the files it reports (FILE) and refers to them
 * by number (ACCESS, FLAGS); the last record (END) says how the run went.
 * The tracer buffers records and writes them in large pieces: hotset does
 * not need them before the end, and the job is not slowed by a write per
 * stop. If the tracer dies without END, the recording failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "job/job.h"
#include "record/record.h"
#include "record/ptrace/record-ptrace.h"

enum msg_type {
	MSG_STARTED = 1, MSG_FILE, MSG_ACCESS, MSG_FLAGS, MSG_WARNING, MSG_END, MSG_STOPPED,
};

struct msg_head {
	uint32_t type;
	uint32_t len;		/* of the whole record, header included */
};

struct msg_started {
	struct msg_head h;
	int32_t pid;
};

struct msg_stopped {
	struct msg_head h;
	int32_t sig;
};

struct msg_file {
	struct msg_head h;
	uint32_t local;
	uint32_t flags;
	uint32_t output;
	uint32_t path_len;
	struct hs_file_id id;
	/* then the path */
};

struct msg_access {
	struct msg_head h;
	uint32_t local;
	uint32_t how;
	uint64_t first, last;
};

struct msg_flags {
	struct msg_head h;
	uint32_t local;
	uint32_t flags;
};

struct msg_end {
	struct msg_head h;
	struct pt_outcome out;
};

#define OUT_FLUSH_AT (60u << 10)
#define MSG_MAX (sizeof(struct msg_file) + 8192)

/* ---- the tracer's end ---------------------------------------------------------------- */

void pt_report_flush(struct pt_tracer *tr)
{
	size_t done = 0;

	while (done < tr->out_len && !tr->report_broken) {
		ssize_t n = write(tr->report_fd, tr->out + done, tr->out_len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			tr->report_broken = true;	/* hotset is gone: nothing to tell */
		else
			done += (size_t)n;
	}
	tr->out_len = 0;
}

/* Append a record of len bytes (head first, tail after it); flush when large. */
static void put(struct pt_tracer *tr, void *msg, size_t len, uint32_t type, const void *tail,
		size_t tail_len)
{
	struct msg_head *h = msg;

	if (tr->report_broken)
		return;
	if (tr->out_cap - tr->out_len < len + tail_len) {
		size_t cap = tr->out_cap ? tr->out_cap : OUT_FLUSH_AT + MSG_MAX;
		char *v = tr->out ? tr->out : malloc(cap);

		if (!v) {
			tr->error = -ENOMEM;
			return;
		}
		tr->out = v;
		tr->out_cap = cap;
		pt_report_flush(tr);
		if (len + tail_len > tr->out_cap)
			return;
	}
	h->type = type;
	h->len = (uint32_t)(len + tail_len);
	memcpy(tr->out + tr->out_len, msg, len);
	if (tail_len)
		memcpy(tr->out + tr->out_len + len, tail, tail_len);
	tr->out_len += len + tail_len;
	if (tr->out_len >= OUT_FLUSH_AT)
		pt_report_flush(tr);
}

void pt_report_started(struct pt_tracer *tr, pid_t root)
{
	struct msg_started m = { .pid = root };

	put(tr, &m, sizeof(m), MSG_STARTED, NULL, 0);
	pt_report_flush(tr);
}

void pt_report_stopped(struct pt_tracer *tr, int sig)
{
	struct msg_stopped m = { .sig = sig };

	put(tr, &m, sizeof(m), MSG_STOPPED, NULL, 0);
	pt_report_flush(tr);
}

void pt_report_file(struct pt_tracer *tr, struct pt_file *f)
{
	size_t len = strlen(f->path);
	struct msg_file m = {
		.local = f->local, .flags = f->flags, .output = f->output,
		.path_len = (uint32_t)len, .id = f->id,
	};

	if (len > MSG_MAX - sizeof(m))
		return;
	put(tr, &m, sizeof(m), MSG_FILE, f->path, len);
	f->reported = true;
	f->reported_flags = f->flags;
}

void pt_report_access(struct pt_tracer *tr, struct pt_file *f, uint64_t first, uint64_t last,
		      unsigned how)
{
	struct msg_access m = { .local = f->local, .how = how, .first = first, .last = last };

	if (!f->reported) {
		pt_report_file(tr, f);
	} else if (f->flags & ~f->reported_flags) {
		struct msg_flags fm = { .local = f->local, .flags = f->flags };

		put(tr, &fm, sizeof(fm), MSG_FLAGS, NULL, 0);
		f->reported_flags = f->flags;
	}
	put(tr, &m, sizeof(m), MSG_ACCESS, NULL, 0);
}

void pt_report_warning(struct pt_tracer *tr, const char *fmt, ...)
{
	struct msg_head h;
	char text[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	put(tr, &h, sizeof(h), MSG_WARNING, text, strlen(text));
}

void pt_report_end(struct pt_tracer *tr, const struct pt_outcome *out)
{
	struct msg_end m = { .out = *out };

	put(tr, &m, sizeof(m), MSG_END, NULL, 0);
	pt_report_flush(tr);
}

/* ---- hotset's end ------------------------------------------------------------------- */

struct apply {
	const struct hs_record_opts *o;
	struct hs_recording *rec;
	int64_t *idx;		/* local file number -> recording index */
	size_t nidx;
	bool forwarding, ended;
	struct pt_outcome out;
	int rc;			/* first error feeding the recording */
};

static int64_t index_of(struct apply *a, uint32_t local)
{
	return local < a->nidx ? a->idx[local] : -1;
}

static void apply_file(struct apply *a, const struct msg_file *m, const char *path)
{
	int64_t idx;
	int rc = 0;

	if (m->output)
		rc = hs_recording_output(a->rec, &m->id, path, m->path_len);
	idx = rc ? rc : hs_recording_file(a->rec, &m->id, path, m->path_len);
	if (idx < 0) {
		a->rc = (int)idx;
		return;
	}
	if (m->local >= a->nidx) {
		size_t had = a->nidx;

		if (hs_grow(&a->idx, &a->nidx, (size_t)m->local + 1, sizeof(*a->idx))) {
			a->rc = -ENOMEM;
			return;
		}
		for (size_t i = had; i < a->nidx; i++)
			a->idx[i] = -1;
	}
	a->idx[m->local] = idx;
	if (m->flags)
		hs_recording_flag(a->rec, idx, m->flags);
}

/* Apply one record (len bytes at p, aligned copy made here). */
static void apply(struct apply *a, const char *p, size_t len)
{
	struct msg_head h;

	memcpy(&h, p, sizeof(h));
	switch (h.type) {
	case MSG_STARTED: {
		struct msg_started m;

		if (len < sizeof(m))
			break;
		memcpy(&m, p, sizeof(m));
		if (!a->forwarding && hs_job_forward_signals(m.pid) == 0)
			a->forwarding = true;
		break;
	}
	case MSG_STOPPED: {	/* hotset follows the job's stops (job control) */
		struct msg_stopped m;

		if (len >= sizeof(m) && a->forwarding) {
			memcpy(&m, p, sizeof(m));
			hs_job_stopped(m.sig);
		}
		break;
	}
	case MSG_FILE: {
		struct msg_file m;

		if (len < sizeof(m))
			break;
		memcpy(&m, p, sizeof(m));
		if (m.path_len == len - sizeof(m))
			apply_file(a, &m, p + sizeof(m));
		break;
	}
	case MSG_ACCESS: {
		struct msg_access m;
		int64_t idx;
		int rc;

		if (len < sizeof(m))
			break;
		memcpy(&m, p, sizeof(m));
		idx = index_of(a, m.local);
		if (idx >= 0 && (rc = hs_recording_access(a->rec, idx, m.first, m.last, m.how)))
			a->rc = rc;
		break;
	}
	case MSG_FLAGS: {
		struct msg_flags m;

		if (len < sizeof(m))
			break;
		memcpy(&m, p, sizeof(m));
		hs_recording_flag(a->rec, index_of(a, m.local), m.flags);
		break;
	}
	case MSG_WARNING: {
		char text[256];
		size_t n = len - sizeof(h) < sizeof(text) - 1 ? len - sizeof(h) : sizeof(text) - 1;

		memcpy(text, p + sizeof(h), n);
		text[n] = '\0';
		if (a->o->warn)
			a->o->warn(a->o->ctx, text);
		break;
	}
	case MSG_END:
		if (len >= sizeof(struct msg_end)) {
			struct msg_end m;

			memcpy(&m, p, sizeof(m));
			a->out = m.out;
			a->ended = true;
		}
		break;
	}
}

/* Read and apply records until END or the end of the pipe. */
static void read_reports(struct apply *a, int fd)
{
	size_t cap = OUT_FLUSH_AT + 2 * MSG_MAX, have = 0, at;
	char *buf = malloc(cap);

	if (!buf) {
		a->rc = -ENOMEM;
		return;
	}
	while (!a->ended) {
		ssize_t n = read(fd, buf + have, cap - have);
		struct msg_head h;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		have += (size_t)n;
		for (at = 0; have - at >= sizeof(h) && !a->ended; at += h.len) {
			memcpy(&h, buf + at, sizeof(h));
			if (h.len < sizeof(h) || h.len > MSG_MAX + sizeof(struct msg_end)) {
				a->rc = -EPROTO;
				goto out;
			}
			if (have - at < h.len)
				break;
			apply(a, buf + at, h.len);
		}
		memmove(buf, buf + at, have - at);
		have -= at;
	}
out:
	free(buf);
}

int hs_record_ptrace(const struct hs_record_opts *o, struct hs_recording *rec,
		     struct hs_record_result *res, struct hs_error *err)
{
	static const char *const stages[] = { "exec", "cgroup", "setup", "exec" };
	struct apply a = { .o = o, .rec = rec };
	int fds[2], status, rc;
	pid_t tracer;

	if ((rc = hs_record_ptrace_probe_arch(err)))
		return rc;
	if (pipe2(fds, O_CLOEXEC) < 0)
		return hs_error_set(err, errno, "cannot make a pipe: %s", strerror(errno));
	tracer = fork();
	if (tracer < 0) {
		rc = errno;
		close(fds[0]);
		close(fds[1]);
		return hs_error_set(err, rc, "cannot fork the tracer: %s", strerror(rc));
	}
	if (tracer == 0) {
		close(fds[0]);
		_exit(pt_tracer_run(o, fds[1]));
	}
	close(fds[1]);
	read_reports(&a, fds[0]);
	close(fds[0]);
	if (a.forwarding)
		hs_job_stop_forwarding();
	free(a.idx);
	if (!a.ended) {
		while (waitpid(tracer, &status, 0) < 0 && errno == EINTR)
			;
		if (a.rc)
			return hs_error_set(err, -a.rc, "cannot read the tracer's reports: %s",
					    strerror(-a.rc));
		if (WIFSIGNALED(status))
			return hs_error_set(err, EIO, "the tracer process was killed (signal %d)",
					    WTERMSIG(status));
		return hs_error_set(err, EIO, "the tracer process ended without a report");
	}
	if (!a.out.tracer_stays)	/* else it goes on following what the job left running */
		while (waitpid(tracer, &status, 0) < 0 && errno == EINTR)
			;
	if (a.out.error)
		return hs_error_set(err, -a.out.error, "%s", a.out.message);
	if (a.rc)
		return hs_error_set(err, -a.rc, "cannot record: %s", strerror(-a.rc));
	if (a.out.exec_error && a.out.exec_stage == 2)
		return hs_error_set(err, -a.out.exec_error, "the job cannot install the seccomp "
				    "filter: %s", strerror(-a.out.exec_error));
	res->wait_status = a.out.wait_status;
	res->exec_error = a.out.exec_error;
	res->exec_stage = stages[a.out.exec_stage & 3];
	res->still_running = a.out.still_running;
	res->helper = a.out.usage;
	res->lost_events = a.out.lost;
	res->mmap_pages = "faulted";
	return 0;
}

/* ---- can it run here? --------------------------------------------------------------- */

int hs_record_ptrace_probe_arch(struct hs_error *why)
{
#if (defined(__x86_64__) || defined(__aarch64__)) && defined(SYS_seccomp)
	(void)why;
	return 0;
#else
	return hs_error_set(why, ENOTSUP, "the ptrace backend supports x86_64 and aarch64 only");
#endif
}

/*
 * Try what recording needs, on a child that does nothing: PTRACE_SEIZE and
 * a seccomp filter. About a millisecond.
 */
int hs_record_ptrace_probe(struct hs_error *why)
{
	struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	struct sock_fprog prog = { 1, &allow };
	int fds[2], status, rc;
	char c = 0, msg[256];
	pid_t pid;

	if ((rc = hs_record_ptrace_probe_arch(why)))
		return rc;
	if (pipe2(fds, O_CLOEXEC) < 0)
		return hs_error_set(why, errno, "cannot make a pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0) {
		rc = errno;
		close(fds[0]);
		close(fds[1]);
		return hs_error_set(why, rc, "cannot fork: %s", strerror(rc));
	}
	if (pid == 0) {
		close(fds[1]);
		if (read(fds[0], &c, 1) != 1)
			_exit(0);
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
		    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
			_exit(errno & 0xff);
		_exit(0);
	}
	close(fds[0]);
	rc = 0;
	if (ptrace(PTRACE_SEIZE, pid, 0, PTRACE_O_EXITKILL) < 0) {
		rc = errno;
		pt_explain_seize(rc, msg, sizeof(msg));
		rc = hs_error_set(why, rc, "%s", msg);
	} else if (write(fds[1], "g", 1) != 1) {
		rc = hs_error_set(why, errno, "cannot start the probe: %s", strerror(errno));
	}
	close(fds[1]);
	while (waitpid(pid, &status, __WALL) < 0 && errno == EINTR)
		;
	if (!rc && WIFEXITED(status) && WEXITSTATUS(status))
		rc = hs_error_set(why, WEXITSTATUS(status), "seccomp filters are not available "
				  "here: %s", strerror(WEXITSTATUS(status)));
	return rc;
}
