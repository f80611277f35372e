/*
 * diagnosis-data.c - findings, figures and fixes as data
 * (diagnosis-impl.h): each written into the struct hs_diagnosis the
 * caller gave, in bounded arrays (diagnosis.h's sizes), never allocated;
 * a fix's words copied into its own storage, so that it outlives the
 * facts it was made from. And the sizes and words the sentences use.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/diagnosis-impl.h"

/* ---- findings, figures, fixes as data ------------------------------------------ */

struct hs_finding *dg_finding(struct hs_diagnosis *d, const char *id, enum hs_severity sev,
			      const char *fmt, ...)
{
	static __thread struct hs_finding spare;	/* past the last: written, never shown */
	struct hs_finding *f = d->nf < HS_DIAG_FINDINGS ? &d->f[d->nf++] : &spare;
	va_list ap;

	memset(f, 0, sizeof(*f));
	f->id = id;
	f->severity = sev;
	va_start(ap, fmt);
	vsnprintf(f->text, sizeof(f->text), fmt, ap);
	va_end(ap);
	return f;
}

void dg_evidence(struct hs_finding *f, const char *fmt, ...)
{
	va_list ap;

	if (f->nev >= HS_DIAG_EVIDENCE)
		return;
	va_start(ap, fmt);
	vsnprintf(f->evidence[f->nev++], sizeof(f->evidence[0]), fmt, ap);
	va_end(ap);
}

/*
 * A figure for scripts, beside the evidence in words. An unknown figure is
 * kept, as unknown (null in JSON), so that a script sees it was looked for.
 */
void dg_figure_u(struct hs_finding *f, const char *name, const char *unit, bool known, uint64_t v)
{
	if (f->nfig < HS_DIAG_FIGURES)
		f->fig[f->nfig++] = (struct hs_figure){ name, unit, known, true, known ? v : 0, 0 };
}

void dg_figure_d(struct hs_finding *f, const char *name, const char *unit, bool known, double v)
{
	if (f->nfig < HS_DIAG_FIGURES)
		f->fig[f->nfig++] = (struct hs_figure){ name, unit, known, false, 0, known ? v : 0 };
}

void hs_diag_unseen(struct hs_diagnosis *d, const char *source, const char *fmt, ...)
{
	struct hs_unseen *n;
	va_list ap;

	if (d->nunseen >= HS_DIAG_UNSEEN)
		return;
	n = &d->unseen[d->nunseen++];
	snprintf(n->source, sizeof(n->source), "%s", source);
	va_start(ap, fmt);
	vsnprintf(n->reason, sizeof(n->reason), fmt, ap);
	va_end(ap);
}

/*
 * A fix is built in the next free slot and counted only by dg_fix_end(), once
 * every word of its commands fitted: a command cut short is never offered.
 */
struct hs_fix *dg_fix_begin(struct hs_diagnosis *d, const char *fmt, ...)
{
	static __thread struct hs_fix spare;
	struct hs_fix *x = d->nfix < HS_DIAG_FIXES ? &d->fix[d->nfix] : &spare;
	va_list ap;

	memset(x, 0, sizeof(*x));
	va_start(ap, fmt);
	vsnprintf(x->text, sizeof(x->text), fmt, ap);
	va_end(ap);
	return x;
}

/* A copy of s in x's storage, or NULL when it is full (x is then not offered). */
static const char *word(struct hs_fix *x, const char *s)
{
	size_t len = strlen(s) + 1;
	char *w;

	if (x->used + len > sizeof(x->buf)) {
		x->used = sizeof(x->buf) + 1;	/* no later word fits either */
		return NULL;
	}
	w = memcpy(x->buf + x->used, s, len);
	x->used += len;
	return w;
}

/*
 * Add a command to x: the words up to NULL, its output to output if not
 * NULL. The words are copied: a fix outlives the strings it was made from
 * (a scheme's path, a size formatted on the stack). Too many words, or
 * steps, spoil the fix as a word that does not fit does.
 */
