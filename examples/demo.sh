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
# disk of a small VM; cgroup v1 blkio, or cgroup v2 io.max), removed at exit.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
hotset=$(readlink -f "${1:-$here/../build/hotset}")
work=$(mktemp -d "${TMPDIR:-/var/tmp}/hotset-demo.XXXXXX")
. "$here/../scripts/slow-disk.sh"
cleanup() {
	rm -rf "$work"
	slow_disk_remove
}
trap cleanup EXIT
profile=$work/compile.profile
build=(make -s -B -C "$here/project" OUT="$work/out")

# slow: a prefix that runs a command on the slow disk (empty if it cannot be
# had). hotset time runs inside it, so that the job's own cgroup, which
# hotset makes under its own, is throttled too.
slow=()
! slow_disk_make /usr 150 $((20 << 20)) || slow=("${slow_disk[@]}")

step() { printf '\n\033[1m== %s\033[0m\n$ %s\n' "$1" "$2"; }

step "1. Record what the compile reads" "hotset record -o compile.profile -- make"
"$hotset" record -o "$profile" -- "${build[@]}"

step "2. The working set: totals, the largest directories and files" "hotset show compile.profile"
"$hotset" show "$profile"

step "3. How much of it is in the page cache now" "hotset status -p compile.profile"
"$hotset" status -p "$profile"

step "4. Drop it from the cache (as after a reboot, or a night of other work)" "hotset evict -p compile.profile"
"$hotset" evict -p "$profile"
"$hotset" status -p "$profile"

[ ${#slow[@]} -eq 0 ] || printf '\n(From here on, on a slow disk: 150 IOPS, 20 MiB/s.)\n'
step "5. A cold compile: where does the time go?" "hotset time -- make"
"${slow[@]}" "$hotset" time -- "${build[@]}"

step "6. Warm the working set back, fast" "hotset warm -p compile.profile"
"$hotset" evict -q -p "$profile" >/dev/null
"${slow[@]}" "$hotset" warm -p "$profile"
"$hotset" status -p "$profile"

step "7. A warm compile" "hotset time -- make"
"${slow[@]}" "$hotset" time -- "${build[@]}"

printf '\nDone. Try: %s --help\n' "$hotset"
