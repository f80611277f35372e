#!/usr/bin/env bash
# Every writer, run as root where another user (nobody) may plant names: a
# sticky directory all may write to (as /tmp) and a directory of nobody's.
# Links planted by nobody are never followed, whatever
# fs.protected_symlinks says; FIFOs and devices are never opened; nothing
# of root's changes; each refusal names the reason, and the command exits
# 2 (record and time: 125, the job not run). A link of the caller's own is
# still followed. And keep's start-up errors, run's modes and messages.
. "$(dirname "$0")/../lib.sh"

prereq_PYTHON() { command -v python3 >/dev/null; }

# fifo-watch FIFO -- CMD...: run CMD with a reader on FIFO (never blocking
# it), then print whether CMD opened the FIFO: "untouched" or "opened"
# (POLLHUP once a writer has come and gone, POLLIN if it wrote). Exits
# with CMD's status.
cat > "$TRASH/fifo-watch.py" <<'EOF'
import os, select, subprocess, sys
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_NONBLOCK)
try:
    rc = subprocess.call(sys.argv[3:], stdout=subprocess.DEVNULL, timeout=120)
except subprocess.TimeoutExpired:
    rc = 124
p = select.poll()
p.register(fd, select.POLLIN | select.POLLHUP)
print("opened" if p.poll(0) else "untouched")
sys.exit(rc if rc >= 0 else 128 - rc)
EOF

V=$TRASH/victims S=$TRASH/sticky N=$TRASH/theirs W=$TRASH/work
if have_prereq ROOT,NOBODY; then
	# root's files, which the planted links name
	mkdir -m 755 "$V" "$W" &&
	echo "root's secret" > "$V/secret" && chmod 600 "$V/secret" &&
	echo "root's table" > "$V/table" && chmod 644 "$V/table" &&
	(cd "$V" && stat -c "%n %a %U %s" secret table && sha256sum secret table) > "$TRASH/victims.before"
	mkdir -m 1777 "$S" && mkdir -m 755 "$N" && chown nobody:nogroup "$N"
	for d in "$S" "$N"; do
		as_nobody ln -s "$V/secret" "$d/link" &&
		as_nobody ln -s "$V/table" "$d/link.state" &&
		as_nobody mkfifo "$d/fifo" &&
		# a device only root can make: made for nobody
		mknod "$d/dev" c 1 3 && chown nobody:nogroup "$d/dev" &&
		as_nobody sh -c "echo theirs > $d/theirs" || echo "# cannot plant in $d" >&2
	done
	(cd "$W" && "$HOTSET" record -q --trace -o p.prof -- cat "$V/table" > /dev/null &&
		chmod 644 p.prof) || echo "# cannot record a profile" >&2
fi

victims_intact() {
	(cd "$V" && stat -c "%n %a %U %s" secret table && sha256sum secret table) > victims.now &&
	cmp "$TRASH/victims.before" victims.now &&
	for d in "$S" "$N"; do
		test -L "$d/link" && test -p "$d/fifo" && test -c "$d/dev" &&
		check_eq "$(cat "$d/theirs")" theirs || return 1
	done
}

# refused CODE WHAT TARGET CMD...: CMD, with TARGET (a planted name) in its
# arguments, exits CODE with the reason WHAT, root's files intact, and a
# FIFO target is never opened.
refused() {
	local code=$1 what=$2 target=$3; shift 3
	if [ -p "$target" ]; then
		expect_code "$code" python3 "$TRASH/fifo-watch.py" "$target" -- "$@" > watch 2> err ||
			{ cat err; return 1; }
		check_eq "$(cat watch)" untouched || return 1
	else
		expect_code "$code" timeout 60 "$@" 2> err || { cat err; return 1; }
	fi
	grep -q -- "$what" err || { echo "no '$what' in:"; cat err; return 1; }
	victims_intact
}

# every planted name of a directory, with what the refusal says of it
plants() {
	echo "$1/link|$1/link is a symbolic link owned by nobody (uid 65534): not followed"
	echo "$1/fifo|not a regular file (a FIFO)"
	echo "$1/dev|not a regular file (a character device)"
}

test_expect_success ROOT,NOBODY,PYTHON 'record -o, snapshot -o: nothing through a link of nobody, no FIFO nor device opened' '
	for d in "$S" "$N"; do
		plants "$d" | while IFS="|" read -r t what; do
			refused 125 "$what" "$t" "$HOTSET" record -q -o "$t" -- touch ran &&
			test ! -e ran &&
			refused 2 "$what" "$t" "$HOTSET" snapshot -q -o "$t" "$V/table" || exit 1
		done || return 1
	done
'

