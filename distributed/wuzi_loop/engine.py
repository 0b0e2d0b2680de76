"""The `pbrain-wuzi` subcommands the loop runs: selfplay, train, match."""

from __future__ import annotations

import ctypes
import os
import re
import shlex
import signal
import socket
import subprocess
import time
from typing import Callable

from .records import RecordError, game_lines, parse_game


class EngineError(Exception):
    """An engine run that failed for a reason that running it again will not
    change (a missing binary, a bad network, bad options)."""


class EngineInterrupted(Exception):
    """An engine process killed from outside (a signal, the OOM killer):
    the task is worth running again."""


def check_binary(binary: str) -> str:
    if not os.path.isfile(binary) or not os.access(binary, os.X_OK):
        raise EngineError(
            f"pbrain-wuzi not found at {binary} on {socket.gethostname()}: build it "
            f"(cargo build --release) or give --binary; every machine of the cluster "
            f"needs it at the same path"
        )
    return binary


_PR_SET_PDEATHSIG = 1

# Loaded here, not between fork and exec: loading a library in the child of
# a multithreaded process (a Ray worker) can deadlock on the loader's lock.
try:
    _PRCTL = ctypes.CDLL("libc.so.6", use_errno=True).prctl
except (OSError, AttributeError):  # not Linux: no parent-death signal
    _PRCTL = None


def _die_with_parent() -> None:
    # A task's worker that dies takes its engine process with it; otherwise
    # the orphan would go on playing games nobody stores.
    if _PRCTL is not None:
        _PRCTL(_PR_SET_PDEATHSIG, signal.SIGKILL)


def start(command: list[str], log_path: str) -> subprocess.Popen:
    log = open(log_path, "ab")
    try:
        return subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log,
                                stderr=subprocess.STDOUT, preexec_fn=_die_with_parent)
    finally:
        log.close()


def log_tail(log_path: str, lines: int = 15) -> str:
    try:
        with open(log_path, "rb") as log:
            text = log.read().decode(errors="replace")
    except OSError:
        return ""
    # The progress bar redraws with carriage returns; keep what a terminal shows.
    shown = [line.rsplit("\r", 1)[-1] for line in text.splitlines()]
    return "\n".join(line for line in shown[-lines:] if line.strip())


def check_exit(process: subprocess.Popen, what: str, log_path: str) -> None:
    code = process.returncode
    if code == 0:
        return
    if code < 0:
        raise EngineInterrupted(f"{what} was killed by signal {-code} on {socket.gethostname()}")
    raise EngineError(f"{what} failed (exit {code}) on {socket.gethostname()}:\n{log_tail(log_path)}")


class WholeGameReader:
    """Reads the games a running `selfplay` appends to its file, a whole
    line at a time."""

    def __init__(self, path: str, offset: int = 0):
        self.path = path
        self.offset = offset

    def new_games(self) -> list[str]:
        try:
            with open(self.path, "rb") as source:
                source.seek(self.offset)
                chunk = source.read()
        except FileNotFoundError:
            return []
        end = chunk.rfind(b"\n")
        if end < 0:
            return []
        self.offset += end + 1
        return game_lines(chunk[: end + 1].decode())


def selfplay_command(binary: str, network: str, out: str, games: int, seed: int,
                     options: dict) -> list[str]:
    command = [binary, "--network", network, "selfplay", "--out", out,
               "--games", str(games), "--seed", str(seed),
               "--rule", options["rule"], "--board", str(options["board"]),
               "--parallel", str(options["parallel"]),
               "--playouts", str(options["playouts"]),
               "--fast-playouts", str(options["fast_playouts"]),
               "--full-share", str(options["full_share"]),
               "--sample-plies", str(options["sample_plies"]),
               "--temperature", str(options["temperature"]),
               "--random-stones", str(options["random_stones"])]
    if options.get("openings"):
        command += ["--openings", options["openings"]]
    return command


