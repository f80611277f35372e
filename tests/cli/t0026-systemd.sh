#!/usr/bin/env bash
# The systemd unit hotset-persist@.service, as make install puts it, passes
# systemd-analyze verify once instanced on a tree (no systemd need run);
# its commands, run as systemd would run them, warm the tree from its
# profile (none on the first boot is no failure) and snapshot it.
. "$(dirname "$0")/../lib.sh"

HOTSET=$HOTSET_BUILT	# the binary in the build tree, which make install copies
prereq_MAN() { command -v man >/dev/null; }

# install_root DIR: make install with PREFIX DIR/usr (no DESTDIR), so that
# the paths the unit names exist as they are written, as verify wants
install_root() {
	hs_make install PREFIX="$1/usr" > install.out 2>&1 || { cat install.out; return 1; }
}

# verify UNIT: systemd-analyze verify, which says nothing when all is well
# (unknown keys and bad values are warnings only, exit status 0). The man
# pages the unit names are looked up among the installed ones, if man is here.
verify() {
	local man=no
	have_prereq MAN && man=yes
	MANPATH=$root/usr/share/man systemd-analyze verify --man=$man "$1" > verify.out 2>&1 &&
		test ! -s verify.out || { cat verify.out; return 1; }
}

test_expect_success MAKE,SYSTEMD_ANALYZE 'systemd-analyze verify passes the unit, instanced on a tree' '
	root=$PWD/root && install_root "$root" &&
	units=$root/usr/lib/systemd/system &&
	grep -q "^ExecStop=$root/usr/bin/hotset snapshot " "$units/hotset-persist@.service" &&
	mkdir tree &&
	verify "$units/hotset-persist@$(systemd-escape -p "$PWD/tree").service" &&
	verify "$units/hotset-persist@srv-db.service"
'

test_expect_success MAKE,SYSTEMD_ANALYZE 'systemd-analyze verify passes hotset-keep@, instanced on a profile' '
	root=$PWD/root && install_root "$root" &&
	units=$root/usr/lib/systemd/system &&
	grep -q "^ExecStart=$root/usr/bin/hotset keep .* /var/lib/hotset/%i.profile$" "$units/hotset-keep@.service" &&
	grep -q "^ExecReload=/bin/kill -HUP \$MAINPID$" "$units/hotset-keep@.service" &&
	grep -q "^Type=notify$" "$units/hotset-keep@.service" &&
	verify "$units/hotset-keep@build.service"
'

test_expect_success MAKE 'hotset-keep@ runs a keeper on its profile, which reload and stop reach' '
	root=$PWD/root && install_root "$root" &&
	unit=$root/usr/lib/systemd/system/hotset-keep@.service &&
	mkdir -p lib psi && echo data > lib/file && cat lib/file > /dev/null &&
	printf "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n" > psi/memory && cp psi/memory psi/io &&
	"$HOTSET" snapshot -q -o lib/build.profile lib/file &&
	cmd=$(sed -n -e "s/^ExecStart=//p" "$unit" | sed -e "s|%i|build|g" -e "s|/var/lib/hotset|$PWD/lib|g")
	# a list of its own, the keeper exec'"'"'d: $! is the keeper
	(export HOTSET_KEEP_OPTIONS="--state $PWD/k.state --interval 0.2s" HOTSET_PSI_DIR=$PWD/psi &&
		eval "set -- $cmd" && exec "$@" 2> keep.log) &
	kpid=$!
	trap "kill $kpid 2> /dev/null || :; wait $kpid 2> /dev/null || :" EXIT &&
	for i in $(seq 100); do grep -q "^started: 1 profile, 1 file" keep.log && break; sleep 0.1; done &&
	grep -q "^started: 1 profile, 1 file" keep.log &&
	reload=$(sed -n -e "s/^ExecReload=//p" "$unit" | sed -e "s/\$MAINPID/$kpid/") &&
	$reload &&
	for i in $(seq 100); do grep -q "^profiles reloaded" keep.log && break; sleep 0.1; done &&
	grep -q "^profiles reloaded: 1 file" keep.log &&
	kill -TERM $kpid && wait $kpid && grep -q "^exiting (SIGTERM)" keep.log
'

test_expect_success MAKE,SYSTEMD_ANALYZE 'systemd-analyze verify fails the unit when the binary it names is not there' '
	root=$PWD/root && install_root "$root" &&
	mkdir bad &&
	sed -e "s|$root/usr/bin/hotset|$PWD/nowhere/hotset|g" \
		"$root/usr/lib/systemd/system/hotset-persist@.service" > bad/hotset-persist@.service &&
	! verify bad/hotset-persist@tmp.service &&
	grep -q "nowhere/hotset" verify.out
'

# unit_command KEY INSTANCE: the unit's ExecStart or ExecStop line as
# systemd runs it for INSTANCE (the tree $tree, whose escaped name is
# INSTANCE), state directory $state: %S, %i and %f expanded, $$ a dollar.
unit_command() {
	sed -n -e "s/^$1=//p" "$unit" |
		sed -e "s|%S|$state|g" -e "s|%i|$2|g" -e "s|%f|$tree|g" -e 's/\$\$/$/g'
}
# run_unit KEY: run that command (its quoting is the shell's), in the
# unit's environment: the options of warm and snapshot empty, unless set.
run_unit() {
	local cmd; cmd=$(unit_command "$1" tree) && test -n "$cmd" &&
	(export HOTSET_WARM_OPTIONS=${HOTSET_WARM_OPTIONS-} HOTSET_SNAPSHOT_OPTIONS=${HOTSET_SNAPSHOT_OPTIONS-} &&
		eval "set -- $cmd" && "$@")
}

# stop_lists_file: the file is read, the unit stopped (a shutdown): the
# profile of the tree lists it, and the command printed its summary only
stop_lists_file() {
	cat "$tree/sub/file" > /dev/null &&
	run_unit ExecStop > out 2>&1 || { cat out; return 1; }
	grep -q "^Snapshot of 1 file" out && check_eq "$(wc -l < out)" 1 &&
	"$HOTSET" show --json "$state/hotset/tree.profile" > show.json &&
	check_eq "$(json show.json "len(j[\"files\"])")" 1 &&
	check_eq "$(json show.json "j[\"files\"][0][\"path\"]")" "$tree/sub/file"
}

test_expect_success MAKE 'the unit warms nothing on the first boot, snapshots at stop, warms at start' '
	root=$PWD/root && install_root "$root" &&
	unit=$root/usr/lib/systemd/system/hotset-persist@.service &&
	tree=$PWD/tree state=$PWD/state && mkdir -p "$tree/sub" "$state/hotset" &&
	echo data > "$tree/sub/file" &&
	# first boot: no profile, nothing to do, success
	run_unit ExecStart > out 2>&1 || { cat out; return 1; }
	test ! -s out && test ! -e "$state/hotset/tree.profile" &&
	# shutdown: the profile of the tree
	retry stop_lists_file &&
	# boot: the warm reads that profile
	HOTSET_WARM_OPTIONS=--json run_unit ExecStart > warm.json &&
	check_eq "$(json warm.json "j[\"files\"]")" 1 &&
	# a profile that cannot be read is a failure, not skipped
	echo garbage > "$state/hotset/tree.profile" &&
	expect_code 2 run_unit ExecStart
'

test_done
