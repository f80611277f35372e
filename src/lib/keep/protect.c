/*
 * protect.c - --protect: memory.low of the keeper's cgroup (v2) set to
 * the kept bytes (see protect.h). The cgroup is the keeper's own: one
 * that holds other processes is refused (their memory would be protected
 * too), and a keeper in the root, which has no memory.low, moves into a
 * cgroup it makes, and out of it and removes it at the end.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "keep/keeper.h"
#include "keep/protect.h"
#include "kernel/cgroup.h"
#include "kernel/memory.h"

int hs_keep_protect(const char *mount, const char *own, const char *name, uint64_t bytes,
		    char *dir, size_t size, bool *made, struct hs_error *err)
{
	char m[PATH_MAX], o[PATH_MAX], num[32];
	int rc, n;

	*made = false;
	/* the tests give a fake tree; the keeper its own cgroup */
	if (!mount) {
		if (hs_cgroup2_dirs(o, m, sizeof(m)) < 0)
			m[0] = o[0] = '\0';
		mount = m;
		own = o;
	}
	if (!own[0] || !hs_cgroup_has_controller(own, "memory")) {
		struct hs_memcg v1;

		if (hs_memcg_of(0, &v1) == 0 && v1.version == 1)
			return hs_error_set(err, ENOTSUP, "--protect cannot be done here: the memory "
					    "controller is on cgroup v1, which has no low protection "
					    "(memory.soft_limit_in_bytes is the opposite); it needs cgroup v2 "
					    "with the memory controller (systemd.unified_cgroup_hierarchy=1)");
		if (!own[0])
			return hs_error_set(err, ENOTSUP, "--protect cannot be done here: %s",
					    mount[0] ? "this process's cgroup is not under the cgroup2 "
					    "mount (another cgroup namespace?)" : "no cgroup v2 is mounted");
		return hs_error_set(err, ENOTSUP, "--protect cannot be done here: %s has no memory "
				    "controller (cgroup.controllers): enable it in the parent's "
				    "cgroup.subtree_control, or use MemoryLow= in the unit", own);
	}
	if (!strcmp(own, mount)) {
		/* the root has no memory.low: a cgroup of our own under it */
		if ((rc = hs_cgroup_make(mount, name, o, sizeof(o))) == -ENAMETOOLONG)
			return hs_error_set(err, ENAMETOOLONG, "%s/%s: too long", mount, name);
		/* one there already: an earlier keeper's of this state, that could not remove it */
		if (rc && rc != -EEXIST)
			return hs_error_set(err, -rc, "--protect: cannot make the cgroup %s: %s",
					    o, strerror(-rc));
		if ((rc = hs_cgroup_move(o, getpid())))
			return hs_error_set(err, -rc, "--protect: cannot move into the cgroup %s: %s",
					    o, strerror(-rc));
		*made = true;
		own = o;
	} else if ((n = hs_cgroup_nprocs(own)) > 1) {
		return hs_error_set(err, EBUSY, "--protect: %s holds %d processes, whose memory "
				    "its memory.low would protect too: run keep alone in a cgroup (the "
				    "unit with MemoryLow=, systemd-run --scope)", own, n);
	}
	snprintf(num, sizeof(num), "%llu\n", (unsigned long long)bytes);
	if ((rc = hs_cgroup_write(own, "memory.low", num))) {
		hs_error_set(err, -rc, "--protect: cannot write %s/memory.low: %s%s", own,
			     strerror(-rc), rc == -EACCES || rc == -EPERM ?
			     " (it needs root, or a cgroup delegated to this user)" : "");
		if (*made)
			hs_keep_unprotect(own, true);
		*made = false;
		return rc;
	}
	snprintf(dir, size, "%s", own);
	return 0;
}

void hs_keep_unprotect(const char *dir, bool made)
{
	char parent[PATH_MAX], *slash;

	hs_cgroup_write(dir, "memory.low", "0\n");
	if (!made)
		return;
	snprintf(parent, sizeof(parent), "%s", dir);
	if (!(slash = strrchr(parent, '/')))
		return;
	*slash = '\0';
	/* out of it first: a cgroup that holds a process cannot be removed */
	if (hs_cgroup_move(parent, getpid()) == 0)
		rmdir(dir);
}

/* ---- the keeper's protection -------------------------------------------------- */

int keep_protect_start(struct hs_keep *k, struct hs_error *err)
{
	const char *base = strrchr(k->o.state, '/');
	char name[128];
	int rc;

	/* a cgroup of its own, if it must make one, named after its state */
	snprintf(name, sizeof(name), "hotset-%s", base ? base + 1 : k->o.state);
	if ((rc = hs_keep_protect(NULL, NULL, name, k->set.bytes, k->st.protect_cgroup,
				  sizeof(k->st.protect_cgroup), &k->protect_made, err)))
		return rc;
	k->st.protected_bytes = k->set.bytes;
	return 0;
}

void keep_protect_update(struct hs_keep *k)
{
	char num[32];
	int rc;

	if (!k->st.protect_cgroup[0])
		return;
	snprintf(num, sizeof(num), "%llu\n", (unsigned long long)k->set.bytes);
	if ((rc = hs_cgroup_write(k->st.protect_cgroup, "memory.low", num)))
		keep_warn(k, k->st.protect_cgroup, -rc, "cannot set memory.low");
	else
		k->st.protected_bytes = k->set.bytes;
}

void keep_protect_end(struct hs_keep *k)
{
	if (!k->st.protect_cgroup[0])
		return;
	hs_keep_unprotect(k->st.protect_cgroup, k->protect_made);
	k->st.protect_cgroup[0] = '\0';
	k->st.protected_bytes = 0;
}
