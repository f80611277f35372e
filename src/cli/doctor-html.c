/*
 * doctor-html.c - doctor's HTML report: the findings and fixes of the
 * text report, with the curve, a timeline of the run and the largest
 * directories of the working set, in one file that prints.
 */
#include <stdlib.h>
#include <string.h>

#include "chart.h"
#include "output.h"
#include "doctor-html.h"
#include "doctor-report.h"

#define TIMELINE_POINTS 600	/* intervals in the HTML timeline: a minute at 100 ms */

/* TIMELINE_POINTS, or fewer (2 or more) from HOTSET_TIMELINE_POINTS: a test's run of seconds */
static size_t timeline_points(void)
{
	const char *v = getenv("HOTSET_TIMELINE_POINTS");
	char *end;
	unsigned long n = v && *v ? strtoul(v, &end, 10) : 0;

	return n >= 2 && n < TIMELINE_POINTS && !*end ? n : TIMELINE_POINTS;
}

/* Text for HTML: what the text report shows (control bytes as \xHH), as entities. */
static void html_text(FILE *f, const char *s)
{
	print_html(f, s, strlen(s), true);
}

static const char html_style[] =
	"body{font-family:system-ui,sans-serif;margin:0 auto;padding:1em;max-width:60em;"
	"overflow-wrap:anywhere;"
	"line-height:1.45;color:#111}\n"
	"h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em}\n"
	"svg{width:100%;height:auto;display:block}\n"
	".finding{border-left:4px solid #999;padding:.2em .8em;margin:.8em 0}\n"
	".problem{border-color:#d62728}\n"
	".unseen{border-color:#ff7f0e}\n"
	".evidence{color:#444;font-size:.9em;margin:.3em 0 0 1em;padding:0}\n"
	"pre{background:#f4f4f4;padding:.6em;overflow-x:auto;white-space:pre-wrap;"
	"word-break:break-all}\n"
	"table{border-collapse:collapse;width:100%}td,th{text-align:left;padding:.2em .4em;"
	"border-bottom:1px solid #ddd;word-break:break-all}td.n{text-align:right}\n"
	"@media print{body{max-width:none;font-size:10pt}pre{border:1px solid #ccc}"
	".chart{break-inside:avoid}}\n";

static void html_head(FILE *f, const struct hs_doctor *d)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	      "<title>hotset doctor: ", f);
	html_text(f, d->o.profile);
	fprintf(f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<h1>Why the job waits for "
		   "the disk</h1>\n<p>", html_style);
	html_text(f, d->in.ran ? "The run just recorded, profile " : "Profile ");
	html_text(f, d->o.profile);
	fputs("</p>\n", f);
}

static void html_unseen(FILE *f, const struct hs_diagnosis *x)
{
	if (!x->nunseen)
		return;
	fputs("<h2>Not read</h2>\n<ul>\n", f);
	for (int i = 0; i < x->nunseen; i++) {
		fputs("<li>", f);
		html_text(f, x->unseen[i].source);
		fputs(": ", f);
		html_text(f, x->unseen[i].reason);
		fputs("</li>\n", f);
	}
	fputs("</ul>\n", f);
}

static void html_findings(FILE *f, const struct hs_diagnosis *x)
{
	fputs("<h2>Findings</h2>\n", f);
	for (int i = 0; i < x->nf; i++) {
		const struct hs_finding *g = &x->f[i];

		fprintf(f, "<div class=\"finding%s\" id=\"%s\"><p>", g->severity == HS_SEV_PROBLEM ?
			" problem" : g->severity == HS_SEV_UNSEEN ? " unseen" : "", g->id);
		html_text(f, g->text);
		fputs("</p>\n<ul class=\"evidence\">\n", f);
		for (int e = 0; e < g->nev; e++) {
			fputs("<li>", f);
			html_text(f, g->evidence[e]);
			fputs("</li>\n", f);
		}
		fputs("</ul></div>\n", f);
	}
}

