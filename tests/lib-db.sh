# tests/lib-db.sh - real database servers of a test's own, as root: MariaDB
# (mariadbd) and PostgreSQL 15, each in a memory cgroup of its own, with a
# generated table and jobs run through the server's own client.
#
# Source it after tests/lib.sh (the servers' files go under $TRASH), or
# alone (the benchmarks: set DB_ROOT to a directory the servers' users can
# reach, such as one under /var/tmp). Then, in the script itself (not in a
# test body, whose subshell would lose the server's records when it ends):
#
#   db_check mariadb || skip the tests that need it: $DB_WHY
#   db_start mariadb [OPTIONS] || skip them too: $DB_WHY
#
# db_start makes a data directory (under DB_ROOT, unless --datadir names
# one), a memory cgroup (cgroup v1's memory controller where it is mounted,
# else cgroup v2's memory.max), starts the server inside it with its socket
# in the data directory and no TCP, and returns once the server answers a
# query through its socket, or fails within DB_TIMEOUT seconds (default 60)
# with the reason in DB_WHY, having printed the server's log (as "# "
# lines) and stopped what it started. A database named hs is there to use.
#
#   --name NAME      the server's name in the other calls (default: KIND);
#                    two servers of one kind need two names
#   --pool SIZE      InnoDB's buffer pool (innodb_buffer_pool_size), or
#                    PostgreSQL's shared_buffers: bytes, or 512K, 64M, 1G
#                    (default 32M)
#   --flush METHOD   MariaDB's innodb_flush_method: O_DIRECT (the default
#                    of MariaDB 10.6 and later) or fsync (reads through
#                    the page cache)
#   --mem BYTES      the memory cgroup's limit (default 1 GiB; 0: none)
#   --cgroup DIR     run the server in this cgroup (one of the caller's, a
#                    bench's box) instead of one of its own; repeat for one
#                    in each hierarchy; it must hold the server alone
#   --datadir DIR    the data directory: made and initialized if it does
#                    not exist or is empty, reused if it holds a server's
#                    data (a bench's table, loaded once), never removed
#   --user USER      PostgreSQL's user (default postgres, else nobody: it
#                    refuses to run as root); MariaDB runs as root
#   --opt ARG        one more argument for mariadbd (--innodb-...=...), or
#                    one more "-c name=value" setting for postgres; repeat
#
# MariaDB runs without grant tables (--skip-grant-tables: mariadb-install-db
# takes seconds to fill them, and chowns and chmods the packaged PAM
# plugin's helper on the way): every local user may connect through its
# socket, which lies in a directory only root can enter. Its buffer pool is neither dumped at
# shutdown nor loaded at start-up unless an --opt says so, so that each
# start is cold. PostgreSQL runs as USER from a cluster made by initdb
# (superuser postgres, trust authentication, locale C).
#
# The servers are not the calling shell's children (a bare "wait" does not
# wait for them). Everything is stopped at exit: the first db_start adds db_stop_all to the
# shell's EXIT trap (before the trap the caller had, which still runs) and
# makes SIGINT, SIGTERM and SIGHUP exit. db_stop NAME stops the server
# (SIGTERM to mariadbd, pg_ctl stop -m fast), waits for it to end (killing
# what its cgroup still holds after DB_TIMEOUT seconds), removes its
# cgroup and, unless it came from --datadir, its data directory. It may be
# called early and again: a server already stopped is left alone.
#
# Also:
#   db_client NAME           DB_CLIENT: the words that run the server's client
#                            on database hs (mariadb --batch, psql -X with
#                            ON_ERROR_STOP), reading SQL from standard input
#   db_job NAME FILE         run the SQL of FILE through the client
#   db_sql NAME SQL          run SQL through the client, print the rows
#                            (tab-separated, no header)
#   db_load NAME ROWS        (re)create and fill the tables reports (ROWS
#                            rows, a secondary key on dist_id, version) and
#                            dists (ROWS / 50 + 1 rows), then analyze them
#   db_gen_reports ROWS      the rows of reports, tab-separated, on stdout
#   db_gen_dists N           the rows of dists
#   db_procs NAME            the pids the server's cgroup holds, one a line
#   db_pid NAME              the server's pid (mariadbd, the postmaster)
#   db_cgroups NAME          its cgroup directories, one a line
#   db_datadir NAME          its data directory
#   db_log NAME              its log, as "# " lines
#
# The server's facts are also in DB_PID[NAME], DB_DATA[NAME], DB_SOCK[NAME]
# (the socket: a file for MariaDB, a directory for PostgreSQL) and
# DB_CG[NAME] (its cgroups, separated by newlines).

