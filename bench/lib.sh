# bench/lib.sh - what the benchmarks share: the peer tools, timing with
# repeats and medians, cold caches, a throttled cgroup, and result tables.
#
# A bench script sources this file after setting HOTSET (default: build/hotset
# of this checkout). Everything that changes the machine (the page cache,
# cgroups) is undone by the EXIT trap, which bench_cleanup installs; scripts
# that need their own cleanup add it with bench_on_exit.
#
# Timing: bench_run LABEL CMD... runs a command REPEATS times (env REPEATS,
# default 5) and records the median wall time; on this shared machine other
# people's jobs come and go, so medians, never single runs. A command's
# stdout is discarded, its stderr kept in $BENCH_DIR/LABEL.err.

set -euo pipefail

BENCH_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
HOTSET=${HOTSET:-$BENCH_ROOT/build/hotset}
BENCH_DATA=${BENCH_DATA:-/var/tmp/hotset-bench}	# reused between runs
REPEATS=${REPEATS:-5}
BENCH_DIR=$(mktemp -d "${TMPDIR:-/tmp}/hotset-bench.XXXXXX")

declare -A BENCH_SECONDS=()	# label -> median seconds
declare -A BENCH_EXTRA=()	# label -> free text (MB/s, device reads...)
declare -A BENCH_CPU=()		# label -> median CPU seconds (bench_run)
BENCH_LABELS=()
BENCH_EXIT_HOOKS=()

say() { printf '%s\n' "$*" >&2; }
die() { say "bench: $*"; exit 1; }

bench_on_exit() { BENCH_EXIT_HOOKS+=("$1"); }

bench_cleanup() {
	local hook
	for hook in "${BENCH_EXIT_HOOKS[@]}"; do "$hook" || true; done
	rm -rf "$BENCH_DIR"
}
trap bench_cleanup EXIT
trap 'exit 130' INT TERM

need_root() { [ "$(id -u)" -eq 0 ] || die "run as root (drop_caches, cgroups)"; }

need_hotset() {
	[ -x "$HOTSET" ] || die "no hotset binary at $HOTSET (run make)"
}

# need_pkgs PKG...: install the Debian packages that are missing (the peers
# this bench compares with), waiting for another apt's lock rather than failing
. "$BENCH_ROOT/scripts/apt.sh"

# ---- caches ------------------------------------------------------------------

# Empty the page cache (and dentries/inodes): the cold start of a warm run.
drop_caches() {
	sync
	echo 3 > /proc/sys/vm/drop_caches
}

# ---- data sets ---------------------------------------------------------------

count_files() { find "$1" -type f | wc -l; }

# make_header_tree DIR N: a tree of at least N files, unless DIR holds one
# already: copies of /usr/include (real header trees: many small files in
# deep directories, some symlinks), topped up with generated files if there
# are not enough.
make_header_tree() {
	local dir=$1 want=$2 spec="files>=$2" n=0 i=0
	if [ -f "$dir/.complete" ] && [ "$(cat "$dir/.complete")" = "$spec" ]; then
		return 0
	fi
	say "bench: creating $dir (at least $want files)"
	rm -rf "$dir"
	mkdir -p "$dir"
	if [ -d /usr/include ]; then
		while [ "$n" -lt "$want" ] && [ $i -lt 50 ]; do
			cp -a /usr/include "$dir/include.$i"
			i=$((i + 1))
			n=$(count_files "$dir")
		done
	fi
	if [ "$n" -lt "$want" ]; then
		python3 - "$dir/generated" $((want - n)) <<'EOF'
import os, random, sys
root, count = sys.argv[1], int(sys.argv[2])
rnd = random.Random(7)
for i in range(count):
    d = os.path.join(root, "d%03d" % (i // 1000), "e%02d" % (i // 100 % 10))
    if i % 100 == 0:
        os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "f%06d.h" % i), "wb") as f:
        f.write(b"x" * int(2 ** rnd.uniform(8, 15)))
EOF
	fi
	echo "$spec" > "$dir/.complete"
}

