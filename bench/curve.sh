#!/usr/bin/env bash
# bench/curve.sh - the miss-ratio curve: the exact LRU curve (Mattson stack
# distances) of 10^8 accesses to 10^7 distinct pages, Zipf-skewed with a
# scan through all of them (see bench/curve-bench.c), then SHARDS at 1%,
# 0.1% and of fixed size next to it: time, accesses/s, peak memory
# (getrusage ru_maxrss), and the mean absolute error of the miss ratio over
# 101 points from no cache to the working set, cold and re-run, side by
# side with libCacheSim's published figures for SHARDS. Then the time to
# read a trace from a profile, and `hotset curve` on it end to end. Then the
# kernel model (the default), end to end on profiles of such traces beside
# exact LRU on the same: wall and CPU time, peak memory, the share of the
# trace it simulated; and its error against the whole trace simulated at the
# same sizes (`--model kernel --sample 1`).
#
#   bench/curve.sh             (no root needed; nothing on the machine changes)
#   CURVE_ACCESSES=N CURVE_PAGES=N   a smaller trace for a quick run
#                              (default 100000000 and 10000000)
#   CURVE_PROFILE_ACCESSES=N   accesses in the profile (default 10000000)
#   CURVE_KERNEL="A:P ..."     the kernel model's profiles, A accesses to P pages
#                              (default 1000000:100000 100000000:10000000)
#   CURVE_KERNEL_CHECK="A:P ..." its error measured on these (default
#                              1000000:100000 10000000:1000000; the whole trace
#                              at three sizes a point takes minutes)
#
# Goals: exact <= 20 s and <= 1 GiB; SHARDS 1% >= 20x faster than exact
# with an MAE <= 0.005; the kernel model: 10^6 accesses <= 1 s, 10^8
# <= 60 s and <= 1 GiB, within 5x of exact LRU's time (end to end, both).
. "$(dirname "$0")/lib.sh"

need_hotset
ACCESSES=${CURVE_ACCESSES:-100000000}
PAGES=${CURVE_PAGES:-10000000}
PROFILE_ACCESSES=${CURVE_PROFILE_ACCESSES:-10000000}
LIB=$BENCH_ROOT/build/libhotset.a
[ -f "$LIB" ] || die "no $LIB (run make)"
cc -O2 -std=c11 -I"$BENCH_ROOT/src/lib" -D_GNU_SOURCE \
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
s=$(bench_once "$HOTSET" curve -q --model lru "$PROF")
s1=$(bench_once "$HOTSET" curve -q --sample 1% "$PROF")
s2=$(bench_once "$HOTSET" curve -q "$PROF")
printf '\n== a profile of %s accesses to %s pages (%s MiB)\n' "$PROFILE_ACCESSES" "$PAGES" \
	"$(( $(stat -c %s "$PROF") >> 20 ))"
printf '  reading its trace as page ids: %s s (%s accesses/s)\n' \
	"$(field "$BENCH_DIR/read.out" seconds)" "$(field "$BENCH_DIR/read.out" per_second)"
printf '  hotset curve --model lru (exact), end to end: %s s; with --sample 1%%: %s s; the kernel\n  model (the default): %s s\n' "$s" "$s1" "$s2"

printf '\n== goals\n'
check_goal "exact curve, seconds" "$T_EXACT" "<=" 20
check_goal "exact curve, peak MiB" "$(( $(field "$BENCH_DIR/exact.out" maxrss_kib) / 1024 ))" "<=" 1024
check_goal "SHARDS 1% speedup over exact" "$(ratio "$T_EXACT" "$(field "$BENCH_DIR/shards-1%.out" seconds)")" ">=" 20
check_goal "SHARDS 1% MAE (cold)" "$(mae "$BENCH_DIR/exact.points" "$BENCH_DIR/shards-1%.points" 2)" "<=" 0.005
check_goal "SHARDS 1% MAE (re-run)" "$(mae "$BENCH_DIR/exact.points" "$BENCH_DIR/shards-1%.points" 3)" "<=" 0.005

# ---- the kernel model -------------------------------------------------------------
KERNEL=${CURVE_KERNEL:-1000000:100000 100000000:10000000}
KERNEL_CHECK=${CURVE_KERNEL_CHECK:-1000000:100000 10000000:1000000}

# timed OUT CMD...: run CMD, its output to OUT; print "wall cpu peak_mib"
timed() {
	local out=$1; shift
	/usr/bin/time -f '%e %U %S %M' -o "$BENCH_DIR/k.time" "$@" > "$out" 2> "$BENCH_DIR/k.err" ||
		{ tail -n 5 "$BENCH_DIR/k.err" >&2; die "$* failed"; }
	awk '{ printf "%s %.2f %d\n", $1, $2 + $3, $4 / 1024 }' "$BENCH_DIR/k.time"
}
# profile A P: a profile of A accesses to P pages (as above); its path
profile() {
	local f=$BENCH_DIR/k-$1.prof
	[ -f "$f" ] || "$CB" profile "$f" "$1" "$2" || die "cannot write a profile of $1 accesses"
	echo "$f"
}

