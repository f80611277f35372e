/*
 * hotset.c - the hotset command: one table maps each subcommand to the
 * function that runs it, and feeds `hotset --help` and `hotset help CMD`.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "base/atomic.h"
#include "base/hotset.h"
#include "job/job.h"
#include "options.h"

const struct cmd *const commands[] = {
	&cmd_record, &cmd_time, &cmd_show, &cmd_status, &cmd_warm, &cmd_evict,
	&cmd_snapshot, &cmd_curve, &cmd_doctor, &cmd_keep, &cmd_run, NULL,
};

static const char main_usage[] =
	"usage: hotset [--version] [--help] COMMAND [ARGS...]\n"
	"\n"
	"Find the files a slow job waits for, and keep them in memory.\n"
	"\n"
	"Commands:\n";

const struct cmd *find_command(const char *name)
{
	for (size_t i = 0; commands[i]; i++)
		if (strcmp(commands[i]->name, name) == 0)
			return commands[i];
	return NULL;
}

/* As git: "'stauts' is not a hotset command", then the most similar ones. */
static int unknown_command(const char *name)
{
	/* room for every command (the table's size counts its NULL too) */
	const char *names[sizeof(commands) / sizeof(commands[0])];
	bool want[sizeof(commands) / sizeof(commands[0])];
	size_t n = 0, found;

	error("'%s' is not a hotset command; see 'hotset --help'", name);
	for (; commands[n]; n++)
		names[n] = commands[n]->name;
	if ((found = similar_names(name, names, n, want))) {
		fprintf(stderr, "\nThe most similar command%s\n", found == 1 ? " is" : "s are");
		for (size_t i = 0; i < n; i++)
			if (want[i])
				fprintf(stderr, "\t%s\n", names[i]);
	}
	return EXIT_USAGE;
}

static void print_main_usage(FILE *f)
{
	fputs(main_usage, f);
	for (size_t i = 0; commands[i]; i++)
		fprintf(f, "   %-10s %s\n", commands[i]->name, commands[i]->summary);
	fputs("\nRun 'hotset help COMMAND' or 'hotset COMMAND --help' for a command's options.\n", f);
}

static void vmessage(const char *prefix, const char *fmt, va_list ap)
{
	char text[1024], *msg = text;
	struct line l;
	va_list again;
	int n;

	fflush(stdout);
	va_copy(again, ap);
	n = vsnprintf(text, sizeof(text), fmt, ap);
	if (n < 0)
		n = 0;
	if ((size_t)n >= sizeof(text)) {
		if ((msg = malloc((size_t)n + 1)))
			vsnprintf(msg, (size_t)n + 1, fmt, again);
		else
			msg = text, n = (int)sizeof(text) - 1;	/* cut short rather than lost */
	}
	va_end(again);
	line_start(&l);
	line_add(&l, "hotset: ", 8);
	line_add(&l, prefix, strlen(prefix));
	line_add_text(&l, msg, (size_t)n);	/* paths and names in it may hold anything */
	line_write(&l);
	if (msg != text)
		free(msg);
}

void warning(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage("warning: ", fmt, ap);
	va_end(ap);
}

int error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage("", fmt, ap);
	va_end(ap);
	return -1;
}

void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage("", fmt, ap);
	va_end(ap);
	exit(EXIT_USAGE);
}

int usage_error(const struct cmd *cmd, const char *fmt, ...)
{
	va_list ap;

	if (fmt) {
		va_start(ap, fmt);
		vmessage("", fmt, ap);
		va_end(ap);
	}
	fprintf(stderr, "Try 'hotset %s --help' for more information.\n", cmd->name);
	return EXIT_USAGE;
}

int print_usage(const struct cmd *cmd)
{
	fputs(cmd->usage, stdout);
	return finish_stdout(EXIT_OK);
}

int exit_as_job(int wait_status)
{
	int code = hs_job_exit_code(wait_status), sig = WTERMSIG(wait_status);
	struct rlimit no_core = { 0, 0 };
	sigset_t set;

	if (finish_stdout(code) != code)
		return code;
	/* all is written: a signal sent to hotset since the job ended acts now */
	fflush(stderr);
	hs_job_release_signals();
	/*
	 * Killed by a signal, hotset dies of it too: a shell then sees the
	 * signal, not a plain exit 128+N, and stops a loop on ^C as it would
	 * for the bare command. No core: the job dumped, not hotset.
	 */
	if (!WIFSIGNALED(wait_status))
		return code;
	setrlimit(RLIMIT_CORE, &no_core);
	prctl(PR_SET_DUMPABLE, 0);	/* nor to a core_pattern pipe (systemd-coredump) */
	signal(sig, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
	return code;	/* a signal whose default is to ignore it */
}

int finish_stdout(int code)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		/* a closed pipe is the reader's choice, not an error worth noise */
		if (errno != EPIPE)
			error("error writing to standard output: %s", strerror(errno));
		return code ? code : EXIT_PARTIAL;
	}
	return code;
}

/*
 * A fatal signal first removes the temporary files of the files being
 * written (hs_atomic_cleanup(), async-signal-safe), then ends the process
 * as it would have: SA_RESETHAND and SA_NODEFER, and the signal raised
 * again.
 */
static void on_fatal_signal(int sig)
{
	hs_atomic_cleanup();
	raise(sig);
}

void catch_fatal_signals(void)
{
	static const int fatal[] = {
		SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGPIPE, SIGALRM, SIGUSR1, SIGUSR2,
		SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF, SIGIO, SIGPWR,
	};
	struct sigaction sa, old;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_fatal_signal;
	sa.sa_flags = SA_RESETHAND | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++) {
		/* one ignored stays ignored (nohup), one handled stays its handler's */
		if (sigaction(fatal[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL &&
		    !(old.sa_flags & SA_SIGINFO))
			sigaction(fatal[i], &sa, NULL);
	}
}

int main(int argc, char **argv)
{
	const struct cmd *cmd;

	if (argc < 2) {
		print_main_usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		print_main_usage(stdout);
		return finish_stdout(EXIT_OK);
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("hotset %s\n", HOTSET_VERSION);
		return finish_stdout(EXIT_OK);
	}
	if (!strcmp(argv[1], "help")) {
		if (argc < 3) {
			print_main_usage(stdout);
			return finish_stdout(EXIT_OK);
		}
		if (!(cmd = find_command(argv[2])))
			return unknown_command(argv[2]);
		return print_usage(cmd);
	}
	if (argv[1][0] == '-') {
		error("unknown option '%s'", argv[1]);
		print_main_usage(stderr);
		return EXIT_USAGE;
	}
	if (!(cmd = find_command(argv[1])))
		return unknown_command(argv[1]);
	opterr = 0;	/* option_other() says what is wrong, escaped and with suggestions */
	hs_job_claim_sigchld();
	catch_fatal_signals();	/* a file being written leaves no temporary file */
	return cmd->run(argc - 1, argv + 1);
}
