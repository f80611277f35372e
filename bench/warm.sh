#!/usr/bin/env bash
# bench/warm.sh - hotset warm against vmtouch -t, from a cold cache, on the
# plain disk and under an IOPS- and bandwidth-limited throttle.
#
#   bench/warm.sh                 plain and throttled runs, ratios, goals
#   STRATEGIES=1 bench/warm.sh    also compare hotset's read strategies
#                                 (--method, -j, --order), plain and throttled
#   REPEATS=N                     rounds (default 5): the tools take turns, so
#                                 that a change of load falls on each alike;
#                                 medians reported
#   READAHEAD_128=0               leave out the throttled runs with the
#                                 kernel's default readahead (see below)
#   PLAIN_ONLY=1                  the plain disk only
#
# Needs root: caches are dropped (drop_caches) before every run, and each
# tool runs inside a cgroup of this script's own, which counts the device
# reads (blkio.throttle.io_serviced, or io.stat on cgroup v2) and, for the
# throttled runs, limits them (read_iops_device/read_bps_device, or io.max).
# Both cgroups are removed on exit, whatever happens.
#
# The trees (built once under $BENCH_DATA, default /var/tmp/hotset-bench):
#
#   warm-plain      20000 small files (log-uniform sizes, 512 B .. 64 KiB,
#                   about 13 KiB on average, 200 per directory, ~260 MiB)
#                   and 4 large files of 256 MiB. On an unthrottled disk the
#                   small files dominate a one-file-at-a-time reader like
#                   vmtouch: each costs a full device round trip, which a
#                   tool that keeps many reads in flight overlaps.
#
#   warm-throttled  3000 small files (same sizes) and 2 large files of
#                   256 MiB. Under the throttle every read costs 1/IOPS s and
#                   every byte 1/BPS s. The tree is sized so that bytes
#                   dominate (bytes/BPS ~ 26 s) and the reads (~3500 with the
#                   directory and inode blocks, ~23 s at 150 IOPS) come close
#                   behind: an IOPS-bound set of small files cannot go faster
#                   than IOPS allows, whatever the tool does, so a tree of
#                   small files alone would only measure the throttle. What a
#                   tool can do is overlap the two costs: a sequential reader
#                   pays bytes/BPS + reads/IOPS, a tool that keeps both kinds
#                   of reads queued at once pays about max(bytes/BPS,
#                   reads/IOPS). The closer the two terms, the larger the
#                   possible gain -- but never 2x: with equal terms the
#                   ratio is 2 only for a perfect overlap.
#
# The throttle's byte-limit time is the bytes the device read in hotset's
# runs (median, directories and inodes included) divided by BPS.
source "$(dirname "$0")/lib.sh"

THROTTLE_IOPS=${THROTTLE_IOPS:-150}
THROTTLE_BPS=${THROTTLE_BPS:-$((20 << 20))}
STRATEGIES=${STRATEGIES:-0}

need_root
need_hotset
need_pkgs vmtouch python3

