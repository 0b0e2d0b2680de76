#!/usr/bin/env bash
# Runs every test: unit, integration, property and fixture tests, and each
# benchmark once in test mode.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-torch.sh
cargo test --release --workspace --all-targets
