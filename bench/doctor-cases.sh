#!/usr/bin/env bash
# bench/doctor-cases.sh - hotset doctor on jobs that wait for the disk for
# different reasons, each on a small slow machine made of cgroups
# (a memory limit, and reads from the data's disk throttled to DC_IOPS
# and DC_BPS, 150 IOPS and 20 MiB/s by default: a small VM's disk):
#
#   compile  a g++ compile including 2,700 Boost headers, in an 800 MiB box
#            where a competitor (a 640 MiB heap, re-reading and streaming
#            its own 1.6 GiB of files) evicts the headers between runs;
#   index    SQLite CREATE INDEX over a table four times its box's memory;
#   idle     200 MiB read, then left idle while the machine's DAMON pageout
#            scheme evicts part of it (2 x DC_IDLE seconds, DC_IDLE 150 by default:
#            at 90 it had taken nothing in some runs);
#   scan     files read twice by a job whose box is smaller than them;
#   server   a MariaDB server (its own cgroup limited to 1 GiB) in a box of
#            1.75 GiB it shares with a 1.4 GiB heap in a cgroup beside it,
#            which evicts the server's table; doctor -p on the server's
#            profile, run from a shell outside both;
#   nobody   the same, doctor run as nobody (the server runs as nobody,
#            its data is nobody's; the system's files are not).
#
# Each case: doctor on the slow job (the diagnosis must name the cause in
# findings[].id, with problem true), the fix it recommends applied (its
# recommendations[].command), and the job timed before and after with
# `hotset time -J` (wall time, I/O wait, bytes read from the disk).
#
#   sudo bench/doctor-cases.sh         (root: cgroups, throttles, evicting)
#   DC_CASES="idle scan"               some of the cases (default: the first four)
#
# Data is kept in $BENCH_DATA/doctor-cases; the diagnoses (JSON) of the
# last run in $BENCH_DATA/doctor-cases/results. Every cgroup is removed at
# exit, and every process started in one stopped first.
. "$(dirname "$0")/lib.sh"

need_root
need_hotset
CASES=${DC_CASES:-compile index idle scan}
IOPS=${DC_IOPS:-150}
BPS=${DC_BPS:-$((20 << 20))}
IDLE=${DC_IDLE:-150}
DATA=$BENCH_DATA/doctor-cases
RES=$DATA/results
mkdir -p "$DATA/tmp" "$RES"
DISK=$(disk_of "$DATA")
: > "$BENCH_DIR/rows"
: > "$BENCH_DIR/checks"

# processes started in the background (keepers, competitors): stopped at exit
BG_PIDS=()
stop_bg() {
	local p
	for p in "${BG_PIDS[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	BG_PIDS=()
	return 0
}
# first of the exit hooks: before the cgroups are removed
BENCH_EXIT_HOOKS=(stop_bg "${BENCH_EXIT_HOOKS[@]}")

# ---- data ------------------------------------------------------------------------


DB_ROWS=${DC_DB_ROWS:-3000000}	# about 400 MiB
make_index_data() {
	[ -f "$DATA/db.done" ] && [ "$(cat "$DATA/db.done")" = "$DB_ROWS" ] && return 0
	say "bench: creating $DATA/events.db ($DB_ROWS rows)"
	rm -f "$DATA/events.db"
	sqlite3 "$DATA/events.db" <<-EOF
	PRAGMA journal_mode = OFF;
	CREATE TABLE events(id INTEGER PRIMARY KEY, user_id INTEGER, ts INTEGER, payload TEXT);
	WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < $DB_ROWS)
	INSERT INTO events SELECT i, abs(random()) % 100000, abs(random()) % 1000000000, hex(randomblob(48)) FROM c;
	EOF
	echo "$DB_ROWS" > "$DATA/db.done"
}

