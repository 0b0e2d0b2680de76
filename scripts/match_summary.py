"""Reads the summary that `pbrain-wuzi match` prints at the end of a match
(arena/mod.rs, `impl Display for MatchSummary`) and its game lines
(arena/runner.rs): scripts/ladder.py's parser, in a module of its own.

Python 3 standard library only.
"""
import math
import re


class SummaryError(Exception):
    """The output holds no summary to read."""


RE_HEADER = re.compile(r"^(?P<a>.+?) vs (?P<b>.+?): (?P<board>\d+x\d+) (?P<rule>\w+), "
                       r"(?P<played>\d+) of (?P<planned>\d+) games, openings: (?P<openings>.*), "
                       r"seed (?P<seed>\d+)$")
RE_SCORE = re.compile(r"^Score of (?P<a>.+?) vs (?P<b>.+?): (?P<w>\d+) - (?P<l>\d+) - (?P<d>\d+)"
                      r"\s+\[(?P<score>[\d.]+)\]\s+(?P<n>\d+)$")
RE_ELO = re.compile(r"^Elo difference: (?P<elo>\S+) \+/- (?P<margin>\S+), LOS: (?P<los>[\d.]+) %, "
                    r"draw ratio: (?P<draws>[\d.]+) %$")
RE_INTERVAL = re.compile(r"^Elo 95% interval: (?P<lower>\S+) \.\. (?P<upper>\S+)$")
RE_ENDINGS = re.compile(r"^Endings: (?P<list>.*)$")
RE_FAULTS = re.compile(r"^(?P<name>.+?): losses by error: (?P<list>.*); killed after END: (?P<kills>\d+)$")
RE_WARNING = re.compile(r"^Warning: (?P<n>\d+) game\(s\) ended by an engine fault")
RE_SKIPPED = re.compile(r"^Skipped openings: (?P<n>\d+)$")
RE_GAME = re.compile(r"^Game (?P<i>\d+) \((?P<black>.+?) vs (?P<white>.+?), (?P<opening>.+?)\): "
                     r"(?P<result>1-0|0-1|1/2-1/2) ")
RE_OVERHEAD = re.compile(r"^Runner overhead: ")
RE_SPRT = re.compile(r"^SPRT \((?P<settings>[^)]*)\): LLR (?P<llr>\S+) \[.*\]: (?P<verdict>.*)$")
RE_INTERRUPTED = re.compile(r"^Interrupted: ")
RE_PAIRS = re.compile(r"^Pairs \(points 0, 1/2, 1, 3/2, 2\): (?P<counts>\d+ \d+ \d+ \d+ \d+)"
                      r"(?:; Elo from pairs: (?P<elo>\S+) \(95% (?P<lower>\S+) \.\. (?P<upper>\S+)\))?$")


def parse_number(text):
    """The runner's `+12.3`, `inf`, `-inf`, `n/a`."""
    t = text.lstrip("+")
    if t == "n/a":
        return math.nan
    return float(t)  # float() reads inf and -inf


def parse_counts(text):
    """`five 38, board full 2` -> {'five': 38, 'board full': 2}; `none` -> {}."""
    if text.strip() == "none":
        return {}
    counts = {}
    for item in text.split(", "):
        m = re.fullmatch(r"(.+) (\d+)", item.strip())
        if not m:
            raise ValueError(item)
        counts[m.group(1)] = int(m.group(2))
    return counts


def parse_summary(lines, wuzi_name, peer_name):
    """The runner's final table (arena/mod.rs, `impl Display for
    MatchSummary`) and its game lines (arena/runner.rs). Returns a dict and
    the list of summary lines it did not understand."""
    r = {"faults": {}, "kills": {}, "warning_faults": 0, "skipped_openings": 0, "interrupted": False}
    unparsed = []
    game_tally = [0, 0, 0]
    in_summary = False
    for raw in lines:
        line = raw.rstrip("\n")
        g = RE_GAME.match(line)
        if g and not in_summary:
            res = g.group("result")
            if res == "1/2-1/2":
                game_tally[2] += 1
            else:
                winner = g.group("black") if res == "1-0" else g.group("white")
                game_tally[0 if winner == wuzi_name else 1] += 1
            continue
        m = RE_HEADER.match(line)
        if m and m.group("a") == wuzi_name and m.group("b") == peer_name:
            in_summary = True
            r.update(board=m.group("board"), rule=m.group("rule"), played=int(m.group("played")),
                     planned=int(m.group("planned")), openings=m.group("openings"),
                     seed=int(m.group("seed")))
            continue
        if not in_summary:
            continue
        if m := RE_SCORE.match(line):
            r.update(w=int(m.group("w")), l=int(m.group("l")), d=int(m.group("d")),
                     score=float(m.group("score")), games=int(m.group("n")))
        elif m := RE_ELO.match(line):
            r.update(elo=parse_number(m.group("elo")), margin=parse_number(m.group("margin")),
                     los=float(m.group("los")), draw_ratio=float(m.group("draws")))
        elif m := RE_INTERVAL.match(line):
            r.update(lower=parse_number(m.group("lower")), upper=parse_number(m.group("upper")))
        elif m := RE_ENDINGS.match(line):
            try:
                r["endings"] = parse_counts(m.group("list"))
            except ValueError:
                unparsed.append(line)
        elif m := RE_FAULTS.match(line):
            try:
                r["faults"][m.group("name")] = parse_counts(m.group("list"))
                r["kills"][m.group("name")] = int(m.group("kills"))
            except ValueError:
                unparsed.append(line)
        elif m := RE_WARNING.match(line):
            r["warning_faults"] = int(m.group("n"))
        elif m := RE_SKIPPED.match(line):
            r["skipped_openings"] = int(m.group("n"))
        elif m := RE_PAIRS.match(line):
            r["pairs"] = [int(c) for c in m.group("counts").split()]
            if m.group("elo") is not None:
                r.update(pairs_elo=parse_number(m.group("elo")), pairs_lower=parse_number(m.group("lower")),
                         pairs_upper=parse_number(m.group("upper")))
        elif m := RE_SPRT.match(line):
            r.update(sprt_llr=float(m.group("llr")), sprt_verdict=m.group("verdict"))
        elif RE_INTERRUPTED.match(line):
            r["interrupted"] = True
        elif RE_OVERHEAD.match(line):
            in_summary = False
        elif line.startswith((f"{wuzi_name} as ", f"{peer_name} as ", f"{wuzi_name} total", "black ")) \
                or re.fullmatch(r"\s+games\s+wins\s+losses\s+draws\s+score", line):
            pass  # the per-colour table: the same figures, by colour
        elif line.strip():
            unparsed.append(line)
    if "w" not in r:
        raise SummaryError("no `Score of ...` line in the runner's output")
    if (r["w"], r["l"], r["d"]) != tuple(game_tally):
        unparsed.append(f"(the game lines add up to {game_tally[0]}-{game_tally[1]}-{game_tally[2]}, "
                        f"the summary says {r['w']}-{r['l']}-{r['d']})")
    return r, unparsed
