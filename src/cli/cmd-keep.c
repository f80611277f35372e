/*
 * cmd-keep.c - hotset keep: a daemon that keeps profiles' working sets in
 * the page cache (the mechanism is in src/lib/keep/keep.c), in the foreground
 * or, with --daemon, in the background once it is ready; and its --status,
 * which reads the state file it leaves.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/atomic.h"
#include "keep/keep.h"
#include "kernel/procfs.h"
#include "operands.h"
#include "options.h"

static const char usage[] =
	"usage: hotset keep [--mode watch|lock] [--budget SIZE] [--interval T] [--state FILE]\n"
	"                   [--protect] [--io-cgroup DIR] [--daemon] [--pidfile FILE]\n"
	"                   [--log FILE] [-q] [-v]\n"
	"                   PROFILE...\n"
	"   or: hotset keep --status [--state FILE] [-J] [PROFILE...]\n"
	"\n"
	"Keep the pages the profiles list in the page cache: read them in, then\n"
	"watch them and read back, in profile order, what gets evicted. Runs in\n"
	"the foreground (or, with --daemon, in the background once ready) and\n"
	"logs a line per event to standard error. Backs off\n"
	"while the machine is short of memory or I/O (PSI). SIGHUP reloads the\n"
	"profiles; SIGTERM and SIGINT stop it, its state written.\n"
	"\n"
	"      --mode MODE        watch: read back what gets evicted (the default);\n"
	"                         lock: mlock the pages, so that none is evicted\n"
	"      --budget SIZE      keep at most SIZE (512M, 2G, 10% of RAM...): the\n"
	"                         first SIZE of the profiles' pages, in the order\n"
	"                         given (default: all, up to 25% of RAM)\n"
	"      --interval T       check every kept file at least every T (0.5s,\n"
	"                         10, 2m...; default 10s); 4 times as often after\n"
	"                         pages were lost\n"
	"      --state FILE       the state file: counters a restart resumes, the\n"
	"                         lock of one keeper per profile set (default: in\n"
	"                         $XDG_RUNTIME_DIR/hotset, or /run/hotset for root)\n"
	"      --protect          set memory.low of keep's cgroup (v2) to the kept\n"
	"                         size, so that reclaim spares what it reads\n"
	"      --io-cgroup DIR    judge io pressure by the stalls of cgroup v2 DIR\n"
	"                         (the jobs' slice; relative: to the cgroup2 mount),\n"
	"                         not by keep's own cgroup's or the machine's\n"
	"      --daemon           go to the background once ready (the command exits\n"
	"                         0 then, or with the keeper's error)\n"
	"      --pidfile FILE     write the keeper's pid to FILE, removed at exit\n"
	"      --log FILE         log to FILE (appended); --daemon's default when\n"
	"                         standard error is a terminal: the state's name\n"
	"                         with .log\n"
	"      --status           print the state of a keeper (of --state FILE, or of\n"
	"                         the PROFILEs) and exit\n"
	"  -v, --verbose          a line per file read back too\n"
	"  -q, --quiet            log only warnings\n"
	"  -J, --json             with --status: the state as JSON\n"
	"  -V, --version          show hotset's version\n"
	"  -h, --help             show this help\n"
	"\n"
	"Exit status: 0 stopped by SIGTERM or SIGINT (or --status done), 2 usage\n"
	"error or a keeper that could not start (another one holds the state, a\n"
	"lock beyond RLIMIT_MEMLOCK, --protect impossible here).\n";

const struct cmd cmd_keep;

/* The default budget: a quarter of RAM (see hotset-keep(1), BUDGET). */
#define DEFAULT_BUDGET_SHARE 4

struct keep {
	bool quiet, verbose, lock;
	const char *state;
	int ready_fd;		/* --daemon: the pipe the parent waits on, until STARTED */
};

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

