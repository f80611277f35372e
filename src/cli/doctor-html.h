/*
 * doctor-html.h - doctor's HTML report (doctor-html.c).
 */
#ifndef HOTSET_CLI_DOCTOR_HTML_H
#define HOTSET_CLI_DOCTOR_HTML_H

#include <stdio.h>

/* The HTML report of the diagnosis ctx (a struct hs_doctor), for write_atomically(). */
void doctor_write_html(FILE *f, const void *ctx);

#endif
