#!/usr/bin/env bash
# As an unprivileged user, on files it may read but not write, the kernel
# will not tell residency (cachestat: EPERM; mincore: "all resident").
# Such files are unknown and counted apart, never shown as resident;
# files the user owns or may write are known; evict still works.
. "$(dirname "$0")/../lib.sh"

nobody() { as_nobody "$HOTSET" "$@"; }

# ro: root's, read-only for others; rw: root's, writable by all;
# own: nobody's. All fully resident.
setup() {
	mkdir -p d &&
	mkpages d/ro 4 && mkpages d/rw 3 && mkpages d/own 2 &&
	chmod 644 d/ro && chmod 666 d/rw && chown nobody:nogroup d/own &&
	pagetool read d/ro 0-3 && pagetool read d/rw 0-2 && pagetool read d/own 0-1
}

test_expect_success NOBODY,REALFS 'files nobody cannot write are unknown, never resident' '
	setup &&
	nobody status --json d/ro > j &&
	check_eq "$(json j "(j[\"files\"], j[\"unknown_files\"], j[\"unknown_pages\"])")" "(1, 1, 4)" &&
	check_eq "$(json j "(j[\"pages\"], j[\"resident_pages\"], j[\"resident_bytes\"])")" "(4, 0, 0)" &&
	check_eq "$(json j "(j[\"dirty_pages\"], j[\"evicted_pages\"], j[\"method\"])")" "(None, None, None)" &&
	nobody status -v --json d/ro > j &&
	check_eq "$(json j "[(i[\"path\"], i[\"pages\"], i[\"unknown\"]) for i in j[\"items\"]]")" "[('"'"'d/ro'"'"', 4, True)]" &&
	check_eq "$(json j "set(v for k, v in j[\"items\"][0].items() if k.startswith(\"resident_\") or k.endswith(\"_pages\") and k != \"pages\")")" "{None}" &&
	nobody status -v d/ro > out &&
	grep -Eq "^\[\?{20}\] +\? +unknown / 16.0 KiB +d/ro$" out &&
	grep -q "Files: 1 (1 unknown)" out &&
	grep -q "Residency of 1 file is unknown" out &&
	! grep -q "100.0%" out
'

test_expect_success NOBODY,REALFS 'the table: ? where residency is unknown, never a number' '
	setup &&
	nobody status -r -n -b -o RES,PAGES,SIZE,FILE,UNKNOWN,RES%,DIRTY_PAGES,EVICTED d/ro d/own > out 2> err &&
	check_eq "$(sed -n 1p out)" "? ? 16384 d/ro yes ? ? ?" &&
	sed -n 2p out | grep -Eq "^[0-9]+ [0-9]+ 8192 d/own no [0-9.]+% [0-9-]+ [0-9a-zA-Z-]+$" &&
	grep -q "residency of 1 file is unknown (shown as ?)" err &&
	HOTSET_NO_CACHESTAT=1 nobody status -r -n -o RES,PAGES,FILE d/ro > out &&
	check_eq "$(cat out)" "? ? d/ro" &&
	nobody status -q -o RES,FILE d/ro > out 2> err && test ! -s err &&
	check_eq "$(cat out)" "RES FILE
  ? d/ro"
'

test_expect_success NOBODY,REALFS 'owned or writable files are known, and counted exactly' '
	setup &&
	check() {
		nobody status -v --json d > j &&
		check_eq "$(json j "(j[\"files\"], j[\"unknown_files\"], j[\"pages\"], j[\"resident_pages\"])")" "(3, 1, 9, 5)" &&
		check_eq "$(json j "sorted((i[\"path\"], i[\"resident_pages\"]) for i in j[\"items\"]) == [(\"d/own\", 2), (\"d/ro\", None), (\"d/rw\", 3)]")" 1
	} &&
	retry check &&
	nobody status d > out &&
	grep -q "of the 5 pages that can be known" out
'

test_expect_success NOBODY,REALFS 'with -p too' '
	setup &&
	printf "hotset-profile 1\npage-size $ps\nsource snapshot\nf 0:0 0 0 0.000000000 r 0-1 $PWD/d/ro\nf 0:0 0 0 0.000000000 r 1 $PWD/d/rw\nend 2 0 0\n" > p.prof &&
	chmod 644 p.prof &&
	check() {
		pagetool read d/rw 0-2 &&
		nobody status -p p.prof --json > j &&
		check_eq "$(json j "(j[\"files\"], j[\"unknown_files\"], j[\"pages\"], j[\"resident_pages\"])")" "(2, 1, 3, 1)"
	} &&
	retry check
'

test_expect_success NOBODY,REALFS 'evict as nobody works on files it may only read' '
	setup &&
	nobody evict --json d > j &&
	check_eq "$(json j "(j[\"files\"], j[\"unknown_files\"], j[\"skipped_files\"])")" "(3, 1, 0)" &&
	nobody evict d > out &&
	grep -q "^Evicted .* from 2 files$" out &&
	grep -q "^Asked the kernel to drop 1 more file (16.0 KiB of memory) whose residency is unknown" out &&
	setup && nobody evict -v --json d > j &&
	check_eq "$(json j "(j[\"items\"], j[\"unknown_files\"])")" "([], 1)" &&
	check_eq "$(pagetool resident d/ro)$(pagetool resident d/rw)$(pagetool resident d/own)" ""
'

test_expect_success NOBODY,REALFS 'warm as nobody reads unknown files in full, and says so' '
	setup &&
	pagetool evict d/ro &&
	nobody warm --json d/ro > j &&
	check_eq "$(json j "(j[\"unknown_files\"], j[\"unknown_pages\"], j[\"read_pages\"])")" "(1, 4, 0)" &&
	check_eq "$(pagetool resident d/ro)" "0-3" &&
	nobody warm d/ro > out &&
	grep -q "^  Resident: 0 (0 B of memory) before, 0 (0 B of memory) read; 4 (16.0 KiB of memory) of unknown residency read in full$" out &&
	grep -q "^Residency of 1 file is unknown (no write permission): read in full,$" out
'

test_expect_success NOBODY,REALFS 'snapshot as nobody leaves unknown files out, and says so' '
	setup && mkdir out && chown nobody out &&
	check() {
		pagetool read d/ro 0-3 && pagetool read d/rw 0-2 && pagetool read d/own 0-1 &&
		expect_code 1 nobody snapshot -o out/s.prof d > /dev/null 2> err &&
		grep -q "^hotset: $PWD/d/ro: left out: residency unknown without write permission$" err &&
		check_eq "$(grep -c "^f " out/s.prof)" 2 &&
		! grep -q "d/ro$" out/s.prof
	} &&
	retry check
'

# (an empty file has no page to ask about: it is known, and empty)
test_expect_success NOBODY 'the real /usr/include, as nobody: all unknown, none resident' '
	cat /usr/include/stdio.h > /dev/null &&
	nobody status -v --json /usr/include > j &&
	check_eq "$(json j "all(i[\"resident_pages\"] is None for i in j[\"items\"] if i[\"pages\"])")" 1 &&
	check_eq "$(json j "j[\"unknown_files\"] == len([i for i in j[\"items\"] if i[\"pages\"]]) > 1000")" 1 &&
	check_eq "$(json j "(j[\"resident_pages\"], j[\"unknown_pages\"] == j[\"pages\"])")" "(0, True)"
'

test_done
