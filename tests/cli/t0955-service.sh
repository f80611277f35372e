#!/usr/bin/env bash
# hotset time and record --pid/--cgroup/--unit: the figures and the
# profile of a service hotset did not start; and time naming the server a
# client waits on (a database server a client sends its job to) over the
# client's run: its disk bytes match what its own /proc/PID/io moved, with
# real MariaDB (fsync and O_DIRECT) and PostgreSQL servers of the test's
# own (tests/lib-db.sh); the client's exit status is kept; a service that
# does not exist or cannot be read is an error before the client runs; one
# that ends during the run is marked so.
. "$(dirname "$0")/../lib.sh"
. "$TESTS_DIR/lib-db.sh"

DOC=$TESTS_DIR/../docs/json.md
schema() { python3 "$TESTS_DIR/helpers/json-schema.py" "$DOC" time "$1"; }
# state PID: the state letter of /proc/PID/stat ("" once it is gone)
state() { sed -n 's/^[0-9]* (.*) \(.\) .*/\1/p' "/proc/$1/stat" 2> /dev/null; }
# wait_ended PID: PID has exited (a zombie, or reaped)
wait_ended() {
	local s i
	for i in $(seq 600); do s=$(state "$1"); [ -z "$s" ] || [ "$s" = Z ] && return 0; sleep 0.05; done
	return 1
}
prereq_PYTHON() { command -v python3 > /dev/null; }

test_expect_success 'a service that does not exist: exit 2, named, and the command not run' '
	sh -c "exit 0" & gone=$! && wait $gone &&
	expect_code 2 hotset time --pid $gone -- touch ran 2> err &&
	grep -q -- "--pid $gone: no such process" err &&
	expect_code 2 hotset time --pid 12x -- touch ran 2> err && grep -q "not a process id" err &&
	expect_code 2 hotset time --cgroup /hotset-no-such-cgroup.$$ -- touch ran 2> err &&
	grep -q -- "--cgroup /hotset-no-such-cgroup.$$: no such cgroup" err &&
	expect_code 2 hotset time --cgroup "$PWD" -- touch ran 2> err &&
	grep -q -- "--cgroup $PWD: not a cgroup" err &&
	expect_code 2 hotset time --cgroup "" -- touch ran 2> err &&
	expect_code 2 hotset time --unit hotset-no-such-unit-$$.service -- touch ran 2> err &&
	grep -q -- "--unit hotset-no-such-unit-$$.service: " err &&
	expect_code 2 hotset time --pid $$ --cgroup / -- touch ran 2> err &&
	grep -q "one service a run" err &&
	test ! -e ran
'

test_expect_success 'without systemd, --unit says so' '
	test -d /run/systemd/system && exit 0
	expect_code 2 hotset time --unit mariadb.service -- touch ran 2> err &&
	grep -q "systemd does not run this machine" err && test ! -e ran
'

# A service of the test's own: a shell that, once told through the FIFO
# go, reads FILE through a child (cat) it reaps, says so through the FIFO
# done, then waits to be killed. The job tells it and waits for it.
service() {
	mkfifo go done || return
	sh -c 'read x < go; cat "$1" > /dev/null; echo > done; exec sleep 600' sh "$1" \
		< /dev/null > /dev/null 2>&1 &
}
# end PID...: kill them when the test's body ends, however it ends (a
# process left running would hold the harness's output open)
end() { trap "kill $* 2> /dev/null || :" EXIT; }
job='echo > go; read x < done; exit $0'

