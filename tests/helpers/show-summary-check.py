#!/usr/bin/env python3
"""show-summary-check.py OUT JSON: the summary `hotset show` printed in OUT
agrees with the profile as `hotset show --json` gave it in JSON, every
figure computed here from the files alone: the totals, the range counts,
the ten largest directories (the pages of every file under them, as du
counts; a directory whose pages are all in one subdirectory left out),
the deepest directory with more than half the pages, the directories
that hold the working set (the rule of hs_tops_cover(), tops.h) and the
ten largest files, with their sizes and shares; and the JSON's own
directories, most_under and working_set_directories say the same. Exits
1 naming what differs. Paths must need no escaping (plain ASCII)."""
import json
import os
import re
import sys

out_path, json_path = sys.argv[1:3]
out = open(out_path).read().split("\n")
j = json.load(open(json_path))
files, ps = j["files"], j["page_size"]
total = sum(f["pages"] for f in files)
failed = []


def human(n):
    units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"]
    if n < 1024:
        return "%d B" % n
    v, u = float(n), 0
    while v >= 1024 and u < 6:
        v, u = v / 1024, u + 1
    return "%.1f %s" % (v, units[u])


def share(p):
    return "%.1f%%" % (100.0 * p / total) if total else "-"


def expect(what, got, want):
    if got != want:
        failed.append("%s: got %r, want %r" % (what, got, want))


def line(prefix):
    got = [l for l in out if l.startswith(prefix)]
    return got[0] if got else None


def table(title):
    """The rows of the table after the line starting with title."""
    for i, l in enumerate(out):
        if l.startswith(title):
            rows = []
            for r in out[i + 2:]:
                if not r.strip():
                    break
                rows.append(r.split(None, 5))
            return l, rows
    return None, []


# totals
want = "Total:    %d file%s, %d page%s (%s of memory)" % (len(files), "" if len(files) == 1 else "s",
                                                        total, "" if total == 1 else "s", human(total * ps))
expect("total line", (line("Total:") or "").split(")")[0] + ")", want)
nranges = sum(len(f["ranges"]) for f in files)
one = sum(len(f["ranges"]) == 1 for f in files)
several = sum(len(f["ranges"]) > 1 for f in files)
most = max([len(f["ranges"]) for f in files] + [0])
m = re.match(r"Ranges:   (\d+) ranges?: (\d+) files? read in one, (\d+) in several \(at most (\d+)\)",
             line("Ranges:") or "")
expect("ranges line", m and tuple(int(x) for x in m.groups()), (nranges, one, several, most))

# directories: every file counts in each directory on its way, from /; ties in profile order
dirs, order, parent = {}, {}, {}
for i, f in enumerate(files):
    parts = f["path"].split("/")[1:-1]
    names = ["/"] + ["/" + "/".join(parts[:k]) for k in range(1, len(parts) + 1)]
    for k, d in enumerate(names):
        p, n = dirs.get(d, (0, 0))
        dirs[d] = (p + f["pages"], n + 1)
        order.setdefault(d, i)
        if k:
            parent[d] = names[k - 1]
kids = {}
for d, up in parent.items():
    kids.setdefault(up, []).append(d)
for d in kids:
    kids[d].sort(key=lambda k: (-dirs[k][0], order[k]))
largest_kid = {d: max(dirs[k][0] for k in kids[d]) for d in kids}
listed = [d for d in dirs if dirs[d][0] and largest_kid.get(d) != dirs[d][0]]
want = sorted(listed, key=lambda d: (-dirs[d][0], order[d]))[:10]
title, rows = table("Largest directories")
expect("directories", [r[5] for r in rows], want)
for r in rows:
    if r[5] in dirs:
        p, n = dirs[r[5]]
        expect(r[5], (int(r[0]), r[1] + " " + r[2], r[3], int(r[4])), (p, human(p * ps), share(p), n))
if title and len(dirs) <= 32768:
    count = "all %d" % len(dirs) if len(dirs) == len(want) else "top %d of %d directories" % (len(want), len(dirs))
    expect("directories title", count in title, True)
expect("json directories", [(d["path"], d["pages"], d["files"], d["memory_bytes"]) for d in j["directories"]],
       [(d, dirs[d][0], dirs[d][1], dirs[d][0] * ps) for d in want])

# the deepest directory with more than half of the pages
under = [d for d in dirs if 2 * dirs[d][0] > total]
under = max(under, key=lambda d: d.count("/") if d != "/" else 0) if under else None
got = [l for l in out if l.startswith("Most of the working set")]
expect("most under", got, ["Most of the working set (%s of its pages) is under %s." % (share(dirs[under][0]), under)]
       if under else [])
expect("json most_under", (j["most_under"], j["most_under_pages"]), (under, dirs[under][0] if under else None))


# the directories that hold the working set: hs_tops_cover(90, 8, 100)
def ceil_share(p, pct):
    return (p * pct + 99) // 100


def cover(share_pct=90, most=8, part=100):
    if not total:
        return [], 0
    minp = max(total // part, 1)
    s, held, target = ["/"], dirs["/"][0], ceil_share(total, share_pct)
    while True:
        best = None
        for d in s:
            k = [c for c in kids.get(d, []) if dirs[c][0] >= minp][:most - len(s) + 1]
            lost = dirs[d][0] - sum(dirs[c][0] for c in k)
            if (not k or len(s) - 1 + len(k) > most or held - lost < target or
                    dirs[d][0] - lost < ceil_share(dirs[d][0], share_pct)):
                continue
            key = (lost, -dirs[d][0], order[d])
            if best is None or key < best[0]:
                best = (key, d, k, lost)
        if best is None:
            break
        s.remove(best[1])
        s += best[2]
        held -= best[3]
    s.sort(key=lambda d: (-dirs[d][0], order[d]))
    while len(s) > 1 and held - dirs[s[-1]][0] >= target:
        held -= dirs[s.pop()][0]
    return s, held


want, held = cover()
title, rows = table("Directories that hold the working set")
expect("working set directories", [r[5] for r in rows], want)
if want:
    expect("working set title", title, "Directories that hold the working set (%d, with %s of its pages):"
           % (len(want), share(held)))
expect("json working_set_directories", [(d["path"], d["pages"]) for d in j["working_set_directories"]],
       [(d, dirs[d][0]) for d in want])
expect("json working_set_directories_pages", j["working_set_directories_pages"], held)

# files: ties in profile order
want = sorted((i for i, f in enumerate(files) if f["pages"]), key=lambda i: (-files[i]["pages"], i))[:10]
title, rows = table("Largest files")
expect("files", [r[5] for r in rows], [files[i]["path"] for i in want])
for r, i in zip(rows, want):
    f = files[i]
    expect(f["path"], (int(r[0]), r[1] + " " + r[2], r[3], int(r[4])),
           (f["pages"], human(f["pages"] * ps), share(f["pages"]), len(f["ranges"])))

if failed:
    sys.exit("\n".join(failed))
