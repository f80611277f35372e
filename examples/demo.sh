#!/usr/bin/env bash
# examples/demo.sh - hotset on a real job: compiling examples/project.
#
#   examples/demo.sh [HOTSET]
#
# Records what the compile reads, shows it, drops it from the page cache,
# times a cold and a warm compile, and warms the working set back. Runs as
# any user; as root, the record uses the eBPF backend, residency of system
# files can be known (the kernel tells it only to users who may write a
# file), and the compiles and the warm run on a slow disk: a cgroup that
# limits reads from the disk holding /usr to 150 IOPS and 20 MiB/s (the
# disk of a small VM), removed at exit.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
hotset=$(readlink -f "${1:-$here/../build/hotset}")
work=$(mktemp -d "${TMPDIR:-/var/tmp}/hotset-demo.XXXXXX")
slow_cg=
cleanup() {
	rm -rf "$work"
	[ -z "$slow_cg" ] || rmdir "$slow_cg" 2>/dev/null || true
}
trap cleanup EXIT
profile=$work/compile.profile
build=(make -s -B -C "$here/project" OUT="$work/out")

# slow: a prefix that runs a command on the slow disk (empty if it cannot be had)
slow=()
make_slow_disk() {
	local mm blkio
	[ "$(id -u)" = 0 ] || return 0
	mm=$(findmnt -no MAJ:MIN -T /usr | head -n1 | tr -d ' ')
	[ -e "/sys/dev/block/$mm/partition" ] && mm=$(cat "/sys/dev/block/$mm/../dev")
	blkio=$(awk '$3 == "cgroup" && $4 ~ /(^|,)blkio(,|$)/ { print $2; exit }' /proc/mounts)
	[ -n "$blkio" ] && [ -f "$blkio/blkio.throttle.read_iops_device" ] || return 0
	mkdir "$blkio/hotset-demo.$$" || return 0
	slow_cg=$blkio/hotset-demo.$$
	echo "$mm 150" > "$slow_cg/blkio.throttle.read_iops_device"
	echo "$mm $((20 << 20))" > "$slow_cg/blkio.throttle.read_bps_device"
	slow=(sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$slow_cg")
}
make_slow_disk

step() { printf '\n\033[1m== %s\033[0m\n$ %s\n' "$1" "$2"; }

step "1. Record what the compile reads" "hotset record -o compile.profile -- make"
"$hotset" record -o "$profile" -- "${build[@]}"

step "2. The working set: files, pages, first-access order" "hotset show compile.profile | head"
"$hotset" show "$profile" > "$work/show.txt"
head -n 16 "$work/show.txt"
echo "..."
tail -n 1 "$work/show.txt"

step "3. How much of it is in the page cache now" "hotset status -p compile.profile"
"$hotset" status -p "$profile"

step "4. Drop it from the cache (as after a reboot, or a night of other work)" "hotset evict -p compile.profile"
"$hotset" evict -p "$profile"
"$hotset" status -p "$profile"

[ ${#slow[@]} -eq 0 ] || printf '\n(From here on, on a slow disk: 150 IOPS, 20 MiB/s.)\n'
step "5. A cold compile: where does the time go?" "hotset time -- make"
"$hotset" time -- "${slow[@]}" "${build[@]}"

step "6. Warm the working set back, fast" "hotset warm -p compile.profile"
"$hotset" evict -q -p "$profile" >/dev/null
"${slow[@]}" "$hotset" warm -p "$profile"
"$hotset" status -p "$profile"

step "7. A warm compile" "hotset time -- make"
"$hotset" time -- "${slow[@]}" "${build[@]}"

printf '\nDone. Try: %s --help\n' "$hotset"