# ---- timing ------------------------------------------------------------------

now_ns() { date +%s%N; }

# Seconds since the epoch, as a decimal, without forking when bash has
# $EPOCHREALTIME (5.0+): a command substitution or a date(1) costs
# milliseconds on a busy machine, which short runs would feel.
now_s() {
	if [ -n "${EPOCHREALTIME:-}" ]; then
		NOW=${EPOCHREALTIME/,/.}
	else
		NOW=$(date +%s.%N)
	fi
}

# median of numbers on stdin
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# bench_once CMD...: run once, print wall seconds; fail loudly if CMD fails
# with a status other than 0 or 1 (1 = some files skipped, still a result).
# The CPU time (user + system, children included) goes to $BENCH_DIR/last.cpu:
# on a machine shared with other jobs it tells work done from time waited.
bench_once() {
	local t0 t1 rc=0 err=$BENCH_DIR/last.err timed=0
	# /usr/bin/time runs programs, not shell functions (decided before the clock starts)
	[ -x /usr/bin/time ] && [ "$(type -t "$1")" = file ] && timed=1
	now_s; t0=$NOW
	if [ $timed = 1 ]; then
		/usr/bin/time -f '%U %S' -o "$BENCH_DIR/last.time" "$@" > /dev/null 2> "$err" || rc=$?
	else
		"$@" > /dev/null 2> "$err" || rc=$?
	fi
	now_s; t1=$NOW
	if [ $rc -gt 1 ]; then
		say "bench: '$*' failed with status $rc:"; tail -n 5 "$err" >&2
		return 1
	fi
	rm -f "$BENCH_DIR/last.cpu"
	[ -f "$BENCH_DIR/last.time" ] &&
		awk '/^[0-9.]+ [0-9.]+$/ { printf "%.2f\n", $1 + $2 }' "$BENCH_DIR/last.time" \
			> "$BENCH_DIR/last.cpu"
	rm -f "$BENCH_DIR/last.time"
	[ -s "$BENCH_DIR/last.cpu" ] || echo 0 > "$BENCH_DIR/last.cpu"
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f\n", b - a }'
}

# bench_record LABEL SECONDS [EXTRA]: store a result for the table.
bench_record() {
	[ -n "${BENCH_SECONDS[$1]+x}" ] || BENCH_LABELS+=("$1")
	BENCH_SECONDS[$1]=$2
	BENCH_EXTRA[$1]=${3:-}
}

# bench_run LABEL CMD...: REPEATS runs, record the median wall and CPU time;
# runs in $BENCH_DIR/LABEL.{runs,cpu}
bench_run() {
	local label=$1 i s f=$BENCH_DIR/$1; shift
	: > "$f.runs"; : > "$f.cpu"
	for ((i = 0; i < REPEATS; i++)); do
		s=$(bench_once "$@") || return 1
		echo "$s" >> "$f.runs"
		cat "$BENCH_DIR/last.cpu" >> "$f.cpu"
	done
	bench_record "$label" "$(median < "$f.runs")" "$(printf '%8s s CPU' "$(median < "$f.cpu")")"
	BENCH_CPU[$label]=$(median < "$f.cpu")
	say "  $label: $(tr '\n' ' ' < "$f.runs")-> median ${BENCH_SECONDS[$label]} s" \
	    "(CPU $(tr '\n' ' ' < "$f.cpu"))"
}

# ratio A B: A / B with two decimals
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }

# print_table TITLE: one row per recorded label
print_table() {
	local l
	printf '\n== %s (median of %s runs)\n' "$1" "$REPEATS"
	printf '%-34s %10s  %s\n' "tool" "seconds" ""
	for l in "${BENCH_LABELS[@]}"; do
		printf '%-34s %10.3f  %s\n' "$l" "${BENCH_SECONDS[$l]}" "${BENCH_EXTRA[$l]}"
	done
}

