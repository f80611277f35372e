#!/usr/bin/env bash
# hotset record of multithreaded jobs, on every run of many: threads that
# open, read (read, lseek, pread) and exit while others go on; fds opened by
# a thread that exits and read by another; a thread pool whose process forks
# meanwhile; a fork or an exec while a thread closes and reopens a file; an
# exec while many threads close. Each backend's profile has exactly the
# pages read, and the two backends agree on a real threaded program (git
# grep) and on many Python threads.
. "$(dirname "$0")/../lib.sh"

check() { python3 "$TESTS_DIR/helpers/readjob-check.py" "$@"; }
# The job readjob; built with ASan, its leak check cannot run under ptrace.
RJ=("$HELPERS/readjob")
ldd "$HELPERS/readjob" 2>/dev/null | grep -q libasan && RJ=(env ASAN_OPTIONS=detect_leaks=0 "${RJ[@]}")
# each scenario 6 times to catch a race; once in the sanitizers' pass, where a
# memory error shows in one run and each costs twice as much
if prereq_ASAN; then RUNS=${HOTSET_TEST_THREAD_RUNS:-1}; else RUNS=${HOTSET_TEST_THREAD_RUNS:-6}; fi

as() {
	local who=$1; shift
	if [ "$who" = nobody ]; then as_nobody "$@"; else "$@"; fi
}

# runs WHO BACKEND: every threaded scenario, $RUNS times, each profile exact
runs() {
	local who=$1 backend=$2 s i
	[ "$who" = root ] || chown nobody:nogroup .
	as $who mkdir d && as $who "$HELPERS/readjob" prepare d &&
	for i in $(seq "$RUNS"); do
		for s in threads handoff pool forkreopen reopenbusy execstorm; do
			as $who "$HOTSET" record -q --backend=$backend -o p -- "${RJ[@]}" $s d > expect &&
			hotset show --json p > j &&
			check expect j "$PWD/d" || { echo "run $i, scenario $s" >&2; return 1; }
		done
	done
}

test_expect_success 'ptrace, root: threaded jobs give exactly the pages read, every run' '
	runs root ptrace
'

test_expect_success NOBODY 'ptrace, nobody: threaded jobs give exactly the pages read, every run' '
	runs nobody ptrace
'

test_expect_success BPF 'bpf: threaded jobs give exactly the pages read, every run' '
	runs root bpf
'

# pages_by_file PROFILE: "path pages" per file read (not mapped), sorted
pages_by_file() {
	hotset show --json "$1" | python3 -c '
import json, sys
for f in sorted(json.load(sys.stdin)["files"], key=lambda f: f["path"]):
    if "m" not in f["flags"]:
        print(f["path"], sorted(map(tuple, f["ranges"])))'
}

test_expect_success 'many Python threads: every file with all its pages, every run' '
	mkdir sz && for i in $(seq 1 50); do head -c $((i * 4096)) /dev/zero > sz/$i; done &&
	cat > t.py <<-\EOF &&
	import threading
	def rd(i):
	    with open("sz/%d" % (i + 1), "rb") as f: f.read()
	ts = [threading.Thread(target=rd, args=(i,)) for i in range(50)]
	[t.start() for t in ts]; [t.join() for t in ts]
	EOF
	backends=ptrace; have_prereq BPF && backends="ptrace bpf"
	for b in $backends; do
		for i in $(seq "$RUNS"); do
			hotset record -q --backend=$b -o p -- "$PYTHON" t.py &&
			hotset show --json p > j &&
			check_eq "$(json j "sorted((f[\"path\"].rsplit(\"/\", 1)[1], f[\"pages\"]) for f in j[\"files\"] if \"/sz/\" in f[\"path\"]) == sorted((str(i), i) for i in range(1, 51))")" 1 ||
				{ echo "$b, run $i" >&2; return 1; }
		done
	done
'

prereq_GIT() { command -v git > /dev/null; }

test_expect_success BPF,GIT 'git grep on 8 threads: the ptrace profile equals the bpf one' '
	mkdir t && cd t && git init -q &&
	python3 -c "
import os
for i in range(600):
    d = \"d%d\" % (i % 20)
    os.makedirs(d, exist_ok=True)
    open(\"%s/f%d\" % (d, i), \"w\").write(\"line %d\n\" % i * (1 + i * 7 % 2000))" &&
	git add -A && git -c user.email=t@t -c user.name=t commit -qm t &&
	for i in 1 2 3; do
		rm -f ../pp ../pb &&
		expect_code 1 hotset record -q --backend=ptrace -o ../pp -- git grep --threads=8 -c nothing-matches &&
		expect_code 1 hotset record -q --backend=bpf -o ../pb -- git grep --threads=8 -c nothing-matches &&
		pages_by_file ../pp > ../a && pages_by_file ../pb > ../b &&
		check_eq "$(grep -c "/t/d" ../a)" 600 &&
		diff ../a ../b
	done
'

test_done
