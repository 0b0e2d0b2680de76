#!/usr/bin/env bash
# Builds pbrain-wuzi (release) and starts it; arguments go to the engine.
# Cargo shows the build's progress on stderr (stdout carries only the
# protocol): a first build, or the first after scripts/test.sh, whose test
# build enables other features of some dependencies, takes minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-torch.sh
cargo build --release --bin pbrain-wuzi
exec ./target/release/pbrain-wuzi "$@"
