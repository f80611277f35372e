/* cmd-warm.c - hotset warm (placeholder until implemented). */
#include "cli.h"

static const char usage[] = "usage: hotset warm ...\n";
const struct cmd cmd_warm;

static int run_warm(int argc, char **argv)
{
	return error("warm is not implemented yet"), EXIT_USAGE;
}

const struct cmd cmd_warm = { "warm", run_warm, "(not implemented yet)", usage };
