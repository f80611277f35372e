/*
 * keep-status.h - `hotset keep --status`'s report (keep-status.c).
 */
#ifndef HOTSET_CLI_KEEP_STATUS_H
#define HOTSET_CLI_KEEP_STATUS_H

#include <stdbool.h>

/*
 * --status: print the state at state (or, if it has none, at alt, when
 * not NULL), in words or as JSON. Returns the exit status.
 */
int keep_status(const char *state, const char *alt, bool json);

#endif
