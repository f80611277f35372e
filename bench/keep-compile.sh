#!/usr/bin/env bash
# bench/keep-compile.sh - a compile whose headers a competitor evicts, with
# and without hotset keep. A small VM made of cgroups (a box): an 800 MiB
# memory limit, reads from the data's disk throttled to KC_IOPS and KC_BPS
# (150 IOPS, 20 MiB/s). The job: g++ -fsyntax-only on a file including
# 2,700 Boost headers, from a private copy (so that eviction is under our
# control). The competitor, in the box's memory limit: a 640 MiB heap,
# a hot 64 MiB of its own files re-read three times, then 1.6 GiB streamed.
# Timed side by side, in this order:
#
#   cold      the headers evicted
#   warm      just run
#   after     the competitor, then the compile (no keeper)
#   kept      the same with `hotset keep` (watch, budget = the working set,
#             the compile's recorded profile) running throughout, started
#             in the box (memory and throttled disk: a VM's keeper shares
#             both); the compile starts KC_GAP seconds after the competitor
#             ends (default 0)
#
# For each: wall time, the share of the profile resident when it starts,
# and what it read from the disk; for the keeper, its CPU time, the bytes
# it read (/proc/PID/io), its refaults and back-offs, and its log with the
# seconds since the competitor started.
#   sudo bench/keep-compile.sh
#   KC_RUNS=3          repeats of each of warm, after, kept (medians)
#   KC_WHERE=box|memory|outside   the keeper's cgroups: the box's two, the
#                      memory limit only (its reads not throttled), or none
#   KC_KEEP_ARGS="..." more options for the keeper
#   KC_PSI=box|machine|own   where the keeper reads pressure: box (the
#                      default) as it chooses, here its cgroup v2's
#                      io.pressure, that of the box (where the box has a
#                      cgroup v2: bench/lib.sh), and the machine's memory;
#                      machine: /proc/pressure alone (HOTSET_PSI_DIR, as a
#                      keeper without a cgroup shared with the job); own:
#                      files of the bench's own, always calm, what it does
#                      when it never backs off; cgroup: the machine's
#                      memory, and io from the box's cgroup v2 named with
#                      --io-cgroup (a keeper in a cgroup of its own told
#                      where its jobs run)
#   KC_LOAD=1          an unrelated disk load outside the box throughout:
#                      O_DIRECT reads of 4 KiB from a file of the bench's
#                      own, at the idle I/O priority, throttled (its own
#                      cgroup) to KC_LOAD_IOPS (100): its tasks stall on
#                      I/O all the time, as other jobs' throttled reads do
#                      on a shared machine (the machine's io PSI near 100%)
. "$(dirname "$0")/lib.sh"
need_root
need_hotset
[ -d /usr/include/boost ] || need_pkgs libboost-dev

IOPS=${KC_IOPS:-150}
BPS=${KC_BPS:-$((20 << 20))}
RUNS=${KC_RUNS:-3}
GAP=${KC_GAP:-0}
WHERE=${KC_WHERE:-box}
DATA=$BENCH_DATA/keep-compile
mkdir -p "$DATA"
DISK=$(disk_of "$DATA")
tick=$(getconf CLK_TCK)
stamp() { date +%s.%N; }
# the io pressure now (some avg10): the machine's, and the box's where it has its own
io_now() {
	printf 'io some avg10: machine %s' "$(awk '$1 == "some" { sub("avg10=", "", $2); print $2 }' /proc/pressure/io)"
	[ -z "${BOX_PSI[kc]:-}" ] ||
		printf ', box %s' "$(awk '$1 == "some" { sub("avg10=", "", $2); print $2 }' "${BOX_PSI[kc]}/io.pressure")"
}

BG_PIDS=()
stop_bg() {
	local p
	# (a process killed exits 143: no failure of the bench's)
	for p in "${BG_PIDS[@]}"; do kill "$p" 2>/dev/null && { wait "$p" 2>/dev/null || :; }; done
	BG_PIDS=()
	return 0
}
# before the cgroups are removed
BENCH_EXIT_HOOKS=(stop_bg "${BENCH_EXIT_HOOKS[@]}")

# ---- data ----------------------------------------------------------------------
compile_data "$DATA"
compile_cxx "$DATA"
CXX=("${COMPILE_CXX[@]}")

# ---- measuring -----------------------------------------------------------------
box_new kc $((800 << 20)) "$DISK" "$IOPS" "$BPS"
# the box's own processes (a VM's init): the keeper shares its cgroup with them
box_prefix kc
"${BOX_PREFIX[@]}" sleep infinity &
BG_PIDS+=($!)

