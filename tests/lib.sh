# tests/lib.sh - helpers for the CLI tests (tests/cli/tNNNN-*.sh), TAP output.
#
# A test script sources this file, then calls
#   test_expect_success [PREREQ,...] 'description' 'shell commands'
# and finally test_done. Each test runs in a subshell inside a fresh scratch
# directory ($TRASH) on a real filesystem; it passes if the commands exit 0.
# A test whose prerequisites are missing is skipped with the reason.
#
# Prerequisites: ROOT, NOBODY (can run commands as user nobody, and nobody
# can reach hotset and $TRASH), CACHESTAT,
# REALFS (scratch space on a filesystem with real page-cache eviction, i.e.
# not tmpfs or overlayfs), BPF (the eBPF record backend is built in),
# MAKE (make and install, for hs_make), ZSH (zsh is installed),
# SYSTEMD_ANALYZE (systemd-analyze is installed), CHROMIUM (a headless
# chromium, for the HTML reports: chromium_run).

set -u
: "${HOTSET:?HOTSET must point at the hotset binary (tests/run sets it)}"
HOTSET=$(readlink -f "$HOTSET")
TESTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
HELPERS=${HELPERS:-$(dirname "$HOTSET")/tests/helpers}
test_count=0 test_failed=0
test_name=$(basename "$0" .sh)
TRASH_ROOT=${TRASH_ROOT:-/var/tmp}
TRASH=$(mktemp -d "$TRASH_ROOT/hotset-test.$test_name.XXXXXX")
chmod 755 "$TRASH"
cleanup_trash() { rm -rf "$TRASH"; }
trap cleanup_trash EXIT

