#!/usr/bin/env bash
# bench/record-service.sh - what recording a busy database server costs it:
# its throughput alone, while `hotset record --cgroup` records it (bpf),
# and while `strace -f -p` follows its processes (what one would otherwise
# run to see which files a server reads), in one run.
#
# PostgreSQL 15 (tests/lib-db.sh) runs pgbench's select-only load (RSV_CLIENTS
# clients, default 4, for RSV_SECONDS each, default 10) over a pgbench
# database of scale RSV_SCALE (default 20: 300 MB, in its page cache after
# the first round); MariaDB runs mariadb-slap's point selects likewise, over
# RSV_ROWS rows of tests/lib-db.sh's reports table (default 50,000)
# (RSV_DBS picks: "postgres mariadb" by default). Each round runs the three
# conditions in turn, RSV_ROUNDS rounds (default 3), and the medians of the
# transactions a second are compared: the goal is that hotset costs the
# server at most 5% (a ratio >= 0.95 of the bare run). strace's cost is
# the floor of what tracing each call would cost, printed beside it.
#
#   sudo bench/record-service.sh
#   RSV_SECONDS=30 RSV_ROUNDS=5 RSV_DBS=postgres sudo bench/record-service.sh
. "$(dirname "$0")/lib.sh"

need_root
need_hotset
need_pkgs postgresql mariadb-server strace python3
SECONDS_EACH=${RSV_SECONDS:-10}
ROUNDS=${RSV_ROUNDS:-3}
CLIENTS=${RSV_CLIENTS:-4}
SCALE=${RSV_SCALE:-20}
DBS=${RSV_DBS:-postgres mariadb}
ROWS=${RSV_ROWS:-50000}	# MariaDB's table: 50,000 rows, about 20 MB
DB_ROOT=$(mktemp -d /var/tmp/hotset-bench-rsv.XXXXXX)
chmod 755 "$DB_ROOT"
. "$BENCH_ROOT/tests/lib-db.sh"
rm_root() { rm -rf "$DB_ROOT"; }
bench_on_exit rm_root

# load NAME: the server's transactions a second over SECONDS_EACH, on stdout
load() {
	case $1 in
	postgres)
		pgbench -n -S -c "$CLIENTS" -j "$CLIENTS" -T "$SECONDS_EACH" -h "${DB_SOCK[postgres]}" \
			-U postgres hs 2> /dev/null | sed -n 's/^tps = \([0-9.]*\).*/\1/p' ;;
	mariadb)
		# mariadb-slap runs a number of queries, not a time: its rate is theirs over its
		# time; the key from the clock, constant in a statement (RAND() would scan)
		local n=$((CLIENTS * 4000)) t
		t=$(mariadb-slap --no-defaults --socket="${DB_SOCK[mariadb]}" --create-schema=hs \
			--concurrency="$CLIENTS" --iterations=1 --number-of-queries="$n" \
			--query="SELECT summary FROM reports WHERE id = 1 + MOD(FLOOR(UNIX_TIMESTAMP(NOW(6)) * 1000003), $ROWS)" 2> /dev/null |
			sed -n 's/.*Average number of seconds to run all queries: \([0-9.]*\).*/\1/p')
		awk -v n="$n" -v t="$t" 'BEGIN { if (t > 0) printf "%.1f\n", n / t }' ;;
	esac
}

# under MODE NAME: the load's rate with the server bare, recorded by
# hotset, or followed by strace
under() {
	local mode=$1 name=$2 cg pid rate
	cg=$(db_cgroups "$name" | head -n 1)
	case $mode in
	bare) load "$name" ;;
	hotset)
		"$HOTSET" record -o "$BENCH_DIR/$name.profile" --cgroup "$cg" 2> "$BENCH_DIR/rec.err" &
		pid=$!
		until grep -q "^hotset: recording" "$BENCH_DIR/rec.err"; do
			kill -0 $pid 2> /dev/null || die "hotset record: $(cat "$BENCH_DIR/rec.err")"
			sleep 0.05
		done
		rate=$(load "$name")
		kill -INT $pid && wait $pid
		grep -E "^hotset: recorded [0-9]" "$BENCH_DIR/rec.err" >&2
		echo "$rate" ;;
	strace)
		strace -qq -f -e trace=read,pread64,readv,preadv,openat -o /dev/null \
			$(db_procs "$name" | sed 's/^/-p /') 2> /dev/null &
		pid=$!
		# strace attaches to each process in turn: the load starts once it holds them all
		until ! db_procs "$name" | while read -r p; do
			grep -q "^TracerPid:[[:space:]]*0$" "/proc/$p/status" 2> /dev/null && echo untraced
		done | grep -q untraced; do
			kill -0 $pid 2> /dev/null || die "strace ended"
			sleep 0.05
		done
		rate=$(load "$name")
		kill -INT $pid; wait $pid || :
		echo "$rate" ;;
	esac
}

for name in $DBS; do
	db_check "$name" || { say "skip $name: $DB_WHY"; continue; }
	say "$name: starting the server and loading its data"
	db_start "$name" --pool 512M --mem 0 || die "$name: $DB_WHY"
	case $name in
	postgres) pgbench -q -i -s "$SCALE" -h "${DB_SOCK[postgres]}" -U postgres hs > /dev/null 2>&1 ||
		die "pgbench -i failed" ;;
	mariadb) db_load mariadb "$ROWS" > /dev/null || die "db_load failed" ;;
	esac
	load "$name" > /dev/null	# warm: the data in the server's cache
	for mode in bare hotset strace; do : > "$BENCH_DIR/$name.$mode"; done
	for round in $(seq "$ROUNDS"); do
		for mode in bare hotset strace; do
			rate=$(under $mode "$name")
			say "  $name round $round $mode: $rate tx/s"
			echo "$rate" >> "$BENCH_DIR/$name.$mode"
		done
	done
	db_stop "$name"
	bare=$(median < "$BENCH_DIR/$name.bare")
	rec=$(median < "$BENCH_DIR/$name.hotset")
	st=$(median < "$BENCH_DIR/$name.strace")
	printf '\n== %s under load (%s clients, %s s each, median of %s rounds)\n' "$name" "$CLIENTS" \
		"$SECONDS_EACH" "$ROUNDS"
	printf '%-36s %12s %8s\n' "condition" "tx/s" "ratio"
	printf '%-36s %12s %8s\n' "bare" "$bare" "1.00"
	printf '%-36s %12s %8s\n' "hotset record --cgroup (bpf)" "$rec" "$(ratio "$rec" "$bare")"
	printf '%-36s %12s %8s\n' "strace -f -p (each process)" "$st" "$(ratio "$st" "$bare")"
	check_goal "$name: throughput kept while hotset records it" "$(ratio "$rec" "$bare")" ">=" 0.95
done
