/*
 * cmd-doctor.c - hotset doctor: why a job waits for the disk, in plain
 * words: each finding with the figures it rests on, each fix a command.
 *
 * The options, one call (hs_doctor_diagnose(), model/doctor.h: the facts
 * gathered, the job recorded, the diagnosis made) and the choice of
 * report: text and JSON in doctor-report.c, HTML in doctor-html.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "doctor-html.h"
#include "doctor-report.h"
#include "operands.h"
#include "options.h"
#include "service-options.h"
#include "usage-report.h"
#include "atomic-write.h"
#include "cmd.h"
#include "messages.h"
#include "output.h"
#include "signals.h"

static const char usage[] =
	"usage: hotset doctor [-q] [-J] [-o REPORT.html] [--profile-output PROFILE]\n"
	"                     [--backend auto|ptrace|bpf] [--pid PID|--cgroup PATH|--unit NAME]\n"
	"                     [--] CMD [ARGS...]\n"
	"       hotset doctor [-q] [-J] [-o REPORT.html] [--cgroup CGROUP] -p PROFILE\n"
	"\n"
	"Say why a job waits for the disk, and what to do about it. The first form\n"
	"records CMD as 'hotset record --trace' does and times it, then diagnoses\n"
	"the run; the second diagnoses an earlier profile against what is resident\n"
	"now, in the memory cgroup the profile recorded the job in. What could not\n"
	"be seen is said first, with the privilege it needs; each finding comes\n"
	"with the figures it rests on, each fix with a command to paste. The\n"
	"diagnosis goes to standard output once CMD has ended.\n"
	"\n"
	"  -p, --profile PROFILE  diagnose this profile (recorded with --trace for the\n"
	"                         memory a re-run needs), without running anything\n"
	"      --cgroup CGROUP    with -p: diagnose the memory cgroup CGROUP (\"/a/b\", or\n"
	"                         its directory) instead of the profile's; with CMD:\n"
	"                         the service whose processes do CMD's work (as record\n"
	"                         --cgroup): its reads, waits and memory are diagnosed\n"
	"      --pid PID          with CMD: the service is process PID and its children\n"
	"      --unit NAME        with CMD: the service is systemd unit NAME's cgroup\n"
	"      --profile-output PROFILE\n"
	"                         where to write CMD's profile (default: hotset.profile)\n"
	"      --backend NAME     how to follow CMD: auto, ptrace or bpf (as record)\n"
	"  -o, --output FILE      also write the diagnosis as an HTML report to FILE,\n"
	"                         with the curve, a timeline of the run and the fixes\n"
	"  -J, --json             the diagnosis as JSON\n"
	"  -q, --quiet            no warnings about single files\n"
	"  -V, --version          show hotset's version\n"
	"  -h, --help             show this help\n"
	"\n"
	"Exit status: with CMD, CMD's own (as record); with -p, 0. 2 for a usage\n"
	"error, a malformed profile, a --cgroup that is not one, or a report that\n"
	"could not be written; 125, 126, 127 when CMD did not run (as record).\n";

const struct cmd cmd_doctor;

/* ---- the command -------------------------------------------------------------- */

struct args {
	bool json, quiet;
	const char *html, *out;		/* -o, --profile-output */
	struct service_opts so;		/* --pid, --unit, and --cgroup with CMD */
	struct hs_service service;
};

