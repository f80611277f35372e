/*
 * record-bpf.c - the eBPF record backend, user side: load the programs of
 * record.bpf.c, run the job under them, and turn the events they send
 * through the ring buffer into the recording.
 *
 * Start-up matters (a job may take a second): the programs are raw
 * tracepoints, which need no vmlinux BTF to attach, and their CO-RE
 * relocations are made against a minimal BTF that the build extracted
 * from the kernel it ran on (record.btf.h). It is used only when this
 * kernel's build id is the build's; any other kernel costs the parse of
 * its full BTF (about 0.15 s of CPU), with the same result.
 *
 * The job's first process waits in before_exec, reading a pipe, until the
 * programs are attached; the kernel side recognises that read and starts
 * following the process (the pid that fork() returns to hotset is not the
 * kernel's if hotset runs in a pid namespace). Its exec and everything it
 * starts are then followed until it exits.
 *
 * What the events mean for the recording is record-bpf-events.c's.
 */
#ifdef HAVE_BPF
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/magic.h>
#include <linux/membarrier.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "job/job.h"
#include "kernel/procfs.h"
#include "record/record.h"
#include "record/bpf/record-bpf-events.h"
#include "record.skel.h"
#include "record.btf.h"

#define RINGBUF_BYTES (8u << 20)
#define WAKE_BYTES (RINGBUF_BYTES / 4)

/* ---- libbpf's messages: kept, never printed --------------------------------- */

static char libbpf_last[256];

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_WARN) {
		size_t n;

		vsnprintf(libbpf_last, sizeof(libbpf_last), fmt, ap);
		n = strlen(libbpf_last);
		while (n && libbpf_last[n - 1] == '\n')
			libbpf_last[--n] = '\0';
	}
	return 0;
}

/* ---- can it run here? ---------------------------------------------------------- */

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

static bool has_cap(const struct __user_cap_data_struct *d, int cap)
{
	return d[cap / 32].effective & (1u << (cap % 32));
}

/* The privileges and the kernel BTF that the backend needs (cheap checks). */
static int check_privileges(struct hs_error *why)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct caps[_LINUX_CAPABILITY_U32S_3] = { 0 };

	if (syscall(SYS_capget, &hdr, caps) < 0)
		return hs_error_set(why, errno, "cannot read this process's capabilities: %s",
				    strerror(errno));
	if (!(has_cap(caps, CAP_BPF) && has_cap(caps, CAP_PERFMON)) &&
	    !has_cap(caps, CAP_SYS_ADMIN))
		return hs_error_set(why, EPERM, "the bpf backend needs root: CAP_BPF and "
				    "CAP_PERFMON (or CAP_SYS_ADMIN)");
	if (access("/sys/kernel/btf/vmlinux", R_OK) < 0)
		return hs_error_set(why, ENOTSUP, "the bpf backend needs a kernel with BTF "
				    "(/sys/kernel/btf/vmlinux, CONFIG_DEBUG_INFO_BTF)");
	return 0;
}

int hs_record_bpf_probe(struct hs_error *why)
{
	libbpf_print_fn_t old;
	int rc = check_privileges(why);

	if (rc)
		return rc;
	old = libbpf_set_print(libbpf_quiet);
	/* tiny loads: what a seccomp filter, lockdown or an old kernel refuse */
	if (libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_RAW_TRACEPOINT, NULL) != 1)
		rc = hs_error_set(why, EPERM, "the kernel refuses to load eBPF tracing programs "
				  "here (seccomp, or kernel.unprivileged_bpf_disabled?)");
	else if (libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL) != 1 ||
		 libbpf_probe_bpf_helper(BPF_PROG_TYPE_RAW_TRACEPOINT, BPF_FUNC_loop, NULL) != 1)
		rc = hs_error_set(why, ENOTSUP, "the bpf backend needs Linux 5.17 or later "
				  "(ring buffer, bpf_loop)");
	else if (libbpf_probe_bpf_helper(BPF_PROG_TYPE_RAW_TRACEPOINT,
					 BPF_FUNC_probe_read_kernel, NULL) != 1)
		rc = hs_error_set(why, EPERM, "the kernel does not let eBPF programs read its "
				  "memory (lockdown=confidentiality?)");
	libbpf_set_print(old);
	return rc;
}

