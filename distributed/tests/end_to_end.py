"""End-to-end test of the distributed generation loop (run by
scripts/test-distributed.sh).

On a local Ray cluster of two CPUs (two self-play workers) started and
stopped here, with a tiny network on a 9x9 board, it runs:

  A. generation 1, killing one shard's Ray worker and the other shard's
     selfplay process mid-game: both tasks must be retried, resume from
     the games stored, and lose none of them;
  B. a loop asked for 2 generations, its driver killed (SIGKILL) during
     generation 2's self-play;
  C. the same command again: it must resume (generation 1 untouched,
     generation 2's stored games kept) and finish.

It starts with the unit tests of tests/test_*.py (no binary, no cluster).
Then it checks the records (every line a whole game, the counts of the
plan, `pbrain-wuzi train` reading them all), the gating decision against the
SPRT of its counts, the Elo plot, and the error messages of a bad storage
URI, a missing binary and a storage of another rule. Ends with
`distributed: N passed, M failed`; exit status 1 on any failure.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DISTRIBUTED = os.path.dirname(HERE)
ROOT = os.path.dirname(DISTRIBUTED)
sys.path.insert(0, DISTRIBUTED)

from wuzi_loop import layout  # noqa: E402
from wuzi_loop.records import RecordError, parse_game, whole_game_lines  # noqa: E402
from wuzi_loop.loop import derived_seed  # noqa: E402
from wuzi_loop.sprt import Sprt, elo_estimate  # noqa: E402
from wuzi_loop.storage import Storage, StorageError  # noqa: E402
from wuzi_loop.tasks import cached_network, store_network  # noqa: E402

BINARY = os.environ.get("WUZI_BINARY", os.path.join(ROOT, "target", "release", "pbrain-wuzi"))
# Enough games that both shards are still playing once each has stored two
# (phase A kills them then): with 8, one shard could finish before the
# other, started later, had stored two, on an idle machine.
GAMES_PER_SHARD = 16
SHARDS = 2

passed: list[str] = []
failed: list[str] = []


def check(name: str, ok: bool, detail: str = "") -> bool:
    if ok:
        passed.append(name)
        print(f"ok   {name}", flush=True)
    else:
        failed.append(name)
        print(f"FAIL {name}{': ' + detail if detail else ''}", flush=True)
    return ok


def note(message: str) -> None:
    print(f"[{time.time() - STARTED:6.1f}s] {message}", flush=True)


STARTED = time.time()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def processes_with(marker: str) -> list[tuple[int, int, str]]:
    """(pid, parent pid, command line) of the processes whose command line
    holds `marker` (this test's own folder)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as source:
                command = source.read().replace(b"\0", b" ").decode(errors="replace")
            with open(f"/proc/{entry}/stat") as source:
                parent = int(source.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if marker in command:
            found.append((int(entry), parent, command))
    return found


def command_line(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as source:
            return source.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def wait_for(condition, timeout: float, what: str, poll: float = 0.1):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(poll)
    raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}")


def stored_games(storage_dir: str, generation: int) -> dict[int, list[str]]:
    shards: dict[int, list[str]] = {}
    folder = os.path.join(storage_dir, layout.games_dir(generation))
    if not os.path.isdir(folder):
        return shards
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".tsv"):
            continue
        shard = int(name.split("-")[1])
        with open(os.path.join(folder, name)) as part:
            shards.setdefault(shard, []).extend(whole_game_lines(part.read()))
    return shards


def digest(path: str) -> str:
    with open(path, "rb") as source:
        return hashlib.sha256(source.read()).hexdigest()


class Harness:
    def __init__(self):
        # A short folder: Ray's unix sockets live under it.
        self.folder = tempfile.mkdtemp(prefix="wzd-", dir="/tmp")
        self.storage = os.path.join(self.folder, "storage")
        self.local = os.path.join(self.folder, "local")
        self.port = free_port()
        self.head: subprocess.Popen | None = None
        self.engines_left: list[tuple[int, int, str]] = []
        self.drivers: list[subprocess.Popen] = []
        self.env = dict(os.environ,
                        RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=secrets.token_hex(16),
                        RAY_USAGE_STATS_ENABLED="0",
                        # Every address of the cluster on the loopback interface.
                        RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0",
                        # Ports of their own, beside any other Ray on the machine.
                        AUTOSCALER_METRIC_PORT=str(free_port()), DASHBOARD_METRIC_PORT=str(free_port()),
                        PYTHONPATH=DISTRIBUTED)

    def start_cluster(self) -> None:
        ray = os.path.join(os.path.dirname(sys.executable), "ray")
        self.head_log = os.path.join(self.folder, "head.log")
        with open(self.head_log, "wb") as out:
            self.head = subprocess.Popen(
                [ray, "start", "--head", "--block", "--num-cpus=2", f"--port={self.port}",
                 f"--temp-dir={self.folder}/ray", "--include-dashboard=false",
                 f"--ray-client-server-port={free_port()}", f"--dashboard-port={free_port()}",
                 "--node-ip-address=127.0.0.1", "--disable-usage-stats",
                 "--object-store-memory=100000000"],
                stdout=out, stderr=subprocess.STDOUT, env=self.env)

        def started():
            if self.head.poll() is not None:
                raise RuntimeError(f"ray start exited:\n{open(self.head_log).read()[-2000:]}")
            return "Ray runtime started" in open(self.head_log, errors="replace").read()

        wait_for(started, 90, "the Ray head", poll=0.5)

    def stop_cluster(self) -> None:
        for driver in self.drivers:
            if driver.poll() is None:
                driver.kill()
                driver.wait()
        if self.head and self.head.poll() is None:
            self.head.terminate()
            try:
                self.head.wait(30)
            except subprocess.TimeoutExpired:
                self.head.kill()
                self.head.wait()
        # Whatever this test started and is still there (its folder is in
        # every such command line).
        deadline = time.time() + 10
        while processes_with(self.folder) and time.time() < deadline:
            time.sleep(0.5)
        # Engines die with their Ray worker (PR_SET_PDEATHSIG): one still
        # running now is a leak, whatever Ray's own processes take to exit.
        self.engines_left = [p for p in processes_with(self.folder) if BINARY in p[2]]
        for pid, _, _ in processes_with(self.folder):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def loop_args(self, generations: int, **overrides) -> list[str]:
        settings = {"board": 9, "games-per-generation": SHARDS * GAMES_PER_SHARD,
                    "shard-games": GAMES_PER_SHARD, "part-games": 3, "selfplay-parallel": 1,
                    "playouts": 64, "fast-playouts": 16, "full-share": 0.5, "sample-plies": 4,
                    "train-steps": 8, "batch-size": 64, "warmup-steps": 2, "window": 2,
                    "gating-playouts": 16, "gating-max-games": 4, "gating-concurrency": 1,
                    "report-seconds": 3, "poll-seconds": 0.2, "seed": 7}
        settings.update(overrides)
        args = ["run", "--address", f"127.0.0.1:{self.port}", "--storage", self.storage,
                "--binary", BINARY, "--local-dir", self.local, "--generations", str(generations),
                "--initial-network", os.path.join(self.folder, "tiny-1x16.safetensors")]
        for key, value in settings.items():
            args += [f"--{key}", str(value)]
        return args

    def start_driver(self, args: list[str], name: str) -> tuple[subprocess.Popen, str]:
        log_path = os.path.join(self.folder, f"{name}.log")
        with open(log_path, "wb") as out:
            driver = subprocess.Popen([sys.executable, "-m", "wuzi_loop", *args], cwd=DISTRIBUTED,
                                      stdout=out, stderr=subprocess.STDOUT, env=self.env)
        self.drivers.append(driver)
        return driver, log_path

    def run_cli(self, args: list[str]) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "wuzi_loop", *args], cwd=DISTRIBUTED,
                              capture_output=True, text=True, env=self.env, timeout=120)

    def selfplay_processes(self, shard: int) -> list[tuple[int, int, str]]:
        return [p for p in processes_with(self.local)
                if " selfplay " in p[2] and f"shard-{shard:03d}.tsv" in p[2]]


