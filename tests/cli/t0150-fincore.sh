#!/usr/bin/env bash
# On real trees, status agrees page for page with fincore(1) for every
# file whose residency it can know; after evict, nothing is resident.
# fincore (util-linux 2.38) counts with mincore, truthful for root.
. "$(dirname "$0")/../lib.sh"

prereq_FINCORE() { command -v fincore >/dev/null && fincore --json --bytes /dev/null >/dev/null 2>&1; }

# compare.py PATH...: status -v --json against fincore --json --bytes, file
# by file. Other processes may change residency under us, so fincore runs
# before and after status: a file counts as compared when both fincore
# runs agree, and one that changed is compared again next round (3 at most).
cat > "$TRASH/compare.py" <<'PY'
import json, os, subprocess, sys

hotset, paths = os.environ["HOTSET"], sys.argv[1:]

def fincore(files):
    out = {}
    for i in range(0, len(files), 2000):
        batch = files[i:i + 2000]
        r = subprocess.run(["fincore", "--json", "--bytes", "--"] + batch,
                           capture_output=True, check=False)
        for e in json.loads(r.stdout or b'{"fincore": []}')["fincore"]:
            out[os.fsencode(e["file"])] = int(e["res"])
    return out

def status():
    r = subprocess.run([hotset, "status", "-v", "--json", "--"] + paths,
                       capture_output=True, check=False)
    j = json.loads(r.stdout)
    return j, {os.fsencode(i["path"]): i for i in j["items"]}

