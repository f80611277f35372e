/*
 * chart.c - charts as SVG (chart.h): fixed coordinates in a viewBox, so
 * that a browser scales them to any width.
 */
#include <math.h>
#include <stdlib.h>

#include "chart.h"
#include "output.h"

#define W 720
#define H 480
#define X0 90
#define Y0 56	/* room above for the title and the working set's mark */
#define PW 590	/* the plot's width */
#define PH 320	/* and height */
#define LEGEND_Y (Y0 + PH + 64)	/* below the axis and its name: never over a line */
#define LRU_POINTS 101

static void svg_start(FILE *f, bool xml_decl, const char *title)
{
	if (xml_decl)
		fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", f);
	/* a width and height for a file of its own; inline, CSS sizes it by the viewBox */
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" ");
	if (xml_decl)
		fprintf(f, "width=\"%d\" height=\"%d\" ", W, H);
	fprintf(f, "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\" "
		   "role=\"img\">\n<title>%s</title>\n"
		   "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
		   "<text x=\"%d\" y=\"24\" font-size=\"15\">%s</text>\n", W, H, title, X0, title);
}

/* Grid lines, and labels from the callers' formatters at each quarter. */
static void svg_grid(FILE *f, const char *const xl[5], const char *const yl[5], const char *xname)
{
	for (int t = 0; t <= 4; t++) {
		double x = X0 + PW * t / 4.0, y = Y0 + PH - PH * t / 4.0;

		fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>\n",
			X0, y, X0 + PW, y);
		fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>\n",
			x, Y0, x, Y0 + PH);
		fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", X0 - 6,
			y + 4, yl[t]);
		fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", x,
			Y0 + PH + 18, xl[t]);
	}
	fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
		   "stroke=\"black\"/>\n", X0, Y0, PW, PH);
	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", X0 + PW / 2,
		Y0 + PH + 40, xname);
}

/* The legend of series i (0, 1) in color: a stroke and its name, under the plot. */
static void svg_legend(FILE *f, int i, const char *color, const char *name)
{
	int x = X0 + 200 * i;

	fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" "
		   "stroke-width=\"2\"/>\n", x, LEGEND_Y - 4, x + 24, LEGEND_Y - 4, color);
	fprintf(f, "<text x=\"%d\" y=\"%d\" fill=\"%s\">%s</text>\n", x + 30, LEGEND_Y, color, name);
}

/* A polyline of n points (x, y in [0, 1] of the plot). */
static void svg_line(FILE *f, const char *color, const double *x, const double *y, size_t n)
{
	fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", color);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s%.1f,%.1f", i ? " " : "", X0 + PW * x[i], Y0 + PH - PH * y[i]);
	fputs("\"/>\n", f);
}

void curve_svg(FILE *f, const struct hs_curve *c, uint32_t ps, const uint64_t *sizes,
	       unsigned points, bool xml_decl)
{
	char xb[5][16], yb[5][16], title[96];
	const char *xl[5], *yl[5];
	uint64_t *own = NULL, axis = c->end;
	double ymax = (double)c->accesses, *x = NULL, *y = NULL;

	/* no sizes: the kernel model's points, or LRU's evenly to its end */
	if (!sizes && (own = malloc((c->size ? c->n : LRU_POINTS) * sizeof(*own)))) {
		points = c->size ? (unsigned)c->n : LRU_POINTS;
		for (unsigned i = 0; i < points; i++)
			own[i] = c->size ? c->size[i] : hs_curve_even_size(c, i, points);
		sizes = own;
	}
	if (!sizes)
		points = 0;
	/* axes that hold every point: readahead can read more than was accessed */
	for (unsigned i = 0; i < points; i++) {
		axis = sizes[i] > axis ? sizes[i] : axis;
		for (int r = 0; r < 2; r++) {
			double v = hs_curve_misses(c, sizes[i], r);

			ymax = v > ymax ? v : ymax;
		}
	}
	snprintf(title, sizeof(title), "Bytes read from the disk by page cache size (%s%s)",
		 c->policy == HS_CURVE_KERNEL ? "kernel model" : "LRU",
		 c->sampled ? ", estimates" : "");
	svg_start(f, xml_decl, title);
	for (int t = 0; t <= 4; t++) {
		xl[t] = human_size(axis * ps / 4 * (uint64_t)t, xb[t]);
		yl[t] = human_size((uint64_t)(ymax * ps / 4 * t), yb[t]);
	}
	svg_grid(f, xl, yl, "page cache size");
	if (axis && c->pages <= axis) {	/* the working set, marked */
		double wx = X0 + PW * (double)c->pages / (double)axis;

		fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#888\" "
			   "stroke-dasharray=\"4 4\"/>\n", wx, Y0, wx, Y0 + PH);
		fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"%s\" fill=\"#888\">working "
			   "set</text>\n", wx + (wx > X0 + PW / 2 ? -4 : 4), Y0 - 6,
			wx > X0 + PW / 2 ? "end" : "start");
	}
	if (points && (x = malloc(points * sizeof(*x))) && (y = malloc(points * sizeof(*y)))) {
		for (int r = 0; r < 2; r++) {
			for (unsigned i = 0; i < points; i++) {
				x[i] = axis ? (double)sizes[i] / (double)axis : 0;
				y[i] = ymax > 0 ? hs_curve_misses(c, sizes[i], r) / ymax : 0;
			}
			svg_line(f, r ? "#1f77b4" : "#d62728", x, y, points);
		}
	}
	free(x), free(y), free(own);
	svg_legend(f, 0, "#d62728", "cold start");
	svg_legend(f, 1, "#1f77b4", "re-run");
	fputs("</svg>\n", f);
}

void timeline_svg(FILE *f, const char *title, const double *t, const double *a,
		  const char *a_name, const double *b, const char *b_name, size_t n)
{
	static const char *const yl[5] = { "0%", "25%", "50%", "75%", "100%" };
	double end = n ? t[n - 1] : 0, *x = NULL, *ya = NULL, *yb = NULL;
	char xb[5][32];
	const char *xl[5];

	svg_start(f, false, title);
	for (int k = 0; k <= 4; k++) {
		snprintf(xb[k], sizeof(xb[k]), "%.3g s", end * k / 4);
		xl[k] = xb[k];
	}
	svg_grid(f, xl, yl, "time since the start");
	if (n && (x = malloc(n * sizeof(*x))) && (ya = malloc(n * sizeof(*ya))) &&
	    (yb = malloc(n * sizeof(*yb)))) {
		for (size_t i = 0; i < n; i++) {
			x[i] = end > 0 ? t[i] / end : 0;
			ya[i] = a[i] < 0 ? 0 : a[i] > 1 ? 1 : a[i];
			yb[i] = b[i] < 0 ? 0 : b[i] > 1 ? 1 : b[i];
		}
		svg_line(f, "#2ca02c", x, ya, n);
		svg_line(f, "#d62728", x, yb, n);
	}
	free(x), free(ya), free(yb);
	svg_legend(f, 0, "#2ca02c", a_name);
	svg_legend(f, 1, "#d62728", b_name);
	fputs("</svg>\n", f);
}
