#!/usr/bin/env bash
# Lists of names (--files-from, -0) and the filters -I, -i, -m, in status,
# warm, evict and snapshot: a list of what find prints counts what the
# tree walk counts; names are taken as they are; a list is read as it
# comes (a pipe); filtered files are left out silently, on a tree, a list
# and a profile's entries alike.
. "$(dirname "$0")/../lib.sh"

# totals FILE: status's JSON totals, "(files, pages, resident, bytes)"
totals() { json "$1" "(j[\"files\"], j[\"pages\"], j[\"resident_pages\"], j[\"bytes\"])"; }
# find_totals FIND-ARGS...: the same totals of the files find prints,
# counted by find itself (every page resident: the tree was just read)
find_totals() {
	find "$@" -printf "%s\n" | awk -v ps="$ps" '
		{ n++; b += $1; p += int(($1 + ps - 1) / ps) }
		END { printf "(%d, %d, %d, %d)\n", n, p, p, b }'
}

# A tree of C sources, objects (one a directory), big files, a name with a space.
make_tree() {
	mkdir -p tree/src/sub tree/lib.o tree/.git tree/"with space" &&
	for i in 1 2 3; do printf "int x%d;\n" $i > tree/src/f$i.c; done &&
	head -c 5000 /dev/zero > tree/src/sub/g.c &&
	head -c 9000 /dev/zero > tree/src/f1.o &&
	printf "in a directory named like an object\n" > tree/lib.o/inside.c &&
	printf "[core]\n" > tree/.git/config &&
	printf "x" > tree/"with space"/"a b" &&
	head -c $((1024 * 1024)) /dev/zero > tree/exactly-1M &&
	head -c $((1024 * 1024 + 1)) /dev/zero > tree/over-1M.o &&
	head -c $((3 * 1024 * 1024)) /dev/zero > tree/big &&
	printf "" > tree/empty &&
	find tree -type f -exec cat {} + > /dev/null
}

test_expect_success 'find -print0 into --files-from - -0 counts what the tree walk counts' '
	make_tree && ln tree/src/f2.c tree/hardlink.c &&
	check() {
		find tree -type f -exec cat {} + > /dev/null &&
		hotset status --json tree > walk.json &&
		find tree -type f -print0 | hotset status --files-from - -0 --json > list.json &&
		check_eq "$(totals list.json)" "$(totals walk.json)" &&
		check_eq "$(json walk.json "j[\"files\"]")" "$(find tree -type f -links 1 | wc -l | awk "{ print \$1 + 1 }")" &&
		# newline-ended, with one thread, and with PATHs before the list
		find tree -type f | hotset status --files-from - -j 1 --json > nl.json &&
		check_eq "$(totals nl.json)" "$(totals walk.json)" &&
		find tree/src -type f | hotset status --files-from - --json tree > both.json &&
		check_eq "$(totals both.json)" "$(totals walk.json)" &&
		# directories in the list are walked; files met twice count once
		find tree -print0 | hotset status --files-from - -0 --json > all.json &&
		check_eq "$(totals all.json)" "$(totals walk.json)"
	} &&
	retry check
'

test_expect_success 'names are taken as they are: blanks, newlines (with -0), any byte' '
	mkdir d &&
	printf 1 > "d/ lead" && printf 22 > "d/trail " && printf 333 > "d/new
