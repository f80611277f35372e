/*
 * run-report.h - what hotset run says of its queue (run-report.c).
 */
#ifndef HOTSET_CLI_RUN_REPORT_H
#define HOTSET_CLI_RUN_REPORT_H

#include <stdbool.h>

#include "queue/queue.h"

/*
 * The status line on stderr (hs_runq_ops.progress): ctx points to a bool,
 * whether to show it (a terminal, no -q); over: the queue is over, clear it.
 */
void run_progress(void *ctx, const struct hs_runq *q, bool over);
/* The report at the end: the jobs as JSON (docs/json.md, "run"), or as a table. */
void run_json_report(const struct hs_runq *q);
void run_table_report(const struct hs_runq *q);
/* --dry-run: what would start at once, and why the others would wait. */
void run_dry_run(const struct hs_runq *q);
/* --dry-run with --engine slurm: the sbatch command line of each job. */
void run_slurm_plan(struct hs_runq *q);

#endif
