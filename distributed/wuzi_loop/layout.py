"""Where the loop keeps things in its storage.

    loop.json                                the settings that fix the data (rule, board)
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

LOOP = "loop.json"
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


def part_name(generation: int, shard: int, part: int) -> str:
    return f"{games_dir(generation)}/shard-{shard:03d}-part-{part:03d}.tsv"


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


def shard_parts(storage, generation: int, shard: int) -> list[str]:
    prefix = f"{games_dir(generation)}/shard-{shard:03d}-part-"
    return [name for name in all_parts(storage, generation) if name.startswith(prefix)]
