/*
 * netsock.h - the sockets of this machine as the kernel lists them to any
 * user: /proc/net/tcp and /proc/net/tcp6 (a connection's two addresses,
 * its owner's uid, its inode), /proc/net/unix (a unix socket's path), and
 * the unix sockets' sock_diag netlink dump, which alone names the socket
 * at the other end of a unix connection (its inode). What `ss` shows a
 * user, no more: which process holds a socket is found elsewhere, through
 * /proc/PID/fd, which the kernel shows only to its owner and root.
 *
 * Each text format has a parser of a line already in memory (no I/O, any
 * bytes accepted, fuzzed by tests/fuzz/fuzz-netsock.c); the readers above
 * them walk the files a line at a time.
 */
#ifndef HOTSET_NETSOCK_H
#define HOTSET_NETSOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/hotset.h"

/*
 * The inode of the socket a /proc/PID/fd link names ("socket:[12345]").
 * Returns true and sets *ino, or false for any other link.
 */
bool hs_socket_link_inode(const char *link, uint64_t *ino);

/* ---- TCP: /proc/net/tcp, /proc/net/tcp6 ------------------------------------ */

/* One line of /proc/net/tcp or tcp6. */
struct hs_tcp_sock {
	int family;			/* AF_INET or AF_INET6 */
	uint8_t local[16], remote[16];	/* addresses in network order (4 bytes for AF_INET) */
	uint16_t lport, rport;		/* ports in host order */
	unsigned state;			/* the kernel's TCP state: 1 established, 10 listening... */
	uint32_t uid;			/* the owner of the socket (who opened it) */
	uint64_t inode;			/* 0 for a socket no process holds (TIME_WAIT) */
};

/*
 * Parse one line of /proc/net/tcp (family AF_INET) or tcp6 (AF_INET6):
 * "  0: 0100007F:0CEA 00000000:0000 0A 00000000:00000000 00:00000000
 * 00000000   108        0 23456 ...". The kernel prints each 32-bit
 * word of an address as it lies in memory, in hex: its bytes are put
 * back in that order. Returns 0, or -EINVAL for the header or any line
 * that is not one (*s then undefined).
 */
int hs_tcp_parse_line(const char *line, int family, struct hs_tcp_sock *s);

/*
 * Call fn for each socket of path ("/proc/net/tcp", "/proc/net/tcp6")
 * read as family; lines that do not parse are skipped. Returns 0,
 * -errno, or the first non-zero value fn returned.
 */
typedef int (*hs_tcp_fn)(void *ctx, const struct hs_tcp_sock *s);
int hs_tcp_each(const char *path, int family, hs_tcp_fn fn, void *ctx);

/*
 * An address and port as people write them: "127.0.0.1:3306",
 * "[::1]:5432", into out (size bytes; 64 is enough).
 */
void hs_tcp_addr_str(int family, const uint8_t *addr, uint16_t port, char *out, size_t size);

/* ---- unix sockets: /proc/net/unix and sock_diag ----------------------------- */

/* One unix socket, as /proc/net/unix or the sock_diag dump lists it. */
struct hs_unix_sock {
	uint64_t inode;
	unsigned type;			/* SOCK_STREAM, SOCK_DGRAM, SOCK_SEQPACKET */
	unsigned state;			/* 1 unconnected, 3 connected... (SS_*) */
	bool listening;			/* __SO_ACCEPTCON: a server's listening socket */
	uint64_t peer;			/* sock_diag: the inode at the other end, 0 if none */
	bool uid_known;			/* sock_diag: the owner is known (Linux 5.3) */
	uint32_t uid;
	/*
	 * Its address: a path, an abstract name ("@name" in /proc/net/unix,
	 * which shows its NULs as '@'; from sock_diag, as it is, a NUL
	 * first), or none (path_len 0). Points into the text or the message
	 * parsed; path_len bytes, not NUL-terminated.
	 */
	const char *path;
	size_t path_len;
};

/*
 * Parse one line of /proc/net/unix (len bytes, no newline): "Num:
 * RefCount Protocol Flags Type St Inode [Path]", all hex but the inode.
 * peer and uid are not known there. Returns 0, or -EINVAL for the header
 * or a line that is not one. A path that holds a newline reaches past
 * the line: its first part alone is seen, and what follows is no line.
 */
int hs_unix_parse_line(const char *line, size_t len, struct hs_unix_sock *u);

/* Call fn for each socket of path (NULL: /proc/net/unix); as hs_tcp_each(). */
typedef int (*hs_unix_fn)(void *ctx, const struct hs_unix_sock *u);
int hs_unix_each(const char *path, hs_unix_fn fn, void *ctx);

/*
 * Parse a buffer of netlink messages from a sock_diag dump of unix
 * sockets (UDIAG_SHOW_NAME, UDIAG_SHOW_PEER, UDIAG_SHOW_UID asked): fn for
 * each socket. Returns 1 at the dump's end (NLMSG_DONE), 0 when more is
 * to come, -errno for an error message or a buffer that is not one
 * (-EPROTO), or fn's first non-zero value.
 */
int hs_unix_diag_parse(const void *buf, size_t len, hs_unix_fn fn, void *ctx);

/*
 * Dump every unix socket of this network namespace through sock_diag,
 * with its peer, its name and its owner: fn for each. Open to any user.
 * Returns 0, -errno (-EPROTONOSUPPORT, -ENOENT: no unix_diag in this
 * kernel), or fn's first non-zero value.
 */
int hs_unix_diag_each(hs_unix_fn fn, void *ctx);

#endif
