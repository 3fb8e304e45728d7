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

A task lost with its worker (the scheduler runs it again elsewhere) or failed with an exception
(run again up to ``retries`` times) starts over from the start of its block, or, with
``checkpoint_dir``, from the last checkpoint its block saved there: every ``checkpoint_every``
seconds each task saves its chains (``langevin.sample``'s ``checkpoint``) to a file of its own
in that folder, which every worker must see (a shared file system on a cluster), and the task
run again resumes from it. Either way the chains draw exactly what they would have drawn, so
the result does not change. The files are removed once every block is gathered; those of a
call that did not finish stay, and the same call made again continues from them.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

import numpy as np

from . import BinaryTarget, CompiledTarget, Model, Result, _langevin, load_model
from . import sample as _sample_here

__all__ = ["sample"]


def _block(
    kind: str, payload: Any, first: int, chains: int, options: dict, saves: tuple | None
) -> tuple:
    """One task: chains ``first .. first+chains-1``, without diagnostics (they are computed on
    the merged draws); with ``saves = (path, every)``, checkpointed to ``path`` and resumed from
    it when an earlier attempt left one."""
    target = load_model(payload) if kind == "model" else payload
    if saves is not None:
        path, every = saves
        resume = path if os.path.exists(path) else None
        options = dict(options, checkpoint=path, checkpoint_every=every, resume=resume)
    r = _sample_here(target, chains=chains, first_chain=first, diagnostics="none", **options)
    return r.draws, r.log_density, json.dumps(r.summary), r.calls


def _checkpoint_files(
    folder: str | os.PathLike, kind: str, payload: Any, chains: int, per_task: int, options: dict
) -> dict[int, str]:
    """The checkpoint file of each block (by its first chain): named after a hash of the call,
    so that calls on other targets or options never meet one another's files, and the same call
    made again finds its own."""
    import cloudpickle

    identity = payload if kind == "model" else cloudpickle.dumps(payload)
    key = hashlib.sha256(
        repr((kind, identity, chains, per_task, sorted(options.items()))).encode()
    ).hexdigest()[:16]
    folder = os.fspath(folder)
    return {
        first: os.path.join(folder, f"langevin-{key}-chains-{first}.ckpt")
        for first in range(0, chains, per_task)
    }


def sample(
    target: Model | BinaryTarget,
    *,
    client: Any,
    chains: int = 4,
    chains_per_task: int = 1,
    retries: int = 2,
    checkpoint_dir: str | os.PathLike | None = None,
    checkpoint_every: float = 60.0,
    diagnostics: str = "full",
    **options: Any,
) -> Result:
    """Runs ``chains`` chains of ``target`` on ``client``'s workers, ``chains_per_task`` per
    task, and returns what ``langevin.sample(target, chains=chains, **options)`` returns (the
    same draws, log-densities and summary statistics; the wall-clock figures are the sums of
    the tasks'). ``options`` are ``langevin.sample``'s keywords (``sampler``, ``steps``,
    ``seed``, ``threads`` per task (default 1), ``batch``, the sampler's parameters, ...).

    With ``checkpoint_dir`` (a folder every worker sees), each task saves its chains there
    every ``checkpoint_every`` seconds, and a task run again (its worker lost, or an exception
    retried) continues from its last checkpoint instead of from the start.

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
    for name in ("first_chain", "checkpoint", "resume"):
        if name in options:
            raise TypeError(
                f"{name} is set per task; give chains, chains_per_task and checkpoint_dir"
            )
    if isinstance(target, CompiledTarget):
        raise TypeError(
            "a CompiledTarget holds a function address valid only in this process and cannot "
            "be sent to Dask workers; use a BinaryTarget or a model file"
        )
    if isinstance(target, Model):
        if target.path is None:
            raise TypeError(
                "a model built from arrays lives in this process and cannot be sent to Dask "
                "workers; write its fields to a model file (the JSON `langevin model` writes) and "
                "load_model() it"
            )
        kind, payload = "model", target.path
    elif isinstance(target, BinaryTarget):
        kind, payload = "target", target
    else:
        raise TypeError(
            f"langevin.dask.sample() takes a Model or a BinaryTarget, not {type(target).__name__}"
        )
    options.setdefault("threads", 1)
    starts = range(0, chains, per_task)
    files: dict[int, str] = {}
    if checkpoint_dir is not None:
        if not os.path.isdir(checkpoint_dir):
            raise ValueError(f"checkpoint_dir {os.fspath(checkpoint_dir)!r} is not a folder")
        files = _checkpoint_files(checkpoint_dir, kind, payload, chains, per_task, options)
    every = float(checkpoint_every)
    futures = [
        client.submit(
            _block,
            kind,
            payload,
            first,
            min(per_task, chains - first),
            options,
            (files[first], every) if files else None,
            pure=False,
            retries=int(retries),
        )
        for first in starts
    ]
    blocks = client.gather(futures)
    for path in files.values():
        try:
            os.remove(path)
        except FileNotFoundError:
            pass
    draws = np.concatenate([b[0] for b in blocks], axis=0)
    log_density = np.concatenate([b[1] for b in blocks], axis=0)
    summary = _langevin.merge_summaries(draws, [b[2] for b in blocks], diagnostics)
    return Result(draws, log_density, json.loads(summary), sum(b[3] for b in blocks))
