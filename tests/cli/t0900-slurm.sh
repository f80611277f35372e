#!/usr/bin/env bash
# contrib/slurm/hotset-slurm on a one-node Slurm cluster of the test's own
# (tests/lib-slurm.sh): a read-heavy job that names its profile starts with
# its working set cached and reads next to nothing from the disk, where the
# same job without it reads it all; the prolog's time is in the job's
# output; a bad profile name, a deleted, malformed or unreadable profile,
# a profile of another user's unreadable file, a warm that overruns the
# timeout: the job still runs, promptly, and its output says why; the
# report once a job, not again for its srun steps; the task prolog warms
# $HOTSET_PROFILE; the epilog evicts or hands the profile to
# keep (never a FIFO, never a profile too large); a settings file with a
# shell error is left out and drains no node; sbatch takes curve
# --mem-request's --mem. As root.
. "$(dirname "$0")/../lib.sh"
. "$TESTS_DIR/lib-slurm.sh"

HOOKS=$TRASH/hooks OUT=$TRASH/out DATA=$TRASH/data
mkdir -m 755 "$HOOKS" "$DATA" && mkdir -m 1777 "$OUT"
# the hooks, as slurm.conf names them on a node: one script, its settings
# in the file HOTSET_SLURM_CONF names (the test's own, never /etc/default)
hooks_conf() {
	cat > "$HOOKS/conf" <<-EOF
	HOTSET=$HOTSET
	HOTSET_SLURM_RUNDIR=$TRASH/run
	HOTSET_SLURM_TIMEOUT=${1:-20}
	HOTSET_SLURM_AFTER=${2:-none}
	HOTSET_SLURM_KEEP_PROFILE=$TRASH/keep/slurm.profile
	HOTSET_SLURM_KEEP_UNIT=hotset-test-slurm-$$.service
	EOF
	[ -z "${3:-}" ] || echo "HOTSET=$3" >> "$HOOKS/conf"
}
hooks_conf
# a copy, which the task prolog can run as nobody however private the clone
cp "$REPO/contrib/slurm/hotset-slurm" "$HOOKS/hotset-slurm"
printf '#!/bin/sh\nHOTSET_SLURM_CONF=%s exec %s "$@"\n' "$HOOKS/conf" \
	"$HOOKS/hotset-slurm" > "$HOOKS/hook"
chmod 755 "$HOOKS/hook" "$HOOKS/hotset-slurm"

# the cluster's cases in the plain build's pass only: they wait on Slurm's daemons
if ! prereq_PLAIN; then
	echo "# no Slurm cluster in the sanitizers' pass"
elif prereq_ROOT && prereq_REALFS; then
	SLURM_PROLOG=$HOOKS/hook SLURM_EPILOG=$HOOKS/hook SLURM_TASK_PROLOG=$HOOKS/hook \
		slurm_cluster_start || echo "# no Slurm cluster: $SLURM_CLUSTER_WHY"
else
	echo "# no Slurm cluster: it needs root and a real filesystem for the page cache"
fi
prereq_SLURM() { [ -n "$SLURM_CLUSTER_DIR" ]; }

# job NAME [SBATCH-ARGS...] -- CMD: run CMD as a batch job and wait for it
# (60 s at most); its output in $OUT/NAME, its state in $OUT/NAME.state
job() {
	local name=$1 id; shift
	local args=()
	while [ "$1" != -- ]; do args+=("$1"); shift; done
	shift
	id=$(slurm_submit --chdir="$PWD" -o "$OUT/$name" -J "$name" --mem=200M "${args[@]}" \
		--wrap "$*") || return 1
	slurm_wait_job "$id" 60 > "$OUT/$name.state"
	local rc=$?
	echo "# job $name ($id): $(cat "$OUT/$name.state")" >&2
	sed -e 's/^/# | /' "$OUT/$name" >&2
	[ $rc -eq 0 ] && grep -qx COMPLETED "$OUT/$name.state"
}
disk_read() { json "$1" "j[\"disk_read_bytes\"]"; }
# retry_until SECS CMD...: CMD succeeds within SECS seconds
retry_until() {
	local end=$((SECONDS + $1)); shift
	until "$@"; do [ $SECONDS -lt $end ] || return 1; sleep 0.2; done
}
resident() { hotset status -J "$@" | python3 -c 'import json,sys; print(json.load(sys.stdin)["resident_pages"])'; }

# 4 files of 8 MiB: the working set of a job that reads them all
MB=8
for i in 1 2 3 4; do head -c $((MB << 20)) /dev/urandom > "$DATA/f$i"; done
chmod 644 "$DATA"/f*
read_all="$HOTSET time -J -o time.json -- cat $DATA/f1 $DATA/f2 $DATA/f3 $DATA/f4"

