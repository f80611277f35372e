#!/usr/bin/env bash
# Every JSON report against its schema, docs/json.md: exactly the keys its
# section lists (no missing, no extra, in every item), each value of its
# documented type (null only where "|null" says so), "report" the command
# and "format" 1; with cachestat(2) and with mincore(2)
# (HOTSET_NO_CACHESTAT=1), and as nobody, whose residency is unknown.
. "$(dirname "$0")/../lib.sh"

ROOT=$(cd "$TESTS_DIR/.." && pwd)
DOC=$ROOT/docs/json.md
# check_report NAME FILE [rows|norows]: FILE is a NAME report as DOC says
check_report() { python3 "$TESTS_DIR/helpers/json-schema.py" "$DOC" "$@"; }
prereq_TMPFS() { [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ]; }

# The commands `hotset --help` lists (as t0010 reads them).
commands() { "$HOTSET" --help | sed -n -e '/^Commands:$/,/^$/s/^   \([a-z][a-z0-9-]*\)  .*$/\1/p'; }

# A small tree: a file read in part, one cold, one empty, one sparse.
mktree() {
	mkdir -p d/sub && mkpages d/part 16 && mkpages d/sub/cold 3 && : > d/empty &&
	truncate -s $((64 * ps)) d/sparse && printf x | dd of=d/sparse bs=1 seek=$((8 * ps)) conv=notrunc 2>/dev/null &&
	pagetool read d/part 0-3
}

test_expect_success 'docs/json.md has a section for every command of hotset --help, and no other' '
	commands > cmds && test -s cmds &&
	check_report --sections > sections &&
	sort cmds > want && sort sections > have &&
	diff want have > diff || {
		sed -n -e "s/^< /no section ## /p" -e "s/^> /a section for no command: ## /p" diff >&2
		return 1
	}
'

test_expect_success 'the checker finds a missing key, an extra key, a wrong type and a null' '
	cat > doc.md <<-\EOF &&
	## demo

	| key | type | meaning |
	|-----|------|---------|
	| `items[].path` | string | a path |
	| `n` | int | a count |
	| `x` | number\|null | a number |
	EOF
	printf "{\"report\": \"demo\", \"format\": 1, \"n\": 1, \"x\": null}\n" > ok.json &&
	python3 "$TESTS_DIR/helpers/json-schema.py" doc.md demo ok.json norows &&
	printf "{\"report\": \"demo\", \"format\": 1, \"items\": [{\"path\": \"a\"}, {\"path\": 1, \"z\": 0}], \"x\": 1.5, \"y\": true}\n" > bad.json &&
	! python3 "$TESTS_DIR/helpers/json-schema.py" doc.md demo bad.json rows 2> err &&
	cat err &&
	grep -q "demo.items\[1\]: key .z. is not documented in ## demo" err &&
	grep -q "demo.items\[1\].path is int (1), documented as string" err &&
	grep -q "demo: key .n. is missing" err &&
	grep -q "demo: key .y. is not documented" err &&
	printf "{\"report\": \"demo\", \"format\": 2, \"n\": null, \"x\": 1}\n" > null.json &&
	! python3 "$TESTS_DIR/helpers/json-schema.py" doc.md demo null.json 2> err &&
	grep -q "demo.n is null, documented as int (not |null)" err &&
	grep -q "\"format\" is 2, not 1" err
'

