#!/usr/bin/env bash
# The library's dependencies run one way (docs/architecture.md, "The
# layers"): scripts/layers finds no include of a folder above, none of the
# CLI, and no cycle of modules; and it does find each when one is planted.
. "$(dirname "$0")/../lib.sh"

ROOT=$(cd "$TESTS_DIR/.." && pwd)

test_expect_success 'the tree: no include upwards, none of the CLI, no cycle' '
	"$ROOT/scripts/layers" > out || { cat out; false; }
	check_eq "$(cat out)" ""
'

# a copy of the tree's src/lib and the script, with one offence planted
planted() {
	rm -rf tree && mkdir -p tree/scripts && cp -r "$ROOT/src" tree/ &&
	cp "$ROOT/scripts/layers" tree/scripts/ && printf "%s\n" "$1" >> "tree/src/lib/$2" &&
	expect_code 1 tree/scripts/layers > out
}

test_expect_success 'an include of a folder above is found, with its line' '
	planted "#include \"queue/sched.h\"" base/util.c &&
	n=$(wc -l < tree/src/lib/base/util.c) &&
	grep -qx "src/lib/base/util.c:$n: includes \"queue/sched.h\": queue is above base" out
'

test_expect_success 'an include of the CLI is found' '
	planted "#include \"cli.h\"" cache/warm.c &&
	grep -q "^src/lib/cache/warm.c:[0-9]*: includes \"cli.h\", which is no \"layer/name.h\" of the library$" out
'

test_expect_success 'two modules that include each other are a cycle' '
	planted "#include \"kernel/memory.h\"" kernel/procfs.h &&
	grep -qx "a cycle of modules that include each other: kernel/memory <-> kernel/procfs" out
'

test_done
