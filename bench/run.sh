#!/usr/bin/env bash
# bench/run.sh - hotset run against the other ways to run a queue of
# disk-heavy jobs, on a small, slow machine made of cgroups (a memory limit
# of RB_MEM, 300 MiB by default, and reads from the data's disk throttled
# to RB_IOPS and RB_BPS, 150 IOPS and 20 MiB/s: a small VM's disk). Two job
# files:
#
#   index  two SQLite CREATE INDEX jobs, each over a table larger than the
#          box (RB_ROWS rows, about 400 MiB): they fit only one at a time;
#   mix    the same two, two CPU-bound jobs, and four jobs that each read
#          a 40 MiB set of files of their own three times (cache-friendly:
#          four of them fit in the box, beside a CPU-bound job).
#
# Each job file is run, from a cold cache (the data's pages evicted, the
# indexes dropped), in the box, by:
#
#   serial          one job after the other (sh);
#   xargs -P N      N at a time, N the CPUs;
#   parallel        GNU parallel -j N --memfree (half the box): it reads the
#                   machine's free memory, not the box's;
#   hotset run      -j auto, twice with one state directory: the first run
#                   has no history (it records every job), the second
#                   schedules by what the first recorded.
#
# It prints each one's makespan, the ratios, and a lower bound that no
# schedule can beat: the larger of the jobs' CPU time over the CPUs and the
# disk time the jobs cannot avoid (for each job, what it read run alone
# from a cold cache, in bytes at RB_BPS or in reads at RB_IOPS, whichever
# is slower). Goals (issue #14): hotset run never slower than the best of
# the others, 1.3x faster than the worst on the mix, within 1.25x of the
# bound. And from hotset run's --json, which jobs overlapped: the two
# index builds (which together exceed the box) must not.
#
#   sudo bench/run.sh [index] [mix]         (root: cgroups, throttles)
#   RB_ROWS=3000000 RB_MEM=300M RB_IOPS=150 RB_BPS=20M
#   RB_STRATEGIES="serial xargs parallel hotset"
#
# Data is kept in $BENCH_DATA/run; the job files, logs and hotset run's
# reports of the last run in $BENCH_DATA/run/results. Every cgroup is
# removed at exit.
. "$(dirname "$0")/lib.sh"

need_root
need_hotset
need_pkgs sqlite3 parallel