test_expect_success ROOT,NOBODY,PYTHON 'doctor -o, curve --svg: the same' '
	for d in "$S" "$N"; do
		plants "$d" | while IFS="|" read -r t what; do
			refused 2 "$what" "$t" "$HOTSET" doctor -q -p "$W/p.prof" -o "$t" &&
			refused 2 "$what" "$t" "$HOTSET" curve --svg "$t" "$W/p.prof" || exit 1
		done || return 1
	done
'

test_expect_success ROOT,NOBODY,PYTHON 'keep --pidfile and --log: refused before keeping, nothing kept running' '
	for d in "$S" "$N"; do
		plants "$d" | while IFS="|" read -r t what; do
			refused 2 "$what" "$t" "$HOTSET" keep --daemon --pidfile "$t" \
				--state "$PWD/k.state" "$W/p.prof" &&
			refused 2 "$what" "$t" "$HOTSET" keep --log "$t" --state "$PWD/k.state" "$W/p.prof" ||
				exit 1
		done || return 1
	done &&
	# a file of nobody in the sticky directory is not appended to (protected_regular)
	refused 2 "theirs is a file of nobody (uid 65534) in a sticky directory" "$S/theirs" \
		"$HOTSET" keep --log "$S/theirs" --state "$PWD/k.state" "$W/p.prof"
'

test_expect_success ROOT,NOBODY,PYTHON 'keep --state: in a directory of nobody, or through a link of nobody in /tmp: refused' '
	refused 2 "$S/link.state is a symbolic link of nobody" "$S/link.state" \
		"$HOTSET" keep --state "$S/link.state" "$W/p.prof" &&
	refused 2 "$N is owned by nobody (uid 65534)" "$N/k.state" \
		"$HOTSET" keep --state "$N/k.state" "$W/p.prof" &&
	test ! -e "$N/k.state" && test ! -e "$N/k.state.lock" &&
	refused 2 "fifo is a file of nobody" "$S/fifo" "$HOTSET" keep --state "$S/fifo" "$W/p.prof"
'

test_expect_success ROOT,NOBODY,PYTHON 'run --state, --logs: a directory of nobody, and its links, are refused' '
	echo "a echo job-output" > jobs &&
	refused 2 "$N is owned by nobody" "$N" "$HOTSET" run -q --state "$N" jobs &&
	refused 2 "cannot be made in $N" "$N/st" "$HOTSET" run -q --state "$N/st" jobs &&
	refused 2 "$N is owned by nobody" "$N" "$HOTSET" run -q --state "$PWD/st" --logs "$N" jobs &&
	test ! -e "$N/st" &&
	# in the sticky directory: entries of nobody (a link as jobs/, a FIFO as the log) are refused
	mkdir -m 1777 sticky && as_nobody ln -s "$V" sticky/jobs &&
	refused 2 "sticky/jobs is a symbolic link of nobody" sticky "$HOTSET" run -q --state "$PWD/sticky" jobs &&
	mkdir -m 1777 logs && as_nobody mkfifo logs/a.log &&
	refused 2 "logs/a.log is a file of nobody" logs/a.log \
		"$HOTSET" run -q --state "$PWD/st" --logs "$PWD/logs" jobs
'

test_expect_success ROOT,NOBODY,PYTHON 'time -o: nothing through a link of nobody; a FIFO or device of nobody in /tmp not opened' '
	for d in "$S" "$N"; do
		refused 125 "$d/link is a symbolic link owned by nobody" "$d/link" \
			"$HOTSET" time -q -o "$d/link" -- touch ran && test ! -e ran || return 1
	done &&
	refused 125 "fifo is a file of nobody" "$S/fifo" "$HOTSET" time -q -o "$S/fifo" -- true &&
	refused 125 "dev is a file of nobody" "$S/dev" "$HOTSET" time -q -o "$S/dev" -- true &&
	# a device of ones own: written as a shell would
	"$HOTSET" time -q -o /dev/null -- true
'

test_expect_success ROOT,NOBODY 'a link of the caller own is followed: root in /tmp, nobody through its own link' '
	echo old > mine && chmod 640 mine && ln -s "$PWD/mine" "$S/root-link" &&
	"$HOTSET" snapshot -q -o "$S/root-link" "$V/table" > /dev/null &&
	test -L "$S/root-link" && head -1 mine | grep -q "^hotset-profile 1$" &&
	check_eq "$(stat -c %a mine)" 640 &&
	as_nobody sh -c "echo x > $S/nobody-file && echo data > $S/data && ln -s $S/nobody-file $S/nobody-link" &&
	as_nobody "$HOTSET" snapshot -q -o "$S/nobody-link" "$S/data" > /dev/null &&
	test -L "$S/nobody-link" && head -1 "$S/nobody-file" | grep -q "^hotset-profile 1$" &&
	check_eq "$(stat -c %U "$S/nobody-file")" nobody &&
	victims_intact
'

# wait_gone PID: until PID (not a child) has exited, 20 s at most
wait_gone() {
	local i
	for i in $(seq 200); do kill -0 "$1" 2> /dev/null || return 0; sleep 0.1; done
	echo "pid $1 still runs" >&2
	return 1
}

