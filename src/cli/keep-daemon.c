/*
 * keep-daemon.c - the running keeper's side of `hotset keep`: a log line
 * for each of its events, readiness told to a --daemon parent and to
 * systemd, the pid file, the log, going to the background, and the state
 * checked before its lock is made.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/atomic.h"
#include "kernel/procfs.h"
#include "keep-daemon.h"
#include "cmd.h"
#include "messages.h"
#include "output.h"

/*
 * sd_notify(3) without libsystemd: a datagram to $NOTIFY_SOCKET (a path,
 * or an abstract name written with '@'), for Type=notify.
 */
static void notify(const char *msg)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t len;
	int fd;

	if (!path || (path[0] != '/' && path[0] != '@') || (len = strlen(path)) >= sizeof(sa.sun_path))
		return;
	memcpy(sa.sun_path, path, len);
	if (path[0] == '@')
		sa.sun_path[0] = '\0';
	if ((fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0)
		return;
	sendto(fd, msg, strlen(msg), MSG_NOSIGNAL, (const struct sockaddr *)&sa,
	       (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len));
	close(fd);
}

/* The keeper is running: the parent of --daemon may exit, systemd may go on. */
static void ready(struct keep *c)
{
	if (c->ready_fd >= 0) {
		if (write(c->ready_fd, "R", 1) < 0) {
			/* the parent is gone: nobody waits */
		}
		close(c->ready_fd);
		c->ready_fd = -1;
	}
	notify("READY=1");
}

/* One log line: "keep: ..." with paths escaped, in one write. */
static void say(const char *text, const char *path, const char *tail)
{
	struct line l;

	line_start(&l);
	line_add(&l, text, strlen(text));
	if (path)
		line_add_path(&l, path, strlen(path));
	if (tail)
		line_add(&l, tail, strlen(tail));
	line_write(&l);
}

/*
 * A line for each event (warnings alone with -q). One switch over the
 * kinds, long because each has its own sentence: the log's wording reads
 * best in one place, in the order of keep.h's list.
 */
