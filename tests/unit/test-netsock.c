/*
 * test-netsock.c - the machine's socket tables (netsock.h) and the rule
 * that says a job waited on a peer (peer.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "job/peer.h"
#include "kernel/netsock.h"
#include "unit.h"
#include "corpus.h"

/* ---- the parsers ------------------------------------------------------------------------- */

TEST(a_tcp_line_gives_both_ends_its_owner_and_inode)
{
	struct hs_tcp_sock s;
	char addr[64];

	CHECK(hs_tcp_parse_line("   1: 0100007F:9C4E 0200007F:0CEA 01 00000000:00000000 "
				"02:000A2E5C 00000000   108        0 31337 2 0000000000000000 20 4 30 10 -1\n",
				AF_INET, &s) == 0);
	hs_tcp_addr_str(AF_INET, s.local, s.lport, addr, sizeof(addr));
	CHECK_STR(addr, "127.0.0.1:40014");
	hs_tcp_addr_str(AF_INET, s.remote, s.rport, addr, sizeof(addr));
	CHECK_STR(addr, "127.0.0.2:3306");
	CHECK(s.state == 1 && s.uid == 108 && s.inode == 31337 && s.family == AF_INET);
	/* IPv6: four words, each as it lies in memory */
	CHECK(hs_tcp_parse_line("   0: 00000000000000000000000001000000:1538 0000000000000000FFFF00000100007F:D2F4 "
				"01 00000000:00000000 00:00000000 00000000 65534 0 99 1 0 20 4 1 10 -1",
				AF_INET6, &s) == 0);
	hs_tcp_addr_str(AF_INET6, s.local, s.lport, addr, sizeof(addr));
	CHECK_STR(addr, "[::1]:5432");
	hs_tcp_addr_str(AF_INET6, s.remote, s.rport, addr, sizeof(addr));
	CHECK_STR(addr, "[::ffff:127.0.0.1]:54004");
	CHECK(s.uid == 65534 && s.inode == 99);
}

TEST(what_is_not_a_tcp_line_is_refused)
{
	static const char *const bad[] = {
		"  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n",
		"",
		"   1: 0100007F:9C4E 0100007F:0CEA 01 00000000:00000000 02:000A2E5C 00000000   108        0\n",
		"   1: 0100007F:9C4E 0100007F:0CEA 01 00000000:00000000 02:000A2E5C 00000000   x 0 1\n",
		"   1: 100007F:9C4E 0100007F:0CEA 01 00000000:00000000 02:000A2E5C 00000000   1 0 1\n",
		"   1: 0100007F:9C4E 0100007F:0CEA 01 00000000:00000000 02:000A2E5C 00000000 99999999999 0 1\n",
		/* an IPv4 line read as tcp6 */
		"   1: 0100007F:9C4E 0100007F:0CEA 01 00000000:00000000 02:000A2E5C 00000000   1 0 1\n",
	};
	struct hs_tcp_sock s;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(hs_tcp_parse_line(bad[i], i == 6 ? AF_INET6 : AF_INET, &s) == -EINVAL);
	CHECK(hs_tcp_parse_line("   1: 0100007F:9C4E 0100007F:0CEA 01 0:0 0:0 0 1 0 1", AF_UNIX, &s) ==
	      -EINVAL);
}

TEST(a_unix_line_gives_its_inode_and_path_spaces_and_all)
{
	static const char listen[] = "0000000000000000: 00000002 00000000 00010000 0001 01 21345 /run/my sql/s.sock";
	static const char unnamed[] = "ffff8c0e4a1b2c00: 00000003 00000000 00000000 0001 03 21350";
	struct hs_unix_sock u;

	CHECK(hs_unix_parse_line(listen, strlen(listen), &u) == 0);
	CHECK(u.inode == 21345 && u.listening && u.type == 1 && u.state == 1);
	CHECK(u.path_len == strlen("/run/my sql/s.sock") && !memcmp(u.path, "/run/my sql/s.sock", u.path_len));
	CHECK(hs_unix_parse_line(unnamed, strlen(unnamed), &u) == 0);
	CHECK(u.inode == 21350 && !u.listening && u.state == 3 && u.path_len == 0 && !u.peer);
	/* the header, and a line cut short */
	CHECK(hs_unix_parse_line("Num       RefCount Protocol Flags    Type St Inode Path", 55, &u) == -EINVAL);
	CHECK(hs_unix_parse_line(unnamed, 40, &u) == -EINVAL);
}

