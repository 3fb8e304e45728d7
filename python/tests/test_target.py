"""Targets written in Python: the contract, exactness by enumeration, errors and Ctrl-C."""

from __future__ import annotations

import itertools
import math
import os
import signal
import statistics
import threading
import time

import numpy as np
import pytest

import langevin


def random_quadratic(d, seed, w_scale, b_scale):
    """A random binary quadratic model: a symmetric ``W`` with a zero diagonal and a ``b``, normal
    with the given scales from ``default_rng(seed)``, and ``logp_grad``, ``U(x) = x W x / 2 + b x``
    over a batch and its gradient ``W x + b`` (a closure over ``W`` and ``b``, which Dask sends by
    pickling)."""
    rng = np.random.default_rng(seed)
    w = rng.normal(scale=w_scale, size=(d, d))
    w = (w + w.T) / 2
    np.fill_diagonal(w, 0.0)
    b = rng.normal(scale=b_scale, size=d)

    def logp_grad(X):
        X = X.astype(np.float64)
        G = X @ w + b
        return np.einsum("ni,ni->n", X, 0.5 * (G + b)), G

    return w, b, logp_grad


D = 6
W, B, logp_grad = random_quadratic(D, 20261129, 0.6, 0.8)


def exact_probabilities(w=W, b=B):
    states = np.array(list(itertools.product([0, 1], repeat=D)), dtype=np.float64)
    u = 0.5 * np.einsum("ni,ij,nj->n", states, w, states) + states @ b
    p = np.exp(u - u.max())
    return states.astype(np.uint8), p / p.sum()


def test_the_contract():
    d = 10
    t = langevin.BinaryTarget(d, lambda X: (np.zeros(len(X)), np.zeros(X.shape)))
    r = langevin.sample(t, sampler="dmala", steps=20000, burn_in=1000, chains=4, seed=1, step=0.3)
    assert r.draws.shape == (4, 20000, d) and r.draws.dtype == np.uint8
    assert set(np.unique(r.draws)) <= {0, 1}
    assert isinstance(r.summary, dict)
    for key in ("sampler", "acceptance_rate", "evals", "rhat_max", "ess_min", "mean", "warnings"):
        assert key in r.summary, key
    assert r.summary["sampler"] == "dmala" and r.summary["step"] == 0.3
    # The uniform distribution: every proposal is accepted, each bit is 1 half the time.
    assert r.summary["acceptance_rate"] == 1.0
    assert abs(r.draws.mean() - 0.5) < 0.01
    # Lockstep: one call serves every chain's evaluation of a step, so there are at most as
    # many calls as steps (the start, burn-in and kept steps; one more per chain while the
    # chains start; a step that proposes no flip evaluates nothing), and at least a quarter of
    # the evaluations of the 4 chains.
    evals = r.summary["evals"]
    assert evals / 4 <= r.calls <= 1 + 1000 + 20000 + 4
    assert r.calls < evals / 2
    assert r.log_density.shape == (4, 20000)


def test_to_arviz():
    arviz = pytest.importorskip("arviz")
    r = langevin.sample(langevin.BinaryTarget(D, logp_grad), steps=200, chains=2, seed=3)
    data = r.to_arviz()
    x = data["posterior"]["x"]
    assert tuple(x.shape) == (2, 200, D)
    assert np.array_equal(np.asarray(x), r.draws)
    assert arviz is not None


def t_quantile(p: float, dof: int) -> float:
    """Student-t quantile from the normal one (Cornish-Fisher; Abramowitz and Stegun 26.7.5)."""
    z = statistics.NormalDist().inv_cdf(p)
    return (
        z
        + (z**3 + z) / (4 * dof)
        + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * dof**2)
        + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * dof**3)
    )


# Each sampler's run is checked on 64 state probabilities and 6 marginals (70 two-sided tests)
# at a family-wise false-positive rate of 1e-3 (Bonferroni). The chains are independent, so
# their per-chain estimates are independent draws of the estimator: a t-test over the chains
# with their empirical spread needs no autocorrelation estimate.
CHAINS = 48
FPR = 1e-3


