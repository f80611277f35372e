#!/usr/bin/env bash
# hotset evict: files, or a profile's pages, leave the page cache; dirty
# pages are written back first unless told not to; what stays (mapped,
# locked, dirty) is reported.
. "$(dirname "$0")/../lib.sh"

test_expect_success REALFS 'after evict, no page of the tree is resident' '
	mkdir -p d/sub && mkpages d/a 16 && mkpages d/sub/b 3 && printf "" > d/empty &&
	check() {
		pagetool read d/a 0-15 && pagetool read d/sub/b 0-2 &&
		hotset evict d > out &&
		grep -q "^Evicted 19 pages (76.0 KiB of memory) from 3 files$" out
	} &&
	retry check &&
	check_eq "$(pagetool resident d/a)" "" &&
	check_eq "$(pagetool resident d/sub/b)" "" &&
	hotset status --json d > j &&
	check_eq "$(json j "(j[\"pages\"], j[\"resident_pages\"])")" "(19, 0)"
'

test_expect_success REALFS '--json summary' '
	mkpages a 8 &&
	check() {
		pagetool read a 0-3 &&
		hotset evict --json a > j &&
		check_eq "$(json j "(j[\"files\"], j[\"pages\"], j[\"evicted_pages\"], j[\"stayed_pages\"], j[\"unknown_files\"], j[\"skipped_files\"])")" "(1, 8, 4, 0, 0, 0)"
	} &&
	retry check
'

# A profile with the given range list for each file named.
profile_of() {
	printf "hotset-profile 1\npage-size %s\nsource snapshot\n" "$ps"
	local n=0
	while [ $# -gt 0 ]; do
		printf "f 0:0 0 0 0.000000000 r %s %s\n" "$1" "$(readlink -f "$2")"
		shift 2; n=$((n + 1))
	done
	printf "end %d 0 0\n" $n
}

test_expect_success REALFS '-p evicts only the profile pages' '
	mkpages f 64 && mkpages other 2 &&
	profile_of 0-9,30,60-$((0x7fffffffffffffff / ps - 1)) f > p.prof &&
	check() {
		pagetool read f 0-63 && pagetool read other 0-1 &&
		hotset evict -p p.prof --json > j &&
		check_eq "$(json j "(j[\"files\"], j[\"pages\"], j[\"evicted_pages\"])")" "(1, 15, 15)" &&
		check_eq "$(pagetool resident f)" "10-29,31-59" &&
		check_eq "$(pagetool resident other)" 0-1
	} &&
	retry check
'

test_expect_success REALFS 'dirty pages are written back, then dropped' '
	head -c $((8 * ps)) /dev/zero > dirty &&
	hotset evict --json dirty > j &&
	check_eq "$(json j "j[\"stayed_pages\"]")" 0 &&
	check_eq "$(pagetool resident dirty)" ""
'

# DONTNEED itself starts writing dirty pages back (without waiting), so
# how many stay depends on how fast the disk is: only the sum is certain.
test_expect_success REALFS '--no-writeback does not wait: dirty pages stay, and are told' '
	check() {
		head -c $((8 * ps)) /dev/zero > dirty &&
		hotset evict --no-writeback --json dirty > j &&
		check_eq "$(json j "j[\"evicted_pages\"] + j[\"stayed_pages\"]")" 8 &&
		stayed=$(json j "j[\"stayed_pages\"]") &&
		hotset status --json dirty > j &&
		check_eq "$(json j "j[\"resident_pages\"]")" "$stayed"
	} &&
	retry check &&
	head -c $((8 * ps)) /dev/zero > dirty2 &&
	hotset evict --no-writeback dirty2 > out &&
	{ grep -q "page.* stayed: mapped, locked or dirty" out || grep -q "^Evicted 8 pages" out; } &&
	hotset evict --json dirty dirty2 > j &&
	check_eq "$(json j "j[\"stayed_pages\"]")" 0 &&
	check_eq "$(pagetool resident dirty)$(pagetool resident dirty2)" ""
'

test_expect_success REALFS 'pages mapped by a process stay, and are reported' '
	mkpages f 16 &&
	pagetool read f 0-15 &&
	mkfifo ready
	# a process maps pages 4-7 and touches them, then waits
	# (exec: $! must be the process that holds the mapping)
	(exec "$(command -v /usr/bin/python3 || command -v python3)" -c "
import mmap, os, signal
fd = os.open(\"f\", os.O_RDONLY)
m = mmap.mmap(fd, 4 * $ps, prot=mmap.PROT_READ, offset=4 * $ps)
s = sum(m[i * $ps] for i in range(4))
open(\"ready\", \"w\").write(\"go\n\")
signal.pause()
" < /dev/null > /dev/null 2>&1) &
	holder=$! &&
	trap "kill $holder 2>/dev/null || true" EXIT &&
	read -r go < ready &&
	hotset evict --json f > j &&
	check_eq "$(json j "j[\"stayed_pages\"]")" 4 &&
	check_eq "$(pagetool resident f)" 4-7 &&
	hotset evict -v f > out &&
	grep -q "^stayed: 4 pages ($((4 * ps / 1024)).0 KiB of memory) f$" out &&
	hotset evict -v --json f > j &&
	check_eq "$(json j "j[\"items\"] == [{\"path\": \"f\", \"stayed_pages\": 4, \"memory_only\": False}]")" 1 &&
	kill $holder && { wait $holder 2>/dev/null || true; } &&
	hotset evict --json f > j &&
	check_eq "$(json j "j[\"stayed_pages\"]")" 0
'

test_expect_success REALFS 'a missing PATH is told, the others are evicted, exit 1' '
	mkpages a 2 &&
	pagetool read a 0-1 &&
	expect_code 1 "$HOTSET" evict missing a > out 2> err &&
	grep -q "^hotset: missing: cannot open: No such file or directory$" err &&
	grep -q "^Evicted 2 pages (.*) from 1 file (1 skipped with a warning)$" out &&
	check_eq "$(pagetool resident a)" ""
'

# Written in large writes, the file is cached in large folios; truncated to
# mid-folio, the last one straddles the end. DONTNEED over [0, size) keeps
# any folio not wholly inside: evict must ask for "to the end" instead.
test_expect_success REALFS 'a file truncated after large writes is evicted in full' '
	python3 -c "import os; open(\"tz\", \"wb\").write(os.urandom(1 << 20)); os.truncate(\"tz\", 500000)" &&
	sync tz &&
	hotset evict --json tz > j &&
	check_eq "$(json j "(j[\"stayed_pages\"], j[\"skipped_files\"])")" "(0, 0)" &&
	check_eq "$(pagetool resident tz)" "" &&
	# a profile range that reaches the last page: the same (from page 0, as
	# a range starting inside a large folio cannot drop that folio)
	python3 -c "import os; open(\"tz\", \"wb\").write(os.urandom(1 << 20)); os.truncate(\"tz\", 500000)" &&
	sync tz &&
	profile_of 0-200 tz > p.prof &&
	hotset evict -q --json -p p.prof > j &&
	check_eq "$(json j "j[\"stayed_pages\"]")" 0 &&
	check_eq "$(pagetool resident tz)" ""
'

prereq_TMPFS() { [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ]; }

test_expect_success TMPFS 'files on tmpfs stay, and evict says why' '
	shm=$(mktemp -d /dev/shm/hotset-test.XXXXXX) &&
	head -c $((3 * ps)) /dev/zero > "$shm/f" &&
	hotset evict --json "$shm" > j &&
	hotset evict "$shm" > out &&
	rm -rf "$shm" &&
	check_eq "$(json j "(j[\"evicted_pages\"], j[\"stayed_pages\"], j[\"memory_only_pages\"])")" "(0, 3, 3)" &&
	grep -q "^Evicted 0 pages (0 B of memory) from 1 file; 3 pages (12.0 KiB of memory) stayed on tmpfs or ramfs, which keep files only in memory$" out
'

test_expect_success 'an empty file and an empty tree are fine' '
	mkdir d && printf "" > d/e &&
	hotset evict d > out &&
	grep -q "^Evicted 0 pages (0 B of memory) from 1 file$" out
'

test_done
