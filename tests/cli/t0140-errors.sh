#!/usr/bin/env bash
# Bad input and exit codes for show, status, snapshot and evict: --help
# exits 0, usage errors 2, a missing file 1 (the rest is done), a
# malformed or truncated profile 2 with "file:line: reason"; FIFOs,
# symlink loops and newlines in paths get clear messages, never a hang.
. "$(dirname "$0")/../lib.sh"

cmds="show status snapshot evict"
# Every command runs under a timeout: a hang is a failure, not a stuck CI.
hs() { timeout 20 "$HOTSET" "$@"; }
prereq_STRACE() { command -v strace >/dev/null; }

test_expect_success '--help everywhere exits 0 and prints the usage on stdout' '
	for c in $cmds; do
		hs $c --help > out 2> err &&
		grep -q "^usage: hotset $c " out && test ! -s err &&
		hs $c -h > out && grep -q "^usage: hotset $c " out &&
		hs help $c > out && grep -q "^usage: hotset $c " out || return 1
	done &&
	hs --help > out && grep -q "^Commands:" out &&
	hs --version > out && grep -q "^hotset [0-9]" out
'

test_expect_success 'an unknown option exits 2 and points at --help' '
	for c in $cmds; do
		expect_code 2 hs $c --no-such-option x 2> err &&
		grep -q "unknown option .--no-such-option." err &&
		grep -q "Try .hotset $c --help." err &&
		expect_code 2 hs $c -Z x 2> err || return 1
	done
'

test_expect_success 'no operand, or a bad option value, exits 2' '
	expect_code 2 hs show 2> err && grep -q "give exactly one PROFILE" err &&
	expect_code 2 hs show a b 2> err && grep -q "give exactly one PROFILE" err &&
	expect_code 2 hs status 2> err && grep -q "give a PATH, --files-from FILE or -p PROFILE" err &&
	expect_code 2 hs evict 2> err && grep -q "give a PATH, --files-from FILE or -p PROFILE" err &&
	expect_code 2 hs snapshot . 2> err && grep -q "give the profile to write with -o" err &&
	expect_code 2 hs snapshot -o x.prof 2> err && grep -q "give at least one PATH" err &&
	test ! -e x.prof &&
	expect_code 2 hs status -p 2> err &&
	expect_code 2 hs status -j 0 . 2> err && grep -q "threads" err &&
	expect_code 2 hs status -j lots . 2> err &&
	expect_code 2 hs status -j 65 . 2> err &&
	expect_code 2 hs 2> err &&
	expect_code 2 hs nosuch 2> err && grep -q "not a hotset command" err &&
	expect_code 2 hs --bogus 2> err &&
	expect_code 2 hs help nosuch 2> err
'

test_expect_success 'a missing file: told, the others done, exit 1' '
	printf x > f &&
	expect_code 1 hs status missing f > out 2> err &&
	grep -q "^hotset: missing: cannot open: No such file or directory$" err &&
	grep -q "Files: 1" out &&
	expect_code 1 hs evict missing f > out 2> err &&
	grep -q "^hotset: missing: cannot open: No such file or directory$" err &&
	grep -q "from 1 file (1 skipped with a warning)$" out &&
	expect_code 1 hs snapshot -o s.prof missing f > out 2> err &&
	grep -q "^hotset: $PWD/missing: cannot open: No such file or directory$" err &&
	test -s s.prof &&
	expect_code 1 hs status -q missing f > out 2> err &&
	test ! -s err
'

test_expect_success 'a missing or unreadable profile exits 2' '
	for c in "show" "status -p" "evict -p"; do
		expect_code 2 hs $c missing.prof 2> err &&
		grep -q "^hotset: missing.prof: No such file or directory$" err &&
		expect_code 2 hs $c . 2> err &&
		grep -q "^hotset: \.: not a regular file$" err &&
		: > empty.prof &&
		expect_code 2 hs $c empty.prof 2> err &&
		grep -Eq "^hotset: empty.prof(:1)?: (empty file: )?not a hotset profile" err || return 1
	done
'

