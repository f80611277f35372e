#!/usr/bin/env bash
# bench/record.sh - what hotset record costs a job, next to the job run bare
# and under strace (the usual way to see which files a job opens):
#
#   bare      the job alone
#   ptrace    hotset record --backend=ptrace   (any user)
#   bpf       hotset record --backend=bpf      (root; left out if it cannot run)
#   strace    strace -f --seccomp-bpf -e trace=%file -o /dev/null
#   floor     bench/stop-floor: a tracer that stops the job at every close,
#             as the ptrace backend does, and does nothing else: what any
#             recorder that stops at each close costs, however fast
#   notify    bench/stop-floor --notify: the same stops made by seccomp user
#             notification instead of ptrace (the other way to stop a job
#             without privilege)
#   ptrace_t  hotset record --trace --backend=ptrace: every access, in order
#   bpf_t     hotset record --trace --backend=bpf
#   bpf_old, bpf_t_old   the same two with the hotset binary HOTSET_BEFORE
#             (another build, to measure a change in the same rounds)
#
# on two jobs, with a warm cache (each job runs once before the timed runs):
#
#   compile   a small C++ project whose build time is Boost's headers
#             (written under $BENCH_DATA/record-cxx), make -j1 after make clean
#   tar       tar c /usr/include | cat > /dev/null: many small files read
#             whole. Not `tar c ... > /dev/null`: GNU tar sees that its
#             archive is /dev/null and then does not read the files at all.
#   grep      git grep --threads=4 over a copy of /usr/include committed to
#             a repository (under $BENCH_DATA/record-grep): the same small
#             files, read by four threads at once
#   reads     bench/random-reads: 500,000 reads of 4 KiB at random pages of
#             a 64 MiB file (cached): with --trace each read is an event
#             of its own (not in the default JOBS)
#
# The tools run interleaved, round after round, so that the load of other
# people's jobs on this shared machine falls on all of them alike; the table
# gives medians, the spread (min-max), and ratios to bare (of the medians,
# and the median of each round's own ratio), and the CPU time used (user +
# system, the job's, hotset's and the tracer's): when the machine is busy,
# waiting inflates wall times, CPU time much less. Then the profiles: a --trace
# profile of the compile is far smaller than the data the compile read.
#
#   bench/record.sh       (as root for bpf; REPEATS=N rounds, default 5;
#                          RECORD_JOBS="compile tar grep" to choose;
#                          RECORD_TOOLS="bare bpf bpf_t strace" to choose
#                          tools, among those that can run here)
#
# Goals: ptrace <= 1.10x bare on the compile, <= 2x on tar; bpf <= 1.05x on
# both. The threaded grep has no goal: it shows what threads cost.
. "$(dirname "$0")/lib.sh"

need_hotset
need_pkgs time strace g++ make libboost-dev
JOBS=${RECORD_JOBS:-compile tar grep}
CXX_DIR=$BENCH_DATA/record-cxx
GREP_DIR=$BENCH_DATA/record-grep

cc -O2 -o "$BENCH_DIR/stop-floor" "$(dirname "$0")/stop-floor.c" || die "cannot build stop-floor"
cc -O2 -o "$BENCH_DIR/random-reads" "$(dirname "$0")/random-reads.c" || die "cannot build random-reads"
HOTSET_BEFORE=${HOTSET_BEFORE:-}
TOOLS=(bare floor notify ptrace ptrace_t)
if "$HOTSET" record --backend=bpf --probe > /dev/null 2>&1; then
	TOOLS+=(bpf bpf_t)
	[ -n "$HOTSET_BEFORE" ] && TOOLS+=(bpf_old bpf_t_old)
else
	say "bench: the bpf backend cannot run here: $("$HOTSET" record --backend=bpf --probe 2>&1 | head -n1)"
