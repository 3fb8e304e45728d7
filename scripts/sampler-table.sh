#!/usr/bin/env bash
# ESS of the distance statistic per 10⁴ target evaluations and per second, for the discrete
# samplers side by side on three binary models: the 400-node Barabási–Albert Ising graph, the
# critical 20×20 lattice and an RBM with 64 visible and 32 hidden units. Prints a Markdown
# table for BENCHMARKS.md.
#
#   scripts/sampler-table.sh [STEPS]     # kept steps per chain (default 5000)
#
# Builds the release binary first. Each run: 2 chains on 1 thread, 1,000 burn-in steps (tuned
# samplers tune there), seed 1, default parameters of every sampler.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
STEPS=${1:-5000}
cargo build --release -q -p langevin-std --manifest-path "$ROOT/Cargo.toml"
L="$ROOT/target/release/langevin"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

"$L" model ising-ba --nodes 400 --out "$work/ba.json"
"$L" model ising-lattice --rows 20 --cols 20 --out "$work/grid.json"
"$L" model rbm --visible 64 --hidden 32 --out "$work/rbm.json"

samplers=(
  "dmala"
  "dmala --adapt acceptance"
  "ab"
  "gwg"
  "gibbs"
  "lb --balancing barker"
  "hamming-ball"
  "pas"
  "dlmc"
  "pt-dmala"
  "block-gibbs"
)

echo "| sampler | BA-400 ESS/10⁴ evals | BA-400 ESS/s | 20×20 ESS/10⁴ evals | 20×20 ESS/s | RBM 64×32 ESS/10⁴ evals | RBM ESS/s |"
echo "|---|---|---|---|---|---|---|"
for s in "${samplers[@]}"; do
  row="| \`$s\` |"
  for m in ba grid rbm; do
    # shellcheck disable=SC2086 # the sampler's options are separate words
    if "$L" sample --model "$work/$m.json" --sampler $s --steps "$STEPS" --burn-in 1000 \
      --chains 2 --threads 1 --seed 1 --diagnostics summary --quiet \
      --summary "$work/s.json" 2>/dev/null; then
      row+=$(python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
print(' %.1f | %.0f |' % (d['ess_per_10k_evals'], d['ess_per_second']), end='')
" "$work/s.json")
    else
      row+=" – | – |"
    fi
  done
  echo "$row"
done
