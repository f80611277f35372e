/*
 * owners.c - whose credentials read what: the keeper itself, and, for a
 * keeper run as root, the owner of each profile, whose filesystem ids and
 * groups its files are opened and queried with; and each such owner's
 * view of the state, the figures of that owner's files alone.
 */
#include <dirent.h>
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "keep/keeper.h"

/*
 * A keeper run as root (a service, Slurm's epilog's keeper) keeps profiles
 * that users wrote. Reading their files as root would let a user have root
 * open whatever a profile names (a file in another user's 0700 directory:
 * its pages read in, its residency counted into the state), so the files
 * of a profile are opened with its owner's credentials: the filesystem uid
 * and gid and the supplementary groups of the thread that opens them, set
 * with the raw system calls (glibc's setgroups() changes every thread's
 * groups; setfsuid and setfsgid are the thread's own). The kernel checks
 * the opens and cachestat(2)/mincore(2) with them: a file the owner cannot
 * read is not opened, one it may read but not query is not watched. A
 * thread rather than a process per owner: one kept set, one budget and one
 * schedule, no messages between processes for a check; and what the
 * credentials leave is what a keeper needs beside them: CAP_IPC_LOCK for
 * lock mode, CAP_BPF for the eviction events, root's files for its state
 * (the kernel drops only the filesystem capabilities while the fsuid is
 * not 0). Everything but the opens and the residency runs as the keeper:
 * keep_creds_use(k, 0) puts its own back.
 */
static uid_t fsuid_now(void)
{
	return (uid_t)syscall(SYS_setfsuid, (uid_t)-1);	/* an invalid id: changes nothing */
}

static gid_t fsgid_now(void)
{
	return (gid_t)syscall(SYS_setfsgid, (gid_t)-1);
}

/* This thread's credentials for files: owner i's. Returns 0 or -EPERM. */
int keep_creds_use(struct hs_keep *k, size_t i)
{
	const struct kowner *me, *o;

	if (k->creds == i)
		return 0;
	me = &k->owners[0];
	o = &k->owners[i];
	if (k->creds != 0) {
		/* the keeper's own first: from another user's, only it may take a third's */
		syscall(SYS_setfsuid, me->uid);
		syscall(SYS_setfsgid, me->gid);
		if (syscall(SYS_setgroups, (size_t)me->ngroups, me->groups) < 0 ||
		    fsuid_now() != me->uid || fsgid_now() != me->gid)
			return -EPERM;
		k->creds = 0;
	}
	if (i == 0)
		return 0;
	if (syscall(SYS_setgroups, (size_t)o->ngroups, o->groups) == 0) {
		syscall(SYS_setfsgid, o->gid);
		syscall(SYS_setfsuid, o->uid);
		if (fsuid_now() == o->uid && fsgid_now() == o->gid) {
			k->creds = i;
			return 0;
		}
	}
	/* half taken: the keeper's own again, and nothing opened as anyone */
	k->creds = i;
	keep_creds_use(k, 0);
	return -EPERM;
}

/* owners[0]: the keeper, with its own ids and groups. */
int keep_owner_self(struct hs_keep *k)
{
	struct kowner *me;
	int n = getgroups(0, NULL);

	if (n < 0 || hs_grow(&k->owners, &k->owners_cap, 1, sizeof(*k->owners)))
		return -ENOMEM;
	me = &k->owners[0];
	memset(me, 0, sizeof(*me));
	k->nowners = 1;
	me->uid = geteuid();
	me->gid = getegid();
	me->active = true;
	if (!(me->groups = malloc(((size_t)n + 1) * sizeof(gid_t))) ||
	    (me->ngroups = getgroups(n, me->groups)) < 0)
		return -ENOMEM;
	return 0;
}

/*
 * The supplementary groups of the user called name, of primary group gid
 * (getgrouplist(3), as initgroups(3) sets them at login): 0, or -ENOMEM.
 */
