#!/usr/bin/env python3
"""Runs the tournament ladder: Wuzi against every peer, league by league.

    python3 scripts/ladder.py                        # all leagues, every peer, 40 games each
    python3 scripts/ladder.py --dry-run              # print the match commands only
    python3 scripts/ladder.py --leagues freestyle15 --peers pela --games 2 --out /tmp/l.md

For each league (freestyle15, freestyle20, standard15, renju15) it plays
Wuzi against each peer of ../shared/peers that plays that rule and board,
one match at a time, with `pbrain-wuzi match` from the league's evaluation
openings (openings/<league>-eval.txt, colours swapped), and writes a
markdown table (default docs/ladder.md; a league played again replaces its
own section, the other leagues' stay, and so do its rows of peers not
played again, with a note): one row per (league, peer) with
W-L-D, score, Elo with its 95% interval and the forfeits, crashes and other
losses by error, and above each league's table the date, commit, CPU
(AVX-512, AMX), the conditions and the commands to rerun it. Each match's
full terminal output, per-game logs (every line each way), SGF records and
PSQ records (with each move's time, for scripts/time_plot.py) are kept under
--log-dir (default runs/ladder/).

A league whose openings file is missing is skipped with a message. A match
that cannot run (Wuzi's binary or a named peer missing, the runner failing)
or is interrupted stops the ladder with a non-zero exit; the finished rows,
and the games an interrupted match played, then go to <out>.partial.md, not
to --out. Ctrl-C lets the match's games in progress finish (the runner gets
it too); a second one stops at once.

Python 3 standard library only. Relative paths given on the command line
are taken from the current directory; the defaults are relative to the
repository root, where the matches run.
"""
import argparse
import datetime
import math
import os
import re
import shlex
import shutil
import subprocess
import sys

from match_summary import SummaryError, parse_summary

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# league -> (rule name, Gomocup rule number, board side)
LEAGUES = {
    "freestyle15": ("freestyle", 0, 15),
    "freestyle20": ("freestyle", 0, 20),
    "standard15": ("standard", 1, 15),
    "renju15": ("renju", 4, 15),
}

# The peers of ../shared/peers (see its README), weakest first. `leagues`:
# what each plays. Rapfi 2018 reads `INFO rule` and ignores it (freestyle
# only; boards up to 24); PentaZen is 15x15 freestyle only; Pela (the
# Piskvork example brain) follows `INFO rule` (exact five, renju fouls) on
# any board up to 127; Rapfi 0.43 plays every rule on boards up to 22.
PEERS = {
    "pela": {
        "label": "Pela",
        "binary": "pela/pbrain-pela",
        "leagues": ("freestyle15", "freestyle20", "standard15", "renju15"),
    },
    "rapfi2018": {
        "label": "Rapfi 2018",
        "binary": "rapfi2018/pbrain-rapfi2018",
        "leagues": ("freestyle15", "freestyle20"),
        # It keeps about 240 ms of each turn in reserve (peers README).
        "min_turn_s": 0.5,
    },
    "pentazen": {
        "label": "PentaZen (`--skip-unparsable`)",
        "binary": "pentazen/pbrain-pentazen",
        "leagues": ("freestyle15",),
        # It prints its search depth as a raw byte; depth 10 is a line break.
        "match_flags": ["--skip-unparsable"],
    },
    "rapfi": {
        "label": "Rapfi 0.43, classical",
        "binary": "rapfi/pbrain-rapfi",
        "leagues": ("freestyle15", "freestyle20", "standard15", "renju15"),
    },
}

DEFAULTS = {
    "peers_dir": "../shared/peers",
    "games": 40,
    "tc": "0.5",
    "wuzi": "target/release/pbrain-wuzi",
    "threads": 2,
    "seed": 1,
    "out": "docs/ladder.md",
    "log_dir": "runs/ladder",
}


class LadderError(Exception):
    pass


def split_list(values, known, what):
    """`a,b c` -> [a, b, c], each checked against `known`, order of `known`."""
    items = []
    for v in values:
        items.extend(x for x in v.replace(",", " ").split() if x)
    unknown = [x for x in items if x not in known]
    if unknown:
        raise LadderError(f"unknown {what}: {', '.join(unknown)} (known: {', '.join(known)})")
    return [k for k in known if k in items]


def user_path(value, default):
    """A path given on the command line is from the current directory; the
    default is from the repository root. Returned absolute."""
    if value is None:
        return os.path.normpath(os.path.join(REPO, default))
    return os.path.abspath(value)


