#!/usr/bin/env bash
# The learning benchmarks of BENCHMARKS.md: RBMs on the binarised digits (test log-likelihood by
# AIS) and coupling recovery on a 10×10 Ising lattice, each sampler at the same sampler steps per
# update. Usage: scripts/learning-benchmarks.sh [OUTPUT_FOLDER]   (a few minutes on one core)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-learning-out}
mkdir -p "$out"
cargo build --release -q -p langevin-std --manifest-path "$root/Cargo.toml"
L="$root/target/release/langevin"
digits="$root/data/digits"

# Ising: data from 50 long Gibbs chains (2,000 sweeps burn-in, one draw every 50 sweeps).
"$L" sample --model "$root/data/ising/lattice10.json" --sampler gibbs --chains 50 --burn-in 2000 \
  --steps 20000 --thin 50 --seed 1 --threads 1 --out "$out/ising_data.npy" --quiet
for s in dmala dula gwg gibbs; do
  "$L" train --data "$out/ising_data.npy" --true "$root/data/ising/lattice10.json" \
    --model-kind ising --graph lattice:10:10 --sampler "$s" --pcd-steps 5 --chains 100 \
    --batch 100 --lr 0.002 --l1 0.001 --updates 2000 --eval-every 200 --seed 1 --threads 1 \
    --out "$out/ising_$s.json" --log "$out/ising_$s.csv" --plot "$out/ising_$s.png" --quiet
done

# Digits: an RBM with 32 hidden units, 1,000 updates of batch 100 (about 67 epochs).
for s in block-gibbs dmala gwg ab acs gibbs; do
  "$L" train --data "$digits/train.npy" --test "$digits/test.npy" --model-kind rbm --hidden 32 \
    --sampler "$s" --pcd-steps 10 --chains 100 --batch 100 --lr 0.01 --updates 1000 \
    --eval-every 200 --ais-chains 100 --ais-betas 500 --seed 1 --threads 1 \
    --out "$out/rbm_$s.json" --log "$out/rbm_$s.csv" --plot "$out/rbm_$s.png" \
    --samples "$out/rbm_${s}_samples.png" --quiet
  # The final test log-likelihood with a longer AIS run.
  "$L" ais --model "$out/rbm_$s.json" --data "$digits/test.npy" --chains 200 --betas 5000 \
    --seed 2 --summary "$out/rbm_${s}_ais.json" --quiet
done
for s in dmala dula gwg gibbs; do echo "ising $s: $(tail -1 "$out/ising_$s.csv")"; done
for s in block-gibbs dmala gwg ab acs gibbs; do
  echo "digits $s: $(grep -o '"mean_log_likelihood": [^,]*' "$out/rbm_${s}_ais.json")"
done