# check_goal TEXT VALUE OP LIMIT: print PASS/MISS for a ratio goal (never fails)
check_goal() {
	local ok
	ok=$(awk -v v="$2" -v l="$4" -v op="$3" 'BEGIN {
		if (v == "-") { print "n/a"; exit }
		r = (op == ">=") ? v >= l : v <= l; print r ? "PASS" : "MISS" }')
	printf '  %-58s %6s (goal %s %s)  %s\n' "$1" "$2" "$3" "$4" "$ok"
}

# ---- devices -------------------------------------------------------------------

# The whole disk (MAJ:MIN) under the filesystem holding a path: throttles
# apply to disks, not partitions.
disk_of() {
	local mm sys
	mm=$(findmnt -no MAJ:MIN -T "$1" 2>/dev/null | head -n1 | tr -d ' ')
	[ -n "$mm" ] || mm=$(stat -c '%Hd:%Ld' "$1")
	sys=/sys/dev/block/$mm
	[ -e "$sys" ] || die "$1 is not on a block device ($mm): cannot throttle it"
	if [ -e "$sys/partition" ]; then
		cat "$sys/../dev"
	else
		echo "$mm"
	fi
}

# ---- a throttled cgroup ----------------------------------------------------------
#
# cg_create NAME DISK [IOPS BPS]: a cgroup of our own for reads on DISK,
# limited to IOPS reads/s and BPS bytes/s if given (else only counting).
# cgroup v1 blkio (blkio.throttle.read_{iops,bps}_device) where it is
# mounted, else cgroup v2 io.max (enabling the io controller if needed).
# Always removed at exit. cg_exec NAME CMD... runs a command inside it;
# cg_reads NAME / cg_read_bytes NAME give the device reads counted so far
# (blkio.throttle.io_serviced / io_service_bytes, or io.stat rios / rbytes).

declare -A CG_PATH=() CG_DISK=()
CG_MODE="" CG_V1="" CG_V2="" CG_V2_ENABLED=0

cg_detect() {
	[ -n "$CG_MODE" ] && return 0
	local _d mnt fs opts _r
	while read -r _d mnt fs opts _r; do
		case $fs in
		cgroup) [[ ,$opts, == *,blkio,* ]] && CG_V1=$mnt ;;
		cgroup2) [ -z "$CG_V2" ] && CG_V2=$mnt ;;
		esac
	done < /proc/mounts
	if [ -n "$CG_V1" ] && [ -f "$CG_V1/blkio.throttle.read_iops_device" ]; then
		CG_MODE=v1
	elif [ -n "$CG_V2" ] && grep -qw io "$CG_V2/cgroup.controllers" 2>/dev/null; then
		CG_MODE=v2
	else
		die "no blkio (cgroup v1) or io (cgroup v2) controller to throttle with"
	fi
}

cg_create() {
	local name=$1 disk=$2 iops=${3:-} bps=${4:-} dir
	cg_detect
	if [ $CG_MODE = v1 ]; then
		dir=$CG_V1/hotset-bench.$$.$name
		mkdir "$dir"
		CG_PATH[$name]=$dir CG_DISK[$name]=$disk
		if [ -n "$iops" ]; then
			echo "$disk $iops" > "$dir/blkio.throttle.read_iops_device"
			echo "$disk $bps" > "$dir/blkio.throttle.read_bps_device"
		fi
	else
		if ! grep -qw io "$CG_V2/cgroup.subtree_control"; then
			echo +io > "$CG_V2/cgroup.subtree_control"
			CG_V2_ENABLED=1
		fi
		dir=$CG_V2/hotset-bench.$$.$name
		mkdir "$dir"
		CG_PATH[$name]=$dir CG_DISK[$name]=$disk
		[ -n "$iops" ] && echo "$disk riops=$iops rbps=$bps" > "$dir/io.max"
	fi
	return 0
}

# The command line that runs CMD inside a cgroup directory: sh moves itself
# in, then becomes CMD (so that a timer outside sees CMD's own CPU time).
CG_ENTER='echo $$ > "$1/cgroup.procs" && shift && exec "$@"'

