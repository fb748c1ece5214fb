#!/usr/bin/env python3
"""Interactive timings through a pseudo-terminal.

Usage:
  pty_bench.py first-frame RUNS -- CMD...      spawn -> first complete frame on the terminal
  pty_bench.py keystroke KEYS -- CMD...        keystroke -> frame showing it (after startup settles)
  pty_bench.py scroll KEYS -- CMD...           PageUp -> the frame it draws, KEYS times from the bottom

Prints one JSON object: {"available": bool, "reason": str, "ms": [...], "startup_ms": float,
"rss_kb": int}. A frame is the first moment the program has written at least MIN_VISIBLE
printable characters and, if it opened a synchronized-output block (CSI ?2026h), closed it again.
Terminal queries (device attributes, cursor position, kitty keyboard flags, cell size) get the
answers a real terminal would give, so neither program waits for a timeout.
"""
import json
import os
import re
import select
import signal
import struct
import sys
import time
import fcntl
import termios

ROWS, COLS = 40, 120
MIN_VISIBLE = 20
WINDOW = 1 << 16
ANSI = re.compile(rb"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[P_^][^\x1b]*\x1b\\|\x1b[@-Z\\-_]")
ANSWERS = [
    (b"\x1b[c", b"\x1b[?62;22c"),
    (b"\x1b[0c", b"\x1b[?62;22c"),
    (b"\x1b[6n", b"\x1b[1;1R"),
    (b"\x1b[?u", b"\x1b[?0u"),
    (b"\x1b[16t", b"\x1b[6;20;10t"),
    (b"\x1b[14t", b"\x1b[4;800;1200t"),
    (b"\x1b[18t", b"\x1b[8;%d;%dt" % (ROWS, COLS)),
]