DB_ROOT=${DB_ROOT:-${TRASH:-}}
DB_TIMEOUT=${DB_TIMEOUT:-60}
DB_WHY=''
MARIADBD=${MARIADBD:-/usr/sbin/mariadbd}
PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
declare -A DB_KIND=() DB_PID=() DB_DATA=() DB_SOCK=() DB_CG=() DB_OWN_CG=() DB_OWN_DATA=() DB_USER=()
DB_CLIENT=() _db_enter=()
_db_trapped='' _db_v2_enabled=''

# ---- waiting --------------------------------------------------------------------

# _db_until SECS CMD...: run CMD every 0.1 s until it succeeds, for at most SECS
_db_until() {
	local end=$((SECONDS + $1)); shift
	until "$@" > /dev/null 2>&1; do
		[ $SECONDS -lt $end ] || return 1
		sleep 0.1
	done
}

# _db_alive PID: PID runs (a zombie has ended: init reaps it in its time)
_db_alive() {
	local s
	s=$(sed -n 's/^State:[[:space:]]*\(.\).*/\1/p' "/proc/$1/status" 2> /dev/null) || return 1
	[ -n "$s" ] && [ "$s" != Z ]
}
_db_gone() { ! _db_alive "$1"; }

# ---- cgroups ------------------------------------------------------------------

# _db_memcg: "v1 DIR" or "v2 DIR", the memory controller's hierarchy
_db_memcg() {
	local _d mnt fs opts _r v2=''
	while read -r _d mnt fs opts _r; do
		if [ "$fs" = cgroup ] && [[ ,$opts, == *,memory,* ]] && [ -f "$mnt/memory.limit_in_bytes" ]; then
			echo "v1 $mnt"; return 0
		fi
		[ "$fs" = cgroup2 ] && [ -z "$v2" ] && v2=$mnt
	done < /proc/mounts
	if [ -n "$v2" ] && grep -qw memory "$v2/cgroup.controllers" 2> /dev/null; then
		echo "v2 $v2"; return 0
	fi
	return 1
}

# _db_cg_new NAME LIMIT: a memory cgroup for server NAME, limited to LIMIT
# bytes (0: none); its directory in DB_OWN_CG[NAME]
_db_cg_new() {
	local mode root dir
	read -r mode root <<< "$(_db_memcg)" || return 1
	[ -n "$mode" ] || return 1
	dir=$root/hotset-db.$$.$1
	if [ "$mode" = v2 ] && ! grep -qw memory "$root/cgroup.subtree_control"; then
		echo +memory > "$root/cgroup.subtree_control" || return 1
		_db_v2_enabled=$root
	fi
	mkdir "$dir" || return 1
	DB_OWN_CG[$1]=$dir
	if [ "$mode" = v1 ]; then
		[ "$2" = 0 ] || echo "$2" > "$dir/memory.limit_in_bytes" || return 1
	else
		[ "$2" = 0 ] || echo "$2" > "$dir/memory.max" || return 1
		echo 0 > "$dir/memory.swap.max" 2> /dev/null || :
	fi
}

