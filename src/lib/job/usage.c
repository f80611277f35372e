/*
 * usage.c - measure what a job costs, for the whole process tree.
 *
 * The job gets a cgroup v2 directory of its own, a child of hotset's
 * cgroup (so that every limit hotset runs under still applies to it), and
 * its pressure files give the time its tasks spent stalled on I/O, CPU and
 * memory. An unprivileged user may create one only where the cgroup was
 * delegated to them; failing that, if hotset's own cgroup holds nothing but
 * hotset, the job simply stays there and that cgroup is measured. Before
 * the job starts, a throwaway child checks that it can join the new cgroup,
 * so that a cgroup the job could not enter never stops the job from
 * running.
 *
 * CPU time, faults, context switches, peak memory and I/O bytes come from
 * the children the caller reaped: getrusage(RUSAGE_CHILDREN), and
 * /proc/self/io less the I/O of hotset's own live threads (a reaped
 * child's counts join its parent's). The sampler thread, which keeps PSI's
 * per-CPU aggregation windows short, counts the bytes it reads itself so
 * that they can be taken out too.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/hotset.h"
#include "kernel/cgroup.h"
#include "kernel/procfs.h"
#include "kernel/psi.h"
#include "job/usage.h"

/*
 * How often the sampler reads io.pressure. A read folds each CPU's stall
 * time into the total, weighted by that CPU's busy time in jiffies: long
 * windows dilute a job that moves between CPUs, windows of a few jiffies
 * round the busy time away. 100 ms under-counted least in measurements.
 */
#define SAMPLE_MS 100
#define CGROUP_PREFIX "hotset-job."

/* Everything that is read at both ends of the run. */
struct snapshot {
	double t;
	struct rusage children, self;
	bool io_ok;
	struct hs_proc_io io_children;	/* reaped children (and ended threads) only */
	bool cg_ok;
	struct hs_psi io, cpu, memory;
	uint64_t cg_user_us, cg_sys_us;
	bool rios_ok;
	uint64_t rios;			/* io.stat: read requests, summed over devices */
};

struct hs_usage_probe {
	enum hs_pressure_source source;
	bool made_dir;			/* dir is ours to remove */
	char dir[PATH_MAX];		/* the measured cgroup */
	char parent[PATH_MAX];		/* where leftover processes go back to */
	char procs[PATH_MAX + 16];	/* dir/cgroup.procs, for the job to join */

	pthread_t sampler;
	bool sampler_on;
	pthread_mutex_t lock;
	pthread_cond_t wake;		/* the sampler's start, and its stop */
	bool started, stop;
	int pressure_fd;		/* dir/io.pressure, for the sampler */
	int cpu_fd;			/* dir/cpu.stat, for the timeline */
	struct hs_usage_timeline *timeline;	/* or NULL: not asked for */
	uint64_t t0_ns;
	uint64_t sampler_rchar;		/* bytes the sampler read (under lock) */

	struct snapshot begin;
	struct hs_usage_helper helper;	/* see hs_usage_add_helper() */
	int nnotes;
	char notes[HS_USAGE_NOTES][HS_USAGE_NOTE_LEN];
};

static void note(struct hs_usage_probe *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void note(struct hs_usage_probe *p, const char *fmt, ...)
{
	va_list ap;

	if (p->nnotes >= HS_USAGE_NOTES)
		return;
	va_start(ap, fmt);
	vsnprintf(p->notes[p->nnotes++], HS_USAGE_NOTE_LEN, fmt, ap);
	va_end(ap);
}

static double tv_seconds(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

/* ---- making the job's cgroup ---------------------------------------------- */

/* Remove empty hotset-job.PID[.N] directories left by a hotset that was killed. */
static void remove_stale(const char *base)
{
	DIR *d = opendir(base);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		char path[PATH_MAX + 300];
		long pid;
		char *end;

		if (strncmp(de->d_name, CGROUP_PREFIX, strlen(CGROUP_PREFIX)))
			continue;
		pid = strtol(de->d_name + strlen(CGROUP_PREFIX), &end, 10);
		if (pid <= 0 || (*end && *end != '.') || pid == (long)getpid())
			continue;
		if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		snprintf(path, sizeof(path), "%s/%s", base, de->d_name);
		rmdir(path);	/* fails, harmlessly, if something still runs there */
	}
	closedir(d);
}

/*
 * Can a child of ours move itself into the cgroup behind procs? A
 * throwaway child tries, so that the real job never fails to start for
 * want of a cgroup. Returns 0 or -errno.
 */
static int try_join(const char *procs)
{
	int status;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0)
		_exit(-hs_cgroup_enter(procs));
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (!WIFEXITED(status))
		return -EIO;
	return -WEXITSTATUS(status);
}

