#!/usr/bin/env bash
# t0300-warm.sh - hotset warm: what it brings into the cache (all of a tree,
# exactly a profile's pages, up to a budget), and how it copes with FIFOs,
# files that shrink, unreadable residency, missing paths and bad options.
# Residency is checked independently (pagetool and fincore: mincore), right
# after warming.
source "$(dirname "$0")/../lib.sh"

PT=$HELPERS/pagetool
PS=$(getconf PAGESIZE)

# mkfile NAME PAGES [EXTRA_BYTES]: a file of that many pages (random bytes)
mkfile() { head -c $(($2 * PS + ${3:-0})) /dev/urandom > "$1"; }

# all_resident FILE...: every page of each file is resident
all_resident() {
	local f n want got
	for f in "$@"; do
		n=$(stat -c %s "$f")
		want=$(( (n + PS - 1) / PS ))
		got=$("$PT" resident "$f")
		case $want in
		0) continue ;;
		1) [ "$got" = 0 ] && continue ;;
		*) [ "$got" = "0-$((want - 1))" ] && continue ;;
		esac
		echo "$f: resident '$got' of $want pages" >&2
		return 1
	done
}

# profile OUT LINE...: a profile written by hand (the "f" lines of profile.c)
profile() {
	local out=$1; shift
	{
		printf 'hotset-profile 1\npage-size %s\nsource snapshot\n' "$PS"
		printf '%s\n' "$@"
		printf 'end %s 0 0\n' $#
	} > "$out"
}

# retry SCENARIO: run the shell function SCENARIO with set -e in a fresh
# directory, and again in another if it fails, three times at most.
# Residency checks can fail for reasons that are not ours: on the test
# machines a DAMON scheme pages out cache in regions it deems idle (a
# fresh page among old ones included), and other jobs drop caches. A page
# that warm left out fails every attempt; one evicted by someone else
# between warm and the check has been seen twice in a row on a loaded
# machine (under ASan the windows are longer).
retry() {
	local n
	for n in 1 2 3; do
		mkdir "attempt$n"
		( cd "attempt$n" && bash -ec "$1" ) && return 0
		[ $n = 3 ] || echo "# attempt $n failed, retrying (evicted meanwhile?)" >&2
	done
	return 1
}
export PT PS HOTSET HELPERS PYTHON	# what the helpers below use
export -f hotset mkfile all_resident profile check_eq json expect_code

# ---- scenarios run under retry -----------------------------------------

whole_tree() {
	mkdir -p t/sub/deeper
	mkfile t/a 1; mkfile t/b 3 100; mkfile t/sub/c 70; mkfile t/sub/deeper/d 600
	: > t/empty
	"$PT" evict t/a t/b t/sub/c t/sub/deeper/d
	test -z "$("$PT" resident t/sub/c)"
	hotset warm --json t > out.json
	all_resident t/a t/b t/sub/c t/sub/deeper/d
	check_eq "$(json out.json 'j["files"]')" 5
	check_eq "$(json out.json 'j["pages"]')" 675
	check_eq "$(json out.json 'j["read_pages"] + j["already_resident_pages"]')" 675
	check_eq "$(json out.json 'j["skipped_files"]')" 0
	check_eq "$(json out.json 'j["budget_reached"]')" 0
	check_eq "$(json out.json 'all(k in j for k in ("disk_read_bytes", "wall_seconds", "disk_read_bytes_per_second"))')" 1
}

summary_counts() {
	mkfile f 40
	"$PT" evict f
	"$PT" read f 0-9
	hotset warm --json f > out.json
	check_eq "$(json out.json 'j["already_resident_pages"]')" 10
	check_eq "$(json out.json 'j["read_pages"]')" 30
	hotset warm --json f > again.json
	check_eq "$(json again.json 'j["already_resident_pages"]')" 40
	check_eq "$(json again.json 'j["read_pages"]')" 0
	hotset warm f > human
	grep -q "Resident: 40 (160.0 KiB of memory) before, 0 (0 B of memory) read" human
}

