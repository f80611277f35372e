#!/usr/bin/env bash
# bench/keep-lock.sh - hotset keep --mode lock beside vmtouch -l: the time
# to lock 1 GiB in 256 files and one file of LOCK_BIG_MIB (default 1536)
# MiB, both evicted first (read from the disk), until the process's VmLck
# holds all of it; the memory locked; then, as nobody with RLIMIT_MEMLOCK
# at 64 MiB (or the hard limit, if lower), what each does with the 1 GiB.
#   sudo bench/keep-lock.sh
. "$(dirname "$0")/lib.sh"
need_root
need_hotset
need_pkgs vmtouch

DATA=$BENCH_DATA/keep-lock
BIG=${LOCK_BIG_MIB:-1536}
mkdir -p "$DATA/set"
chmod 755 "$BENCH_DATA" "$DATA" "$DATA/set"
if [ "$(cat "$DATA/.complete" 2>/dev/null)" != "256x4M $BIG" ]; then
	say "bench: making 256 files of 4 MiB and one of $BIG MiB in $DATA"
	for i in $(seq 0 255); do head -c 4M /dev/urandom > "$DATA/set/f$i"; done
	head -c "${BIG}M" /dev/urandom > "$DATA/big"
	chmod 644 "$DATA/set"/* "$DATA/big"
	echo "256x4M $BIG" > "$DATA/.complete"
fi
cat "$DATA/set"/* > /dev/null && "$HOTSET" snapshot -q -o "$BENCH_DIR/set.prof" "$DATA/set" > /dev/null
cat "$DATA/big" > /dev/null && "$HOTSET" snapshot -q -o "$BENCH_DIR/big.prof" "$DATA/big" > /dev/null
chmod 644 "$BENCH_DIR"/*.prof && chmod 755 "$BENCH_DIR"

pid=
stop() { [ -z "$pid" ] || { kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; pid=; }; return 0; }
bench_on_exit stop
vmlck() { awk '$1 == "VmLck:" { print $2 * 1024 }' "/proc/$1/status" 2>/dev/null || echo 0; }
stamp() { date +%s.%N; }

# the bytes of a profile: what a keeper of it locks (the snapshot may have
# found a page or a file evicted already, by the machine's reclaimer)
prof_bytes() {
	"$HOTSET" status -q -J -p "$1" | python3 -c 'import json, sys
j = json.load(sys.stdin); print(j["pages"] * j.get("page_size", 4096))'
}

# locked TOOL WHAT: start TOOL on WHAT, wait until it has the bytes of
# WHAT's profile locked (at most 120 s); prints seconds and bytes locked
locked() {
	local tool=$1 what=$2 want t0 t1 have=0 i
	want=$(prof_bytes "$BENCH_DIR/$what.prof")
	if [ "$what" = set ]; then files=("$DATA/set"); else files=("$DATA/big"); fi
	"$HOTSET" evict -q "${files[@]}" > /dev/null
	t0=$(stamp)
	case $tool in
	keep) HOTSET_PSI_DIR=$BENCH_DIR/psi "$HOTSET" keep --mode lock --budget 4G -q \
		--state "$BENCH_DIR/k.state" "$BENCH_DIR/$what.prof" 2> "$BENCH_DIR/k.log" & ;;
	vmtouch) vmtouch -q -l "${files[@]}" & ;;
	esac
	pid=$!
	for ((i = 0; i < 1200; i++)); do
		have=$(vmlck "$pid")
		[ "${have:-0}" -ge "$want" ] && break
		sleep 0.1
	done
	t1=$(stamp)
	stop
	awk -v a="$t0" -v b="$t1" -v h="$have" -v w="$want" 'BEGIN {
		if (h >= w) printf "%.1f s, %.0f MiB\n", b - a, h / 1048576
		else printf "not in 120 s (%.0f MiB)\n", h / 1048576 }'
}

# a pressure of nothing: this shared machine's load must not pause the locking
mkdir -p "$BENCH_DIR/psi"
printf "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n" > "$BENCH_DIR/psi/memory"
cp "$BENCH_DIR/psi/memory" "$BENCH_DIR/psi/io"

# row LABEL WHAT: both tools on WHAT, side by side, and keep's time over vmtouch's
row() {
	local k v
	k=$(locked keep "$2")
	v=$(locked vmtouch "$2")
	printf '| %s | %s | %s | %s |\n' "$1" "$k" "$v" "$(ratio "${k%% s,*}" "${v%% s,*}")"
}
printf '| locking, cold | hotset keep --mode lock | vmtouch -l | x vmtouch |\n|---|---:|---:|---:|\n'
row "1 GiB, 256 files" set
row "one file of $BIG MiB" big

# as nobody, RLIMIT_MEMLOCK 64 MiB (or the hard limit, if lower: only lowered)
lim=$(ulimit -H -l)
[ "$lim" = unlimited ] || [ "$lim" -gt 65536 ] && lim=65536
as_nobody() { sh -c 'ulimit -l "$0" && exec setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"' "$lim" "$@"; }
mkdir -p "$BENCH_DIR/st" && chown nobody "$BENCH_DIR/st"
rc=0
as_nobody timeout 20 "$HOTSET" keep --mode lock --state "$BENCH_DIR/st/s.state" "$BENCH_DIR/set.prof" \
	> /dev/null 2> "$BENCH_DIR/n.keep" || rc=$?
printf '\nas nobody, RLIMIT_MEMLOCK %d KiB, 1 GiB:\n  hotset keep: exit %s: %s\n' "$lim" "$rc" "$(grep -v '^note' "$BENCH_DIR/n.keep" | head -n 1)"
rc=0
as_nobody timeout 20 vmtouch -q -l "$DATA/set" > /dev/null 2> "$BENCH_DIR/n.vmt" || rc=$?
printf '  vmtouch -l: exit %s: %s\n' "$rc" "$(head -n 1 "$BENCH_DIR/n.vmt")"
