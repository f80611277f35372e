/*
 * keep-daemon.h - the keeper of `hotset keep` as cmd-keep.c runs it
 * (keep-daemon.c): its log lines and readiness, its pid file, log and
 * going to the background. --status's report is keep-status.h's.
 */
#ifndef HOTSET_CLI_KEEP_DAEMON_H
#define HOTSET_CLI_KEEP_DAEMON_H

#include <stdbool.h>

#include "keep/keep.h"

struct keep {
	bool quiet, verbose, lock;
	const char *state;
	int ready_fd;		/* --daemon: the pipe the parent waits on, until STARTED */
};

/* The keeper's event callback (hs_keep_opts.event, ctx a struct keep): a log line each. */
void keep_log_event(void *ctx, const struct hs_keep_event *e);

/*
 * --pidfile: keep_pidfile_check() refuses (-1, said) a pid file naming a
 * live process other than this one; keep_pidfile_write() writes this
 * process's pid (-1, said, if it cannot); keep_pidfile_remove() removes
 * it at exit unless another process wrote its own there since.
 */
int keep_pidfile_check(const char *path);
int keep_pidfile_write(const char *path);
void keep_pidfile_remove(const char *path);

/* --daemon's log when none is given: the state's name with .log (malloc'd, NULL: no memory). */
char *keep_default_log(const char *state);

/*
 * --daemon: go to the background once the keeper is ready. Returns 0 in
 * the child (its ready byte to send in c->ready_fd), or -1, said; the
 * parent never returns.
 */
int keep_daemonize(struct keep *c, bool quiet, const char *log);

/* A state keep can write, in a safe directory: 0, or -1 said why. */
int keep_state_check(const char *state, const char *own_log);

#endif
