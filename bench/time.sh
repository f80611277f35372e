#!/usr/bin/env bash
# bench/time.sh - hotset time next to /usr/bin/time (GNU time) and a bare
# run, on a read-heavy job (xargs cat over two thousand small files), cold
# and warm, at the disk's own speed and under a read throttle (150 IOPS,
# 20 MiB/s, the issue's slow disk).
#
# What it shows: the time the job spent blocked on I/O (which /usr/bin/time
# cannot tell), as a share of the wall time, cold versus warm; bytes read
# from the disk next to GNU time's block inputs; the machine-wide
# /proc/pressure/io over the same run, for contrast (it counts everybody's
# stalls); and what hotset time costs over /usr/bin/time on a warm run.
#
#   bench/time.sh            (as root; REPEATS=N runs per cell, default 5;
#                             TIME_BENCH_MB=N size of the data set, default 128)
#
# Cold runs evict the data set's files only (hotset evict, else drop_caches):
# the tools and the job's binaries stay cached, so a cold run's reads are
# the data's. The throttle is a cgroup that bench/lib.sh removes at exit.
. "$(dirname "$0")/lib.sh"

need_root
need_hotset
need_pkgs time python3
GNU_TIME=/usr/bin/time
SIZE_MB=${TIME_BENCH_MB:-128}
DATA=$BENCH_DATA/time.$SIZE_MB
LIST=$DATA.list
JOB=(xargs -a "$LIST" cat)

# ---- the data set: files of 4 KiB to 128 KiB, SIZE_MB in all ---------------
make_data() {
	local i=0 total=0 size want=$((SIZE_MB << 20))
	[ -f "$DATA/.complete" ] && [ -f "$LIST" ] && return 0
	say "bench: writing $SIZE_MB MiB of files under $DATA"
	rm -rf "$DATA" && mkdir -p "$DATA"
	: > "$LIST.tmp"
	while [ $total -lt $want ]; do
		size=$(( ((i * 7919) % 32 + 1) * 4096 ))
		mkdir -p "$DATA/$((i / 100))"
		head -c $size /dev/urandom > "$DATA/$((i / 100))/f$i"
		echo "$DATA/$((i / 100))/f$i" >> "$LIST.tmp"
		total=$((total + size)) i=$((i + 1))
	done
	mv "$LIST.tmp" "$LIST"
	sync
	touch "$DATA/.complete"
	say "bench: $i files"
}

evict_data() {
	"$HOTSET" evict -q "$DATA" > /dev/null 2>&1 || drop_caches
}

# machine-wide io "some" total, microseconds
system_psi() { awk '/^some/ { sub("total=", "", $5); print $5 }' /proc/pressure/io; }

# one_run SCENARIO TOOL: one timed run; appends a row to $ROWS:
#   scenario tool wall_s io_wait_s disk_bytes major_faults system_psi_s cpu_wait_s user+sys_s
ROWS=$BENCH_DIR/rows
one_run() {
	local scen=$1 tool=$2 out=$BENCH_DIR/report t0 t1 p0 p1 wall io=- disk=- majflt=- cpuw=- cpu=-
	local pre=() cmd=() user sys
	[[ $scen == cold* ]] && evict_data
	[[ $scen == *throttled ]] && pre=(cg_exec slow)
	case $tool in
	bare) cmd=("${JOB[@]}") ;;
	gnu-time) cmd=("$GNU_TIME" -f "%e %U %S %F %I" -o "$out" -- "${JOB[@]}") ;;
	hotset-time) cmd=("$HOTSET" time --json -o "$out" -- "${JOB[@]}") ;;
	esac
	rm -f "$out"
	p0=$(system_psi)
	t0=$(now_ns)
	"${pre[@]}" "${cmd[@]}" > /dev/null || die "$tool failed in $scen"
	t1=$(now_ns)
	p1=$(system_psi)
	wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", (b - a) / 1e9 }')
	case $tool in
	gnu-time)
		read -r _ user sys majflt disk < "$out"
		disk=$((disk * 512)) cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }')
		;;
	hotset-time)
		read -r io disk majflt cpuw cpu < <(python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
n = lambda v: "-" if v is None else v
print(n(j["io_wait_seconds"]), n(j["disk_read_bytes"]), j["major_faults"],
      n(j["cpu_wait_seconds"]), j["user_seconds"] + j["sys_seconds"])' "$out")
		;;
	esac
	echo "$scen $tool $wall $io $disk $majflt $(awk -v a="$p0" -v b="$p1" 'BEGIN { printf "%.3f", (b - a) / 1e6 }') $cpuw $cpu" >> "$ROWS"
}

# med SCENARIO TOOL FIELD: the median of a column over the runs ("-" if none)
med() {
	local v
	v=$(awk -v s="$1" -v t="$2" -v f="$3" '$1 == s && $2 == t && $f != "-" { print $f }' "$ROWS")
	if [ -n "$v" ]; then median <<< "$v"; else echo -; fi
}

f2() { awk -v v="$1" 'BEGIN { if (v == "-") print "-"; else printf "%.2f", v }'; }
mib() { awk -v b="$1" 'BEGIN { if (b == "-") print "-"; else printf "%.1f MiB", b / 1048576 }'; }
pct() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b <= 0) print "-"; else printf "%.0f%%", 100 * a / b }'; }

