/*
 * cmd-keep.c - hotset keep: a daemon that keeps profiles' working sets in
 * the page cache (the mechanism is src/lib/keep's), in the foreground or,
 * with --daemon, in the background once it is ready (keep-daemon.c); and
 * its --status, which reads the state file it leaves (keep-status.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include "base/atomic.h"
#include "keep/keep.h"
#include "kernel/cgroup.h"
#include "kernel/ioprio.h"
#include "kernel/psi.h"
#include "keep-daemon.h"
#include "keep-status.h"
#include "operands.h"
#include "options.h"
#include "cmd.h"
#include "messages.h"

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


/*
 * The PROFILEs, absolute (a reload reads them again, wherever the keeper
 * is then), into profiles; *made: how many were (the caller frees them).
 * Returns 0, or -1 said why.
 */
static int profile_paths(char **args, int n, char **profiles, int *made)
{
	for (int i = 0; i < n; i++) {
		const char *p = args[i];

		*made = i;	/* the ones made so far are freed */
		if (!*p || !strcmp(p, "-"))
			return usage_error(&cmd_keep, "%s", *p ? "keep reads its profiles again on "
					   "SIGHUP: give files, not -" : "an empty PROFILE names no file"), -1;
		if (!(profiles[i] = absolute_path(p, false)))
			return error("%s: %s", p, strerror(errno));
	}
	*made = n;
	return 0;
}

/*
 * The state to keep or read: --state's, else the PROFILEs' default (its
 * directory made when keeping), else the one state there is. For a user's
 * --status of PROFILEs, *alt is root's state of them, read if the user's
 * own is not there. NULL, said why, if there is none.
 */
static char *state_of(const char *state_arg, char **profiles, int n, bool status, char **alt)
{
	struct hs_error err = { 0 };
	char *state = NULL;
	/* a user's --status of PROFILEs: its own keeper's of them, else root's, seen as its view */
	bool root_too = status && n && !state_arg && geteuid() != 0;

	*alt = NULL;
	if (root_too && !(getenv("XDG_RUNTIME_DIR") && getenv("XDG_RUNTIME_DIR")[0] == '/')) {
		/* no keeper of its own */
		state = hs_keep_state_name(HS_KEEP_ROOT_DIR, profiles, (size_t)n);
		root_too = false;
	} else if (!state_arg) {
		if ((n ? hs_keep_state_default(profiles, (size_t)n, !status, &state, &err)
		       : hs_keep_state_only(&state, &err)))
			error("%s", err.msg);
	} else {
		if (!(state = strdup(state_arg)))
			error("out of memory");
	}
	if (state && root_too)
		*alt = hs_keep_state_name(HS_KEEP_ROOT_DIR, profiles, (size_t)n);
	return state;
}

/* What keeping needs of the options, beyond hs_keep_opts. */
struct keep_args {
	const char *pidfile, *io_cgroup, *log_arg;
	bool daemon;
};

/*
 * Keep the profiles of o, at c->state: the budget's default, the log, the
 * state, pid file and --io-cgroup checked before the state's lock is made
 * beside it, then the keeper made and run (in the background with
 * --daemon). Returns the exit status.
 */
