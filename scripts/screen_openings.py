#!/usr/bin/env python3
"""Screens an opening pool with Wuzi's own search: drops the openings it
proves won, lost or drawn for the side to move (a proven draw teaches no
more than a proven win).

Generators balance their openings with their own evaluation; an opening our
solver (the root VCT and the tree search's proofs) already proves won makes
a self-play game whose targets teach nothing but that proof. Each opening
(one per line, `pos` notation as in networks/selfplay/*-pool.txt: `h8i9j7`)
is analysed with `pbrain-wuzi analyse --json --playouts N`; the kept ones go
to stdout in their order, one line each with its evaluation on stderr.
Blank lines, `#` comments and a byte-order mark are skipped, as the match
runner's opening reader skips them; an opening the engine cannot analyse
(a forbidden stone, a finished game) is reported and left out, and the
screening goes on.

Usage: scripts/screen_openings.py --engine target/release/pbrain-wuzi
       --rule freestyle --board 20 [--playouts 200] [--config FILE] POOL > KEPT
"""
import argparse
import json
import re
import subprocess
import sys

CELL = re.compile(r"[a-zA-Z]\d+")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", required=True, help="the pbrain-wuzi binary")
    parser.add_argument("--config", help="its configuration file")
    parser.add_argument("--rule", required=True)
    parser.add_argument("--board", required=True)
    parser.add_argument("--playouts", type=int, default=200)
    parser.add_argument("pool", help="opening file, one opening per line")
    args = parser.parse_args()
    kept = dropped = failed = 0
    try:
        with open(args.pool, encoding="utf-8-sig") as f:
            lines = f.read().splitlines()
    except (OSError, UnicodeDecodeError) as e:
        sys.exit(f"{args.pool}: {e}")
    for index, line in enumerate(lines, 1):
        opening = line.strip()
        if not opening or opening.startswith("#"):
            continue
        cells = CELL.findall(opening)
        if "".join(cells) != opening:
            sys.exit(f"line {index}: not an opening in pos notation: {opening!r}")
        command = [args.engine]
        if args.config:
            command += ["--config", args.config]
        command += ["analyse", "--rule", args.rule, "--board", args.board,
                    "--playouts", str(args.playouts), "--json", " ".join(cells)]
        try:
            run = subprocess.run(command, capture_output=True, text=True)
        except OSError as e:
            sys.exit(f"cannot run {args.engine}: {e}")
        if run.returncode != 0:
            failed += 1
            print(f"{index}\t{opening}\tnot analysed: {run.stderr.strip()}", file=sys.stderr)
            continue
        report = json.loads(run.stdout)
        proven = report.get("proven")
        verdict = "proven " + proven["result"] if proven else "open"
        print(f"{index}\t{opening}\t{verdict}\t{report.get('expected_score')}", file=sys.stderr)
        if proven:
            dropped += 1
        else:
            kept += 1
            print(opening)
    print(f"kept {kept}, dropped {dropped} (proven)"
          + (f", {failed} not analysed (left out)" if failed else ""), file=sys.stderr)


if __name__ == "__main__":
    main()
