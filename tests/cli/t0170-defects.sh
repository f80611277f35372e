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
	grep -q "^hotset: an empty report FILE names no file" err &&
	expect_code 125 hs record --report "" -- touch ran 2> err &&
	grep -q "^hotset: an empty report FILE names no file" err &&
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

# ---- C1 control characters ----------------------------------------------------

# Names with C1 controls: the raw byte 0x9b (CSI in Latin-1 terminals) and
# U+009B in UTF-8 (0xc2 0x9b), beside UTF-8 whose bytes 0x80-0x9f are not
# controls (a with macron: 0xc4 0x81) and must pass.
c1_raw=$(printf 'r\x9bq') c1_utf8=$(printf 'u\xc2\x9bq') utf8=$(printf 'a\xc4\x81')

test_expect_success 'status -v and its warnings escape C1 controls, raw or UTF-8' '
	printf x > "$c1_raw" && printf x > "$c1_utf8" && printf x > "$utf8" &&
	hs status -v -j 1 "$c1_raw" "$c1_utf8" "$utf8" > out &&
	grep -Fq " r\\x9bq" out && grep -Fq " u\\xc2\\x9bq" out && grep -Fq " $utf8" out &&
	! grep -q "$(printf "\x9b")" out &&
	expect_code 1 hs status "$c1_raw/x" "$c1_utf8/x" > out 2> err &&
	grep -Fxq "hotset: r\\x9bq/x: cannot open: Not a directory" err &&
	grep -Fxq "hotset: u\\xc2\\x9bq/x: cannot open: Not a directory" err &&
	expect_code 2 hs status -p "$c1_utf8.prof" 2> err &&
	grep -Fq "hotset: u\\xc2\\x9bq.prof: " err &&
	! grep -q "$(printf "\x9b")" err
'

test_expect_success 'show escapes C1 controls in paths, the profile name, host and kernel' '
	{
		printf "hotset-profile 1\nsource snapshot\npage-size 4096\n"
		printf "host h\x9bst\nkernel k\xc2\x9b1\n"
		printf "f 0:0 1 1 1.000000000 - 0 /%s\n" "$c1_raw"
		printf "f 0:0 2 1 1.000000000 - 0 /%s\n" "$c1_utf8"
		printf "f 0:0 3 1 1.000000000 - 0 /%s\n" "$utf8"
		printf "end 3 0 0\n"
	} > "$c1_raw.prof" &&
	hs show "$c1_raw.prof" > out &&
	grep -Fxq "Profile:  r\\x9bq.prof" out &&
	grep -Fq " on h\\x9bst, Linux k\\xc2\\x9b1," out &&
	grep -Fq " /r\\x9bq" out && grep -Fq " /u\\xc2\\x9bq" out && grep -Fq " /$utf8" out &&
	! grep -q "$(printf "\x9b")" out &&
	hs show --json "$c1_raw.prof" > j &&
	check_eq "$(json j "j[\"files\"][1][\"path\"] == \"/u\\u009bq\"")" 1
'

test_expect_success REALFS 'warm and evict: warnings, and where a budget stopped, escape C1 controls' '
	mkpages "$c1_utf8" 4 &&
	printf "hotset-profile 1\nsource snapshot\npage-size %s\nf 0:0 0 0 0.000000000 - 0-3 %s\nend 1 0 0\n" \
		"$ps" "$PWD/$c1_utf8" > p.prof &&
	hs warm -q --budget $ps -p p.prof > out &&
	grep -Fq "stopped at $PWD/u\\xc2\\x9bq, page 1" out &&
	rm "$c1_utf8" &&
	expect_code 1 hs warm -p p.prof > out 2> err &&
	grep -Fq "/u\\xc2\\x9bq: " err &&
	expect_code 1 hs evict -p p.prof > out 2> err &&
	grep -Fq "/u\\xc2\\x9bq: " err &&
	! grep -q "$(printf "\x9b")" err
'

# ---- resident bytes within the file's size -----------------------------------------

# status_bytes ARGS...: "(bytes, resident_bytes)" of status --json ARGS
status_bytes() { hs status --json "$@" > j && json j "(j[\"bytes\"], j[\"resident_bytes\"])"; }