# Every report, run as "hs" runs hotset: with the residency method $method.
for method in cachestat mincore; do
	if [ $method = cachestat ]; then pre=CACHESTAT,REALFS; else pre=REALFS; fi
	hs() {
		if [ "$method" = mincore ]; then HOTSET_NO_CACHESTAT=1 "$HOTSET" "$@"; else "$HOTSET" "$@"; fi
	}

	test_expect_success $pre "record and time ($method)" '
		mktree &&
		if hs record --help | grep -q -- "--report"; then
			hs record -J --report rec.json -o p.prof -- cat d/part > /dev/null
		else
			# the summary is the last thing record writes on stderr
			hs record -J -o p.prof -- cat d/part > /dev/null 2> err &&
			sed -n -e "/^{\$/,\$p" err > rec.json
		fi &&
		check_report record rec.json &&
		hs time -J -o time.json -- cat d/part > /dev/null &&
		check_report time time.json
	'

	test_expect_success $pre "show ($method)" '
		mktree &&
		hs record --trace -q -o p.prof -- cat d/part d/sub/cold > /dev/null &&
		hs show -J p.prof > show.json && check_report show show.json &&
		hs show --trace -J p.prof > trace.json && check_report show trace.json
	'

	test_expect_success $pre "status ($method)" '
		mktree &&
		hs status -J d > st.json && check_report status st.json norows &&
		hs status -v -J d > stv.json && check_report status stv.json rows &&
		hs status -J --output-all -c d > stf.json && check_report status stf.json fincore &&
		hs status -J --output-all -b d > stf.json && check_report status stf.json fincore &&
		hs snapshot -q -o p.prof d &&
		hs status -v -J -p p.prof > stp.json && check_report status stp.json rows &&
		hs status -J --output-all -p p.prof > stp.json && check_report status stp.json fincore
	'

	test_expect_success $pre "warm ($method)" '
		mktree &&
		hs warm -J d > w.json && check_report warm w.json norows &&
		pagetool evict d/part d/sub/cold &&
		hs warm -v -J d > wv.json && check_report warm wv.json rows &&
		check_eq "$(json wv.json "len(j[\"items\"]) == j[\"files\"] == 4")" 1 &&
		pagetool evict d/part &&
		hs warm -v -J --budget 2K d/part > wb.json && check_report warm wb.json rows &&
		check_eq "$(json wb.json "j[\"stopped_at_path\"]")" d/part &&
		hs snapshot -q -o p.prof d && pagetool evict d/part &&
		hs warm -v -J -p p.prof > wp.json && check_report warm wp.json rows
	'

	test_expect_success $pre,TMPFS "evict ($method)" '
		mktree &&
		hs evict -J d > e.json && check_report evict e.json norows &&
		shm=$(mktemp -d /dev/shm/hotset-test.XXXXXX) &&
		head -c $((3 * ps)) /dev/zero > "$shm/f" &&
		pagetool read d/part 0-3 &&
		{ hs evict -v -J d "$shm" > ev.json; rc=$?; rm -rf "$shm"; test $rc = 0; } &&
		check_report evict ev.json rows &&
		hs snapshot -q -o p.prof d &&
		hs evict -J -p p.prof > ep.json && check_report evict ep.json norows
	'

	test_expect_success $pre "snapshot ($method)" '
		mktree &&
		hs snapshot -J -o s.prof d > s.json && check_report snapshot s.json norows &&
		hs snapshot -v -J -o s.prof d > sv.json && check_report snapshot sv.json rows &&
		check_eq "$(json sv.json "len(j[\"items\"]) == j[\"files\"] > 0")" 1 &&
		hs snapshot -v -J -o - d > /dev/null 2> so.json && check_report snapshot so.json rows
	'

	test_expect_success $pre "keep --status ($method)" '
		mktree && mkdir psi &&
		printf "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n" > psi/memory && cp psi/memory psi/io &&
		hs snapshot -q -o p.prof d &&
		nocs=0 && if [ $method = mincore ]; then nocs=1; fi
		# not through hs, a function: $! is then the keeper
		HOTSET_NO_CACHESTAT=$nocs HOTSET_PSI_DIR=$PWD/psi "$HOTSET" keep --interval 0.2s \
			--state "$PWD/k.state" p.prof 2> keep.log &
		kpid=$! && trap "kill $kpid 2> /dev/null || :; wait $kpid 2> /dev/null || :" EXIT &&
		for i in $(seq 100); do test -s k.state && break; sleep 0.1; done &&
		hs keep --status --state "$PWD/k.state" -J > k.json && check_report keep k.json &&
		check_eq "$(json k.json "(j[\"running\"], j[\"pid\"] == $kpid)")" "(True, True)" &&
		kill $kpid && wait $kpid &&
		hs keep --status --state "$PWD/k.state" -J > k2.json && check_report keep k2.json &&
		check_eq "$(json k2.json "(j[\"running\"], j[\"pid\"])")" "(False, None)"
	'
done

test_expect_success REALFS 'curve, exact and sampled' '
	mktree &&
	hotset record --trace -q -o p.prof -- cat d/part d/sub/cold d/part > /dev/null &&
	hotset curve -J p.prof > c.json && check_report curve c.json &&
	hotset curve -J --sample 50% p.prof > cs.json && check_report curve cs.json &&
	hotset curve -J --sample-size 8 --points 3 p.prof > cz.json && check_report curve cz.json &&
	check_eq "$(json cz.json "len(j[\"points\"]), j[\"sample_size\"]")" "(3, 8)"
'

test_expect_success REALFS 'doctor, of a run and of a profile' '
	mktree &&
	hotset doctor -J --profile-output p.prof -- sh -c "cat d/part d/sub/cold > /dev/null" > d.json &&
	check_report doctor d.json &&
	hotset doctor -J -p p.prof > dp.json && check_report doctor dp.json
'

# As nobody, the residency of a file it may only read is unknown: the keys
# that may be null are null, and documented so.
test_expect_success NOBODY,REALFS 'status as nobody' '
	mktree && chmod -R go+rX d &&
	as_nobody "$HOTSET" status -v -J d > st.json && check_report status st.json rows &&
	as_nobody "$HOTSET" status -J -c --output-all d > st.json && check_report status st.json fincore &&
	check_eq "$(json st.json "[r[\"file\"] for r in j[\"fincore\"] if r[\"pages\"] is None][-1]")" TOTAL
'

test_expect_success NOBODY,REALFS 'warm, evict and snapshot as nobody' '
	mktree && mkdir out && chown nobody out && chmod -R go+rX d &&
	as_nobody "$HOTSET" warm -v -J d > w.json && check_report warm w.json rows &&
	check_eq "$(json w.json "sorted(i[\"path\"] for i in j[\"items\"] if i[\"read_pages\"] is None) == [\"d/part\", \"d/sparse\", \"d/sub/cold\"]")" 1 &&
	as_nobody "$HOTSET" evict -J d > e.json && check_report evict e.json norows &&
	expect_code 1 as_nobody "$HOTSET" snapshot -q -J -o out/s.prof d > s.json &&
	check_report snapshot s.json norows
'

test_done
