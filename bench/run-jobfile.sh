#!/usr/bin/env bash
# bench/run-jobfile.sh - what a large job file costs `hotset run` before
# any job starts: `run --dry-run` (read the job file, check its names, load
# each job's history, plan) of job files of RJ_SIZES jobs, with no history,
# then with one for every job (RJ_HIST_SIZES: a state directory of as many
# job directories, made once in $BENCH_DATA/run-jobfile), of I/O-bound
# jobs (few start at once: the plan is the file's cost) and of jobs that
# need a megabyte and no CPU (thousands start at once: each start is a
# pass of the scheduler over the queue).
#
# Prints, for each, the median wall and CPU time, the peak RSS, and time
# and memory per job. Goal (issue #23): linear, the time per job at the
# largest size within 2x of the smallest's, and at most 2 KiB a job (it
# was quadratic: 0.5 s for 10,000 jobs, 10 s for 50,000, 50 s and 858 MB
# for 100,000).
#
#   bench/run-jobfile.sh           (any user; REPEATS runs of each, default 5)
#   RJ_SIZES="10000 50000 100000 200000" RJ_HIST_SIZES="10000 50000"
set -euo pipefail
. "$(dirname "$0")/lib.sh"

RJ_SIZES=${RJ_SIZES:-10000 50000 100000 200000}
RJ_HIST_SIZES=${RJ_HIST_SIZES:-10000 50000}
need_hotset
[ -x /usr/bin/time ] || die "GNU time (/usr/bin/time) is needed for the peak RSS"
data=$BENCH_DATA/run-jobfile
mkdir -p "$data"

# jobfile N: job names in the reverse of their sort order (no sort is helped by the input)
jobfile() {
	[ -s "$data/jobs.$1" ] ||
		awk -v n="$1" 'BEGIN { for (i = 0; i < n; i++) printf "job%06d sleep 1\n", n - 1 - i }' \
			> "$data/jobs.$1"
}

# histories N KIND: a state directory with a history for each of N jobs, made once
histories() {
	local st=$data/st-$2-$1
	[ -f "$st/.complete" ] && return 0
	say "bench: making $st ($1 job histories)"
	rm -rf "$st"
	python3 - "$1" "$st" "$2" <<-\PY
	import os, sys
	n, st, kind = int(sys.argv[1]), sys.argv[2], sys.argv[3]
	if kind == "io":	# waits for the disk, needs 72 MiB, 0.13 CPU
	    rec = "wall_seconds 30\nuser_seconds 3\nsys_seconds 1\nio_wait_seconds 20\n" \
	          "read_bytes_disk %d\nwrite_bytes_disk 0\nmax_rss_bytes %d\n" % (64 << 20, 8 << 20)
	else:			# sleeps: 1 MiB, no CPU
	    rec = "wall_seconds 10\nuser_seconds 0\nsys_seconds 0\nio_wait_seconds 0\n" \
	          "read_bytes_disk 0\nwrite_bytes_disk 0\nmax_rss_bytes %d\n" % (1 << 20)
	for i in range(n):
	    d = "%s/jobs/job%06d" % (st, i)
	    os.makedirs(d)
	    with open(d + "/history", "w") as f:
	        f.write("runs 1\nexit_status 0\nsignal 0\nstart_ns 1\nend_ns 2\n" + rec +
	                "working_set_bytes -\nrerun_cache_bytes -\n")
	PY
	touch "$st/.complete"
}

# plan LABEL N STATE: REPEATS dry runs; the medians, the peak RSS, how many start at once
declare -A PER_JOB_US=() PER_JOB_KB=()
plan() {
	local label=$1 n=$2 st=$3 i rss=$BENCH_DIR/$1.rss starts
	: > "$rss"
	bench_run "$label" "$HOTSET" run -q --dry-run --state "$st" "$data/jobs.$n"
	for ((i = 0; i < REPEATS; i++)); do
		/usr/bin/time -f %M -a -o "$rss" "$HOTSET" run -q --dry-run --state "$st" \
			"$data/jobs.$n" > "$BENCH_DIR/plan"
	done
	starts=$(grep -c " starts$" "$BENCH_DIR/plan" || true)
	PER_JOB_US[$label]=$(awk -v s="${BENCH_SECONDS[$label]}" -v n="$n" 'BEGIN { printf "%.2f", s * 1e6 / n }')
	PER_JOB_KB[$label]=$(median < "$rss" | awk -v n="$n" '{ printf "%.2f", $1 / n }')
	BENCH_EXTRA[$label]="${BENCH_EXTRA[$label]}  $(median < "$rss") KB peak, ${PER_JOB_US[$label]} us and ${PER_JOB_KB[$label]} KB a job, $starts start at once"
}

first= last=
for n in $RJ_SIZES; do
	jobfile "$n"
	plan "$n jobs, no history" "$n" "$BENCH_DIR/none"
	first=${first:-"$n jobs, no history"} last="$n jobs, no history"
done
for kind in io sleep; do
	for n in $RJ_HIST_SIZES; do
		jobfile "$n"
		histories "$n" "$kind"
		plan "$n jobs, $kind histories" "$n" "$data/st-$kind-$n"
	done
done
print_table "run --dry-run of large job files"
echo
check_goal "time per job, $last / $first" "$(ratio "${PER_JOB_US[$last]}" "${PER_JOB_US[$first]}")" "<=" 2
check_goal "KB per job, $last" "${PER_JOB_KB[$last]}" "<=" 2
