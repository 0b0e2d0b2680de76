"""The loop's tasks. Each runs on whichever machine of the cluster Ray
picks, fetches what it needs from the storage and stores what it made
there: nothing passes between tasks except through the storage."""

from __future__ import annotations

import hashlib
import os
import posixpath
import resource
import shutil
import socket
import tempfile
import time

from . import engine, layout
from .records import RecordError, file_text, game_lines, parse_game
from .storage import Storage, StorageError, require_keys


def file_digest(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as source:
        for block in iter(lambda: source.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def store_network(storage: Storage, local_path: str, name: str) -> None:
    """Stores a network with its SHA-256 beside it (the digest first: the
    network's presence marks a step as done)."""
    storage.write_bytes(layout.digest_name(name), (file_digest(local_path) + "\n").encode())
    storage.upload(local_path, name)


def cached_network(storage: Storage, name: str, local_dir: str) -> str:
    """A local copy of a stored network, downloaded once per machine. The
    cache is keyed by the network's content, not its name: another loop (or
    a loop started again on the same storage) has a different gen-0001."""
    # The file's stem names the player in the records the engine writes
    # (with the start of the network's SHA-256).
    file_name = layout.network_label(name) + ".safetensors"
    cache = os.path.join(local_dir, "wuzi-cache")
    try:
        digest = storage.read_bytes(layout.digest_name(name)).decode().strip()
    except FileNotFoundError:
        digest = None  # a loop stored before digests: check the download itself
    except UnicodeDecodeError:
        raise StorageError(f"{storage.path(layout.digest_name(name))} is damaged") from None
    if digest:
        local = os.path.join(cache, digest[:32], file_name)
        if os.path.exists(local) and mark_used(os.path.dirname(local)):
            return local
    download = os.path.join(cache, f"download-{os.getpid()}-{time.time_ns()}", file_name)
    try:
        storage.download(name, download)
        actual = file_digest(download)
        if digest and actual != digest:
            raise StorageError(f"{storage.path(name)}: its content does not match its stored SHA-256")
        if not digest:
            # A loop stored before digests: write the network's, so that the
            # next task finds it in the cache instead of downloading again.
            storage.write_bytes(layout.digest_name(name), (actual + "\n").encode())
        local = os.path.join(cache, actual[:32], file_name)
        os.makedirs(os.path.dirname(local), exist_ok=True)
        os.replace(download, local)
        mark_used(os.path.dirname(local))
        prune_cache(cache, os.path.dirname(local))
        return local
    finally:
        shutil.rmtree(os.path.dirname(download), ignore_errors=True)


# Networks kept in a machine's cache (the current one and a candidate are
# all a task uses; the rest are earlier generations').
CACHED_NETWORKS = 6
# Work folders are named `wuzi-task-<pid>-...`: a folder whose process is
# gone was left by a task killed before its cleanup (SIGKILL, the OOM
# killer), and the next task on the machine removes it.
WORK_PREFIX = "wuzi-task-"


def task_workspace(spec: dict, prefix: str) -> tuple[str, str]:
    """This machine's folder for the loop (`local_dir`, or the system's
    temporary folder) and a fresh work folder in it for one task; work
    folders that killed tasks left there are removed first."""
    local_dir = spec.get("local_dir") or tempfile.gettempdir()
    os.makedirs(local_dir, exist_ok=True)
    remove_orphans(local_dir)
    return local_dir, tempfile.mkdtemp(prefix=f"{WORK_PREFIX}{os.getpid()}-{prefix}", dir=local_dir)


def remove_orphans(local_dir: str) -> None:
    """Removes the work folders and cache downloads of processes gone."""
    folders = [(local_dir, WORK_PREFIX), (os.path.join(local_dir, "wuzi-cache"), "download-")]
    for folder, prefix in folders:
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            if not name.startswith(prefix):
                continue
            pid = name[len(prefix):].split("-", 1)[0]
            if pid.isdigit() and process_is_gone(int(pid)):
                shutil.rmtree(os.path.join(folder, name), ignore_errors=True)


def process_is_gone(pid: int) -> bool:
    """Whether no process `pid` runs on this machine."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except (PermissionError, OverflowError):
        return False
    return False


def mark_used(entry: str) -> bool:
    """Marks a cache entry last used now, so that pruning keeps it; false
    when another task pruned it meanwhile."""
    try:
        os.utime(entry)
        return True
    except OSError:
        return False


def prune_cache(cache: str, keep: str) -> None:
    """Keeps the CACHED_NETWORKS networks of the cache last used (`keep`,
    the one just used, among them)."""
    try:
        entries = [os.path.join(cache, name) for name in os.listdir(cache)
                   if not name.startswith("download-")]
    except OSError:
        return
    def last_used(entry: str) -> float:
        # Another task on this machine may prune at the same moment.
        try:
            return os.path.getmtime(entry)
        except OSError:
            return 0.0
    entries = [e for e in entries if os.path.isdir(e) and os.path.abspath(e) != os.path.abspath(keep)]
    entries.sort(key=last_used, reverse=True)
    for old in entries[CACHED_NETWORKS - 1:]:
        shutil.rmtree(old, ignore_errors=True)


def stored_shard_games(storage: Storage, generation: int, shard: int) -> list[str]:
    """The shard's stored games, in order, each game id once (two attempts at
    a shard that both reached the storage may have written the same game)."""
    lines: list[str] = []
    seen: set[str] = set()
    for part in layout.shard_parts(storage, generation, shard):
        try:
            for line in game_lines(storage.read_bytes(part).decode()):
                game_id = parse_game(line).game_id
                if game_id not in seen:
                    seen.add(game_id)
                    lines.append(line)
        except (RecordError, UnicodeDecodeError) as e:
            raise StorageError(f"{storage.path(part)} is damaged ({e})") from None
    return lines


class ShardUploader:
    """Keeps a shard's stored parts equal to the games played so far: a part
    holds `part_games` games, and the parts a new game falls into are
    written again whole, so a stored part is always a valid file of
    finished games."""

    def __init__(self, storage: Storage, generation: int, shard: int, part_games: int,
                 stored: list[str]):
        self.storage, self.generation, self.shard = storage, generation, shard
        self.part_games = part_games
        self.games = list(stored)

    def add(self, new_games: list[str]) -> None:
        first_changed = len(self.games) // self.part_games
        self.games.extend(new_games)
        last_changed = (len(self.games) - 1) // self.part_games
        for part in range(first_changed, last_changed + 1):
            chunk = self.games[part * self.part_games:(part + 1) * self.part_games]
            self.storage.write_bytes(layout.part_name(self.generation, self.shard, part),
                                     file_text(chunk).encode())


def selfplay_shard(spec: dict, progress=None) -> dict:
    """Plays a shard's games into the storage, continuing what an earlier
    attempt stored. A worker that dies loses only the games it had not yet
    finished (and at most `poll_seconds` of finished ones)."""
    storage = Storage(spec["storage"])
    generation, shard, target = spec["generation"], spec["shard"], spec["games"]
    binary = engine.check_binary(spec["binary"])
    # An attempt killed while writing a part or its log left a temporary
    # file; this attempt is the only writer of both.
    storage.remove_partials(layout.games_dir(generation), layout.shard_part_stem(shard))
    log_name = layout.shard_log_name(generation, shard)
    storage.remove_partials(posixpath.dirname(log_name), posixpath.basename(log_name))
    stored = stored_shard_games(storage, generation, shard)
    record_start(storage, generation, shard, len(stored))
    started = time.time()
    if len(stored) >= target:
        return shard_result(spec, stored, 0, started)
    local_dir, work = task_workspace(spec, f"selfplay-g{generation}-s{shard}-")
    try:
        network = cached_network(storage, spec["network"], local_dir)
        out = os.path.join(work, f"shard-{shard:03d}.tsv")
        # The engine continues an existing file: start it from what is stored.
        with open(out, "w") as local_file:
            local_file.write(file_text(stored))
        reader = engine.WholeGameReader(out, offset=os.path.getsize(out))
        uploader = ShardUploader(storage, generation, shard, spec["part_games"], stored)
        positions = sum(parse_game(line).positions for line in stored)

        def store(new_games: list[str]) -> None:
            nonlocal positions
            uploader.add(new_games)
            positions += sum(parse_game(line).positions for line in new_games)
            if progress is not None:
                progress.report_shard.remote(generation, shard, len(uploader.games), positions)

        options = dict(spec["options"])
        if options.get("openings"):
            local_openings = os.path.join(work, "openings.txt")
            storage.download(options["openings"], local_openings)
            options["openings"] = local_openings
        command = engine.selfplay_command(binary, network, out, target, spec["seed"], options)
        children_before = resource.getrusage(resource.RUSAGE_CHILDREN)
        engine.play_selfplay(command, os.path.join(work, "selfplay.log"), reader, store,
                             spec.get("poll_seconds", 1.0))
        children_after = resource.getrusage(resource.RUSAGE_CHILDREN)
        result = shard_result(spec, uploader.games, len(uploader.games) - len(stored), started)
        # The engine's CPU time: games per CPU-minute hold when the machine
        # is shared, where games per minute do not.
        result["engine_cpu_seconds"] = (children_after.ru_utime - children_before.ru_utime
                                        + children_after.ru_stime - children_before.ru_stime)
        return result
    finally:
        shutil.rmtree(work, ignore_errors=True)


def record_start(storage: Storage, generation: int, shard: int, stored_games: int) -> None:
    """Notes each attempt at a shard, so that a retried or resumed shard
    shows in the storage."""
    name = layout.shard_log_name(generation, shard)
    log = require_keys(storage.read_json(name, default={"starts": []}), {"starts": list}, storage, name)
    log["starts"].append({"time": time.time(), "host": socket.gethostname(),
                          "pid": os.getpid(), "stored_games": stored_games})
    storage.write_json(name, log)


def shard_result(spec: dict, games: list[str], new_games: int, started: float) -> dict:
    summaries = [parse_game(line) for line in games]
    return {"shard": spec["shard"], "games": len(summaries), "new_games": new_games,
            "positions": sum(s.positions for s in summaries),
            "seconds": time.time() - started, "host": socket.gethostname()}


def train_generation(spec: dict) -> dict:
    """Trains the candidate of a generation from the current network on the
    stored games of the generations in the window, and stores it."""
    storage = Storage(spec["storage"])
    binary = engine.check_binary(spec["binary"])
    local_dir, work = task_workspace(spec, f"train-g{spec['generation']}-")
    try:
        data = os.path.join(work, "data")
        stored_games = 0
        for generation in spec["data_generations"]:
            # The games the driver counts: the planned shards' own, each
            # game once (two attempts at a shard may have stored the same
            # games; a stray file in the folder is no shard's).
            plan = storage.read_json(layout.plan_name(generation)) or {}
            for shard in plan.get("shards", []):
                lines = stored_shard_games(storage, generation, shard["shard"])
                if not lines:
                    continue
                local = os.path.join(data, f"gen-{generation:04d}", f"shard-{shard['shard']:03d}.tsv")
                os.makedirs(os.path.dirname(local), exist_ok=True)
                with open(local, "w") as shard_file:
                    shard_file.write(file_text(lines))
                stored_games += len(lines)
        if stored_games == 0:
            raise engine.EngineError(f"generation {spec['generation']}: no stored games to train on")
        init = cached_network(storage, spec["init_network"], local_dir)
        out = os.path.join(work, "out")
        started = time.time()
        summary = engine.train(binary, spec["rule"], spec["board"], init, data, out,
                               spec["device"], spec["torch_threads"], spec["options"],
                               os.path.join(work, "train.log"))
        summary.update(stored_games=stored_games, seconds=time.time() - started,
                       host=socket.gethostname(), device=spec["device"])
        # Every stored game is read as a game (targets or not, or kept out
        # for reaching an evaluation opening): a trainer that refused some
        # (another rule or board, a broken record) would make a candidate
        # of part of its data.
        read = sum(summary.get(key, 0) for key in ("games_used", "without_targets", "evaluation_openings"))
        if "games_used" in summary and read < stored_games:
            raise engine.EngineError(
                f"generation {spec['generation']}: the trainer read {read} of the {stored_games} "
                f"stored games ({summary}); see its log")
        loss_curve = os.path.join(out, "loss.csv")
        if os.path.exists(loss_curve):
            storage.upload(loss_curve, layout.generation_dir(spec["generation"]) + "/train-loss.csv")
        network = summary.pop("network_file")
        name = layout.network_name(spec["generation"])
        if storage.exists(name):
            # Another attempt (a task Ray retried while this one ran on)
            # stored its network first: that one stands, and may be gated.
            return storage.read_json(layout.train_name(spec["generation"]), default=summary)
        storage.write_json(layout.train_name(spec["generation"]), summary)
        # The network last: its presence marks the training as done.
        store_network(storage, network, name)
        return summary
    finally:
        shutil.rmtree(work, ignore_errors=True)


def gating_match(spec: dict) -> dict:
    """Plays one slice of a gating match and stores its result."""
    storage = Storage(spec["storage"])
    binary = engine.check_binary(spec["binary"])
    local_dir, work = task_workspace(spec, f"gating-g{spec['generation']}-")
    try:
        candidate = cached_network(storage, spec["candidate"], local_dir)
        current = cached_network(storage, spec["current"], local_dir)
        openings = None
        if spec.get("openings"):
            openings = os.path.join(work, "openings.txt")
            storage.download(spec["openings"], openings)
        started = time.time()
        result = engine.match(binary, candidate, current, spec["rule"], spec["board"],
                              spec["games"], spec["seed"], spec["playouts"], spec["concurrency"],
                              openings, spec["random_stones"], spec.get("sprt_argument"),
                              os.path.join(work, "match.log"))
        # Which networks played: the promotion checks that the candidate
        # stored then is the one gated.
        result.update(seconds=time.time() - started, host=socket.gethostname(),
                      round=spec["round"], task=spec["task"], gate=spec["gate"],
                      candidate_sha256=file_digest(candidate), current_sha256=file_digest(current))
        storage.write_json(spec["result_name"], result)
        return result
    finally:
        shutil.rmtree(work, ignore_errors=True)