void keep_log_event(void *ctx, const struct hs_keep_event *e)
{
	struct keep *c = ctx;
	const uint64_t ps = hs_page_size();
	char a[SIZE_STR_MAX], b[SIZE_STR_MAX], text[768], tail[512];

	if (e->kind == HS_KEEP_STARTED && c->quiet)
		ready(c);
	if (e->kind == HS_KEEP_EXITING)
		notify("STOPPING=1");
	if (c->quiet && e->kind != HS_KEEP_WARN)
		return;
	switch (e->kind) {
	case HS_KEEP_STARTED:
		snprintf(text, sizeof(text), "started: %zu profile%s, %llu file%s, %llu page%s (%s), "
			 "budget %s%s", e->profiles, plural(e->profiles), (unsigned long long)e->files,
			 plural(e->files), (unsigned long long)e->pages, plural(e->pages),
			 memory_size(e->pages, ps, a), human_size(e->budget, b), c->lock ? ", locking" : "");
		say(text, NULL, NULL);
		if (e->unknown) {
			snprintf(text, sizeof(text), "not watching %llu file%s: their residency is "
				 "unknown to %s (the kernel tells it to a file's owner, to users who "
				 "may write it, and to root)", (unsigned long long)e->unknown,
				 plural(e->unknown), geteuid() ? "this user" : "the owners of their "
				 "profiles, as whom root reads them");
			say(text, NULL, NULL);
		}
		if (e->stale) {
			snprintf(text, sizeof(text), "%llu file%s changed since the profile was made: "
				 "kept by path", (unsigned long long)e->stale, plural(e->stale));
			say(text, NULL, NULL);
		}
		ready(c);
		break;
	case HS_KEEP_LOCKED:
		snprintf(text, sizeof(text), "%s %llu page%s (%s) of %llu file%s; %s locked in all",
			 e->initial ? "locked" : "re-locked", (unsigned long long)e->pages,
			 plural(e->pages), memory_size(e->pages, ps, a), (unsigned long long)e->files,
			 plural(e->files), memory_size(e->bytes / ps, ps, b));
		say(text, NULL, NULL);
		break;
	case HS_KEEP_TRUNCATED:
		snprintf(tail, sizeof(tail), " (shorter): %llu locked page%s beyond its end unlocked",
			 (unsigned long long)e->pages, plural(e->pages));
		say("file truncated: ", e->path, tail);
		break;
	case HS_KEEP_PROTECTED:
		snprintf(text, sizeof(text), "protecting %s from reclaim: memory.low of ",
			 human_size(e->bytes, a));
		say(text, e->path, NULL);
		break;
	case HS_KEEP_WARMED:
		if (e->initial)
			snprintf(text, sizeof(text), "warmed %llu page%s (%s) of %llu file%s",
				 (unsigned long long)e->pages, plural(e->pages),
				 memory_size(e->pages, ps, a), (unsigned long long)e->files,
				 plural(e->files));
		else
			snprintf(text, sizeof(text), "re-warmed %llu page%s (%s) of %llu file%s: "
				 "%llu refault%s", (unsigned long long)e->pages, plural(e->pages),
				 memory_size(e->pages, ps, a), (unsigned long long)e->files,
				 plural(e->files), (unsigned long long)e->refault_pages,
				 plural(e->refault_pages));
		say(text, NULL, NULL);
		break;
	case HS_KEEP_FILE_WARMED:
		if (!c->verbose)
			break;
		snprintf(text, sizeof(text), "read back %llu page%s of ",
			 (unsigned long long)e->pages, plural(e->pages));
		say(text, e->path, NULL);
		break;
	case HS_KEEP_BACKOFF:
		if (!strcmp(e->how, "thrashing"))
			snprintf(tail, sizeof(tail), "pages read back evicted again within 10 s");
		else if (!strcmp(e->how, "trigger"))
			snprintf(tail, sizeof(tail), "stalls above %llu ms in %llu s",
				 (unsigned long long)e->trigger.stall_us / 1000,
				 (unsigned long long)e->trigger.window_us / 1000000);
		else
			snprintf(tail, sizeof(tail), "avg10 above %.1f%%", e->threshold);
		if (!strcmp(e->resource, "io")) {
			char whose[96];

			if (e->share < 0)
				snprintf(whose, sizeof(whose), "none of it ours");
			else
				snprintf(whose, sizeof(whose), "others' %.0f%% in a window without "
					 "reads of ours", e->share);
			snprintf(text, sizeof(text), "backing off: io pressure (%s, %s; some avg10 "
				 "%.2f%%): reading on at a trickle, 1/%d of the rate", tail, whose,
				 e->value < 0 ? 0 : e->value, HS_KEEP_TRICKLE);
		} else {
			snprintf(text, sizeof(text), "backing off: %s pressure (%s; some avg10 %.2f%%)",
				 e->resource, tail, e->value < 0 ? 0 : e->value);
		}
		say(text, NULL, NULL);
		break;
	case HS_KEEP_RESUMED:
		if (!strcmp(e->resource, "io")) {
			say("resuming the full rate: no io pressure for 10 s", NULL, NULL);
			break;
		}
		if (e->calm_ns)
			snprintf(text, sizeof(text), "resuming: memory stall below %d%% for %.0f s",
				 (int)(HS_KEEP_CALM_STALL_US * 100 / (HS_KEEP_CALM_NS / 1000)),
				 (double)e->calm_ns / 1e9);
		else
			snprintf(text, sizeof(text), "resuming: no pressure for %.0f s",
				 (double)HS_KEEP_QUIET_NS / 1e9);
		if (e->trickle)
			snprintf(text + strlen(text), sizeof(text) - strlen(text), " (memory); reading "
				 "at a trickle while io pressure lasts");
		say(text, NULL, NULL);
		break;
	case HS_KEEP_RELOADED:
		snprintf(text, sizeof(text), "profiles reloaded: %llu file%s, %llu page%s (%s)",
			 (unsigned long long)e->files, plural(e->files), (unsigned long long)e->pages,
			 plural(e->pages), memory_size(e->pages, ps, a));
		say(text, NULL, NULL);
		break;
	case HS_KEEP_REPLACED:
		if (e->what)
			snprintf(tail, sizeof(tail), " (by %s): not opened, no longer kept", e->what);
		else
			snprintf(tail, sizeof(tail), " (%s): %s it anew",
				 e->in_place ? "rewritten in place" : "a new inode",
				 c->lock ? "locking" : "reading");
		say("file replaced: ", e->path, tail);
		break;
	case HS_KEEP_DELETED:
		say("file deleted: ", e->path, ": dropped");
		break;
	case HS_KEEP_WARN:
		snprintf(tail, sizeof(tail), "%s%s%s%s", e->path ? ": " : "", e->what,
			 e->errnum ? ": " : "", e->errnum ? strerror(e->errnum) : "");
		say("warning: ", e->path, tail);
		break;
	case HS_KEEP_NOTE:
		say("note: ", NULL, e->what);
		break;
	case HS_KEEP_EXITING:
		snprintf(text, sizeof(text), "exiting (SIG%s): state written to ",
			 sigabbrev_np(e->signal) ? sigabbrev_np(e->signal) : "?");
		say(text, c->state, NULL);
		break;
	}
}

/* ---- --pidfile, --log, --daemon ---------------------------------------------------- */

/*
 * The pid a pid file holds (0 if none), and which file it is in *st: a
 * regular file, reached through no link of another user's (atomic.h).
 */
static pid_t pidfile_pid(const char *path, struct stat *st)
{
	char buf[32];
	ssize_t n;
	int fd = hs_open_regular(path, O_RDONLY, 0, NULL);

	if (fd < 0)
		return 0;
	n = fstat(fd, st) < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return (pid_t)strtol(buf, NULL, 10);
}

/* Does pid run? A zombie does not: a keeper killed and not reaped yet. */
static bool runs(pid_t pid)
{
	char path[64], buf[512], *paren;

	if (kill(pid, 0) < 0 && errno != EPERM)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (hs_procfs_read(path, buf, sizeof(buf)) <= 0 || !(paren = strrchr(buf, ')')))
		return true;
	return paren[1] != ' ' || (paren[2] != 'Z' && paren[2] != 'X');
}