static const char *when(int64_t ns, char buf[32])
{
	time_t t = (time_t)(ns / 1000000000);
	struct tm tm;

	if (!ns || !gmtime_r(&t, &tm))
		return "never";
	strftime(buf, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
	return buf;
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

static void on_event(void *ctx, const struct hs_keep_event *e)
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

/* ---- the state file's name ------------------------------------------------- */

/* Where states go by default: /run/hotset for root, else $XDG_RUNTIME_DIR/hotset. */
static int state_dir(char **dir, bool create)
{
	const char *run = getenv("XDG_RUNTIME_DIR");

	if (geteuid() == 0)
		*dir = strdup("/run/hotset");
	else if (run && run[0] == '/') {
		if (asprintf(dir, "%s/hotset", run) < 0)
			*dir = NULL;
	} else {
		return error("no default state file: XDG_RUNTIME_DIR is not set; give --state FILE");
	}
	if (!*dir)
		return error("out of memory");
	if (create && mkdir(*dir, 0700) < 0 && errno != EEXIST) {
		error("cannot create %s: %s; give --state FILE", *dir, strerror(errno));
		free(*dir);
		return -1;
	}
	return 0;
}

/*
 * The default state of a profile set in dir: keep-NAME-HASH.state, NAME
 * the first profile's file name, HASH (FNV-1a) of the absolute paths of
 * all of them, so that each set has its own, found again from the same
 * PROFILEs.
 */
static char *state_in(const char *dir, char **profiles, size_t n)
{
	uint32_t h = 2166136261u;
	char *path, name[48];
	const char *base = strrchr(profiles[0], '/') + 1;
	size_t len = 0;

	for (size_t i = 0; i < n; i++)
		for (const char *p = profiles[i]; ; p++) {
			h = (h ^ (unsigned char)*p) * 16777619u;
			if (!*p)
				break;
		}
	for (; base[len] && len < sizeof(name) - 1 && base[len] != '.'; len++)
		name[len] = (base[len] >= 'a' && base[len] <= 'z') || (base[len] >= 'A' && base[len] <= 'Z') ||
			    (base[len] >= '0' && base[len] <= '9') || base[len] == '-' || base[len] == '_' ?
			    base[len] : '_';
	name[len] = '\0';
	if (asprintf(&path, "%s/keep-%s-%08x.state", dir, name, (unsigned)h) < 0)
		path = NULL;
	return path;
}

static char *default_state(char **profiles, size_t n, bool create)
{
	char *dir, *path;

	if (state_dir(&dir, create) < 0)
		return NULL;
	path = state_in(dir, profiles, n);
	free(dir);
	return path;
}

/* With neither --state nor PROFILEs: the one state of the default directory. */
static char *only_state(void)
{
	char *dir, *found = NULL;
	struct dirent *de;
	unsigned n = 0;
	DIR *d;

	if (state_dir(&dir, false) < 0)
		return NULL;
	if (!(d = opendir(dir))) {
		error("no keeper has run here: %s: %s", dir, strerror(errno));
		free(dir);
		return NULL;
	}
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);

		if (strncmp(de->d_name, "keep-", 5) || len < 11 || strcmp(de->d_name + len - 6, ".state"))
			continue;
		if (n++ == 0 && asprintf(&found, "%s/%s", dir, de->d_name) < 0)
			found = NULL;
	}
	closedir(d);
	if (n != 1) {
		if (n)
			error("%u keeper states in %s: give --state FILE or the PROFILEs", n, dir);
		else
			error("no keeper state in %s: give --state FILE or the PROFILEs", dir);
		free(found);
		found = NULL;
	}
	free(dir);
	return found;
}

/* ---- --status ------------------------------------------------------------------- */

