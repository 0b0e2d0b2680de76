#!/usr/bin/env python3
"""Collects blunder positions from `pbrain-wuzi match` games against a peer.

A blunder is a move of ours right after which the peer announced a forced
win (Rapfi: `Eval +M<n>` with its line; PentaZen: `ev +v<n>`, no line), where
the peer's previous announcement was not a forced win yet. Reads the runner's per-game logs (--log-dir) and PSQ records
(--psq) and prints one TSV line per blunder:

    id  rule  size  moves-before  blunder  peer  eval  peer-line

Moves are `x,y` from 0; the peer's line is its principal variation right
after our blunder, starting with its winning move (PentaZen prints none: its
line is its move alone). The test
(tests/blunders.rs) and `pbrain-wuzi bench blunders` keep the positions
where our own solver confirms the blunder loses.

Usage: scripts/extract_blunders.py --logs DIR [--psq DIR | --size 15] --ours wuzi --peer rapfi --rule freestyle
"""
import argparse
import os
import re
import sys

LINE = re.compile(r"^\[\s*[\d.]+\] (\S+) < (.*)$")
MOVE = re.compile(r"^(\d+),(\d+)$")
# Rapfi: "MESSAGE Depth 17-30 | Eval +M19 | Time 5ms | H6 I7 ..."
MATE = re.compile(r"\bEval \+M(\d+)\b")
# PentaZen: "MESSAGE dep 13 ev +v27 nd 11k tm 4 sp 2841" (plies to its five;
# its depth is a raw byte, so the line may lose its "MESSAGE").
VICTORY = re.compile(r"\bev \+v(\d+)\b")


def psq_moves(path):
    moves = []
    with open(path) as f:
        lines = f.read().splitlines()
    header = re.match(r"Piskvork (\d+)x", lines[0]) if lines else None
    if header is None:
        raise ValueError(f"{path}: not a PSQ record (no 'Piskvork NxM' first line)")
    size = int(header.group(1))
    for line in lines[1:]:
        parts = line.split(",")
        if len(parts) != 3 or not all(p.strip().lstrip("-").isdigit() for p in parts):
            break
        moves.append((int(parts[0]) - 1, int(parts[1]) - 1))
    return size, moves


def log_moves(path):
    """The game's moves from its log alone: the opening the runner sent
    first (a BOARD block, or for a one-stone opening a TURN; BEGIN for
    none), then every answer."""
    opening = []
    in_board = None
    with open(path, errors="replace") as f:
        for raw in f:
            m = re.match(r"^\[\s*[\d.]+\] (\S+) > (.*)$", raw.rstrip("\n"))
            if not m:
                continue
            engine, text = m.group(1), m.group(2).strip()
            if in_board is None and text == "BEGIN":
                break
            if in_board is None and text.upper().startswith("TURN "):
                x, y = text[5:].split(",")
                opening.append((int(x), int(y)))
                break
            if in_board is None and text == "BOARD":
                in_board = engine
            elif engine == in_board:
                if text == "DONE":
                    break
                x, y, _ = text.split(",")
                opening.append((int(x), int(y)))
    return opening + [mv for _, mv, _ in answers(path)]


def answers(path):
    """The moves each engine answered, in order, with the messages it sent
    while thinking about each."""
    out = []
    pending = {}
    with open(path, errors="replace") as f:
        for raw in f:
            m = LINE.match(raw.rstrip("\n"))
            if not m:
                continue
            engine, text = m.group(1), m.group(2).strip()
            mv = MOVE.match(text)
            if mv:
                out.append((engine, (int(mv.group(1)), int(mv.group(2))), pending.pop(engine, [])))
            elif text.startswith("MESSAGE") or VICTORY.search(text):
                pending.setdefault(engine, []).append(text)
    return out


def mate_of(messages):
    """The last forced-win announcement of a move's messages, with its line
    (None for PentaZen, which prints none)."""
    for text in reversed(messages):
        v = VICTORY.search(text)
        if v:
            return int(v.group(1)), None
        m = MATE.search(text)
        # The closing "Speed ... | Time" summary has no line: take the last
        # iteration's message, whose last field is the line.
        if m and not text.startswith("MESSAGE Speed"):
            fields = [f.strip() for f in text.split("|")]
            pv = fields[-1].split() if len(fields) > 1 else []
            return int(m.group(1)), pv
    return None


def coord(token, size):
    """Rapfi's `H6` (column letter from A, row number from 1) as (x, y)."""
    m = re.match(r"^([A-Za-z])(\d+)$", token)
    if not m:
        return None
    x = ord(m.group(1).upper()) - ord("A")
    y = int(m.group(2)) - 1
    return (x, y) if 0 <= x < size and 0 <= y < size else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--logs", required=True)
    ap.add_argument("--psq", help="the runner's --psq folder; without it, the logs' BOARD commands give the opening")
    ap.add_argument("--size", type=int, default=15, help="board size when there is no --psq")
    ap.add_argument("--ours", default="wuzi")
    ap.add_argument("--peer", required=True)
    ap.add_argument("--rule", default="freestyle")
    ap.add_argument("--all", action="store_true",
                    help="every blunder of a game, not only its first (a peer whose announcements come and go)")
    args = ap.parse_args()
    found = 0
    try:
        names = sorted(os.listdir(args.logs))
    except OSError as e:
        sys.exit(f"--logs {args.logs}: {e.strerror}")
    for name in names:
        if not name.endswith(".log"):
            continue
        if args.psq:
            psq = os.path.join(args.psq, name[:-4] + ".psq")
            if not os.path.exists(psq):
                continue
            try:
                size, moves = psq_moves(psq)
            except (OSError, ValueError) as e:
                print(f"{name}: {e}, skipped", file=sys.stderr)
                continue
        else:
            size, moves = args.size, log_moves(os.path.join(args.logs, name))
        played = answers(os.path.join(args.logs, name))
        opening = len(moves) - len(played)
        if opening < 0 or [mv for _, mv, _ in played] != moves[opening:]:
            print(f"{name}: log and record disagree, skipped", file=sys.stderr)
            continue
        peer_was_mating = False
        for i, (engine, mv, messages) in enumerate(played):
            if engine != args.peer:
                continue
            mate = mate_of(messages)
            if mate and not peer_was_mating and i >= 1 and played[i - 1][0] == args.ours:
                plies, pv = mate
                line = [mv] if pv is None else [coord(t, size) for t in pv]
                if line and line[0] == mv and all(line):
                    before = moves[: opening + i - 1]
                    blunder = moves[opening + i - 1]
                    fmt = lambda ms: " ".join(f"{x},{y}" for x, y in ms)
                    print(
                        "\t".join(
                            [
                                f"{os.path.basename(args.logs.rstrip('/'))}/{name[:-4]}",
                                args.rule,
                                str(size),
                                fmt(before),
                                f"{blunder[0]},{blunder[1]}",
                                args.peer,
                                f"+M{plies}" if pv is not None else f"+v{plies}",
                                fmt(line),
                            ]
                        )
                    )
                    found += 1
                    if not args.all:
                        break
            peer_was_mating = mate is not None
    print(f"{found} blunders", file=sys.stderr)


if __name__ == "__main__":
    main()
