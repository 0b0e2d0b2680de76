#!/usr/bin/env python3
"""Move matching of any Gomocup brain on the positions of `bench matching`.

    pbrain-wuzi bench matching --positions 300 --positions-out pos.tsv
    scripts/peer_matching.py --turn-ms 1000 pos.tsv ../shared/peers/rapfi/pbrain-rapfi

For each position the brain gets `BOARD` (its own stones 1, the other
side's 2) with `INFO timeout_turn`, and its answer is compared with the move
played. Prints the share matched with its 95% Wilson interval, as `bench
matching` does for Wuzi, so that peers and Wuzi are measured on the same
positions under the same time. Freestyle and square boards only (what the
bench measures).
"""
import argparse
import math
import queue
import os
import re
import shlex
import signal
import subprocess
import sys
import threading
import time


def wilson(k, n, z=1.96):
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt((p * (1 - p) + z * z / (4 * n)) / n) / (1 + z * z / n)
    return centre - half, centre + half


class Brain:
    def __init__(self, cmd, timeout):
        # No shell, and a session of its own: a kill reaches the brain and
        # whatever it started, not a shell in front of it.
        try:
            self.proc = subprocess.Popen(shlex.split(cmd), stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                         text=True, encoding="latin-1", bufsize=1,
                                         start_new_session=True)
        except (OSError, ValueError) as e:
            raise RuntimeError(f"cannot start {cmd!r}: {e}") from None
        self.timeout = timeout
        self.lines = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def send(self, line):
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def reply(self, wanted, timeout=None):
        """The next line that fully matches the regular expression `wanted`.
        Other lines are skipped: PentaZen's MESSAGE lines hold a raw byte
        that may be a line break, so a piece of one can stand on a line of
        its own, and an ERROR or UNKNOWN answer to an INFO is no move."""
        timeout = timeout or self.timeout
        while True:
            try:
                line = self.lines.get(timeout=timeout)
            except queue.Empty:
                raise RuntimeError(f"no answer within {timeout:.1f} s")
            if line is None:
                raise RuntimeError("the brain closed its output")
            line = line.strip()
            if re.fullmatch(wanted, line):
                return line

    def best_move(self, moves):
        """The brain's move on the position after `moves` (black first)."""
        self.send("BOARD")
        to_move = len(moves) % 2
        for ply, (x, y) in enumerate(moves):
            self.send(f"{x},{y},{1 if ply % 2 == to_move else 2}")
        self.send("DONE")
        return tuple(int(v) for v in self.reply(r"\d+,\d+").split(","))

    def close(self):
        try:
            self.send("END")
            self.proc.wait(timeout=3)
        except Exception:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except OSError:
                pass
            self.proc.wait()


START_TIMEOUT_S = 30


def start(args, board_side):
    """A brain process set up for `board_side` boards."""
    brain = Brain(args.brain, timeout=3 * args.turn_ms / 1000 + 2)
    brain.side = board_side
    brain.send(f"START {board_side}")
    # Loading a network (and, for Wuzi, timing its precisions) is not
    # bounded by the turn time; the Gomocup managers also wait longer here.
    answer = brain.reply(r"OK|(ERROR|UNKNOWN)\b.*", timeout=max(brain.timeout, START_TIMEOUT_S))
    if answer != "OK":
        brain.close()
        raise RuntimeError(f"the brain refused START {board_side}: {answer}")
    for info in (f"timeout_turn {args.turn_ms}", "timeout_match 0",
                 f"thread_num {args.threads}", "rule 0", "max_memory 367001600"):
        brain.send(f"INFO {info}")
    return brain


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("positions", help="file written by bench matching --positions-out")
    ap.add_argument("brain", help="the brain's command line")
    ap.add_argument("--turn-ms", type=int, default=1000, help="INFO timeout_turn (default 1000)")
    ap.add_argument("--threads", type=int, default=2, help="INFO thread_num (default 2)")
    args = ap.parse_args()

    rows = []
    try:
        f = open(args.positions)
    except OSError as e:
        sys.exit(f"{args.positions}: {e.strerror}")
    with f:
        for number, line in enumerate(f, 1):
            if line.startswith("#") or not line.strip():
                continue
            fields = line.rstrip("\n").split("\t")
            if len(fields) != 5:
                sys.exit(f"{args.positions}:{number}: expected 5 tab-separated fields "
                         f"(id, rule, size, moves, played), found {len(fields)}")
            gid, rule, size, moves, played = fields
            if rule != "freestyle":
                sys.exit(f"{gid}: only freestyle positions are supported, not {rule}")
            w, h = size.split("x")
            if w != h:
                sys.exit(f"{gid}: only square boards are supported, not {size}")
            try:
                rows.append((int(w), [tuple(map(int, m.split(","))) for m in moves.split()],
                             tuple(map(int, played.split(",")))))
            except ValueError:
                sys.exit(f"{args.positions}:{number}: a size or move that is not a number")
    if not rows:
        sys.exit(f"{args.positions}: no positions")

    brain = None
    matched = crashes = 0
    for i, (board_side, moves, played) in enumerate(rows, 1):
        if brain is not None and brain.side != board_side:
            brain.close()
            brain = None
        if brain is None:
            try:
                brain = start(args, board_side)
            except RuntimeError as e:
                sys.exit(f"peer matching: {e}; {matched} of {i - 1} positions matched before")
        try:
            move = brain.best_move(moves)
        except RuntimeError as e:
            # PentaZen dies or hangs on some positions: count the position
            # as not matched, and go on with a fresh process.
            print(f"  position {i}: {e}; restarting the brain", flush=True)
            crashes += 1
            brain.close()
            brain = None
            continue
        matched += move == played
        # Rapfi may still be winding its search down after it prints the
        # move, and then reads the next BOARD as a stop signal: let it settle.
        time.sleep(0.05)
        if i % 50 == 0:
            print(f"  {i} positions: {matched} matched ({100 * matched / i:.1f}%)", flush=True)
    if brain is not None:
        brain.close()
    n = len(rows)
    lo, hi = wilson(matched, n)
    print(f"peer matching: {matched} of {n} = {100 * matched / n:.1f}% "
          f"(95% interval {100 * lo:.1f}-{100 * hi:.1f}%), {args.turn_ms} ms per position"
          + (f"; the brain crashed or hung on {crashes} (counted as not matched)" if crashes else ""))


if __name__ == "__main__":
    main()
