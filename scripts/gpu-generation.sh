#!/usr/bin/env bash
# One self-play generation for several rules in one device call: self-play
# of every rule at once from its shipped network (scripts/gpu-selfplay.sh),
# then scripts/gpu-job.sh trains each rule's network from the shipped
# weights on its Gomocup records plus every self-play file of that rule
# (the earlier generations in .gpujob/selfplay/ and this one), each copied
# WEIGHT or OWN_WEIGHT times (below) so that the self-play positions weigh
# about as much as the tournament ones. Brings back, in $OUT: RULE-gen.tar
# (the trained weights, curve and log) and RULE-selfplay.tsv.gz (this
# run's games).
#
# Usage: scripts/gpu-generation.sh SELFPLAY_MINUTES TRAIN_MINUTES RULE...
#   Each RULE's openings: .gpujob/openings/RULE${BOARD}-pool.txt (balanced
#   openings drawn fresh for every game, never an evaluation set).
#   BOARD (default 15): the self-play board's side, e.g. BOARD=20 with
#   networks/selfplay/freestyle20-pool.txt for Gomocup's 20x20 leagues
#   (training still reads every self-play file of the rule, both boards).
#   PARALLEL (default 8): games at once per self-play process.
#   PROCESSES (default 1): self-play processes per rule, each with its own
#   evaluator and seed, so that several batches reach the GPU at once.
#   WEIGHT (default 6): copies of each earlier self-play file. OWN: the
#   names (without .tsv) of the earlier files that the shipped network
#   played itself, e.g. "renju15-cpu-g6 renju15-cpu-g7"; they and this
#   run's games get OWN_WEIGHT copies (default WEIGHT), so that a network
#   learns most from its own games (WEIGHT=0 leaves out the older
#   networks' games). SEED (default 1): the first self-play seed.
#   VARIANTS: several fine-tunes of each rule's network on the same data,
#   side by side on the GPU, as NAME[:ARG,ARG...] separated by spaces, each
#   run's extra gpu_train.py arguments after the colon, e.g.
#   VARIANTS="svw0:--search-value-weight,0 svw05" (packed as RULE-NAME.tar).
#   Without it, one run per rule with no extra arguments (RULE-gen.tar).
# Prepared here with scripts/gpu-prepare.sh and scripts/build-for-torch.sh;
# see networks/README.md, "Self-play on a GPU machine".
set -euo pipefail
cd "$(dirname "$0")/.."
selfplay_minutes=${1:?usage: gpu-generation.sh SELFPLAY_MINUTES TRAIN_MINUTES RULE...}
train_minutes=${2:?usage: gpu-generation.sh SELFPLAY_MINUTES TRAIN_MINUTES RULE...}
shift 2
[[ $# -gt 0 ]] || { echo "gpu-generation: name at least one rule" >&2; exit 2; }
out=${OUT:-gpu-out}
export GPU_JOB_WORK=${GPU_JOB_WORK:-/tmp/wuzi-gpu-job}
mkdir -p "$out" "$GPU_JOB_WORK/selfplay"
bin=${WUZI_BIN:-.devbin/pbrain-wuzi}
# gpu-selfplay.sh links the networks beside the binary; made once here, as
# the rules' runs start together.
[[ -e "$(dirname "$bin")/networks" ]] || ln -s "$PWD/networks" "$(dirname "$bin")/networks"

spec() { # RULE -> NET NETWORK_FILE
  case $1 in
    freestyle) echo "6x64 networks/freestyle-6x64.safetensors" ;;
    standard) echo "6x64 networks/standard15-6x64.safetensors" ;;
    renju) echo "6x64 networks/renju15-6x64.safetensors" ;;
    *) echo "gpu-generation: unknown rule $1" >&2; return 2 ;;
  esac
}

pids=()
seed=${SEED:-1}
board=${BOARD:-15}
for rule in "$@"; do
  network=$(spec "$rule" | cut -d' ' -f2)
  for process in $(seq "${PROCESSES:-1}"); do
    GPU_JOB_WORK="$GPU_JOB_WORK/$rule-$process" WUZI_NETWORK=$network \
      bash scripts/gpu-selfplay.sh "$rule" "$selfplay_minutes" --board "$board" \
      --parallel "${PARALLEL:-8}" --eval-batch 256 --playouts 400 --fast-playouts 100 \
      --full-share 0.25 --sample-plies 6 --temperature 0.8 \
      --openings ".gpujob/openings/${rule}${board}-pool.txt" --games 1000000 --seed "$seed" &
    pids+=($!)
    seed=$((seed + 1))
  done
done
failed=0
for pid in "${pids[@]}"; do wait "$pid" || failed=$((failed + 1)); done
((failed == 0)) || { echo "gpu-generation: $failed self-play process(es) failed; logs under $GPU_JOB_WORK/" >&2; exit 1; }
# One file per rule: the first process's header, then every game.
for rule in "$@"; do
  first=1
  for process in $(seq "${PROCESSES:-1}"); do
    file="$GPU_JOB_WORK/$rule-$process/selfplay/$rule.tsv"
    [[ -f $file ]] || continue
    if ((first)); then cat "$file"; first=0; else grep -v '^#' "$file" || true; fi
  done >"$GPU_JOB_WORK/selfplay/$rule.tsv"
  # No game at all (every process stopped before its first): training on
  # the old files alone would only repeat the last generation.
  grep -qv '^#' "$GPU_JOB_WORK/selfplay/$rule.tsv" || {
    echo "gpu-generation: no $rule self-play game was written; logs under $GPU_JOB_WORK/$rule-*/" >&2
    exit 1
  }
done

# The training data: every generation's games, WEIGHT copies each.
data="$GPU_JOB_WORK/weighted"
mkdir -p "$data"
specs=()
for rule in "$@"; do
  gzip -c "$GPU_JOB_WORK/selfplay/$rule.tsv" >"$out/$rule-selfplay.tsv.gz"
  read -r net network < <(spec "$rule")
  shopt -s nullglob
  for file in .gpujob/selfplay/"$rule"*.tsv "$GPU_JOB_WORK/selfplay/$rule.tsv"; do
    base=$(basename "$file" .tsv)
    copies=${WEIGHT:-6}
    if [[ $file == "$GPU_JOB_WORK/selfplay/$rule.tsv" || " ${OWN:-} " == *" $base "* ]]; then
      copies=${OWN_WEIGHT:-$copies}
    fi
    for i in $(seq "$copies"); do cp "$file" "$data/$rule-$base-$i.tsv"; done
  done
  shopt -u nullglob
  for variant in ${VARIANTS:-gen}; do
    name=${variant%%:*}
    extra=${variant#"$name"}
    specs+=("$rule:$net:$train_minutes:$rule-$name,--init,$network${extra:+,${extra#:}}")
  done
done
SELFPLAY_DIR="$data" bash scripts/gpu-job.sh "${specs[@]}" -- \
  --batch-size 256 --lr 5e-4 --warmup-steps 50 --epochs 3 --val-every 200
