/*
 * messages.c - what hotset says on stderr: each message one line,
 * "hotset: " first, written whole (struct line) with the control
 * characters of what it quotes escaped; usage errors; and the end of
 * standard output, whose write errors become an exit code.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "messages.h"
#include "output.h"

static void vmessage(const char *prefix, const char *fmt, va_list ap)
{
	char text[1024], *msg = text;
	struct line l;
	va_list again;
	int n;

	fflush(stdout);
	va_copy(again, ap);
	n = vsnprintf(text, sizeof(text), fmt, ap);
	if (n < 0)
		n = 0;
	if ((size_t)n >= sizeof(text)) {
		if ((msg = malloc((size_t)n + 1)))
			vsnprintf(msg, (size_t)n + 1, fmt, again);
		else
			msg = text, n = (int)sizeof(text) - 1;	/* cut short rather than lost */
	}
	va_end(again);
	line_start(&l);
	line_add(&l, "hotset: ", 8);
	line_add(&l, prefix, strlen(prefix));
	line_add_text(&l, msg, (size_t)n);	/* paths and names in it may hold anything */
	line_write(&l);
	if (msg != text)
		free(msg);
}

void warning(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage("warning: ", fmt, ap);
	va_end(ap);
}

int error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage("", fmt, ap);
	va_end(ap);
	return -1;
}

void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage("", fmt, ap);
	va_end(ap);
	exit(EXIT_USAGE);
}

int usage_error(const struct cmd *cmd, const char *fmt, ...)
{
	va_list ap;

	if (fmt) {
		va_start(ap, fmt);
		vmessage("", fmt, ap);
		va_end(ap);
	}
	fprintf(stderr, "Try 'hotset %s --help' for more information.\n", cmd->name);
	return EXIT_USAGE;
}

int print_usage(const struct cmd *cmd)
{
	fputs(cmd->usage, stdout);
	return finish_stdout(EXIT_OK);
}

int finish_stdout(int code)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		/* a closed pipe is the reader's choice, not an error worth noise */
		if (errno != EPIPE)
			error("error writing to standard output: %s", strerror(errno));
		return code ? code : EXIT_PARTIAL;
	}
	return code;
}
