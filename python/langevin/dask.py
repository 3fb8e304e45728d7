"""Chains on the workers of a Dask cluster, merged into the result of one run.

``sample(target, client=client, chains=C, chains_per_task=k, **options)`` sends the chains in
blocks of ``k`` (the last one shorter) to the workers of a ``dask.distributed`` client: each task
runs ``langevin.sample(target, chains=n, first_chain=K, **options)``, which draws what chains
``K .. K+n-1`` draw in one run of all the chains (every chain has its own random stream, keyed by
the seed and its index). The blocks are gathered in chain order, their draws joined and the
summary recomputed from the joined draws by the code ``langevin.sample`` uses: the result is
``langevin.sample(target, chains=C, **options)``'s, draws bit for bit, whatever the number of
workers, the block size or the order the tasks finish in.

What travels to the workers:

* a ``Model`` (``load_model``) travels as its path: every worker reads the model file (and the
  array files it names), so they must see the same files (a shared file system, as on a
  cluster);
* a ``BinaryTarget`` travels by pickling (Dask uses cloudpickle): its function, and what the
  function refers to (NumPy arrays, closures, lambdas, functions defined in ``__main__`` or a
  notebook) are sent with it. A function that holds something that cannot be pickled — an open
  file or socket, a lock, a live extension object such as a GPU array or a ``Model``, a
  database connection — cannot travel: build it inside the function on first use instead;
* a ``CompiledTarget`` cannot travel: it holds the address of a function in this process's
  memory, which means nothing in another process. Give the workers a ``BinaryTarget`` or a
  model file instead.

A task lost with its worker is run again from the start of its block (``retries`` times): its
chains draw the same values again, so the result does not change.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from . import BinaryTarget, CompiledTarget, Model, Result, _langevin, load_model
from . import sample as _sample_here

__all__ = ["sample"]


def _block(kind: str, payload: Any, first: int, chains: int, options: dict) -> tuple:
    """One task: chains ``first .. first+chains-1``, without diagnostics (they are computed on
    the merged draws)."""
    target = load_model(payload) if kind == "model" else payload
    r = _sample_here(target, chains=chains, first_chain=first, diagnostics="none", **options)
    return r.draws, r.log_density, json.dumps(r.summary), r.calls


def sample(
    target: Model | BinaryTarget,
    *,
    client: Any,
    chains: int = 4,
    chains_per_task: int = 1,
    retries: int = 2,
    diagnostics: str = "full",
    **options: Any,
) -> Result:
    """Runs ``chains`` chains of ``target`` on ``client``'s workers, ``chains_per_task`` per
    task, and returns what ``langevin.sample(target, chains=chains, **options)`` returns (the
    same draws, log-densities and summary statistics; the wall-clock figures are the sums of
    the tasks'). ``options`` are ``langevin.sample``'s keywords (``sampler``, ``steps``,
    ``seed``, ``threads`` per task (default 1), ``batch``, the sampler's parameters, ...).

    Raises ``TypeError`` for a target that cannot travel (a ``CompiledTarget``) and
    ``ValueError`` for ``chains`` or ``chains_per_task`` below 1, or a ``chains_per_task`` that
    is not a multiple of ``batch``.
    """
    chains, per_task = int(chains), int(chains_per_task)
    if chains < 1:
        raise ValueError("chains must be at least 1")
    if per_task < 1:
        raise ValueError("chains_per_task must be at least 1")
    batch = options.get("batch")
    if batch is not None and per_task % int(batch) != 0:
        raise ValueError(
            f"chains_per_task={per_task} with batch={batch}: a block of lockstep chains starts "
            "at a group, so chains_per_task must be a multiple of batch"
        )
    if "first_chain" in options:
        raise TypeError("first_chain is set per task; give chains and chains_per_task")
    if isinstance(target, CompiledTarget):
        raise TypeError(
            "a CompiledTarget holds a function address valid only in this process and cannot "
            "be sent to Dask workers; use a BinaryTarget or a model file"
        )
    if isinstance(target, Model):
        kind, payload = "model", target.path
    elif isinstance(target, BinaryTarget):
        kind, payload = "target", target
    else:
        raise TypeError(
            f"langevin.dask.sample() takes a Model or a BinaryTarget, not {type(target).__name__}"
        )
    options.setdefault("threads", 1)
    starts = range(0, chains, per_task)
    futures = [
        client.submit(
            _block,
            kind,
            payload,
            first,
            min(per_task, chains - first),
            options,
            pure=False,
            retries=int(retries),
        )
        for first in starts
    ]
    blocks = client.gather(futures)
    draws = np.concatenate([b[0] for b in blocks], axis=0)
    log_density = np.concatenate([b[1] for b in blocks], axis=0)
    summary = _langevin.merge_summaries(draws, [b[2] for b in blocks], diagnostics)
    return Result(draws, log_density, json.loads(summary), sum(b[3] for b in blocks))
