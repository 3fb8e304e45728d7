"""Discrete MCMC samplers (DMALA, DULA, Gibbs-with-gradients, ...) for binary, ordinal and
categorical models, from Python.

* ``load_model(path)`` reads a model file (any kind ``langevin model`` writes);
* ``Ising(J, h)``, ``Rbm(W, b, c)``, ``Potts(J, h)``, ... (``langevin.models``) build the same
  models from NumPy arrays;
* ``BinaryTarget(d, logp_grad)`` wraps a NumPy log-density over ``{0, 1}^d`` whose
  ``logp_grad(X)`` evaluates a batch of states at once;
* ``sample(target, sampler=..., steps=..., burn_in=..., chains=..., seed=..., **params)`` runs
  the chains with the command line's sampler names, parameters and defaults, and returns a
  ``Result`` with the draws as a NumPy array ``(chains, draws, d)`` and the summary as a dict.

On a model file, ``sample`` runs the code ``langevin sample`` runs: the draws are those its
``--out`` file holds for the same model, sampler, parameters and seed, bit for bit.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from . import _langevin
from ._langevin import Model, load_model
from .models import (
    BinaryLogistic,
    BinaryQuadratic,
    Ising,
    IsingLattice,
    LatticeMixture,
    OrdinalQuadratic,
    Potts,
    QuarticMixture,
    Rbm,
)

__all__ = [
    "BinaryLogistic",
    "BinaryQuadratic",
    "BinaryTarget",
    "CompiledTarget",
    "Ising",
    "IsingLattice",
    "LatticeMixture",
    "Model",
    "OrdinalQuadratic",
    "Potts",
    "QuarticMixture",
    "Rbm",
    "Result",
    "load_model",
    "sample",
    "samplers",
]
__version__ = _langevin.__version__


def __getattr__(name: str) -> Any:
    # ``langevin.dask`` is imported on first use: it needs nothing until then.
    if name == "dask":
        import importlib

        return importlib.import_module(".dask", __name__)
    raise AttributeError(f"module 'langevin' has no attribute {name!r}")


def samplers() -> list[str]:
    """The sampler names ``sample`` takes, in the command line's order."""
    return list(_langevin.samplers())


