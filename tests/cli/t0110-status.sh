#!/usr/bin/env bash
# hotset status: residency per file and in total, exact to the page; -p
# counts only a profile's ranges; trees are walked by the rules (FIFOs
# never opened, symlinks only with -L, each file once, -x, nothing on proc
# or sysfs even through -L); PATHs are tidied, and with -p select entries
# before they are looked at.
. "$(dirname "$0")/../lib.sh"

prereq_STRACE() { command -v strace >/dev/null; }

test_expect_success REALFS 'counts are exact to the page (readahead off)' '
	mkpages f 64 &&
	check() {
		pagetool read f 0 3 10-12 63 &&
		hotset status --json f > j &&
		check_eq "$(json j "(j[\"files\"], j[\"pages\"], j[\"resident_pages\"], j[\"unknown_files\"])")" "(1, 64, 6, 0)" &&
		check_eq "$(json j "(j[\"bytes\"], j[\"resident_bytes\"])")" "($((64 * ps)), $((6 * ps)))" &&
		check_eq "$(json j "j[\"skipped_files\"]")" 0
	} &&
	retry check
'

test_expect_success REALFS 'directories are walked; -v gives a row per file' '
	mkdir -p d/sub/deeper &&
	mkpages d/a 10 && mkpages d/sub/b 20 && mkpages d/sub/deeper/c 3 &&
	printf "" > d/empty &&
	check() {
		pagetool read d/a 0-9 && pagetool read d/sub/b 5 && pagetool read d/sub/deeper/c 2 &&
		hotset status -v --json d > j &&
		check_eq "$(json j "(j[\"files\"], j[\"pages\"], j[\"resident_pages\"])")" "(4, 33, 12)" &&
		check_eq "$(json j "sorted((i[\"path\"], i[\"pages\"], i[\"resident_pages\"]) for i in j[\"items\"]) == [(\"d/a\", 10, 10), (\"d/empty\", 0, 0), (\"d/sub/b\", 20, 1), (\"d/sub/deeper/c\", 3, 1)]")" 1 &&
		hotset status -v d > out &&
		grep -Eq "^\[OOOOOOOOOOOOOOOOOOOO\] 100.0% +40.0 KiB / 40.0 KiB +d/a$" out &&
		grep -q "^     Files: 4$" out &&
		grep -q "^  Resident: 12 (48.0 KiB of memory, 48.0 KiB of file data) 36.4%$" out
	} &&
	retry check
'

test_expect_success REALFS,CACHESTAT 'dirty and writeback pages come from cachestat' '
	head -c $((8 * ps)) /dev/zero > dirty &&
	hotset status --json dirty > j &&
	check_eq "$(json j "j[\"method\"]")" cachestat &&
	check_eq "$(json j "j[\"dirty_pages\"] + j[\"writeback_pages\"]")" 8 &&
	check_eq "$(json j "all(k in j for k in (\"evicted_pages\", \"recently_evicted_pages\"))")" 1 &&
	sync dirty &&
	hotset status --json dirty > j &&
	check_eq "$(json j "j[\"dirty_pages\"]")" 0
'

# A profile with the given range list for each file named.
profile_of() {	# profile_of RANGES FILE [RANGES FILE...]
	printf "hotset-profile 1\npage-size %s\nsource snapshot\n" "${PROFILE_PS:-$ps}"
	local n=0
	while [ $# -gt 0 ]; do
		printf "f 0:0 0 0 0.000000000 r %s %s\n" "$1" "$(readlink -f "$2")"
		shift 2; n=$((n + 1))
	done
	printf "end %d 0 0\n" $n
}

# Nothing on stderr FILE but the warning that profile_of's entries are stale.
only_stale_warning() { ! grep -v "changed since .* was made" "$1"; }

test_expect_success REALFS '-p counts exactly the profile ranges' '
	mkpages f 64 &&
	profile_of 0-9,20,40-41 f > p.prof &&
	check() {
		pagetool read f 5-25 &&
		hotset status -p p.prof --json > j &&
		check_eq "$(json j "(j[\"files\"], j[\"pages\"], j[\"resident_pages\"], j[\"bytes\"])")" "(1, 13, 6, $((13 * ps)))" &&
		hotset status -v --json -p p.prof > j &&
		check_eq "$(json j "[(i[\"pages\"], i[\"resident_pages\"]) for i in j[\"items\"]]")" "[(13, 6)]"
	} &&
	retry check
'

test_expect_success REALFS '-p: ranges past the end of the file do not count' '
	mkpages f 64 &&
	profile_of 60-1000,$(((1 << 62) / ps * 2 - 1)) f > p.prof &&	# the last page below 2^63 bytes
	check() {
		pagetool read f 60-63 &&
		hotset status -p p.prof --json > j &&
		check_eq "$(json j "(j[\"pages\"], j[\"resident_pages\"])")" "(4, 4)"
	} &&
	retry check
'

test_expect_success REALFS '-p with PATHs: only the profile files under them' '
	mkdir x y &&
	mkpages x/a 4 && mkpages y/b 8 && mkpages xx 2 &&
	profile_of 0-3 x/a 0-7 y/b 0-1 xx > p.prof &&
	check() {
		pagetool read x/a 0-3 && pagetool read y/b 0 &&
		hotset status -p p.prof --json "$PWD/x" > j &&
		check_eq "$(json j "(j[\"files\"], j[\"pages\"], j[\"resident_pages\"])")" "(1, 4, 4)" &&
		hotset status --json "$PWD/y/" -p p.prof > j &&
		check_eq "$(json j "(j[\"files\"], j[\"pages\"], j[\"resident_pages\"])")" "(1, 8, 1)" &&
		hotset status -p p.prof --json / > j &&
		check_eq "$(json j "j[\"files\"]")" 3 &&
		hotset status -p p.prof --json ./y > j &&
		check_eq "$(json j "(j[\"files\"], j[\"pages\"])")" "(1, 8)" &&
		(cd x && hotset status -p ../p.prof --json . > ../j) &&
		check_eq "$(json j "(j[\"files\"], j[\"pages\"])")" "(1, 4)"
	} &&
	retry check
'

test_expect_success '-p with PATHs: entries not selected are not looked at' '
	mkdir x y && printf a > x/a && printf b > y/b &&
	profile_of 0 x/a 0 y/b > p.prof &&
	rm y/b && mkfifo y/b &&
	hotset status -p p.prof --json x > j 2> err &&
	only_stale_warning err &&
	check_eq "$(json j "(j[\"files\"], j[\"skipped_files\"])")" "(1, 0)" &&
	rm y/b &&
	hotset status -p p.prof --json x > j 2> err &&
	only_stale_warning err &&
	expect_code 1 hotset status -p p.prof --json y > j 2> err &&
	grep -q "y/b: no longer exists" err
'

test_expect_success '-p: PATHs are tidied (., .., //) and their real path selects too' '
	mkdir -p x/sub y && printf a > x/a && printf b > y/b && ln -s x xl &&
	profile_of 0 x/a 0 y/b > p.prof &&
	for p in ./x/. x/../x x//sub/.. y/../x "/$PWD/x" "$PWD//x/" xl xl/; do
		hotset status -p p.prof -v --json "$p" > j 2> err &&
		check_eq "$(json j "[i[\"path\"] for i in j[\"items\"]] == [\"$PWD/x/a\"]")" 1 &&
		only_stale_warning err || { echo "PATH $p" >&2; return 1; }
	done &&
	(cd x/sub && hotset status -p ../../p.prof --json .. > ../../j) &&
	check_eq "$(json j "j[\"files\"]")" 1 &&
	(cd x && hotset status -p ../p.prof --json .. > ../j) &&
	check_eq "$(json j "j[\"files\"]")" 2
'

test_expect_success '-p: a PATH that selects no entry is told, exit 1' '
	mkdir x empty && printf a > x/a &&
	profile_of 0 x/a > p.prof &&
	expect_code 1 hotset status -p p.prof --json x empty nowhere > j 2> err &&
	check_eq "$(json j "(j[\"files\"], j[\"skipped_files\"])")" "(1, 2)" &&
	grep -q "^hotset: empty: no file of the profile is under it$" err &&
	grep -q "^hotset: nowhere: no file of the profile is under it$" err &&
	check_eq "$(grep -vc "changed since" err)" 2 &&
	expect_code 1 hotset status -q -p p.prof empty > out 2> err &&
	test ! -s err
'

test_expect_success 'snapshot and the walk write tidy paths (.. is kept: after a symlink it leads elsewhere)' '
	mkdir -p pr/sub && printf a > pr/a && printf b > pr/sub/b && printf c > pr/c &&
	hotset snapshot -o s.prof ./pr/./a "//$PWD//pr/sub/." pr/sub/../c > /dev/null &&
	grep -q " $PWD/pr/a\$" s.prof &&
	grep -q " $PWD/pr/sub/b\$" s.prof &&
	grep -q " $PWD/pr/sub/../c\$" s.prof &&
	! grep -E "/\\./|//" s.prof &&
	hotset status -v --json "/$PWD//pr/./sub" ./pr//a > j &&
	check_eq "$(json j "[i[\"path\"] for i in j[\"items\"]] == [\"$PWD/pr/sub/b\", \"pr/a\"]")" 1
'

test_expect_success REALFS '-p: a profile in smaller pages counts each of our pages once' '
	test "$ps" -eq 4096 &&
	mkpages f 4 &&
	PROFILE_PS=512 profile_of 4,0,2,16 f > p.prof &&
	check() {
		pagetool read f 0-3 &&
		hotset status -p p.prof --json > j &&
		check_eq "$(json j "(j[\"pages\"], j[\"resident_pages\"])")" "(2, 2)" &&
		PROFILE_PS=16384 profile_of 0 f > big.prof &&
		hotset status -p big.prof --json > j &&
		check_eq "$(json j "(j[\"pages\"], j[\"resident_pages\"])")" "(4, 4)"
	} &&
	retry check
'

test_expect_success 'a FIFO in the tree is skipped without a word, and never opened' '
	mkdir d && printf x > d/file && mkfifo d/fifo &&
	timeout 20 "$HOTSET" status --json d > j 2> err &&
	check_eq "$(json j "j[\"files\"]")" 1 &&
	test ! -s err
'

test_expect_success STRACE 'the FIFO is not even opened (strace)' '
	mkdir d && printf x > d/file && mkfifo d/fifo &&
	ASAN_OPTIONS=detect_leaks=0 timeout 60 strace -f -qq -e trace=open,openat -o trace "$HOTSET" status d > /dev/null &&
	grep -q "\"file\"" trace &&
	! grep -q "fifo" trace
'

test_expect_success 'symlinks are followed only with -L; each file counts once' '
	mkdir d other && mkpages other/o 3 && mkpages d/a 2 &&
	ln -s ../other/o d/olink && ln -s ../other d/odir && ln -s a d/alink &&
	hotset status --json d > j &&
	check_eq "$(json j "(j[\"files\"], j[\"pages\"])")" "(1, 2)" &&
	hotset status -L --json d > j &&
	check_eq "$(json j "(j[\"files\"], j[\"pages\"])")" "(2, 5)"
'

test_expect_success 'hard links count once' '
	mkdir d && mkpages d/a 5 && ln d/a d/b && mkdir d/sub && ln d/a d/sub/c &&
	hotset status --json d > j &&
	check_eq "$(json j "(j[\"files\"], j[\"pages\"])")" "(1, 5)" &&
	hotset status --json d/a d/b > j &&
	check_eq "$(json j "(j[\"files\"], j[\"pages\"])")" "(1, 5)"
'

test_expect_success 'a file named twice, or under two PATHs, counts once' '
	mkdir -p pr/sub && mkpages pr/a 2 && mkpages pr/sub/b 3 && mkpages odd 1 &&
	hotset status odd odd ./odd > out &&
	grep -q "^     Files: 1$" out &&
	hotset status --json pr pr/a > j &&
	check_eq "$(json j "(j[\"files\"], j[\"pages\"])")" "(2, 5)" &&
	hotset status --json pr/sub pr ./pr/ pr/sub/b > j 2> err &&
	check_eq "$(json j "(j[\"files\"], j[\"pages\"])")" "(2, 5)" &&
	hotset status -L --json pr/sub pr > j 2> err &&
	check_eq "$(json j "(j[\"files\"], j[\"pages\"])")" "(2, 5)" &&
	test ! -s err
'

test_expect_success '-L: symlinks to files on proc or sysfs are not examined' '
	mkdir pl && printf x > pl/real &&
	ln -s /proc/self/status pl/st && ln -s /proc/version pl/ver &&
	{ ! test -e /sys/kernel/mm/transparent_hugepage/enabled ||
	  ln -s /sys/kernel/mm/transparent_hugepage/enabled pl/sysf; } &&
	hotset status -v -L --json pl > j 2> err &&
	check_eq "$(json j "[i[\"path\"] for i in j[\"items\"]] == [\"pl/real\"]")" 1 &&
	test ! -s err
'

test_expect_success MOUNT '-x stays on one filesystem' '
	mkdir -p d/mnt && mkpages d/a 1 &&
	mount -t tmpfs none d/mnt && trap "umount -l $PWD/d/mnt || true" EXIT &&
	head -c $((3 * ps)) /dev/zero > d/mnt/m &&
	hotset status --json d > j &&
	check_eq "$(json j "(j[\"files\"], j[\"pages\"])")" "(2, 4)" &&
	hotset status -x --json d > j &&
	check_eq "$(json j "(j[\"files\"], j[\"pages\"])")" "(1, 1)"
'

test_expect_success 'any number of threads gives the same totals' '
	for i in 1 2 3 4 5 6 7 8; do
		mkdir -p t/$i/a/b && printf %${i}000s > t/$i/f && printf x > t/$i/a/b/g
	done &&
	hotset status --json -j 1 t > j1 &&
	hotset status --json -j 4 t > j4 &&
	hotset status --json t > jd &&
	check_eq "$(json j1 "(j[\"files\"], j[\"pages\"], j[\"bytes\"])")" "(16, 20, 36008)" &&
	check_eq "$(json j4 "(j[\"files\"], j[\"pages\"], j[\"bytes\"])")" "(16, 20, 36008)" &&
	check_eq "$(json jd "(j[\"files\"], j[\"pages\"], j[\"bytes\"])")" "(16, 20, 36008)"
'

test_expect_success 'a path with a newline: escaped in text, exact in JSON' '
	printf x > "new
line" &&
	hotset status -v "new
line" > out &&
	grep -Fq "new\\x0aline" out &&
	hotset status -v --json "new
line" > j &&
	check_eq "$(json j "j[\"items\"][0][\"path\"] == \"new\\nline\"")" 1
'

test_expect_success 'nothing to count: zero totals, no division by zero' '
	mkdir empty &&
	hotset status empty > out &&
	grep -q "^     Files: 0$" out &&
	grep -q "^  Resident: 0 (0 B of memory, 0 B of file data) -$" out &&
	hotset status --json empty > j &&
	check_eq "$(json j "(j[\"files\"], j[\"pages\"], j[\"resident_pages\"], j[\"method\"])")" "(0, 0, 0, None)"
'

test_expect_success 'the table: fincore'"'"'s columns and hotset'"'"'s, in any case, + to add' '
	printf x > f &&
	hotset status -r --output-all f > out &&
	check_eq "$(head -n 1 out)" "PAGES SIZE FILE RES DIRTY_PAGES DIRTY WRITEBACK_PAGES WRITEBACK EVICTED_PAGES EVICTED RECENTLY_EVICTED_PAGES RECENTLY_EVICTED COUNTED_PAGES RES% UNKNOWN STALE" &&
	check_eq "$(wc -l < out)" 2 &&
	hotset status -r -o res,Pages,FILE,unknown,stale,counted_pages f > out &&
	check_eq "$(cat out)" "RES PAGES FILE UNKNOWN STALE COUNTED_PAGES
$(tail -n 1 out)" &&
	tail -n 1 out | grep -Eq "^[0-9]+[BK] [01] f no no 1$" &&
	hotset status -r -o +stale f > out &&
	check_eq "$(head -n 1 out)" "RES PAGES SIZE FILE STALE" &&
	hotset status -r --output-all -o SIZE f > out &&
	check_eq "$(head -n 1 out)" "SIZE" &&
	hotset status -r -o FILE --output-all f > out &&	# -o chooses last, as in fincore
	check_eq "$(head -n 1 out)" "FILE" &&
	hotset status -r --output-all -o +SIZE f > out &&
	check_eq "$(head -n 1 out | wc -w)" 17 &&
	expect_code 2 hotset status -o RES,NOPE f > out 2> err &&
	test ! -s out && grep -q "unknown column .NOPE." err &&
	expect_code 2 hotset status -o RESS f 2> err && grep -q "did you mean .RES.?" err &&
	expect_code 2 hotset status -o RES,,FILE f 2> err && grep -q "an empty column name" err &&
	expect_code 2 hotset status -o "" f 2> err && grep -q "an empty column name" err
'

test_expect_success 'the table: -n, -b, a row per file in walk order, no totals' '
	mkdir d && printf x > d/a && head -c 5000 /dev/zero > d/b && printf "" > d/c &&
	hotset status -n -b -o SIZE,FILE d/a d/b d/c > out &&
	check_eq "$(cat out)" "    1 d/a
 5000 d/b
    0 d/c" &&
	hotset status -o SIZE,FILE d/a d/b d/c > out &&
	check_eq "$(cat out)" " SIZE FILE
   1B d/a
 4.9K d/b
   0B d/c" &&
	hotset status -r -n d > out &&
	check_eq "$(wc -l < out)" 3 && ! grep -q Files out &&
	hotset status -v d > out && grep -q "^     Files: 3$" out
'

test_expect_success 'the aligned table streams: the first 1000 rows size the columns' '
	for i in $(seq 1000 1999); do : > e$i; done && truncate -s 1G big &&
	hotset status -b -o SIZE,FILE e* big > out &&
	check_eq "$(wc -l < out)" 1002 &&
	check_eq "$(sed -n 1p out)" "SIZE FILE" &&
	check_eq "$(sed -n 2p out)" "   0 e1000" &&
	check_eq "$(sed -n 1001p out)" "   0 e1999" &&
	check_eq "$(sed -n 1002p out)" "1073741824 big" &&
	hotset status -b -o SIZE,FILE big e1000 > out &&
	check_eq "$(cat out)" "      SIZE FILE
1073741824 big
         0 e1000"
'

test_expect_success REALFS 'the table without cachestat: - for its counts, never a number' '
	mkpages f 4 && pagetool read f 0-1 &&
	HOTSET_NO_CACHESTAT=1 hotset status -r -n -o DIRTY_PAGES,DIRTY,WRITEBACK_PAGES,WRITEBACK,EVICTED_PAGES,EVICTED,RECENTLY_EVICTED_PAGES,RECENTLY_EVICTED,FILE f > out &&
	check_eq "$(cat out)" "- - - - - - - - f"
'

test_expect_success REALFS,CACHESTAT 'the table with cachestat: its counts' '
	head -c $((3 * ps)) /dev/zero > dirty &&
	hotset status -r -n -b -o DIRTY_PAGES,DIRTY,WRITEBACK_PAGES,FILE dirty > out &&
	check_eq "$(awk -v ps=$ps "{ print \$1 + \$3, \$2 == \$1 * ps, \$4 }" out)" "3 1 dirty" &&
	sync dirty &&
	hotset status -r -n -o DIRTY_PAGES,DIRTY,FILE dirty > out &&
	check_eq "$(cat out)" "0 0B dirty"
'

# check_keys JSON: the keys of the report and of its items are those the
# table of "## status" in docs/json.md lists, in its order, each value of
# the type given there; those of fincore's rows (a table option) too, but
# only those of the columns chosen
cat > "$TRASH/keys.py" <<'PY'
import json, re, sys
doc = open(sys.argv[2]).read().split("\n## status\n")[1].split("\n## ")[0]
rows = re.findall(r"^\| `([a-z_%\[\].]+)` \| ([a-z|\\]+) \|", doc, re.M)
top = {k: t.replace("\\", "") for k, t in rows if "[]." not in k}
items = {k[len("items[]."):]: t.replace("\\", "") for k, t in rows if k.startswith("items[].")}
fincore = {k[len("fincore[]."):]: t.replace("\\", "") for k, t in rows if k.startswith("fincore[].")}
assert len(top) > 15 and len(items) > 10 and top["items"] == "array", (top, items)
assert len(fincore) == 16 and top["fincore"] == "array", fincore
j = json.load(open(sys.argv[1]))
def typed(v, t):
    return any({"int": isinstance(v, int) and not isinstance(v, bool),
                "number": isinstance(v, (int, float)) and not isinstance(v, bool),
                "string": isinstance(v, str), "bool": isinstance(v, bool),
                "array": isinstance(v, list), "object": isinstance(v, dict),
                "null": v is None}[k] for k in t.split("|"))
def check(obj, want, what):
    # the rows of -v, or of a table option: one of them, or none
    want = {k: t for k, t in want.items() if k not in ("items", "fincore") or k in obj}
    if list(obj) != list(want):
        sys.exit("%s: keys %s, docs/json.md %s" % (what, list(obj), list(want)))
    for k, v in obj.items():
        if not typed(v, want[k]):
            sys.exit("%s: %s is %r, not %s" % (what, k, v, want[k]))
check(j, top, "report")
for i in j.get("items", []):
    check(i, items, "item")
for i in j.get("fincore", []):
    check(i, {k: fincore[k] for k in i if k in fincore} if len(i) < len(fincore) else fincore,
          "fincore row")
PY
check_keys() { python3 "$TRASH/keys.py" "$1" "$TESTS_DIR/../docs/json.md"; }

test_expect_success REALFS 'JSON: every key of docs/json.md, in its order; cachestat counts null with mincore' '
	mkpages f 2 && head -c 5000 /dev/zero > short && pagetool read short 0-1 &&
	hotset status -v --json f short > j && check_keys j &&
	hotset status -J -o RES,FILE f short > j2 && check_keys j2 &&
	check_eq "$(json j2 "[(i[\"file\"], i[\"res\"]) for i in j[\"fincore\"]] == [(\"f\", \"0B\"), (\"short\", \"8K\")] and \"items\" not in j")" 1 &&
	hotset status -J -b --output-all f short > j2 && check_keys j2 &&
	HOTSET_NO_CACHESTAT=1 hotset status -J -c --output-all f short > j2 && check_keys j2 &&
	check_eq "$(json j "[(i[\"size\"], i[\"bytes\"], i[\"resident_bytes\"], i[\"resident_memory_bytes\"]) for i in j[\"items\"]][1]")" "(5000, 5000, 5000, $((2 * ps)))" &&
	check_eq "$(json j "j[\"resident_memory_bytes\"] - j[\"resident_bytes\"]")" "$((2 * ps - 5000))" &&
	HOTSET_NO_CACHESTAT=1 hotset status -v --json f short > j && check_keys j &&
	check_eq "$(json j "[i[\"dirty_pages\"] for i in j[\"items\"]] + [j[\"evicted_pages\"], j[\"method\"]]")" "[None, None, None, '"'"'mincore'"'"']" &&
	HOTSET_NO_CACHESTAT=1 hotset status --json f > j && check_keys j &&
	mkdir empty && HOTSET_NO_CACHESTAT=1 hotset status --json empty > j && check_keys j &&
	check_eq "$(json j "(j[\"method\"], j[\"dirty_pages\"])")" "(None, None)"
'

test_expect_success REALFS,CACHESTAT 'JSON with cachestat: its counts in items and totals' '
	head -c $((2 * ps)) /dev/zero > f &&
	hotset status -v --json f > j && check_keys j &&
	check_eq "$(json j "(j[\"method\"], j[\"items\"][0][\"dirty_pages\"] + j[\"items\"][0][\"writeback_pages\"], j[\"dirty_pages\"] + j[\"writeback_pages\"])")" "('"'"'cachestat'"'"', 2, 2)" &&
	check_eq "$(json j "all(isinstance(x[k], int) for x in (j, j[\"items\"][0]) for k in (\"evicted_pages\", \"recently_evicted_pages\"))")" 1
'

# A file of two pages and 1000 bytes, wholly resident: 3 pages, 12 KiB of
# memory (with 4 KiB pages), 9192 bytes of file data. Every command gives
# the pages' size as the memory they take, and says so; status gives the
# file data too, and says so.
test_expect_success REALFS 'a count of pages comes with the memory it takes, the same in every command' '
	head -c $((2 * ps + 1000)) /dev/zero > f && pagetool evict f &&
	mem=$(python3 -c "print(\"%.1f KiB of memory\" % (3 * $ps / 1024))") &&
	data=$(python3 -c "print(\"%.1f KiB of file data\" % ((2 * $ps + 1000) / 1024))") &&
	check() {
		pagetool read f 0-2 &&
		hotset snapshot -o p.prof f > snap && grep -qF "3 resident pages ($mem)" snap &&
		hotset status f > st && grep -qxF "     Pages: 3 ($mem, $data)" st &&
		grep -qxF "  Resident: 3 ($mem, $data) 100.0%" st &&
		hotset status -p p.prof > stp && grep -qxF "     Pages: 3 ($mem, $data)" stp &&
		hotset show p.prof > sh && grep -qF "1 file, 3 pages ($mem)" sh &&
		hotset evict f > ev && grep -qxF "Evicted 3 pages ($mem) from 1 file" ev &&
		hotset warm f > wa && grep -qxF "     Pages: 3 ($mem)" wa &&
		grep -qF "3 ($mem) read" wa
	} &&
	retry check &&
	# no size in parentheses that does not say what it is a size of
	! grep -E "\([0-9.]+ (B|KiB|MiB|GiB)[),]" snap st stp sh ev wa &&
	hotset status --json f > j &&
	check_eq "$(json j "(j[\"memory_bytes\"], j[\"file_bytes\"], j[\"resident_memory_bytes\"] == j[\"resident_pages\"] * $ps)")" "($((3 * ps)), $((2 * ps + 1000)), True)"
'

test_done