/* ---- the BTF to relocate against ------------------------------------------------ */

/* This kernel's GNU build id from /sys/kernel/notes; returns its length or 0. */
static size_t kernel_build_id(unsigned char *id, size_t cap)
{
	unsigned char buf[4096];
	size_t off = 0, len;
	int fd = open("/sys/kernel/notes", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n <= 0)
		return 0;
	len = (size_t)n;
	while (off + 12 <= len) {	/* Elf_Nhdr: namesz, descsz, type; then name, desc */
		uint32_t namesz, descsz, type;
		size_t name_off = off + 12, desc_off;

		memcpy(&namesz, buf + off, 4);
		memcpy(&descsz, buf + off + 4, 4);
		memcpy(&type, buf + off + 8, 4);
		desc_off = name_off + ((namesz + 3) & ~3u);
		if (desc_off + descsz > len)
			break;
		if (type == 3 && namesz == 4 && !memcmp(buf + name_off, "GNU", 4)) {
			if (descsz > cap)
				return 0;
			memcpy(id, buf + desc_off, descsz);
			return descsz;
		}
		off = desc_off + ((descsz + 3) & ~3u);
	}
	return 0;
}

/*
 * If this kernel is the one the build extracted record.btf.h from, put that
 * BTF in a memfd and return its fd (path /proc/self/fd/N), else -1.
 */
static int minimal_btf_fd(void)
{
	unsigned char id[64];
	size_t len = kernel_build_id(id, sizeof(id));
	int fd;

	if (!len || len != sizeof(hs_bpf_build_id) || memcmp(id, hs_bpf_build_id, len))
		return -1;
	fd = (int)syscall(SYS_memfd_create, "hotset-btf", 1 /* MFD_CLOEXEC */);
	if (fd < 0)
		return -1;
	if (write(fd, hs_bpf_min_btf, sizeof(hs_bpf_min_btf)) != (ssize_t)sizeof(hs_bpf_min_btf)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* ---- running the job ------------------------------------------------------------- */

/*
 * The job's first process is forked from this one, and the kernel counts
 * the pages it had before exec in its peak RSS (ru_maxrss): the ring
 * buffer's 16 MiB, mapped and resident, would be the job's. The maps'
 * mappings are not inherited, then.
 */
static void maps_not_inherited(void)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "re");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;

		if (strstr(line, "anon_inode:bpf-map") && sscanf(line, "%lx-%lx", &lo, &hi) == 2)
			madvise((void *)lo, hi - lo, MADV_DONTFORK);
	}
	fclose(f);
}


/* In the job's first process: wait until hotset says the programs are attached. */
static int hold_until_attached(void *ctx)
{
	return hs_job_gate_wait(ctx);
}

#define MAX_LINKS 16

static void detach(struct bpf_link **links, int *nlinks)
{
	while (*nlinks > 0)
		bpf_link__destroy(links[--*nlinks]);
}

/*
 * Load the programs and attach them (links[], *nlinks); on failure err says
 * why, and nothing is left loaded.
 */
