/*
 * cmd-keep.c - hotset keep: a foreground daemon that keeps profiles'
 * working sets in the page cache (the mechanism is in src/core/keep.c),
 * and its --status, which reads the state file it leaves.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>

#include "hotset/keep.h"
#include "operands.h"
#include "options.h"

static const char usage[] =
	"usage: hotset keep [--budget SIZE] [--interval T] [--state FILE] [-q] [-v] PROFILE...\n"
	"   or: hotset keep --status [--state FILE] [-J] [PROFILE...]\n"
	"\n"
	"Keep the pages the profiles list in the page cache: read them in, then\n"
	"watch them and read back, in profile order, what gets evicted. Runs in\n"
	"the foreground and logs a line per event to standard error. Backs off\n"
	"while the machine is short of memory or I/O (PSI). SIGHUP reloads the\n"
	"profiles; SIGTERM and SIGINT stop it, its state written.\n"
	"\n"
	"      --budget SIZE      keep at most SIZE (512M, 2G, 10% of RAM...): the\n"
	"                         first SIZE of the profiles' pages, in the order\n"
	"                         given (default: all, up to 25% of RAM)\n"
	"      --interval T       check every kept file at least every T (0.5s,\n"
	"                         10, 2m...; default 10s); 4 times as often after\n"
	"                         pages were lost\n"
	"      --state FILE       the state file: counters a restart resumes, the\n"
	"                         lock of one keeper per profile set (default: in\n"
	"                         $XDG_RUNTIME_DIR/hotset, or /run/hotset for root)\n"
	"      --status           print the state of a keeper (of --state FILE, or of\n"
	"                         the PROFILEs) and exit\n"
	"  -v, --verbose          a line per file read back too\n"
	"  -q, --quiet            log only warnings\n"
	"  -J, --json             with --status: the state as JSON\n"
	"  -V, --version          show hotset's version\n"
	"  -h, --help             show this help\n"
	"\n"
	"Exit status: 0 stopped by SIGTERM or SIGINT (or --status done), 2 usage\n"
	"error or a keeper that could not start (another one holds the state).\n";

const struct cmd cmd_keep;

/* The default budget: a quarter of RAM (see hotset-keep(1), BUDGET). */
#define DEFAULT_BUDGET_SHARE 4

