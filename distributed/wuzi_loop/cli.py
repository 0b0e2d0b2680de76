"""Command line: run the loop, watch it, plot it, measure self-play."""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import signal
import sys
import tempfile
import time
import typing

from . import engine, layout
from .lease import Lease
from .loop import (STATE_KEYS, STATUS_KEYS, Loop, LoopError, Settings, check_settings, check_storage, connect,
                   log)
from .storage import Storage, StorageError, require_keys

PROJECT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_BINARY = os.path.join(PROJECT, "target", "release", "pbrain-wuzi")


def add_settings(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("loop settings (defaults: a real generation on a CPU cluster)")
    # The declared types, not the defaults' (a float field whose default is
    # written 0 would refuse --train-minutes 0.5).
    types = typing.get_type_hints(Settings)
    for field in dataclasses.fields(Settings):
        group.add_argument("--" + field.name.replace("_", "-"), dest=field.name,
                           type=types[field.name], default=field.default,
                           help=f"(default {field.default!r})")


def add_cluster(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--address", help="Ray cluster to join (auto: the one started on this machine "
                                          "by `ray start`); without it a local cluster is started here")
    parser.add_argument("--num-cpus", type=int, help="CPUs of the local cluster (default: all)")
    parser.add_argument("--no-dashboard", action="store_true", help="local cluster without the dashboard")
    parser.add_argument("--binary", default=DEFAULT_BINARY,
                        help="pbrain-wuzi, at this path on every machine (default: %(default)s)")
    parser.add_argument("--local-dir", help="scratch folder of the tasks on each machine (default: the system's)")


def local_dir(args) -> str | None:
    """--local-dir made absolute here: the tasks run in other folders, on
    other machines."""
    return os.path.abspath(args.local_dir) if args.local_dir else None


def settings_from(args) -> Settings:
    settings = Settings(**{field.name: getattr(args, field.name) for field in dataclasses.fields(Settings)})
    check_settings(settings)
    return settings


def command_run(args) -> int:
    storage = Storage(args.storage)
    engine.check_binary(args.binary)
    check_storage(storage, settings_from(args), args.initial_network, [args.openings, args.gating_openings])
    # One driver per storage: a second `run` on it refuses to start.
    lease = Lease(storage)
    lease.acquire()
    try:
        ray = connect(args.address, args.num_cpus, not args.no_dashboard)
        try:
            loop = Loop(ray, storage, settings_from(args), os.path.abspath(args.binary), local_dir(args),
                        lease)
            loop.check_cluster()
            loop.prepare(args.initial_network, args.openings, args.gating_openings)
            loop.run(args.generations)
        finally:
            ray.shutdown()
    finally:
        lease.release()
    return 0


def command_status(args) -> int:
    storage = Storage(args.storage)
    state = storage.read_json(layout.STATE)
    status = storage.read_json(layout.STATUS)
    if state is None and status is None:
        raise LoopError(f"{args.storage} holds no loop")
    if state is not None:
        require_keys(state, STATE_KEYS, storage, layout.STATE)
    if status is not None:
        require_keys(status, STATUS_KEYS, storage, layout.STATUS)
    if args.json:
        print(json.dumps({"state": state, "status": status}, indent=1))
        return 0
    if state:
        print(f"generations done: {state['generations_done']}; current network "
              f"{layout.network_label(state['current_network'])} "
              f"({state['current_elo']:+.1f} Elo over gen-0000)")
        for entry in state["history"]:
            gating, selfplay = entry["gating"], entry["selfplay"]
            rate = selfplay.get("games_per_minute")
            print(f"  gen {entry['generation']}: {selfplay['games']} games, {selfplay['positions']} positions"
                  f"{f', {rate} games/min' if rate else ''}; gating {gating['wins']}-{gating['losses']}-"
                  f"{gating['draws']}, {gating['elo']:+.1f} ± {gating['elo_margin']:.1f} Elo, LLR "
                  f"{gating['llr']:.2f}: {gating['decision']}, "
                  f"{'promoted' if entry['promoted'] else 'rejected'}")
    if status:
        age = time.time() - status["updated"]
        print(f"now: generation {status['generation']}, {status['phase']} ({age:.0f} s ago): "
              f"{json.dumps(status['detail'])}")
    return 0


def command_plot(args) -> int:
    storage = Storage(args.storage)
    state = storage.read_json(layout.STATE)
    if state is not None:
        require_keys(state, STATE_KEYS, storage, layout.STATE)
    if not state or not state["history"]:
        raise LoopError(f"{args.storage} holds no finished generation to plot")
    from .plot import plot_elo
    count = plot_elo(state, args.out, args.title)
    print(f"{args.out}: {count} generation(s)")
    return 0


def command_bench(args) -> int:
    """Self-play games per minute of the same shards (the same seeds) on
    local clusters of 1, 2, ... workers, each worker a `selfplay` process
    playing --selfplay-parallel games at once (and as many Ray CPUs)."""
    engine.check_binary(args.binary)
    if args.address:
        raise LoopError("bench starts a local cluster of each --workers size: leave --address out")
    if not os.path.isfile(args.network):
        raise LoopError(f"--network {args.network}: no such file")
    settings = dataclasses.replace(settings_from(args), gating_concurrency=1,
                                   games_per_generation=args.shards * args.games_per_shard,
                                   shard_games=args.games_per_shard)
    figures = []
    for workers in args.workers:
        ray = connect(None, workers * settings.selfplay_parallel, not args.no_dashboard)
        try:
            with tempfile.TemporaryDirectory(prefix="wuzi-bench-") as folder:
                loop = Loop(ray, Storage(folder), settings, os.path.abspath(args.binary), local_dir(args))
                loop.check_cluster()
                loop.prepare(args.network, args.openings, None)
                summary = loop.selfplay(1, loop.plan(1))
        finally:
            ray.shutdown()
        figures.append({"workers": workers, **summary})
        log(f"bench: {workers} worker(s): {summary['games']} games in {summary['seconds']} s = "
            f"{summary['games_per_minute']} games/min, {summary['positions']} positions, "
            f"{summary['engine_cpu_seconds_per_game']} engine CPU-seconds a game")
    print(json.dumps(figures))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m wuzi_loop", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    run = commands.add_parser("run", help="run generations on a Ray cluster (resumes what the storage holds)")
    run.add_argument("--storage", required=True, help="URI: a folder, file://..., s3://bucket/prefix, ...")
    run.add_argument("--generations", type=int, default=1,
                     help="run until the storage holds this many finished generations (default 1)")
    run.add_argument("--initial-network", help="the network of generation 0 (needed on the first start)")
    run.add_argument("--openings", help="opening file of self-play (default: random quiet openings)")
    run.add_argument("--gating-openings", help="opening file of the gating matches")
    add_cluster(run)
    add_settings(run)
    run.set_defaults(handler=command_run)

    status = commands.add_parser("status", help="print the generations and what is running now")
    status.add_argument("--storage", required=True)
    status.add_argument("--json", action="store_true")
    status.set_defaults(handler=command_status)

    plot = commands.add_parser("plot", help="plot the Elo of each generation (PNG)")
    plot.add_argument("--storage", required=True)
    plot.add_argument("--out", required=True)
    plot.add_argument("--title")
    plot.set_defaults(handler=command_plot)

    bench = commands.add_parser("bench", help="self-play games per minute with N concurrent workers")
    bench.add_argument("--network", required=True)
    bench.add_argument("--workers", type=int, nargs="+", default=[1, 2],
                       help="numbers of concurrent self-play workers to measure (default: 1 2)")
    bench.add_argument("--shards", type=int, default=2, help="shards every size plays (default 2)")
    bench.add_argument("--games-per-shard", type=int, default=10)
    bench.add_argument("--openings")
    add_cluster(bench)
    add_settings(bench)
    bench.set_defaults(handler=command_bench)

    args = parser.parse_args(argv)
    # SIGTERM ends the driver as Ctrl-C does: the cluster it started stops.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        return args.handler(args)
    except (LoopError, StorageError, engine.EngineError) as error:
        print(f"wuzi_loop: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("wuzi_loop: interrupted; what is stored is kept: run the same command again to resume",
              file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