every_method() {
	local opts
	mkdir t
	mkfile t/small 2; mkfile t/large 300
	for opts in "" "--order=given" "--order=physical" "--method=willneed" "--method=pread" \
		    "--method=io_uring" "-j1 --inflight=512K --chunk=4K"; do
		if [ "$opts" = "--method=io_uring" ] && ! hotset warm $opts --help >/dev/null 2>&1; then
			continue	# not built with liburing
		fi
		"$PT" evict t/small t/large
		hotset warm -q $opts t > /dev/null
		all_resident t/small t/large || { echo "with: $opts" >&2; exit 1; }
	done
}

usr_include() {
	cp -r /usr/include/linux inc
	find inc -type f -exec "$PT" evict {} +
	hotset warm --json inc > out.json
	# fincore checks the whole copy at once (mincore, truthful for root)
	find inc -type f -size +0 -print0 | xargs -0 fincore --raw --noheadings --bytes -o RES,SIZE > res
	check_eq "$(json out.json 'j["skipped_files"]')" 0
	check_eq "$(json out.json 'j["not_resident_pages"]')" 0
	awk -v ps="$PS" '{ want = int(($2 + ps - 1) / ps) * ps } $1 != want { print; bad = 1 }
		END { exit bad }' res
}

profile_snapshot() {
	mkfile f 64; mkfile g 64
	"$PT" evict f g
	"$PT" read f 3 10-12 40
	"$PT" read g 63
	hotset snapshot -q -o p.prof f g
	"$PT" evict f g
	hotset warm -p p.prof > out
	check_eq "$("$PT" resident f)" "3,10-12,40"
	check_eq "$("$PT" resident g)" "63"
}

profile_by_hand() {
	mkfile f 64
	profile p.prof "f 0:0 0 $((64 * PS)) 0.000000000 r 50-51,0,20-29 $PWD/f"
	"$PT" evict f
	hotset warm -p p.prof --json > out.json
	check_eq "$("$PT" resident f)" "0,20-29,50-51"
	check_eq "$(json out.json 'j["pages"]')" 13
}

profile_and_paths() {
	mkdir a b
	mkfile a/f 8; mkfile b/g 8
	profile p.prof "f 0:0 0 0 0.000000000 r 0-7 $PWD/a/f" "f 0:0 0 0 0.000000000 r 0-7 $PWD/b/g"
	"$PT" evict a/f b/g
	hotset warm -q -p p.prof "$PWD/b"
	test -z "$("$PT" resident a/f)"
	check_eq "$("$PT" resident b/g)" "0-7"
}

budget() {
	mkfile a 64; mkfile b 64; mkfile c 64
	"$PT" evict a b c
	"$PT" read b 0-15	# resident already: costs nothing
	profile p.prof "f 0:0 0 0 0.000000000 r 0-63 $PWD/a" \
		"f 0:0 0 0 0.000000000 r 0-63 $PWD/b" "f 0:0 0 0 0.000000000 r 0-63 $PWD/c"
	hotset warm -p p.prof --budget $((96 * PS)) --json > out.json
	check_eq "$(json out.json 'j["budget_reached"]')" 1
	check_eq "$(json out.json 'j["stopped_at_path"]')" "$PWD/b"
	check_eq "$(json out.json 'j["stopped_at_page"]')" 48
	check_eq "$("$PT" resident a)" "0-63"
	check_eq "$("$PT" resident b)" "0-47"
	test -z "$("$PT" resident c)"
	# a budget spent exactly by a: stops at the first page b needs
	"$PT" evict a b c
	hotset warm -p p.prof --budget $((64 * PS)) > human
	grep -q "Budget: spent; stopped at $PWD/b, page 0" human
	test -z "$("$PT" resident b)"
}

# Pages 0-9 and 20-29 resident, a budget of 10 pages: it reads 10-19 and
# stops at page 30, the first page not warmed (20-29 were there already).
budget_over_resident_runs() {
	mkfile f 40
	"$PT" evict f
	"$PT" read f 0-9 20-29
	hotset warm --budget $((10 * PS)) --json f > out.json
	check_eq "$(json out.json 'j["stopped_at_page"]')" 30
	check_eq "$(json out.json '(j["already_resident_pages"], j["read_pages"])')" "(20, 10)"
	check_eq "$("$PT" resident f)" "0-29"
}