# make_tree DIR NSMALL NLARGE LARGE_MB: the tree, unless it is there already
make_tree() {
	local dir=$1 spec="$2 $3 $4"
	if [ -f "$dir/.complete" ] && [ "$(cat "$dir/.complete")" = "$spec" ]; then
		return 0
	fi
	say "bench: creating $dir ($2 small files, $3 x $4 MiB)"
	rm -rf "$dir"
	python3 - "$dir" "$2" "$3" "$4" <<'EOF'
import os, random, sys
root, nsmall, nlarge, large_mb = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rnd = random.Random(42)
blk = os.urandom(1 << 20)
for i in range(nsmall):
    d = os.path.join(root, "small", "d%03d" % (i // 200))
    if i % 200 == 0:
        os.makedirs(d, exist_ok=True)
    size = int(2 ** rnd.uniform(9, 16))     # log-uniform, 512 B .. 64 KiB
    with open(os.path.join(d, "f%05d" % i), "wb") as f:
        f.write(blk[(i * 4096) % (1 << 19):][:size])
os.makedirs(os.path.join(root, "large"), exist_ok=True)
for i in range(nlarge):
    with open(os.path.join(root, "large", "L%02d" % i), "wb") as f:
        for _ in range(large_mb):
            f.write(blk)
EOF
	sync
	echo "$spec" > "$dir/.complete"
}

PLAIN=$BENCH_DATA/warm-plain
THROTTLED=$BENCH_DATA/warm-throttled
mkdir -p "$BENCH_DATA"
make_tree "$PLAIN" 20000 4 256
make_tree "$THROTTLED" 3000 2 256
DISK=$(disk_of "$PLAIN")

tree_bytes() { find "$1" -type f -printf '%s\n' | awk '{ s += $1 } END { printf "%.0f\n", s }'; }

# vs_vmtouch CGROUP TREE SUFFIX: vmtouch -t and hotset warm of TREE, REPEATS
# rounds of one run each, labelled "vmtouch -t SUFFIX", "hotset warm SUFFIX"
vs_vmtouch() {
	local cg=$1 tree=$2 vm="vmtouch -t${3:+ $3}" hs="hotset warm${3:+ $3}" i
	cg_cold_begin "$vm" "$hs"
	for ((i = 0; i < REPEATS; i++)); do
		cg_cold_once "$cg" "$vm" vmtouch -tq "$tree"
		cg_cold_once "$cg" "$hs" "$HOTSET" warm -q "$tree"
	done
	cg_cold_end "$vm" "$hs"
	say "  vmtouch -t / hotset warm, median of the rounds' ratios: $(round_ratio "$vm" "$hs")"
}

cg_create count "$DISK"
cg_create thr "$DISK" "$THROTTLE_IOPS" "$THROTTLE_BPS"

say "bench: plain disk $DISK ($(cat /sys/dev/block/$DISK/queue/rotational 2>/dev/null | sed 's/1/rotational/;s/0/non-rotational/'))," \
    "tree $PLAIN: $(tree_bytes "$PLAIN") bytes"
vs_vmtouch count "$PLAIN"
if [ "$STRATEGIES" = 1 ]; then
	for opts in "--order=given" "-j16" "-j64" "--inflight=16M" "--method=willneed" \
		    "--method=willneed --threads=2" "--method=pread" "--method=io_uring"; do
		if [ "$opts" = "--method=io_uring" ] && ! "$HOTSET" warm $opts --help >/dev/null 2>&1; then
			continue	# not built with liburing
		fi
		cg_run_cold count "hotset warm $opts" "$HOTSET" warm -q $opts "$PLAIN"
	done
fi
print_table "warm from cold, plain disk: $PLAIN"
plain_vm=${BENCH_SECONDS["vmtouch -t"]} plain_hs=${BENCH_SECONDS["hotset warm"]}
BENCH_LABELS=()

thr_vm=- thr_hs=- limit_bytes=- thr128_vm=- thr128_hs=-
if [ "${PLAIN_ONLY:-0}" != 1 ]; then
	say "bench: throttled to $THROTTLE_IOPS IOPS, $THROTTLE_BPS B/s on $DISK ($CG_MODE)," \
	    "tree $THROTTLED: $(tree_bytes "$THROTTLED") bytes"
	vs_vmtouch thr "$THROTTLED" "(throttled)"
	if [ "$STRATEGIES" = 1 ]; then
		for opts in "-j16 --inflight=2M" "-j64 --inflight=8M" "-j64" "--method=willneed" \
			    "--method=pread" "--method=io_uring"; do
			if [ "$opts" = "--method=io_uring" ] && ! "$HOTSET" warm $opts --help >/dev/null 2>&1; then
				continue
			fi
			cg_run_cold thr "hotset warm $opts (throttled)" "$HOTSET" warm -q $opts "$THROTTLED"
		done
	fi
	print_table "warm from cold, throttled: $THROTTLED"
	thr_vm=${BENCH_SECONDS["vmtouch -t (throttled)"]} thr_hs=${BENCH_SECONDS["hotset warm (throttled)"]}
	thr_bytes=$(median < "$BENCH_DIR/hotset warm (throttled).bytes" | awk '{ printf "%.0f", $1 }')
	thr_reads=$(median < "$BENCH_DIR/hotset warm (throttled).reads")
	limit_bytes=$(awk -v b="$thr_bytes" -v r="$THROTTLE_BPS" 'BEGIN { printf "%.2f", b / r }')
	limit_iops=$(awk -v n="$thr_reads" -v r="$THROTTLE_IOPS" 'BEGIN { printf "%.2f", n / r }')
	printf '\nthrottle: byte-limit time %s s (%s bytes / %s B/s), IOPS-limit time %s s (%s reads / %s)\n' \
		"$limit_bytes" "$thr_bytes" "$THROTTLE_BPS" "$limit_iops" "$thr_reads" "$THROTTLE_IOPS"

	# The same with the readahead window most disks have: the kernel's default
	# read_ahead_kb of 128 (this disk may be set higher; it is put back at
	# exit). vmtouch's page faults read a file one readahead window at a time,
	# so its device reads grow as the window shrinks; hotset's WILLNEED and
	# pread requests are as large as the device takes (max_sectors_kb) and do
	# not depend on it. READAHEAD_128=0 leaves this out.
	RA_FILE=/sys/dev/block/$DISK/queue/read_ahead_kb
	ra_saved=$(cat "$RA_FILE")
	restore_readahead() { echo "$ra_saved" > "$RA_FILE"; }
	if [ "${READAHEAD_128:-1}" = 1 ] && [ "$ra_saved" != 128 ]; then
		bench_on_exit restore_readahead
		echo 128 > "$RA_FILE"
		BENCH_LABELS=()
		say "bench: throttled as above, read_ahead_kb 128 (was $ra_saved)"
		vs_vmtouch thr "$THROTTLED" "(throttled, ra 128K)"
		restore_readahead
		print_table "warm from cold, throttled, read_ahead_kb 128: $THROTTLED"
		thr128_vm=${BENCH_SECONDS["vmtouch -t (throttled, ra 128K)"]}
		thr128_hs=${BENCH_SECONDS["hotset warm (throttled, ra 128K)"]}
	fi
fi

printf '\n== goals\n'
check_goal "plain: vmtouch -t / hotset warm" "$(ratio "$plain_vm" "$plain_hs")" ">=" 4
check_goal "throttled: hotset warm / byte-limit time" "$(ratio "$thr_hs" "$limit_bytes")" "<=" 1.5
check_goal "throttled: vmtouch -t / hotset warm" "$(ratio "$thr_vm" "$thr_hs")" ">=" 2
if [ "$thr128_hs" != - ]; then
	check_goal "throttled, ra 128K: hotset warm / byte-limit time" "$(ratio "$thr128_hs" "$limit_bytes")" "<=" 1.5
	check_goal "throttled, ra 128K: vmtouch -t / hotset warm" "$(ratio "$thr128_vm" "$thr128_hs")" ">=" 2
fi
if [ "$limit_bytes" != - ]; then
	printf '\n(throttled: no tool takes less than the byte-limit time, so none can be more than %sx faster than vmtouch -t here' \
		"$(ratio "$thr_vm" "$limit_bytes")"
	[ "$thr128_vm" = - ] || printf ', %sx with read_ahead_kb 128' "$(ratio "$thr128_vm" "$limit_bytes")"
	printf ')\n'
fi
