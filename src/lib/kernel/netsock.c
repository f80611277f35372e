/*
 * netsock.c - the machine's sockets as any user may list them (see
 * netsock.h).
 *
 * The text files are read a line at a time with getline(), never whole:
 * a busy server lists tens of thousands of connections. Every field is
 * checked for its form, so that a line that is not the kernel's (a path
 * with a newline in /proc/net/unix) is skipped instead of read as one.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "kernel/netsock.h"

bool hs_socket_link_inode(const char *link, uint64_t *ino)
{
	uint64_t v = 0;
	const char *p;

	if (strncmp(link, "socket:[", 8))
		return false;
	for (p = link + 8; isdigit((unsigned char)*p); p++) {
		if (v > (UINT64_MAX - 9) / 10)
			return false;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	if (p == link + 8 || strcmp(p, "]"))
		return false;
	*ino = v;
	return true;
}

/* ---- small scanners: each takes one field at *s and moves past it ---------- */

static const char *skip_blanks(const char *s, const char *end)
{
	while (s < end && *s == ' ')
		s++;
	return s;
}

/* Exactly n hex digits (n <= 16) at s, into *v; NULL if not. */
static const char *hex_fixed(const char *s, const char *end, int n, uint64_t *v)
{
	*v = 0;
	for (int i = 0; i < n; i++, s++) {
		int d;

		if (s >= end || !isxdigit((unsigned char)*s))
			return NULL;
		d = isdigit((unsigned char)*s) ? *s - '0' : (tolower((unsigned char)*s) - 'a' + 10);
		*v = *v << 4 | (uint64_t)d;
	}
	return s;
}

