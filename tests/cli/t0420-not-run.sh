#!/usr/bin/env bash
# time --json and record --json when the command does not run (127 not
# found, 126 cannot be executed, 125 hotset failed first): a JSON report all
# the same, with the exit status and why, and every member of a report of a
# command that ran, its figures null.
. "$(dirname "$0")/../lib.sh"

prereq_PYTHON() { command -v python3 >/dev/null; }

# same_members RAN FAILED: FAILED has RAN's members, in the same order;
# its figures are null (but for the few that say what happened).
same_members() {
	python3 - "$1" "$2" <<'EOF'
import json, sys
ran = json.load(open(sys.argv[1]))
failed = json.load(open(sys.argv[2]))
assert list(ran) == list(failed), (list(ran), list(failed))
said = {"report", "format", "command", "profile", "profile_written", "profile_error", "backend", "exit_status",
        "error", "interrupted_by", "notes"}
for k, v in failed.items():
    assert k in said or v is None, (k, v)
assert failed["notes"] == [] and failed.get("interrupted_by", 0) == 0, failed
assert ran["error"] is None, ran
EOF
}

# json_of FILE: the JSON object that ends FILE (after hotset's error line)
json_of() { sed -n '/^{/,$p' "$1"; }

printf '#!/bin/sh\necho ran\n' > "$TRASH/plain"
chmod 644 "$TRASH/plain"

test_expect_success PYTHON 'time --json: not found (127), not executable (126): a report, figures null' '
	hotset time --json -o ran.json -- true &&
	expect_code 127 hotset time --json -o j -- no-such-command-xyzzy 2> err &&
	grep -q "^hotset: no-such-command-xyzzy: command not found$" err &&
	same_members ran.json j &&
	check_eq "$(json j "(j[\"exit_status\"], j[\"signal\"], j[\"error\"], j[\"command\"])")" \
		"(127, None, '"'"'no-such-command-xyzzy: command not found'"'"', ['"'"'no-such-command-xyzzy'"'"'])" &&
	expect_code 126 hotset time --json -o j -- "$TRASH/plain" 2> err &&
	same_members ran.json j &&
	check_eq "$(json j "(j[\"exit_status\"], \"Permission denied\" in j[\"error\"])")" "(126, True)" &&
	# on standard error, after the error line
	expect_code 127 hotset time --json -- no-such-command-xyzzy 2> err &&
	json_of err > j && same_members ran.json j
'

for backend in ptrace bpf; do
	pre=PYTHON
	[ $backend = bpf ] && pre=PYTHON,BPF
	test_expect_success $pre "record --json ($backend): not found, not executable: a summary, figures null" '
		hotset record --json --backend='$backend' -o p -- true 2> ran &&
		json_of ran > ran.json &&
		expect_code 127 hotset record --json --backend='$backend' -o p2 -- no-such-command-xyzzy 2> err &&
		grep -q "^hotset: no-such-command-xyzzy: command not found$" err &&
		json_of err > j && same_members ran.json j &&
		check_eq "$(json j "(j[\"exit_status\"], j[\"profile_written\"], j[\"backend\"], j[\"error\"])")" \
			"(127, False, '"'"'$backend'"'"', '"'"'no-such-command-xyzzy: command not found'"'"')" &&
		test ! -e p2 &&
		expect_code 126 hotset record --json --backend='$backend' -o p2 -- "$TRASH/plain" 2> err &&
		json_of err > j && same_members ran.json j &&
		check_eq "$(json j "j[\"exit_status\"]")" 126 &&
		test ! -e p2
	'
done

test_expect_success PYTHON 'record --json: a profile that cannot be written, told before the job (125)' '
	hotset record --json --backend=ptrace -o p -- true 2> ran &&
	json_of ran > ran.json &&
	expect_code 125 hotset record --json --backend=ptrace -o /nonexistent/dir/p -- touch touched 2> err &&
	test ! -e touched &&
	json_of err > j && same_members ran.json j &&
	check_eq "$(json j "(j[\"exit_status\"], \"cannot write the profile: /nonexistent: No such file or directory\" in j[\"error\"])")" "(125, True)" &&
	# -q: no summary, in JSON or not
	expect_code 127 hotset record -q --json -o p -- no-such-command-xyzzy 2> err &&
	check_eq "$(cat err)" "hotset: no-such-command-xyzzy: command not found"
'

test_expect_success NOBODY,PYTHON 'as nobody: time and record --json of a command not found' '
	chown nobody:nogroup . &&
	as_nobody "$HOTSET" time --json -o ran.json -- true &&
	PATH=/usr/bin:/bin expect_code 127 as_nobody "$HOTSET" time --json -o j -- no-such-command-xyzzy 2> err &&
	same_members ran.json j &&
	as_nobody "$HOTSET" record --json -o p -- true 2> ran &&
	json_of ran > ran2.json &&
	PATH=/usr/bin:/bin expect_code 127 as_nobody "$HOTSET" record --json -o p -- no-such-command-xyzzy 2> err &&
	json_of err > j && same_members ran2.json j
'

test_done
