#!/usr/bin/env bash
# The distributed generation loop's test (distributed/tests/end_to_end.py):
# a local Ray cluster of two workers on this machine, two generations with
# a tiny network, a Ray worker and a selfplay process killed mid-game, the
# driver killed and restarted. About a minute on 2 cores.
# Needs target/release/pbrain-wuzi (cargo build --release).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-distributed.sh
exec .venv/bin/python distributed/tests/end_to_end.py
