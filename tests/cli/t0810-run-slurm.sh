#!/usr/bin/env bash
# hotset run --engine slurm, on a one-node Slurm cluster of the test's own:
# a job file runs to the same table and JSON as the local queue, each job
# submitted with its --mem from its history (what curve --mem-request
# gives for its profile) and its profile named for the prolog; a stop
# signal cancels what waits and reaches what runs once (a job in its
# prolog too: its step does not run it); kill -9 of run,
# then --resume adopts the jobs that went on in the cluster (found by
# their token when the queue died as sbatch returned), so that each
# completes once; a queue run by an unprivileged user; sbatch's refusal
# is told.
. "$(dirname "$0")/../lib.sh"
. "$TESTS_DIR/lib-slurm.sh"

ROOT=$(cd "$TESTS_DIR/.." && pwd)
check_report() { python3 "$TESTS_DIR/helpers/json-schema.py" "$ROOT/docs/json.md" "$@"; }
srun_q() { "$HOTSET" run -q --engine slurm --state "$PWD/st" "$@"; }

# wait-for FILE: until FILE is there, 30 s at most (then exit 1)
printf '#!/bin/sh\nfor i in $(seq 300); do [ -e "$1" ] && exit 0; sleep 0.1; done\nexit 1\n' \
	> "$TRASH/wait-for" && chmod 755 "$TRASH/wait-for"
# Two CPUs, so that a third job waits for one; memory for all. While
# $TRASH/slow-prolog is there, a prolog that takes its time, as a staging
# one may: until $TRASH/prolog.go is there too (30 s at most; it never
# fails, which would drain the node).
printf '#!/bin/sh\n[ -e %s/slow-prolog ] || exit 0\ntouch %s/prolog.started\nsh %s/wait-for %s/prolog.go\nexit 0\n' \
	"$TRASH" "$TRASH" "$TRASH" "$TRASH" > "$TRASH/prolog" && chmod 755 "$TRASH/prolog"
# the cluster's cases in the plain build's pass only: they wait on Slurm's
# daemons, the same under the sanitizers, which run the engine's other cases
if prereq_PLAIN; then
	SLURM_CPUS=2 SLURM_REAL_MEMORY=2048 SLURM_PROLOG=$TRASH/prolog slurm_cluster_start
else
	echo "# no Slurm cluster in the sanitizers' pass"
fi
prereq_SLURM() { [ -n "$SLURM_CLUSTER_DIR" ]; }

test_expect_success 'the local engine'\''s options are refused with slurm, before anything runs' '
	echo "a true" > jobs &&
	expect_code 2 "$HOTSET" run --engine slurm -j 2 jobs 2> err && grep -q "local engine" err &&
	expect_code 2 "$HOTSET" run --engine slurm --budget 1G jobs 2> err &&
	expect_code 2 "$HOTSET" run --engine pbs jobs 2> err && grep -q "local or slurm" err &&
	expect_code 2 "$HOTSET" run --step a --engine slurm jobs 2> err &&
	expect_code 2 "$HOTSET" run --state "$PWD/st" --step nosuch jobs 2> err &&
	grep -q "no job named .nosuch." err &&
	if command -v sbatch > /dev/null; then
		expect_code 2 "$HOTSET" run --engine slurm --state "$PWD/a%jb" jobs 2> err &&
		grep -q "may not hold .%." err && test ! -e "a%jb"
	fi
'

