#!/usr/bin/env bash
# bench/db.sh - a database server in a small, slow box, and what hotset says
# today about the jobs run against it through the server's client.
#
# MariaDB (tests/lib-db.sh) runs in a box of DBB_MEM bytes of memory (1 GiB
# by default) whose reads of the data's disk are throttled to DBB_IOPS and
# DBB_BPS (1000 IOPS, 40 MiB/s: InnoDB reads a 16 KiB page an I/O with
# O_DIRECT, which 150 IOPS would slow to 2.4 MB/s). Its table reports,
# DBB_ROWS rows (3.5 million by default: about 1.7 GB, larger than the
# box), is loaded once into $BENCH_DATA/db and kept between runs. The jobs,
# SQL files run through the mariadb client outside the box, as a user
# runs them:
#
#   full    a full scan into a new table (monthly counts by OS and state)
#   half1   three passes over the first half of the table (by id)
#   half2   three passes over the second half
#
# each from cold (the server restarted with an empty buffer pool, its files
# evicted), in two modes: fsync (InnoDB reads through the page cache, which
# the box's limit bounds) and O_DIRECT (the page cache bypassed), with a
# buffer pool of DBB_POOL (128 MiB, MariaDB's default) in both. DBB_MODES
# may also name fsync-noaio and O_DIRECT-noaio: InnoDB's reads issued by
# its own threads with pread(), not through io_uring.
#
# Each job runs once under `hotset record -J --trace` (whose summary is
# what `hotset time` reports: wall, I/O wait, bytes read from the disk, of
# the job's processes), then `hotset doctor -J -p` diagnoses its profile;
# with DBB_TIME=1 a second cold run under `hotset time -J --cgroup` (the
# server's box: its cgroup v2 one where the box has one, for its I/O
# pressure), whose "service" figures are the server's, printed beside the
# box's and the server's own counters with their ratio. Beside
# them, the server's side of the same run: the bytes and I/Os its box read
# from the disk (blkio throttle counters, or io.stat), its box's I/O
# stall (io.pressure of its cgroup v2, "some" and "full"), the server's
# own read_bytes (/proc/PID/io) and the box's peak memory. Today hotset
# follows the client, which reads nothing and waits on a socket: the gap
# between the two sides is what attaching to the service is for.
#
#   sudo bench/db.sh              (root: cgroups, throttles, evicting)
#   DBB_ROWS=2000000 DBB_MEM=$((768 << 20)) DBB_MODES=O_DIRECT DBB_JOBS="full half1"
#
# The profiles and reports of the last run are kept in $BENCH_DATA/db/results.
. "$(dirname "$0")/lib.sh"

need_root
need_hotset
need_pkgs mariadb-server python3
ROWS=${DBB_ROWS:-3500000}
MEM=${DBB_MEM:-$((1 << 30))}
POOL=${DBB_POOL:-128M}
IOPS=${DBB_IOPS:-1000}
BPS=${DBB_BPS:-$((40 << 20))}
MODES=${DBB_MODES:-fsync O_DIRECT}
JOBS=${DBB_JOBS:-full half1 half2}
DATA=$BENCH_DATA/db
RES=$DATA/results
DATADIR=$DATA/mariadb
mkdir -p "$RES" && chmod 755 "$BENCH_DATA" "$DATA"
DISK=$(disk_of "$DATA")
DB_ROOT=$DATA
. "$BENCH_ROOT/tests/lib-db.sh"
db_check mariadb || die "$DB_WHY"
ROWS_FILE=$BENCH_DIR/rows

# ---- the table, loaded once -------------------------------------------------------

load_table() {
	[ "$(cat "$DATA/mariadb.rows" 2> /dev/null)" = "$ROWS" ] && return 0
	say "bench: loading $ROWS rows into $DATADIR (once; kept for later runs)"
	rm -rf "$DATADIR" "$DATA/mariadb.rows"
	# at the disk's own speed, with a larger pool for the bulk load
	db_start mariadb --name load --datadir "$DATADIR" --pool 512M --mem 0 --flush fsync ||
		die "$DB_WHY"
	db_load load "$ROWS" || die "the load failed"
	db_stop load
	echo "$ROWS" > "$DATA/mariadb.rows"
}

