#!/usr/bin/env bash
# hotset record --backend=bpf: a job that reads known pages in every way a
# program can (tests/helpers/readjob.c) gets exactly those pages in its
# profile, and nothing from /proc, /sys or /dev; the command runs as if
# bare (exit status, 126/127, signals); an interrupted recording still
# writes its profile; nothing stays loaded in the kernel afterwards.
. "$(dirname "$0")/../lib.sh"

readjob() { "$HELPERS/readjob" "$@"; }
check() { python3 "$TESTS_DIR/helpers/readjob-check.py" "$@"; }
prereq_BPFTOOL() { command -v bpftool >/dev/null; }
# Wait (at most 10 s) for a file to appear.
wait_for() { local i; for i in $(seq 200); do [ -e "$1" ] && return 0; sleep 0.05; done; echo "no $1" >&2; return 1; }

test_expect_success BPF 'every way of reading gives exactly the pages read' '
	mkdir d && readjob prepare d &&
	hotset record -q --backend=bpf -o p -- "$HELPERS/readjob" all d > expect &&
	test -s expect &&
	hotset show --json p > j &&
	check expect j "$PWD/d" &&
	check_eq "$(json j "\" \".join((j[\"backend\"], j[\"mmap_pages\"], j[\"source\"]))")" "bpf faulted record"
'

test_expect_success BPF 'nothing from /proc, /sys, /dev or memfd; the program is executed' '
	mkdir d && readjob prepare d &&
	hotset record -q --backend=bpf -o p -- "$HELPERS/readjob" pseudo d > expect &&
	hotset show --json p > j &&
	check expect j "$PWD/d" &&
	check_eq "$(json j "\" \".join(f[\"path\"] for f in j[\"files\"] if f[\"path\"].startswith((\"/proc/\", \"/sys/\", \"/dev/\", \"/memfd:\")) or \"(deleted)\" in f[\"path\"])")" "" &&
	check_eq "$(json j "\" \".join(f[\"flags\"] for f in j[\"files\"] if f[\"path\"] == \"$HELPERS/readjob\")")" "mx"
'

test_expect_success BPF 'each scenario alone, with the trace' '
	mkdir d &&
	for s in $(readjob list); do
		case $s in all|interrupt) continue;; esac
		readjob prepare d &&
		hotset record -q --trace --backend=bpf -o p -- "$HELPERS/readjob" $s d > expect &&
		hotset show --json p > j && check expect j "$PWD/d" || { echo "scenario $s" >&2; return 1; }
	done &&
	hotset show --trace --json p > j &&
	check_eq "$(json j "j[\"trace_lines\"] > 0")" 1
'