@pytest.mark.parametrize(
    "sampler,params",
    [("dmala", {"step": 0.5}), ("gwg", {}), ("gibbs", {}), ("ab", {}), ("pas", {})],
)
def test_a_python_target_is_sampled_exactly(sampler, params):
    states, p = exact_probabilities()
    t = langevin.BinaryTarget(D, logp_grad)
    r = langevin.sample(
        t, sampler=sampler, steps=3000, burn_in=300, chains=CHAINS, seed=11, diagnostics="none", **params
    )
    index = r.draws.astype(np.int64) @ (1 << np.arange(D - 1, -1, -1))
    per_chain = np.stack([np.bincount(c, minlength=2**D) / len(c) for c in index])
    marginals = r.draws.mean(axis=1)
    estimates = np.concatenate([per_chain, marginals], axis=1)
    exact = np.concatenate([p, states.T.astype(np.float64) @ p])
    tests = estimates.shape[1]
    limit = t_quantile(1 - FPR / (2 * tests), CHAINS - 1)
    mean = estimates.mean(axis=0)
    se = estimates.std(axis=0, ddof=1) / math.sqrt(CHAINS)
    t_stat = np.abs(mean - exact) / np.maximum(se, 1e-12)
    worst = int(np.argmax(t_stat))
    assert t_stat.max() < limit, (sampler, worst, mean[worst], exact[worst], t_stat[worst], limit)


class Boom(Exception):
    """The user's own exception."""


def test_an_exception_comes_back_as_itself():
    calls = 0

    def failing(X):
        nonlocal calls
        calls += 1
        if calls == 50:
            raise Boom("at call 50")
        return logp_grad(X)

    with pytest.raises(Boom, match="at call 50"):
        langevin.sample(langevin.BinaryTarget(D, failing), steps=1000, chains=3, seed=1)
    assert calls == 50


def test_bad_outputs_are_errors():
    with pytest.raises(ValueError, match="grad of shape"):
        langevin.sample(
            langevin.BinaryTarget(D, lambda X: (np.zeros(len(X)), np.zeros((len(X), D + 1)))),
            steps=10,
        )
    with pytest.raises(TypeError, match="pair"):
        langevin.sample(langevin.BinaryTarget(D, lambda X: 1.0), steps=10)
    with pytest.raises(RuntimeError, match="not finite"):
        langevin.sample(
            langevin.BinaryTarget(D, lambda X: (np.full(len(X), np.nan), np.zeros(X.shape))),
            steps=10,
        )
    with pytest.raises(ValueError, match="block-gibbs"):
        langevin.sample(langevin.BinaryTarget(D, logp_grad), sampler="block-gibbs", steps=10)


def test_non_finite_proposals_are_rejected_not_fatal():
    def no_all_ones(X):
        u, g = logp_grad(X)
        u = np.where(X.all(axis=1), -np.inf, u)
        return u, g

    r = langevin.sample(langevin.BinaryTarget(D, no_all_ones), steps=2000, chains=4, seed=5, step=0.6)
    assert not r.draws.all(axis=2).any()
    assert r.summary["invalid_proposals"] > 0


def test_draws_do_not_depend_on_how_calls_are_grouped():
    t = langevin.BinaryTarget(D, logp_grad)
    four = langevin.sample(t, sampler="gwg", steps=300, chains=4, seed=9)
    one = [langevin.sample(t, sampler="gwg", steps=300, chains=c, seed=9).draws for c in (1, 2)]
    assert np.array_equal(four.draws[:1], one[0])
    assert np.array_equal(four.draws[:2], one[1])


def test_ctrl_c_stops_a_run_quickly():
    t = langevin.BinaryTarget(D, logp_grad)
    timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT))
    start = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            langevin.sample(t, steps=10**9, chains=2, seed=1, diagnostics="none")
    finally:
        timer.cancel()
    assert time.monotonic() - start < 0.5 + 0.5