ps = os.sysconf("SC_PAGESIZE")
agreed, disagreed = 0, []
j, items = status()
files = [os.fsdecode(p) for p in items]
pending = set(items)
for round in range(3):
    before = fincore(files)
    j, items = status()
    after = fincore(files)
    again = set()
    for p in pending:
        it = items.get(p)
        if it is None or p not in before or p not in after:
            continue
        if before[p] != after[p]:
            again.add(p)
        elif it["resident_pages"] is None:
            disagreed.append((p, "unknown", before[p] // ps))
        elif it["resident_pages"] * ps != before[p]:
            again.add(p)
            if round == 2:
                disagreed.append((p, it["resident_pages"], before[p] // ps))
        else:
            agreed += 1
    pending = again
    if not pending:
        break
total = len(items)
print("files %d, agreed %d, unsettled %d, disagreed %d, unknown %d" %
      (total, agreed, len(pending), len(disagreed), j["unknown_files"]))
for d in disagreed[:20]:
    print("  %r: status %s, fincore %s" % d)
# every file knowable compared, bar a few whose residency kept changing
sys.exit(0 if not disagreed and total > 0 and agreed >= total * 0.98 and
         j["unknown_files"] == 0 else 1)
PY

test_expect_success FINCORE,REALFS 'a copy of /usr/include/linux and some /usr/lib files' '
	mkdir tree && cp -r /usr/include/linux tree/include &&
	mkdir tree/lib &&
	for f in /usr/lib/x86_64-linux-gnu/libc.so.6 /usr/lib/x86_64-linux-gnu/libm.so.6 \
		/usr/lib/x86_64-linux-gnu/libz.so.1 /usr/lib/x86_64-linux-gnu/libstdc++.so.6 \
		/usr/lib/os-release /usr/lib/locale/C.utf8/LC_CTYPE; do
		test -f "$f" && cp "$f" tree/lib/ || :
	done &&
	sync -f tree &&
	# varied residency: cold, whole, a prefix through readahead, scattered pages
	find tree -type f | sort > files &&
	xargs -a files "$HELPERS/pagetool" evict &&
	python3 -c "
import os, sys
ps = os.sysconf(\"SC_PAGESIZE\")
for n, f in enumerate(open(\"files\").read().split(\"\n\")[:-1]):
    fd = os.open(f, os.O_RDONLY)
    if n % 4 == 1 or \"/lib/\" in f:
        os.read(fd, 1 << 30) if n % 4 == 1 else None    # whole, through readahead
    if n % 4 == 2:
        os.read(fd, 5000)                              # a prefix, readahead decides
    if n % 4 == 3 or \"/lib/\" in f:                    # scattered pages, readahead off
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
        for p in (0, 2, 5, 6, 7, 9, 20, 100, 400, 401):
            os.pread(fd, 1, p * ps)
    os.close(fd)
" &&
	{ python3 "$TRASH/compare.py" tree > out || { cat out; false; }; } && cat out
'

test_expect_success FINCORE 'the real /usr/include and /usr/lib libraries, as they are' '
	{ python3 "$TRASH/compare.py" /usr/include /usr/lib/x86_64-linux-gnu/lib*.so.* > out ||
	  { cat out; false; }; } && cat out
'

test_expect_success FINCORE,REALFS 'after evict, fincore finds no page of the copy resident' '
	mkdir tree && cp -r /usr/include/linux tree/include && cat $(find tree -type f) > /dev/null &&
	hotset evict tree > out &&
	find tree -type f -print0 | xargs -0 fincore --json --bytes > fc.json &&
	check_eq "$(json fc.json "sum(int(e[\"res\"]) for e in j[\"fincore\"])")" 0 &&
	hotset status --json tree > j &&
	check_eq "$(json j "j[\"resident_pages\"]")" 0
'

# Files of every kind fincore and status both know: partly, fully and not
# resident, sparse, empty, with odd names (a space, a newline, a tab, a
# backslash, a byte that is not UTF-8, UTF-8, a C1 control as UTF-8).
odd_files() {
	mkpages part 12 && mkpages full 5 && mkpages cold 3 &&
	head -c 5000 /dev/zero > short && pagetool evict short &&
	truncate -s 1G sparse && printf data | dd of=sparse bs=4096 seek=1000 conv=notrunc status=none &&
	: > empty &&
	for n in "a b" "new
line" "tab	x" "back\\slash" $'bad\xff' "é" $'c1\xc2\x9b'; do printf x > "$n"; done &&
	pagetool read part 0 3-5 11 && pagetool read full 0-4 && pagetool read short 0-1 &&
	pagetool read sparse 1000
}

# same_as_fincore ARGS...: status and fincore print the same, with these
# options, on the files of odd_files (residency may change under us: the
# comparison is tried three times)
same_as_fincore() {
	local files=(part full cold short sparse empty "a b" "new
line" "tab	x" "back\\slash" $'bad\xff' "é" $'c1\xc2\x9b')
	check() {
		LC_ALL=C.UTF-8 fincore "$@" -- "${files[@]}" > want &&
		hotset status "$@" -- "${files[@]}" > got &&
		{ cmp want got || { diff want got; false; }; }
	}
	retry check "$@"
}

test_expect_success FINCORE,REALFS 'status -r -n -b -o RES,PAGES,SIZE,FILE prints what fincore prints' '
	odd_files &&
	same_as_fincore -r -n -b -o RES,PAGES,SIZE,FILE &&
	grep -q "^8192 2 5000 short$" got &&
	grep -q "^4096 1 1073741824 sparse$" got &&
	grep -q "^0 0 0 empty$" got &&
	grep -Fqx "4096 1 1 a\\x20b" got && grep -Fqx "4096 1 1 new\\x0aline" got &&
	grep -Fqx "4096 1 1 bad\\xff" got && grep -Fqx "4096 1 1 back\\x5cslash" got
'

test_expect_success FINCORE,REALFS 'without -b, with headings, other columns: the same too' '
	odd_files &&
	same_as_fincore -r -n -o RES,PAGES,SIZE,FILE &&
	grep -q "^8K 2 4.9K short$" got && grep -q "^4K 1 1G sparse$" got &&
	same_as_fincore -r &&
	head -n 1 got | grep -qx "RES PAGES SIZE FILE" &&
	same_as_fincore -r -o file,Size,pages &&
	same_as_fincore -r -b -o +RES
'

# A script written for fincore --json reads .fincore[]: the same rows, keys
# in the same order, values of the same types (names that are not UTF-8
# left out: fincore writes their bytes raw, which is not JSON).
cat > "$TRASH/same-rows.py" <<'PY'
import json, sys
a, b = (json.load(open(f))["fincore"] for f in sys.argv[1:3])
keys = lambda rows: [[(k, type(v)) for k, v in r.items()] for r in rows]
sys.exit(0 if a == b and keys(a) == keys(b) else "fincore %r\nstatus  %r" % (a, b))
PY

test_expect_success FINCORE,REALFS 'with fincore'"'"'s options, --json gives the rows fincore -J gives, as .fincore[]' '
	odd_files &&
	files=(part full cold short sparse empty "a b" "new
line" "tab	x" "back\\slash" "é" $'"'"'c1\xc2\x9b'"'"') &&
	check() {
		# (a table option asks status for the table: fincore has no other output)
		LC_ALL=C.UTF-8 fincore -J -- "${files[@]}" > want.json &&
		hotset status -J -o RES,PAGES,SIZE,FILE -- "${files[@]}" > got.json &&
		python3 "$TRASH/same-rows.py" want.json got.json &&
		for o in -b "-o FILE,PAGES" "-b -o RES,SIZE,FILE,PAGES" "-n -r" "-o +FILE"; do
			LC_ALL=C.UTF-8 fincore -J $o -- "${files[@]}" > want.json &&
			hotset status -J $o -- "${files[@]}" > got.json &&
			python3 "$TRASH/same-rows.py" want.json got.json || return 1
		done
	} &&
	retry check
'

test_expect_success FINCORE 'human sizes as fincore prints them, rounding included' '
	python3 -c "
import os, random
r = random.Random(7)
sizes = [0, 1, 1023, 1024, 1025, 1075, 1076, 1126, 1127, 1997, 1998, 2047, 10239, 10240,
         1048063, 1048064, 1048575, 1048576, 1572864, 1073741823, 1073741824, (1 << 31) - 1]
sizes += [r.randrange(0, 1 << r.randrange(1, 31)) for _ in range(200)]
for i, s in enumerate(sizes):
    fd = os.open(\"f%03d\" % i, os.O_CREAT | os.O_WRONLY, 0o644)
    os.ftruncate(fd, s)
    os.close(fd)
" &&
	fincore -o SIZE,FILE f* > want && hotset status -o SIZE,FILE f* > got &&
	cmp want got &&
	grep -q "^  1024K f016$" got && grep -q "^1023.5K f014$" got && grep -q "^   1.5M f018$" got &&
	grep -q "^  1024M f019$" got
'

test_expect_success FINCORE,REALFS 'the aligned table: as fincore aligns it, for plain names' '
	mkpages a 3 && mkpages bb 300 && : > c && pagetool read bb 0-299 &&
	check() {
		fincore a bb c > want && hotset status -o RES,PAGES,SIZE,FILE a bb c > got &&
		cmp want got &&
		fincore -n -o FILE,RES,PAGES a bb c > want && hotset status -n -o FILE,RES,PAGES a bb c > got &&
		cmp want got
	} &&
	retry check &&
	grep -q "^bb    1.2M   300$" got
'

test_done
