#!/usr/bin/env bash
# hotset record on real programs: the profile lists exactly the regular
# files that strace -f shows the job reading (read-like calls that returned
# data, mmap, exec and the interpreters exec loads), minus the files it
# created and the places a working set leaves out. For each backend that
# runs here (RECORD_BACKENDS, default "bpf ptrace"): python3 importing json,
# make of a small C project, a C++ compile that includes many Boost headers,
# an sqlite3 query; then the same as an unprivileged user (nobody, with the
# ptrace backend, the one such a user gets). See tests/helpers/strace-compare.py.
. "$(dirname "$0")/../lib.sh"
# The plain build's pass only: real programs recorded, minutes of
# them under the sanitizers; those run the recorders in t0500 to t0540.

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
# $as, if set, runs the job, the record and strace as another user.
compare() {
	reset; $as "$@" > /dev/null 2>&1
	reset; $as "$HOTSET" record -q --backend="$backend" -o p -- "$@" > /dev/null
	hotset show --json p > j
	reset; $as strace -ff -qq -y -o st -e trace=$STRACE_CALLS "$@" > /dev/null
	python3 "$TESTS_DIR/helpers/strace-compare.py" j st "$PWD"
}
as=
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

# Hundreds of headers, each opened once and read whole.
boost_source() {
	cat > b.cpp <<-\EOF
	#include <boost/algorithm/string.hpp>
	#include <boost/optional.hpp>
	#include <boost/variant.hpp>
	#include <string>
	int main()
	{
		boost::optional<std::string> s = std::string("a,b");
		boost::variant<int, std::string> v = 1;
		return boost::algorithm::contains(*s, ",") ? v.which() : 2;
	}
	EOF
}
boost_headers_read() { json j "len([f for f in j[\"files\"] if \"/boost/\" in f[\"path\"]]) > 200"; }

sqlite_db() {
	sqlite3 db "create table t(a, b);
		with recursive c(x) as (select 1 union all select x + 1 from c where x < 20000)
		insert into t select x, hex(randomblob(50)) from c;"
}
SQLITE_QUERY="select count(*), sum(length(b)) from t where a % 7 = 3"
db_pages_read() { json j "[f[\"pages\"] for f in j[\"files\"] if f[\"path\"] == \"$PWD/db\"][0] > 100"; }

for backend in ${RECORD_BACKENDS:-bpf ptrace}; do
	test_expect_success PLAIN,BACKEND,STRACE "$backend: python3 -c \"import json\"" '
		compare python3 -c "import json"
	'

	test_expect_success PLAIN,BACKEND,STRACE,CC "$backend: make of a small C project" '
		c_project &&
		reset() { make -s clean; } &&
		compare make -s &&
		./prog > out && check_eq "$(cat out)" "6 1.414214"
	'

	test_expect_success PLAIN,BACKEND,STRACE,BOOST "$backend: a C++ compile of Boost headers" '
		boost_source && compare c++ -fsyntax-only b.cpp && check_eq "$(boost_headers_read)" 1
	'

	test_expect_success PLAIN,BACKEND,STRACE,SQLITE "$backend: an sqlite3 query" '
		sqlite_db && compare sqlite3 db "$SQLITE_QUERY" && check_eq "$(db_pages_read)" 1
	'
done

# As nobody: the files the job may read, recorded without privileges.
# (The system python3: nobody cannot enter root's own installs.)
as=as_nobody backend=ptrace
test_expect_success PLAIN,NOBODY,BACKEND,STRACE "nobody: python3 -c \"import json\"" '
	chown nobody:nogroup . && compare /usr/bin/python3 -c "import json"
'

test_expect_success PLAIN,NOBODY,BACKEND,STRACE,BOOST "nobody: a C++ compile of Boost headers" '
	chown nobody:nogroup . && boost_source &&
	compare c++ -fsyntax-only b.cpp && check_eq "$(boost_headers_read)" 1
'

test_expect_success PLAIN,NOBODY,BACKEND,STRACE,SQLITE "nobody: an sqlite3 query" '
	chown nobody:nogroup . && sqlite_db && chown nobody:nogroup db &&
	compare sqlite3 db "$SQLITE_QUERY" && check_eq "$(db_pages_read)" 1
'

test_done
