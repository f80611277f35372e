#!/usr/bin/env bash
# bench/status-table.sh - fincore's table: util-linux fincore against
# hotset status -r (raw) and -o (aligned), for wall time and peak memory.
#
#   bench/status-table.sh    a tree of 200,000 files, made in a temporary
#                            directory and removed at exit
#   TABLE_FILES=N            files in the tree (default 200000)
#   REPEATS=N                runs per tool (default 5; medians reported)
#
# fincore (util-linux 2.38) takes no directory, so it gets the files from
# find -print0 | xargs -0, as many a run as the argument limit allows (about
# 2 MB of names); it builds its table with libsmartcols, which holds every
# row until the end, so its peak memory grows with the files of one run:
# measured here on 10,000 files and on a full run. hotset walks the tree
# itself and writes each row as it goes (the aligned table holds its first
# 1000 rows to size the columns). Peak RSS comes from GNU time (%M, KiB);
# for fincore, the largest of its runs.
#
# Nothing here changes the machine: the cache is as it is, warm from making
# the tree (the tools only ask what is resident).
source "$(dirname "$0")/lib.sh"

TABLE_FILES=${TABLE_FILES:-200000}
PERDIR=1000

need_hotset
need_pkgs util-linux findutils python3 time

TREE=$(mktemp -d "${BENCH_DATA_TMP:-/var/tmp}/hotset-bench-table.XXXXXX")
remove_tree() { rm -rf "$TREE"; }
bench_on_exit remove_tree