/* A pid file naming a live process other than this one is refused; a stale one is replaced. */
int keep_pidfile_check(const char *path)
{
	struct stat st;
	pid_t pid = pidfile_pid(path, &st);

	if (pid > 0 && pid != getpid() && runs(pid))
		return error("the pid file %s names pid %d, which runs: another keeper? stop it, or "
			     "remove %s if that process is none", path, (int)pid, path);
	return 0;
}

/*
 * This process's pid into path, atomically (as profiles are written: a
 * file of another user's is never replaced through a link, the mode of a
 * file replaced is kept). A short write is an error too.
 */
int keep_pidfile_write(const char *path)
{
	struct hs_atomic_file *af;
	struct hs_error err = { 0 };
	char buf[32];
	int fd, n = snprintf(buf, sizeof(buf), "%d\n", (int)getpid()), rc;

	if ((rc = hs_atomic_open(path, 0644, &af, &fd, &err)))
		return error("cannot write the pid file %s: %s", path, err.msg);
	rc = hs_write_all(fd, buf, (size_t)n);	/* a short write is no pid file */
	if ((rc = hs_atomic_commit(af, rc)))
		return error("cannot write the pid file %s: %s", path, strerror(-rc));
	return 0;
}

/* At exit: removed, unless another process has written its own there since. */
void keep_pidfile_remove(const char *path)
{
	struct stat st;

	if (pidfile_pid(path, &st) == getpid())
		hs_remove_if_same(path, st.st_dev, st.st_ino);
}

/* --daemon's log when none is given and stderr is a terminal: STATE without .state, .log */
char *keep_default_log(const char *state)
{
	size_t len = strlen(state);
	char *p;

	if (len > 6 && !strcmp(state + len - 6, ".state"))
		len -= 6;
	return asprintf(&p, "%.*s.log", (int)len, state) < 0 ? NULL : p;
}

/*
 * Go to the background: the parent waits for the child's ready byte (sent
 * at STARTED) and exits 0, or, the pipe closed without it, with the
 * child's status. Returns in the child only, setsid'ed, its standard input
 * and output /dev/null; its stderr stays the terminal until the caller
 * points it at the log, so that errors before that are seen.
 */
int keep_daemonize(struct keep *c, bool quiet, const char *log)
{
	int p[2], st;
	pid_t pid;
	char r;

	if (pipe2(p, O_CLOEXEC) < 0)
		return error("cannot go to the background: pipe: %s", strerror(errno));
	fflush(NULL);
	if ((pid = fork()) < 0)
		return error("cannot go to the background: fork: %s", strerror(errno));
	if (pid) {
		ssize_t n;

		close(p[1]);
		while ((n = read(p[0], &r, 1)) < 0 && errno == EINTR)
			;
		if (n == 1) {
			if (!quiet) {
				char text[PATH_MAX + 128];

				snprintf(text, sizeof(text), "running in the background: pid %d, logging to ",
					 (int)pid);
				say(text, log ? log : "standard error", NULL);
			}
			_exit(EXIT_OK);	/* the child owns the lock, the state, the pid file */
		}
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
		error("the keeper (pid %d) %s before it was ready%s%s", (int)pid,
		      WIFEXITED(st) ? "exited" : "was killed", log ? "; see " : "", log ? log : "");
		_exit(WIFEXITED(st) && WEXITSTATUS(st) ? WEXITSTATUS(st) : EXIT_USAGE);
	}
	close(p[0]);
	c->ready_fd = p[1];
	setsid();
	{
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);

		if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0)
			return error("cannot go to the background: /dev/null: %s", strerror(errno));
		close(null);
	}
	return 0;
}

/*
 * The state file must be one keep can write (hs_atomic_check()) in a
 * directory safe for it (hs_dir_check(): the user's own, or sticky with
 * the state, its lock and the default log, if used, the user's own).
 */
int keep_state_check(const char *state, const char *own_log)
{
	const char *slash = strrchr(state, '/'), *base = slash ? slash + 1 : state;
	char *dir = slash ? strndup(state, slash == state ? 1 : (size_t)(slash - state)) : strdup(".");
	char *lock = NULL;
	const char *entries[4] = { base };
	struct hs_error err = { 0 };
	int rc = -1;

	if (!dir || asprintf(&lock, "%s.lock", base) < 0) {
		lock = NULL;
		error("out of memory");
		goto out;
	}
	entries[1] = lock;
	if (own_log)	/* the default log, beside the state */
		entries[2] = strrchr(own_log, '/') ? strrchr(own_log, '/') + 1 : own_log;
	if (hs_dir_check(dir, entries, &err))
		error("%s: not a safe place for the keeper's state: %s", state, err.msg);
	else if ((rc = hs_atomic_check(state, &err)) == -EISDIR || rc == -EINVAL)
		error("%s: %s: give --state a file of its own", state,
		      rc == -EISDIR ? "not a regular file (a directory)" : err.msg);
	else if (rc)
		error("%s: cannot write the state: %s", state, err.msg);
	rc = rc ? -1 : 0;
out:
	free(dir);
	free(lock);
	return rc;
}
