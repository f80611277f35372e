#!/usr/bin/env python3
"""json-schema.py - check a JSON report against the schema of docs/json.md.

    json-schema.py DOC --sections
        print the reports DOC documents, one a line: its "## NAME"
        sections that hold a key table
    json-schema.py DOC NAME FILE [rows|norows]
        check the JSON report in FILE against section NAME of DOC: its keys
        are exactly the documented ones (at every level: the objects of an
        array documented as "array[].key" are each checked), each value
        has its documented type, null only where "|null" is documented;
        "report" is NAME and "format" 1, the first two keys. With "rows"
        (-v), "items" must be there and not empty; with "norows" it must
        not be there (without "items" rows in the section it never is);
        with "fincore" (status with a table option), "fincore" must be
        there and not empty, and "items" not. An array of rows that the
        mode does not ask for must not be there.

A section's table rows are "| `key` | type | meaning |", with "\\|" for a
"|" inside a cell; "report" and "format" are implied in every section.
An object whose keys another report documents already is written once:
"| `service.*` | =time.service | ... |" gives `service` the keys of
`service` in the section "time".
Prints every difference, naming the report, the key and where it is, and
exits 1 if there is any (2 if DOC or FILE cannot be read).
"""
import json
import re
import sys

TYPES = {"int", "number", "string", "bool", "array", "object"}
ROW = re.compile(r"^\|\s*`([^`]+)`\s*\|")


class Node:
    """A documented key: its types, and the keys of its objects."""

    def __init__(self, types=None, where=""):
        self.types = types      # set of type names, None if only implied
        self.nullable = False
        self.keys = {}          # name -> Node: keys of the object, or of each array element
        self.where = where      # "DOC:LINE" of its row


def cells(line):
    return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]