static int keep_profiles(struct keep *c, struct hs_keep_opts *o, const struct keep_args *a)
{
	struct hs_error err = { 0 };
	struct hs_keep *k;
	char *log = NULL;
	int rc = EXIT_USAGE, lock, log_fd = -1;
	pid_t holder;

	if (!o->budget) {
		struct sysinfo si;

		o->budget = sysinfo(&si) == 0 ? (uint64_t)si.totalram * si.mem_unit / DEFAULT_BUDGET_SHARE
					     : UINT64_C(1) << 30;
	}
	/* logs: to --log FILE; --daemon's own file if stderr is a terminal it leaves */
	if (a->log_arg)
		log = strdup(a->log_arg);
	else if (a->daemon && isatty(2))
		log = keep_default_log(c->state);
	if ((a->log_arg || (a->daemon && isatty(2))) && !log) {
		error("out of memory");
		goto out;
	}
	/* a state it could never write is refused now, before its lock is made beside it */
	if (keep_state_check(c->state, a->log_arg ? NULL : log) < 0)
		goto out;
	if (a->pidfile && keep_pidfile_check(a->pidfile) < 0)
		goto out;
	if (a->io_cgroup && !(o->io_cgroup = io_cgroup_dir(a->io_cgroup)))
		goto out;
	/* appended to, never through another user's link, nor into another's file in /tmp */
	if (log && (log_fd = hs_open_regular(log, O_WRONLY | O_APPEND | O_CREAT, 0600, &err)) < 0) {
		error("cannot open the log %s: %s", log, err.msg);
		goto out;
	}
	if ((lock = hs_keep_lock(c->state, &holder)) < 0) {
		if (lock == -EWOULDBLOCK)
			error("another hotset keep (pid %d) is running on %s: stop it, or give another "
			      "--state", (int)holder, c->state);
		else
			error("cannot lock %s.lock: %s", c->state, strerror(-lock));
		goto out;
	}
	o->file_events = c->verbose;
	/* test hook (hotset-keep(1), ENVIRONMENT): pressure files of the test's own */
	o->pressure_dir = getenv("HOTSET_PSI_DIR");
	/* and one that finds evictions by the checks alone, as without root */
	o->checks_only = getenv("HOTSET_KEEP_NO_BPF") && *getenv("HOTSET_KEEP_NO_BPF");
	if ((rc = hs_ioprio_idle()))
		warning("cannot read at the idle I/O priority: %s", strerror(-rc));
	if ((o->signal_fd = signal_fd()) < 0) {
		error("cannot receive signals: %s", strerror(errno));
		rc = EXIT_USAGE;
		close(lock);
		goto out;
	}
	if ((rc = hs_keep_new(o, &k, &err))) {
		error("cannot keep: %s", err.msg[0] ? err.msg : strerror(-rc));
		rc = EXIT_USAGE;
	} else if ((a->daemon && (keep_daemonize(c, c->quiet, log) < 0 || hs_keep_lock_own(lock) < 0)) ||
		   (a->pidfile && keep_pidfile_write(a->pidfile) < 0) || (log_fd >= 0 && dup2(log_fd, 2) < 0)) {
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
	if (a->pidfile)
		keep_pidfile_remove(a->pidfile);
	close(o->signal_fd);
	close(lock);
out:
	if (log_fd >= 0)
		close(log_fd);
	free(log);
	free((char *)o->io_cgroup);
	return rc;
}

/* Options, then --status or keeping: long because the option loop, a case an option, is most of it. */
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
	struct hs_keep_opts o = { .signal_fd = -1, .event = keep_log_event, .ctx = &c };
	struct keep_args a = { 0 };
	char **profiles, *state = NULL, *alt;
	const char *state_arg = NULL;
	bool status = false, json = false;
	int opt, n, rc;

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
			a.io_cgroup = optarg;
			break;
		case OPT_DAEMON: a.daemon = true; break;
		case OPT_PIDFILE:
		case OPT_LOG:
			if (!*optarg)
				return usage_error(&cmd_keep, "an empty --%s names no file",
						   opt == OPT_LOG ? "log" : "pidfile");
			if (opt == OPT_LOG)
				a.log_arg = optarg;
			else
				a.pidfile = optarg;
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
	if (status && (a.daemon || a.pidfile || a.log_arg || o.protect || o.mode || a.io_cgroup))
		return usage_error(&cmd_keep, "--status only reads a state: --mode, --protect, "
				   "--io-cgroup, --daemon, --pidfile and --log go with keeping");
	c.lock = o.mode == HS_KEEP_LOCK;
	if (!status && !n)
		return usage_error(&cmd_keep, "give a PROFILE to keep");
	profiles = calloc((size_t)(n ? n : 1), sizeof(*profiles));
	if (!profiles)
		return error("out of memory"), EXIT_USAGE;
	rc = EXIT_USAGE;
	if (profile_paths(argv + optind, n, profiles, &n) < 0)
		goto out;
	if (!(state = state_of(state_arg, profiles, n, status, &alt)))
		goto out;
	c.state = state;
	if (status) {
		rc = keep_status(state, alt, json);
		free(alt);
		goto out;
	}
	o.profiles = (const char *const *)profiles;
	o.nprofiles = (size_t)n;
	o.state = state;
	rc = keep_profiles(&c, &o, &a);
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