#!/usr/bin/env bash
# hotset keep: a keeper started on a profile of a real tree brings back
# what is evicted, in profile order and within its budget; follows files
# replaced and deleted; reloads on SIGHUP; leaves its state whole at
# SIGTERM; is alone on its state; --status tells its counters. Pressure is
# read from files of the test's own (HOTSET_PSI_DIR), so that the machine's
# load cannot make it back off, and so that a test can.
. "$(dirname "$0")/../lib.sh"

# wait_for CMD...: until CMD succeeds, at most 20 s (a deadline, not a timing)
wait_for() {
	local i
	for i in $(seq 200); do "$@" 2> /dev/null && return 0; sleep 0.1; done
	echo "timed out waiting for: $*" >&2
	return 1
}

# mkpsi [MEMORY_AVG10 [IO_AVG10]]: the pressure files keep reads
mkpsi() {
	mkdir -p psi &&
	printf "some avg10=%s avg60=0.00 avg300=0.00 total=0\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n" "${1:-0.00}" > psi/memory.tmp &&
	printf "some avg10=%s avg60=0.00 avg300=0.00 total=0\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n" "${2:-0.00}" > psi/io.tmp &&
	mv psi/memory.tmp psi/memory && mv psi/io.tmp psi/io
}

# start_keep ARGS...: a keeper in the background (log keep.log, pid $kpid),
# stopped when the test ends whatever happens
start_keep() {
	mkpsi || return
	HOTSET_PSI_DIR=$PWD/psi "$HOTSET" keep --interval 0.2s --state "$PWD/s.state" "$@" 2> keep.log &
	kpid=$!
	# (set -e holds in the trap too: a keeper already gone is no failure)
	trap 'kill $kpid 2> /dev/null || :; wait $kpid 2> /dev/null || :' EXIT
	wait_for grep -q "^started: " keep.log || { cat keep.log; return 1; }
}

# stop_keep: SIGTERM, and its exit status 0
stop_keep() {
	kill -TERM $kpid && wait $kpid
}

status_json() { "$HOTSET" keep --status --state "$PWD/s.state" -J > st.json; }
# st EXPR: a value of the keeper's --status -J, read now
st() { status_json && json st.json "$1"; }
# st_is EXPR VALUE: that value is VALUE (for wait_for: read again each time)
st_is() { test "$(st "$1")" = "$2"; }
resident() { check_eq "$(pagetool resident "$1")" "$2" 2> /dev/null; }

# Two files of 8 pages, read whole, in a profile: d/a first, then d/b.
mktree() {
	mkdir -p d && mkpages d/a 8 && mkpages d/b 8 &&
	pagetool read d/a 0-7 && pagetool read d/b 0-7 &&
	"$HOTSET" snapshot -q -o p.prof d/a d/b
}

