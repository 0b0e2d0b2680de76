#!/usr/bin/env python3
"""How an engine spent its clock in a match: seconds per move over the game.

    .venv/bin/python scripts/time_plot.py runs/fastgame/freestyle20-rapfi \\
        --match-ms 120000 --turn-ms 5000 --out docs/fastgame-time.png

Reads the PSQ records (`STEM-psq/game_NNNNN.psq`, each move's time in ms)
and the game logs (`STEM-games/game_NNNNN.log`, for the number of opening
stones) that `pbrain-wuzi match --psq DIR --log-dir DIR` writes (and
scripts/ladder.py keeps under its --log-dir), and prints for every engine
its moves per game (median), its time per move (mean, over its first 10
moves, largest), its moves under 0.1 s, the most time it took in one game
and its clock left at the end of a game (median, least) and at any
move (least). With --out it draws, for each engine, the seconds
of each of its moves by move number (one faint line per game, the median in
bold) and the clock left, with the turn limit and the match clock marked.

Drawing needs matplotlib (the project's .venv has it:
scripts/setup-distributed.sh); the summary needs only the standard library.
"""
import argparse
import glob
import os
import re
import statistics
import sys


class PlotError(Exception):
    pass


def read_game(psq_path, log_path):
    """(black, white, [(colour 0/1, ms)] of the engines' own moves)."""
    with open(psq_path, encoding="utf-8") as f:
        lines = [line.strip() for line in f if line.strip()]
    if not lines or not lines[0].startswith("Piskvork"):
        raise PlotError(f"{psq_path}: not a PSQ record")
    moves = [line for line in lines[1:] if re.fullmatch(r"\d+,\d+,\d+", line)]
    names = [line for line in lines[1:] if not re.fullmatch(r"\d+,\d+,\d+", line)]
    if len(names) < 2:
        raise PlotError(f"{psq_path}: no player names after the moves")
    # The opening's stones are the runner's, not the engines': the game
    # log's first line says how many there were.
    try:
        with open(log_path, encoding="utf-8", errors="replace") as f:
            first = f.readline()
    except OSError as e:
        raise PlotError(f"{log_path}: {e} (it says how many stones the opening had)")
    m = re.search(r"opening .*\((\d+) stones?\)", first)
    opening = int(m.group(1)) if m else 0
    timed = []
    for i, line in enumerate(moves):
        if i < opening:
            continue
        timed.append((i % 2, int(line.split(",")[2])))
    return names[0], names[1], timed


def read_match(stem):
    """{engine: [[ms of each of its moves] per game]}."""
    psqs = sorted(glob.glob(os.path.join(stem + "-psq", "game_*.psq")))
    if not psqs:
        raise PlotError(f"no PSQ records in {stem}-psq/")
    per_engine = {}
    for psq in psqs:
        log = os.path.join(stem + "-games", os.path.basename(psq)[:-4] + ".log")
        black, white, timed = read_game(psq, log)
        for colour, name in enumerate((black, white)):
            per_engine.setdefault(name, []).append([ms for c, ms in timed if c == colour])
    return per_engine


def clock_left(match_ms, inc_ms, moves_ms):
    """The clock left after each move: the match clock less the time spent,
    plus the increment each move earns (`tc=M/T+I`)."""
    left, clock = [], match_ms
    for ms in moves_ms:
        clock += inc_ms - ms
        left.append(clock)
    return left


def summary(per_engine, match_ms, inc_ms=0):
    out = []
    for name, games in sorted(per_engine.items()):
        all_ms = [ms for g in games for ms in g]
        if not all_ms:
            continue
        totals = [sum(g) for g in games]
        first = [ms for g in games for ms in g[:10]]
        quick = sum(1 for ms in all_ms if ms < 100)
        line = (f"{name}: {len(games)} games, {len(all_ms)} moves "
                f"(median {statistics.median(len(g) for g in games):g} per game), "
                f"{statistics.mean(all_ms) / 1000:.2f} s per move on average, "
                f"{statistics.mean(first) / 1000:.2f} s over its first 10 moves, "
                f"longest move {max(all_ms) / 1000:.2f} s, {quick} moves under 0.1 s, "
                f"most time in one game {max(totals) / 1000:.1f} s")
        if match_ms:
            lefts = [clock_left(match_ms, inc_ms, g) for g in games if g]
            at_end = [left[-1] / 1000 for left in lefts]
            least = min(ms for left in lefts for ms in left)
            line += (f", clock left at the end {statistics.median(at_end):.1f} s (median), "
                     f"{min(at_end):.1f} s (least) of {match_ms / 1000:.0f} s; "
                     f"least at any move {least / 1000:.1f} s")
        out.append(line)
    return "\n".join(out)


def draw(per_engine, match_ms, turn_ms, title, out, inc_ms=0):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise PlotError("drawing needs matplotlib: run with .venv/bin/python "
                        "(scripts/setup-distributed.sh installs it)")
    names = sorted(per_engine)
    rows = 2 if match_ms else 1
    fig, axes = plt.subplots(rows, len(names), figsize=(5.5 * len(names), 3.6 * rows),
                             squeeze=False, sharex=True)
    for col, name in enumerate(names):
        games = per_engine[name]
        longest = max(len(g) for g in games)
        median = [statistics.median([g[i] / 1000 for g in games if len(g) > i])
                  for i in range(longest)]
        ax = axes[0][col]
        for g in games:
            ax.plot(range(1, len(g) + 1), [ms / 1000 for ms in g], color="tab:blue",
                    alpha=0.25, linewidth=0.8)
        ax.plot(range(1, longest + 1), median, color="tab:blue", linewidth=2, label="median")
        if turn_ms:
            ax.axhline(turn_ms / 1000, color="tab:red", linestyle="--", linewidth=1,
                       label="turn limit")
        ax.set_title(f"{name}: seconds per move")
        ax.set_ylabel("seconds")
        ax.set_ylim(bottom=0)
        ax.legend(loc="upper right", fontsize=8)
        if match_ms:
            ax = axes[1][col]
            for g in games:
                left = [ms / 1000 for ms in clock_left(match_ms, inc_ms, g)]
                ax.plot(range(1, len(g) + 1), left, color="tab:green", alpha=0.35, linewidth=0.8)
            ax.set_title(f"{name}: clock left")
            ax.set_ylabel("seconds")
            # With an increment the clock can grow past its start.
            ax.set_ylim(0, None if inc_ms else match_ms / 1000)
        axes[rows - 1][col].set_xlabel("the engine's move number (after the opening)")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(out, dpi=90)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("stem", help="the match's files without -psq/-games (runs/fastgame/freestyle20-rapfi)")
    ap.add_argument("--match-ms", type=int, default=0, help="the match clock in ms (0: none)")
    ap.add_argument("--turn-ms", type=int, default=0, help="the turn limit in ms (0: none)")
    ap.add_argument("--inc-ms", type=int, default=0,
                    help="the match clock's increment per move in ms (tc=M/T+I; default 0)")
    ap.add_argument("--title", default="Time per move", help="the plot's title")
    ap.add_argument("--out", help="PNG to draw (default: the summary only)")
    args = ap.parse_args()
    try:
        per_engine = read_match(args.stem)
        print(summary(per_engine, args.match_ms, args.inc_ms))
        if args.out:
            draw(per_engine, args.match_ms, args.turn_ms, args.title, args.out, args.inc_ms)
            print(f"wrote {args.out}")
    except (PlotError, OSError, ValueError) as e:
        print(f"time_plot: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
