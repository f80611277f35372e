/*
 * atomic-write.h - reports and images written whole (atomic-write.c).
 */
#ifndef HOTSET_CLI_ATOMIC_WRITE_H
#define HOTSET_CLI_ATOMIC_WRITE_H

#include <stdio.h>
#include <sys/types.h>

/*
 * Write what fn prints to f into path as profiles are written (whole, then
 * renamed into place, never through another user's link nor over anything
 * but a regular file: hs_atomic_open(); "-" is standard output). A new
 * file gets mode 0666 less the umask (write_atomically_mode(): the mode
 * given). Returns 0, or -1 after printing an error naming path.
 */
int write_atomically(const char *path, void (*fn)(FILE *f, const void *ctx), const void *ctx);
int write_atomically_mode(const char *path, mode_t mode, void (*fn)(FILE *f, const void *ctx),
			  const void *ctx);

#endif