# NAME CONTENT LINE REASON: a malformed profile, and where it must fail
bad_profiles() {
	h="hotset-profile 1\npage-size 4096\nsource snapshot\n"
	f="f 0:0 1 1 1.000000000 r 0 /nonexistent/a\n"
	cat <<LIST
magic|hotset-profil 1\n|1|not a hotset profile
version|hotset-profile 9\npage-size 4096\nsource snapshot\nend 0 0 0\n|1|profile version 9 is not supported
nopagesize|hotset-profile 1\nsource snapshot\nend 0 0 0\n|3|the header has no page-size line
twice|${h}source record\nend 0 0 0\n|4|header key source given twice
unknown|${h}colour blue\nend 0 0 0\n|4|unknown header line
number|${h}f 0:0 x 1 1.000000000 r 0 /a\nend 1 0 0\n|4|expected a number for the inode
overflow|${h}f 0:0 99999999999999999999 1 1.000000000 r 0 /a\nend 1 0 0\n|4|the inode is too large
reversed|${h}f 0:0 1 1 1.000000000 r 5-3 /a\nend 1 0 0\n|4|range 5-3 ends before it starts
overlap|${h}f 0:0 1 1 1.000000000 r 0-5,3 /a\nend 1 0 0\n|4|ranges overlap at page 3
beyond|${h}f 0:0 1 1 1.000000000 r 4503599627370496 /a\nend 1 0 0\n|4|beyond the largest possible file
escape|${h}f 0:0 1 1 1.000000000 r 0 /a\\\\q\nend 1 0 0\n|4|bad escape in the path
nul|${h}f 0:0 1 1 1.000000000 r 0 /a\\\\x00\nend 1 0 0\n|4|NUL byte in the path
control|${h}f 0:0 1 1 1.000000000 r 0 /a\tb\nend 1 0 0\n|4|raw control character 0x09
relative|${h}f 0:0 1 1 1.000000000 r 0 a\nend 1 0 0\n|4|the path is not absolute
trace|${h}${f}t 3 0\nend 1 0 1\n|5|trace refers to file 3
order|${h}o /out\n${f}end 1 1 0\n|5|file lines must come before output and trace lines
notrailer|${h}${f}|4|the last line is not "end"
after|${h}${f}end 1 0 0\n${f}|6|text after the "end" line
nonewline|${h}${f}end 1 0 0|5|does not end with a newline
cut|${h}${f}f 0:0 1 1 1.0000|5|does not end with a newline
count|${h}${f}end 2 0 0\n|5|the end line promises 2 files but the profile has 1
headeronly|${h}|3|truncated profile: no "end" line
LIST
}

test_expect_success '-p twice is a usage error, never a silent choice' '
	for c in show status warm evict curve doctor; do
		expect_code 2 hs $c -p a.prof -p b.prof 2> err &&
		grep -q "^hotset: -p given twice (.a.prof., then .b.prof.): one profile at a time" err ||
			{ echo "$c:"; cat err; return 1; }
	done
'

test_expect_success 'malformed and truncated profiles: file:line: reason, exit 2' '
	bad_profiles > list &&
	while IFS="|" read -r name content line reason; do
		printf "$content" > $name.prof &&
		for c in "show" "show --json" "status -p" "evict -p"; do
			expect_code 2 hs $c $name.prof > out 2> err &&
			grep -Fq "hotset: $name.prof:$line: " err &&
			grep -Fq "$reason" err ||
			{ echo "$c $name.prof: wanted line $line: $reason" >&2; cat err >&2; return 1; }
		done || return 1
	done < list &&
	check_eq "$(wc -l < list)" 22
'

test_expect_success 'a profile malformed after valid entries stops with its line' '
	printf x > a &&
	printf "hotset-profile 1\npage-size 4096\nsource snapshot\nf 0:0 1 1 1.000000000 r 0 $PWD/a\nf bogus\nend 2 0 0\n" > p.prof &&
	expect_code 2 hs status -p p.prof > out 2> err &&
	grep -q "^hotset: p.prof:5: expected a number for the device major number$" err &&
	expect_code 2 hs evict -p p.prof > out 2> err &&
	grep -q "^hotset: p.prof:5: " err &&
	expect_code 2 hs show p.prof > out 2> err &&
	grep -q "^hotset: p.prof:5: " err
'

test_expect_success 'a FIFO as an operand: told, never opened, no hang, exit 1' '
	mkfifo fifo && printf x > f &&
	for c in "status" "evict" "snapshot -o s.prof"; do
		expect_code 1 hs $c fifo f > out 2> err &&
		grep -Eq "^hotset: ($PWD/)?fifo: not a regular file or directory, skipped$" err || return 1
	done
'

test_expect_success 'a FIFO as the profile: refused without waiting for a writer' '
	mkfifo fifo &&
	for c in "show" "status -p" "evict -p"; do
		expect_code 2 hs $c fifo 2> err &&
		grep -q "^hotset: fifo: not a regular file$" err || return 1
	done
'

test_expect_success 'a FIFO inside a tree: skipped without a word, exit 0' '
	mkdir -p d/sub && mkfifo d/sub/fifo && printf x > d/f &&
	for c in "status" "status -L" "evict" "snapshot -o s.prof"; do
		hs $c d > out 2> err && test ! -s err || return 1
	done
'

test_expect_success STRACE 'a FIFO, inside a tree or named, is never opened' '
	mkdir d && mkfifo d/fifo named && printf x > d/f &&
	{ ASAN_OPTIONS=detect_leaks=0 strace -f -qq -e trace=open,openat -o trace timeout 20 "$HOTSET" status d named > /dev/null 2>&1 || true; } &&
	grep -q "\"f\"" trace &&
	! grep -E "\"(d/)?fifo\"|named\"" trace
'