def finish_driver(driver: subprocess.Popen, log_path: str, timeout: float, name: str) -> bool:
    try:
        driver.wait(timeout)
    except subprocess.TimeoutExpired:
        driver.kill()
        driver.wait()
    ok = driver.returncode == 0
    if not ok:
        print(f"--- {name} (exit {driver.returncode}) ---\n{open(log_path).read()[-4000:]}", flush=True)
    return ok


def unit_tests() -> None:
    """tests/test_*.py (unittest cases, no binary or cluster), each a check here."""
    import unittest
    suite = unittest.defaultTestLoader.discover(HERE, pattern="test_*.py", top_level_dir=HERE)
    with open(os.devnull, "w") as sink:
        result = unittest.TextTestRunner(stream=sink, verbosity=0).run(suite)
    broken = {test.id(): text for test, text in result.failures + result.errors}
    check(f"{result.testsRun} unit tests (tests/test_*.py)", not broken,
          "; ".join(f"{name}: {text.strip().splitlines()[-1]}" for name, text in broken.items()))


def unit_checks() -> None:
    unit_tests()
    # The engine's own figures (networks/README.md): 126-89-21 gave LLR
    # 2.97 and +54.9 Elo for SPRT (0, 40); 38-22-0 gave 1.68, +94.9 ± 93.9 for (0, 50).
    check("SPRT and Elo as pbrain-wuzi match computes them",
          abs(Sprt(0, 40).llr(126, 89, 21) - 2.97) < 0.005
          and abs(elo_estimate(126, 89, 21)[0] - 54.9) < 0.05
          and abs(Sprt(0, 50).llr(38, 22, 0) - 1.68) < 0.005
          and abs(elo_estimate(38, 22, 0)[1] - 93.9) < 0.05)
    # A candidate that never lost (or never won) is still decided, as the
    # engine's match decides it (crates/wuzi-arena/tests/arena.rs).
    check("SPRT decides a one-sided result",
          Sprt(0, 40).decision(60, 0, 140) == "H1" and Sprt(0, 40).decision(0, 60, 140) == "H0"
          and Sprt(0, 40).decision(30, 0, 0) == "H1" and Sprt(0, 40).decision(5, 0, 0) == "undecided"
          and Sprt(0, 40).llr(0, 0, 0) == 0.0)
    check("task seeds differ between neighbouring rounds and tasks",
          len({derived_seed(7, "gating", 1, r, t) for r in range(3) for t in range(60)}) == 180
          and derived_seed(7, "gating", 1, 0, 50) != derived_seed(7, "gating", 1, 1, 0))
    check("a partly written last line is not a game",
          whole_game_lines("#header\nA\tb\nB\tc\nhalf a li") == ["A\tb", "B\tc"])
    folder = tempfile.mkdtemp(prefix="wzd-unit-")
    try:
        storage = Storage(folder)
        storage.write_json("a/b.json", {"x": 1})
        storage.write_bytes("a/c.tsv", b"1")
        check("storage writes whole files and lists them",
              storage.read_json("a/b.json") == {"x": 1} and storage.list("a") == ["a/b.json", "a/c.tsv"]
              and not [n for n in os.listdir(os.path.join(folder, "a")) if n.startswith(".partial-")])
        storage_uri = Storage("file://" + folder)
        check("file:// names the same folder", storage_uri.read_json("a/b.json") == {"x": 1})
        # An fsspec file system that is not local takes the object-store path
        # (whole-object PUTs, uploads and downloads through fsspec).
        store = Storage("memory://wzd-unit")
        store.write_json("gen-0001/x.json", {"y": 2})
        store.upload(os.path.join(folder, "a", "c.tsv"), "gen-0001/games/c.tsv")
        store.download("gen-0001/games/c.tsv", os.path.join(folder, "back.tsv"))
        check("an object-store URI (memory://) writes, lists, uploads and downloads",
              store.read_json("gen-0001/x.json") == {"y": 2} and store.list("gen-0001/games") == ["gen-0001/games/c.tsv"]
              and open(os.path.join(folder, "back.tsv")).read() == "1" and not store.is_local)
        # Machines cache networks by content: a second loop on the same
        # storage URI has another gen-0001, and must not play the first's.
        cache = os.path.join(folder, "cache")
        for content in (b"first network", b"second network"):
            with open(os.path.join(folder, "net"), "wb") as out:
                out.write(content)
            store_network(store, os.path.join(folder, "net"), "gen-0001/network.safetensors")
            local = cached_network(store, "gen-0001/network.safetensors", cache)
            check(f"the cached network is the stored one ({content.decode()})",
                  open(local, "rb").read() == content and os.path.basename(local) == "gen-0001.safetensors")
        store.write_bytes("gen-0002/network.safetensors.sha256", b"0" * 64 + b"\n")
        store.write_bytes("gen-0002/network.safetensors", b"not what the digest says")
        try:
            cached_network(store, "gen-0002/network.safetensors", cache)
            mismatch = "no error"
        except StorageError as e:
            mismatch = str(e)
        check("a network that does not match its digest is refused", "does not match" in mismatch, mismatch)
        store.write_bytes("state.json", b'{"generations_done": 1')
        try:
            store.read_json("state.json")
            damaged = "no error"
        except StorageError as e:
            damaged = str(e)
        check("a damaged JSON file is a StorageError naming it", "state.json is damaged" in damaged, damaged)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def damaged_storage(harness: Harness) -> str:
    folder = os.path.join(harness.folder, "damaged")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, layout.STATE), "w") as out:
        out.write('{"generations_done": 2}\n')
    return folder