/* The steps of making the job's cgroup, as the verbs of an error message. */
static const char *const step_verb[] = { "create", "read io.pressure in", "move a process into" };
enum step { STEP_MKDIR, STEP_PRESSURE, STEP_JOIN };

/*
 * Make BASE/hotset-job.PID, check that pressure can be read there and that
 * a child can join it. Returns 0 with p->dir/procs/parent set, or -errno
 * (with *step saying which step failed) and nothing left behind.
 */
static int make_job_cgroup(struct hs_usage_probe *p, const char *base, enum step *step)
{
	char buf[512];
	int rc = 0;
	ssize_t n;

	remove_stale(base);
	*step = STEP_MKDIR;
	for (int i = 0; i < 10; i++) {
		char name[64];

		if (i == 0)
			snprintf(name, sizeof(name), CGROUP_PREFIX "%d", (int)getpid());
		else
			snprintf(name, sizeof(name), CGROUP_PREFIX "%d.%d", (int)getpid(), i);
		rc = hs_cgroup_make(base, name, p->dir, sizeof(p->dir));
		if (rc != -EEXIST)
			break;
	}
	if (rc)
		return rc;
	*step = STEP_PRESSURE;
	n = hs_procfs_read_at(p->dir, "io.pressure", buf, sizeof(buf));
	if (n < 0) {
		rc = (int)n;
		goto fail;
	}
	*step = STEP_JOIN;
	snprintf(p->procs, sizeof(p->procs), "%s/cgroup.procs", p->dir);
	if ((rc = try_join(p->procs)))
		goto fail;
	snprintf(p->parent, sizeof(p->parent), "%s", base);
	p->made_dir = true;
	p->source = HS_PRESSURE_JOB_CGROUP;
	return 0;
fail:
	rmdir(p->dir);
	p->dir[0] = p->procs[0] = '\0';
	return rc;
}

/* Why pressure cannot be read, as the rest of a sentence. */
static const char *pressure_error(int err)
{
	if (err == -ENOENT)
		return "the kernel does not track pressure stalls (PSI); it needs CONFIG_PSI and, "
		       "on some distributions, the boot option psi=1";
	if (err == -EOPNOTSUPP)
		return "pressure tracking is switched off for this cgroup (cgroup.pressure is 0)";
	return strerror(-err);
}