make_data
cg_create slow "$(disk_of "$DATA")" 150 $((20 << 20))
: > "$ROWS"
SCENARIOS=(cold warm cold-throttled warm-throttled)
TOOLS=(bare gnu-time hotset-time)
say "bench: job: ${JOB[*]} ($(wc -l < "$LIST") files, $SIZE_MB MiB); $REPEATS runs per cell"
for scen in "${SCENARIOS[@]}"; do
	# a warm scenario starts from a warm cache
	[[ $scen == warm* ]] && "${JOB[@]}" > /dev/null
	for ((i = 0; i < REPEATS; i++)); do
		# tools take turns, so that the machine's drift hits them alike
		for tool in "${TOOLS[@]}"; do
			one_run "$scen" "$tool"
		done
		say "  $scen: run $((i + 1))/$REPEATS: $(awk -v s="$scen" '$1 == s { w[$2] = $3 } END { for (t in w) printf "%s %.2fs  ", t, w[t] }' "$ROWS")"
	done
done

printf '\n== hotset time vs /usr/bin/time: %s (%s files, %s MiB), median of %s runs\n' \
	"${JOB[*]}" "$(wc -l < "$LIST")" "$SIZE_MB" "$REPEATS"
printf '%-15s %-12s %7s %7s %9s %8s %10s %11s %6s %12s\n' scenario tool "wall s" "cpu s" \
	"io_wait s" "io/wall" "cpu_wait s" "disk read" majflt "system PSI s"
for scen in "${SCENARIOS[@]}"; do
	for tool in "${TOOLS[@]}"; do
		wall=$(med "$scen" "$tool" 3) io=$(med "$scen" "$tool" 4)
		printf '%-15s %-12s %7.2f %7s %9s %8s %10s %11s %6s %12s\n' "$scen" "$tool" "$wall" \
			"$(f2 "$(med "$scen" "$tool" 9)")" "$(f2 "$io")" "$(pct "$io" "$wall")" \
			"$(f2 "$(med "$scen" "$tool" 8)")" "$(mib "$(med "$scen" "$tool" 5)")" \
			"$(med "$scen" "$tool" 6)" "$(f2 "$(med "$scen" "$tool" 7)")"
	done
done

# What wrapping costs by itself: a command that does nothing, many times.
OVERHEAD_RUNS=${OVERHEAD_RUNS:-21}
: > "$BENCH_DIR/fixed"
for ((i = 0; i < OVERHEAD_RUNS; i++)); do
	for tool in "${TOOLS[@]}"; do
		case $tool in
		bare) cmd=(true) ;;
		gnu-time) cmd=("$GNU_TIME" -o /dev/null -- true) ;;
		hotset-time) cmd=("$HOTSET" time -o /dev/null -- true) ;;
		esac
		t0=$(now_ns); "${cmd[@]}"; t1=$(now_ns)
		echo "$tool $(( (t1 - t0) / 1000 ))" >> "$BENCH_DIR/fixed"
	done
done
fixed() { awk -v t="$1" '$1 == t { print $2 / 1000 }' "$BENCH_DIR/fixed" | median; }
printf '
== fixed cost: the tool around "true", median of %s runs (ms, incl. ~1 ms of date(1))
' \
	"$OVERHEAD_RUNS"
for tool in "${TOOLS[@]}"; do printf '%-12s %8.1f ms\n' "$tool" "$(fixed "$tool")"; done

io_share() { awk -v a="$(med "$1" hotset-time 4)" -v b="$(med "$1" hotset-time 3)" 'BEGIN { printf "%.2f", a / b }'; }
printf '\n== ratios\n'
check_goal "cold, throttled: io_wait / wall (hotset time)" "$(io_share cold-throttled)" ">=" 0.50
check_goal "warm, throttled: io_wait / wall (hotset time)" "$(io_share warm-throttled)" "<=" 0.05
check_goal "warm: io_wait / wall (hotset time)" "$(io_share warm)" "<=" 0.05
check_goal "cold: disk read, hotset time / GNU time's inputs" \
	"$(ratio "$(med cold hotset-time 5)" "$(med cold gnu-time 5)")" ">=" 0.95
check_goal "fixed cost, ms: hotset time - /usr/bin/time" \
	"$(awk -v a="$(fixed hotset-time)" -v b="$(fixed gnu-time)" 'BEGIN { printf "%.1f", a - b }')" "<=" 50
check_goal "warm: wall, hotset time / /usr/bin/time (overhead)" \
	"$(ratio "$(med warm hotset-time 3)" "$(med warm gnu-time 3)")" "<=" 1.10
check_goal "warm: wall, hotset time / bare run" \
	"$(ratio "$(med warm hotset-time 3)" "$(med warm bare 3)")" "<=" 1.10
check_goal "warm, throttled: wall, hotset time / /usr/bin/time" \
	"$(ratio "$(med warm-throttled hotset-time 3)" "$(med warm-throttled gnu-time 3)")" "<=" 1.10
