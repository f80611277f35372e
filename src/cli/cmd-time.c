/* cmd-time.c - hotset time (placeholder until implemented). */
#include "cli.h"

static const char usage[] = "usage: hotset time ...\n";
const struct cmd cmd_time;

static int run_time(int argc, char **argv)
{
	return error("time is not implemented yet"), EXIT_USAGE;
}

const struct cmd cmd_time = { "time", run_time, "(not implemented yet)", usage };
