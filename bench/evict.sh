#!/usr/bin/env bash
# bench/evict.sh - hotset evict against vmtouch -e: how fast each drops a
# tree from the page cache, and what each leaves behind.
#
#   bench/evict.sh           a tree of >= 100k files, then files just written
#   REPEATS=N                rounds (default 5; medians reported)
#   EVICT_FILES=N            files in the tree (default 100000)
#
# The tree is the one bench/status.sh uses ($BENCH_DATA/status-tree, built
# once by make_header_tree). Each round reads it into the cache (untimed),
# lets one tool evict it, then counts the pages still resident with hotset
# status; the tools take turns, so that a change in the machine's load falls
# on both alike.
#
# Then the same with files just written (dirty pages, not yet on disk): a
# tool that only asks the kernel to drop them (POSIX_FADV_DONTNEED) leaves
# the dirty pages cached, since the kernel drops only clean ones; hotset
# writes them back first.
source "$(dirname "$0")/lib.sh"

EVICT_FILES=${EVICT_FILES:-100000}
DIRTY_FILES=${DIRTY_FILES:-4}
DIRTY_MB=${DIRTY_MB:-32}

need_hotset
need_pkgs vmtouch python3

TREE=$BENCH_DATA/status-tree
DIRTY=$BENCH_DIR/dirty
mkdir -p "$BENCH_DATA"
make_header_tree "$TREE" "$EVICT_FILES"

resident_pages() { "$HOTSET" status --json "$1" | python3 -c 'import json, sys; print(json.load(sys.stdin)["resident_pages"])'; }

fill_tree() { "$HOTSET" warm -q "$TREE" > /dev/null; }

fill_dirty() {
	local i
	rm -rf "$DIRTY" && mkdir -p "$DIRTY"
	sync
	for ((i = 0; i < DIRTY_FILES; i++)); do
		dd if=/dev/zero of="$DIRTY/f$i" bs=1M count="$DIRTY_MB" status=none
	done
}

# rounds NAME FILL DIR: REPEATS rounds of FILL then each tool's eviction of DIR,
# labelled "TOOL (NAME)"; resident pages left in $BENCH_DIR/LABEL.left
rounds() {
	local name=$1 fill=$2 dir=$3 r tool label s
	local -a tools=("hotset evict" "vmtouch -e")
	for tool in "${tools[@]}"; do : > "$BENCH_DIR/$tool ($name).runs"; : > "$BENCH_DIR/$tool ($name).left"; done
	for ((r = 0; r < REPEATS; r++)); do
		for tool in "${tools[@]}"; do
			label="$tool ($name)"
			$fill
			case $tool in
			hotset*) s=$(bench_once "$HOTSET" evict -q "$dir") ;;
			vmtouch*) s=$(bench_once vmtouch -eq "$dir") ;;
			esac
			echo "$s" >> "$BENCH_DIR/$label.runs"
			resident_pages "$dir" >> "$BENCH_DIR/$label.left"
		done
	done
	for tool in "${tools[@]}"; do
		label="$tool ($name)"
		bench_record "$label" "$(median < "$BENCH_DIR/$label.runs")" \
			"$(printf '%10s pages left resident' "$(median < "$BENCH_DIR/$label.left")")"
		say "  $label: $(tr '\n' ' ' < "$BENCH_DIR/$label.runs")-> median ${BENCH_SECONDS[$label]} s," \
		    "left $(tr '\n' ' ' < "$BENCH_DIR/$label.left")"
	done
}

nfiles=$(count_files "$TREE")
say "bench: evict $TREE, $nfiles files, $(nproc) CPUs, load: $(cut -d' ' -f1-3 /proc/loadavg)"
rounds tree fill_tree "$TREE"
print_table "evict a warm tree of $nfiles files"
tree_hs=${BENCH_SECONDS["hotset evict (tree)"]} tree_vm=${BENCH_SECONDS["vmtouch -e (tree)"]}
BENCH_LABELS=()

say "bench: evict $DIRTY_FILES files of $DIRTY_MB MiB just written"
rounds dirty fill_dirty "$DIRTY"
print_table "evict $DIRTY_FILES files of $DIRTY_MB MiB just written (dirty)"
dirty_hs_left=$(median < "$BENCH_DIR/hotset evict (dirty).left")
dirty_vm_left=$(median < "$BENCH_DIR/vmtouch -e (dirty).left")
rm -rf "$DIRTY"

printf '\n== ratios (no goal is set for evict)\n'
printf '  tree: vmtouch -e / hotset evict %sx\n' "$(ratio "$tree_vm" "$tree_hs")"
printf '  dirty files: pages left resident, hotset evict %s, vmtouch -e %s (of %s)\n' \
	"$dirty_hs_left" "$dirty_vm_left" $((DIRTY_FILES * DIRTY_MB * 1048576 / $(getconf PAGESIZE)))
