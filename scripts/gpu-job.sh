#!/usr/bin/env bash
# Runs on a GPU machine (from the repository root, .gpujob/ prepared by
# scripts/gpu-prepare.sh and carried): for each RULE:NET:MINUTES, encodes
# that rule's game records with wuzi-encode (the split and the checks of
# `pbrain-wuzi train --seed 1`), trains with scripts/gpu_train.py for at
# most MINUTES, and puts final.safetensors, loss.csv, summary.json and the
# log under $OUT/RULE-NET/ (or ./gpu-out/ without $OUT). Extra arguments
# after `--` go to gpu_train.py (e.g. -- --epochs 8 --batch-size 1024).
# Example: bash scripts/gpu-job.sh freestyle:6x64:20 renju:6x64:5 -- --epochs 10
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-gpu-out}
specs=()
while [[ $# -gt 0 && $1 != "--" ]]; do specs+=("$1"); shift; done
[[ ${1:-} == "--" ]] && shift
[[ ${#specs[@]} -gt 0 ]] || { echo "usage: gpu-job.sh RULE:NET:MINUTES... [-- gpu_train.py args]" >&2; exit 2; }
d=.gpujob/data
for spec in "${specs[@]}"; do
  IFS=: read -r rule net minutes <<<"$spec"
  case $rule in
    freestyle) files=("$d/gomocup2021_freestyle1.tsv" "$d/gomocup2021_freestyle2.tsv"
                      "$d/gomocup2021_fastgame.tsv" "$d/gomocup2024_freestyle15_2.tsv"); board=() ;;
    renju) files=("$d/gomocup2019_renju.tsv" "$d/gomocup2020_renju.tsv" "$d/gomocup2021_renju.tsv"); board=(--board 15) ;;
    standard) files=("$d/gomocup2021_standard1.tsv" "$d/gomocup2021_standard2.tsv"); board=(--board 15) ;;
    *) echo "gpu-job: unknown rule $rule" >&2; exit 2 ;;
  esac
  run="$out/$rule-$net"
  mkdir -p "$run"
  export_dir="/tmp/wuzi-export-$rule"
  .gpujob/wuzi-encode --rule "$rule" "${board[@]}" --seed 1 --out "$export_dir" "${files[@]}" 2>&1 | tee "$run/log"
  PYTHONUNBUFFERED=1 "${PYTHON:-python3}" scripts/gpu_train.py "$export_dir" --net "$net" --max-minutes "$minutes" \
    --seed 1 --out "$run" "$@" 2>&1 | tee -a "$run/log"
done
ls -la "$out"/*
