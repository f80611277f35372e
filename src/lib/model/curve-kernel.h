/* curve-kernel.h - the kernel model's curves of a profile (curve-kernel.c). */
#ifndef HOTSET_CORE_CURVE_KERNEL_H
#define HOTSET_CORE_CURVE_KERNEL_H

#include "model/curve.h"

/* hs_curve_from_profile() for HS_CURVE_KERNEL. */
int hs_curve_kernel_from_profile(struct hs_profile_reader *r, const struct hs_curve_opts *o,
				 struct hs_curve *out, struct hs_error *err);

/*
 * hs_trace_next(), and the run's file (its index among the profile's file
 * lines) and its first page in that file.
 */
int hs_trace_next_in_file(struct hs_trace *t, uint64_t *file, uint64_t *page, uint64_t *first,
			  uint64_t *n, struct hs_error *err);

#endif
