"""The generation loop, driven from one process (the Ray driver):

    self-play shards (tasks) -> training (a task, on a GPU where there is one)
    -> gating matches (tasks) -> promotion when the SPRT accepts the candidate

Every step reads its inputs from the storage and leaves its outputs there,
so a loop restarted on the same storage goes on where the last one stopped.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import os
import signal
import time
from dataclasses import dataclass

from . import layout, tasks
from .engine import EngineInterrupted, fault_counts
from .progress import ProgressBoard, RateMeter
from .records import parse_game
from .sprt import Sprt, elo_estimate, recorded_elo
from .storage import NUMBER, Storage, StorageError, require_keys

# The most threads `pbrain-wuzi train --torch-threads` takes (the engine's
# MAX_THREADS); a bigger machine's CPUs are still all reserved for training.
MAX_TORCH_THREADS = 256


class LoopError(Exception):
    """A failure the loop reports in one message, without a traceback."""


@dataclass
class Settings:
    rule: str = "freestyle"
    board: int = 15
    # Self-play.
    games_per_generation: int = 1000
    shard_games: int = 50
    part_games: int = 25
    selfplay_parallel: int = 2
    playouts: int = 400
    fast_playouts: int = 100
    full_share: float = 0.25
    sample_plies: int = 6
    temperature: float = 0.8
    random_stones: int = 4
    # Training.
    window: int = 2
    train_epochs: int = 2
    train_steps: int = 0
    train_minutes: float = 0.0
    batch_size: int = 256
    lr: float = 5e-4
    warmup_steps: int = 50
    train_cpus: int = 0
    train_args: str = ""
    # Gating.
    gating_playouts: int = 300
    gating_max_games: int = 200
    gating_tasks: int = 1
    gating_games_per_task: int = 20
    gating_concurrency: int = 2
    elo0: float = 0.0
    elo1: float = 40.0
    alpha: float = 0.05
    beta: float = 0.05
    # Running.
    seed: int = 1
    task_retries: int = 3
    poll_seconds: float = 1.0
    report_seconds: float = 10.0


# Settings that shape the stored data: a loop restarted on the same storage
# must keep them.
FIXED_SETTINGS = ("rule", "board")

# The engine's rule names (crates/wuzi-game/src/game/rule.rs). Its aliases
# (gomoku, exact5, 0, ...) are refused: loop.json compares names as text.
RULES = ("freestyle", "standard", "renju", "caro")

# Settings that count something the loop needs at least one of.
POSITIVE_SETTINGS = ("games_per_generation", "shard_games", "part_games", "selfplay_parallel",
                     "playouts", "fast_playouts", "window", "batch_size", "gating_playouts",
                     "gating_max_games", "gating_tasks", "gating_games_per_task",
                     "gating_concurrency", "poll_seconds", "report_seconds", "lr")
NON_NEGATIVE_SETTINGS = ("sample_plies", "random_stones", "train_epochs", "train_steps",
                         "train_minutes", "warmup_steps", "train_cpus", "task_retries")


def check_settings(settings: Settings) -> None:
    """Refuses settings that would hang the loop (no gating task ever
    started), crash it, or turn the gate around (elo1 below elo0 accepts
    a weaker candidate)."""
    s = settings
    # Before anything is written: a rule the engine refuses would otherwise
    # be fixed in loop.json first.
    if s.rule not in RULES:
        raise LoopError(f"--rule {s.rule}: rules are {', '.join(RULES)}")
    for name in POSITIVE_SETTINGS:
        value = getattr(s, name)
        if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
            raise LoopError(f"--{name.replace('_', '-')} {value}: must be above 0")
    for name in NON_NEGATIVE_SETTINGS:
        value = getattr(s, name)
        if not (math.isfinite(value) and value >= 0):
            raise LoopError(f"--{name.replace('_', '-')} {value}: must be 0 or more")
    if not (isinstance(s.board, int) and 5 <= s.board <= 32):
        raise LoopError(f"--board {s.board}: boards are 5 to 32")
    if not 0 <= s.full_share <= 1:
        raise LoopError(f"--full-share {s.full_share}: a share is between 0 and 1")
    if not (math.isfinite(s.temperature) and s.temperature >= 0):
        raise LoopError(f"--temperature {s.temperature}: must be 0 or more")
    if not (math.isfinite(s.elo0) and math.isfinite(s.elo1) and s.elo1 > s.elo0):
        raise LoopError(f"--elo1 {s.elo1} must be above --elo0 {s.elo0}")
    for name in ("alpha", "beta"):
        if not 0 < getattr(s, name) < 0.5:
            raise LoopError(f"--{name} {getattr(s, name)}: must be between 0 and 0.5")


def derived_seed(base: int, *parts) -> int:
    """A seed of its own for each task: neighbouring counters (rounds and
    tasks, generations and shards) never share one, whatever their sizes."""
    digest = hashlib.sha256(repr((base, *parts)).encode()).digest()
    return int.from_bytes(digest[:7], "little")


# The stored files' keys and their types (require_keys checks them where a
# file is read).
STATE_KEYS = {"generations_done": int, "current_network": str, "current_generation": int,
              "current_elo": NUMBER, "history": list}
STATUS_KEYS = {"generation": int, "phase": str, "detail": dict, "updated": NUMBER}
PLAN_KEYS = {"network": str, "shards": list, "part_games": int, "options": dict}
SHARD_KEYS = {"shard": int, "games": int, "seed": int}
GATING_KEYS = {"wins": int, "losses": int, "draws": int, "elo": NUMBER, "decision": str}
GATING_TASK_KEYS = {"wins": int, "losses": int, "draws": int}


def log(message: str) -> None:
    print(time.strftime("%H:%M:%S ") + message, flush=True)


def describe_failure(error: Exception) -> str:
    cause = getattr(error, "cause", None)
    if cause is not None:
        return f"{type(cause).__name__}: {cause}"
    return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__


def check_storage(storage: Storage, settings: Settings, initial_network: str | None,
                  openings: list[str | None]) -> dict | None:
    """Refuses, before any cluster is started, what cannot work: a new loop
    without its first network, or settings that do not fit the stored loop.
    Returns the stored loop's loop.json (None for a new loop)."""
    stored = storage.read_json(layout.LOOP)
    fixed = {key: getattr(settings, key) for key in FIXED_SETTINGS}
    if stored is None:
        leftovers = leftover_loop(storage)
        if leftovers:
            # Without loop.json these are another loop's: a new loop would
            # take their plans, games, candidates and gating results for its own.
            raise LoopError(f"{storage.uri} holds no loop.json but files of a loop ({', '.join(leftovers)}): "
                            f"start the new loop on another storage, or empty this one")
        if not initial_network:
            raise LoopError(f"{storage.uri} holds no loop yet: give --initial-network to start one")
        if not os.path.isfile(initial_network):
            raise LoopError(f"--initial-network {initial_network}: no such file")
    elif require_keys(stored, {"fixed": dict}, storage, layout.LOOP)["fixed"] != fixed:
        raise LoopError(f"{storage.uri} holds a loop of {stored['fixed']}, not {fixed}: "
                        f"use the same settings or another storage")
    for path in openings:
        if path and not os.path.isfile(path):
            raise LoopError(f"openings file {path}: no such file")
    selfplay, gating = (list(openings) + [None, None])[:2]
    # The self-play openings the loop plays: the file given, or the one a
    # resumed loop stored.
    selfplay_lines = opening_lines(selfplay) if selfplay else set()
    if not selfplay and gating and stored is not None and storage.exists(layout.SELFPLAY_OPENINGS):
        selfplay_lines = text_opening_lines(storage.read_bytes(layout.SELFPLAY_OPENINGS).decode(errors="replace"))
    if gating:
        # The gate's openings must be ones no self-play started from: a
        # network learns the openings it was trained from.
        shared = selfplay_lines & opening_lines(gating)
        if shared:
            raise LoopError(f"{len(shared)} opening(s) of the gating file {gating} are in the self-play "
                            f"file {selfplay or storage.path(layout.SELFPLAY_OPENINGS)} too (first: {sorted(shared)[0]!r}): gate from openings "
                            f"self-play never uses")
    if stored is not None:
        # A loop keeps its openings: its plans and gates name the stored
        # files, and pooled results would mix games of two sets.
        for path, name in [(selfplay, layout.SELFPLAY_OPENINGS), (gating, layout.GATING_OPENINGS)]:
            if not path:
                continue
            if not storage.exists(name):
                raise LoopError(f"the loop in {storage.uri} plays without {name}: a loop keeps its "
                                f"openings; start a new loop on another storage to use {path}")
            if storage.read_bytes(name) != read_file_bytes(path):
                raise LoopError(f"{path} differs from the openings the loop in {storage.uri} plays "
                                f"({name}): a loop keeps its openings; start a new loop on another "
                                f"storage to use these")
    return stored


