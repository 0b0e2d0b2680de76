#!/usr/bin/env bash
# Installs, when missing, what building and testing the Windows brain needs
# on Debian (as root): rustup's x86_64-pc-windows-gnu target, the mingw-w64
# cross compiler (posix threads, as Rust's std wants) and wine, and makes a
# wine prefix for the tests. Idempotent: a second run takes a fraction of a
# second. Prints the prefix to use (WINEPREFIX) on its last line.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
export WINEPREFIX="${WINEPREFIX:-$ROOT/target/wine}"
export WINEDEBUG=-all
# Never offer to install wine-mono or wine-gecko (no network for them).
export WINEDLLOVERRIDES="mscoree,mshtml="
unset DISPLAY

need=()
command -v x86_64-w64-mingw32-gcc >/dev/null || need+=(gcc-mingw-w64-x86-64-posix)
{ command -v wine >/dev/null && [ -x /usr/lib/wine/wine64 ]; } || need+=(wine wine64)
if [ ${#need[@]} -gt 0 ]; then
  [ "$(id -u)" = 0 ] || { echo "setup-windows-cross: need root to install ${need[*]}" >&2; exit 1; }
  echo "setup-windows-cross: installing ${need[*]} (about 160 MB, once)" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null 2>&1 ||
    { apt-get update -qq >/dev/null && apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null; }
fi
if command -v rustup >/dev/null; then
  rustup target list --installed | grep -qx x86_64-pc-windows-gnu ||
    rustup target add x86_64-pc-windows-gnu >&2
fi

# A prefix of our own (first creation takes about 10 s).
if [ ! -f "$WINEPREFIX/system.reg" ]; then
  mkdir -p "$WINEPREFIX"
  wineboot -i >/dev/null 2>&1 || true
  wineserver -w
fi

# Rust's std imports ProcessPrng from bcryptprimitives.dll, which Windows 10
# and later have and Debian 12's wine (8.0) lacks: a stand-in for the
# tests, forwarding to RtlGenRandom. Never shipped.
sys32="$WINEPREFIX/drive_c/windows/system32"
if [ ! -e /usr/lib/x86_64-linux-gnu/wine/x86_64-windows/bcryptprimitives.dll ] &&
   [ ! -f "$sys32/bcryptprimitives.dll" ]; then
  x86_64-w64-mingw32-gcc -O2 -shared -s -static-libgcc -o "$sys32/bcryptprimitives.dll" \
    "$ROOT/scripts/windows/bcryptprimitives.c" "$ROOT/scripts/windows/bcryptprimitives.def" -ladvapi32
fi
echo "$WINEPREFIX"
