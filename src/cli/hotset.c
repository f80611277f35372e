/*
 * hotset.c - the hotset command: finds the command in the table
 * (commands.c), says `hotset --help` and `hotset help CMD`, and runs it.
 */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/hotset.h"
#include "job/job.h"
#include "cmd.h"
#include "commands.h"
#include "messages.h"
#include "options.h"
#include "signals.h"

static const char main_usage[] =
	"usage: hotset [--version] [--help] COMMAND [ARGS...]\n"
	"\n"
	"Find the files a slow job waits for, and keep them in memory.\n"
	"\n"
	"Commands:\n";

/* As git: "'stauts' is not a hotset command", then the most similar ones. */
static int unknown_command(const char *name)
{
	/* room for every command (the table's size counts its NULL too) */
	const char *names[sizeof(commands) / sizeof(commands[0])];
	bool want[sizeof(commands) / sizeof(commands[0])];
	size_t n = 0, found;

	error("'%s' is not a hotset command; see 'hotset --help'", name);
	for (; commands[n]; n++)
		names[n] = commands[n]->name;
	if ((found = similar_names(name, names, n, want))) {
		fprintf(stderr, "\nThe most similar command%s\n", found == 1 ? " is" : "s are");
		for (size_t i = 0; i < n; i++)
			if (want[i])
				fprintf(stderr, "\t%s\n", names[i]);
	}
	return EXIT_USAGE;
}

static void print_main_usage(FILE *f)
{
	fputs(main_usage, f);
	for (size_t i = 0; commands[i]; i++)
		fprintf(f, "   %-10s %s\n", commands[i]->name, commands[i]->summary);
	fputs("\nRun 'hotset help COMMAND' or 'hotset COMMAND --help' for a command's options.\n", f);
}

int main(int argc, char **argv)
{
	const struct cmd *cmd;

	if (argc < 2) {
		print_main_usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		print_main_usage(stdout);
		return finish_stdout(EXIT_OK);
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("hotset %s\n", HOTSET_VERSION);
		return finish_stdout(EXIT_OK);
	}
	if (!strcmp(argv[1], "help")) {
		if (argc < 3) {
			print_main_usage(stdout);
			return finish_stdout(EXIT_OK);
		}
		if (!(cmd = find_command(argv[2])))
			return unknown_command(argv[2]);
		return print_usage(cmd);
	}
	if (argv[1][0] == '-') {
		error("unknown option '%s'", argv[1]);
		print_main_usage(stderr);
		return EXIT_USAGE;
	}
	if (!(cmd = find_command(argv[1])))
		return unknown_command(argv[1]);
	opterr = 0;	/* option_other() says what is wrong, escaped and with suggestions */
	hs_job_claim_sigchld();
	catch_fatal_signals();	/* a file being written leaves no temporary file */
	return cmd->run(argc - 1, argv + 1);
}