test_expect_success SLURM 'a job file through sbatch: statuses, logs, JSON; then each --mem, the one curve gives' '
	printf "%s\n" "a echo out-a" "b sh -c \"echo out-b; exit 3\"" "c cat $PWD/jobs" > jobs &&
	expect_code 1 srun_q -J jobs > first.json && check_report run first.json &&
	cat first.json &&
	check_eq "$(json first.json "j[\"engine\"]")" slurm &&
	check_eq "$(json first.json "[x[\"exit_status\"] for x in j[\"jobs\"]]")" "[0, 3, 0]" &&
	check_eq "$(json first.json "all(isinstance(x[\"slurm_job_id\"], int) for x in j[\"jobs\"])")" 1 &&
	grep -qx out-a st/logs/a.log && grep -qx out-b st/logs/b.log &&
	test -s st/jobs/c/profile && test -s st/jobs/c/history &&
	expect_code 1 srun_q -J jobs > second.json && check_report run second.json &&
	for i in 0 1 2; do
		id=$(json second.json "j[\"jobs\"][$i][\"slurm_job_id\"]") &&
		need=$(json second.json "j[\"jobs\"][$i][\"memory_needed_bytes\"]") &&
		check_eq "$(slurm_job_field $id MinMemoryNode)" "$(( (need + 1048575) >> 20 ))M" &&
		name=$(json second.json "j[\"jobs\"][$i][\"name\"]") &&
		check_eq "$(slurm_job_field $id Comment)" "hotset:$PWD/st/jobs/$name/profile" &&
		check_eq "$(slurm_job_field $id MinMemoryNode)" \
			"$("$HOTSET" curve -q --mem-request st/jobs/$name/profile)" || return 1
	done &&
	"$HOTSET" run --engine slurm --dry-run --state "$PWD/st" jobs > plan &&
	grep -q "^a .*sbatch --parsable --job-name=a .*--mem=[0-9]*M .*--step a $PWD/st/jobfile" plan
'

test_expect_success SLURM 'SIGTERM: the running jobs get it once, the waiting one is cancelled' '
	cat > job.sh <<-\EOF &&
	trap "echo TERM >> $1.sig; exit 1" TERM
	touch $1.started
	for i in $(seq 300); do sleep 0.1; done
	EOF
	printf "%s\n" "a true" "b true" "c true" > quick && srun_q quick > /dev/null &&
	printf "%s\n" "a sh $PWD/job.sh a" "b sh $PWD/job.sh b" "c sh $PWD/job.sh c" > jobs &&
	{ "$HOTSET" run -q -J --engine slurm --state "$PWD/st" jobs > r.json 2> err & } && pid=$! &&
	for i in $(seq 300); do [ -e a.started ] && [ -e b.started ] && break; sleep 0.1; done &&
	test -e a.started && test -e b.started && test ! -e c.started &&
	kill -TERM $pid && rc=0 && { wait $pid || rc=$?; } && check_eq $rc 143 &&
	cat r.json err && check_report run r.json && cat st/logs/a.log &&
	check_eq "$(cat a.sig)" TERM && check_eq "$(cat b.sig)" TERM && test ! -e c.started &&
	check_eq "$(json r.json "\" \".join(x[\"state\"] for x in j[\"jobs\"])")" "done done not-run" &&
	check_eq "$(json r.json "[x[\"exit_status\"] for x in j[\"jobs\"]]")" "[143, 143, None]" &&
	# what Slurm said of c last: why it waited, or, if no poll saw it pending with a reason before the stop, its cancellation
	case $(json r.json "j[\"jobs\"][2][\"wait_reason\"]") in slurm:Resources|slurm:Priority|slurm:CANCELLED) ;; *) false;; esac
'

test_expect_success SLURM 'SIGTERM while a job'\''s prolog runs: its step, once started, does not run it' '
	touch "$TRASH/slow-prolog" && rm -f "$TRASH/prolog.started" "$TRASH/prolog.go" &&
	trap "rm -f \"$TRASH/slow-prolog\"; touch \"$TRASH/prolog.go\"" EXIT &&
	printf "%s\n" "a touch $PWD/a.ran" > jobs &&
	{ "$HOTSET" run -q -J --engine slurm --state "$PWD/st" jobs > r.json 2> err & } && pid=$! &&
	for i in $(seq 100); do [ -e "$TRASH/prolog.started" ] && break; sleep 0.1; done &&
	test -e "$TRASH/prolog.started" &&
	# the prolog ends once the queue has taken the stop (STATE/stop, for the step)
	kill -TERM $pid && for i in $(seq 100); do [ -e st/stop ] && break; sleep 0.1; done &&
	touch "$TRASH/prolog.go" && rc=0 && { wait $pid || rc=$?; } && rm -f "$TRASH/slow-prolog" &&
	cat r.json err st/logs/a.log && check_eq $rc 143 && test ! -e a.ran && test ! -e st/stop &&
	check_eq "$(json r.json "j[\"jobs\"][0][\"exit_status\"]")" 143 &&
	grep -q "stopped (Terminated) before it started: not run" st/logs/a.log
'

test_expect_success SLURM 'kill -9 of run, then --resume: it adopts what went on, each job completes once' '
	# a and b go on until told (go), in the cluster while the queue is gone
	printf "%s\n" "a sh -c \"echo a >> $PWD/count; sh $TRASH/wait-for $PWD/go\"" \
		"b sh -c \"echo b >> $PWD/count; sh $TRASH/wait-for $PWD/go\"" \
		"c sh -c \"echo c >> $PWD/count\"" > jobs &&
	{ "$HOTSET" run -q --engine slurm --state "$PWD/st" jobs > /dev/null 2>&1 & } && pid=$! &&
	for i in $(seq 300); do grep -q a count 2> /dev/null && break; sleep 0.1; done &&
	kill -9 $pid && { wait $pid || :; } &&
	grep -q "^job a running " st/queue &&
	expect_code 125 srun_q jobs 2> err && cat err && grep -q "go on with --resume" err &&
	touch go && srun_q -J --resume jobs > r.json && cat r.json count &&
	check_eq "$(sort count | tr -d "\n")" abc &&
	check_eq "$(json r.json "[x[\"exit_status\"] for x in j[\"jobs\"]]")" "[0, 0, 0]"
'

test_expect_success SLURM 'a queue killed as sbatch returned: --resume finds the job by its token' '
	printf "%s\n" "a sh -c \"echo a >> $PWD/count\"" > jobs &&
	srun_q jobs > /dev/null && : > count && rm st/jobs/a/result &&
	ns=$(date +%s%N) &&
	sed -i "s/^job a done .*/job a running 0 $ns 0 0/" st/queue && cat st/queue &&
	expect_code 125 srun_q jobs 2> err && grep -q "go on with --resume" err &&
	other=$(slurm_submit --job-name=a --output="$PWD/st/logs/a.log" --mem=8M \
		--comment=hotset-submit:$((ns - 1)) --wrap "sleep 1") &&
	id=$(slurm_submit --job-name=a --output="$PWD/st/logs/a.log" --mem=8M \
		--comment="hotset:/nonesuch hotset-submit:$ns" --wrap "echo a >> $PWD/count; sleep 1") &&
	srun_q -J --resume jobs > r.json && cat r.json &&
	check_eq "$(json r.json "j[\"jobs\"][0][\"slurm_job_id\"]")" "$id" &&
	check_eq "$(cat count)" a
'

test_expect_success SLURM '--resume of a job Slurm has forgotten: submitted again, no endless wait' '
	printf "%s\n" "a sh -c \"echo a >> $PWD/count\"" > jobs &&
	srun_q jobs > /dev/null && : > count && rm st/jobs/a/result &&
	sed -i "s/^job a done .*/job a running 0 0 0 999999/" st/queue &&
	timeout -s KILL 60 "$HOTSET" run -q -J --engine slurm --state "$PWD/st" --resume jobs > r.json &&
	check_eq "$(cat count)" a &&
	check_eq "$(json r.json "j[\"jobs\"][0][\"exit_status\"]")" 0
'

test_expect_success SLURM '--resume of a queue killed before sbatch: the job of the run before is not adopted' '
	printf "%s\n" "a sh -c \"echo a >> $PWD/count\"" > jobs &&
	srun_q jobs > /dev/null && : > count && rm st/jobs/a/result &&
	sed -i "s/^job a done .*/job a running 0 $(date +%s%N) 0 0/" st/queue &&
	srun_q -J --resume jobs > r.json &&
	check_eq "$(cat count)" a
'

test_expect_success SLURM,NOBODY 'as nobody: the queue submits as its user, the jobs run as it' '
	mkdir -m 1777 nob && printf "%s\n" "a id -un" "b sh -c \"exit 4\"" > nob/jobs &&
	expect_code 1 as_nobody "$HOTSET" run -q -J --engine slurm --state "$PWD/nob/st" \
		nob/jobs > nob.json && cat nob.json && check_report run nob.json &&
	check_eq "$(json nob.json "[x[\"exit_status\"] for x in j[\"jobs\"]]")" "[0, 4]" &&
	grep -qx nobody nob/st/logs/a.log && check_eq "$(stat -c %U nob/st/queue)" nobody &&
	id=$(json nob.json "j[\"jobs\"][0][\"slurm_job_id\"]") &&
	slurm_job_field $id UserId | grep -q "^nobody("
'

test_expect_success 'a pending reason with blanks is kept whole (squeue and scontrol faked)' '
	mkdir -p fake && printf "%s\n" "a true" > jobs &&
	cat > fake/sbatch <<-\EOF &&
	#!/bin/sh
	echo 4242
	EOF
	cat > fake/squeue <<-EOF &&
	#!/bin/sh
	n=\$(cat $PWD/fake/n 2>/dev/null || echo 0); echo \$((n + 1)) > $PWD/fake/n
	[ \$n -lt 2 ] && echo "4242 PENDING ReqNodeNotAvail, UnavailableNodes:n1" && exit 0
	echo "slurm_load_jobs error: Invalid job id specified"; exit 1
	EOF
	cat > fake/scontrol <<-\EOF &&
	#!/bin/sh
	echo "JobId=4242 JobName=a JobState=CANCELLED Reason=None ExitCode=0:0"
	EOF
	chmod 755 fake/sbatch fake/squeue fake/scontrol &&
	expect_code 1 env PATH="$PWD/fake:$PATH" "$HOTSET" run -q -J --engine slurm \
		--state "$PWD/fst" jobs > r.json && cat r.json &&
	check_eq "$(json r.json "j[\"jobs\"][0][\"state\"]")" not-run &&
	check_eq "$(json r.json "j[\"jobs\"][0][\"wait_reason\"]")" \
		"slurm:ReqNodeNotAvail, UnavailableNodes:n1"
'

test_expect_success SLURM 'sbatch refuses: each job not run, with why; exit 1' '
	printf "%s\n" "a touch $PWD/ran" > jobs &&
	expect_code 1 env SBATCH_PARTITION=nosuchpartition "$HOTSET" run -J --engine slurm \
		--state "$PWD/st" jobs > r.json 2> err && cat err &&
	grep -q "job .a.: sbatch failed: .*artition" err && test ! -e ran &&
	check_eq "$(json r.json "j[\"jobs\"][0][\"state\"]")" not-run &&
	check_eq "$(json r.json "j[\"jobs\"][0][\"wait_reason\"]")" slurm:sbatch-failed
'

test_done
