#!/usr/bin/env bash
# The distributed generation loop's tests: the driver's unit tests
# (distributed/tests/test_loop.py), then distributed/tests/end_to_end.py:
# a local Ray cluster of two workers on this machine, two generations with
# a tiny network, a Ray worker and a selfplay process killed mid-game, the
# driver killed and restarted. About a minute on 2 cores.
# Needs target/release/pbrain-wuzi (cargo build --release).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-distributed.sh
# The driver's unit tests (no engine, no cluster), then the whole loop.
.venv/bin/python -m unittest discover -s distributed/tests -p 'test_*.py'
exec .venv/bin/python distributed/tests/end_to_end.py
