#!/usr/bin/env bash
# hotset curve: the miss curve of a profile's trace, exact against known
# traces and against an LRU simulated here (over a job recorded for real);
# its CSV, JSON and SVG; sampling; the kernel model (readahead, --sizes
# printing exactly the sizes asked, a curve that goes on until a re-run
# reads nothing, "never" only when true, which model the default picks);
# a sample of no page, unknown; a profile without a trace; usage errors;
# --mem-request, from the curve and the run figures record writes; doctor
# and run counting the same model's need.
. "$(dirname "$0")/../lib.sh"

HEAD='hotset-profile 1
page-size 4096
source record'

# A file of 64 pages read twice: a cyclic scan of 64 pages.
twice() {
	printf '%s\nf 8:1 12 262144 1.000000000 r 0-63 /data\nt 0 0-31,32-63,0-63\nend 1 0 1\n' \
		"$HEAD" > twice.prof
}

test_expect_success 'a 64-page file read twice: everything misses below 64 pages, cold misses only at 64' '
	twice &&
	hotset curve -J --model lru --points 65 twice.prof > j &&
	check_eq "$(json j "(j[\"accesses\"], j[\"working_set_bytes\"], j[\"page_size\"])")" "(128, 262144, 4096)" &&
	check_eq "$(json j "j[\"policy\"] + \" \" + str(j[\"read_ahead_bytes\"])")" "lru None" &&
	check_eq "$(json j "(j[\"rerun_zero_bytes\"], j[\"knee_bytes\"], j[\"hits90_bytes\"], j[\"hits99_bytes\"])")" \
		"(262144, 262144, 262144, 262144)" &&
	check_eq "$(json j "(j[\"cold_hits90_bytes\"], j[\"cold_hits99_bytes\"], j[\"sampling\"], j[\"sample_size\"])")" \
		"(None, None, None, None)" &&
	check_eq "$(json j "len(j[\"points\"])")" 65 &&
	check_eq "$(json j "all(p[\"cache_bytes\"] == i * 4096 for i, p in enumerate(j[\"points\"]))")" 1 &&
	check_eq "$(json j "all(p[\"miss_bytes_cold\"] == p[\"miss_bytes_rerun\"] == 128 * 4096 for p in j[\"points\"][:64])")" 1 &&
	check_eq "$(json j "(j[\"points\"][64][\"miss_bytes_cold\"], j[\"points\"][64][\"miss_bytes_rerun\"])")" "(262144, 0)"
'

test_expect_success 'CSV: a header, then the points of the JSON' '
	twice &&
	hotset curve --model lru --csv --points 5 twice.prof > c &&
	cat > want <<-\EOF &&
	cache_bytes,miss_bytes_cold,miss_bytes_rerun
	0,524288,524288
	65536,524288,524288
	131072,524288,524288
	196608,524288,524288
	262144,262144,0
	EOF
	diff want c
'

test_expect_success 'the report for people: headline figures, a chart in 80 columns, a table' '
	twice &&
	hotset curve --model lru twice.prof > out &&
	grep -q "^Accesses:     128 pages (512.0 KiB read with no cache)$" out &&
	grep -q "^Working set:  64 pages (256.0 KiB)" out && grep -q "^Model:        least recently used" out &&
	grep -q "^Re-run:       reads nothing with 256.0 KiB of cache$" out &&
	grep -q "^Sampling:     none: exact" out &&
	grep -q "^  64.0 KiB   512.0 KiB  100.0%   512.0 KiB  100.0%" out &&
	grep -q "^ 256.0 KiB   256.0 KiB   50.0%         0 B    0.0%  knee, 90% hits, 99% hits,$" out &&
	grep -q "^ \{54\}re-run reads nothing,$" out && grep -q "^ \{54\}working set$" out &&
	check_eq "$(grep -c "^ *[0-9.]* [KMG]*i*B  " out)" 5 &&
	! awk "length > 80" out | grep . &&
	hotset curve --model lru -p twice.prof > out2 && cmp out out2
'

test_expect_success 'SVG: written whole, parses as XML, with both series; nothing left beside it' '
	twice && mkdir o &&
	hotset curve --svg o/c.svg twice.prof > /dev/null &&
	python3 -c "
import sys, xml.etree.ElementTree as E
r = E.parse(\"o/c.svg\").getroot()
lines = r.findall(\"{http://www.w3.org/2000/svg}polyline\")
sys.exit(0 if r.tag.endswith(\"svg\") and len(lines) == 2 else \"bad svg\")" &&
	check_eq "$(ls -A o)" c.svg &&
	hotset curve --svg - twice.prof > s.svg && python3 -c "import xml.etree.ElementTree as E; E.parse(\"s.svg\")" &&
	expect_code 2 hotset curve --svg nodir/c.svg twice.prof > /dev/null 2> err &&
	grep -q "nodir/c.svg: cannot write" err
'

test_expect_success 'a profile without a trace: say to record with --trace, exit 2' '
	printf "%s\nf 8:1 12 262144 1.000000000 r 0-63 /data\nend 1 0 0\n" "$HEAD" > plain.prof &&
	expect_code 2 hotset curve plain.prof 2> err &&
	grep -q "plain.prof: the profile has no access trace; record the job with .hotset record --trace" err
'

test_expect_success 'a trace page its file line lacks: the line, exit 2' '
	printf "%s\nf 8:1 12 262144 1.000000000 r 0-3 /data\nt 0 0-3\nt 0 4\nend 1 0 2\n" "$HEAD" > bad.prof &&
	expect_code 2 hotset curve bad.prof 2> err &&
	grep -q "bad.prof:6: page 4 of file 0 is in the trace but not among the file.s pages" err
'

test_expect_success 'usage errors' '
	twice &&
	expect_code 2 hotset curve -J --csv twice.prof 2> err && grep -q "choose one" err &&
	expect_code 2 hotset curve --sample 1% --sample-size 10 twice.prof 2> err && grep -q "choose one" err &&
	expect_code 2 hotset curve --sample 0 twice.prof 2> err && grep -q "rate above 0" err &&
	expect_code 2 hotset curve --sample 150% twice.prof 2>/dev/null &&
	expect_code 2 hotset curve --sample x twice.prof 2>/dev/null &&
	expect_code 2 hotset curve --points 1 twice.prof 2>/dev/null &&
	expect_code 2 hotset curve --sample-size 0 twice.prof 2>/dev/null &&
	expect_code 2 hotset curve 2>/dev/null &&
	expect_code 2 hotset curve twice.prof twice.prof 2>/dev/null
'

test_expect_success 'sampling: an estimate, said so; a rate of 1 is exact' '
	twice &&
	hotset curve -J --sample 50% twice.prof > j &&
	check_eq "$(json j "(j[\"sampling\"], j[\"accesses\"], j[\"working_set_bytes\"], j[\"sampled_pages\"] <= 64)")" "(0.5, 128, 262144, True)" &&
	hotset curve -J --sample-size 16 twice.prof > j &&
	check_eq "$(json j "(j[\"sample_size\"], j[\"sampled_pages\"] <= 16, j[\"sampling\"] < 1)")" "(16, True, True)" &&
	hotset curve -J --sample 1 twice.prof > j && check_eq "$(json j "j[\"sampling\"]")" None &&
	hotset curve --sample 0.5 twice.prof > out && grep -q "^Sampling:     SHARDS at 50%" out
'

test_expect_success 'kernel model: a cyclic scan without readahead misses as LRU does' '
	twice &&
	hotset curve -J --model kernel --read-ahead 0 --points 5 twice.prof > j &&
	check_eq "$(json j "j[\"policy\"] + \" \" + str((j[\"read_ahead_bytes\"], j[\"working_set_bytes\"]))")" "kernel (0, 262144)" &&
	check_eq "$(json j "[(p[\"cache_bytes\"] // 4096, p[\"miss_bytes_cold\"] // 4096, p[\"miss_bytes_rerun\"] // 4096) for p in j[\"points\"]]")" \
		"[(0, 128, 128), (16, 128, 128), (32, 128, 128), (48, 128, 128), (64, 64, 0)]" &&
	hotset curve --model kernel --read-ahead 0 twice.prof > out &&
	grep -q "^Model:        the kernel.s active and inactive lists, refaults and readahead$" out &&
	grep -Eq "^ {14}\(up to 0 B\), simulated at [0-9]+ sizes up to 256.0 KiB$" out &&
	grep -q "^Sampling:     none: every access simulated$" out &&
	! awk "length > 80" out | grep .
'

test_expect_success 'kernel model: readahead reads what LRU does not, up to the window and the end of the file' '
	printf "%s\nf 8:1 12 1048576 1.000000000 r 0-9 /data\nt 0 0-9\nend 1 0 1\n" "$HEAD" > ra.prof &&
	hotset curve -J --model kernel --read-ahead 128K --sizes 4M ra.prof > j &&
	check_eq "$(json j "(j[\"read_ahead_bytes\"], [(p[\"cache_bytes\"], p[\"miss_bytes_cold\"], p[\"miss_bytes_rerun\"]) for p in j[\"points\"]])")" \
		"(131072, [(4194304, 131072, 0)])" &&
	hotset curve -J --model lru --sizes 4M ra.prof > j &&
	check_eq "$(json j "j[\"points\"][0][\"miss_bytes_cold\"]")" 40960 &&
	printf "%s\nf 8:1 12 20480 1.000000000 r 0-2 /data\nt 0 0-2\nend 1 0 1\n" "$HEAD" > small.prof &&
	hotset curve -J --model kernel --read-ahead 128K --sizes 4M small.prof > j &&
	check_eq "$(json j "j[\"points\"][0][\"miss_bytes_cold\"]")" 20480
'

test_expect_success '--sizes: the points at those sizes, sorted, once each; beyond the working set too' '
	twice &&
	hotset curve -J --model lru --sizes 1M,64K,64K twice.prof > j &&
	check_eq "$(json j "[(p[\"cache_bytes\"], p[\"miss_bytes_cold\"], p[\"miss_bytes_rerun\"]) for p in j[\"points\"]]")" \
		"[(65536, 524288, 524288), (1048576, 262144, 0)]" &&
	hotset curve --csv --model kernel --read-ahead 0 --sizes 1M,64K twice.prof > c &&
	printf "cache_bytes,miss_bytes_cold,miss_bytes_rerun\n65536,524288,524288\n1048576,262144,0\n" > want &&
	diff want c
'

test_expect_success 'the default model: the kernel for a short trace, LRU when sampling' '
	twice &&
	hotset curve -J twice.prof > j && check_eq "$(json j "j[\"policy\"]")" kernel &&
	hotset curve -J --model auto twice.prof > j && check_eq "$(json j "j[\"policy\"]")" kernel &&
	hotset curve -J --sample 50% twice.prof > j && check_eq "$(json j "j[\"policy\"]")" lru
'

test_expect_success 'kernel model: usage errors' '
	twice &&
	expect_code 2 hotset curve --model fifo twice.prof 2> err && grep -q "lru., .kernel. or .auto., not .fifo." err &&
	expect_code 2 hotset curve --model kernel --sample-size 10 twice.prof 2> err && grep -q "sample-size (SHARDS) is for --model lru" err &&
	expect_code 2 hotset curve --model lru --read-ahead 1M twice.prof 2> err && grep -q "read-ahead is for --model kernel" err &&
	expect_code 2 hotset curve --points 5 --sizes 1M twice.prof 2> err && grep -q "choose one" err &&
	expect_code 2 hotset curve --sizes 1M,x twice.prof 2>/dev/null &&
	expect_code 2 hotset curve --sizes , twice.prof 2>/dev/null &&
	expect_code 2 hotset curve --read-ahead lots twice.prof 2>/dev/null
'

# A rate so small that no page hash falls below its threshold: the
# histogram's bucket width doubled until it wrapped to 0, and looped forever.
test_expect_success 'a rate too small to sample any page ends, with no page sampled' '
	twice &&
	timeout 60 "$HOTSET" curve -J --sample 1e-300 twice.prof > j &&
	check_eq "$(json j "(j[\"accesses\"], j[\"sampled_pages\"], len(j[\"points\"]))")" "(128, 0, 101)"
'

# The distinct pages are counted exactly: a sampled estimate read 2 or 4
# times the working set at the working set's size, and gave it as the size
# a re-run needs; or fewer bytes than the working set for a cold start.
test_expect_success 'sampled estimates within the bounds the exact page count sets' '
	twice &&
	for s in "--sample-size 1" "--sample-size 2" "--sample 0.01" "--sample 0.3"; do
		hotset curve -J --points 65 $s twice.prof > j &&
		# none known when the sample follows no page (0.01 of 64 pages)
		check_eq "$(json j "all((j[k] is None) if j[\"sampled_pages\"] == 0 else j[k] <= j[\"working_set_bytes\"] for k in (\"rerun_zero_bytes\", \"knee_bytes\", \"hits90_bytes\", \"hits99_bytes\"))")" 1 &&
		check_eq "$(json j "all(p[\"miss_bytes_cold\"] >= 262144 for p in j[\"points\"])")" 1 &&
		check_eq "$(json j "(j[\"points\"][64][\"miss_bytes_cold\"], j[\"points\"][64][\"miss_bytes_rerun\"])")" "(262144, 0)" || return 1
	done
'

# The trace of a real job, replayed through an LRU cache simulated here:
# the curve must give the same misses at every point.
simulate() {
	python3 - "$1" "$2" <<-\PY
	import json, sys
	from collections import OrderedDict
	show, curve = (json.load(open(f)) for f in sys.argv[1:3])
	ps = show["page_size"]
	trace = [(f, p) for f, a, b in show["trace"] for p in range(a, b + 1)]
	def misses(size, passes):
	    lru, n = OrderedDict(), 0
	    for k in range(passes):
	        for page in trace:
	            if page in lru:
	                lru.move_to_end(page)
	                continue
	            n += k == passes - 1
	            if size:
	                lru[page] = 1
	                if len(lru) > size:
	                    lru.popitem(last=False)
	    return n * ps
	assert curve["accesses"] == len(trace), (curve["accesses"], len(trace))
	assert curve["working_set_bytes"] == len(set(trace)) * ps
	for p in curve["points"]:
	    size = p["cache_bytes"] // ps
	    want = (misses(size, 1), misses(size, 2))
	    got = (p["miss_bytes_cold"], p["miss_bytes_rerun"])
	    assert got == want, "at %d pages: %r, simulated %r" % (size, got, want)
	PY
}

test_expect_success REALFS 'a recorded job: cat reading a 64-page file twice' '
	mkpages f 64 &&
	hotset record --trace -q -o p.prof -- cat f f > /dev/null &&
	hotset show --trace -J p.prof > show.json &&
	hotset curve -J --model lru --points 41 p.prof > j &&
	simulate show.json j &&
	ws=$(json j "j[\"working_set_bytes\"]") &&
	test "$ws" -ge $((64 * ps)) &&
	check_eq "$(json j "(j[\"points\"][-1][\"cache_bytes\"] == $ws, j[\"points\"][-1][\"miss_bytes_cold\"] == $ws, j[\"points\"][-1][\"miss_bytes_rerun\"])")" "(True, True, 0)" &&
	check_eq "$(json j "all(p[\"miss_bytes_rerun\"] >= 128 * $ps for p in j[\"points\"] if p[\"cache_bytes\"] < 64 * $ps)")" 1 &&
	check_eq "$(json j "j[\"rerun_zero_bytes\"] >= 64 * $ps")" 1
'

test_expect_success '--mem-request: the cache a re-run needs, what the run wrote and its RSS, as --mem' '
	twice &&
	# without the run figures: the cache alone, at least 1M; the rest unknown
	hotset curve --model lru --mem-request twice.prof > out && cat out &&
	grep -q "^--mem=1M: the memory a warm re-run of twice.prof needs" out &&
	grep -q "^  cache  *256.0 KiB  the least cache at which a re-run reads nothing$" out &&
	grep -q "^  written  *unknown" out && grep -q "^  own memory  *unknown" out &&
	check_eq "$(hotset curve --model lru --mem-request -q twice.prof)" 1M &&
	hotset curve --model lru -J twice.prof > j &&
	check_eq "$(json j "(j[\"memory_needed_bytes\"], j[\"memory_needed_read_bytes\"], j[\"memory_needed_written_bytes\"], j[\"memory_needed_rss_bytes\"])")" \
		"(262144, 262144, None, None)" &&
	check_eq "$(json j "j[\"memory_needed_source\"] + \" \" + j[\"mem_request\"]")" "curve 1M" &&
	# with them, as record writes them: 256K + 1M + 10M = 11.25M, rounded up
	sed -e "s/^page-size 4096$/&\nmax-rss 10485760\nwrite-bytes 1048576/" twice.prof > run.prof &&
	hotset curve --model lru --mem-request run.prof > out && cat out &&
	grep -q "^--mem=12M: " out &&
	grep -q "^  written  *1.0 MiB  what its recorded run wrote" out &&
	grep -q "^  own memory  *10.0 MiB  the peak RSS of its largest process$" out &&
	check_eq "$(hotset curve --model lru --mem-request -q run.prof)" 12M &&
	hotset curve --model lru -J run.prof > j &&
	check_eq "$(json j "(j[\"memory_needed_bytes\"], j[\"memory_needed_written_bytes\"], j[\"memory_needed_rss_bytes\"])")" \
		"(11796480, 1048576, 10485760)" &&
	check_eq "$(json j "j[\"mem_request\"]")" 12M &&
	hotset curve --model lru run.prof > out &&
	grep -q "^Memory:       11.2 MiB for a re-run to read nothing (sbatch --mem=12M)$" out &&
	# exactly 1 MiB is 1M, not 2M
	sed -e "s/^page-size 4096$/&\nmax-rss 786432/" twice.prof > mib.prof &&
	check_eq "$(hotset curve --model lru --mem-request -q mib.prof)" 1M &&
	expect_code 2 hotset curve --mem-request --csv twice.prof 2> err && grep -q "choose one" err
'

test_expect_success REALFS 'record writes the max-rss and write-bytes of the run, which --mem-request counts' '
	mkpages f 64 &&
	hotset record --trace -q -o p.prof -- sh -c "cat f > /dev/null; head -c 1M /dev/zero > out; sync out" &&
	rss=$(sed -n "s/^max-rss //p" p.prof) && wb=$(sed -n "s/^write-bytes //p" p.prof) &&
	test "$rss" -gt 0 && test "$wb" -ge 1048576 &&
	hotset curve -J --model lru p.prof > j &&
	check_eq "$(json j "(j[\"memory_needed_rss_bytes\"], j[\"memory_needed_written_bytes\"])")" "($rss, $wb)" &&
	check_eq "$(json j "j[\"memory_needed_bytes\"] == j[\"memory_needed_read_bytes\"] + $rss + $wb")" 1 &&
	hotset show -J p.prof > show.json &&
	check_eq "$(json show.json "(j[\"max_rss_bytes\"], j[\"write_bytes\"])")" "($rss, $wb)" &&
	hotset show p.prof | grep -q "^Run:      peak RSS .*, wrote "
'

# A profile of TRACE lines over files of 256 pages on device 8:1: "t 0 0-9" ...
manyfiles() {
	{
		printf '%s\n' "$HEAD"
		for i in 0 1 2 3 4 5 6 7; do
			printf 'f 8:1 %d 1048576 1.000000000 r 0-255 /data%d\n' $((20 + i)) $i
		done
		printf '%s\n' "$@"
		printf 'end 8 0 %d\n' $#
	} > many.prof
}

# Every --sizes list gives exactly its sizes (in whole pages, sorted, once
# each), in the CSV, the JSON and the table, each with the value the size
# alone gives: a table printed 0 B and the quarters of the working set
# besides, with the values of the sizes below them (the first asked, for
# sizes below all of them).
test_expect_success '--sizes: exactly the sizes asked, each with its own value (kernel and LRU)' '
	manyfiles "t 0 0-9" "t 1 0-255" "t 2 0-3" "t 3 100-120" "t 0 0-9" "t 1 0-255" "t 4 0-255" "t 2 0-3" &&
	for lists in "70K,100K" "0,4K,1M" "4097,8K,8191,12K,9M" "2M,300K,2M,5K,64K" "1M"; do
		for m in kernel lru; do
			hotset curve --csv --model $m --sizes $lists many.prof > c &&
			python3 - "$lists" c <<-\PY || return 1
			import sys
			want = sorted({int(float(s[:-1]) * 1024 ** " KMG".index(s[-1])) // 4096 if s[-1] in "KMG" else int(s) // 4096
			               for s in sys.argv[1].split(",")})
			got = [int(l.split(",")[0]) // 4096 for l in open(sys.argv[2]).read().split()[1:]]
			assert got == want, (got, want)
			PY
			hotset curve --model $m --sizes $lists many.prof > out &&
			check_eq "$(sed -n "/^     CACHE/,\$p" out | grep -c "^ *[0-9.]* [KMG]*i*B  ")" "$(($(wc -l < c) - 1))" &&
			tail -n +2 c | while IFS=, read -r size cold rerun; do
				hotset curve --csv --model $m --sizes $size many.prof | tail -n 1 > one &&
				check_eq "$(cat one)" "$size,$cold,$rerun" || return 1
			done || return 1
		done
	done
'

# Readahead reads past what the job asks for: pages 0-9 of a file, twice,
# read 32 pages with a window of 128 KiB. The curve stopped at the working
# set (10 pages) and said a re-run reads from the disk at every size.
test_expect_success 'the default curve goes on past the working set until a re-run reads nothing' '
	printf "%s\nf 8:1 12 1048576 1.000000000 r 0-9 /data\nt 0 0-9\nt 0 0-9\nend 1 0 2\n" "$HEAD" > ra.prof &&
	hotset curve --read-ahead 128K ra.prof > out && cat out &&
	grep -q "^Re-run:       reads nothing with 128.0 KiB of cache$" out &&
	grep -q "^Memory:       128.0 KiB for a re-run to read nothing" out &&
	hotset curve -J --read-ahead 128K ra.prof > j &&
	check_eq "$(json j "(j[\"working_set_bytes\"], j[\"rerun_zero_bytes\"], j[\"curve_end_bytes\"], j[\"never_up_to_bytes\"], j[\"memory_needed_read_bytes\"])")" \
		"(40960, 131072, 131072, None, 131072)" &&
	check_eq "$(json j "(j[\"points\"][-1][\"cache_bytes\"], j[\"points\"][-1][\"miss_bytes_rerun\"], max(p[\"cache_bytes\"] for p in j[\"points\"] if p[\"miss_bytes_rerun\"]) < 131072)")" \
		"(131072, 0, True)" &&
	check_eq "$(json j "len(j[\"points\"]) == j[\"simulated_sizes\"] and j[\"model\"] == \"kernel\"")" 1 &&
	hotset curve --read-ahead 128K --mem-request -q ra.prof > q && check_eq "$(cat q)" 1M &&
	# a sample (of its one block, all of it): the same, not LRU'"'"'s nothing beyond the working set
	hotset curve --csv --read-ahead 128K --sizes 40K,128K ra.prof > whole.csv &&
	hotset curve --csv --read-ahead 128K --model kernel --sample 0.9 --sizes 40K,128K ra.prof > sample.csv &&
	diff whole.csv sample.csv && hotset curve -J --model kernel --sample 0.9 ra.prof > s.json &&
	check_eq "$(json s.json "j[\"sampling\"] is not None")" 1
'

# A file read with O_DIRECT is read at every access: no cache makes a
# re-run read nothing, and that is said for every size, with the least it
# reads; without the file, the same job reads nothing from 16 pages.
test_expect_success '"never" only when true: a re-run of an O_DIRECT reader reads at any size' '
	printf "%s\nf 8:1 12 65536 1.000000000 r 0-15 /a\nf 8:1 13 65536 1.000000000 rd 0-3 /b\nt 0 0-15\nt 1 0-3\nt 0 0-15\nend 2 0 3\n" "$HEAD" > d.prof &&
	hotset curve --read-ahead 0 d.prof > out && cat out &&
	grep -q "^Re-run:       reads from the disk at any size: at least 16.0 KiB, from 64.0 KiB of$" out &&
	hotset curve -J --read-ahead 0 d.prof > j &&
	check_eq "$(json j "(j[\"rerun_zero_bytes\"], j[\"rerun_floor_bytes\"], j[\"rerun_floor_read_bytes\"], j[\"never_up_to_bytes\"], j[\"hits99_bytes\"])")" \
		"(None, 65536, 16384, None, None)" &&
	hotset curve --read-ahead 0 --mem-request d.prof > m && grep -q "needs to read the least from the disk" m &&
	grep -q "^Hits:         90% with no size, 99% with no size (re-run)$" out
'

# The cold start of a job reads more than it accessed with a small cache
# (readahead evicting what it read): the charts cut it off at the accesses.
test_expect_success 'the charts hold the most any point reads; the SVG legend is under the plot' '
	manyfiles "t 0 0" "t 0 100" "t 0 200" "t 1 50" "t 1 150" "t 0 0" "t 0 100" "t 0 200" "t 1 50" "t 1 150" &&
	hotset curve -J --read-ahead 128K many.prof > j &&
	top=$(json j "max(max(p[\"miss_bytes_cold\"], p[\"miss_bytes_rerun\"]) for p in j[\"points\"])") &&
	test "$top" -gt "$(json j "j[\"accesses\"] * 4096")" &&
	hotset curve --read-ahead 128K many.prof > out && cat out &&
	label=$(sed -n "/^Bytes read/{n;n;p}" out | sed "s/ *|.*//; s/^ *//") &&
	python3 -c "
import sys
n, u = sys.argv[1].split()
assert float(n) * 1024 ** [\"B\", \"KiB\", \"MiB\", \"GiB\"].index(u) >= int(sys.argv[2]) * 0.99, sys.argv[1:]" "$label" "$top" &&
	hotset curve --read-ahead 128K --svg c.svg many.prof > /dev/null &&
	python3 - c.svg "$top" <<-\PY
	import sys, xml.etree.ElementTree as E
	ns = "{http://www.w3.org/2000/svg}"
	r = E.parse(sys.argv[1]).getroot()
	box = next(e for e in r.iter(ns + "rect") if e.get("stroke") == "black")
	x0, y0 = float(box.get("x")), float(box.get("y"))
	x1, y1 = x0 + float(box.get("width")), y0 + float(box.get("height"))
	pts = [tuple(map(float, p.split(","))) for l in r.iter(ns + "polyline") for p in l.get("points").split()]
	assert all(x0 <= x <= x1 and y0 <= y <= y1 for x, y in pts), pts
	assert min(y for x, y in pts) <= y0 + 1, "the highest point is at the top of the axis"
	names = [t for t in r.iter(ns + "text") if t.text in ("cold start", "re-run")]
	assert len(names) == 2 and all(float(t.get("y")) > y1 + 30 for t in names), "legend under the plot"
	PY
'

# A sample of no page follows nothing: the knee and the sizes it gave were
# those of an empty curve, printed as if known.
test_expect_success '--sample so small that no page is followed: the sizes are unknown, and said so' '
	twice &&
	hotset curve -J --sample 1e-9 twice.prof > j &&
	check_eq "$(json j "(j[\"sampled_pages\"], j[\"curve_known\"], j[\"knee_bytes\"], j[\"rerun_zero_bytes\"], j[\"hits90_bytes\"], j[\"hits99_bytes\"], j[\"cold_hits90_bytes\"])")" \
		"(0, False, None, None, None, None, None)" &&
	check_eq "$(json j "(j[\"memory_needed_source\"], j[\"memory_needed_read_bytes\"])")" "('"'"'working-set'"'"', 262144)" &&
	hotset curve --sample 1e-9 twice.prof > out && cat out &&
	grep -q "^Re-run:       unknown: the sample follows no page" out &&
	grep -q "^Knee:         unknown" out && grep -q "^Hits:         90% with unknown, 99% with unknown" out
'

# doctor's chart and need were LRU's while curve's were the kernel's: the
# same job, two answers. Both now read the curve of the kernel model, as
# run does for a job's need (after its first run, which records it).
test_expect_success 'doctor, run and --mem-request count the one model'"'"'s need' '
	printf "%s\nf 8:1 12 1048576 1.000000000 r 0-9 /data\nt 0 0-9\nt 0 0-9\nend 1 0 2\n" "$HEAD" > ra.prof &&
	hotset curve -J ra.prof > c.json &&
	hotset doctor -J -p ra.prof > d.json &&
	check_eq "$(json d.json "(j[\"model\"], j[\"memory_needed_read_bytes\"])")" \
		"$(json c.json "(j[\"model\"], j[\"memory_needed_read_bytes\"])")" &&
	check_eq "$(json c.json "(j[\"model\"], j[\"memory_needed_read_bytes\"] > j[\"working_set_bytes\"])")" "('"'"'kernel'"'"', True)" &&
	hotset doctor -p ra.prof > d.out && grep -q "read: the least cache at which a re-run reads the least (nothing, most often), by the curve of the kernel model" d.out
'

test_expect_success REALFS 'run'"'"'s need of a job is its profile'"'"'s, by the same model' '
	mkpages big 256 &&
	echo "a head -c 40960 $PWD/big > /dev/null; head -c 40960 $PWD/big > /dev/null" > jobs &&
	"$HOTSET" run -q --state "$PWD/st" jobs &&
	"$HOTSET" run -q -J --state "$PWD/st" jobs > r.json &&
	hotset curve -J st/jobs/a/profile > c.json &&
	check_eq "$(json r.json "j[\"model\"]")" kernel &&
	check_eq "$(json r.json "j[\"jobs\"][0][\"memory_needed_bytes\"]")" "$(json c.json "j[\"memory_needed_bytes\"]")" &&
	# readahead reads more of the file than the job does: LRU counted the job'"'"'s pages alone
	check_eq "$(json c.json "j[\"memory_needed_read_bytes\"] > j[\"working_set_bytes\"]")" 1
'

test_expect_success 'bad profiles: missing, a FIFO (never opened), malformed with its line; exit 2' '
	expect_code 2 hotset curve nope.prof 2> err && grep -q "nope.prof: No such file" err &&
	mkfifo ff && expect_code 2 timeout 10 "$HOTSET" curve ff 2> err && grep -q "not a regular file" err &&
	printf "hotset-profile 1\nbogus line\n" > bad.prof &&
	expect_code 2 hotset curve bad.prof 2> err && grep -q "^hotset: bad.prof:2: " err
'

# The kernel model's tables, one counter a block of each file, take 512 KiB
# a file of 2^50 bytes: with no allocation above 8 MiB, 64 such files make
# the model fail part-way through its set-up, and what it held is freed.
test_expect_success ASAN 'the kernel model out of memory as it is set up: an error, and nothing leaked' '
	{
		printf "%s\n" "$HEAD" &&
		for i in $(seq 0 63); do
			printf "f 8:1 %d 1125899906842624 1.000000000 r 0-0 /data%d\n" $((i + 10)) $i
		done &&
		printf "t 0 0\nend 64 0 1\n"
	} > huge.prof &&
	expect_code 2 env ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1:max_allocation_size_mb=8 \
		"$HOTSET" curve --model kernel --read-ahead 128K huge.prof > out 2> err &&
	grep -q "^hotset: huge.prof: Cannot allocate memory$" err &&
	! grep -q LeakSanitizer err
'

test_done