test_expect_success 'symlink loops: an operand fails with ELOOP; inside a tree, -L ends' '
	ln -s loop loop && mkdir -p d/sub && printf x > d/sub/f &&
	ln -s .. d/sub/up && ln -s self d/self &&
	expect_code 1 hs status loop 2> err &&
	grep -q "^hotset: loop: cannot open: Too many levels of symbolic links$" err &&
	hs status --json d > j 2> err && test ! -s err &&
	check_eq "$(json j "j[\"files\"]")" 1 &&
	expect_code 1 hs status -L --json d > j 2> err &&
	check_eq "$(json j "j[\"files\"]")" 1 &&
	grep -q "^hotset: d/self: broken symlink: Too many levels of symbolic links$" err &&
	grep -q "^hotset: d/sub/up: symlink loop, not followed$" err &&
	expect_code 1 hs evict -L d > /dev/null 2>&1
'

test_expect_success '-L: a symlink to a directory met elsewhere is walked once, silently' '
	mkdir -p inc/png16 inc/other && printf x > inc/png16/f && ln -s png16 inc/png && ln -s ../png16 inc/other/png &&
	hs status -L --json inc > j 2> err && test ! -s err &&
	check_eq "$(json j "j[\"files\"]")" 1
'

test_expect_success '-L: a loop is told whichever way the walk reaches it first' '
	mkdir -p t1/a/b && printf x > t1/a/b/f && ln -s ../../a t1/a/b/up && ln -s a/b t1/s &&
	for i in $(seq 20); do
		expect_code 1 hs status -L --json t1 > j 2> err &&
		grep -q "/up: symlink loop, not followed$" err &&
		check_eq "$(json j "j[\"files\"]")" 1 || return 1
	done
'

test_expect_success '-L: a directory behind more symlinks than one lookup may follow is walked' '
	mkdir -p chain/tree &&
	for i in $(seq 45); do mkdir chain/c$i && printf x > chain/c$i/f || return 1; done &&
	ln -s ../c1 chain/tree/n &&
	for i in $(seq 44); do ln -s ../c$((i + 1)) chain/c$i/n || return 1; done &&
	hs status -L --json chain/tree > j 2> err && test ! -s err &&
	check_eq "$(json j "j[\"files\"]")" 45
'

test_expect_success 'paths longer than PATH_MAX: walked, and read back from a profile' '
	mkdir deep &&
	(cd deep && n=$(printf "d%.0s" $(seq 250)) &&
	 for i in $(seq 20); do mkdir $n && cd $n && printf x > f || exit 1; done) &&
	hs status --json deep > j 2> err && test ! -s err &&
	check_eq "$(json j "j[\"files\"]")" 20 &&
	hs snapshot -q -o deep.prof deep 2> err && test ! -s err &&
	hs evict -p deep.prof > /dev/null 2> err && test ! -s err &&
	hs warm -p deep.prof > /dev/null 2> err && test ! -s err &&
	hs status -p deep.prof --json > j 2> err && test ! -s err &&
	check_eq "$(json j "(j[\"files\"], j[\"pages\"])")" "(20, 20)"
'

test_expect_success 'paths with newlines: escaped in every message' '
	mkdir "dir
x" && printf x > "dir
x/f" &&
	expect_code 1 hs status "missing
name" "dir
x" > out 2> err &&
	grep -q "^hotset: missing\\\\x0aname: cannot open" err &&
	check_eq "$(wc -l < err)" 1 &&
	mkfifo "fi
fo" &&
	expect_code 1 hs evict "fi
fo" 2> err &&
	grep -q "^hotset: fi\\\\x0afo: not a regular file or directory, skipped$" err
'

test_expect_success '-p with a PATH that selects nothing: told, the rest done, exit 1' '
	mkdir d && printf x > d/f && printf y > other &&
	hs snapshot -o p.prof d > /dev/null &&
	for c in "status" "evict"; do
		hs $c -p p.prof d > out 2> err && test ! -s err &&
		expect_code 1 hs $c -p p.prof d other d/nothing > out 2> err &&
		grep -q "^hotset: other: no file of the profile is under it$" err &&
		grep -q "^hotset: d/nothing: no file of the profile is under it$" err &&
		check_eq "$(wc -l < err)" 2 || return 1
	done &&
	hs status -p p.prof > out 2> err && test ! -s err
'

test_expect_success '-p: entries outside the PATHs are not looked at, even if gone' '
	mkdir d e && printf x > d/f && printf y > e/g &&
	hs snapshot -o p.prof d e > /dev/null &&
	rm e/g &&
	for c in "status" "evict"; do
		hs $c -p p.prof d > out 2> err && test ! -s err &&
		expect_code 1 hs $c -p p.prof e > out 2> err &&
		grep -q "e/g: no longer exists, skipped" err || return 1
	done
'

test_expect_success 'a pseudo-filesystem operand is refused, not read' '
	expect_code 1 hs status /proc/self/status 2> err &&
	grep -q "on a proc filesystem, never read" err &&
	expect_code 1 hs evict /sys/kernel 2> err &&
	grep -q "on a sysfs filesystem, never read" err
'

test_done
