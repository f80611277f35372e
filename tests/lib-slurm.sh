# tests/lib-slurm.sh - a one-node Slurm cluster of a test's own, as root.
#
# Source it (after tests/lib.sh, or alone: it needs only bash, Slurm's
# daemons and munge), then, in the script itself (not in a test body,
# whose subshell would take the cluster with it when it ends):
#
#   SLURM_PROLOG=/path/prolog SLURM_EPILOG=... SLURM_TASK_PROLOG=... \
#   slurm_cluster_start || skip the tests that need it: $SLURM_CLUSTER_WHY
#
# slurm_cluster_start makes a directory of its own (SLURM_CLUSTER_DIR) with
# a slurm.conf (SLURM_CONF, exported: sbatch, squeue and scontrol then talk
# to this cluster only), a munge key and munged on a socket of its own,
# slurmctld and slurmd on TCP ports free when it starts, and one node
# (SLURM_CLUSTER_NODE, NodeHostname=localhost, slurmd -N) in one partition
# (SLURM_CLUSTER_PARTITION), and returns when the node takes jobs. A site's
# own Slurm and munge (/etc/slurm, /etc/munge, /run/munge) are never read
# nor touched, and two clusters on one machine do not share anything.
# Without root, or when a daemon does not come up within
# SLURM_CLUSTER_TIMEOUT seconds (default 20), it returns 1 with the reason
# in SLURM_CLUSTER_WHY, having printed the daemons' logs (as "# " lines)
# and stopped what it started.
#
# Settings, read by slurm_cluster_start:
#   SLURM_PROLOG, SLURM_EPILOG, SLURM_TASK_PROLOG   slurm.conf's Prolog=, Epilog=, TaskProlog=
#   SLURM_PROLOG_FLAGS   PrologFlags= (e.g. Alloc)
#   SLURM_REAL_MEMORY    the node's RealMemory in MiB (default 4096)
#   SLURM_CPUS           the node's CPUs (default: nproc)
#   SLURM_EXTRA_CONF     more slurm.conf lines, appended as they are
#
# It stops everything at exit: slurm_cluster_start adds slurm_cluster_stop
# to the shell's EXIT trap (before the trap the caller had, which still
# runs), and makes SIGINT, SIGTERM and SIGHUP exit. slurm_cluster_stop
# cancels the cluster's jobs, kills the daemons it started (by their pids,
# and the job steps' slurmstepd processes started by its slurmd, found by
# the cluster's directory in their command line or environment), and
# removes the directory. It may be called early; a second call does nothing.
#
# Also:
#   slurm_submit ARGS...        sbatch --parsable ARGS; prints the job id
#   slurm_job_state JOBID       PENDING, RUNNING, COMPLETED, FAILED... (scontrol)
#   slurm_job_field JOBID KEY   one KEY=VALUE field of scontrol show job (e.g. ExitCode)
#   slurm_wait_job JOBID [SECS] wait until the job ended (default 60 s); prints
#                               its state; 1 if it did not end in time
#   slurm_cluster_logs          the daemons' logs, as "# " lines

SLURM_CLUSTER_DIR='' SLURM_CLUSTER_WHY='' SLURM_CLUSTER_NODE='' SLURM_CLUSTER_PARTITION=''
_slurm_pids=() _slurm_names=(munged slurmctld slurmd)

# a TCP port nothing listens on now (the kernel's choice for port 0)
_slurm_free_port() {
	/usr/bin/python3 -c 'import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

slurm_cluster_logs() {
	local f
	[ -n "$SLURM_CLUSTER_DIR" ] || return 0
	for f in "$SLURM_CLUSTER_DIR"/log/*; do
		[ -s "$f" ] || continue
		echo "# --- ${f##*/}"
		tail -n 30 "$f" | sed -e 's/^/# /'
	done
}

# _slurm_fail REASON: say why, print the logs, stop what started; return 1
_slurm_fail() {
	SLURM_CLUSTER_WHY=$1
	echo "# slurm cluster: $1" >&2
	slurm_cluster_logs >&2
	slurm_cluster_stop
	return 1
}

# _slurm_until SECS CMD...: run CMD every 0.1 s until it succeeds, for at most SECS
_slurm_until() {
	local end=$((SECONDS + $1)); shift
	until "$@" >/dev/null 2>&1; do
		[ $SECONDS -lt $end ] || return 1
		sleep 0.1
	done
}

_slurm_alive() { kill -0 "$1" 2>/dev/null; }
_slurm_node_up() {
	sinfo -h -n "$SLURM_CLUSTER_NODE" -o %t 2>/dev/null | grep -Eq '^(idle|mix|alloc)$'
}

