#!/usr/bin/env bash
# hotset show: a summary (totals, the largest directories and files) that
# agrees with the profile's files, every file with its ranges under -v, the
# paths alone (--files, --print0), the recorded command shell-quoted, and
# JSON; paths with any byte but NUL come out intact.
. "$(dirname "$0")/../lib.sh"

# A profile with every line type; the second path has a space, a newline,
# a backslash and a byte that is not UTF-8.
write_profile() {
	cat > p.prof <<'PROFILE'
hotset-profile 1
# hotset profile: see docs/profile.md
created 2026-11-30T06:14:14Z
host vm
kernel 6.18.44
source record
backend ptrace
mmap-pages faulted
page-size 4096
command make -j1
cwd /src/a\x0ab
f 254:0 1048602 23870 1700000000.000000000 r 0-5 /usr/include/stdio.h
f 254:0 12 8192 1700000001.123456789 rmx 1,0 /usr/lib/with space\x0anewline\\ \xff.so
f 8:1 13 0 1700000002.000000000 - - /empty
o /tmp/out.o
t 0 0-5
t 1 1,0,1
end 3 1 2
PROFILE
}

test_expect_success 'text: header, totals, the largest directories and files' '
	write_profile &&
	hotset show p.prof > out &&
	grep -q "^Source:   record (ptrace backend), mmap pages faulted$" out &&
	grep -q "^Command:  make -j1$" out &&
	grep -Fxq "Cwd:      /src/a\\x0ab" out &&
	grep -q "^Created:  2026-11-30T06:14:14Z on vm, Linux 6.18.44, 4096-byte pages$" out &&
	grep -q "^Total:    3 files, 8 pages (32.0 KiB of memory), 1 output, 2 trace lines$" out &&
	grep -q "^Ranges:   3 ranges: 1 file read in one, 1 in several (at most 2), 1 without pages$" out &&
	grep -q "^Flags:    2 read (r), 1 mapped (m), 1 executed (x)$" out &&
	grep -q "^Largest directories, by the pages of every file under them (top 3 of 4 directories):$" out &&
	grep -q "^  PAGES     MEMORY  SHARE  FILES  DIRECTORY$" out &&
	grep -Eq "^ +8 +32.0 KiB +100.0% +2  /usr$" out &&
	grep -Eq "^ +6 +24.0 KiB +75.0% +1  /usr/include$" out &&
	grep -Eq "^ +2 +8.0 KiB +25.0% +1  /usr/lib$" out &&
	grep -q "^Most of the working set (75.0% of its pages) is under /usr/include.$" out &&
	grep -q "^Largest files, by pages (all 2):$" out &&
	grep -Eq "^ +6 +24.0 KiB +75.0% +1  /usr/include/stdio.h$" out &&
	grep -Fq "2  /usr/lib/with space\x0anewline\\\\ " out &&
	! grep -q "/empty" out && ! grep -q "/tmp/out.o" out && ! grep -q "^Trace" out &&
	hotset show p.prof --trace > out2 &&
	grep -q "^  1: \[1,0,1\]$" out2 && ! grep -q "/empty" out2
'

test_expect_success '-v: also each file with flags, pages, size and ranges, and the outputs' '
	write_profile &&
	hotset show -v p.prof > out &&
	grep -q "^Total:    3 files, 8 pages (32.0 KiB of memory), 1 output, 2 trace lines$" out &&
	grep -q "^Largest files" out &&
	grep -Eq "^r +6 +23.3 KiB  /usr/include/stdio.h \[0-5\]$" out &&
	grep -Fq "/usr/lib/with space\x0anewline\\\\ " out &&
	grep -Fq ".so [1,0]" out &&
	grep -Eq "^- +0 +0 B  /empty$" out &&
	grep -q "^  /tmp/out.o$" out &&
	! grep -q "^Trace" out &&
	hotset show --verbose p.prof > out2 && cmp out out2
'

