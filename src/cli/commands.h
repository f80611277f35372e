/*
 * commands.h - the table of hotset's commands (commands.c), in the order
 * `hotset --help` lists them.
 */
#ifndef HOTSET_CLI_COMMANDS_H
#define HOTSET_CLI_COMMANDS_H

#include "cmd.h"

/* How many there are: the table's size, a compile-time constant for its users. */
#define COMMAND_COUNT 11
/* The table; NULL-terminated (a command more than COMMAND_COUNT does not compile). */
extern const struct cmd *const commands[COMMAND_COUNT + 1];
/* The command called name, or NULL. */
const struct cmd *find_command(const char *name);

#endif