slurm_cluster_start() {
	local d conf ctld_port slurmd_port host prev t=${SLURM_CLUSTER_TIMEOUT:-20} b
	SLURM_CLUSTER_WHY=
	[ "$(id -u)" -eq 0 ] || { SLURM_CLUSTER_WHY="not root: slurmd and munged run as root"; return 1; }
	for b in munged slurmctld slurmd sbatch scontrol sinfo squeue scancel; do
		PATH=$PATH:/usr/sbin:/sbin command -v "$b" >/dev/null ||
			{ SLURM_CLUSTER_WHY="no $b (Debian: apt-get install slurm-wlm munge)"; return 1; }
	done
	PATH=$PATH:/usr/sbin:/sbin
	d=$(mktemp -d "${TMPDIR:-/tmp}/hotset-slurm.XXXXXX") ||
		{ SLURM_CLUSTER_WHY="cannot make a directory"; return 1; }
	# 0755: a job's user reads slurm.conf (scontrol in a job); munge's key stays 0700
	chmod 755 "$d"
	mkdir -m 700 "$d/munge" && mkdir -m 755 "$d/run" "$d/log" "$d/state" "$d/spool" &&
		: > "$d/plugstack.conf" || { rm -rf "$d"; SLURM_CLUSTER_WHY="cannot write $d"; return 1; }
	SLURM_CLUSTER_DIR=$d
	SLURM_CLUSTER_NODE=hs${d##*.}
	SLURM_CLUSTER_NODE=${SLURM_CLUSTER_NODE,,}
	SLURM_CLUSTER_PARTITION=${SLURM_CLUSTER_NODE}p
	# stop at exit, before what the caller had at exit (lib.sh removes $TRASH)
	prev=$(trap -p EXIT)
	if [ -n "$prev" ]; then eval "set -- $prev"; prev=$3; fi
	# shellcheck disable=SC2064
	trap "slurm_cluster_stop; $prev" EXIT
	trap 'exit 130' INT; trap 'exit 143' TERM; trap 'exit 129' HUP

	head -c 1024 /dev/urandom > "$d/munge/munge.key" && chmod 400 "$d/munge/munge.key" ||
		{ _slurm_fail "cannot write a munge key"; return 1; }
	munged -F --socket="$d/run/munge.socket" --key-file="$d/munge/munge.key" \
		--pid-file="$d/munge/munged.pid" --seed-file="$d/munge/munged.seed" \
		--log-file="$d/log/munged.log" --num-threads=2 \
		</dev/null >>"$d/log/munged.log" 2>&1 &
	_slurm_pids+=($!)
	_slurm_until "$t" test -S "$d/run/munge.socket" ||
		{ _slurm_fail "munged did not start within $t s"; return 1; }

	host=$(hostname -s)
	ctld_port=$(_slurm_free_port) && slurmd_port=$(_slurm_free_port) ||
		{ _slurm_fail "no free TCP port"; return 1; }
	[ "$ctld_port" != "$slurmd_port" ] || slurmd_port=$(_slurm_free_port)
	conf=$d/slurm.conf
	cat > "$conf" <<-EOF
	# a one-node cluster of a test's own (tests/lib-slurm.sh)
	ClusterName=$SLURM_CLUSTER_NODE
	SlurmctldHost=$host(127.0.0.1)
	SlurmctldPort=$ctld_port
	SlurmdPort=$slurmd_port
	SlurmUser=root
	SlurmdUser=root
	AuthType=auth/munge
	AuthInfo=socket=$d/run/munge.socket
	CredType=cred/munge
	PlugStackConfig=$d/plugstack.conf
	StateSaveLocation=$d/state
	SlurmdSpoolDir=$d/spool/%n
	SlurmctldPidFile=$d/run/slurmctld.pid
	SlurmdPidFile=$d/run/slurmd-%n.pid
	SlurmctldLogFile=$d/log/slurmctld.log
	SlurmdLogFile=$d/log/slurmd.log
	SlurmctldDebug=info
	SlurmdDebug=info
	ProctrackType=proctrack/linuxproc
	TaskPlugin=task/none
	SelectType=select/cons_tres
	SelectTypeParameters=CR_Core_Memory
	JobAcctGatherType=jobacct_gather/none
	AccountingStorageType=accounting_storage/none
	JobCompType=jobcomp/none
	MailProg=/bin/true
	ReturnToService=2
	SchedulerType=sched/builtin
	# schedule a batch job as it is submitted, not within 3 s (the default)
	SchedulerParameters=batch_sched_delay=0
	MinJobAge=600
	KillWait=2
	InactiveLimit=0
	SlurmdTimeout=60
	MessageTimeout=10
	EOF
	{
		[ -z "${SLURM_PROLOG:-}" ] || echo "Prolog=$SLURM_PROLOG"
		[ -z "${SLURM_EPILOG:-}" ] || echo "Epilog=$SLURM_EPILOG"
		[ -z "${SLURM_TASK_PROLOG:-}" ] || echo "TaskProlog=$SLURM_TASK_PROLOG"
		[ -z "${SLURM_PROLOG_FLAGS:-}" ] || echo "PrologFlags=$SLURM_PROLOG_FLAGS"
		echo "NodeName=$SLURM_CLUSTER_NODE NodeHostname=localhost NodeAddr=127.0.0.1" \
			"Port=$slurmd_port CPUs=${SLURM_CPUS:-$(nproc)}" \
			"RealMemory=${SLURM_REAL_MEMORY:-4096} State=UNKNOWN"
		echo "PartitionName=$SLURM_CLUSTER_PARTITION Nodes=$SLURM_CLUSTER_NODE Default=YES" \
			"MaxTime=INFINITE State=UP"
		[ -z "${SLURM_EXTRA_CONF:-}" ] || printf '%s\n' "$SLURM_EXTRA_CONF"
	} >> "$conf"
	export SLURM_CONF=$conf
	# a caller's SLURM_* settings (a job's own environment) would steer sbatch
	unset SLURM_JOB_ID SLURM_JOBID SLURM_PARTITION SBATCH_PARTITION

	slurmctld -D -f "$conf" </dev/null >>"$d/log/slurmctld.out" 2>&1 &
	_slurm_pids+=($!)
	slurmd -D -f "$conf" -N "$SLURM_CLUSTER_NODE" </dev/null >>"$d/log/slurmd.out" 2>&1 &
	_slurm_pids+=($!)
	local end=$((SECONDS + t)) i
	until _slurm_node_up; do
		for i in 0 1 2; do
			_slurm_alive "${_slurm_pids[i]}" ||
				{ _slurm_fail "${_slurm_names[i]} exited at start"; return 1; }
		done
		[ $SECONDS -lt $end ] ||
			{ _slurm_fail "the node did not take jobs within $t s"; return 1; }
		sleep 0.2
	done
}

# The pids of what this cluster's slurmd started and may outlive it: the
# slurmstepd processes (reparented to init) and the jobs' processes, both
# told by this cluster's SLURM_CONF in their environment (the jobs' also by
# SLURM_JOB_ID, which this shell's own children lack).
_slurm_strays() {
	local p env
	for p in /proc/[0-9]*; do
		p=${p#/proc/}
		env=$(tr "\\0" "\\n" 2>/dev/null < "/proc/$p/environ") || continue
		grep -qxF "SLURM_CONF=$SLURM_CONF" <<< "$env" || continue
		if [ "$(cat "/proc/$p/comm" 2>/dev/null)" = slurmstepd ] ||
		   grep -q '^SLURM_JOB_ID=' <<< "$env"; then
			case " ${_slurm_pids[*]} " in *" $p "*) ;; *) echo "$p";; esac
		fi
	done
}

