"""Chains per second of ``langevin.dask.sample`` against the number of workers of a
``LocalCluster`` (one thread each), next to ``langevin.sample`` on one machine, and the
overhead per task.

With ``--checkpoint-every S``, also the same runs with ``checkpoint_dir`` (every task saving its
chains every ``S`` seconds into a temporary folder).

Usage: python dask_scaling.py MODEL.json [--chains 16] [--per-task 2] [--steps 20000] [--repeats 3]
       [--checkpoint-every S]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time

import numpy as np

import langevin


def timed(f, repeats: int) -> float:
    """The median wall time of ``f()`` over ``repeats`` runs (after one warm-up run)."""
    f()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        f()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    from dask.distributed import Client, LocalCluster

    p = argparse.ArgumentParser()
    p.add_argument("model")
    p.add_argument("--chains", type=int, default=16)
    p.add_argument("--per-task", type=int, default=2)
    p.add_argument("--steps", type=int, default=20_000)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--checkpoint-every", type=float, default=None)
    a = p.parse_args()
    model = langevin.load_model(a.model)
    opts = dict(sampler="dmala", step=0.3, steps=a.steps, burn_in=0, seed=1, diagnostics="none")
    here = {}
    for threads in (1, 2):
        t = timed(lambda: langevin.sample(model, chains=a.chains, threads=threads, **opts), a.repeats)
        here[threads] = t
        print(f"langevin.sample, {threads} thread(s): {t:.3f} s, {a.chains / t:.1f} chains/s")
    reference = langevin.sample(model, chains=a.chains, threads=1, **opts).draws
    for workers in (1, 2):
        with LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster, Client(cluster) as client:
            run = lambda: langevin.dask.sample(
                model, client=client, chains=a.chains, chains_per_task=a.per_task, **opts
            )
            t = timed(run, a.repeats)
            assert np.array_equal(run().draws, reference)
            tasks = -(-a.chains // a.per_task)
            print(
                f"dask, {workers} worker(s), {tasks} tasks of {a.per_task} chains: {t:.3f} s, "
                f"{a.chains / t:.1f} chains/s (draws equal to langevin.sample's)"
            )
            if a.checkpoint_every is not None:
                with tempfile.TemporaryDirectory() as folder:
                    saved = lambda: langevin.dask.sample(
                        model,
                        client=client,
                        chains=a.chains,
                        chains_per_task=a.per_task,
                        checkpoint_dir=folder,
                        checkpoint_every=a.checkpoint_every,
                        **opts,
                    )
                    tc = timed(saved, a.repeats)
                    assert np.array_equal(saved().draws, reference)
                print(
                    f"dask, {workers} worker(s), checkpoints every {a.checkpoint_every} s: "
                    f"{tc:.3f} s ({tc / t:.2f}x without)"
                )
            # Overhead per task: 64 one-chain tasks of one step each, on a warm cluster.
            tiny = dict(opts, steps=1)
            n = 64
            t = timed(
                lambda: langevin.dask.sample(model, client=client, chains=n, chains_per_task=1, **tiny),
                a.repeats,
            )
            local = timed(lambda: langevin.sample(model, chains=1, threads=1, **tiny), a.repeats)
            print(
                f"dask, {workers} worker(s): {n} one-step tasks in {t:.3f} s: "
                f"{1e3 * (t * workers / n - local):.2f} ms overhead per task per worker "
                f"(one-step run here: {1e3 * local:.2f} ms)"
            )


if __name__ == "__main__":
    main()
