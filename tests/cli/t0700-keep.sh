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

# mkpsi [MEMORY_AVG10 [IO_AVG10 [IO_TOTAL]]]: the pressure files keep reads
mkpsi() {
	mkdir -p psi &&
	printf "some avg10=%s avg60=0.00 avg300=0.00 total=0\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n" "${1:-0.00}" > psi/memory.tmp &&
	printf "some avg10=%s avg60=0.00 avg300=0.00 total=%s\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n" "${2:-0.00}" "${3:-0}" > psi/io.tmp &&
	mv psi/memory.tmp psi/memory && mv psi/io.tmp psi/io
}

# start_keep ARGS...: a keeper in the background (log keep.log, pid $kpid),
# stopped when the test ends whatever happens; memory pressure from the
# start if START_PSI is set (an avg10)
start_keep() {
	mkpsi "${START_PSI:-0.00}" || return
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

# looked N: until the keeper has read its io pressure file N more times: it
# does once a tick (backed off or not), and again for its checks of whose a
# stall is; ticks counted as they come, not seconds on the clock
looked() {
	local w
	rm -f opened.ready && { python3 "$TESTS_DIR/helpers/opened.py" "$PWD/psi" io "$1" opened.ready & } &&
	w=$! && wait_for test -e opened.ready && wait $w
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
	grep -q "^started: 1 profile, 2 files, 16 pages (64.0 KiB of memory), budget " keep.log &&
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
	grep -q "^started: 1 profile, 2 files, 10 pages (40.0 KiB of memory), budget 40.0 KiB" keep.log &&
	"$HOTSET" evict -q d &&
	wait_for resident d/a 0-7 && wait_for resident d/b 0-1 &&
	wait_for st_is "j[\"rewarmed_pages\"]" 10 &&
	check_eq "$(json st.json "(j[\"pages\"], j[\"budget_bytes\"])")" "(10, $((10 * ps)))" &&
	resident d/b 0-1 &&
	stop_keep
'

# A kept file replaced: by a FIFO whose writer waits for a reader, by a
# symlink to another file. Neither is opened (the FIFO's writer still
# waits; the file, evicted, stays so), each is said replaced, not deleted;
# a file rewritten in place, or a file of the keeper's own renamed over a
# kept one (a rebuild), is read anew, within its new size.
test_expect_success REALFS 'a file replaced by a FIFO or a symlink is never opened, dropped; one of its own is read anew' '
	mkdir -p d && for f in a b c e; do mkpages d/$f 8 && pagetool read d/$f 0-7 || return 1; done &&
	"$HOTSET" snapshot -q -o p.prof d && start_keep p.prof &&
	# each put in place at once (a rename): a check between a rm and a mkfifo would see none
	mkpages new 4 && mv new d/a &&
	mkfifo fifo && { sh -c "echo x > fifo" & } && writer=$! &&
	wait_for grep -q partner /proc/$writer/wchan && mv -T fifo d/b &&
	mkpages other 4 && ln -s "$PWD/other" link && mv -T link d/c &&
	head -c $((2 * ps)) /dev/zero >> d/e &&
	wait_for grep -q "^file replaced: $PWD/d/a (a new inode): reading it anew$" keep.log &&
	wait_for grep -q "^file replaced: $PWD/d/b (by a FIFO): not opened, no longer kept$" keep.log &&
	wait_for grep -q "^file replaced: $PWD/d/c (by a symbolic link): not opened, no longer kept$" keep.log &&
	wait_for grep -q "^file replaced: $PWD/d/e (rewritten in place): reading it anew$" keep.log &&
	wait_for st_is "(j[\"replaced_files\"], j[\"dropped_files\"])" "(2, 0)" &&
	"$HOTSET" keep --status --state "$PWD/s.state" | grep -q "; 2 replaced, not opened$" &&
	kill -0 $writer && ! grep -q "^file deleted" keep.log &&
	wait_for resident d/a 0-3 && resident other "" &&
	"$HOTSET" evict -q d/a d/e && wait_for resident d/a 0-3 && wait_for resident d/e 0-7 &&
	stop_keep && cat d/b > /dev/null && wait $writer
'

prereq_STRACE() { command -v strace > /dev/null; }

# A symlink to /dev/ptmx in a kept file's place: the keeper opened it (a
# new pseudo-terminal pair), then called the file deleted. Its opens are
# traced (-y: the file each descriptor is) from before the swap.
test_expect_success REALFS,STRACE 'a kept file replaced by a symlink to /dev/ptmx: the device is never opened' '
	mktree && start_keep p.prof &&
	{ strace -f -y -e trace=open,openat -o trace -p $kpid 2> strace.err & } && spid=$! &&
	wait_for grep -q "^strace: Process $kpid attached" strace.err &&
	ln -s /dev/ptmx link && mv -T link d/a &&
	wait_for grep -q "^file replaced: $PWD/d/a (by a symbolic link): not opened, no longer kept$" keep.log &&
	"$HOTSET" evict -q d/b && wait_for resident d/b 0-7 &&
	kill -INT $spid && { wait $spid || :; } &&
	grep -q "$PWD/d/b" trace && ! grep "ptmx" trace &&
	stop_keep
'

# open-watch FILE: prints "watching", then "opened" at each open of FILE's
# inode (inotify follows the inode, whatever name it is renamed to), for
# at most 120 s
cat > "$TRASH/open-watch.py" <<'EOF'
import ctypes, os, select, struct, sys, time
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.inotify_init1(os.O_CLOEXEC)
if fd < 0 or libc.inotify_add_watch(fd, os.fsencode(sys.argv[1]), 0x20) < 0:  # IN_OPEN
    sys.exit("inotify: " + os.strerror(ctypes.get_errno()))
print("watching", flush=True)
end = time.monotonic() + 120
while time.monotonic() < end:
    if not select.select([fd], [], [], 1)[0]:
        continue
    buf, off = os.read(fd, 4096), 0
    while off < len(buf):
        wd, mask, cookie, n = struct.unpack_from("iIII", buf, off)
        off += 16 + n
        if mask & 0x20:
            print("opened", flush=True)
EOF

# Where another user may write (a sticky directory, as /tmp): a root
# keeper of root's profile, one of whose files is nobody's, which nobody
# renames a file of its own over. That is never opened (inotify watches
# the new file's inode from before the rename), and is said replaced by
# another user's file, whose; root's own file beside it, replaced by root
# afterwards, is read anew.
test_expect_success REALFS,ROOT,NOBODY 'a kept file replaced by another user'"'"'s file is never opened, said whose' '
	mkdir -m 1777 sticky && mkpages sticky/mine 8 && mkpages sticky/theirs 8 &&
	chown nobody:nogroup sticky/theirs && pagetool read sticky/mine 0-7 && pagetool read sticky/theirs 0-7 &&
	"$HOTSET" snapshot -q -o p.prof sticky && start_keep p.prof &&
	as_nobody sh -c "head -c $((4 * ps)) /dev/zero > sticky/new" &&
	{ "$PYTHON" "$TRASH/open-watch.py" sticky/new > opens & } && wpid=$! &&
	wait_for grep -q "^watching$" opens &&
	as_nobody mv sticky/new sticky/theirs &&
	wait_for grep -q "^file replaced: $PWD/sticky/theirs (by another user.s file, uid $(id -u nobody)): not opened, no longer kept$" keep.log &&
	mkpages new 4 && mv new sticky/mine &&
	wait_for grep -q "^file replaced: $PWD/sticky/mine (a new inode): reading it anew$" keep.log &&
	wait_for resident sticky/mine 0-3 &&
	check_eq "$(st "(j[\"replaced_files\"], j[\"dropped_files\"])")" "(1, 0)" &&
	stop_keep && ! grep -q opened opens &&
	# the watch sees opens
	cat sticky/theirs > /dev/null && wait_for grep -q "^opened$" opens &&
	kill $wpid
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
	wait_for grep -q "^profiles reloaded: 1 file, 3 pages (12.0 KiB of memory)$" keep.log &&
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
	"$HOTSET" evict -q d/a && looked 5 && resident d/a "" &&
	mkpsi &&
	wait_for grep -q "^resuming: " keep.log &&
	wait_for resident d/a 0-7 &&
	stop_keep
'

# io pressure is others' only if it lasts while the keeper reads nothing:
# here the stall total grows all along, by far more than any window
# (others'), or the keeper read nothing within the 10 s that avg10 tells
# of; it reads on at a trickle, and evicted pages still come back.
test_expect_success REALFS 'others'"'"' io pressure: it reads on at a trickle, and resumes its rate' '
	mktree && start_keep p.prof &&
	grep -q "^note: cannot create a PSI trigger on $PWD/psi/io" keep.log &&
	"$HOTSET" evict -q d/a && wait_for resident d/a 0-7 &&
	# others stall on: the total grows by a second every 0.2 s, whenever the keeper looks
	# (until told to stop: a kill would leave its mv to race the mkpsi below)
	{ t=100000000000; while [ ! -e others.stop ]; do t=$((t + 1000000)); mkpsi 0.00 50.00 $t; sleep 0.2; done & } &&
	gpid=$! && trap "kill $gpid 2> /dev/null || :; kill $kpid 2> /dev/null || :; wait $kpid 2> /dev/null || :" EXIT &&
	{ wait_for grep -Eq "^backing off: io pressure \(avg10 above 15.0%, (others'"'"' 100% in a window without reads of ours|none of it ours); some avg10 50.00%\): reading on at a trickle, 1/8 of the rate$" keep.log || { cat keep.log; false; }; } &&
	wait_for st_is "(j[\"backed_off\"], j[\"backoff_reason\"], j[\"io_pressure_file\"])" "(True, '"'"'io'"'"', '"'"'$PWD/psi/io'"'"')" &&
	"$HOTSET" keep --status --state "$PWD/s.state" | grep -q "backed off now: io (reading at a trickle)$" &&
	"$HOTSET" evict -q d/b && wait_for resident d/b 0-7 &&
	touch others.stop && wait $gpid && mkpsi &&
	wait_for grep -q "^resuming the full rate: no io pressure for 10 s$" keep.log &&
	wait_for st_is "j[\"backed_off\"]" 0 &&
	stop_keep
'

# The same average with a total that does not grow: the stall was the
# keeper's own reads (it read just before), not others'. It weighs the
# average over some ticks (a window without reads of its own shows the
# stall total still); ten seconds after its last read the same average
# would be others' for all it knows, so a back-off is wrong only before:
# told by its own clock (the state's times), whatever the machine's load
# made of the test's.
test_expect_success REALFS 'io pressure of its own reads alone is no back-off' '
	mktree && start_keep p.prof &&
	"$HOTSET" evict -q d/a && wait_for resident d/a 0-7 &&
	wait_for st_is "j[\"rewarms\"]" 1 && read_ns=$(st "j[\"last_rewarm_ns\"]") &&
	mkpsi 0.00 50.00 &&
	looked 15 &&
	if grep -q "^backing off" keep.log; then wait_for st_is "j[\"backoffs\"] >= 1" 1; fi &&
	check_eq "$(st "j[\"backoffs\"] == 0 or j[\"last_backoff_ns\"] - $read_ns >= 10e9")" 1 &&
	stop_keep
'

# --io-cgroup: the io pressure of the jobs' cgroup, named, whatever the
# keeper's own: its stall alone, others' (growing all along), makes a trickle
test_expect_success REALFS '--io-cgroup DIR: io pressure read from DIR, not from its own' '
	mktree && mkdir cg &&
	{ t=100000000000; while :; do t=$((t + 1000000))
		printf "some avg10=50.00 avg60=0.00 avg300=0.00 total=%s\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n" $t > cg/io.tmp &&
		mv cg/io.tmp cg/io.pressure; sleep 0.2; done & } &&
	gpid=$! && trap "kill $gpid 2> /dev/null || :" EXIT &&
	wait_for test -e cg/io.pressure &&
	start_keep --io-cgroup "$PWD/cg" p.prof &&
	trap "kill $gpid 2> /dev/null || :; kill $kpid 2> /dev/null || :; wait $kpid 2> /dev/null || :" EXIT &&
	wait_for grep -q "^backing off: io pressure .*reading on at a trickle" keep.log &&
	# the state file is written after the line is said: read it again until it says so too
	wait_for st_is "(j[\"backoff_reason\"], j[\"io_pressure_file\"])" "('"'"'io'"'"', '"'"'$PWD/cg/io.pressure'"'"')" &&
	stop_keep &&
	expect_code 2 "$HOTSET" keep --io-cgroup "$PWD/d" --state "$PWD/s2.state" p.prof 2> err &&
	grep -q "^hotset: --io-cgroup: cannot read $PWD/d/io.pressure (No such file or directory)" err &&
	expect_code 2 "$HOTSET" keep --status --io-cgroup "$PWD/cg" 2> err && grep -q -- "--status only reads" err
'

# ---- real memory pressure ------------------------------------------------

# A cgroup v1 memory controller to make a small box with
memcg_v1() { awk '$3 == "cgroup" && $4 ~ /(^|,)memory(,|$)/ { print $2; exit }' /proc/mounts; }
prereq_MEMCG_V1() { [ -n "$(memcg_v1)" ] && [ -e /proc/pressure/memory ]; }
# "${in_box[@]}" BOX CMD...: CMD in the memory cgroup BOX (not a function: CMD & gives CMD's pid)
in_box=(sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"')
# box_gone: the keeper and the hog stopped, the box removed (an EXIT
# trap: set -e holds in it, so nothing in it may fail)
box_gone() {
	local p
	kill $kpid $hog 2> /dev/null || :
	wait $kpid $hog 2> /dev/null || :
	for p in $(cat "$box/cgroup.procs" 2> /dev/null || :); do
		echo "$p" > "${box%/*}/cgroup.procs" || :
	done
	rmdir "$box" 2> /dev/null || :
}
oom_kills() { awk '$1 == "oom_kill" { print $2 }' "$box/memory.oom_control"; }
# snap_whole FILE PAGES: a profile p.prof of all of FILE (the machine may
# take a page between the read and the snapshot: then read again)
snap_whole() {
	pagetool read "$1" 0-$(($2 - 1)) &&
	"$HOTSET" snapshot -q -o p.prof "$1" 2>&1 | grep -q "^Snapshot of 1 file, $2 resident pages"
}

# A 128 MiB box: the keeper in it, its 48 MiB kept; then a process in it
# holds 64 MiB and reads 32 MiB of its own over and over for 15 s, the box
# thrashing. The machine's real PSI triggers, no files of the test's own.
# A plain build: an ASan keeper's own memory, charged to the box, leaves
# the process too little and gets it killed.
test_expect_success REALFS,ROOT,MEMCG_V1,PLAIN 'real memory pressure in a box: backs off, no OOM kill, resumes after' '
	box=$(memcg_v1)/hotset-t0700-$$ && hog= && mkdir "$box" && trap box_gone EXIT &&
	echo $((128 << 20)) > "$box/memory.limit_in_bytes" &&
	n=$((48 << 20 >> 12)) && mkdir -p d && mkpages d/kept $n && mkpages d/own $((32 << 20 >> 12)) &&
	retry snap_whole d/kept $n && "$HOTSET" evict -q d && kills=$(oom_kills) &&
	cat > hog.py <<-\EOF &&
	import sys, time
	heap = bytearray(b"\1") * (64 << 20)
	end = time.time() + 15
	while time.time() < end:
	    open(sys.argv[1], "rb").read()
	EOF
	{ "${in_box[@]}" "$box" "$HOTSET" keep --interval 0.5s --state "$PWD/s.state" p.prof 2> keep.log & } &&
	kpid=$! && wait_for grep -q "^warmed " keep.log &&
	{ "${in_box[@]}" "$box" python3 hog.py d/own & } && hog=$! &&
	{ wait_for grep -q "^backing off: memory pressure" keep.log || { cat keep.log /proc/pressure/memory; false; }; } &&
	wait $hog && hog= &&
	check_eq "$(oom_kills)" "$kills" && { kill -0 $kpid || { cat keep.log; false; }; } &&
	{ wait_for grep -Eq "^resuming: (memory stall below 1% for [0-9]+ s|no pressure for 10 s)( \(memory\); reading at a trickle while io pressure lasts)?$" keep.log ||
	  { cat keep.log; false; }; } &&
	{ wait_for resident d/kept 0-$((n - 1)) || { cat keep.log; false; }; } &&
	check_eq "$(oom_kills)" "$kills" &&
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

# A FIFO blocked the read of the state, /dev/zero filled memory with its
# one endless line; a keeper started on either warned at every write, and
# left a .lock beside it (in /dev).
test_expect_success 'a state that is not a regular file is refused, by --status and by a keeper' '
	mkfifo fifo && mkdir dir && mkdir -p d && mkpages d/a 1 && "$HOTSET" snapshot -q -o p.prof d/a &&
	for s in fifo dir /dev/zero; do
		expect_code 2 timeout 60 "$HOTSET" keep --status -J --state $s > out 2> err &&
		grep -q "^hotset: $s: not a regular file" err && test ! -s out &&
		expect_code 2 timeout 60 "$HOTSET" keep --state $s p.prof 2> err &&
		grep -q "^hotset: $s: not a regular file" err && test ! -e $s.lock || return 1
	done
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

# ---- a root keeper, a user's profile -----------------------------------------

# A root keeper of a profile nobody wrote reads its files as nobody: a file
# in a 0700 directory of root's is not opened (nor read in), one nobody may
# read but not query (root's, 0644) is not watched (nor read back), and
# only nobody's own is kept resident.
test_expect_success ROOT,NOBODY,REALFS 'a root keeper reads a user'"'"'s profile as the user: nothing it could not read or query' '
	mkdir -p d priv && chmod 700 priv &&
	mkpages priv/secret 4 && mkpages d/ro 4 && mkpages d/own 4 && chown nobody:nogroup d/own &&
	pagetool read priv/secret 0-3 && pagetool read d/ro 0-3 && pagetool read d/own 0-3 &&
	"$HOTSET" snapshot -q -o nobody.prof priv/secret d/ro d/own &&
	chown nobody:nogroup nobody.prof && chmod 644 nobody.prof &&
	start_keep nobody.prof &&
	grep -q "^warning: $PWD/priv/secret: cannot open: Permission denied$" keep.log &&
	grep -q "^started: 1 profile, 2 files, 8 pages" keep.log &&
	grep -q "^not watching 1 file: " keep.log &&
	"$HOTSET" evict -q priv d &&
	wait_for grep -q "^re-warmed 4 pages (16.0 KiB of memory) of 1 file: 4 refaults$" keep.log &&
	resident d/own 0-3 && resident priv/secret "" && resident d/ro "" &&
	wait_for st_is "(j[\"rewarmed_pages\"], j[\"refault_pages\"])" "(4, 4)" &&
	stop_keep
'

# A root keeper reads nobody's profile as nobody: a file of nobody's own
# renamed over a kept one (a rebuild) is read anew; one of root's (a
# package upgrade) is taken too, but nobody may not query its residency:
# it is not watched, as it would not be at start-up; a third user's is
# never opened, and is said whose.
test_expect_success ROOT,NOBODY,REALFS 'a root keeper of a user'"'"'s profile: the user'"'"'s own file is read anew, root'"'"'s taken unwatched, a third user'"'"'s not opened' '
	mkdir -p d && chown nobody:nogroup d && for f in own root third; do
		mkpages d/$f 8 && chown nobody:nogroup d/$f && pagetool read d/$f 0-7 || return 1
	done &&
	as_nobody "$HOTSET" snapshot -q -o - d > nobody.prof &&
	chown nobody:nogroup nobody.prof && chmod 644 nobody.prof &&
	start_keep nobody.prof &&
	as_nobody sh -c "head -c $((4 * ps)) /dev/zero > d/new && mv d/new d/own" &&
	mkpages new 4 && chmod 644 new && mv new d/root &&
	mkpages new 4 && chmod 644 new && chown 4242:4242 new && mv new d/third &&
	wait_for grep -q "^file replaced: $PWD/d/own (a new inode): reading it anew$" keep.log &&
	wait_for grep -q "^warning: $PWD/d/root: replaced by a file whose residency is unknown to its profile.s owner: no longer watched$" keep.log &&
	wait_for grep -q "^file replaced: $PWD/d/third (by another user.s file, uid 4242): not opened, no longer kept$" keep.log &&
	wait_for resident d/own 0-3 && resident d/third "" &&
	check_eq "$(st "(j[\"replaced_files\"], j[\"dropped_files\"], j[\"unknown_files\"])")" "(1, 0, 1)" &&
	"$HOTSET" evict -q d && wait_for resident d/own 0-3 &&
	resident d/root "" && ! grep -q "d/root (a new inode)" keep.log &&
	stop_keep
'

# Root's state (0600) tells nobody nothing; a profile of nobody's beside
# root's makes the keeper write nobody a view (0400, nobody's) with the
# figures of nobody's files alone; the view goes when the profile does.
test_expect_success ROOT,NOBODY,REALFS 'keep --status as nobody of a root keeper: no figure of a file nobody cannot query' '
	mkdir -p d priv && chmod 700 priv && mkpages priv/secret 4 && pagetool read priv/secret 0-3 &&
	mkpages d/own 2 && pagetool read d/own 0-1 && chown nobody:nogroup d/own &&
	"$HOTSET" snapshot -q -o root.prof priv/secret && chmod 644 root.prof &&
	"$HOTSET" snapshot -q -o nobody.prof d/own && chown nobody nobody.prof && chmod 644 nobody.prof &&
	start_keep root.prof &&
	check_eq "$(stat -c %a s.state)" 600 &&
	expect_code 2 as_nobody "$HOTSET" keep --status --state "$PWD/s.state" -J > out 2> err &&
	test ! -s out && cat err &&
	grep -q "^hotset: $PWD/s.state: Permission denied: a keeper.s state is its user.s alone; .* there is none for uid $(id -u nobody)" err &&
	stop_keep &&
	start_keep root.prof nobody.prof &&
	view=s.state.uid-$(id -u nobody) &&
	wait_for test -e $view && check_eq "$(stat -c "%U %a" $view)" "nobody 400" &&
	as_nobody "$HOTSET" keep --status --state "$PWD/s.state" -J > v.json &&
	check_eq "$(json v.json "(j[\"view_uid\"], j[\"files\"], j[\"pages\"], j[\"bytes\"], j[\"profiles\"] == [\"$PWD/nobody.prof\"])")" "($(id -u nobody), 1, 2, $((2 * ps)), True)" &&
	as_nobody "$HOTSET" keep --status --state "$PWD/s.state" > v.txt &&
	grep -q "^      View: of uid $(id -u nobody).s profiles alone" v.txt && ! grep -q "root.prof" v.txt &&
	check_eq "$(st "(j[\"view_uid\"], j[\"files\"])")" "(None, 2)" &&
	stop_keep &&
	start_keep root.prof && test ! -e $view &&
	stop_keep
'

# ---- --mode lock ---------------------------------------------------------

# maps_bytes FILE: the bytes of the keeper's mappings of FILE
maps_bytes() {
	local range perm off dev ino path n=0
	while read -r range perm off dev ino path; do
		[ "$path" = "$1" ] && n=$((n + 0x${range#*-} - 0x${range%-*}))
	done < /proc/$kpid/maps
	echo $n
}
# locked N: the keeper says N pages are locked now
locked() { st_is "j[\"locked_bytes\"]" $(($1 * ps)); }
# evict_all: both eviction tools, whatever they can drop
evict_all() { "$HOTSET" evict -q d; vmtouch -q -e d/a d/b; }

# PLAIN: AddressSanitizer's mlock() does nothing, so an ASan build locks no page
test_expect_success REALFS,ROOT,PLAIN 'lock mode: the pages stay resident against hotset evict and vmtouch -e' '
	mktree && start_keep --mode lock p.prof &&
	grep -q "^started: 1 profile, 2 files, 16 pages (64.0 KiB of memory), budget .*, locking$" keep.log &&
	wait_for locked 16 &&
	check_eq "$(json st.json "(j[\"mode\"], j[\"locked_files\"])")" "('"'lock'"', 2)" &&
	"$HOTSET" evict d > ev.out && grep -q "16 pages (64.0 KiB of memory) stayed" ev.out &&
	vmtouch -q -e d/a d/b &&
	resident d/a 0-7 && resident d/b 0-7 &&
	"$HOTSET" keep --status --state "$PWD/s.state" > st.txt &&
	grep -q "^    Locked: 2 files, 64.0 KiB of memory$" st.txt &&
	stop_keep &&
	status_json && check_eq "$(json st.json "j[\"locked_bytes\"]")" 0
'

test_expect_success REALFS,ROOT,PLAIN 'lock mode: only the first SIZE of profile order is locked' '
	mktree && start_keep --mode lock --budget $((10 * ps)) p.prof &&
	wait_for locked 10 &&
	evict_all && resident d/a 0-7 && resident d/b 0-1 &&
	stop_keep
'

test_expect_success REALFS,ROOT,PLAIN 'lock mode: a truncated file does not kill the keeper, its tail is released' '
	mktree && start_keep --mode lock p.prof && wait_for locked 16 &&
	truncate -s $((2 * ps)) d/a &&
	wait_for grep -q "^file truncated: $PWD/d/a (shorter): 6 locked pages beyond its end unlocked$" keep.log &&
	wait_for locked 10 && kill -0 $kpid &&
	# the mapping of d/a is 2 pages now, nothing of it beyond the end
	check_eq "$(maps_bytes "$PWD/d/a")" $((2 * ps)) &&
	# grown again: rewritten in place, locked anew
	truncate -s $((8 * ps)) d/a &&
	wait_for grep -q "^file replaced: $PWD/d/a (rewritten in place): locking it anew$" keep.log &&
	wait_for locked 16 && evict_all && resident d/a 0-7 &&
	stop_keep
'

test_expect_success REALFS,ROOT,PLAIN 'lock mode: a replaced file is locked anew, the old one released' '
	mktree && start_keep --mode lock p.prof && wait_for locked 16 &&
	mkpages new 4 && ln d/a old && mv new d/a &&
	wait_for grep -q "^file replaced: $PWD/d/a (a new inode): locking it anew$" keep.log &&
	wait_for locked 12 &&
	evict_all && resident d/a 0-3 &&
	"$HOTSET" evict -q old && resident old "" &&
	rm d/b && wait_for grep -q "^file deleted: $PWD/d/b: dropped$" keep.log &&
	wait_for locked 4 &&
	stop_keep
'

# nobody's file of root's profile, in a directory all may write to, and
# nobody's file renamed over it: never locked, the old one released
test_expect_success REALFS,ROOT,NOBODY,PLAIN 'lock mode: a file replaced by another user'"'"'s is never opened, the old one released' '
	mkdir -m 1777 d && mkpages d/a 8 && mkpages d/b 8 && chown nobody:nogroup d/a &&
	pagetool read d/a 0-7 && pagetool read d/b 0-7 &&
	"$HOTSET" snapshot -q -o p.prof d/a d/b && start_keep --mode lock p.prof && wait_for locked 16 &&
	as_nobody sh -c "head -c $((4 * ps)) /dev/zero > d/new && mv d/new d/a" &&
	wait_for grep -q "^file replaced: $PWD/d/a (by another user.s file, uid $(id -u nobody)): not opened, no longer kept$" keep.log &&
	wait_for locked 8 && ! grep -q " $PWD/d/a\$" /proc/$kpid/maps &&
	evict_all && resident d/a "" && resident d/b 0-7 &&
	stop_keep
'

test_expect_success REALFS,ROOT,PLAIN 'lock mode: after SIGTERM, or kill -9, the pages can be evicted' '
	mktree && start_keep --mode lock p.prof && wait_for locked 16 &&
	stop_keep && "$HOTSET" evict -q d && resident d/a "" && resident d/b "" &&
	pagetool read d/a 0-7 && start_keep --mode lock p.prof && wait_for locked 16 &&
	evict_all && resident d/a 0-7 &&
	kill -KILL $kpid && { wait $kpid || :; } &&
	"$HOTSET" evict -q d && resident d/a "" && resident d/b ""
'

# --interval 1h: no tick for 15 minutes after the first, so what the reload
# left unlocked until the next tick stays unlocked while the test evicts.
test_expect_success REALFS,ROOT,PLAIN 'lock mode: SIGHUP locks the new set before unlocking the old one' '
	mktree && start_keep --mode lock --interval 1h p.prof && wait_for locked 16 &&
	was=$(grep " $PWD/d/a\$" /proc/$kpid/maps) &&
	# d/b now only its first 4 pages: locked anew, at once
	sed -i "s|^\(f .*\) 0-7 \($PWD/d/b\)\$|\1 0-3 \2|" p.prof && grep -q " 0-3 $PWD/d/b\$" p.prof &&
	kill -HUP $kpid &&
	wait_for grep -q "^profiles reloaded: 2 files, 12 pages (48.0 KiB of memory)$" keep.log &&
	evict_all && resident d/a 0-7 && resident d/b 0-3 &&
	# d/a unchanged: the same mapping, never unlocked
	check_eq "$(grep " $PWD/d/a\$" /proc/$kpid/maps)" "$was" &&
	stop_keep
'

test_expect_success REALFS,ROOT,PLAIN 'lock mode: a restart after kill -9 locks again, its counters resumed' '
	mktree && start_keep --mode lock p.prof && wait_for locked 16 &&
	since=$(st "j[\"since_ns\"]") &&
	kill -KILL $kpid && { wait $kpid || :; } &&
	start_keep --mode lock p.prof && wait_for locked 16 &&
	check_eq "$(st "j[\"since_ns\"]")" "$since" &&
	evict_all && resident d/a 0-7 && resident d/b 0-7 &&
	stop_keep
'

# reads: the read calls the keeper made so far (/proc/PID/io's syscr)
reads() { sed -n "s/^syscr: //p" /proc/$kpid/io; }

# Backed off from the start, the first locking waits, and so does the
# keeper: it reads the pressure a few times a second, where a keeper that
# went on at once with each burst would read it thousands of times.
test_expect_success REALFS,ROOT,PLAIN 'lock mode: pressure before the first locking: it waits, idle, then locks' '
	mktree && START_PSI=50.00 start_keep --mode lock p.prof &&
	wait_for grep -q "^backing off: memory pressure" keep.log &&
	r0=$(reads) && sleep 2 && r1=$(reads) &&
	echo "$((r1 - r0)) reads in 2 s" && test $((r1 - r0)) -lt 1000 &&
	status_json && check_eq "$(json st.json "j[\"locked_bytes\"]")" 0 &&
	mkpsi && wait_for grep -q "^resuming: " keep.log &&
	wait_for locked 16 &&
	stop_keep
'

test_expect_success NOBODY,REALFS 'lock mode as nobody: beyond RLIMIT_MEMLOCK, refused naming the fix' '
	mkdir -p d st && mkpages d/own 32 && pagetool read d/own 0-31 && chown nobody:nogroup d/own &&
	"$HOTSET" snapshot -q -o own.prof d/own && chmod 644 own.prof && chown nobody st &&
	# 128 KiB to lock, 64 KiB allowed
	expect_code 2 sh -c "ulimit -l 64 && exec setpriv --reuid=nobody --regid=nogroup --clear-groups -- \"\$0\" keep --mode lock --state \"\$1\" own.prof" "$HOTSET" "$PWD/st/s.state" 2> err &&
	grep -q "would lock 128 KiB, more than RLIMIT_MEMLOCK lets uid $(id -u nobody) without CAP_IPC_LOCK (64 KiB)" err &&
	grep -q "ulimit -l, LimitMEMLOCK= in the unit" err && grep -q "run as root" err
'

# Files of 100 one-page ranges each, a window (a mapping) each: 10 files
# more than vm.max_map_count allows a process. The files past it were said
# one line each (134,498 lines for 200,000 files); now one line for all.
# (A machine whose limit was raised far would lock gigabytes: skipped.)
prereq_MAPCOUNT() { [ "$(cat /proc/sys/vm/max_map_count)" -le 70000 ]; }
test_expect_success REALFS,ROOT,PLAIN,MAPCOUNT 'lock mode past vm.max_map_count: one warning, with the count and the sysctl' '
	max=$(cat /proc/sys/vm/max_map_count) && mkdir d &&
	python3 - "$PWD/d" $((max / 100 + 10)) $ps > p.prof <<-\PY &&
	import os, sys
	d, n, ps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
	ranges = ",".join(str(p) for p in range(0, 200, 2))
	print("hotset-profile 1\nsource snapshot\npage-size %d" % ps)
	for i in range(n):
	    path = "%s/f%05d" % (d, i)
	    with open(path, "wb") as f:
	        f.truncate(200 * ps)
	    print("f 0:0 0 0 0.000000000 r %s %s" % (ranges, path))
	print("end %d 0 0" % n)
	PY
	start_keep --mode lock p.prof &&
	wait_for grep -q "^warning: [0-9]* files not locked: mmap refused their windows (ENOMEM)" keep.log &&
	grep "not locked" keep.log &&
	grep -q "more than vm.max_map_count ($max) allows a process" keep.log &&
	check_eq "$(grep -c "not locked\|cannot map" keep.log)" 1 &&
	stop_keep
'

# ---- --protect -----------------------------------------------------------

# Has this process's cgroup v2 a memory controller?
v2_memory() {
	local own mnt
	own=$(sed -n -e "s/^0:://p" /proc/self/cgroup) &&
	mnt=$(awk '"'"'$9 == "cgroup2" { print $5; exit }'"'"' /proc/self/mountinfo) &&
	test -n "$mnt" && grep -qw memory "$mnt${own%/}/cgroup.controllers"
}

test_expect_success REALFS,ROOT '--protect: memory.low where cgroup v2 has memory; said and refused where not' '
	mktree && mkpsi &&
	if v2_memory; then
		start_keep --protect p.prof &&
		grep -q "^protecting 64.0 KiB from reclaim: memory.low of " keep.log &&
		wait_for st_is "j[\"protected_bytes\"]" $((16 * ps)) &&
		cg=$(json st.json "j[\"protect_cgroup\"]") &&
		check_eq "$(cat "$cg/memory.low")" $((16 * ps)) &&
		stop_keep
	else
		expect_code 2 "$HOTSET" keep --protect --state "$PWD/s.state" p.prof 2> err &&
		grep -q "^hotset: cannot keep: --protect cannot be done here: " err &&
		if grep -q "^[0-9]*:memory:" /proc/self/cgroup; then
			grep -q "cgroup v1, which has no low protection (memory.soft_limit_in_bytes is the opposite)" err
		fi &&
		! grep -q "^started" err
	fi
'

# ---- --daemon, --pidfile, --log, sd_notify ----------------------------------

# stop_daemon: SIGTERM to the pid of k.pid, and until its pid file is gone
stop_daemon() { kill -TERM "$(cat k.pid)" && wait_for test ! -e k.pid; }

test_expect_success '--daemon --pidfile: the command exits 0 once ready; the pid file goes at SIGTERM' '
	mktree && mkpsi && trap "test ! -s k.pid || kill \$(cat k.pid) 2> /dev/null || :" EXIT &&
	HOTSET_PSI_DIR=$PWD/psi "$HOTSET" keep --daemon --pidfile "$PWD/k.pid" --interval 0.2s \
		--state "$PWD/s.state" p.prof 2> d.err &&
	# ready: the pid file and the state are there already, not waited for
	pid=$(cat k.pid) && test "$pid" -gt 0 && test "$pid" != $$ &&
	grep -q "^running in the background: pid $pid, logging to standard error$" d.err &&
	status_json && check_eq "$(json st.json "(j[\"running\"], j[\"pid\"])")" "(True, $pid)" &&
	# in a session of its own, standard input /dev/null
	test "$(awk '"'"'{ print $6 }'"'"' /proc/$pid/stat)" = "$pid" &&
	check_eq "$(readlink /proc/$pid/fd/0)" /dev/null &&
	wait_for grep -q "^started: " d.err &&
	# a pid file naming a live process is refused
	expect_code 2 "$HOTSET" keep --daemon --pidfile "$PWD/k.pid" --state "$PWD/s2.state" p.prof 2> err &&
	grep -q "the pid file $PWD/k.pid names pid $pid, which runs" err &&
	stop_daemon && wait_for st_is "j[\"running\"]" 0 &&
	grep -q "^exiting (SIGTERM)" d.err
'

test_expect_success '--daemon: a startup error reaches the terminal, the exit status 2' '
	mktree && echo garbage > bad.prof &&
	expect_code 2 "$HOTSET" keep --daemon --pidfile "$PWD/k.pid" --state "$PWD/s.state" bad.prof 2> err &&
	grep -q "^hotset: cannot keep: $PWD/bad.prof" err && test ! -e k.pid &&
	! grep -q "running in the background" err &&
	# an error in the child, after the fork: the parent exits with its status
	expect_code 2 "$HOTSET" keep --daemon --pidfile "$PWD/nodir/k.pid" --state "$PWD/s.state" p.prof 2> err &&
	grep -q "cannot write the pid file $PWD/nodir/k.pid" err &&
	grep -q "the keeper (pid [0-9]*) exited before it was ready" err
'

test_expect_success '--daemon --log: a stale pid file replaced, the log in FILE' '
	mktree && mkpsi && trap "test ! -s k.pid || kill \$(cat k.pid) 2> /dev/null || :" EXIT &&
	echo $(( $(cat /proc/sys/kernel/pid_max) + 1 )) > k.pid &&
	HOTSET_PSI_DIR=$PWD/psi "$HOTSET" keep --daemon --pidfile "$PWD/k.pid" --log "$PWD/k.log" \
		--interval 0.2s --state "$PWD/s.state" p.prof 2> d.err &&
	pid=$(cat k.pid) && kill -0 $pid &&
	grep -q "^running in the background: pid $pid, logging to $PWD/k.log$" d.err &&
	wait_for grep -q "^started: 1 profile, 2 files" k.log &&
	! grep -q "^started" d.err &&
	stop_daemon && grep -q "^exiting (SIGTERM)" k.log
'

test_expect_success 'sd_notify: READY=1 once started, STOPPING=1 at SIGTERM, over $NOTIFY_SOCKET' '
	mktree && mkpsi &&
	python3 -c "
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1]); s.settimeout(20)
open(sys.argv[1] + \".bound\", \"w\").close()
for _ in range(2): print(s.recv(256).decode(), flush=True)
" "$PWD/notify.sock" > notify.out &
	npid=$! &&
	wait_for test -e notify.sock.bound &&
	NOTIFY_SOCKET=$PWD/notify.sock start_keep p.prof &&
	wait_for grep -qx READY=1 notify.out &&
	stop_keep && wait $npid &&
	check_eq "$(cat notify.out)" "READY=1
STOPPING=1"
'

test_expect_success 'usage errors of lock, protect and daemon' '
	expect_code 2 "$HOTSET" keep --mode pin p 2> err && grep -q -- "--mode takes watch or lock, not .pin." err &&
	expect_code 2 "$HOTSET" keep --status --daemon 2> err && grep -q -- "--status only reads a state" err &&
	expect_code 2 "$HOTSET" keep --pidfile "" p 2> err && grep -q -- "an empty --pidfile" err &&
	expect_code 2 "$HOTSET" keep --log "$PWD/no/dir/log" --state "$PWD/s.state" p 2> err &&
	grep -q "cannot open the log $PWD/no/dir/log" err
'

test_done
