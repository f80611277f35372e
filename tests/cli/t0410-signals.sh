#!/usr/bin/env bash
# Signals under `time` and `record` (both backends) reach the job exactly
# once, as they would bare: sent to hotset's process group (a supervisor's
# kill -TERM -PGID), to hotset alone, or typed at a terminal (^C); ^Z stops
# the job and hotset, fg continues them; a job that reads the terminal gets
# it (in the background, it stops with hotset until fg). The exit status
# stays the job's.
. "$(dirname "$0")/../lib.sh"

prereq_PYTHON() { command -v python3 >/dev/null; }
prereq_PTY() { prereq_PYTHON && [ -c /dev/ptmx ] && python3 -c "import pty; pty.openpty()"; }

# Wait (at most 10 s) for a file to appear.
wait_for() { local i; for i in $(seq 200); do [ -e "$1" ] && return 0; sleep 0.05; done; echo "no $1" >&2; return 1; }

# sig.py NAME [read|read2|sleep]: counts the SIGTERM, SIGINT, SIGHUP and
# SIGUSR1 it gets, one line each in NAME; writes its pid to NAME.ready once
# its handlers are in place. It exits 3 half a second after its first
# signal (time enough for a second one to come), 4 if none came. "read"
# first reads a line from standard input (the terminal); "read2" reads two
# and exits 0; "sleep" exits 0 once continued after a stop (^Z, then fg),
# 4 if it is not within 20 s.
cat > "$TRASH/sig.py" <<'EOF'
import os, signal, sys, time
name, mode = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else ""
first = []
def handler(sig, frame):
    first.append(time.time())
    with open(name, "a") as f:
        f.write("%d\n" % sig)
for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGUSR1):
    signal.signal(s, handler)
def note(text):
    with open(name + ".ready", "a") as f:
        f.write(text)
note("%d\n" % os.getpid())
if mode == "sleep":
    continued = []
    signal.signal(signal.SIGCONT, lambda sig, frame: continued.append(sig))
    end = time.time() + 20
    while not continued and time.time() < end:
        time.sleep(0.02)
    sys.exit(0 if continued else 4)
if mode.startswith("read"):
    note("read %s" % sys.stdin.readline())
if mode == "read2":
    note("read %s" % sys.stdin.readline())
    sys.exit(0)
end = time.time() + 20
while time.time() < end and not (first and time.time() > first[0] + 0.5):
    time.sleep(0.02)
sys.exit(3 if first else 4)
EOF
chmod 644 "$TRASH/sig.py"
SIG=$TRASH/sig.py
PTYJOB=$TESTS_DIR/helpers/ptyjob.py

# gone PID...: none of these processes is running (a zombie has ended)
gone() {
	local p
	for p in "$@"; do
		[ -e "/proc/$p" ] && ! grep -q "^State:.*Z" "/proc/$p/status" 2> /dev/null && return 1
	done
	return 0
}

# count FILE: how many signals the job counted
count() { if [ -e "$1" ]; then wc -l < "$1" | tr -d " "; else echo 0; fi; }

# The three ways of running a job; bare is the yardstick.
RUN_time=(time -q -o /dev/null --)
RUN_ptrace=(record -q --backend=ptrace -o p --)
RUN_bpf=(record -q --backend=bpf -o p --)
PRE_time=PYTHON PRE_ptrace=PYTHON PRE_bpf=PYTHON,BPF

test_expect_success PYTHON 'bare: a group signal, a signal to the job, ^C: once each (the yardstick)' '
	setsid "$PYTHON" "$SIG" c & pid=$! &&
	wait_for c.ready && kill -TERM -- -$pid &&
	rc=0 && wait $pid || rc=$? &&
	check_eq "$rc $(count c)" "3 1"
'

test_expect_success PTY 'bare: ^C on a terminal, once (the yardstick)' '
	python3 "$PTYJOB" --after c.ready --keys "\\x03" -- "$PYTHON" "$SIG" c > res &&
	check_eq "$(cat res) $(count c)" "exit 3 1"
'

test_expect_success PTY 'bare: in the background, reading the terminal stops the job; fg continues it (the yardstick)' '
	python3 "$PTYJOB" --bg --after c.ready --keys "one\\ntwo\\n" -- "$PYTHON" "$SIG" c read2 > res &&
	check_eq "$(cat res | tr "\\n" " ")" "stopped 21 T exit 0 "
'

