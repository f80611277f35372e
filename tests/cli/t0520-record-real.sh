#!/usr/bin/env bash
# hotset record on real programs: the profile lists exactly the regular
# files that strace -f shows the job reading (read-like calls that returned
# data, mmap, exec and the interpreters exec loads), minus the files it
# created and the places a working set leaves out. For each backend that
# runs here (RECORD_BACKENDS, default "bpf ptrace"): python3 importing json,
# make of a small C project, a C++ compile that includes many Boost headers,
# an sqlite3 query. See tests/helpers/strace-compare.py.
. "$(dirname "$0")/../lib.sh"

prereq_STRACE() { command -v strace >/dev/null && command -v python3 >/dev/null; }
prereq_CC() { command -v make >/dev/null && command -v cc >/dev/null; }
prereq_SQLITE() { command -v sqlite3 >/dev/null; }
prereq_BOOST() { command -v c++ >/dev/null && [ -f /usr/include/boost/version.hpp ]; }
# the backend in $backend can record here
prereq_BACKEND() {
	"$HOTSET" record -q --backend="$backend" -o "$TRASH/probe.prof" -- true >/dev/null 2>&1
}

STRACE_CALLS=open,openat,openat2,creat,execve,execveat,read,pread64,readv,preadv,preadv2,mmap,sendfile,splice,copy_file_range

# compare CMD...: record CMD with $backend, run it again under strace, and
# compare. CMD runs once before, so that both runs find the same caches; the
# function `reset` (if defined) runs before each run.
compare() {
	reset; "$@" > /dev/null 2>&1
	reset; hotset record -q --backend="$backend" -o p -- "$@" > /dev/null
	hotset show --json p > j
	reset; strace -ff -qq -y -o st -e trace=$STRACE_CALLS "$@" > /dev/null
	python3 "$TESTS_DIR/helpers/strace-compare.py" j st "$PWD"
}
reset() { :; }

# A small C project: three sources, a header, libm.
c_project() {
	mkdir -p proj && cd proj &&
	printf 'CFLAGS = -O1\nprog: main.o util.o calc.o\n\t$(CC) -o $@ $^ -lm\n' > Makefile &&
	printf '%%.o: %%.c util.h\n\t$(CC) $(CFLAGS) -c -o $@ $<\n' >> Makefile &&
	printf 'clean:\n\trm -f prog *.o\n' >> Makefile &&
	printf '#include <stdio.h>\n#include <math.h>\n#include <string.h>\nint util(int);\ndouble calc(double);\n' > util.h &&
	printf '#include "util.h"\nint main(void) { printf("%%d %%f\\n", util(3), calc(2.0)); return 0; }\n' > main.c &&
	printf '#include "util.h"\nint util(int x) { return (int)strlen("abc") + x; }\n' > util.c &&
	printf '#include "util.h"\ndouble calc(double x) { return sqrt(x); }\n' > calc.c
}

for backend in ${RECORD_BACKENDS:-bpf ptrace}; do
	test_expect_success BACKEND,STRACE "$backend: python3 -c \"import json\"" '
		compare python3 -c "import json"
	'

	test_expect_success BACKEND,STRACE,CC "$backend: make of a small C project" '
		c_project &&
		reset() { make -s clean; } &&
		compare make -s &&
		./prog > out && check_eq "$(cat out)" "6 1.414214"
	'

	# hundreds of headers, each opened once and read whole
	test_expect_success BACKEND,STRACE,BOOST "$backend: a C++ compile of Boost headers" '
		printf "#include <boost/algorithm/string.hpp>\n#include <boost/optional.hpp>\n#include <boost/variant.hpp>\n#include <string>\nint main() { boost::optional<std::string> s = std::string(\"a,b\"); boost::variant<int, std::string> v = 1; return boost::algorithm::contains(*s, \",\") ? v.which() : 2; }\n" > b.cpp &&
		compare c++ -fsyntax-only b.cpp &&
		check_eq "$(json j "len([f for f in j[\"files\"] if \"/boost/\" in f[\"path\"]]) > 200")" 1
	'

	test_expect_success BACKEND,STRACE,SQLITE "$backend: an sqlite3 query" '
		sqlite3 db "create table t(a, b);
			with recursive c(x) as (select 1 union all select x + 1 from c where x < 20000)
			insert into t select x, hex(randomblob(50)) from c;" &&
		compare sqlite3 db "select count(*), sum(length(b)) from t where a % 7 = 3" &&
		check_eq "$(json j "[f[\"pages\"] for f in j[\"files\"] if f[\"path\"] == \"$PWD/db\"][0] > 100")" 1
	'
done

test_done
