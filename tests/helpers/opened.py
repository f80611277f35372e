#!/usr/bin/env python3
"""opened.py: wait until a file is opened N times (by anyone), through inotify.

usage: opened.py DIR NAME N READY

Watches DIR (a file replaced by rename is still seen) and touches READY once
the watch is in place: opens from then on count. Exits 0 after the N-th
open of DIR/NAME, 1 if 20 s pass first (a deadline, not a timing). Tests use
it to wait for what a daemon does a number of times (hotset keep reads its
pressure files once a tick): an event of its own, where a sleep would count
the machine's time.
"""
import ctypes
import os
import select
import struct
import sys
import time

IN_OPEN = 0x20
IN_CLOEXEC = 0o2000000


def main():
    d, name, want, ready = sys.argv[1], sys.argv[2].encode(), int(sys.argv[3]), sys.argv[4]
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.inotify_init1(IN_CLOEXEC)
    if fd < 0 or libc.inotify_add_watch(fd, d.encode(), IN_OPEN) < 0:
        sys.exit("opened.py: inotify: %s" % os.strerror(ctypes.get_errno()))
    open(ready, "w").close()
    seen, end, buf = 0, time.monotonic() + 20, b""
    while seen < want:
        left = end - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            sys.exit("opened.py: %s/%s opened %d times of %d in 20 s" % (d, name.decode(), seen, want))
        buf += os.read(fd, 65536)
        while len(buf) >= 16:
            _, mask, _, n = struct.unpack("iIII", buf[:16])
            if len(buf) < 16 + n:
                break
            if mask & IN_OPEN and buf[16:16 + n].rstrip(b"\0") == name:
                seen += 1
            buf = buf[16 + n:]


main()