line" && printf 4444 > "$(printf "d/\\351t\\351")" &&
	printf "d/ lead\0d/trail \0d/new\nline\0\0%b\0" "d/\\0351t\\0351" |
		hotset status --files-from - -0 -v -j 1 --json > j 2> err &&
	test ! -s err &&
	check_eq "$(json j "[i[\"path\"] for i in j[\"items\"]] == [\"d/ lead\", \"d/trail \", \"d/new\nline\", \"d/\udce9t\udce9\"]")" 1 &&
	check_eq "$(json j "j[\"bytes\"]")" 10 &&
	# without -0, the name with a newline is two names, neither of them a file
	printf "d/ lead\nd/new\nline\n" | expect_code 1 hotset status --files-from - --json > j 2> err &&
	check_eq "$(json j "j[\"files\"]")" 1 &&
	grep -q "^hotset: d/new: cannot open: No such file or directory$" err &&
	grep -q "^hotset: line: cannot open" err
'

test_expect_success '-I and -i (files and directories, repeated, base names or paths) match find' '
	make_tree &&
	hotset status --json -I "*.c" tree > j &&
	check_eq "$(totals j)" "$(find_totals tree -type f -name "*.c")" &&
	hotset status --json -I "*.c" -I "*.o" tree > j &&
	check_eq "$(totals j)" "$(find_totals tree -type f \( -name "*.c" -o -name "*.o" \))" &&
	# -i leaves out lib.o, a directory, with what is in it
	hotset status --json -i "*.o" -i ".git" tree > j &&
	check_eq "$(totals j)" "$(find_totals tree \( -name "*.o" -o -name .git \) -prune -o -type f)" &&
	find tree -type f | hotset status --files-from - --json -i "*.o" -i ".git" > l &&
	check_eq "$(totals l)" "$(totals j)" &&
	# a glob with a slash matches the path, as find -path does
	hotset status --json -i "tree/src/*" tree > j &&
	check_eq "$(totals j)" "$(find_totals tree -path "tree/src/*" -prune -o -type f)" &&
	hotset status --json -I "*/sub/*" tree > j &&
	check_eq "$(totals j)" "$(find_totals tree -type f -path "*/sub/*")" &&
	# -I does not keep the walk out of directories; both together
	hotset status --json -I "*.c" -i "src" tree > j &&
	check_eq "$(totals j)" "$(find_totals tree -name src -prune -o -type f -name "*.c")" &&
	# filtered files are silent: exit 0, nothing on stderr
	hotset status -I "*.nothing" tree > out 2> err && test ! -s err &&
	grep -q "^     Files: 0$" out
'

test_expect_success '-m: files larger than SIZE are left out, named or found' '
	make_tree &&
	hotset status --json -m 1M tree > j 2> err && test ! -s err &&
	check_eq "$(totals j)" "$(find_totals tree -type f -size -$((1024 * 1024 + 1))c)" &&
	hotset status --json -m 4096 tree > j &&
	check_eq "$(totals j)" "$(find_totals tree -type f -size -4097c)" &&
	find tree -type f -print0 | hotset status --json -0 --files-from - -m 1M > l &&
	check_eq "$(totals l)" "$(find_totals tree -type f -size -$((1024 * 1024 + 1))c)" &&
	hotset status --json -m 1M tree/big tree/exactly-1M > j &&
	check_eq "$(json j "j[\"files\"], j[\"bytes\"]")" "(1, $((1024 * 1024)))" &&
	expect_code 2 hotset status -m 0 tree 2> err && grep -q "size above 0" err &&
	expect_code 2 hotset status -m 1Q tree 2> err && grep -q "is not a size" err
'

# A profile of whole files (ranges 0 to the last page), by absolute path.
profile_of() {
	printf "hotset-profile 1\npage-size %s\nsource snapshot\n" "$ps"
	local n=0 f size
	for f in "$@"; do
		size=$(stat -c %s "$f")
		[ "$size" -gt 0 ] || continue
		printf "f 0:0 0 0 0.000000000 r 0-%d %s\n" $(((size + ps - 1) / ps - 1)) "$(readlink -f "$f")"
		n=$((n + 1))
	done
	printf "end %d 0 0\n" $n
}

test_expect_success 'with -p, the filters leave out the profile entries they would in a walk' '
	make_tree &&
	( IFS="
"; profile_of $(find tree -type f) ) > p.prof &&
	check() {
		find tree -type f -exec cat {} + > /dev/null &&
		hotset status --json -p p.prof -I "*.c" > j 2> err &&
		check_eq "$(totals j)" "$(find_totals tree -type f -name "*.c" ! -empty)" &&
		hotset status --json -p p.prof -i "*.o" > j 2> err &&
		check_eq "$(totals j)" "$(find_totals tree -name "*.o" -prune -o -type f ! -empty)" &&
		hotset status --json -p p.prof -m 1M > j 2> err &&
		check_eq "$(totals j)" "$(find_totals tree -type f ! -empty -size -1048577c)" &&
		# a PATH whose entries are all filtered out is no mistyped PATH: exit 0
		hotset status --json -p p.prof -I "*.c" tree/lib.o > j 2> err &&
		check_eq "$(json j "j[\"files\"]")" 1 &&
		hotset status --json -p p.prof -I "*.h" tree/src > j 2> err &&
		check_eq "$(json j "(j[\"files\"], j[\"skipped_files\"])")" "(0, 0)"
	} &&
	retry check &&
	expect_code 2 hotset status -p p.prof --files-from - < /dev/null 2> err &&
	grep -q -- "--files-from and -p do not go together" err
'

test_expect_success 'a list is acted on as it is read: the next name is not waited for' '
	mkfifo list && touch err
	{ code=0; hotset status --files-from list -j 1 > out 2> err || code=$?; echo $code > rc; } &
	exec 3> list &&
	echo missing-1 >&3 &&
	for i in $(seq 100); do grep -q missing-1 err && break; sleep 0.1; done &&
	grep -q "^hotset: missing-1: cannot open" err &&
	echo missing-2 >&3 && exec 3>&- && wait &&
	check_eq "$(cat rc)" 1 && grep -q "^hotset: missing-2: cannot open" err
'

test_expect_success 'list errors: a directory or device refused, long lines and NULs told by line' '
	mkdir d && printf x > f &&
	expect_code 2 hotset status --files-from d 2> err &&
	grep -q "^hotset: d: is a directory, not a list of names" err &&
	expect_code 2 hotset status --files-from /dev/null 2> err &&
	grep -q "is a device, not a list of names" err &&
	expect_code 2 hotset status --files-from no-such-list 2> err &&
	grep -q "^hotset: no-such-list: cannot open the list" err &&
	expect_code 2 hotset status -0 f 2> err && grep -q -- "-0 is for the names of --files-from" err &&
	expect_code 2 hotset status --files-from "" 2> err &&
	expect_code 2 hotset status --files-from f --files-from f 2> err &&
	expect_code 2 hotset status -I "" f 2> err &&
	{ printf "f\n\n\n"; head -c 5000 /dev/zero | tr "\\0" a; printf "\nf\n"; } > long.list &&
	expect_code 1 hotset status --json --files-from long.list > j 2> err &&
	grep -q "^hotset: long.list:4: a name of PATH_MAX (4096) bytes or more, skipped$" err &&
	check_eq "$(json j "(j[\"files\"], j[\"skipped_files\"])")" "(1, 1)" &&
	printf "f\0f\0" | expect_code 1 hotset status --files-from - 2> err &&
	grep -q "^hotset: (standard input):1: a NUL byte in the name (for NUL-ended names, give -0)" err &&
	# empty lines are skipped, silently
	printf "\n\nf\n\n" | hotset status --files-from - 2> err > out && test ! -s err
'

test_expect_success REALFS 'evict, warm and snapshot take lists and filters too' '
	make_tree &&
	check() {
		find tree -type f -print0 | hotset evict -q --files-from - -0 -I "*.c" &&
		hotset status --json -I "*.c" tree > j &&
		check_eq "$(json j "j[\"resident_pages\"]")" 0 &&
		hotset status --json -i "*.c" tree > j &&
		check_eq "$(json j "j[\"resident_pages\"] == j[\"pages\"]")" 1 &&
		find tree -name "*.c" | hotset warm -q --files-from - &&
		hotset status --json -I "*.c" tree > j &&
		check_eq "$(json j "j[\"resident_pages\"] == j[\"pages\"]")" 1
	} &&
	retry check &&
	# the list names relative paths; the profile holds absolute ones
	find tree -name "*.o" -prune -o -type f ! -empty -size -1048577c -print0 > want &&
	snap() {
		find tree -type f -exec cat {} + > /dev/null &&
		find tree -type f | hotset snapshot -q -o s.prof --files-from - -m 1M -i "*.o" &&
		hotset show --json s.prof > show.json &&
		python3 -c "
import json, os, sys
got = sorted(os.fsencode(f[\"path\"]) for f in json.load(open(\"show.json\"))[\"files\"])
want = sorted(os.path.abspath(p) for p in open(\"want\", \"rb\").read().split(b\"\\0\") if p)
sys.exit(got != want or len(want) < 5)"
	} &&
	retry snap
'

test_done