static void status_json(const char *state, const struct hs_keep_state *st, pid_t holder)
{
	struct json j;

	json_begin_report(&j, stdout, "keep", false);
	json_string(&j, "state", state);
	json_bool(&j, "running", holder > 0);
	if (holder > 0)
		json_i64(&j, "pid", holder);
	else
		json_null(&j, "pid");
	json_begin_array(&j, "profiles");
	for (size_t i = 0; i < st->nprofiles; i++)
		json_string(&j, NULL, st->profiles[i]);
	json_end_array(&j);
	json_string(&j, "mode", st->mode[0] ? st->mode : "watch");
	json_u64(&j, "files", st->files);
	json_u64(&j, "pages", st->pages);
	json_u64(&j, "bytes", st->bytes);
	json_u64(&j, "memory_bytes", st->bytes);	/* bytes, named for what they are */
	json_u64(&j, "budget_bytes", st->budget_bytes);
	json_u64(&j, "unknown_files", st->unknown_files);
	json_u64(&j, "dropped_files", st->dropped_files);
	json_u64(&j, "replaced_files", st->replaced_files);
	/* a keeper gone has nothing locked: the kernel unlocks at exit, even at SIGKILL */
	json_u64(&j, "locked_files", holder > 0 ? st->locked_files : 0);
	json_u64(&j, "locked_bytes", holder > 0 ? st->locked_bytes : 0);
	if (holder > 0 && st->protect_cgroup[0]) {
		json_u64(&j, "protected_bytes", st->protected_bytes);
		json_string(&j, "protect_cgroup", st->protect_cgroup);
	} else {
		json_null(&j, "protected_bytes");
		json_null(&j, "protect_cgroup");
	}
	json_u64(&j, "refault_pages", st->refault_pages);
	json_u64(&j, "rewarmed_pages", st->rewarmed_pages);
	json_u64(&j, "rewarms", st->rewarms);
	json_u64(&j, "backoffs", st->backoffs);
	json_bool(&j, "backed_off", holder > 0 && st->backed_off);
	json_string(&j, "backoff_reason", holder > 0 && st->backed_off ? st->backoff_reason : NULL);
	json_string(&j, "pressure", st->pressure[0] ? st->pressure : "none");
	json_string(&j, "io_pressure_file", st->io_pressure[0] ? st->io_pressure : NULL);
	json_string(&j, "evictions", st->evictions[0] ? st->evictions : "checks");
	json_double(&j, "interval_seconds", (double)st->interval_ns / 1e9);
	json_double(&j, "round_seconds", (double)st->round_ns / 1e9);
	json_i64(&j, "since_ns", st->since_ns);
	json_i64(&j, "started_ns", st->started_ns);
	json_i64(&j, "updated_ns", st->updated_ns);
	if (st->last_rewarm_ns)
		json_i64(&j, "last_rewarm_ns", st->last_rewarm_ns);
	else
		json_null(&j, "last_rewarm_ns");
	if (st->last_backoff_ns)
		json_i64(&j, "last_backoff_ns", st->last_backoff_ns);
	else
		json_null(&j, "last_backoff_ns");
	json_u64(&j, "page_size", hs_page_size());
	if (st->view)
		json_u64(&j, "view_uid", st->view_uid);
	else
		json_null(&j, "view_uid");
	json_end_object(&j);
	json_finish(&j);
}

