#!/usr/bin/env bash
# hotset doctor: a cold read is I/O-bound and warm is the fix; a resident
# profile has nothing to fix; pages dropped since, a memory limit below the
# working set (and the pages it evicted) and a DAMON pageout scheme are
# named; as nobody, what could
# not be read is said; the HTML report renders in a real browser.
. "$(dirname "$0")/../lib.sh"

json() { python3 -c "import json, sys; j = json.load(open(sys.argv[1])); print($2)" "$1"; }
# finding FILE ID: the finding's object, as Python prints it (empty if none)
finding() { json "$1" "next((f for f in j[\"findings\"] if f[\"id\"] == \"$2\"), \"\")"; }

# A tree of 24 MiB in 24 files, not cached.
mktree() {
	mkdir -p tree/a tree/b &&
	for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16; do mkpages tree/a/f$i 256; done &&
	for i in 1 2 3 4 5 6 7 8; do mkpages tree/b/g$i 256; done
}
readtree() { hotset doctor -J --profile-output p.prof "$@" -- sh -c "cat tree/*/* > /dev/null"; }
# A cold read waits on I/O whatever the machine's disk: 150 reads and 20 MiB a second,
# as on a small VM (the tree then takes a second or two).
slowly() { slow_disk_make "$TRASH" 150 $((20 << 20)) && trap slow_disk_remove EXIT && "${slow_disk[@]}" "$@"; }

