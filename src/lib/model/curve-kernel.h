/* curve-kernel.h - the kernel model's curves of a profile (curve-kernel.c). */
#ifndef HOTSET_CORE_CURVE_KERNEL_H
#define HOTSET_CORE_CURVE_KERNEL_H

#include "model/curve.h"

/* hs_curve_from_profile() for HS_CURVE_KERNEL. */
int hs_curve_kernel_from_profile(struct hs_profile_reader *r, const struct hs_curve_opts *o,
				 struct hs_curve *out, struct hs_error *err);

#endif
