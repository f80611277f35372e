#!/usr/bin/env bash
# bench/keep.sh - what watching costs: hotset keep's CPU time while it
# watches profiles of 1,000, 20,000 and 200,000 one-page files that stay
# resident (KEEP_SECONDS each, default 60, from /proc/PID/stat), as CPU per
# hour and % of one CPU; then its reaction time: 10 files spread over the
# set are evicted, and the time until all are resident again is taken.
# Each count twice: finding evictions by the checks alone
# (HOTSET_KEEP_NO_BPF, as without root), then with the kernel's events
# (eBPF), in that order.
# The keeper runs with its defaults (--interval 10s) but reads pressure
# from files of its own (HOTSET_PSI_DIR), so that the load of this shared
# machine cannot make it back off in the middle of a measurement.
# Last, the cost of the tracepoint: a 1 GiB file (not kept) read in and
# evicted (262,144 page deletions), REPEATS times, without a keeper and
# with one watching 1,000 files through eBPF.
#   bench/keep.sh [COUNTS...]      (default 1000 20000 200000)
#   KEEP_MODES="checks events"     the modes to measure
. "$(dirname "$0")/lib.sh"
need_root
need_hotset

SECONDS_EACH=${KEEP_SECONDS:-60}
MKFILES=$BENCH_ROOT/build/tests/helpers/mkfiles
PAGETOOL=$BENCH_ROOT/build/tests/helpers/pagetool
[ -x "$MKFILES" ] && [ -x "$PAGETOOL" ] || die "run make tests first (mkfiles, pagetool)"
counts=("$@")
[ ${#counts[@]} -gt 0 ] || counts=(1000 20000 200000)
tick=$(getconf CLK_TCK)
kpid=
stop_keeper() { [ -z "$kpid" ] || { kill "$kpid" 2>/dev/null; wait "$kpid" 2>/dev/null; kpid=; }; }
bench_on_exit stop_keeper

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
now() { date +%s.%N; }

mkdir -p "$BENCH_DIR/psi"
printf "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n" > "$BENCH_DIR/psi/memory"
cp "$BENCH_DIR/psi/memory" "$BENCH_DIR/psi/io"

read -ra modes <<< "${KEEP_MODES:-checks events}"
printf '| files | evictions | check CPU over %s s | CPU per hour | %% of one CPU | round | evicted back in |\n' "$SECONDS_EACH"
printf '|------:|------|------:|------:|------:|------:|------:|\n'
for n in "${counts[@]}"; do
for mode in "${modes[@]}"; do
	perdir=1000; ndirs=$(( (n + perdir - 1) / perdir )); [ "$n" -lt "$perdir" ] && perdir=$n ndirs=1
	dir=$BENCH_DATA/keep-$n prof=$BENCH_DATA/keep-$n.profile
	if [ ! -f "$prof" ]; then
		say "bench: making $n files in $dir"
		"$MKFILES" make "$dir" "$ndirs" "$perdir" 1 "$prof"
	fi
	"$HOTSET" warm -q -p "$prof" > /dev/null
	rm -f "$BENCH_DIR/keep-$n.log"
	if [ "$mode" = checks ]; then nobpf=1; else nobpf=; fi
	HOTSET_KEEP_NO_BPF=$nobpf HOTSET_PSI_DIR=$BENCH_DIR/psi \
		"$HOTSET" keep --state "$BENCH_DIR/k$n.state" "$prof" 2> "$BENCH_DIR/keep-$n.log" &
	kpid=$!
	until grep -q "^started" "$BENCH_DIR/keep-$n.log" 2> /dev/null; do sleep 0.1; done
	sleep 2	# past the start (loading the profile, the first residency of every file)
	c0=$(cpu_ticks $kpid) t0=$(now)
	sleep "$SECONDS_EACH"
	c1=$(cpu_ticks $kpid) t1=$(now)
	# 10 files spread over the set, evicted; back when all are resident
	victims=()
	for i in $(seq 0 9); do
		k=$(( i * n / 10 ))
		victims+=("$(printf '%s/d%04d/f%07d' "$dir" $((k / perdir)) "$k")")
	done
	"$PAGETOOL" evict "${victims[@]}"
	e0=$(now)
	for i in $(seq 6000); do
		ok=1
		for v in "${victims[@]}"; do [ "$("$PAGETOOL" resident "$v")" = 0 ] || { ok=0; break; }; done
		[ $ok = 1 ] && break
		sleep 0.05
	done
	e1=$(now)
	read -r round got < <("$HOTSET" keep --status --state "$BENCH_DIR/k$n.state" -J | python3 -c \
		'import json,sys; j = json.load(sys.stdin); print("%.1f_s" % j["round_seconds"], j.get("evictions", "checks"))')
	round=${round/_/ }
	[ "$got" = "$mode" ] || say "bench: the keeper found evictions by $got, not $mode"
	stop_keeper
	awk -v n="$n" -v c0="$c0" -v c1="$c1" -v t0="$t0" -v t1="$t1" -v hz="$tick" \
	    -v e0="$e0" -v e1="$e1" -v ok="$ok" -v round="$round" -v mode="$got" 'BEGIN {
		cpu = (c1 - c0) / hz; wall = t1 - t0
		printf "| %d | %s | %.2f s | %.1f s | %.3f%% | %s | %s |\n", n, mode, cpu,
			cpu / wall * 3600, cpu / wall * 100, round,
			ok ? sprintf("%.1f s", e1 - e0) : "not back in 5 min"
	}'
done
done

# ---- the tracepoint's cost ------------------------------------------------
big=$BENCH_DATA/keep-big
[ -f "$big" ] || head -c $((1 << 30)) /dev/urandom > "$big"
prof=$BENCH_DATA/keep-1000.profile
[ -f "$prof" ] || "$MKFILES" make "$BENCH_DATA/keep-1000" 1 1000 1 "$prof"
# cycle: read the file in (from disk), then evict it: the wall time of each
cycle() {
	local t0 t1 t2
	t0=$(now); cat "$big" > /dev/null; t1=$(now); "$PAGETOOL" evict "$big"; t2=$(now)
	awk -v a="$t0" -v b="$t1" -v c="$t2" 'BEGIN { printf "%.4f %.4f\n", b - a, c - b }'
}
printf '\n| 1 GiB read, then evicted | read (median) | evict (median) |\n|------|------:|------:|\n'
for with in none events; do
	if [ $with = events ]; then
		"$HOTSET" warm -q -p "$prof" > /dev/null
		rm -f "$BENCH_DIR/keep-tp.log"
		HOTSET_PSI_DIR=$BENCH_DIR/psi "$HOTSET" keep --state "$BENCH_DIR/ktp.state" "$prof" \
			2> "$BENCH_DIR/keep-tp.log" &
		kpid=$!
		until grep -q "^started" "$BENCH_DIR/keep-tp.log" 2> /dev/null; do sleep 0.1; done
	fi
	"$PAGETOOL" evict "$big"
	for ((r = 0; r < REPEATS; r++)); do cycle; done > "$BENCH_DIR/tp-$with"
	stop_keeper
	printf '| %s | %.3f s | %.4f s |\n' "$([ $with = none ] && echo "no keeper" || echo "a keeper's eBPF attached")" \
		"$(cut -d' ' -f1 "$BENCH_DIR/tp-$with" | median)" "$(cut -d' ' -f2 "$BENCH_DIR/tp-$with" | median)"
done
