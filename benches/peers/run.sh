#!/usr/bin/env bash
# DMALA per chain-step: `langevin sample` next to NumPy, PyTorch (analytic gradients) and
# `torch.compile`, on the same model files. Prints a markdown table. Not part of CI.
#
#   bash benches/peers/run.sh            # full run (under 10 minutes on 2 cores, plus the first install)
#   PEERS_QUICK=1 bash benches/peers/run.sh   # a smoke test: fewer steps and repeats
#
# Creates a Python environment under target/peers-venv (pip install numpy torch threadpoolctl
# from PyPI) and writes models and results under target/peers/. If PyTorch cannot be installed,
# the PyTorch columns are left empty and the run says so.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"

# ---- Python environment
# shellcheck source=env.sh
source "$here/env.sh"
bench_env peers
impls="numpy,torch,compile"
if ! "$py" -c 'import torch' 2>/dev/null; then
    if ! "$venv/bin/pip" install --quiet torch; then
        echo "run.sh: pip install torch failed: the PyTorch and torch.compile columns stay empty" >&2
        impls="numpy"
    fi
fi

# ---- langevin
(cd "$root" && cargo build --release -p langevin-std --quiet)
langevin="$root/target/release/langevin"

# ---- models: the same files for both sides (the model file's arrays beside it in model/, apart
# from the arrays it is made from)
"$py" "$here/peers.py" rbm-arrays --visible 784 --hidden 500 --weight-scale 0.01 --seed 0 --out "$out"
"$langevin" model rbm --weights "$out/rbm_W.npy" --visible-bias "$out/rbm_b.npy" \
    --hidden-bias "$out/rbm_c.npy" --out "$out/model/rbm.json" --npy
"$langevin" model ising-lattice --rows 20 --cols 20 --coupling 0.2 --field 0.2 --periodic true \
    --out "$out/ising.json"

# ---- run settings
runs=5          # langevin runs per case (median)
repeats=7       # timed repeats per peer (median)
target=0.5      # seconds per timed peer repeat
scale=1
if [[ -n "${PEERS_QUICK:-}" ]]; then
    runs=1 repeats=2 target=0.1 scale=10
fi

# The peers' own command: one core, and the OpenBLAS overrides some machines set removed
# (they make a current NumPy pick a slower kernel).
peer_python() {
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE \
        OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 "$py" "$@"
}
peer() { peer_python "$here/peers.py" "$@"; }

results="$out/results.jsonl"
: > "$results"

# ours CASE MODEL CHAINS THREADS STEPS BURN_IN N [FLAGS]: N runs of `langevin sample` (with
# the extra FLAGS, unquoted), one JSON line each
ours() {
    local case="$1" model="$2" chains="$3" threads="$4" steps="$5" burn="$6" n="$7" flags="${8:-}"
    for ((i = 0; i < n; i++)); do
        # shellcheck disable=SC2086
        "$langevin" sample --model "$model" --sampler dmala --step 0.4 --balance 0.5 \
            --chains "$chains" --threads "$threads" --steps "$steps" --burn-in "$burn" \
            --thin 10 --seed "$i" --summary "$out/summary.json" --quiet $flags
        "$py" - "$out/summary.json" "$case" >> "$out/ours.jsonl" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
print(json.dumps({"case": sys.argv[2], "ns": s["ns_per_step"], "acceptance": s["acceptance_rate"]}))
EOF
    done
}

# case LABEL MODEL CHAINS LANGEVIN_THREADS STEPS BURN_IN PEER_WARM_UP [LANGEVIN_FLAGS]: langevin
# runs before and after the peers (so that a change of load shows in both), then one line of
# medians.
case_() {
    local label="$1" model="$2" chains="$3" threads="$4" steps="$5" burn="$6" warm="$7" flags="${8:-}"
    : > "$out/ours.jsonl"
    echo "== $label" >&2
    ours "$label" "$model" "$chains" "$threads" "$steps" "$burn" $(((runs + 1) / 2)) "$flags"
    peer time --model "$model" --case "$label" --chains "$chains" --step 0.4 --impl "$impls" \
        --warm-up "$warm" --repeats "$repeats" --target "$target" --threads 1 | tee -a "$results" >&2
    ours "$label" "$model" "$chains" "$threads" "$steps" "$burn" $((runs / 2)) "$flags"
    "$py" - "$out/ours.jsonl" >> "$results" <<'EOF'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print(json.dumps({
    "case": rows[0]["case"], "impl": "langevin", "runs": len(rows),
    "ns_per_chain_step": statistics.median(r["ns"] for r in rows),
    "ns_min": min(r["ns"] for r in rows), "ns_max": max(r["ns"] for r in rows),
    "acceptance": statistics.mean(r["acceptance"] for r in rows),
}))
EOF
    tail -n 1 "$results" >&2
}

s() { echo $(($1 / scale)); }
case_ "RBM 784×500, 1 chain" "$out/model/rbm.json" 1 1 "$(s 20000)" "$(s 1000)" 1000
case_ "RBM 784×500, 100 chains (langevin --batch 100)" "$out/model/rbm.json" 100 1 "$(s 500)" "$(s 100)" 100 \
    "--batch 100"
case_ "Ising 20×20, 1 chain" "$out/ising.json" 1 1 "$(s 200000)" "$(s 10000)" 2000
case_ "Ising 20×20, 100 chains (langevin 2 threads)" "$out/ising.json" 100 2 "$(s 20000)" "$(s 1000)" 200

# ---- the table and what it ran on
echo
"$py" "$here/peers.py" table "$results"
echo
peer_python - <<'EOF'
import os, platform, numpy
try:
    import torch
    tv = torch.__version__
except ImportError:
    tv = "not installed"
from threadpoolctl import threadpool_info
blas = [f"{i['internal_api']} {i.get('version') or ''} {i.get('architecture') or ''}".strip()
        for i in threadpool_info() if i["user_api"] == "blas"]
print(f"Python {platform.python_version()}, NumPy {numpy.__version__} ({'; '.join(blas)}), "
      f"PyTorch {tv}; load average at the end: {os.getloadavg()[0]:.1f}")
EOF
