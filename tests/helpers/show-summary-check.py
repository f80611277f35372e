#!/usr/bin/env python3
"""show-summary-check.py OUT JSON: the summary `hotset show` printed in OUT
agrees with the profile as `hotset show --json` gave it in JSON, every
figure computed here from the files alone: the totals, the range counts,
the ten largest directories (pages of the files directly in them) and the
ten largest files, with their sizes and shares. Exits 1 naming what
differs. Paths must need no escaping (plain ASCII)."""
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
want = "Total:    %d file%s, %d page%s (%s)" % (len(files), "" if len(files) == 1 else "s",
                                              total, "" if total == 1 else "s", human(total * ps))
expect("total line", (line("Total:") or "").split(")")[0] + ")", want)
nranges = sum(len(f["ranges"]) for f in files)
one = sum(len(f["ranges"]) == 1 for f in files)
several = sum(len(f["ranges"]) > 1 for f in files)
most = max([len(f["ranges"]) for f in files] + [0])
m = re.match(r"Ranges:   (\d+) ranges?: (\d+) files? read in one, (\d+) in several \(at most (\d+)\)",
             line("Ranges:") or "")
expect("ranges line", m and tuple(int(x) for x in m.groups()), (nranges, one, several, most))

# directories: the files directly in each; ties in profile order
dirs, order = {}, {}
for i, f in enumerate(files):
    d = os.path.dirname(f["path"])
    p, n = dirs.get(d, (0, 0))
    dirs[d] = (p + f["pages"], n + 1)
    order.setdefault(d, i)
want = sorted((d for d in dirs if dirs[d][0]), key=lambda d: (-dirs[d][0], order[d]))[:10]
title, rows = table("Largest directories")
expect("directories", [r[5] for r in rows], want)
for r in rows:
    if r[5] in dirs:
        p, n = dirs[r[5]]
        expect(r[5], (int(r[0]), r[1] + " " + r[2], r[3], int(r[4])), (p, human(p * ps), share(p), n))
if title and len(dirs) <= 32768:
    count = "all %d" % len(dirs) if len(dirs) == len(want) else "top %d of %d directories" % (len(want), len(dirs))
    expect("directories title", count in title, True)

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
