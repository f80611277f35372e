/*
 * usage-report.c - what a job cost, in words for people and in JSON for
 * scripts (shared by `hotset time` and `hotset record`).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/atomic.h"
#include "job/job.h"
#include "usage-report.h"
#include "cmd.h"
#include "messages.h"
#include "output.h"

static double pct(double part, double whole)
{
	return whole > 0 ? 100.0 * part / whole : 0;
}

static void print_verdict(FILE *f, const struct hs_usage *u)
{
	double p = pct(u->io_wait_s, u->wall_s);
	char size[16];

	human_size(u->read_bytes_disk, size);
	if (u->pressure == HS_PRESSURE_UNKNOWN && u->io_known)
		fprintf(f, "Time spent waiting for the disk is unknown; the job read %s from it.\n",
			size);
	else if (u->pressure == HS_PRESSURE_UNKNOWN)
		fprintf(f, "Time spent waiting for the disk is unknown.\n");
	else if (p >= 10 && u->io_known)
		fprintf(f, "%.0f%% of the wall time was spent waiting for the disk (%s read from it).\n",
			p, size);
	else if (p >= 10)
		fprintf(f, "%.0f%% of the wall time was spent waiting for the disk.\n", p);
	else if (p >= 1)
		fprintf(f, "Only %.0f%% of the wall time was spent waiting for the disk.\n", p);
	else
		fprintf(f, "The job hardly waited for the disk (%.1f%% of the wall time).\n", p);
}

void say_warning(void *ctx, const char *msg)
{
	(void)ctx;
	warning("%s", msg);
}

void report_record_end(const struct hs_record_run *r)
{
	if (r->save_rc)
		error("%s", r->msg);
	else if (r->res.lost_events)
		warning("%llu accesses could not be recorded: the profile is incomplete",
			r->res.lost_events);
}

void print_job_status(FILE *f, int wait_status)
{
	int code = hs_job_exit_code(wait_status);

	if (WIFSIGNALED(wait_status))
		fprintf(f, "Command terminated by signal %d (%s)\n", WTERMSIG(wait_status),
			strsignal(WTERMSIG(wait_status)));
	else if (code)
		fprintf(f, "Command exited with non-zero status %d\n", code);
}

void json_job_status(struct json *j, int wait_status)
{
	json_i64(j, "exit_status", hs_job_exit_code(wait_status));
	if (WIFSIGNALED(wait_status))
		json_i64(j, "signal", WTERMSIG(wait_status));
	else
		json_null(j, "signal");
}

void json_exit_code(struct json *j, int code)
{
	json_i64(j, "exit_status", code);
	json_null(j, "signal");
}

/* A byte count, or "unknown", then what it means if what is set. */
static void print_bytes(FILE *f, const char *label, bool known, uint64_t v, const char *what)
{
	char size[16];

	fprintf(f, "%-16s %11s%s%s\n", label, known ? human_size(v, size) : "unknown",
		what ? "   " : "", what ? what : "");
}

void print_usage_report(FILE *f, const struct hs_usage *u, bool notes)
{
	fprintf(f, "%-16s %9.2f s\n", "Wall time", u->wall_s);
	fprintf(f, "%-16s %9.2f s\n", "User time", u->user_s);
	fprintf(f, "%-16s %9.2f s\n", "System time", u->sys_s);
	if (u->pressure == HS_PRESSURE_UNKNOWN) {
		fprintf(f, "%-16s %9s   (see the note below)\n", "I/O wait", "unknown");
	} else {
		fprintf(f, "%-16s %9.2f s   %.1f%% of the wall time; all tasks blocked %.1f%%\n",
			"I/O wait", u->io_wait_s, pct(u->io_wait_s, u->wall_s),
			pct(u->io_wait_full_s, u->wall_s));
		fprintf(f, "%-16s %9.2f s   runnable, waiting for a CPU\n", "CPU wait",
			u->cpu_wait_s);
		if (u->memory_wait_s > 0)
			fprintf(f, "%-16s %9.2f s   reclaiming or re-reading evicted pages\n",
				"Memory wait", u->memory_wait_s);
	}
	fprintf(f, "%-16s %9llu major, %llu minor\n", "Page faults",
		(unsigned long long)u->major_faults, (unsigned long long)u->minor_faults);
	fprintf(f, "%-16s %9llu voluntary, %llu involuntary\n", "Context switches",
		(unsigned long long)u->voluntary_switches,
		(unsigned long long)u->involuntary_switches);
	print_bytes(f, "Max resident", true, u->max_rss_bytes, "peak of the largest process");
	print_bytes(f, "Read from disk", u->io_known, u->read_bytes_disk, NULL);
	print_bytes(f, "Read from cache", u->read_bytes_cache_known, u->read_bytes_cache,
		    u->read_bytes_cache_known ? NULL :
		    "(read() bytes count pipes and sockets too: see hotset-time(1))");
	print_bytes(f, "read() bytes", u->io_known, u->rchar,
		    "returned by read calls: files, pipes, sockets");
	print_bytes(f, "Written to disk", u->io_known, u->write_bytes_disk, NULL);
	print_bytes(f, "write() bytes", u->io_known, u->wchar,
		    "passed to write calls: files, pipes, sockets");
	print_verdict(f, u);
	for (int i = 0; notes && i < u->nnotes; i++)
		fprintf(f, "note: %s\n", u->notes[i]);
}

