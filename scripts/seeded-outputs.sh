#!/usr/bin/env bash
# Runs a fixed set of seeded `langevin` commands, covering every sampler on every domain it
# applies to (binary, ordinal, categorical), the batched (lockstep) paths, AB-2, the tuned
# samplers and the continuous integrators, and prints `sha256  name` for each output: the
# draws (.npy) and the summary JSON with its run-time fields (wall time, rates per second,
# command line, SIMD path) removed.
#
# A refactor that keeps every seeded value prints the same lines before and after:
#
#     scripts/seeded-outputs.sh > before.txt
#     # ... change the code, rebuild ...
#     scripts/seeded-outputs.sh | diff before.txt -
#
# LANGEVIN names the binary (default: target/debug/langevin, built by
# `cargo build -p langevin-std --bin langevin`). Needs python3 (to strip the summaries).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
bin=${LANGEVIN:-$root/target/debug/langevin}
if [[ $bin != /* ]]; then bin=$PWD/$bin; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

# The models: one file per kind the samplers treat differently.
"$bin" model ising-lattice --rows 4 --cols 4 --coupling 0.3 --field 0.1 --out lattice.json
"$bin" model ising-ba --nodes 12 --edges-per-node 2 --coupling 0.2 --field 0.1 --seed 2 --out ba.json
"$bin" model rbm --visible 9 --hidden 4 --seed 1 --out rbm.json
"$bin" model binary-quadratic --dim 10 --seed 3 --out quadratic.json
"$bin" model binary-logistic --dim 8 --samples 20 --active 3 --seed 4 --out logistic.json
"$bin" model lattice-gaussian --dim 4 --states 7 --seed 5 --out ordinal.json
cat >potts.json <<'EOF'
{"kind": "potts", "states": 3, "n": 4,
 "edges": [[0, 1, 0.5], [1, 2, -0.25], [2, 3, 0.75], [3, 0, 0.25]],
 "field": [[0, 0.25, -0.125], [0.125, 0, 0], [0, 0, 0.5], [-0.25, 0.125, 0]]}
EOF
cat >gauss.json <<'EOF'
{"kind": "gaussian_sum", "centers": [[0, 1], [1, 0], [0.5, 0.5], [1, 1]]}
EOF

strip() {
    python3 - "$1" <<'EOF'
import json, sys
drop = {"command_line", "wall_time_s", "ns_per_step", "ess_per_second", "simd", "threads",
        "version", "seconds", "wall_time", "elapsed_s"}
def clean(v):
    if isinstance(v, dict):
        return {k: clean(x) for k, x in v.items() if k not in drop and "per_second" not in k}
    if isinstance(v, list):
        return [clean(x) for x in v]
    return v
with open(sys.argv[1]) as f:
    doc = json.load(f)
sys.stdout.write(json.dumps(clean(doc), sort_keys=True))
EOF
}

# run NAME ARGS...: one `langevin sample` run, hashed.
run() {
    local name=$1
    shift
    "$bin" sample "$@" --threads 2 --quiet --out "$name.npy" --summary "$name.json"
    printf '%s  %s.npy\n' "$(sha256sum <"$name.npy" | cut -d' ' -f1)" "$name"
    printf '%s  %s.json\n' "$(strip "$name.json" | sha256sum | cut -d' ' -f1)" "$name"
}

short=(--chains 3 --steps 300 --burn-in 100 --seed 7)
long=(--chains 2 --steps 3000 --burn-in 500 --seed 7)

# Binary: every sampler on the lattice (DMALA with a given step runs the tabulated kernel,
# systematic Gibbs the checkerboard sweep), and the model-specific paths.
for s in dula gwg rwm ab lb hamming-ball pas dlmc pt-dmala; do
    run "binary-$s" --model lattice.json --sampler "$s" "${short[@]}"
done
run binary-dmala-tuned --model lattice.json --sampler dmala "${short[@]}"
run binary-dmala-lattice --model lattice.json --sampler dmala --step 0.3 "${short[@]}"
run binary-dmala-graph --model ba.json --sampler dmala --step 0.3 "${short[@]}"
run binary-gibbs-checkerboard --model lattice.json --sampler gibbs "${short[@]}"
run binary-gibbs-random --model lattice.json --sampler gibbs --scan random "${short[@]}"
run binary-gibbs-quadratic --model quadratic.json --sampler gibbs "${short[@]}"
run binary-gibbs-logistic --model logistic.json --sampler gibbs "${short[@]}"
run binary-gibbs-rbm --model rbm.json --sampler gibbs "${short[@]}"
run binary-block-gibbs --model rbm.json --sampler block-gibbs "${short[@]}"
run binary-dmala-rbm --model rbm.json --sampler dmala --step 0.4 "${short[@]}"
run binary-acs --model lattice.json --sampler acs "${long[@]}"
run binary-ab2 --model lattice.json --sampler ab2 --ab2-tune 300 "${short[@]}"
run binary-dmala-adapt --model quadratic.json --sampler dmala --adapt acceptance \
    --target-acceptance 0.6 "${short[@]}"
run binary-dlmc-fixed --model quadratic.json --sampler dlmc --time 0.5 --solver euler "${short[@]}"
run binary-pas-fixed --model quadratic.json --sampler pas --path-length 2 "${short[@]}"
run binary-lb-barker --model logistic.json --sampler lb --balancing barker "${short[@]}"
run binary-hamming-ball-r2 --model quadratic.json --sampler hamming-ball --radius 2 --block 5 \
    "${short[@]}"
run binary-pt-dmala-r3 --model quadratic.json --sampler pt-dmala --replicas 3 "${short[@]}"

# Batched (lockstep groups).
run batched-rbm-dmala --model rbm.json --sampler dmala --step 0.3 --batch 2 "${short[@]}"
run batched-quadratic-dula --model quadratic.json --sampler dula --batch 2 "${short[@]}"
run batched-logistic-dmala --model logistic.json --sampler dmala --batch 3 "${short[@]}"
run batched-ordinal-dmala --model ordinal.json --sampler dmala --step 0.5 --batch 2 "${short[@]}"

# Ordinal.
for s in dula dmala gibbs ab pt-dmala; do
    run "ordinal-$s" --model ordinal.json --sampler "$s" "${short[@]}"
done
run ordinal-dmala-window --model ordinal.json --sampler dmala --step 0.5 --window 2 "${short[@]}"
run ordinal-dula-window --model ordinal.json --sampler dula --window 1 "${short[@]}"
run ordinal-acs --model ordinal.json --sampler acs "${long[@]}"
run ordinal-ab2 --model ordinal.json --sampler ab2 --ab2-tune 300 "${short[@]}"

# Categorical.
for s in dula dmala gibbs gwg ab lb pas dlmc pt-dmala; do
    run "categorical-$s" --model potts.json --sampler "$s" "${short[@]}"
done
run categorical-dmala-fixed --model potts.json --sampler dmala --step 0.4 "${short[@]}"
run categorical-acs --model potts.json --sampler acs "${long[@]}"
run categorical-pas-fixed --model potts.json --sampler pas --path-length 2 "${short[@]}"
run categorical-dlmc-fixed --model potts.json --sampler dlmc --time 0.5 "${short[@]}"

# Continuous.
for s in lmc sgld sghmc ewsg agld; do
    "$bin" sample-continuous --model gauss.json --sampler "$s" --step 0.01 --passes 20 \
        --burn-in-passes 5 --batch 2 --chains 2 --seed 7 --threads 2 --quiet \
        --out "continuous-$s.npy" --summary "continuous-$s.json"
    printf '%s  %s.npy\n' "$(sha256sum <"continuous-$s.npy" | cut -d' ' -f1)" "continuous-$s"
    printf '%s  %s.json\n' "$(strip "continuous-$s.json" | sha256sum | cut -d' ' -f1)" \
        "continuous-$s"
done
