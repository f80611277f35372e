/*
 * options.c - the end of every option loop (-h, -V, errors) and the
 * suggestions for a mistyped command or option.
 */
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>

#include "base/hotset.h"
#include "cmd.h"
#include "messages.h"
#include "options.h"

/* Edit distance with adjacent transpositions ("stauts" is 1 from "status"). */
static size_t distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), d;
	size_t *row0, *row1, *row2, *all;

	if (la > 64 || lb > 64)
		return SIZE_MAX;	/* no one mistypes that much */
	all = calloc(3 * (lb + 1), sizeof(*all));
	if (!all)
		return SIZE_MAX;
	row0 = all, row1 = all + lb + 1, row2 = all + 2 * (lb + 1);
	for (size_t j = 0; j <= lb; j++)
		row1[j] = j;
	for (size_t i = 1; i <= la; i++) {
		row2[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t best = row1[j - 1] + (a[i - 1] != b[j - 1]);

			if (row1[j] + 1 < best)
				best = row1[j] + 1;
			if (row2[j - 1] + 1 < best)
				best = row2[j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    row0[j - 2] + 1 < best)
				best = row0[j - 2] + 1;
			row2[j] = best;
		}
		size_t *t = row0;
		row0 = row1, row1 = row2, row2 = t;
	}
	d = row1[lb];
	free(all);
	return d;
}

/* How far word is from a name: its edit distance, or 1 for the start of it. */
static size_t closeness(const char *word, const char *name)
{
	size_t len = strlen(word);

	return len >= 2 && !strncmp(name, word, len) ? 1 : distance(word, name);
}

size_t similar_names(const char *word, const char *const *candidates, size_t n, bool *want)
{
	size_t best = SIZE_MAX, len = strlen(word), found = 0;
	/* a third of the word may be wrong, and at least two letters of it */
	size_t limit = len / 3 > 2 ? len / 3 : 2;

	for (size_t i = 0; i < n; i++) {
		size_t d = closeness(word, candidates[i]);

		if (d < best)
			best = d;
	}
	for (size_t i = 0; i < n; i++)
		found += want[i] = best <= limit && closeness(word, candidates[i]) == best;
	return found;
}

/* "--name" of a long option argument, without "=value" (into buf). */
static const char *long_name(const char *arg, char *buf, size_t size)
{
	size_t n = strcspn(arg + 2, "=");

	if (n >= size)
		n = size - 1;
	memcpy(buf, arg + 2, n);
	buf[n] = '\0';
	return buf;
}

static int unknown_long(const struct cmd *cmd, const char *name, const struct option *longopts)
{
	const char *names[128] = { 0 };
	bool want[128];
	size_t n = 0, prefixed = 0, len = strlen(name);
	char list[1024] = "";

	for (; n < 128 && longopts[n].name; n++) {
		names[n] = longopts[n].name;
		if (len && !strncmp(names[n], name, len))
			prefixed++;
	}
	if (prefixed > 1) {	/* getopt_long takes a prefix only when one option has it */
		for (size_t i = 0; i < n; i++)
			if (!strncmp(names[i], name, len) && strlen(list) + strlen(names[i]) + 4 < sizeof(list))
				strcat(strcat(list, " --"), names[i]);
		return usage_error(cmd, "option '--%s' is ambiguous; possibilities:%s", name, list);
	}
	if (similar_names(name, names, n, want)) {
		for (size_t i = 0; i < n; i++)
			if (want[i] && strlen(list) + strlen(names[i]) + 6 < sizeof(list))
				strcat(strcat(strcat(list, *list ? " or '--" : "'--"), names[i]), "'");
		return usage_error(cmd, "unknown option '--%s'; did you mean %s?", name, list);
	}
	return usage_error(cmd, "unknown option '--%s'", name);
}

int option_other(const struct cmd *cmd, int opt, char **argv, const struct option *longopts)
{
	const char *arg = optind > 0 ? argv[optind - 1] : "";
	bool is_long = arg && !strncmp(arg, "--", 2);
	char name[128];

	switch (opt) {
	case 'h':
		return print_usage(cmd);
	case 'V':
		printf("hotset %s\n", HOTSET_VERSION);
		return finish_stdout(EXIT_OK);
	case ':':
		if (is_long)
			return usage_error(cmd, "option '--%s' needs an argument",
					   long_name(arg, name, sizeof(name)));
		return usage_error(cmd, "option '-%c' needs an argument", optopt);
	}
	if (is_long) {
		long_name(arg, name, sizeof(name));
		for (size_t i = 0; longopts[i].name; i++)
			if (!strcmp(longopts[i].name, name) && longopts[i].has_arg == no_argument)
				return usage_error(cmd, "option '--%s' takes no argument", name);
		return unknown_long(cmd, name, longopts);
	}
	if (optopt > 0 && optopt < 256 && optopt != '?')
		return usage_error(cmd, "unknown option '-%c'", optopt);
	return usage_error(cmd, "unknown option '%s'", arg);
}