cg_exec() {
	local dir=${CG_PATH[$1]}; shift
	sh -c "$CG_ENTER" sh "$dir" "$@"
}

# cg_read_stat NAME V1_FILE V2_KEY: the disk's reads from the v1 file
# (blkio.throttle.*) or the v2 io.stat key (rios, rbytes)
cg_read_stat() {
	local dir=${CG_PATH[$1]} disk=${CG_DISK[$1]}
	if [ $CG_MODE = v1 ]; then
		awk -v d="$disk" '$1 == d && $2 == "Read" { n = $3 } END { printf "%.0f\n", n }' "$dir/$2"
	else
		awk -v d="$disk" -v k="$3=" '$1 == d { for (i = 2; i <= NF; i++)
			if (index($i, k) == 1) n = substr($i, length(k) + 1) } END { printf "%.0f\n", n }' \
			"$dir/io.stat"
	fi
}
cg_reads() { cg_read_stat "$1" blkio.throttle.io_serviced rios; }
cg_read_bytes() { cg_read_stat "$1" blkio.throttle.io_service_bytes rbytes; }

cg_remove_all() {
	local name dir pid
	for name in "${!CG_PATH[@]}"; do
		dir=${CG_PATH[$name]}
		[ -d "$dir" ] || continue
		# anything left inside (a run interrupted by ^C) goes back to the root
		while read -r pid; do
			[ -n "$pid" ] && echo "$pid" > "$(dirname "$dir")/cgroup.procs" 2>/dev/null || true
		done < "$dir/cgroup.procs"
		rmdir "$dir" 2>/dev/null || say "bench: could not remove $dir"
	done
	if [ $CG_V2_ENABLED = 1 ]; then
		echo -io > "$CG_V2/cgroup.subtree_control" 2>/dev/null || true
	fi
}
bench_on_exit cg_remove_all

# ---- memory cgroups (v1 memory.limit_in_bytes, or v2 memory.max) -------------
#
# mem_detect first; mem_new NAME LIMIT makes one (removed at exit),
# mem_exec NAME CMD... runs CMD in it, mem_peak NAME its peak charge,
# mem_limit NAME BYTES changes its limit, mem_rm NAME removes it now.

MEM_MODE="" MEM_V1="" MEM_V2="" MEM_V2_ENABLED=0
declare -A MEM_PATH=()

mem_detect() {
	local _d mnt fs opts _r
	while read -r _d mnt fs opts _r; do
		[ "$fs" = cgroup ] && [[ ,$opts, == *,memory,* ]] && MEM_V1=$mnt
		[ "$fs" = cgroup2 ] && [ -z "$MEM_V2" ] && MEM_V2=$mnt
	done < /proc/mounts
	if [ -n "$MEM_V1" ] && [ -f "$MEM_V1/memory.limit_in_bytes" ]; then
		MEM_MODE=v1
	elif [ -n "$MEM_V2" ] && grep -qw memory "$MEM_V2/cgroup.controllers" 2>/dev/null; then
		MEM_MODE=v2
	else
		die "no memory controller (cgroup v1 memory or cgroup v2 memory.max)"
	fi
}

# mem_new NAME LIMIT: a memory cgroup limited to LIMIT bytes (0: no limit)
mem_new() {
	local name=$1 limit=$2 dir
	if [ $MEM_MODE = v1 ]; then
		dir=$MEM_V1/hotset-bench.$$.$name
		mkdir "$dir"
		MEM_PATH[$name]=$dir
		[ "$limit" = 0 ] || echo "$limit" > "$dir/memory.limit_in_bytes"
	else
		if ! grep -qw memory "$MEM_V2/cgroup.subtree_control"; then
			echo +memory > "$MEM_V2/cgroup.subtree_control"
			MEM_V2_ENABLED=1
		fi
		dir=$MEM_V2/hotset-bench.$$.$name
		mkdir "$dir"
		MEM_PATH[$name]=$dir
		[ "$limit" = 0 ] || echo "$limit" > "$dir/memory.max"
		echo 0 > "$dir/memory.swap.max" 2>/dev/null || true
	fi
}