static void find_cgroup(struct hs_usage_probe *p)
{
	char own[PATH_MAX], mount[PATH_MAX], buf[512];
	enum step step = STEP_MKDIR;
	const char *base;
	ssize_t n;
	int rc;

	if (hs_cgroup2_dirs(own, mount, sizeof(own)) < 0) {
		note(p, "io_wait is unknown: no cgroup2 filesystem is mounted, and the job needs a "
			"cgroup v2 of its own to measure it");
		return;
	}
	/* the job's own cgroup goes under ours, or at the top if ours is not visible */
	base = own[0] ? own : mount;
	rc = make_job_cgroup(p, base, &step);
	if (!rc)
		return;
	if (step == STEP_PRESSURE) {
		note(p, "io_wait is unknown: %s", pressure_error(rc));
		return;
	}
	/* a cgroup holding hotset alone can be measured in place */
	if (own[0] && hs_cgroup_holds_only(own, getpid())) {
		n = hs_procfs_read_at(own, "io.pressure", buf, sizeof(buf));
		if (n >= 0) {
			snprintf(p->dir, sizeof(p->dir), "%s", own);
			p->source = HS_PRESSURE_OWN_CGROUP;
			note(p, "I/O, CPU and memory pressure were measured in hotset's own cgroup, "
				"which the job shares with hotset (hotset could not %s a cgroup in %s: %s)",
			     step_verb[step], base, strerror(-rc));
			return;
		}
	}
	if (rc == -EACCES || rc == -EPERM || rc == -EROFS)
		note(p, "io_wait is unknown: it is measured in a cgroup made for the job, and uid %u "
			"may not %s one in %s (%s: that cgroup is not delegated to it). Run hotset as "
			"root, or inside a cgroup delegated to you, e.g. with "
			"'systemd-run --user --scope -- hotset ...'",
		     (unsigned)geteuid(), step_verb[step], base, strerror(-rc));
	else
		note(p, "io_wait is unknown: hotset could not %s a cgroup for the job in %s: %s",
		     step_verb[step], base, strerror(-rc));
}

/* Move what still runs in the job's cgroup back to the parent, and remove it. */
static void remove_job_cgroup(struct hs_usage_probe *p)
{
	int rc = hs_cgroup_remove(p->dir, p->parent);

	if (rc)
		note(p, "the job's cgroup %s could not be removed: %s; remove it with rmdir once it "
			"is empty", p->dir, strerror(-rc));
}

/* Processes in the measured cgroup, other than hotset itself. */
static int cgroup_processes(const struct hs_usage_probe *p)
{
	int n;

	if (p->source == HS_PRESSURE_UNKNOWN || (n = hs_cgroup_nprocs(p->dir)) < 0)
		return 0;
	return p->source == HS_PRESSURE_OWN_CGROUP && n > 0 ? n - 1 : n;
}

/* ---- snapshots -------------------------------------------------------------- */

static uint64_t minus(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

/*
 * The I/O counted to the process but not to any live thread: what reaped
 * children (and ended threads) did. extra_rchar is what ended threads of
 * the probe itself read, to be taken out. The threads are read first:
 * what those reads return is counted to this thread only afterwards, so
 * the whole-process figure read last includes it, and it is taken out.
 */
static bool children_io(uint64_t extra_rchar, struct hs_proc_io *out)
{
	struct hs_proc_io total = { 0 }, thread;
	uint64_t self_reads = 0;
	char path[300];
	struct dirent *de;
	ssize_t n;
	DIR *d;

	d = opendir("/proc/self/task");
	if (!d)
		return false;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/io", de->d_name);
		if ((n = hs_proc_io_read(path, &thread)) < 0)
			continue;	/* the thread ended: its counts moved to the process */
		self_reads += (uint64_t)n;
		total.rchar += thread.rchar;
		total.wchar += thread.wchar;
		total.read_bytes += thread.read_bytes;
		total.write_bytes += thread.write_bytes;
	}
	closedir(d);
	if (hs_proc_io_read(NULL, &thread) < 0)
		return false;
	total.rchar += self_reads + extra_rchar;
	memset(out, 0, sizeof(*out));
	out->rchar = minus(thread.rchar, total.rchar);
	out->wchar = minus(thread.wchar, total.wchar);
	out->read_bytes = minus(thread.read_bytes, total.read_bytes);
	out->write_bytes = minus(thread.write_bytes, total.write_bytes);
	return true;
}

/*
 * The read requests of io.stat ("8:0 rbytes=1 wbytes=2 rios=3 ..." a
 * device): false when the io controller is not enabled for the cgroup.
 */
static bool io_stat_rios(const char *dir, uint64_t *out)
{
	char buf[4096];
	uint64_t sum = 0;
	bool any = false;

	if (hs_procfs_read_at(dir, "io.stat", buf, sizeof(buf)) < 0)
		return false;
	for (char *r = strstr(buf, " rios="); r; r = strstr(r + 1, " rios=")) {
		sum += strtoull(r + 6, NULL, 10);
		any = true;
	}
	*out = sum;
	return any || !buf[0];	/* an empty file: no I/O yet */
}

