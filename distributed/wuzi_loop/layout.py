"""Where the loop keeps things in its storage.

    loop.json                                the settings that fix the data (rule, board)
    loop.lock                                the running driver's lease (see lease.py)
    state.json                               generations done, the current network, history
    status.json                              what is happening now (for people and `status`)
    openings/selfplay.txt, openings/gating.txt
    gen-0000/network.safetensors             the initial network
    gen-0000/network.safetensors.sha256      its SHA-256 (machines cache networks by it)
    gen-0003/plan.json                       the generation's shards and settings
    gen-0003/games/shard-007-part-002.tsv    whole games only
    gen-0003/shards/shard-007.json           every attempt at the shard
    gen-0003/network.safetensors             the candidate trained in generation 3
    gen-0003/train.json, train-loss.csv
    gen-0003/gating/round-00-task-01.json    each gating task's result
    gen-0003/gating.json                     the pooled result and the decision

Every file is written whole (see storage.py), and each step's last write
marks it as done: a restarted loop redoes only what is missing.
"""

from __future__ import annotations

import re

LOOP = "loop.json"
LOCK = "loop.lock"
STATE = "state.json"
STATUS = "status.json"
SELFPLAY_OPENINGS = "openings/selfplay.txt"
GATING_OPENINGS = "openings/gating.txt"


def generation_dir(generation: int) -> str:
    return f"gen-{generation:04d}"


def network_name(generation: int) -> str:
    return f"{generation_dir(generation)}/network.safetensors"


def digest_name(network: str) -> str:
    return network + ".sha256"


def network_label(name: str) -> str:
    """`gen-0003/network.safetensors` -> `gen-0003`."""
    return name.split("/")[0]


def plan_name(generation: int) -> str:
    return f"{generation_dir(generation)}/plan.json"


def games_dir(generation: int) -> str:
    return f"{generation_dir(generation)}/games"


def shard_part_stem(shard: int) -> str:
    """How the names of a shard's parts begin."""
    return f"shard-{shard:03d}-part-"


def part_name(generation: int, shard: int, part: int) -> str:
    return f"{games_dir(generation)}/{shard_part_stem(shard)}{part:03d}.tsv"


def shard_log_name(generation: int, shard: int) -> str:
    return f"{generation_dir(generation)}/shards/shard-{shard:03d}.json"


def train_name(generation: int) -> str:
    return f"{generation_dir(generation)}/train.json"


def gating_task_name(generation: int, round_index: int, task: int) -> str:
    return f"{generation_dir(generation)}/gating/round-{round_index:02d}-task-{task:02d}.json"


def gating_name(generation: int) -> str:
    return f"{generation_dir(generation)}/gating.json"


def all_parts(storage, generation: int) -> list[str]:
    return [name for name in storage.list(games_dir(generation)) if name.endswith(".tsv")]


_PART = re.compile(r"shard-(\d+)-part-(\d+)\.tsv")


def shard_parts(storage, generation: int, shard: int) -> list[str]:
    """The shard's parts in part order. Numbers are padded to three digits
    only: sorted as text, part-1000 would come before part-101, and the
    games read back out of order would be written into the wrong parts."""
    parts = []
    for name in all_parts(storage, generation):
        match = _PART.fullmatch(name.rsplit("/", 1)[-1])
        if match and int(match[1]) == shard:
            parts.append((int(match[2]), name))
    return [name for _, name in sorted(parts)]


def is_generation_dir(name: str) -> bool:
    return re.fullmatch(r"gen-\d+", name) is not None