for how in time ptrace bpf; do
	eval "pre=\$PRE_$how"
	run="\"\$HOTSET\" \"\${RUN_$how[@]}\""

	test_expect_success "$pre" "$how: a signal to hotset's process group reaches the job once" '
		setsid '"$run"' "$PYTHON" "$SIG" c & pid=$! &&
		wait_for c.ready &&
		check_eq "$(ps -o pgid= $pid | tr -d " ")" $pid &&
		kill -TERM -- -$pid &&
		rc=0 && wait $pid || rc=$? &&
		check_eq "$rc $(count c)" "3 1"
	'

	test_expect_success "$pre" "$how: a group SIGUSR1 reaches the job once, and hotset and its tracer survive it" '
		setsid '"$run"' "$PYTHON" "$SIG" c & pid=$! &&
		wait_for c.ready &&
		kill -USR1 -- -$pid &&
		rc=0 && wait $pid || rc=$? &&
		check_eq "$rc $(cat c)" "3 10"
	'

	test_expect_success "$pre" "$how: the same when hotset does not lead its group" '
		setsid sh -c "trap \"\" TERM; \"\$@\"; echo \$? > rc" sh '"$run"' "$PYTHON" "$SIG" c & pid=$! &&
		wait_for c.ready &&
		kill -TERM -- -$pid &&
		wait $pid &&
		check_eq "$(cat rc) $(count c)" "3 1"
	'

	test_expect_success "$pre" "$how: a group signal reaches every process of the job once; killed by it, 128+N" '
		setsid '"$run"' sh -c "\"$PYTHON\" \"$SIG\" c1 & \"$PYTHON\" \"$SIG\" c2 & wait" & pid=$! &&
		wait_for c1.ready && wait_for c2.ready &&
		kill -HUP -- -$pid &&
		rc=0 && wait $pid || rc=$? &&
		# their counts are final once both have exited (half a second after the signal)
		for i in $(seq 200); do gone $(head -n 1 c1.ready) $(head -n 1 c2.ready) && break; sleep 0.05; done &&
		check_eq "$rc $(count c1) $(count c2)" "129 1 1"
	'

	test_expect_success "$pre" "$how: a signal to hotset alone reaches the job once" '
		'"$run"' "$PYTHON" "$SIG" c & pid=$! &&
		wait_for c.ready &&
		kill -TERM $pid &&
		rc=0 && wait $pid || rc=$? &&
		check_eq "$rc $(count c)" "3 1"
		'"$run"' "$PYTHON" "$SIG" u & pid=$!
		wait_for u.ready &&
		kill -USR1 $pid &&
		rc=0 && wait $pid || rc=$? &&
		check_eq "$rc $(count u)" "3 1"
	'

	test_expect_success "${pre/PYTHON/PTY}" "$how: ^C on the terminal reaches the job once" '
		python3 "$PTYJOB" --after c.ready --keys "\\x03" -- '"$run"' "$PYTHON" "$SIG" c > res &&
		check_eq "$(cat res) $(count c)" "exit 3 1"
	'

	test_expect_success "${pre/PYTHON/PTY}" "$how: a job that reads the terminal gets it; ^C then reaches it once" '
		python3 "$PTYJOB" --after c.ready --keys "typed\\n|\\x03" -- '"$run"' "$PYTHON" "$SIG" c read > res &&
		check_eq "$(cat res) $(count c)" "exit 3 1" &&
		grep -qx "read typed" c.ready
	'

	test_expect_success "${pre/PYTHON/PTY}" "$how: ^Z stops the job and hotset, fg continues them" '
		python3 "$PTYJOB" --after c.ready --keys "\\x1a" -- '"$run"' "$PYTHON" "$SIG" c sleep > res &&
		sed -e "s/^stopped 20 [Tt]\$/stopped/" res > got &&
		check_eq "$(cat got | tr "\n" " ")" "stopped exit 0 " &&
		# the job has the terminal when ^Z comes, and again after fg
		rm -f c.ready &&
		python3 "$PTYJOB" --after c.ready --keys "one\\n|\\x1atwo\\n" -- '"$run"' "$PYTHON" "$SIG" c read2 > res &&
		sed -e "s/^stopped 20 [Tt]\$/stopped/" res > got &&
		check_eq "$(cat got | tr "\n" " ")" "stopped exit 0 " &&
		check_eq "$(grep ^read c.ready | tr "\n" " ")" "read one read two "
	'

	test_expect_success "${pre/PYTHON/PTY}" "$how: started in the background, a job that reads the terminal stops with hotset; fg gives it the terminal" '
		python3 "$PTYJOB" --bg --after c.ready --keys "one\ntwo\n" -- '"$run"' "$PYTHON" "$SIG" c read2 > res &&
		sed -e "s/^stopped 21 [Tt]\$/stopped/" res > got &&
		check_eq "$(cat got | tr "\n" " ")" "stopped exit 0 " &&
		check_eq "$(grep ^read c.ready | tr "\n" " ")" "read one read two "
	'
done

for how in time ptrace; do
	run="\"\$HOTSET\" \"\${RUN_$how[@]}\""
	test_expect_success NOBODY,PYTHON "$how, as nobody: a group signal and one to hotset reach the job once" '
		chown nobody:nogroup .
		setsid setpriv --reuid=nobody --regid=nogroup --clear-groups -- '"$run"' "$PYTHON" "$SIG" c & pid=$! &&
		wait_for c.ready &&
		kill -TERM -- -$pid &&
		rc=0 && wait $pid || rc=$? &&
		check_eq "$rc $(count c)" "3 1"
		setpriv --reuid=nobody --regid=nogroup --clear-groups -- '"$run"' "$PYTHON" "$SIG" d & pid=$!
		wait_for d.ready &&
		kill -TERM $pid &&
		rc=0 && wait $pid || rc=$? &&
		check_eq "$rc $(count d)" "3 1"
	'
done

test_done
