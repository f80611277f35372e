#!/usr/bin/env bash
# bench/slurm-stagein.sh - Slurm's prolog staging a job's working set in
# (contrib/slurm/hotset-slurm), on a one-node cluster of its own
# (tests/lib-slurm.sh) whose disk is throttled to SI_IOPS and SI_BPS
# (150 IOPS and 20 MiB/s by default: a small VM's disk, or a busy shared
# filesystem), for the prolog and the job alike; SI_IOPS=0: the plain disk.
#
# The job reads a working set of SI_SMALL files of 256 KiB and one file of
# SI_LARGE MiB, one file after the other (cat), under `hotset time`. Side by
# side, SI_REPEATS times, from a cold cache each time (hotset evict):
#
#   cold     the job names no profile: it reads its files from the disk;
#   staged   the job names its profile (--comment=hotset:PROFILE): the
#            prolog warms it first, at the device's full speed (many reads
#            in flight), then the job starts;
#   vmtouch  what a site would write otherwise: a prolog that runs
#            `vmtouch -t` on the job's data directory (--comment=vmtouch:DIR).
#
# SI_EXTRA=MB puts that many MiB of other files (1 MiB each) in the data
# directory, which the job does not read: a dataset of which a job reads a
# part. vmtouch, told the directory, reads them too; the profile lists only
# what the job read.
#
# It prints, as medians: the job's wall time, its I/O wait and the bytes it
# read from the disk (its own `hotset time`), the prolog's warm time (from
# the job's output), and the time from sbatch to the job's end; and the
# ratios of staged to cold. As root.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
HOTSET=${HOTSET:-$ROOT/build/hotset}
SI_IOPS=${SI_IOPS:-150} SI_BPS=${SI_BPS:-$((20 << 20))}
SI_SMALL=${SI_SMALL:-128} SI_LARGE=${SI_LARGE:-48} SI_REPEATS=${SI_REPEATS:-3}
SI_EXTRA=${SI_EXTRA:-0}
say() { printf '%s\n' "$*" >&2; }

[ "$(id -u)" -eq 0 ] || { say "slurm-stagein: run as root (Slurm's daemons, a cgroup)"; exit 1; }
[ -x "$HOTSET" ] || { say "slurm-stagein: no $HOTSET (make)"; exit 1; }
. "$ROOT/scripts/slow-disk.sh"
. "$ROOT/tests/lib-slurm.sh"

W=$(mktemp -d /var/tmp/hotset-stagein.XXXXXX)
chmod 755 "$W"
cleanup() { slow_disk_remove; rm -rf "$W"; }
trap cleanup EXIT
# what puts the hooks and the job into the slow cgroup
join=
if [ "$SI_IOPS" -gt 0 ]; then
	slow_disk_make "$W" "$SI_IOPS" "$SI_BPS" ||
		{ say "slurm-stagein: cannot throttle the disk of $W"; exit 1; }
	join="echo \$\$ > $slow_disk_cg/cgroup.procs && "
fi

mkdir -m 755 "$W/data" "$W/out"
for i in $(seq "$SI_SMALL"); do head -c $((256 << 10)) /dev/urandom > "$W/data/s$i"; done
head -c $((SI_LARGE << 20)) /dev/urandom > "$W/data/large"
(cd "$W/data" && ls) > "$W/files"
for i in $(seq "$SI_EXTRA"); do head -c $((1 << 20)) /dev/urandom > "$W/data/x$i"; done
"$HOTSET" record -q -o "$W/job.profile" -- sh -c "cd $W/data && cat \$(cat $W/files) > /dev/null"
cp "$HOTSET" "$W/hotset"

# the hooks and the job run in the slow cgroup; the prolog's settings are the bench's own
cat > "$W/hooks.conf" <<EOF
HOTSET=$W/hotset
HOTSET_SLURM_RUNDIR=$W/run
HOTSET_SLURM_TIMEOUT=300
EOF
cat > "$W/hook" <<EOF
#!/bin/sh
$join:
case \${SLURM_JOB_COMMENT-} in
vmtouch:*)	# the other prolog: vmtouch -t of the directory, timed
	[ "\${SLURM_SCRIPT_CONTEXT-}" = prolog_slurmd ] || exit 0
	t0=\$(date +%s.%N)
	vmtouch -qt "\${SLURM_JOB_COMMENT#vmtouch:}"
	awk -v a="\$t0" -v b="\$(date +%s.%N)" 'BEGIN { print b - a }' > $W/out/vmtouch.\$SLURM_JOB_ID
	exit 0;;
