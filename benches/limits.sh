#!/usr/bin/env bash
# The RBM DMALA step next to its floors: one single-precision GEMV (one chain) or GEMM (a group
# of chains, per chain) with the same W through NumPy's OpenBLAS on one thread. Prints a
# markdown table of medians and ratios. Not part of CI.
#
#   bash benches/limits.sh                 # full run (a few minutes on 2 cores, plus the first install)
#   LIMITS_QUICK=1 bash benches/limits.sh  # a smoke test: fewer steps and rounds
#
# Creates a Python environment under target/limits-venv (pip install numpy threadpoolctl from
# PyPI) and writes models and results under target/limits/. The model is the peers' RBM
# (benches/peers/peers.py rbm-arrays: 784 x 500, W ~ N(0, 0.01^2), b, c ~ N(0, 1), seed 0),
# and a copy of it whose model file asks for bf16 weights. Each round runs every case once,
# langevin and its floor one after the other, so a change of load shows on both sides; the
# table quotes the medians over the rounds.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"

# ---- Python environment
# shellcheck source=peers/env.sh
source "$here/peers/env.sh"
bench_env limits

# ---- langevin (LANGEVIN=path to time another binary)
if [[ -z "${LANGEVIN:-}" ]]; then
    (cd "$root" && cargo build --release -p langevin-std --quiet)
    LANGEVIN="$root/target/release/langevin"
fi
langevin="$LANGEVIN"

# ---- models
"$py" "$here/peers/peers.py" rbm-arrays --visible 784 --hidden 500 --weight-scale 0.01 --seed 0 \
    --out "$out"
"$langevin" model rbm --weights "$out/rbm_W.npy" --visible-bias "$out/rbm_b.npy" \
    --hidden-bias "$out/rbm_c.npy" --out "$out/model/rbm.json" --npy
# The same arrays with bf16 weights (the model is then the RBM whose weights are W rounded to
# bf16); left out if this binary does not know the option.
"$py" - "$out/model/rbm.json" "$out/model/rbm_bf16.json" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
doc["weights"] = "bf16"
json.dump(doc, open(sys.argv[2], "w"), indent=2)
EOF
cases_bf16=1
if ! "$langevin" sample --model "$out/model/rbm_bf16.json" --sampler dmala --chains 1 --steps 1 \
    --burn-in 0 --quiet --diagnostics none --out "$out/probe.npy" 2>/dev/null; then
    echo "limits.sh: this langevin has no bf16 RBM weights; that case is left out" >&2
    cases_bf16=0
fi

# ---- run settings
rounds=7
scale=1
if [[ -n "${LIMITS_QUICK:-}" ]]; then
    rounds=2 scale=10
fi
s() { echo $(($1 / scale)); }

# NumPy on one thread, without the OpenBLAS overrides some machines set (they make a current
# NumPy pick a slower kernel).
floor() {
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE \
        OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 \
        "$py" "$here/limits.py" floor "$@"
}

results="$out/results.jsonl"
: > "$results"

# ours CASE MODEL CHAINS STEPS BURN_IN SEED [FLAGS]: one `langevin sample` run, one JSON line
ours() {
    local case="$1" model="$2" chains="$3" steps="$4" burn="$5" seed="$6" flags="${7:-}"
    # shellcheck disable=SC2086
    "$langevin" sample --model "$model" --sampler dmala --step 0.4 --balance 0.5 \
        --chains "$chains" --threads 1 --steps "$steps" --burn-in "$burn" --thin 10 \
        --seed "$seed" --summary "$out/summary.json" --quiet --diagnostics none $flags
    "$py" - "$out/summary.json" "$case" >> "$results" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
print(json.dumps({"case": sys.argv[2], "impl": "langevin", "ns_per_chain": s["ns_per_step"],
                  "acceptance": s["acceptance_rate"]}))
EOF
}

one="RBM 784×500 f32, 1 chain"
batch="RBM 784×500 f32, --batch 100"
half="RBM 784×500 bf16, 1 chain"
for ((r = 0; r < rounds; r++)); do
    echo "== round $((r + 1)) of $rounds" >&2
    ours "$one" "$out/model/rbm.json" 1 "$(s 20000)" "$(s 1000)" "$r"
    floor --model "$out/model/rbm.json" --case "$one" --chains 1 >> "$results"
    ours "$batch" "$out/model/rbm.json" 100 "$(s 500)" "$(s 100)" "$r" "--batch 100"
    floor --model "$out/model/rbm.json" --case "$batch" --chains 100 >> "$results"
    if ((cases_bf16)); then
        ours "$half" "$out/model/rbm_bf16.json" 1 "$(s 20000)" "$(s 1000)" "$r"
        # The floor of the bf16 case stays the f32 GEMV: NumPy has no bf16 product.
        floor --model "$out/model/rbm.json" --case "$half" --chains 1 >> "$results"
    fi
done

# ---- the table and what it ran on
echo
"$py" "$here/limits.py" table "$results"
echo
env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OPENBLAS_NUM_THREADS=1 "$py" - <<'EOF'
import os, platform, numpy
from threadpoolctl import threadpool_info
blas = [f"{i['internal_api']} {i.get('version') or ''} {i.get('architecture') or ''} "
        f"({i['num_threads']} thread)".strip()
        for i in threadpool_info() if i["user_api"] == "blas"]
print(f"Python {platform.python_version()}, NumPy {numpy.__version__} ({'; '.join(blas)}); "
      f"load average at the end: {os.getloadavg()[0]:.1f}")
EOF
