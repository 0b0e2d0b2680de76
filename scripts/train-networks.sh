#!/usr/bin/env bash
# Trains the shipped networks (networks/*.safetensors) from the Gomocup game
# records. Usage: scripts/train-networks.sh DATA_DIR [OUT_DIR]
# DATA_DIR holds the gomocup_*.tsv files (the project's shared data folder
# gomocup_games/). Each run writes checkpoints, loss.csv and loss.png under
# OUT_DIR/<name>; copy final.safetensors into networks/ to ship it.
set -euo pipefail
data=${1:?usage: scripts/train-networks.sh DATA_DIR [OUT_DIR]}
out=${2:-runs}
cd "$(dirname "$0")/.."
bash scripts/setup-torch.sh
cargo build --release --quiet --bin pbrain-wuzi
train() { ./target/release/pbrain-wuzi train --net 4x32 --torch-threads 2 --batch-size 256 --seed 1 "$@"; }

# Freestyle: one network for 15x15 and 20x20 (and other sizes), about 1.45M positions.
train --rule freestyle --epochs 1 --max-minutes 32 --out "$out/freestyle-4x32" \
  "$data/gomocup2021_freestyle1.tsv" "$data/gomocup2021_freestyle2.tsv" \
  "$data/gomocup2021_fastgame.tsv" "$data/gomocup2024_freestyle15_2.tsv"

# Renju 15x15, about 190k positions.
train --rule renju --board 15 --epochs 4 --max-minutes 16 --out "$out/renju15-4x32" \
  "$data/gomocup2019_renju.tsv" "$data/gomocup2020_renju.tsv" "$data/gomocup2021_renju.tsv"

# Standard (exactly five) 15x15, about 150k positions.
train --rule standard --board 15 --epochs 4 --max-minutes 14 --out "$out/standard15-4x32" \
  "$data/gomocup2021_standard1.tsv" "$data/gomocup2021_standard2.tsv"
