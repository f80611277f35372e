#!/usr/bin/env bash
# hotset time of a client that waits on a server: the report says how long
# it waited neither on a CPU nor on its disk, names the process at the
# other end of its socket (unix and TCP, a server of the test's own and
# the real MariaDB and PostgreSQL servers of t0955) and the command that
# measures it, and doctor's finding;
# a job with no socket, or one that talks only to its own child, says
# nothing; as nobody, a server of root's is "a process of another user".
. "$(dirname "$0")/../lib.sh"
# The plain build's pass only: these cases wait on servers' answers (3 s
# each); the sanitizers' pass runs the probe in every `hotset time` of the
# other tests, and its parsers in test-netsock.

DOC=$TESTS_DIR/../docs/json.md
schema() { python3 "$TESTS_DIR/helpers/json-schema.py" "$DOC" time "$1"; }
prereq_PYTHON() { command -v python3 > /dev/null; }
# where nobody can run it too (the source tree may be private)
SLOW=$TRASH/bin/slowserver.py
cp "$TESTS_DIR/helpers/slowserver.py" "$SLOW" && chmod 755 "$SLOW"

# serve KIND WHERE: a server that answers after 3 s (a client's start, its
# reads of a cold disk under load, stay well under half of it), in the background,
# killed when the test's body ends; SERVER its pid, READY what it listens on
serve() {
	"$PYTHON" "$SLOW" serve "$1" "$2" 3 ready < /dev/null > /dev/null 2>&1 &
	SERVER=$!
	trap "kill $SERVER 2> /dev/null || :" EXIT
	local i
	for i in $(seq 400); do [ -e ready ] && break; sleep 0.05; done
	READY=$(cat ready)
}
# j EXPR: a Python expression over the report t.json
j() { json t.json "$1"; }

