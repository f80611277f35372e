/*
 * psi.c - pressure stall information: the files' parser, reader and
 * triggers, and the share of the time stalled between two readings (see
 * psi.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernel/procfs.h"
#include "kernel/psi.h"

/*
 * A percentage as PSI prints it ("12.34"), read without strtod, whose
 * decimal point is the locale's. Returns false if s has no digits.
 */
static bool parse_decimal(const char *s, const char **end, double *out)
{
	double v = 0, scale = 1;
	bool digits = false;

	for (; *s >= '0' && *s <= '9'; s++, digits = true)
		v = v * 10 + (*s - '0');
	if (*s == '.')
		for (s++; *s >= '0' && *s <= '9'; s++, digits = true)
			v += (*s - '0') * (scale /= 10);
	*end = s;
	*out = v;
	return digits;
}

/* The fields after "some " or "full " on the line at s: key=value, in any order. */
static void parse_psi_line(const char *s, struct hs_psi_line *l)
{
	struct hs_psi_line v = { 0 };

	while (*s && *s != '\n') {
		const char *eq = s + strcspn(s, "= \n"), *end = eq;
		size_t klen = (size_t)(eq - s);
		double *avg = NULL;

		if (*eq == '=') {
			if (klen == 5 && !memcmp(s, "avg10", 5))
				avg = &v.avg10;
			else if (klen == 5 && !memcmp(s, "avg60", 5))
				avg = &v.avg60;
			else if (klen == 6 && !memcmp(s, "avg300", 6))
				avg = &v.avg300;
			if (avg) {
				parse_decimal(eq + 1, &end, avg);
			} else if (klen == 5 && !memcmp(s, "total", 5) && eq[1] >= '0' && eq[1] <= '9') {
				char *e;

				v.total = strtoull(eq + 1, &e, 10);
				v.known = true;
				end = e;
			}
		}
		s = end + strcspn(end, " \n");
		while (*s == ' ')
			s++;
	}
	if (!v.known)
		memset(&v, 0, sizeof(v));	/* a line without a total tells nothing */
	*l = v;
}

int hs_psi_parse(const char *buf, struct hs_psi *out)
{
	struct hs_psi v = { 0 };

	for (const char *line = *buf ? buf : NULL; line; line = hs_procfs_next_line(line)) {
		if (!strncmp(line, "some ", 5))
			parse_psi_line(line + 5, &v.some);
		else if (!strncmp(line, "full ", 5))
			parse_psi_line(line + 5, &v.full);
	}
	if (!v.some.known)
		return -EINVAL;
	*out = v;
	return 0;
}

int hs_psi_read(const char *dir, const char *name, struct hs_psi *out)
{
	char buf[512];
	ssize_t n = hs_procfs_read_at(dir, name, buf, sizeof(buf));

	if (n < 0)
		return (int)n;
	return hs_psi_parse(buf, out);
}

int hs_psi_trigger(const char *dir, const char *name, uint64_t stall_us, uint64_t window_us)
{
	char path[PATH_MAX], spec[64];
	int fd, len;

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	len = snprintf(spec, sizeof(spec), "some %llu %llu", (unsigned long long)stall_us,
		       (unsigned long long)window_us);
	/* the trigger lives as long as this descriptor */
	if ((fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC)) < 0)
		return -errno;
	/* a copy on a disk (a test's) would take the spec as data, and never signal */
	if (!hs_pseudo_fs(fd)) {
		close(fd);
		return -EOPNOTSUPP;
	}
	/* the kernel takes the spec with its NUL (psi.rst's example writes strlen + 1) */
	if (write(fd, spec, (size_t)len + 1) < 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

/* ---- the share since the last reading ------------------------------------ */

int hs_psi_mark(const char *dir, const char *name, uint64_t now_ns, struct hs_psi_mark *m)
{
	struct hs_psi psi;
	int rc = hs_psi_read(dir, name, &psi);

	m->known = rc == 0;
	m->at_ns = now_ns;
	m->total_us = rc == 0 ? psi.some.total : 0;
	return rc;
}

double hs_psi_share(const struct hs_psi_mark *from, const struct hs_psi_mark *to)
{
	if (!from->known || !to->known || to->at_ns <= from->at_ns || to->total_us < from->total_us)
		return -1;
	/* us stalled over ns elapsed: the 1000 makes them one unit */
	return 100.0 * (double)(to->total_us - from->total_us) * 1000.0 /
	       (double)(to->at_ns - from->at_ns);
}
