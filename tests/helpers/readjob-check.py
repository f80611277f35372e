#!/usr/bin/env python3
"""readjob-check - compare a profile with what readjob said it must contain.

    readjob-check.py EXPECT PROFILE_JSON DIR

EXPECT is readjob's output (see readjob.c for the line format), PROFILE_JSON
the output of `hotset show --trace --json` for the profile recorded around
it, DIR the directory readjob worked in. Every expectation line is checked,
and no file under DIR may be listed that readjob did not announce. With a
trace in the profile, the accesses to the files of the "trace" lines must
be those lines, in their order (the profile's trace kept to those files,
in canonical form: see trace_of). Prints one line per problem and exits 1
if there is any.

    readjob-check.py --trace PROFILE_JSON PATH...

prints the trace of PROFILE_JSON kept to those paths, a "PATH FIRST-LAST"
line per access: two backends' traces of one job compare with diff.
"""
import json
import sys


def pages(ranges):
    """The set of pages of "0-1,4" (or "-"), or of [[0, 1], [4, 4]]."""
    out = set()
    if isinstance(ranges, str):
        if ranges == "-":
            return out
        ranges = [[int(x) for x in (r.split("-") * 2)[:2]] for r in ranges.split(",")]
    for first, last in ranges:
        out.update(range(first, last + 1))
    return out


def fmt(p):
    p = sorted(p)
    out, i = [], 0
    while i < len(p):
        j = i
        while j + 1 < len(p) and p[j + 1] == p[j] + 1:
            j += 1
        out.append(str(p[i]) if i == j else "%d-%d" % (p[i], p[j]))
        i = j + 1
    return ",".join(out) or "-"


def trace_of(prof, paths):
    """The accesses of prof's trace to paths, as [path, first, last] in order.
    Leaving the other files out makes neighbours of accesses that were not
    (the pages of a library a call faulted in between, say): those are
    merged as the canonical form merges them. Two accesses that were
    neighbours already are left as they are: the profile's own trace must
    be in canonical form."""
    out = []
    files = prof["files"]
    left_out = False
    for idx, first, last in prof["trace"] or []:
        path = files[idx]["path"]
        if path not in paths:
            left_out = True
            continue
        if left_out and out and out[-1][0] == path and first in (out[-1][2], out[-1][2] + 1):
            out[-1][2] = max(out[-1][2], last)
        else:
            out.append([path, first, last])
        left_out = False
    return out


def main():
    if sys.argv[1] == "--trace":
        with open(sys.argv[2]) as f:
            prof = json.load(f)
        for path, first, last in trace_of(prof, set(sys.argv[3:])):
            print("%s %d-%d" % (path, first, last))
        return 0
    expect_path, profile_path, workdir = sys.argv[1:4]
    with open(profile_path) as f:
        prof = json.load(f)
    files = prof["files"]
    outputs = set(prof.get("outputs") or [])
    problems = []
    matched = set()
    want_trace = []
    for line in open(expect_path):
        line = line.rstrip("\n")
        if not line:
            continue
        match, ino, flags, ranges, path = line.split(" ", 4)
        if match == "trace":
            first, last = (int(x) for x in ranges.split("-"))
            want_trace.append([path, first, last])
            continue
        if match == "none":
            bad = [f["path"] for f in files if f["path"].startswith(path)]
            if bad:
                problems.append("listed but must not be: %s" % ", ".join(bad))
            continue
        if match == "output":
            if path not in outputs:
                problems.append("%s: not listed as an output" % path)
            for i, f in enumerate(files):
                if f["path"] == path and f["pages"]:
                    problems.append("%s: an output listed as input" % path)
            continue
        found = [i for i, f in enumerate(files) if f["path"] == path and str(f["ino"]) == ino]
        if len(found) != 1:
            problems.append("%s (inode %s): listed %d times, not once" % (path, ino, len(found)))
            continue
        f = files[found[0]]
        matched.add(found[0])
        want, got = pages(ranges), pages(f["ranges"])
        if match == "exact" and got != want:
            problems.append("%s: pages %s, not %s" % (path, fmt(got), fmt(want)))
        if match == "atleast" and not want <= got:
            problems.append("%s: pages %s, missing %s" % (path, fmt(got), fmt(want - got)))
        missing = set(flags) - set(f["flags"]) - {"-"}
        if missing:
            problems.append("%s: flags %s, missing %s" % (path, f["flags"], "".join(sorted(missing))))
    if want_trace and prof.get("trace") is not None:
        got = trace_of(prof, {p for p, _, _ in want_trace})
        if got != want_trace:
            n = next((i for i, (a, b) in enumerate(zip(got, want_trace)) if a != b),
                     min(len(got), len(want_trace)))
            show = lambda t: " ".join("%s:%d-%d" % (p.rsplit("/", 1)[-1], a, b) for p, a, b in t)
            problems.append("trace: %d accesses, not %d; from access %d on: %s, not %s"
                            % (len(got), len(want_trace), n, show(got[n:n + 4]) or "nothing",
                               show(want_trace[n:n + 4]) or "nothing"))
    for i, f in enumerate(files):
        if f["path"].startswith(workdir.rstrip("/") + "/") and i not in matched:
            problems.append("%s: listed (pages %s) but not read" % (f["path"], fmt(pages(f["ranges"]))))
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