/* The options into d->o and a. Returns -1 to go on, else the exit status (after saying why). */
static int parse_options(int argc, char **argv, struct hs_doctor_opts *o, struct args *a)
{
	static const struct option longopts[] = {
		{ "profile", required_argument, NULL, 'p' },
		{ "profile-output", required_argument, NULL, OPT_PROFILE_OUTPUT },
		{ "output", required_argument, NULL, 'o' },
		{ "backend", required_argument, NULL, OPT_BACKEND },
		{ "cgroup", required_argument, NULL, OPT_CGROUP },
		{ "pid", required_argument, NULL, OPT_PID },
		{ "unit", required_argument, NULL, OPT_UNIT },
		COMMON_LONGOPTS,
		{ 0 },
	};
	bool named;
	int opt, rc;

	while ((opt = getopt_long(argc, argv, "+" OPTS_START "p:o:", longopts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			if ((rc = option_profile(&cmd_doctor, &o->profile, optarg)))
				return rc;
			break;
		case OPT_PROFILE_OUTPUT: a->out = optarg; break;
		case 'o': a->html = optarg; break;
		case OPT_CGROUP: case OPT_PID: case OPT_UNIT:
			/* --cgroup: with -p, the cgroup to diagnose; with CMD, the service */
			if (opt == OPT_CGROUP)
				o->cgroup = optarg;
			if ((rc = option_service(&cmd_doctor, opt, optarg, &a->so)))
				return rc;
			break;
		case OPT_BACKEND:
			if (hs_record_backend_parse(optarg, &o->backend))
				return usage_error(&cmd_doctor, "--backend is auto, ptrace or bpf");
			break;
		case 'q': a->quiet = true; break;
		case 'J': a->json = true; break;
		default: return option_other(&cmd_doctor, opt, argv, longopts);
		}
	}
	if (o->profile && (optind < argc || a->out))
		return usage_error(&cmd_doctor, "-p diagnoses a profile: no CMD%s with it",
				   a->out ? " nor --profile-output" : "");
	if (o->profile && !strcmp(o->profile, "-"))
		return usage_error(&cmd_doctor, "doctor reads the profile more than once: give a "
				   "file, not standard input");
	if (!o->profile && optind >= argc)
		return usage_error(&cmd_doctor, "give the command to diagnose after --, or -p PROFILE");
	if (o->profile && a->so.kind && a->so.kind != HS_SERVICE_CGROUP)
		return usage_error(&cmd_doctor, "%s names the service of a CMD: -p diagnoses a "
				   "profile", hs_service_option(a->so.kind));
	if (a->html && !*a->html)
		return usage_error(&cmd_doctor, "an empty -o FILE names no file");
	if (!o->profile) {
		o->argv = argv + optind;
		o->profile = a->out ? a->out : "hotset.profile";
		o->cgroup = NULL;
		/* a service that is not there costs no run of CMD */
		if ((rc = option_service_resolve(&cmd_doctor, &a->so, true, &a->service, &named)))
			return rc;
		o->service = named ? &a->service : NULL;
	}
	return -1;
}

/* The library maps the profile to count its residency: a truncation is said, not died of. */
static void mapping(void *ctx, const char *profile)
{
	(void)ctx;
	operands_guard_mapping(profile);
}

/*
 * What the run left to say (record's end, its notes), then what stopped
 * the diagnosis, if anything. Returns -1 to go on, else the exit status.
 */
static int say_gathered(const struct hs_doctor *d, int rc, bool quiet)
{
	const struct hs_error *e = &d->err;

	if (d->o.argv) {
		report_after_job();
		if (d->failed == HS_DOCTOR_NOT_RUN)
			return error("%s", d->run.msg), d->run.code;
		report_record_end(&d->run);
		if (d->failed == HS_DOCTOR_NOT_SAVED)
			return EXIT_HOTSET;
		for (int i = 0; i < d->run.u.nnotes; i++)
			if (!quiet)
				warning("%s", d->run.u.notes[i]);
	}
	if (d->failed == HS_DOCTOR_CGROUP)
		return error("--cgroup %s: %s", d->o.cgroup, e->msg), EXIT_USAGE;
	if (d->failed == HS_DOCTOR_PROFILE) {
		if (e->line)
			error("%s:%u: %s", d->o.profile, e->line, e->msg);
		else
			error("%s: %s", d->o.profile, e->msg[0] ? e->msg : strerror(-rc));
		return EXIT_USAGE;
	}
	if (d->skipped && !quiet)
		warning("%u file%s of the profile could not be examined (gone, or unreadable)",
			d->skipped, plural(d->skipped));
	return -1;
}

static int run_doctor(int argc, char **argv)
{
	struct hs_doctor *d = calloc(1, sizeof(*d));
	struct args a = { 0 };
	char *command = NULL;
	int rc;

	if (!d)
		return error("out of memory"), EXIT_HOTSET;
	if ((rc = parse_options(argc, argv, &d->o, &a)) >= 0)
		goto out;
	d->o.have_keep = true;	/* keep is a command of this binary: its fixes may be offered */
	d->o.warn = say_warning;
	d->o.mapping = mapping;
	if (d->o.argv)
		d->o.command = command = shell_join(d->o.argv);
	rc = hs_doctor_diagnose(d);
	if ((rc = say_gathered(d, rc, a.quiet)) >= 0) {
		rc = finish_stdout(rc);
		goto out;
	}
	rc = EXIT_OK;
	if (a.html && write_atomically(a.html, doctor_write_html, d))
		rc = EXIT_FAILED;
	if (a.json)
		doctor_json_report(d, a.html);
	else
		doctor_print_human(d);
	if (d->in.ran && rc == EXIT_OK)
		rc = exit_as_job(d->run.res.wait_status);
	else
		rc = finish_stdout(rc);
out:
	hs_doctor_release(d);
	free(command);
	free(d);
	return rc;
}

const struct cmd cmd_doctor = {
	"doctor", run_doctor, "why a job waits for the disk, with the evidence and the fixes",
	usage,
};
