#!/usr/bin/env bash
# Runs every test: unit, integration, property and fixture tests, and each
# benchmark once in test mode, in the default build (libtorch) and the
# libtorch-free one; then builds the packages and tests the Windows brain
# under wine.
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
# The distributed generation loop on a local Ray cluster (it uses the
# binary the line above built).
bash scripts/test-distributed.sh
# The libtorch-free build (native backend only), in a target folder of its
# own so that neither build undoes the other's.
# (The match tests' test brain is wuzi-arena's, whose tests ran above.)
CARGO_TARGET_DIR=target/native cargo build --release -p wuzi-arena -p wuzi-data --bins
CARGO_TARGET_DIR=target/native cargo test --release --no-default-features -p wuzi --all-targets
# The packages (Windows zip, Linux tarball) and the Windows brain under wine.
bash scripts/package.sh
bash scripts/test-windows.sh