fi
TOOLS+=(strace)
if [ -n "${RECORD_TOOLS:-}" ]; then
	wanted=()
	for tool in "${TOOLS[@]}"; do
		[[ " $RECORD_TOOLS " == *" $tool "* ]] && wanted+=("$tool")
	done
	[[ " ${wanted[*]} " == *" bare "* ]] || wanted=(bare "${wanted[@]}")	# ratios are to it
	TOOLS=("${wanted[@]}")
fi
READS_FILE=$BENCH_DATA/record-reads

# ---- the C++ project ----------------------------------------------------------------

write_project() {
	[ -f "$CXX_DIR/.complete" ] && return 0
	say "bench: writing a C++ project under $CXX_DIR"
	rm -rf "$CXX_DIR" && mkdir -p "$CXX_DIR"
	cat > "$CXX_DIR/geometry.cpp" <<-'EOF'
	#include <boost/geometry.hpp>
	#include <boost/geometry/geometries/point_xy.hpp>
	#include <boost/geometry/geometries/polygon.hpp>
	namespace bg = boost::geometry;
	typedef bg::model::d2::point_xy<double> point;
	double area_of(const char *wkt)
	{
		bg::model::polygon<point> poly;
		bg::read_wkt(wkt, poly);
		bg::correct(poly);
		return bg::area(poly);
	}
	EOF
	cat > "$CXX_DIR/graph.cpp" <<-'EOF'
	#include <boost/graph/adjacency_list.hpp>
	#include <boost/graph/dijkstra_shortest_paths.hpp>
	#include <vector>
	typedef boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, boost::no_property,
				      boost::property<boost::edge_weight_t, int>> graph;
	int farthest(int n, const std::vector<std::pair<int, int>> &edges, const std::vector<int> &w)
	{
		graph g(edges.begin(), edges.end(), w.begin(), n);
		std::vector<int> d(boost::num_vertices(g));
		boost::dijkstra_shortest_paths(g, boost::vertex(0, g), boost::distance_map(
			boost::make_iterator_property_map(d.begin(), boost::get(boost::vertex_index, g))));
		return d.empty() ? 0 : d.back();
	}
	EOF
	cat > "$CXX_DIR/text.cpp" <<-'EOF'
	#include <boost/algorithm/string.hpp>
	#include <boost/format.hpp>
	#include <boost/lexical_cast.hpp>
	#include <boost/tokenizer.hpp>
	#include <string>
	std::string summary(const std::string &line)
	{
		boost::tokenizer<boost::char_separator<char>> tok(line, boost::char_separator<char>(","));
		int n = 0;
		for (auto it = tok.begin(); it != tok.end(); ++it)
			n += boost::lexical_cast<int>(boost::trim_copy(*it));
		return (boost::format("%1% -> %2%") % boost::to_upper_copy(line) % n).str();
	}
	EOF
	cat > "$CXX_DIR/store.cpp" <<-'EOF'
	#include <boost/multi_index_container.hpp>
	#include <boost/multi_index/ordered_index.hpp>
	#include <boost/multi_index/hashed_index.hpp>
	#include <boost/multi_index/member.hpp>
	#include <boost/property_tree/ptree.hpp>
	#include <boost/property_tree/json_parser.hpp>
	#include <boost/variant.hpp>
	#include <boost/optional.hpp>
	#include <sstream>
	#include <string>
	struct item { int id; std::string name; };
	namespace mi = boost::multi_index;
	typedef mi::multi_index_container<item, mi::indexed_by<
		mi::ordered_unique<mi::member<item, int, &item::id>>,
		mi::hashed_non_unique<mi::member<item, std::string, &item::name>>>> items;
	std::string store(const std::string &json)
	{
		boost::property_tree::ptree t;
		std::istringstream in(json);
		boost::property_tree::read_json(in, t);
		items s;
		for (auto &kv : t)
			s.insert(item{ kv.second.get<int>("id", 0), kv.first });
		boost::variant<int, std::string> v = (int)s.size();
		boost::optional<int> o = boost::get<int>(v);
		std::ostringstream out;
		boost::property_tree::write_json(out, t);
		return out.str() + std::to_string(o.value_or(0));
	}
	EOF
	cat > "$CXX_DIR/main.cpp" <<-'EOF'
	#include <iostream>
	#include <string>
	#include <vector>
	double area_of(const char *wkt);
	int farthest(int n, const std::vector<std::pair<int, int>> &edges, const std::vector<int> &w);
	std::string summary(const std::string &line);
	std::string store(const std::string &json);
	int main()
	{
		std::cout << area_of("POLYGON((0 0,0 1,1 1,1 0,0 0))") << '\n'
			  << farthest(3, { { 0, 1 }, { 1, 2 } }, { 1, 2 }) << '\n'
			  << summary("1, 2, 3") << '\n' << store("{\"a\":{\"id\":1}}") << '\n';
	}
	EOF
	printf '%s\n' \
		'CXX = g++' \
		'CXXFLAGS = -std=c++17 -O0 -g -DBOOST_BIND_GLOBAL_PLACEHOLDERS -DBOOST_ALLOW_DEPRECATED_HEADERS' \
		'OBJS = geometry.o graph.o text.o store.o main.o' \
		'app: $(OBJS)' \
		'	$(CXX) -o $@ $(OBJS)' \
		'%.o: %.cpp' \
		'	$(CXX) $(CXXFLAGS) -c -o $@ $<' \
		'clean:' \
		'	rm -f app $(OBJS)' > "$CXX_DIR/Makefile"
	make -s -C "$CXX_DIR" > /dev/null && "$CXX_DIR/app" > /dev/null ||
		die "the C++ project does not build"
	touch "$CXX_DIR/.complete"
}

