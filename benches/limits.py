#!/usr/bin/env python3
"""The floors of an RBM DMALA step: one single-precision product with the model's W through
NumPy's BLAS, on whatever number of threads the caller's environment allows (benches/limits.sh
sets OPENBLAS_NUM_THREADS=1).

    limits.py floor --model rbm.json --chains 1      one GEMV, W (H x V) times a 0/1 vector
    limits.py floor --model rbm.json --chains 100    one GEMM, W times a V x 100 matrix of 0/1
                                                     columns, per chain (the time / 100)
    limits.py table results.jsonl                    the markdown table of medians and ratios

A DMALA step reads W once (its gradient at the proposal is one matrix-vector product, or one
matrix-matrix product for a group of chains), so these products are what a step cannot beat.
The floor of one run is the median of `--repeats` timed loops, each sized to about `--target`
seconds, of `np.matmul(W, X, out=Y)` (no allocation in the loop). Prints one JSON line.
"""

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np


def load_weights(path):
    """W of a `langevin` RBM model file (inline nested lists or a `.npy` file beside it), as
    float32: the f32 weights, whatever storage the model file asks for."""
    with open(path) as f:
        doc = json.load(f)
    if doc.get("kind") != "rbm":
        sys.exit(f"limits.py: {path} is not an RBM model file")
    w = doc["W"]
    if isinstance(w, str):
        w = np.load(os.path.join(os.path.dirname(os.path.abspath(path)), w))
    return np.ascontiguousarray(np.asarray(w, dtype=np.float32))


def cmd_floor(args):
    w = load_weights(args.model)
    h, v = w.shape
    rng = np.random.default_rng(0)
    if args.chains == 1:
        x = (rng.random(v) < 0.5).astype(np.float32)
        y = np.empty(h, dtype=np.float32)
        kind = "gemv"
    else:
        x = (rng.random((v, args.chains)) < 0.5).astype(np.float32)
        y = np.empty((h, args.chains), dtype=np.float32)
        kind = "gemm"

    def loop(n):
        t = time.perf_counter()
        for _ in range(n):
            np.matmul(w, x, out=y)
        return time.perf_counter() - t

    loop(max(1, int(0.05 / max(loop(10) / 10, 1e-9))))  # warm-up
    n = max(1, int(args.target / max(loop(10) / 10, 1e-9)))
    times = [loop(n) / n / args.chains * 1e9 for _ in range(args.repeats)]
    print(
        json.dumps(
            {
                "case": args.case,
                "impl": kind,
                "ns_per_chain": statistics.median(times),
                "ns_min": min(times),
                "ns_max": max(times),
            }
        )
    )


def fmt_ns(ns):
    if ns >= 1e3:
        return f"{ns / 1e3:.3g} µs".replace("e+", "e")
    return f"{ns:.3g} ns"


def cmd_table(args):
    rows = [json.loads(line) for line in open(args.results) if line.strip()]
    cases = []
    for r in rows:
        if r["case"] not in cases:
            cases.append(r["case"])
    print("| case | langevin (median) | floor (median) | langevin / floor | runs |")
    print("|---|---|---|---|---|")
    for case in cases:
        ours = [r["ns_per_chain"] for r in rows if r["case"] == case and r["impl"] == "langevin"]
        floor = [r for r in rows if r["case"] == case and r["impl"] != "langevin"]
        if not ours or not floor:
            continue
        kind = floor[0]["impl"]
        f = statistics.median(r["ns_per_chain"] for r in floor)
        o = statistics.median(ours)
        print(
            f"| {case} | {fmt_ns(o)} | {fmt_ns(f)} ({kind}) | {o / f:.2f}× | {len(ours)} / {len(floor)} |"
        )
    # Low-precision weights against f32, round by round (the n-th run of each case).
    for case in cases:
        if "bf16" not in case:
            continue
        base = case.replace("bf16", "f32")
        low = [r["ns_per_chain"] for r in rows if r["case"] == case and r["impl"] == "langevin"]
        f32 = [r["ns_per_chain"] for r in rows if r["case"] == base and r["impl"] == "langevin"]
        if low and f32:
            paired = statistics.median(a / b for a, b in zip(low, f32))
            print(f"\n{case} / {base}: {paired:.2f}× (median of {min(len(low), len(f32))} rounds)")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("floor", help="time one product with the model's W")
    f.add_argument("--model", required=True)
    f.add_argument("--case", required=True)
    f.add_argument("--chains", type=int, default=1)
    f.add_argument("--repeats", type=int, default=5)
    f.add_argument("--target", type=float, default=0.2)
    t = sub.add_parser("table", help="print the markdown table of a results file")
    t.add_argument("results")
    args = p.parse_args()
    {"floor": cmd_floor, "table": cmd_table}[args.cmd](args)


if __name__ == "__main__":
    main()