def rel(path):
    """The path as the commands show it: relative to the repository root
    when it lies in it or beside it (../shared/peers), else absolute."""
    r = os.path.relpath(path, REPO)
    if r.startswith(os.path.join("..", "..")):
        return path
    # A bare name would be looked up in PATH, not in the repository.
    return r if os.path.dirname(r) else os.path.join(".", r)


def turn_control(tc):
    """`0.5` -> `0/0.5` (seconds per move, no game clock); `M/T+I` as is."""
    if "/" in tc:
        return tc
    try:
        seconds = float(tc)
    except ValueError:
        raise LadderError(f"--tc {tc!r}: seconds per move (0.5) or c-gomoku-cli's M/T+I")
    if not (seconds > 0 and math.isfinite(seconds)):
        raise LadderError(f"--tc {tc!r}: must be a positive number of seconds")
    return f"0/{tc}"


def turn_seconds(tc):
    """The turn time of a c-gomoku-cli time control `M/T+I` (None if none)."""
    m = re.fullmatch(r"[\d.]+/([\d.]+)(\+[\d.]+)?", tc)
    return float(m.group(1)) if m else None


def git(*args):
    try:
        out = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, check=True)
        return out.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def commit_text(binary):
    """The checkout's commit, as far as it is the binary's: the binary
    carries none, so one built before the checkout's last commit (a stale
    build, or another one given with --wuzi) is said to be of an unknown
    commit rather than labelled with today's."""
    head = git("rev-parse", "--short", "HEAD")
    if head is None:
        return "unknown (not a git checkout)"
    committed = git("log", "-1", "--format=%ct", "HEAD")
    try:
        built = os.path.getmtime(binary)
    except OSError:
        built = None
    if committed is not None and built is not None and built < int(committed):
        return f"unknown (the binary is older than the checkout's commit {head})"
    dirty = git("status", "--porcelain", "--untracked-files=no")
    return f"{head} (with uncommitted changes)" if dirty else head


def cpu_text():
    fields, flags = {}, set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                key = key.strip()
                if key == "flags" and not flags:
                    flags = set(value.split())
                elif key in ("model name", "cpu family", "model", "vendor_id"):
                    fields.setdefault(key, value.strip())
    except OSError:
        pass
    model = fields.get("model name", "unknown CPU (no /proc/cpuinfo)")
    if "cpu family" in fields and "model" in fields:
        # A virtual machine may name the CPU only "AMD EPYC": the family
        # and model numbers tell the generation (25/17 is Zen 4, 6/143 is
        # Sapphire Rapids).
        model += f" (family {fields['cpu family']}, model {fields['model']})"
    cores = os.cpu_count() or 0
    has = lambda *names: any(n in flags for n in names)
    avx512 = "yes" if has("avx512f") else "no"
    if has("avx512_bf16"):
        avx512 += " (with BF16)"
    amx = "yes" if has("amx_tile", "amx_bf16") else "no"
    avx2 = "yes" if has("avx2") else "no"
    return f"{model}, {cores} cores; AVX2 {avx2}, AVX-512 {avx512}, AMX {amx}"


def count_openings(path):
    with open(path) as f:
        return sum(1 for line in f if line.strip() and not line.lstrip().startswith("#"))


def match_groups(args, league, peer):
    """The match's command line in groups of words, one group per shown line."""
    rule_name, rule, board = LEAGUES[league]
    info = PEERS[peer]
    wuzi = rel(args.wuzi)
    return [
        [wuzi, "match"],
        ["--engine1", f"cmd={shlex.quote(wuzi)}", "name=wuzi"],
        ["--engine2", f"cmd={shlex.quote(rel(os.path.join(args.peers_dir, info['binary'])))}",
         f"name={peer}"],
        ["--each", f"tc={args.tc_spec}", f"threads={args.threads}", "tolerance=3000",
         "--rule", str(rule), "--board", str(board)],
        ["--openings", rel(args.openings[league]), "--opening-format", "pos"],
        ["--games", str(args.games), "--concurrency", "1", "--seed", str(args.seed),
         *info.get("match_flags", [])],
    ]


def match_command(args, league, peer):
    return [w for group in match_groups(args, league, peer) for w in group]


def shell_text(args, league, peer):
    """The match's command as one would type it, over several lines."""
    return " \\\n  ".join(" ".join(shlex.quote(w) for w in g)
                            for g in match_groups(args, league, peer))


