#!/usr/bin/env bash
# hotset snapshot: a profile of exactly the pages resident now under PATHs,
# written atomically, that status/evict -p read back.
. "$(dirname "$0")/../lib.sh"

# ranges FILE PROFILE: the file's ranges in the profile, as "a-b,c"
# (profiles hold absolute paths)
ranges() {
	hotset show --json "$2" > ranges.json &&
	python3 -c '
import json, os, sys
for f in json.load(open("ranges.json"))["files"]:
    if os.fsencode(f["path"]) == os.fsencode(os.path.abspath(sys.argv[1])):
        print(",".join("%d-%d" % (a, b) if a != b else "%d" % a for a, b in f["ranges"]))
        break
else:
    print("absent")' "$1"
}

test_expect_success REALFS 'the profile lists exactly the resident runs' '
	mkdir d &&
	mkpages d/part 64 && mkpages d/full 5 && mkpages d/cold 7 && printf "" > d/empty &&
	check() {
		pagetool evict d/part d/cold &&
		pagetool read d/part 0 3 10-12 63 && pagetool read d/full 0-4 &&
		hotset snapshot -o s.prof d > out &&
		grep -q "^Snapshot of 2 files, 11 resident pages (44.0 KiB of memory), written to s.prof$" out &&
		check_eq "$(ranges d/part s.prof)" "0,3,10-12,63" &&
		check_eq "$(ranges d/part s.prof)" "$(pagetool resident d/part)" &&
		check_eq "$(ranges d/full s.prof)" 0-4 &&
		check_eq "$(ranges d/cold s.prof)" absent &&
		check_eq "$(ranges d/empty s.prof)" absent
	} &&
	retry check
'

test_expect_success REALFS 'each entry carries the file identity' '
	mkpages f 2 && pagetool read f 0-1 &&
	hotset snapshot -o s.prof f &&
	grep "^f " s.prof > line &&
	read -r kw dev ino size mtime flags rg path < line &&
	check_eq "$dev" "$(python3 -c "import os; d = os.stat(\"f\").st_dev; print(\"%d:%d\" % (os.major(d), os.minor(d)))")" &&
	check_eq "$ino" "$(stat -c %i f)" &&
	check_eq "$size" $((2 * ps)) &&
	check_eq "$mtime" "$(python3 -c "import os; s = os.stat(\"f\"); print(\"%d.%09d\" % (s.st_mtime_ns // 10**9, s.st_mtime_ns % 10**9))")" &&
	check_eq "$path" "$PWD/f" &&
	grep -q "^source snapshot$" s.prof &&
	grep -q "^page-size $ps$" s.prof
'

test_expect_success 'paths in the profile are absolute, whatever the PATHs given' '
	mkdir -p d/sub && printf x > d/sub/f &&
	check() {
		for p in d d/ ./d .//d "$PWD/d"; do
			cat d/sub/f > /dev/null &&
			hotset snapshot -o s.prof "$p" > /dev/null &&
			grep "^f " s.prof | grep -q " $PWD/d/sub/f$" || return 1
		done &&
		cat d/sub/f > /dev/null &&
		(cd d && hotset snapshot -o ../s.prof . > /dev/null) &&
		grep -q "^f .* $PWD/d/sub/f$" s.prof
	} &&
	retry check &&
	(cd d/sub && hotset status -p ../../s.prof --json > ../../j) &&
	check_eq "$(json j "j[\"files\"]")" 1
'

test_expect_success 'options may come before or after the PATHs' '
	printf x > f &&
	hotset snapshot -o a.prof f > /dev/null &&
	hotset snapshot f -o b.prof > /dev/null &&
	hotset snapshot f --output=c.prof -q > /dev/null &&
	test -s a.prof && test -s b.prof && test -s c.prof
'

