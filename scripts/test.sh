#!/usr/bin/env bash
# Runs every test: unit, integration, property and fixture tests, and each
# benchmark once in test mode.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-torch.sh
# The web board's browser test (tests/web_board.rs) drives Debian's
# Chromium; installed here when missing and we may (root with apt). Without
# it that test fails saying so (WUZI_SKIP_BROWSER=1 skips it).
if ! command -v chromium >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q chromium >/dev/null 2>&1 ||
    { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q chromium >/dev/null 2>&1; } ||
    echo "test.sh: could not install chromium; tests/web_board.rs will say so" >&2
fi
cargo test --release --workspace --all-targets