esac
HOTSET_SLURM_CONF=$W/hooks.conf exec $ROOT/contrib/slurm/hotset-slurm "\$@"
EOF
chmod 755 "$W/hook"
command -v vmtouch > /dev/null || { say "slurm-stagein: no vmtouch (apt-get install vmtouch)"; exit 1; }
SLURM_PROLOG=$W/hook SLURM_TASK_PROLOG=$W/hook SLURM_EPILOG=$W/hook slurm_cluster_start ||
	{ say "slurm-stagein: no cluster: $SLURM_CLUSTER_WHY"; exit 1; }
trap 'slurm_cluster_stop; cleanup' EXIT

field() { python3 -c 'import json,sys; v=json.load(open(sys.argv[1]))[sys.argv[2]]; print(0 if v is None else v)' "$1" "$2"; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# one KIND N: a job from a cold cache; its figures appended to $W/KIND.tsv
one() {
	local kind=$1 n=$2 comment=() id t0 t1 warm=0
	case $kind in
	staged) comment=(--comment="hotset:$W/job.profile");;
	vmtouch) comment=(--comment="vmtouch:$W/data");;
	esac
	"$W/hotset" evict -q -p "$W/job.profile" > /dev/null
	"$W/hotset" evict -q "$W/data" > /dev/null
	t0=$(date +%s.%N)
	id=$(slurm_submit "${comment[@]}" --chdir="$W/data" -o "$W/out/$kind.$n" --mem=500M --wrap \
		"$join$W/hotset time -J -o $W/out/$kind.$n.json -- sh -c 'cat \$(cat $W/files) > /dev/null'")
	slurm_wait_job "$id" 600 > /dev/null || { say "job $id did not end"; exit 1; }
	t1=$(date +%s.%N)
	case $kind in
	staged) warm=$(sed -n 's/^hotset: warmed .* in \([0-9.]*\) s .*/\1/p' "$W/out/$kind.$n");;
	vmtouch) warm=$(cat "$W/out/vmtouch.$id");;
	esac
	printf '%s\t%s\t%s\t%s\t%s\n' \
		"$(field "$W/out/$kind.$n.json" wall_seconds)" \
		"$(field "$W/out/$kind.$n.json" io_wait_seconds)" \
		"$(field "$W/out/$kind.$n.json" disk_read_bytes)" \
		"${warm:-0}" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" >> "$W/$kind.tsv"
	say "$kind $n: $(tail -n 1 "$W/$kind.tsv" | tr '\t' ' ') (wall, io wait, disk bytes, prolog, sbatch to end)"
}

say "working set: $SI_SMALL files of 256 KiB and one of $SI_LARGE MiB, beside $SI_EXTRA MiB not read; disk: $([ "$SI_IOPS" -gt 0 ] &&
	echo "$SI_IOPS IOPS, $((SI_BPS >> 20)) MiB/s" || echo "not throttled")"
for n in $(seq "$SI_REPEATS"); do
	one cold "$n"
	one staged "$n"
	one vmtouch "$n"
done

say "" "the first staged job's output:"
grep "^hotset:" "$W/out/staged.1" >&2 || :
col() { cut -f"$2" "$W/$1.tsv" | median; }
printf '\n%-8s %10s %10s %12s %10s %12s\n' "" "JOB WALL" "IO WAIT" "DISK READ" "PROLOG" "SBATCH-END"
for k in cold staged vmtouch; do
	printf '%-8s %9.2fs %9.2fs %10.1fMiB %9.2fs %11.2fs\n' "$k" "$(col $k 1)" "$(col $k 2)" \
		"$(awk -v b="$(col $k 3)" 'BEGIN { print b / 1048576 }')" "$(col $k 4)" "$(col $k 5)"
done
ratio() { awk -v a="$(col "$1" "$3")" -v b="$(col "$2" "$3")" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
mib=$(( (SI_SMALL * 256 >> 10) + SI_LARGE ))
for k in staged vmtouch; do
	# what each prolog read: the working set, and vmtouch the rest of the directory too
	[ $k = staged ] || mib=$((mib + SI_EXTRA))
	printf '\n%s / cold: job wall %s, sbatch to end %s; the prolog read %d MiB at %.1f MiB/s' \
		"$k" "$(ratio $k cold 1)" "$(ratio $k cold 5)" "$mib" \
		"$(awk -v s="$(col $k 4)" -v m="$mib" 'BEGIN { print (s > 0 ? m / s : 0) }')"
done
printf '\nvmtouch / staged: prolog %s, sbatch to end %s\n' "$(ratio vmtouch staged 4)" \
	"$(ratio vmtouch staged 5)"
