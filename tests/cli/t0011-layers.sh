#!/usr/bin/env bash
# The dependencies run one way (docs/architecture.md, "The layers"):
# scripts/layers finds no include of a folder above, none of the CLI, no
# cycle of modules in the library or in the CLI, and no CLI header that
# declares what its own source does not define; and it does find each
# when one is planted.
. "$(dirname "$0")/../lib.sh"

ROOT=$(cd "$TESTS_DIR/.." && pwd)

test_expect_success 'the tree: no include upwards, none of the CLI, no cycle, headers their own' '
	"$ROOT/scripts/layers" > out || { cat out; false; }
	check_eq "$(cat out)" ""
'

# a copy of the tree's src and the script, with one offence planted in
# src/$2 (lib/... or cli/...)
planted() {
	rm -rf tree && mkdir -p tree/scripts && cp -r "$ROOT/src" tree/ &&
	cp "$ROOT/scripts/layers" tree/scripts/ && printf "%s\n" "$1" >> "tree/src/$2" &&
	expect_code 1 tree/scripts/layers > out
}

test_expect_success 'an include of a folder above is found, with its line' '
	planted "#include \"queue/sched.h\"" lib/base/util.c &&
	n=$(wc -l < tree/src/lib/base/util.c) &&
	grep -qx "src/lib/base/util.c:$n: includes \"queue/sched.h\": queue is above base" out
'

test_expect_success 'an include of the CLI is found' '
	planted "#include \"cli.h\"" lib/cache/warm.c &&
	grep -q "^src/lib/cache/warm.c:[0-9]*: includes \"cli.h\", which is no \"layer/name.h\" of the library$" out
'

test_expect_success 'two modules that include each other are a cycle' '
	planted "#include \"kernel/memory.h\"" lib/kernel/procfs.h &&
	grep -qx "a cycle of modules that include each other: kernel/memory <-> kernel/procfs" out
'

test_expect_success 'two CLI modules that include each other are a cycle' '
	planted "#include \"options.h\"" cli/output.h &&
	grep -qx "a cycle of modules that include each other: cli/messages <-> cli/options <-> cli/output" out
'

test_expect_success 'a CLI header that declares what its source does not define is found' '
	planted "int parse_size(const char *s, unsigned long *out);" cli/output.h &&
	n=$(wc -l < tree/src/cli/output.h) &&
	grep -qx "src/cli/output.h:$n: declares parse_size(), which src/cli/output.c does not define" out
'

test_expect_success 'a CLI include of no header is found' '
	planted "#include \"cli.h\"" cli/cmd-warm.c &&
	grep -q "^src/cli/cmd-warm.c:[0-9]*: includes \"cli.h\", which is no header of src/cli$" out
'

test_done
