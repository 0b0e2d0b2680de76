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
import re
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
        self.proc = subprocess.Popen(cmd, shell=True, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     text=True, encoding="latin-1", bufsize=1)
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

    def reply(self, timeout=None):
        """The next line that is a move, OK or an error. Other lines are
        skipped: PentaZen's MESSAGE lines hold a raw byte that may be a line
        break, so a piece of one can stand on a line of its own."""
        timeout = timeout or self.timeout
        while True:
            try:
                line = self.lines.get(timeout=timeout)
            except queue.Empty:
                raise RuntimeError(f"no answer within {timeout:.1f} s")
            if line is None:
                raise RuntimeError("the brain closed its output")
            line = line.strip()
            if re.fullmatch(r"\d+,\d+|OK", line) or line.startswith(("ERROR", "UNKNOWN")):
                return line

    def best_move(self, moves):
        """The brain's move on the position after `moves` (black first)."""
        self.send("BOARD")
        to_move = len(moves) % 2
        for ply, (x, y) in enumerate(moves):
            self.send(f"{x},{y},{1 if ply % 2 == to_move else 2}")
        self.send("DONE")
        answer = self.reply()
        try:
            return tuple(int(v) for v in answer.split(","))
        except ValueError:
            sys.exit(f"the brain answered {answer!r}")

    def close(self):
        try:
            self.send("END")
            self.proc.wait(timeout=3)
        except Exception:
            self.proc.kill()
            self.proc.wait()


START_TIMEOUT_S = 30


def start(args, board_side):
    """A brain process set up for `board_side` boards."""
    brain = Brain(args.brain, timeout=3 * args.turn_ms / 1000 + 2)
    brain.side = board_side
    brain.send(f"START {board_side}")
    # Loading a network (and, for Wuzi, timing its precisions) is not
    # bounded by the turn time; the Gomocup managers also wait longer here.
    if brain.reply(timeout=max(brain.timeout, START_TIMEOUT_S)) != "OK":
        sys.exit("the brain refused START")
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
    with open(args.positions) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            gid, rule, size, moves, played = line.rstrip("\n").split("\t")
            if rule != "freestyle":
                sys.exit(f"{gid}: only freestyle positions are supported, not {rule}")
            w, h = size.split("x")
            if w != h:
                sys.exit(f"{gid}: only square boards are supported, not {size}")
            rows.append((int(w), [tuple(map(int, m.split(","))) for m in moves.split()],
                         tuple(map(int, played.split(",")))))
    if not rows:
        sys.exit(f"{args.positions}: no positions")

    brain = None
    matched = crashes = 0
    for i, (board_side, moves, played) in enumerate(rows, 1):
        if brain is not None and brain.side != board_side:
            brain.close()
            brain = None
        if brain is None:
            brain = start(args, board_side)
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
