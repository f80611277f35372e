/*
 * service-options.h - the options that name the service a job's work is
 * done by: --pid, --cgroup, --unit, and --for (time, record, doctor).
 */
#ifndef HOTSET_CLI_SERVICE_OPTIONS_H
#define HOTSET_CLI_SERVICE_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>

#include "cmd.h"
#include "job/service.h"

/*
 * The service a job's work is done by (--pid, --cgroup, --unit) and the
 * window without a command (--for), as time and record take them.
 */
struct service_opts {
	enum hs_service_kind kind;	/* 0: none */
	const char *arg;
	uint64_t for_ns;		/* --for; 0: none */
};

/*
 * Take opt (OPT_PID, OPT_CGROUP, OPT_UNIT or OPT_FOR) and its argument
 * into *so. Returns 0, or EXIT_USAGE after saying why not.
 */
int option_service(const struct cmd *cmd, int opt, const char *arg, struct service_opts *so);

/*
 * After the options: check that *so agrees with whether a command was
 * given, and resolve the service into *out (when one was named: *named).
 * Returns 0, or EXIT_USAGE after saying why not; the command is not run.
 */
int option_service_resolve(const struct cmd *cmd, const struct service_opts *so,
			   bool have_command, struct hs_service *out, bool *named);

#endif