to_bytes() { numfmt --from=iec "$1"; }
ROWS=${RB_ROWS:-3000000}
MEM=$(to_bytes "${RB_MEM:-300M}")
IOPS=${RB_IOPS:-150}
BPS=$(to_bytes "${RB_BPS:-20M}")
read -ra STRATEGIES <<< "${RB_STRATEGIES:-serial xargs parallel hotset}"
CPUS=$(nproc)
DATA=$BENCH_DATA/run
RES=$DATA/results
mkdir -p "$DATA/tmp" "$RES"
DISK=$(disk_of "$DATA")
scenarios=("$@")
[ ${#scenarios[@]} -gt 0 ] || scenarios=(index mix)

# ---- data ------------------------------------------------------------------------

make_db() {	# make_db NAME: a table of ROWS rows in $DATA/NAME.db
	local db=$DATA/$1.db
	[ -f "$db.done" ] && [ "$(cat "$db.done")" = "$ROWS" ] && return 0
	say "bench: creating $db ($ROWS rows)"
	rm -f "$db"
	sqlite3 "$db" > /dev/null <<-EOF
	PRAGMA journal_mode = OFF;
	CREATE TABLE events(id INTEGER PRIMARY KEY, user_id INTEGER, ts INTEGER, payload TEXT);
	WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < $ROWS)
	INSERT INTO events SELECT i, abs(random()) % 100000, abs(random()) % 1000000000, hex(randomblob(48)) FROM c;
	EOF
	echo "$ROWS" > "$db.done"
}

make_reads() {	# make_reads NAME: 40 MiB in 160 files of 256 KiB
	local dir=$DATA/$1 i
	[ -f "$dir/.done" ] && return 0
	mkdir -p "$dir"
	for i in $(seq 1 160); do head -c 256K /dev/urandom > "$dir/f$i"; done
	touch "$dir/.done"
}

make_db db1
make_db db2
for r in r1 r2 r3 r4; do make_reads "$r"; done
sync

# The CPU-bound job: about RB_CPU_S seconds of arithmetic (calibrated once).
CPU_ITER=${RB_CPU_ITER:-}
if [ -z "$CPU_ITER" ]; then
	t=$(bench_once awk 'BEGIN { for (i = 0; i < 2e6; i++) s += sqrt(i) }')
	CPU_ITER=$(awk -v t="$t" -v want="${RB_CPU_S:-20}" 'BEGIN { printf "%.0f", 2e6 * want / t }')
fi

index_job() {	# the command line of an index build over DB
	echo "SQLITE_TMPDIR=$DATA/tmp sqlite3 -bail $DATA/$1.db 'PRAGMA cache_size=-32768; CREATE INDEX ev_user_ts ON events(user_id, ts);'"
}

write_jobfile() {	# write_jobfile SCENARIO FILE
	{
		echo "# bench/run.sh: $1"
		echo "index1 $(index_job db1)"
		echo "index2 $(index_job db2)"
		if [ "$1" = mix ]; then
			echo "cpu1 awk 'BEGIN { for (i = 0; i < $CPU_ITER; i++) s += sqrt(i) }'"
			echo "cpu2 awk 'BEGIN { for (i = 0; i < $CPU_ITER; i++) s += sqrt(i) }'"
			for r in r1 r2 r3 r4; do
				echo "read-$r for pass in 1 2 3; do cat $DATA/$r/* | cksum; done"
			done
		fi
	} > "$2"
}

# Back to the start: indexes dropped, the data's pages evicted.
reset_data() {
	local d
	for d in db1 db2; do
		sqlite3 -bail "$DATA/$d.db" "DROP INDEX IF EXISTS ev_user_ts;"
	done
	rm -f "$DATA/tmp/"*
	sync
	"$HOTSET" evict -q "$DATA" > /dev/null
}

# ---- the box ------------------------------------------------------------------------

box_new run "$MEM" "$DISK" "$IOPS" "$BPS"

# in_box LABEL CMD...: run CMD in the box, from a cold cache; the makespan
# goes to $BENCH_DIR/LABEL.wall, the disk's reads to LABEL.reads/bytes
in_box() {
	local label=$1 r0 b0 s; shift
	reset_data
	r0=$(cg_reads run); b0=$(cg_read_bytes run)
	s=$(bench_once sh -c "$CG_ENTER" sh "${MEM_PATH[run]}" sh -c "$CG_ENTER" sh "${CG_PATH[run]}" "$@") ||
		s=failed
	printf '%.2f\n' "$s" > "$BENCH_DIR/$label.wall" 2>/dev/null || echo failed > "$BENCH_DIR/$label.wall"
	echo $(($(cg_reads run) - r0)) > "$BENCH_DIR/$label.reads"
	echo $(($(cg_read_bytes run) - b0)) > "$BENCH_DIR/$label.bytes"
	say "  $label: $s s, $(( $(cat "$BENCH_DIR/$label.bytes") >> 20 )) MiB in $(cat "$BENCH_DIR/$label.reads") reads"
}

run_serial() {	# jobs one after the other, each timed and counted (the bound's terms)
	local name cmd r0 b0 s t0
	reset_data
	: > "$BENCH_DIR/$1.jobs"
	now_s; t0=$NOW
	while read -r name cmd; do
		case $name in ''|'#'*) continue ;; esac
		r0=$(cg_reads run); b0=$(cg_read_bytes run)
		s=$(bench_once "${BOX_PREFIX[@]}" /usr/bin/time -f '%U %S' -o "$BENCH_DIR/cpu" \
			sh -c "$cmd") || die "$name failed"
		echo "$name $s $(awk '{ print $1 + $2 }' "$BENCH_DIR/cpu") $(($(cg_reads run) - r0))" \
			"$(($(cg_read_bytes run) - b0))" >> "$BENCH_DIR/$1.jobs"
	done < "$JOBFILE"
	now_s
	sed "s/^/    /" "$BENCH_DIR/$1.jobs" >&2
	awk -v a="$t0" -v b="$NOW" 'BEGIN { printf "%.2f\n", b - a }' > "$BENCH_DIR/$1.wall"
	awk '{ n += $4 } END { print n }' "$BENCH_DIR/$1.jobs" > "$BENCH_DIR/$1.reads"
	awk '{ n += $5 } END { print n }' "$BENCH_DIR/$1.jobs" > "$BENCH_DIR/$1.bytes"
	say "  $1: $(cat "$BENCH_DIR/$1.wall") s"
}

# "${TO_FILE[@]}" FILE CMD...: CMD with its standard output in FILE (bench_once drops it)
TO_FILE=(sh -c 'out=$1; shift; exec "$@" > "$out"' sh)

commands() { grep -v '^[[:space:]]*\(#\|$\)' "$JOBFILE" | sed 's/^[^[:space:]]*[[:space:]]*//'; }