static int load_programs(struct record_bpf **out, bool exact, struct bpf_link **links,
			 int *nlinks, bool *have_dio, struct hs_error *err)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts);
	struct record_bpf *skel;
	struct bpf_program *prog;
	char btf_path[64];
	int btf_fd = minimal_btf_fd(), rc;

	if (btf_fd >= 0) {
		snprintf(btf_path, sizeof(btf_path), "/proc/self/fd/%d", btf_fd);
		opts.btf_custom_path = btf_path;
	}
	skel = record_bpf__open_opts(&opts);
	if (!skel) {
		rc = -errno;
		goto out;
	}
	skel->rodata->page_shift = (uint32_t)__builtin_ctz(hs_page_size());
	skel->rodata->wake_bytes = WAKE_BYTES;
	skel->rodata->exact = exact;
	/* sched_switch runs at every switch of the machine: only for a trace */
	bpf_program__set_autoload(skel->progs.on_switch, exact);
	bpf_map__set_max_entries(skel->maps.events, RINGBUF_BYTES);
	rc = record_bpf__load(skel);
	if (rc)
		goto out;
	*have_dio = true;
	bpf_object__for_each_program(prog, skel->obj) {
		struct bpf_link *link;

		if (!bpf_program__autoload(prog))
			continue;	/* not loaded: not wanted here */
		if ((link = bpf_program__attach(prog))) {
			links[(*nlinks)++] = link;
			continue;
		}
		rc = -errno;
		if (prog == skel->progs.on_dio_begin) {	/* no such tracepoint: no O_DIRECT */
			*have_dio = false;
			rc = 0;
			continue;
		}
		snprintf(libbpf_last, sizeof(libbpf_last), "%s: %s", bpf_program__name(prog),
			 strerror(-rc));
		goto out;
	}
out:
	if (btf_fd >= 0)
		close(btf_fd);
	if (rc) {
		detach(links, nlinks);
		record_bpf__destroy(skel);
		return hs_error_set(err, -rc, "cannot load the eBPF programs: %s",
				    libbpf_last[0] ? libbpf_last : strerror(-rc));
	}
	*out = skel;
	return 0;
}

/* Move the ranges still being merged in the per-CPU slots to the recording. */
static void drain_pending(struct record_bpf *skel, struct bpf_events *s)
{
	int ncpus = libbpf_num_possible_cpus();
	struct hs_bpf_pending *slots;
	uint32_t zero = 0;

	if (ncpus <= 0 || !(slots = calloc((size_t)ncpus, sizeof(*slots))))
		return;
	if (!bpf_map_lookup_elem(bpf_map__fd(skel->maps.pending), &zero, slots))
		for (int i = 0; i < ncpus; i++)
			if (slots[i].ev.h.type == HS_BPF_PAGES)
				bpf_events_feed(s, &slots[i].ev, sizeof(slots[i].ev));
	free(slots);
}

/* Runs of the page programs skipped because one was already running on the CPU. */
static uint64_t recursion_misses(struct record_bpf *skel)
{
	struct bpf_program *prog;
	uint64_t n = 0;

	bpf_object__for_each_program(prog, skel->obj) {
		struct bpf_prog_info info;
		uint32_t len = sizeof(info);

		memset(&info, 0, sizeof(info));
		if (!bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len))
			n += info.recursion_misses;
	}
	return n;
}

/* Has the job's first process exited (not reaped yet)? */
static bool job_exited(const struct hs_job *job, int pidfd, const struct pollfd *pfd)
{
	siginfo_t si;

	if (pidfd >= 0)
		return pfd->revents & (POLLIN | POLLHUP | POLLERR);
	memset(&si, 0, sizeof(si));
	return !waitid(P_PID, (id_t)job->pid, &si, WEXITED | WNOHANG | WNOWAIT) && si.si_pid;
}

static bool map_empty(int fd)
{
	uint32_t key;

	return bpf_map_get_next_key(fd, NULL, &key) != 0;
}

