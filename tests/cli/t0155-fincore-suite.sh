#!/usr/bin/env bash
# util-linux's own test cases of fincore (tests/ts/fincore/count and
# tests/ts/fincore/cachestat in its source), run against hotset status
# with fincore's options: the same inputs, made the same way (dd, with and
# without O_DIRECT, sparse files across fincore's mmap window of 32768
# pages), and the outputs its tests/expected/fincore/* give, computed here
# for this machine's page size. The cases are written anew from what they
# check, each named after its upstream header; none of util-linux's files
# is needed. Where util-linux fincore is installed it runs beside, as an
# oracle, with the options it has (Debian 12's 2.38 has neither --total,
# --recursive nor --cachestat).
. "$(dirname "$0")/../lib.sh"

export LC_ALL=C	# as util-linux's tests run (POSIX): sort's order, fincore's messages
prereq_FINCORE() { command -v fincore >/dev/null && fincore --json --bytes /dev/null >/dev/null 2>&1; }
# fincore -OPTION exists here (the oracle runs only with the options it has)
fincore_has() { prereq_FINCORE && fincore --help | grep -q -- "$1"; }
# writes with O_DIRECT to a file opened for appending (as the upstream test checks first)
prereq_DIRECTIO() {
	dd if=/dev/zero of="$TRASH/ddtest" bs=1k count=2 oflag=direct,append status=none 2>/dev/null
	local rc=$?; rm -f "$TRASH/ddtest"; return $rc
}

window=$((32 * 1024 * ps))	# fincore's mmap window: 32768 pages
cols=(--raw --output PAGES,SIZE,FILE --bytes)

# name HEADER: the file name the upstream test makes of a case's header
name() { printf "i_%s" "$(printf "%s" "$1" | sed -e "s/[^-+a-zA-Z0-9_/]/_/g")"; }
# one FILE BYTES [DD FLAGS...]: a file of one dd block (touched if BYTES is 0)
one() {
	local f=$1 bs=$2; shift 2
	rm -f "$f" && if [ "$bs" = 0 ]; then touch "$f"; else dd if=/dev/zero of="$f" count=1 bs="$bs" "$@" status=none; fi
}
# two FILE FLAGS0 FLAGS1: a page written with FLAGS0, then one with FLAGS1
# (dd truncates to its seek= before it appends: a hole in between); FLAGS
# are dd's operands, split at blanks
two() {
	rm -f "$1" && dd if=/dev/zero of="$1" count=1 bs=$ps $2 status=none &&
		dd if=/dev/zero of="$1" count=1 bs=$ps $3 status=none
}

# The cases of "count", in its order: header, expected PAGES and SIZE,
# and how the file is made.
holes=$((window / ps - 2)) more=$((window / ps - 1))
cases=(
	"EMPTY FILE|0 0|one F 0"
	"PAGESIZE -1 (incore)|1 $((ps - 1))|one F $((ps - 1))"
	"JUST PAGESIZE(incore)|1 $ps|one F $ps"
	"JUST PAGESIZE(directio)|0 $ps|one F $ps oflag=direct"
	"TWO PAGES(incore)|2 $((2 * ps))|one F $((2 * ps))"
	"TWO PAGES(directio)|0 $((2 * ps))|one F $((2 * ps)) oflag=direct"
	"TWO PAGES(mixed directio,incore)|1 $((2 * ps))|two F oflag=direct 'oflag=append seek=1'"
	"TWO PAGES(mixed incore,directio)|1 $((2 * ps))|two F '' 'oflag=direct,append seek=1'"
	"WINDOW SIZE(incore-sparse-incore)|2 $((window - ps))|two F '' 'oflag=append seek=$holes'"
	"WINDOW SIZE(directio-sparse-directio)|0 $((window - ps))|two F oflag=direct 'oflag=append,direct seek=$holes'"
	"WINDOW SIZE(incore-sparse-directio)|1 $((window - ps))|two F '' 'oflag=append,direct seek=$holes'"
	"WINDOW SIZE(directio-sparse-incore)|1 $((window - ps))|two F oflag=direct 'oflag=append seek=$holes'"
	"WINDOW SIZE + 1 page(incore-sparse-incore)|2 $window|two F '' 'oflag=append seek=$more'"
	"WINDOW SIZE + 1 page(directio-sparse-directio)|0 $window|two F oflag=direct 'oflag=append,direct seek=$more'"
	"WINDOW SIZE + 1 page(incore-sparse-directio)|1 $window|two F '' 'oflag=append,direct seek=$more'"
	"WINDOW SIZE + 1 page(directio-sparse-incore)|1 $window|two F oflag=direct 'oflag=append seek=$more'"
)