# _db_cg_rm DIR: the cgroup removed once the processes it holds have ended
# (killed if they have not within DB_TIMEOUT seconds)
_db_cg_rm() {
	local dir=$1 p
	[ -d "$dir" ] || return 0
	if ! _db_until "$DB_TIMEOUT" _db_cg_empty "$dir"; then
		for p in $(cat "$dir/cgroup.procs" 2> /dev/null); do kill -KILL "$p" 2> /dev/null || :; done
		_db_until 10 _db_cg_empty "$dir" || :
	fi
	# an exited process may hold it until reaped
	_db_until 10 rmdir "$dir" || echo "# db: could not remove $dir" >&2
}
# a process that has ended but is not reaped still counts in cgroup v1
_db_cg_empty() {
	local p
	for p in $(cat "$1/cgroup.procs" 2> /dev/null); do _db_alive "$p" && return 1; done
	return 0
}

# The words that run a command inside cgroups DIR... (one sh that moves
# itself into each, then becomes the command: "${w[@]}" CMD & gives CMD's pid).
_db_enter_words() {
	_db_enter=(sh -c 'n=$1; shift; while [ "$n" -gt 0 ]; do
		echo $$ > "$1/cgroup.procs" || exit 125; shift; n=$((n - 1)); done; exec "$@"' sh $#)
	_db_enter+=("$@")
}

db_cgroups() { printf '%s\n' "${DB_CG[$1]:-}" | sed '/^$/d'; }
db_procs() {
	local dir
	dir=$(db_cgroups "$1" | head -n 1)
	[ -n "$dir" ] && cat "$dir/cgroup.procs"
}
db_pid() { echo "${DB_PID[$1]:-}"; }
db_datadir() { echo "${DB_DATA[$1]:-}"; }

# ---- checks ---------------------------------------------------------------------

# db_check KIND: can this machine run a server of KIND here? 1 with DB_WHY if not
db_check() {
	local b
	DB_WHY=
	[ "$(id -u)" -eq 0 ] || { DB_WHY="not root: the servers run in cgroups of their own"; return 1; }
	case $1 in
	mariadb)
		for b in "$MARIADBD" mariadb; do
			command -v "$b" > /dev/null ||
				{ DB_WHY="no ${b##*/} (Debian: apt-get install mariadb-server)"; return 1; }
		done;;
	postgres)
		for b in initdb pg_ctl postgres psql pg_isready; do
			[ -x "$PG_BIN/$b" ] ||
				{ DB_WHY="no $PG_BIN/$b (Debian: apt-get install postgresql)"; return 1; }
		done
		command -v setpriv > /dev/null || { DB_WHY="no setpriv (util-linux)"; return 1; };;
	*) DB_WHY="unknown server kind '$1' (mariadb or postgres)"; return 1;;
	esac
	[ -n "$DB_ROOT" ] && [ -d "$DB_ROOT" ] || { DB_WHY="no DB_ROOT directory"; return 1; }
}

# ---- starting -----------------------------------------------------------------

# _db_fail NAME REASON: say why, print the log, stop what started; return 1
_db_fail() {
	DB_WHY=$2
	echo "# db $1: $2" >&2
	db_log "$1" >&2
	db_stop "$1"
	return 1
}

db_log() {
	local f
	case ${DB_KIND[$1]:-} in
	mariadb) f=${DB_DATA[$1]}/error.log;;
	postgres) f=${DB_DATA[$1]}/server.log;;
	*) return 0;;
	esac
	[ -s "$f" ] && tail -n 30 "$f" | sed -e 's/^/# /'
	return 0
}