# mem_exec NAME CMD...: run CMD in NAME's memory cgroup
mem_exec() {
	local name=$1; shift
	sh -c "$CG_ENTER" sh "${MEM_PATH[$name]}" "$@"
}

# the peak of what the cgroup charged, in bytes
mem_peak() {
	if [ $MEM_MODE = v1 ]; then
		cat "${MEM_PATH[$1]}/memory.max_usage_in_bytes"
	else
		cat "${MEM_PATH[$1]}/memory.peak"
	fi
}

# mem_limit NAME BYTES: change the limit (0: none); v1 refuses one below
# the usage only when reclaim cannot get under it
mem_limit() {
	local v=$2
	if [ $MEM_MODE = v1 ]; then
		[ "$v" = 0 ] && v=-1
		echo "$v" > "${MEM_PATH[$1]}/memory.limit_in_bytes"
	else
		[ "$v" = 0 ] && v=max
		echo "$v" > "${MEM_PATH[$1]}/memory.max"
	fi
}

# mem_stat NAME KEY: a counter of the cgroup's memory.stat (0 if missing)
mem_stat() {
	awk -v k="$2" '$1 == k { n = $2 } END { printf "%.0f\n", n }' "${MEM_PATH[$1]}/memory.stat"
}

# ---- a box: a small, slow machine -------------------------------------------------
#
# box_new NAME LIMIT DISK IOPS BPS: a memory cgroup limited to LIMIT bytes
# whose reads from DISK are throttled to IOPS and BPS (cgroup v1: a memory
# and a blkio cgroup of the same name; v2: one cgroup with memory.max and
# io.max). box_exec NAME CMD... runs CMD in both; mem_exec NAME CMD... in the
# memory limit only (a competitor that shares the memory, not the slow disk).
# With cgroup v1 beside a cgroup2 mount (a hybrid hierarchy, the memory and
# io controllers on v1), the box also gets a cgroup v2 of its own there,
# for the PSI of its own tasks (BOX_PSI[NAME]; a VM's /proc/pressure is its
# own too).
declare -A BOX_PSI=()
box_new() {
	local name=$1 limit=$2 disk=$3 iops=$4 bps=$5
	mem_detect
	cg_detect
	mem_new "$name" "$limit"
	if [ $MEM_MODE = v2 ] && [ $CG_MODE = v2 ]; then
		# one cgroup holds both limits: a process is in one v2 cgroup only
		grep -qw io "$MEM_V2/cgroup.subtree_control" ||
			{ echo +io > "$MEM_V2/cgroup.subtree_control"; CG_V2_ENABLED=1; }
		echo "$disk riops=$iops rbps=$bps" > "${MEM_PATH[$name]}/io.max"
		CG_PATH[$name]=${MEM_PATH[$name]} CG_DISK[$name]=$disk
		BOX_PSI[$name]=${MEM_PATH[$name]}
	else
		cg_create "$name" "$disk" "$iops" "$bps"
		if [ -n "$CG_V2" ] && [ -f "$CG_V2/cgroup.procs" ] &&
			mkdir "$CG_V2/hotset-bench.$$.$name" 2>/dev/null; then
			BOX_PSI[$name]=$CG_V2/hotset-bench.$$.$name
		fi
	fi
}
# box_prefix NAME: BOX_PREFIX, the words that run a command in the box (a
# command of its own, so that "${BOX_PREFIX[@]}" CMD & gives CMD's PID)
box_prefix() {
	BOX_PREFIX=(sh -c "$CG_ENTER" sh "${MEM_PATH[$1]}")
	[ "${CG_PATH[$1]}" = "${MEM_PATH[$1]}" ] ||
		BOX_PREFIX+=(sh -c "$CG_ENTER" sh "${CG_PATH[$1]}")
	[ -z "${BOX_PSI[$1]:-}" ] || [ "${BOX_PSI[$1]}" = "${MEM_PATH[$1]}" ] ||
		BOX_PREFIX+=(sh -c "$CG_ENTER" sh "${BOX_PSI[$1]}")
}
# the boxes' cgroups v2 of PSI alone, at exit
box_psi_rm_all() {
	local name dir pid
	for name in "${!BOX_PSI[@]}"; do
		dir=${BOX_PSI[$name]}
		[ "$dir" != "${MEM_PATH[$name]:-}" ] && [ -d "$dir" ] || continue
		while read -r pid; do
			[ -n "$pid" ] && echo "$pid" > "$CG_V2/cgroup.procs" 2>/dev/null || true
		done < "$dir/cgroup.procs"
		# the jobs' own cgroups (hotset time makes one under its own) go first
		find "$dir" -mindepth 1 -depth -type d -exec rmdir {} + 2>/dev/null || true
		rmdir "$dir" 2>/dev/null || say "bench: could not remove $dir"
	done
	BOX_PSI=()
}
bench_on_exit box_psi_rm_all
box_exec() {
	box_prefix "$1"; shift
	"${BOX_PREFIX[@]}" "$@"
}

