/*
 * messages.h - what hotset says on stderr ("hotset: ..."), usage errors,
 * and the end of standard output (messages.c).
 */
#ifndef HOTSET_CLI_MESSAGES_H
#define HOTSET_CLI_MESSAGES_H

#include "cmd.h"

/* ---- messages: "hotset: ..." on stderr ---------------------------------- */
void warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print an error; returns -1 so that callers can `return error(...)`. */
int error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
_Noreturn void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print "usage: ..." for cmd with a reason and return EXIT_USAGE. */
int usage_error(const struct cmd *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Print cmd's usage to stdout and return EXIT_OK (for --help). */
int print_usage(const struct cmd *cmd);

/* Flush stdout and turn a write error into an error message; returns the
 * exit code to use (code, or EXIT_PARTIAL/EXIT_HOTSET if stdout failed). */
int finish_stdout(int code);

#endif
