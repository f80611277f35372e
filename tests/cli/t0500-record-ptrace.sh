#!/usr/bin/env bash
# hotset record --backend=ptrace, as root and as an unprivileged user (the
# point of this backend): a job that reads known pages in every way a
# program can (tests/helpers/readjob.c) gets exactly those pages in its
# profile, and nothing from /proc, /sys or /dev; read positions are
# followed across dup, fork, exec and inherited fds; the command runs as if
# bare (exit status, 126/127, signals, stops, processes it leaves running);
# an interrupted recording still writes its profile; a killed hotset
# leaves no process stopped or traced.
. "$(dirname "$0")/../lib.sh"
# pyenv's python3 shim costs a second a call here, and nobody cannot run it
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
python3() { "$PY" "$@"; }

ps=$(getconf PAGESIZE)
readjob() { "$HELPERS/readjob" "$@"; }
# The job readjob. Built with ASan, its leak check must be off under ptrace:
# LeakSanitizer stops the process with a clone(CLONE_UNTRACED) that ptraces
# it, which cannot work while it is traced (strace and gdb too).
RJ=("$HELPERS/readjob")
ldd "$HELPERS/readjob" 2>/dev/null | grep -q libasan && RJ=(env ASAN_OPTIONS=detect_leaks=0 "${RJ[@]}")
check() { python3 "$TESTS_DIR/helpers/readjob-check.py" "$@"; }
prereq_STRACE() { command -v strace >/dev/null; }
# Wait (at most 10 s) for a file to appear.
wait_for() { local i; for i in $(seq 200); do [ -e "$1" ] && return 0; sleep 0.05; done; echo "no $1" >&2; return 1; }

# as USER CMD...: run CMD as root or as nobody. RUN_AS_nobody for commands
# put in the background ($! must be the command's own pid).
as() {
	local who=$1; shift
	if [ "$who" = nobody ]; then as_nobody "$@"; else "$@"; fi
}
RUN_AS_root=() RUN_AS_nobody=(setpriv --reuid=nobody --regid=nogroup --clear-groups --)
# workdir USER: the test's directory writable by USER, readjob's files in d/
workdir() { mine $1 && as $1 mkdir d && as $1 "$HELPERS/readjob" prepare d; }
mine() { [ "$1" = root ] || chown nobody:nogroup .; }
rec() { local who=$1; shift; as "$who" "$HOTSET" record -q --backend=ptrace "$@"; }

# pages_of PATH: the pages of PATH in the profile JSON in file j, as "0-1,4"
pages_of() {
	python3 - "$1" <<-\EOF
	import json, sys
	j = json.load(open("j"))
	p = sorted({q for f in j["files"] if f["path"] == sys.argv[1]
	            for a, b in f["ranges"] for q in range(a, b + 1)})
	out, i = [], 0
	while i < len(p):
	    k = i
	    while k + 1 < len(p) and p[k + 1] == p[k] + 1:
	        k += 1
	    out.append(str(p[i]) if i == k else "%d-%d" % (p[i], p[k]))
	    i = k + 1
	print(",".join(out) or "-")
	EOF
}

