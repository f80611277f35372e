#!/usr/bin/env bash
# hotset doctor and the job's memory cgroup: record writes the cgroup the
# job was charged in and the limit over it (and whose) into the profile;
# doctor -p diagnoses there, not in its own cgroup, with a parent's limit,
# its peak and the sibling that filled it named; --cgroup chooses another;
# a cgroup gone is said, and its recorded limit still tells. As nobody too.
. "$(dirname "$0")/../lib.sh"

json() { python3 -c "import json, sys; j = json.load(open(sys.argv[1])); print($2)" "$1"; }
finding() { json "$1" "next((f for f in j[\"findings\"] if f[\"id\"] == \"$2\"), \"\")"; }

# A tree of 24 MiB in 24 files, not cached.
mktree() {
	mkdir -p tree/a tree/b &&
	for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16; do mkpages tree/a/f$i 256; done &&
	for i in 1 2 3 4 5 6 7 8; do mkpages tree/b/g$i 256; done
}

# The memory hierarchy: v1's memory controller, or cgroup2 with memory enabled at the top.
if [ -d /sys/fs/cgroup/memory ] && grep -q ":memory:" /proc/self/cgroup; then
	MEM=/sys/fs/cgroup/memory V=1 LIMIT=memory.limit_in_bytes
elif [ -f /sys/fs/cgroup/cgroup.controllers ] && grep -qw memory /sys/fs/cgroup/cgroup.subtree_control; then
	MEM=/sys/fs/cgroup V=2 LIMIT=memory.max
else
	MEM=
fi
prereq_MEMCG() { [ -n "$MEM" ] && [ "$(id -u)" -eq 0 ]; }