test_expect_success SLOWDISK,REALFS 'a cold read: the wait on I/O, the bytes from the disk, warm as the fix' '
	mktree && hotset evict -q tree &&
	slowly "$HOTSET" doctor -J --profile-output p.prof -- sh -c "cat tree/*/* > /dev/null" > d.json &&
	check_eq "$(json d.json "j[\"io_wait_fraction\"] is not None and j[\"disk_read_bytes\"] > 0")" True &&
	check_eq "$(json d.json "j[\"cache_read_bytes\"]")" None &&
	finding d.json io-wait > f && grep -q "waiting on I/O" f && grep -q "cache_read_bytes = unknown" f &&
	check_eq "$(json d.json "[f[\"problem\"] for f in j[\"findings\"] if f[\"id\"] == \"io-wait\"] == [j[\"io_wait_fraction\"] >= 0.1]")" True &&
	check_eq "$(json d.json "j[\"io_wait_fraction\"] >= 0.1")" True &&
	check_eq "$(json d.json "any(r[\"command\"] == \"hotset warm -p p.prof\" for r in j[\"recommendations\"])")" True &&
	finding d.json top-directories > t && grep -Eq "tree/a \([0-9]+% of its pages, 16 files\)" t &&
	# the kernel model: a re-run reads nothing once all it reads fits, and what readahead adds
	check_eq "$(json d.json "j[\"working_set_bytes\"] >= 24 * 1048576 and j[\"memory_needed_read_bytes\"] >= j[\"working_set_bytes\"]")" True &&
	# what a re-run needs: its reads, what it wrote (the profile) and its RSS
	check_eq "$(json d.json "j[\"memory_needed_bytes\"] == j[\"memory_needed_read_bytes\"] + j[\"memory_needed_written_bytes\"] + j[\"memory_needed_rss_bytes\"] and j[\"memory_needed_rss_bytes\"] > 0")" True &&
	finding d.json vfs-cache | grep -q "vfs_cache_pressure"
'

test_expect_success SLOWDISK,REALFS 'the text says the same, with the command to paste' '
	mktree && hotset evict -q tree &&
	slowly "$HOTSET" doctor --profile-output p.prof -- sh -c "cat tree/*/* > /dev/null" > out &&
	grep -q "^! The job spent .* waiting on I/O" out &&
	grep -q "^     \$ hotset warm -p p.prof$" out
'

# A job that writes: its new file takes page cache too, and a limit must
# leave room for it (the index build of docs/doctor.md); without a run
# (-p) what it writes is not known, and null.
test_expect_success REALFS 'what a re-run needs counts what the job writes; -p: the recorded run'"'"'s, or not known' '
	mktree &&
	hotset doctor -J --profile-output p.prof -- sh -c "cat tree/*/* > copy" > d.json &&
	check_eq "$(json d.json "j[\"memory_needed_written_bytes\"] >= 24 * 1048576")" True &&
	check_eq "$(json d.json "j[\"memory_needed_bytes\"] >= j[\"memory_needed_read_bytes\"] + 24 * 1048576")" True &&
	finding d.json working-set | grep -q "for what it writes" &&
	hotset doctor -J -p p.prof > p.json &&
	keys="[j[\"memory_needed_written_bytes\"], j[\"memory_needed_rss_bytes\"]]" &&
	check_eq "$(json p.json "$keys")" "$(json d.json "$keys")" &&
	hotset snapshot -q -o s.prof tree && hotset doctor -J -p s.prof > s.json &&
	check_eq "$(json s.json "j[\"memory_needed_written_bytes\"], j[\"memory_needed_rss_bytes\"], j[\"memory_needed_bytes\"] == j[\"memory_needed_read_bytes\"]")" "None None True" &&
	finding s.json working-set | grep -q "not known: no run, and not in the profile"
'

# The page cache is shared: warm, then diagnose, until nothing was taken between.
warm_and_diagnose() {
	hotset warm -q -p p.prof && hotset doctor -J -p p.prof > d.json &&
	test "$(json d.json "j[\"nothing_to_fix\"], j[\"recommendations\"]")" = "True []"
}

test_expect_success REALFS 'a profile all resident: nothing to fix' '
	mktree && readtree > /dev/null &&
	retry warm_and_diagnose &&
	finding d.json nothing-to-fix | grep -q "Nothing to fix" &&
	check_eq "$(json d.json "j[\"command\"], j[\"io_wait_fraction\"]")" "None None"
'

# hotset evict drops pages (fadvise): the kernel keeps no shadow entry,
# so cachestat counts no eviction, and the finding says so.
test_expect_success CACHESTAT,REALFS 'pages dropped since the profile was made: not resident, warm as the fix' '
	mktree && readtree > /dev/null && hotset evict -q -p p.prof &&
	hotset doctor -J -p p.prof > d.json &&
	check_eq "$(json d.json "j[\"nothing_to_fix\"], j[\"evicted_pages\"] is not None")" "False True" &&
	finding d.json residency > f && grep -q "in the page cache now" f &&
	grep -q "cachestat remembers no eviction" f &&
	check_eq "$(json d.json "any(r[\"command\"] == \"hotset warm -p p.prof\" for r in j[\"recommendations\"])")" True
'

# tree/a holds two thirds of the tree, tree/b a third: keeping tree/a alone
# across reboots would leave a third of the job's reads cold.
test_expect_success CACHESTAT,REALFS 'the persist fix covers every directory that holds the working set' '
	mktree && readtree > /dev/null && hotset evict -q -p p.prof &&
	hotset doctor -J -p p.prof > d.json &&
	finding d.json top-directories > t &&
	grep -Eq "Most of the working set is under $PWD/tree/a \([0-9]+% of its pages, 16 files\); [23] directories hold 9[0-9]% of it" t &&
	json d.json "\"\\n\".join([r[\"steps\"][0][\"argv\"] for r in j[\"recommendations\"] if \"hotset-persist\" in r[\"command\"]][0])" > argv &&
	grep -qxF "hotset-persist@$(systemd-escape -p "$PWD/tree/a").service" argv &&
	grep -qxF "hotset-persist@$(systemd-escape -p "$PWD/tree/b").service" argv &&
	! grep -qxF "hotset-persist@$(systemd-escape -p "$PWD/tree").service" argv && ! grep -qxF "hotset-persist@-.service" argv
'

# A memory cgroup of the test's own with a limit of 8 MiB, below the tree.
memcg_dir() {
	if [ -d /sys/fs/cgroup/memory ] && grep -q "memory" /proc/self/cgroup; then
		echo "/sys/fs/cgroup/memory/hotset-test.$$ memory.limit_in_bytes"
	elif [ -f /sys/fs/cgroup/cgroup.controllers ] && grep -qw memory /sys/fs/cgroup/cgroup.subtree_control; then
		echo "/sys/fs/cgroup/hotset-test.$$ memory.max"
	fi
}
prereq_MEMCG() { [ -n "$(memcg_dir)" ]; }

# PLAIN: hotset itself runs in the 8 MiB, where ASan's own memory has no room
test_expect_success ROOT,MEMCG,REALFS,PLAIN 'in a memory cgroup limited below the working set: the limit is named' '
	mktree && hotset evict -q tree &&
	set -- $(memcg_dir) && cg=$1 file=$2 &&
	trap "rmdir \"$cg\" 2>/dev/null" EXIT &&
	mkdir "$cg" && echo $((8 << 20)) > "$cg/$file" &&
	sh -c "echo \$\$ > \"$cg/cgroup.procs\" && exec \"$HOTSET\" doctor -J --backend ptrace --profile-output p.prof -- sh -c \"cat tree/*/* > /dev/null\"" > d.json &&
	check_eq "$(json d.json "j[\"cgroup_memory_limit_bytes\"]")" $((8 << 20)) &&
	finding d.json memory-limit > f && grep -q "limited to 8.0 MiB, below what a warm re-run needs" f &&
	grep -q "$cg/$file = 8388608" f &&
	check_eq "$(json d.json "any(\"$cg/$file\" in (r[\"command\"] or \"\") for r in j[\"recommendations\"])")" True &&
	if pagetool has-cachestat; then
		# reclaim under the limit leaves shadow entries: cachestat counts the evictions
		check_eq "$(json d.json "j[\"evicted_pages\"] > 0")" True &&
		finding d.json evicted | grep -q "evicted since they were last read"
	fi
'

damon_pageout() {
	local s
	for s in /sys/kernel/mm/damon/admin/kdamonds/*/contexts/*/schemes/*/; do
		[ "$(cat "$s/action" 2>/dev/null)" = pageout ] && { echo "$s"; return 0; }
	done
	return 1
}
prereq_DAMON() { [ "$(id -u)" -eq 0 ] && damon_pageout > /dev/null; }

# in_memcg CG CMD...: run CMD in memory cgroup CG
in_memcg() { local dir=$1; shift; sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$dir" "$@"; }

# Reclaim inside a limited cgroup leaves shadow entries: cachestat counts
# the pages as evicted, which hotset evict (fadvise) would not.
test_expect_success ROOT,MEMCG,REALFS,CACHESTAT 'others in the same memory cgroup evicted the pages: they are the cause, keep the fix' '
	mktree && hotset evict -q tree &&
	mkdir filler && for i in $(seq 1 96); do mkpages filler/f$i 256; done &&
	hotset evict -q filler &&
	set -- $(memcg_dir) && cg=$1.others file=$2 &&
	trap "rmdir \"$cg\" 2>/dev/null" EXIT &&
	mkdir "$cg" && echo $((48 << 20)) > "$cg/$file" &&
	in_memcg "$cg" "$HOTSET" record -q --trace --backend ptrace -o p.prof -- sh -c "cat tree/*/* > /dev/null" &&
	in_memcg "$cg" sh -c "cat filler/* > /dev/null" &&
	# from outside the cgroup: the profile names it
	"$HOTSET" doctor -J -p p.prof > d.json &&
	# under so small a cgroup'"'"'s pressure the kernel may reclaim the shadow
	# entries too (cachestat then counts no eviction): pages gone from a
	# cgroup that filled are lost there all the same
	if test "$(json d.json "j[\"resident_bytes\"] * 100 >= 99 * j[\"working_set_bytes\"]")" = True; then
		# reclaim took the streamed pages, not the tree: no page lost, no cause
		check_eq "$(json d.json "j[\"cause\"]")" None && exit 0
	fi &&
	check_eq "$(json d.json "j[\"cause\"]")" other-activity &&
	finding d.json other-activity > f && grep -q "evicted its pages: the cgroup is full now" f &&
	grep -q "'"'problem'"': True" f &&
	check_eq "$(json d.json "[f[\"id\"] for f in j[\"findings\"] if f[\"problem\"] and f[\"id\"] in (\"memory-limit\", \"damon\")]")" "[]" &&
	check_eq "$(json d.json "j[\"recommendations\"][0][\"command\"].startswith(\"hotset keep --budget \")")" True &&
	check_eq "$(json d.json "\"$cg/$file\" in j[\"recommendations\"][1][\"command\"]")" True
'

test_expect_success ROOT,MEMCG,REALFS,CACHESTAT 'pages reclaimed while the job'"'"'s cgroup and the machine had room: a proactive reclaimer, DAMON where there is one' '
	mktree && readtree > /dev/null && hotset evict -q tree &&
	set -- $(memcg_dir) && cg=$1.idle file=$2 &&
	trap "rmdir \"$cg\" 2>/dev/null" EXIT &&
	mkdir "$cg" && echo $((8 << 20)) > "$cg/$file" &&
	in_memcg "$cg" sh -c "cat tree/*/* > /dev/null" &&
	hotset doctor -J -p p.prof > d.json &&
	if damon_pageout > /dev/null; then
		check_eq "$(json d.json "j[\"cause\"]")" damon &&
		check_eq "$(json d.json "[f[\"problem\"] for f in j[\"findings\"] if f[\"id\"] == \"damon\"][0]")" True &&
		finding d.json damon | grep -q "it took the job" &&
		check_eq "$(json d.json "j[\"recommendations\"][0][\"command\"].startswith(\"hotset keep\")")" True
	else
		check_eq "$(json d.json "j[\"cause\"]")" unknown
	fi
'


test_expect_success DAMON,REALFS 'a DAMON pageout scheme: named, with its minimum age' '
	mktree && readtree > /dev/null && hotset evict -q -p p.prof &&
	s=$(damon_pageout) && s=${s%/} &&
	ctx=${s%/schemes/*} &&
	age=$(( $(cat "$s/access_pattern/age/min") * $(cat "$ctx/monitoring_attrs/intervals/aggr_us") / 1000000 )) &&
	hotset doctor -J -p p.prof > d.json &&
	finding d.json damon > f && cat f &&
	grep -q "memory idle for $age s or more (action pageout)" f &&
	grep -q "$s/access_pattern/age/min = " f
'

test_expect_success NOBODY,REALFS 'as nobody: what could not be read is said, with the privilege' '
	mktree && readtree > /dev/null && chmod -R go+rX . &&
	as_nobody "$HOTSET" doctor -J -p p.prof > d.json &&
	check_eq "$(json d.json "\"residency\" in [n[\"source\"] for n in j[\"not_read\"]]")" True &&
	json d.json "j[\"not_read\"]" | grep -q "write a file" &&
	if damon_pageout > /dev/null; then
		json d.json "j[\"not_read\"]" | grep -q "DAMON.*needs root"
	fi &&
	check_eq "$(json d.json "j[\"unknown_pages\"] > 0")" True
'

# What could not be seen comes first, with its share, and no "nothing to
# fix" is drawn from the part that could: most of the tree is root's, and
# nobody may not learn its residency; two files are nobody's own.
test_expect_success NOBODY,REALFS 'as nobody, most residency unknown: said first, with the share; nothing to fix is not concluded' '
	mktree && chown nobody tree/b/g1 tree/b/g2 && readtree > /dev/null && chmod -R go+rX . &&
	hotset warm -q -p p.prof &&
	as_nobody "$HOTSET" doctor -J -p p.prof > d.json &&
	check_eq "$(json d.json "j[\"nothing_to_fix\"], j[\"findings\"][0][\"id\"], j[\"findings\"][0][\"severity\"]")" "False unseen unseen" &&
	check_eq "$(json d.json "0 < j[\"seen_fraction\"] < 0.5 and j[\"unknown_pages\"] > 0")" True &&
	check_eq "$(json d.json "[f[\"id\"] for f in j[\"findings\"] if f[\"id\"] == \"nothing-to-fix\"]")" "[]" &&
	as_nobody "$HOTSET" doctor -p p.prof > out &&
	# the first finding of the text is what could not be seen, with its share
	grep -m1 "^[!?-] " out > first && grep -Eq "^\? [0-9]+% of the working set could not be seen" first &&
	! grep -q "Nothing to fix" out
'

# A profile whose files were deleted: nothing of it can be resident, and
# nothing of it is known to be: missing, said first, never "nothing to fix".
test_expect_success REALFS 'a profile whose files are gone: missing, said first; nothing to fix is not concluded' '
	mktree && cat tree/*/* > /dev/null && hotset snapshot -q -o s.prof tree && rm -r tree &&
	hotset doctor -J -q -p s.prof > d.json &&
	check_eq "$(json d.json "j[\"nothing_to_fix\"], j[\"findings\"][0][\"id\"], j[\"seen_fraction\"] == 0")" "False unseen True" &&
	check_eq "$(json d.json "j[\"missing_pages\"] == j[\"working_set_bytes\"] // j[\"page_size\"] and j[\"resident_bytes\"] == 0")" True &&
	hotset doctor -q -p s.prof > out && ! grep -q "Nothing to fix" out &&
	grep -q "^? 100% of the working set could not be seen" out
'

# Commands to paste are quoted: a directory named x$(touch PWNED)y and a
# profile named with a quote and a $(...) give commands that, pasted into
# a shell, run the command and nothing else. The commands run here are
# stubs that say what argv they got.
test_expect_success REALFS 'commands to paste are quoted: pasted, a hostile directory or profile name runs nothing but the command' '
	d="x\$(touch PWNED)y" prof="it'"'"'s \$(touch PWNED2).prof" &&
	mkdir -p "tree/$d" tree/b && for i in 1 2 3 4; do mkpages "tree/$d/f$i" 256; done &&
	mkpages tree/b/g 16 &&
	hotset record -q -o "$prof" -- sh -c "cat tree/*/* > /dev/null" &&
	hotset evict -q -p "$prof" && hotset doctor -q -p "$prof" > out &&
	mkdir stub && for c in systemctl systemd-escape hotset; do
		printf "#!/bin/sh\nprintf \"%%s\\\\n\" \"\$(basename \"\$0\")\" \"\$@\" >> \"%s/argv\"; echo >> \"%s/argv\"\n" "$PWD" "$PWD" > stub/$c &&
		chmod +x stub/$c || return 1
	done &&
	sed -n "s/^     \\$ //p" out > cmds && test -s cmds &&
	while IFS= read -r line; do PATH=$PWD/stub:$PATH bash -c "$line" || return 1; done < cmds &&
	test ! -e PWNED && test ! -e PWNED2 &&
	# hotset warm -p got the profile as one word, systemctl the escaped unit
	grep -qxF "$prof" argv &&
	unit="hotset-persist@$(systemd-escape -p "$(pwd -P)/tree/$d").service" &&
	U=$unit awk -v RS= -F "\n" "\$1 == \"systemctl\" && \$2 == \"enable\" && \$3 == \"--now\" { for (i = 4; i <= NF; i++) if (\$i == ENVIRON[\"U\"]) ok = 1 } END { exit !ok }" argv
'

# A path with an escape sequence (ESC [31m) is shown escaped as show shows
# it, in the text and in the HTML: never raw, never dropped.
test_expect_success REALFS 'control bytes in paths: escaped in the text, and shown escaped in the HTML' '
	d=$(printf "x\033[31my") && mkdir -p "tree/$d" && for i in 1 2 3; do mkpages "tree/$d/f$i" 64; done &&
	hotset record -q -o p.prof -- sh -c "cat tree/*/* > /dev/null" && hotset evict -q -p p.prof &&
	hotset doctor -q -o r.html -p p.prof > out &&
	! grep -q "$(printf "\033")" out && ! grep -q "$(printf "\033")" r.html &&
	grep -qF "x\\x1b[31my" out && grep -qF "x\\x1b[31my" r.html
'

test_expect_success 'usage errors: no command and no profile, both, standard input' '
	expect_code 2 hotset doctor 2> err && grep -q "give the command" err &&
	expect_code 2 hotset doctor -p x.prof -- true 2> err && grep -q "no CMD" err &&
	expect_code 2 hotset doctor -p - 2> err && grep -q "standard input" err
'

# (a leak of the recording here showed under make SANITIZE=1, with tests/run -b build-asan)
test_expect_success 'a command that cannot run: its status, said why, no profile' '
	expect_code 127 hotset doctor -- ./no-such-command 2> err &&
	grep -q "no-such-command: command not found" err && test ! -e hotset.profile &&
	: > notexec && chmod -x notexec &&
	expect_code 126 hotset doctor -J -- ./notexec > out 2> err && test ! -e hotset.profile
'

# A PNG that is not one colour: its rows, unfiltered bytes, hold many values.
png_has_content() {
	python3 - "$1" <<-\PY
	import struct, sys, zlib
	d = open(sys.argv[1], "rb").read()
	assert d[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
	i, idat = 8, b""
	while i < len(d):
	    n, kind = struct.unpack(">I4s", d[i:i + 8])
	    if kind == b"IDAT":
	        idat += d[i + 8:i + 8 + n]
	    i += 12 + n
	raw = zlib.decompress(idat)
	sys.exit(0 if len(set(raw)) > 16 else "blank")
	PY
}

# Sampled every 100 ms, a run of more than a minute is drawn in at most
# 600 intervals, each the average of its samples (a minute: 601 points).
# The test hook HOTSET_TIMELINE_POINTS=40 has 4 s stand for the minute:
# the same strides over a run of 6 s, not 65 (once the run here).
test_expect_success 'a run longer than a minute: the timeline in at most 600 intervals' '
	HOTSET_TIMELINE_POINTS=40 hotset doctor -q --profile-output p.prof -o r.html -- sh -c "sleep 6" > /dev/null &&
	grep -Eq "Share of each [0-9.]+ s on a CPU" r.html &&
	sed -n "/id=\"timeline\"/,/<\/svg>/p" r.html | grep -o "points=\"[^\"]*\"" > pts &&
	test "$(wc -l < pts)" = 2 &&
	for n in $(awk "{ print NF }" pts); do test "$n" -le 41 && test "$n" -ge 20 || return 1; done
'

test_expect_success CHROMIUM,SLOWDISK,REALFS 'the HTML report: self-contained, renders on a phone with the charts, no console error' '
	mktree && hotset evict -q tree &&
	slowly "$HOTSET" doctor -J --profile-output p.prof -o r.html -- sh -c "cat tree/*/* > /dev/null" > d.json &&
	check_eq "$(json d.json "j[\"html\"]")" r.html &&
	# nothing fetched: no script, stylesheet or URL but the SVG namespace
	! sed -e "s|xmlns=\"http://www.w3.org/2000/svg\"||g" r.html | grep -Eq "<script|https?://|@import|<link|src=" &&
	grep -q "name=\"viewport\"" r.html && grep -q "@media print" r.html &&
	grep -q "hotset warm -p p.prof" r.html &&
	chromium_run --window-size=412,900 --screenshot="$PWD/shot.png" "file://$PWD/r.html" > log 2>&1 &&
	png_has_content shot.png &&
	chromium_run --enable-logging=stderr --v=0 --dump-dom "file://$PWD/r.html" > dom 2> log &&
	! grep -Ei "uncaught|CONSOLE\(" log &&
	grep -q "<svg" dom && grep -q "id=\"curve\"" dom && grep -q "id=\"timeline\"" dom &&
	grep -q "<polyline" dom
'

test_expect_success 'bad profiles: missing, a FIFO (never opened), malformed with its line; exit 2' '
	expect_code 2 hotset doctor -p nope.prof 2> err && grep -q "nope.prof: No such file" err &&
	mkfifo ff && expect_code 2 timeout 10 "$HOTSET" doctor -p ff 2> err && grep -q "not a regular file" err &&
	printf "hotset-profile 1\nbogus line\n" > bad.prof &&
	expect_code 2 hotset doctor -p bad.prof 2> err && grep -q "^hotset: bad.prof:2: " err
'

test_done