static void take_snapshot(struct hs_usage_probe *p, uint64_t extra_rchar, struct snapshot *s)
{
	char buf[1024];

	memset(s, 0, sizeof(*s));
	if (p->source != HS_PRESSURE_UNKNOWN) {
		s->cg_ok = hs_psi_read(p->dir, "io.pressure", &s->io) == 0;
		/* cpu and memory pressure are extras: a failure leaves them at 0 */
		hs_psi_read(p->dir, "cpu.pressure", &s->cpu);
		hs_psi_read(p->dir, "memory.pressure", &s->memory);
		s->rios_ok = io_stat_rios(p->dir, &s->rios);
		if (hs_procfs_read_at(p->dir, "cpu.stat", buf, sizeof(buf)) <= 0 ||
		    !hs_procfs_find_u64(buf, "user_usec", &s->cg_user_us) ||
		    !hs_procfs_find_u64(buf, "system_usec", &s->cg_sys_us))
			s->cg_ok = false;
	}
	getrusage(RUSAGE_SELF, &s->self);
	getrusage(RUSAGE_CHILDREN, &s->children);
	s->io_ok = children_io(extra_rchar, &s->io_children);
	s->t = hs_monotonic_seconds();
}

/* ---- the sampler -------------------------------------------------------------- */

/* One point of the timeline (under the lock): a failure to grow it only drops the point. */
static void add_sample(struct hs_usage_probe *p, const char *pressure, bool pressure_ok,
		       const char *cpu)
{
	struct hs_usage_timeline *tl = p->timeline;
	struct hs_psi psi;
	uint64_t usec;

	if (!hs_procfs_find_u64(cpu, "usage_usec", &usec) || !pressure_ok ||
	    hs_psi_parse(pressure, &psi) || hs_grow(&tl->v, &tl->cap, tl->n + 1, sizeof(*tl->v)))
		return;
	tl->v[tl->n++] = (struct hs_usage_sample){
		.t = (double)(hs_monotonic_ns() - p->t0_ns) / 1e9,
		.cpu_s = (double)usec / 1e6,
		.io_wait_s = (double)psi.some.total / 1e6,
	};
}

/*
 * Read io.pressure (and cpu.stat for the timeline), called with the lock
 * held, which it drops while reading. count: the reads are the sampler
 * thread's, to be taken out of the job's rchar (the main thread's own
 * reads are taken out as a live thread's).
 */
static void sample_now(struct hs_usage_probe *p, bool count)
{
	char buf[512], cpu[1024];
	ssize_t n, c;

	pthread_mutex_unlock(&p->lock);
	/* reading runs PSI's aggregation; the figures themselves are read at the end */
	n = pread(p->pressure_fd, buf, sizeof(buf) - 1, 0);
	if (n > 0)
		buf[n] = '\0';
	c = p->timeline ? pread(p->cpu_fd, cpu, sizeof(cpu) - 1, 0) : -1;
	pthread_mutex_lock(&p->lock);
	if (n > 0 && count)
		p->sampler_rchar += (uint64_t)n;
	if (c > 0) {
		p->sampler_rchar += count ? (uint64_t)c : 0;
		cpu[c] = '\0';
		add_sample(p, buf, n > 0, cpu);
	}
}