class BinaryTarget:
    """A log-density over binary states ``x in {0, 1}^d`` given by a Python function.

    ``logp_grad(X)`` receives an ``(n, d)`` ``uint8`` array holding the states of ``n`` chains
    (every chain waiting for an evaluation: one call serves all chains of a step) and returns
    ``(logp, grad)``: ``logp`` of shape ``(n,)``, the log-densities (up to a constant; higher is
    more likely), and ``grad`` of shape ``(n, d)``, the gradient of a differentiable extension
    of ``logp`` to real ``x`` (for a quadratic ``x @ W @ x / 2 + b @ x``: ``x @ W + b``).

    The function must be pure: a chain's draws are replayed bit for bit from the seed only if
    the same state always gives the same values. A non-finite value at a proposed state rejects
    the proposal; an exception stops the run and is raised by ``sample``.
    """

    def __init__(self, d: int, logp_grad: Callable[[np.ndarray], tuple[Any, Any]]):
        d = int(d)
        if d < 1:
            raise ValueError("a target needs at least 1 coordinate")
        if not callable(logp_grad):
            raise TypeError("logp_grad must be callable")
        self.dim = d
        self.logp_grad = logp_grad

    def __repr__(self) -> str:
        return f"BinaryTarget(d={self.dim}, logp_grad={self.logp_grad!r})"

    def _call(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The user's function, its output checked and made contiguous float64."""
        out = self.logp_grad(x)
        try:
            logp, grad = out
        except (TypeError, ValueError):
            raise TypeError(
                f"logp_grad must return a pair (logp, grad), not {type(out).__name__}"
            ) from None
        n, d = x.shape
        logp = np.ascontiguousarray(logp, dtype=np.float64).reshape(-1)
        grad = np.ascontiguousarray(grad, dtype=np.float64)
        if logp.shape != (n,):
            raise ValueError(f"logp_grad returned logp of {logp.size} values for {n} states")
        if grad.shape != (n, d):
            raise ValueError(
                f"logp_grad returned grad of shape {grad.shape}, expected {(n, d)}"
            )
        return logp, grad


class CompiledTarget:
    """A log-density over binary states given as a compiled C function, called from the worker
    threads without the GIL:

    ``int32_t logp(void *user, const uint8_t *x, size_t dim, double *log_density, float *grad)``

    It writes ``U(x)`` to ``*log_density`` and the ``dim`` gradient entries to ``grad``, and
    returns 0 (ok), 1 (reject this proposal: the chain stays where it is) or another code (stop
    the run: ``sample`` raises ``RuntimeError`` naming it).

    ``function`` is the function's address (an ``int``), a ctypes function pointer (from a
    loaded library or ``CFUNCTYPE``), or anything with an integer ``address`` attribute (a
    numba ``cfunc``). ``user`` is passed as the first argument: an ``int`` address, a ctypes
    object or a NumPy array (its data pointer); the caller keeps it alive during the run.

    The function must be pure in ``(x, user)`` and safe to call from several threads at once
    (each chain runs on its own worker), and must not unwind through its caller. Nothing can
    check that the address is such a function: a wrong one crashes the interpreter.
    """

    def __init__(self, d: int, function: Any, user: Any = None):
        d = int(d)
        if d < 1:
            raise ValueError("a target needs at least 1 coordinate")
        self.dim = d
        self.function = function
        self.user = user
        self.address = _address(function)
        self.user_address = 0 if user is None else _address(user)

    def __repr__(self) -> str:
        return f"CompiledTarget(d={self.dim}, address={self.address:#x})"


def _address(obj: Any) -> int:
    """The address of a function or data: an int, a ctypes object, a NumPy array or an object
    with an ``address`` attribute."""
    import ctypes

    if isinstance(obj, int):
        return obj
    if isinstance(obj, np.ndarray):
        return int(obj.ctypes.data)
    if hasattr(obj, "address") and isinstance(obj.address, int):
        return int(obj.address)
    try:
        return int(ctypes.cast(obj, ctypes.c_void_p).value or 0)
    except (TypeError, ctypes.ArgumentError):
        pass
    try:
        return int(ctypes.addressof(obj))
    except TypeError:
        raise TypeError(f"cannot take the address of a {type(obj).__name__}") from None


@dataclass
class Result:
    """The outcome of ``sample``.

    * ``draws``: the kept draws, ``(chains, draws, d)`` (``uint8``; ``int32`` for label models
      with more than 256 values per coordinate);
    * ``log_density``: ``U`` at each kept draw, ``(chains, draws)`` (NaN where the sampler does
      not track it: Gibbs on a model's single-site fast path);
    * ``summary``: the fields of ``langevin sample``'s summary (acceptance rate, ESS, R-hat, ...);
    * ``calls``: calls of a Python target's function (0 for a model file).
    """

    draws: np.ndarray
    log_density: np.ndarray
    summary: dict
    calls: int = 0
    _meta: dict = field(default_factory=dict, repr=False)

    def to_arviz(self):
        """The draws as ArviZ data: posterior variable ``x`` with dims ``(chain, draw,
        x_dim_0)`` and the log-density as sample statistic ``lp``. Needs ``arviz`` (the
        ``arviz`` extra)."""
        try:
            import arviz
        except ImportError as e:  # pragma: no cover - depends on the environment
            raise ImportError(
                "to_arviz() needs arviz: pip install 'langevin[arviz]'"
            ) from e
        posterior = {"x": self.draws}
        stats = {"lp": self.log_density}
        attrs = {
            "sampler": self.summary.get("sampler"),
            "model": self.summary.get("model"),
            "seed": self.summary.get("seed"),
            "inference_library": "langevin",
        }
        try:
            return arviz.from_dict(
                posterior=posterior, sample_stats=stats, attrs=attrs
            )
        except TypeError:
            # ArviZ >= 1.0 takes groups as one dict and returns a DataTree.
            return arviz.from_dict(
                {"posterior": posterior, "sample_stats": stats}
            )


def _threads(threads: int | None) -> int:
    if threads is None:
        return os.cpu_count() or 1
    if int(threads) < 1:
        raise ValueError("threads must be at least 1")
    return int(threads)


def sample(
    target: Model | BinaryTarget | CompiledTarget,
    sampler: str = "dmala",
    steps: int = 10_000,
    burn_in: int = 1_000,
    chains: int = 4,
    seed: int = 0,
    thin: int = 1,
    threads: int | None = None,
    batch: int | None = None,
    diagnostics: str = "full",
    first_chain: int = 0,
    checkpoint: str | os.PathLike | None = None,
    checkpoint_every: float = 60.0,
    resume: str | os.PathLike | None = None,
    **params: Any,
) -> Result:
    """Samples ``target`` (a ``Model`` from ``load_model`` or built from arrays, a
    ``BinaryTarget`` or a ``CompiledTarget``).

    ``sampler`` is one of ``samplers()``; ``steps`` (kept, before thinning), ``burn_in``,
    ``chains``, ``seed``, ``thin``, ``threads`` and ``batch`` mean what the command line's
    flags mean, with its defaults, and so do the sampler parameters given as keywords (the
    flags' names with ``_`` for ``-``: ``step=0.3``, ``balance=0.5``, ``scan="random"``,
    ``a_ceil=5``, ``path_length="auto"``, ...). A keyword the sampler does not read is a
    ``TypeError``. ``diagnostics`` is ``"full"``, ``"summary"`` or ``"none"``.

    ``first_chain=K`` runs chains ``K .. K+chains-1`` of a run of ``K+chains`` chains (a shard),
    each with the draws it has there, bit for bit (with ``batch``, ``K`` is a multiple of it);
    ``langevin.dask.sample`` runs blocks of chains so on a cluster and merges them.

    ``checkpoint=path`` saves every chain's state, kernel and tuner state, random-stream
    position and kept draws to ``path`` every ``checkpoint_every`` seconds (written whole, never
    half); the same call with ``resume=path`` continues from it, and a run stopped any number of
    times (Ctrl-C, an exception in the target's function, the process killed) and resumed gives
    exactly the draws of an uninterrupted run. A checkpoint of another target, sampler, option,
    seed or version is refused (``ValueError`` naming what differs). The file of a model built
    from arrays is matched by the arrays' values; a function's (``BinaryTarget``,
    ``CompiledTarget``) by its dimension, and on resume by ``U`` at every restored state, which
    must equal the saved value bit for bit.

    On a model file the draws are those of ``langevin sample --out`` for the same arguments;
    the chains run with the GIL released, and Ctrl-C stops them within about 100 ms and raises
    ``KeyboardInterrupt``.
    On a ``BinaryTarget`` the chains step in lockstep, one call of its function evaluating
    every chain waiting; the GIL is released between calls, Ctrl-C stops the run within about
    100 ms, and an exception raised by the function is raised here.
    """
    steps, burn_in, chains, seed, thin = (
        int(steps),
        int(burn_in),
        int(chains),
        int(seed),
        int(thin),
    )
    first_chain = int(first_chain)
    for name, value in (
        ("steps", steps),
        ("burn_in", burn_in),
        ("seed", seed),
        ("first_chain", first_chain),
    ):
        if value < 0:
            raise ValueError(f"{name} must be at least 0")
    saves = dict(
        checkpoint=None if checkpoint is None else os.fspath(checkpoint),
        checkpoint_every=float(checkpoint_every),
        resume=None if resume is None else os.fspath(resume),
    )
    # The settings of every run, in the order the extension takes them.
    run = (sampler, steps, burn_in, chains, seed, thin)
    if isinstance(target, Model):
        draws, lp, summary = _langevin.sample_model(
            target,
            *run,
            _threads(threads),
            None if batch is None else int(batch),
            diagnostics,
            params,
            first_chain,
            **saves,
        )
        return Result(draws, lp, json.loads(summary))
    if isinstance(target, BinaryTarget):
        if batch is not None:
            raise ValueError("batch applies to model files; a Python target is always batched")
        draws, lp, summary, calls = _langevin.sample_callback(
            target.dim,
            target._call,
            *run,
            diagnostics,
            params,
            first_chain,
            **saves,
        )
        return Result(draws, lp, json.loads(summary), calls)
    if isinstance(target, CompiledTarget):
        if batch is not None:
            raise ValueError("batch applies to model files")
        if first_chain != 0:
            raise ValueError("first_chain applies to model files and BinaryTarget")
        draws, lp, summary = _langevin.sample_compiled(
            target.dim,
            target.address,
            target.user_address,
            *run,
            _threads(threads),
            diagnostics,
            params,
            **saves,
        )
        return Result(draws, lp, json.loads(summary))
    raise TypeError(
        "sample() takes a Model (load_model), a BinaryTarget or a CompiledTarget, not "
        f"{type(target).__name__}"
    )
