/*
 * curve-report.h - curve's reports of a curve made: JSON, CSV, the text
 * for people (a chart and a table), --mem-request, the SVG image.
 * cmd-curve.c parses the options, makes the curve and calls one of them.
 */
#ifndef HOTSET_CLI_CURVE_REPORT_H
#define HOTSET_CLI_CURVE_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "model/curve.h"
#include "model/need.h"
#include "output.h"

/* What a run of curve asked for and what it found: the reports read it. */
struct curve_cmd {
	const char *profile;
	bool json, csv;
	const char *svg;
	unsigned points;	/* --points: evenly from 0 to the curve's end; 0: not given */
	uint64_t *sizes;	/* --sizes, in pages, ascending; NULL: none given */
	unsigned nsizes;
	uint64_t *show;		/* the sizes of the points printed (CSV, JSON, SVG), in pages */
	unsigned nshow;
	struct hs_curve_opts opts;
	struct hs_curve c;
	struct hs_curve_summary s;
	uint32_t ps;
	bool mem_request, quiet;
	struct hs_rerun_need need;	/* of a warm re-run: the curve's, and the run's usage */
	const char *need_source;	/* what need.read is: "curve" or "working-set" */
	struct progress progress;
	const char *phase;
};

/* Is pages a size (neither "never" nor "unknown")? */
bool curve_size_known(uint64_t pages);

void curve_print_json(const struct curve_cmd *k);
void curve_print_csv(const struct curve_cmd *k);
void curve_print_human(const struct curve_cmd *k);
void curve_print_mem_request(const struct curve_cmd *k);

/* The chart as a standalone SVG image (chart.h), for --svg: ctx is the curve_cmd. */
void curve_write_svg(FILE *f, const void *ctx);

#endif