# make CASE: make its file; it prints the file's name
make() {
	local header=${1%%|*} how=${1##*|} f
	f=$(name "$header")
	eval "set -- ${how/ F / $f }" && "$@" && printf "%s\n" "$f"
}

# same WANT CMD...: CMD (hotset status, or fincore) prints WANT and exits
# as the last line of WANT says ("return value: N")
same() {
	local want=$1 rc=0; shift
	"$@" > got 2> err || rc=$?	# (set -e leaves the test at a bare failure)
	echo "return value: $rc" >> got
	[ "$(cat got)" = "$want" ] || { echo "# $*:"; diff <(printf "%s\n" "$want") got; return 1; }
}

test_expect_success REALFS,DIRECTIO 'NON EXISTING FILE: no row, the name on standard error, exit 1' '
	same "return value: 1" hotset status "${cols[@]}" --noheadings no_such_file &&
	grep -q "no_such_file" err &&
	if prereq_FINCORE; then same "return value: 1" fincore "${cols[@]}" --noheadings no_such_file; fi
'

# Each file is made again and checked again if the machine took its pages
# meanwhile (memory pressure, a drop_caches, DAMON).
test_expect_success REALFS,DIRECTIO 'one file each: empty, a page less one, a page, two, O_DIRECT, mixed, across the window' '
	for c in "${cases[@]}"; do
		check() {
			f=$(make "$c") && want="$(printf "%s %s\nreturn value: 0" "$(echo "$c" | cut -d"|" -f2)" "$f")" &&
			same "$want" hotset status "${cols[@]}" --noheadings "$f" &&
			if prereq_FINCORE; then same "$want" fincore "${cols[@]}" --noheadings "$f"; fi
		}
		retry check || return 1
	done
'

test_expect_success REALFS,DIRECTIO 'MULTIPLE FILES: the heading, a row each in order, and exit 1 for the one missing' '
	check() {
		want="PAGES SIZE FILE" files=() &&
		for c in "${cases[@]}"; do
			f=$(make "$c") && files+=("$f") &&
			want+=$(printf "\n%s %s" "$(echo "$c" | cut -d"|" -f2)" "$f") || return 1
		done &&
		want+=$(printf "\nreturn value: 1") &&
		same "$want" hotset status "${cols[@]}" no_such_file "${files[@]}" &&
		grep -q "no_such_file" err && test "$(wc -l < err)" = 1 &&
		if prereq_FINCORE; then same "$want" fincore "${cols[@]}" no_such_file "${files[@]}"; fi
	} &&
	retry check
'

test_expect_success REALFS 'GRAND TOTAL SIZE: --total adds up the sizes in a row named TOTAL' '
	one i_EMPTY 0 && one i_1b 1 && one i_1k 1024 && one i_10k 10240 &&
	same "$(printf "0 i_EMPTY\n1 i_1b\n1024 i_1k\n10240 i_10k\n11265 TOTAL\nreturn value: 0")" \
		hotset status --raw --output SIZE,FILE --bytes --noheadings --total i_EMPTY i_1b i_1k i_10k &&
	same "$(printf "0 i_EMPTY\n1 i_1b\n1024 i_1k\n10240 i_10k\n11265 TOTAL\nreturn value: 0")" \
		hotset status -r -o SIZE,FILE -b -n -c i_EMPTY i_1b i_1k i_10k &&
	if fincore_has --total; then
		same "$(cat got)" fincore --raw --output SIZE,FILE --bytes --noheadings --total i_EMPTY i_1b i_1k i_10k
	fi
'

test_expect_success REALFS 'GRAND TOTAL PAGES: and the resident pages' '
	check() {
		one i_EMPTY 0 && one i_1b 1 && one i_ONE_PAGE $ps && one i_TWO_PAGES $((2 * ps)) &&
		one i_TEN_PAGES $((10 * ps)) &&
		same "$(printf "0 i_EMPTY\n1 i_1b\n1 i_ONE_PAGE\n2 i_TWO_PAGES\n10 i_TEN_PAGES\n14 TOTAL\nreturn value: 0")" \
			hotset status --raw --output PAGES,FILE --bytes --noheadings --total \
				i_EMPTY i_1b i_ONE_PAGE i_TWO_PAGES i_TEN_PAGES &&
		if fincore_has --total; then
			same "$(cat got)" fincore --raw --output PAGES,FILE --bytes --noheadings --total \
				i_EMPTY i_1b i_ONE_PAGE i_TWO_PAGES i_TEN_PAGES
		fi
	} &&
	retry check
'

test_expect_success REALFS 'RECURSIVE SCAN: --recursive lists the files under a directory, by path' '
	mkdir i_dir &&
	check() {
		one i_dir/EMPTY_FILE 0 && one i_dir/PAGESIZE_-1__incore_ $((ps - 1)) &&
		one i_dir/JUST_PAGESIZE_incore_ $ps &&
		want=$(printf "0 0 i_dir/EMPTY_FILE\n1 %s i_dir/PAGESIZE_-1__incore_\n1 %s i_dir/JUST_PAGESIZE_incore_\nPAGES SIZE FILE\nreturn value: 0" $((ps - 1)) $ps) &&
		sorted() { "$@" | sort; return "${PIPESTATUS[0]}"; } &&
		same "$want" sorted hotset status "${cols[@]}" --recursive --raw i_dir &&
		same "$want" sorted hotset status "${cols[@]}" -R i_dir &&
		if fincore_has --recursive; then
			same "$want" sorted fincore "${cols[@]}" --recursive --raw i_dir
		fi
	} &&
	retry check
'

# tests/ts/fincore/cachestat: three blocks written and synced, 20 bytes
# appended: one page dirty. The script reads fincore's JSON as jq would,
# .fincore[] | {total_size: .size, dirty_size: .dirty}.
test_expect_success REALFS,CACHESTAT 'cachestat: --json --output-all --cachestat --bytes, read as .fincore[]' '
	blk=$(stat --file-system --format=%s .) &&
	check() {
		{ printf "%*s" $blk "" | tr " " "\252" && printf "%*s" $blk "" | tr " " "\377" &&
		  printf "%*s" $blk "" | tr " " "\125"; } > data &&
		sync data &&
		printf "%*s" 20 "" | tr " " "\273" >> data &&
		hotset status --json --output-all --cachestat --bytes data > j &&
		check_eq "$(json j "[{\"total_size\": r[\"size\"], \"dirty_size\": r[\"dirty\"]} for r in j[\"fincore\"]] == [{\"total_size\": 3 * $blk + 20, \"dirty_size\": $ps}]")" 1
	} &&
	retry check &&
	if fincore_has --cachestat; then
		check_eq "$(fincore --json --output-all --cachestat --bytes data | json /dev/stdin "j[\"fincore\"][0][\"size\"]")" $((3 * blk + 20))
	fi
'

test_expect_success '--cachestat where there is no cachestat(2): an error, exit 1, no row' '
	printf x > f &&
	HOTSET_NO_CACHESTAT=1 expect_code 1 "$HOTSET" status --cachestat f > out 2> err &&
	test ! -s out && grep -q "cachestat(2)" err
'

test_done