if [ "${KC_LOAD:-0}" = 1 ]; then
	[ -f "$DATA/load" ] || head -c 256M /dev/urandom > "$DATA/load"
	cg_create load "$DISK" "${KC_LOAD_IOPS:-100}" $((8 << 20))
	# short reads, so that one left running when the loop is stopped ends soon
	# not cg_exec: a function run with & is a subshell of its own, whose
	# pid is not the loop's, and killing it would leave the loop running
	sh -c "$CG_ENTER" sh "${CG_PATH[load]}" ionice -c 3 sh -c 'while :; do dd if="$0" of=/dev/null bs=4k count=200 \
		skip=$(( $(od -An -N2 -tu2 /dev/urandom) % 65000 )) iflag=direct status=none; done' \
		"$DATA/load" &
	BG_PIDS+=($!)
	sleep 5
	say "bench: an unrelated load outside the box; the machine's io: $(head -n 1 /proc/pressure/io)"
fi


share() {	# the share of the profile's pages resident now
	"$HOTSET" status -q -J -p "$DATA/compile.prof" | python3 -c 'import json, sys
j = json.load(sys.stdin); print("%.3f" % (j["resident_pages"] / max(1, j["pages"])))'
}

# timed LABEL: the compile in the box; a row: label, wall, resident share
# at its start, I/O wait, MiB and I/Os read from the disk
: > "$BENCH_DIR/rows"
timed() {
	local s r0 r1
	s=$(share)
	r0=$(cg_reads kc)
	box_exec kc "$HOTSET" time -J -q -o "$BENCH_DIR/t.json" -- "${CXX[@]}" > /dev/null ||
		die "the compile failed"
	r1=$(cg_reads kc)
	python3 - "$BENCH_DIR/t.json" "$1" "$s" $((r1 - r0)) >> "$BENCH_DIR/rows" <<-\PY
	import json, sys
	j = json.load(open(sys.argv[1]))
	print("%s\t%.2f\t%s\t%.1f\t%.1f\t%s" % (sys.argv[2], j["wall_seconds"], sys.argv[3],
	      j["io_wait_seconds"] or 0, (j["disk_read_bytes"] or 0) / 1048576, sys.argv[4]))
	PY
	say "  $(tail -n 1 "$BENCH_DIR/rows" | tr '\t' ' ') (wall s, resident, I/O wait s, MiB read, I/Os)"
}

"$HOTSET" evict -q "$DATA/inc" "$DATA/filler" > /dev/null
say "bench: disk $DISK throttled to $IOPS IOPS, $((BPS >> 20)) MiB/s; the compile cold, recorded"
# the working set: the compile's own profile (headers, and the compiler's files)
box_exec kc "$HOTSET" record -q -o "$DATA/compile.prof" -- "${CXX[@]}" > /dev/null
budget=$("$HOTSET" status -q -J -p "$DATA/compile.prof" | python3 -c 'import json, sys
j = json.load(sys.stdin); print(j["pages"] * j.get("page_size", 4096))')
say "bench: working set $((budget >> 20)) MiB ($budget bytes)"
"$HOTSET" evict -q "$DATA/inc" > /dev/null
timed cold
for ((r = 0; r < RUNS; r++)); do timed warm; done
for ((r = 0; r < RUNS; r++)); do
	browser kc "$DATA" 640
	timed after
done

# the keeper, throughout; the compile once first, so that it starts warm
timed rewarm
case $WHERE in
box) box_prefix kc; KEEP_PREFIX=("${BOX_PREFIX[@]}") ;;
memory) KEEP_PREFIX=(sh -c "$CG_ENTER" sh "${MEM_PATH[kc]}") ;;
outside) KEEP_PREFIX=() ;;
*) die "KC_WHERE: box, memory or outside, not $WHERE" ;;
esac
read -ra extra <<< "${KC_KEEP_ARGS:-}"
rm -f "$BENCH_DIR/keep.state"
psi=()
case ${KC_PSI:-box} in
own)
	mkdir -p "$BENCH_DIR/psi"
	printf "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n" > "$BENCH_DIR/psi/memory"
	cp "$BENCH_DIR/psi/memory" "$BENCH_DIR/psi/io"
	psi=(env HOTSET_PSI_DIR="$BENCH_DIR/psi") ;;
machine) psi=(env HOTSET_PSI_DIR=/proc/pressure) ;;
cgroup)
	[ -n "${BOX_PSI[kc]:-}" ] || die "KC_PSI=cgroup: the box has no cgroup v2 here"
	psi=(env HOTSET_PSI_DIR=/proc/pressure)
	extra+=(--io-cgroup "${BOX_PSI[kc]}") ;;
