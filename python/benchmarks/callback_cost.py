"""The cost of a step of a user target per chain, against the built-in model of the same kind:
a binary_quadratic model file (and the same model built from its arrays), the same energy U(x) = x W x + b x written in NumPy (one call
per step of all chains), and written in C (a compiled callback, built here with the system
compiler), all sampled with DMALA. The built-in model and the C callback run on one worker, so
their figures are the cost of one chain-step; the NumPy target's is its wall time per
chain-step (its chains wait on each other).

    python python/benchmarks/callback_cost.py MODEL.json [STEPS]

MODEL.json: `langevin model binary-quadratic --dim 100 --out MODEL.json`.
"""

from __future__ import annotations

import ctypes
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import langevin

C_SOURCE = r"""
#include <stddef.h>
#include <stdint.h>
/* U(x) = x W x + b x with W symmetric; user = b (d values) then W (d x d). */
int32_t quad(void *user, const uint8_t *x, size_t d, double *u, float *grad) {
    const double *b = (const double *)user, *w = b + d;
    double total = 0.0;
    for (size_t i = 0; i < d; i++) {
        double wx = 0.0;
        for (size_t j = 0; j < d; j++) wx += w[i * d + j] * x[j];
        total += x[i] * (wx + b[i]);
        grad[i] = (float)(2.0 * wx + b[i]);
    }
    *u = total;
    return 0;
}
"""


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

    folder = Path(tempfile.mkdtemp())
    (folder / "quad.c").write_text(C_SOURCE)
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", str(folder / "quad.c"), "-o", str(folder / "quad.so")], check=True)
    lib = ctypes.CDLL(str(folder / "quad.so"))
    params = np.ascontiguousarray(np.concatenate([b, w.ravel()]))
    compiled = langevin.CompiledTarget(d, lib.quad, params)

    model = langevin.load_model(path)
    arrays = langevin.BinaryQuadratic(w, b)
    target = langevin.BinaryTarget(d, logp_grad)
    print(f"binary_quadratic d = {d}, dmala step 0.2, {steps} steps + 100 burn-in per chain")
    print(
        f"{'chains':>6} {'built-in':>10} {'arrays':>8} {'C callback':>11} {'NumPy callback':>15} {'calls':>7}"
        "   (ns per chain-step)"
    )
    for chains in (1, 100):
        total = chains * (steps + 100)
        # The built-in model on one worker: its cost per chain-step.
        r = langevin.sample(model, steps=steps, burn_in=100, chains=chains, seed=1, threads=1, diagnostics="none")
        builtin = r.summary["wall_time_s"] * 1e9 / total
        a = langevin.sample(arrays, steps=steps, burn_in=100, chains=chains, seed=1, threads=1, diagnostics="none")
        assert np.array_equal(a.draws, r.draws)
        from_arrays = a.summary["wall_time_s"] * 1e9 / total
        start = time.perf_counter()
        t = langevin.sample(target, steps=steps, burn_in=100, chains=chains, seed=1, diagnostics="none")
        wall = time.perf_counter() - start
        c = langevin.sample(compiled, steps=steps, burn_in=100, chains=chains, seed=1, threads=1, diagnostics="none")
        in_c = c.summary["wall_time_s"] * 1e9 / total
        print(
            f"{chains:>6} {builtin:>10.0f} {from_arrays:>8.0f} {in_c:>11.0f} {wall * 1e9 / total:>15.0f}"
            f" {t.calls:>7}"
        )


if __name__ == "__main__":
    main()