def opening_lines(path: str) -> set[str]:
    """An opening file's openings as written (blanks removed), comments and
    empty lines left out."""
    with open(path, encoding="utf-8", errors="replace") as source:
        return text_opening_lines(source.read())


def text_opening_lines(text: str) -> set[str]:
    return {"".join(line.split()).lower() for line in text.splitlines()
            if line.strip() and not line.lstrip().startswith("#")}


def read_file_bytes(path: str) -> bytes:
    with open(path, "rb") as source:
        return source.read()


def leftover_loop(storage: Storage) -> list[str]:
    """Another loop's files in the storage root. A new loop writes loop.json
    right after gen-0000 (its initial network), and its lease before both:
    without loop.json, those are its own interrupted start."""
    found = []
    for name in storage.list(""):
        base = name.rstrip("/").rsplit("/", 1)[-1]
        if base in (layout.STATE, layout.STATUS, layout.SELFPLAY_OPENINGS.split("/")[0]) or (
                layout.is_generation_dir(base) and base != layout.generation_dir(0)):
            found.append(base)
    return sorted(found)


class Loop:
    def __init__(self, ray, storage: Storage, settings: Settings, binary: str, local_dir: str | None,
                 lease=None):
        self.ray = ray
        self.storage = storage
        # The driver's lease on the storage (lease.Lease), checked while it
        # waits: None where no other driver can share the storage (bench).
        self.lease = lease
        self.settings = settings
        self.binary = binary
        self.local_dir = local_dir
        s = settings
        self.sprt = Sprt(s.elo0, s.elo1, s.alpha, s.beta)
        retry = dict(max_retries=s.task_retries, retry_exceptions=[EngineInterrupted])
        self.selfplay_task = ray.remote(**retry)(tasks.selfplay_shard)
        self.train_task = ray.remote(**retry)(tasks.train_generation)
        self.gating_task = ray.remote(**retry)(tasks.gating_match)
        self.progress = ray.remote(num_cpus=0)(ProgressBoard).remote()
        self.state: dict = {}
        self.last_report = 0.0

    # --- state -----------------------------------------------------------

    def prepare(self, initial_network: str | None, selfplay_openings: str | None,
                gating_openings: str | None) -> None:
        stored = check_storage(self.storage, self.settings, initial_network,
                               [selfplay_openings, gating_openings])
        if stored is None:
            tasks.store_network(self.storage, initial_network, layout.network_name(0))
            fixed = {key: getattr(self.settings, key) for key in FIXED_SETTINGS}
            self.storage.write_json(layout.LOOP, {"fixed": fixed, "created": time.time()})
        elif initial_network:
            log(f"resuming the loop in {self.storage.uri}; --initial-network is not used")
        for path, name in [(selfplay_openings, layout.SELFPLAY_OPENINGS),
                           (gating_openings, layout.GATING_OPENINGS)]:
            if path:
                self.storage.upload(path, name)
        state = self.storage.read_json(layout.STATE)
        self.state = require_keys(state, STATE_KEYS, self.storage, layout.STATE) if state is not None else {
            "generations_done": 0, "current_network": layout.network_name(0),
            "current_generation": 0, "current_elo": 0.0, "history": []}
        if self.state["generations_done"]:
            log(f"resuming after generation {self.state['generations_done']}, "
                f"current network {layout.network_label(self.state['current_network'])}")

    def save_state(self) -> None:
        self.check_lease()
        self.storage.write_json(layout.STATE, self.state)

    def check_lease(self) -> None:
        if self.lease is not None:
            self.lease.check()

    def largest_alive_machine(self) -> tuple[list, int]:
        """The cluster's machines alive now and the CPUs of the largest."""
        nodes = [node for node in self.ray.nodes() if node.get("Alive")]
        return nodes, int(max((node["Resources"].get("CPU", 0) for node in nodes), default=0))

    def check_cluster(self) -> None:
        nodes, largest = self.largest_alive_machine()
        s = self.settings
        for what, cpus in [("--selfplay-parallel", s.selfplay_parallel),
                           ("--gating-concurrency", s.gating_concurrency)]:
            if cpus > largest:
                raise LoopError(f"{what} {cpus} asks for more CPUs than any machine of the cluster has ({largest:g})")
        self.largest_machine_cpus = int(largest)
        self.cluster_gpus = self.ray.cluster_resources().get("GPU", 0)
        log(f"cluster: {len(nodes)} machine(s), {self.ray.cluster_resources().get('CPU', 0):g} CPUs, "
            f"{self.cluster_gpus:g} GPUs; storage {self.storage.uri}")

    def base_spec(self, generation: int) -> dict:
        return {"storage": self.storage.uri, "binary": self.binary,
                "local_dir": self.local_dir, "generation": generation}

    # --- the loop --------------------------------------------------------

    def run(self, generations: int) -> None:
        while self.state["generations_done"] < generations:
            self.run_generation(self.state["generations_done"] + 1)
        log(f"{self.state['generations_done']} generations done; current network "
            f"{layout.network_label(self.state['current_network'])}")

    def run_generation(self, generation: int) -> None:
        plan = self.plan(generation)
        selfplay = self.selfplay(generation, plan)
        train = self.train(generation, plan)
        gating = self.gate(generation, plan)
        promoted = gating["decision"] == "H1"
        if promoted:
            # The network promoted is the one the gate played: a training
            # attempt that finished late (a retried task) must not have
            # replaced it since.
            self.check_gated_network(layout.network_name(generation), gating.get("candidate_sha256"),
                                     layout.gating_name(generation))
        gating_elo = gating["elo"]
        if not math.isfinite(gating_elo):
            # Loops before recorded_elo stored a clean sweep's infinite Elo:
            # count half a game each way.
            gating_elo, _ = elo_estimate(gating["wins"] + 0.5, gating["losses"] + 0.5, gating["draws"])
        candidate_elo = self.state["current_elo"] + gating_elo
        entry = {"generation": generation, "network": plan["network"],
                 "candidate": layout.network_name(generation), "selfplay": selfplay,
                 "train": train, "gating": gating, "promoted": promoted,
                 "candidate_elo": candidate_elo}
        if promoted:
            self.state.update(current_network=layout.network_name(generation),
                              current_generation=generation, current_elo=candidate_elo)
        entry["current_elo"] = self.state["current_elo"]
        self.state["history"].append(entry)
        self.state["generations_done"] = generation
        self.save_state()
        log(f"gen {generation}: candidate {'promoted' if promoted else 'rejected'} "
            f"({gating['decision']}); current network "
            f"{layout.network_label(self.state['current_network'])}, "
            f"{self.state['current_elo']:+.1f} Elo over gen-0000")

    def plan(self, generation: int) -> dict:
        """The generation's shards, fixed when it starts so that a restart
        plays the same ones."""
        stored = self.storage.read_json(layout.plan_name(generation))
        if stored is not None:
            require_keys(stored, PLAN_KEYS, self.storage, layout.plan_name(generation))
            for shard in stored["shards"]:
                require_keys(shard, SHARD_KEYS, self.storage, layout.plan_name(generation))
            return stored
        s = self.settings
        shards = []
        for index in range(math.ceil(s.games_per_generation / s.shard_games)):
            games = min(s.shard_games, s.games_per_generation - index * s.shard_games)
            shards.append({"shard": index, "games": games,
                           "seed": derived_seed(s.seed, "selfplay", generation, index)})
        has_openings = self.storage.exists(layout.SELFPLAY_OPENINGS)
        plan = {"generation": generation, "network": self.state["current_network"],
                "shards": shards, "part_games": s.part_games, "started": time.time(),
                "options": {"rule": s.rule, "board": s.board, "parallel": s.selfplay_parallel,
                            "playouts": s.playouts, "fast_playouts": s.fast_playouts,
                            "full_share": s.full_share, "sample_plies": s.sample_plies,
                            "temperature": s.temperature, "random_stones": s.random_stones,
                            "openings": layout.SELFPLAY_OPENINGS if has_openings else None}}
        self.storage.write_json(layout.plan_name(generation), plan)
        return plan

    def selfplay(self, generation: int, plan: dict) -> dict:
        s = self.settings
        target = sum(shard["games"] for shard in plan["shards"])
        pending = {}
        stored_before = 0
        for shard in plan["shards"]:
            games = tasks.stored_shard_games(self.storage, generation, shard["shard"])
            stored = len(games)
            stored_before += stored
            self.progress.report_shard.remote(generation, shard["shard"], stored,
                                              sum(parse_game(line).positions for line in games))
            if stored >= shard["games"]:
                continue
            spec = {**self.base_spec(generation), "network": plan["network"], "shard": shard["shard"],
                    "games": shard["games"], "seed": shard["seed"], "part_games": plan["part_games"],
                    "options": plan["options"], "poll_seconds": s.poll_seconds}
            ref = self.selfplay_task.options(
                num_cpus=plan["options"]["parallel"],
                name=f"selfplay gen-{generation:04d} shard-{shard['shard']:03d}",
            ).remote(spec, self.progress)
            pending[ref] = f"self-play shard {shard['shard']} of generation {generation}"
        self.progress.update.remote(generation=generation, phase="selfplay",
                                    current_generation=self.state["current_generation"],
                                    network=layout.network_label(plan["network"]), games_target=target)
        if pending:
            log(f"gen {generation} selfplay: {len(pending)} shard task(s) for {target - stored_before} "
                f"games ({stored_before} already stored), network {layout.network_label(plan['network'])}")
        meter = RateMeter()
        started = time.time()

        last_snapshot = {"games": stored_before, "positions": 0}
        display_lost = False

        def report(force: bool = False) -> dict:
            nonlocal last_snapshot, display_lost
            if display_lost:
                return last_snapshot
            try:
                snapshot = self.ray.get(self.progress.snapshot.remote(generation), timeout=60)
            except Exception as error:  # noqa: BLE001 - the actor is a display; the shards go on
                # Not asked again this generation: a hung actor would cost
                # a minute per report.
                display_lost = True
                log(f"gen {generation} selfplay: no progress figures ({describe_failure(error)})")
                return last_snapshot
            last_snapshot = snapshot
            rate = meter.add(time.time(), snapshot["games"])
            if rate is not None:
                self.progress.update.remote(games_per_minute=rate)
            self.write_status(generation, "selfplay", {
                "games": snapshot["games"], "target": target, "positions": snapshot["positions"],
                "games_per_minute": rate, "running_shards": len(pending)})
            if force or time.time() - self.last_report >= s.report_seconds:
                self.last_report = time.time()
                rate_text = f"{rate:.1f} games/min" if rate is not None else "games/min pending"
                log(f"gen {generation} selfplay: {snapshot['games']}/{target} games, "
                    f"{snapshot['positions']} positions, {rate_text}, {len(pending)} shard task(s) to finish")
            return snapshot

        report()
        results = self.wait_all(pending, report)
        seconds = time.time() - started
        games = positions = 0
        for shard in plan["shards"]:
            summaries = [parse_game(line) for line in
                         tasks.stored_shard_games(self.storage, generation, shard["shard"])]
            if len(summaries) < shard["games"]:
                raise LoopError(f"self-play shard {shard['shard']} of generation {generation} stored "
                                f"{len(summaries)} of {shard['games']} games")
            games += len(summaries)
            positions += sum(summary.positions for summary in summaries)
        new_games = sum(result["new_games"] for result in results.values())
        cpu_seconds = sum(result.get("engine_cpu_seconds", 0) for result in results.values())
        summary = {"games": games, "positions": positions, "new_games": new_games,
                   "seconds": round(seconds, 1),
                   "games_per_minute": round(new_games * 60 / seconds, 2) if new_games else None,
                   "engine_cpu_seconds_per_game": round(cpu_seconds / new_games, 2) if new_games else None}
        log(f"gen {generation} selfplay done: {games} games, {positions} positions"
            + (f", {new_games} new in {seconds:.0f} s ({summary['games_per_minute']} games/min)" if new_games else ""))
        return summary

    def wait_all(self, pending: dict, report) -> dict:
        results = {}
        try:
            while pending:
                self.check_lease()
                ready, _ = self.ray.wait(list(pending), num_returns=1,
                                         timeout=min(self.settings.report_seconds, 5.0))
                self.progress.refresh.remote()
                for ref in ready:
                    label = pending.pop(ref)
                    try:
                        results[label] = self.ray.get(ref)
                    except Exception as error:
                        raise LoopError(f"{label} failed: {describe_failure(error)}\n"
                                        f"(what it stored is kept: run the same command again to resume)") from None
                report()
        finally:
            for ref in pending:
                self.ray.cancel(ref, force=True)
        return results

    def train(self, generation: int, plan: dict) -> dict:
        name = layout.network_name(generation)
        if self.storage.exists(name):
            return self.storage.read_json(layout.train_name(generation), default={})
        s = self.settings
        first = max(1, generation - s.window + 1)
        # Sized to the machines alive now: the largest at the start may have
        # left, and a request no machine can meet would wait forever.
        nodes, largest = self.largest_alive_machine()
        if largest >= 1:
            self.largest_machine_cpus = largest
        self.cluster_gpus = self.ray.cluster_resources().get("GPU", 0)
        gpu_machine_cpus = int(max((n["Resources"].get("CPU", 0) for n in nodes
                                    if n["Resources"].get("GPU", 0) >= 1), default=0))
        if self.cluster_gpus >= 1 and gpu_machine_cpus >= 1:
            device, resources = "auto", {"num_gpus": 1, "num_cpus": min(s.train_cpus or 4, gpu_machine_cpus)}
        else:
            cpus = min(s.train_cpus or self.largest_machine_cpus, self.largest_machine_cpus)
            device, resources = "cpu", {"num_cpus": cpus}
        spec = {**self.base_spec(generation), "rule": s.rule, "board": s.board,
                "init_network": plan["network"], "data_generations": list(range(first, generation + 1)),
                "device": device, "torch_threads": min(resources["num_cpus"], MAX_TORCH_THREADS),
                "options": {"batch_size": s.batch_size, "lr": s.lr, "warmup_steps": s.warmup_steps,
                            "epochs": s.train_epochs, "max_steps": s.train_steps,
                            "max_minutes": s.train_minutes, "seed": generation,
                            "extra_args": s.train_args}}
        log(f"gen {generation} training: from {layout.network_label(plan['network'])} on the games of "
            f"generation(s) {first}..{generation}, {device}, {resources}")
        self.write_status(generation, "training", {"resources": resources})
        self.progress.update.remote(phase="training")
        ref = self.train_task.options(name=f"train gen-{generation:04d}", **resources).remote(spec)
        result = next(iter(self.wait_all({ref: f"training of generation {generation}"}, lambda: None).values()))
        log(f"gen {generation} training done: {result.get('steps')} steps on {result.get('games_used')} "
            f"games ({result.get('positions')} positions) in {result.get('seconds', 0):.0f} s; validation "
            f"policy loss {result.get('val_policy_loss')}, value loss {result.get('val_value_loss')}")
        return result

    def gate(self, generation: int, plan: dict) -> dict:
        stored = self.storage.read_json(layout.gating_name(generation))
        if stored is not None:
            return require_keys(stored, GATING_KEYS, self.storage, layout.gating_name(generation))
        s = self.settings
        single = s.gating_tasks == 1
        games_per_task = s.gating_max_games if single else s.gating_games_per_task
        games_per_task += games_per_task % 2  # openings are played twice, colours swapped
        has_openings = self.storage.exists(layout.GATING_OPENINGS)
        candidate, current = layout.network_name(generation), plan["network"]
        # What makes the slices of one gate one match: stored with each, so
        # that a restart under other gating settings does not pool games of
        # another strength or take a slice of a pooled gate for a whole one.
        gate_settings = {"tasks": s.gating_tasks, "games_per_task": games_per_task,
                         "playouts": s.gating_playouts, "elo0": s.elo0, "elo1": s.elo1}
        results: list[dict] = []
        started = time.time()
        round_index = 0
        while True:
            pending = {}
            stored_results: dict[str, dict] = {}
            names: dict[str, str] = {}  # task label -> its result file
            for task in range(s.gating_tasks):
                result_name = layout.gating_task_name(generation, round_index, task)
                done = self.storage.read_json(result_name)
                if done is not None:
                    done = require_keys(done, GATING_TASK_KEYS, self.storage, result_name)
                    if done.get("gate", gate_settings) != gate_settings:
                        raise LoopError(
                            f"{self.storage.path(result_name)} was played under other gating settings "
                            f"({done['gate']}, now {gate_settings}): restart with those, or remove "
                            f"generation {generation}'s gating files to play its gate again")
                    stored_results[result_name] = done
                    continue
                spec = {**self.base_spec(generation), "candidate": candidate, "current": current,
                        "rule": s.rule, "board": s.board, "games": games_per_task,
                        "seed": derived_seed(s.seed, "gating", generation, round_index, task),
                        "playouts": s.gating_playouts, "concurrency": s.gating_concurrency,
                        "openings": layout.GATING_OPENINGS if has_openings else None,
                        "random_stones": s.random_stones, "round": round_index, "task": task,
                        "result_name": result_name, "gate": gate_settings,
                        # One task plays the whole gate and stops on the engine's own SPRT;
                        # slices of a pooled gate must not stop on their own.
                        "sprt_argument": self.sprt.engine_argument() if single else None}
                ref = self.gating_task.options(
                    num_cpus=s.gating_concurrency,
                    name=f"gating gen-{generation:04d} round-{round_index:02d} task-{task:02d}",
                ).remote(spec)
                label = f"gating match {task} (round {round_index}) of generation {generation}"
                pending[ref] = label
                names[label] = result_name
            log(f"gen {generation} gating round {round_index}: {layout.network_label(candidate)} against "
                f"{layout.network_label(current)}, {len(pending)} task(s) of {games_per_task} games at "
                f"{s.gating_playouts} playouts, SPRT elo0 {s.elo0:g} elo1 {s.elo1:g}")
            self.progress.update.remote(phase="gating")
            finished = self.wait_all(pending, lambda: None)
            round_results = {**stored_results, **{names[label]: result for label, result in finished.items()}}
            for result_name, result in round_results.items():
                self.check_gated_network(candidate, result.get("candidate_sha256"), result_name)
            self.check_faults(round_results)
            results.extend(round_results.values())
            wins, losses, draws = (sum(r[key] for r in results) for key in ("wins", "losses", "draws"))
            games = wins + losses + draws
            llr = self.sprt.llr(wins, losses, draws)
            decision = self.sprt.decision(wins, losses, draws)
            if single:
                # The engine stopped its match where its LLR crossed a bound;
                # the games then in flight still count in the W/L/D, and may
                # move the LLR back inside the bounds: its decision stands.
                decision = engine_decision(results) or decision
            elo, margin = recorded_elo(wins, losses, draws)
            lower, upper = self.sprt.bounds()
            self.progress.update.remote(gating_games=games, gating_llr=llr, gating_elo=elo)
            self.write_status(generation, "gating", {"wins": wins, "losses": losses, "draws": draws,
                                                     "llr": llr, "bounds": [lower, upper], "elo": elo,
                                                     "decision": decision})
            log(f"gen {generation} gating: {wins}-{losses}-{draws} in {games}, {elo:+.1f} ± {margin:.1f} Elo, "
                f"LLR {llr:.2f} [{lower:.2f}, {upper:.2f}]: {decision}")
            round_index += 1
            if decision != "undecided" or round_index * s.gating_tasks * games_per_task >= s.gating_max_games:
                break
        gating = {"candidate": candidate, "candidate_sha256": self.stored_digest(candidate),
                  "current": current, "wins": wins, "losses": losses,
                  "draws": draws, "games": games, "elo": elo, "elo_margin": margin, "llr": llr,
                  "bounds": [lower, upper], "decision": decision, "rounds": round_index,
                  "sprt": dataclasses.asdict(self.sprt), "playouts": s.gating_playouts,
                  "seconds": round(time.time() - started, 1)}
        if single and len(results) == 1 and "engine_llr" in results[0]:
            gating["engine_llr"] = results[0]["engine_llr"]
            gating["engine_verdict"] = results[0]["engine_verdict"]
        self.storage.write_json(layout.gating_name(generation), gating)
        return gating

    def stored_digest(self, network: str) -> str | None:
        try:
            return self.storage.read_bytes(layout.digest_name(network)).decode().strip() or None
        except FileNotFoundError:
            return None
        except UnicodeDecodeError:
            raise StorageError(f"{self.storage.path(layout.digest_name(network))} is damaged") from None

    def check_gated_network(self, network: str, gated: str | None, result_name: str) -> None:
        """Stops where a gating result was played by another network than
        the one stored now under `network` (results of loops before digests
        were recorded carry none, and pass)."""
        stored = self.stored_digest(network)
        if gated and stored and gated != stored:
            raise LoopError(
                f"{self.storage.path(result_name)} was played by another {layout.network_label(network)} "
                f"(SHA-256 {gated[:12]}...) than the one stored now ({stored[:12]}...): remove the "
                f"generation's gating files to gate the stored network")

    def check_faults(self, results: dict[str, dict]) -> None:
        """Stops the gate where a side lost games by error (a crash, a time
        forfeit, a bad answer): those games count in the W/L/D as losses,
        and the current network's crashes would promote the candidate.
        They cannot be taken out of a task's W/L/D (it holds no per-game
        record), and an engine that crashes needs a person anyway."""
        faults = []
        for name, result in results.items():
            try:
                counts = fault_counts(result.get("losses_by_error"))
            except ValueError as error:
                raise StorageError(f"{self.storage.path(name)} is damaged ({error}); restore it, "
                                   f"or remove it to play the task again") from None
            for side, labels in counts.items():
                if labels:
                    text = ", ".join(f"{label} {count}" for label, count in labels.items())
                    faults.append(f"{side} lost by error ({text}) in {self.storage.path(name)}")
        if faults:
            raise LoopError("gating stopped: " + "; ".join(faults) + "\n(such games are no evidence of "
                            "strength: find the cause, e.g. with `pbrain-wuzi match` between the two "
                            "networks, then remove those files to play the tasks again)")

    def write_status(self, generation: int, phase: str, detail: dict) -> None:
        self.storage.write_json(layout.STATUS, {
            "generation": generation, "phase": phase, "detail": detail,
            "current_network": self.state["current_network"],
            "generations_done": self.state["generations_done"], "updated": time.time()})


