/* cmd-record.c - hotset record (placeholder until implemented). */
#include "cli.h"

static const char usage[] = "usage: hotset record ...\n";
const struct cmd cmd_record;

static int run_record(int argc, char **argv)
{
	return error("record is not implemented yet"), EXIT_USAGE;
}

const struct cmd cmd_record = { "record", run_record, "(not implemented yet)", usage };
