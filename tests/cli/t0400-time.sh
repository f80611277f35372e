#!/usr/bin/env bash
# hotset time: the command runs as if bare (streams, environment, exit
# status, signals); the report has its figures, sane and never guessed
# (unknown, with the reason, when hotset may not make a cgroup); and the
# job's cgroup never outlives hotset.
. "$(dirname "$0")/../lib.sh"

CG=$(findmnt -n -t cgroup2 -o TARGET 2>/dev/null | head -n1)
# hotset can make cgroups for its jobs here (root, cgroup2 mounted)
prereq_CGROUP2() { [ "$(id -u)" -eq 0 ] && [ -n "$CG" ]; }
prereq_PYTHON() { command -v python3 >/dev/null; }

# Wait (at most 10 s) for a file to appear.
wait_for() { local i; for i in $(seq 200); do [ -e "$1" ] && return 0; sleep 0.05; done; echo "no $1" >&2; return 1; }
# No cgroup named after hotset process $1 is left anywhere.
no_cgroup_left() {
	local left; left=$(find "$CG" -maxdepth 4 -type d -name "hotset-job.$1*" 2>/dev/null)
	[ -z "$left" ] || { echo "left behind: $left" >&2; return 1; }
}
# The page cache is shared with the whole machine: somebody else's
# drop_caches can empty it between two runs; a warm check is tried thrice.
# The members every report has, in order, with their types; unknown is null.
FIGURES='"wall_seconds", "user_seconds", "sys_seconds", "io_wait_seconds", "io_wait_full_seconds",
 "io_pressure_some_pct", "io_pressure_full_pct", "cpu_wait_seconds", "memory_wait_seconds",
 "io_wait_method", "major_faults", "minor_faults", "voluntary_context_switches",
 "involuntary_context_switches", "max_rss_bytes", "disk_read_bytes", "cache_read_bytes",
 "rchar_bytes", "disk_write_bytes", "wchar_bytes", "still_running", "notes"'
check_json() {
	check_eq "$(json "$1" '(
list(j) == ["report", "format", "command", "exit_status", "signal", "error", '"$FIGURES"', "service", "waited_on"]
and j["service"] is None and j["waited_on"] is None
and j["report"] == "time"
and all(isinstance(j[k], (int, float)) and not isinstance(j[k], bool) and j[k] >= 0
    for k in ("wall_seconds", "user_seconds", "sys_seconds", "exit_status"))
and all(isinstance(j[k], int) and not isinstance(j[k], bool) and j[k] >= 0
    for k in ("major_faults", "minor_faults", "voluntary_context_switches",
              "involuntary_context_switches", "max_rss_bytes", "still_running"))
and all(j[k] is None or (isinstance(j[k], int) and j[k] >= 0)
    for k in ("disk_read_bytes", "cache_read_bytes", "rchar_bytes", "disk_write_bytes", "wchar_bytes"))
and (j["disk_read_bytes"] is None) == (j["rchar_bytes"] is None) == (j["disk_write_bytes"] is None)
and all(j[k] is None or (isinstance(j[k], (int, float)) and j[k] >= 0)
    for k in ("io_wait_seconds", "io_wait_full_seconds", "io_pressure_some_pct",
              "io_pressure_full_pct", "cpu_wait_seconds", "memory_wait_seconds"))
and (j["io_wait_seconds"] is None) == (j["io_wait_method"] is None) == (j["io_wait_full_seconds"] is None)
and (j["io_wait_seconds"] is None or j["io_wait_full_seconds"] <= j["io_wait_seconds"] <= j["wall_seconds"])
and (j["io_pressure_some_pct"] is None or j["io_pressure_some_pct"] <= 100)
and isinstance(j["notes"], list) and all(isinstance(n, str) for n in j["notes"])
and isinstance(j["command"], list))')" 1 || { cat "$1" >&2; return 1; }
}

test_expect_success 'usage: --help, errors exit 2 before anything runs' '
	hotset time --help > out &&
	head -n1 out | grep -q "^usage: hotset time " &&
	expect_code 2 hotset time 2> err && grep -q "no command" err &&
	expect_code 2 hotset time --bogus -- touch ran 2> err &&
	test ! -e ran && grep -q "hotset time --help" err
'

