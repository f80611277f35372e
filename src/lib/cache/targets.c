/*
 * targets.c - the rules every target passes, however it was named (see
 * targets.h): files on pseudo-filesystems are never read, the filters
 * -I and -i, the flags files are opened with. The tree walk is in
 * targets-walk.c, a profile's entries in targets-profile.c.
 */
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/procfs.h"
#include "base/safeopen.h"
#include "cache/targets-internal.h"

/* ---- pseudo-filesystems (hs_pseudo_fs) --------------------------------- */

const char *targets_pseudo_fs(struct fs_cache *c, int fd, dev_t dev)
{
	const char *name;

	for (size_t i = 0; i < c->n; i++)
		if (c->e[i].dev == dev)
			return c->e[i].pseudo;
	name = hs_pseudo_fs(fd);
	if (c->n < sizeof(c->e) / sizeof(c->e[0])) {
		c->e[c->n].dev = dev;
		c->e[c->n].pseudo = name;
		c->n++;
	}
	return name;
}

/* ---- filters (-I, -i) ---------------------------------------------------- */

/* Does a glob match: a glob with a '/' the path, another the base name (if any)? */
static bool any_match(const char *const *globs, size_t n, const char *path, const char *base)
{
	for (size_t i = 0; i < n; i++) {
		const char *subject = strchr(globs[i], '/') ? path : base;

		if (subject && fnmatch(globs[i], subject, 0) == 0)
			return true;
	}
	return false;
}

/* Do the globs leave out path by its own name (a directory's: by -i only)? */
bool targets_name_filtered(const struct hs_target_opts *o, const char *path, bool dir)
{
	char copy[NAME_MAX + 1];
	const char *end, *base;
	size_t n;

	if (!o->nexclude && (dir || !o->ninclude))
		return false;
	/* the base name: the last component, trailing slashes aside */
	for (end = path + strlen(path); end > path && end[-1] == '/'; end--)
		;
	for (base = end; base > path && base[-1] != '/'; base--)
		;
	n = (size_t)(end - base);
	if (!n || n > NAME_MAX || (base[0] == '.' && (n == 1 || (n == 2 && base[1] == '.')))) {
		base = NULL;	/* "/", ".", "..": no name */
	} else if (*end) {	/* "d/": "d", in a copy of its own */
		memcpy(copy, base, n);
		copy[n] = '\0';
		base = copy;
	}
	if (any_match(o->exclude, o->nexclude, path, base))
		return true;
	return !dir && o->ninclude && !any_match(o->include, o->ninclude, path, base);
}

bool hs_target_filtered(const struct hs_target_opts *o, const char *path, bool dir)
{
	if (o->nexclude) {
		char buf[PATH_MAX], *copy = strlen(path) < sizeof(buf) ? strcpy(buf, path) : strdup(path);
		bool out = false;

		/* each directory on the way, as a walk from the first would have met it */
		for (char *p = copy ? strchr(copy + 1, '/') : NULL; p && !out; p = strchr(p + 1, '/')) {
			if (p[-1] == '/')
				continue;	/* "a//b": "a" was looked at */
			*p = '\0';
			out = targets_name_filtered(o, copy, true);
			*p = '/';
		}
		if (copy != buf)
			free(copy);
		if (out)
			return true;
	}
	return targets_name_filtered(o, path, dir);
}

/* ---- opening -------------------------------------------------------------- */

int targets_open_flags(void)
{
	/*
	 * O_NOATIME spares an inode write per file, but only owners may ask:
	 * root, unless it reads as another user (a keeper reading a profile
	 * as its owner has that owner's filesystem uid).
	 */
	return O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (hs_safe_fsuid() == 0 ? O_NOATIME : 0);
}