static int groups_of(const char *name, gid_t gid, gid_t **groups, int *n)
{
	int want = 32;

	for (;;) {
		gid_t *g = malloc((size_t)want * sizeof(*g));
		int got = want;

		if (!g)
			return -ENOMEM;
		if (getgrouplist(name, gid, g, &got) >= 0) {
			*groups = g;
			*n = got;
			return 0;
		}
		free(g);
		if (got <= want)	/* it should have said how many it needs */
			got = want * 2;
		if (got > 65536)
			return -ENOMEM;
		want = got;
	}
}

/* Resume owner o's counters from its view of an earlier run, if there is one. */
static void owner_resume(struct hs_keep *k, struct kowner *o)
{
	struct hs_keep_state old;
	char *path = hs_keep_view_path(k->o.state, o->uid);

	if (path && hs_keep_state_read(path, &old, NULL) == 0) {
		if (old.view && old.view_uid == o->uid) {
			o->st.refault_pages = old.refault_pages;
			o->st.rewarmed_pages = old.rewarmed_pages;
			o->st.rewarms = old.rewarms;
			o->st.last_rewarm_ns = old.last_rewarm_ns;
			o->st.since_ns = old.since_ns;
		}
		hs_keep_state_release(&old);
	}
	free(path);
}

/*
 * The owner whose credentials read a profile of user uid: the keeper
 * itself when it is not root (it has no other credentials to take) or
 * when the profile is its own; else that user, with the primary group
 * and groups the user database gives. A user it does not know is refused:
 * whose groups would read the files could not be told.
 */
int keep_owner_of(struct hs_keep *k, uid_t uid, size_t *out, struct hs_error *err)
{
	struct passwd pw, *found = NULL;
	struct kowner *o;
	char *buf;
	long size = sysconf(_SC_GETPW_R_SIZE_MAX);
	int rc;

	if (k->owners[0].uid != 0 || uid == k->owners[0].uid) {
		*out = 0;
		return 0;
	}
	for (size_t i = 1; i < k->nowners; i++) {
		if (k->owners[i].uid == uid) {
			*out = i;
			return 0;
		}
	}
	if (size < 16384)
		size = 16384;
	if (!(buf = malloc((size_t)size)))
		return -ENOMEM;
	rc = getpwuid_r(uid, &pw, buf, (size_t)size, &found);
	if (!found) {
		free(buf);
		return hs_error_set(err, rc ? rc : ESRCH, "owned by uid %u, which the user database "
				    "does not know%s%s: a root keeper reads a profile's files with its "
				    "owner's credentials, and those cannot be told", (unsigned)uid,
				    rc ? " (" : "", rc ? strerror(rc) : "");
	}
	if (hs_grow(&k->owners, &k->owners_cap, k->nowners + 1, sizeof(*k->owners))) {
		free(buf);
		return -ENOMEM;
	}
	o = &k->owners[k->nowners];
	memset(o, 0, sizeof(*o));
	o->uid = uid;
	o->gid = pw.pw_gid;
	rc = groups_of(pw.pw_name, pw.pw_gid, &o->groups, &o->ngroups);
	free(buf);
	if (rc)
		return rc;
	owner_resume(k, o);
	if (!o->st.since_ns)
		o->st.since_ns = hs_realtime_ns();
	*out = k->nowners++;
	return 0;
}

void keep_owners_free(struct hs_keep *k)
{
	for (size_t i = 0; i < k->nowners; i++) {
		free(k->owners[i].groups);
		u64map_free(&k->owners[i].ids);
	}
	free(k->owners);
	k->owners = NULL;
	k->nowners = 0;
}

/* ---- the owners' views ------------------------------------------------------------ */

/*
 * A root keeper's state holds the figures of every kept file, whoever may
 * query it: it is root's alone (0600). Each other owner of a profile gets
 * a view beside it, STATE.uid-UID, made that user's and readable by that
 * user alone: the same state with the figures of that owner's files, which
 * the keeper read with that owner's credentials (so nothing in it is
 * residency the owner could not query), and the keeper's own facts
 * (pressure, interval, mode), which tell nothing of anyone's files; the
 * protected bytes, the sum over every owner's files, are left out.
 */
