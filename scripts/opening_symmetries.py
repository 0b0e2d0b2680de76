#!/usr/bin/env python3
"""Writes each opening of a `pos` opening file (column letter, row number
from 1, top-left origin) under the 8 symmetries of an N x N board, in file
order, each distinct opening once.

    python3 scripts/opening_symmetries.py 15 openings/renju15-eval.txt > renju15-eval-sym.txt
"""
import re
import sys


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: opening_symmetries.py SIZE FILE")
    n = int(sys.argv[1])
    seen = set()
    with open(sys.argv[2]) as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            stones = [(ord(c) - ord("a"), int(r) - 1) for c, r in re.findall(r"([a-z])(\d+)", line)]
            if not stones or any(not (0 <= x < n and 0 <= y < n) for x, y in stones):
                sys.exit(f"{sys.argv[2]} line {number}: not a pos opening of a {n}x{n} board")
            for t in range(8):
                out = "".join(f"{chr(ord('a') + x)}{y + 1}" for x, y in (turn(t, n, *s) for s in stones))
                if out not in seen:
                    seen.add(out)
                    print(out)


def turn(t, n, x, y):
    """Symmetry t of 8: bit 2 transposes, bit 0 mirrors columns, bit 1 rows."""
    if t & 4:
        x, y = y, x
    if t & 1:
        x = n - 1 - x
    if t & 2:
        y = n - 1 - y
    return x, y


if __name__ == "__main__":
    main()
