#!/usr/bin/env bash
# hotset run: a budget that holds no page is refused, not taken as room
# for every job at once.
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

test_done