db_start() {
	local kind=$1 name=$1 pool=32M flush='' mem=$((1 << 30)) datadir='' user='' cgs=() opts=()
	shift
	db_check "$kind" || return 1
	while [ $# -gt 0 ]; do
		[ $# -ge 2 ] || { DB_WHY="db_start: $1 needs a value"; return 1; }
		case $1 in
		--name) name=$2;; --pool) pool=$2;; --flush) flush=$2;; --mem) mem=$2;;
		--cgroup) cgs+=("$2");; --datadir) datadir=$2;; --user) user=$2;; --opt) opts+=("$2");;
		*) DB_WHY="db_start: unknown option $1"; return 1;;
		esac
		shift 2
	done
	[ -z "${DB_KIND[$name]:-}" ] || { DB_WHY="a server named $name runs already"; return 1; }
	case $kind:$flush in
	mariadb:) flush=O_DIRECT;;
	mariadb:O_DIRECT|mariadb:fsync|postgres:) ;;
	postgres:*) DB_WHY="--flush is MariaDB's (PostgreSQL 15 reads through the page cache)"; return 1;;
	*) DB_WHY="--flush: O_DIRECT or fsync, not $flush"; return 1;;
	esac
	if [ -z "$user" ] && [ "$kind" = postgres ]; then
		user=nobody
		id -u postgres > /dev/null 2>&1 && user=postgres
	fi
	# stop at exit, before what the caller had at exit (lib.sh removes $TRASH)
	if [ -z "$_db_trapped" ]; then
		local prev
		prev=$(trap -p EXIT)
		if [ -n "$prev" ]; then eval "set -- $prev"; prev=$3; fi
		# shellcheck disable=SC2064
		trap "db_stop_all; $prev" EXIT
		trap 'exit 130' INT; trap 'exit 143' TERM; trap 'exit 129' HUP
		_db_trapped=1
	fi
	DB_KIND[$name]=$kind DB_USER[$name]=$user DB_PID[$name]=''
	if [ -z "$datadir" ]; then
		datadir=$DB_ROOT/db.$name
		DB_OWN_DATA[$name]=$datadir
	fi
	DB_DATA[$name]=$datadir
	if [ ${#cgs[@]} -eq 0 ]; then
		_db_cg_new "$name" "$mem" ||
			{ _db_fail "$name" "cannot make a memory cgroup (cgroup v1 memory, or v2 memory.max)"; return 1; }
		cgs=("${DB_OWN_CG[$name]}")
	fi
	DB_CG[$name]=$(printf '%s\n' "${cgs[@]}")
	_db_enter_words "${cgs[@]}"
	"_db_start_$kind" "$name" "$pool" "$flush" "${opts[@]}"
}

_db_start_mariadb() {
	local name=$1 pool=$2 flush=$3 d=${DB_DATA[$1]} pid; shift 3
	DB_SOCK[$name]=$d/mysqld.sock
	# sun_path holds 108 bytes with its NUL
	[ ${#d} -le 90 ] || { _db_fail "$name" "the data directory's name is too long for a socket: $d"; return 1; }
	mkdir -p "$d" && chmod 700 "$d" || { _db_fail "$name" "cannot make $d"; return 1; }
	# Started from a subshell that ends at once, so that it is not this
	# shell's child (a bare "wait" of the caller's would wait for it), as
	# pg_ctl's postmaster is not. The tmpdir in the data directory: nothing
	# left in /tmp.
	pid=$("${_db_enter[@]}" "$MARIADBD" --no-defaults --user=root --datadir="$d" \
		--socket="$d/mysqld.sock" --pid-file="$d/mysqld.pid" --log-error="$d/error.log" \
		--tmpdir="$d" --skip-networking --skip-grant-tables \
		--innodb-flush-method="$flush" --innodb-buffer-pool-size="$pool" \
		--innodb-buffer-pool-load-at-startup=0 --innodb-buffer-pool-dump-at-shutdown=0 \
		"$@" < /dev/null >> "$d/error.log" 2>&1 & echo $!)
	DB_PID[$name]=$pid
	local end=$((SECONDS + DB_TIMEOUT))
	until [ -S "$d/mysqld.sock" ] && _db_mariadb_q "$name" 'SELECT 1' > /dev/null 2>&1; do
		_db_alive "$pid" || { _db_fail "$name" "mariadbd exited at start"; return 1; }
		[ $SECONDS -lt $end ] || { _db_fail "$name" "mariadbd did not answer within $DB_TIMEOUT s"; return 1; }
		sleep 0.1
	done
	_db_mariadb_q "$name" 'CREATE DATABASE IF NOT EXISTS hs' ||
		{ _db_fail "$name" "cannot create the database hs"; return 1; }
}
_db_mariadb_q() { mariadb --no-defaults --socket="${DB_SOCK[$1]}" --batch --skip-column-names -e "$2"; }

# _db_as NAME CMD...: CMD as the server's user, from its data directory (a
# private working directory would be refused to it)
_db_as() {
	local u=${DB_USER[$1]} d=${DB_DATA[$1]}; shift
	(cd "$d" 2> /dev/null || cd /; exec setpriv --reuid="$u" --regid="$(id -g "$u")" \
		--init-groups -- "$@")
}

_db_start_postgres() {
	local name=$1 pool=$2 d=${DB_DATA[$1]} u=${DB_USER[$1]} out o settings='' pid=''; shift 3
	# shared_buffers's units: kB, MB, GB; a bare number would count 8 kB blocks
	case $pool in
	*[0-9]) pool=${pool}B;; *[kK]) pool=${pool%?}kB;; *[mM]) pool=${pool%?}MB;; *[gG]) pool=${pool%?}GB;;
	esac
	DB_SOCK[$name]=$d
	[ ${#d} -le 90 ] || { _db_fail "$name" "the data directory's name is too long for a socket: $d"; return 1; }
	id -u "$u" > /dev/null 2>&1 || { _db_fail "$name" "no user $u"; return 1; }
	if [ ! -f "$d/PG_VERSION" ]; then
		mkdir -p "$d" && chown "$u:$(id -g "$u")" "$d" && chmod 700 "$d" ||
			{ _db_fail "$name" "cannot make $d"; return 1; }
		# --no-sync: a scratch cluster need not survive a crash of the machine
		out=$(_db_as "$name" "$PG_BIN/initdb" -D "$d" -U postgres -A trust -E UTF8 \
			--locale=C --no-sync 2>&1) ||
			{ printf '%s\n' "$out" | tail -n 20 | sed 's/^/# /' >&2; _db_fail "$name" "initdb failed"; return 1; }
	fi
	# pg_ctl's options pass through sh: each value quoted
	for o in "listen_addresses=" "unix_socket_directories=$d" "shared_buffers=$pool" "$@"; do
		settings+=" -c $(_db_shq "$o")"
	done
	rm -f "$d/server.log"
	"${_db_enter[@]}" setpriv --reuid="$u" --regid="$(id -g "$u")" --init-groups -- \
		sh -c 'cd "$1" && shift && exec "$@"' sh "$d" \
		"$PG_BIN/pg_ctl" -D "$d" -l "$d/server.log" -W -s -o "$settings" start \
		< /dev/null > /dev/null 2>&1 ||
		{ _db_fail "$name" "pg_ctl start failed"; return 1; }
	# pg_ctl has forked the postmaster and gone: it is in the cgroup, and
	# writes its pid to postmaster.pid
	local end=$((SECONDS + DB_TIMEOUT))
	until [ -n "$pid" ] && [ -S "$d/.s.PGSQL.5432" ] &&
		"$PG_BIN/pg_isready" -q -h "$d" -U postgres -d postgres > /dev/null 2>&1; do
		[ -n "$pid" ] || pid=$(head -n 1 "$d/postmaster.pid" 2> /dev/null) || :
		DB_PID[$name]=$pid
		if [ -n "$pid" ]; then
			_db_alive "$pid" || { _db_fail "$name" "postgres exited at start"; return 1; }
		elif _db_cg_empty "$(db_cgroups "$name" | head -n 1)"; then
			_db_fail "$name" "postgres exited at start"; return 1
		fi
		[ $SECONDS -lt $end ] || { _db_fail "$name" "postgres did not answer within $DB_TIMEOUT s"; return 1; }
		sleep 0.1
	done
	if [ "$(_db_pg_q "$name" postgres "SELECT 1 FROM pg_database WHERE datname = 'hs'")" != 1 ]; then
		_db_pg_q "$name" postgres 'CREATE DATABASE hs' > /dev/null ||
			{ _db_fail "$name" "cannot create the database hs"; return 1; }
	fi
}
# a word quoted for sh
_db_shq() { printf "'%s'" "${1//\'/\'\\\'\'}"; }
_db_pg_q() {
	"$PG_BIN/psql" -X -q -A -t -F "$(printf '\t')" -v ON_ERROR_STOP=1 -h "${DB_SOCK[$1]}" \
		-U postgres -d "$2" -c "$3"
}

# ---- stopping -----------------------------------------------------------------

db_stop() {
	local name=$1 pid dir
	[ -n "${DB_KIND[$name]:-}" ] || return 0
	pid=${DB_PID[$name]:-}
	# (no step may stop the rest: callers may run with set -e)
	if [ -n "$pid" ] && _db_alive "$pid"; then
		if [ "${DB_KIND[$name]}" = postgres ]; then
			_db_as "$name" "$PG_BIN/pg_ctl" -D "${DB_DATA[$name]}" -m fast -W -s stop \
				> /dev/null 2>&1 || kill -TERM "$pid" 2> /dev/null || :
		else
			kill -TERM "$pid" 2> /dev/null || :
		fi
		_db_until "$DB_TIMEOUT" _db_gone "$pid" || kill -KILL "$pid" 2> /dev/null || :
	fi
	if [ -n "${DB_OWN_CG[$name]:-}" ]; then
		_db_cg_rm "${DB_OWN_CG[$name]}"
	else
		# the caller's cgroups: only what the server left there is ours
		for dir in $(db_cgroups "$name"); do
			_db_until "$DB_TIMEOUT" _db_cg_empty "$dir" || :
		done
	fi
	[ -z "${DB_OWN_DATA[$name]:-}" ] || rm -rf "${DB_OWN_DATA[$name]}"
	unset "DB_KIND[$name]" "DB_PID[$name]" "DB_DATA[$name]" "DB_SOCK[$name]" "DB_CG[$name]" \
		"DB_OWN_CG[$name]" "DB_OWN_DATA[$name]" "DB_USER[$name]"
	return 0
}

db_stop_all() {
	local name
	for name in "${!DB_KIND[@]}"; do db_stop "$name"; done
	if [ -n "$_db_v2_enabled" ]; then
		echo -memory > "$_db_v2_enabled/cgroup.subtree_control" 2> /dev/null || :
		_db_v2_enabled=''
	fi
	return 0
}

# ---- jobs -----------------------------------------------------------------------

db_client() {
	case ${DB_KIND[$1]:-} in
	mariadb) DB_CLIENT=(mariadb --no-defaults --socket="${DB_SOCK[$1]}" --batch --skip-column-names
		--database=hs);;
	postgres) DB_CLIENT=("$PG_BIN/psql" -X -q -A -t -F "$(printf '\t')" -v ON_ERROR_STOP=1
		-h "${DB_SOCK[$1]}" -U postgres -d hs);;
	*) echo "db: no server named $1" >&2; return 1;;
	esac
}

