#!/usr/bin/env python3
"""strace-compare - do a profile's files match what strace saw the job read?

    strace-compare.py PROFILE_JSON STRACE_PREFIX CWD

STRACE_PREFIX is the -o of `strace -ff -qq -y -e trace=open,openat,openat2,
creat,execve,execveat,read,pread64,readv,preadv,preadv2,mmap,sendfile,splice,
copy_file_range` run on the same job (one file per process: PREFIX.PID), CWD
the directory the job started in. PROFILE_JSON is `hotset show --json` of the
profile recorded on another run of the job.

The files that must have pages in the profile are the regular files the
job read bytes from (read-like calls that returned data, sendfile, splice
and copy_file_range sources), mapped, or executed (with the interpreters the
kernel loads for them: #! lines, ELF PT_INTERP), minus the files it created
or truncated, minus what a working set leaves out (/proc, /sys, /dev, files
that are gone, files on tmpfs whose reads the page cache does not see). A
file listed without pages must have been opened for reading. Prints the
differences and exits 1 if there are any.
"""
import glob
import json
import os
import re
import struct
import sys

CALL = re.compile(r"^(\w+)\((.*)\)\s+=\s+(-?\w+)(?:<(.*)>)?")
FD = re.compile(r"\b\d+<((?:[^>\\]|\\.)*)>")


def unescape(s):
    """strace writes odd bytes as \\ooo or \\xhh escapes."""
    return s.encode("latin-1").decode("unicode_escape").encode("latin-1").decode("utf-8", "surrogateescape")


def first_string(args):
    m = re.search(r'"((?:[^"\\]|\\.)*)"', args)
    return unescape(m.group(1)) if m else None


def fd_paths(args):
    return [unescape(p) for p in FD.findall(args)]


def elf_interpreter(path):
    """PT_INTERP of a 64-bit little-endian ELF file, or None."""
    try:
        with open(path, "rb") as f:
            h = f.read(64)
            if h[:4] != b"\x7fELF" or h[4] != 2 or h[5] != 1:
                return None
            phoff, = struct.unpack_from("<Q", h, 32)
            phentsize, phnum = struct.unpack_from("<HH", h, 54)
            for i in range(phnum):
                f.seek(phoff + i * phentsize)
                ph = f.read(56)
                ptype, = struct.unpack_from("<I", ph, 0)
                if ptype == 3:
                    off, = struct.unpack_from("<Q", ph, 8)
                    size, = struct.unpack_from("<Q", ph, 32)
                    f.seek(off)
                    return f.read(size).rstrip(b"\0").decode()
    except OSError:
        pass
    return None


def executed(path, out):
    """Add path and what the kernel reads to run it."""
    path = os.path.realpath(path)
    if path in out or not os.path.isfile(path):
        return
    out.add(path)
    try:
        with open(path, "rb") as f:
            head = f.read(256)
    except OSError:
        return
    if head.startswith(b"#!"):
        words = head[2:].split(b"\n")[0].split()
        if words:
            executed(words[0].decode(), out)
        return
    interp = elf_interpreter(path)
    if interp:
        executed(interp, out)


def mounts():
    out = []
    for line in open("/proc/self/mountinfo"):
        left, right = line.split(" - ", 1)
        point = left.split()[4].encode().decode("unicode_escape")
        out.append((point, right.split()[0]))
    return out


def fs_type(path, table):
    best = ("", "")
    for point, fstype in table:
        p = point.rstrip("/") + "/"
        if (path + "/").startswith(p) and len(point) >= len(best[0]):
            best = (point, fstype)
    return best[1]


def main():
    profile_path, prefix, cwd = sys.argv[1:4]
    read, opened, outputs, execs = set(), set(), set(), set()
    for name in glob.glob(prefix + ".*"):
        for line in open(name, encoding="latin-1"):
            m = CALL.match(line)
            if not m:
                continue
            call, args, ret, retpath = m.groups()
            if call in ("execve", "execveat"):
                if ret == "0" and call == "execve":
                    executed(os.path.join(cwd, first_string(args)), execs)
                continue
            if ret.startswith("-"):
                continue
            if call in ("open", "openat", "openat2", "creat"):
                if retpath is None:
                    continue
                path = unescape(retpath)
                if call == "creat" or "O_TRUNC" in args or ("O_CREAT" in args and "O_EXCL" in args):
                    outputs.add(path)
                elif "O_RDONLY" in args or "O_RDWR" in args:
                    opened.add(path)
                continue
            paths = fd_paths(args)
            if not paths:
                continue
            if call == "mmap":
                read.add(paths[-1])
            elif call == "sendfile":
                if int(ret, 0) > 0 and len(paths) >= 2:
                    read.add(paths[1])
            elif int(ret, 0) > 0:	# read, pread64, readv, preadv, preadv2, splice, copy_file_range
                read.add(paths[0])
    table = mounts()

    def keep(p):
        return (p.startswith("/") and not p.startswith(("/proc/", "/sys/", "/dev/"))
                and not p.endswith(" (deleted)") and os.path.isfile(p)
                and fs_type(p, table) != "tmpfs")

    want = {p for p in read | execs if keep(p)} - outputs
    with open(profile_path) as f:
        prof = json.load(f)
    have = {f["path"] for f in prof["files"] if f["pages"]}
    empty = {f["path"] for f in prof["files"] if not f["pages"]}
    problems = ["missing: %s" % p for p in sorted(want - have)]
    problems += ["not read: %s" % p for p in sorted(have - want)]
    problems += ["listed without pages, never opened: %s" % p
                 for p in sorted(empty - opened - want)]
    for p in problems:
        print(p)
    print("# %d files compared" % len(want), file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
