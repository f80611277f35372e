/*
 * peer.h - who a job waits on: the processes at the other end of the
 * sockets it holds while it runs.
 *
 * A client of a database spends its wall time neither on a CPU nor on
 * its own disk: the server does the work. While the job runs, a probe
 * lists the sockets its processes hold (/proc/PID/fd) and, for each new
 * one, finds what is at the other end: for a unix socket, the peer's
 * socket (sock_diag) and its address; for TCP, the socket of this
 * machine whose two addresses are the swap of the job's (/proc/net/tcp,
 * tcp6); then the process that holds that socket (/proc/PID/fd of every
 * process). Sockets between two of the job's own processes, and those
 * hotset itself holds (the job's inherited streams), are not peers.
 *
 * What a user is told is what that user could learn with ss: an address,
 * a path, the uid that owns a socket; the process, its pid, name and
 * cgroup only when its /proc/PID/fd is readable to the caller (its own
 * processes, or root). A peer whose process is another user's is "a
 * process of uid N", never more.
 */
#ifndef HOTSET_PEER_H
#define HOTSET_PEER_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "job/usage.h"

enum hs_peer_transport {
	HS_PEER_UNIX = 1,
	HS_PEER_TCP,		/* over IPv4 */
	HS_PEER_TCP6,		/* over IPv6 (IPv4-mapped addresses included) */
};

/* How much is known of the other end. */
enum hs_peer_where {
	HS_PEER_PROCESS = 1,	/* a process of this machine, named: pid, name, cgroup */
	HS_PEER_HIDDEN,		/* a socket of this machine whose process the caller cannot see */
	HS_PEER_GONE,		/* on this machine, but the other end was closed before it was seen */
	HS_PEER_REMOTE,		/* an address not of this machine (or of another network namespace) */
};

struct hs_peer {
	enum hs_peer_transport transport;
	enum hs_peer_where where;
	/*
	 * The other end's address: a unix socket's path ("@name" for an
	 * abstract one, "" for none), or "host:port" for TCP. local is the
	 * job's end for TCP ("" for unix).
	 */
	char address[PATH_MAX];
	char local[64];
	double held_s;			/* how long the job was seen holding it */
	pid_t pid;			/* HS_PEER_PROCESS: the holder (the lowest pid, if several) */
	int holders;			/* processes holding the other end, the caller can see */
	char name[16];			/* its command name (/proc/PID/comm) */
	char cgroup[PATH_MAX];		/* its cgroup v2 path ("/system.slice/x.service"), "" if unknown */
	bool shares_cgroup;		/* hotset runs in that cgroup or below it: --pid names it, not --cgroup */
	bool uid_known;			/* the owner of the other end's socket */
	uint32_t uid;
};

#define HS_PEERS_MAX 8
#define HS_PEER_NOTES 4
#define HS_PEER_NOTE_LEN 320

/* What the probe saw: the peers held longest first. */
struct hs_peers {
	size_t n;
	struct hs_peer v[HS_PEERS_MAX];
	size_t more;			/* peers seen but not kept in v */
	size_t sockets;			/* sockets of the job seen, peers or not */
	int nnotes;			/* what could not be seen, one sentence each */
	char notes[HS_PEER_NOTES][HS_PEER_NOTE_LEN];
};

struct hs_peer_probe;

/*
 * Start watching the job's sockets: its processes are those of the
 * cgroup whose cgroup.procs is procs (the usage probe's,
 * hs_usage_cgroup_procs()), or, with procs NULL, the descendants of this
 * process (hotset is the job's subreaper). Call it just before the job
 * starts. A thread lists them every 200 ms; it blocks all signals, and
 * between samples holds no lock but its own. Returns 0 and sets *out
 * (release with hs_peer_end()), or -errno (-ENOMEM, or the thread's).
 */
int hs_peer_begin(const char *procs, struct hs_peer_probe **out);

/*
 * Stop watching, once the job has ended: what was seen into *out (if not
 * NULL), and p freed. Always returns 0.
 */
int hs_peer_end(struct hs_peer_probe *p, struct hs_peers *out);

/*
 * The rule of `time`: the job waited on someone else when its wall time
 * less its CPU time and its I/O wait (the time it was neither on a CPU
 * nor waiting for its disk) is over HS_PEER_WAIT_MIN_S seconds and over
 * HS_PEER_WAIT_SHARE of the wall time, and it held a socket with another
 * end (the longest held) for at least half of that time. With I/O wait
 * unknown, the time off a CPU stands for it, and io_wait_known says so.
 */
#define HS_PEER_WAIT_MIN_S 1.0
#define HS_PEER_WAIT_SHARE 0.5

struct hs_waited_on {
	double seconds;			/* neither on a CPU nor waiting for the disk */
	double share;			/* of the wall time, 0 to 1 */
	bool io_wait_known;
	const struct hs_peer *peer;	/* into the hs_peers given */
};

/* Returns true and fills *w when the job waited on a peer by the rule above. */
bool hs_peer_waited(const struct hs_usage *u, const struct hs_peers *peers, struct hs_waited_on *w);

/*
 * The option of `hotset time` that measures the peer's process while the
 * job runs again: --unit NAME for a system service's cgroup
 * ("/system.slice/NAME.service"), --cgroup PATH for another cgroup, --pid
 * PID when hotset runs in the peer's cgroup (measuring that would measure
 * hotset too) or the cgroup is unknown. Returns false for a peer that is
 * no process the caller can name. *opt is a static string; *arg points
 * into peer, or into pid (the caller's, 16 bytes).
 */
bool hs_peer_measure(const struct hs_peer *peer, char pid[16], const char **opt, const char **arg);

#endif
