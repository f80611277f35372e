/* curve-kernel.h - the kernel model's curves of a profile (curve-kernel.c). */
#ifndef HOTSET_CORE_CURVE_KERNEL_H
#define HOTSET_CORE_CURVE_KERNEL_H

#include "hotset/curve.h"

/*
 * hs_curve_from_profile() for HS_CURVE_KERNEL. With max_steps, returns 1
 * (and nothing in *out) when the simulations would take more page
 * accesses than that.
 */
int hs_curve_kernel_from_profile(struct hs_profile_reader *r, const struct hs_curve_opts *o,
				 uint64_t max_steps, struct hs_curve *out, struct hs_error *err);

#endif
