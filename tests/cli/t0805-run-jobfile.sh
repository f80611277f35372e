#!/usr/bin/env bash
# hotset run: a budget that holds no page is refused, not taken as room
# for every job at once; a job file of 200,000 jobs is planned (and a
# queue of as many resumed) in bounded memory and CPU time, each job found
# by its name.
. "$(dirname "$0")/../lib.sh"

run() { "$HOTSET" run -q --state "$PWD/st" "$@"; }

test_expect_success '--budget 0, or less than a page: a usage error, nothing runs' '
	printf "%s\n" "a touch $PWD/ran" "b touch $PWD/ran" > jobs &&
	for b in 0 0K 100; do
		expect_code 2 run --budget $b jobs 2> err &&
		grep -q -- "--budget takes a size of at least a page" err || return 1
	done &&
	expect_code 2 run --dry-run --budget 0 jobs 2> err &&
	test ! -e ran && test ! -e st
'

test_expect_success 'a budget of a page: jobs that need more run one at a time' '
	printf "%s\n" "a true" "b true" > jobs &&
	run jobs > /dev/null &&
	run --dry-run --budget $ps jobs > plan && cat plan &&
	grep -Eq "^a .* starts$" plan && grep -Eq "^b .* waits: memory$" plan
'

# What the file costs, never how long it takes (bench/run-jobfile.sh): in
# 512 MiB of address space (each job took 8.6 KB, 1.7 GB for these, and
# each name was compared with all those before it: about 200 s of CPU
# time, where a sort takes under a second; 60 s is a bound no machine's
# load brings a linear parse near, not a timing).
# ASan reserves terabytes of address space: the plain build only.
test_expect_success PLAIN 'a job file of 200,000 jobs: planned in bounded memory, and resumed' '
	n=200000 &&
	awk -v n=$n "BEGIN { for (i = 0; i < n; i++) printf \"job%06d exit %d\\n\", n - 1 - i, i % 3 }" > jobs &&
	( ulimit -v $((512 << 10)) -t 60 && run --dry-run jobs > plan ) &&
	check_eq "$(grep -c "^job[0-9]* .* waits: " plan)" $((n - 1)) &&
	grep -Eq "^job199999 +no-history .* starts$" plan &&
	grep -Eq "^job199998 +no-history .* waits: no-history$" plan &&
	# the queue of a killed run, every other job done: the done ones are said done
	mkdir st && python3 - $n <<-\PY &&
	import sys
	n = int(sys.argv[1])
	text = open("jobs", "rb").read()
	h = 0xcbf29ce484222325
	for b in text:
	    h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
	with open("st/queue", "w") as f:
	    f.write("jobfile jobs\nhash %016x\nengine local\n" % h)
	    for i in range(n):
	        f.write("job job%06d %s 0 1 2 0\n" % (i, "done" if i % 2 else "pending"))
	PY
	( ulimit -v $((512 << 10)) -t 60 && run --dry-run --resume jobs > plan ) &&
	check_eq "$(grep -c " done$" plan)" $((n / 2)) &&
	grep -Eq "^job000001 .* done$" plan && grep -Eq "^job199998 .* starts$" plan &&
	grep -Eq "^job000000 .* waits: order$" plan
'

test_expect_success 'a name given twice: the first line that gives one again' '
	printf "%s\n" "b true" "a true" "c true" "b false" "a false" > jobs &&
	expect_code 2 run jobs 2> err &&
	grep -q "jobs:4: job .b. is already named on line 1" err && test ! -e st
'

test_done