def elo_text(r):
    """`+168 ± 130` from the runner's figures; where the interval reaches a
    score of 0 or 1 (the runner's margin is then infinite) its finite end,
    from the runner's `Elo 95% interval` line."""
    if r["w"] + r["l"] + r["d"] == 0:
        return "no games"
    elo, margin = r.get("elo", math.nan), r.get("margin", math.nan)
    lo, hi = r.get("lower", math.nan), r.get("upper", math.nan)
    # The runner's figures as it printed them (one decimal): rounding them
    # again would move a half up or down a second time.
    if math.isfinite(elo):
        elo = round(elo, 1) + 0.0  # no "-0.0"
    if r["w"] + r["l"] == 0:
        # All draws: no spread, so no interval (the runner prints none).
        return "+0 (all draws: no interval)"
    # The interval is not symmetric in Elo: its ends, where the runner gave them.
    if math.isfinite(elo) and math.isfinite(lo) and math.isfinite(hi):
        return f"{elo:+.1f} ({lo:+.1f}..{hi:+.1f})"
    if math.isfinite(elo) and math.isfinite(margin):
        return f"{elo:+.1f} ± {margin:.1f}"
    if not math.isfinite(elo):
        return f"{'+' if elo > 0 else '-'}inf (all games {'won' if elo > 0 else 'lost'}: no interval)"
    if math.isfinite(lo) and not math.isfinite(hi):
        return f"{elo:+.1f} (95%: above {lo:+.1f})"
    if math.isfinite(hi) and not math.isfinite(lo):
        return f"{elo:+.1f} (95%: below {hi:+.1f})"
    return f"{elo:+.1f} (no interval)"


def faults_text(r, names):
    parts = []
    for name, label in names:
        faults = r["faults"].get(name, {})
        if faults:
            parts.append(f"{label}: " + ", ".join(f"{k} {v}" for k, v in faults.items()))
        kills = r["kills"].get(name, 0)
        if kills:
            parts.append(f"{label}: killed after END {kills}")
    return "; ".join(parts) if parts else "none"


# ---------------------------------------------------------------- running

def run_match(cmd, log_path):
    """Runs one match, its output to the terminal and to `log_path`.
    Returns (exit status, output lines, whether Ctrl-C interrupted it)."""
    lines = []
    with open(log_path, "w", encoding="utf-8", errors="replace") as log:
        log.write("$ " + " ".join(shlex.quote(w) for w in cmd) + "\n")
        log.flush()
        try:
            proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, text=True, encoding="utf-8",
                                    errors="replace", bufsize=1)
        except OSError as e:
            log.write(f"cannot start the runner: {e}\n")
            raise LadderError(f"cannot start the runner {cmd[0]}: {e}")
        interrupted = False
        try:
            while True:
                try:
                    for line in proc.stdout:
                        lines.append(line)
                        log.write(line)
                        log.flush()
                        sys.stdout.write("  " + line)
                        sys.stdout.flush()
                    break
                except KeyboardInterrupt:
                    # The terminal's Ctrl-C reached the runner too: it lets
                    # the games in progress finish and prints its summary,
                    # which is read to the end. A second one ends it.
                    if interrupted:
                        raise
                    interrupted = True
                    sys.stderr.write("ladder: interrupted; the runner finishes its games "
                                     "(Ctrl-C again to stop at once)\n")
            rc = proc.wait()
        finally:
            # Whatever ended the reading (a second Ctrl-C, a closed stdout,
            # a full disk), the runner and its engines do not play on.
            if proc.poll() is None:
                proc.terminate()
                proc.wait()
        log.write(f"# exit status {rc}\n")
    return rc, lines, interrupted


def repeats_text(games, openings_used):
    """How often each opening is played: twice (colours swapped) unless
    the games outnumber two per opening, when the runner starts again
    from the first one."""
    if games <= 2 * openings_used:
        return "each played twice, colours swapped"
    return f"each played {games / openings_used:g} times on average, colours swapped in pairs"