make_files() {	# make_files DIR N: N files of 8 MiB
	local i
	mkdir -p "$1"
	for i in $(seq 1 "$2"); do
		[ -f "$1/f$i" ] || head -c 8M /dev/urandom > "$1/f$i"
	done
	sync "$1"/*
}

# ---- measuring -------------------------------------------------------------------

# timed CASE LABEL BOX CMD...: time CMD in BOX, add a row to the table
timed() {
	local case=$1 label=$2 box=$3; shift 3
	box_exec "$box" "$HOTSET" time -J -q -o "$BENCH_DIR/t.json" -- "$@" > /dev/null ||
		die "$case: '$*' failed"
	python3 - "$BENCH_DIR/t.json" "$case" "$label" >> "$BENCH_DIR/rows" <<-\PY
	import json, sys
	j = json.load(open(sys.argv[1]))
	w, io, rd = j["wall_seconds"], j["io_wait_seconds"], j["disk_read_bytes"]
	print("%s\t%s\t%.1f\t%.1f\t%.0f\t%.1f" % (sys.argv[2], sys.argv[3], w, io or 0,
	      100 * (io or 0) / w if w else 0, (rd or 0) / 1048576))
	PY
	say "  $case: $label: $(tail -n 1 "$BENCH_DIR/rows" | cut -f3- | tr '\t' ' ') (wall s, wait s, wait %, MiB read)"
}

# diagnose CASE BOX CMD...: doctor on CMD in BOX; $RES/CASE.json, the profile $RES/CASE.prof
diagnose() {
	local case=$1 box=$2 rc=0; shift 2
	box_exec "$box" "$HOTSET" doctor -J -q --profile-output "$RES/$case.prof" \
		-o "$RES/$case.html" -- "$@" > "$RES/$case.json" || rc=$?
	[ $rc = 0 ] || die "$case: doctor failed ($rc)"
}

# jq-less look-ups in a diagnosis
dj() { python3 -c "import json, sys; j = json.load(open(sys.argv[1])); print($2)" "$RES/$1.json"; }
problems() { dj "$1" '" ".join(f["id"] for f in j["findings"] if f["problem"])'; }
# rec_command CASE PREFIX: the first recommended command starting with PREFIX
rec_command() {
	dj "$1" "next((r['command'] for r in j['recommendations'] if (r['command'] or '').startswith('$2')), '')"
}

# check CASE ID: is ID among the problems found, and doctor's cause?
check() {
	local p cause ok=MISS
	p=$(problems "$1") cause=$(dj "$1" 'j["cause"]')
	case " $p " in *" $2 "*) [ "$cause" = "$2" ] && ok=PASS ;; esac
	printf '%-8s expected cause %-15s doctor: cause %-15s problems: %s  %s\n' \
		"$1" "$2" "$cause" "$p" "$ok" >> "$BENCH_DIR/checks"
	say "  $1: cause $cause, problems: $p: $ok"
}

resident_share() {	# resident_share PROFILE: the share of its pages in the page cache
	"$HOTSET" status -q -J -p "$1" | python3 -c 'import json, sys
j = json.load(sys.stdin); print("%.3f" % (j["resident_pages"] / max(1, j["pages"])))'
}

# wait_resident PROFILE SECONDS: until (nearly) all of it is cached again
wait_resident() {
	local i
	for ((i = 0; i < $2; i++)); do
		awk -v s="$(resident_share "$1")" 'BEGIN { exit !(s >= 0.99) }' && { echo "$i"; return 0; }
		sleep 1
	done
	echo "$2"
}

# keep_in BOX COMMAND: start the recommended keeper in BOX, in the background
keep_in() {
	local box=$1 cmd
	read -r -a cmd <<< "$2"
	[ "${cmd[0]}" = hotset ] || die "not a hotset command: $2"
	box_prefix "$box"
	"${BOX_PREFIX[@]}" "$HOTSET" "${cmd[1]}" -q --state "$BENCH_DIR/keep.$box.state" "${cmd[@]:2}" \
		2> "$BENCH_DIR/keep.$box.log" &
	BG_PIDS+=($!)
}

# ---- the server: MariaDB in a memory-limited cgroup, a heap beside it ---------------

MYSQL=$DATA/mysql MYRUN=$DATA/mysql-run
MYSOCK=$MYRUN/sock
SRV_ROWS=${DC_SRV_ROWS:-2000000}		# about 480 MiB of InnoDB table
SRV_OWN=${DC_SRV_OWN:-$((1 << 30))}		# the server's own cgroup's limit
SRV_BOX=${DC_SRV_BOX:-$((1792 << 20))}		# its parent's, shared with the heap
SRV_HEAP=${DC_SRV_HEAP:-1400}			# MiB
# the server as nobody, its table read through the page cache (fsync, not
# O_DIRECT), with a buffer pool too small to hold it: the page cache does;
# its reads by preads in its own threads (no native AIO), whose waits the
# box's PSI counts as I/O wait (io_getevents' are not)
MARIADBD=(mariadbd --no-defaults --datadir="$MYSQL" --socket="$MYSOCK" --skip-networking
	--user=nobody --innodb-buffer-pool-size=32M --innodb-flush-method=fsync --innodb-use-native-aio=0
	--log-error="$MYRUN/err" --pid-file="$MYRUN/pid")
SRV_QUERY="SELECT COUNT(*), SUM(LENGTH(payload)) FROM t"

srv_wait() {	# until the server answers (or it died)
	local i
	for ((i = 0; i < 600; i++)); do
		mariadb-admin --socket="$MYSOCK" ping > /dev/null 2>&1 && return 0
		kill -0 "$SRV_PID" 2>/dev/null || die "server: mariadbd ended: $(tail -n 3 "$MYRUN/err")"
		sleep 0.1
	done
	die "server: mariadbd does not answer"
}
srv_stop() {
	[ -n "${SRV_PID:-}" ] || return 0
	mariadb-admin --socket="$MYSOCK" shutdown 2>/dev/null || kill "$SRV_PID" 2>/dev/null || true
	wait "$SRV_PID" 2>/dev/null || true
	SRV_PID=
}
# the box's children go before the box (cgroup_remove_all, mem_rm_all)
srv_children_rm() {
	local c
	[ -n "${MEM_PATH[srv]:-}" ] || return 0
	for c in server heap; do
		[ -d "${MEM_PATH[srv]}/$c" ] && rmdir "${MEM_PATH[srv]}/$c"
	done
	return 0
}
# the server stopped first, the box's children removed after stop_bg (the heap)
BENCH_EXIT_HOOKS=(srv_stop stop_bg srv_children_rm "${BENCH_EXIT_HOOKS[@]:1}")

make_server_data() {
	[ -f "$DATA/mysql.done" ] && [ "$(cat "$DATA/mysql.done")" = "$SRV_ROWS" ] && return 0
	need_pkgs mariadb-server mariadb-client
	say "bench: creating the server's table in $MYSQL ($SRV_ROWS rows)"
	rm -rf "$MYSQL" "$MYRUN"
	mkdir -p "$MYSQL" "$MYRUN"
	chown nobody:nogroup "$MYSQL" "$MYRUN"
	mariadb-install-db --no-defaults --datadir="$MYSQL" --user=nobody --skip-test-db \
		--auth-root-authentication-method=normal > "$BENCH_DIR/install-db.log" 2>&1 ||
		die "server: mariadb-install-db failed"
	"${MARIADBD[@]}" > /dev/null 2>&1 &
	SRV_PID=$!
	srv_wait
	mariadb --socket="$MYSOCK" -e "CREATE DATABASE bench; CREATE TABLE bench.t (id INT PRIMARY KEY,
		payload CHAR(200) NOT NULL) ENGINE=InnoDB"
	mariadb --socket="$MYSOCK" bench -e "INSERT INTO t SELECT seq, REPEAT(MD5(seq), 6)
		FROM seq_1_to_$SRV_ROWS"
	srv_stop
	echo "$SRV_ROWS" > "$DATA/mysql.done"
}

# srv_enter WHO: SRV_ENTER, the prefix that runs a command in cgroup WHO
# (server, heap) of the box srv: its memory cgroup; the server also in the
# box's throttled disk and its cgroup v2 of PSI
srv_enter() {
	SRV_ENTER=(sh -c "$CG_ENTER" sh "${MEM_PATH[srv]}/$1")
	if [ "$1" = server ]; then
		[ "${CG_PATH[srv]}" = "${MEM_PATH[srv]}" ] || SRV_ENTER+=(sh -c "$CG_ENTER" sh "${CG_PATH[srv]}")
		[ -z "${BOX_PSI[srv]:-}" ] || [ "${BOX_PSI[srv]}" = "${MEM_PATH[srv]}" ] ||
			SRV_ENTER+=(sh -c "$CG_ENTER" sh "${BOX_PSI[srv]}")
	fi
}

# the box's I/O wait so far, in microseconds (its PSI "some" total), or empty
srv_psi() {
	local f=${BOX_PSI[srv]:-}/io.pressure
	[ -n "${BOX_PSI[srv]:-}" ] && [ -r "$f" ] || return 0
	awk '$1 == "some" { sub("total=", "", $5); print $5 }' "$f"
}

# srv_query LABEL: the query, timed; a row of the wall time, the server's
# I/O wait (PSI of the box: the server is all that runs there) and the
# bytes it read from the disk
srv_query() {
	local t0 t1 w0 w1 r0 r1 wait pct
	w0=$(srv_psi) r0=$(cg_read_bytes srv) t0=$(now_ns)
	mariadb --socket="$MYSOCK" bench -e "$SRV_QUERY" > /dev/null || die "server: the query failed"
	t1=$(now_ns) w1=$(srv_psi) r1=$(cg_read_bytes srv)
	if [ -n "$w0" ] && [ -n "$w1" ]; then
		wait=$(awk -v a="$w0" -v b="$w1" 'BEGIN { printf "%.1f", (b - a) / 1e6 }')
		pct=$(awk -v a="$w0" -v b="$w1" -v t="$((t1 - t0))" 'BEGIN { printf "%.0f", 100 * (b - a) * 1000 / t }')
	else
		wait=unknown pct=unknown
	fi
	printf '%s\t%s\t%.1f\t%s\t%s\t%.1f\n' "$SRV_CASE" "$1" "$(awk -v t="$((t1 - t0))" 'BEGIN { print t / 1e9 }')" \
		"$wait" "$pct" "$(awk -v b="$((r1 - r0))" 'BEGIN { print b / 1048576 }')" >> "$BENCH_DIR/rows"
	say "  $SRV_CASE: $1: $(tail -n 1 "$BENCH_DIR/rows" | cut -f3- | tr '\t' ' ') (wall s, wait s, wait %, MiB read)"
}

# The box, the server recorded in it and warm, then the heap beside it:
# the server's table evicted, as the case of the issue.
server_setup() {
	SRV_CASE=$1
	make_server_data
	mkdir -p "$RES"
	box_new srv "$SRV_BOX" "$DISK" "$IOPS" "$BPS"
	[ $MEM_MODE = v1 ] || echo +memory > "${MEM_PATH[srv]}/cgroup.subtree_control"
	mkdir "${MEM_PATH[srv]}/server" "${MEM_PATH[srv]}/heap"
	if [ $MEM_MODE = v1 ]; then
		echo "$SRV_OWN" > "${MEM_PATH[srv]}/server/memory.limit_in_bytes"
	else
		echo "$SRV_OWN" > "${MEM_PATH[srv]}/server/memory.max"
	fi
	"$HOTSET" evict -q "$MYSQL" > /dev/null
	say "bench: server: recorded in ${MEM_PATH[srv]}/server, its table read cold"
	srv_enter server
	"${SRV_ENTER[@]}" "$HOTSET" record -q --trace -o "$RES/server.prof" -- "${MARIADBD[@]}" &
	SRV_PID=$!
	srv_wait
	srv_query "first query, cold, recorded"
	srv_stop
	chmod 644 "$RES/server.prof"
	"${SRV_ENTER[@]}" "${MARIADBD[@]}" > /dev/null 2>&1 &
	SRV_PID=$!
	srv_wait
	srv_query "warm"
	say "bench: server: a $SRV_HEAP MiB heap beside it, in ${MEM_PATH[srv]}/heap"
	srv_enter heap
	rm -f "$BENCH_DIR/heap" "$BENCH_DIR/heap.out"
	mkfifo "$BENCH_DIR/heap"
	"${SRV_ENTER[@]}" python3 -c '
import sys
heap = bytearray(b"\1") * (int(sys.argv[1]) << 20)	# touched: charged
print("ready", flush=True)
sys.stdin.read()' "$SRV_HEAP" < "$BENCH_DIR/heap" > "$BENCH_DIR/heap.out" &
	BG_PIDS+=($!)
	exec {HEAP_FD}> "$BENCH_DIR/heap"	# the heap lives until this closes
	until grep -q ready "$BENCH_DIR/heap.out" 2>/dev/null; do
		kill -0 "${BG_PIDS[-1]}" 2>/dev/null || die "server: the heap ended"
		sleep 0.1
	done
	srv_query "with the heap beside it"
}

server_teardown() {
	# the heap ends at the end of its input (killed, python would exit 143)
	exec {HEAP_FD}>&-
	wait "${BG_PIDS[@]}" 2>/dev/null || true
	BG_PIDS=()
	srv_stop
	srv_children_rm
	cg_remove_all; mem_rm srv
}

case_server() {
	local cmd
	server_setup server
	say "bench: server: doctor -p, from a shell outside the box"
	"$HOTSET" doctor -J -q -o "$RES/server.html" -p "$RES/server.prof" > "$RES/server.json" ||
		die "server: doctor failed"
	check server other-activity
	cmd=$(rec_command server "echo ")
	[ -n "$cmd" ] || die "server: doctor recommends no limit"
	say "bench: server: the fix: $cmd"
	sh -c "$cmd"
	srv_query "first query at the raised limit"
	srv_query "re-run, raised limit"
	server_teardown
}

case_nobody() {
	server_setup nobody
	say "bench: nobody: doctor -p, as nobody"
	setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$HOTSET" doctor -J -q -p "$RES/server.prof" \
		> "$RES/nobody.json" || die "nobody: doctor failed"
	check nobody other-activity
	server_teardown
}

# ---- the cases -------------------------------------------------------------------


case_compile() {
	local cmd waited
	compile_data "$DATA"
	compile_cxx "$DATA"
	local cxx=("${COMPILE_CXX[@]}")
	box_new dev $((800 << 20)) "$DISK" "$IOPS" "$BPS"
	# evicted first, so that the box's compile reads them and they are charged to the box
	"$HOTSET" evict -q "$DATA/inc" "$DATA/filler" > /dev/null
	say "bench: compile: cold, then warm"
	timed compile "cold" dev "${cxx[@]}"
	timed compile "warm (just run)" dev "${cxx[@]}"
	say "bench: compile: the competitor, then doctor"
	browser dev "$DATA" 640
	diagnose compile dev "${cxx[@]}"
	check compile other-activity
	browser dev "$DATA" 640
	timed compile "after the competitor" dev "${cxx[@]}"
	cmd=$(rec_command compile "hotset keep")
	[ -n "$cmd" ] || die "compile: doctor recommends no hotset keep"
	say "bench: compile: the fix, in the box: $cmd"
	keep_in dev "$cmd"
	wait_resident "$RES/compile.prof" 60 > /dev/null
	browser dev "$DATA" 640
	waited=$(wait_resident "$RES/compile.prof" 120)
	timed compile "after the competitor, kept (${waited} s after it)" dev "${cxx[@]}"
	stop_bg
	cg_remove_all; mem_rm dev
}

case_index() {
	local job=(sqlite3 -bail "$DATA/events.db"
		"PRAGMA cache_size = -16384; DROP INDEX IF EXISTS ev_user_ts; CREATE INDEX ev_user_ts ON events(user_id, ts);")
	local cmd
	make_index_data
	SQLITE_TMPDIR=$DATA/tmp sqlite3 "$DATA/events.db" "DROP INDEX IF EXISTS ev_user_ts;"
	"$HOTSET" evict -q "$DATA/events.db" > /dev/null
	box_new db $((100 << 20)) "$DISK" "$IOPS" "$BPS"
	export SQLITE_TMPDIR=$DATA/tmp
	say "bench: index: doctor on a cold build in a 100 MiB box"
	diagnose index db "${job[@]}"
	check index memory-limit
	timed index "re-run, 100 MiB limit" db "${job[@]}"
	cmd=$(rec_command index "echo ")
	[ -n "$cmd" ] || die "index: doctor recommends no limit"
	say "bench: index: the fix: $cmd"
	sh -c "$cmd"
	timed index "first run at the raised limit" db "${job[@]}"
	timed index "re-run, raised limit" db "${job[@]}"
	unset SQLITE_TMPDIR
	cg_remove_all; mem_rm db
}

case_idle() {
	local job=(sh -c 'cat "$1"/* > /dev/null' sh "$DATA/idle") cmd
	make_files "$DATA/idle" 25
	box_new idle 0 "$DISK" "$IOPS" "$BPS"
	# DAMON's quota spreads its pageout over all of the machine's memory: the
	# first minute idle takes little, the second more
	box_exec idle "${job[@]}"
	say "bench: idle: read, twice $IDLE s idle, doctor"
	sleep "$IDLE"
	timed idle "read again after $IDLE s idle" idle "${job[@]}"
	sleep $((2 * IDLE))
	diagnose idle idle "${job[@]}"
	check idle damon
	sleep $((2 * IDLE))
	say "bench: idle: $((2 * IDLE)) s idle: $(resident_share "$RES/idle.prof") resident"
	timed idle "read again after $((2 * IDLE)) s idle" idle "${job[@]}"
	cmd=$(rec_command idle "hotset keep")
	[ -n "$cmd" ] || die "idle: doctor recommends no hotset keep"
	say "bench: idle: the fix: $cmd"
	keep_in idle "$cmd"
	sleep $((2 * IDLE))
	say "bench: idle: $((2 * IDLE)) s idle, kept: $(resident_share "$RES/idle.prof") resident"
	timed idle "read again after $((2 * IDLE)) s idle, kept" idle "${job[@]}"
	stop_bg
	cg_remove_all; mem_rm idle
}

case_scan() {
	local job=(sh -c 'cat "$1"/* > /dev/null; cat "$1"/* > /dev/null' sh "$DATA/scan") cmd
	make_files "$DATA/scan" 25
	"$HOTSET" evict -q "$DATA/scan" > /dev/null
	box_new scan $((128 << 20)) "$DISK" "$IOPS" "$BPS"
	say "bench: scan: doctor on a cold scan, twice over 200 MiB, in a 128 MiB box"
	diagnose scan scan "${job[@]}"
	check scan memory-limit
	timed scan "re-run, 128 MiB limit" scan "${job[@]}"
	cmd=$(rec_command scan "echo ")
	[ -n "$cmd" ] || die "scan: doctor recommends no limit"
	say "bench: scan: the fix: $cmd"
	sh -c "$cmd"
	timed scan "first run at the raised limit" scan "${job[@]}"
	timed scan "re-run, raised limit" scan "${job[@]}"
	cg_remove_all; mem_rm scan
}

say "bench: disk $DISK throttled to $IOPS IOPS, $((BPS >> 20)) MiB/s in the boxes"
for c in $CASES; do "case_$c"; done

# ---- the tables --------------------------------------------------------------------

printf '\n== before and after the fix (hotset time -J, or for the server its query: wall, I/O wait, bytes read from the disk)\n'
printf '| case | run | wall s | I/O wait s | I/O wait %% | read MiB |\n|---|---|---|---|---|---|\n'
awk -F'\t' '{ printf "| %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6 }' "$BENCH_DIR/rows"
printf '\n== the diagnoses\n'
cat "$BENCH_DIR/checks"
for c in $CASES; do
	printf '\n-- %s\n' "$c"
	dj "$c" '"\n".join(["! " + f["text"] for f in j["findings"] if f["problem"]] + ["  $ " + (r["command"] or "(" + r["text"] + ")") for r in j["recommendations"][:3]])'
done