/* A figure, or null when it is not known. */
static void json_seconds(struct json *j, const char *key, bool known, double v)
{
	if (known)
		json_double(j, key, v);
	else
		json_null(j, key);
}

static void json_count(struct json *j, const char *key, bool known, uint64_t v)
{
	if (known)
		json_u64(j, key, v);
	else
		json_null(j, key);
}

void json_usage(struct json *j, const struct hs_usage *u)
{
	static const char *const method[] = {
		[HS_PRESSURE_UNKNOWN] = NULL,
		[HS_PRESSURE_JOB_CGROUP] = "job-cgroup",
		[HS_PRESSURE_OWN_CGROUP] = "hotset-cgroup",
	};
	static const struct hs_usage none;	/* the command never ran: nothing known */
	bool ran = u != NULL, psi, io;

	if (!u)
		u = &none;
	psi = ran && u->pressure != HS_PRESSURE_UNKNOWN;
	io = ran && u->io_known;
	json_seconds(j, "wall_seconds", ran, u->wall_s);
	json_seconds(j, "user_seconds", ran, u->user_s);
	json_seconds(j, "sys_seconds", ran, u->sys_s);
	json_seconds(j, "io_wait_seconds", psi, u->io_wait_s);
	json_seconds(j, "io_wait_full_seconds", psi, u->io_wait_full_s);
	json_seconds(j, "io_pressure_some_pct", psi, pct(u->io_wait_s, u->wall_s));
	json_seconds(j, "io_pressure_full_pct", psi, pct(u->io_wait_full_s, u->wall_s));
	json_seconds(j, "cpu_wait_seconds", psi, u->cpu_wait_s);
	json_seconds(j, "memory_wait_seconds", psi, u->memory_wait_s);
	json_string(j, "io_wait_method", method[u->pressure]);
	json_count(j, "major_faults", ran, u->major_faults);
	json_count(j, "minor_faults", ran, u->minor_faults);
	json_count(j, "voluntary_context_switches", ran, u->voluntary_switches);
	json_count(j, "involuntary_context_switches", ran, u->involuntary_switches);
	json_count(j, "max_rss_bytes", ran, u->max_rss_bytes);
	json_count(j, "disk_read_bytes", io, u->read_bytes_disk);
	json_count(j, "cache_read_bytes", ran && u->read_bytes_cache_known, u->read_bytes_cache);
	json_count(j, "rchar_bytes", io, u->rchar);
	json_count(j, "disk_write_bytes", io, u->write_bytes_disk);
	json_count(j, "wchar_bytes", io, u->wchar);
	json_count(j, "still_running", ran, (uint64_t)u->still_running);
	json_begin_array(j, "notes");
	for (int i = 0; i < u->nnotes; i++)
		json_string(j, NULL, u->notes[i]);
	json_end_array(j);
}

static const char *const service_kind[] = {
	[HS_SERVICE_PID] = "pid", [HS_SERVICE_CGROUP] = "cgroup", [HS_SERVICE_UNIT] = "unit",
};