void dg_step(struct hs_fix *x, const char *output, ...)
{
	struct hs_fix_step *s;
	const char *a;
	va_list ap;

	if (x->nsteps >= HS_FIX_STEPS) {
		x->used = sizeof(x->buf) + 1;
		return;
	}
	s = &x->step[x->nsteps++];
	va_start(ap, output);
	while ((a = va_arg(ap, const char *))) {
		if (s->argc < HS_FIX_WORDS)
			s->argv[s->argc++] = word(x, a);
		else
			x->used = sizeof(x->buf) + 1;
	}
	va_end(ap);
	s->argv[s->argc] = NULL;
	s->output = output ? word(x, output) : NULL;
}

/* One more word for x's last step. */
void dg_step_word(struct hs_fix *x, const char *a)
{
	struct hs_fix_step *s = &x->step[x->nsteps - 1];

	if (s->argc < HS_FIX_WORDS)
		s->argv[s->argc++] = word(x, a), s->argv[s->argc] = NULL;
	else
		x->used = sizeof(x->buf) + 1;
}

void dg_fix_end(struct hs_diagnosis *d, struct hs_fix *x)
{
	if (x == &d->fix[d->nfix] && d->nfix < HS_DIAG_FIXES && x->used <= sizeof(x->buf))
		d->nfix++;
}

/* A size for a command line: whole MiB, rounded up ("1536M"). */
void dg_size_arg(uint64_t bytes, char *buf, size_t size)
{
	snprintf(buf, size, "%lluM", (unsigned long long)((bytes + (1u << 20) - 1) >> 20));
}

const char *dg_size_str(uint64_t bytes, char buf[16])
{
	return hs_size_str(bytes, buf);
}

/* pages as the memory they take, labelled so (hotset(1), SIZES): "62.6 MiB of memory" */
const char *dg_memory_str(uint64_t pages, uint64_t page_size, char buf[32])
{
	char h[16];

	snprintf(buf, 32, "%s of memory", hs_size_str(pages * page_size, h));
	return buf;
}

const char *dg_plural(uint64_t n)
{
	return n == 1 ? "" : "s";
}

uint64_t dg_less(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

/*
 * systemd's escaping of a path for a unit's instance (systemd.unit(5),
 * "String Escaping for Inclusion in Unit Names"), written from its
 * description: the path tidied (no "//", "/./" or trailing '/'), its
 * leading '/' dropped, every other '/' a '-', and every byte but ASCII
 * letters, digits, ':', '_' and a '.' that does not start the name as
 * \xHH. Done here, not by $(systemd-escape -p DIR) in the command: the
 * command is then argv, and a directory's name never meets a shell.
 */
int hs_systemd_escape_path(const char *path, char *out, size_t size)
{
	static const char hex[] = "0123456789abcdef";
	char tidy[PATH_MAX];
	size_t n = 0, len;

	if (path[0] != '/' || (size_t)snprintf(tidy, sizeof(tidy), "%s", path) >= sizeof(tidy))
		return -EINVAL;
	hs_tidy_path(tidy, false);
	len = strlen(tidy);
	while (len > 1 && tidy[len - 1] == '/')
		tidy[--len] = '\0';
	/* systemd refuses a path with ".." in it: it is not normalised */
	for (const char *p = tidy; (p = strstr(p, "/..")); p += 3)
		if (p[3] == '/' || !p[3])
			return -EINVAL;
	if (!strcmp(tidy, "/")) {
		if (size < 2)
			return -ENAMETOOLONG;
		memcpy(out, "-", 2);
		return 0;
	}
	/* '/' between names is '-'; a byte but a letter, digit, ':', '_' or a later '.' is \xHH */
	for (const unsigned char *p = (const unsigned char *)tidy + 1; *p; p++) {
		char e[4];
		size_t k = 1;
		bool plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			     (*p >= '0' && *p <= '9') || *p == ':' || *p == '_' ||
			     (*p == '.' && p != (const unsigned char *)tidy + 1);

		if (*p == '/')
			e[0] = '-';
		else if (plain)
			e[0] = (char)*p;
		else
			e[0] = '\\', e[1] = 'x', e[2] = hex[*p >> 4], e[3] = hex[*p & 15], k = 4;
		if (n + k >= size)
			return -ENAMETOOLONG;
		memcpy(out + n, e, k);
		n += k;
	}
	out[n] = '\0';
	return 0;
}
