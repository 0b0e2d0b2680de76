#!/usr/bin/env bash
# Runs `pbrain-wuzi selfplay` on a GPU machine for a fixed time, writing
# $GPU_JOB_WORK/selfplay/RULE.tsv, where scripts/gpu-job.sh then finds it.
#
# The device tool's machines have their own PyTorch (2.11) and no Rust, and
# the project's libtorch (2.13) is too large to carry, so the engine binary
# is built here against the wheel of the machine's torch version and
# carried (see networks/README.md, "Self-play on a GPU machine"); it loads
# that torch's libraries through LD_LIBRARY_PATH.
#
# Usage: scripts/gpu-selfplay.sh RULE MINUTES [selfplay args...]
#   WUZI_BIN: the engine binary (default .devbin/pbrain-wuzi, with its
#   config/ beside it); the networks are the repository's.
#   WUZI_NETWORK: a network file instead of the configured one.
#   DEVICE: cuda (the default) or cpu (to try the script without a GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
rule=${1:?usage: gpu-selfplay.sh RULE MINUTES [selfplay args...]}
minutes=${2:?usage: gpu-selfplay.sh RULE MINUTES [selfplay args...]}
shift 2
bin=${WUZI_BIN:-.devbin/pbrain-wuzi}
work=${GPU_JOB_WORK:-/tmp/wuzi-gpu-job}
mkdir -p "$work/selfplay"
torch_lib=$("${PYTHON:-python3}" -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
export LD_LIBRARY_PATH="$torch_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# The binary reads config/ beside itself, whose relative network paths are
# taken from the binary's folder: link the repository's networks there.
[[ -e "$(dirname "$bin")/networks" ]] || ln -s "$PWD/networks" "$(dirname "$bin")/networks"
log="$work/selfplay/$rule.log"
seconds=$(awk -v m="$minutes" 'BEGIN { printf "%d", m * 60 }')
# timeout 0 would be no limit at all.
((seconds >= 1)) || { echo "gpu-selfplay: MINUTES $minutes is under a second" >&2; exit 2; }
# SIGINT at the time limit: the games under way are lost, the file keeps
# every finished one (each is appended whole).
status=0
timeout -s INT "$seconds" "$bin" --device "${DEVICE:-cuda}" \
  ${WUZI_NETWORK:+--network "$WUZI_NETWORK"} selfplay --rule "$rule" \
  --out "$work/selfplay/$rule.tsv" "$@" >"$log" 2>&1 || status=$?
tail -n 3 "$log"
# 124: stopped at the time limit, as planned; anything else (a bad network,
# CUDA out of memory) must fail the generation, not train on fewer games.
if [[ $status != 0 && $status != 124 ]] || [[ ! -f "$work/selfplay/$rule.tsv" ]]; then
  echo "gpu-selfplay: selfplay failed (exit $status); the end of $log:" >&2
  tail -n 20 "$log" >&2
  exit 1
fi
echo "gpu-selfplay: $(($(grep -vc '^#' "$work/selfplay/$rule.tsv") )) games in $work/selfplay/$rule.tsv"