test_expect_success PYTHON 'a process and the child it starts: the bytes they read during the job, the job'"'"'s status kept' '
	head -c $((4 << 20)) /dev/urandom > f && sync f && cold f &&
	service f
	svc=$!
	end $svc
	expect_code 3 hotset time -J -o t.json --pid $svc -- sh -c "$job" 3 &&
	schema t.json &&
	check_eq "$(json t.json "(j[\"exit_status\"], j[\"service\"][\"target\"], j[\"service\"][\"pid\"],
		j[\"service\"][\"ended\"]) == (3, \"pid\", $svc, False)")" 1 &&
	read=$(json t.json "j[\"service\"][\"disk_read_bytes\"]") &&
	echo "service read $read" &&
	test "$read" -ge $((4 << 20)) && test "$read" -le $((4 << 20 + (4 << 20) / 10)) &&
	check_eq "$(json t.json "j[\"service\"][\"processes\"] >= 1 and j[\"service\"][\"disk_lower_bound\"] is False")" 1
'

test_expect_success 'the text report: the service'"'"'s lines after the job'"'"'s' '
	head -c $((1 << 20)) /dev/urandom > f && sync f && cold f &&
	service f
	svc=$!
	end $svc
	hotset time -o rep --pid $svc -- sh -c "$job" 0 && cat rep &&
	grep -q "^Service  *--pid $svc: [12] process\(es\)\? seen, 1 at the end$" rep &&
	grep -q "^Service read  *[0-9.]* [KM]iB   from disk$" rep &&
	grep -q "^Service I/O wait " rep && grep -q "^Service memory " rep
'

test_expect_success PYTHON 'processes the service starts during the job are members, counted once each' '
	mkfifo go done
	sh -c "read x < go; sleep 600 & sleep 600 & echo > done; wait" < /dev/null > /dev/null 2>&1 &
	svc=$!
	end $svc
	hotset time -J -o t.json --pid $svc -- sh -c "$job" 0 && schema t.json &&
	kids=$(pgrep -P $svc | tr "\n" " ") && kill $kids &&
	check_eq "$(json t.json "(j[\"service\"][\"processes\"], j[\"service\"][\"processes_at_end\"])")" "(3, 3)"
'

test_expect_success PYTHON 'a process that ends during the job: the job runs on, its status kept, the figures marked' '
	mkfifo go
	sh -c "read x < go; exit 0" < /dev/null > /dev/null 2>&1 &
	svc=$!
	end $svc
	expect_code 5 hotset time -J -o t.json --pid $svc -- sh -c "echo > go; $(declare -f state wait_ended); wait_ended $svc; exit 5" &&
	schema t.json &&
	check_eq "$(json t.json "j[\"service\"][\"ended\"], j[\"service\"][\"disk_lower_bound\"]")" "(True, True)" &&
	json t.json "j[\"service\"][\"notes\"]" | grep -q "ended during the job"
'

test_expect_success PYTHON 'no COMMAND: --for DURATION, or until SIGINT, watches the service alone' '
	sleep 600 < /dev/null > /dev/null 2>&1 &
	idle=$!
	end $idle
	hotset time -J -o t.json --pid $idle --for 0.2s && schema t.json &&
	check_eq "$(json t.json "(j[\"command\"], j[\"exit_status\"], j[\"wall_seconds\"], j[\"service\"][\"wall_seconds\"] >= 0.2)")" "([], 0, None, True)" &&
	hotset time -o rep --pid $idle --for 0.2s && grep -q "^Watched .* as --for asked$" rep &&
	head -c $((4 << 20)) /dev/urandom > f && sync f && cold f &&
	service f
	svc=$!
	end $idle $svc
	"$HOTSET" time -J -o t.json --pid $svc &
	hs=$!
	# its sampler runs once the service'"'"'s baseline is taken
	for i in $(seq 200); do [ "$(ls /proc/$hs/task | wc -l)" -ge 2 ] && break; sleep 0.05; done &&
	test "$(ls /proc/$hs/task | wc -l)" -ge 2 &&
	echo > go && read x < done &&
	# SIGTERM: a background job of a shell without job control ignores SIGINT
	kill -TERM $hs && wait $hs && schema t.json &&
	check_eq "$(json t.json "j[\"service\"][\"disk_read_bytes\"] >= 4 << 20 and j[\"command\"] == []")" 1 &&
	expect_code 2 hotset time --pid $idle --for 1s -- touch ran 2> err && grep -q "without a COMMAND" err && test ! -e ran &&
	expect_code 2 hotset time --for 1s 2> err && grep -q "needs a service" err &&
	expect_code 2 hotset time --pid $idle --for 1x 2> err && grep -q "takes a duration" err
'

test_expect_success ROOT,PYTHON 'I/O wait: unknown with delay accounting off, saying how; with it on, its threads'"'"' delays' '
	was=$(cat /proc/sys/kernel/task_delayacct) &&
	trap "echo $was > /proc/sys/kernel/task_delayacct" EXIT &&
	head -c $((4 << 20)) /dev/urandom > f && sync f &&
	echo 0 > /proc/sys/kernel/task_delayacct
	sleep 600 < /dev/null > /dev/null 2>&1 &
	svc=$!
	trap "echo $was > /proc/sys/kernel/task_delayacct; kill $svc 2> /dev/null || :" EXIT
	hotset time -J -o t.json --pid $svc -- true && schema t.json &&
	check_eq "$(json t.json "(j[\"service\"][\"io_wait_seconds\"], j[\"service\"][\"io_wait_method\"])")" "(None, None)" &&
	json t.json "j[\"service\"][\"notes\"]" | grep -q "kernel.task_delayacct=1 turns it on" &&
	echo 1 > /proc/sys/kernel/task_delayacct &&
	cold f && service f
	svc2=$!
	trap "echo $was > /proc/sys/kernel/task_delayacct; kill $svc $svc2 2> /dev/null || :" EXIT
	hotset time -J -o t.json --pid $svc2 -- sh -c "$job" 0 && schema t.json &&
	check_eq "$(json t.json "j[\"service\"][\"io_wait_method\"] == \"delayacct\" and j[\"service\"][\"io_wait_seconds\"] >= 0")" 1
'

test_expect_success NOBODY 'as nobody: another user'"'"'s process is refused, naming the privilege; one'"'"'s own is measured' '
	sleep 600 < /dev/null > /dev/null 2>&1 &
	root_svc=$!
	# setpriv itself (as_nobody is a function: its pid would be a shell of root'"'"'s)
	setpriv --reuid=nobody --regid=nogroup --clear-groups sleep 600 < /dev/null > /dev/null 2>&1 &
	own_svc=$!
	end $root_svc $own_svc
	for i in $(seq 200); do [ "$(stat -c %u /proc/$own_svc)" = 0 ] || break; sleep 0.05; done &&
	test "$(stat -c %u /proc/$own_svc)" != 0 &&
	expect_code 2 as_nobody "$HOTSET" time --pid $root_svc -- echo ran > out 2> err &&
	cat err &&
	grep -q "process $root_svc (user 0)" err && grep -q "CAP_SYS_PTRACE" err && test ! -s out &&
	as_nobody "$HOTSET" time -J --pid $own_svc -- echo ran > out 2> t.json &&
	check_eq "$(cat out)" ran &&
	check_eq "$(json t.json "j[\"service\"][\"disk_read_bytes\"] == 0 and j[\"service\"][\"processes\"] == 1")" 1
'

# ---- record: the service's reads ---------------------------------------------------

# pages PROFILE FILE: the pages the profile lists for FILE (0: not listed)
pages() { json_stdin "$(hotset show -J "$1")" "sum(f[\"pages\"] for f in j[\"files\"] if f[\"path\"] == \"$2\")"; }
json_stdin() { printf '%s' "$1" > show.json && json show.json "$2"; }
rschema() { python3 "$TESTS_DIR/helpers/json-schema.py" "$DOC" record "$1"; }

test_expect_success ROOT,BPF,PYTHON 'record --pid: the profile is what the service and its child read, not the client; the client'"'"'s status kept' '
	head -c $((4 << 20)) /dev/urandom > f && head -c $((1 << 20)) /dev/urandom > g && sync f g &&
	service "$PWD/f"
	svc=$!
	end $svc
	expect_code 3 hotset record -J --report r.json -o p --pid $svc -- sh -c "cat g > /dev/null; $job" 3 &&
	rschema r.json &&
	check_eq "$(pages p "$PWD/f")" 1024 && check_eq "$(pages p "$PWD/g")" 0 &&
	check_eq "$(json r.json "(j[\"exit_status\"], j[\"service\"][\"pid\"], j[\"pages\"] >= 1024)")" "(3, $svc, True)" &&
	hotset show p | grep -q "^Command:  sh -c" &&
	hotset record -o p --pid $svc -- true 2> rep && cat rep &&
	grep -q "^hotset: the profile is what --pid $svc read (1 process followed) while the command ran" rep &&
	grep -q "^Service read " rep
'

test_expect_success ROOT,BPF,PYTHON 'record --pid without a command: --for, or until SIGTERM' '
	head -c $((2 << 20)) /dev/urandom > f && sync f &&
	service "$PWD/f"
	svc=$!
	end $svc
	"$HOTSET" record -o p --pid $svc 2> err &
	hs=$!
	for i in $(seq 600); do grep -q "^hotset: recording" err && break; sleep 0.05; done &&
	grep -q "^hotset: recording --pid $svc until SIGINT or SIGTERM$" err &&
	echo > go && read x < done &&
	kill -TERM $hs && wait $hs &&
	check_eq "$(pages p "$PWD/f")" 512 &&
	hotset record -J --report r.json -o p2 --pid $svc --for 0.1s && rschema r.json &&
	check_eq "$(json r.json "(j[\"exit_status\"], j[\"files\"], j[\"wall_seconds\"])")" "(0, 0, None)"
'

test_expect_success ROOT,BPF,PYTHON 'doctor --pid: the service'"'"'s reads, in its memory cgroup, the client'"'"'s status kept' '
	head -c $((2 << 20)) /dev/urandom > f && sync f && cold f &&
	service "$PWD/f"
	svc=$!
	end $svc
	expect_code 4 hotset doctor -J --profile-output p --pid $svc -- sh -c "$job" 4 > d.json &&
	check_eq "$(json d.json "(j[\"cgroup_source\"], j[\"cgroup\"])")" "('"'"'service'"'"', '"'"'$(sed -n "s/^[0-9]*:memory:\(.*\)/\1/p" /proc/$svc/cgroup)'"'"')" &&
	check_eq "$(pages p "$PWD/f")" 512
'

test_expect_success PYTHON 'record of a service: not there, or not recordable here, is exit 2 and the command not run' '
	expect_code 2 hotset record -o p --cgroup /hotset-no-such-cgroup.$$ -- touch ran 2> err &&
	grep -q "no such cgroup" err &&
	sleep 600 < /dev/null > /dev/null 2>&1 &
	idle=$!
	end $idle
	for i in $(seq 200); do [ "$(cat /proc/$idle/comm)" = sleep ] && break; sleep 0.05; done &&
	expect_code 2 hotset record -o p --backend ptrace --pid $idle -- touch ran 2> err &&
	{ grep -q "the ptrace backend follows only a command hotset starts" err || { cat err; false; }; } &&
	expect_code 2 hotset record -o p --pid $idle --for 1s -- touch ran 2> err &&
	test ! -e ran && test ! -e p
'

test_expect_success NOBODY 'record of a service as nobody: refused, naming the privilege, the command not run' '
	setpriv --reuid=nobody --regid=nogroup --clear-groups sleep 600 < /dev/null > /dev/null 2>&1 &
	own=$!
	end $own
	for i in $(seq 200); do [ "$(stat -c %u /proc/$own)" = 0 ] || break; sleep 0.05; done &&
	mkdir -m 777 w && cd w &&
	expect_code 2 as_nobody "$HOTSET" record -o p --pid $own -- touch ran 2> err &&
	cat err && grep -q "needs the bpf backend" err && grep -q "root" err &&
	test ! -e ran && test ! -e p
'

# ---- real servers ----------------------------------------------------------------

# once, in the plain build's pass: the sanitizers' pass runs the same code
# on the test's own services above, and the servers cost a minute there
if prereq_PLAIN; then db_test_servers; else echo "# no servers in the sanitizers' pass"; fi
ROWS=$DB_TEST_ROWS LIMIT=$DB_TEST_LIMIT

cat > "$TRASH/scan.sql" <<-\EOF
SELECT state, COUNT(*) FROM reports GROUP BY state ORDER BY state;
SELECT COUNT(*) FROM reports r JOIN dists d ON d.id = r.dist_id WHERE r.summary LIKE '%t/pod.t%';
EOF
echo "SELECT no_such_column FROM reports;" > "$TRASH/bad.sql"

# server_read NAME: read_bytes summed over the processes of the server's cgroup
server_read() {
	local p n=0 v
	for p in $(db_procs "$1"); do
		v=$(awk '/^read_bytes:/ { print $2 }' "/proc/$p/io" 2> /dev/null) && n=$((n + ${v:-0}))
	done
	echo $n
}

# served NAME STATUS SQL OPTION ARG: the job through NAME's client under
# hotset time OPTION ARG, its table evicted first: exits with STATUS, and
# the server's bytes read in the report are within 10% of what its
# processes' own counters moved around it
served() {
	local name=$1 want=$2 sql=$3 before after got rc=0
	shift 3
	db_client "$name" &&
	hotset evict -q "$(db_datadir "$name")" &&
	before=$(server_read "$name") &&
	{ hotset time -J -o t.json "$@" -- "${DB_CLIENT[@]}" < "$sql" > out 2> err || rc=$?; } &&
	after=$(server_read "$name") &&
	check_eq "$rc" "$want" && schema t.json &&
	got=$(json t.json "j[\"service\"][\"disk_read_bytes\"]") &&
	echo "$name $*: hotset $got, the server's counters $((after - before))" &&
	test $((after - before)) -gt $((1 << 20)) &&
	test $((10 * (got - (after - before)))) -le $((after - before)) &&
	test $((10 * ((after - before) - got))) -le $((after - before))
}

test_expect_success ROOT,MARIADB,PYTHON 'MariaDB, fsync and O_DIRECT: --cgroup gives the server'"'"'s reads within 10% of its own counters, status 0 and 1 kept' '
	for name in mariadb mariadb-direct; do
		cg=$(db_cgroups $name | head -n 1) &&
		retry served $name 0 "$TRASH/scan.sql" --cgroup "$cg" &&
		check_eq "$(json t.json "(j[\"service\"][\"cgroup\"], j[\"service\"][\"processes\"]) == (\"$cg\", 1)")" 1 &&
		expect_code 1 hotset time -J -o t.json --cgroup "$cg" -- "${DB_CLIENT[@]}" < "$TRASH/bad.sql" 2> err &&
		grep -q "Unknown column" err && schema t.json &&
		check_eq "$(json t.json "(j[\"exit_status\"], j[\"service\"][\"target\"]) == (1, \"cgroup\")")" 1 || exit 1
	done
'

test_expect_success ROOT,MARIADB,PYTHON 'MariaDB: --pid and --cgroup by its name in the hierarchy, the same' '
	retry served mariadb-direct 0 "$TRASH/scan.sql" --pid "$(db_pid mariadb-direct)" &&
	cg=$(db_cgroups mariadb | head -n 1) &&
	retry served mariadb 0 "$TRASH/scan.sql" --cgroup "/${cg##*/}" &&
	check_eq "$(json t.json "j[\"service\"][\"memory_limit_bytes\"]")" $LIMIT
'

test_expect_success ROOT,POSTGRES,PYTHON 'PostgreSQL: a backend a session, reaped by the postmaster: counted, status 0 and 3 kept' '
	cg=$(db_cgroups postgres | head -n 1) &&
	retry served postgres 0 "$TRASH/scan.sql" --cgroup "$cg" &&
	check_eq "$(json t.json "j[\"service\"][\"processes\"] > 1")" 1 &&
	db_client postgres &&
	expect_code 3 hotset time -J -o t.json --cgroup "$cg" -- "${DB_CLIENT[@]}" < "$TRASH/bad.sql" 2> err &&
	grep -q no_such_column err && check_eq "$(json t.json "j[\"exit_status\"]")" 3
'

test_expect_success ROOT,MARIADB,NOBODY 'as nobody: the server of another user is refused, naming the privilege' '
	cg=$(db_cgroups mariadb | head -n 1) &&
	expect_code 2 as_nobody "$HOTSET" time --cgroup "$cg" -- echo ran > out 2> err &&
	cat err && grep -q "CAP_SYS_PTRACE" err && test ! -s out
'

# pages_under PROFILE DIR [trace]: the pages the profile lists for the files
# under DIR; with "trace", those its trace reads, repeats included
pages_under() {
	hotset show -J --trace "$1" > show.json &&
	if [ "${3:-}" = trace ]; then
		json show.json "sum(l - f + 1 for i, f, l in j[\"trace\"] if j[\"files\"][i][\"path\"].startswith(\"$2/\"))"
	else
		json show.json "sum(f[\"pages\"] for f in j[\"files\"] if f[\"path\"].startswith(\"$2/\"))"
	fi
}

# recorded NAME FILE COUNT OPTION ARG: under hotset record OPTION ARG,
# scan.sql through NAME's client, its data evicted first: the profile lists
# FILE (the table) and none of the client's files; with COUNT "pages", the
# pages it lists under the data directory are at least 95% of what the
# server read from the disk (its /proc/PID/io, as time measures it, from a
# cold cache); with "trace", the pages its trace reads there (O_DIRECT:
# every read goes to the disk, repeats included); with "some", at least
# half of FILE
recorded() {
	local name=$1 file=$2 count=$3 dir table got disk
	shift 3
	dir=$(db_datadir "$name") && db_client "$name" &&
	hotset evict -q "$dir" &&
	hotset record -q -J --report r.json --trace -o p "$@" -- "${DB_CLIENT[@]}" < "$TRASH/scan.sql" > out &&
	rschema r.json && table=$(pages p "$file") &&
	disk=$(json r.json "j[\"service\"][\"disk_read_bytes\"] // 4096") &&
	case $count in
	pages|trace) got=$(pages_under p "$dir" $count) ;;
	some) got=$((table * 2)) disk=$(($(stat -c %s "$file") / 4096)) ;;
	esac &&
	echo "$name $*: $table pages of $file; $count: $got against $disk" &&
	test "$table" -gt 0 && test $((got * 100)) -ge $((disk * 95)) &&
	! hotset show --files p | grep -q "bin/mariadb$\|bin/psql$"
}

test_expect_success ROOT,BPF,MARIADB,PYTHON 'record --cgroup and --pid of MariaDB (fsync and O_DIRECT): the table the server read, not the client' '
	retry recorded mariadb "$(db_datadir mariadb)/hs/reports.ibd" pages --cgroup "$(db_cgroups mariadb | head -n 1)" &&
	ibd=$(db_datadir mariadb-direct)/hs/reports.ibd &&
	retry recorded mariadb-direct "$ibd" trace --cgroup "$(db_cgroups mariadb-direct | head -n 1)" &&
	hotset show -v p | grep "reports.ibd" &&
	retry recorded mariadb-direct "$ibd" trace --pid "$(db_pid mariadb-direct)"
'

test_expect_success ROOT,BPF,MARIADB,PYTHON 'doctor --cgroup of MariaDB: the server'"'"'s cgroup, limit and disk reads are the diagnosis'"'"'s' '
	cg=$(db_cgroups mariadb | head -n 1) && db_client mariadb &&
	hotset evict -q "$(db_datadir mariadb)" &&
	# the diagnosis goes to standard output, after what the client printed there
	hotset doctor -J --profile-output p --cgroup "$cg" -- sh -c "\"\$@\" > /dev/null" sh "${DB_CLIENT[@]}" < "$TRASH/scan.sql" > d.json &&
	check_eq "$(json d.json "(j[\"cgroup_source\"], j[\"cgroup\"], j[\"cgroup_memory_limit_bytes\"])")" "('"'"'service'"'"', '"'"'/${cg##*/}'"'"', $LIMIT)" &&
	json d.json "[f for f in j[\"findings\"] if f[\"id\"] == \"io-wait\"]" | grep -q "service" &&
	test "$(pages p "$(db_datadir mariadb)/hs/reports.ibd")" -gt 0
'

test_expect_success ROOT,BPF,POSTGRES,PYTHON 'record --cgroup of PostgreSQL: the backend the postmaster starts for the session is followed' '
	rel=$(db_sql postgres "SELECT pg_relation_filepath('"'"'reports'"'"')") &&
	retry recorded postgres "$(db_datadir postgres)/$rel" some --cgroup "$(db_cgroups postgres | head -n 1)"
'

# ---- time: the server a client waits on (t0430 has the rest) ---------------------

# j EXPR: a Python expression over the report t.json
j() { json t.json "$1"; }
pschema() { schema "$1"; }
test_expect_success ROOT,MARIADB 'a MariaDB client waiting on a query: mariadbd named, its pid' '
	db_client mariadb &&
	echo "SELECT SLEEP(3);" | hotset time -J -o t.json -- "${DB_CLIENT[@]}" > out &&
	pschema t.json && cat t.json &&
	check_eq "$(j "(j[\"waited_on\"][\"peer\"][\"pid\"], j[\"waited_on\"][\"peer\"][\"name\"], j[\"waited_on\"][\"peer\"][\"transport\"])")" "($(db_pid mariadb), '"'"'mariadbd'"'"', '"'"'unix'"'"')" &&
	check_eq "$(j "j[\"waited_on\"][\"peer\"][\"address\"]")" "${DB_SOCK[mariadb]}"
'

test_expect_success ROOT,POSTGRES 'a PostgreSQL client waiting on a query: its backend named, a child of the postmaster' '
	db_client postgres &&
	# the session names its backend: the process at the other end
	echo "SELECT pg_backend_pid(); SELECT pg_sleep(3);" |
		hotset time -J -o t.json -- "${DB_CLIENT[@]}" > out &&
	pschema t.json && cat t.json out &&
	check_eq "$(j "(j[\"waited_on\"][\"peer\"][\"pid\"], j[\"waited_on\"][\"peer\"][\"name\"], j[\"waited_on\"][\"peer\"][\"transport\"])")" "($(head -n 1 out), '"'"'postgres'"'"', '"'"'unix'"'"')" &&
	check_eq "$(j "j[\"waited_on\"][\"peer\"][\"address\"].startswith(\"${DB_SOCK[postgres]}/\")")" 1
'

for name in mariadb mariadb-direct postgres; do db_stop "$name"; done
test_done