# mem_rm NAME: remove NAME's cgroups now (mem_rm_all at exit, after a failure)
mem_rm() {
	local dir=${MEM_PATH[$1]:-} pid i
	unset "MEM_PATH[$1]"
	if [ -n "$dir" ] && [ -d "$dir" ]; then
		# a job killed at its timeout may still be exiting (freeing a large
		# heap): it is gone when cgroup.procs is empty, and then rmdir works
		for i in $(seq 100); do
			while read -r pid; do
				[ -n "$pid" ] && echo "$pid" > "$(dirname "$dir")/cgroup.procs" 2>/dev/null || true
			done < "$dir/cgroup.procs"
			rmdir "$dir" 2>/dev/null && return 0
			sleep 0.1
		done
		say "bench: could not remove $dir"
	fi
}
mem_rm_all() {
	local name
	for name in "${!MEM_PATH[@]}"; do mem_rm "$name"; done
	if [ $MEM_V2_ENABLED = 1 ]; then
		echo -memory > "$MEM_V2/cgroup.subtree_control" 2>/dev/null || true
	fi
}
bench_on_exit mem_rm_all

# Cold runs (drop_caches first) inside cgroup NAME, interleaved so that a
# change in the machine's load falls on every tool alike:
#   cg_cold_begin LABEL...          forget earlier runs of these labels
#   cg_cold_once NAME LABEL CMD...  one run; keeps its time, device reads,
#                                   bytes, MB/s and CPU in $BENCH_DIR/LABEL.*
#   cg_cold_end LABEL...            record each label's medians
# cg_run_cold NAME LABEL CMD... does all three for one command, REPEATS times.
cg_cold_begin() {
	local l
	for l in "$@"; do
		: > "$BENCH_DIR/$l.runs"; : > "$BENCH_DIR/$l.reads"; : > "$BENCH_DIR/$l.mbs"
		: > "$BENCH_DIR/$l.bytes"; : > "$BENCH_DIR/$l.cpu"
	done
}

cg_cold_once() {
	local name=$1 s r0 r1 b0 b1 f=$BENCH_DIR/$2; shift 2
	drop_caches
	r0=$(cg_reads "$name"); b0=$(cg_read_bytes "$name")
	s=$(bench_once sh -c "$CG_ENTER" sh "${CG_PATH[$name]}" "$@") || return 1
	cat "$BENCH_DIR/last.cpu" >> "$f.cpu"
	r1=$(cg_reads "$name"); b1=$(cg_read_bytes "$name")
	echo "$s" >> "$f.runs"
	echo $((r1 - r0)) >> "$f.reads"
	echo $((b1 - b0)) >> "$f.bytes"
	awk -v b=$((b1 - b0)) -v s="$s" 'BEGIN { printf "%.1f\n", b / 1e6 / s }' >> "$f.mbs"
}

