#!/usr/bin/env python3
"""DMALA in NumPy, in PyTorch with analytic gradients and under `torch.compile`, timed per
chain-step on a `langevin` model file (kinds `rbm` and `ising_lattice`).

    peers.py time --model rbm.json --chains 100 --step 0.4 [--impl numpy,torch,compile]
    peers.py rbm-arrays --visible 784 --hidden 500 --out DIR    (W ~ N(0, 0.01²), b, c ~ N(0, 1))
    peers.py table results.jsonl                                (the markdown table)

Conventions are the project's: `U` is the log-density over x ∈ {0,1}^d, the gradient is taken
with respect to x, and one DMALA step at step `a` and balance `b` flips coordinate i with
probability σ(l_i), l_i = b g_i (1 − 2 x_i) − 1/(2a), then accepts with probability
min(1, exp(U(x') − U(x) + log q(x|x') − log q(x'|x))). U and ∇U of the current state are kept,
so a step costs one evaluation. All arithmetic is single precision, as in the library.
"""

import argparse
import json
import math
import os
import statistics
import sys
import time

import numpy as np

BALANCE = 0.5


# --------------------------------------------------------------------------- model files


def load_array(value, folder):
    """A model-file array: inline nested lists, or the name of a `.npy` file beside the JSON."""
    if isinstance(value, str):
        return np.load(os.path.join(folder, value))
    return np.asarray(value, dtype=np.float64)


def load_model(path):
    """The model of a `langevin` model file, as single-precision arrays."""
    with open(path) as f:
        doc = json.load(f)
    folder = os.path.dirname(os.path.abspath(path))
    kind = doc["kind"]
    if kind == "rbm":
        return {
            "kind": "rbm",
            "W": load_array(doc["W"], folder).astype(np.float32),
            "b": load_array(doc["b"], folder).astype(np.float32),
            "c": load_array(doc["c"], folder).astype(np.float32),
        }
    if kind == "ising_lattice":
        rows, cols = int(doc["rows"]), int(doc["cols"])
        periodic = bool(doc.get("periodic", True))
        if not (periodic and rows >= 3 and cols >= 3):
            sys.exit("peers.py: only periodic lattices with both sides >= 3 are implemented")
        return {
            "kind": "ising_lattice",
            "rows": rows,
            "cols": cols,
            "J": np.float32(doc["coupling"]),
            "h": np.float32(doc.get("field", 0.0)),
        }
    sys.exit(f"peers.py: model kind `{kind}` is not implemented")


def lattice_neighbours(rows, cols):
    """Periodic neighbour indices, row-major sites: (right, down, left, up), each shape (d,)."""
    r, c = np.divmod(np.arange(rows * cols), cols)
    right = r * cols + (c + 1) % cols
    down = ((r + 1) % rows) * cols + c
    left = r * cols + (c - 1) % cols
    up = ((r - 1) % rows) * cols + c
    return right, down, left, up


# --------------------------------------------------------------------------- NumPy


def np_sigmoid(z):
    return np.float32(0.5) * np.tanh(np.float32(0.5) * z) + np.float32(0.5)


def np_log_sigmoid(z):
    # log σ(z) = −softplus(−z) = min(z, 0) − log1p(exp(−|z|))
    return np.minimum(z, 0) - np.log1p(np.exp(-np.abs(z)))


def np_softplus(z):
    return np.maximum(z, 0) + np.log1p(np.exp(-np.abs(z)))


