/*
 * service-options.c - --pid, --cgroup, --unit and --for, as time, record
 * and doctor take them: one service a run, resolved before the command
 * runs.
 */
#include "messages.h"
#include "options.h"
#include "service-options.h"

int option_service(const struct cmd *cmd, int opt, const char *arg, struct service_opts *so)
{
	enum hs_service_kind k = opt == OPT_PID ? HS_SERVICE_PID :
				 opt == OPT_CGROUP ? HS_SERVICE_CGROUP : HS_SERVICE_UNIT;

	if (opt == OPT_FOR) {
		if (parse_duration(arg, &so->for_ns) < 0 || so->for_ns == 0)
			return usage_error(cmd, "--for takes a duration (10s, 5m, 1h), not '%s'", arg);
		return 0;
	}
	if (so->kind && so->kind != k)
		return usage_error(cmd, "%s and %s: one service a run", hs_service_option(so->kind),
				   hs_service_option(k));
	so->kind = k;
	so->arg = arg;
	return 0;
}

int option_service_resolve(const struct cmd *cmd, const struct service_opts *so,
			   bool have_command, struct hs_service *out, bool *named)
{
	struct hs_error err = { 0 };

	*named = false;
	if (so->for_ns && !so->kind)
		return usage_error(cmd, "--for needs a service: --pid, --cgroup or --unit");
	if (!have_command && !so->kind)
		return usage_error(cmd, "no command to run");
	if (have_command && so->for_ns)
		return usage_error(cmd, "--for watches a service without a COMMAND: the "
				   "command's run is the window");
	/* a service that is not there costs no run of the command */
	if (so->kind && hs_service_resolve(so->kind, so->arg, out, &err))
		return error("%s", err.msg), EXIT_USAGE;
	*named = so->kind != 0;
	return 0;
}