static void *sample_pressure(void *arg)
{
	struct hs_usage_probe *p = arg;
	uint64_t next = hs_monotonic_ns();

	pthread_mutex_lock(&p->lock);
	if (p->timeline)
		sample_now(p, true);
	p->started = true;
	pthread_cond_broadcast(&p->wake);
	while (!p->stop) {
		struct timespec deadline;	/* on the clock of hs_monotonic_ns(), as p->wake waits */

		next += SAMPLE_MS * 1000000ull;
		deadline.tv_sec = (time_t)(next / 1000000000u);
		deadline.tv_nsec = (long)(next % 1000000000u);
		while (!p->stop && pthread_cond_timedwait(&p->wake, &p->lock, &deadline) != ETIMEDOUT)
			;
		if (p->stop)
			break;
		sample_now(p, true);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

static void start_sampler(struct hs_usage_probe *p)
{
	char path[PATH_MAX + 16];
	pthread_condattr_t attr;
	sigset_t all, old;
	int rc;

	if (p->timeline) {
		snprintf(path, sizeof(path), "%s/cpu.stat", p->dir);
		if ((p->cpu_fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
			note(p, "the timeline of the run is empty: %s: %s", path, strerror(errno));
			p->timeline = NULL;
		}
	}
	snprintf(path, sizeof(path), "%s/io.pressure", p->dir);
	p->pressure_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (p->pressure_fd < 0) {
		note(p, "io.pressure could not be sampled during the run (%s): io_wait may be "
			"under-counted", strerror(errno));
		return;
	}
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&p->wake, &attr);
	pthread_condattr_destroy(&attr);
	/* signals are for the caller's threads: forwarding, SIGCHLD */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&p->sampler, NULL, sample_pressure, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		pthread_cond_destroy(&p->wake);
		close(p->pressure_fd);
		p->pressure_fd = -1;
		note(p, "io.pressure could not be sampled during the run (%s): io_wait may be "
			"under-counted", strerror(rc));
		return;
	}
	/*
	 * Wait until the thread runs its loop, where it only sleeps and
	 * preads: a process the caller forks from now on (a record tracer)
	 * cannot inherit a lock the thread held while starting (the
	 * sanitizers' allocators take one).
	 */
	pthread_mutex_lock(&p->lock);
	while (!p->started)
		pthread_cond_wait(&p->wake, &p->lock);
	pthread_mutex_unlock(&p->lock);
	p->sampler_on = true;
}

/* Stop the sampler; returns the bytes it read. */
static uint64_t stop_sampler(struct hs_usage_probe *p)
{
	if (!p->sampler_on)
		return 0;
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_signal(&p->wake);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->sampler, NULL);
	/* the timeline's first point is at the start, its last at the end */
	if (p->timeline) {
		pthread_mutex_lock(&p->lock);
		sample_now(p, false);
		pthread_mutex_unlock(&p->lock);
	}
	pthread_cond_destroy(&p->wake);
	close(p->pressure_fd);
	if (p->timeline)
		close(p->cpu_fd);
	p->sampler_on = false;
	return p->sampler_rchar;
}

/* ---- the API ------------------------------------------------------------------ */

int hs_usage_begin(struct hs_usage_probe **out)
{
	return hs_usage_begin_timeline(out, NULL);
}

int hs_usage_begin_timeline(struct hs_usage_probe **out, struct hs_usage_timeline *tl)
{
	struct hs_usage_probe *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	pthread_mutex_init(&p->lock, NULL);
	p->pressure_fd = p->cpu_fd = -1;
	p->timeline = tl;
	p->t0_ns = hs_monotonic_ns();
	find_cgroup(p);
	if (p->source != HS_PRESSURE_UNKNOWN)
		start_sampler(p);
	take_snapshot(p, 0, &p->begin);
	*out = p;
	return 0;
}

/* What getrusage says of the reaped children, less a baseline (NULL: none). */
static void rusage_counts(const struct rusage *a, const struct rusage *b, struct hs_usage_helper *x)
{
	static const struct rusage zero;

	if (!a)
		a = &zero;
	x->user_s = tv_seconds(b->ru_utime) - tv_seconds(a->ru_utime);
	x->sys_s = tv_seconds(b->ru_stime) - tv_seconds(a->ru_stime);
	x->user_s = x->user_s > 0 ? x->user_s : 0;
	x->sys_s = x->sys_s > 0 ? x->sys_s : 0;
	x->major_faults = minus((uint64_t)b->ru_majflt, (uint64_t)a->ru_majflt);
	x->minor_faults = minus((uint64_t)b->ru_minflt, (uint64_t)a->ru_minflt);
	x->voluntary_switches = minus((uint64_t)b->ru_nvcsw, (uint64_t)a->ru_nvcsw);
	x->involuntary_switches = minus((uint64_t)b->ru_nivcsw, (uint64_t)a->ru_nivcsw);
	/*
	 * A peak, not a sum: the largest of the reaped children (in KiB), as
	 * time(1) reports it. Children reaped before the baseline are forks of
	 * hotset that never exec'd (the cgroup check): no larger than the
	 * job's first process, which was one too until it exec'd.
	 */
	x->max_rss_bytes = (uint64_t)b->ru_maxrss * 1024;
}