test_expect_success 'the man page SYNOPSIS is the --help usage line' '
	man=$TESTS_DIR/../docs/man/hotset-time.1 &&
	synopsis=$(sed -n "/^\.SH SYNOPSIS/,/^\.SH/p" "$man" | sed "1d;\$d" |
		sed -e "s/^\.[BI]R* //" -e "s/\\\\f[BIRP]//g" -e "s/\\\\-/-/g" | tr "\n" " " |
		sed -e "s/  */ /g" -e "s/ \$//") &&
	check_eq "$synopsis" "$(hotset time --help | head -n1 | sed "s/^usage: //")"
'

test_expect_success 'exit status is the command'"'"'s' '
	hotset time -q -o rep -- true &&
	expect_code 3 hotset time -q -o rep -- sh -c "exit 3" &&
	expect_code 1 hotset time -o rep false &&
	grep -q "^Command exited with non-zero status 1$" rep &&
	expect_code 127 hotset time -o rep -- sh -c "exit 127" 2> err &&
	expect_code 126 hotset time -o rep -- sh -c "exit 126" 2>> err &&
	test ! -s err
'

test_expect_success 'a command killed by signal N gives 128+N' '
	expect_code 143 hotset time -o rep -- sh -c "kill -TERM \$\$" &&
	grep -q "^Command terminated by signal 15" rep &&
	expect_code 137 hotset time --json -o j -- sh -c "kill -KILL \$\$" &&
	check_eq "$(json j "(j[\"exit_status\"], j[\"signal\"])")" "(137, 9)"
'

test_expect_success PYTHON 'killed by a signal, hotset dies of it too, as the bare command would' '
	cat > waitsig.py <<-\EOF &&
	import subprocess, sys
	print(subprocess.run(sys.argv[1:]).returncode)
	EOF
	check_eq "$(python3 waitsig.py "$HOTSET" time -o rep -- sh -c "kill -TERM \$\$")" -15 &&
	grep -q "^Command terminated by signal 15" rep &&
	check_eq "$(python3 waitsig.py "$HOTSET" time -o rep -- sh -c "kill -SEGV \$\$")" -11 &&
	check_eq "$(python3 waitsig.py "$HOTSET" record -q -o p -- sh -c "kill -INT \$\$")" -2 &&
	"$HOTSET" show p > /dev/null
'

test_expect_success PYTHON 'a caller that ignores SIGCHLD: the status is still the command'"'"'s, the job ignores it too' '
	cat > ignchld.py <<-\EOF &&
	import os, signal, sys
	signal.signal(signal.SIGCHLD, signal.SIG_IGN)
	os.execvp(sys.argv[1], sys.argv[1:])
	EOF
	expect_code 3 python3 ignchld.py "$HOTSET" time -q -o rep -- sh -c "exit 3" &&
	expect_code 3 python3 ignchld.py "$HOTSET" record -q --backend=ptrace -o p -- sh -c "exit 3" &&
	if "$HOTSET" record --backend=bpf --probe > /dev/null 2>&1; then
		expect_code 3 python3 ignchld.py "$HOTSET" record -q --backend=bpf -o p -- sh -c "exit 3"
	fi &&
	bare=$(python3 ignchld.py grep SigIgn /proc/self/status) &&
	check_eq "$(python3 ignchld.py "$HOTSET" time -q -o rep -- grep SigIgn /proc/self/status)" "$bare" &&
	check_eq "$(python3 ignchld.py "$HOTSET" record -q -o p -- grep SigIgn /proc/self/status)" "$bare"
'

test_expect_success 'not found gives 127, not executable 126, and no report' '
	expect_code 127 hotset time -o rep -- no-such-command-xyzzy 2> err &&
	grep -q "no-such-command-xyzzy: command not found" err && test ! -s rep &&
	printf "#!/bin/sh\necho ran\n" > plain && chmod 644 plain &&
	expect_code 126 hotset time -o rep -- ./plain > out 2> err &&
	grep -q "cannot run ./plain: Permission denied" err && test ! -s out &&
	mkdir dir &&
	expect_code 126 hotset time -o rep -- ./dir 2> err &&
	grep -q "cannot run ./dir" err
'

test_expect_success 'hotset failing itself gives 125, and the command does not run' '
	expect_code 125 hotset time -o /nonexistent/dir/report -- touch ran 2> err &&
	grep -q "cannot open /nonexistent/dir/report" err && test ! -e ran
'

test_expect_success 'options end at the command; -- is optional' '
	hotset time -o rep echo -q --json -o x > out &&
	check_eq "$(cat out)" "-q --json -o x" && grep -q "^Wall time" rep
'

test_expect_success 'standard streams pass through; the report goes to stderr' '
	printf "line 1\nline 2\n" > in &&
	hotset time -- sh -c "cat; echo to-stderr >&2" < in > out 2> err &&
	cmp in out &&
	check_eq "$(head -n1 err)" "to-stderr" &&
	grep -q "^Wall time" err && ! grep -q "Wall time" out &&
	hotset time -o rep -- sh -c "cat; echo to-stderr >&2" < in > out 2> err &&
	cmp in out && check_eq "$(cat err)" "to-stderr" && grep -q "^Wall time" rep
'

test_expect_success 'the environment passes through unchanged' '
	export HOTSET_T0400="a b
c=d" &&
	env -0 | tr "\0" "\1" | tr "\n" "\2" | tr "\1" "\n" | grep -v "^_=" | sort > want &&
	hotset time -q -o rep -- env -0 | tr "\0" "\1" | tr "\n" "\2" | tr "\1" "\n" |
		grep -v "^_=" | sort > got &&
	cmp want got && grep -q "^HOTSET_T0400=a b" got
'

test_expect_success 'SIGTERM sent to hotset reaches the command' '
	"$HOTSET" time -o rep -- sh -c "trap \"exit 7\" TERM; touch ready
		i=0; while [ \$i -lt 300 ]; do sleep 0.1; i=\$((i + 1)); done; exit 1" &
	pid=$! &&
	wait_for ready &&
	kill -TERM $pid &&
	expect_code 7 wait $pid &&
	grep -q "^Command exited with non-zero status 7" rep
'

test_expect_success 'SIGINT sent to hotset reaches the command' '
	# a shell starts background jobs with SIGINT ignored: undo that
	env --default-signal=INT "$HOTSET" time -o rep -- sh -c "trap \"exit 8\" INT; touch ready
		i=0; while [ \$i -lt 300 ]; do sleep 0.1; i=\$((i + 1)); done; exit 1" &
	pid=$! &&
	wait_for ready &&
	kill -INT $pid &&
	expect_code 8 wait $pid
'

test_expect_success 'a forwarded signal the command does not catch kills it: 128+N' '
	"$HOTSET" time -o rep -- sh -c "touch ready; exec sleep 30" &
	pid=$! &&
	wait_for ready &&
	kill -TERM $pid &&
	expect_code 143 wait $pid
'

test_expect_success '--json has every figure, with sane types' '
	hotset time --json -o j -- sh -c "echo hi > /dev/null" &&
	check_json j &&
	check_eq "$(json j "j[\"command\"] == [\"sh\", \"-c\", \"echo hi > /dev/null\"] and j[\"exit_status\"] == 0 and j[\"signal\"] is None")" 1 &&
	hotset time --json -- true 2> j2 && check_json j2
'

# documented KEYS-FILE SECTION: the keys docs/json.md lists under "## SECTION" are
# those of the JSON report in KEYS-FILE, in order.
documented() {
	python3 - "$TESTS_DIR/../docs/json.md" "$@" <<-\EOF
	import json, re, sys
	text = open(sys.argv[1]).read()
	section = re.search(r"^## %s\n(.*?)(?=^## |\Z)" % sys.argv[3], text, re.S | re.M).group(1)
	keys = re.findall(r"^\| `([^`]+)` \|", section, re.M)
	keys = [k for k in keys if "." not in k]	# the members of an object: json-schema.py checks them
	report = list(json.load(open(sys.argv[2])))
	assert keys == report, (keys, report)
	EOF
}

test_expect_success PYTHON 'docs/json.md lists exactly the keys of the time and record reports' '
	hotset time -J -o j -- true && documented j time &&
	hotset record -J -o p -- true 2> sum && documented sum record
'

test_expect_success CGROUP2 'as root, the job runs in a cgroup of its own, removed after' '
	"$HOTSET" time --json -o j -- cat /proc/self/cgroup > cg &
	pid=$! &&
	wait $pid &&
	grep -q "^0::.*/hotset-job\.$pid\$" cg &&
	check_eq "$(json j "j[\"io_wait_method\"]")" job-cgroup &&
	check_eq "$(json j "j[\"notes\"]")" "[]" &&
	check_json j &&
	no_cgroup_left $pid
'

test_expect_success REALFS 'bytes read from disk after eviction; read() bytes, not a guess from the cache, when warm' '
	head -c $((8 << 20)) /dev/urandom > f && sync f &&
	"$HELPERS/pagetool" evict f &&
	hotset time --json -o cold -- cat f > /dev/null &&
	check_json cold &&
	check_eq "$(json cold "j[\"disk_read_bytes\"] > 0 and j[\"rchar_bytes\"] >= 8 << 20")" 1 &&
	warm() {
		hotset time --json -o warm -- cat f > /dev/null &&
		check_json warm &&
		{ check_eq "$(json warm "j[\"rchar_bytes\"] >= 8 << 20 and j[\"cache_read_bytes\"] is None")" 1 ||
		  { cat warm >&2; false; }; }
	} &&
	retry warm
'

# rchar counts pipes as well as files: rchar - read_bytes is no count of
# bytes from the cache. A file read once (cold or warm) and passed through a
# pipe must not show up as read twice from the cache.
test_expect_success REALFS 'a pipe is not counted as file bytes from the cache' '
	head -c $((8 << 20)) /dev/urandom > f && sync f &&
	for state in cold warm; do
		if [ $state = cold ]; then "$HELPERS/pagetool" evict f; else cat f > /dev/null; fi &&
		hotset time --json -o j -- sh -c "cat f | wc -c" > n &&
		check_eq "$(cat n)" $((8 << 20)) &&
		check_json j &&
		check_eq "$(json j "j[\"cache_read_bytes\"] is None or j[\"cache_read_bytes\"] <= 8 << 20")" 1 &&
		check_eq "$(json j "j[\"rchar_bytes\"] is None or j[\"rchar_bytes\"] >= 16 << 20")" 1 &&
		hotset time -o rep -- sh -c "cat f | wc -c" > n &&
		grep "^Read from cache" rep > line &&
		grep -q "unknown" line || { cat rep >&2; return 1; }
	done
'

test_expect_success PYTHON 'max RSS is the peak of the largest process, a grandchild too' '
	hotset time --json -o small -- true &&
	check_json small &&
	check_eq "$(json small "j[\"max_rss_bytes\"] < 32 << 20")" 1 &&
	touch64="b = bytearray(64 << 20)
for i in range(0, len(b), 4096): b[i] = 1" &&
	hotset time --json -o big -- python3 -c "$touch64" &&
	check_json big &&
	check_eq "$(json big "j[\"max_rss_bytes\"] >= 64 << 20")" 1 &&
	# a child of sh, reaped by sh: its peak reaches hotset through sh
	hotset time --json -o grand -- sh -c "python3 -c \"\$0\"; :" "$touch64" &&
	check_json grand &&
	check_eq "$(json grand "j[\"max_rss_bytes\"] >= 64 << 20")" 1 &&
	hotset time -o rep -- python3 -c "$touch64" &&
	grep -q "^Max resident  *6[4-9]\.[0-9] MiB\|^Max resident  *[7-9][0-9]\.[0-9] MiB" rep
'

test_expect_success 'context switches are counted, as integers' '
	hotset time --json -o j -- sh -c "sleep 0.01; sleep 0.01" &&
	check_json j &&
	check_eq "$(json j "j[\"voluntary_context_switches\"] >= 2")" 1 &&
	hotset time -o rep -- true &&
	grep -q "^Context switches  *[0-9][0-9]* voluntary, [0-9][0-9]* involuntary$" rep
'

test_expect_success REALFS,PYTHON 'bytes written and fsynced to a file count as written to disk' '
	hotset time --json -o j -- python3 -c "
import os
fd = os.open(\"out\", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
for i in range(8):
    os.write(fd, os.urandom(1 << 20))
os.fsync(fd)
" &&
	check_json j &&
	check_eq "$(json j "j[\"disk_write_bytes\"] >= 8 << 20 and j[\"wchar_bytes\"] >= 8 << 20")" 1 &&
	hotset time --json -o quiet -- true &&
	check_eq "$(json quiet "j[\"disk_write_bytes\"] < 1 << 20")" 1 &&
	hotset time -o rep -- sh -c "head -c $((8 << 20)) /dev/zero > out2 && sync out2" &&
	grep -q "^Written to disk  *[89]\.[0-9] MiB" rep
'

# within N KEY A B: the KEY of JSON files A and B differ by less than N.
within() {
	python3 -c 'import json, sys
a, b = (json.load(open(f))[sys.argv[2]] for f in sys.argv[3:])
print(abs(a - b) < int(sys.argv[1]))' "$@"
}

test_expect_success PYTHON 'record'"'"'s summary: the job'"'"'s own figures, not the tracer'"'"'s' '
	touch64="b = bytearray(64 << 20)
for i in range(0, len(b), 4096): b[i] = 1" &&
	hotset record --backend=ptrace --json -o p -- python3 -c "$touch64" 2> sum &&
	check_eq "$(json sum "j[\"max_rss_bytes\"] >= 64 << 20 and j[\"voluntary_context_switches\"] >= 0")" 1 &&
	hotset record --backend=ptrace --json -o p -- true 2> sum &&
	check_eq "$(json sum "j[\"max_rss_bytes\"] < 32 << 20 and j[\"cache_read_bytes\"] is None")" 1 &&
	# the tracer reads /proc for kilobytes: none of it is the job'"'"'s
	hotset time --json -o bare -- true &&
	check_eq "$(within 1024 rchar_bytes sum bare)" True
'

test_expect_success CGROUP2 'processes left running: counted, noted as lower bounds, cgroup removed' '
	trap "kill \$(cat bg 2>/dev/null) 2>/dev/null || :" EXIT &&
	"$HOTSET" time --json -o j -- sh -c "sleep 30 < /dev/null > /dev/null 2>&1 & echo \$! > bg" &
	pid=$! &&
	wait $pid &&
	check_json j &&
	check_eq "$(json j "j[\"still_running\"] >= 1")" 1 &&
	json j "j[\"notes\"]" | grep -q "lower bound" &&
	kill -0 "$(cat bg)" &&
	! grep -q "hotset-job" "/proc/$(cat bg)/cgroup" &&
	no_cgroup_left $pid
'

test_expect_success CGROUP2,PYTHON 'children nobody waited for: CPU time from the cgroup, with a note' '
	hotset time --json -o j -- python3 -c "
import os, signal
signal.signal(signal.SIGCHLD, signal.SIG_IGN)
if os.fork() == 0:
    x = 0
    for i in range(4000000):
        x += i
    os._exit(0)
try:
    os.wait()
except ChildProcessError:
    pass
" &&
	check_json j &&
	json j "j[\"notes\"]" | grep -q "without being waited for" &&
	check_eq "$(json j "j[\"user_seconds\"] + j[\"sys_seconds\"] > 0.1")" 1
'

test_expect_success NOBODY 'unprivileged: io_wait unknown with the reason, never a wrong number' '
	chmod 777 . &&
	as_nobody "$HOTSET" time --json -o j -- true &&
	check_json j &&
	if json j "j[\"io_wait_seconds\"]" | grep -q None; then
		json j "\" \".join(j[\"notes\"])" > notes &&
		grep -q "io_wait is unknown" notes && grep -q "root" notes &&
		grep -q "delegated" notes && grep -q "systemd-run --user --scope" notes
	else
		json j "j[\"io_wait_method\"]" | grep -q cgroup
	fi &&
	as_nobody "$HOTSET" time -- true 2> text &&
	if grep -q "^I/O wait *unknown" text; then grep -q "^note: io_wait is unknown" text; fi &&
	as_nobody "$HOTSET" time -q -- true 2> text &&
	! grep -q "^note:" text
'

# A cgroup for the test, removed (with anything still inside moved out) at exit.
make_test_cgroup() {
	local dir=$CG/t0400-$1.$$
	mkdir "$dir" && echo "$dir"
}
remove_test_cgroup() {
	local pid
	[ -d "$1" ] || return 0
	for pid in $(cat "$1/cgroup.procs" 2>/dev/null); do echo "$pid" > "$CG/cgroup.procs" || :; done
	rmdir "$1"
}

test_expect_success CGROUP2,NOBODY 'unprivileged in a delegated cgroup: measured in a child of it' '
	D=$(make_test_cgroup deleg) &&
	trap "remove_test_cgroup $D" EXIT &&
	chown nobody:nogroup "$D" "$D/cgroup.procs" "$D/cgroup.threads" "$D/cgroup.subtree_control" &&
	chmod 777 . &&
	sh -c "echo \$\$ > $D/cgroup.procs && exec setpriv --reuid=nobody --regid=nogroup --clear-groups -- \"\$0\" \"\$@\"" \
		"$HOTSET" time --json -o j -- cat /proc/self/cgroup > cg &&
	check_json j &&
	check_eq "$(json j "j[\"io_wait_method\"]")" job-cgroup &&
	grep -q "^0::.*/t0400-deleg\.$$/hotset-job\.[0-9]*\$" cg &&
	check_eq "$(ls "$D" | grep -c hotset-job)" 0
'

test_expect_success CGROUP2,NOBODY 'unprivileged alone in a cgroup it does not own: measured there' '
	D=$(make_test_cgroup excl) &&
	trap "remove_test_cgroup $D" EXIT &&
	chmod 777 . &&
	sh -c "echo \$\$ > $D/cgroup.procs && exec setpriv --reuid=nobody --regid=nogroup --clear-groups -- \"\$0\" \"\$@\"" \
		"$HOTSET" time --json -o j -- cat /proc/self/cgroup > cg &&
	check_json j &&
	check_eq "$(json j "j[\"io_wait_method\"]")" hotset-cgroup &&
	json j "j[\"notes\"]" | grep -q "hotset.s own cgroup" &&
	grep -q "^0::.*/t0400-excl\.$$\$" cg
'

# A signal that reaches hotset between the job's end and its report (from a
# process the job left, which waits for the job to go) must not cost the
# profile or the report: it takes effect once they are written (exit 143),
# or, sent while hotset still forwarded, goes to the job's (gone) process.
signal_after_job() {
	rm -f hs.pid p.prof report &&
	sh -c 'echo $$ > hs.pid; exec "$@" 2> report' sh "$HOTSET" "$@" --json -- \
		sh -c 'j=$$; hs=$(cat hs.pid); (while kill -0 $j 2>/dev/null; do :; done; kill -TERM $hs 2>/dev/null) & cat /etc/hostname > /dev/null' \
		> /dev/null
	rc=$?
	[ $rc = 0 ] || [ $rc = 143 ] || { echo "exit $rc" >&2; return 1; }
	"$PYTHON" -c "import json,sys; json.load(open(sys.argv[1]))" report || { cat report >&2; return 1; }
}

test_expect_success 'a signal after the job ended: the report is whole (time)' '
	for i in 1 2 3 4 5; do signal_after_job time || return 1; done
'

test_expect_success 'a signal after the job ended: profile and report are whole (record, ptrace)' '
	for i in 1 2 3 4 5; do
		signal_after_job record --backend=ptrace -o p.prof &&
		"$HOTSET" show p.prof > /dev/null || return 1
	done
'

test_expect_success BPF 'a signal after the job ended: profile and report are whole (record, bpf)' '
	for i in 1 2 3 4 5; do
		signal_after_job record --backend=bpf -o p.prof &&
		"$HOTSET" show p.prof > /dev/null || return 1
	done
'

test_expect_success 'record --report FILE: the summary in the file, the job alone on stderr' '
	expect_code 3 hotset record -q -J --report rep.json -o p.prof -- \
		sh -c "echo job-said >&2; exit 3" 2> err &&
	check_eq "$(cat err)" job-said &&
	check_eq "$(json rep.json "j[\"report\"], j[\"exit_status\"], j[\"profile_written\"]")" \
		"('"'"'record'"'"', 3, True)" &&
	hotset record --report rep.txt -o p.prof -- true 2> err &&
	test ! -s err && grep -q "^hotset: recorded .* into p.prof" rep.txt &&
	expect_code 125 hotset record --report no/such/dir/r -- touch ran 2> err &&
	grep -q "cannot open no/such/dir/r" err && test ! -e ran
'

test_done