db_job() { db_client "$1" && "${DB_CLIENT[@]}" < "$2"; }
db_sql() { db_client "$1" && "${DB_CLIENT[@]}" <<< "$2"; }

# ---- the tables ---------------------------------------------------------------
#
# A test report database in the manner of CPAN Testers: reports (one row a
# test report of a distribution on a platform: state, tester, perl,
# operating system, dates, a summary line) and dists. Rows come from a
# generator of our own, with a Park-Miller generator (x = 16807 x mod 2^31-1:
# the products stay below 2^53, exact in awk's doubles, so that mawk and
# gawk give the same rows). About 330 bytes a row of data; InnoDB takes
# about 450 with its secondary key. Ids rise with the dates, as they do in
# a table filled over the years, so that a range of ids is a range of pages.

DB_SCHEMA="CREATE TABLE dists (id INTEGER PRIMARY KEY, name VARCHAR(64) NOT NULL,
	author VARCHAR(16) NOT NULL, version VARCHAR(16) NOT NULL, released CHAR(8) NOT NULL);
CREATE TABLE reports (id BIGINT PRIMARY KEY, guid CHAR(36) NOT NULL, state VARCHAR(8) NOT NULL,
	postdate CHAR(6) NOT NULL, tester VARCHAR(64) NOT NULL, dist_id INTEGER NOT NULL,
	version VARCHAR(16) NOT NULL, platform VARCHAR(48) NOT NULL, perl VARCHAR(8) NOT NULL,
	osname VARCHAR(16) NOT NULL, osvers VARCHAR(24) NOT NULL, fulldate CHAR(12) NOT NULL,
	summary VARCHAR(400) NOT NULL);"
