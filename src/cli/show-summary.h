/*
 * show-summary.h - the summary show prints of a profile: its totals, the
 * largest directories and files, the directories that hold its working
 * set (a struct hs_summary, of pages of ps bytes).
 */
#ifndef HOTSET_CLI_SHOW_SUMMARY_H
#define HOTSET_CLI_SHOW_SUMMARY_H

#include <stdint.h>

#include "profile/summary.h"
#include "output.h"

/* As text, after the header: totals, ranges, flags, then the directories and files. */
void show_summary_print(const struct hs_summary *s, uint32_t ps);

/* As the keys of show's report (docs/json.md), after the files, outputs and trace. */
void show_summary_json(struct json *j, const struct hs_summary *s, uint32_t ps);

#endif