TEST(a_socket_is_told_by_its_fd_link)
{
	uint64_t ino = 0;

	CHECK(hs_socket_link_inode("socket:[4026532]", &ino) && ino == 4026532);
	CHECK(!hs_socket_link_inode("pipe:[4026532]", &ino));
	CHECK(!hs_socket_link_inode("socket:[]", &ino));
	CHECK(!hs_socket_link_inode("socket:[12", &ino));
	CHECK(!hs_socket_link_inode("socket:[12]x", &ino));
	CHECK(!hs_socket_link_inode("socket:[99999999999999999999]", &ino));
	CHECK(!hs_socket_link_inode("/tmp/socket:[1]", &ino));
}

/* ---- sock_diag ------------------------------------------------------------------------------- */

struct found {
	uint64_t want, peer;
	bool seen, uid_known;
	uint32_t uid;
	char path[128];
};

static int find_inode(void *ctx, const struct hs_unix_sock *u)
{
	struct found *f = ctx;

	if (u->inode != f->want)
		return 0;
	f->seen = true;
	f->peer = u->peer;
	f->uid_known = u->uid_known;
	f->uid = u->uid;
	snprintf(f->path, sizeof(f->path), "%.*s", (int)u->path_len, u->path);
	return 0;
}

/* A message of a dump, as the kernel writes it: unix_diag_msg, then the attributes. */
static size_t put_msg(char *buf, uint32_t ino, uint32_t peer, const char *name, size_t name_len)
{
	struct nlmsghdr h = { .nlmsg_type = SOCK_DIAG_BY_FAMILY };
	struct unix_diag_msg m = { .udiag_family = AF_UNIX, .udiag_type = SOCK_STREAM,
				   .udiag_state = 1, .udiag_ino = ino };
	size_t n = NLMSG_LENGTH(sizeof(m));
	struct nlattr a;

	memcpy(buf + NLMSG_HDRLEN, &m, sizeof(m));
	if (name) {
		a = (struct nlattr){ .nla_len = (uint16_t)(NLA_HDRLEN + name_len), .nla_type = UNIX_DIAG_NAME };
		memcpy(buf + n, &a, sizeof(a));
		memcpy(buf + n + NLA_HDRLEN, name, name_len);
		n += NLA_ALIGN(a.nla_len);
	}
	a = (struct nlattr){ .nla_len = NLA_HDRLEN + 4, .nla_type = UNIX_DIAG_PEER };
	memcpy(buf + n, &a, sizeof(a));
	memcpy(buf + n + NLA_HDRLEN, &peer, 4);
	n += NLA_HDRLEN + 4;
	h.nlmsg_len = (uint32_t)n;
	memcpy(buf, &h, sizeof(h));
	return NLMSG_ALIGN(n);
}

TEST(a_dump_gives_each_sockets_peer_and_name_and_ends_at_done)
{
	char buf[1024] = { 0 };
	struct nlmsghdr done = { .nlmsg_len = NLMSG_LENGTH(4), .nlmsg_type = NLMSG_DONE };
	struct found f = { .want = 11 };
	size_t n = 0;

	n += put_msg(buf + n, 10, 11, NULL, 0);
	n += put_msg(buf + n, 11, 10, "/run/x.sock", 12);
	CHECK(hs_unix_diag_parse(buf, n, find_inode, &f) == 0);	/* more to come */
	CHECK(f.seen && f.peer == 10 && !strcmp(f.path, "/run/x.sock") && !f.uid_known);
	memcpy(buf + n, &done, sizeof(done));
	CHECK(hs_unix_diag_parse(buf, n + NLMSG_ALIGN(done.nlmsg_len), find_inode, &f) == 1);
	/* a length past the buffer is no message */
	CHECK(hs_unix_diag_parse(buf, n - 4, find_inode, &f) == -EPROTO);
}

