#!/usr/bin/env bash
# bench/keep-idle.sh - a working set left idle, with and without hotset keep.
# Where a proactive reclaimer (a DAMON pageout scheme, say) evicts page
# cache idle for a while, a warmed profile left alone loses its pages. Three
# copies of one file set (IDLE_FILES files, IDLE_MIB MiB in all, 1024) are read
# in, then left idle for IDLE_SECONDS (default 600): one alone, one kept by
# `hotset keep` (watch), one by `hotset keep --mode lock`. Every
# IDLE_SAMPLE seconds (default 30) the share of each copy resident is
# sampled (hotset status -J); at the end, the keepers' counters (refaults,
# pages read back, back-offs) and CPU time.
#   sudo bench/keep-idle.sh
# The keepers watch the machine's real pressure (/proc/pressure): backing
# off is part of what is measured. Root: lock mode beyond RLIMIT_MEMLOCK.
. "$(dirname "$0")/lib.sh"
need_root
need_hotset

DURATION=${IDLE_SECONDS:-600}
SAMPLE=${IDLE_SAMPLE:-30}
NFILES=${IDLE_FILES:-256}
# 1 GiB a copy: a set of 64 MiB shares DAMON's regions (3 MiB at the least,
# over 25 GiB of physical memory) with pages in use, and lost 0.3% in ten
# minutes; a copy of its own regions loses its pages (docs/benchmarks.md)
MIB=${IDLE_MIB:-1024}
DATA=$BENCH_DATA/keep-idle
tick=$(getconf CLK_TCK)
copies=(alone watch lock)

KPIDS=()
stop_keepers() {
	local p
	for p in "${KPIDS[@]}"; do kill "$p" 2>/dev/null && { wait "$p" 2>/dev/null || :; }; done
	KPIDS=()
	return 0
}
bench_on_exit stop_keepers

# the file set, once: NFILES files of random data, MIB MiB in all
per=$(( (MIB << 20) / NFILES ))
for c in "${copies[@]}"; do
	d=$DATA/$c
	if [ "$(cat "$d/.complete" 2>/dev/null)" != "$NFILES x $per" ]; then
		say "bench: making $NFILES files of $per bytes in $d"
		rm -rf "$d" && mkdir -p "$d"
		for ((i = 0; i < NFILES; i++)); do head -c "$per" /dev/urandom > "$d/f$i"; done
		echo "$NFILES x $per" > "$d/.complete"
	fi
	# read in, then a profile of what is resident: all of it
	cat "$d"/f* > /dev/null
	"$HOTSET" snapshot -q -o "$BENCH_DIR/$c.prof" "$d" > /dev/null
done

share() {	# share COPY: the share of its profile's pages resident now
	"$HOTSET" status -q -J -p "$BENCH_DIR/$1.prof" | python3 -c 'import json, sys
j = json.load(sys.stdin); print("%.3f" % (j["resident_pages"] / max(1, j["pages"])))'
}
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

for c in watch lock; do
	"$HOTSET" keep --mode "$c" --state "$BENCH_DIR/$c.state" "$BENCH_DIR/$c.prof" \
		2> "$BENCH_DIR/$c.log" &
	KPIDS+=($!)
done
for c in watch lock; do
	for ((i = 0; i < 200; i++)); do grep -q '^started' "$BENCH_DIR/$c.log" && break; sleep 0.1; done
	grep -q '^started' "$BENCH_DIR/$c.log" || { cat "$BENCH_DIR/$c.log" >&2; die "the $c keeper did not start"; }
done
say "bench: $NFILES files, $MIB MiB, three copies; idle for $DURATION s, sampled every $SAMPLE s"

printf '| idle | alone | keep (watch) | keep (lock) |\n|---:|---:|---:|---:|\n'
t0=$(date +%s)
for ((t = 0; t <= DURATION; t += SAMPLE)); do
	sleep $(( t0 + t - $(date +%s) > 0 ? t0 + t - $(date +%s) : 0 ))
	printf '| %d s | %s | %s | %s |\n' "$t" "$(share alone)" "$(share watch)" "$(share lock)"
done

printf '\n| keeper | refaults (pages) | read back (pages) | back-offs | locked | CPU |\n|---|---:|---:|---:|---:|---:|\n'
i=0
for c in watch lock; do
	"$HOTSET" keep --status --state "$BENCH_DIR/$c.state" -J > "$BENCH_DIR/$c.json"
	cpu=$(awk -v t="$(cpu_ticks "${KPIDS[$i]}")" -v hz="$tick" 'BEGIN { printf "%.2f s", t / hz }')
	python3 - "$BENCH_DIR/$c.json" "$c" "$cpu" <<-\PY
	import json, sys
	j = json.load(open(sys.argv[1]))
	print("| %s | %d | %d | %d | %.1f MiB | %s |" % (sys.argv[2], j["refault_pages"],
	      j["rewarmed_pages"], j["backoffs"], j["locked_bytes"] / 1048576, sys.argv[3]))
	PY
	i=$((i + 1))
done
for c in watch lock; do
	grep -E '^(backing off|resuming)' "$BENCH_DIR/$c.log" | sed "s/^/$c: /" | head -n 20 >&2 || true
done