test_expect_success REALFS 'evicted pages come back, and are counted as refaults' '
	mktree && start_keep p.prof &&
	grep -q "^started: 1 profile, 2 files, 16 pages (64.0 KiB), budget " keep.log &&
	"$HOTSET" evict -q d &&
	wait_for resident d/a 0-7 && wait_for resident d/b 0-7 &&
	wait_for grep -q "^re-warmed .* refault" keep.log &&
	wait_for st_is "j[\"rewarmed_pages\"] >= 16" 1 &&
	check_eq "$(json st.json "(j[\"refault_pages\"] >= 16, j[\"rewarms\"] >= 1, j[\"running\"], j[\"pid\"] == $kpid)")" "(True, True, True, True)" &&
	check_eq "$(json st.json "(j[\"files\"], j[\"pages\"], j[\"profiles\"] == [\"$PWD/p.prof\"])")" "(2, 16, True)" &&
	"$HOTSET" keep --status --state "$PWD/s.state" > st.txt &&
	grep -q "^    Keeper: running, pid $kpid, since " st.txt &&
	grep -Eq "^  Refaults: [0-9]+ pages .* lost and found missing; [0-9]+ pages read back in [0-9]+ re-warms?, the last [0-9T:-]+Z$" st.txt &&
	stop_keep
'

test_expect_success REALFS 'only the first SIZE of profile order is kept' '
	mktree && start_keep --budget $((10 * ps)) p.prof &&
	grep -q "^started: 1 profile, 2 files, 10 pages (40.0 KiB), budget 40.0 KiB" keep.log &&
	"$HOTSET" evict -q d &&
	wait_for resident d/a 0-7 && wait_for resident d/b 0-1 &&
	wait_for st_is "j[\"rewarmed_pages\"]" 10 &&
	check_eq "$(json st.json "(j[\"pages\"], j[\"budget_bytes\"])")" "(10, $((10 * ps)))" &&
	resident d/b 0-1 &&
	stop_keep
'

test_expect_success REALFS 'a replaced file is read anew, within its new size' '
	mktree && start_keep p.prof &&
	mkpages new 4 && mv new d/a &&
	wait_for grep -q "^file replaced: $PWD/d/a (a new inode): reading it anew$" keep.log &&
	wait_for resident d/a 0-3 &&
	stop_keep
'

# --interval 1h: after the first reading, no check comes for 15 minutes;
# only the kernel's word (eBPF) can bring evicted pages back in time.
test_expect_success BPF,REALFS 'evictions the kernel tells are read back without waiting for a round' '
	mktree && start_keep --interval 1h p.prof &&
	wait_for st_is "j[\"evictions\"]" events &&
	"$HOTSET" keep --status --state "$PWD/s.state" | grep -q "; evicted ones at once, as the kernel tells (eBPF)$" &&
	"$HOTSET" evict -q d &&
	wait_for resident d/a 0-7 && wait_for resident d/b 0-7 &&
	wait_for grep -q "^re-warmed .* refault" keep.log &&
	# a file replaced is seen when its old pages go, and watched by its new inode
	mkpages new 4 && mv new d/a &&
	wait_for grep -q "^file replaced: $PWD/d/a (a new inode): reading it anew$" keep.log &&
	wait_for resident d/a 0-3 &&
	"$HOTSET" evict -q d/a && wait_for resident d/a 0-3 &&
	stop_keep
'

test_expect_success REALFS 'HOTSET_KEEP_NO_BPF: evictions are found by the checks alone' '
	mktree && HOTSET_KEEP_NO_BPF=1 start_keep p.prof &&
	wait_for st_is "j[\"evictions\"]" checks &&
	"$HOTSET" evict -q d && wait_for resident d/a 0-7 &&
	stop_keep
'

test_expect_success REALFS 'a deleted file is dropped, and said once' '
	mktree && start_keep p.prof &&
	rm d/b &&
	wait_for grep -q "^file deleted: $PWD/d/b: dropped$" keep.log &&
	wait_for st_is "j[\"dropped_files\"]" 1 &&
	"$HOTSET" evict -q d/a && wait_for resident d/a 0-7 &&
	check_eq "$(grep -c "d/b" keep.log)" 1 &&
	stop_keep
'

test_expect_success REALFS 'SIGHUP reloads an edited profile' '
	mktree && mkpages d/c 3 && pagetool read d/c 0-2 && start_keep p.prof &&
	"$HOTSET" snapshot -q -o p.prof d/c &&
	kill -HUP $kpid &&
	wait_for grep -q "^profiles reloaded: 1 file, 3 pages (12.0 KiB)$" keep.log &&
	wait_for st_is "j[\"files\"]" 1 &&
	"$HOTSET" evict -q d && wait_for resident d/c 0-2 &&
	resident d/a "" &&
	stop_keep
'

test_expect_success REALFS 'SIGTERM: the state file whole, no temporary file, counters resumed' '
	mktree && start_keep p.prof &&
	"$HOTSET" evict -q d && wait_for resident d/a 0-7 &&
	wait_for st_is "j[\"rewarmed_pages\"] >= 16" 1 &&
	stop_keep &&
	grep -q "^exiting (SIGTERM): state written to $PWD/s.state$" keep.log &&
	status_json && check_eq "$(json st.json "(j[\"running\"], j[\"pid\"])")" "(False, None)" &&
	was=$(json st.json "j[\"rewarmed_pages\"]") &&
	test "$(ls -a | grep -c hotset-tmp)" = 0 &&
	tail -n 1 s.state | grep -qx end &&
	# a restart goes on counting from there
	start_keep p.prof &&
	"$HOTSET" evict -q d && wait_for resident d/b 0-7 &&
	wait_for st_is "j[\"rewarmed_pages\"] >= $was + 16" 1 &&
	stop_keep
'

test_expect_success REALFS 'a second keeper on the same state is refused, naming the first' '
	mktree && start_keep p.prof &&
	expect_code 2 "$HOTSET" keep --state "$PWD/s.state" p.prof 2> err &&
	grep -q "another hotset keep (pid $kpid) is running on $PWD/s.state" err &&
	stop_keep
'

test_expect_success REALFS 'pressure makes it back off, and the lack of it resume' '
	mktree && start_keep p.prof &&
	grep -q "^note: cannot create a PSI trigger on $PWD/psi/memory" keep.log &&
	mkpsi 50.00 &&
	wait_for grep -q "^backing off: memory pressure (avg10 above 10.0%; some avg10 50.00%)$" keep.log &&
	wait_for st_is "(j[\"backed_off\"], j[\"backoffs\"], j[\"backoff_reason\"])" "(True, 1, '"'"'memory'"'"')" &&
	"$HOTSET" evict -q d/a && sleep 1 && resident d/a "" &&
	mkpsi &&
	wait_for grep -q "^resuming: " keep.log &&
	wait_for resident d/a 0-7 &&
	stop_keep
'

test_expect_success 'usage errors' '
	expect_code 2 "$HOTSET" keep 2> err && grep -q "give a PROFILE to keep" err &&
	expect_code 2 "$HOTSET" keep --interval 1ms p 2> err && grep -q -- "--interval takes a duration" err &&
	expect_code 2 "$HOTSET" keep --interval 2x p 2> err &&
	expect_code 2 "$HOTSET" keep --budget 0 p 2> err && grep -q -- "--budget takes" err &&
	expect_code 2 "$HOTSET" keep -J p 2> err && grep -q -- "--json goes with --status" err &&
	expect_code 2 "$HOTSET" keep - 2> err && grep -q "not -" err &&
	expect_code 2 "$HOTSET" keep --state "$PWD/s.state" nowhere.prof 2> err &&
	grep -q "nowhere.prof" err &&
	expect_code 2 "$HOTSET" keep --status --state "$PWD/none.state" 2> err &&
	grep -q "no keeper ran on it" err
'

test_expect_success NOBODY,REALFS 'as nobody: its own files are kept; others refused, naming the privilege' '
	mkdir -p d && mkpages d/own 4 && pagetool read d/own 0-3 && chown nobody:nogroup d/own &&
	mkpages d/ro 4 && pagetool read d/ro 0-3 && chmod 644 d/ro &&
	"$HOTSET" snapshot -q -o own.prof d/own && "$HOTSET" snapshot -q -o ro.prof d/ro &&
	chmod 644 own.prof ro.prof && mkdir st && chown nobody st &&
	expect_code 2 as_nobody "$HOTSET" keep --state "$PWD/st/ro.state" ro.prof 2> err &&
	grep -q "residency of none of the 1 files can be known to this user (uid $(id -u nobody))" err &&
	grep -q "run keep as root or as the files. owner" err &&
	mkpsi && chmod -R go+rX psi
	# as_nobody, but not a function, and a list of its own: $! is the keeper
	HOTSET_PSI_DIR=$PWD/psi setpriv --reuid=nobody --regid=nogroup --clear-groups -- \
		"$HOTSET" keep --interval 0.2s --state "$PWD/st/own.state" own.prof 2> keep.log &
	kpid=$! && trap "kill $kpid 2> /dev/null || :; wait $kpid 2> /dev/null || :" EXIT &&
	wait_for grep -q "^started: " keep.log &&
	"$HOTSET" evict -q d/own && wait_for resident d/own 0-3 &&
	kill -TERM $kpid && wait $kpid &&
	grep -q "^re-warmed 4 pages" keep.log &&
	grep -q "^note: evictions are found by the checks alone, .*: watching the page cache through eBPF needs root" keep.log
'

test_done
