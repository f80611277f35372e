#!/usr/bin/env bash
# Real database servers of the test's own (tests/lib-db.sh): MariaDB, in
# fsync and in O_DIRECT mode, and PostgreSQL 15 start in memory cgroups of
# their own that hold them and nothing else, with a small generated table;
# a query job through each one's client under hotset time keeps the
# client's exit status, and the files the server read for it are in
# hotset snapshot after it; a script that fails or is killed after starting
# a server leaves nothing behind, nor does this one: no server process, no
# cgroup, no data directory. As root.
. "$(dirname "$0")/../lib.sh"
. "$TESTS_DIR/lib-db.sh"

# once, in the plain build's pass: the sanitizers' pass runs doctor's code on
# the other tests' jobs, and the servers cost a minute there
if prereq_PLAIN; then db_test_servers; else echo "# no servers in the sanitizers' pass"; fi
ROWS=$DB_TEST_ROWS LIMIT=$DB_TEST_LIMIT
# what the script must leave behind: nothing of these
started_dirs=() started_cgs=()
for name in mariadb mariadb-direct postgres; do
	db_up "$name" || continue
	started_dirs+=("$(db_datadir "$name")")
	mapfile -t -O ${#started_cgs[@]} started_cgs < <(db_cgroups "$name")
done

# in_cgroup NAME: every process of the server is in its cgroup, and the
# cgroup holds nothing else; its memory limit is the one asked for
in_cgroup() {
	local name=$1 exe=$2 pid p procs cg
	pid=$(db_pid "$1") cg=$(db_cgroups "$1") procs=$(db_procs "$1") || return 1
	echo "server $pid, cgroup $cg: ${procs//$'\n'/ }"
	grep -qx "$pid" <<< "$procs" || { echo "$pid is not in $cg"; return 1; }
	for p in $(pgrep -P "$pid"); do
		grep -qx "$p" <<< "$procs" || { echo "$p, a child of $pid, is not in $cg"; return 1; }
	done
	for p in $procs; do check_eq "$(readlink "/proc/$p/exe")" "$exe" || return 1; done
	if [ -f "$cg/memory.limit_in_bytes" ]; then
		check_eq "$(cat "$cg/memory.limit_in_bytes")" "$LIMIT"
	else
		check_eq "$(cat "$cg/memory.max")" "$LIMIT"
	fi
}

test_expect_success ROOT,MARIADB 'mariadbd runs alone in its memory cgroup, and holds the table' '
	in_cgroup mariadb "$MARIADBD" && in_cgroup mariadb-direct "$MARIADBD" &&
	for name in mariadb mariadb-direct; do
		check_eq "$(db_sql $name "SELECT COUNT(*), MAX(id) FROM reports")" "$(printf "%s\t%s" $ROWS $ROWS)" &&
		check_eq "$(db_sql $name "SELECT COUNT(*) FROM dists")" $((ROWS / 50 + 1)) || exit 1
	done
'

test_expect_success ROOT,POSTGRES 'postgres runs alone in its memory cgroup, as its user, and holds the table' '
	in_cgroup postgres "$PG_BIN/postgres" &&
	for p in $(db_procs postgres); do check_eq "$(stat -c %U /proc/$p)" "${DB_USER[postgres]}" || exit 1; done &&
	check_eq "$(db_sql postgres "SELECT COUNT(*), MAX(id) FROM reports")" "$(printf "%s\t%s" $ROWS $ROWS)" &&
	check_eq "$(db_sql postgres "SHOW shared_buffers")" 8MB
'

# fdinfo's flags are octal; O_DIRECT's bit differs between architectures
O_DIRECT=$(python3 -c "import os; print(os.O_DIRECT)")
# direct_flag NAME FILE: 1 if the server has FILE open with O_DIRECT, 0 if without
direct_flag() {
	local pid=$(db_pid "$1") fd
	for fd in /proc/$pid/fd/*; do
		[ "$(readlink "$fd")" = "$2" ] || continue
		echo $(( (8#$(awk "/^flags:/ { print \$2 }" "/proc/$pid/fdinfo/${fd##*/}") & O_DIRECT) != 0 ))
		return 0
	done
	echo "$2 is not open" >&2
	return 1
}

test_expect_success ROOT,MARIADB 'the flush method reaches InnoDB: its table is open with O_DIRECT, or without' '
	check_eq "$(db_sql mariadb-direct "SELECT @@innodb_flush_method")" O_DIRECT &&
	check_eq "$(db_sql mariadb "SELECT @@innodb_flush_method")" fsync &&
	check_eq "$(direct_flag mariadb-direct "$(db_datadir mariadb-direct)/hs/reports.ibd")" 1 &&
	check_eq "$(direct_flag mariadb "$(db_datadir mariadb)/hs/reports.ibd")" 0
'

cat > "$TRASH/scan.sql" <<-\EOF
SELECT state, COUNT(*) FROM reports GROUP BY state ORDER BY state;
SELECT COUNT(*) FROM reports r JOIN dists d ON d.id = r.dist_id WHERE r.summary LIKE '%t/pod.t%';
EOF
echo "SELECT no_such_column FROM reports;" > "$TRASH/bad.sql"