printf '\n== the kernel model (the default) against exact LRU, end to end on a profile\n'
printf '%12s %10s | %9s %8s %9s | %9s %8s %9s | %7s %8s %6s\n' accesses pages \
	"LRU wall" "CPU" "peak MiB" "kern wall" "CPU" "peak MiB" "x LRU" sample sizes
: > "$BENCH_DIR/k.rows"
for ap in $KERNEL; do
	a=${ap%:*} p=${ap#*:}
	prof=$(profile "$a" "$p")
	read -r lw lc lm < <(timed "$BENCH_DIR/k-lru.json" "$HOTSET" curve -J --model lru "$prof")
	read -r kw kc km < <(timed "$BENCH_DIR/k-kernel.json" "$HOTSET" curve -J "$prof")
	read -r rate sims < <(python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); print(j["sampling"] or 1, j["simulated_sizes"])' "$BENCH_DIR/k-kernel.json")
	printf '%12s %10s | %9s %8s %9s | %9s %8s %9s | %7s %8.3f %6s\n' "$a" "$p" "$lw" "$lc" "$lm" \
		"$kw" "$kc" "$km" "$(ratio "$kw" "$lw")x" "$rate" "$sims"
	echo "$a $lw $kw $km" >> "$BENCH_DIR/k.rows"
	case " $KERNEL_CHECK " in *" $ap "*) ;; *) rm -f "$prof" ;; esac
done

printf '\n== the kernel model'"'"'s sample against the whole trace simulated at its sizes\n'
printf '  (the largest error, at any point, of the bytes read, of the working set; "beside": of\n'
printf '  the values at sizes within 1%% of the working set either side, and of what is read where\n'
printf '  that is more than the working set)\n'
printf '%12s %10s %8s %7s | %12s %12s | %12s %12s\n' accesses pages sample points \
	"re-run" "beside" "cold" "beside"
for ap in $KERNEL_CHECK; do
	a=${ap%:*} p=${ap#*:}
	prof=$(profile "$a" "$p")
	"$HOTSET" curve -J "$prof" > "$BENCH_DIR/fast.json" || die "curve failed"
	sizes=$(python3 -c '
import json, sys
j = json.load(open(sys.argv[1])); d = j["working_set_bytes"] // 100 // 4096 * 4096
s = set()
for x in j["points"]:
    s |= {x["cache_bytes"], max(0, x["cache_bytes"] - d), x["cache_bytes"] + d}
print(",".join(map(str, sorted(s))))' "$BENCH_DIR/fast.json")
	"$HOTSET" curve -J --model kernel --sample 1 --sizes "$sizes" "$prof" > "$BENCH_DIR/whole.json" ||
		die "curve --sample 1 failed"
	python3 - "$a" "$p" "$BENCH_DIR/fast.json" "$BENCH_DIR/whole.json" <<-\PY
	import json, sys
	f, w = (json.load(open(x)) for x in sys.argv[3:5])
	ws = f["working_set_bytes"]; d = ws // 100 // 4096 * 4096
	at = {p["cache_bytes"]: p for p in w["points"]}
	err = {}
	for k in ("rerun", "cold"):
	    key = "miss_bytes_" + k
	    plain = beside = 0
	    for p in f["points"]:
	        x, v = p["cache_bytes"], p[key]
	        near = [at[max(0, x - d)][key], at[x][key], at[x + d][key]]
	        plain = max(plain, abs(v - at[x][key]) / ws)
	        beside = max(beside, max(0, min(near) - v, v - max(near)) / max(ws, at[x][key]))
	    err[k] = (plain, beside)
	print("%12s %10s %8.3f %7d | %11.2f%% %11.2f%% | %11.2f%% %11.2f%%" % (sys.argv[1], sys.argv[2],
	      f["sampling"] or 1, len(f["points"]), 100 * err["rerun"][0], 100 * err["rerun"][1],
	      100 * err["cold"][0], 100 * err["cold"][1]))
	PY
	rm -f "$prof"
done

printf '\n== goals, the kernel model\n'
while read -r a lw kw km; do
	case $a in
	1000000) check_goal "kernel model, 10^6 accesses, seconds" "$kw" "<=" 1 ;;
	100000000) check_goal "kernel model, 10^8 accesses, seconds" "$kw" "<=" 60
		check_goal "kernel model, 10^8 accesses, peak MiB" "$km" "<=" 1024 ;;
	esac
	check_goal "kernel model / exact LRU, time, $a accesses" "$(ratio "$kw" "$lw")" "<=" 5
done < "$BENCH_DIR/k.rows"