# Without cachestat(2) (kernels before 6.5, such as Debian 12's 6.1),
# residency comes from mincore: a half-resident file has only its missing
# pages read and counted, and its resident ones counted as resident. $1:
# how cachestat is taken away (an environment assignment for env).
half_resident_without_cachestat() {
	mkfile f 40
	"$PT" evict f
	"$PT" read f 0-9
	env "$@" "$HOTSET" warm --json f > out.json
	check_eq "$(json out.json '(j["unknown_files"], j["already_resident_pages"], j["read_pages"], j["not_resident_pages"])')" "(0, 10, 30, 0)"
	all_resident f
	# mincore without write permission says "all resident": still unknown
	chmod 755 .
	chmod 644 f
	"$PT" evict f
	env "$@" setpriv --reuid=nobody --regid=nogroup --clear-groups -- \
		"$HOTSET" warm --json f > nobody.json
	check_eq "$(json nobody.json '(j["unknown_files"], j["already_resident_pages"])')" "(1, 0)"
	all_resident f
}

# Thousands of small files under a limit of 24 descriptors: warm holds
# fewer files open at once, and waits rather than skips when it runs out.
low_open_file_limit() {
	local d i
	for d in 1 2 3 4; do
		mkdir -p t/d$d
		for i in $(seq 150); do echo "$d $i" > t/d$d/f$i; done
	done
	hotset evict -q t > /dev/null
	prlimit --nofile=24:24 "$HOTSET" warm --json t > out.json 2> err
	test ! -s err
	check_eq "$(json out.json '(j["files"], j["skipped_files"], j["read_pages"], j["not_resident_pages"])')" "(600, 0, 600, 0)"
}

fifo() {
	mkdir t
	mkfile t/f 4
	mkfifo t/fifo
	"$PT" evict t/f
	timeout 20 "$HOTSET" warm --json t > out.json
	check_eq "$(json out.json 'j["files"]')" 1
	all_resident t/f
}

past_the_end() {
	mkfile f 64
	mkfile g 2
	# f was 64 pages when profiled, g 2 pages: page 5 of g never existed
	profile p.prof "f 0:0 0 $((64 * PS)) 0.000000000 r 0-63 $PWD/f" \
		"f 0:0 0 $((2 * PS)) 0.000000000 r 0-5 $PWD/g"
	truncate -s $((16 * PS)) f
	"$PT" evict f g
	expect_code 1 hotset warm -p p.prof > out 2> err
	grep -q "f: shrank since the profile was made: 48 of its pages are past the end" err
	! grep -q "g:" err
	check_eq "$("$PT" resident f)" "0-15"
	check_eq "$("$PT" resident g)" "0-1"
	hotset warm -p p.prof "$PWD/g"	# g alone: nothing to say, exit 0
}

as_nobody_user() {
	mkdir t
	mkfile t/a 5; mkfile t/b 200
	chmod 755 . t
	chmod 644 t/a t/b
	"$PT" evict t/a t/b
	setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$HOTSET" warm --json t > out.json
	check_eq "$(json out.json 'j["unknown_files"]')" 2
	check_eq "$(json out.json 'j["skipped_files"]')" 0
	all_resident t/a t/b
}

