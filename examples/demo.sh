#!/usr/bin/env bash
# examples/demo.sh - hotset on a real job: compiling examples/project.
#
#   examples/demo.sh [HOTSET]
#
# Records what the compile reads, shows it, drops it from the page cache,
# times a cold and a warm compile, and warms the working set back. Runs as
# any user; as root, the record uses the eBPF backend and residency of
# system files can be known (the kernel tells it only to users who may
# write a file).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
hotset=$(readlink -f "${1:-$here/../build/hotset}")
work=$(mktemp -d "${TMPDIR:-/var/tmp}/hotset-demo.XXXXXX")
trap 'rm -rf "$work"' EXIT
profile=$work/compile.profile
build() { make -s -B -C "$here/project" OUT="$work/out"; }

step() { printf '\n\033[1m== %s\033[0m\n$ %s\n' "$1" "$2"; }

step "1. Record what the compile reads" "hotset record -o compile.profile -- make"
"$hotset" record -o "$profile" -- make -s -B -C "$here/project" OUT="$work/out"

step "2. The working set: files, pages, first-access order" "hotset show compile.profile | head"
"$hotset" show "$profile" | head -n 16
echo "..."
"$hotset" show "$profile" | tail -n 1

step "3. How much of it is in the page cache now" "hotset status -p compile.profile"
"$hotset" status -p "$profile"

step "4. Drop it from the cache (as after a reboot, or a night of other work)" "hotset evict -p compile.profile"
"$hotset" evict -p "$profile"
"$hotset" status -p "$profile"

step "5. A cold compile: where does the time go?" "hotset time -- make"
"$hotset" time -- bash -c "$(declare -f build); build"

step "6. Warm the working set back, fast" "hotset warm -p compile.profile"
"$hotset" evict -q -p "$profile" >/dev/null
"$hotset" warm -p "$profile"
"$hotset" status -p "$profile"

step "7. A warm compile" "hotset time -- make"
"$hotset" time -- bash -c "$(declare -f build); build"

printf '\nDone. Try: %s --help\n' "$hotset"