void print_service_report(FILE *f, const struct hs_service *s, const struct hs_service_usage *u,
			  bool notes)
{
	char size[16];

	fprintf(f, "%-16s %s %s", "Service", hs_service_option(s->kind), s->arg);
	if (s->kind != HS_SERVICE_PID && strcmp(s->arg, s->cg_dir))
		fprintf(f, " (%s)", s->cg_dir);
	fprintf(f, ": %zu process%s seen, %zu at the end%s\n", u->procs_seen,
		u->procs_seen == 1 ? "" : "es", u->procs_now, u->ended ? " (it ended)" : "");
	fprintf(f, "%-16s %9.2f s user, %.2f s system%s\n", "Service CPU", u->user_s, u->sys_s,
		u->cpu_partial ? " (at least)" : "");
	fprintf(f, "%-16s %11s%s\n", "Service read", human_size(u->read_bytes, size),
		u->io_partial ? "   from disk (at least)" : "   from disk");
	fprintf(f, "%-16s %11s%s\n", "Service written", human_size(u->write_bytes, size),
		u->io_partial ? "   for disk (at least)" : "   for disk");
	if (u->wait == HS_SERVICE_WAIT_PSI)
		fprintf(f, "%-16s %9.2f s   %.1f%% of the wall time (its cgroup's io.pressure)\n",
			"Service I/O wait", u->io_wait_s, pct(u->io_wait_s, u->wall_s));
	else if (u->wait == HS_SERVICE_WAIT_DELAYACCT)
		fprintf(f, "%-16s %9.2f s   summed over its threads%s\n", "Service I/O wait",
			u->io_wait_s, u->wait_partial ? " (at least)" : "");
	else
		fprintf(f, "%-16s %9s   (see the note below)\n", "Service I/O wait", "unknown");
	if (!u->memcg_known)
		fprintf(f, "%-16s %11s\n", "Service memory", "unknown");
	else if (u->limit_known && u->limit != UINT64_MAX)
		fprintf(f, "%-16s %11s   limit of its memory cgroup %s (v%d)\n", "Service memory",
			human_size(u->limit, size), u->memcg_name, u->memcg_version);
	else
		fprintf(f, "%-16s %11s   limit of its memory cgroup %s (v%d)\n", "Service memory",
			u->limit_known ? "none" : "unknown", u->memcg_name, u->memcg_version);
	for (int i = 0; notes && i < u->nnotes; i++)
		fprintf(f, "note: %s\n", u->notes[i]);
}

void json_service(struct json *j, const struct hs_service *s, const struct hs_service_usage *u)
{
	static const char *const method[] = {
		[HS_SERVICE_WAIT_UNKNOWN] = NULL,
		[HS_SERVICE_WAIT_PSI] = "cgroup-psi",
		[HS_SERVICE_WAIT_DELAYACCT] = "delayacct",
	};
	bool wait = u && u->wait != HS_SERVICE_WAIT_UNKNOWN;

	if (!s || !u) {
		json_null(j, "service");
		return;
	}
	json_begin_object(j, "service");
	json_string(j, "target", service_kind[s->kind]);
	json_string(j, "name", s->arg);
	json_string(j, "cgroup", s->kind == HS_SERVICE_PID ? NULL : s->cg_dir);
	if (s->kind == HS_SERVICE_PID)
		json_i64(j, "pid", s->pid);
	else
		json_null(j, "pid");
	json_u64(j, "processes", u->procs_seen);
	json_u64(j, "processes_at_end", u->procs_now);
	json_bool(j, "ended", u->ended);
	json_double(j, "wall_seconds", u->wall_s);
	json_seconds(j, "user_seconds", u->cpu_known, u->user_s);
	json_seconds(j, "sys_seconds", u->cpu_known, u->sys_s);
	json_bool(j, "cpu_lower_bound", u->cpu_partial);
	json_count(j, "disk_read_bytes", u->io_known, u->read_bytes);
	json_count(j, "disk_write_bytes", u->io_known, u->write_bytes);
	json_bool(j, "disk_lower_bound", u->io_partial);
	json_seconds(j, "io_wait_seconds", wait, u->io_wait_s);
	json_string(j, "io_wait_method", method[u->wait]);
	json_bool(j, "io_wait_lower_bound", u->wait_partial);
	json_string(j, "memory_cgroup", u->memcg_known ? u->memcg_name : NULL);
	json_count(j, "memory_cgroup_version", u->memcg_known, (uint64_t)u->memcg_version);
	if (u->memcg_known && u->limit_known)
		json_bool(j, "memory_limited", u->limit != UINT64_MAX);
	else
		json_null(j, "memory_limited");
	json_count(j, "memory_limit_bytes", u->memcg_known && u->limit_known && u->limit != UINT64_MAX,
		   u->limit);
	json_begin_array(j, "notes");
	for (int i = 0; i < u->nnotes; i++)
		json_string(j, NULL, u->notes[i]);
	json_end_array(j);
	json_end_object(j);
}