# filemap_read() copies a batch of pages cut short at a page still being
# read from the disk without a tracepoint: the pages come from where the
# read call started.
test_expect_success BPF,REALFS 'a cold file read in pieces that are not page-aligned: every page, one access' '
	mkpages f 5000 &&
	hotset record -q --trace --backend=bpf -o p -- dd if=f of=/dev/null bs=100000 2> /dev/null &&
	hotset show --trace --json p > j &&
	check_eq "$(json j "[f[\"ranges\"] for f in j[\"files\"] if f[\"path\"] == \"$PWD/f\"]")" "[[[0, 4999]]]" &&
	check_eq "$(json j "[t[1:] for t in j[\"trace\"] if j[\"files\"][t[0]][\"path\"] == \"$PWD/f\"]")" "[[0, 4999]]"
'

test_expect_success BPF 'a file opened before the job is named from its inode' '
	mkdir d && readjob prepare d &&
	hotset record -q --backend=bpf -o p -- cat < d/read > /dev/null &&
	hotset show --json p > j &&
	check_eq "$(json j "[f[\"ranges\"] for f in j[\"files\"] if f[\"path\"] == \"$PWD/d/read\"] == [[[0, 9]]]")" 1
'

test_expect_success BPF 'the exit status is the command'"'"'s; 127, 126 and no profile when it cannot run' '
	expect_code 3 hotset record -q --backend=bpf -o p -- sh -c "exit 3" &&
	hotset show p > /dev/null &&
	expect_code 143 hotset record -q --backend=bpf -o p2 -- sh -c "kill -TERM \$\$" &&
	expect_code 127 hotset record --backend=bpf -o p3 -- no-such-command-xyzzy 2> err &&
	grep -q "no-such-command-xyzzy" err && test ! -e p3 &&
	printf "#!/bin/sh\necho ran\n" > plain && chmod 644 plain &&
	expect_code 126 hotset record --backend=bpf -o p3 -- ./plain > out 2> err &&
	test ! -s out && test ! -e p3
'

# (the process left behind is still there when hotset has ended: it did not wait for it)
test_expect_success BPF 'a job that leaves a process running ends with its first process' '
	hotset record -q --backend=bpf -o p -- sh -c "sleep 120 > /dev/null 2>&1 & echo \$! > pid" &&
	kill $(cat pid) &&
	hotset show p > /dev/null
'

test_expect_success BPF 'SIGINT to hotset: the job is interrupted, the profile is written whole' '
	mkdir d && readjob prepare d
	"$HOTSET" record -q --backend=bpf -o p -- "$HELPERS/readjob" interrupt d > expect &
	pid=$! &&
	wait_for d/interrupt.ready &&
	kill -INT $pid &&
	rc=0 && wait $pid || rc=$? &&
	check_eq $rc 130 &&
	hotset show --json p > j &&
	check expect j "$PWD/d" &&
	check_eq "$(ls -A | grep -v "^\(d\|p\|j\|expect\)\$" | tr "\n" " ")" ""
'

test_expect_success BPF 'the summary says bpf; auto picks bpf here' '
	hotset record --json -o p -- true 2> sum &&
	check_eq "$(json sum "\"%s %d %d\" % (j[\"backend\"], j[\"lost_events\"], j[\"exit_status\"])")" "bpf 0 0"
'

test_expect_success BPF 'the job'"'"'s peak RSS is its own, not the ring buffer'"'"'s hotset had mapped' '
	hotset record --json -o p -- true 2> sum && hotset time -J -- true 2> t.json &&
	rec=$(json sum "j[\"max_rss_bytes\"]") && timed=$(json t.json "j[\"max_rss_bytes\"]") &&
	echo "record $rec, time $timed" &&
	test "$rec" -lt $((timed + (4 << 20)))
'

test_expect_success NOBODY,BPF 'without privileges: a message that names them' '
	expect_code 1 as_nobody "$HOTSET" record --backend=bpf --probe 2> err &&
	grep -q "needs root: CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN)" err &&
	expect_code 125 as_nobody "$HOTSET" record --backend=bpf -o /tmp/never.$$ -- true 2> err &&
	grep -q "needs root" err && test ! -e /tmp/never.$$
'

test_expect_success BPF,BPFTOOL 'nothing stays loaded, even when hotset is killed' '
	"$HOTSET" record -q --backend=bpf -o p -- sleep 30 &
	pid=$! &&
	for i in $(seq 100); do
		ids=$(cat /proc/$pid/fdinfo/* 2>/dev/null | sed -n "s/^prog_id:[[:space:]]*//p" | sort -u)
		[ $(echo $ids | wc -w) -ge 5 ] && break; sleep 0.1
	done &&
	test -n "$ids" && job=$(cat /proc/$pid/task/*/children) &&
	kill -KILL $pid && { wait $pid || :; } &&
	kill -KILL $job &&
	# the kernel frees a program once its last descriptor is gone, a moment later
	for id in $ids; do
		for i in $(seq 100); do bpftool prog show id $id > /dev/null 2>&1 || break; sleep 0.1; done
		! bpftool prog show id $id > /dev/null 2>&1 || { echo "prog $id still loaded" >&2; return 1; }
	done
'

test_done
