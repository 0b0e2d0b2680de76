#!/usr/bin/env python3
"""Converts a Gomocup results folder (one Piskvork .psq file per game, as in
gomocupYYYYresults.zip) into the Gomocup TSV that `pbrain-wuzi train` reads,
in the layout of ../shared/data/gomocup_games.

A .psq file does not say which moves were the tournament's opening (placed
by the judge, not chosen by the engines); the trainer must not learn them as
moves. The opening of a game is its longest leading run of moves that is one
of OPENINGS (the league's opening file, Gomocup offset format, one opening
per line), anywhere on the board and under any of its symmetries. Black is
the first engine named in the file; the winner is the result digit of the
file name (round_i_j_R: 1 black, 2 white, 0 draw), as GomocupJudge writes
it. A game that matches no opening, names no two engines, has no result
digit, or holds an off-board or repeated move is left out and counted on
stderr (the judge records an illegal move; the trainer refuses the game).

Usage: scripts/gomocup_psq_to_tsv.py --league Freestyle15_1 --year 2024
       --rule freestyle --openings OPENINGS.txt FOLDER > GAMES.tsv
"""
import argparse
import os
import sys

HEADER = "#game_id\tyear\tleague\trule\tboard\tblack\twhite\twinner\tend\tn_opening\tn_moves\tmoves"
SYMMETRIES = [
    lambda x, y: (x, y), lambda x, y: (-x, y), lambda x, y: (x, -y), lambda x, y: (-x, -y),
    lambda x, y: (y, x), lambda x, y: (-y, x), lambda x, y: (y, -x), lambda x, y: (-y, -x),
]


def shape(moves):
    """The smallest form of a stone sequence (black's and white's stones,
    alternating from black) over the symmetries, shifted to the origin."""
    forms = []
    for sym in SYMMETRIES:
        cells = [sym(x, y) for x, y in moves]
        min_x = min(c[0] for c in cells)
        min_y = min(c[1] for c in cells)
        shifted = [(x - min_x, y - min_y) for x, y in cells]
        forms.append((tuple(sorted(shifted[0::2])), tuple(sorted(shifted[1::2]))))
    return min(forms)


def read_openings(path):
    openings = []
    with open(path, encoding="utf-8-sig") as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            numbers = [int(t) for t in line.replace(",", " ").split()]
            if not numbers or len(numbers) % 2:
                sys.exit(f"{path}: not an offset opening: {line!r}")
            openings.append(list(zip(numbers[0::2], numbers[1::2])))
    return openings


def makes_five(stones, x, y, exactly):
    colour = stones[(x, y)]
    for dx, dy in ((1, 0), (0, 1), (1, 1), (1, -1)):
        run = 1
        for sign in (1, -1):
            i = 1
            while stones.get((x + sign * dx * i, y + sign * dy * i)) == colour:
                run += 1
                i += 1
        if run == 5 or (run > 5 and not exactly):
            return True
    return False


def read_psq(path):
    """(width, height, moves 0-based, engine names), or None if malformed."""
    with open(path, encoding="latin-1") as f:
        lines = f.read().splitlines()
    if not lines or not lines[0].lower().startswith("piskvork"):
        return None
    try:
        width, height = (int(t) for t in lines[0].split()[1].rstrip(",").split("x"))
    except (IndexError, ValueError):
        return None
    moves, names = [], []
    for line in lines[1:]:
        line = line.strip()
        fields = line.split(",")
        if len(fields) == 3 and all(f.lstrip("-").isdigit() for f in fields):
            moves.append((int(fields[0]) - 1, int(fields[1]) - 1))
        elif line.lower().endswith(".zip"):
            names.append(line[:-4])
    return width, height, moves, names


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", help="folder of .psq files (one game each)")
    parser.add_argument("--openings", required=True, help="the league's openings (offset format)")
    parser.add_argument("--league", required=True, help="league name for the game ids, e.g. Freestyle15_1")
    parser.add_argument("--year", required=True)
    parser.add_argument("--rule", required=True, choices=["freestyle", "standard"],
                        help="the league's rule (renju games need the forbidden points: not converted here)")
    args = parser.parse_args()

    openings = read_openings(args.openings)
    shapes = {(len(o), shape(o)) for o in openings}
    lengths = sorted({len(o) for o in openings}, reverse=True)
    exactly = args.rule == "standard"
    left_out = {}
    print(HEADER)
    for name in sorted(f for f in os.listdir(args.folder) if f.lower().endswith(".psq")):
        game = read_psq(os.path.join(args.folder, name))
        base = name[:-4]
        winner = {"1": "B", "2": "W", "0": "D"}.get(base.rsplit("_", 1)[-1])
        why = None
        if game is None:
            why = "not a psq record"
        else:
            width, height, moves, names = game
            if len(names) != 2:
                why = "not two engine names"
            elif winner is None:
                why = "no result digit in the name"
            elif any(not (0 <= x < width and 0 <= y < height) for x, y in moves) or len(set(moves)) != len(moves):
                why = "an off-board or repeated move"
        if why is None:
            n_opening = next((n for n in lengths if len(moves) >= n and (n, shape(moves[:n])) in shapes), None)
            if n_opening is None:
                why = "no opening of the file"
        if why is not None:
            left_out[why] = left_out.get(why, 0) + 1
            continue
        stones = {move: i % 2 for i, move in enumerate(moves)}
        last = len(moves) - 1
        winner_moved_last = last % 2 == (0 if winner == "B" else 1)
        if winner == "D":
            end = "draw"
        elif winner_moved_last and makes_five(stones, *moves[last], exactly):
            end = "five"
        else:
            end = "other"
        board = str(width) if width == height else f"{width}x{height}"
        print("\t".join([
            f"{args.year}/{args.league}/{base}", args.year, args.league, args.rule, board,
            names[0], names[1], winner, end, str(n_opening), str(len(moves)),
            " ".join(f"{x},{y}" for x, y in moves),
        ]))
    for why, count in sorted(left_out.items()):
        print(f"left out {count}: {why}", file=sys.stderr)


if __name__ == "__main__":
    main()
