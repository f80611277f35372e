/*
 * fuzz-netsock.c - libFuzzer target for the socket tables' parsers
 * (netsock.h): a line of /proc/net/tcp and tcp6, a line of
 * /proc/net/unix, a /proc/PID/fd link, and a sock_diag dump.
 *
 * The first byte picks the parser, the rest is its input. A TCP line
 * that parses, printed back in the kernel's form, parses to the same
 * socket; a unix line's path lies inside the line; every socket of a
 * dump has its path inside the buffer.
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "kernel/netsock.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The kernel's form of a TCP line, from what was read. */
static void print_tcp(const struct hs_tcp_sock *s, char *out, size_t cap)
{
	int words = s->family == AF_INET6 ? 4 : 1, n = 0;
	uint32_t w;

	n += snprintf(out + n, cap - (size_t)n, "%4d: ", 0);
	for (int i = 0; i < words; i++) {
		memcpy(&w, s->local + 4 * i, 4);
		n += snprintf(out + n, cap - (size_t)n, "%08X", w);
	}
	n += snprintf(out + n, cap - (size_t)n, ":%04X ", s->lport);
	for (int i = 0; i < words; i++) {
		memcpy(&w, s->remote + 4 * i, 4);
		n += snprintf(out + n, cap - (size_t)n, "%08X", w);
	}
	snprintf(out + n, cap - (size_t)n,
		 ":%04X %02X 00000000:00000000 00:00000000 00000000 %5u        0 %llu 1 0\n",
		 s->rport, s->state, s->uid, (unsigned long long)s->inode);
}

struct span {
	const char *lo, *hi;
	unsigned seen;
};

static int in_span(void *ctx, const struct hs_unix_sock *u)
{
	struct span *sp = ctx;

	if (u->path_len)
		assert(u->path >= sp->lo && u->path + u->path_len <= sp->hi);
	sp->seen++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* a copy, so that reading past its end is caught by ASan */
	char *buf = malloc(size + 1);
	static char text[512];
	const char *in = buf + 1;
	size_t len = size ? size - 1 : 0;

	memcpy(buf, data, size);
	buf[size] = '\0';
	if (size == 0)
		goto out;
	switch (data[0] % 4) {
	case 0: {
		int family = data[0] & 4 ? AF_INET6 : AF_INET;
		struct hs_tcp_sock a, b;

		if (hs_tcp_parse_line(in, family, &a) == 0) {
			assert(a.family == family && a.state <= 0xff);
			print_tcp(&a, text, sizeof(text));
			assert(hs_tcp_parse_line(text, family, &b) == 0);
			assert(!memcmp(a.local, b.local, 16) && !memcmp(a.remote, b.remote, 16));
			assert(a.lport == b.lport && a.rport == b.rport && a.state == b.state);
			assert(a.uid == b.uid && a.inode == b.inode);
			hs_tcp_addr_str(family, a.remote, a.rport, text, 64);
			assert(strlen(text) < 64);
		}
		break;
	}
	case 1: {
		struct hs_unix_sock u;
		size_t n = strnlen(in, len);	/* a line stops at a NUL, as getline's would not */

		if (hs_unix_parse_line(in, n, &u) == 0)
			assert(u.path >= in && u.path + u.path_len <= in + n && !u.peer);
		break;
	}
	case 2: {
		uint64_t ino, again;

		if (hs_socket_link_inode(in, &ino)) {
			snprintf(text, sizeof(text), "socket:[%llu]", (unsigned long long)ino);
			assert(hs_socket_link_inode(text, &again) && again == ino);
		}
		break;
	}
	case 3: {
		struct span sp = { in, in + len, 0 };

		hs_unix_diag_parse(in, len, in_span, &sp);
		break;
	}
	}
out:
	free(buf);
	return 0;
}