# an entry replaced by nobody's own file, by root's and by a third user's
replaced_as_nobody() {
	local nobody="setpriv --reuid=nobody --regid=nogroup --clear-groups --"
	chmod 755 .
	mkdir d && mkfile d/own 4 && mkfile d/root 4 && mkfile d/third 4 && mkfile d/kept 4
	chown -R nobody:nogroup d && chmod 755 d && chmod 644 d/*
	$nobody "$HOTSET" snapshot -q -o - d > p.prof
	$nobody sh -c "head -c $((4 * PS)) /dev/urandom > d/new && mv d/new d/own"
	mkfile new 4 && chmod 644 new && mv new d/root
	mkfile new 4 && chmod 644 new && chown 4242:4242 new && mv new d/third
	"$PT" evict d/*
	expect_code 1 $nobody "$HOTSET" warm --json -p p.prof > out 2> err
	grep -q "^hotset: $PWD/d/third: replaced by another user.s file (uid 4242) since the profile was made, not opened$" err
	if grep -q "d/own:\|d/root:" err; then return 1; fi
	grep -q "2 files changed since p.prof was made" err
	check_eq "$(json out "(j[\"stale_files\"], j[\"files\"])")" "(2, 3)"
	all_resident d/own d/root d/kept
	check_eq "$("$PT" resident d/third)" ""
}

missing_path() {
	mkfile f 4
	"$PT" evict f
	expect_code 1 hotset warm f /nonexistent/path > out 2> err
	grep -q "/nonexistent/path" err
	all_resident f
}

sparse_holes() {
	truncate -s 1G sparse
	printf data | dd of=sparse bs=1 seek=$((512 << 20)) conv=notrunc status=none
	"$PT" evict sparse
	hotset warm --json sparse > out.json
	check_eq "$(json out.json 'j["pages"]')" 1
	check_eq "$(json out.json 'j["hole_pages"]')" $(( (1 << 30) / PS - 1 ))
	check_eq "$("$PT" resident sparse)" $(( (512 << 20) / PS ))
}

# -v: a row per file as its reads complete, and the same as JSON items
rows() {
	mkfile f 40; mkfile g 3
	"$PT" evict f g
	"$PT" read f 0-9
	hotset warm -v f g > out
	grep -qx "read: 30 pages ($((30 * PS / 1024)).0 KiB of memory) of 40, 10 already resident f" out
	grep -qx "read: 3 pages ($((3 * PS / 1024)).0 KiB of memory) of 3, 0 already resident g" out
	grep -qx "     Files: 2" out
	"$PT" evict f g
	"$PT" read f 0-9
	hotset warm -v --json f g > out.json
	check_eq "$(json out.json 'sorted((i["path"], i["pages"], i["already_resident_pages"], i["requested_pages"], i["read_pages"], i["not_resident_pages"]) for i in j["items"])')" \
		"[('f', 40, 10, 40, 30, 0), ('g', 3, 0, 3, 3, 0)]"
	hotset warm -v --json f g > again.json
	check_eq "$(json again.json '[(i["requested_pages"], i["read_pages"]) for i in j["items"]]')" "[(0, 0), (0, 0)]"
	# a file skipped has no row, and is counted on the Files line
	expect_code 1 hotset warm -v f /nonexistent > out 2> err
	check_eq "$(grep -c "^read: " out)" 1
	grep -qx "     Files: 1 (1 skipped with a warning)" out
}

export -f rows whole_tree summary_counts every_method usr_include profile_snapshot profile_by_hand \
	profile_and_paths budget budget_over_resident_runs half_resident_without_cachestat \
	low_open_file_limit fifo past_the_end as_nobody_user replaced_as_nobody missing_path sparse_holes

# ---- tests -------------------------------------------------------------------

test_expect_success 'warm --help describes the options' '
	hotset warm --help > out &&
	grep -q -- "--budget SIZE" out && grep -q -- "--profile PROFILE" out &&
	grep -q "Exit status" out
'

test_expect_success 'usage errors exit 2' '
	expect_code 2 hotset warm &&
	expect_code 2 hotset warm --no-such-option . &&
	expect_code 2 hotset warm --budget lots . &&
	expect_code 2 hotset warm --budget 0 . &&
	expect_code 2 hotset warm -j 0 . &&
	expect_code 2 hotset warm --inflight 1 . &&
	expect_code 2 hotset warm --method=telepathy . &&
	expect_code 2 hotset warm --order=random . &&
	expect_code 2 hotset warm -p /nonexistent/profile
'

test_expect_success REALFS 'evict then warm leaves every page of a tree resident' '
	retry whole_tree
'

test_expect_success REALFS,CACHESTAT 'the summary counts what was resident and what was read' '
	retry summary_counts
'

test_expect_success REALFS,CACHESTAT '-v: a row per file, as JSON items too' '
	retry rows
'

test_expect_success REALFS 'every method and order warms everything' '
	retry every_method
'

test_expect_success REALFS,ROOT 'a copy of /usr/include is fully resident after warm' '
	if test -d /usr/include/linux && command -v fincore >/dev/null; then
		retry usr_include
	fi
'

test_expect_success REALFS 'with -p, exactly the pages of the profile (snapshot)' '
	retry profile_snapshot
'

test_expect_success REALFS 'with -p, exactly the pages of a hand-written profile' '
	retry profile_by_hand
'

test_expect_success REALFS 'with -p and PATHs, only the profile entries under the PATHs' '
	retry profile_and_paths
'

test_expect_success REALFS,CACHESTAT '--budget stops at the right file and page, in profile order' '
	retry budget
'

test_expect_success REALFS '--budget stops at the first page not warmed, not at a resident one' '
	retry budget_over_resident_runs
'

# HOTSET_NO_CACHESTAT is the residency module's test hook (residency.h).
test_expect_success REALFS,NOBODY 'without cachestat, mincore tells what is resident' '
	retry "half_resident_without_cachestat HOTSET_NO_CACHESTAT=1"
'

# The same with cachestat(2) failing with ENOSYS, as on an old kernel: a
# shim preloaded in front of libc (the hook above is not consulted by code
# that calls cachestat on its own).
prereq_CC() { command -v cc >/dev/null; }
test_expect_success REALFS,NOBODY,CC 'with cachestat failing with ENOSYS (a preloaded shim), the same' '
	cat > nocs.c <<-\EOF &&
	#define _GNU_SOURCE
	#include <dlfcn.h>
	#include <errno.h>
	#include <stdarg.h>
	long syscall(long n, ...)
	{
		static long (*real)(long, ...);
		long a[6];
		va_list ap;

		if (n == 451) {	/* cachestat */
			errno = ENOSYS;
			return -1;
		}
		va_start(ap, n);
		for (int i = 0; i < 6; i++)
			a[i] = va_arg(ap, long);
		va_end(ap);
		if (!real)
			real = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
		return real(n, a[0], a[1], a[2], a[3], a[4], a[5]);
	}
	EOF
	cc -shared -fPIC -o nocs.so nocs.c -ldl &&
	chmod 755 nocs.so &&
	retry "half_resident_without_cachestat LD_PRELOAD=$PWD/nocs.so ASAN_OPTIONS=verify_asan_link_order=0"
