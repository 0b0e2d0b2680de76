#!/usr/bin/env bash
# Runs on a GPU machine (from the repository root, .gpujob/ prepared by
# scripts/gpu-prepare.sh and carried). Encodes each named rule's game records
# once with wuzi-encode (the split and the checks of `pbrain-wuzi train
# --seed 1`), then trains every RULE:NET:MINUTES at the same time with
# scripts/gpu_train.py (small networks leave the GPU idle between Python's
# kernel launches, so they share it well), each for at most MINUTES with the
# learning-rate schedule fitted to that time. Each run's files (the
# best-by-validation weights, loss.csv, summary.json, the log) are packed
# into $OUT/RULE-NET.tar (./gpu-out/ without $OUT): one file per run, since
# the device tool brings back at most 8 files.
# Extra arguments after `--` go to every gpu_train.py run; per-run extras can
# follow the minutes after a comma: freestyle:6x64:20,--epochs,12. A fourth
# field names the run (default RULE-NET), for several runs of one size:
# freestyle:6x64:8:ft-a,--init,networks/freestyle-6x64.safetensors
# Self-play records in $SELFPLAY_DIR (default $GPU_JOB_WORK/selfplay), named
# RULE*.tsv, are encoded with the rule's Gomocup records.
# Example: bash scripts/gpu-job.sh freestyle:6x64:20 renju:6x64:20 -- --batch-size 1024
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-gpu-out}
work=${GPU_JOB_WORK:-/tmp/wuzi-gpu-job}
specs=()
while [[ $# -gt 0 && $1 != "--" ]]; do specs+=("$1"); shift; done
[[ ${1:-} == "--" ]] && shift
[[ ${#specs[@]} -gt 0 ]] || { echo "usage: gpu-job.sh RULE:NET:MINUTES[,ARG...]... [-- gpu_train.py args]" >&2; exit 2; }
d=.gpujob/data
mkdir -p "$out" "$work"

encode() {
  local rule=$1 files board=()
  case $rule in
    freestyle) files=("$d/gomocup2021_freestyle1.tsv" "$d/gomocup2021_freestyle2.tsv"
                      "$d/gomocup2021_fastgame.tsv" "$d/gomocup2024_freestyle15_2.tsv") ;;
    renju) files=("$d/gomocup2019_renju.tsv" "$d/gomocup2020_renju.tsv" "$d/gomocup2021_renju.tsv"); board=(--board 15) ;;
    standard) files=("$d/gomocup2021_standard1.tsv" "$d/gomocup2021_standard2.tsv"); board=(--board 15) ;;
    *) echo "gpu-job: unknown rule $rule" >&2; return 2 ;;
  esac
  shopt -s nullglob
  files+=("${SELFPLAY_DIR:-$work/selfplay}/$rule"*.tsv)
  shopt -u nullglob
  .gpujob/wuzi-encode --rule "$rule" "${board[@]}" --seed 1 --out "$work/export-$rule" "${files[@]}" \
    >"$work/encode-$rule.log" 2>&1
}

rules=$(for spec in "${specs[@]}"; do echo "${spec%%:*}"; done | sort -u)
pids=()
for rule in $rules; do encode "$rule" & pids+=($!); done
# A failed encode says why here: its log stays on the device machine.
for pid in "${pids[@]}"; do wait "$pid" || { tail -n 20 "$work"/encode-*.log >&2; exit 1; }; done
echo "gpu-job: encoded $(echo $rules) in ${SECONDS}s"

pids=()
for spec in "${specs[@]}"; do
  IFS=, read -r -a parts <<<"$spec"
  IFS=: read -r rule net minutes name <<<"${parts[0]}"
  run="$work/${name:-$rule-$net}"
  mkdir -p "$run"
  cp "$work/encode-$rule.log" "$run/log"
  OMP_NUM_THREADS=2 PYTHONUNBUFFERED=1 "${PYTHON:-python3}" scripts/gpu_train.py "$work/export-$rule" \
    --net "$net" --max-minutes "$minutes" --seed 1 --out "$run" "$@" "${parts[@]:1}" >>"$run/log" 2>&1 &
  pids+=($!)
done
status=0
for pid in "${pids[@]}"; do wait "$pid" || status=1; done
for spec in "${specs[@]}"; do
  IFS=: read -r rule net _ name <<<"${spec%%,*}"
  name=${name:-$rule-$net}
  tail -n 3 "$work/$name/log"
  # The best-by-validation weights only (the final ones are among the
  # candidates): a 10x128 network's two files would pass the 16 MiB limit.
  tar -C "$work" -cf "$out/$name.tar" --exclude final.safetensors "$name"
done
# Written last, for a caller that polls for the packed results.
touch "$work/done"
ls -la "$out"
exit $status
