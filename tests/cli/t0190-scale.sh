#!/usr/bin/env bash
# Scale: a tree of 1,000,000 files and a profile of 1,000,000 entries.
# status (its totals and fincore's table), warm (of a cached tree, and from
# the disk: files open only while their reads are in flight, physical
# sorting on bounded batches) and show (its summary too, with as many
# directories as files) must finish with memory that does not grow with
# the number of files: nothing is kept per file but the current one (and
# hard links, of which this tree has none, and show's bounded table of
# directories), and a profile's pages are given back as they are parsed.
# The tree is made once, for both tests.
#
# The bound: peak RSS at most 32 MiB (64 MiB under ASan, whose shadow and
# allocator add their own). hotset needs 3-4 MiB here (20-30 MiB under
# ASan). Anything that grew with the file count would break it: 32 bytes a
# file is 32 MB, and the profile alone is 64 MB, so holding it whole (as a
# resident mapping, say) fails too. The peak is measured by a small helper
# (tests/helpers/maxrss): a shell or Python measuring would count itself.
#
# Slow (two to four minutes, most of it making and removing a million
# files), so it runs only with HOTSET_TEST_SCALE=1.
# The timings and peaks go to the TAP output as comments.
. "$(dirname "$0")/../lib.sh"

prereq_SCALE() { [ "${HOTSET_TEST_SCALE:-0}" = 1 ]; }
prereq_INODES() { [ "$(df --output=iavail "$TRASH" | tail -n 1)" -gt 1100000 ]; }

ndirs=1000 perdir=1000 total=1000000
# the measurements go to the TAP output as comments, through fd 3
exec 3>&1
note() { echo "# $*" >&3; }
if ldd "$HOTSET" 2>/dev/null | grep -q libasan; then bound=65536; else bound=32768; fi

# peak_rss OUT CMD...: run CMD with stdout to OUT; print its peak RSS in KiB
peak_rss() {
	local out=$1; shift
	"$HELPERS/maxrss" "$@" 2>&1 > "$out" | tail -n 1
}

tree=$TRASH/tree prof=$TRASH/p.prof

test_expect_success SCALE,INODES "status on a tree of $total files, and -p on a profile of as many" '
	start=$SECONDS &&
	"$HELPERS/mkfiles" make "$tree" $ndirs $perdir 100 "$prof" &&
	note "made $total files in $((SECONDS - start)) s" &&

	start=$SECONDS &&
	rss=$(peak_rss j "$HOTSET" status --json "$tree") &&
	note "status: $((SECONDS - start)) s, peak RSS $rss KiB (bound $bound KiB)" &&
	check_eq "$(json j "(j[\"files\"], j[\"pages\"], j[\"bytes\"], j[\"skipped_files\"])")" "($total, $((total / 100)), $((total / 100 * $(getconf PAGESIZE))), 0)" &&
	test "$rss" -le $bound &&

	start=$SECONDS &&
	rss=$(peak_rss rows "$HOTSET" status -r -n -b "$tree") &&
	note "status -r (fincore'"'"'s raw table): $((SECONDS - start)) s, peak RSS $rss KiB" &&
	check_eq "$(wc -l < rows)" $total && test "$rss" -le $bound &&

	start=$SECONDS &&
	rss=$(peak_rss rows "$HOTSET" status -o RES,PAGES,SIZE,FILE "$tree") &&
	note "status -o (the aligned table): $((SECONDS - start)) s, peak RSS $rss KiB" &&
	check_eq "$(wc -l < rows)" $((total + 1)) && test "$rss" -le $bound && rm rows &&

	start=$SECONDS &&
	rss=$(peak_rss j "$HOTSET" status -p "$prof" --json) &&
	note "status -p: $((SECONDS - start)) s, peak RSS $rss KiB" &&
	check_eq "$(json j "(j[\"files\"], j[\"pages\"], j[\"skipped_files\"])")" "($total, $((total / 100)), 0)" &&
	test "$rss" -le $bound &&

	start=$SECONDS &&
	rss=$(peak_rss j "$HOTSET" warm -q --json "$tree") &&
	note "warm: $((SECONDS - start)) s, peak RSS $rss KiB" &&
	check_eq "$(json j "(j[\"files\"], j[\"pages\"], j[\"skipped_files\"])")" "($total, $((total / 100)), 0)" &&
	test "$rss" -le $bound &&

	start=$SECONDS &&
	rss=$(peak_rss j "$HOTSET" warm -q --json -p "$prof") &&
	note "warm -p: $((SECONDS - start)) s, peak RSS $rss KiB" &&
	check_eq "$(json j "(j[\"files\"], j[\"pages\"], j[\"skipped_files\"])")" "($total, $((total / 100)), 0)" &&
	test "$rss" -le $bound &&

	start=$SECONDS &&
	rss=$(peak_rss /dev/null "$HOTSET" show --json "$prof") &&
	note "show --json: $((SECONDS - start)) s, peak RSS $rss KiB" &&
	test "$rss" -le $bound &&

	start=$SECONDS &&
	rss=$(peak_rss out "$HOTSET" show "$prof") &&
	note "show: $((SECONDS - start)) s, peak RSS $rss KiB" &&
	grep -q "^Total:    $total files" out &&
	test "$rss" -le $bound &&

	# the summary'"'"'s worst case: a directory per file
	awk "BEGIN { print \"hotset-profile 1\npage-size 4096\nsource snapshot\";
		for (i = 0; i < $total; i++) printf \"f 1:2 %d 8192 1.000000000 r 0-1 /d/%d/f\n\", i, i;
		print \"end $total 0 0\" }" > dirs.prof &&
	start=$SECONDS &&
	rss=$(peak_rss out "$HOTSET" show dirs.prof) &&
	note "show, a directory per file: $((SECONDS - start)) s, peak RSS $rss KiB" &&
	grep -q "(top 10 of more than 32768 directories)" out &&
	test "$rss" -le $bound
'

test_expect_success SCALE,INODES,REALFS "warm of $total files from the disk, and -p in physical order" '
	test -e "$prof" &&
	"$HOTSET" evict -q "$tree" > /dev/null &&
	start=$SECONDS &&
	rss=$(peak_rss j "$HOTSET" warm --json "$tree") &&
	note "warm from the disk: $((SECONDS - start)) s, peak RSS $rss KiB" &&
	# (pages, not read_pages: what the writes left dirty was not evicted)
	check_eq "$(json j "(j[\"files\"], j[\"pages\"], j[\"skipped_files\"])")" "($total, $((total / 100)), 0)" &&
	test "$rss" -le $bound &&
	"$HOTSET" evict -q "$tree" > /dev/null &&
	start=$SECONDS &&
	rss=$(peak_rss j "$HOTSET" warm --json --order=physical -p "$prof") &&
	note "warm -p --order=physical from the disk: $((SECONDS - start)) s, peak RSS $rss KiB" &&
	check_eq "$(json j "(j[\"files\"], j[\"read_pages\"], j[\"skipped_files\"])")" "($total, $((total / 100)), 0)" &&
	test "$rss" -le $bound
'

# mkfiles removes a million files faster than rm -r
[ ! -d "$tree" ] || "$HELPERS/mkfiles" remove "$tree" $ndirs $perdir
test_done
