#!/usr/bin/env bash
# hotset record --trace: every access, in order, in the trace's canonical
# form (docs/profile.md), the same under both backends. Jobs that read
# cyclically, at random, strided, through a mapping, interleaved and from
# a child process (tests/helpers/readjob.c, many seeds) give each backend
# the trace readjob says they made, and the two backends the same; a file of
# 2,000 pages read three times over is 6,000 page accesses under both; a
# recording that loses accesses says so in the profile.
. "$(dirname "$0")/../lib.sh"
# The plain build's pass only: the traces' equality is the kernel's and the
# backends' behaviour, not memory safety; the sanitizers run the trace code
# in t0500, t0510 and the unit tests.

readjob() { "$HELPERS/readjob" "$@"; }
# The job readjob; built with ASan, its leak check cannot run under ptrace.
RJ=("$HELPERS/readjob")
ldd "$HELPERS/readjob" 2>/dev/null | grep -q libasan && RJ=(env ASAN_OPTIONS=detect_leaks=0 "${RJ[@]}")
check() { python3 "$TESTS_DIR/helpers/readjob-check.py" "$@"; }
SEEDS=${HOTSET_TEST_TRACE_SEEDS:-6}
SCENARIOS="cyclic random strided mapped interleave forked"

# backends: those that can run here
backends() { echo ptrace; have_prereq BPF && echo bpf; }

# traced WHO BACKEND SCENARIO SEED: record it, check the profile and its
# trace against readjob's word; the trace kept to readjob's traced files
# in trace.BACKEND, "PATH FIRST-LAST" a line (what else the job touched
# in between, a page of a library faulted in again, say, is left out)
traced() {
	local who=$1 b=$2 s=$3 seed=$4 run=()
	[ "$who" = nobody ] && run=(setpriv --reuid=nobody --regid=nogroup --clear-groups --)
	READJOB_SEED=$seed "${run[@]}" "$HOTSET" record -q --trace --backend=$b -o p.$b -- \
		"${RJ[@]}" $s d > expect.$b &&
	hotset show --trace --json p.$b > j.$b &&
	check expect.$b j.$b "$PWD/d" &&
	check --trace j.$b $(sed -n "s|^trace - - [^ ]* ||p" expect.$b | sort -u) > trace.$b ||
		{ echo "$b, scenario $s, seed $seed" >&2; return 1; }
}

test_expect_success PLAIN 'the issue: 2,000 pages read three times with pread are 6,000 page accesses, under each backend' '
	mkdir d && readjob prepare d &&
	for b in $(backends); do
		traced root $b reread 1 &&
		check_eq "$(awk "{ split(\$2, r, \"-\"); n += r[2] - r[1] + 1 } END { print n }" trace.$b)" 6000 &&
		check_eq "$(cat trace.$b | tr "\n" " ")" \
			"$PWD/d/trace/big 0-1999 $PWD/d/trace/big 0-1999 $PWD/d/trace/big 0-1999 " ||
			{ echo "backend $b" >&2; return 1; }
	done
'

test_expect_success PLAIN 'cyclic, random, strided, mapped, interleaved and forked reads: each backend has every access in order, the two the same' '
	mkdir d && readjob prepare d &&
	for seed in $(seq "$SEEDS"); do
		for s in $SCENARIOS; do
			for b in $(backends); do traced root $b $s $seed || return 1; done
			if have_prereq BPF; then
				diff trace.ptrace trace.bpf || { echo "scenario $s, seed $seed" >&2; return 1; }
			fi
		done
	done
'

test_expect_success PLAIN,NOBODY 'as nobody (ptrace): every access in order' '
	chown nobody:nogroup . && setpriv --reuid=nobody --regid=nogroup --clear-groups -- mkdir d &&
	setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$HELPERS/readjob" prepare d &&
	for seed in 1 2; do
		for s in $SCENARIOS reread; do traced nobody ptrace $s $seed || return 1; done
	done
'

test_expect_success PLAIN 'without --trace: the same pages, and no trace' '
	mkdir d && readjob prepare d &&
	for b in $(backends); do
		READJOB_SEED=3 "$HOTSET" record -q --backend=$b -o p -- "${RJ[@]}" random d > expect &&
		hotset show --json p > j && check expect j "$PWD/d" &&
		check_eq "$(json j "(j[\"trace\"], j[\"trace_lines\"])")" "(None, 0)" || return 1
	done
'

# The job waits on FIFOs: ready once it runs, go to read, done once read.
# (Built with ASan, its leak check at exit stops it with ptrace, and the
# SIGCONT that hotset passes on to the job could cancel that stop.)
test_expect_success PLAIN,BPF 'accesses lost while hotset cannot take them are counted: the profile, show and curve say so' '
	mkdir d && readjob prepare d && mkfifo d/trace/ready d/trace/go d/trace/done &&
	{ "$HOTSET" record --json --report sum --trace --backend=bpf -o p -- "${RJ[@]}" flood d > /dev/null 2> err & } &&
	pid=$! &&
	read r < d/trace/ready &&
	kill -STOP $pid &&
	echo go > d/trace/go &&
	read r < d/trace/done &&
	kill -CONT $pid &&
	wait $pid &&
	lost=$(json sum "j[\"lost_events\"]") &&
	echo "lost $lost" &&
	test "$lost" -gt 0 &&
	grep -q "$lost accesses could not be recorded: the profile is incomplete" err &&
	check_eq "$(sed -n "s/^lost-events //p" p)" "$lost" &&
	check_eq "$(hotset show --json p | python3 -c "import json, sys; print(json.load(sys.stdin)[\"lost_events\"])")" "$lost" &&
	hotset show p | grep -q "^Lost: *$lost accesses" &&
	hotset curve p > /dev/null 2> err &&
	grep -q "the recording lost $lost accesses: the trace is short of them" err
'

test_expect_success PLAIN 'nothing lost: the profile says 0; a snapshot does not say' '
	mkdir d && readjob prepare d &&
	hotset record -q --trace -o p -- "${RJ[@]}" cyclic d > /dev/null &&
	check_eq "$(sed -n "s/^lost-events //p" p)" 0 &&
	! hotset show p | grep -q "^Lost:" &&
	hotset snapshot -o s d > /dev/null &&
	check_eq "$(hotset show --json s | python3 -c "import json, sys; print(json.load(sys.stdin)[\"lost_events\"])")" None
'

test_done