slurm_cluster_stop() {
	local p strays
	[ -n "$SLURM_CLUSTER_DIR" ] || return 0
	# (every step may fail, and none may stop the rest: callers may run with set -e)
	if [ ${#_slurm_pids[@]} -ge 3 ] && _slurm_alive "${_slurm_pids[1]}"; then
		scancel --partition="$SLURM_CLUSTER_PARTITION" >/dev/null 2>&1 || :
		_slurm_until 5 sh -c '[ -z "$(squeue -h -t R,CG,CF -o %i 2>/dev/null)" ]' || :
	fi
	# the daemons first: slurmd, slurmctld, then munged, which they use
	for p in "${_slurm_pids[2]:-}" "${_slurm_pids[1]:-}" "${_slurm_pids[0]:-}"; do
		[ -n "$p" ] || continue
		kill -TERM "$p" 2>/dev/null || :
		_slurm_until 5 sh -c "! kill -0 $p" || kill -KILL "$p" 2>/dev/null || :
		wait "$p" 2>/dev/null || :
	done
	strays=$(_slurm_strays) || :
	# shellcheck disable=SC2086
	[ -z "$strays" ] || kill -KILL $strays 2>/dev/null || :
	rm -rf "$SLURM_CLUSTER_DIR"
	SLURM_CLUSTER_DIR='' _slurm_pids=()
	unset SLURM_CONF
}

slurm_submit() { sbatch --parsable "$@" | cut -d';' -f1; }

slurm_job_field() {
	scontrol -o show job "$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n 1
}

slurm_job_state() { slurm_job_field "$1" JobState; }

slurm_wait_job() {
	local end=$((SECONDS + ${2:-60})) s
	while :; do
		s=$(slurm_job_state "$1")
		case $s in
		PENDING|RUNNING|CONFIGURING|COMPLETING|SUSPENDED|"") ;;
		*) echo "$s"; return 0;;
		esac
		[ $SECONDS -lt $end ] || { echo "${s:-UNKNOWN}"; return 1; }
		sleep 0.2
	done
}