def engine_decision(results: list[dict]) -> str | None:
    verdict = results[0].get("engine_verdict", "") if len(results) == 1 else ""
    if verdict.startswith("H1 accepted"):
        return "H1"
    if verdict.startswith("H0 accepted"):
        return "H0"
    return None


def connect(address: str | None, num_cpus: int | None, dashboard: bool):
    """Joins the cluster at `address`, or starts a local one in this process."""
    import logging

    # Ray reads these when it is imported. A local cluster that no other
    # machine joins listens on the loopback interface only, and no usage
    # statistics leave the machine.
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    if not address:
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    import ray
    package_dir = os.path.dirname(os.path.abspath(__file__))
    # Ray ships this package to every machine that runs a task.
    options = dict(runtime_env={"py_modules": [package_dir]}, logging_level=logging.WARNING)
    try:
        if address:
            context = ray.init(address=address, **options)
        else:
            context = ray.init(num_cpus=num_cpus, include_dashboard=dashboard,
                               dashboard_host="127.0.0.1", **options)
    except ConnectionError as e:
        raise LoopError(f"cannot reach the Ray cluster at {address}: {e}") from None
    # Ray's own SIGTERM handler (a crash report) replaced ours: put it back,
    # so that SIGTERM stops the loop as Ctrl-C does.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    if getattr(context, "dashboard_url", None):
        log(f"Ray dashboard: http://{context.dashboard_url}")
    return ray