def error_checks(harness: Harness) -> None:
    for name, args, expected in [
        ("a bad storage URI", ["status", "--storage", "nosuch://bucket/x"], "Protocol not known"),
        ("an object store without its package",
         ["run", "--storage", "s3://bucket/loop", "--binary", BINARY], "s3fs"),
        ("a missing binary", ["run", "--storage", harness.storage, "--binary",
                              os.path.join(harness.folder, "no-such-pbrain-wuzi")], "pbrain-wuzi not found"),
        ("a storage of another rule", harness.loop_args(1, rule="renju")[:], "holds a loop of"),
        # Without a gating task the gate would loop for ever.
        ("no gating task", harness.loop_args(1, **{"gating-tasks": 0}), "--gating-tasks 0: must be above 0"),
        ("elo1 below elo0", harness.loop_args(1, elo0=10, elo1=5), "must be above --elo0"),
        ("a damaged state.json", ["status", "--storage", damaged_storage(harness)], "state.json is damaged"),
    ]:
        result = harness.run_cli(args)
        check(f"{name}: exit 2 and one clear line, no traceback",
              result.returncode == 2 and expected in result.stderr and "Traceback" not in result.stderr,
              f"exit {result.returncode}, stderr {result.stderr[-600:]!r}")


def phase_a_worker_kill(harness: Harness) -> None:
    note("A: generation 1, killing shard 0's Ray worker and shard 1's selfplay process mid-game")
    driver, log_path = harness.start_driver(harness.loop_args(1), "driver-a")

    # The processes and the games of one look: listed again after the
    # first kill, the other shard's could have moved on meanwhile.
    seen = {}

    def both_playing_with_stored_games():
        games = stored_games(harness.storage, 1)
        if all(len(games.get(shard, [])) >= 2 for shard in range(SHARDS)):
            processes = [harness.selfplay_processes(shard) for shard in range(SHARDS)]
            if all(len(found) == 1 for found in processes):
                seen.update(processes=processes, games=games)
                return True
        if driver.poll() is not None:
            raise RuntimeError(f"driver A exited early:\n{open(log_path).read()[-3000:]}")
        return False

    wait_for(both_playing_with_stored_games, 120, "both shards to store 2 games")
    (engine_pid, worker_pid, _), = seen["processes"][0]
    (other_engine_pid, _, _), = seen["processes"][1]
    worker_command = command_line(worker_pid)
    check("shard 0's selfplay runs inside a Ray worker", worker_command.startswith("ray::"),
          repr(worker_command[:80]))
    os.kill(worker_pid, signal.SIGKILL)
    os.kill(other_engine_pid, signal.SIGKILL)
    # Stored before the kills (a lower bound of what was stored at them:
    # a retried shard may store more soon after).
    at_kill = seen["games"]
    note(f"killed Ray worker {worker_pid} (shard 0, {len(at_kill[0])} games stored) and selfplay "
         f"{other_engine_pid} (shard 1, {len(at_kill[1])} stored)")
    wait_for(lambda: not os.path.exists(f"/proc/{engine_pid}") or
             open(f"/proc/{engine_pid}/stat").read().split()[2] == "Z", 10,
             "shard 0's selfplay to die with its worker")
    check("driver A finishes generation 1 after the kills", finish_driver(driver, log_path, 180, "driver A"))

    final = stored_games(harness.storage, 1)
    for shard in range(SHARDS):
        starts = json.load(open(os.path.join(harness.storage, layout.shard_log_name(1, shard))))["starts"]
        kept = final.get(shard, [])[:len(at_kill[shard])] == at_kill[shard]
        check(f"shard {shard}: every game stored before the kill is kept unchanged", kept)
        check(f"shard {shard}: the task was retried and resumed from the stored games",
              len(starts) >= 2 and starts[-1]["stored_games"] >= len(at_kill[shard]),
              json.dumps(starts))
        check(f"shard {shard}: exactly {GAMES_PER_SHARD} games", len(final.get(shard, [])) == GAMES_PER_SHARD,
              f"{len(final.get(shard, []))}")