class NumpyDmala:
    """A batch of DMALA chains; rows of `x` are chains."""

    def __init__(self, model, chains, step, seed):
        self.rng = np.random.default_rng(seed)
        self.half_inv = np.float32(0.5 / step)
        if model["kind"] == "rbm":
            self.W = np.ascontiguousarray(model["W"])
            self.WT = np.ascontiguousarray(model["W"].T)
            self.b, self.c = model["b"], model["c"]
            self.evaluate = self._rbm
            d = self.W.shape[1]
        else:
            self.J, self.h = model["J"], model["h"]
            right, down, left, up = lattice_neighbours(model["rows"], model["cols"])
            self.fwd = np.concatenate([right, down])  # each bond once
            self.nbr = np.stack([right, down, left, up], axis=1).reshape(-1)
            self.evaluate = self._ising
            d = model["rows"] * model["cols"]
        self.d = d
        self.x = (self.rng.random((chains, d)) < 0.5).astype(np.float32)
        self.U, self.g = self.evaluate(self.x)
        self.accepted = 0
        self.proposed = 0

    def _rbm(self, x):
        pre = x @ self.WT + self.c  # (B, hidden)
        U = np_softplus(pre).sum(axis=1) + x @ self.b
        g = np_sigmoid(pre) @ self.W + self.b
        return U, g

    def _ising(self, x):
        s = 2 * x - 1
        B = s.shape[0]
        bonds = s[:, self.fwd].reshape(B, 2, -1).sum(axis=1)
        U = self.J * (s * bonds).sum(axis=1) + self.h * s.sum(axis=1)
        nb = s[:, self.nbr].reshape(B, -1, 4).sum(axis=2)
        g = 2 * (self.J * nb + self.h)
        return U, g

    def run(self, steps):
        rng, half_inv, b = self.rng, self.half_inv, np.float32(BALANCE)
        x, U, g = self.x, self.U, self.g
        accepted = 0
        for _ in range(steps):
            sign = 1 - 2 * x
            l = b * g * sign - half_inv
            flip = rng.random(x.shape, dtype=np.float32) < np_sigmoid(l)
            y = np.where(flip, 1 - x, x)
            # Σ_i [flip ? log σ(l_i) : log σ(−l_i)], with log σ(−l) = log σ(l) − l.
            fwd = (np_log_sigmoid(l) - np.where(flip, 0, l)).sum(axis=1)
            U2, g2 = self.evaluate(y)
            l2 = b * g2 * (1 - 2 * y) - half_inv
            rev = (np_log_sigmoid(l2) - np.where(flip, 0, l2)).sum(axis=1)
            log_alpha = U2 - U + rev - fwd
            acc = np.log(rng.random(x.shape[0])) < log_alpha
            accepted += int(acc.sum())
            a = acc[:, None]
            x = np.where(a, y, x)
            g = np.where(a, g2, g)
            U = np.where(acc, U2, U)
        self.x, self.U, self.g = x, U, g
        self.accepted += accepted
        self.proposed += steps * x.shape[0]


# --------------------------------------------------------------------------- PyTorch


def torch_step_fn(model, step, torch):
    """A function (x, U, g, u, v) -> (x, U, g, accepted count) doing one DMALA step, with
    uniforms `u` (chains × d, the flips) and `v` (chains, the Metropolis test) drawn by the
    caller: under `torch.compile` that is faster than drawing inside the compiled graph."""
    F = torch.nn.functional
    half_inv = 0.5 / step
    b = BALANCE
    if model["kind"] == "rbm":
        W = torch.from_numpy(np.ascontiguousarray(model["W"]))
        bv = torch.from_numpy(model["b"])
        c = torch.from_numpy(model["c"])

        def evaluate(x):
            pre = F.linear(x, W, c)  # x Wᵀ + c
            U = F.softplus(pre).sum(dim=1) + x @ bv
            g = torch.sigmoid(pre) @ W + bv
            return U, g

    else:
        J, h = float(model["J"]), float(model["h"])
        rows, cols = model["rows"], model["cols"]

        def evaluate(x):
            s = (2 * x - 1).view(-1, rows, cols)
            right = torch.roll(s, -1, dims=2)
            down = torch.roll(s, -1, dims=1)
            U = J * (s * (right + down)).sum(dim=(1, 2)) + h * s.sum(dim=(1, 2))
            nb = right + down + torch.roll(s, 1, dims=2) + torch.roll(s, 1, dims=1)
            g = (2 * (J * nb + h)).view(x.shape[0], -1)
            return U, g

    def step_fn(x, U, g, u, v):
        l = b * g * (1 - 2 * x) - half_inv
        flip = u < torch.sigmoid(l)
        y = torch.where(flip, 1 - x, x)
        fwd = (F.logsigmoid(l) - torch.where(flip, 0.0, l)).sum(dim=1)
        U2, g2 = evaluate(y)
        l2 = b * g2 * (1 - 2 * y) - half_inv
        rev = (F.logsigmoid(l2) - torch.where(flip, 0.0, l2)).sum(dim=1)
        log_alpha = U2 - U + rev - fwd
        acc = torch.log(v) < log_alpha
        a = acc.unsqueeze(1)
        return (
            torch.where(a, y, x),
            torch.where(acc, U2, U),
            torch.where(a, g2, g),
            acc.sum(),
        )

    return evaluate, step_fn