say "bench: creating $TABLE_FILES files in $TREE"
python3 - "$TREE" "$TABLE_FILES" "$PERDIR" <<'EOF'
import os, sys
root, count, perdir = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
page = b"x" * os.sysconf("SC_PAGESIZE")
for i in range(count):
    d = os.path.join(root, "d%04d" % (i // perdir))
    if i % perdir == 0:
        os.mkdir(d)
    with open(os.path.join(d, "f%07d" % i), "wb") as f:
        if i % 10 == 0:            # every tenth file holds a page
            f.write(page)
EOF
find "$TREE" -type f | sort > "$BENCH_DIR/files"
nfiles=$(wc -l < "$BENCH_DIR/files")

# measure LABEL CMD...: REPEATS runs; median wall seconds and peak RSS (KiB)
# into WALL[LABEL] and RSS[LABEL]. A command run through xargs writes each
# of its runs' peaks to $BENCH_DIR/rss.each (see fincore_all).
declare -A WALL=() RSS=()
LABELS=()
measure() {
	local label=$1 i t0; shift
	: > "$BENCH_DIR/$label.wall"; : > "$BENCH_DIR/$label.rss"
	for ((i = 0; i < REPEATS; i++)); do
		: > "$BENCH_DIR/rss.each"
		if [ "$(type -t "$1")" = function ]; then
			# a pipeline: its wall time; its peak is the largest run's (rss.each)
			now_s; t0=$NOW
			"$@" > /dev/null 2> "$BENCH_DIR/err" ||
				{ say "bench: '$*' failed:"; tail -n 5 "$BENCH_DIR/err" >&2; return 1; }
			now_s
			awk -v a="$t0" -v b="$NOW" 'BEGIN { printf "%.2f 0\n", b - a }' > "$BENCH_DIR/time"
		else
			/usr/bin/time -f '%e %M' -o "$BENCH_DIR/time" "$@" > /dev/null 2> "$BENCH_DIR/err" ||
			{ say "bench: '$*' failed:"; tail -n 5 "$BENCH_DIR/err" >&2; return 1; }
		fi
		cut -d' ' -f1 "$BENCH_DIR/time" >> "$BENCH_DIR/$label.wall"
		if [ -s "$BENCH_DIR/rss.each" ]; then
			sort -n "$BENCH_DIR/rss.each" | tail -n 1 >> "$BENCH_DIR/$label.rss"
		else
			cut -d' ' -f2 "$BENCH_DIR/time" >> "$BENCH_DIR/$label.rss"
		fi
	done
	WALL[$label]=$(median < "$BENCH_DIR/$label.wall")
	RSS[$label]=$(median < "$BENCH_DIR/$label.rss")
	LABELS+=("$label")
	say "  $label: $(tr '\n' ' ' < "$BENCH_DIR/$label.wall")s, peak $(tr '\n' ' ' < "$BENCH_DIR/$label.rss")KiB"
}

# FINCORE_ALL LIST RSS ARGS...: fincore on every file of LIST, as many per
# run as fit, each run's peak RSS appended to RSS (a command line: GNU time
# runs programs, not shell functions)
FINCORE_ALL='tr "\n" "\0" < "$1" | xargs -0 -s 2000000 /usr/bin/time -f %M -a -o "$2" fincore "${@:3}"'
fincore_all() { bash -c "$FINCORE_ALL" bash "$BENCH_DIR/files" "$BENCH_DIR/rss.each" "$@"; }
fincore_list() { bash -c "$FINCORE_ALL" bash "$1" "$BENCH_DIR/rss.each" -r -n -b; }
# how many files one fincore run gets
per_run=$(tr '\n' '\0' < "$BENCH_DIR/files" | xargs -0 -s 2000000 sh -c 'echo $#' sh | awk 'NR == 1')
head -n 10000 "$BENCH_DIR/files" > "$BENCH_DIR/files.10k"
head -n "$per_run" "$BENCH_DIR/files" > "$BENCH_DIR/files.run"

say "bench: $nfiles files, fincore gets $per_run a run; $(nproc) CPUs, load: $(cut -d' ' -f1-3 /proc/loadavg)"
measure "fincore -r -n -b (find | xargs)" fincore_all -r -n -b
measure "fincore (find | xargs)" fincore_all
measure "fincore -r, 10000 files" fincore_list "$BENCH_DIR/files.10k"
measure "fincore -r, $per_run files" fincore_list "$BENCH_DIR/files.run"
measure "hotset status -r -n -b" "$HOTSET" status -r -n -b "$TREE"
measure "hotset status -o RES,PAGES,SIZE,FILE" "$HOTSET" status -o RES,PAGES,SIZE,FILE "$TREE"
measure "hotset status -r, 10000 files" "$HOTSET" status -r -n -b "$TREE"/d000{0..9}
measure "hotset status (totals)" "$HOTSET" status "$TREE"

raw="hotset status -r -n -b"
printf '\n== fincore'"'"'s table of %s files (median of %s runs)\n' "$nfiles" "$REPEATS"
printf '%-40s %9s %12s %10s %10s\n' "tool" "seconds" "peak KiB" "s / hotset" "KiB / hotset"
for l in "${LABELS[@]}"; do
	printf '%-40s %9.2f %12d %10s %10s\n' "$l" "${WALL[$l]}" "${RSS[$l]}" \
		"$(ratio "${WALL[$l]}" "${WALL[$raw]}")" "$(ratio "${RSS[$l]}" "${RSS[$raw]}")"
done
f10="fincore -r, 10000 files" frun="fincore -r, $per_run files"
printf '\n  fincore: %s KiB more for %s more rows in one run (%s bytes a row): it holds the table\n' \
	"$((RSS[$frun] - RSS[$f10]))" "$((per_run - 10000))" \
	"$(awk -v a="${RSS[$frun]}" -v b="${RSS[$f10]}" -v n=$((per_run - 10000)) 'BEGIN { printf "%.0f", (a - b) * 1024 / n }')"
printf '  hotset: %s KiB for 10000 files, %s KiB for %s: rows are written as they are found\n' \
	"${RSS["hotset status -r, 10000 files"]}" "${RSS[$raw]}" "$nfiles"
check_goal "fincore (find | xargs) / hotset status -r, wall" \
	"$(ratio "${WALL["fincore -r -n -b (find | xargs)"]}" "${WALL[$raw]}")" ">=" 1
check_goal "hotset status -r peak RSS / fincore's, one run" \
	"$(ratio "${RSS[$raw]}" "${RSS[$frun]}")" "<=" 1
