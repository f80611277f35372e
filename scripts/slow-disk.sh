# scripts/slow-disk.sh - a slow disk for a command, as on a small VM: a
# cgroup that throttles reads from one disk (cgroup v1 blkio, or cgroup v2
# io.max). Sourced by examples/demo.sh and the tests; needs root.
#
#   slow_disk_make PATH IOPS BPS   the disk holding PATH, IOPS reads and BPS
#                                  bytes a second; sets slow_disk (a prefix
#                                  that runs a command inside) or returns 1
#   "${slow_disk[@]}" CMD...      CMD and what it starts, throttled
#   slow_disk_remove               the cgroup removed (call it at exit)

slow_disk=() slow_disk_cg= slow_disk_io_enabled=

slow_disk_make() {
	local mm blkio unified name=hotset-slow.$$.$RANDOM
	[ "$(id -u)" = 0 ] || return 1
	mm=$(findmnt -no MAJ:MIN -T "$1" | head -n1 | tr -d ' ')
	[ -n "$mm" ] || return 1
	# a partition is throttled through its disk
	[ -e "/sys/dev/block/$mm/partition" ] && mm=$(cat "/sys/dev/block/$mm/../dev")
	blkio=$(awk '$3 == "cgroup" && $4 ~ /(^|,)blkio(,|$)/ { print $2; exit }' /proc/mounts)
	unified=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
	if [ -n "$blkio" ] && [ -f "$blkio/blkio.throttle.read_iops_device" ]; then
		mkdir "$blkio/$name" || return 1
		slow_disk_cg=$blkio/$name
		echo "$mm $2" > "$slow_disk_cg/blkio.throttle.read_iops_device" &&
			echo "$mm $3" > "$slow_disk_cg/blkio.throttle.read_bps_device" ||
			{ slow_disk_remove; return 1; }
	elif [ -n "$unified" ] && grep -qw io "$unified/cgroup.controllers" 2>/dev/null; then
		if ! grep -qw io "$unified/cgroup.subtree_control"; then
			echo +io > "$unified/cgroup.subtree_control" || return 1
			slow_disk_io_enabled=$unified
		fi
		mkdir "$unified/$name" || { slow_disk_remove; return 1; }
		slow_disk_cg=$unified/$name
		echo "$mm riops=$2 rbps=$3" > "$slow_disk_cg/io.max" || { slow_disk_remove; return 1; }
	else
		return 1
	fi
	slow_disk=(sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$slow_disk_cg")
}

slow_disk_remove() {
	# the processes it held have ended: a cgroup without them can go
	[ -z "$slow_disk_cg" ] || rmdir "$slow_disk_cg" 2>/dev/null || true
	[ -z "$slow_disk_io_enabled" ] ||
		echo -io > "$slow_disk_io_enabled/cgroup.subtree_control" 2>/dev/null || true
	slow_disk=() slow_disk_cg= slow_disk_io_enabled=
}
