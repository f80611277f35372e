#!/usr/bin/env bash
# The test harness itself can fail: tests/run, on a build directory and a
# directory of CLI tests made here, counts a script killed half-way, a
# plan that does not match the results, an exit status that no failed test
# explains, a hang, a missing build, as failures, and a failed test once;
# in an ASan build, a unit test that leaks memory fails.
. "$(dirname "$0")/../lib.sh"

ROOT=$(cd "$TESTS_DIR/.." && pwd)
CC=${CC:-cc}
prereq_CC() { command -v "$CC" >/dev/null; }

# script DIR/NAME BODY: an executable shell script
script() { mkdir -p "$(dirname "$1")" && printf '#!/bin/sh\n%s\n' "$2" > "$1" && chmod +x "$1"; }

# A build directory with one passing unit test (b/), and an empty CLI dir.
fixture() {
	script b/tests/test-fine 'echo 1..1; echo "ok 1 - fine"' && mkdir -p c
}

# lib_script NAME BODY: a CLI test made with tests/lib.sh; its scratch
# directories go under the test's own, which is removed at the end
lib_script() {
	printf '. "%s/tests/lib.sh"\n%s\n' "$ROOT" "$2" > "c/$1.sh"
}

# run_harness [ARGS...]: tests/run on b/ and c/; its last line in "last"
run_harness() {
	local rc=0
	TRASH_ROOT=$PWD "$ROOT/tests/run" -b "$PWD/b" -d "$PWD/c" "$@" > out 2>&1 || rc=$?
	cat out
	tail -n 1 out > last
	return $rc
}

test_expect_success 'passing unit tests and scripts pass' '
	fixture &&
	lib_script t0001-good "test_expect_success one true; test_expect_success two true; test_done" &&
	run_harness &&
	check_eq "$(cat last)" "3 passed, 0 failed, 0 skipped"
'

test_expect_success 'a script killed after its first test fails the suite' '
	fixture &&
	lib_script t0001-killed "test_expect_success first true; kill -9 \$\$; test_expect_success second true; test_done" &&
	expect_code 1 run_harness &&
	check_eq "$(cat last)" "2 passed, 1 failed, 0 skipped" &&
	grep -q "^#   t0001-killed: did not finish: no plan line (killed by signal 9)$" out
'

test_expect_success 'a unit test binary that dies after its plan fails the suite' '
	fixture &&
	script b/tests/test-dies "echo 1..3; echo \"ok 1 - first\"; kill -9 \$\$" &&
	expect_code 1 run_harness &&
	check_eq "$(cat last)" "2 passed, 1 failed, 0 skipped" &&
	grep -q "^#   test-dies: planned 3 tests but 1 ran (killed by signal 9)$" out
'

test_expect_success 'more results than planned fail' '
	fixture &&
	script b/tests/test-more "echo 1..1; echo \"ok 1 - a\"; echo \"ok 2 - b\"" &&
	expect_code 1 run_harness test-more &&
	grep -q "^#   test-more: planned 1 tests but 2 ran (exit status 0)$" out
'

test_expect_success 'a non-zero exit status with every test passed fails, once' '
	fixture &&
	lib_script t0001-status "test_expect_success one true; test_done; exit 3" &&
	expect_code 1 run_harness &&
	check_eq "$(cat last)" "2 passed, 1 failed, 0 skipped" &&
	grep -q "^#   t0001-status: exit status 3, but no test failed$" out
'

test_expect_success 'a failed test counts once, not again for its exit status' '
	fixture &&
	lib_script t0001-fails "test_expect_success one false; test_expect_success two true; test_done" &&
	expect_code 1 run_harness &&
	check_eq "$(cat last)" "2 passed, 1 failed, 0 skipped" &&
	check_eq "$(grep -c "^#   t0001-fails" out)" 1
'

test_expect_success 'skipped tests count as skipped; two plans fail' '
	fixture &&
	lib_script t0001-skips "prereq_NEVER() { false; }; test_expect_success NEVER one true; test_done" &&
	script b/tests/test-plans "echo 1..1; echo \"ok 1 - a\"; echo 1..1" &&
	expect_code 1 run_harness &&
	check_eq "$(cat last)" "2 passed, 1 failed, 1 skipped" &&
	grep -q "^#   test-plans: printed 2 plan lines$" out
'

test_expect_success 'a script that hangs is killed, and fails' '
	fixture &&
	script c/t0001-hangs.sh "sleep 30" &&
	HOTSET_TEST_TIMEOUT=1 expect_code 1 run_harness &&
	grep -q "^#   t0001-hangs: timed out after 1 s$" out
'

test_expect_success 'a build without unit tests fails' '
	mkdir -p b c &&
	expect_code 1 run_harness &&
	grep -q "^#   unit tests: none in $PWD/b/tests (make tests builds them)$" out
'

# A unit test of tests/unit/unit.h, built as the ASan build builds them.
cat > "$TRASH/leak.c" <<'EOF'
#include "unit.h"
void *volatile sink;
TEST(leaks) { sink = malloc(100); CHECK(sink != NULL); sink = NULL; }
TEST(frees) { char *p = malloc(100); CHECK(p != NULL); free(p); }
void *kept;
TEST(keeps) { kept = malloc(10); CHECK(kept != NULL); }
int main(void) { return RUN_TESTS(leaks, frees, keeps); }
EOF

test_expect_success ASAN,CC 'ASan build: a unit test that leaks memory fails the suite' '
	mkdir -p b/tests c &&
	"$CC" -std=c11 -D_GNU_SOURCE -g -fsanitize=address,undefined -fno-omit-frame-pointer \
		-I"$ROOT/tests/unit" -o b/tests/test-leak "$TRASH/leak.c" &&
	ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=1 expect_code 1 run_harness &&
	check_eq "$(cat last)" "2 passed, 1 failed, 0 skipped" &&
	grep -q "^not ok 1 - leaks$" out &&
	grep -q "memory leaked" out &&
	grep -q "Direct leak of 100 byte" out
'

test_done