# timed NAME STATUS JOB: the job through NAME's client under hotset time -J,
# which exits with the client's STATUS and says so in its report
timed() {
	local rc=0
	db_client "$1" || return 1
	hotset time -J -o t.json -- "${DB_CLIENT[@]}" < "$3" > out 2> err || rc=$?
	cat err >&2
	check_eq "$rc" "$2" &&
	check_eq "$(json t.json "\"%s %s\" % (j[\"report\"], j[\"exit_status\"])")" "time $2"
}
# the states counted by the scan: all the table's rows
states_total() { awk -F "\t" "NR <= 4 { n += \$2 } END { print n }" out; }

test_expect_success ROOT,MARIADB 'hotset time around the MariaDB client keeps its exit status, 0 and 1' '
	for name in mariadb mariadb-direct; do
		timed $name 0 "$TRASH/scan.sql" && check_eq "$(states_total)" $ROWS &&
		timed $name 1 "$TRASH/bad.sql" && grep -q "Unknown column" err || exit 1
	done
'

test_expect_success ROOT,POSTGRES 'hotset time around psql keeps its exit status, 0 and 3 (ON_ERROR_STOP)' '
	timed postgres 0 "$TRASH/scan.sql" && check_eq "$(states_total)" $ROWS &&
	timed postgres 3 "$TRASH/bad.sql" && grep -q "no_such_column" err
'

# read_by_job NAME FILE: evict the server's files, run the scan: FILE (a
# path in the data directory) is in hotset snapshot's profile, resident
read_by_job() {
	local d; d=$(db_datadir "$1")
	hotset evict -q "$d" &&
	db_job "$1" "$TRASH/scan.sql" > /dev/null &&
	hotset snapshot -q -o s.prof "$d" &&
	hotset show --files s.prof > files &&
	grep -qxF "$d/$2" files || { echo "$2 not among:"; cat files; false; }
}

test_expect_success ROOT,MARIADB 'fsync mode: the table InnoDB read for the job is in hotset snapshot after it' '
	retry read_by_job mariadb hs/reports.ibd
'

# the file of the table reports, in postgres's data directory
pg_table_file() { db_sql postgres "SELECT pg_relation_filepath('reports')"; }

test_expect_success ROOT,POSTGRES 'the table postgres read for the job is in hotset snapshot after it' '
	retry read_by_job postgres "$(pg_table_file)"
'

# A script of its own that starts a server (lib-db.sh alone, as the
# benchmarks use it), says where it is, then fails, waits for its children,
# or waits to be killed.
cat > "$TRASH/starter.sh" <<-EOF
DB_ROOT=\$PWD
. "$TESTS_DIR/lib-db.sh"
db_start mariadb --pool 8M --mem $LIMIT || exit 9
{ db_pid mariadb; db_cgroups mariadb; db_datadir mariadb; } > where.tmp && mv where.tmp where
case \$1 in
fail) exit 3;;
wait-all) wait; exit 4;;
esac
while :; do sleep 1; done
EOF
# gone: the server (ended, if maybe not yet reaped by init), its cgroup and
# its directory, as where lists them
gone() {
	local pid cg dir
	{ read -r pid; read -r cg; read -r dir; } < where &&
	case $(awk "/^State:/ { print \$2 }" /proc/$pid/status 2> /dev/null) in
	""|Z) ;; *) echo "$pid runs"; return 1;;
	esac &&
	{ test ! -e "$cg" || { echo "$cg is left"; return 1; }; } &&
	{ test ! -e "$dir" || { echo "$dir is left"; return 1; }; }
}
wait_file() { local i; for i in $(seq 600); do [ -e "$1" ] && return 0; sleep 0.1; done; return 1; }

test_expect_success ROOT,MARIADB 'a script that fails after starting a server stops it: no server, cgroup or data left' '
	expect_code 3 bash "$TRASH/starter.sh" fail && gone
'

test_expect_success ROOT,MARIADB 'the server is not the script'"'"'s child: a bare wait returns, and the server stops at exit' '
	expect_code 4 timeout 120 bash "$TRASH/starter.sh" wait-all && gone
'

test_expect_success ROOT,MARIADB 'a script killed while its server runs stops it too' '
	{ bash "$TRASH/starter.sh" wait & } && pid=$! &&
	wait_file where && test -d "$(sed -n 3p where)" &&
	kill -TERM $pid && expect_code 143 wait $pid && gone
'

# Stop them all: twice, as the EXIT trap will once more.
for name in mariadb mariadb-direct postgres; do db_stop "$name"; db_stop "$name"; done
db_stop_all

# a server process of this test's: its data directory in its command line or as its cwd
ours() {
	local p d
	for p in $(pgrep -x "mariadbd|postgres"); do
		for d in "${started_dirs[@]}"; do
			tr "\0" " " < /proc/$p/cmdline 2> /dev/null | grep -qF "$d" && echo "$p"
			[ "$(readlink /proc/$p/cwd 2> /dev/null)" = "$d" ] && echo "$p"
		done
	done
	return 0
}

test_expect_success ROOT 'stopped: no server process, cgroup or data directory of the test left' '
	check_eq "$(ours)" "" &&
	for x in "${started_dirs[@]}" "${started_cgs[@]}"; do
		test ! -e "$x" || { echo "left: $x"; exit 1; }
	done &&
	check_eq "$(find "$TRASH" -maxdepth 1 -name "db.*")" ""
'

test_done
