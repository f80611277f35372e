/*
 * doctor-report.h - doctor's reports of a diagnosis (model/doctor.h): in
 * words and JSON (doctor-report.c), and HTML (doctor-html.c).
 */
#ifndef HOTSET_CLI_DOCTOR_REPORT_H
#define HOTSET_CLI_DOCTOR_REPORT_H

#include <stdio.h>

#include "model/doctor.h"

/*
 * A fix's commands as one line to paste: each quoted by shell_join() (so
 * a path such as x$(touch y) stays one word), "> FILE" for its output,
 * joined by &&. Malloc'd; NULL for a fix without a command, or out of memory.
 */
char *doctor_fix_command(const struct hs_fix *x);

/* The diagnosis as JSON on stdout; html: the HTML report's path, or NULL. */
void doctor_json_report(const struct hs_doctor *d, const char *html);

/* The diagnosis in words on stdout, control bytes escaped. */
void doctor_print_human(const struct hs_doctor *d);

#endif