cg_cold_end() {
	local l f
	for l in "$@"; do
		f=$BENCH_DIR/$l
		bench_record "$l" "$(median < "$f.runs")" \
			"$(printf '%8s MB/s %8s device reads %6s s CPU' "$(median < "$f.mbs")" \
				"$(median < "$f.reads")" "$(median < "$f.cpu")")"
		say "  $l: $(tr '\n' ' ' < "$f.runs")-> median ${BENCH_SECONDS[$l]} s," \
		    "reads $(tr '\n' ' ' < "$f.reads")"
	done
}

cg_run_cold() {
	local name=$1 label=$2 i; shift 2
	cg_cold_begin "$label"
	for ((i = 0; i < REPEATS; i++)); do
		cg_cold_once "$name" "$label" "$@" || return 1
	done
	cg_cold_end "$label"
}

# round_ratio LABEL_A LABEL_B: the median over rounds of A's time / B's time
# (runs interleaved by cg_cold_once).
round_ratio() {
	paste "$BENCH_DIR/$1.runs" "$BENCH_DIR/$2.runs" |
		awk '$2 > 0 { printf "%.4f\n", $1 / $2 }' | median | awk '{ printf "%.2f", $1 }'
}

# ---- the compile of scenario A ----------------------------------------------------
#
# compile_data DIR: DIR/inc, a private copy of the Boost headers (so that
# eviction is under control), DIR/boost.cpp including 40 of them (about
# 2,700 headers read), and DIR/filler, the competitor's 1.6 GiB of files.
# compile_cxx DIR: the compile's command line, in COMPILE_CXX.
compile_data() {
	local dir=$1 h i
	if [ ! -f "$dir/inc.done" ]; then
		say "bench: copying /usr/include/boost to $dir/inc (headers of our own to evict)"
		rm -rf "$dir/inc" && mkdir -p "$dir/inc" && cp -a /usr/include/boost "$dir/inc/"
		touch "$dir/inc.done"
	fi
	{
		for h in algorithm/string any array bimap circular_buffer container/flat_map \
			date_time/posix_time/posix_time dynamic_bitset filesystem format function \
			fusion/include/vector fusion/include/map graph/adjacency_list \
			heap/fibonacci_heap intrusive/list iostreams/stream lexical_cast \
			lockfree/queue mpl/vector multi_array multi_index_container \
			multi_index/ordered_index optional phoenix preprocessor program_options \
			property_tree/ptree proto/proto random range/algorithm regex signals2 \
			smart_ptr tokenizer tuple/tuple unordered_map uuid/uuid variant; do
			echo "#include <boost/$h.hpp>"
		done
		echo 'int main() { return 0; }'
	} > "$dir/boost.cpp"
	# the competitor's files: 1.6 GiB in 64 MiB parts
	mkdir -p "$dir/filler"
	for i in $(seq -w 1 25); do
		[ -f "$dir/filler/part-$i" ] && continue
		head -c 64M /dev/urandom > "$dir/filler/part-$i.tmp" && mv "$dir/filler/part-$i.tmp" "$dir/filler/part-$i"
	done
}

compile_cxx() {
	COMPILE_CXX=(g++ -std=c++17 -fsyntax-only -w -DBOOST_BIND_GLOBAL_PLACEHOLDERS
		-DBOOST_ALLOW_DEPRECATED_HEADERS -I "$1/inc" "$1/boost.cpp")
}

# browser NAME DIR MIB: the competitor of the compile: holds a heap of MIB
# MiB, re-reads a hot 64 MiB of its files (DIR/filler) three times, then
# streams all of them; in NAME's memory limit only.
browser() {
	mem_exec "$1" python3 - "$2/filler" "$3" <<-\PY
	import glob, subprocess, sys
	files = sorted(glob.glob(sys.argv[1] + "/part-*"))
	heap = bytearray(b"\1") * (int(sys.argv[2]) << 20)	# touched: charged
	for _ in range(3):
	    subprocess.run(["cat"] + files[:1], stdout=subprocess.DEVNULL, check=True)
	subprocess.run(["cat"] + files, stdout=subprocess.DEVNULL, check=True)
	PY
}