write_repo() {
	[ -f "$GREP_DIR/.complete" ] && return 0
	need_pkgs git
	say "bench: committing a copy of /usr/include to $GREP_DIR"
	rm -rf "$GREP_DIR" && mkdir -p "$GREP_DIR" && cp -r /usr/include "$GREP_DIR/include" &&
		git -C "$GREP_DIR" init -q && git -C "$GREP_DIR" add -A &&
		git -C "$GREP_DIR" -c user.email=bench@hotset -c user.name=bench commit -qm include ||
		die "cannot write the repository"
	touch "$GREP_DIR/.complete"
}

# ---- the jobs and the tools ----------------------------------------------------------

job_cmd() {
	case $1 in
	compile) JOB=(make -s -j1 -C "$CXX_DIR") ;;
	tar) JOB=(sh -c 'tar c /usr/include 2> /dev/null | cat > /dev/null') ;;
	grep) JOB=(sh -c 'git -C "$1" grep --threads=4 -c no-such-line-anywhere; [ $? -le 1 ]' - "$GREP_DIR") ;;
	reads) JOB=("$BENCH_DIR/random-reads" "$READS_FILE" 500000) ;;
	esac
}

job_prepare() {
	case $1 in
	compile) make -s -C "$CXX_DIR" clean > /dev/null ;;
	esac
}

# tool_cmd TOOL JOB PROFILE: the command line in CMD
tool_cmd() {
	case $1 in
	bare) CMD=("${JOB[@]}") ;;
	ptrace|bpf) CMD=("$HOTSET" record -q --backend="$1" -o "$3" -- "${JOB[@]}") ;;
	ptrace_t|bpf_t) CMD=("$HOTSET" record -q --trace --backend="${1%_t}" -o "$3" -- "${JOB[@]}") ;;
	bpf_old) CMD=("$HOTSET_BEFORE" record -q --backend=bpf -o "$3" -- "${JOB[@]}") ;;
	bpf_t_old) CMD=("$HOTSET_BEFORE" record -q --trace --backend=bpf -o "$3" -- "${JOB[@]}") ;;
	strace) CMD=(strace -f --seccomp-bpf -e trace=%file -o /dev/null "${JOB[@]}") ;;
	floor) CMD=("$BENCH_DIR/stop-floor" "${JOB[@]}") ;;
	notify) CMD=("$BENCH_DIR/stop-floor" --notify "${JOB[@]}") ;;
	esac
}