int option_count(const struct cmd *cmd, const char *option, const char *arg,
		 unsigned min, unsigned max, unsigned *out)
{
	unsigned long v = 0;
	const char *p = arg;

	for (; *p >= '0' && *p <= '9' && v <= UINT_MAX; p++)
		v = v * 10 + (unsigned)(*p - '0');
	if (p == arg || *p || v < min || v > max)
		return usage_error(cmd, "%s takes a number from %u to %u, not '%s'", option, min,
				   max, arg);
	*out = (unsigned)v;
	return 0;
}

int option_profile(const struct cmd *cmd, const char **profile, const char *arg)
{
	if (*profile)
		return usage_error(cmd, "-p given twice ('%s', then '%s'): one profile at a time",
				   *profile, arg);
	*profile = arg;
	return 0;
}

int option_bad_size(const struct cmd *cmd, const char *option, const char *arg)
{
	return usage_error(cmd, "%s: '%s' is not a size: give bytes, or a number with K, M, "
			   "G, T, P or E (powers of 1024), or a percentage of RAM (4096, 512M, "
			   "1.5G, 10%%)", option, arg);
}

int option_budget(const struct cmd *cmd, const char *arg, bool page, uint64_t *out)
{
	uint64_t v;

	if (parse_size(arg, &v) < 0)
		return option_bad_size(cmd, "--budget", arg);
	if (page && v < hs_page_size())
		return usage_error(cmd, "--budget takes a size of at least a page");
	if (!v)
		return usage_error(cmd, "--budget takes a size above 0");
	*out = v;
	return 0;
}

/*
 * NUMBER [K|M|G|T|P|E [i] [B]] or NUMBER %, where NUMBER is DIGITS, or
 * DIGITS . DIGITS with either DIGITS possibly empty but not both, and
 * nothing else: strtod would take "1e9", "0x10", "inf" or " 5", which a
 * user is unlikely to mean as a size and which the man pages do not
 * define. The whole part is exact to 2^64-1; a fraction needs a unit or
 * a '%' (bytes come whole), and what it gives is rounded down to a byte.
 */
int parse_size(const char *s, uint64_t *out)
{
	static const char units[] = "KMGTPE";
	const char *p = s, *point, *u;
	uint64_t whole = 0, v, part;
	double frac = 0, scale = 1;
	unsigned shift;

	if (!s || !(isdigit((unsigned char)p[0]) || (p[0] == '.' && isdigit((unsigned char)p[1]))))
		return -1;
	for (; isdigit((unsigned char)*p); p++) {
		unsigned d = (unsigned)(*p - '0');

		if (whole > (UINT64_MAX - d) / 10)
			return -1;
		whole = whole * 10 + d;
	}
	point = p;
	if (*p == '.') {
		for (p++; isdigit((unsigned char)*p); p++)
			frac += (*p - '0') * (scale /= 10);
	}
	if (*p == '%') {
		struct sysinfo si;
		double pct = (double)whole + frac;

		if (p[1] || pct > 100 || sysinfo(&si) < 0)
			return -1;
		*out = (uint64_t)((double)si.totalram * si.mem_unit * pct / 100.0);
		return 0;
	}
	if (!*p) {
		if (*point == '.')
			return -1;	/* bytes come whole */
		*out = whole;
		return 0;
	}
	if (!(u = strchr(units, toupper((unsigned char)*p))))
		return -1;
	shift = 10 * (unsigned)(u - units + 1);
	p++;
	/* K, KB, KiB, k, kb, kib */
	if (*p == 'i' || *p == 'I')
		p++;
	if (*p == 'B' || *p == 'b')
		p++;
	if (*p || whole > UINT64_MAX >> shift)
		return -1;
	v = whole << shift;
	part = (uint64_t)(frac * (double)((uint64_t)1 << shift));	/* < 2^shift */
	if (v > UINT64_MAX - part)
		return -1;
	*out = v + part;
	return 0;
}

int parse_duration(const char *s, uint64_t *ns)
{
	static const struct {
		const char *unit;
		double ns;
	} units[] = { { "", 1e9 }, { "s", 1e9 }, { "ms", 1e6 }, { "m", 60e9 }, { "h", 3600e9 } };
	char *end;
	double v;

	/* digits first: strtod would also take "inf", "nan", hex and a sign */
	if (!s || !(isdigit((unsigned char)s[0]) || (s[0] == '.' && isdigit((unsigned char)s[1]))))
		return -1;
	v = strtod(s, &end);
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].unit))
			continue;
		if (v * units[i].ns >= 1.8e19)
			return -1;
		*ns = (uint64_t)(v * units[i].ns);
		return 0;
	}
	return -1;
}