def check_records(harness: Harness, generation: int) -> None:
    games = [line for lines in stored_games(harness.storage, generation).values() for line in lines]
    problems = []
    for line in games:
        try:
            parse_game(line)
        except RecordError as e:
            problems.append(str(e))
    check(f"gen {generation}: every stored line is a whole game", not problems, "; ".join(problems[:3]))
    ids = [line.split("\t")[0] for line in games]
    check(f"gen {generation}: game ids are unique", len(ids) == len(set(ids)))
    folder = os.path.join(harness.storage, layout.games_dir(generation))
    check(f"gen {generation}: no partial files left in storage",
          not [n for n in os.listdir(folder) if not n.endswith(".tsv")])


def check_training_and_gating(harness: Harness, generation: int, window_games: int) -> None:
    train = json.load(open(os.path.join(harness.storage, layout.train_name(generation))))
    check(f"gen {generation}: pbrain-wuzi train read every stored game as training data",
          train.get("games_used", -1) + train.get("without_targets", 0) == window_games
          and train.get("skipped", -1) == train.get("without_targets", 0) and train.get("positions", 0) > 0,
          json.dumps(train))
    gating = json.load(open(os.path.join(harness.storage, layout.gating_name(generation))))
    sprt = Sprt(**gating["sprt"])
    counts = (gating["wins"], gating["losses"], gating["draws"])
    verdict = gating.get("engine_verdict", "")
    if verdict.startswith(("H0 accepted", "H1 accepted")):
        # The engine stopped its match on its SPRT; the games in flight came after.
        decided = gating["decision"] == verdict[:2]
    else:
        decided = (gating["decision"] == sprt.decision(*counts)
                   and abs(gating.get("engine_llr", 99) - sprt.llr(*counts)) < 0.001)
    check(f"gen {generation}: gating played its match and decided by the SPRT",
          sum(counts) == gating["games"] > 0 and decided, json.dumps(gating))


