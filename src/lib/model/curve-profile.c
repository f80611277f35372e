/*
 * curve-profile.c - the curves of a profile's trace (curve.h): the entry
 * point that picks the model, and the options of the model of hotset's
 * commands.
 *
 * The kernel model reads the profile itself (curve-kernel.c: it wants
 * each file's size and readahead window beside the trace); LRU, exact or
 * sampled, is fed the trace's runs of dense ids (trace.h) through the
 * builder (curve.c). This file is above both, so that neither calls the
 * other.
 */
#include <errno.h>
#include <string.h>

#include "model/curve-kernel.h"
#include "model/curve.h"
#include "model/trace.h"

void hs_curve_model_opts(struct hs_curve_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->policy = HS_CURVE_AUTO;
	o->read_ahead_pages = HS_CURVE_RA_DEVICE;
}

int hs_curve_from_profile(struct hs_profile_reader *r, const struct hs_curve_opts *o,
			  struct hs_curve *out, struct hs_error *err)
{
	struct hs_curve_builder *b = NULL;
	struct hs_trace *t = NULL;
	struct hs_curve_opts opts = *o;
	uint64_t first, n;
	int rc;

	if ((o->policy == HS_CURVE_AUTO && !o->sample_rate && !o->sample_size) ||
	    o->policy == HS_CURVE_KERNEL) {
		opts.policy = HS_CURVE_KERNEL;
		return hs_curve_kernel_from_profile(r, &opts, out, err);
	}
	opts.policy = HS_CURVE_LRU;
	if ((rc = hs_trace_open(r, &t, err)))
		return rc;
	/* a profile's file lines list exactly the pages its trace accesses */
	opts.known_pages = hs_trace_pages(t);
	if ((rc = hs_curve_new(&opts, hs_trace_pages(t), &b))) {
		if (rc == -E2BIG)
			hs_error_set(err, E2BIG, "more than %llu distinct pages for an exact "
				     "curve: sample them",
				     (unsigned long long)HS_CURVE_EXACT_MAX_PAGES);
		else
			hs_error_set(err, -rc, "%s", strerror(-rc));
		goto out;
	}
	while ((rc = hs_trace_next(t, &first, &n, err)) > 0)
		if ((rc = hs_curve_access_run(b, first, n))) {
			hs_error_set(err, -rc, "%s", strerror(-rc));
			goto out;
		}
	if (!rc && (rc = hs_curve_finish(b, out)))
		hs_error_set(err, -rc, "%s", strerror(-rc));
out:
	hs_curve_builder_free(b);
	hs_trace_close(t);
	return rc;
}