struct keep {
	bool quiet, verbose;
	const char *state;
};

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
	char a[16], b[16], text[768], tail[512];

	if (c->quiet && e->kind != HS_KEEP_WARN)
		return;
	switch (e->kind) {
	case HS_KEEP_STARTED:
		snprintf(text, sizeof(text), "started: %zu profile%s, %llu file%s, %llu page%s (%s), "
			 "budget %s", e->profiles, plural(e->profiles), (unsigned long long)e->files,
			 plural(e->files), (unsigned long long)e->pages, plural(e->pages),
			 human_size(e->bytes, a), human_size(e->budget, b));
		say(text, NULL, NULL);
		if (e->unknown) {
			snprintf(text, sizeof(text), "not watching %llu file%s: their residency is "
				 "unknown to this user (the kernel tells it to a file's owner, to "
				 "users who may write it, and to root)", (unsigned long long)e->unknown,
				 plural(e->unknown));
			say(text, NULL, NULL);
		}
		if (e->stale) {
			snprintf(text, sizeof(text), "%llu file%s changed since the profile was made: "
				 "kept by path", (unsigned long long)e->stale, plural(e->stale));
			say(text, NULL, NULL);
		}
		break;
	case HS_KEEP_WARMED:
		if (e->initial)
			snprintf(text, sizeof(text), "warmed %llu page%s (%s) of %llu file%s",
				 (unsigned long long)e->pages, plural(e->pages),
				 human_size(e->pages * ps, a), (unsigned long long)e->files,
				 plural(e->files));
		else
			snprintf(text, sizeof(text), "re-warmed %llu page%s (%s) of %llu file%s: "
				 "%llu refault%s", (unsigned long long)e->pages, plural(e->pages),
				 human_size(e->pages * ps, a), (unsigned long long)e->files,
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
		if (!strcmp(e->how, "trigger"))
			snprintf(tail, sizeof(tail), "stalls above %llu ms in %llu s",
				 (unsigned long long)e->trigger.stall_us / 1000,
				 (unsigned long long)e->trigger.window_us / 1000000);
		else
			snprintf(tail, sizeof(tail), "avg10 above %.1f%%", e->threshold);
		snprintf(text, sizeof(text), "backing off: %s pressure (%s; some avg10 %.2f%%)",
			 e->resource, tail, e->value < 0 ? 0 : e->value);
		say(text, NULL, NULL);
		break;
	case HS_KEEP_RESUMED:
		say("resuming: no pressure for 10 s", NULL, NULL);
		break;
	case HS_KEEP_RELOADED:
		snprintf(text, sizeof(text), "profiles reloaded: %llu file%s, %llu page%s (%s)",
			 (unsigned long long)e->files, plural(e->files), (unsigned long long)e->pages,
			 plural(e->pages), human_size(e->bytes, a));
		say(text, NULL, NULL);
		break;
	case HS_KEEP_REPLACED:
		say("file replaced: ", e->path, e->in_place ? " (rewritten in place): reading it anew"
						   : " (a new inode): reading it anew");
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
	if (create && mkdir(*dir, geteuid() == 0 ? 0755 : 0700) < 0 && errno != EEXIST) {
		error("cannot create %s: %s; give --state FILE", *dir, strerror(errno));
		free(*dir);
		return -1;
	}
	return 0;
}

/*
 * The default state of a profile set: keep-NAME-HASH.state, NAME the first
 * profile's file name, HASH (FNV-1a) of the absolute paths of all of them,
 * so that each set has its own, found again from the same PROFILEs.
 */
static char *default_state(char **profiles, size_t n, bool create)
{
	uint32_t h = 2166136261u;
	char *dir, *path, name[48];
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
	if (state_dir(&dir, create) < 0)
		return NULL;
	if (asprintf(&path, "%s/keep-%s-%08x.state", dir, name, (unsigned)h) < 0)
		path = NULL;
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
	json_u64(&j, "files", st->files);
	json_u64(&j, "pages", st->pages);
	json_u64(&j, "bytes", st->bytes);
	json_u64(&j, "budget_bytes", st->budget_bytes);
	json_u64(&j, "unknown_files", st->unknown_files);
	json_u64(&j, "dropped_files", st->dropped_files);
	json_u64(&j, "refault_pages", st->refault_pages);
	json_u64(&j, "rewarmed_pages", st->rewarmed_pages);
	json_u64(&j, "rewarms", st->rewarms);
	json_u64(&j, "backoffs", st->backoffs);
	json_bool(&j, "backed_off", holder > 0 && st->backed_off);
	json_string(&j, "backoff_reason", holder > 0 && st->backed_off ? st->backoff_reason : NULL);
	json_string(&j, "pressure", st->pressure[0] ? st->pressure : "none");
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
	json_end_object(&j);
	json_finish(&j);
}

static void status_human(const char *state, const struct hs_keep_state *st, pid_t holder)
{
	const uint64_t ps = hs_page_size();
	char a[16], b[16], t1[32], t2[32];

	printf("%10s: ", "State");
	print_path(stdout, state, strlen(state));
	if (holder > 0)
		printf("\n%10s: running, pid %d, since %s\n", "Keeper", (int)holder,
		       when(st->started_ns, t1));
	else
		printf("\n%10s: not running (last state written %s)\n", "Keeper",
		       when(st->updated_ns, t1));
	for (size_t i = 0; i < st->nprofiles; i++) {
		printf("%10s: ", i ? "" : "Profiles");
		print_path(stdout, st->profiles[i], strlen(st->profiles[i]));
		putchar('\n');
	}
	printf("%10s: %llu file%s, %llu page%s (%s), budget %s", "Kept",
	       (unsigned long long)st->files, plural(st->files), (unsigned long long)st->pages,
	       plural(st->pages), human_size(st->bytes, a), human_size(st->budget_bytes, b));
	if (st->unknown_files)
		printf("; %llu not watched (residency unknown)", (unsigned long long)st->unknown_files);
	if (st->dropped_files)
		printf("; %llu deleted, dropped", (unsigned long long)st->dropped_files);
	printf("\n%10s: every file within %.1f s (interval %.1f s)%s\n", "Checks",
	       (double)st->round_ns / 1e9, (double)st->interval_ns / 1e9,
	       !strcmp(st->evictions, "events") ? "; evicted ones at once, as the kernel tells (eBPF)"
						: "");
	printf("%10s: %llu page%s (%s) lost and found missing; %llu page%s read back in %llu "
	       "re-warm%s, the last %s\n", "Refaults", (unsigned long long)st->refault_pages,
	       plural(st->refault_pages), human_size(st->refault_pages * ps, a),
	       (unsigned long long)st->rewarmed_pages, plural(st->rewarmed_pages),
	       (unsigned long long)st->rewarms, plural(st->rewarms), when(st->last_rewarm_ns, t1));
	printf("%10s: %s; backed off %llu time%s, the last %s%s%s\n", "Pressure",
	       !strcmp(st->pressure, "trigger") ? "PSI triggers" :
	       !strcmp(st->pressure, "averages") ? "PSI averages" : "not watched",
	       (unsigned long long)st->backoffs, plural(st->backoffs), when(st->last_backoff_ns, t2),
	       holder > 0 && st->backed_off ? "; backed off now: " : "",
	       holder > 0 && st->backed_off ? st->backoff_reason : "");
	printf("%10s: since %s\n", "Counting", when(st->since_ns, t1));
}

static int run_status(const char *state, bool json)
{
	struct hs_keep_state st;
	struct hs_error err = { 0 };
	pid_t holder;
	int rc;

	if ((rc = hs_keep_state_read(state, &st, &err))) {
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

static int bad_size(const char *arg)
{
	return usage_error(&cmd_keep, "--budget: '%s' is not a size: give bytes, or a number "
			   "with K, M, G, T, P or E (powers of 1024), or a percentage of RAM "
			   "(4096, 512M, 1.5G, 10%%)", arg);
}

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

static int run_keep(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "budget", required_argument, NULL, OPT_BUDGET },
		{ "interval", required_argument, NULL, OPT_INTERVAL },
		{ "state", required_argument, NULL, OPT_STATE },
		{ "status", no_argument, NULL, OPT_STATUS },
		{ "verbose", no_argument, NULL, 'v' },
		COMMON_LONGOPTS,
		{ 0 },
	};
	struct keep c = { 0 };
	struct hs_keep_opts o = { .signal_fd = -1, .event = on_event, .ctx = &c };
	struct hs_error err = { 0 };
	struct hs_keep *k;
	char **profiles, *state = NULL;
	bool status = false, json = false;
	int opt, n, rc, lock;
	pid_t holder;

	while ((opt = getopt_long(argc, argv, OPTS_START "v", longopts, NULL)) != -1) {
		switch (opt) {
		case OPT_BUDGET:
			if (parse_size(optarg, &o.budget) < 0)
				return bad_size(optarg);
			if (o.budget < hs_page_size())
				return usage_error(&cmd_keep, "--budget takes a size of at least a page");
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
			state = optarg;
			break;
		case OPT_STATUS: status = true; break;
		case 'v': c.verbose = true; break;
		case 'q': c.quiet = true; break;
		case 'J': json = true; break;
		default: return option_other(&cmd_keep, opt, argv, longopts);
		}
	}
	n = argc - optind;
	if (json && !status)
		return usage_error(&cmd_keep, "--json goes with --status (the keeper logs lines)");
	if (!status && !n)
		return usage_error(&cmd_keep, "give a PROFILE to keep");
	profiles = calloc((size_t)(n ? n : 1), sizeof(*profiles));
	if (!profiles)
		return error("out of memory"), EXIT_USAGE;
	for (int i = 0; i < n; i++) {
		const char *p = argv[optind + i];

		if (!*p || !strcmp(p, "-")) {
			free(profiles);
			return usage_error(&cmd_keep, "%s", *p ? "keep reads its profiles again on SIGHUP: "
					   "give files, not -" : "an empty PROFILE names no file");
		}
		if (!(profiles[i] = absolute_path(p, false))) {
			free(profiles);
			error("%s: %s", p, strerror(errno));
			return EXIT_USAGE;
		}
	}
	rc = EXIT_USAGE;
	if (!state)
		state = n ? default_state(profiles, (size_t)n, !status) : only_state();
	else
		state = strdup(state);
	if (!state)
		goto out;
	c.state = state;
	if (status) {
		rc = run_status(state, json);
		goto out;
	}
	if (!o.budget) {
		struct sysinfo si;

		o.budget = sysinfo(&si) == 0 ? (uint64_t)si.totalram * si.mem_unit / DEFAULT_BUDGET_SHARE
					     : UINT64_C(1) << 30;
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
	} else {
		rc = hs_keep_run(k);
		if (rc < 0)
			error("keeping failed: %s", strerror(-rc));
		rc = rc < 0 ? EXIT_USAGE : EXIT_OK;
		hs_keep_free(k);
	}
	close(o.signal_fd);
	close(lock);
out:
	for (int i = 0; i < n; i++)
		free(profiles[i]);
	free(profiles);
	free(state);
	return rc;
}

const struct cmd cmd_keep = {
	"keep", run_keep, "keep profiles' pages in the page cache, re-reading what is evicted", usage,
};