test_expect_success REALFS 'resident bytes never exceed the size: the last page counts its bytes only' '
	size=$((2 * ps + 1000)) &&
	head -c $size /dev/zero > f && printf x > one && head -c $((2 * ps)) /dev/zero > whole &&
	check() {
		pagetool evict f one whole && pagetool read f 0-2 && pagetool read one 0 &&
		pagetool read whole 0-1 &&
		check_eq "$(status_bytes f)" "($size, $size)" &&
		check_eq "$(status_bytes one)" "(1, 1)" &&
		check_eq "$(status_bytes whole)" "($((2 * ps)), $((2 * ps)))" &&
		hs status f > out &&
		grep -q "^  Resident: 3 (12.0 KiB of memory, 9.0 KiB of file data) 100.0%$" out &&
		grep -q "^     Pages: 3 (12.0 KiB of memory, 9.0 KiB of file data)$" out &&
		hs status -v f > out && grep -Eq "100.0% +9.0 KiB / 9.0 KiB +f$" out &&
		pagetool evict f && pagetool read f 0 2 &&
		check_eq "$(status_bytes f)" "($size, $((ps + 1000)))" &&
		HOTSET_NO_CACHESTAT=1 status_bytes f > got && check_eq "$(cat got)" "($size, $((ps + 1000)))" &&
		pagetool evict f && pagetool read f 0 1 &&
		check_eq "$(status_bytes f)" "($size, $((2 * ps)))"
	} &&
	[ "$ps" -eq 4096 ] && retry check
'

test_expect_success REALFS '-p: a listed last page counts for the bytes of the file in it' '
	size=$((3 * ps + 10)) &&
	head -c $size /dev/zero > f && pagetool evict f &&
	printf "hotset-profile 1\nsource snapshot\npage-size %s\nf 0:0 0 0 0.000000000 - 1,3 %s\nend 1 0 0\n" \
		"$ps" "$PWD/f" > p.prof &&
	check() {
		pagetool evict f && pagetool read f 1 3 &&
		check_eq "$(status_bytes -q -p p.prof)" "($((ps + 10)), $((ps + 10)))"
	} &&
	retry check
'