test_expect_success SLURM 'a job that names its profile starts with its working set cached' '
	hotset record -q -o job.profile -- cat "$DATA"/f1 "$DATA"/f2 "$DATA"/f3 "$DATA"/f4 > /dev/null &&
	# without the prolog (no profile named): the job reads it from the disk
	hotset evict -q -p job.profile &&
	job cold -- "$read_all > /dev/null" &&
	cold=$(disk_read time.json) && echo "# cold: $cold bytes read from the disk" &&
	test "$cold" -ge $((4 * MB * 9 / 10 << 20)) &&
	! grep -q "^hotset:" "$OUT/cold" &&
	# with it: the prolog warmed it, the job reads next to nothing
	hotset evict -q -p job.profile &&
	job warm --comment="hotset:job.profile" -- "$read_all > /dev/null" &&
	warm=$(disk_read time.json) && echo "# warm: $warm bytes read from the disk" &&
	test "$warm" -le $((4 * MB << 20 >> 5)) &&
	grep -Eq "^hotset: warmed $PWD/job.profile in [0-9]+\.[0-9]+ s \(the prolog, as root\):" "$OUT/warm" &&
	grep -q "^hotset:   Disk: " "$OUT/warm"
'

test_expect_success SLURM 'the comment may hold other words; the report goes once the job ended' '
	hotset record -q -o job.profile -- cat "$DATA"/f1 > /dev/null &&
	hotset evict -q -p job.profile &&
	job words --comment="nightly hotset:$PWD/job.profile run=3" -- "$read_all > /dev/null" &&
	grep -q "^hotset: warmed $PWD/job.profile in " "$OUT/words" &&
	check_eq "$(ls -A "$TRASH/run")" ""
'

test_expect_success SLURM 'the report is printed once, not again for a batch job'"'"'s own srun steps' '
	hotset record -q -o job.profile -- cat "$DATA"/f1 > /dev/null &&
	hotset evict -q -p job.profile &&
	job steps --comment=hotset:job.profile -- "srun true; srun true; echo ran" &&
	grep -qx ran "$OUT/steps" &&
	check_eq "$(grep -c "^hotset: warmed " "$OUT/steps")" 1 &&
	# an interactive job (srun alone): its first step has it
	hotset evict -q -p job.profile &&
	timeout 60 srun --chdir="$PWD" --mem=200M --comment=hotset:job.profile echo ran > srun.out &&
	cat srun.out && grep -qx ran srun.out &&
	check_eq "$(grep -c "^hotset: warmed " srun.out)" 1
'

# why JOB-NAME WORDS: the job ran, its output says WORDS after "hotset: "
why() { grep -q "^hotset: .*$2" "$OUT/$1" || { echo "no \"$2\" in $1" >&2; return 1; }; }

test_expect_success SLURM 'a bad name, a deleted or malformed profile: the job runs, its output says why' '
	job missing --comment=hotset:no-such.profile -- "echo ran" && grep -qx ran "$OUT/missing" &&
	why missing "nothing warmed from $PWD/no-such.profile" &&
	why missing "No such file or directory" &&
	hotset record -q -o gone.profile -- cat "$DATA"/f1 > /dev/null && rm gone.profile &&
	job deleted --comment=hotset:gone.profile -- "echo ran" && grep -qx ran "$OUT/deleted" &&
	why deleted "gone.profile: No such file or directory" &&
	echo "not a profile" > bad.profile &&
	job malformed --comment=hotset:bad.profile -- "echo ran" && grep -qx ran "$OUT/malformed" &&
	why malformed "bad.profile:1: not a hotset profile" &&
	job empty --comment="hotset:" -- "echo ran" && grep -qx ran "$OUT/empty" &&
	! grep -q "^hotset:" "$OUT/empty"
'

