/*
 * signals.c - how hotset ends: as its job did (a signal raised again), or
 * at a fatal signal, with no temporary file left behind.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "base/atomic.h"
#include "job/job.h"
#include "messages.h"
#include "signals.h"

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