# ---- the jobs ---------------------------------------------------------------------

write_jobs() {
	local h=$((ROWS / 2)) a b
	cat > "$DATA/full.sql" <<-EOF
	DROP TABLE IF EXISTS monthly;
	CREATE TABLE monthly AS SELECT postdate, osname, state, COUNT(*) AS reports,
		SUM(LENGTH(summary)) AS summary_bytes FROM reports GROUP BY postdate, osname, state;
	SELECT COUNT(*), SUM(reports) FROM monthly;
	EOF
	for j in half1 half2; do
		if [ $j = half1 ]; then a=1 b=$h; else a=$((h + 1)) b=$ROWS; fi
		cat > "$DATA/$j.sql" <<-EOF
		SELECT state, COUNT(*) FROM reports WHERE id BETWEEN $a AND $b GROUP BY state;
		SELECT osname, COUNT(*), AVG(LENGTH(summary)) FROM reports WHERE id BETWEEN $a AND $b GROUP BY osname;
		SELECT COUNT(DISTINCT tester) FROM reports WHERE id BETWEEN $a AND $b;
		EOF
	done
}

# ---- the box and its counters -----------------------------------------------------

# the server's place: --cgroup for each of the box's cgroups (one with cgroup
# v2 alone; a memory, a blkio and a v2 one for PSI with v1)
BOX_ARGS=()
make_box() {
	local d seen=' '
	box_new db "$MEM" "$DISK" "$IOPS" "$BPS"
	for d in "${MEM_PATH[db]}" "${CG_PATH[db]}" "${BOX_PSI[db]:-}"; do
		[ -n "$d" ] && [[ $seen != *" $d "* ]] || continue
		BOX_ARGS+=(--cgroup "$d") seen+="$d "
	done
}

# psi_total KIND: the box's io.pressure total of "some" or "full", microseconds ("-": none)
psi_total() {
	local f=${BOX_PSI[db]:-}/io.pressure
	[ -n "${BOX_PSI[db]:-}" ] && [ -r "$f" ] || { echo -; return 0; }
	awk -v k="$1" '$1 == k { for (i = 2; i <= NF; i++) if ($i ~ /^total=/) print substr($i, 7) }' "$f"
}
server_read_bytes() { awk '$1 == "read_bytes:" { print $2 }' "/proc/$(db_pid db)/io" 2> /dev/null || echo 0; }

# counters: the server side now, as words: box bytes, box I/Os, PSI some,
# PSI full (us), the server's read_bytes
counters() {
	echo "$(cg_read_bytes db) $(cg_reads db) $(psi_total some) $(psi_total full) $(server_read_bytes)"
}

# cold MODE: the server restarted in the box, empty pool, its files evicted;
# MODE fsync or O_DIRECT, and -noaio: InnoDB's reads by its own threads
# (pread), not io_uring
cold() {
	local aio=()
	[[ $1 != *-noaio ]] || aio=(--opt --innodb-use-native-aio=0)
	db_stop db
	"$HOTSET" evict -q "$DATADIR" > /dev/null || die "cannot evict $DATADIR"
	db_start mariadb --name db --datadir "$DATADIR" --pool "$POOL" --flush "${1%-noaio}" \
		"${BOX_ARGS[@]}" "${aio[@]}" || die "$DB_WHY"
	# the peak of this run alone (cgroup v1 resets it; v2 before 6.12 cannot)
	echo 0 > "${MEM_PATH[db]}/memory.max_usage_in_bytes" 2> /dev/null || :
}