def league_block(args, league, rows, when, commit, cpu, errors):
    rule_name, rule, board = LEAGUES[league]
    openings = args.openings[league]
    n_open = count_openings(openings)
    used = min(n_open, (args.games + 1) // 2)
    peers = [p for p, _ in rows]
    rerun = ["python3", "scripts/ladder.py", "--leagues", league, "--peers", ",".join(peers),
             "--games", str(args.games), "--tc", args.tc, "--threads", str(args.threads),
             "--seed", str(args.seed)]
    if rel(args.wuzi) != DEFAULTS["wuzi"]:
        rerun += ["--wuzi", rel(args.wuzi)]
    if rel(args.peers_dir) != DEFAULTS["peers_dir"]:
        rerun += ["--peers-dir", rel(args.peers_dir)]
    if rel(args.out) != os.path.join(".", DEFAULTS["out"]):
        rerun += ["--out", rel(args.out)]
    tsec = turn_seconds(args.tc_spec)
    time_text = f"{tsec:g} s per move" if tsec is not None and args.tc_spec.startswith("0/") \
        else f"time control {args.tc_spec}"
    out = [f"## {rule_name.capitalize()} {board}x{board}", ""]
    out.append(f"- Date: {when}; commit {commit}; Wuzi binary `{rel(args.wuzi)}`")
    out.append(f"- CPU: {cpu}")
    out.append(
        f"- Conditions: {rule_name} {board}x{board} (`--rule {rule} --board {board}`), {time_text} "
        f"(`tc={args.tc_spec}`), `threads={args.threads}` for both engines, `tolerance=3000`, "
        f"one game at a time (`--concurrency 1`), {args.games} games per peer from "
        f"{'the first ' + str(used) + ' of the ' if used < n_open else 'the '}{n_open} openings "
        f"of `{rel(openings)}` ({repeats_text(args.games, used)}), `pbrain-wuzi match`, `--seed {args.seed}`; peers from `{rel(args.peers_dir)}`")
    out.append(f"- Rerun (from the repository root): `{' '.join(shlex.quote(w) for w in rerun)}`")
    out.append("")
    out.append("| Wuzi vs | W-L-D | score | Elo (95%) | forfeits, crashes, errors | endings | date |")
    out.append("|---|---|---|---|---|---|---|")
    notes = []
    for peer, r in rows:
        label = PEERS[peer]["label"]
        if r is None:
            out.append(f"| {label} | failed to run | | | | | |")
            continue
        endings = ", ".join(f"{k} {v}" for k, v in r.get("endings", {}).items()) or "none"
        wld = f"{r['w']}-{r['l']}-{r['d']}"
        out.append(f"| {label} | {wld} | {r['score']:.3f} | {elo_text(r)} | "
                   f"{faults_text(r, [('wuzi', 'Wuzi'), (peer, label.split(' (')[0])])} | "
                   f"{endings} | {r['date']} |")
        if r.get("played") is not None and r["played"] != r["planned"]:
            notes.append(f"{label}: {r['played']} of {r['planned']} games played.")
        if r["skipped_openings"]:
            notes.append(f"{label}: {r['skipped_openings']} openings of the file do not fit the "
                         f"board or rule and were skipped.")
    for e in errors:
        notes.append(e)
    out.append("")
    if notes:
        out += [f"Note: {n}" for n in notes] + [""]
    out.append("Match commands (each match's output, game logs, SGF and PSQ records under "
               f"`{rel(args.log_dir)}/`):")
    out.append("")
    out.append("```sh")
    for peer, _ in rows:
        out.append(shell_text(args, league, peer))
    out.append("```")
    out.append("")
    return out


def sections(lines):
    """`## ` heading -> its lines (the heading's included), in order."""
    found, current = {}, None
    for line in lines:
        if line.startswith("## "):
            current = line
            found[current] = []
        if current is not None:
            found[current].append(line)
    return found


def table_rows(lines):
    """Indexes of a section's result rows (its table less the header and
    the separator)."""
    return [i for i, line in enumerate(lines)
            if line.startswith("| ") and not line.startswith("| Wuzi vs |")]


def row_peer(line):
    return line.split("|")[1].strip()


def header_line(lines, prefix):
    return next((line for line in lines if line.startswith(prefix)), None)


def with_earlier_rows(new_lines, old_lines):
    """The new section with the rows of the old one for peers this run did
    not play (each row keeps its own date), said in a note below the table:
    a rerun against some peers does not wipe the others'. Only rows
    measured on the same kind of CPU under the same conditions are kept:
    the section's header describes every row under it; others are dropped
    with a message."""
    new_rows = table_rows(new_lines)
    played = {row_peer(new_lines[i]) for i in new_rows}
    kept = [old_lines[i] for i in table_rows(old_lines) if row_peer(old_lines[i]) not in played]
    if not kept or not new_rows:
        return new_lines
    same = all(header_line(old_lines, p) == header_line(new_lines, p)
               for p in ("- CPU:", "- Conditions:"))
    if not same:
        print(f"ladder: {new_lines[0][3:]}: rows of an earlier run on another CPU or under other "
              f"conditions dropped: {', '.join(row_peer(r) for r in kept)}", file=sys.stderr)
        return new_lines
    end = new_rows[-1] + 1
    note = ("Note: kept from an earlier run on the same CPU under the same conditions (its date "
            f"in the row, its commit that run's): {', '.join(row_peer(r) for r in kept)}.")
    return new_lines[:end] + kept + ["", note] + new_lines[end:]


def merged_sections(previous_text, blocks):
    """The new leagues' sections, in place of the same leagues' sections
    of the file written before; its other leagues are kept, so that one
    league's rerun does not wipe the others, and so are a league's rows of
    peers this run did not play."""
    new = sections(blocks)
    merged = sections(previous_text.splitlines())
    for heading, lines in new.items():
        merged[heading] = with_earlier_rows(lines, merged.get(heading, []))
    out = []
    for lines in merged.values():
        while lines and not lines[-1].strip():
            lines = lines[:-1]
        out += lines + [""]
    return out


def main():
    ap = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n".join(__doc__.splitlines()[2:]))
    ap.add_argument("--leagues", nargs="+", default=list(LEAGUES),
                    help=f"leagues to play, comma or space separated (default: all: {', '.join(LEAGUES)})")
    ap.add_argument("--peers", nargs="+", default=None,
                    help=f"peers to play ({', '.join(PEERS)}; default: every one in --peers-dir "
                         "that plays the league)")
    ap.add_argument("--peers-dir", default=None,
                    help=f"the peers' folder (default: {DEFAULTS['peers_dir']} from the repository root)")
    ap.add_argument("--games", type=int, default=DEFAULTS["games"],
                    help=f"games per match, colours swapped per opening (default {DEFAULTS['games']})")
    ap.add_argument("--tc", default=DEFAULTS["tc"],
                    help="seconds per move (default 0.5, i.e. tc=0/0.5), or c-gomoku-cli's M/T+I")
    ap.add_argument("--wuzi", default=None,
                    help=f"Wuzi's binary, also the match runner (default {DEFAULTS['wuzi']})")
    ap.add_argument("--threads", type=int, default=DEFAULTS["threads"],
                    help=f"threads=N (INFO thread_num) for both engines (default {DEFAULTS['threads']})")
    ap.add_argument("--seed", type=int, default=DEFAULTS["seed"], help="match seed (default 1)")
    ap.add_argument("--out", default=None, help=f"markdown file to write (default {DEFAULTS['out']})")
    ap.add_argument("--log-dir", default=None,
                    help=f"folder for each match's output, game logs, SGF and PSQ records (default {DEFAULTS['log_dir']})")
    ap.add_argument("--dry-run", action="store_true", help="print the match commands only")
    args = ap.parse_args()

    try:
        leagues = split_list(args.leagues, list(LEAGUES), "league")
        if args.games < 1:
            raise LadderError("--games must be at least 1")
        if args.threads < 1:
            raise LadderError("--threads must be at least 1")
        args.tc_spec = turn_control(args.tc)
        args.wuzi = user_path(args.wuzi, DEFAULTS["wuzi"])
        args.peers_dir = user_path(args.peers_dir, DEFAULTS["peers_dir"])
        args.out = user_path(args.out, DEFAULTS["out"])
        args.log_dir = user_path(args.log_dir, DEFAULTS["log_dir"])
        named_peers = split_list(args.peers, list(PEERS), "peer") if args.peers else None
    except LadderError as e:
        sys.exit(f"ladder: {e}")

    problems = []  # what stops the ladder
    if not os.access(args.wuzi, os.X_OK):
        problems.append(f"Wuzi's binary {rel(args.wuzi)} is missing or not executable "
                        "(cargo build --release, or give --wuzi)")
    if not os.path.isdir(args.peers_dir):
        problems.append(f"the peers' folder {args.peers_dir} does not exist (give --peers-dir)")

    # The plan: (league, [peers]).
    plan = []
    args.openings = {}
    for league in leagues:
        openings = os.path.join(REPO, "openings", f"{league}-eval.txt")
        if not os.path.isfile(openings):
            print(f"ladder: skipping {league}: no evaluation openings {rel(openings)}", file=sys.stderr)
            continue
        args.openings[league] = openings
        peers = []
        for peer in (named_peers or PEERS):
            info = PEERS[peer]
            if league not in info["leagues"]:
                if named_peers:
                    print(f"ladder: {league}: {peer} does not play this league; not played",
                          file=sys.stderr)
                continue
            binary = os.path.join(args.peers_dir, info["binary"])
            if not os.access(binary, os.X_OK):
                if named_peers:
                    problems.append(f"peer {peer}: {binary} is missing or not executable")
                else:
                    print(f"ladder: {league}: peer {peer} not found ({binary}); not played",
                          file=sys.stderr)
                    continue
            tsec = turn_seconds(args.tc_spec)
            if info.get("min_turn_s") and tsec is not None and tsec < info["min_turn_s"]:
                print(f"ladder: warning: {peer} needs {info['min_turn_s']} s per move or more "
                      f"(peers README); tc={args.tc_spec}", file=sys.stderr)
            peers.append(peer)
        if not peers:
            print(f"ladder: skipping {league}: no peer to play", file=sys.stderr)
            continue
        plan.append((league, peers))

    if args.dry_run:
        for league, peers in plan:
            print(f"# {league}")
            for peer in peers:
                print(shell_text(args, league, peer))
            print()
    if problems:
        for p in dict.fromkeys(problems):
            print(f"ladder: {p}", file=sys.stderr)
        sys.exit(1)
    if args.dry_run:
        return
    if not plan:
        sys.exit("ladder: nothing to play (no league with openings and peers)")

    os.makedirs(args.log_dir, exist_ok=True)
    commit, cpu = commit_text(args.wuzi), cpu_text()
    started = datetime.datetime.now().strftime("%Y-%m-%d")
    blocks = []
    failure = None
    all_unparsed = []
    for league, peers in plan:
        rows, errors = [], []
        for peer in peers:
            if failure:
                break
            stem = os.path.join(args.log_dir, f"{league}-{peer}")
            games_dir, psq_dir = stem + "-games", stem + "-psq"
            for old in (games_dir, psq_dir):
                if os.path.isdir(old):
                    shutil.rmtree(old)  # an earlier run's game logs and records
            cmd = match_command(args, league, peer)
            cmd += ["--log-dir", rel(games_dir), "--sgf", rel(stem + ".sgf"), "--psq", rel(psq_dir)]
            print(f"ladder: {league}: wuzi vs {peer} ({args.games} games)", flush=True)
            rc, lines, interrupted = run_match(cmd, stem + ".log")
            # An interrupted match, or one whose recording failed, still
            # printed the summary of the games it played: kept too.
            try:
                result, unparsed = parse_summary(lines, "wuzi", peer)
                summary_error = None
            except SummaryError as e:
                result, unparsed, summary_error = None, [], e
            if result is not None:
                result["date"] = datetime.datetime.now().strftime("%Y-%m-%d")
                all_unparsed += [f"{league} {peer}: {u}" for u in unparsed]
            if rc != 0:
                why = "was interrupted" if interrupted else f"failed (exit status {rc})"
                tail = "".join(lines[-5:]).strip()
                failure = (f"{league}: the match against {peer} {why}: "
                           f"{tail or 'no output'} (full output: {rel(stem + '.log')})")
                rows.append((peer, result))
                errors.append(f"{PEERS[peer]['label']}: the match {why}.")
                break
            if result is None:
                failure = f"{league}: the match against {peer}: {summary_error} (see {rel(stem + '.log')})"
                rows.append((peer, None))
                break
            print(f"ladder: {league}: wuzi vs {peer}: {result['w']}-{result['l']}-{result['d']}, "
                  f"{result['score']:.3f}, Elo {elo_text(result)}", flush=True)
            rows.append((peer, result))
        if rows:
            blocks += league_block(args, league, rows, started, commit, cpu, errors)
        if failure:
            break

    out = args.out
    if failure:
        root, _ = os.path.splitext(out)
        out = root + ".partial.md"
    previous = ""
    if os.path.exists(out) and not failure:
        with open(out) as f:
            previous = f.read()
    text = ["# Ladder", "",
            "Written by `scripts/ladder.py` (see `docs/strength.md`); current figures only.", ""]
    text += merged_sections(previous, blocks)
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    with open(out, "w") as f:
        f.write("\n".join(text).rstrip("\n") + "\n")
    print(f"ladder: wrote {out}")
    if all_unparsed:
        print("ladder: lines of the runner's summary not understood:", file=sys.stderr)
        for u in all_unparsed:
            print(f"  {u}", file=sys.stderr)
    if failure:
        sys.exit(f"ladder: {failure}")


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit("ladder: stopped (a second Ctrl-C); the matches' logs are in the log folder")