run_strategy() {	# run_strategy SCENARIO STRATEGY
	local sc=$1 st=$2 state=$DATA/state-$1
	case $st in
	serial) run_serial "$sc.serial" ;;
	xargs)
		commands > "$BENCH_DIR/cmds"
		in_box "$sc.xargs" xargs -d '\n' -P "$CPUS" -I{} sh -c {} < "$BENCH_DIR/cmds" ;;
	parallel)
		commands > "$BENCH_DIR/cmds"
		in_box "$sc.parallel" parallel --will-cite -j "$CPUS" --memfree $((MEM / 2 >> 20))M \
			< "$BENCH_DIR/cmds" ;;
	hotset)
		rm -rf "$state"
		in_box "$sc.hotset-first" "${TO_FILE[@]}" "$RES/$sc.first.json" \
			"$HOTSET" run -j auto --state "$state" --json "$JOBFILE"
		in_box "$sc.hotset" "${TO_FILE[@]}" "$RES/$sc.second.json" \
			"$HOTSET" run -j auto --state "$state" --json "$JOBFILE" ;;
	*) die "unknown strategy $st" ;;
	esac
}

# bound SCENARIO: max(CPU time / CPUs, unavoidable disk time), from the serial run
bound() {
	awk -v cpus="$CPUS" -v bps="$BPS" -v iops="$IOPS" '
		{ cpu += $3; b = $5 / bps; r = $4 / iops; disk += (b > r ? b : r) }
		END { c = cpu / cpus; printf "%.2f %.2f %.2f\n", (c > disk ? c : disk), c, disk }' \
		"$BENCH_DIR/$1.serial.jobs"
}

# overlaps FILE: pairs of jobs whose [start, end) overlapped, from run --json
overlaps() {
	python3 - "$1" <<-\PY
	import json, sys
	jobs = json.load(open(sys.argv[1]))["jobs"]
	pairs = [f"{a['name']}+{b['name']}" for i, a in enumerate(jobs) for b in jobs[i + 1:]
		 if a["start_ns"] < b["end_ns"] and b["start_ns"] < a["end_ns"]]
	print(" ".join(pairs) or "none")
	PY
}

for sc in "${scenarios[@]}"; do
	case $sc in index|mix) ;; *) die "unknown scenario $sc (index, mix)" ;; esac
	JOBFILE=$RES/$sc.jobs
	write_jobfile "$sc" "$JOBFILE"
	box_prefix run
	say "bench: $sc: $(commands | wc -l) jobs in a $((MEM >> 20)) MiB box, reads at $IOPS IOPS and $((BPS >> 20)) MiB/s"
	for st in serial "${STRATEGIES[@]}"; do
		[ "$st" = serial ] && [ -f "$BENCH_DIR/$sc.serial.wall" ] && continue
		run_strategy "$sc" "$st"
	done
done

# ---- report ------------------------------------------------------------------------

wall() { cat "$BENCH_DIR/$1.wall" 2>/dev/null || echo -; }
for sc in "${scenarios[@]}"; do
	read -r lb lb_cpu lb_disk <<< "$(bound "$sc")"
	printf '\n== %s: makespan, %s MiB box, %s IOPS, %s MiB/s, %s CPUs\n' "$sc" \
		$((MEM >> 20)) "$IOPS" $((BPS >> 20)) "$CPUS"
	printf '%-26s %10s %8s %10s\n' "strategy" "seconds" "/bound" "MiB read"
	labels=(serial xargs parallel hotset-first hotset)
	best= worst=
	for l in "${labels[@]}"; do
		w=$(wall "$sc.$l")
		[ "$w" = - ] && continue
		printf '%-26s %10s %8s %10s\n' "$l" "$w" "$(ratio "$w" "$lb")" \
			"$(( $(cat "$BENCH_DIR/$sc.$l.bytes" 2>/dev/null || echo 0) >> 20 ))"
		case $l in hotset*) continue ;; esac
		[ "$w" = failed ] && continue
		[ -z "$best" ] || awk -v a="$w" -v b="$best" 'BEGIN { exit !(a < b) }' && best=$w
		[ -z "$worst" ] || awk -v a="$w" -v b="$worst" 'BEGIN { exit !(a > b) }' && worst=$w
	done
	printf '%-26s %10s   (CPU %s s / %s CPUs, disk %s s)\n' "lower bound" "$lb" "$lb_cpu" \
		"$CPUS" "$lb_disk"
	h=$(wall "$sc.hotset")
	if [ "$h" != - ] && [ "$h" != failed ]; then
		check_goal "$sc: best other / hotset run (>= 1: never slower)" "$(ratio "$best" "$h")" ">=" 1
		[ "$sc" = mix ] &&
			check_goal "$sc: worst other / hotset run" "$(ratio "$worst" "$h")" ">=" 1.3
		check_goal "$sc: hotset run / lower bound" "$(ratio "$h" "$lb")" "<=" 1.25
		printf '  overlapping jobs (hotset run, second): %s\n' "$(overlaps "$RES/$sc.second.json")"
	fi
done