test_expect_success '-q changes nothing: show has no warnings to leave out' '
	write_profile &&
	hotset show p.prof > a && hotset show -q p.prof > b 2> err && cmp a b && test ! -s err &&
	hotset show -v p.prof > a && hotset show --quiet -v p.prof > b && cmp a b
'

test_expect_success 'json: files with path, size and inclusive ranges in order; totals' '
	write_profile &&
	hotset show --json p.prof > j &&
	check_eq "$(json j "len(j[\"files\"])")" 3 &&
	check_eq "$(json j "j[\"files\"][0][\"path\"]")" /usr/include/stdio.h &&
	check_eq "$(json j "j[\"files\"][0][\"size\"]")" 23870 &&
	check_eq "$(json j "j[\"files\"][0][\"ranges\"]")" "[[0, 5]]" &&
	check_eq "$(json j "j[\"files\"][1][\"ranges\"]")" "[[1, 1], [0, 0]]" &&
	check_eq "$(json j "j[\"files\"][2][\"ranges\"]")" "[]" &&
	check_eq "$(json j "[f[\"pages\"] for f in j[\"files\"]]")" "[6, 2, 0]" &&
	check_eq "$(json j "j[\"pages\"]")" 8 &&
	check_eq "$(json j "j[\"bytes\"]")" 32768 &&
	check_eq "$(json j "j[\"outputs\"] == [\"/tmp/out.o\"]")" 1 &&
	check_eq "$(json j "j[\"trace_lines\"]")" 2 &&
	check_eq "$(json j "j[\"files\"][1][\"flags\"]")" rmx &&
	check_eq "$(json j "j[\"files\"][2][\"dev\"]")" 8:1 &&
	check_eq "$(json j "(j[\"source\"], j[\"backend\"], j[\"page_size\"], j[\"cwd\"]) == (\"record\", \"ptrace\", 4096, \"/src/a\\nb\")")" 1 &&
	check_eq "$(json j "[f[\"mtime_ns\"] for f in j[\"files\"]]")" "[1700000000000000000, 1700000001123456789, 1700000002000000000]" &&
	check_eq "$(json j "\"mtime\" in j[\"files\"][0]")" 0
'

test_expect_success 'json: a path with a newline, a backslash and a non-UTF-8 byte round-trips' '
	write_profile &&
	hotset show --json p.prof > j &&
	python3 -c "
import json, os, sys
j = json.load(open(\"j\"))
want = b\"/usr/lib/with space\nnewline\\\\ \xff.so\"
got = os.fsencode(j[\"files\"][1][\"path\"])
sys.exit(0 if got == want else \"got %r\" % got)"
'

test_expect_success 'json: every byte but NUL survives, control characters included' '
	{
		printf "hotset-profile 1\npage-size 4096\nsource snapshot\nf 1:2 3 4 5.000000000 r 0 /"
		for i in $(seq 1 255); do
			case $i in 92) printf "\\\\\\\\";; *) printf "\\\\x%02x" $i;; esac
		done
		printf "\nend 1 0 0\n"
	} > all.prof &&
	hotset show --json all.prof > j &&
	python3 -c "
import json, os, sys
p = os.fsencode(json.load(open(\"j\"))[\"files\"][0][\"path\"])
sys.exit(0 if p == b\"/\" + bytes(range(1, 256)) else \"got %r\" % p)" &&
	hotset show all.prof > out &&
	grep -Fq "/\\x01\\x02" out
'

test_expect_success '--trace prints the access trace in order' '
	write_profile &&
	hotset show --trace p.prof > out &&
	grep -q "^  0: \[0-5\]$" out &&
	grep -q "^  1: \[1,0,1\]$" out &&
	hotset show --json --trace p.prof > j &&
	check_eq "$(json j "j[\"trace\"]")" "[[0, 0, 5], [1, 1, 1], [1, 0, 0], [1, 1, 1]]" &&
	hotset show --json p.prof > j2 &&
	check_eq "$(json j2 "j[\"trace\"] is None")" 1
'

test_expect_success 'an empty profile: no files, zero totals' '
	printf "hotset-profile 1\npage-size 4096\nsource snapshot\nend 0 0 0\n" > e.prof &&
	hotset show e.prof > out &&
	grep -q "^Total:    0 files, 0 pages (0 B of memory)$" out &&
	! grep -q "^Most of the working set" out &&
	grep -q "^Created:  unknown on ?, Linux ?, 4096-byte pages$" out &&
	! grep -q "^Largest" out &&
	hotset show --json e.prof > j &&
	check_eq "$(json j "(j[\"files\"], j[\"pages\"], j[\"bytes\"])")" "([], 0, 0)" &&
	check_eq "$(json j "[j[k] for k in (\"created\", \"host\", \"kernel\", \"command\", \"cwd\", \"backend\", \"mmap_pages\")]")" "[None, None, None, None, None, None, None]"
'

test_expect_success 'bytes count in the profile page size' '
	printf "hotset-profile 1\npage-size 512\nsource snapshot\nf 1:2 3 4 5.000000000 r 0-9,20 /x\nend 1 0 0\n" > s.prof &&
	hotset show --json s.prof > j &&
	check_eq "$(json j "(j[\"pages\"], j[\"bytes\"], j[\"page_size\"])")" "(11, 5632, 512)"
'

test_expect_success 'options may follow the profile; the output is the same' '
	write_profile &&
	hotset show --json p.prof > a &&
	hotset show p.prof --json > b &&
	cmp a b
'

test_expect_success 'the example in docs/profile.md is a valid profile' '
	sed -n "/^## Example/,/^## /p" "$TESTS_DIR/../docs/profile.md" |
		sed -n "/^\`\`\`\$/,/^\`\`\`\$/p" | sed "1d;\$d" > doc.prof &&
	head -n1 doc.prof | grep -q "^hotset-profile 1$" &&
	hotset show --json doc.prof > j &&
	check_eq "$(json j "(len(j[\"files\"]), len(j[\"outputs\"]), j[\"trace_lines\"])")" "(3, 1, 2)"
'

test_expect_success 'totals beyond 64 bits of bytes are capped, not wrapped' '
	{ printf "hotset-profile 1\npage-size 4096\nsource snapshot\n" &&
	  for i in 1 2 3 4 5; do
		printf "f 254:0 $i 1 1.000000000 r 0-2251799813685247 /f$i\n"
	  done && printf "end 5 0 0\n"; } > big.prof &&
	hotset show --json big.prof > j &&
	check_eq "$(json j "j[\"bytes\"]")" 18446744073709551615
'

test_expect_success 'a profile truncated in place while being read: told, exit 2, no bus error' '
	awk "BEGIN { print \"hotset-profile 1\npage-size 4096\nsource snapshot\";
		for (i = 1; i <= 200000; i++) printf \"f 254:0 %d 8192 1.000000000 r 0-1 /d/f%d\n\", i, i;
		print \"end 200000 0 0\" }" > big.prof &&
	mkfifo out &&
	{ { "$HOTSET" show -v big.prof > out 2> err; echo $? > rc; } & } &&
	exec 3< out &&
	head -c 4096 <&3 > /dev/null &&
	truncate -s 100 big.prof &&
	cat <&3 > /dev/null && exec 3<&- &&
	wait &&
	check_eq "$(cat rc)" 2 &&
	grep -q "big.prof: the profile shrank while it was being read" err
'

test_expect_success 'PROFILE - is read from standard input, for show and -p' '
	mkpages f 3 && pagetool read f 0-1 &&
	"$HOTSET" snapshot -q -o - f | "$HOTSET" show --json - > j &&
	check_eq "$(json j "(j[\"profile\"] == \"-\", j[\"pages\"], j[\"files\"][0][\"ranges\"])")" "(True, 2, [[0, 1]])" &&
	# read again: another job may have dropped caches since (the window is now milliseconds)
	pagetool read f 0-1 && "$HOTSET" snapshot -q -o - f | "$HOTSET" status -p - --json > j &&
	check_eq "$(json j "j[\"resident_pages\"]")" 2 &&
	printf "junk\n" | { expect_code 2 "$HOTSET" show - 2> err; } &&
	grep -q "^hotset: -:1: not a hotset profile" err
'

test_expect_success 'PROFILE - on a terminal: refused, not waited for' '
	command -v script > /dev/null || { echo "# no script(1): skipped"; return 0; }
	expect_code 2 script -qec "\"$HOTSET\" show -" /dev/null < /dev/null > out 2>&1 &&
	grep -q "standard input is a terminal" out
'

test_expect_success 'a closed stdout is an error, not a crash' '
	write_profile &&
	expect_code 1 "$HOTSET" show p.prof >&- 2> err &&
	grep -q "error writing to standard output" err
'

# ---- the summary on many files, checked against the JSON ---------------------

summary_check() { python3 "$TESTS_DIR/helpers/show-summary-check.py" "$@"; }

# make_tree DIR: 3000 small files (1 to 4 pages) in 60 directories, half of
# them subdirectories of the others, some larger files in a few of them
make_tree() {
	python3 - "$1" "$ps" <<-'EOF'
	import os, sys
	top, ps = sys.argv[1], int(sys.argv[2])
	for i in range(3000):
	    d = os.path.join(top, "d%02d" % (i % 30), *(["sub"] if i % 60 >= 30 else []))
	    os.makedirs(d, exist_ok=True)
	    n = (i * 7) % 4 + 1 + (12 if i % 97 == 0 else 0)
	    with open(os.path.join(d, "f%04d" % i), "wb") as f:
	        f.write(b"x" * (n * ps - i % 3))
	EOF
}

test_expect_success 'summary of a snapshot of 3000 files: totals, directories and files as the JSON has them' '
	make_tree tree && cat $(find tree -type f) > /dev/null &&
	hotset snapshot -q -o p.prof tree &&
	hotset show p.prof > out && hotset show --json p.prof > j &&
	test "$(json j "len(j[\"files\"])")" -gt 1000 &&
	summary_check out j &&
	test $(sed -n "/^Largest directories/,/^\$/p" out | wc -l) -eq 13 &&
	test $(sed -n "/^Largest files/,/^\$/p" out | wc -l) -eq 12
'

test_expect_success 'the summary of a recorded job agrees with its JSON too' '
	make_tree tree &&
	hotset record -q -o r.prof -- sh -c "find tree -type f -exec cat {} + > /dev/null" &&
	hotset show r.prof > out && hotset show --json r.prof > j &&
	test "$(json j "sum(\"/tree/\" in f[\"path\"] for f in j[\"files\"])")" -eq 3000 &&
	summary_check out j
'

test_expect_success 'more directories than are counted exactly: the largest, with exact figures' '
	# 40000 directories of one page, 12 of about 1200 pages spread among
	# them, and one of 5000 pages that appears only at the end
	awk "BEGIN { print \"hotset-profile 1\npage-size 4096\nsource snapshot\"; n = 0
		for (i = 0; i < 40000; i++) {
			printf \"f 1:2 %d 4096 1.000000000 r 0 /l/%d/f\n\", n++, i
			if (i % 30 == 0) { h = (i / 30) % 12
				printf \"f 1:2 %d 0 1.000000000 r 0-%d /h/%d/f%d\n\", n++, 9 + h, h, i }
		}
		for (i = 0; i < 50; i++) printf \"f 1:2 %d 0 1.000000000 r 0-99 /late/f%d\n\", n++, i
		print \"end \" n \" 0 0\" }" > big.prof &&
	hotset show big.prof > out && hotset show --json big.prof > j &&
	summary_check out j &&
	grep -q "^Largest directories.*(top 10 of more than 32768 directories):$" out &&
	grep -Eq "^ +5000 .* 50  /late$" out
'

# A C++ compile's working set: Boost's headers, 30 subdirectories of 10
# pages each; the compiler, 200 pages; the standard library, 50.
compile_profile() {
	{ printf "hotset-profile 1\npage-size 4096\nsource record\n" &&
	  for i in $(seq 0 29); do
		printf "f 1:2 $i 0 1.000000000 r 0-9 /usr/include/boost/lib$i/detail/x.hpp\n"
	  done &&
	  printf "f 1:2 100 0 1.000000000 rx 0-199 /usr/lib/gcc/x86_64-linux-gnu/12/cc1plus\n" &&
	  printf "f 1:2 101 0 1.000000000 r 0-49 /usr/include/c++/12/vector\n" &&
	  printf "end 32 0 0\n"; } > c.prof
}

test_expect_success 'a directory counts every file under it, as du does: Boost, not its largest subdirectory' '
	compile_profile &&
	hotset show c.prof > out && hotset show --json c.prof > j &&
	summary_check out j &&
	# 300 of 550 pages: the files directly in boost have none
	grep -Eq "^ +300 +1.2 MiB +54.5% +30  /usr/include/boost$" out &&
	grep -Eq "^ +350 .* /usr/include$" out &&
	# the compiler'"'"'s directories hold nothing but its: only the deepest
	grep -Eq "^ +200 .* /usr/lib/gcc/x86_64-linux-gnu/12$" out &&
	! grep -Eq " /usr/lib/gcc$| /usr/lib$| /usr/lib/gcc/x86_64-linux-gnu$" out &&
	grep -q "^Most of the working set (54.5% of its pages) is under /usr/include/boost.$" out &&
	check_eq "$(json j "(j[\"most_under\"], j[\"most_under_pages\"]) == (\"/usr/include/boost\", 300)")" 1 &&
	check_eq "$(json j "[(d[\"path\"], d[\"pages\"], d[\"files\"]) for d in j[\"directories\"][:2]] == [(\"/usr\", 550, 32), (\"/usr/include\", 350, 31)]")" 1 &&
	# the directories that hold it: Boost and the compiler, 90.9% (the standard library is not needed)
	check_eq "$(json j "[d[\"path\"] for d in j[\"working_set_directories\"]] == [\"/usr/include/boost\", \"/usr/lib/gcc/x86_64-linux-gnu/12\"]")" 1 &&
	check_eq "$(json j "j[\"working_set_directories_pages\"]")" 500 &&
	grep -q "^Directories that hold the working set (2, with 90.9% of its pages):$" out
'

test_expect_success '--files: the paths in profile order; --print0 as they are, for xargs -0' '
	names=("a b" "new
line" "tab	x" "back\\slash" "quote'"'"'s" "é") &&
	{ printf "hotset-profile 1\npage-size 4096\nsource snapshot\n" &&
	  for n in "${names[@]}"; do
		: > "$n" &&
		printf "f 1:2 3 0 1.000000000 r - %s\n" "$PWD/$n" | sed -e "s/\\\\/\\\\\\\\/g" -e "s/	/\\\\x09/g" |
			awk "{ printf \"%s%s\", sep, \$0; sep = \"\\\\x0a\" } END { print \"\" }"
	  done && printf "o /out\nend ${#names[@]} 1 0\n"; } > p.prof &&
	hotset show --print0 p.prof > z &&
	xargs -0 stat --printf "%n\\0" < z > got &&
	for n in "${names[@]}"; do printf "%s\\0" "$PWD/$n"; done > want &&
	cmp got want && cmp z want &&
	hotset show --files --print0 p.prof | cmp - want &&
	hotset show --files p.prof > lines &&
	check_eq "$(wc -l < lines)" ${#names[@]} &&
	grep -Fxq "$PWD/new\\x0aline" lines && grep -Fxq "$PWD/tab\\x09x" lines &&
	grep -Fxq "$PWD/back\\\\slash" lines && ! grep -q /out lines
'

test_expect_success '--files and --print0 do not mix with -J, -v or --trace' '
	write_profile &&
	for o in -J -v --trace; do
		expect_code 2 hotset show --files $o p.prof > out 2> err && test ! -s out &&
		grep -q "paths only" err || return 1
	done &&
	expect_code 2 hotset show --print0 --json p.prof 2> err && grep -q "not with --json" err
'

# words a shell would split, expand or choke on, printed NUL-ended
tricky_words() { printf "%s\0" "a b" "it's" '$HOME' '*' '' 'semi;colon|pipe&' 'é' '~' '#x' 'back\slash' '"dq"' '!' 'a=b' -; }

test_expect_success 'the recorded command is shell-quoted: sh reads back the same words' '
	mapfile -d "" -t words < <(tricky_words) &&
	hotset record -q -o r.prof -- sh -c "exit 0" x "${words[@]}" &&
	hotset show r.prof > out &&
	sed -n "s/^Command:  //p" out > cmd && test -s cmd &&
	sh -c "eval \"set -- \$(cat cmd)\" && printf \"%s\\\\0\" \"\$@\"" > got &&
	{ printf "%s\\0" sh -c "exit 0" x && tricky_words; } > want &&
	cmp got want &&
	grep -q "^Command:  sh -c .exit 0. x .a b. " out
'

test_expect_success 'control characters in the command are $'"'"'\xHH'"'"': bash reads back the same words' '
	words=("new
line" "tab	x" "esc[31m" "$(printf "\\302\\233")csi" "$(printf "\\377")") &&
	hotset record -q -o r.prof -- sh -c "exit 0" "${words[@]}" &&
	hotset show r.prof > out &&
	sed -n "s/^Command:  //p" out > cmd && test $(wc -l < cmd) -eq 1 &&
	! LC_ALL=C grep -q "[[:cntrl:]]" cmd &&
	grep -qF "\$'"'"'\\x0a'"'"'" cmd &&
	bash -c "eval \"set -- \$(cat cmd)\" && printf \"%s\\\\0\" \"\$@\"" > got &&
	{ printf "%s\\0" sh -c "exit 0" "${words[@]}"; } > want &&
	cmp got want
'

test_expect_success 'json: the keys of docs/json.md, of the types it says, and no others' '
	write_profile &&
	hotset show --json --trace p.prof > j &&
	printf "hotset-profile 1\npage-size 4096\nsource snapshot\nend 0 0 0\n" > e.prof &&
	hotset show --json e.prof > e &&
	python3 - "$TESTS_DIR/../docs/json.md" j e <<-'"'"'EOF'"'"'
	import json, re, sys
	doc = open(sys.argv[1]).read().split("\n## show\n")[1].split("\n## ")[0]
	want = {}
	for m in re.finditer(r"^\| `([^`]+)` \| ([a-z|\\]+) \|", doc, re.M):
	    want[m.group(1)] = m.group(2).replace("\\", "").split("|")
	types = {"int": lambda v: isinstance(v, int) and not isinstance(v, bool), "number": lambda v: isinstance(v, (int, float)),
	         "string": lambda v: isinstance(v, str), "bool": lambda v: isinstance(v, bool),
	         "array": lambda v: isinstance(v, list), "object": lambda v: isinstance(v, dict), "null": lambda v: v is None}
	bad = []
	for path in sys.argv[2:]:
	    j, got = json.load(open(path)), {}
	    def walk(o, prefix):
	        for k, v in o.items():
	            got[prefix + k] = v
	            if isinstance(v, list) and v and isinstance(v[0], dict):
	                for item in v:
	                    walk(item, prefix + k + "[].")
	    walk(j, "")
	    keys = set(got) | {k for k in want if "[]." not in k}
	    for k in sorted(keys):
	        if k not in want:
	            bad.append("%s: %s is not in docs/json.md" % (path, k))
	        elif k not in got:
	            bad.append("%s: %s is missing" % (path, k))
	        elif not any(types[t](got[k]) for t in want[k]):
	            bad.append("%s: %s is %r, not %s" % (path, k, got[k], "|".join(want[k])))
	    if list(j)[:2] != ["report", "format"] or j["report"] != "show":
	        bad.append("%s: does not start with report: show and format" % path)
	sys.exit("\n".join(bad) or None)
	EOF
'

test_done
