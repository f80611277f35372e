#!/usr/bin/env python3
"""ptyjob.py: run a command as an interactive shell's foreground job on a
new pseudo-terminal, type keys at it, and say what the shell saw.

usage: ptyjob.py [--bg] [--keys KEYS] [--after FILE] [--timeout S] -- CMD [ARG...]

A child process plays the shell: it leads a new session whose controlling
terminal is the pty, starts CMD in a process group of its own, makes that
group the terminal's foreground (as bash does for a job; with --bg it
does not, as for `CMD &`), and waits for it.
When the job stops, it prints "stopped SIG STATE" (STATE: the process state
of the pid written in FILE, e.g. T for stopped) and continues it as `fg`
does: the terminal's foreground back to the job's group, then SIGCONT to
the group. When it ends, it prints "exit N" or "signal N".

KEYS (Python escapes: '\\x03' is ^C, '\\x1a' ^Z) are typed once FILE
exists, one character at a time; a '|' waits for FILE to be rewritten
(its size to change) before the rest. Whatever the job writes to the
terminal goes to standard error.
"""
import argparse
import os
import pty
import select
import signal
import sys
import time


def shell(cmd, after, out, bg):
    """The child: a session leader with the pty as controlling terminal."""
    tty = os.open(os.ttyname(0), os.O_RDWR)
    signal.signal(signal.SIGTTOU, signal.SIG_IGN)  # as a shell: tcsetpgrp from anywhere
    pid = os.fork()
    if pid == 0:
        os.setpgid(0, 0)
        if not bg:
            os.tcsetpgrp(tty, os.getpid())
        signal.signal(signal.SIGTTOU, signal.SIG_DFL)
        os.close(tty)
        try:
            os.execvp(cmd[0], cmd)
        finally:
            os._exit(127)
    try:
        os.setpgid(pid, pid)
    except OSError:
        pass
    if not bg:
        os.tcsetpgrp(tty, pid)
    while True:
        _, status = os.waitpid(pid, os.WUNTRACED)
        if os.WIFSTOPPED(status):
            state = "?"
            try:
                with open(after) as f:
                    job = int(f.read().split()[0])
                with open("/proc/%d/stat" % job) as f:
                    state = f.read().rsplit(")", 1)[1].split()[0]
            except (OSError, ValueError, IndexError):
                pass
            out.write("stopped %d %s\n" % (os.WSTOPSIG(status), state))
            out.flush()
            os.tcsetpgrp(tty, pid)  # fg
            os.killpg(pid, signal.SIGCONT)
            continue
        os.tcsetpgrp(tty, os.getpgrp())
        if os.WIFSIGNALED(status):
            out.write("signal %d\n" % os.WTERMSIG(status))
        else:
            out.write("exit %d\n" % os.WEXITSTATUS(status))
        out.flush()
        return



def copy_out(master):
    """Copy what the terminal shows to stderr; False once it is closed."""
    try:
        data = os.read(master, 4096)
    except OSError:
        data = b""
    sys.stderr.buffer.write(data)
    sys.stderr.flush()
    return bool(data)

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bg", action="store_true")
    ap.add_argument("--keys", default="")
    ap.add_argument("--after", default="ready")
    ap.add_argument("--timeout", type=float, default=30)
    ap.add_argument("cmd", nargs="+")
    a = ap.parse_args()
    keys = a.keys.encode().decode("unicode_escape").encode("latin-1")
    rfd, wfd = os.pipe()
    pid, master = pty.fork()
    if pid == 0:
        os.close(rfd)
        with os.fdopen(wfd, "w") as out:
            shell(a.cmd, a.after, out, a.bg)
        os._exit(0)
    os.close(wfd)
    deadline = time.time() + a.timeout
    size = None  # of FILE when the last key was typed
    reading = True
    while True:
        if os.waitpid(pid, os.WNOHANG)[0] == pid:
            break
        if time.time() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            print("timeout")
            break
        r, _, _ = select.select([master] if reading else [], [], [], 0.02)
        if r:
            reading = copy_out(master)
        if not keys or not os.path.exists(a.after):
            continue
        with open(a.after, "rb") as f:
            text = f.read()
        # a line half written (the file made, its pid not yet in it) is not ready
        if not text.endswith(b"\n"):
            continue
        now = len(text)
        if keys[:1] == b"|":
            if size is None:
                size = now
            if now != size:
                keys = keys[1:]
            continue
        os.write(master, keys[:1])
        keys = keys[1:]
        size = now
        time.sleep(0.2)
    while reading and select.select([master], [], [], 0.1)[0]:
        reading = copy_out(master)
    with os.fdopen(rfd) as res:
        sys.stdout.write(res.read())


if __name__ == "__main__":
    main()