test_expect_success PLAIN,PYTHON 'a client of a unix socket server: the server named, its pid, the socket, the command to measure it' '
	serve unix "$PWD/s.sock" &&
	hotset time -J -o t.json -- "$PYTHON" "$SLOW" client unix "$PWD/s.sock" > out &&
	check_eq "$(cat out)" done && schema t.json && cat t.json &&
	name=$(cat /proc/$SERVER/comm) &&
	check_eq "$(j "(j[\"waited_on\"][\"peer\"][\"pid\"], j[\"waited_on\"][\"peer\"][\"name\"], j[\"waited_on\"][\"peer\"][\"where\"])")" "($SERVER, '"'"'$name'"'"', '"'"'process'"'"')" &&
	check_eq "$(j "(j[\"waited_on\"][\"peer\"][\"transport\"], j[\"waited_on\"][\"peer\"][\"address\"], j[\"waited_on\"][\"peer\"][\"uid\"])")" "('"'"'unix'"'"', '"'"'$PWD/s.sock'"'"', 0)" &&
	check_eq "$(j "j[\"waited_on\"][\"seconds\"] > 1 and j[\"waited_on\"][\"wall_pct\"] > 50 and j[\"waited_on\"][\"io_wait_known\"]")" 1 &&
	check_eq "$(j "j[\"waited_on\"][\"peer\"][\"held_seconds\"] >= j[\"waited_on\"][\"seconds\"] / 2")" 1 &&
	check_eq "$(j "j[\"waited_on\"][\"peers\"][0] == j[\"waited_on\"][\"peer\"] and len(j[\"waited_on\"][\"peers\"]) == 1")" 1 &&
	# the server runs in the test'"'"'s cgroup, as hotset does: --pid names it, not that cgroup
	check_eq "$(j "j[\"waited_on\"][\"suggested_command\"][:6]")" "['"'"'hotset'"'"', '"'"'time'"'"', '"'"'--pid'"'"', '"'"'$SERVER'"'"', '"'"'--'"'"', '"'"'$PYTHON'"'"']" &&
	hotset time -- "$PYTHON" "$SLOW" client unix "$PWD/s.sock" 2> rep > out && cat rep &&
	grep -q "^Waited on peer .* neither on a CPU nor on its disk: on $name (pid $SERVER, cgroup .*), at the other end of a unix socket $PWD/s.sock\$" rep &&
	grep -q "^Measure it with  hotset time --pid $SERVER -- $PYTHON $SLOW client unix $PWD/s.sock\$" rep
'

test_expect_success PLAIN,PYTHON 'a client of a TCP server over loopback: the server named, both addresses' '
	serve tcp 127.0.0.1 &&
	hotset time -J -o t.json -- "$PYTHON" "$SLOW" client tcp 127.0.0.1 "$READY" > out &&
	schema t.json &&
	check_eq "$(j "(j[\"waited_on\"][\"peer\"][\"pid\"], j[\"waited_on\"][\"peer\"][\"transport\"], j[\"waited_on\"][\"peer\"][\"address\"])")" "($SERVER, '"'"'tcp'"'"', '"'"'127.0.0.1:$READY'"'"')" &&
	check_eq "$(j "j[\"waited_on\"][\"peer\"][\"local_address\"].startswith(\"127.0.0.1:\")")" 1
'

test_expect_success PLAIN,PYTHON 'a client of a TCP server over IPv6 loopback' '
	test -e /proc/net/tcp6 || exit 0
	serve tcp ::1 &&
	hotset time -J -o t.json -- "$PYTHON" "$SLOW" client tcp ::1 "$READY" > out &&
	schema t.json &&
	check_eq "$(j "(j[\"waited_on\"][\"peer\"][\"pid\"], j[\"waited_on\"][\"peer\"][\"transport\"], j[\"waited_on\"][\"peer\"][\"address\"])")" "($SERVER, '"'"'tcp6'"'"', '"'"'[::1]:$READY'"'"')"
'

test_expect_success PLAIN,PYTHON 'a job with no socket, and one that waits on its own child through a socket pair, say nothing' '
	hotset time -J -o t.json -- sleep 1.5 && schema t.json &&
	check_eq "$(j "j[\"waited_on\"]")" None &&
	hotset time -- sleep 1.5 2> rep && ! grep -q "Waited on" rep &&
	hotset time -J -o t.json -- "$PYTHON" "$SLOW" pair 2 > out && check_eq "$(cat out)" done &&
	check_eq "$(j "(j[\"wall_seconds\"] > 1.5, j[\"waited_on\"])")" "(True, None)"
'

test_expect_success PLAIN,PYTHON 'the streams hotset hands the job are not a peer: a socket on its standard output' '
	serve unix "$PWD/s.sock" &&
	# sleep'"'"'s standard output: a connection to the server, inherited from hotset
	"$PYTHON" - "$PWD/s.sock" <<-\PY &&
	import os, socket, subprocess, sys
	s = socket.socket(socket.AF_UNIX)
	s.connect(sys.argv[1])
	subprocess.run([os.environ["HOTSET"], "time", "-J", "-o", "t.json", "--", "sleep", "1.5"], stdout=s.fileno(), check=True)
	PY
	schema t.json && check_eq "$(j "j[\"waited_on\"]")" None
'

test_expect_success PLAIN,NOBODY,PYTHON 'as nobody: a server of root'"'"'s is a process of another user, its pid and name not told' '
	serve unix "$PWD/s.sock" &&
	as_nobody "$HOTSET" time -J -- "$PYTHON" "$SLOW" client unix "$PWD/s.sock" > out 2> t.json &&
	check_eq "$(cat out)" done && schema t.json && cat t.json &&
	check_eq "$(j "(j[\"waited_on\"][\"peer\"][\"where\"], j[\"waited_on\"][\"peer\"][\"pid\"], j[\"waited_on\"][\"peer\"][\"name\"], j[\"waited_on\"][\"peer\"][\"cgroup\"], j[\"waited_on\"][\"peer\"][\"uid\"])")" "('"'"'hidden'"'"', None, None, None, 0)" &&
	check_eq "$(j "(j[\"waited_on\"][\"peer\"][\"address\"], j[\"waited_on\"][\"suggested_command\"])")" "('"'"'$PWD/s.sock'"'"', [])" &&
	! grep -qw "$SERVER" t.json &&
	as_nobody "$HOTSET" time -- "$PYTHON" "$SLOW" client unix "$PWD/s.sock" 2> rep > out && cat rep &&
	grep -q "^Waited on peer .*: on a process of another user (uid 0), at the other end of a unix socket $PWD/s.sock\$" rep &&
	! grep -qw "$SERVER" rep && ! grep -q "Measure it with" rep
'

test_expect_success PLAIN,NOBODY,PYTHON 'as nobody over TCP: the same, from /proc/net/tcp'"'"'s owner alone' '
	serve tcp 127.0.0.1 &&
	as_nobody "$HOTSET" time -J -- "$PYTHON" "$SLOW" client tcp 127.0.0.1 "$READY" > out 2> t.json &&
	schema t.json &&
	check_eq "$(j "(j[\"waited_on\"][\"peer\"][\"where\"], j[\"waited_on\"][\"peer\"][\"pid\"], j[\"waited_on\"][\"peer\"][\"uid\"], j[\"waited_on\"][\"peer\"][\"address\"])")" "('"'"'hidden'"'"', None, 0, '"'"'127.0.0.1:$READY'"'"')" &&
	! grep -qw "$SERVER" t.json
'

# ---- real servers ----------------------------------------------------------------

test_expect_success PLAIN,PYTHON 'doctor of a client of a unix socket server: the finding, and the doctor of the server to run' '
	serve unix "$PWD/s.sock" &&
	hotset doctor -J --profile-output p -- "$PYTHON" "$SLOW" client unix "$PWD/s.sock" > d.json &&
	sed -i "1{/^done\$/d}" d.json &&
	check_eq "$(json d.json "[f[\"text\"] for f in j[\"findings\"] if f[\"id\"] == \"waited-on-peer\"][0].count(\"(pid $SERVER,\")")" 1 &&
	check_eq "$(json d.json "[s[\"argv\"][:5] for r in j[\"recommendations\"] for s in r[\"steps\"] if s[\"argv\"][1:2] == [\"doctor\"]][0]")" "['"'"'hotset'"'"', '"'"'doctor'"'"', '"'"'--pid'"'"', '"'"'$SERVER'"'"', '"'"'--'"'"']"
'

test_done