test_expect_success SLURM,NOBODY 'warmed as the job user: another user'"'"'s unreadable file stays cold' '
	head -c 1M /dev/urandom > secret && chmod 600 secret &&
	hotset record -q -o secret.profile -- cat secret "$DATA"/f2 > /dev/null && chmod 644 secret.profile &&
	# exact residency, checked after the job: again if the machine took pages meanwhile
	warmed_as_nobody() {
		hotset evict -q secret "$DATA"/f2 &&
		job other --uid=nobody --gid=nogroup --comment=hotset:secret.profile -- "cat secret; id -un" &&
		grep -qx nobody "$OUT/other" &&
		why other "warmed $PWD/secret.profile in [0-9.]* s (the prolog, as nobody), but not all of it" &&
		why other "secret: cannot open: Permission denied" &&
		check_eq "$(resident secret)" 0 &&
		check_eq "$(resident "$DATA"/f2)" $((MB * 256))
	} &&
	retry warmed_as_nobody &&
	# a profile the job user cannot read: nothing warmed, as root would have
	chmod 600 secret.profile && hotset evict -q secret "$DATA"/f2 &&
	job unreadable --uid=nobody --gid=nogroup --comment=hotset:secret.profile -- "id -un" &&
	grep -qx nobody "$OUT/unreadable" &&
	why unreadable "nothing warmed from $PWD/secret.profile (the prolog, as nobody" &&
	why unreadable "Permission denied" &&
	check_eq "$(resident secret "$DATA"/f2)" 0
'

test_expect_success SLURM 'a warm that overruns HOTSET_SLURM_TIMEOUT: stopped, and the job starts' '
	printf "#!/bin/sh\nsleep 60\n" > "$HOOKS/slow" && chmod 755 "$HOOKS/slow" &&
	hotset record -q -o job.profile -- cat "$DATA"/f1 > /dev/null &&
	hooks_conf 2 none "$HOOKS/slow" &&
	start=$SECONDS &&
	job slow --comment=hotset:job.profile -- "echo ran" &&
	hooks_conf &&
	echo "# the job ended $((SECONDS - start)) s after it was submitted" &&
	grep -qx ran "$OUT/slow" &&
	why slow "warming $PWD/job.profile stopped after [0-9.]* s (the prolog, as root; HOTSET_SLURM_TIMEOUT=2)"
'

test_expect_success SLURM 'HOTSET_PROFILE in the job'"'"'s environment: the task prolog warms it' '
	hotset record -q -o env.profile -- cat "$DATA"/f3 > /dev/null &&
	hotset evict -q -p env.profile &&
	HOTSET_PROFILE=env.profile job env --export=ALL -- "$HOTSET time -J -o time.json -- cat $DATA/f3 > /dev/null" &&
	why env "warmed $PWD/env.profile in [0-9.]* s (the task prolog, as root)" &&
	test "$(disk_read time.json)" -le $((MB << 20 >> 5))
'

test_expect_success SLURM 'the epilog: evict drops the profile, keep hands it to the keeper' '
	hotset record -q -o job.profile -- cat "$DATA"/f4 > /dev/null &&
	hooks_conf 20 evict &&
	job evicted --comment=hotset:job.profile -- "cat $DATA/f4 > /dev/null" &&
	why evicted "warmed" &&
	# the epilog runs as the job ends: give it a moment to finish
	retry_until 10 test "$(resident "$DATA"/f4)" -eq 0 &&
	hooks_conf 20 keep &&
	mkdir -p "$TRASH/keep" &&
	job kept --comment=hotset:job.profile -- "true" &&
	hooks_conf &&
	retry_until 10 cmp job.profile "$TRASH/keep/slurm.profile" &&
	check_eq "$(ls -A "$TRASH/keep")" slurm.profile
'

# hook CONTEXT VAR=VALUE...: the hook run by hand, as slurmd would, for a
# job 77 of nobody's whose comment names p.profile in this directory
hook() {
	local ctx=$1; shift
	env SLURM_SCRIPT_CONTEXT=$ctx SLURM_JOB_ID=77 SLURM_JOB_COMMENT=hotset:p.profile \
		SLURM_JOB_WORK_DIR="$PWD" SLURM_JOB_UID=$(id -u nobody) SLURM_JOB_GID=$(id -g nobody) \
		SLURM_JOB_USER=nobody "$@" "$HOOKS/hook"
}