# ---- running -----------------------------------------------------------------------

# spread FILE: "min-max" of the numbers in FILE
spread() { sort -g "$1" | awk 'NR == 1 { a = $1 } { b = $1 } END { printf "%.2f-%.2f", a, b }'; }

run_job() {
	local job=$1 r i n=${#TOOLS[@]} tool s f
	job_cmd "$job"
	say "bench: $job: warming up"
	job_prepare "$job" && bench_once "${JOB[@]}" > /dev/null
	for tool in "${TOOLS[@]}"; do
		: > "$BENCH_DIR/$job.$tool.runs"; : > "$BENCH_DIR/$job.$tool.cpu"; : > "$BENCH_DIR/$job.$tool.lost"
	done
	: > "$BENCH_DIR/$job.rounds"
	for ((r = 0; r < REPEATS; r++)); do
		local line="$r"
		for ((i = 0; i < n; i++)); do
			tool=${TOOLS[$(((i + r) % n))]}
			tool_cmd "$tool" "$job" "$BENCH_DIR/$job.$tool.prof"
			job_prepare "$job"
			s=$(bench_once "${CMD[@]}") || die "$job under $tool failed"
			sed -n 's/.*warning: \([0-9]*\) accesses could not be recorded.*/\1/p' \
				"$BENCH_DIR/last.err" >> "$BENCH_DIR/$job.$tool.lost"
			echo "$s" >> "$BENCH_DIR/$job.$tool.runs"
			cat "$BENCH_DIR/last.cpu" >> "$BENCH_DIR/$job.$tool.cpu"
			eval "round_$tool=$s"
		done
		for tool in "${TOOLS[@]}"; do line="$line $(eval echo \$round_$tool)"; done
		echo "$line" >> "$BENCH_DIR/$job.rounds"
		say "  round $((r + 1)): $(for tool in "${TOOLS[@]}"; do printf '%s %ss  ' $tool "$(eval echo \$round_$tool)"; done)"
	done
	printf '\n== %s, warm cache (%s rounds, interleaved; load average now %s)\n' "$job" "$REPEATS" \
		"$(cut -d' ' -f1-3 /proc/loadavg)"
	printf '%-8s %9s %13s %11s %12s %9s %10s\n' tool median min-max "x bare" "x bare/round" CPU \
		"CPU x bare"
	local bare_med bare_cpu
	bare_med=$(median < "$BENCH_DIR/$job.bare.runs")
	bare_cpu=$(median < "$BENCH_DIR/$job.bare.cpu")
	for ((i = 0; i < n; i++)); do
		tool=${TOOLS[$i]}
		f=$BENCH_DIR/$job.$tool
		local med cpu paired
		med=$(median < "$f.runs")
		cpu=$(median < "$f.cpu")
		# the median of this round's time over the same round's bare time
		paired=$(awk -v c=$((i + 2)) '{ if ($2 > 0) printf "%.4f\n", $c / $2 }' "$BENCH_DIR/$job.rounds" | median)
		printf '%-8s %8.2fs %13s %10sx %11.2fx %8.2fs %9sx\n' "$tool" "$med" "$(spread "$f.runs")" \
			"$(ratio "$med" "$bare_med")" "$paired" "$cpu" "$(ratio "$cpu" "$bare_cpu")"
		eval "ratio_${job}_$tool=$(ratio "$med" "$bare_med")"
	done
	for tool in "${TOOLS[@]}"; do
		[ -s "$BENCH_DIR/$job.$tool.lost" ] &&
			printf '(%s lost accesses in some runs: %s)\n' "$tool" "$(tr '\n' ' ' < "$BENCH_DIR/$job.$tool.lost")"
	done
	return 0
}

# The compile's --trace profile next to what the compile read.
profile_sizes() {
	local tool p
	job_cmd compile
	printf '\n== profiles of the compile (with --trace)\n'
	printf '%-8s %8s %10s %12s %12s %9s\n' backend files pages "data read" "profile" "ratio"
	for tool in ptrace bpf; do
		[[ " ${TOOLS[*]} " == *" $tool "* ]] || continue
		p=$BENCH_DIR/compile.$tool.trace.prof
		job_prepare compile
		"$HOTSET" record -q --trace --backend=$tool -o "$p" -- "${JOB[@]}" > /dev/null
		"$HOTSET" show --json "$p" > "$p.json"
		python3 - "$p" "$p.json" "$tool" <<-'EOF'
		import json, os, sys
		path, jpath, tool = sys.argv[1:4]
		j = json.load(open(jpath))
		pages = sum(f["pages"] for f in j["files"])
		data = pages * j.get("page_size", os.sysconf("SC_PAGESIZE"))
		size = os.path.getsize(path)
		print("%-8s %8d %10d %10.1f MB %10.1f KB %8.1f%%" % (tool, len(j["files"]), pages,
		      data / 1e6, size / 1e3, 100.0 * size / data if data else 0))
		EOF
	done
}

# What a backend costs whatever the job: starting (for bpf: loading, checking
# and attaching its programs), then reaping and writing the profile. Timed
# on `true`, whose own time is nothing; next to the share of each job's bare
# time that a ratio goal leaves for everything.
fixed_costs() {
	local tool r s job
	printf '\n== fixed cost of a record (the job is `true`, %s runs each)\n' "$REPEATS"
	printf '%-8s %9s' backend median
	for job in $JOBS; do printf ' %16s' "% of bare $job"; done
	printf '\n'
	for tool in ptrace bpf; do
		[[ " ${TOOLS[*]} " == *" $tool "* ]] || continue
		: > "$BENCH_DIR/fixed.$tool.runs"
		for ((r = 0; r < REPEATS; r++)); do
			s=$(bench_once "$HOTSET" record -q --backend=$tool -o "$BENCH_DIR/fixed.prof" -- true) ||
				die "record of true failed"
			echo "$s" >> "$BENCH_DIR/fixed.$tool.runs"
		done
		s=$(median < "$BENCH_DIR/fixed.$tool.runs")
		printf '%-8s %8.3fs' $tool "$s"
		for job in $JOBS; do
			printf ' %15s%%' "$(awk -v a="$s" -v b="$(median < "$BENCH_DIR/$job.bare.runs")" \
				'BEGIN { printf "%.1f", 100 * a / b }')"
		done
		printf '\n'
	done
	printf '(a goal of 1.05x leaves 5%% of the bare time for the fixed cost and all the per-file work)\n'
}

[[ " $JOBS " == *" compile "* ]] && write_project
[[ " $JOBS " == *" grep "* ]] && write_repo
if [[ " $JOBS " == *" reads "* ]] && [ "$(stat -c %s "$READS_FILE" 2>/dev/null)" != $((64 << 20)) ]; then
	mkdir -p "$BENCH_DATA" && head -c $((64 << 20)) /dev/urandom > "$READS_FILE"
fi
for job in $JOBS; do run_job "$job"; done
[[ " $JOBS " == *" compile "* ]] && profile_sizes
fixed_costs

printf '\n== goals (ratios of medians; this machine is shared: see the spread)\n'
for job in $JOBS; do
	case $job in compile) g=1.10 ;; tar) g=2 ;; *) continue ;; esac
	check_goal "$job: hotset record --backend=ptrace vs bare" "$(eval echo \${ratio_${job}_ptrace:--})" "<=" $g
	check_goal "$job: hotset record --backend=bpf vs bare" "$(eval echo \${ratio_${job}_bpf:--})" "<=" 1.05
done
printf '\n(floor: a tracer that only stops the job at each close, as the ptrace backend does:'
for job in $JOBS; do printf ' %s %sx' "$job" "$(eval echo \${ratio_${job}_floor:--})"; done
printf ' bare; the same stops by seccomp user notification:'
for job in $JOBS; do printf ' %s %sx' "$job" "$(eval echo \${ratio_${job}_notify:--})"; done
printf ' bare)\n'