def phase_b_c_restart(harness: Harness) -> None:
    note("B: a loop of 2 generations, its driver killed during generation 2's self-play")
    generation_one = {name: digest(os.path.join(harness.storage, name)) for name in
                      [layout.network_name(1), layout.gating_name(1), layout.train_name(1)]}
    generation_one_games = stored_games(harness.storage, 1)
    starts_one = [open(os.path.join(harness.storage, layout.shard_log_name(1, s))).read() for s in range(SHARDS)]
    driver, log_path = harness.start_driver(harness.loop_args(2), "driver-b")

    def some_generation_two_games():
        if driver.poll() is not None:
            raise RuntimeError(f"driver B exited early:\n{open(log_path).read()[-3000:]}")
        return sum(map(len, stored_games(harness.storage, 2).values())) >= 2

    wait_for(some_generation_two_games, 120, "generation 2 to store 2 games")
    driver.kill()
    driver.wait()
    # The cluster ends the dead driver's tasks, and their engines with them.
    wait_for(lambda: not [p for p in processes_with(harness.local) if " selfplay " in p[2]], 60,
             "the killed driver's selfplay processes to end")
    at_kill = stored_games(harness.storage, 2)
    stored_at_kill = sum(map(len, at_kill.values()))
    note(f"killed driver B with {stored_at_kill} games of generation 2 stored")
    check("driver B was killed before generation 2's self-play ended",
          stored_at_kill < SHARDS * GAMES_PER_SHARD, f"{stored_at_kill}")

    note("C: the same command again")
    driver, log_path = harness.start_driver(harness.loop_args(2), "driver-c")
    check("driver C finishes", finish_driver(driver, log_path, 180, "driver C"))
    log_text = open(log_path).read()
    check("driver C resumed after generation 1", "resuming after generation 1" in log_text)
    check("generation 1 was not redone",
          all(digest(os.path.join(harness.storage, n)) == h for n, h in generation_one.items())
          and stored_games(harness.storage, 1) == generation_one_games
          and [open(os.path.join(harness.storage, layout.shard_log_name(1, s))).read()
               for s in range(SHARDS)] == starts_one)
    final = stored_games(harness.storage, 2)
    check("generation 2's games stored before the driver died are kept",
          all(final.get(s, [])[:len(at_kill.get(s, []))] == at_kill.get(s, []) for s in range(SHARDS)))
    resumed = []
    for shard in range(SHARDS):
        starts = json.load(open(os.path.join(harness.storage, layout.shard_log_name(2, shard))))["starts"]
        resumed.append(any(start["stored_games"] > 0 for start in starts[1:]))
    check("generation 2's shards resumed from their stored games", any(resumed))
    check("generation 2: the planned game count",
          sum(map(len, final.values())) == SHARDS * GAMES_PER_SHARD, f"{sum(map(len, final.values()))}")
    state = json.load(open(os.path.join(harness.storage, layout.STATE)))
    history = [entry["generation"] for entry in state["history"]]
    promoted_ok = all((entry["gating"]["decision"] == "H1") == entry["promoted"] for entry in state["history"])
    check("state: generations 1 and 2 done once each, promoted exactly when H1",
          state["generations_done"] == 2 and history == [1, 2] and promoted_ok, json.dumps(history))


