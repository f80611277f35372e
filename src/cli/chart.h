/*
 * chart.h - charts as SVG, for curve's --svg and doctor's HTML report:
 * the miss curve of a profile, and a timeline of a run.
 */
#ifndef HOTSET_CLI_CHART_H
#define HOTSET_CLI_CHART_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "model/curve.h"

/*
 * The cold and re-run curves of c (pages of ps bytes) at the cache sizes
 * sizes[0 .. points) (pages, ascending); sizes NULL: at the kernel
 * model's points, or evenly from 0 to LRU's end. The axes hold every
 * point; the working set is marked, the legend under the plot. An SVG
 * image: with its XML declaration for a file of its own (xml_decl),
 * without for one inlined in HTML, where it scales to its container.
 */
void curve_svg(FILE *f, const struct hs_curve *c, uint32_t ps, const uint64_t *sizes,
	       unsigned points, bool xml_decl);

/*
 * A timeline of n samples at times t[] (seconds from the start): two
 * series of fractions of 1 (a[] and b[], named a_name and b_name), as
 * lines on an SVG chart titled title that scales to its container.
 */
void timeline_svg(FILE *f, const char *title, const double *t, const double *a,
		  const char *a_name, const double *b, const char *b_name, size_t n);

#endif