DB_INDEX="CREATE INDEX reports_dist ON reports (dist_id, version);"

db_gen_dists() {
	awk -v n="$1" 'function r(k) { x = (x * 16807) % 2147483647; return x % k }
	BEGIN {
		x = 7
		nw = split("Acme Data Text Net HTTP Test Moose DBI File Path Config Log Time JSON XML Mojo Catalyst Dist Module App Devel Crypt Math List", w)
		for (i = 1; i <= n; i++) {
			a = ""
			for (k = 4 + r(5); k > 0; k--) a = a sprintf("%c", 65 + r(26))
			printf "%d\t%s-%s-%d\t%s\t%d.%02d\t%04d%02d%02d\n", i, w[1 + r(nw)], w[1 + r(nw)], i,
				a, r(4), r(100), 2000 + r(24), 1 + r(12), 1 + r(28)
		}
	}'
}

# db_gen_reports ROWS [DISTS]: dist_id skewed (a few distributions get most
# reports), most states pass
db_gen_reports() {
	awk -v n="$1" -v nd="${2:-$(($1 / 50 + 1))}" 'function r(k) { x = (x * 16807) % 2147483647; return x % k }
	BEGIN {
		x = 11
		ns = split("linux freebsd darwin MSWin32 openbsd netbsd solaris cygwin", os)
		split("6.1.0-13-amd64 13.2-release 22.6.0 10.0.19045 7.4 9.3 2.11 3.4.9", ov)
		split("x86_64-linux x86_64-freebsd darwin-2level MSWin32-x64-multi-thread OpenBSD.amd64-openbsd amd64-netbsd i86pc-solaris cygwin-thread-multi", pl)
		np = split("5.8.9 5.10.1 5.14.4 5.16.3 5.18.4 5.20.3 5.22.4 5.24.4 5.26.3 5.28.3 5.30.3 5.32.1 5.34.1 5.36.1 5.38.0", perl)
		nw = split("ok all tests successful files tests wallclock secs usr sys cpu result pass t/basic.t t/load.t t/pod.t t/compile.t skipped no tests run subtest planned Build.PL Makefile.PL make test dependencies prerequisites found", w)
		# the summaries: a few of 256 phrases of 5 to 10 words
		for (i = 1; i <= 256; i++)
			for (k = 5 + r(6); k > 0; k--) ph[i] = ph[i] " " w[1 + r(nw)]
		for (i = 1; i <= n; i++) {
			u = r(1000)
			d = 1 + int(nd * u * u / 1000000)
			s = r(100)
			st = s < 80 ? "pass" : s < 92 ? "fail" : s < 97 ? "na" : "unknown"
			o = 1 + r(ns)
			m = int(288 * (i - 1) / n)
			ym = (2000 + int(m / 12)) * 100 + 1 + m % 12
			sum = toupper(st) " " d " on perl " perl[1 + r(np)] ":"
			for (k = 2 + r(4); k > 0; k--) sum = sum ph[1 + r(256)]
			printf "%d\t%08x-%04x-%04x-%04x-%08x%04x\t%s\t%d\t%s\t%d\t%d.%02d\t%s\t%s\t%s\t%s\t%d%02d%02d%02d\t%s\n",
				i, r(2147483647), r(65536), r(65536), r(65536), r(2147483647), r(65536), st, ym,
				"Smoker " r(3000) " (SMOKER" r(3000) ")", d, r(4), r(100), pl[o], perl[1 + r(np)],
				os[o], ov[o], ym, 1 + r(28), r(24), r(60), substr(sum, 1, 400)
		}
	}'
}

