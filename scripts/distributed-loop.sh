#!/usr/bin/env bash
# Runs the distributed generation loop's command line (python -m wuzi_loop;
# docs/distributed.md), installing its packages into .venv first.
#   scripts/distributed-loop.sh run --storage runs/loop --initial-network networks/freestyle-6x64.safetensors --generations 3
#   scripts/distributed-loop.sh status --storage runs/loop
#   scripts/distributed-loop.sh plot --storage runs/loop --out elo.png
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
bash "$ROOT/scripts/setup-distributed.sh"
export PYTHONPATH="$ROOT/distributed${PYTHONPATH:+:$PYTHONPATH}"
exec "$ROOT/.venv/bin/python" -m wuzi_loop "$@"
