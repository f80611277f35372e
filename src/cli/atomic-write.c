/*
 * atomic-write.c - a report or an image written as profiles are: built
 * in memory, then written whole through hs_atomic_open(), so that a
 * reader never sees half of one and a failure leaves the old file.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/atomic.h"
#include "base/hotset.h"
#include "atomic-write.h"
#include "messages.h"

int write_atomically(const char *path, void (*fn)(FILE *f, const void *ctx), const void *ctx)
{
	return write_atomically_mode(path, 0666, fn, ctx);
}

int write_atomically_mode(const char *path, mode_t mode, void (*fn)(FILE *f, const void *ctx),
			  const void *ctx)
{
	struct hs_atomic_file *af;
	struct hs_error err = { 0 };
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	int fd, rc = 0;

	if (!mem)
		return error("%s: %s", path, strerror(errno));
	fn(mem, ctx);
	if (fclose(mem) != 0) {
		free(buf);
		return error("%s: %s", path, strerror(errno));
	}
	if (hs_atomic_open(path, mode, &af, &fd, &err)) {
		free(buf);
		return error("%s: cannot write: %s", path, err.msg);
	}
	rc = hs_write_all(fd, buf, len);
	free(buf);
	if ((rc = hs_atomic_commit(af, rc)))
		return error("%s: cannot write: %s", path, strerror(-rc));
	return 0;
}
