#!/usr/bin/env bash
# scripts/dev installs what is missing through apt, and while another apt
# holds its locks (apt-get update's lock of the package lists, dpkg's) it
# waits for them rather than failing. apt-get, dpkg-query, sudo and make
# are stand-ins: nothing is installed, nothing built.
. "$(dirname "$0")/../lib.sh"

# until_true CMD...: until CMD succeeds, at most 20 s (a deadline, not a timing)
until_true() {
	local i
	for i in $(seq 200); do "$@" 2> /dev/null && return 0; sleep 0.1; done
	echo "timed out waiting for: $*" >&2
	return 1
}

# mkstubs: in stubs/, an apt-get that logs its arguments to apt.log and,
# while the file "locked" exists, does what apt 2.6 does while another
# apt holds its locks: update fails at once; install fails at once, or
# with -o DPkg::Lock::Timeout=N waits up to N s for the lock first. A
# dpkg-query for which nothing is installed, a sudo that runs the command,
# and a make that stops scripts/dev with status 3 (before any build).
mkstubs() {
	mkdir stubs &&
	cat > stubs/apt-get <<-EOF &&
	#!/bin/sh
	echo "\$*" >> "$PWD/apt.log"
	wait=\$(printf "%s\n" "\$@" | sed -n "s/^DPkg::Lock::Timeout=//p")
	case " \$* " in *" install "*)
		i=0
		while [ -e "$PWD/locked" ] && [ \$i -lt \$((\${wait:-0} * 10)) ]; do
			sleep 0.1; i=\$((i + 1))
		done;;
	esac
	if [ -e "$PWD/locked" ]; then
		echo "refused" >> "$PWD/apt.log"
		echo "E: Could not get lock /var/lib/apt/lists/lock. It is held by process 1 (apt-get)" >&2
		exit 100
	fi
	EOF
	printf "#!/bin/sh\nexit 1\n" > stubs/dpkg-query &&
	printf "#!/bin/sh\nexec \"\$@\"\n" > stubs/sudo &&
	printf "#!/bin/sh\nexit 3\n" > stubs/make &&
	chmod 755 stubs/*
}
dev() { PATH=$PWD/stubs:$PATH APT_RETRY=0.2 "$REPO/scripts/dev" "$@"; }
refusals() { test "$(grep -c "^refused$" apt.log)" -ge "$1"; }

test_expect_success 'packages missing: one apt-get update, one install of them all' '
	mkstubs &&
	expect_code 3 dev demo 2> err && cat err &&
	grep -q "^apt: installing gcc make " err &&
	check_eq "$(grep -c " update" apt.log)" 1 &&
	grep -q "^-o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends gcc make " apt.log
'

test_expect_success 'another apt holds its locks: scripts/dev waits, then installs' '
	mkstubs && touch locked &&
	{ rc=0; APT_LOCK_WAIT=60 dev demo > out 2> err || rc=$?; echo $rc > rc; } &
	until_true refusals 2 &&
	rm locked &&
	until_true test -s rc && cat err && check_eq "$(cat rc)" 3 &&
	grep -q "^apt: another apt holds a lock: waiting for it (apt-get update)$" err &&
	! grep -q "update failed" err &&
	# tried again until it passed, then the install, which would have waited itself
	test "$(sed -n "\$p" apt.log | cut -d" " -f3)" = install &&
	test "$(grep -v refused apt.log | tail -n 2 | head -n 1 | cut -d" " -f3)" = update &&
	grep -q "^-o DPkg::Lock::Timeout=60 install " apt.log
'

test_expect_success 'a lock held for longer than APT_LOCK_WAIT: apt'"'"'s error, and it fails' '
	mkstubs && touch locked &&
	expect_code 1 env APT_LOCK_WAIT=1 PATH="$PWD/stubs:$PATH" APT_RETRY=0.2 "$REPO/scripts/dev" demo 2> err &&
	cat err &&
	grep -q "^apt: apt-get update failed: installing from the lists there are$" err &&
	grep -q "Could not get lock" err && grep -q "^-o DPkg::Lock::Timeout=1 install " apt.log
'

test_done