/* ---- waited on a peer ------------------------------------------------------- */

static const char *const peer_transport[] = {
	[HS_PEER_UNIX] = "unix", [HS_PEER_TCP] = "tcp", [HS_PEER_TCP6] = "tcp6",
};
static const char *const peer_where[] = {
	[HS_PEER_PROCESS] = "process", [HS_PEER_HIDDEN] = "hidden",
	[HS_PEER_GONE] = "gone", [HS_PEER_REMOTE] = "remote",
};

/* The command that measures the peer while the job runs again (hs_peer_measure()), or NULL. */
static char **suggestion(const struct hs_peer *peer, char *const *argv, char pid[16])
{
	const char *opt, *arg;
	size_t n = 0;
	char **v;

	if (!hs_peer_measure(peer, pid, &opt, &arg))
		return NULL;
	while (argv[n])
		n++;
	if (!(v = calloc(n + 6, sizeof(*v))))
		return NULL;
	v[0] = "hotset";
	v[1] = "time";
	v[2] = (char *)opt;
	v[3] = (char *)arg;
	v[4] = "--";
	memcpy(v + 5, argv, (n + 1) * sizeof(*v));
	return v;
}

/* Who the peer is, as far as the user may know: "mariadbd (pid 12, cgroup /x)". */
static void print_peer_who(FILE *f, const struct hs_peer *p)
{
	switch (p->where) {
	case HS_PEER_PROCESS:
		print_text(f, p->name, strlen(p->name));
		fprintf(f, " (pid %d", (int)p->pid);
		if (p->cgroup[0]) {
			fprintf(f, ", cgroup ");
			print_path(f, p->cgroup, strlen(p->cgroup));
		}
		fprintf(f, ")");
		break;
	case HS_PEER_HIDDEN:
		if (p->uid_known && p->uid != (uint32_t)geteuid())
			fprintf(f, "a process of another user (uid %u)", (unsigned)p->uid);
		else if (p->uid_known)
			fprintf(f, "a process of uid %u that hotset cannot see", (unsigned)p->uid);
		else
			fprintf(f, "a process hotset cannot see");
		break;
	case HS_PEER_GONE:
		fprintf(f, "a process of this machine that hotset could not find (the other end was "
			   "closed, or is in another network namespace)");
		break;
	case HS_PEER_REMOTE:
		fprintf(f, "another host");
		break;
	}
}

/* Where: "a unix socket /run/x.sock", "a TCP connection to 127.0.0.1:3306". */
static void print_peer_where(FILE *f, const struct hs_peer *p)
{
	if (p->transport == HS_PEER_UNIX) {
		fprintf(f, "a unix socket");
		if (p->address[0]) {
			fputc(' ', f);
			print_path(f, p->address, strlen(p->address));
		}
	} else {
		fprintf(f, "a TCP connection to %s (from %s)", p->address, p->local);
	}
}