test_expect_success NOBODY 'as an unprivileged user: no resident bytes where residency is unknown' '
	head -c 5000 /dev/zero > f && chmod 644 f &&
	as_nobody "$HOTSET" status --json f > j &&
	check_eq "$(json j "(j[\"bytes\"], j[\"resident_bytes\"], j[\"unknown_files\"])")" "(5000, 0, 1)" &&
	chown nobody f && pagetool read f 0-1 &&
	as_nobody "$HOTSET" status --json f > j &&
	check_eq "$(json j "(j[\"bytes\"], j[\"resident_bytes\"])")" "(5000, 5000)"
'

# ---- status counts the operands it skipped ----------------------------------------

test_expect_success 'status says how many operands it skipped, in words and in JSON' '
	expect_code 1 hs status missing1 missing2 > out 2> err &&
	grep -qx "     Files: 0 (2 skipped with a warning)" out &&
	expect_code 1 hs status --json missing1 missing2 > j 2> err &&
	check_eq "$(json j "(j[\"files\"], j[\"skipped_files\"])")" "(0, 2)" &&
	printf x > f && hs snapshot -o p.prof f > /dev/null &&
	expect_code 1 hs status -p p.prof f elsewhere > out 2> err &&
	grep -qx "     Files: 1 (1 skipped with a warning)" out &&
	hs status f > out && grep -qx "     Files: 1" out
'

test_expect_success NOBODY 'as an unprivileged user: unknown and skipped files, each counted' '
	mkdir d && printf x > d/readable && printf x > d/unreadable && chmod 600 d/unreadable &&
	expect_code 1 as_nobody "$HOTSET" status d > out 2> err &&
	grep -qx "     Files: 1 (1 unknown, 1 skipped with a warning)" out &&
	expect_code 1 as_nobody "$HOTSET" status --json d > j 2> err &&
	check_eq "$(json j "(j[\"files\"], j[\"unknown_files\"], j[\"skipped_files\"])")" "(1, 1, 1)"
'

# ---- sizes ---------------------------------------------------------------------

test_expect_success 'sizes: the forms the man page defines are accepted, exactly' '
	printf x > f &&
	while read -r size want; do
		hs warm -q --json --budget "$size" f > j &&
		check_eq "$(json j "j[\"budget_bytes\"]")" "$want" || return 1
	done <<-EOF &&
	4096 4096
	10K 10240
	10k 10240
	10KiB 10240
	10kib 10240
	10KB 10240
	10Ki 10240
	1.5G 1610612736
	.5M 524288
	0.3K 307
	15E 17293822569102704640
	18446744073709551615 18446744073709551615
	EOF
	ram=$(awk "/^MemTotal:/ { print \$2 * 1024 }" /proc/meminfo) &&
	hs warm -q --json --budget 10% f > j &&
	json j "abs(j[\"budget_bytes\"] - $ram / 10) < $ram / 100" > ok && check_eq "$(cat ok)" 1 &&
	hs warm -q --json --inflight 1M --chunk 8K f > j &&
	check_eq "$(json j "(j[\"inflight_bytes\"], j[\"chunk_bytes\"])")" "(1048576, 8192)"
'

test_expect_success 'sizes: anything else is refused, naming the option, exit 2' '
	printf x > f &&
	for size in 1e9 1E3 0x10 inf nan -5 +5 "" " 10K" "10K " "10 K" 10Kx 10KiBs 10B 1.5 1.0 . .K \
		18446744073709551616 16E 99999999999999999999K 101% 10%% 1,5G; do
		expect_code 2 hs warm --budget "$size" f > out 2> err &&
		grep -Fq "hotset: --budget: '\''$size'\'' is not a size" err &&
		test ! -s out || { echo "accepted: [$size]" >&2; return 1; }
	done &&
	expect_code 2 hs warm --inflight 1e9 f 2> err && grep -q "^hotset: --inflight: .1e9. is not a size" err &&
	expect_code 2 hs warm --chunk 4e3 f 2> err && grep -q "^hotset: --chunk: .4e3. is not a size" err &&
	expect_code 2 hs warm --budget 0 f 2> err && grep -q "^hotset: --budget takes a size above 0" err
'

test_expect_success '--budget: keep, run and warm refuse a size in the same words' '
	printf x > f && printf "a true\n" > jobs &&
	for cmd in "keep p" "run jobs" "warm f"; do
		expect_code 2 hs ${cmd%% *} --budget 1e9 ${cmd#* } 2> err &&
		grep -Fqx "hotset: --budget: '\''1e9'\'' is not a size: give bytes, or a number with K, M, G, T, P or E (powers of 1024), or a percentage of RAM (4096, 512M, 1.5G, 10%)" err ||
		{ echo "$cmd: $(cat err)" >&2; return 1; }
	done &&
	expect_code 2 hs keep --budget 100 p 2> err &&
	grep -q "^hotset: --budget takes a size of at least a page" err &&
	expect_code 2 hs run --budget 100 jobs 2> err &&
	grep -q "^hotset: --budget takes a size of at least a page" err
'

# ---- a snapshot that cannot be written --------------------------------------------

test_expect_success 'a snapshot that cannot be written exits 2, the old profile kept' '
	mkdir d && for i in $(seq 1 200); do printf x > d/$i; done && cat d/* > /dev/null &&
	printf "old\n" > s.prof &&
	( trap "" XFSZ && ulimit -f 1 && exec "$HOTSET" snapshot -o s.prof d ) > out 2> err && rc=0 || rc=$? &&
	check_eq "$rc" 2 &&
	grep -q "^hotset: s.prof: cannot write: File too large$" err &&
	check_eq "$(cat s.prof)" old &&
	! ls s.prof.tmp* 2> /dev/null &&
	expect_code 2 hs snapshot -o - d > /dev/full 2> err &&
	grep -q "^hotset: -: cannot write: No space left on device$" err
'

test_expect_success NOBODY 'as an unprivileged user: a snapshot that cannot be written exits 2' '
	mkdir d && for i in $(seq 1 200); do printf x > d/$i; done && chown -R nobody d &&
	cat d/* > /dev/null &&
	expect_code 2 as_nobody "$HOTSET" snapshot -o - d > /dev/full 2> err &&
	grep -q "^hotset: -: cannot write: No space left on device$" err
'

test_done
