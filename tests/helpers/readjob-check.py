#!/usr/bin/env python3
"""readjob-check - compare a profile with what readjob said it must contain.

    readjob-check.py EXPECT PROFILE_JSON DIR

EXPECT is readjob's output (see readjob.c for the line format), PROFILE_JSON
the output of `hotset show --json` for the profile recorded around it, DIR
the directory readjob worked in. Every expectation line is checked, and no
file under DIR may be listed that readjob did not announce. Prints one line
per problem and exits 1 if there is any.
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


def main():
    expect_path, profile_path, workdir = sys.argv[1:4]
    with open(profile_path) as f:
        prof = json.load(f)
    files = prof["files"]
    outputs = set(prof.get("outputs") or [])
    problems = []
    matched = set()
    for line in open(expect_path):
        line = line.rstrip("\n")
        if not line:
            continue
        match, ino, flags, ranges, path = line.split(" ", 4)
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
    for i, f in enumerate(files):
        if f["path"].startswith(workdir.rstrip("/") + "/") and i not in matched:
            problems.append("%s: listed (pages %s) but not read" % (f["path"], fmt(pages(f["ranges"]))))
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
