#!/usr/bin/env bash
# A profile is written to a temporary file beside its target, then renamed
# into place. A writer ended by a catchable signal removes that file first;
# one killed with SIGKILL leaves it, and the next writer of the same target
# removes it, but never a file a live writer still holds, nor anything that
# is not such a leftover.
. "$(dirname "$0")/../lib.sh"

prereq_PYTHON() { command -v python3 >/dev/null; }

# catch.py [SIG] DIR -- CMD...: run CMD, and stop it (SIGSTOP) as soon as
# an entry appears in DIR, which must be empty: the profile's temporary
# file, while CMD writes. With SIG, send it, continue CMD, and print CMD's
# exit status (-N: killed by signal N) and what DIR holds then. Without,
# leave CMD stopped and print its pid and the entry. A CMD that got past
# the file before it was stopped is run again (5 tries); CMD's own output
# is dropped: a try that ended first must not add to what this prints.
cat > "$TRASH/catch.py" <<'EOF'
import errno, fcntl, os, signal, subprocess, sys, time
args = sys.argv[1:]
sig = getattr(signal, "SIG" + args.pop(0)) if args[1] != "--" else None
d, cmd = args[0], args[2:]

def locked(name):
    # the writer locks its file just after making it: stop it once it has
    try:
        with open(os.path.join(d, name), "rb") as f:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as e:
        return e.errno in (errno.EWOULDBLOCK, errno.EAGAIN)
    return False

def attempt():
    # the entry, CMD stopped while it holds it; or None, CMD ended, DIR emptied
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    deadline = time.time() + 30
    while p.poll() is None and time.time() < deadline:
        seen = os.listdir(d)
        if seen and locked(seen[0]):
            os.kill(p.pid, signal.SIGSTOP)
            # it may have renamed the file between the look and the stop
            if os.path.exists(os.path.join(d, seen[0])):
                return p, seen[0]
            os.kill(p.pid, signal.SIGCONT)
            break
    p.wait()
    for e in os.listdir(d):
        os.unlink(os.path.join(d, e))
    return p, None

for _ in range(5):
    p, entry = attempt()
    if entry:
        break
else:
    print("missed: the writer ended first, or never wrote")
    sys.exit(1)
if sig is None:
    print(p.pid, entry)
    sys.exit(0)
os.kill(p.pid, sig)
os.kill(p.pid, signal.SIGCONT)
print(p.wait(), " ".join(sorted(os.listdir(d))))
EOF
chmod 644 "$TRASH/catch.py"
CATCH=$TRASH/catch.py
# dead PID: PID has exited (its files closed, its lock gone), a zombie
# that nobody reaps yet (python3 is gone: it was orphaned) or reaped
dead() {
	local i s
	for i in $(seq 1200); do
		s=$(sed -n 's/^[0-9]* (.*) \(.\) .*/\1/p' "/proc/$1/stat" 2> /dev/null)
		[ -z "$s" ] || [ "$s" = Z ] && return 0
		sleep 0.05
	done
	return 1
}

# A tree big enough that a snapshot of it writes for a while.
"$HELPERS/mkfiles" make "$TRASH/tree" 20 1000 0 && chmod -R a+rX "$TRASH/tree"
# The leftovers of target NAME in DIR.
temps() { (cd "$1" && ls -A | grep "^\.$2\.hotset-tmp\.......\$" || :); }

test_expect_success PYTHON 'a snapshot ended by SIGTERM, SIGHUP, SIGINT, SIGUSR1 while writing leaves no file' '
	mkdir out &&
	for sig in TERM HUP INT USR1; do
		python3 "$CATCH" $sig out -- "$HOTSET" snapshot -o out/p "$TRASH/tree" > res &&
		check_eq "$(cat res)" "-$(kill -l $sig) " || return 1
	done
'

test_expect_success NOBODY,PYTHON 'as nobody: a snapshot ended by SIGTERM while writing leaves no file' '
	chown nobody:nogroup . && as_nobody mkdir out &&
	as_nobody "$PYTHON" "$CATCH" TERM out -- "$HOTSET" snapshot -o out/p "$TRASH/tree" > res &&
	check_eq "$(cat res)" "-15 "
'

test_expect_success PYTHON 'SIGKILL leaves the temporary file; the next write removes it, not a live writer'"'"'s' '
	mkdir out && echo small > small &&
	# a writer stopped while it writes: alive, its temporary file locked
	python3 "$CATCH" out -- "$HOTSET" snapshot -o out/p "$TRASH/tree" > res &&
	read -r pid tmp < res &&
	case $tmp in .p.hotset-tmp.??????) ;; *) echo "named $tmp" >&2; false;; esac &&
	hotset snapshot -o out/p small &&
	test -e "out/$tmp" && hotset show out/p > /dev/null &&
	# killed: its file stays, and goes at the next write of out/p
	kill -KILL $pid && dead $pid &&
	test -e "out/$tmp" &&
	hotset snapshot -o out/p small &&
	test ! -e "out/$tmp" &&
	check_eq "$(ls -A out)" p
'

test_expect_success PYTHON 'record removes a dead writer'"'"'s leftover too' '
	mkdir out && echo small > small &&
	python3 "$CATCH" out -- "$HOTSET" snapshot -o out/p "$TRASH/tree" > res &&
	read -r pid tmp < res && kill -KILL $pid && dead $pid &&
	hotset record -q --backend=ptrace -o out/p -- cat small > /dev/null &&
	check_eq "$(ls -A out)" p
'

test_expect_success ROOT 'only leftovers of the same target, of ours, unlocked, are removed' '
	mkdir out && echo small > small &&
	: > out/.p.hotset-tmp.AbC123 &&		# a leftover: goes
	: > out/.q.hotset-tmp.AbC123 &&		# another target: stays
	: > out/p.tmp.AbC123 &&			# not our name: stays
	: > out/.p.hotset-tmp.AbC1 &&		# not our name: stays
	mkdir out/.p.hotset-tmp.dir123 &&	# a directory: stays
	ln -s ../small out/.p.hotset-tmp.lnk123 &&	# a symlink: stays
	: > out/.p.hotset-tmp.nob123 && chown nobody out/.p.hotset-tmp.nob123 &&	# not ours: stays
	hotset snapshot -o out/p small &&
	check_eq "$(ls -A out | tr "\n" " ")" ".p.hotset-tmp.AbC1 .p.hotset-tmp.dir123 .p.hotset-tmp.lnk123 .p.hotset-tmp.nob123 .q.hotset-tmp.AbC123 p p.tmp.AbC123 " &&
	test -d out/.p.hotset-tmp.dir123 && test -L out/.p.hotset-tmp.lnk123 && test -e small
'

test_expect_success 'a target whose name is long: its temporary file fits, and is found again' '
	mkdir out && echo small > small &&
	name=$(printf "%0250d" 0) &&
	hotset snapshot -o "out/$name" small &&
	check_eq "$(ls -A out)" "$name" &&
	left=".$(printf "%0236d" 0).hotset-tmp.AbC123" &&
	: > "out/$left" &&
	hotset snapshot -o "out/$name" small &&
	check_eq "$(ls -A out)" "$name"
'

test_done