# descendants PID: every process below PID
descendants() {
	local c
	for c in $(cat /proc/$1/task/*/children 2>/dev/null); do echo $c; descendants $c; done
}

for who in root nobody; do
	pre=; [ $who = nobody ] && pre=NOBODY

	test_expect_success "$pre" "$who: every way of reading gives exactly the pages read" '
		workdir '$who' &&
		rec '$who' -o p -- "${RJ[@]}" all d > expect &&
		test -s expect &&
		hotset show --json p > j &&
		check expect j "$PWD/d" &&
		check_eq "$(json j "\" \".join((j[\"backend\"], j[\"mmap_pages\"], j[\"source\"]))")" "ptrace faulted record"
	'

	test_expect_success "$pre" "$who: each scenario alone, with the trace" '
		workdir '$who' &&
		for s in $(readjob list); do
			case $s in all|interrupt) continue;; esac
			as '$who' "$HELPERS/readjob" prepare d &&
			rec '$who' --trace -o p -- "${RJ[@]}" $s d > expect &&
			hotset show --json p > j && check expect j "$PWD/d" || { echo "scenario $s" >&2; return 1; }
		done &&
		hotset show --trace --json p > j &&
		check_eq "$(json j "j[\"trace_lines\"] > 0")" 1
	'

	test_expect_success "$pre" "$who: nothing from /proc, /sys, /dev or memfd; the program is executed" '
		workdir '$who' &&
		rec '$who' -o p -- "${RJ[@]}" pseudo d > expect &&
		hotset show --json p > j &&
		check expect j "$PWD/d" &&
		check_eq "$(json j "\" \".join(f[\"path\"] for f in j[\"files\"] if f[\"path\"].startswith((\"/proc/\", \"/sys/\", \"/dev/\", \"/memfd:\")) or \"(deleted)\" in f[\"path\"])")" "" &&
		check_eq "$(json j "\" \".join(f[\"flags\"] for f in j[\"files\"] if f[\"path\"] == \"$HELPERS/readjob\")")" "mx"
	'

	test_expect_success "$pre" "$who: positions shared across fork, dup and exec; inherited fds start where they are" '
		mine '$who' &&
		head -c $((10 * ps)) /dev/zero > f &&
		rec '$who' -o p -- sh -c "exec 3< f; dd bs=$ps count=1 <&3; (dd bs=$ps count=1 skip=2 <&3); exec 4<&3; dd bs=$ps count=1 <&4" > /dev/null 2>&1 &&
		hotset show --json p > j &&
		check_eq "$(pages_of "$PWD/f")" "0,3-4" &&
		{ dd bs=$ps count=2 of=/dev/null 2> /dev/null && rec '$who' -o p -- cat > /dev/null; } < f &&
		hotset show --json p > j &&
		check_eq "$(pages_of "$PWD/f")" "2-9"
	'

	test_expect_success "$pre" "$who: a #! script and its interpreter are executed; a thread that execs" '
		mine '$who' &&
		head -c $((3 * ps)) /dev/zero > f &&
		printf "#!/bin/sh\ncat f > /dev/null\n" > s.sh && chmod 755 s.sh &&
		rec '$who' -o p -- ./s.sh &&
		hotset show --json p > j &&
		check_eq "$(pages_of "$PWD/s.sh")" 0 &&
		check_eq "$(json j "[\"x\" in f[\"flags\"] for f in j[\"files\"] if f[\"path\"] in (\"$PWD/s.sh\", \"$(realpath /bin/sh)\")]")" "[True, True]" &&
		check_eq "$(pages_of "$PWD/f")" "0-2" &&
		rec '$who' -o p -- "$PY" -c "import threading, os; t = threading.Thread(target=lambda: os.execv(\"/bin/cat\", [\"cat\", \"f\"])); t.start(); t.join()" > /dev/null &&
		hotset show --json p > j &&
		check_eq "$(pages_of "$PWD/f")" "0-2"
	'

	test_expect_success "$pre" "$who: a process that makes itself non-dumpable is still recorded" '
		mine '$who' &&
		head -c $((3 * ps)) /dev/zero > f &&
		rec '$who' -o p -- "$PY" -c "import ctypes; assert ctypes.CDLL(None).prctl(4, 0, 0, 0, 0) == 0; open(\"f\", \"rb\").read()" 2> err &&
		! grep -q "not dumpable" err &&
		hotset show --json p > j &&
		check_eq "$(pages_of "$PWD/f")" "0-2"
	'

	test_expect_success "$pre" "$who: exit status, 126, 127, 125; no profile when the command cannot run" '
		mine '$who' &&
		expect_code 3 rec '$who' -o p -- sh -c "exit 3" &&
		hotset show p > /dev/null &&
		expect_code 143 rec '$who' -o p2 -- sh -c "kill -TERM \$\$" &&
		# (a PATH directory nobody may not search would make it EACCES: 126)
		PATH=/usr/local/bin:/usr/bin:/bin expect_code 127 rec '$who' -o p3 -- no-such-command-xyzzy 2> err &&
		grep -q "no-such-command-xyzzy" err && test ! -e p3 &&
		printf "#!/bin/sh\necho ran\n" > plain && chmod 644 plain &&
		expect_code 126 rec '$who' -o p3 -- ./plain > out 2> err &&
		test ! -s out && test ! -e p3 &&
		# a profile that cannot be written is told before the job runs
		expect_code 125 rec '$who' -o /nonexistent/dir/p -- echo ran > out 2> err &&
		grep -q "cannot write the profile: /nonexistent: No such file or directory" err &&
		test ! -s out &&
		mkdir pdir && expect_code 125 rec '$who' -o pdir -- echo ran > out 2> err &&
		grep -q "pdir: cannot write the profile: a directory" err && test ! -s out &&
		# where access() says yes but no file can be made
		expect_code 125 rec '$who' -o /proc/p -- echo ran > out 2> err &&
		grep -q "/proc/p: cannot write the profile: cannot create files" err && test ! -s out &&
		rec '$who' -o p4 -- true && ls p4* > list && check_eq "$(cat list)" p4
	'

	test_expect_success "$pre" "$who: SIGTERM to hotset: the job gets it, the profile is written whole" '
		workdir '$who' &&
		{ "${RUN_AS_'$who'[@]}" "$HOTSET" record -q --backend=ptrace -o p -- "${RJ[@]}" interrupt d > expect & } &&
		pid=$! &&
		wait_for d/interrupt.ready &&
		kill -TERM $pid &&
		rc=0 && wait $pid || rc=$? &&
		check_eq $rc 143 &&
		hotset show --json p > j &&
		check expect j "$PWD/d" &&
		check_eq "$(ls -A | grep -v "^\(d\|p\|j\|expect\)\$" | tr "\n" " ")" ""
	'
done

test_expect_success 'on one CPU, where the tracer never polls: every way of reading, exactly' '
	workdir root &&
	taskset -c 0 "$HOTSET" record -q --backend=ptrace -o p -- "${RJ[@]}" all d > expect &&
	test -s expect &&
	hotset show --json p > j &&
	check expect j "$PWD/d"
'

test_expect_success 'a file a shell truncates with > stays the input it was; its new content is output, once' '
	head -c $((10 * ps)) /dev/zero > x && head -c $((40 * ps)) /dev/zero > y &&
	"$HOTSET" record -q --backend=ptrace -o p -- sh -c "cat x > /dev/null; cat y > x; cat x > /dev/null" &&
	hotset show --json p > j &&
	check_eq "$(pages_of "$PWD/x")" "0-9" &&
	! grep -q "^o $PWD/x\$" p &&
	rm -f z &&
	"$HOTSET" record -q --backend=ptrace -o p -- sh -c "echo a > z; echo b > z; cat z > /dev/null" &&
	check_eq "$(grep -c "^o $PWD/z\$" p)" 1 &&
	! grep -q "^f .* $PWD/z\$" p
'

test_expect_success 'SIGINT to hotset: the job is interrupted, the profile is written whole' '
	mkdir d && readjob prepare d
	"$HOTSET" record -q --backend=ptrace -o p -- "${RJ[@]}" interrupt d > expect &
	pid=$! &&
	wait_for d/interrupt.ready &&
	kill -INT $pid &&
	rc=0 && wait $pid || rc=$? &&
	check_eq $rc 130 &&
	hotset show --json p > j &&
	check expect j "$PWD/d"
'

test_expect_success NOBODY 'a killed hotset leaves no process stopped or traced' '
	workdir nobody &&
	{ "${RUN_AS_nobody[@]}" "$HOTSET" record -q --backend=ptrace -o p -- sh -c "sleep 60 & sleep 60 & exec \"$HELPERS/readjob\" interrupt d" > expect & } &&
	pid=$! &&
	wait_for d/interrupt.ready &&
	procs=$(descendants $pid) && test $(echo $procs | wc -w) -ge 4 &&
	for p in $procs; do grep -q "^Name:.*sleep" /proc/$p/status && { kill -STOP $p; break; }; done &&
	kill -KILL $pid && { wait $pid || :; } &&
	for i in $(seq 100); do
		left= &&
		for p in $procs; do
			st=$(sed -n "s/^State:[[:space:]]*\(.\).*/\1/p" /proc/$p/status 2>/dev/null) || st=
			tp=$(sed -n "s/^TracerPid:[[:space:]]*//p" /proc/$p/status 2>/dev/null) || tp=
			case $st in ""|Z|X) continue;; esac
			left="$left $p:$st:$tp"
		done &&
		[ -z "$left" ] && break; sleep 0.1
	done &&
	{ [ -z "$left" ] || { echo "left:$left" >&2; return 1; }; }
'

# The process left waits for go, made only once hotset has ended: a hotset
# that waited for it would wait 30 s, and find marker written.
test_expect_success 'a job that leaves a process running: hotset ends with its first process, the process keeps working' '
	head -c $((5 * ps)) /dev/urandom > f &&
	out=$("$HOTSET" record -q --backend=ptrace -o p -- sh -c "(for i in \$(seq 300); do [ -e go ] && break; sleep 0.1; done; cat f > copy; echo done > marker) < /dev/null > /dev/null 2>&1 & exit 0") &&
	test ! -e marker && hotset show p > /dev/null &&
	touch go &&
	for i in $(seq 200); do [ -s marker ] && break; sleep 0.05; done &&
	check_eq "$(cat marker)" done && cmp f copy
'

test_expect_success 'stops and signals reach the job as they would bare' '
	"$HOTSET" record -q --backend=ptrace -o p -- sh -c "trap \"echo got USR1\" USR1; kill -USR1 \$\$; kill -STOP \$\$; echo resumed" > out &
	pid=$! &&
	for i in $(seq 100); do
		job=$(descendants $pid | tail -n 1) &&
		[ -n "$job" ] && grep -Eq "^State:.*(stopped|tracing stop)" /proc/$job/status && break; sleep 0.05
	done &&
	grep -Eq "^State:.*(stopped|tracing stop)" /proc/$job/status &&
	kill -CONT $job &&
	wait $pid &&
	check_eq "$(cat out | tr "\n" " ")" "got USR1 resumed "
'

test_expect_success 'io_uring and Linux AIO are refused (ENOSYS): programs fall back to system calls' '
	"$HOTSET" record -q --backend=ptrace -o p -- "$PY" -c "import ctypes; l = ctypes.CDLL(None, use_errno=True); print(l.syscall(425, 1, 0), ctypes.get_errno(), l.syscall(206, 1, 0), ctypes.get_errno())" > out &&
	check_eq "$(cat out)" "-1 38 -1 38"
'

test_expect_success NOBODY 'the probe, and the summary, say ptrace; auto picks ptrace for nobody' '
	chown nobody:nogroup . &&
	as_nobody "$HOTSET" record --backend=ptrace --probe &&
	as_nobody "$HOTSET" record --json -o p -- true 2> sum &&
	check_eq "$(json sum "\"%s %d %d\" % (j[\"backend\"], j[\"lost_events\"], j[\"exit_status\"])")" "ptrace 0 0" &&
	expect_code 3 "$HOTSET" record -o p -- sh -c "exit 3" 2> sum &&
	grep -q "^Command exited with non-zero status 3$" sum &&
	expect_code 3 "$HOTSET" record --json -o p -- sh -c "exit 3" 2> sum &&
	check_eq "$(json sum "(j[\"exit_status\"], j[\"signal\"])")" "(3, None)"
'

test_expect_success NOBODY 'a job that leaves a process running still has its reads and CPU counted' '
	chown nobody:nogroup . &&
	head -c $((4 << 20)) /dev/zero > big && chmod 644 big &&
	as_nobody "$HOTSET" record --backend=ptrace --json -o p -- sh -c "cat big > /dev/null; sleep 2 > /dev/null 2>&1 &" 2> sum &&
	check_eq "$(json sum "j[\"still_running\"] >= 1 and j[\"rchar_bytes\"] >= 4 << 20 and j[\"user_seconds\"] + j[\"sys_seconds\"] > 0")" 1
'

test_expect_success REALFS 'the summary ends with what hotset time reports: a cold read came from the disk' '
	head -c $((4 << 20)) /dev/urandom > cold && sync cold &&
	"$HELPERS/pagetool" evict cold &&
	hotset record --backend=ptrace --json -o p -- cat cold 2> sum > /dev/null &&
	{ check_eq "$(json sum "j[\"disk_read_bytes\"] >= 4 << 20 and j[\"io_wait_seconds\"] is not None and j[\"wall_seconds\"] > 0")" 1 ||
	  { cat sum >&2; false; }; } &&
	hotset record --backend=ptrace -o p -- cat cold 2> sum > /dev/null &&
	grep -q "^I/O wait" sum && grep -q "^Read from disk" sum
'

# The profile of a real build, as nobody, lists what strace -f shows it
# reading (tests/cli/t0520-record-real.sh does the same as root, for both
# backends).
test_expect_success NOBODY,STRACE 'nobody: a make of a small C project, next to strace -f' '
	command -v make > /dev/null && command -v cc > /dev/null || { echo "# no make or cc"; return 0; }
	mine nobody && as_nobody mkdir proj && cd proj &&
	printf "prog: main.o util.o\n\t\$(CC) -o \$@ \$^ -lm\n%%.o: %%.c\n\t\$(CC) -O1 -c -o \$@ \$<\n" > Makefile &&
	printf "#include <stdio.h>\nint util(int);\nint main(void) { printf(\"%%d\\\\n\", util(2)); return 0; }\n" > main.c &&
	printf "#include <math.h>\nint util(int x) { return (int)sqrt(x * 8.0); }\n" > util.c &&
	chown nobody:nogroup . && as_nobody make -s > /dev/null && as_nobody rm -f prog *.o &&
	as_nobody "$HOTSET" record -q --backend=ptrace -o p -- make -s > /dev/null &&
	check_eq "$(./prog)" 4 && as_nobody rm -f prog *.o &&
	as_nobody strace -ff -qq -y -o st -e trace=open,openat,openat2,creat,execve,execveat,read,pread64,readv,preadv,preadv2,mmap,sendfile,splice,copy_file_range make -s > /dev/null &&
	hotset show --json p > j &&
	python3 "$TESTS_DIR/helpers/strace-compare.py" j st "$PWD"
'

# (LeakSanitizer cannot run under strace either)
test_expect_success STRACE 'when ptrace is not possible (hotset traced itself), it says so' '
	export ASAN_OPTIONS=detect_leaks=0 &&
	expect_code 1 strace -f -o /dev/null "$HOTSET" record --backend=ptrace --probe 2> err &&
	grep -q "ptrace is not allowed here" err &&
	expect_code 125 strace -f -o /dev/null "$HOTSET" record --backend=ptrace -o p -- true 2> err &&
	grep -q "ptrace is not allowed here" err && test ! -e p
'

test_expect_success 'a file whose path is over PATH_MAX is left out with a warning, as with bpf' '
	top=$PWD n=$(printf "x%.0s" $(seq 250)) && (
		for i in $(seq 20); do mkdir $n && cd $n; done &&
		echo hello > f &&
		hotset record -q --backend=ptrace -o "$top/p" -- cat f > /dev/null 2> "$top/err"
	) &&
	grep -q "1 read of files whose paths are too long to record (over PATH_MAX) left out" err
'

test_done