/* One or more hex (base 16) or decimal (base 10) digits, to 64 bits; NULL if none or too many. */
static const char *number(const char *s, const char *end, int base, uint64_t *v)
{
	const char *start = s;

	*v = 0;
	for (; s < end && (base == 16 ? isxdigit((unsigned char)*s) : isdigit((unsigned char)*s)); s++) {
		int d = isdigit((unsigned char)*s) ? *s - '0' : (tolower((unsigned char)*s) - 'a' + 10);

		if (*v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
			return NULL;
		*v = *v * (uint64_t)base + (uint64_t)d;
	}
	return s > start ? s : NULL;
}

/* A field of digits then at least one blank (or the end, if last may end it). */
static const char *field(const char *s, const char *end, int base, uint64_t *v, bool last)
{
	s = number(skip_blanks(s, end), end, base, v);
	if (!s || (s < end && *s != ' ') || (s == end && !last))
		return NULL;
	return s;
}

/* ---- TCP ------------------------------------------------------------------------- */

/*
 * "ADDR:PORT": the address as 8 (IPv4) or 32 (IPv6) hex digits, each
 * 32-bit word printed from memory as a host-order number, so that its
 * bytes go back in host order; the port as 4.
 */
static const char *tcp_addr(const char *s, const char *end, int words, uint8_t *addr,
			    uint16_t *port)
{
	uint64_t v;

	s = skip_blanks(s, end);
	for (int w = 0; w < words; w++) {
		uint32_t word;

		if (!(s = hex_fixed(s, end, 8, &v)))
			return NULL;
		word = (uint32_t)v;
		memcpy(addr + 4 * w, &word, 4);
	}
	if (s >= end || *s++ != ':' || !(s = hex_fixed(s, end, 4, &v)))
		return NULL;
	*port = (uint16_t)v;
	return s < end && *s == ' ' ? s : NULL;
}

int hs_tcp_parse_line(const char *line, int family, struct hs_tcp_sock *s)
{
	const char *end = line + strcspn(line, "\n"), *p;
	int words = family == AF_INET6 ? 4 : 1;
	uint64_t v, uid, inode;

	if (family != AF_INET && family != AF_INET6)
		return -EINVAL;
	memset(s, 0, sizeof(*s));
	s->family = family;
	/* "sl:" then the two addresses, the state, then queues, timers and retransmits */
	p = number(skip_blanks(line, end), end, 10, &v);
	if (!p || p >= end || *p++ != ':')
		return -EINVAL;
	if (!(p = tcp_addr(p, end, words, s->local, &s->lport)) ||
	    !(p = tcp_addr(p, end, words, s->remote, &s->rport)))
		return -EINVAL;
	p = skip_blanks(p, end);
	if (!(p = hex_fixed(p, end, 2, &v)) || p >= end || *p != ' ')
		return -EINVAL;
	s->state = (unsigned)v;
	/* tx_queue:rx_queue tr:tm->when retrnsmt: three fields of hex, checked loosely */
	for (int i = 0; i < 3; i++) {
		p = skip_blanks(p, end);
		if (p >= end || *p == ' ')
			return -EINVAL;
		while (p < end && *p != ' ') {
			if (!isxdigit((unsigned char)*p) && *p != ':')
				return -EINVAL;
			p++;
		}
	}
	/* uid, timeout, inode: decimal */
	if (!(p = field(p, end, 10, &uid, false)) || uid > UINT32_MAX ||
	    !(p = field(p, end, 10, &v, false)) || !field(p, end, 10, &inode, true))
		return -EINVAL;
	s->uid = (uint32_t)uid;
	s->inode = inode;
	return 0;
}

int hs_tcp_each(const char *path, int family, hs_tcp_fn fn, void *ctx)
{
	struct hs_tcp_sock s;
	size_t cap = 0;
	char *line = NULL;
	int rc = 0;
	FILE *f = fopen(path, "re");

	if (!f)
		return -errno;
	while (rc == 0 && getline(&line, &cap, f) > 0)
		if (hs_tcp_parse_line(line, family, &s) == 0)
			rc = fn(ctx, &s);
	free(line);
	fclose(f);
	return rc;
}

void hs_tcp_addr_str(int family, const uint8_t *addr, uint16_t port, char *out, size_t size)
{
	char host[INET6_ADDRSTRLEN] = "?";

	inet_ntop(family, addr, host, sizeof(host));
	if (family == AF_INET6)
		snprintf(out, size, "[%s]:%u", host, (unsigned)port);
	else
		snprintf(out, size, "%s:%u", host, (unsigned)port);
}

/* ---- unix sockets: /proc/net/unix ----------------------------------------------- */

/* __SO_ACCEPTCON in the Flags column: the socket listens */
#define UNIX_ACCEPTCON 0x10000

int hs_unix_parse_line(const char *line, size_t len, struct hs_unix_sock *u)
{
	const char *end = line + len, *p;
	uint64_t v;

	memset(u, 0, sizeof(*u));
	/* "Num:" a kernel pointer in hex (hashed or zeroed, any width) */
	p = number(line, end, 16, &v);
	if (!p || p >= end || *p++ != ':')
		return -EINVAL;
	/* RefCount, Protocol, Flags, in hex: the flags (the last) tell a listener */
	for (int i = 0; i < 3; i++)
		if (!(p = field(p, end, 16, &v, false)))
			return -EINVAL;
	u->listening = (v & UNIX_ACCEPTCON) != 0;
	if (!(p = field(p, end, 16, &v, false)) || v > 0xffff)
		return -EINVAL;
	u->type = (unsigned)v;
	if (!(p = field(p, end, 16, &v, false)) || v > 0xff)
		return -EINVAL;
	u->state = (unsigned)v;
	if (!(p = field(p, end, 10, &u->inode, true)))
		return -EINVAL;
	/* the path is the rest of the line after one blank, spaces and all */
	if (p < end) {
		u->path = p + 1;
		u->path_len = (size_t)(end - p - 1);
	} else {
		u->path = p;
	}
	return 0;
}

int hs_unix_each(const char *path, hs_unix_fn fn, void *ctx)
{
	struct hs_unix_sock u;
	size_t cap = 0;
	char *line = NULL;
	ssize_t n;
	int rc = 0;
	FILE *f = fopen(path ? path : "/proc/net/unix", "re");

	if (!f)
		return -errno;
	while (rc == 0 && (n = getline(&line, &cap, f)) > 0) {
		size_t len = (size_t)n;

		if (line[len - 1] == '\n')
			len--;
		if (hs_unix_parse_line(line, len, &u) == 0)
			rc = fn(ctx, &u);
	}
	free(line);
	fclose(f);
	return rc;
}

/* ---- unix sockets: sock_diag ------------------------------------------------------ */

/*
 * One message's unix_diag_msg and its attributes (len bytes from msg,
 * header included), checked against its length. Everything is copied out
 * with memcpy: the buffer need not be aligned, and the path points into it.
 */
static int diag_message(const char *msg, size_t len, hs_unix_fn fn, void *ctx)
{
	struct unix_diag_msg m;
	struct hs_unix_sock u = { 0 };
	const char *a = msg + NLMSG_LENGTH(sizeof(m));
	size_t left;

	if (len < NLMSG_LENGTH(sizeof(m)))
		return -EPROTO;
	memcpy(&m, msg + NLMSG_HDRLEN, sizeof(m));
	left = len - NLMSG_LENGTH(sizeof(m));
	u.inode = m.udiag_ino;
	u.type = m.udiag_type;
	u.state = m.udiag_state;
	u.listening = m.udiag_state == 10;	/* TCP_LISTEN, as sock_diag words it */
	u.path = "";
	while (left >= sizeof(struct nlattr)) {
		struct nlattr at;
		size_t alen, payload;

		memcpy(&at, a, sizeof(at));
		alen = at.nla_len;
		if (alen < sizeof(at) || alen > left)
			return -EPROTO;
		payload = alen - sizeof(at);
		switch (at.nla_type & NLA_TYPE_MASK) {
		case UNIX_DIAG_NAME:
			/* an abstract name starts with a NUL, kept: the caller shows it */
			u.path = a + sizeof(at);
			u.path_len = payload;
			break;
		case UNIX_DIAG_PEER:
			if (payload >= 4) {
				uint32_t peer;

				memcpy(&peer, a + sizeof(at), 4);
				u.peer = peer;
			}
			break;
		case UNIX_DIAG_UID:
			if (payload >= 4) {
				memcpy(&u.uid, a + sizeof(at), 4);
				u.uid_known = true;
			}
			break;
		}
		alen = NLA_ALIGN(alen);
		if (alen >= left)
			break;
		a += alen;
		left -= alen;
	}
	return fn(ctx, &u);
}

int hs_unix_diag_parse(const void *buf, size_t len, hs_unix_fn fn, void *ctx)
{
	const char *p = buf;
	int rc;

	while (len >= sizeof(struct nlmsghdr)) {
		struct nlmsghdr h;
		size_t step;

		memcpy(&h, p, sizeof(h));
		if (h.nlmsg_len < sizeof(h) || h.nlmsg_len > len)
			return -EPROTO;
		if (h.nlmsg_type == NLMSG_DONE)
			return 1;
		if (h.nlmsg_type == NLMSG_ERROR) {
			struct nlmsgerr e;

			if (h.nlmsg_len < NLMSG_LENGTH(sizeof(e)))
				return -EPROTO;
			memcpy(&e, p + NLMSG_HDRLEN, sizeof(e));
			return e.error < 0 && e.error > -4096 ? e.error : -EPROTO;
		}
		if (h.nlmsg_type == SOCK_DIAG_BY_FAMILY &&
		    (rc = diag_message(p, h.nlmsg_len, fn, ctx)))
			return rc;
		step = NLMSG_ALIGN(h.nlmsg_len);
		if (step >= len)
			break;
		p += step;
		len -= step;
	}
	return 0;
}

int hs_unix_diag_each(hs_unix_fn fn, void *ctx)
{
	struct {
		struct nlmsghdr h;
		struct unix_diag_req r;
	} req = {
		.h = {
			.nlmsg_len = sizeof(req),
			.nlmsg_type = SOCK_DIAG_BY_FAMILY,
			.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
			.nlmsg_seq = 1,
		},
		.r = {
			.sdiag_family = AF_UNIX,
			.udiag_states = ~0u,
			.udiag_show = UDIAG_SHOW_NAME | UDIAG_SHOW_PEER | UDIAG_SHOW_UID,
		},
	};
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	long buf[32768 / sizeof(long)];	/* a dump's batch; long: aligned for the headers */
	int fd, rc = 0;

	fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (fd < 0)
		return -errno;
	if (sendto(fd, &req, sizeof(req), 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0) {
		rc = -errno;
		goto out;
	}
	while (rc == 0) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = n < 0 ? -errno : -EPROTO;
			break;
		}
		rc = hs_unix_diag_parse(buf, (size_t)n, fn, ctx);
	}
	if (rc == 1)
		rc = 0;
out:
	close(fd);
	return rc;
}