static void status_human(const char *state, const struct hs_keep_state *st, pid_t holder)
{
	const uint64_t ps = hs_page_size();
	char a[SIZE_STR_MAX], b[SIZE_STR_MAX], t1[32], t2[32];

	printf("%10s: ", "State");
	print_path(stdout, state, strlen(state));
	if (holder > 0)
		printf("\n%10s: running, pid %d, since %s\n", "Keeper", (int)holder,
		       when(st->started_ns, t1));
	else
		printf("\n%10s: not running (last state written %s)\n", "Keeper",
		       when(st->updated_ns, t1));
	if (st->view)
		printf("%10s: of uid %u's profiles alone, as their owner may see it (the keeper's "
		       "own state is root's)\n", "View", (unsigned)st->view_uid);
	for (size_t i = 0; i < st->nprofiles; i++) {
		printf("%10s: ", i ? "" : "Profiles");
		print_path(stdout, st->profiles[i], strlen(st->profiles[i]));
		putchar('\n');
	}
	printf("%10s: %llu file%s, %llu page%s (%s), budget %s", "Kept",
	       (unsigned long long)st->files, plural(st->files), (unsigned long long)st->pages,
	       plural(st->pages), memory_size(st->pages, ps, a), human_size(st->budget_bytes, b));
	if (st->unknown_files)
		printf("; %llu not watched (residency unknown)", (unsigned long long)st->unknown_files);
	if (st->dropped_files)
		printf("; %llu deleted, dropped", (unsigned long long)st->dropped_files);
	if (st->replaced_files)
		printf("; %llu replaced, not opened", (unsigned long long)st->replaced_files);
	if (!strcmp(st->mode, "lock"))
		printf("\n%10s: %llu file%s, %s", "Locked", holder > 0 ? (unsigned long long)st->locked_files : 0,
		       plural(holder > 0 ? st->locked_files : 0),
		       memory_size(holder > 0 ? st->locked_bytes / ps : 0, ps, a));
	if (holder > 0 && st->protect_cgroup[0]) {
		printf("\n%10s: memory.low %s on ", "Protected", human_size(st->protected_bytes, a));
		print_path(stdout, st->protect_cgroup, strlen(st->protect_cgroup));
	}
	printf("\n%10s: every file within %.1f s (interval %.1f s)%s\n", "Checks",
	       (double)st->round_ns / 1e9, (double)st->interval_ns / 1e9,
	       !strcmp(st->evictions, "events") ? "; evicted ones at once, as the kernel tells (eBPF)"
						: "");
	printf("%10s: %llu page%s (%s) lost and found missing; %llu page%s read back in %llu "
	       "re-warm%s, the last %s\n", "Refaults", (unsigned long long)st->refault_pages,
	       plural(st->refault_pages), memory_size(st->refault_pages, ps, a),
	       (unsigned long long)st->rewarmed_pages, plural(st->rewarmed_pages),
	       (unsigned long long)st->rewarms, plural(st->rewarms), when(st->last_rewarm_ns, t1));
	printf("%10s: %s; backed off %llu time%s, the last %s%s%s%s\n", "Pressure",
	       !strcmp(st->pressure, "trigger") ? "PSI triggers" :
	       !strcmp(st->pressure, "averages") ? "PSI averages" : "not watched",
	       (unsigned long long)st->backoffs, plural(st->backoffs), when(st->last_backoff_ns, t2),
	       holder > 0 && st->backed_off ? "; backed off now: " : "",
	       holder > 0 && st->backed_off ? st->backoff_reason : "",
	       holder > 0 && st->backed_off && !strcmp(st->backoff_reason, "io") ?
	       " (reading at a trickle)" : "");
	if (st->io_pressure[0])
		printf("%10s: %s\n", "I/O from", st->io_pressure);
	printf("%10s: since %s\n", "Counting", when(st->since_ns, t1));
}

/*
 * The state at path, or, where it is root's alone (a root keeper's), the
 * view of it that such a keeper writes for this user: 0, or -errno with
 * err (-EACCES: neither can be read).
 */
static int read_state(const char *path, struct hs_keep_state *st, struct hs_error *err)
{
	struct hs_error verr = { 0 };
	char *view;
	int rc = hs_keep_state_read(path, st, err);

	if ((rc != -EACCES && rc != -EPERM) || !(view = hs_keep_view_path(path, geteuid())))
		return rc;
	if (hs_keep_state_read(view, st, &verr) == 0) {
		free(view);
		return 0;
	}
	free(view);
	return hs_error_set(err, EACCES, "%s: a keeper's state is its user's alone; a keeper run "
			    "as root writes each other owner of a profile a view (STATE.uid-UID), and "
			    "there is none for uid %u: it keeps no profile of this user's", strerror(-rc),
			    (unsigned)geteuid());
}