# mkcg NAME [LIMIT]: a cgroup of the test's (under the top, named for it), with a limit
CGS=()
mkcg() {
	mkdir "$MEM/$1" && CGS=("$MEM/$1" "${CGS[@]}") &&
	if [ $V = 2 ]; then echo +memory > "$MEM/$1/cgroup.subtree_control" 2>/dev/null || :; fi &&
	if [ -n "${2:-}" ]; then echo "$2" > "$MEM/$1/$LIMIT"; fi
}
# children first (CGS holds them last made first)
rmcgs() { local c; for c in "${CGS[@]}"; do rmdir "$c" 2>/dev/null || :; done; }
# rm_gone NAME: remove cgroup NAME, once the tasks that left it are gone from it too
rm_gone() {
	local i
	for i in $(seq 1 100); do
		rmdir "$MEM/$1" 2>/dev/null || [ ! -d "$MEM/$1" ] && return 0
		sleep 0.1
	done
	return 1
}
# in_cg NAME CMD...: run CMD in cgroup NAME
in_cg() { local dir=$MEM/$1; shift; sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$dir" "$@"; }

top=hotset-test.$$

test_expect_success MEMCG 'record writes the cgroup the job was charged in, and the limit over it and whose' '
	trap rmcgs EXIT && mkcg $top $((64 << 20)) && mkcg $top/job &&
	in_cg $top/job "$HOTSET" record -q --backend ptrace -o p.prof -- true &&
	grep -qx "memory-cgroup $V /$top/job" p.prof &&
	grep -qx "memory-limit $((64 << 20)) /$top" p.prof &&
	hotset show p.prof > /dev/null &&
	# where no limit is over the job, none is recorded
	mkcg $top.free && in_cg $top.free "$HOTSET" record -q --backend ptrace -o q.prof -- true &&
	grep -qx "memory-cgroup $V /$top.free" q.prof && grep -qx "memory-limit none" q.prof
'

# The case of the issue: a job in a cgroup with room of its own, under a
# parent whose limit a sibling fills; doctor -p, run from a shell outside
# both, must look where the profile says the job was charged.
test_expect_success MEMCG,REALFS,CACHESTAT 'doctor -p from outside: the profile'"'"'s cgroup, the parent'"'"'s full limit, the sibling that filled it' '
	mktree && mkdir filler && for i in $(seq 1 96); do mkpages filler/f$i 256; done &&
	trap rmcgs EXIT && mkcg $top $((48 << 20)) && mkcg $top/job $((40 << 20)) && mkcg $top/other &&
	in_cg $top/job "$HOTSET" record -q --trace --backend ptrace -o p.prof -- sh -c "cat tree/*/* > /dev/null" &&
	in_cg $top/other sh -c "cat filler/* > /dev/null" &&
	hotset doctor -J -p p.prof > d.json &&
	check_eq "$(json d.json "j[\"cgroup\"], j[\"cgroup_source\"], j[\"cause\"]")" "/$top/job profile other-activity" &&
	check_eq "$(json d.json "j[\"competitors_under\"], j[\"competitors\"][0][\"cgroup\"]")" "/$top /$top/other" &&
	check_eq "$(json d.json "[l[\"cgroup\"] for l in j[\"cgroup_limits\"]]")" "['"'"'/$top/job'"'"', '"'"'/$top'"'"']" &&
	finding d.json other-activity > f && grep -q "Others under /$top, whose memory limit the job" f &&
	grep -q "/$top/other" f && grep -q "'"'problem'"': True" f &&
	finding d.json cgroup | grep -q "the profile recorded it" &&
	# the fixes: keep in the job'"'"'s cgroup, or room in the parent
	check_eq "$(json d.json "j[\"recommendations\"][0][\"steps\"][0][\"argv\"][:2]")" "['"'"'hotset'"'"', '"'"'keep'"'"']" &&
	check_eq "$(json d.json "j[\"recommendations\"][1][\"steps\"][0][\"output\"]")" "$MEM/$top/$LIMIT" &&
	hotset doctor -p p.prof > out && grep -q "^- Memory looked at in the cgroup /$top/job" out
'

test_expect_success MEMCG 'doctor --cgroup: the cgroup named, by name or directory; one that is not: exit 2' '
	trap rmcgs EXIT && mkcg $top $((64 << 20)) && mkcg $top/job &&
	mkdir -p tree/a && mkpages tree/a/f 16 && hotset snapshot -q -o s.prof tree &&
	hotset doctor -J -p s.prof --cgroup /$top/job > d.json &&
	check_eq "$(json d.json "j[\"cgroup\"], j[\"cgroup_source\"], j[\"cgroup_memory_limit_bytes\"], j[\"cgroup_memory_limit_cgroup\"]")" "/$top/job option $((64 << 20)) /$top" &&
	hotset doctor -J -p s.prof --cgroup "$MEM/$top/job/" > e.json &&
	check_eq "$(json e.json "j[\"cgroup\"]")" "/$top/job" &&
	expect_code 2 hotset doctor -p s.prof --cgroup /$top/no-such 2> err &&
	grep -q "no such memory cgroup" err &&
	expect_code 2 hotset doctor --cgroup /$top -- touch ran 2> err && grep -q "holds no process" err &&
	test ! -e ran && expect_code 2 hotset doctor --pid $$ -p s.prof 2> err && grep -q "names the service of a CMD" err
'

# A snapshot says nothing of a job: doctor looks at its own cgroup, and says why.
test_expect_success REALFS 'a profile that names no cgroup: doctor'"'"'s own, and it says so' '
	mkdir -p tree/a && mkpages tree/a/f 16 && hotset snapshot -q -o s.prof tree &&
	hotset doctor -J -p s.prof > d.json &&
	check_eq "$(json d.json "j[\"cgroup_source\"], j[\"recorded_cgroup\"]")" "own None" &&
	finding d.json cgroup | grep -q "the profile does not say where the job ran"
'

# PLAIN: record runs in the 8 MiB, where ASan's own memory has no room
test_expect_success MEMCG,REALFS,PLAIN 'a profile whose cgroup is gone: said, and the limit recorded then still tells' '
	mktree && trap rmcgs EXIT && mkcg $top $((8 << 20)) &&
	in_cg $top "$HOTSET" record -q --trace --backend ptrace -o p.prof -- sh -c "cat tree/*/* > /dev/null" &&
	rm_gone $top && hotset doctor -J -p p.prof > d.json &&
	check_eq "$(json d.json "j[\"cgroup\"], j[\"recorded_cgroup\"], j[\"recorded_memory_limit_bytes\"], j[\"cause\"]")" "None /$top $((8 << 20)) memory-limit" &&
	finding d.json cgroup | grep -q "not on this machine now" &&
	finding d.json memory-limit | grep -q "when the profile was recorded, below what a warm re-run needs"
'

# As nobody: the job is nobody's (its files too), in a cgroup root made
# for it; nobody reads the cgroups' figures (they are world-readable) and
# the residency of its own files, not of the system's: said first, and
# the cause named all the same.
test_expect_success MEMCG,NOBODY,REALFS,CACHESTAT 'as nobody: what could not be seen first, and the cause named from what could' '
	mktree && chown -R nobody tree && mkdir filler && for i in $(seq 1 96); do mkpages filler/f$i 256; done &&
	chmod -R go+rX . && chown nobody . &&
	trap rmcgs EXIT && mkcg $top $((48 << 20)) && mkcg $top/job && mkcg $top/other &&
	in_cg $top/job setpriv --reuid=nobody --regid=nogroup --clear-groups -- \
		"$HOTSET" record -q --trace --backend ptrace -o p.prof -- sh -c "cat tree/*/* > /dev/null" &&
	in_cg $top/other sh -c "cat filler/* > /dev/null" &&
	as_nobody "$HOTSET" doctor -J -p p.prof > d.json &&
	check_eq "$(json d.json "j[\"findings\"][0][\"id\"], j[\"cgroup\"], j[\"cause\"]")" "unseen /$top/job other-activity" &&
	check_eq "$(json d.json "j[\"nothing_to_fix\"], j[\"competitors\"][0][\"cgroup\"]")" "False /$top/other"
'

test_done
