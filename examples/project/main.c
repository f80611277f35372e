/* main.c - count the words of the files named on the command line. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <locale.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>

#include "store.h"

static void count_file(struct store *s, const char *path)
{
	FILE *f = fopen(path, "r");
	char word[256];
	size_t n = 0;
	int ch;

	if (!f) {
		fprintf(stderr, "wordcount: %s: %s\n", path, strerror(errno));
		return;
	}
	while ((ch = getc(f)) != EOF) {
		if (isalnum(ch) && n < sizeof(word) - 1) {
			word[n++] = (char)tolower(ch);
		} else if (n) {
			store_add(s, word, n);
			n = 0;
		}
	}
	if (n)
		store_add(s, word, n);
	fclose(f);
}

int main(int argc, char **argv)
{
	struct store *s = store_new();
	int top = 10, opt;

	setlocale(LC_ALL, "");
	while ((opt = getopt(argc, argv, "n:")) != -1)
		if (opt == 'n')
			top = atoi(optarg);
	for (int i = optind; i < argc; i++)
		count_file(s, argv[i]);
	store_print_top(s, top);
	store_free(s);
	return 0;
}
