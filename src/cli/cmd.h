/*
 * cmd.h - a hotset command as the table holds it (commands.h), and the
 * exit codes every command uses. Each cmd-NAME.c defines its cmd_NAME.
 */
#ifndef HOTSET_CLI_CMD_H
#define HOTSET_CLI_CMD_H

/* Exit codes that scripts can rely on (see hotset(1), EXIT STATUS). */
enum {
	EXIT_OK = 0,
	EXIT_PARTIAL = 1,	/* some operands failed; the rest was done */
	EXIT_USAGE = 2,		/* bad command line or unreadable profile */
	EXIT_FAILED = 2,	/* the command failed (a profile cannot be written): as a usage error, README */
	EXIT_HOTSET = 125,	/* record/time: hotset itself failed */
	EXIT_NOEXEC = 126,	/* record/time: command cannot be executed */
	EXIT_NOTFOUND = 127,	/* record/time: command not found */
};

struct cmd {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;	/* one line, for `hotset --help` */
	const char *usage;	/* synopsis and options, for CMD --help */
};

extern const struct cmd cmd_record, cmd_show, cmd_snapshot, cmd_status, cmd_warm,
	cmd_evict, cmd_time, cmd_curve, cmd_doctor, cmd_keep, cmd_run;

#endif