static void warnf(const struct hs_record_opts *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void warnf(const struct hs_record_opts *o, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	if (!o->warn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	o->warn(o->ctx, msg);
}

/*
 * Take the events as they come until the job's first process exits (its
 * pidfd says so; without one, a look every 50 ms). 0 or -errno.
 */
static int follow_job(struct ring_buffer *rb, const struct hs_job *job, int pidfd,
		      struct hs_error *err)
{
	struct pollfd pfd[2];

	pfd[0] = (struct pollfd){ .fd = ring_buffer__epoll_fd(rb), .events = POLLIN };
	pfd[1] = (struct pollfd){ .fd = pidfd, .events = POLLIN };
	for (;;) {
		if (poll(pfd, pidfd >= 0 ? 2 : 1, pidfd >= 0 ? -1 : 50) < 0 && errno != EINTR)
			return hs_error_set(err, errno, "poll: %s", strerror(errno));
		ring_buffer__consume(rb);
		if (job_exited(job, pidfd, &pfd[1]))
			return 0;
	}
}

/*
 * The job is over: record nothing more, and move what is still on its way
 * (the ring, the per-CPU slots) to the recording; counts says how it went.
 */
static void stop_recording(struct record_bpf *skel, struct ring_buffer *rb, struct bpf_events *s,
			   struct bpf_events_counts *counts, struct hs_record_result *res)
{
	/* descendants left running may be inside a program */
	skel->bss->stopped = 1;
	if (!map_empty(bpf_map__fd(skel->maps.tracked)))
		syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0);	/* an RCU grace period */
	ring_buffer__consume(rb);
	drain_pending(skel, s);
	bpf_events_end(s);
	bpf_events_counts(s, counts);
	res->lost_events = skel->bss->lost + skel->bss->untracked + recursion_misses(skel);
	res->mmap_pages = "faulted";
}

/* What a recording that went well left out, in warnings (unseen: the first process never was). */
static void warn_missed(const struct hs_record_opts *o, const struct bpf_events_counts *counts,
			bool unseen, bool have_dio)
{
	if (unseen)
		warnf(o, "the job's first process was not seen: nothing was recorded");
	if (counts->unnamed)
		warnf(o, "%llu files read could not be named (no path known) and are left out",
		      (unsigned long long)counts->unnamed);
	if (counts->too_long)
		warnf(o, "%llu files read have paths too long to record and are left out",
		      (unsigned long long)counts->too_long);
	if (!have_dio)
		warnf(o, "O_DIRECT reads are not seen on this kernel (no iomap_dio_rw_begin "
		      "tracepoint)");
}

/* ---- a running service ---------------------------------------------------------- */

/* /proc/self/ns/pid's inode in the machine's own pid namespace (PROC_PID_INIT_INO) */
#define INIT_PID_NS_INO 0xEFFFFFFCu
#define REFRESH_NS 100000000u	/* how often the service's processes are listed again */

/*
 * The kernel side knows processes by their pids in the machine's pid
 * namespace; /proc shows hotset's. They are the same only in the first.
 */
static int check_pid_namespace(struct hs_error *err)
{
	struct stat st;

	if (stat("/proc/self/ns/pid", &st) == 0 && st.st_ino != INIT_PID_NS_INO)
		return hs_error_set(err, EOPNOTSUPP, "hotset runs in a pid namespace of its own, "
				    "whose pids the kernel side cannot match: record a service "
				    "from the machine's pid namespace");
	return 0;
}

/*
 * Follow the service's processes that are not followed yet: those there at
 * the start, then those that joined its cgroup since (a process it starts
 * is followed by the kernel side from its fork). Returns how many it has
 * now, or -errno. A pid listed here that ends before it is added stays in
 * the map until the run ends: harmless, unless the pid is reused meanwhile.
 */
static ssize_t follow_members(const struct hs_service *svc, int map_fd, pid_t **pids,
			      size_t *cap, size_t *followed, uint64_t *untracked)
{
	uint8_t active = HS_BPF_TRACK_ACTIVE;
	ssize_t n = hs_service_pids(svc, pids, cap);

	for (ssize_t i = 0; i < n; i++) {
		uint32_t key = (uint32_t)(*pids)[i];

		if (!bpf_map_update_elem(map_fd, &key, &active, BPF_NOEXIST))
			++*followed;
		else if (errno != EEXIST)
			++*untracked;	/* the map is full (E2BIG): what it reads is lost */
	}
	return n;
}

/*
 * Take the events until the window ends: the client's first process exits
 * (job), or else for_ns passes or stop_fd becomes readable. The service's
 * members are listed again every REFRESH_NS. 0 or -errno.
 */
static int follow_service(struct ring_buffer *rb, const struct hs_record_opts *o, int map_fd,
			  const struct hs_job *job, int pidfd, size_t *followed,
			  uint64_t *untracked, struct hs_error *err)
{
	struct pollfd pfd[2];
	uint64_t now = hs_monotonic_ns(), next = now + REFRESH_NS;
	uint64_t end = !job && o->for_ns ? now + o->for_ns : UINT64_MAX;
	size_t cap = 0;
	pid_t *pids = NULL;
	int rc = 0;

	pfd[0] = (struct pollfd){ .fd = ring_buffer__epoll_fd(rb), .events = POLLIN };
	pfd[1] = (struct pollfd){ .fd = job ? pidfd : o->stop_fd, .events = POLLIN };
	for (;;) {
		uint64_t until = next < end ? next : end;
		int ms = until > now ? (int)((until - now + 999999) / 1000000) : 0;

		pfd[1].revents = 0;
		if (poll(pfd, pfd[1].fd >= 0 ? 2 : 1, ms) < 0 && errno != EINTR) {
			rc = hs_error_set(err, errno, "poll: %s", strerror(errno));
			break;
		}
		ring_buffer__consume(rb);
		if (job ? job_exited(job, pidfd, &pfd[1]) : pfd[1].revents != 0)
			break;
		if ((now = hs_monotonic_ns()) >= end)
			break;
		if (now >= next) {
			follow_members(o->service, map_fd, &pids, &cap, followed, untracked);
			next = now + REFRESH_NS;
		}
	}
	free(pids);
	return rc;
}

/*
 * Record the service o->service while o->argv (if any) runs unrecorded:
 * the window of hs_record_opts. The programs are loaded; res and the
 * events are the caller's.
 */
static int record_service(const struct hs_record_opts *o, struct record_bpf *skel,
			  struct ring_buffer *rb, struct hs_record_result *res,
			  struct hs_error *err)
{
	struct hs_job_spec spec = { .argv = o->argv, .cgroup_procs = o->cgroup_procs };
	struct hs_job job = { .pid = -1, .status_fd = -1 };
	int map_fd = bpf_map__fd(skel->maps.tracked), pidfd = -1, rc, running;
	uint64_t untracked = 0;
	size_t cap = 0, followed = 0;
	pid_t *pids = NULL;
	ssize_t n;

	/* the service's processes first: what they read for the client from its start is theirs */
	n = follow_members(o->service, map_fd, &pids, &cap, &followed, &untracked);
	free(pids);
	if (n < 0)
		return hs_error_set(err, -n, "cannot list the processes of %s %s: %s",
				    hs_service_option(o->service->kind), o->service->arg,
				    strerror((int)-n));
	if (n == 0)
		return hs_error_set(err, ESRCH, "%s %s holds no process",
				    hs_service_option(o->service->kind), o->service->arg);
	if (o->following)
		o->following(o->ctx);
	if (o->argv) {
		hs_job_become_subreaper();
		if ((rc = hs_job_start(&spec, &job)))
			return hs_error_set(err, -rc, "cannot start %s: %s", o->argv[0],
					    strerror(-rc));
		hs_job_forward_signals(job.pid);
#ifdef SYS_pidfd_open
		pidfd = (int)syscall(SYS_pidfd_open, job.pid, 0);
#endif
		res->exec_error = hs_job_exec_result(&job, &res->exec_stage);
	}
	rc = follow_service(rb, o, map_fd, o->argv ? &job : NULL, pidfd, &followed, &untracked,
			    err);
	if (o->argv) {
		running = hs_job_wait_all(&job, &res->wait_status);
		res->still_running = running > 0 ? running : 0;
		if (running < 0 && !rc)
			rc = hs_error_set(err, -running, "cannot wait for %s: %s", o->argv[0],
					  strerror(-running));
		hs_job_stop_forwarding();
		close(job.status_fd);
		if (pidfd >= 0)
			close(pidfd);
	}
	res->service_procs = followed;
	skel->bss->untracked += untracked;
	return rc;
}

int hs_record_bpf(const struct hs_record_opts *o, struct hs_recording *rec,
		  struct hs_record_result *res, struct hs_error *err)
{
	struct bpf_events *s = NULL;
	struct bpf_events_counts counts;
	struct hs_job_gate hold = { -1, -1 };
	struct bpf_link *links[MAX_LINKS];
	struct hs_job_spec spec = {
		.argv = o->argv, .before_exec = hold_until_attached, .ctx = &hold,
		.cgroup_procs = o->cgroup_procs,
	};
	struct hs_job job = { .pid = -1, .status_fd = -1 };
	struct record_bpf *skel = NULL;
	struct ring_buffer *rb = NULL;
	libbpf_print_fn_t old_print = libbpf_set_print(libbpf_quiet);
	bool have_dio = false, signals = false;
	struct stat st;
	int pidfd = -1, nlinks = 0, rc, running;

	libbpf_last[0] = '\0';
	if ((rc = check_privileges(err)))
		goto out;
	if ((rc = bpf_events_new(rec, &s))) {
		rc = hs_error_set(err, -rc, "out of memory");
		goto out;
	}
	if ((rc = load_programs(&skel, o->trace, links, &nlinks, &have_dio, err)))
		goto out;
	rb = ring_buffer__new(bpf_map__fd(skel->maps.events), bpf_events_feed, s, NULL);
	if (!rb) {
		rc = hs_error_set(err, errno, "cannot read the eBPF ring buffer: %s", strerror(errno));
		goto out;
	}
	maps_not_inherited();
	if (o->service) {
		if (!(rc = check_pid_namespace(err)) &&
		    !(rc = record_service(o, skel, rb, res, err))) {
			stop_recording(skel, rb, s, &counts, res);
			if (counts.error)
				rc = hs_error_set(err, -counts.error, "cannot record: %s",
						  strerror(-counts.error));
			else
				warn_missed(o, &counts, false, have_dio);
		}
		goto out;
	}
	if ((rc = hs_job_gate_init(&hold))) {
		rc = hs_error_set(err, -rc, "cannot make a pipe: %s", strerror(-rc));
		goto out;
	}
	if (fstat(hold.rfd, &st) < 0) {
		rc = hs_error_set(err, errno, "cannot stat a pipe: %s", strerror(errno));
		goto out;
	}
	skel->bss->hold_dev = major(st.st_dev) << 20 | minor(st.st_dev);
	skel->bss->hold_ino = st.st_ino;
	hs_job_become_subreaper();
	if ((rc = hs_job_start(&spec, &job))) {
		rc = hs_error_set(err, -rc, "cannot start %s: %s", o->argv[0], strerror(-rc));
		goto out;
	}
	hs_job_forward_signals(job.pid);
	signals = true;
#ifdef SYS_pidfd_open
	pidfd = (int)syscall(SYS_pidfd_open, job.pid, 0);
#endif
	/* if this fails, the child saw EOF and gave up: exec_result says so */
	hs_job_gate_open(&hold);
	res->exec_error = hs_job_exec_result(&job, &res->exec_stage);

	rc = follow_job(rb, &job, pidfd, err);
	running = hs_job_wait_all(&job, &res->wait_status);
	res->still_running = running > 0 ? running : 0;
	if (running < 0 && !rc)
		rc = hs_error_set(err, -running, "cannot wait for %s: %s", o->argv[0],
				  strerror(-running));

	stop_recording(skel, rb, s, &counts, res);
	if (counts.error && !rc)
		rc = hs_error_set(err, -counts.error, "cannot record: %s", strerror(-counts.error));
	if (rc)
		goto out;
	warn_missed(o, &counts, skel->bss->hold_ino && !res->exec_error, have_dio);
out:
	if (signals)
		hs_job_stop_forwarding();
	if (job.status_fd >= 0)
		close(job.status_fd);
	if (pidfd >= 0)
		close(pidfd);
	hs_job_gate_close(&hold);
	ring_buffer__free(rb);
	detach(links, &nlinks);
	record_bpf__destroy(skel);
	bpf_events_free(s);
	libbpf_set_print(old_print);
	return rc;
}
#endif
