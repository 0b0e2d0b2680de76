#!/usr/bin/env bash
# Installs, when missing, what the static Linux build needs: rustup's
# x86_64-unknown-linux-musl target and Debian's musl-tools (musl-gcc, for
# mimalloc's C source). Idempotent.
set -euo pipefail
if ! command -v musl-gcc >/dev/null; then
  [ "$(id -u)" = 0 ] || { echo "setup-musl: need root to install musl-tools" >&2; exit 1; }
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq --no-install-recommends musl-tools >/dev/null 2>&1 ||
    { apt-get update -qq >/dev/null && apt-get install -y -qq --no-install-recommends musl-tools >/dev/null; }
fi
rustup target list --installed | grep -qx x86_64-unknown-linux-musl ||
  rustup target add x86_64-unknown-linux-musl >&2
