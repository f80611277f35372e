#!/usr/bin/env bash
# bench/status.sh - hotset status against vmtouch, fincore and a bare find,
# on a warm cache.
#
#   bench/status.sh          a tree of >= 100k files (status, then snapshot),
#                            then a few huge sparse files
#   REPEATS=N                runs per tool (default 5; medians reported)
#   STATUS_FILES=N           files in the tree (default 100000)
#
# The tree ($BENCH_DATA/status-tree, built once by make_header_tree) is made
# of copies of /usr/include, topped up with generated files if there are not
# enough. Every tool looks at the same regular files: vmtouch walks the tree
# itself, fincore gets them from find -print0 | xargs -0, and `find TREE`
# is the floor: a walk that opens nothing.
#
# The sparse files ($BENCH_DATA/status-sparse) are a few files of hundreds of
# GB made with truncate, with some data written here and there: a tool that
# maps them and asks mincore(2) page by page pays for the holes, cachestat(2)
# does not.
#
# Nothing here changes the machine (no drop_caches): the cache is warmed by
# reading the files once before timing.
source "$(dirname "$0")/lib.sh"

STATUS_FILES=${STATUS_FILES:-100000}
SPARSE_FILES=${SPARSE_FILES:-4}
SPARSE_GB=${SPARSE_GB:-512}

need_hotset
need_pkgs vmtouch util-linux findutils python3

TREE=$BENCH_DATA/status-tree
SPARSE=$BENCH_DATA/status-sparse

make_sparse() {
	local spec="$SPARSE_FILES x ${SPARSE_GB}G" i off
	if [ -f "$SPARSE/.complete" ] && [ "$(cat "$SPARSE/.complete")" = "$spec" ]; then
		return 0
	fi
	say "bench: creating $SPARSE ($spec, sparse)"
	rm -rf "$SPARSE"
	mkdir -p "$SPARSE"
	for ((i = 0; i < SPARSE_FILES; i++)); do
		truncate -s "${SPARSE_GB}G" "$SPARSE/sparse$i"
		# 16 MiB of data at 8 places spread over the file
		for off in 0 1 7 31 64 100 180 $((SPARSE_GB - 1)); do
			dd if=/dev/urandom of="$SPARSE/sparse$i" bs=1M count=2 seek=$((off * 1024)) \
				conv=notrunc status=none
		done
	done
	sync
	echo "$spec" > "$SPARSE/.complete"
}

mkdir -p "$BENCH_DATA"
make_header_tree "$TREE" "$STATUS_FILES"
make_sparse

nfiles=$(count_files "$TREE")
say "bench: warming the cache ($nfiles files)"
find "$TREE" -type f -print0 | xargs -0 cat > /dev/null
"$HOTSET" status "$TREE" > "$BENCH_DIR/hotset-status.txt"
sed 's/^/  /' "$BENCH_DIR/hotset-status.txt" >&2

say "bench: status of $TREE, $nfiles files, $(nproc) CPUs, load: $(cut -d' ' -f1-3 /proc/loadavg)"
bench_run "find (walk only)" find "$TREE"
bench_run "hotset status" "$HOTSET" status "$TREE"
bench_run "hotset status -j1" "$HOTSET" status -j1 "$TREE"
bench_run "vmtouch" vmtouch "$TREE"
bench_run "fincore (find | xargs)" sh -c 'find "$1" -type f -print0 | xargs -0 fincore' sh "$TREE"
print_table "status, warm cache, $nfiles files"
hs=${BENCH_SECONDS["hotset status"]} vm=${BENCH_SECONDS["vmtouch"]}
fc=${BENCH_SECONDS["fincore (find | xargs)"]} fd=${BENCH_SECONDS["find (walk only)"]}
BENCH_LABELS=()

# Saving what is resident, to restore it later: hotset snapshot writes a
# profile; without it, one keeps fincore's JSON (which has no page ranges)
# or vmtouch -v's residency maps, and scripts the restoring.
say "bench: snapshot of $TREE"
bench_run "hotset snapshot" "$HOTSET" snapshot -q -o "$BENCH_DIR/snapshot.prof" "$TREE"
bench_run "vmtouch -v" vmtouch -v "$TREE"
bench_run "fincore --json (find | xargs)" sh -c 'find "$1" -type f -print0 | xargs -0 fincore --json --bytes' sh "$TREE"
print_table "saving the cache state of $nfiles files"
snap=${BENCH_SECONDS["hotset snapshot"]} vmv=${BENCH_SECONDS["vmtouch -v"]}
fcj=${BENCH_SECONDS["fincore --json (find | xargs)"]}
BENCH_LABELS=()

say "bench: status of $SPARSE_FILES sparse files of $SPARSE_GB GiB"
bench_run "true (the cost of a run)" /bin/true
bench_run "hotset status (sparse)" "$HOTSET" status "$SPARSE"
bench_run "vmtouch (sparse)" vmtouch "$SPARSE"
bench_run "fincore (sparse)" sh -c 'fincore "$1"/sparse*' sh "$SPARSE"
print_table "status of $SPARSE_FILES sparse files of $SPARSE_GB GiB"
shs=${BENCH_SECONDS["hotset status (sparse)"]} svm=${BENCH_SECONDS["vmtouch (sparse)"]}
sfc=${BENCH_SECONDS["fincore (sparse)"]}

printf '\n== goals (wall time; CPU-time ratios in brackets, for a busy machine)\n'
cpu() { ratio "${BENCH_CPU[$1]}" "${BENCH_CPU[$2]}"; }
printf '  CPU ratios: vmtouch/hotset %s, fincore/hotset %s, hotset/find %s\n' \
	"$(cpu vmtouch "hotset status")" "$(cpu "fincore (find | xargs)" "hotset status")" \
	"$(cpu "hotset status" "find (walk only)")"
check_goal "tree: vmtouch / hotset status" "$(ratio "$vm" "$hs")" ">=" 3
check_goal "tree: fincore / hotset status" "$(ratio "$fc" "$hs")" ">=" 3
check_goal "tree: hotset status / find" "$(ratio "$hs" "$fd")" "<=" 3
check_goal "sparse: vmtouch / hotset status" "$(ratio "$svm" "$shs")" ">=" 100
check_goal "sparse: fincore / hotset status" "$(ratio "$sfc" "$shs")" ">=" 100
printf '  (snapshot, no goal: vmtouch -v / hotset snapshot %sx, fincore --json / hotset snapshot %sx)\n' \
	"$(ratio "$vmv" "$snap")" "$(ratio "$fcj" "$snap")"