void print_waited_on(FILE *f, const struct hs_waited_on *w, const struct hs_peers *peers,
		     char *const *argv, bool notes)
{
	const struct hs_peer *p = w->peer;
	char pid[16], **cmd = suggestion(p, argv, pid);
	char *line = cmd ? shell_join(cmd) : NULL;

	fprintf(f, "%-16s %9.2f s   %.0f%% of the wall time %s: on ", "Waited on peer", w->seconds,
		100.0 * w->share, w->io_wait_known ? "neither on a CPU nor on its disk" :
		"off a CPU (its I/O wait is unknown)");
	print_peer_who(f, p);
	fprintf(f, ", at the other end of ");
	print_peer_where(f, p);
	fprintf(f, "\n");
	if (line)
		fprintf(f, "%-16s %s\n", "Measure it with", line);
	else if (p->where == HS_PEER_HIDDEN)
		fprintf(f, "%-16s run hotset as root, or as that user, to name the process\n",
			"Measure it");
	if (peers->n > 1 || peers->more)
		fprintf(f, "%-16s %zu other peer%s seen (see --json)\n", "", peers->n - 1 + peers->more,
			plural(peers->n - 1 + peers->more));
	for (int i = 0; notes && i < peers->nnotes; i++)
		fprintf(f, "note: %s\n", peers->notes[i]);
	free(line);
	free(cmd);
}

static void json_peer(struct json *j, const char *key, const struct hs_peer *p)
{
	bool process = p->where == HS_PEER_PROCESS;

	json_begin_object(j, key);
	json_string(j, "transport", peer_transport[p->transport]);
	json_string(j, "where", peer_where[p->where]);
	json_string(j, "address", p->address);
	json_string(j, "local_address", p->transport == HS_PEER_UNIX ? NULL : p->local);
	json_double(j, "held_seconds", p->held_s);
	json_count(j, "pid", process, (uint64_t)p->pid);
	json_string(j, "name", process ? p->name : NULL);
	json_string(j, "cgroup", process && p->cgroup[0] ? p->cgroup : NULL);
	json_count(j, "uid", p->uid_known, p->uid);
	json_end_object(j);
}

void json_waited_on(struct json *j, const struct hs_waited_on *w, const struct hs_peers *peers,
		    char *const *argv)
{
	char pid[16], **cmd;

	if (!w || !peers) {
		json_null(j, "waited_on");
		return;
	}
	json_begin_object(j, "waited_on");
	json_double(j, "seconds", w->seconds);
	json_double(j, "wall_pct", 100.0 * w->share);
	json_bool(j, "io_wait_known", w->io_wait_known);
	json_peer(j, "peer", w->peer);
	json_begin_array(j, "suggested_command");
	if ((cmd = suggestion(w->peer, argv, pid)))
		for (char **a = cmd; *a; a++)
			json_string(j, NULL, *a);
	json_end_array(j);
	free(cmd);
	json_begin_array(j, "peers");
	for (size_t i = 0; i < peers->n; i++)
		json_peer(j, NULL, &peers->v[i]);
	json_end_array(j);
	json_u64(j, "peers_not_listed", peers->more);
	json_begin_array(j, "notes");
	for (int i = 0; i < peers->nnotes; i++)
		json_string(j, NULL, peers->notes[i]);
	json_end_array(j);
	json_end_object(j);
}

int report_open(const char *path, FILE **f)
{
	struct hs_error err = { 0 };
	int fd;

	*f = stderr;
	if (!path)
		return 0;
	if (!*path) {
		error("an empty report FILE names no file");
		return EXIT_HOTSET;
	}
	/* written in place, as a shell's > would, but never through another user's link */
	if ((fd = hs_open_output(path, O_WRONLY | O_CREAT | O_TRUNC, 0666, &err)) < 0) {
		error("cannot open %s: %s", path, err.msg);
		return EXIT_HOTSET;
	}
	if (!(*f = fdopen(fd, "w"))) {
		error("cannot open %s: %s", path, strerror(errno));
		close(fd);
		return EXIT_HOTSET;
	}
	return 0;
}

void report_after_job(void)
{
	struct sigaction ign = { .sa_handler = SIG_IGN };

	sigaction(SIGXFSZ, &ign, NULL);
	sigaction(SIGPIPE, &ign, NULL);
}

int report_close(FILE *f, const char *path, int code)
{
	bool failed = fflush(f) != 0 || ferror(f);

	if (f != stderr && fclose(f) != 0)
		failed = true;
	if (!failed)
		return code;
	/* a closed stderr pipe is the reader's choice */
	if (f != stderr || errno != EPIPE)
		error("cannot write the report to %s: %s", path ? path : "standard error",
		      strerror(errno));
	return code ? code : EXIT_HOTSET;
}