/* alt: another state to read if state has none (root's default, for a user). */
static int run_status(const char *state, const char *alt, bool json)
{
	struct hs_keep_state st;
	struct hs_error err = { 0 };
	pid_t holder;
	int rc;

	rc = read_state(state, &st, &err);
	if (rc == -ENOENT && alt) {
		struct hs_error again = { 0 };

		if ((rc = read_state(alt, &st, &again)) == 0 || rc != -ENOENT) {
			state = alt;
			err = again;
		}
	}
	if (rc) {
		if (rc == -ENOENT)
			error("%s: no such state: no keeper ran on it (give the --state or the "
			      "PROFILEs it was started with)", state);
		else
			error("%s: %s", state, err.msg);
		return EXIT_USAGE;
	}
	holder = hs_keep_lock_holder(state);
	if (json)
		status_json(state, &st, holder);
	else
		status_human(state, &st, holder);
	hs_keep_state_release(&st);
	return finish_stdout(EXIT_OK);
}

/* ---- the keeper ----------------------------------------------------------------------- */

/* SIGHUP, SIGTERM and SIGINT through a descriptor the keeper polls. */
static int signal_fd(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return -1;
	return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
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
static int pidfile_check(const char *path)
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
static int pidfile_write(const char *path)
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
static void pidfile_remove(const char *path)
{
	struct stat st;

	if (pidfile_pid(path, &st) == getpid())
		hs_remove_if_same(path, st.st_dev, st.st_ino);
}

/*
 * --io-cgroup DIR: the cgroup v2 directory (relative: to the cgroup2
 * mount), with an io.pressure to read; or NULL, said why.
 */
static char *io_cgroup_dir(const char *dir)
{
	char own[PATH_MAX], mnt[PATH_MAX], *path;
	struct hs_psi psi;
	int rc;

	if (*dir == '/')
		path = strdup(dir);
	else if (hs_cgroup2_dirs(own, mnt, sizeof(mnt)) < 0) {
		error("--io-cgroup %s: no cgroup2 is mounted to find it in", dir);
		return NULL;
	} else if (asprintf(&path, "%s/%s", mnt, dir) < 0)
		path = NULL;
	if (!path) {
		error("out of memory");
		return NULL;
	}
	if ((rc = hs_psi_read(path, "io.pressure", &psi)) < 0) {
		error("--io-cgroup: cannot read %s/io.pressure (%s): give a cgroup v2 directory "
		      "with pressure stall information", path, strerror(-rc));
		free(path);
		return NULL;
	}
	return path;
}

/* --daemon's log when none is given and stderr is a terminal: STATE without .state, .log */
static char *default_log(const char *state)
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
static int daemonize(struct keep *c, bool quiet, const char *log)
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
static int state_check(const char *state, const char *own_log)
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

static int run_keep(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "budget", required_argument, NULL, OPT_BUDGET },
		{ "interval", required_argument, NULL, OPT_INTERVAL },
		{ "state", required_argument, NULL, OPT_STATE },
		{ "status", no_argument, NULL, OPT_STATUS },
		{ "mode", required_argument, NULL, OPT_MODE },
		{ "protect", no_argument, NULL, OPT_PROTECT },
		{ "io-cgroup", required_argument, NULL, OPT_IO_CGROUP },
		{ "daemon", no_argument, NULL, OPT_DAEMON },
		{ "pidfile", required_argument, NULL, OPT_PIDFILE },
		{ "log", required_argument, NULL, OPT_LOG },
		{ "verbose", no_argument, NULL, 'v' },
		COMMON_LONGOPTS,
		{ 0 },
	};
	struct keep c = { .ready_fd = -1 };
	struct hs_keep_opts o = { .signal_fd = -1, .event = on_event, .ctx = &c };
	struct hs_error err = { 0 };
	struct hs_keep *k;
	char **profiles, *state = NULL, *log = NULL;
	const char *pidfile = NULL, *io_cgroup = NULL, *log_arg = NULL, *state_arg = NULL;
	bool status = false, json = false, daemon = false, root_too;
	int opt, n, rc, lock, log_fd = -1;
	pid_t holder;

	while ((opt = getopt_long(argc, argv, OPTS_START "v", longopts, NULL)) != -1) {
		switch (opt) {
		case OPT_BUDGET:
			if ((rc = option_budget(&cmd_keep, optarg, true, &o.budget)))
				return rc;
			break;
		case OPT_INTERVAL:
			if (parse_duration(optarg, &o.interval_ns) < 0 ||
			    o.interval_ns < 10000000 || o.interval_ns > UINT64_C(3600000000000))
				return usage_error(&cmd_keep, "--interval takes a duration from 10ms to 1h "
						   "(0.5s, 10, 2m...), not '%s'", optarg);
			break;
		case OPT_STATE:
			if (!*optarg)
				return usage_error(&cmd_keep, "an empty --state names no file");
			state_arg = optarg;
			break;
		case OPT_STATUS: status = true; break;
		case OPT_MODE:
			if (!strcmp(optarg, "watch"))
				o.mode = HS_KEEP_WATCH;
			else if (!strcmp(optarg, "lock"))
				o.mode = HS_KEEP_LOCK;
			else
				return usage_error(&cmd_keep, "--mode takes watch or lock, not '%s'", optarg);
			break;
		case OPT_PROTECT: o.protect = true; break;
		case OPT_IO_CGROUP:
			if (!*optarg)
				return usage_error(&cmd_keep, "an empty --io-cgroup names no cgroup");
			io_cgroup = optarg;
			break;
		case OPT_DAEMON: daemon = true; break;
		case OPT_PIDFILE:
		case OPT_LOG:
			if (!*optarg)
				return usage_error(&cmd_keep, "an empty --%s names no file",
						   opt == OPT_LOG ? "log" : "pidfile");
			if (opt == OPT_LOG)
				log_arg = optarg;
			else
				pidfile = optarg;
			break;
		case 'v': c.verbose = true; break;
		case 'q': c.quiet = true; break;
		case 'J': json = true; break;
		default: return option_other(&cmd_keep, opt, argv, longopts);
		}
	}
	n = argc - optind;
	if (json && !status)
		return usage_error(&cmd_keep, "--json goes with --status (the keeper logs lines)");
	if (status && (daemon || pidfile || log_arg || o.protect || o.mode || io_cgroup))
		return usage_error(&cmd_keep, "--status only reads a state: --mode, --protect, "
				   "--io-cgroup, --daemon, --pidfile and --log go with keeping");
	c.lock = o.mode == HS_KEEP_LOCK;
	if (!status && !n)
		return usage_error(&cmd_keep, "give a PROFILE to keep");
	profiles = calloc((size_t)(n ? n : 1), sizeof(*profiles));
	if (!profiles)
		return error("out of memory"), EXIT_USAGE;
	for (int i = 0; i < n; i++) {
		const char *p = argv[optind + i];

		if (!*p || !strcmp(p, "-")) {
			usage_error(&cmd_keep, "%s", *p ? "keep reads its profiles again on SIGHUP: "
				    "give files, not -" : "an empty PROFILE names no file");
			n = i;	/* the ones made so far are freed */
			rc = EXIT_USAGE;
			goto out;
		}
		if (!(profiles[i] = absolute_path(p, false))) {
			error("%s: %s", p, strerror(errno));
			n = i;
			rc = EXIT_USAGE;
			goto out;
		}
	}
	rc = EXIT_USAGE;
	/* a user's --status of PROFILEs: its own keeper's of them, else root's, seen as its view */
	root_too = status && n && !state_arg && geteuid() != 0;
	if (root_too && !(getenv("XDG_RUNTIME_DIR") && getenv("XDG_RUNTIME_DIR")[0] == '/')) {
		state = state_in("/run/hotset", profiles, (size_t)n);	/* no keeper of its own */
		root_too = false;
	} else if (!state_arg) {
		state = n ? default_state(profiles, (size_t)n, !status) : only_state();
	} else {
		if (!(state = strdup(state_arg)))
			error("out of memory");
	}
	if (!state)
		goto out;
	c.state = state;
	if (status) {
		char *alt = root_too ? state_in("/run/hotset", profiles, (size_t)n) : NULL;

		rc = run_status(state, alt, json);
		free(alt);
		goto out;
	}
	if (!o.budget) {
		struct sysinfo si;

		o.budget = sysinfo(&si) == 0 ? (uint64_t)si.totalram * si.mem_unit / DEFAULT_BUDGET_SHARE
					     : UINT64_C(1) << 30;
	}
	/* logs: to --log FILE; --daemon's own file if stderr is a terminal it leaves */
	if (log_arg)
		log = strdup(log_arg);
	else if (daemon && isatty(2))
		log = default_log(state);
	if ((log_arg || (daemon && isatty(2))) && !log) {
		error("out of memory");
		goto out;
	}
	/* a state it could never write is refused now, before its lock is made beside it */
	if (state_check(state, log_arg ? NULL : log) < 0)
		goto out;
	if (pidfile && pidfile_check(pidfile) < 0)
		goto out;
	if (io_cgroup && !(o.io_cgroup = io_cgroup_dir(io_cgroup)))
		goto out;
	/* appended to, never through another user's link, nor into another's file in /tmp */
	if (log && (log_fd = hs_open_regular(log, O_WRONLY | O_APPEND | O_CREAT, 0600, &err)) < 0) {
		error("cannot open the log %s: %s", log, err.msg);
		goto out;
	}
	if ((lock = hs_keep_lock(state, &holder)) < 0) {
		if (lock == -EWOULDBLOCK)
			error("another hotset keep (pid %d) is running on %s: stop it, or give another "
			      "--state", (int)holder, state);
		else
			error("cannot lock %s.lock: %s", state, strerror(-lock));
		goto out;
	}
	o.profiles = (const char *const *)profiles;
	o.nprofiles = (size_t)n;
	o.state = state;
	o.file_events = c.verbose;
	/* test hook (hotset-keep(1), ENVIRONMENT): pressure files of the test's own */
	o.pressure_dir = getenv("HOTSET_PSI_DIR");
	/* and one that finds evictions by the checks alone, as without root */
	o.checks_only = getenv("HOTSET_KEEP_NO_BPF") && *getenv("HOTSET_KEEP_NO_BPF");
	if ((rc = hs_ioprio_idle()))
		warning("cannot read at the idle I/O priority: %s", strerror(-rc));
	if ((o.signal_fd = signal_fd()) < 0) {
		error("cannot receive signals: %s", strerror(errno));
		rc = EXIT_USAGE;
		close(lock);
		goto out;
	}
	if ((rc = hs_keep_new(&o, &k, &err))) {
		error("cannot keep: %s", err.msg[0] ? err.msg : strerror(-rc));
		rc = EXIT_USAGE;
	} else if ((daemon && (daemonize(&c, c.quiet, log) < 0 || hs_keep_lock_own(lock) < 0)) ||
		   (pidfile && pidfile_write(pidfile) < 0) || (log_fd >= 0 && dup2(log_fd, 2) < 0)) {
		/* in the child of --daemon: the parent reports its exit status */
		rc = EXIT_USAGE;
		hs_keep_free(k);
	} else {
		rc = hs_keep_run(k);
		if (rc < 0)
			error("keeping failed: %s", strerror(-rc));
		rc = rc < 0 ? EXIT_USAGE : EXIT_OK;
		hs_keep_free(k);
	}
	if (pidfile)
		pidfile_remove(pidfile);
	close(o.signal_fd);
	close(lock);
out:
	if (log_fd >= 0)
		close(log_fd);
	for (int i = 0; i < n; i++)
		free(profiles[i]);
	free(profiles);
	free(state);
	free(log);
	free((char *)o.io_cgroup);
	return rc;
}

const struct cmd cmd_keep = {
	"keep", run_keep, "keep profiles' pages in the page cache, re-reading what is evicted", usage,
};
