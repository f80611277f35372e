/*
 * commands.c - the table of hotset's commands: it maps each name to the
 * command that runs it, and feeds `hotset --help` and `hotset help CMD`.
 */
#include <stddef.h>
#include <string.h>

#include "cmd.h"
#include "commands.h"

const struct cmd *const commands[COMMAND_COUNT + 1] = {
	&cmd_record, &cmd_time, &cmd_show, &cmd_status, &cmd_warm, &cmd_evict,
	&cmd_snapshot, &cmd_curve, &cmd_doctor, &cmd_keep, &cmd_run, NULL,
};

const struct cmd *find_command(const char *name)
{
	for (size_t i = 0; commands[i]; i++)
		if (strcmp(commands[i]->name, name) == 0)
			return commands[i];
	return NULL;
}