static void io_counts(const struct hs_proc_io *a, const struct hs_proc_io *b,
		      struct hs_usage_helper *x)
{
	x->io_known = true;
	x->rchar = minus(b->rchar, a->rchar);
	x->wchar = minus(b->wchar, a->wchar);
	x->read_bytes = minus(b->read_bytes, a->read_bytes);
	x->write_bytes = minus(b->write_bytes, a->write_bytes);
}

void hs_usage_reaped(struct hs_usage_helper *x)
{
	static const struct hs_proc_io zero;
	struct rusage self, children;
	struct hs_proc_io io;

	memset(x, 0, sizeof(*x));
	if (getrusage(RUSAGE_SELF, &self) < 0 || getrusage(RUSAGE_CHILDREN, &children) < 0)
		return;
	x->known = true;
	rusage_counts(NULL, &children, x);
	x->self_user_s = tv_seconds(self.ru_utime);
	x->self_sys_s = tv_seconds(self.ru_stime);
	/* a helper is a fork of hotset: its counts started at zero */
	if (children_io(0, &io))
		io_counts(&zero, &io, x);
}

void hs_usage_timeline_release(struct hs_usage_timeline *tl)
{
	free(tl->v);
	memset(tl, 0, sizeof(*tl));
}

void hs_usage_add_helper(struct hs_usage_probe *p, const struct hs_usage_helper *x)
{
	if (x->known)
		p->helper = *x;
}

const char *hs_usage_cgroup_procs(const struct hs_usage_probe *p)
{
	return p->source == HS_PRESSURE_JOB_CGROUP ? p->procs : NULL;
}

static double usec_delta(uint64_t a, uint64_t b)
{
	return b > a ? (double)(b - a) / 1e6 : 0;
}