class Term:
    def __init__(self, cmd):
        self.pid, self.fd = os.forkpty()
        if self.pid == 0:
            env = dict(os.environ, TERM="xterm-256color", COLUMNS=str(COLS), LINES=str(ROWS))
            try:
                os.execvpe(cmd[0], cmd, env)
            finally:
                os._exit(127)
        fcntl.ioctl(self.fd, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
        self.seen = b""

    def read(self, timeout):
        """Read what is there within `timeout` seconds; b"" on timeout, None once the child is gone."""
        r, _, _ = select.select([self.fd], [], [], max(0.0, timeout))
        if not r:
            return b""
        try:
            data = os.read(self.fd, 65536)
        except OSError:
            return None
        if not data:
            return None
        self.seen = (self.seen + data)[-4096:]
        for query, answer in ANSWERS:
            if query in data:
                os.write(self.fd, answer)
        return data

    def wait_frame(self, deadline, since=b"", need=None):
        """Read until a complete frame (see module doc); returns the time or None.

        Work per read is bounded by WINDOW, not by everything read so far: resuming a long
        session writes megabytes, and rescanning all of it on each read made this script, not
        the program, the slow part."""
        window = since
        in_sync = False
        visible = 0
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            data = self.read(left)
            if data is None:
                return None
            if not data:
                continue
            window = (window + data)[-WINDOW:]
            now = time.monotonic()
            opened = window.rfind(b"\x1b[?2026h")
            closed = window.rfind(b"\x1b[?2026l")
            if opened != -1 or closed != -1:
                in_sync = opened > closed
            if need is not None:
                if not in_sync and need in ANSI.sub(b"", window):
                    return now
                continue
            # Only the new text is counted (an escape split across reads may miscount a little).
            visible += len(ANSI.sub(b"", data).strip())
            if in_sync:
                continue
            if visible >= MIN_VISIBLE:
                return now

    def settle(self, quiet, limit):
        """Read until nothing arrives for `quiet` seconds (or `limit` passes); False if the child died."""
        end = time.monotonic() + limit
        while time.monotonic() < end:
            data = self.read(quiet)
            if data is None:
                return False
            if not data:
                return True
        return True

    def last_words(self):
        """The last visible line the program wrote, to say why it stopped."""
        lines = [l.strip() for l in ANSI.sub(b"", self.seen).decode("utf-8", "replace").splitlines() if l.strip()]
        return lines[-1][:100] if lines else ""

    def peak_rss_kb(self):
        """VmHWM of the running program: unlike wait4's ru_maxrss it does not count the forked
        Python before exec."""
        try:
            for line in open(f"/proc/{self.pid}/status"):
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
        except OSError:
            pass
        return None

    def close(self):
        """Stop the child; returns its peak RSS in KiB."""
        hwm = self.peak_rss_kb()
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.kill(self.pid, sig)
            except ProcessLookupError:
                break
            end = time.monotonic() + 2
            while time.monotonic() < end:
                # Keep draining so a child blocked on a full terminal can exit.
                try:
                    self.read(0.02)
                except OSError:
                    pass
                pid, status, usage = os.wait4(self.pid, os.WNOHANG)
                if pid:
                    os.close(self.fd)
                    return hwm or usage.ru_maxrss
        _, _, usage = os.wait4(self.pid, 0)
        os.close(self.fd)
        return hwm or usage.ru_maxrss


def first_frame(runs, cmd, timeout):
    times, rss = [], 0
    for _ in range(runs):
        t0 = time.monotonic()
        term = Term(cmd)
        t = term.wait_frame(t0 + timeout)
        # An interactive program is still running after its first frame; one that printed a
        # message and exited has no interactive mode.
        alive = t is not None and term.settle(0.2, 0.5)
        words = term.last_words()
        rss = max(rss, term.close())
        if t is None:
            return {"available": False, "reason": f"no frame within {timeout:.0f} s ({words})", "ms": [], "rss_kb": rss}
        if not alive:
            return {"available": False, "reason": f"exited after its first output ({words})", "ms": [], "rss_kb": rss}
        times.append((t - t0) * 1000)
    return {"available": True, "reason": "", "ms": times, "rss_kb": rss}


def keystroke(keys, cmd, timeout):
    t0 = time.monotonic()
    term = Term(cmd)
    t = term.wait_frame(t0 + timeout)
    if t is None:
        words = term.last_words()
        rss = term.close()
        return {"available": False, "reason": f"no frame within {timeout:.0f} s ({words})", "ms": [], "rss_kb": rss}
    startup = (t - t0) * 1000
    if not term.settle(0.5, timeout):
        words = term.last_words()
        return {"available": False, "reason": f"exited after its first output ({words})", "ms": [], "rss_kb": term.close()}
    times = []
    letters = b"abcdefghijklmnopqrstuvwxyz"
    typed = b""
    for i in range(keys):
        key = letters[i % len(letters):i % len(letters) + 1]
        typed += key
        # The editor shows everything typed so far; wait for the tail of it to appear.
        need = typed[-6:]
        start = time.monotonic()
        os.write(term.fd, key)
        t = term.wait_frame(start + 5, need=need)
        if t is None:
            rss = term.close()
            return {"available": False, "reason": "typed text did not appear within 5 s", "ms": times, "rss_kb": rss}
        times.append((t - start) * 1000)
        term.settle(0.05, 2)
    rss = term.close()
    return {"available": True, "reason": "", "ms": times, "startup_ms": startup, "rss_kb": rss}


def scroll(keys, cmd, timeout):
    """Each PageUp moves the transcript up a page: the time until the redrawn frame is complete.
    The transcript must be longer than KEYS pages, or a PageUp at the top draws nothing."""
    t0 = time.monotonic()
    term = Term(cmd)
    t = term.wait_frame(t0 + timeout)
    if t is None:
        words = term.last_words()
        return {"available": False, "reason": f"no frame within {timeout:.0f} s ({words})", "ms": [], "rss_kb": term.close()}
    startup = (t - t0) * 1000
    if not term.settle(0.5, timeout):
        words = term.last_words()
        return {"available": False, "reason": f"exited after its first output ({words})", "ms": [], "rss_kb": term.close()}
    times = []
    for _ in range(keys):
        start = time.monotonic()
        os.write(term.fd, b"\x1b[5~")
        t = term.wait_frame(start + 5)
        if t is None:
            rss = term.close()
            return {"available": False, "reason": "PageUp drew no frame within 5 s", "ms": times, "rss_kb": rss}
        times.append((t - start) * 1000)
        term.settle(0.05, 2)
    rss = term.close()
    return {"available": True, "reason": "", "ms": times, "startup_ms": startup, "rss_kb": rss}


def main():
    args = sys.argv[1:]
    if len(args) < 4 or "--" not in args:
        sys.exit(__doc__)
    kind, count = args[0], int(args[1])
    cmd = args[args.index("--") + 1:]
    timeout = float(os.environ.get("PI_BENCH_PTY_TIMEOUT", "60"))
    if kind == "first-frame":
        result = first_frame(count, cmd, timeout)
    elif kind == "keystroke":
        result = keystroke(count, cmd, timeout)
    elif kind == "scroll":
        result = scroll(count, cmd, timeout)
    else:
        sys.exit(__doc__)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
