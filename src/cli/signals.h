/*
 * signals.h - how hotset ends when a signal comes, or as its job ended
 * (signals.c).
 */
#ifndef HOTSET_CLI_SIGNALS_H
#define HOTSET_CLI_SIGNALS_H

/* The exit code that mirrors the job's wait status; killed by a signal,
 * hotset raises it instead of returning (see signals.c). */
int exit_as_job(int wait_status);
/*
 * Make each catchable signal that would end hotset (SIGHUP, SIGINT, SIGQUIT,
 * SIGTERM, SIGPIPE, SIGALRM, SIGUSR1, SIGUSR2, SIGXCPU, SIGXFSZ, SIGVTALRM,
 * SIGPROF, SIGIO, SIGPWR) first remove the temporary files of the files
 * being written (hs_atomic_cleanup()). A signal ignored or handled is left
 * alone; a handler installed later replaces this one for its signal.
 */
void catch_fatal_signals(void);

#endif