/* Fill u from the two snapshots, with notes on what is incomplete. */
static void compute(struct hs_usage_probe *p, const struct snapshot *a, const struct snapshot *b,
		    int still_running, struct hs_usage *u)
{
	struct hs_usage_helper c = { 0 };	/* the job's processes, as reaped */
	double cg_user, cg_sys, slack;
	int in_cgroup;
	bool cg = a->cg_ok && b->cg_ok;

	memset(u, 0, sizeof(*u));
	u->wall_s = b->t - a->t;
	if (p->helper.known) {
		c = p->helper;
	} else {
		rusage_counts(&a->children, &b->children, &c);
		if (a->io_ok && b->io_ok)
			io_counts(&a->io_children, &b->io_children, &c);
	}
	u->user_s = c.user_s;
	u->sys_s = c.sys_s;
	u->major_faults = c.major_faults;
	u->minor_faults = c.minor_faults;
	u->voluntary_switches = c.voluntary_switches;
	u->involuntary_switches = c.involuntary_switches;
	u->max_rss_bytes = c.max_rss_bytes;
	u->io_known = c.io_known;
	u->read_bytes_disk = c.read_bytes;
	u->rchar = c.rchar;
	u->wchar = c.wchar;
	u->write_bytes_disk = c.write_bytes;
	if (!c.io_known)
		note(p, "the kernel keeps no per-process I/O counts (/proc/self/io, "
			"CONFIG_TASK_IO_ACCOUNTING): bytes read and written are unknown");

	if (p->source != HS_PRESSURE_UNKNOWN && !cg)
		note(p, "io_wait is unknown: the cgroup's pressure files could not be read at the end");
	if (cg) {
		u->pressure = p->source;
		u->io_wait_s = usec_delta(a->io.some.total, b->io.some.total);
		u->io_wait_full_s = usec_delta(a->io.full.total, b->io.full.total);
		u->cpu_wait_s = usec_delta(a->cpu.some.total, b->cpu.some.total);
		u->memory_wait_s = usec_delta(a->memory.some.total, b->memory.some.total);
		/* stall time cannot exceed the run; PSI's aggregation can round over it */
		if (u->io_wait_s > u->wall_s)
			u->io_wait_s = u->wall_s;
		if (u->io_wait_full_s > u->io_wait_s)
			u->io_wait_full_s = u->io_wait_s;
	}

	/* a cgroup of the job's own counts its requests; hotset's own would count hotset's */
	if (p->source == HS_PRESSURE_JOB_CGROUP && a->rios_ok && b->rios_ok) {
		u->read_ios_known = true;
		u->read_ios = minus(b->rios, a->rios);
	}

	/* the cgroup also sees the CPU time of processes nobody waited for */
	in_cgroup = cg ? cgroup_processes(p) : 0;
	u->still_running = still_running > in_cgroup ? still_running : in_cgroup;
	if (cg) {
		cg_user = usec_delta(a->cg_user_us, b->cg_user_us);
		cg_sys = usec_delta(a->cg_sys_us, b->cg_sys_us);
		if (p->source == HS_PRESSURE_OWN_CGROUP) {
			/* hotset's own CPU time is in there too, and its helper's */
			cg_user -= tv_seconds(b->self.ru_utime) - tv_seconds(a->self.ru_utime) +
				   c.self_user_s;
			cg_sys -= tv_seconds(b->self.ru_stime) - tv_seconds(a->self.ru_stime) +
				  c.self_sys_s;
			cg_user = cg_user > 0 ? cg_user : 0;
			cg_sys = cg_sys > 0 ? cg_sys : 0;
		}
		slack = 0.05 * (c.user_s + c.sys_s);
		if (slack < 0.05)
			slack = 0.05;
		bool unwaited = cg_user + cg_sys > u->user_s + u->sys_s + slack;

		/*
		 * A cgroup of the job's own holds exactly the job: not the
		 * processes hotset runs beside it (a record backend's tracer).
		 */
		if (unwaited || p->source == HS_PRESSURE_JOB_CGROUP) {
			u->user_s = cg_user;
			u->sys_s = cg_sys;
		}
		if (unwaited && !u->still_running)
			note(p, "some processes of the job ended without being waited for (a "
				"parent ignored SIGCHLD): user and system time come from the "
				"job's cgroup, but their faults, context switches, memory and "
				"I/O bytes are not counted, so those figures are lower bounds");
	}
	if (u->still_running)
		note(p, "%d process%s started by the command %s still running when it exited and "
			"%s left running: what %s after that is not counted, and faults, context "
			"switches, memory and I/O bytes are lower bounds",
		     u->still_running, u->still_running == 1 ? "" : "es",
		     u->still_running == 1 ? "was" : "were", u->still_running == 1 ? "was" : "were",
		     u->still_running == 1 ? "it does" : "they do");
}

int hs_usage_end(struct hs_usage_probe *p, int still_running, struct hs_usage *out)
{
	struct snapshot end;
	uint64_t sampled;

	sampled = stop_sampler(p);
	if (out) {
		take_snapshot(p, sampled, &end);
		compute(p, &p->begin, &end, still_running, out);
	}
	if (p->made_dir)
		remove_job_cgroup(p);
	if (out) {
		/* notes from setup come first, then those of the run and the cleanup */
		for (int i = 0; i < p->nnotes && out->nnotes < HS_USAGE_NOTES; i++)
			memcpy(out->notes[out->nnotes++], p->notes[i], HS_USAGE_NOTE_LEN);
	}
	pthread_mutex_destroy(&p->lock);
	free(p);
	return 0;
}
