"""What people watch: a progress actor that the tasks report to and that
exports Ray metrics (the dashboard's Metrics view, Prometheus, Grafana),
the driver's log lines (the job's log in the dashboard), and status.json in
the storage (`python -m wuzi_loop status`)."""

from __future__ import annotations

import time


class ProgressBoard:
    """A Ray actor: the games each self-play shard
    has stored, and what the driver tells it about the generation."""

    def __init__(self):
        self.shards: dict[tuple[int, int], tuple[int, int]] = {}
        self.info: dict = {}
        self.gauges = {}
        self.values: dict[str, float] = {}
        try:
            from ray.util.metrics import Gauge
            for name, description in [
                ("wuzi_generation", "generation in progress"),
                ("wuzi_current_network_generation", "generation of the network that plays self-play"),
                ("wuzi_selfplay_games", "games stored in the generation in progress"),
                ("wuzi_selfplay_positions", "training positions stored in the generation in progress"),
                ("wuzi_selfplay_games_per_minute", "self-play games per minute, whole cluster"),
                ("wuzi_gating_games", "gating games played"),
                ("wuzi_gating_llr", "SPRT log-likelihood ratio of the candidate"),
                ("wuzi_gating_elo", "Elo of the candidate against the current network"),
            ]:
                self.gauges[name] = Gauge(name, description=description)
        except Exception:
            # Metrics need the dashboard's agent; progress works without them.
            self.gauges = {}

    def report_shard(self, generation: int, shard: int, games: int, positions: int) -> None:
        self.shards[(generation, shard)] = (games, positions)
        totals = self.selfplay_totals(generation)
        self._set("wuzi_selfplay_games", totals["games"])
        self._set("wuzi_selfplay_positions", totals["positions"])

    def selfplay_totals(self, generation: int) -> dict:
        games = positions = 0
        for (shard_generation, _), (shard_games, shard_positions) in self.shards.items():
            if shard_generation == generation:
                games += shard_games
                positions += shard_positions
        return {"games": games, "positions": positions}

    def update(self, **info) -> None:
        self.info.update(info)
        for key, gauge in [("generation", "wuzi_generation"),
                           ("current_generation", "wuzi_current_network_generation"),
                           ("games_per_minute", "wuzi_selfplay_games_per_minute"),
                           ("gating_games", "wuzi_gating_games"),
                           ("gating_llr", "wuzi_gating_llr"),
                           ("gating_elo", "wuzi_gating_elo")]:
            if isinstance(info.get(key), (int, float)):
                self._set(gauge, info[key])

    def snapshot(self, generation: int) -> dict:
        return {**self.info, **self.selfplay_totals(generation), "time": time.time()}

    def refresh(self) -> None:
        # Ray exports a gauge's value only in the export period it was set
        # in: set every value again, so that none drops off the dashboard.
        for name, value in self.values.items():
            self.gauges[name].set(value)

    def _set(self, name: str, value: float) -> None:
        if name in self.gauges:
            self.values[name] = float(value)
            self.gauges[name].set(float(value))


class RateMeter:
    """Games per minute over the last `window` seconds."""

    def __init__(self, window: float = 120.0):
        self.window = window
        self.samples: list[tuple[float, int]] = []

    def add(self, now: float, games: int) -> float | None:
        self.samples.append((now, games))
        while len(self.samples) > 2 and now - self.samples[1][0] >= self.window:
            self.samples.pop(0)
        (first_time, first_games) = self.samples[0]
        if now - first_time < 1:
            return None
        return (games - first_games) * 60 / (now - first_time)