class TorchDmala:
    def __init__(self, model, chains, step, seed, compiled):
        import torch

        self.torch = torch
        torch.manual_seed(seed)
        evaluate, step_fn = torch_step_fn(model, step, torch)
        d = model["W"].shape[1] if model["kind"] == "rbm" else model["rows"] * model["cols"]
        self.step_fn = (
            torch.compile(step_fn, fullgraph=True, dynamic=False) if compiled else step_fn
        )
        with torch.inference_mode():
            self.x = (torch.rand(chains, d) < 0.5).float()
            self.U, self.g = evaluate(self.x)
        self.accepted = 0
        self.proposed = 0

    def run(self, steps):
        torch = self.torch
        x, U, g = self.x, self.U, self.g
        counts = []
        with torch.inference_mode():
            for _ in range(steps):
                u = torch.rand(x.shape)
                v = torch.rand(x.shape[0])
                x, U, g, acc = self.step_fn(x, U, g, u, v)
                counts.append(acc)
            accepted = int(torch.stack(counts).sum()) if counts else 0
        self.x, self.U, self.g = x, U, g
        self.accepted += accepted
        self.proposed += steps * x.shape[0]


# --------------------------------------------------------------------------- timing


def time_impl(name, make, chains, warm_up, repeats, target_s):
    """Warm up, size a repeat to about `target_s` seconds, then time `repeats` repeats."""
    t0 = time.perf_counter()
    sampler = make()
    setup_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    sampler.run(warm_up)
    warm_s = time.perf_counter() - t0
    # A second, shorter warm-up for the estimate (the first may include compilation).
    probe = max(10, warm_up // 4)
    t0 = time.perf_counter()
    sampler.run(probe)
    per_step = (time.perf_counter() - t0) / probe
    steps = max(20, int(target_s / max(per_step, 1e-9)))
    sampler.accepted = sampler.proposed = 0
    ns, cpu = [], []
    for _ in range(repeats):
        c0 = time.process_time()
        t0 = time.perf_counter()
        sampler.run(steps)
        ns.append((time.perf_counter() - t0) * 1e9 / (steps * chains))
        cpu.append((time.process_time() - c0) * 1e9 / (steps * chains))
    return {
        "impl": name,
        "ns_per_chain_step": statistics.median(ns),
        "ns_min": min(ns),
        "ns_max": max(ns),
        "cpu_ns_per_chain_step": statistics.median(cpu),
        "steps_per_repeat": steps,
        "repeats": repeats,
        "acceptance": sampler.accepted / max(sampler.proposed, 1),
        "setup_s": setup_s,
        "warm_up_s": warm_s,
    }


def cmd_time(args):
    model = load_model(args.model)
    impls = [s for s in args.impl.split(",") if s]
    torch = None
    if any(i in ("torch", "compile") for i in impls):
        try:
            import torch
        except ImportError as e:
            print(f"peers.py: PyTorch not available ({e}); skipping its columns", file=sys.stderr)
            impls = [i for i in impls if i == "numpy"]
        else:
            torch.set_num_threads(args.threads)
            try:
                torch.set_num_interop_threads(1)
            except RuntimeError:
                pass
    makers = {
        "numpy": lambda: NumpyDmala(model, args.chains, args.step, args.seed),
        "torch": lambda: TorchDmala(model, args.chains, args.step, args.seed, compiled=False),
        "compile": lambda: TorchDmala(model, args.chains, args.step, args.seed, compiled=True),
    }
    for name in impls:
        try:
            r = time_impl(name, makers[name], args.chains, args.warm_up, args.repeats, args.target)
        except Exception as e:  # a peer that cannot run leaves an empty cell, not a dead run
            print(f"peers.py: {name} failed: {type(e).__name__}: {e}", file=sys.stderr)
            r = {"impl": name, "error": f"{type(e).__name__}: {e}"}
        r.update({"case": args.case, "model": os.path.basename(args.model), "chains": args.chains})
        print(json.dumps(r), flush=True)


def cmd_rbm_arrays(args):
    """W ~ N(0, scale²) (hidden × visible), b ~ N(0, 1), c ~ N(0, 1), float32 `.npy` files."""
    rng = np.random.default_rng(args.seed)
    W = (args.weight_scale * rng.standard_normal((args.hidden, args.visible))).astype(np.float32)
    b = rng.standard_normal(args.visible).astype(np.float32)
    c = rng.standard_normal(args.hidden).astype(np.float32)
    os.makedirs(args.out, exist_ok=True)
    for name, a in (("W", W), ("b", b), ("c", c)):
        np.save(os.path.join(args.out, f"rbm_{name}.npy"), a)


def fmt_ns(ns):
    if ns is None:
        return "–"
    if ns >= 1e5:
        return f"{ns / 1e3:,.0f} µs"
    if ns >= 1e4:
        return f"{ns / 1e3:.1f} µs"
    if ns >= 1e3:
        return f"{ns / 1e3:.2f} µs"
    return f"{ns:.0f} ns"


def cmd_table(args):
    """Markdown table from the JSON lines of `time` (peers) and of run.sh (`impl` = `langevin`)."""
    rows = {}
    order = []
    with open(args.results) as f:
        for line in f:
            line = line.strip()
            if not line.startswith("{"):
                continue
            r = json.loads(line)
            if r["case"] not in rows:
                rows[r["case"]] = {}
                order.append(r["case"])
            rows[r["case"]][r["impl"]] = r
    peers = ["numpy", "torch", "compile"]
    head = "| case | langevin | NumPy | PyTorch | `torch.compile` | best peer / langevin | acceptance: langevin / NumPy / PyTorch / compile |"
    print(head)
    print("|" + "---|" * 7)
    for case in order:
        r = rows[case]
        ours = r.get("langevin", {}).get("ns_per_chain_step")
        cells = []
        best = None
        for p in peers:
            ns = r.get(p, {}).get("ns_per_chain_step")
            cells.append(fmt_ns(ns))
            if ns is not None and (best is None or ns < best):
                best = ns
        ratio = f"{best / ours:.1f}×" if best is not None and ours else "–"
        acc = " / ".join(
            f"{r[k]['acceptance']:.3f}" if "acceptance" in r.get(k, {}) else "–"
            for k in ["langevin"] + peers
        )
        print(f"| {case} | {fmt_ns(ours)} | {' | '.join(cells)} | {ratio} | {acc} |")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("time", help="time DMALA implementations on a model file")
    t.add_argument("--model", required=True)
    t.add_argument("--case", default="", help="label of the table row")
    t.add_argument("--chains", type=int, default=1)
    t.add_argument("--step", type=float, default=0.4)
    t.add_argument("--impl", default="numpy,torch,compile")
    t.add_argument("--warm-up", type=int, default=200, help="untimed steps (compilation included)")
    t.add_argument("--repeats", type=int, default=7)
    t.add_argument("--target", type=float, default=0.5, help="seconds per timed repeat")
    t.add_argument("--threads", type=int, default=1, help="torch.set_num_threads")
    t.add_argument("--seed", type=int, default=0)
    a = sub.add_parser("rbm-arrays", help="write the RBM's W, b, c as .npy files")
    a.add_argument("--visible", type=int, default=784)
    a.add_argument("--hidden", type=int, default=500)
    a.add_argument("--weight-scale", type=float, default=0.01)
    a.add_argument("--seed", type=int, default=0)
    a.add_argument("--out", required=True)
    tb = sub.add_parser("table", help="print the markdown table of a results file")
    tb.add_argument("results")
    args = p.parse_args()
    {"time": cmd_time, "rbm-arrays": cmd_rbm_arrays, "table": cmd_table}[args.cmd](args)


if __name__ == "__main__":
    main()