def main() -> int:
    if not os.access(BINARY, os.X_OK):
        print(f"test-distributed: {BINARY} not found: build it first (cargo build --release)", file=sys.stderr)
        return 1
    unit_checks()
    harness = Harness()
    note(f"folder {harness.folder}, cluster port {harness.port}")
    try:
        tiny = subprocess.run(
            [BINARY, "train", "--rule", "freestyle", "--net", "1x16", "--max-steps", "3", "--batch-size", "64",
             "--torch-threads", "1", "--device", "cpu", "--quiet", "--val-positions", "100",
             "--out", os.path.join(harness.folder, "tiny"),
             os.path.join(ROOT, "tests", "fixtures", "games", "gomocup2024_freestyle15_2_sample.tsv")],
            capture_output=True, text=True, timeout=120)
        if not check("a tiny 1x16 network to start from", tiny.returncode == 0, tiny.stdout[-800:] + tiny.stderr[-800:]):
            return 1
        shutil.copy(os.path.join(harness.folder, "tiny", "final.safetensors"),
                    os.path.join(harness.folder, "tiny-1x16.safetensors"))
        harness.start_cluster()
        note("Ray head up (2 CPUs, loopback only)")
        phase_a_worker_kill(harness)
        check_records(harness, 1)
        check_training_and_gating(harness, 1, SHARDS * GAMES_PER_SHARD)
        phase_b_c_restart(harness)
        check_records(harness, 2)
        check_training_and_gating(harness, 2, 2 * SHARDS * GAMES_PER_SHARD)
        plot = os.path.join(harness.folder, "elo.png")
        result = harness.run_cli(["plot", "--storage", harness.storage, "--out", plot])
        check("the Elo plot is drawn", result.returncode == 0 and open(plot, "rb").read(4) == b"\x89PNG",
              result.stderr[-500:])
        status = harness.run_cli(["status", "--storage", harness.storage])
        check("status prints the generations", status.returncode == 0 and "gen 2:" in status.stdout,
              status.stdout[-500:] + status.stderr[-500:])
        error_checks(harness)
    except Exception as error:  # noqa: BLE001 - any surprise is a failed test, then the clean-up
        check("the scenario ran to its end", False, f"{type(error).__name__}: {error}")
    finally:
        harness.stop_cluster()
        check("no engine process outlived the cluster", not harness.engines_left,
              repr(harness.engines_left[:3]))
        left = processes_with(harness.folder)
        check("no process of the test is left", not left, repr(left[:3]))
        if os.environ.get("WUZI_KEEP_TEST_DIR"):
            print(f"kept {harness.folder}")
        else:
            shutil.rmtree(harness.folder, ignore_errors=True)
    note(f"done in {time.time() - STARTED:.0f} s")
    print(f"distributed: {len(passed)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