# one_job MODE JOB TOOL: one cold run of JOB under TOOL (record or time);
# a row into $ROWS_FILE
one_job() {
	local mode=$1 job=$2 tool=$3 c0 c1 out=$RES/$1.$2.$3 rc=0
	cold "$mode"
	db_client db
	c0=$(counters)
	if [ "$tool" = record ]; then
		"$HOTSET" record -J --trace -o "$out.prof" -- "${DB_CLIENT[@]}" < "$DATA/$job.sql" \
			> "$out.out" 2> "$out.json" || rc=$?
	else
		"$HOTSET" time -J -o "$out.json" --cgroup "${BOX_PSI[db]:-${MEM_PATH[db]}}" \
			-- "${DB_CLIENT[@]}" < "$DATA/$job.sql" > "$out.out" 2> "$out.err" || rc=$?
	fi
	c1=$(counters)
	[ $rc = 0 ] || { cat "$out.out" "$out.json" >&2; die "$mode $job: the client failed ($rc)"; }
	if [ "$tool" = record ]; then
		"$HOTSET" doctor -J -p "$out.prof" > "$out.doctor.json" || die "$mode $job: doctor failed"
	fi
	python3 - "$mode" "$job" "$tool" "$out" "$c0" "$c1" "$(mem_peak db)" >> "$ROWS_FILE" <<-\PY
	import json, sys
	mode, job, tool, out, c0, c1, peak = sys.argv[1:]
	j = json.load(open(out + ".json"))
	d = json.load(open(out + ".doctor.json")) if tool == "record" else {}
	def delta(i):
	    a, b = c0.split()[i], c1.split()[i]
	    return None if "-" in (a, b) else int(b) - int(a)
	mib = lambda b: "-" if b is None else "%.0f" % (b / 1048576)
	sec = lambda v: "-" if v is None else "%.1f" % v
	us = lambda v: "-" if v is None else "%.1f" % (v / 1e6)
	rec = "-" if tool != "record" else "%d files, %s MiB" % (j["files"], mib(j["bytes"]))
	cause = "-" if tool != "record" else "%s; %s" % (d["cause"] or "none",
	    ",".join(f["id"] for f in d["findings"] if f["problem"]) or "none")
	s = j.get("service") or {}
	svc = s.get("disk_read_bytes")
	ratio = lambda a, b: "-" if a is None or not b else "%.3f" % (a / b)
	print("\t".join([mode, job, tool, sec(j["wall_seconds"]), sec(j["io_wait_seconds"]),
	    mib(j["disk_read_bytes"]), rec, cause, mib(delta(0)), str(delta(1)), us(delta(2)),
	    us(delta(3)), mib(delta(4)), mib(int(peak)), mib(svc), sec(s.get("io_wait_seconds")),
	    ratio(svc, delta(0)), ratio(svc, delta(4))]))
	PY
	say "  $mode $job ($tool): $(tail -n 1 "$ROWS_FILE" | cut -f4- | tr '\t' ' ')"
}

load_table
write_jobs
make_box
say "bench: $ROWS rows, $(du -sh "$DATADIR/hs" | cut -f1) of table; box: $((MEM >> 20)) MiB," \
	"disk $DISK at $IOPS IOPS, $((BPS >> 20)) MiB/s; buffer pool $POOL"
TOOLS=record
[ "${DBB_TIME:-0}" = 1 ] && TOOLS="record time"
for mode in $MODES; do
	for job in $JOBS; do
		for tool in $TOOLS; do one_job "$mode" "$job" "$tool"; done
	done
done
db_stop db

printf '\n== MariaDB in a %s MiB box (%s IOPS, %s MiB/s), %s rows (%s), buffer pool %s; each job from cold\n' \
	$((MEM >> 20)) "$IOPS" $((BPS >> 20)) "$ROWS" "$(du -sh "$DATADIR/hs" | cut -f1)" "$POOL"
printf '| mode | job | run under | wall s | I/O wait s | disk read MiB | recorded | doctor: cause; problems | box read MiB | box I/Os | box I/O stall some s | full s | server read_bytes MiB | box peak MiB | time --cgroup: service read MiB | service I/O wait s | service / box read | service / server read_bytes |\n'
printf '|---|---|---|---:|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n'
awk -F'\t' '{ s = "|"; for (i = 1; i <= NF; i++) s = s " " $i " |"; print s }' "$ROWS_FILE"
printf '\nhotset'"'"'s columns (wall to doctor) are the client'"'"'s, as hotset record and doctor see them today;\n'
printf 'the box'"'"'s and the server'"'"'s are the same run seen from the server'"'"'s cgroups and /proc/PID/io;\n'
printf 'the service columns (runs under time, DBB_TIME=1) are hotset time --cgroup'"'"'s figures of the server, and their ratio to those.\n'