static int view_of(struct hs_keep *k, size_t i, struct hs_keep_state *v)
{
	const struct kowner *o = &k->owners[i];
	const uint64_t ps = hs_page_size();
	size_t n = 0;

	*v = k->st;
	v->view = true;
	v->view_uid = o->uid;
	v->refault_pages = o->st.refault_pages;
	v->rewarmed_pages = o->st.rewarmed_pages;
	v->rewarms = o->st.rewarms;
	v->last_rewarm_ns = o->st.last_rewarm_ns;
	v->since_ns = o->st.since_ns;
	v->dropped_files = o->st.dropped_files;
	v->replaced_files = o->st.replaced_files;
	v->files = v->pages = v->unknown_files = v->locked_files = v->locked_bytes = 0;
	for (size_t f = 0; f < k->set.n; f++) {
		const struct kfile *kf = &k->set.files[f];

		if (kf->owner != i)
			continue;
		v->files++;
		v->pages += kf->pages;
		v->unknown_files += kf->state == F_UNKNOWN;
		v->locked_files += kf->locked > 0;
		v->locked_bytes += kf->locked * ps;
	}
	v->bytes = v->pages * ps;
	v->protected_bytes = 0;
	v->protect_cgroup[0] = '\0';
	if (!(v->profiles = malloc((k->o.nprofiles ? k->o.nprofiles : 1) * sizeof(char *))))
		return -ENOMEM;
	for (size_t p = 0; p < k->o.nprofiles; p++)
		if (k->set.powner && k->set.powner[p] == i)
			v->profiles[n++] = (char *)k->o.profiles[p];
	v->nprofiles = n;
	return 0;
}

/* Write the view of each owner but the keeper itself (warned once if it fails). */
void keep_write_views(struct hs_keep *k)
{
	for (size_t i = 1; i < k->nowners; i++) {
		struct kowner *o = &k->owners[i];
		struct hs_keep_state v;
		char *path;
		int rc;

		if (!o->active)
			continue;
		if (!(path = hs_keep_view_path(k->o.state, o->uid)))
			return;
		if (!(rc = view_of(k, i, &v))) {
			rc = hs_keep_state_write_view(path, &v, o->uid, o->gid);
			free(v.profiles);
		}
		if (rc && !o->view_warned) {
			char what[128];

			snprintf(what, sizeof(what), "cannot write the view of uid %u: %s",
				 (unsigned)o->uid, strerror(-rc));
			keep_warn(k, path, 0, what);
			o->view_warned = true;
		}
		free(path);
	}
}

/*
 * Which owners have a profile in the kept set; the views of the others,
 * this run's or an earlier one's, removed (the keeper keeps nothing of
 * theirs now: a view would say otherwise).
 */
void keep_owners_activate(struct hs_keep *k)
{
	const char *slash = strrchr(k->o.state, '/');
	char *dir, prefix[NAME_MAX + 8];
	struct dirent *de;
	DIR *d;

	for (size_t i = 1; i < k->nowners; i++)
		k->owners[i].active = false;
	for (size_t p = 0; p < k->o.nprofiles; p++)
		if (k->set.powner[p] != SIZE_MAX)
			k->owners[k->set.powner[p]].active = true;
	if (k->owners[0].uid != 0)
		return;	/* only root writes views */
	if ((size_t)snprintf(prefix, sizeof(prefix), "%s.uid-", slash ? slash + 1 : k->o.state) >=
	    sizeof(prefix))
		return;
	if (!(dir = slash ? strndup(k->o.state, (size_t)(slash - k->o.state) + 1) : strdup(".")))
		return;
	if ((d = opendir(dir))) {
		while ((de = readdir(d))) {
			const char *num = de->d_name + strlen(prefix);
			char *end;
			unsigned long uid;
			bool kept = false;

			if (strncmp(de->d_name, prefix, strlen(prefix)) || *num < '0' || *num > '9')
				continue;
			errno = 0;
			uid = strtoul(num, &end, 10);
			if (*end || errno)
				continue;
			for (size_t i = 1; i < k->nowners; i++)
				kept |= k->owners[i].active && k->owners[i].uid == uid;
			if (!kept)
				unlinkat(dirfd(d), de->d_name, 0);
		}
		closedir(d);
	}
	free(dir);
}