box) ;;
*) die "KC_PSI: box, machine, own or cgroup, not $KC_PSI" ;;
esac
t_start=$(stamp)
"${KEEP_PREFIX[@]}" "${psi[@]}" "$HOTSET" keep --budget "$budget" --state "$BENCH_DIR/keep.state" \
	"${extra[@]}" "$DATA/compile.prof" 2> >(while IFS= read -r l; do
		printf '%s %s\n' "$(stamp)" "$l"; done > "$BENCH_DIR/keep.log") &
kpid=$!
BG_PIDS+=($kpid)
for ((i = 0; i < 200; i++)); do grep -q ' started' "$BENCH_DIR/keep.log" 2>/dev/null && break; sleep 0.1; done
sleep 2
c0=$(awk '{ print $14 + $15 }' "/proc/$kpid/stat")
b0=$(awk '$1 == "read_bytes:" { print $2 }' "/proc/$kpid/io")
: > "$BENCH_DIR/marks"
for ((r = 0; r < RUNS; r++)); do
	echo "$(stamp) competitor $r ($(io_now))" >> "$BENCH_DIR/marks"
	browser kc "$DATA" 640
	echo "$(stamp) competitor $r ends ($(io_now))" >> "$BENCH_DIR/marks"
	sleep "$GAP"
	echo "$(stamp) compile $r, resident $(share) ($(io_now))" >> "$BENCH_DIR/marks"
	timed kept
done
if ! kill -0 "$kpid" 2>/dev/null; then
	rc=0
	wait "$kpid" || rc=$?
	cp "$BENCH_DIR/keep.log" "$BENCH_DIR/marks" "$DATA/" 2>/dev/null || :
	say "bench: the keeper exited (status $rc) before the end; its log:"
	cat "$BENCH_DIR/keep.log" >&2
	exit 1
fi
c1=$(awk '{ print $14 + $15 }' "/proc/$kpid/stat")
b1=$(awk '$1 == "read_bytes:" { print $2 }' "/proc/$kpid/io")
t_end=$(stamp)
"$HOTSET" keep --status --state "$BENCH_DIR/keep.state" -J > "$BENCH_DIR/keep.json"
stop_bg

# ---- the tables ------------------------------------------------------------------
warm=$(awk -F'\t' '$1 == "warm" { print $2 }' "$BENCH_DIR/rows" | median)
printf '\n| compile | wall (median) | x warm | resident at start | I/O wait | read from disk |\n|---|---:|---:|---:|---:|---:|\n'
for l in cold warm after kept; do
	awk -F'\t' -v l="$l" '$1 == l' "$BENCH_DIR/rows" > "$BENCH_DIR/r.$l"
	w=$(cut -f2 "$BENCH_DIR/r.$l" | median)
	printf '| %s | %.1f s | %s | %s | %s s | %s MiB in %s I/Os |\n' "$l" "$w" "$(ratio "$w" "$warm")" \
		"$(cut -f3 "$BENCH_DIR/r.$l" | median)" "$(cut -f4 "$BENCH_DIR/r.$l" | median)" \
		"$(cut -f5 "$BENCH_DIR/r.$l" | median)" "$(cut -f6 "$BENCH_DIR/r.$l" | median)"
done
printf '\nruns (label, wall s, resident, I/O wait s, MiB, I/Os):\n'
tr '\t' ' ' < "$BENCH_DIR/rows"
python3 - "$BENCH_DIR/keep.json" "$(( c1 - c0 ))" "$tick" "$(( b1 - b0 ))" "$t_start" "$t_end" <<-\PY
import json, sys
j = json.load(open(sys.argv[1]))
cpu = int(sys.argv[2]) / int(sys.argv[3])
wall = float(sys.argv[6]) - float(sys.argv[5])
print("\nkeeper: %.2f s CPU over %.0f s (%.2f%% of a CPU), %.1f MiB read from the disk;"
      " %d refault pages, %d read back in %d re-warms, %d back-offs, pressure by %s (io from %s),"
      " evictions by %s"
      % (cpu, wall, 100 * cpu / wall, int(sys.argv[4]) / 1048576,
         j["refault_pages"], j["rewarmed_pages"], j["rewarms"], j["backoffs"], j["pressure"],
         j["io_pressure_file"], j["evictions"]))
PY
# kept beside the data, for a look after the run
cp "$BENCH_DIR/keep.log" "$BENCH_DIR/marks" "$BENCH_DIR/rows" "$DATA/" 2>/dev/null || :
printf '\nthe keeper (%s), seconds from its start:\n' "$WHERE"
sort -n "$BENCH_DIR/keep.log" "$BENCH_DIR/marks" | awk -v t0="$t_start" '{ $1 = sprintf("%7.1f", $1 - t0); print }' |
	head -n 100