def play_selfplay(command: list[str], log_path: str, reader: WholeGameReader,
                  on_games: Callable[[list[str]], None], poll_seconds: float = 1.0) -> None:
    """Runs `selfplay` and hands every finished game to `on_games` within
    `poll_seconds` of the engine writing it."""
    process = start(command, log_path)
    try:
        while True:
            finished = process.poll() is not None
            games = reader.new_games()
            for line in games:
                try:
                    parse_game(line)
                except RecordError as e:
                    raise EngineError(f"selfplay wrote a malformed game: {e}") from None
            if games:
                on_games(games)
            if finished:
                break
            time.sleep(poll_seconds)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    check_exit(process, "pbrain-wuzi selfplay", log_path)


_DATA_LINE = re.compile(r"data: (\d+) files, (\d+) records: (\d+) games used \((\d+) positions\)")
_SKIPPED = re.compile(
    r"skipped (\d+): (\d+) malformed, (\d+) illegal move, (\d+) forbidden move, "
    r"(\d+) moves after a win, (\d+) result mismatch, (\d+) without targets")
_HELD_OUT = re.compile(r"(\d+) games pass through an evaluation opening")
_STEPS = re.compile(r"(\d+) steps, (\d+) samples, ([\d.]+) epochs in ([\d.]+) s")
_VALIDATION = re.compile(r"final validation .*?policy loss ([\d.]+), policy accuracy ([\d.]+)%, value loss ([\d.]+)")


def parse_train_summary(text: str) -> dict:
    summary: dict = {}
    if m := _DATA_LINE.search(text):
        summary.update(files=int(m[1]), records=int(m[2]), games_used=int(m[3]), positions=int(m[4]))
    if m := _SKIPPED.search(text):
        keys = ("skipped", "malformed", "illegal_move", "forbidden_move", "moves_after_win",
                "result_mismatch", "without_targets")
        summary.update({key: int(value) for key, value in zip(keys, m.groups())})
    if m := _HELD_OUT.search(text):
        summary.update(evaluation_openings=int(m[1]))
    if m := _STEPS.search(text):
        summary.update(steps=int(m[1]), samples=int(m[2]), epochs=float(m[3]), train_seconds=float(m[4]))
    if m := _VALIDATION.search(text):
        summary.update(val_policy_loss=float(m[1]), val_accuracy=float(m[2]) / 100, val_value_loss=float(m[3]))
    return summary


def train(binary: str, rule: str, board: int, init_network: str, data_dir: str, out_dir: str,
          device: str, torch_threads: int, options: dict, log_path: str) -> dict:
    command = [binary, "train", "--rule", rule, "--board", str(board), "--init", init_network,
               "--out", out_dir, "--device", device, "--torch-threads", str(torch_threads), "--quiet",
               "--batch-size", str(options["batch_size"]), "--lr", str(options["lr"]),
               "--warmup-steps", str(options["warmup_steps"]), "--epochs", str(options["epochs"]),
               "--seed", str(options["seed"]), "--split-seed", "1",
               "--checkpoint-every", "0"]
    if options.get("max_steps"):
        command += ["--max-steps", str(options["max_steps"])]
    if options.get("max_minutes"):
        command += ["--max-minutes", str(options["max_minutes"])]
    command += shlex.split(options.get("extra_args") or "")
    command.append(data_dir)
    process = start(command, log_path)
    process.wait()
    check_exit(process, "pbrain-wuzi train", log_path)
    with open(log_path, errors="replace") as log:
        summary = parse_train_summary(log.read())
    network = os.path.join(out_dir, "final.safetensors")
    if not os.path.isfile(network):
        raise EngineError(f"pbrain-wuzi train wrote no {network}:\n{log_tail(log_path)}")
    summary["network_file"] = network
    return summary