test_expect_success REALFS 'status -p and evict -p read the snapshot back' '
	mkdir d && mkpages d/a 16 && mkpages d/b 4 &&
	check() {
		pagetool read d/a 2-9 && pagetool read d/b 0-3 &&
		hotset snapshot -o s.prof d > /dev/null &&
		hotset status -p s.prof --json > j &&
		check_eq "$(json j "(j[\"files\"], j[\"pages\"], j[\"resident_pages\"])")" "(2, 12, 12)" &&
		hotset evict -p s.prof > /dev/null &&
		hotset status -p s.prof --json > j &&
		check_eq "$(json j "(j[\"pages\"], j[\"resident_pages\"])")" "(12, 0)"
	} &&
	retry check &&
	hotset status --json d > j &&
	check_eq "$(json j "j[\"resident_pages\"]")" 0
'

test_expect_success 'the profile being written is not part of the snapshot, nor the one it replaces' '
	mkdir big out &&
	# enough resident files that the profile is flushed to its temporary
	# file (in out/) before out/ is walked
	(cd big && seq -f "file-with-a-name-long-enough-to-fill-the-buffer-%04g" 2000 | xargs touch) &&
	for f in big/*; do printf x > "$f"; done &&
	printf x > out/s.prof &&	# an earlier profile, resident
	check() {
		cat big/* out/s.prof > /dev/null &&
		hotset snapshot big out -o out/s.prof > /dev/null &&
		check_eq "$(grep -c "^f " out/s.prof)" 2000
	} &&
	retry check &&
	! grep -q "^f .*/s\\.prof" out/s.prof &&
	hotset snapshot -o - big out > out/stdout.prof &&
	! grep -q "^f .*/stdout\\.prof" out/stdout.prof &&
	hotset status -p out/s.prof > /dev/null
'

test_expect_success '-o - writes the profile to stdout, the summary to stderr' '
	printf x > f &&
	hotset snapshot -o - f > s.prof 2> err &&
	hotset show s.prof > /dev/null &&
	grep -q "written to -$" err &&
	hotset snapshot --json -o - f 2> err.json > /dev/null &&
	check_eq "$(json err.json "j[\"profile\"]")" -
'

test_expect_success '--json summary' '
	printf x > f && cat f > /dev/null &&
	hotset snapshot --json -o s.prof f > j &&
	check_eq "$(json j "sorted(j) == [\"bytes\", \"files\", \"format\", \"memory_bytes\", \"page_size\", \"pages\", \"profile\", \"report\", \"skipped_files\"]")" 1 &&
	check_eq "$(json j "j[\"bytes\"] == j[\"memory_bytes\"] == j[\"pages\"] * $ps")" 1
'

test_expect_success REALFS '-v: a row per file written, as JSON items too; files skipped are counted' '
	mkpages f 4 && mkpages cold 2 &&
	check() {
		pagetool evict cold && pagetool read f 0-1 &&
		expect_code 1 "$HOTSET" snapshot -v -o s.prof f cold missing > out 2> err &&
		{ printf "%6s %10s / %-10s %s\n" 50.0% "$((2 * ps / 1024)).0 KiB" "$((4 * ps / 1024)).0 KiB" "$PWD/f" &&
		  echo "Snapshot of 1 file (1 skipped with a warning), 2 resident pages ($((2 * ps / 1024)).0 KiB of memory), written to s.prof"
		} > want &&
		diff want out &&
		hotset snapshot -v --json -o s.prof f cold > j &&
		check_eq "$(json j "j[\"items\"] == [{\"path\": \"$PWD/f\", \"pages\": 2, \"bytes\": $((2 * ps)), \"size_bytes\": $((4 * ps)), \"memory_bytes\": $((2 * ps))}]")" 1
	} &&
	retry check
'

test_expect_success REALFS 'paths with a newline and a non-UTF-8 byte survive the round trip' '
	name=$(printf "odd\nname \377") &&
	mkpages "$name" 3 &&
	check() {
		pagetool read "$name" 1-2 &&
		hotset snapshot -o s.prof . > /dev/null &&
		grep -q "^f .* $PWD/odd\\\\x0aname " s.prof &&
		check_eq "$(ranges "./$name" s.prof)" 1-2 &&
		hotset status -p s.prof --json > j &&
		check_eq "$(json j "(j[\"files\"], j[\"pages\"], j[\"resident_pages\"], j[\"skipped_files\"])")" "(1, 2, 2, 0)"
	} &&
	retry check
'

test_expect_success 'a failed snapshot leaves an existing profile as it was' '
	printf x > f && cat f > /dev/null &&
	hotset snapshot -o s.prof f > /dev/null &&
	cp s.prof before &&
	expect_code 2 "$HOTSET" snapshot -o no/such/dir/s.prof f 2> err &&
	grep -q "no/such/dir/s.prof: cannot write" err &&
	mkdir s2.prof && touch s2.prof/keep &&
	expect_code 2 "$HOTSET" snapshot -o s2.prof f 2> err &&
	grep -q "s2.prof: cannot write: a directory" err &&
	test -f s2.prof/keep &&
	cmp s.prof before &&
	check_eq "$(ls | grep -c tmp)" 0
'

test_expect_success '-o never replaces a FIFO or a device; through a symlink it writes the file named' '
	printf x > f &&
	mkfifo fifo.prof &&
	expect_code 2 "$HOTSET" snapshot -o fifo.prof f 2> err &&
	grep -q "fifo.prof: cannot write: not a regular file" err &&
	test -p fifo.prof &&
	expect_code 2 "$HOTSET" snapshot -o /dev/null f 2> err &&
	grep -q "/dev/null: cannot write: not a regular file" err &&
	test -c /dev/null &&
	mkdir real && ln -s real/s.prof link.prof && ln -s link.prof link2.prof &&
	"$HOTSET" snapshot -o link2.prof f > /dev/null &&
	test -L link.prof && test -L link2.prof && test -f real/s.prof &&
	"$HOTSET" show real/s.prof > /dev/null &&
	check_eq "$(ls real | wc -l)" 1
'

test_expect_success '.. after a symlink in a PATH goes where the kernel goes' '
	mkdir -p elsewhere/inner here &&
	printf x > elsewhere/inner/zz && printf y > here/yy &&
	cat elsewhere/inner/zz here/yy > /dev/null &&
	ln -s "$PWD/elsewhere/inner" here/link &&
	(cd here && "$HOTSET" snapshot -o ../s.prof link/.. > /dev/null) &&
	grep -q "^f .* $PWD/here/link/../inner/zz\$" s.prof &&
	! grep -q "yy\$" s.prof &&
	expect_code 125 "$HOTSET" record -o "" -- sh -c "echo ran" > out 2> err &&
	test ! -s out && grep -q "an empty path" err
'

test_expect_success 'a missing PATH is told, the rest is snapshot, exit 1' '
	printf x > f &&
	check() {
		cat f > /dev/null &&
		expect_code 1 "$HOTSET" snapshot -o s.prof missing f > out 2> err &&
		grep -q "^hotset: $PWD/missing: cannot open: No such file or directory$" err &&
		grep -q "^f .* $PWD/f$" s.prof
	} &&
	retry check
'

test_expect_success REALFS 'files changed since the snapshot: counted stale, still acted on' '
	mkdir st && mkpages st/a 4 && mkpages st/b 4 && pagetool read st/a 0-3 && pagetool read st/b 0-3 &&
	hotset snapshot -q -o st.prof st &&
	touch -d "2001-01-01" st/b &&
	hotset status --json -p st.prof > out 2> err &&
	check_eq "$(json out "j[\"stale_files\"], j[\"files\"]")" "(1, 2)" &&
	grep -q "1 file changed since st.prof was made" err &&
	hotset evict --json -p st.prof > out 2> err &&
	check_eq "$(json out "j[\"stale_files\"]")" 1 &&
	hotset warm -q --json -p st.prof > out &&
	check_eq "$(json out "j[\"stale_files\"]")" 1 &&
	hotset status -q --json -p st.prof > out 2> err && test ! -s err
'

test_expect_success REALFS 'a profile entry without pages means no pages, not the whole file' '
	mkpages np 10 && pagetool read np 0-9 &&
	hotset snapshot -q -o np.prof np &&
	sed "s/ - 0-9 / - - /" np.prof > none.prof && grep -q " - - " none.prof &&
	hotset status --json -p none.prof > out &&
	check_eq "$(json out "j[\"files\"], j[\"pages\"]")" "(1, 0)" &&
	pagetool evict np && hotset warm -q --json -p none.prof > out &&
	check_eq "$(json out "j[\"pages\"], j[\"read_pages\"]")" "(0, 0)" &&
	check_eq "$(pagetool resident np)" "" &&
	pagetool read np 0-9 && hotset evict -q -p none.prof > /dev/null &&
	check_eq "$(pagetool resident np)" 0-9
'

test_done
