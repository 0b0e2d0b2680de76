#!/usr/bin/env bash
# Builds pbrain-wuzi (release) and starts it; arguments go to the engine.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-torch.sh
cargo build --release --quiet --bin pbrain-wuzi
exec ./target/release/pbrain-wuzi "$@"
