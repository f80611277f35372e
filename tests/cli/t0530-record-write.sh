#!/usr/bin/env bash
# hotset record when the profile cannot be written at the end (a full
# filesystem, the directory removed during the run): the job ran, so its
# exit status stands and the summary is printed; hotset says clearly that
# the profile was not written, and why; no temporary file is left.
. "$(dirname "$0")/../lib.sh"

prereq_MOUNT() { [ "$(id -u)" -eq 0 ] && mkdir -p "$TRASH/m" && mount -t tmpfs none "$TRASH/m" 2>/dev/null && umount "$TRASH/m"; }

# A job that reads a few files, then exits 3.
JOB=(sh -c 'cat /etc/passwd /bin/sh > /dev/null; exit 3')

# A tmpfs of 64 KiB, full: a file can be created in it, but not filled.
full_fs() {
	mkdir m && mount -t tmpfs -o size=64k none m &&
	{ dd if=/dev/zero of=m/fill bs=4k 2>/dev/null || :; }
}

for backend in ptrace bpf; do
	pre=MOUNT
	[ $backend = bpf ] && pre=MOUNT,BPF

	test_expect_success $pre "$backend: a full filesystem: the job's status, the summary, and why no profile" '
		full_fs && trap "umount -l \"$PWD/m\"" EXIT &&
		expect_code 3 hotset record --backend='$backend' -o m/p -- "${JOB[@]}" 2> err &&
		grep -q "^hotset: m/p: the profile was not written: No space left on device" err &&
		grep -q "^hotset: recorded .*; the profile was NOT written to m/p (No space left on device)$" err &&
		grep -q "^Command exited with non-zero status 3$" err &&
		grep -q "^Wall time " err &&
		check_eq "$(ls -A m)" fill &&
		expect_code 3 hotset record --backend='$backend' --json -o m/p -- "${JOB[@]}" 2> j &&
		sed -n "/^{/,\$p" j > j.json &&
		check_eq "$(json j.json "(j[\"profile_written\"], j[\"profile_error\"], j[\"exit_status\"], j[\"files\"] > 0, j[\"wall_seconds\"] > 0)")" \
			"(False, '"'"'No space left on device'"'"', 3, True, True)" &&
		check_eq "$(ls -A m)" fill &&
		# killed by a signal, hotset still dies of it
		expect_code 143 hotset record -q --backend='$backend' -o m/p -- sh -c "cat /etc/passwd > /dev/null; kill -TERM \$\$" 2> err &&
		grep -q "the profile was not written" err &&
		# -q leaves the summary out, not the error
		expect_code 3 hotset record -q --backend='$backend' -o m/p -- "${JOB[@]}" 2> err &&
		check_eq "$(grep -c . err)" 1 && grep -q "the profile was not written" err
	'
done

test_expect_success 'the directory removed during the run: the job'"'"'s status, and why no profile' '
	mkdir d &&
	expect_code 5 hotset record --backend=ptrace -o d/p -- sh -c "rm -r d; exit 5" 2> err &&
	grep -q "^hotset: d/p: the profile was not written: No such file or directory" err &&
	grep -q "^Command exited with non-zero status 5$" err && test ! -e d &&
	mkdir d &&
	expect_code 0 hotset record --backend=ptrace --json -o d/p -- rm -r d 2> err &&
	grep -q "the profile was not written" err &&
	sed -n "/^{/,\$p" err > j &&
	check_eq "$(json j "(j[\"profile_written\"], j[\"exit_status\"])")" "(False, 0)"
'

test_expect_success NOBODY 'as nobody: the directory removed during the run' '
	chown nobody:nogroup . &&
	as_nobody mkdir d &&
	expect_code 5 as_nobody "$HOTSET" record -o d/p -- sh -c "rm -r d; exit 5" 2> err &&
	grep -q "^hotset: d/p: the profile was not written: No such file or directory" err &&
	grep -q "with the ptrace backend; the profile was NOT written to d/p" err
'

test_expect_success BPF 'bpf: the directory removed during the run' '
	mkdir d &&
	expect_code 5 hotset record --backend=bpf -o d/p -- sh -c "rm -r d; exit 5" 2> err &&
	grep -q "^hotset: d/p: the profile was not written: No such file or directory" err &&
	grep -q "^Command exited with non-zero status 5$" err
'

test_expect_success 'a file size limit (SIGXFSZ) or a reader gone (SIGPIPE) does not lose the status' '
	(ulimit -f 1 && expect_code 3 hotset record --backend=ptrace -o p -- sh -c "cat /usr/include/*.h > /dev/null; exit 3") 2> err &&
	grep -q "^hotset: p: the profile was not written: File too large" err &&
	test ! -e p && ! ls -a | grep -q hotset-tmp &&
	{ hotset record --backend=ptrace -o - -- sh -c "exit 4" 2> err; echo $? > rc; } | true &&
	check_eq "$(cat rc)" 4 &&
	grep -q "^hotset: -: the profile was not written: Broken pipe" err
'

test_expect_success 'a profile written as always says so, and profile_error is null' '
	hotset record --backend=ptrace --json -o p -- true 2> j &&
	check_eq "$(json j "(j[\"profile_written\"], j[\"profile_error\"])")" "(True, None)" &&
	hotset record --backend=ptrace -o p -- true 2> err &&
	grep -q "^hotset: recorded .* with the ptrace backend into p$" err
'

test_done
