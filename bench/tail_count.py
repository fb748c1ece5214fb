#!/usr/bin/env python3
"""Reads standard input to its end: writes the last 4 MiB to TAIL and the byte count to COUNT.

Usage: producer | tail_count.py TAIL COUNT. The benchmark's probe runs keep the end of a
stream (to check how it finished) and its size (JSON mode's output grows with the reply),
without holding gigabytes.
"""
import sys

KEEP = 4 * 1024 * 1024


def main():
    tail_path, count_path = sys.argv[1], sys.argv[2]
    total, tail = 0, bytearray()
    stdin = sys.stdin.buffer
    while True:
        chunk = stdin.read(1 << 20)
        if not chunk:
            break
        total += len(chunk)
        tail += chunk
        if len(tail) > 2 * KEEP:
            del tail[:-KEEP]
    with open(tail_path, "wb") as f:
        f.write(tail[-KEEP:])
    with open(count_path, "w") as f:
        f.write(f"{total}\n")


if __name__ == "__main__":
    main()
