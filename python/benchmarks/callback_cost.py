"""The cost of a step of a Python-callback target per chain, against the built-in model of
the same kind: a binary_quadratic model file, and the same energy U(x) = x W x + b x written in
NumPy, both sampled with DMALA.

    python python/benchmarks/callback_cost.py MODEL.json [STEPS]

MODEL.json: `langevin model binary-quadratic --dim 100 --out MODEL.json`.
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np

import langevin


def main() -> None:
    path = sys.argv[1]
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
    doc = json.loads(open(path).read())
    w = np.asarray(doc["W"], dtype=np.float64)
    b = np.asarray(doc["b"], dtype=np.float64)
    d = len(b)

    def logp_grad(X):
        X = X.astype(np.float64)
        WX = X @ w
        return np.einsum("ni,ni->n", X, WX) + X @ b, 2.0 * WX + b

    model = langevin.load_model(path)
    target = langevin.BinaryTarget(d, logp_grad)
    print(f"binary_quadratic d = {d}, dmala step 0.2, {steps} steps + 100 burn-in per chain")
    print(f"{'chains':>6} {'built-in ns/chain-step':>24} {'numpy callback ns/chain-step':>30} {'calls':>7}")
    for chains in (1, 100):
        total = chains * (steps + 100)
        # The built-in model on one worker: its cost per chain-step.
        r = langevin.sample(model, steps=steps, burn_in=100, chains=chains, seed=1, threads=1, diagnostics="none")
        builtin = r.summary["wall_time_s"] * 1e9 / total
        start = time.perf_counter()
        t = langevin.sample(target, steps=steps, burn_in=100, chains=chains, seed=1, diagnostics="none")
        wall = time.perf_counter() - start
        print(f"{chains:>6} {builtin:>24.0f} {wall * 1e9 / total:>30.0f} {t.calls:>7}")


if __name__ == "__main__":
    main()