db_load() {
	local name=$1 rows=$2 nd=$(($2 / 50 + 1))
	db_client "$name" || return 1
	case ${DB_KIND[$name]} in
	mariadb)
		"${DB_CLIENT[@]}" <<< "DROP TABLE IF EXISTS reports, dists; $DB_SCHEMA" &&
		db_gen_dists "$nd" | "${DB_CLIENT[@]}" --local-infile=1 \
			-e "LOAD DATA LOCAL INFILE '/dev/stdin' INTO TABLE dists" &&
		# on an empty table with these checks off, InnoDB loads in bulk
		db_gen_reports "$rows" "$nd" | "${DB_CLIENT[@]}" --local-infile=1 \
			-e "SET unique_checks = 0, foreign_key_checks = 0;
			    LOAD DATA LOCAL INFILE '/dev/stdin' INTO TABLE reports" &&
		"${DB_CLIENT[@]}" <<< "$DB_INDEX ANALYZE TABLE reports, dists;" > /dev/null;;
	postgres)
		"${DB_CLIENT[@]}" <<< "SET client_min_messages = warning;
			DROP TABLE IF EXISTS reports, dists; $DB_SCHEMA" &&
		db_gen_dists "$nd" | "${DB_CLIENT[@]}" -c "COPY dists FROM STDIN" &&
		db_gen_reports "$rows" "$nd" | "${DB_CLIENT[@]}" -c "COPY reports FROM STDIN" &&
		# frozen and analyzed: a first read sets no hint bits (no writes)
		"${DB_CLIENT[@]}" <<< "$DB_INDEX VACUUM (FREEZE, ANALYZE) reports; VACUUM (FREEZE, ANALYZE) dists;";;
	esac
}

