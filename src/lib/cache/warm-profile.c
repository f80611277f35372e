/*
 * warm-profile.c - a profile's working set warmed in one call (see
 * warm-profile.h): the profile read whole, then its entries (targets.c)
 * fed to a warm session (warm.c) in profile order, so that a budget cuts
 * the end of the working set, not a random part of it.
 */
#include <stddef.h>

#include "cache/targets.h"
#include "cache/warm-profile.h"
#include "profile/profile.h"

/* The context of the walk: the session fed, and the caller's options for warn. */
struct warm_walk {
	struct hs_warm *session;
	const struct hs_warm_opts *o;
};

static int add(void *ctx, const struct hs_target *t)
{
	struct warm_walk *ww = ctx;

	return hs_warm_add(ww->session, t);
}

/* An entry that is not its file any more: the caller's warn, as the session's own. */
static void warn(void *ctx, const char *path, int errnum, const char *what)
{
	struct warm_walk *ww = ctx;

	if (ww->o->warn)
		ww->o->warn(ww->o->ctx, path, errnum, what);
}

int hs_warm_profile(const char *path, const struct hs_warm_opts *o, struct hs_warm_stats *st,
		    struct hs_error *err)
{
	struct warm_walk ww = { .session = NULL, .o = o };
	struct hs_profile_reader *r = NULL;
	struct hs_profile_item it;
	int rc;

	if ((rc = hs_profile_open(path, &r, err)))
		return rc;
	/*
	 * Read it all once before acting on any of it: a profile malformed at
	 * its end must not be half warmed (as `warm -p` does).
	 */
	while ((rc = hs_profile_next(r, &it, err)) > 0)
		;
	if (rc < 0)
		goto out;
	hs_profile_rewind(r);
	if ((rc = hs_warm_new(o, &ww.session)))
		goto out;
	rc = hs_targets_profile(r, add, warn, &ww, err);
	hs_warm_finish(ww.session, st);
	if (rc == HS_WARM_STOP)
		rc = 0;	/* the budget is spent: st says where */
out:
	hs_warm_free(ww.session);
	hs_profile_close(r);
	return rc;
}