# The prolog's warm of a profile whose files were replaced since (a file
# of a third user's renamed over one, a FIFO whose writer waits, a symlink
# to another file): none is opened, the report says each, the rest is
# warmed.
test_expect_success REALFS,NOBODY 'the prolog by hand: replaced files are never opened, the report says so' '
	mkdir -p d && for f in a b c kept; do head -c $((4 << 12)) /dev/urandom > d/$f || return 1; done &&
	hotset snapshot -q -o p.profile d && chmod 644 p.profile d/* && hotset evict -q d &&
	head -c $((4 << 12)) /dev/urandom > new && hotset evict -q new && chmod 644 new && chown 4242 new && mv new d/a &&
	rm d/b && mkfifo d/b && { sh -c "echo x > d/b" & } && writer=$! &&
	head -c $((4 << 12)) /dev/urandom > other && hotset evict -q other && rm d/c && ln -s "$PWD/other" d/c &&
	hook prolog_slurmd && r=$TRASH/run/job-77 && cat "$r" &&
	grep -q "^hotset: warmed $PWD/p.profile in [0-9.]* s (the prolog, as nobody), but not all of it:$" "$r" &&
	grep -q "d/a: replaced by another user.s file (uid 4242) since the profile was made, not opened" "$r" &&
	grep -q "d/b: replaced by a FIFO since the profile was made, not opened" "$r" &&
	grep -q "d/c: replaced by a symbolic link since the profile was made, not opened" "$r" &&
	kill -0 $writer && check_eq "$(resident d/a other)" 0 && test "$(resident d/kept)" -gt 0 &&
	cat d/b > /dev/null && wait $writer && rm -f "$r"
'

# The epilog hands the profile to keep as the job's user's: a root keeper
# then reads its files as that user (hotset-keep(1)).
test_expect_success NOBODY 'the epilog by hand: the profile handed to keep is the job user'"'"'s' '
	mkdir -p d && head -c 4096 /dev/urandom > d/f && hotset snapshot -q -o p.profile d/f &&
	chmod 644 p.profile && rm -rf "$TRASH/keep" && mkdir -p "$TRASH/keep" &&
	hooks_conf 20 keep && hook epilog_slurmd && hooks_conf &&
	cmp p.profile "$TRASH/keep/slurm.profile" &&
	check_eq "$(stat -c "%U %a" "$TRASH/keep/slurm.profile")" "nobody 644"
'

# the hooks have ended: none of them runs (an epilog may outlive its job's end)
hooks_done() { retry_until 20 sh -c "! pgrep -f '$HOOKS/[h]otset-slurm' > /dev/null"; }

test_expect_success SLURM 'the epilog keeps no FIFO, and no profile over HOTSET_SLURM_KEEP_MAX' '
	hotset record -q -o job.profile -- cat "$DATA"/f4 > /dev/null &&
	rm -rf "$TRASH/keep" && mkdir -p "$TRASH/keep" &&
	hooks_conf 20 keep && echo HOTSET_SLURM_KEEP_MAX=16 >> "$HOOKS/conf" &&
	job big --comment=hotset:job.profile -- "true" && hooks_done &&
	check_eq "$(ls -A "$TRASH/keep")" "" &&
	hooks_conf 20 keep && mkfifo fifo.profile && start=$SECONDS &&
	job fifo --comment=hotset:fifo.profile -- "true" && hooks_done &&
	hooks_conf && echo "# hooks done $((SECONDS - start)) s after the submission" &&
	test $((SECONDS - start)) -lt 15 && check_eq "$(ls -A "$TRASH/keep")" ""
'

# the default report directory, which the defaults below make: removed after, if new
run_had=$(test -d /run/hotset-slurm && echo yes || :)
test_expect_success SLURM 'a settings file with a shell error: left out (the defaults), the job runs, the node stays up' '
	printf "HOTSET_SLURM_TIMEOUT=5\nif then fi\n" > "$HOOKS/conf" &&
	job badconf --comment=hotset:job.profile -- "echo ran" &&
	hooks_done && hooks_conf &&
	grep -qx ran "$OUT/badconf" &&
	why badconf "@BINDIR@/hotset: no hotset binary" &&
	printf "HOTSET_SLURM_TIMEOUT=5\nif then fi\n" > "$TRASH/badconf" &&
	HOTSET_SLURM_CONF=$TRASH/badconf SLURM_SCRIPT_CONTEXT=epilog_slurmd \
		"$HOOKS/hotset-slurm" 2> err && cat err &&
	grep -q "hotset-slurm: $TRASH/badconf: not read, it fails as a shell fragment" err &&
	case $(sinfo -h -n "$SLURM_CLUSTER_NODE" -o %t) in idle|mix) ;; *) false;; esac
'
[ -n "$run_had" ] || rm -rf /run/hotset-slurm

test_expect_success SLURM 'sbatch --mem from curve --mem-request' '
	hotset record --trace -q -o t.profile -- cat "$DATA"/f1 "$DATA"/f1 > /dev/null &&
	mem=$(hotset curve --mem-request -q t.profile) && echo "# --mem=$mem" &&
	case $mem in [1-9]*M) ;; *) false;; esac &&
	test "${mem%M}" -ge "$MB" &&
	job sized --mem="$mem" --comment=hotset:t.profile -- "echo ran" &&
	grep -qx ran "$OUT/sized" &&
	scontrol -o show jobs | grep " JobName=sized " | grep -q " MinMemoryNode=$mem "
'

test_done