# db_test_servers: the three servers the database tests share, started
# when root on a real filesystem (O_DIRECT, the page cache), each in a
# memory cgroup of DB_TEST_LIMIT with caches of DB_TEST_POOL, loaded with
# DB_TEST_ROWS rows, more than those caches hold (a scan reads the table's
# file): mariadb (fsync), mariadb-direct (O_DIRECT) and postgres. A server
# that does not start is said, and its tests skip: prereq_MARIADB (both
# MariaDB servers up), prereq_POSTGRES.
DB_TEST_ROWS=30000 DB_TEST_POOL=8M DB_TEST_LIMIT=$((256 << 20))
db_test_servers() {
	local s name flush
	if ! { prereq_ROOT && prereq_REALFS; }; then
		echo "# no servers: they need root and a real filesystem (O_DIRECT, the page cache)"
		return 0
	fi
	for s in mariadb:fsync mariadb-direct:O_DIRECT postgres:; do
		name=${s%:*} flush=${s#*:}
		db_start "${name%-direct}" --name "$name" --pool "$DB_TEST_POOL" --mem "$DB_TEST_LIMIT" \
			${flush:+--flush "$flush"} &&
			db_load "$name" "$DB_TEST_ROWS" || echo "# no $name server: $DB_WHY"
	done
}
db_up() { [ -n "$(db_pid "$1")" ]; }
prereq_MARIADB() { db_up mariadb && db_up mariadb-direct; }
prereq_POSTGRES() { db_up postgres; }
