#!/usr/bin/env python3
"""slowserver.py: a server that answers each request after DELAY seconds,
its client, and a job that waits on a socket to its own child.

usage: slowserver.py serve unix PATH DELAY READY
       slowserver.py serve tcp HOST DELAY READY
       slowserver.py client unix PATH
       slowserver.py client tcp HOST PORT
       slowserver.py pair DELAY

serve listens on the unix socket PATH (mode 0666: any user may connect),
or on HOST with a port of the kernel's choice, writes READY (the path, or
the port) once it listens (by rename: a reader never sees it half
written), then answers each connection's line with "done" after DELAY
seconds, one at a time, until killed. client sends a line and prints the
answer. pair makes a socketpair, forks a child that answers after DELAY,
and reads its answer: a job that waits on a socket to one of its own.
The delay is the work the server does: what the job waits on.
"""
import os
import socket
import sys
import time


def serve(kind, where, delay, ready):
    if kind == "unix":
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(where)
        os.chmod(where, 0o666)
    else:
        s = socket.socket(socket.AF_INET6 if ":" in where else socket.AF_INET, socket.SOCK_STREAM)
        s.bind((where, 0))
        where = str(s.getsockname()[1])
    s.listen(8)
    with open(ready + ".tmp", "w") as f:
        f.write(where + "\n")
    os.rename(ready + ".tmp", ready)
    while True:
        c, _ = s.accept()
        c.recv(100)
        time.sleep(delay)
        try:
            c.sendall(b"done\n")
        except OSError:
            pass
        c.close()


def client(kind, args):
    if kind == "unix":
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(args[0])
    else:
        s = socket.create_connection((args[0], int(args[1])))
    s.sendall(b"hi\n")
    sys.stdout.write(s.recv(100).decode())


def pair(delay):
    a, b = socket.socketpair()
    if os.fork() == 0:
        a.close()
        time.sleep(delay)
        b.sendall(b"done\n")
        os._exit(0)
    b.close()
    sys.stdout.write(a.recv(100).decode())
    os.wait()


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        serve(sys.argv[2], sys.argv[3], float(sys.argv[4]), sys.argv[5])
    elif sys.argv[1] == "client":
        client(sys.argv[2], sys.argv[3:])
    else:
        pair(float(sys.argv[2]))
