#!/usr/bin/env bash
# hotset doctor and the job's memory cgroup: record writes the cgroup the
# job was charged in and the limit over it (and whose) into the profile.
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

test_done