static void html_fixes(FILE *f, const struct hs_diagnosis *x)
{
	if (!x->nfix)
		return;
	fputs("<h2>What to do</h2>\n<ol>\n", f);
	for (int i = 0; i < x->nfix; i++) {
		char *cmd = doctor_fix_command(&x->fix[i]);

		fputs("<li><p>", f);
		html_text(f, x->fix[i].text);
		fputs("</p>", f);
		if (cmd) {
			/* the command as it is pasted: its quoting's backslashes stay single */
			fputs("<pre><code>", f);
			print_html(f, cmd, strlen(cmd), false);
			fputs("</code></pre>", f);
		}
		fputs("</li>\n", f);
		free(cmd);
	}
	fputs("</ol>\n", f);
}

/*
 * The run's CPU and I/O wait, at most TIMELINE_POINTS intervals: a long
 * run's samples are taken every stride-th (and the last), and each
 * interval's shares are of the whole interval (the samples are running
 * totals), so only detail is lost, and the chart stays as legible and as
 * small as a minute's.
 */
static void html_timeline(FILE *f, const struct hs_usage_timeline *tl)
{
	size_t stride = (tl->n - 2) / timeline_points() + 1, m = 0;
	size_t cap = (tl->n - 1) / stride + 2;
	double *t = malloc(cap * sizeof(*t)), *cpu = malloc(cap * sizeof(*cpu));
	double *io = malloc(cap * sizeof(*io));
	const struct hs_usage_sample *p = &tl->v[0];
	char title[96];

	if (!t || !cpu || !io)
		goto out;
	for (size_t i = 0;; i = i + stride < tl->n ? i + stride : tl->n - 1) {
		const struct hs_usage_sample *s = &tl->v[i];
		double dt = s->t - p->t;

		/* each interval's share of time on CPU (of one CPU) and blocked on I/O */
		t[m] = s->t;
		cpu[m] = dt > 0 ? (s->cpu_s - p->cpu_s) / dt : 0;
		io[m] = dt > 0 ? (s->io_wait_s - p->io_wait_s) / dt : 0;
		m++;
		p = s;
		if (i == tl->n - 1)
			break;
	}
	if (stride == 1)
		snprintf(title, sizeof(title), "Share of each 100 ms on a CPU and waiting on I/O");
	else
		snprintf(title, sizeof(title), "Share of each %.3g s on a CPU and waiting on I/O",
			 stride * 0.1);
	fputs("<h2>The run: CPU and I/O wait</h2>\n<div class=\"chart\" id=\"timeline\">\n", f);
	timeline_svg(f, title, t, cpu, "on a CPU", io, "waiting on I/O", m);
	fputs("</div>\n", f);
out:
	free(t), free(cpu), free(io);
}

static void html_dirs(FILE *f, const struct hs_doctor *d)
{
	uint32_t ps = d->in.page_size;
	char a[16];

	if (!d->tops.ndirs)
		return;
	fputs("<h2>Largest directories of the working set</h2>\n<table>\n<tr><th>directory"
	      "</th><th>size</th><th>share</th><th>files</th></tr>\n", f);
	for (size_t k = 0; k < d->tops.ndirs; k++) {
		fputs("<tr><td>", f);
		html_text(f, d->tops.dir[k].name);
		fprintf(f, "</td><td class=\"n\">%s</td><td class=\"n\">%.1f%%</td><td "
			   "class=\"n\">%llu</td></tr>\n",
			human_size(d->tops.dir[k].pages * ps, a),
			d->in.pages ? 100.0 * d->tops.dir[k].pages / d->in.pages : 0,
			(unsigned long long)d->tops.dir[k].files);
	}
	fputs("</table>\n", f);
}

void doctor_write_html(FILE *f, const void *ctx)
{
	const struct hs_doctor *d = ctx;

	html_head(f, d);
	html_unseen(f, &d->dx);
	html_findings(f, &d->dx);
	html_fixes(f, &d->dx);
	if (d->curve_ok) {
		fputs("<h2>Memory and bytes read</h2>\n<div class=\"chart\" id=\"curve\">\n", f);
		curve_svg(f, &d->c, d->in.page_size, NULL, 101, false);
		fputs("</div>\n", f);
	}
	if (d->in.ran && d->tl.n > 1)
		html_timeline(f, &d->tl);
	html_dirs(f, d);
	fputs("<p><small>hotset " HOTSET_VERSION " doctor</small></p>\n</body>\n</html>\n", f);
}