_SCORE = re.compile(r"Score of candidate vs current: (\d+) - (\d+) - (\d+)")
_ENGINE_SPRT = re.compile(r"SPRT \(.*?\): LLR (-?[\d.]+) \[.*?\]: (.*)")
_ERRORS = re.compile(r"^(candidate|current): losses by error: (.*)$", re.M)


def parse_faults(listed: str) -> dict[str, int]:
    """The match's `losses by error` list (`crash 2, time forfeit 1`, or
    `none`, then `; killed after END: N`) as counts by ending. A piece that
    is not `ending count` counts once under its own text: unknown is not
    clean."""
    counts: dict[str, int] = {}
    listed = listed.split(";", 1)[0].strip()
    if listed in ("", "none"):
        return counts
    for piece in listed.split(","):
        label, _, count = piece.strip().rpartition(" ")
        if not (label and count.isdigit()):
            label, count = piece.strip(), "1"
        counts[label] = counts.get(label, 0) + int(count)
    return {label: count for label, count in counts.items() if count}


def fault_counts(stored) -> dict[str, dict[str, int]]:
    """A gating result's `losses_by_error` (absent, counts by side, or the
    text older loops stored) as counts by side; ValueError if it is none of
    these."""
    if stored is None:
        return {}
    if not isinstance(stored, dict):
        raise ValueError(f"losses_by_error is {type(stored).__name__}, expected an object")
    counts = {}
    for side, faults in stored.items():
        if isinstance(faults, str):
            faults = parse_faults(faults)
        if not (isinstance(faults, dict) and all(isinstance(n, int) and not isinstance(n, bool)
                                                 for n in faults.values())):
            raise ValueError(f"losses_by_error of {side} is {faults!r}, expected counts")
        counts[side] = {label: n for label, n in faults.items() if n}
    return counts


def match(binary: str, candidate: str, current: str, rule: str, board: int, games: int,
          seed: int, playouts: int, concurrency: int, openings: str | None,
          random_stones: int, sprt_argument: str | None, log_path: str) -> dict:
    def engine(network: str, name: str) -> list[str]:
        return [f"cmd={shlex.quote(binary)} --network {shlex.quote(network)}", f"name={name}"]

    command = [binary, "match", "--engine1", *engine(candidate, "candidate"),
               "--engine2", *engine(current, "current"),
               "--each", f"nodes={playouts}", "threads=1", "turn=60000",
               "--rule", rule, "--board", str(board), "--games", str(games),
               "--concurrency", str(concurrency), "--seed", str(seed)]
    if openings:
        command += ["--openings", openings, "--order", "random"]
    else:
        command += ["--random-stones", str(random_stones)]
    if sprt_argument:
        command += ["--sprt", *sprt_argument.split()]
    process = start(command, log_path)
    process.wait()
    check_exit(process, "pbrain-wuzi match", log_path)
    with open(log_path, errors="replace") as log:
        text = log.read()
    return parse_match(text, log_path)


def parse_match(text: str, log_path: str) -> dict:
    """The result of a `pbrain-wuzi match` from its output `text` (read
    from `log_path`, which errors quote): the score, each side's losses by
    error and the runner's own SPRT verdict, if any."""
    score = _SCORE.search(text)
    if not score:
        raise EngineError(f"pbrain-wuzi match printed no score line:\n{log_tail(log_path)}")
    faults = {side: parse_faults(listed) for side, listed in _ERRORS.findall(text)}
    if set(faults) != {"candidate", "current"}:
        # Without both lines no fault could be seen: a gate must not take
        # that for a clean match.
        raise EngineError("pbrain-wuzi match printed no losses-by-error line for "
                          f"{' and '.join(sorted({'candidate', 'current'} - set(faults)))}:\n"
                          f"{log_tail(log_path)}")
    result = {"wins": int(score[1]), "losses": int(score[2]), "draws": int(score[3]),
              "losses_by_error": faults}
    if sprt := _ENGINE_SPRT.search(text):
        result.update(engine_llr=float(sprt[1]), engine_verdict=sprt[2].strip())
    return result