'

test_expect_success REALFS 'a low open-file limit: every file warmed, none skipped' '
	if command -v prlimit >/dev/null; then
		retry low_open_file_limit
	fi
'

test_expect_success REALFS 'a FIFO in the tree is skipped without hanging' '
	retry fifo
'

test_expect_success REALFS 'a file that shrank since its profile: a warning, exit 1' '
	retry past_the_end
'

# Entries replaced since the profile was made: by a FIFO whose writer
# waits for a reader, by a symlink to another file, by a symlink to
# /dev/ptmx. warm -p opens none of them (the writer still waits, the files
# stay cold), says what replaced each, and exits 1; what the profile names
# still is warmed. A file of the caller's own renamed over an entry (a
# rebuild, an editor's save) is the entry's file anew: warmed, stale.
replace_entries() {
	mkdir d && for f in a b c e kept; do mkfile d/$f 4 && "$PT" read d/$f 0-3 || return 1; done &&
	hotset snapshot -q -o p.prof d && "$PT" evict d/* &&
	mkfile new 4 && "$PT" evict new && mv new d/a &&
	rm d/b && mkfifo d/b && { sh -c "echo x > d/b" & } && writer=$! &&
	mkfile other 4 && "$PT" evict other && rm d/c && ln -s "$PWD/other" d/c &&
	rm d/e && ln -s /dev/ptmx d/e
}

test_expect_success REALFS 'warm -p: entries replaced by a FIFO or symlinks are never opened; by a file of ones own, warmed stale' '
	replace_entries &&
	expect_code 1 hotset warm --json -p p.prof > out 2> err && cat err &&
	! grep -q "d/a:" err &&
	grep -q "^hotset: $PWD/d/b: replaced by a FIFO since the profile was made, not opened$" err &&
	grep -q "^hotset: $PWD/d/c: replaced by a symbolic link since the profile was made, not opened$" err &&
	grep -q "^hotset: $PWD/d/e: replaced by a symbolic link since the profile was made, not opened$" err &&
	grep -q "1 file changed since p.prof was made (device, inode, size or mtime): it was acted on by path$" err &&
	check_eq "$(json out "(j[\"stale_files\"], j[\"files\"])")" "(1, 2)" &&
	grep -c "^f " p.prof | grep -qx 5 && kill -0 $writer && all_resident d/kept d/a &&
	check_eq "$("$PT" resident other)" "" &&
	cat d/b > /dev/null && wait $writer
'

prereq_STRACE() { command -v strace > /dev/null; }
test_expect_success REALFS,STRACE 'warm -p: a symlink to /dev/ptmx in an entry'"'"'s place is never opened' '
	replace_entries &&
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
		expect_code 1 strace -f -y -e trace=open,openat -o trace "$HOTSET" warm -p p.prof > out 2> err &&
	grep -q "$PWD/d/kept" trace && ! grep ptmx trace &&
	cat d/b > /dev/null && wait $writer
'

# Where another user may write (a sticky directory, as /tmp): an entry of
# nobody's file, and the file nobody renames over it since. Root's warm
# never opens that (strace sees no open of it; -y: the file each
# descriptor is), says whose it is, and exits 1; root's own entry beside
# it, replaced by root, is warmed, stale.
test_expect_success REALFS,ROOT,NOBODY,STRACE 'warm -p as root: an entry replaced by another user'"'"'s file is never opened, said whose' '
	mkdir -m 1777 sticky && mkfile sticky/mine 4 && mkfile sticky/theirs 4 &&
	chown nobody:nogroup sticky/theirs &&
	hotset snapshot -q -o p.prof sticky && "$PT" evict sticky/* &&
	as_nobody sh -c "head -c $((4 * PS)) /dev/urandom > sticky/new && mv sticky/new sticky/theirs" &&
	mkfile new 4 && mv new sticky/mine && "$PT" evict sticky/* &&
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
		expect_code 1 strace -f -y -e trace=open,openat,openat2 -o trace "$HOTSET" warm --json -p p.prof > out 2> err &&
	cat err &&
	grep -q "^hotset: $PWD/sticky/theirs: replaced by another user.s file (uid $(id -u nobody)) since the profile was made, not opened$" err &&
	grep -q "$PWD/sticky/mine" trace && ! grep "sticky/theirs" trace &&
	check_eq "$(json out "(j[\"stale_files\"], j[\"files\"])")" "(1, 1)" &&
	all_resident sticky/mine && check_eq "$("$PT" resident sticky/theirs)" ""
'

# As nobody, of a profile of nobody's files: a file of nobody's own or of
# root's (a package upgrade) renamed over an entry is warmed, stale; one of
# a third user's is never opened, said whose.
test_expect_success REALFS,NOBODY 'warm -p as nobody: its own file or root'"'"'s in an entry'"'"'s place is warmed stale, a third user'"'"'s is not opened' '
	retry replaced_as_nobody
'

# A race by nature: the deterministic cases (a file shrunk or deleted just
# before its read) are in tests/unit/test-warm.c. Here a writer keeps
# truncating and rewriting a file while warm runs: warm must always finish,
# with 0, or 1 and a warning. The writer has gone round once before the
# first warm (the race is on), and stops when told to, between two rounds,
# and is waited for (a kill would leave its cp writing after the test).
test_expect_success REALFS 'files truncated while being warmed: no crash, no hang, exit 0 or 1' '
	head -c $((2 << 20)) /dev/urandom > src &&
	cp src f && "$PT" evict f &&
	( while [ ! -e stop ]; do truncate -s 0 f; cp src f; "$PT" evict f; : > went; sleep 0.02; done ) &
	pid=$! && trap "touch stop; wait $pid" EXIT &&
	for i in $(seq 200); do [ -e went ] && break; sleep 0.05; done && test -e went &&
	for i in $(seq 10); do
		rc=0
		timeout 60 "$HOTSET" warm f > out 2> err || rc=$?
		case $rc in
		0) ;;
		1) grep -Eq "shrank|deleted|cannot" err || { cat err >&2; exit 1; } ;;
		*) echo "exit $rc" >&2; cat err >&2; exit 1 ;;
		esac
	done
'

test_expect_success REALFS,NOBODY 'an unprivileged user warms files it may read' '
	retry as_nobody_user
'

test_expect_success REALFS 'missing paths: a message, exit 1, the rest warmed' '
	retry missing_path
'

test_expect_success REALFS 'holes of a sparse file are not read' '
	retry sparse_holes
'

test_done