TEST(the_kernel_names_the_other_end_of_a_unix_connection)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int srv, cli, acc;
	struct stat st_cli = { 0 }, st_acc = { 0 };
	struct found f = { 0 };
	int rc;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "/tmp/hotset-test-netsock.%d", (int)getpid());
	unlink(sa.sun_path);
	CHECK((srv = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) >= 0);
	CHECK(bind(srv, (struct sockaddr *)&sa, sizeof(sa)) == 0 && listen(srv, 1) == 0);
	CHECK((cli = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) >= 0);
	CHECK(connect(cli, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	CHECK((acc = accept(srv, NULL, NULL)) >= 0);
	CHECK(fstat(cli, &st_cli) == 0 && fstat(acc, &st_acc) == 0);
	f.want = st_cli.st_ino;
	rc = hs_unix_diag_each(find_inode, &f);
	if (rc == -EPROTONOSUPPORT || rc == -ENOENT)
		SKIP("no unix_diag in this kernel");
	CHECK(rc == 0 && f.seen && f.peer == st_acc.st_ino);
	/* the accepted end has the listener's path, and an owner */
	f = (struct found){ .want = st_acc.st_ino };
	CHECK(hs_unix_diag_each(find_inode, &f) == 0 && f.seen && f.peer == st_cli.st_ino);
	CHECK_STR(f.path, sa.sun_path);
	CHECK(f.uid_known && f.uid == geteuid());
	close(acc);
	close(cli);
	close(srv);
	unlink(sa.sun_path);
}

struct tcp_found {
	uint64_t want;
	struct hs_tcp_sock s;
	bool seen;
};

static int find_tcp(void *ctx, const struct hs_tcp_sock *s)
{
	struct tcp_found *f = ctx;

	if (s->inode == f->want) {
		f->s = *s;
		f->seen = true;
	}
	return 0;
}

TEST(a_loopback_connection_is_two_lines_whose_addresses_swap)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sa);
	int srv, cli, acc;
	struct stat st_cli = { 0 }, st_acc = { 0 };
	struct tcp_found a = { 0 }, b = { 0 };

	CHECK((srv = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) >= 0);
	CHECK(bind(srv, (struct sockaddr *)&sa, sizeof(sa)) == 0 && listen(srv, 1) == 0);
	CHECK(getsockname(srv, (struct sockaddr *)&sa, &len) == 0);
	CHECK((cli = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) >= 0);
	CHECK(connect(cli, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	CHECK((acc = accept(srv, NULL, NULL)) >= 0);
	CHECK(fstat(cli, &st_cli) == 0 && fstat(acc, &st_acc) == 0);
	a.want = st_cli.st_ino;
	b.want = st_acc.st_ino;
	CHECK(hs_tcp_each("/proc/net/tcp", AF_INET, find_tcp, &a) == 0 && a.seen);
	CHECK(hs_tcp_each("/proc/net/tcp", AF_INET, find_tcp, &b) == 0 && b.seen);
	CHECK(a.s.rport == ntohs(sa.sin_port) && b.s.lport == a.s.rport && b.s.rport == a.s.lport);
	CHECK(!memcmp(a.s.local, b.s.remote, 4) && !memcmp(a.s.remote, b.s.local, 4));
	CHECK(a.s.state == 1 && a.s.uid == geteuid());
	close(acc);
	close(cli);
	close(srv);
}

/* ---- the rule of `time` ------------------------------------------------------------------ */

TEST(a_job_waited_on_a_peer_only_past_both_thresholds_and_while_it_held_it)
{
	struct hs_usage u = { .wall_s = 10, .user_s = 1, .sys_s = 0.5, .io_wait_s = 0.5,
			      .pressure = HS_PRESSURE_JOB_CGROUP };
	struct hs_peers peers = { .n = 1 };
	struct hs_waited_on w;

	peers.v[0].held_s = 9.9;
	CHECK(hs_peer_waited(&u, &peers, &w) && w.peer == &peers.v[0] && w.io_wait_known);
	CHECK(w.seconds > 7.99 && w.seconds < 8.01 && w.share > 0.799 && w.share < 0.801);
	/* most of the time on the disk: not the peer's */
	u.io_wait_s = 6;
	CHECK(!hs_peer_waited(&u, &peers, &w));
	/* I/O wait unknown: the time off a CPU stands for it */
	u.pressure = HS_PRESSURE_UNKNOWN;
	CHECK(hs_peer_waited(&u, &peers, &w) && !w.io_wait_known && w.seconds > 8.49);
	/* a socket held for a moment of a long wait is not what it waited on */
	peers.v[0].held_s = 1;
	CHECK(!hs_peer_waited(&u, &peers, &w));
	/* under a second, or under half the wall time, says nothing */
	peers.v[0].held_s = 1;
	u = (struct hs_usage){ .wall_s = 0.9, .pressure = HS_PRESSURE_JOB_CGROUP };
	CHECK(!hs_peer_waited(&u, &peers, &w));
	u = (struct hs_usage){ .wall_s = 4, .user_s = 2.2, .pressure = HS_PRESSURE_JOB_CGROUP };
	CHECK(!hs_peer_waited(&u, &peers, &w));
	/* no socket at all */
	peers.n = 0;
	u.user_s = 0;
	CHECK(!hs_peer_waited(&u, &peers, &w));
}

TEST(the_peer_is_measured_by_its_unit_its_cgroup_or_its_pid)
{
	struct hs_peer peer = { .where = HS_PEER_PROCESS, .pid = 1234 };
	const char *opt, *arg;
	char pid[16];

	snprintf(peer.cgroup, sizeof(peer.cgroup), "/system.slice/mariadb.service");
	CHECK(hs_peer_measure(&peer, pid, &opt, &arg));
	CHECK_STR(opt, "--unit");
	CHECK_STR(arg, "mariadb.service");
	snprintf(peer.cgroup, sizeof(peer.cgroup), "/system.slice/db/x.service");
	CHECK(hs_peer_measure(&peer, pid, &opt, &arg));
	CHECK_STR(opt, "--cgroup");
	CHECK_STR(arg, "/system.slice/db/x.service");
	/* hotset in that cgroup: it would measure itself */
	peer.shares_cgroup = true;
	CHECK(hs_peer_measure(&peer, pid, &opt, &arg));
	CHECK_STR(opt, "--pid");
	CHECK_STR(arg, "1234");
	peer.shares_cgroup = false;
	snprintf(peer.cgroup, sizeof(peer.cgroup), "/");
	CHECK(hs_peer_measure(&peer, pid, &opt, &arg) && !strcmp(opt, "--pid"));
	/* another user's: nothing to name */
	peer.where = HS_PEER_HIDDEN;
	CHECK(!hs_peer_measure(&peer, pid, &opt, &arg));
}

/* ---- the fuzz corpus ----------------------------------------------------------------------- */

#define LLVMFuzzerTestOneInput fuzz_netsock
#include "../fuzz/fuzz-netsock.c"
#undef LLVMFuzzerTestOneInput

TEST(the_fuzz_corpus_goes_through_the_parsers)
{
	CHECK(replay("netsock", fuzz_netsock) > 0);
}

int main(void)
{
	return RUN_TESTS(a_tcp_line_gives_both_ends_its_owner_and_inode,
			 what_is_not_a_tcp_line_is_refused,
			 a_unix_line_gives_its_inode_and_path_spaces_and_all,
			 a_socket_is_told_by_its_fd_link,
			 a_dump_gives_each_sockets_peer_and_name_and_ends_at_done,
			 the_kernel_names_the_other_end_of_a_unix_connection,
			 a_loopback_connection_is_two_lines_whose_addresses_swap,
			 a_job_waited_on_a_peer_only_past_both_thresholds_and_while_it_held_it,
			 the_peer_is_measured_by_its_unit_its_cgroup_or_its_pid,
			 the_fuzz_corpus_goes_through_the_parsers);
}
