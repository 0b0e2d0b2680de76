#!/usr/bin/env bash
# Prepares a training job for a GPU machine whose PyTorch is not the
# libtorch this engine links (the device tool's machines): builds the
# torch-free encoder and copies it, the job script's inputs and the game
# records into .gpujob/ (git-ignored), which the job's call carries.
# Usage: scripts/gpu-prepare.sh DATA_DIR [OPENINGS_DIR]   (the gomocup_*.tsv
# folder; the opening files default to DATA_DIR/../openings)
# Then, on the GPU machine, from the repository root, with .gpujob carried:
#   bash scripts/gpu-job.sh freestyle:6x64:20 renju:6x64:5
# See networks/README.md.
set -euo pipefail
data=${1:?usage: scripts/gpu-prepare.sh DATA_DIR}
cd "$(dirname "$0")/.."
cargo build --release --quiet -p wuzi-data --bin wuzi-encode
rm -rf .gpujob
mkdir -p .gpujob/data
cp target/release/wuzi-encode .gpujob/
cp "$data"/gomocup*.tsv .gpujob/data/
# Opening files for self-play (scripts/gpu-selfplay.sh), when they are there.
openings=${2:-$data/../openings}
[[ -d $openings ]] && cp -r "$openings" .gpujob/openings
du -sh .gpujob