# The unprivileged tests run hotset and the helpers as nobody, who cannot
# reach them in a clone under a private directory (mktemp -d makes 0700
# directories; homes are often 0750 or 0700). So the tests run copies, in
# $TRASH/bin (0755, under /var/tmp): HOTSET and HELPERS name the copies,
# HOTSET_BUILT and HELPERS_BUILT the files in the build tree.
HOTSET_BUILT=$HOTSET HELPERS_BUILT=$HELPERS
copy_binaries() {
	local h
	mkdir -m 755 "$TRASH/bin" "$TRASH/bin/helpers" || return
	if [ -f "$HOTSET" ]; then
		cp "$HOTSET" "$TRASH/bin/hotset" && HOTSET=$TRASH/bin/hotset
	fi
	for h in "$HELPERS"/*; do
		if [ -f "$h" ] && [ -x "$h" ]; then cp "$h" "$TRASH/bin/helpers/" || return; fi
	done
	HELPERS=$TRASH/bin/helpers
	chmod -R go+rX "$TRASH/bin"
}
copy_binaries || echo "# cannot copy the binaries into $TRASH/bin" >&2

hotset() { "$HOTSET" "$@"; }
# The system Python: a python3 earlier on PATH (pyenv shims) can take seconds to start.
PYTHON=/usr/bin/python3
[ -x "$PYTHON" ] || PYTHON=$(command -v python3)
python3() { "$PYTHON" "$@"; }

# ---- pages -----------------------------------------------------------------
ps=$(getconf PAGESIZE)
pagetool() { "$HELPERS/pagetool" "$@"; }
# mkpages FILE N: a file of N pages, not in the cache
mkpages() { head -c $(($2 * ps)) /dev/zero | tr '\0' x > "$1" && pagetool evict "$1"; }
# The page cache is shared with the whole machine: memory pressure or a
# drop_caches elsewhere can take pages a test has just read. A check of
# exact residency reads its pages and checks again, up to three times,
# before it fails.
retry() { local i; for i in 1 2 3; do "$@" && return 0; echo "# again: $1" >&2; done; return 1; }

# ---- prerequisites -------------------------------------------------------
prereq_ROOT() { [ "$(id -u)" -eq 0 ]; }
# may mount a tmpfs (a file system of its own, a small or a full one)
prereq_MOUNT() { [ "$(id -u)" -eq 0 ] && mkdir -p "$TRASH/m" && mount -t tmpfs none "$TRASH/m" 2>/dev/null && umount "$TRASH/m"; }
# NOBODY also needs hotset where nobody can run it (TRASH_ROOT may be private).
prereq_NOBODY() {
	[ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null &&
		as_nobody test -x "$HOTSET" -a -x "$TRASH"
}
prereq_CACHESTAT() { "$HELPERS/pagetool" has-cachestat; }
prereq_REALFS() {
	local fs; fs=$(stat -f -c %T "$TRASH")
	[ "$fs" != tmpfs ] && [ "$fs" != overlayfs ] && [ "$fs" != overlay ]
}
prereq_BPF() { "$HOTSET" record --backend=bpf --probe >/dev/null 2>&1; }
# SLOWDISK: a cgroup can throttle reads from the test's disk (scripts/slow-disk.sh)
. "$TESTS_DIR/../scripts/slow-disk.sh"
prereq_SLOWDISK() { slow_disk_make "$TRASH" 1000 $((1 << 30)) && slow_disk_remove; }
# ASAN: hotset is built with AddressSanitizer (make SANITIZE=1); PLAIN: it is not
prereq_ASAN() { ldd "$HOTSET" 2>/dev/null | grep -q libasan; }
prereq_PLAIN() { ! prereq_ASAN; }
prereq_ZSH() { command -v zsh >/dev/null; }
prereq_SYSTEMD_ANALYZE() { command -v systemd-analyze >/dev/null; }
# A headless browser, to render the HTML reports.
CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || echo)}
prereq_CHROMIUM() { [ -n "$CHROMIUM" ] && [ -x "$CHROMIUM" ]; }
# chromium_run ARGS...: the headless browser, with what a test machine lacks turned off
chromium_run() {
	HOME=$TRASH timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu \
		--no-first-run --user-data-dir="$TRASH/chromium" "$@"
}
have_prereq() {
	local p IFS=,
	for p in $1; do "prereq_$p" || { missing_prereq=$p; return 1; }; done
}

# ---- make in the repository ---------------------------------------------------
REPO=$(cd "$TESTS_DIR/.." && pwd)
prereq_MAKE() { command -v make >/dev/null && command -v install >/dev/null; }

# hs_make TARGET [VAR=VALUE...]: make TARGET in the repository, for the build
# directory of the binary under test (as the Makefile's BUILD: relative to
# the repository when inside it, build or build-asan), with PREFIX
# /usr/local unless given. -o: the binary is taken as it is, never rebuilt
# (sources may be newer than the build, and a rebuild would not be the
# binary under test).
hs_make() {
	local build; build=$(dirname "$HOTSET_BUILT")
	case $build in "$REPO"/*) build=${build#"$REPO"/};; esac
	(cd "$REPO" && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
		make -s PREFIX=/usr/local BUILD="$build" -o "$build/hotset" "$@")
}

# Run a command as the unprivileged user nobody.
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"; }

# ---- running tests -----------------------------------------------------------
test_expect_success() {
	local prereq="" desc body rc
	[ $# -eq 3 ] && { prereq=$1; shift; }
	desc=$1 body=$2
	test_count=$((test_count + 1))
	if [ -n "$prereq" ] && ! have_prereq "$prereq"; then
		echo "ok $test_count # skip $desc (missing $missing_prereq)"
		return 0
	fi
	local dir="$TRASH/$test_count"
	mkdir -p "$dir"
	chmod 755 "$dir"
	( cd "$dir" && set -e && eval "$body" ) > "$TRASH/out.$test_count" 2>&1
	rc=$?
	if [ $rc -eq 0 ]; then
		echo "ok $test_count - $desc"
	else
		echo "not ok $test_count - $desc"
		sed -e 's/^/#   /' "$TRASH/out.$test_count" | tail -n 40
		test_failed=$((test_failed + 1))
	fi
}

test_done() {
	echo "1..$test_count"
	[ "$test_failed" -eq 0 ]
}

# ---- assertions (return non-zero with a message) --------------------------------

# expect_code N cmd...: the command exits with status N.
expect_code() {
	local want=$1 rc=0; shift
	"$@" || rc=$?
	[ "$rc" -eq "$want" ] || { echo "expected exit $want, got $rc: $*" >&2; return 1; }
}

# json FILE EXPR: evaluate a Python expression over the parsed JSON in j.
json() {
	"$PYTHON" -c 'import json,sys; j=json.load(open(sys.argv[1])); r=eval(sys.argv[2]); print(r if not isinstance(r,bool) else int(r))' "$1" "$2"
}

# check_eq A B: A equals B (strings).
check_eq() { [ "$1" = "$2" ] || { echo "expected '$2', got '$1'" >&2; return 1; }; }

# Evict a file's pages (so that tests start cold) and read given ranges.
cold() { "$HELPERS/pagetool" evict "$@"; }
