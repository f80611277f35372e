#!/usr/bin/env bash
# bench/curve.sh - the miss-ratio curve: the exact LRU curve (Mattson stack
# distances) of 10^8 accesses to 10^7 distinct pages, Zipf-skewed with a
# scan through all of them (see bench/curve-bench.c), then SHARDS at 1%,
# 0.1% and of fixed size next to it: time, accesses/s, peak memory
# (getrusage ru_maxrss), and the mean absolute error of the miss ratio over
# 101 points from no cache to the working set, cold and re-run, side by
# side with libCacheSim's published figures for SHARDS. Then the time to
# read a trace from a profile, and `hotset curve` on it end to end.
#
#   bench/curve.sh             (no root needed; nothing on the machine changes)
#   CURVE_ACCESSES=N CURVE_PAGES=N   a smaller trace for a quick run
#                              (default 100000000 and 10000000)
#   CURVE_PROFILE_ACCESSES=N   accesses in the profile (default 10000000)
#
# Goals: exact <= 20 s and <= 1 GiB; SHARDS 1% >= 20x faster than exact
# with an MAE <= 0.005.
. "$(dirname "$0")/lib.sh"

need_hotset
ACCESSES=${CURVE_ACCESSES:-100000000}
PAGES=${CURVE_PAGES:-10000000}
PROFILE_ACCESSES=${CURVE_PROFILE_ACCESSES:-10000000}
LIB=$BENCH_ROOT/build/libhotset.a
[ -f "$LIB" ] || die "no $LIB (run make)"
cc -O2 -std=c11 -I"$BENCH_ROOT/include" -I"$BENCH_ROOT/src" -D_GNU_SOURCE \
	-o "$BENCH_DIR/curve-bench" "$BENCH_ROOT/bench/curve-bench.c" "$LIB" -lm -lpthread ||
	die "cannot build curve-bench"
CB=$BENCH_DIR/curve-bench

# field FILE KEY: the value of "KEY value" in FILE
field() { awk -v k="$2" '$1 == k { print $2 }' "$1"; }
# mae A B COL: mean absolute difference of column COL of two points files
mae() { paste "$1" "$2" | awk -v c="$3" '{ d = $c - $(c + 3); s += d < 0 ? -d : d; n++ } END { printf "%.5f", s / n }'; }

say "bench: $ACCESSES accesses to $PAGES pages"
run() {	# run LABEL [RATE|sSIZE]
	"$CB" synth "$ACCESSES" "$PAGES" "${2:-1}" "$BENCH_DIR/$1.points" > "$BENCH_DIR/$1.out" ||
		die "curve-bench $1 failed"
	say "  $1: $(field "$BENCH_DIR/$1.out" seconds) s"
}
run exact
run shards-1% 0.01
run shards-0.1% 0.001
run shards-s100k s100000

printf '\n== the curve of %s accesses to %s pages (one run each)\n' "$ACCESSES" "$PAGES"
printf '%-22s %9s %14s %10s %10s %12s %9s\n' run seconds accesses/s "peak MiB" speedup "MAE cold" "MAE rerun"
T_EXACT=$(field "$BENCH_DIR/exact.out" seconds)
for l in exact shards-1% shards-0.1% shards-s100k; do
	o=$BENCH_DIR/$l.out
	t=$(field "$o" seconds)
	printf '%-22s %9s %14s %10s %10s %12s %9s\n' "$l" "$t" "$(field "$o" per_second)" \
		"$(( $(field "$o" maxrss_kib) / 1024 ))" "$(ratio "$T_EXACT" "$t")x" \
		"$(mae "$BENCH_DIR/exact.points" "$BENCH_DIR/$l.points" 2)" \
		"$(mae "$BENCH_DIR/exact.points" "$BENCH_DIR/$l.points" 3)"
done
printf '%-22s %9s %14s %10s %10s %12s %9s\n' "libCacheSim SHARDS 1%" "" "~60000000" "" "" "0.00083" ""
printf '  (libCacheSim: a 1.3-billion-request trace, its published figures)\n'

# ---- a profile's trace ---------------------------------------------------------
PROF=$BENCH_DIR/trace.prof
"$CB" profile "$PROF" "$PROFILE_ACCESSES" "$PAGES" || die "cannot write the profile"
"$CB" read "$PROF" > "$BENCH_DIR/read.out" || die "cannot read the profile"
s=$(bench_once "$HOTSET" curve -q "$PROF")
s1=$(bench_once "$HOTSET" curve -q --sample 1% "$PROF")
printf '\n== a profile of %s accesses to %s pages (%s MiB)\n' "$PROFILE_ACCESSES" "$PAGES" \
	"$(( $(stat -c %s "$PROF") >> 20 ))"
printf '  reading its trace as page ids: %s s (%s accesses/s)\n' \
	"$(field "$BENCH_DIR/read.out" seconds)" "$(field "$BENCH_DIR/read.out" per_second)"
printf '  hotset curve (exact), end to end: %s s; with --sample 1%%: %s s\n' "$s" "$s1"

printf '\n== goals\n'
check_goal "exact curve, seconds" "$T_EXACT" "<=" 20
check_goal "exact curve, peak MiB" "$(( $(field "$BENCH_DIR/exact.out" maxrss_kib) / 1024 ))" "<=" 1024
check_goal "SHARDS 1% speedup over exact" "$(ratio "$T_EXACT" "$(field "$BENCH_DIR/shards-1%.out" seconds)")" ">=" 20
check_goal "SHARDS 1% MAE (cold)" "$(mae "$BENCH_DIR/exact.points" "$BENCH_DIR/shards-1%.points" 2)" "<=" 0.005
check_goal "SHARDS 1% MAE (re-run)" "$(mae "$BENCH_DIR/exact.points" "$BENCH_DIR/shards-1%.points" 3)" "<=" 0.005
