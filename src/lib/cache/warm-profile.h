/*
 * warm-profile.h - a profile's working set read into the page cache in one
 * call: what `hotset warm -p PROFILE` does with no PATH to select among its
 * files, for a caller with nothing to print (run's warmer).
 */
#ifndef HOTSET_WARM_PROFILE_H
#define HOTSET_WARM_PROFILE_H

#include "base/hotset.h"
#include "cache/warm.h"

/*
 * Warm the profile at path, in its order, with the session options o (its
 * warn, if set, also hears of the profile's entries replaced since, which
 * are never opened). The profile is read whole first: one malformed at its
 * end warms nothing. Returns 0 with *st filled (a budget spent is not an
 * error: st->budget_reached), or -errno with err filled where an errno
 * says too little (a malformed profile: -EINVAL and its line).
 */
int hs_warm_profile(const char *path, const struct hs_warm_opts *o, struct hs_warm_stats *st,
		    struct hs_error *err);

#endif