# ---- keep's start-up errors: exit 2 with the reason, never a crash ----------

test_expect_success 'keep --log with a start-up error: exit 2, the reason, no crash' '
	"$HOTSET" snapshot -q -o p.prof "$TESTS_DIR/../README.md" > /dev/null &&
	expect_code 2 "$HOTSET" keep --log "$PWD/k.log" --state "$TRASH" p.prof 2> err &&
	grep -q "^hotset: $TRASH: not a regular file (a directory)" err &&
	expect_code 2 "$HOTSET" keep --log "$PWD/k.log" --io-cgroup /nonexistent --state "$PWD/s" p.prof 2> err &&
	grep -q "^hotset: --io-cgroup: cannot read /nonexistent/io.pressure" err &&
	{ sleep 600 & } && live=$! && echo $live > live.pid &&
	expect_code 2 "$HOTSET" keep --daemon --pidfile live.pid --log "$PWD/k.log" --state "$PWD/s" p.prof 2> err &&
	kill $live && grep -q "the pid file live.pid names pid $live, which runs" err &&
	! grep -Eq "free\(\)|AddressSanitizer|LeakSanitizer" err
'

test_expect_success ASAN 'keep: a bad PROFILE after good ones frees them (no leak under ASan)' '
	"$HOTSET" snapshot -q -o p.prof "$TESTS_DIR/../README.md" > /dev/null &&
	ASAN_OPTIONS=detect_leaks=1 expect_code 2 "$HOTSET" keep --state "$PWD/s" p.prof p.prof "" 2> err &&
	grep -q "an empty PROFILE names no file" err && ! grep -q LeakSanitizer err
'

test_expect_success 'keep --daemon --pidfile: a stale 0600 one stays 0600; removed at exit, also through a link of ones own' '
	"$HOTSET" snapshot -q -o p.prof "$TESTS_DIR/../README.md" > /dev/null &&
	mkdir pids && ln -s pids/k.pid k.pid &&
	echo $(( $(cat /proc/sys/kernel/pid_max) + 1 )) > pids/k.pid && chmod 600 pids/k.pid &&
	"$HOTSET" keep --daemon --pidfile "$PWD/k.pid" --state "$PWD/s.state" p.prof 2> /dev/null &&
	pid=$(cat pids/k.pid) && test -L k.pid && kill -0 $pid &&
	check_eq "$(stat -c %a pids/k.pid)" 600 &&
	kill -TERM $pid && wait_gone $pid && test ! -e pids/k.pid
'

# fsize1 CMD...: CMD with files limited to one byte (a write of more is cut
# short, without an errno); its stderr through a pipe, which no limit cuts,
# into err, its exit status into code
fsize1() {
	{ python3 -c "
import resource, os, sys
resource.setrlimit(resource.RLIMIT_FSIZE, (1, 1))
os.execv(sys.argv[1], sys.argv[1:])" "$@" 2>&1 > /dev/null; echo $? > code; } | cat > err
}

test_expect_success PYTHON 'a lock whose pid is written short: an error, for keep (2) and run (125)' '
	"$HOTSET" snapshot -q -o p.prof "$TESTS_DIR/../README.md" > /dev/null &&
	fsize1 "$HOTSET" keep --pidfile "$PWD/k.pid" --state "$PWD/s" p.prof &&
	check_eq "$(cat code)" 2 && grep -q "^hotset: cannot lock $PWD/s.lock: Input/output error" err &&
	test ! -e k.pid &&
	echo "a touch $PWD/ran" > jobs &&
	fsize1 "$HOTSET" run -q --state "$PWD/st" jobs &&
	check_eq "$(cat code)" 125 && grep -q "^hotset: $PWD/st/lock: Input/output error" err &&
	test ! -e ran
'

# ---- run: modes, messages -------------------------------------------------------

test_expect_success 'run: the state and logs it makes are 0700, the files in them 0600' '
	echo "a echo secret-output" > jobs &&
	(umask 022 && "$HOTSET" run -q --state "$PWD/st" jobs) &&
	grep -qx secret-output st/logs/a.log &&
	check_eq "$(stat -c %a st st/logs st/jobs st/jobs/a)" "700
700
700
700" &&
	check_eq "$(stat -c %a st/logs/a.log st/queue st/lock st/jobs/a/history)" "600
600
600
600"
'

test_expect_success ROOT 'run: a --logs directory that cannot be made is named, not the state directory' '
	echo "a true" > jobs &&
	expect_code 125 "$HOTSET" run -q --state "$PWD/st" --logs /proc/hotset-logs jobs 2> err &&
	grep -q "^hotset: /proc/hotset-logs: cannot make the directory" err &&
	! grep -q "$PWD/st: cannot make" err
'

test_done
