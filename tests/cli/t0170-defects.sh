#!/usr/bin/env bash
# Defects found by trying hotset as a new user would, each kept fixed:
# an empty operand is refused, not taken for the working directory;
# C1 control characters are escaped in human output; resident bytes never
# exceed a file's size; many warnings cost little; status says how many
# operands it skipped; sizes are parsed strictly; a snapshot that cannot
# be written fails as a command (exit 2), not as "some files left out".
. "$(dirname "$0")/../lib.sh"

hs() { timeout 60 "$HOTSET" "$@"; }

# ---- empty operands ---------------------------------------------------------

test_expect_success REALFS 'evict "": refused with exit 2, nothing evicted (not even the other PATHs)' '
	mkdir d && mkpages d/f 4 && mkpages g 4 &&
	pagetool read d/f 0-3 && pagetool read g 0-3 &&
	cd d &&
	expect_code 2 hs evict "" > out 2> err &&
	grep -q "^hotset: an empty PATH names no file" err &&
	test ! -s out &&
	expect_code 2 hs evict ../g "" 2> err &&
	grep -q "^hotset: an empty PATH names no file" err &&
	check_eq "$(pagetool resident f)" 0-3 &&
	check_eq "$(pagetool resident ../g)" 0-3
'

test_expect_success NOBODY 'evict "" as an unprivileged user: refused, exit 2' '
	mkdir d && printf x > d/f && chown -R nobody d &&
	cd d &&
	expect_code 2 as_nobody "$HOTSET" evict "" 2> err &&
	grep -q "^hotset: an empty PATH names no file" err
'

test_expect_success 'status, warm, evict and snapshot refuse an empty PATH before any work' '
	printf x > f &&
	for c in status warm evict; do
		expect_code 2 hs $c f "" > out 2> err &&
		grep -q "^hotset: an empty PATH names no file" err &&
		grep -q "^Try .hotset $c --help." err &&
		test ! -s out || return 1
	done &&
	expect_code 2 hs snapshot -o s.prof "" f 2> err &&
	grep -q "^hotset: an empty PATH names no file" err &&
	test ! -e s.prof &&
	hs snapshot -o s.prof f 2> err &&
	expect_code 2 hs status -p s.prof "" 2> err &&
	grep -q "^hotset: an empty PATH names no file" err
'

# record and time refuse an empty -o before the job runs, with 125 as for
# any output they cannot write (t0120 holds record to it).
test_expect_success 'an empty -p PROFILE, show "", and an empty -o are refused' '
	for c in status warm evict; do
		expect_code 2 hs $c -p "" 2> err &&
		grep -q "^hotset: an empty PROFILE names no file" err || return 1
	done &&
	expect_code 2 hs show "" 2> err &&
	grep -q "^hotset: an empty PROFILE names no file" err &&
	printf x > f &&
	expect_code 2 hs snapshot -o "" f 2> err &&
	grep -q "^hotset: -o: an empty PROFILE names no file" err &&
	expect_code 125 hs record -o "" -- touch ran 2> err &&
	grep -q "^hotset: : cannot write the profile: an empty path" err &&
	expect_code 125 hs time -o "" -- touch ran 2> err &&
	grep -q "^hotset: -o: an empty FILE names no file" err &&
	test ! -e ran
'

# ---- warnings: one write each --------------------------------------------------

prereq_STRACE() { command -v strace >/dev/null; }

# gone_profile N: a profile of N entries whose files do not exist.
gone_profile() {
	python3 - "$1" "$PWD" <<-\PY
	import sys
	n, d = int(sys.argv[1]), sys.argv[2]
	print("hotset-profile 1\nsource snapshot\npage-size 4096")
	for i in range(n):
	    print("f 0:0 %d 4096 1.000000000 - 0 %s/gone/file-%06d" % (i + 1, d, i))
	print("end %d 0 0" % n)
	PY
}

test_expect_success STRACE 'a warning costs one write, not one per byte; none is lost' '
	gone_profile 1000 > gone.prof &&
	# LeakSanitizer (SANITIZE=1 builds) cannot work under a tracer
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
		expect_code 1 strace -f -qq -o trace -e trace=write "$HOTSET" status -p gone.prof > out 2> err &&
	check_eq "$(grep -c "^hotset: .*/gone/file-[0-9]*: no longer exists, skipped" err)" 1000 &&
	check_eq "$(wc -l < err)" 1000 &&
	writes=$(grep -c "write(2, " trace) &&
	{ [ "$writes" -le 1010 ] || { echo "$writes writes to stderr for 1000 warnings" >&2; false; }; }
'

test_expect_success NOBODY 'warnings of walking threads come whole, one per line' '
	mkdir t && for i in $(seq 1 8); do mkdir t/$i && for j in $(seq 1 50); do printf x > t/$i/$j; done; done &&
	chmod 000 t/*/* &&
	expect_code 1 as_nobody "$HOTSET" status -j 8 t > out 2> err &&
	check_eq "$(grep -c "^hotset: t/[0-9]*/[0-9]*: cannot open: Permission denied$" err)" 400 &&
	check_eq "$(wc -l < err)" 400
'

test_done
