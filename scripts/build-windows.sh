#!/usr/bin/env bash
# Cross-compiles the libtorch-free brain for 64-bit Windows
# (x86_64-pc-windows-gnu, with Debian's mingw-w64), installing the
# toolchain when missing (scripts/setup-windows-cross.sh). One binary serves
# every x86-64 CPU: the network kernels pick AVX-512, AVX2 or portable code
# at run time. Arguments go to cargo (e.g. --profile dist).
# Prints the path of pbrain-wuzi.exe on its last line.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-windows-cross.sh >/dev/null
TARGET=x86_64-pc-windows-gnu
profile=release
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  [[ ${args[i]} == --profile ]] && profile=${args[i + 1]}
done
[[ " ${args[*]-} " == *" --profile "* ]] || args+=(--release)
cargo build --no-default-features --target $TARGET --bin pbrain-wuzi "${args[@]}"
echo "target/$TARGET/$profile/pbrain-wuzi.exe"
