#!/usr/bin/env bash
# bench/file-lists.sh - hotset status --files-from against vmtouch -b and
# fincore through xargs, on the same list of files, on a warm cache.
#
#   bench/file-lists.sh      a list of the >= 100k files of bench/status.sh's tree
#   REPEATS=N                runs per tool (default 5; medians reported)
#   STATUS_FILES=N           files in the tree (default 100000)
#
# The list is what `find TREE -type f -print0` prints, kept in a file (and
# its newline-ended copy, for the tools that want one), so that every tool
# reads the same names and no run pays for find. hotset reads it from
# standard input, as a pipe from find would give it; vmtouch -b reads it
# itself; fincore gets it from xargs -0. Each tool's peak RSS is printed
# too: hotset reads the list a name at a time, never whole, but keeps the
# device and inode of each file (a list may name a file twice, or a file
# and its directory) to count it once.
#
# Nothing here changes the machine (no drop_caches): the cache is warmed by
# reading the files once before timing.
source "$(dirname "$0")/lib.sh"

STATUS_FILES=${STATUS_FILES:-100000}

need_hotset
need_pkgs vmtouch util-linux findutils python3

TREE=$BENCH_DATA/status-tree
mkdir -p "$BENCH_DATA"
make_header_tree "$TREE" "$STATUS_FILES"

LIST0=$BENCH_DIR/list0 LIST=$BENCH_DIR/list
find "$TREE" -type f -print0 > "$LIST0"
find "$TREE" -type f > "$LIST"
nfiles=$(tr -cd '\0' < "$LIST0" | wc -c)
say "bench: warming the cache ($nfiles files)"
xargs -0 cat < "$LIST0" > /dev/null

# peak_rss CMD...: the command's peak RSS in KiB (GNU time), or "-"
peak_rss() {
	[ -x /usr/bin/time ] || { echo -; return; }
	/usr/bin/time -f '%M' -o "$BENCH_DIR/rss" "$@" > /dev/null 2>&1 || true
	tail -n 1 "$BENCH_DIR/rss"
}

# the same files from both: the list is the tree
"$HOTSET" status --json "$TREE" > "$BENCH_DIR/tree.json"
"$HOTSET" status --json --files-from - -0 < "$LIST0" > "$BENCH_DIR/list.json"
python3 - "$BENCH_DIR/tree.json" "$BENCH_DIR/list.json" <<'EOF' || die "the list and the tree disagree"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
keys = ("files", "pages", "bytes")	# residency may change in between
if [a[k] for k in keys] != [b[k] for k in keys]:
    sys.exit("tree %s, list %s" % ([a[k] for k in keys], [b[k] for k in keys]))
EOF

say "bench: lists of $nfiles files, $(nproc) CPUs, load: $(cut -d' ' -f1-3 /proc/loadavg)"
bench_run "hotset status --files-from - -0" sh -c '"$1" status --files-from - -0 < "$2"' sh "$HOTSET" "$LIST0"
bench_run "hotset status --files-from - -0 -j1" sh -c '"$1" status -j1 --files-from - -0 < "$2"' sh "$HOTSET" "$LIST0"
bench_run "hotset status --files-from FILE" "$HOTSET" status --files-from "$LIST"
bench_run "vmtouch -b FILE" vmtouch -b "$LIST"
bench_run "vmtouch -0 -b FILE" vmtouch -0 -b "$LIST0"
bench_run "xargs -0 vmtouch" sh -c 'xargs -0 vmtouch < "$1"' sh "$LIST0"
bench_run "xargs -0 fincore" sh -c 'xargs -0 fincore < "$1"' sh "$LIST0"
bench_run "hotset status TREE (walk)" "$HOTSET" status "$TREE"
print_table "status of a list of $nfiles files, warm cache"
hs=${BENCH_SECONDS["hotset status --files-from - -0"]}
hs1=${BENCH_SECONDS["hotset status --files-from - -0 -j1"]}

printf '\n== ratios (wall time)\n'
for l in "vmtouch -b FILE" "vmtouch -0 -b FILE" "xargs -0 vmtouch" "xargs -0 fincore" \
	 "hotset status TREE (walk)"; do
	printf '  %-40s %6sx hotset --files-from, %6sx with -j1\n' "$l" \
		"$(ratio "${BENCH_SECONDS[$l]}" "$hs")" "$(ratio "${BENCH_SECONDS[$l]}" "$hs1")"
done
printf '\n== peak RSS, KiB\n'
printf '  %-40s %8s\n' "hotset status --files-from - -0" \
	"$(peak_rss sh -c 'exec "$1" status --files-from - -0 < "$2"' sh "$HOTSET" "$LIST0")"
printf '  %-40s %8s\n' "vmtouch -b FILE" "$(peak_rss vmtouch -b "$LIST")"