def parse(doc_path):
    """{section: root Node}; exits 2 on a malformed row."""
    sections, name, errors, refs = {}, None, [], []
    with open(doc_path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    for n, line in enumerate(lines, 1):
        where = "%s:%d" % (doc_path, n)
        m = re.match(r"^##\s+(\S.*?)\s*$", line)
        if m:
            name = m.group(1)
            continue
        if name is None or not ROW.match(line):
            continue
        c = cells(line)
        if len(c) < 3:
            errors.append("%s: a key row needs 3 cells: | `key` | type | meaning |" % where)
            continue
        key, typ = c[0].strip("`"), c[1].replace(" ", "")
        if key.endswith(".*") and typ.startswith("="):
            refs.append((name, key[:-2], typ[1:], where))
            continue
        types = set(typ.split("|"))
        nullable = "null" in types
        types.discard("null")
        if not types or not types <= TYPES:
            errors.append("%s: `%s`: type '%s' is not one of %s, with |null if it may be null"
                          % (where, key, c[1], ", ".join(sorted(TYPES))))
            continue
        root = sections.setdefault(name, Node({"object"}, where))
        node, parts = root, key.split(".")
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            elem = part.endswith("[]")
            part = part[:-2] if elem else part
            if not re.fullmatch(r"[a-z0-9_%]+", part):   # fincore's "res%"
                errors.append("%s: `%s`: '%s' is not a key name" % (where, key, part))
                break
            child = node.keys.get(part)
            if child is None:
                child = node.keys[part] = Node(None, where)
            if last:
                if child.types is not None:
                    errors.append("%s: `%s` is listed twice (first at %s)" % (where, key, child.where))
                    break
                child.types, child.nullable, child.where = types, nullable, where
            elif child.types is None:
                child.types = {"array" if elem else "object"}   # implied by "a[].b" or "a.b"
            node = child
    for name, key, ref, where in refs:
        node, target = sections.get(name), None
        section, _, path = ref.partition(".")
        for part in key.split("."):
            node = node.keys.get(part) if node else None
        target = sections.get(section)
        for part in path.split("."):
            target = target.keys.get(part) if target else None
        if node is None or target is None:
            errors.append("%s: `%s.*`: needs a row for `%s` and a documented `%s`" % (where, key, key, ref))
        else:
            node.keys = target.keys
    for root in sections.values():
        root.keys.setdefault("report", Node({"string"}))
        root.keys.setdefault("format", Node({"int"}))
    if errors:
        print("\n".join(errors), file=sys.stderr)
        sys.exit(2)
    return sections


def type_ok(v, types):
    for t in types:
        if ((t == "int" and isinstance(v, int) and not isinstance(v, bool)) or
                (t == "number" and isinstance(v, (int, float)) and not isinstance(v, bool)) or
                (t == "string" and isinstance(v, str)) or
                (t == "bool" and isinstance(v, bool)) or
                (t == "array" and isinstance(v, list)) or
                (t == "object" and isinstance(v, dict))):
            return True
    return False


def type_name(v):
    if v is None:
        return "null"
    return {bool: "bool", int: "int", float: "number", str: "string",
            list: "array", dict: "object"}[type(v)]


def check(obj, node, where, report, section, out, skip=()):
    """Append to out what differs between object obj and node's keys."""
    want = set(node.keys) - set(skip)
    for k in sorted(want - set(obj)):
        out.append("%s: %s: key '%s' is missing (documented in ## %s)" % (report, where, k, section))
    for k in sorted(set(obj) - set(node.keys)):
        out.append("%s: %s: key '%s' is not documented in ## %s (value %s)"
                   % (report, where, k, section, json.dumps(obj[k])[:60]))
    for k in [k for k in obj if k in node.keys]:
        child, v, at = node.keys[k], obj[k], "%s.%s" % (where, k)
        doc_type = "|".join(sorted(child.types)) + ("|null" if child.nullable else "")
        if v is None:
            if not child.nullable:
                out.append("%s: %s is null, documented as %s (not |null)" % (report, at, doc_type))
            continue
        if not type_ok(v, child.types):
            out.append("%s: %s is %s (%s), documented as %s"
                       % (report, at, type_name(v), json.dumps(v)[:60], doc_type))
            continue
        if child.keys and isinstance(v, list):
            for i, e in enumerate(v):
                if not isinstance(e, dict):
                    out.append("%s: %s[%d] is %s, documented as an object" % (report, at, i, type_name(e)))
                else:
                    check(e, child, "%s[%d]" % (at, i), report, section, out)
        elif child.keys and isinstance(v, dict):
            check(v, child, at, report, section, out)


def main():
    args = sys.argv[1:]
    if len(args) == 2 and args[1] == "--sections":
        for name, root in parse(args[0]).items():
            if set(root.keys) - {"report", "format"}:
                print(name)
        return 0
    if len(args) not in (3, 4) or (len(args) == 4 and args[3] not in ("rows", "norows", "fincore")):
        print(__doc__, file=sys.stderr)
        return 2
    doc, name, path = args[:3]
    mode = args[3] if len(args) == 4 else None
    sections = parse(doc)
    report = "%s report (%s)" % (name, path)
    if name not in sections:
        print("%s: docs/json.md has no section ## %s with a key table" % (report, name), file=sys.stderr)
        return 1
    root = sections[name]
    try:
        with open(path, encoding="utf-8") as f:
            obj = json.load(f)
    except (OSError, ValueError) as e:
        print("%s: not one JSON object: %s" % (report, e), file=sys.stderr)
        return 2
    if not isinstance(obj, dict):
        print("%s: a JSON %s, not an object" % (report, type_name(obj)), file=sys.stderr)
        return 1
    out, skip = [], ()
    if list(obj)[:2] != ["report", "format"]:
        out.append("%s: the first keys are %s, not report and format" % (report, list(obj)[:2]))
    if obj.get("report") != name:
        out.append("%s: \"report\" is %s, not \"%s\"" % (report, json.dumps(obj.get("report")), name))
    if obj.get("format") != 1 or isinstance(obj.get("format"), bool):
        out.append("%s: \"format\" is %s, not 1" % (report, json.dumps(obj.get("format"))))
    want = {"rows": "items", "fincore": "fincore"}.get(mode)
    if mode is not None:
        # the arrays of rows the mode does not ask for: not there, not required
        skip = tuple(a for a in ("items", "fincore") if a != want)
        for a in skip:
            if a in obj:
                out.append("%s: key '%s' is there without %s" % (report, a, "-v" if a == "items" else "a table option"))
                del obj[a]
    if want:
        if want not in root.keys:
            out.append("%s: ## %s documents no %s (`%s[].key` rows)" % (report, name, want, want))
        elif isinstance(obj.get(want), list) and not obj[want]:
            out.append("%s: '%s' is empty: the test made rows to check" % (report, want))
    check(obj, root, name, report, name, out, skip)
    if out:
        print("\n".join(out), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
