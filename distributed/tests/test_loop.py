"""Unit tests of the loop's driver side, without an engine binary or a Ray
cluster (a stand-in for Ray's API). unittest cases, which pytest runs too:

    cd distributed && ../.venv/bin/python -m unittest tests.test_loop
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import json
import math
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import typing
import unittest
import uuid
from types import SimpleNamespace
from unittest import mock

DISTRIBUTED = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, DISTRIBUTED)

from wuzi_loop import cli, layout, tasks  # noqa: E402
from wuzi_loop.engine import (  # noqa: E402
    EngineError, fault_counts, parse_faults, parse_match, parse_train_summary)
from wuzi_loop.lease import Lease  # noqa: E402
from wuzi_loop.sprt import recorded_elo  # noqa: E402
from wuzi_loop.loop import RULES, Loop, LoopError, Settings, check_settings, check_storage  # noqa: E402
from wuzi_loop.storage import PARTIAL_PREFIX, Storage, StorageError, require_keys  # noqa: E402


class FakeRay:
    """What Loop calls of Ray, for steps that start no task."""

    def remote(self, **options):
        def wrap(target):
            if isinstance(target, type):  # the progress actor: every call does nothing
                actor = mock.MagicMock()
                return SimpleNamespace(remote=lambda: actor)
            return mock.MagicMock(name=target.__name__)
        return wrap


FIXED = {"rule": "freestyle", "board": 15}


class StorageCase(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.mkdtemp(prefix="wzl-test-")
        self.addCleanup(shutil.rmtree, self.folder, True)
        self.storage = Storage(self.folder)
        # The driver's log lines, not the test's.
        quiet = mock.patch("wuzi_loop.loop.log")
        quiet.start()
        self.addCleanup(quiet.stop)

    def file(self, name: str, content: bytes = b"net") -> str:
        """A local file outside the storage."""
        folder = tempfile.mkdtemp(prefix="wzl-file-")
        self.addCleanup(shutil.rmtree, folder, True)
        path = os.path.join(folder, name)
        with open(path, "wb") as out:
            out.write(content)
        return path

    def loop(self, **settings) -> Loop:
        loop = Loop(FakeRay(), self.storage, Settings(**settings), sys.executable, None)
        loop.state = {"generations_done": 0, "current_network": layout.network_name(0),
                      "current_generation": 0, "current_elo": 0.0, "history": []}
        return loop

    def run_cli(self, *args: str) -> tuple[int, str]:
        errors = io.StringIO()
        with contextlib.redirect_stderr(errors), contextlib.redirect_stdout(io.StringIO()):
            code = cli.main(list(args))
        return code, errors.getvalue()


class NewLoopOnLeftovers(StorageCase):
    def test_refuses_another_loops_generations(self):
        self.storage.write_json(layout.plan_name(1), {"network": layout.network_name(0)})
        self.storage.write_bytes(layout.network_name(1), b"old candidate")
        with self.assertRaises(LoopError) as raised:
            check_storage(self.storage, Settings(), self.file("net"), [])
        self.assertIn(self.folder, str(raised.exception))
        self.assertIn("gen-0001", str(raised.exception))

    def test_refuses_a_state_without_loop_json(self):
        self.storage.write_json(layout.STATE, {"generations_done": 3})
        with self.assertRaises(LoopError):
            check_storage(self.storage, Settings(), self.file("net"), [])

    def test_an_interrupted_start_is_started_again(self):
        # The initial network stored, loop.json not yet: the same start again.
        self.storage.write_bytes(layout.network_name(0), b"net")
        self.assertIsNone(check_storage(self.storage, Settings(), self.file("net"), []))

    def test_a_stored_loop_resumes(self):
        self.storage.write_json(layout.LOOP, {"fixed": FIXED})
        self.storage.write_json(layout.plan_name(1), {})
        self.assertEqual(check_storage(self.storage, Settings(), None, [])["fixed"], FIXED)


class RuleSetting(StorageCase):
    def test_engine_rules_pass(self):
        for rule in RULES:
            check_settings(Settings(rule=rule))

    def test_unknown_rule_refused(self):
        with self.assertRaises(LoopError) as raised:
            check_settings(Settings(rule="fivestones"))
        self.assertIn("--rule fivestones", str(raised.exception))

    def test_run_with_unknown_rule_writes_nothing(self):
        code, errors = self.run_cli("run", "--storage", self.folder, "--binary", sys.executable,
                                    "--initial-network", self.file("net"), "--rule", "fivestones")
        self.assertEqual(code, 2, errors)
        self.assertIn("--rule fivestones", errors)
        self.assertEqual(os.listdir(self.folder), [])


class SettingTypes(unittest.TestCase):
    def parser(self) -> argparse.ArgumentParser:
        parser = argparse.ArgumentParser()
        cli.add_settings(parser)
        return parser

    def test_train_minutes_takes_a_fraction(self):
        self.assertEqual(self.parser().parse_args(["--train-minutes", "0.5"]).train_minutes, 0.5)

    def test_every_float_setting_takes_a_fraction(self):
        types = typing.get_type_hints(Settings)
        for field in dataclasses.fields(Settings):
            option = "--" + field.name.replace("_", "-")
            if types[field.name] is float:
                self.assertEqual(getattr(self.parser().parse_args([option, "0.5"]), field.name), 0.5, option)
            elif types[field.name] is int:
                self.assertEqual(getattr(self.parser().parse_args([option, "3"]), field.name), 3, option)


class PartOrder(StorageCase):
    def test_parts_in_number_order(self):
        for part in (1000, 101, 99, 100):
            self.storage.write_bytes(layout.part_name(1, 7, part), b"")
        self.storage.write_bytes(layout.part_name(1, 70, 0), b"")
        self.storage.write_bytes(layout.part_name(1, 700, 5), b"")
        parts = layout.shard_parts(self.storage, 1, 7)
        self.assertEqual(parts, [layout.part_name(1, 7, part) for part in (99, 100, 101, 1000)])


class GatingFaults(StorageCase):
    def store_task(self, **result):
        self.storage.write_json(layout.gating_task_name(1, 0, 0), {"wins": 40, "losses": 2, "draws": 0,
                                                                   "round": 0, "task": 0, **result})

    def test_a_match_without_its_fault_lines_is_no_clean_match(self):
        score = "Score of candidate vs current: 5 - 3 - 2  [0.600] 10\n"
        both = ("candidate: losses by error: none; killed after END: 0\n"
                "current: losses by error: crash 1; killed after END: 0\n")
        result = parse_match(score + both, "/nonexistent.log")
        self.assertEqual((result["wins"], result["losses"], result["draws"]), (5, 3, 2))
        self.assertEqual(result["losses_by_error"], {"candidate": {}, "current": {"crash": 1}})
        for text in (score, score + both.splitlines(keepends=True)[0]):
            with self.assertRaises(EngineError):
                parse_match(text, "/nonexistent.log")

    def test_parse_faults(self):
        self.assertEqual(parse_faults("crash 2, time forfeit 1; killed after END: 0"),
                         {"crash": 2, "time forfeit": 1})
        self.assertEqual(parse_faults("none; killed after END: 3"), {})
        self.assertEqual(parse_faults("something odd"), {"something odd": 1})
        self.assertEqual(fault_counts({"candidate": "none; killed after END: 0", "current": {"crash": 1}}),
                         {"candidate": {}, "current": {"crash": 1}})
        with self.assertRaises(ValueError):
            fault_counts(["crash"])

    def test_current_networks_crashes_stop_the_gate(self):
        self.store_task(losses_by_error={"candidate": {}, "current": {"crash": 30}})
        with self.assertRaises(LoopError) as raised:
            self.loop().gate(1, {"network": layout.network_name(0)})
        self.assertIn("current lost by error (crash 30)", str(raised.exception))
        self.assertIn("round-00-task-00.json", str(raised.exception))
        self.assertFalse(self.storage.exists(layout.gating_name(1)))

    def test_text_of_older_loops_counts_too(self):
        self.store_task(losses_by_error={"candidate": "none; killed after END: 0",
                                         "current": "time forfeit 4; killed after END: 0"})
        with self.assertRaises(LoopError):
            self.loop().gate(1, {"network": layout.network_name(0)})

    def test_clean_games_are_gated(self):
        self.store_task(losses_by_error={"candidate": "none; killed after END: 1", "current": {}})
        gating = self.loop(elo1=40).gate(1, {"network": layout.network_name(0)})
        self.assertEqual((gating["wins"], gating["losses"]), (40, 2))

    def test_a_slice_played_by_another_candidate_stops_the_gate(self):
        # The candidate stored now is not the one the slice played (a late
        # training attempt replaced it): no count, no promotion.
        self.storage.write_bytes(layout.digest_name(layout.network_name(1)), b"b" * 64 + b"\n")
        self.store_task(losses_by_error={"candidate": {}, "current": {}}, candidate_sha256="a" * 64)
        with self.assertRaises(LoopError) as raised:
            self.loop(elo1=40).gate(1, {"network": layout.network_name(0)})
        self.assertIn("was played by another", str(raised.exception))
        self.assertFalse(self.storage.exists(layout.gating_name(1)))
        # The same digest: gated, and the gate records it.
        self.store_task(losses_by_error={"candidate": {}, "current": {}}, candidate_sha256="b" * 64)
        gating = self.loop(elo1=40).gate(1, {"network": layout.network_name(0)})
        self.assertEqual(gating["candidate_sha256"], "b" * 64)

    def test_recorded_elo_is_always_finite(self):
        for wins, losses, draws in [(0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 0, 5), (40, 0, 0), (40, 2, 0),
                                    (0, 30, 1), (120, 100, 30)]:
            elo, margin = recorded_elo(wins, losses, draws)
            self.assertTrue(math.isfinite(elo) and math.isfinite(margin), (wins, losses, draws))

    def test_a_clean_sweep_is_stored_as_strict_json(self):
        self.store_task(losses=0, losses_by_error={"candidate": {}, "current": {}})
        self.loop(elo1=40).gate(1, {"network": layout.network_name(0)})

        def refuse(constant):
            raise ValueError(f"{constant} in stored JSON")
        for name in (layout.gating_name(1), layout.STATUS):
            stored = json.loads(self.storage.read_bytes(name), parse_constant=refuse)
            elo = stored["elo"] if "elo" in stored else stored["detail"]["elo"]
            self.assertGreater(elo, 400, name)
        with self.assertRaises(StorageError):
            self.storage.write_json("x.json", {"elo": float("inf")})
        self.assertFalse(self.storage.exists("x.json"))


class MachineFolders(unittest.TestCase):
    def test_killed_tasks_folders_go_and_the_cache_keeps_the_networks_last_used(self):
        with tempfile.TemporaryDirectory() as local:
            dead = subprocess.Popen([sys.executable, "-c", "pass"])
            dead.wait()
            cache = os.path.join(local, "wuzi-cache")
            left = [os.path.join(local, f"{tasks.WORK_PREFIX}{dead.pid}-train-g3-x"),
                    os.path.join(cache, f"download-{dead.pid}-5")]
            alive = [os.path.join(local, f"{tasks.WORK_PREFIX}{os.getpid()}-gating-g3-y"),
                     os.path.join(local, "not-ours")]
            for folder in left + alive:
                os.makedirs(folder)
            _, work = tasks.task_workspace({"local_dir": local}, "selfplay-g1-s0-")
            self.assertTrue(all(not os.path.exists(f) for f in left))
            self.assertTrue(all(os.path.exists(f) for f in alive + [work]))
            networks = []
            for i in range(tasks.CACHED_NETWORKS + 3):
                folder = os.path.join(cache, f"{i:032x}")
                os.makedirs(folder)
                os.utime(folder, (1000 + i, 1000 + i))
                networks.append(folder)
            # The oldest, used just now, stays with the newest others.
            tasks.prune_cache(cache, networks[0])
            kept = sorted(name for name in os.listdir(cache))
            self.assertEqual(len(kept), tasks.CACHED_NETWORKS)
            self.assertIn(os.path.basename(networks[0]), kept)
            self.assertIn(os.path.basename(networks[-1]), kept)
            self.assertNotIn(os.path.basename(networks[1]), kept)


class TrainSummary(unittest.TestCase):
    def test_the_trainers_counts_are_read(self):
        text = ("  data: 2 files, 40 records: 35 games used (900 positions); filtered out: 0 other rule, "
                "0 other size; skipped 3: 0 malformed, 0 illegal move, 0 forbidden move, 0 moves after a "
                "win, 0 result mismatch, 3 without targets, 0 undecided; 2 games pass through an "
                "evaluation opening (left out)\n")
        summary = parse_train_summary(text)
        self.assertEqual((summary["records"], summary["games_used"], summary["without_targets"],
                          summary["evaluation_openings"]), (40, 35, 3, 2))


class TypedKeys(StorageCase):
    def test_require_keys_checks_types(self):
        with self.assertRaises(StorageError) as raised:
            require_keys({"history": None}, {"history": list}, self.storage, "state.json")
        self.assertIn("state.json", str(raised.exception))
        self.assertIn("'history'", str(raised.exception))
        with self.assertRaises(StorageError):
            require_keys({"wins": True}, {"wins": int}, self.storage, "x.json")
        with self.assertRaises(StorageError):
            require_keys([], {"starts": list}, self.storage, "x.json")
        self.assertEqual(require_keys({"elo": 3}, {"elo": (int, float)}, self.storage, "x.json"), {"elo": 3})

    def test_state_with_null_history_stops_at_the_start(self):
        self.storage.write_json(layout.LOOP, {"fixed": FIXED})
        self.storage.write_json(layout.STATE, {"generations_done": 1, "current_network": layout.network_name(0),
                                               "current_generation": 0, "current_elo": 0.0, "history": None})
        with self.assertRaises(StorageError) as raised:
            self.loop().prepare(None, None, None)
        self.assertIn(self.storage.path(layout.STATE), str(raised.exception))
        self.assertIn("'history'", str(raised.exception))

    def test_a_loop_keeps_its_openings_and_gates_from_others(self):
        self.storage.write_json(layout.LOOP, {"fixed": FIXED})
        self.storage.write_bytes(layout.SELFPLAY_OPENINGS, b"0,0, 1,0\n")
        with tempfile.TemporaryDirectory() as folder:
            same, other, gate = (os.path.join(folder, n) for n in ("same.txt", "other.txt", "gate.txt"))
            for path, text in [(same, "0,0, 1,0\n"), (other, "0,0, 0,1\n"), (gate, "0,0,1,0\n")]:
                with open(path, "w") as f:
                    f.write(text)
            self.loop().prepare(None, same, None)
            with self.assertRaises(LoopError) as raised:
                self.loop().prepare(None, other, None)
            self.assertIn("a loop keeps its openings", str(raised.exception))
            self.assertEqual(self.storage.read_bytes(layout.SELFPLAY_OPENINGS), b"0,0, 1,0\n")
            # A gating opening that self-play also plays (blanks aside),
            # given with it or against the stored file.
            for selfplay in (same, None):
                with self.assertRaises(LoopError) as raised:
                    self.loop().prepare(None, selfplay, gate)
                self.assertIn("are in the self-play file", str(raised.exception))
            # Openings for a loop stored without them.
            self.storage.remove(layout.SELFPLAY_OPENINGS)
            with self.assertRaises(LoopError) as raised:
                self.loop().prepare(None, same, None)
            self.assertIn("plays without", str(raised.exception))

    def test_shard_log_that_is_a_list(self):
        self.storage.write_json(layout.shard_log_name(1, 0), [])
        with self.assertRaises(StorageError) as raised:
            tasks.record_start(self.storage, 1, 0, 0)
        self.assertIn("shard-000.json", str(raised.exception))

    def test_plan_and_gating_results(self):
        self.storage.write_json(layout.plan_name(1), {"network": "n", "shards": [{"shard": 0}],
                                                      "part_games": 5, "options": {}})
        with self.assertRaises(StorageError) as raised:
            self.loop().plan(1)
        self.assertIn("plan.json", str(raised.exception))
        self.storage.write_json(layout.gating_task_name(1, 0, 0), {"wins": "3", "losses": 0, "draws": 0})
        with self.assertRaises(StorageError) as raised:
            self.loop().gate(1, {"network": layout.network_name(0)})
        self.assertIn("round-00-task-00.json", str(raised.exception))
        # A slice stored under other gating settings (a pooled gate of four
        # tasks) is not taken into this gate's count.
        self.storage.write_json(layout.gating_task_name(1, 0, 0), {
            "wins": 3, "losses": 0, "draws": 0,
            "gate": {"tasks": 4, "games_per_task": 20, "playouts": 100, "elo0": 0, "elo1": 40}})
        with self.assertRaises(LoopError) as raised:
            self.loop().gate(1, {"network": layout.network_name(0)})
        self.assertIn("other gating settings", str(raised.exception))


class WholeWrites(unittest.TestCase):
    """A file system that is neither local nor an object store (sftp, smb,
    hdfs, ...): memory:// made to take that path."""

    def setUp(self):
        self.storage = Storage(f"memory://wzl-{uuid.uuid4().hex}")
        self.storage.whole_object_writes = False
        self.addCleanup(self.remove_all)

    def remove_all(self):
        if self.storage.fs.exists(self.storage.root):
            self.storage.fs.rm(self.storage.root, recursive=True)

    def names(self, folder: str) -> list[str]:
        return [os.path.basename(p) for p in self.storage.fs.ls(self.storage.path(folder), detail=False)]

    def test_crash_mid_write_keeps_the_old_file(self):
        self.storage.write_json("gen-0001/plan.json", {"old": True})
        original = self.storage.fs.pipe_file

        def half_then_crash(path, data, **kwargs):
            original(path, data[:len(data) // 2])
            raise OSError("connection lost")

        with mock.patch.object(self.storage.fs, "pipe_file", half_then_crash):
            with self.assertRaises(OSError):
                self.storage.write_json("gen-0001/plan.json", {"new": "x" * 100})
        self.assertEqual(self.storage.read_json("gen-0001/plan.json"), {"old": True})
        self.assertEqual(self.names("gen-0001"), ["plan.json"])

    def test_crash_mid_upload_leaves_no_file(self):
        folder = tempfile.mkdtemp(prefix="wzl-test-")
        self.addCleanup(shutil.rmtree, folder, True)
        local = os.path.join(folder, "net")
        with open(local, "wb") as out:
            out.write(b"0123456789")

        def half_then_crash(source, path, **kwargs):
            self.storage.fs.pipe_file(path, b"01234")
            raise OSError("connection lost")

        with mock.patch.object(self.storage.fs, "put_file", half_then_crash):
            with self.assertRaises(OSError):
                self.storage.upload(local, "gen-0001/network.safetensors")
        self.assertFalse(self.storage.exists("gen-0001/network.safetensors"))
        self.storage.upload(local, "gen-0001/network.safetensors")
        self.assertEqual(self.storage.read_bytes("gen-0001/network.safetensors"), b"0123456789")
        self.assertEqual(self.names("gen-0001"), ["network.safetensors"])

    def test_rename_onto_an_existing_file_refused(self):
        # SMB's rename refuses an existing target.
        self.storage.write_bytes("a/b.tsv", b"old")
        original = self.storage.fs.mv

        def no_overwrite(source, target, **kwargs):
            if self.storage.fs.exists(target):
                raise FileExistsError(target)
            original(source, target, **kwargs)

        with mock.patch.object(self.storage.fs, "mv", no_overwrite):
            self.storage.write_bytes("a/b.tsv", b"new")
        self.assertEqual(self.storage.read_bytes("a/b.tsv"), b"new")
        self.assertFalse([name for name in self.names("a") if name.startswith(PARTIAL_PREFIX)])

    def test_object_stores_keep_single_puts(self):
        self.assertTrue(Storage("memory://wzl-put").whole_object_writes)
        self.assertFalse(Storage(tempfile.gettempdir()).whole_object_writes)


class KilledWrites(StorageCase):
    """A write killed between its temporary file and the rename (SIGKILL:
    no cleanup runs) leaves the temporary file; the shard's next attempt
    removes its own and no other shard's."""

    def killed_write(self, name: str) -> None:
        with mock.patch("wuzi_loop.storage.os.replace", side_effect=OSError("killed")), \
                mock.patch("wuzi_loop.storage.os.unlink"):
            with self.assertRaises(OSError):
                self.storage.write_bytes(name, b"half")

    def test_a_shards_next_attempt_removes_its_leftovers(self):
        games = layout.games_dir(2)
        self.storage.write_bytes(layout.part_name(2, 1, 0), b"kept")
        self.killed_write(layout.part_name(2, 1, 1))
        self.killed_write(layout.part_name(2, 11, 0))
        folder = os.path.join(self.folder, games)
        leftovers = sorted(n for n in os.listdir(folder) if n.startswith(PARTIAL_PREFIX))
        self.assertEqual(len(leftovers), 2)
        self.assertEqual(self.storage.list(games), [layout.part_name(2, 1, 0)])
        self.assertEqual(self.storage.remove_partials(games, layout.shard_part_stem(1)), 1)
        left = sorted(os.listdir(folder))
        self.assertEqual(len(left), 2)
        self.assertIn(os.path.basename(layout.part_name(2, 1, 0)), left)
        self.assertTrue(any(n.startswith(PARTIAL_PREFIX + layout.shard_part_stem(11)) for n in left))
        self.assertEqual(self.storage.read_bytes(layout.part_name(2, 1, 0)), b"kept")

    def test_selfplay_shard_removes_them_before_it_reads(self):
        self.killed_write(layout.part_name(3, 0, 0))
        self.killed_write(layout.shard_log_name(3, 0))
        self.killed_write(layout.shard_log_name(3, 1))
        spec = {"storage": self.folder, "generation": 3, "shard": 0, "games": 0,
                "binary": sys.executable}
        with mock.patch("wuzi_loop.tasks.engine.check_binary", return_value=sys.executable), \
                mock.patch("wuzi_loop.tasks.record_start"), \
                mock.patch("wuzi_loop.tasks.shard_result", return_value={}):
            tasks.selfplay_shard(spec)
        self.assertEqual(os.listdir(os.path.join(self.folder, layout.games_dir(3))), [])
        # The shard's own log's leftover goes; another shard's stays.
        logs = os.listdir(os.path.dirname(os.path.join(self.folder, layout.shard_log_name(3, 0))))
        self.assertEqual(len(logs), 1, logs)
        self.assertTrue(logs[0].startswith(PARTIAL_PREFIX + "shard-001.json."), logs)


class DriverLease(StorageCase):
    def lease(self, renew_seconds: float = 0.02) -> Lease:
        lease = Lease(self.storage, renew_seconds=renew_seconds, lease_seconds=60)
        self.addCleanup(lease.release)
        return lease

    def held_by(self, **fields) -> None:
        self.storage.write_json(layout.LOCK, {"owner": "other", "host": "elsewhere", "pid": 1,
                                              "heartbeat": time.time(), **fields})

    def test_second_driver_refused_until_released(self):
        first = self.lease()
        first.acquire()
        second = self.lease()
        with self.assertRaises(LoopError) as raised:
            second.acquire()
        self.assertIn("in use by another driver", str(raised.exception))
        self.assertIn(self.storage.path(layout.LOCK), str(raised.exception))
        first.release()
        self.assertFalse(self.storage.exists(layout.LOCK))
        second.acquire()

    def test_heartbeat_is_renewed(self):
        lease = self.lease()
        lease.acquire()
        first = self.storage.read_json(layout.LOCK)["heartbeat"]
        time.sleep(0.2)
        self.assertGreater(self.storage.read_json(layout.LOCK)["heartbeat"], first)

    def test_stale_lease_taken_over(self):
        self.held_by(heartbeat=time.time() - 3600)
        lease = self.lease()
        lease.acquire()
        self.assertEqual(self.storage.read_json(layout.LOCK)["owner"], lease.owner)

    def test_lease_of_a_dead_driver_on_this_machine_taken_over(self):
        dead = subprocess.Popen([sys.executable, "-c", "pass"])
        dead.wait()
        self.held_by(host=socket.gethostname(), pid=dead.pid)
        self.lease().acquire()

    def test_driver_whose_lease_was_taken_stops(self):
        # Renewed by hand: a renewal thread's read-then-write could land
        # around the takeover and write over it.
        lease = self.lease(renew_seconds=3600)
        lease.acquire()
        self.assertTrue(lease.renew_once())
        lease.check()
        self.held_by()
        self.assertFalse(lease.renew_once())
        with self.assertRaises(LoopError):
            lease.check()
        loop = self.loop()
        loop.lease = lease
        with self.assertRaises(LoopError):
            loop.save_state()
        lease.release()
        self.assertEqual(self.storage.read_json(layout.LOCK)["owner"], "other")

    def test_a_driver_whose_renewals_hang_stops_before_its_lease_runs_out(self):
        # A renewal hung on a storage call marks nothing lost; the driver
        # stops all the same once half the lease has passed without one.
        lease = Lease(self.storage, renew_seconds=3600, lease_seconds=0.4)
        self.addCleanup(lease.release)
        lease.acquire()
        lease.check()
        time.sleep(0.3)
        with self.assertRaises(LoopError) as raised:
            lease.check()
        self.assertIn("last renewed", str(raised.exception))
        self.assertTrue(lease.renew_once())
        lease.check()

    def test_run_refused_while_another_driver_holds_the_storage(self):
        self.storage.write_json(layout.LOOP, {"fixed": FIXED})
        self.held_by()
        code, errors = self.run_cli("run", "--storage", self.folder, "--binary", sys.executable)
        self.assertEqual(code, 2, errors)
        self.assertIn("in use by another driver", errors)


if __name__ == "__main__":
    unittest.main()
