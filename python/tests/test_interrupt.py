"""Ctrl-C stops a model run (file or arrays, every runner) within a fraction of a second: the
run raises KeyboardInterrupt and leaves no thread behind."""

from __future__ import annotations

import os
import signal
import threading
import time

import numpy as np
import pytest

import langevin

#: The time allowed from the signal to the exception: the 100 ms signal check, a step of each
#: chain and the join, on a loaded machine.
ALLOWED = 0.5


def _threads() -> int:
    return len(os.listdir("/proc/self/task"))


def _interrupted(model, delay=0.3, **kw):
    """Runs a sampling that would take minutes, sends SIGINT after `delay` seconds and returns
    the time from the signal to the KeyboardInterrupt."""
    sent = []
    # Other libraries loaded in this process (Dask's cluster, say) may have replaced the SIGINT
    # handler; Ctrl-C in an interpreter raises KeyboardInterrupt by default, which is what a
    # user sees and what this checks.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)

    def interrupt():
        sent.append(time.perf_counter())
        os.kill(os.getpid(), signal.SIGINT)

    timer = threading.Timer(delay, interrupt)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            # Few kept draws (thin): the run is long, not large.
            langevin.sample(
                model, steps=10**9, thin=10**7, burn_in=10, chains=2, threads=2, diagnostics="none", **kw
            )
        raised = time.perf_counter()
    finally:
        timer.cancel()
        timer.join()
        signal.signal(signal.SIGINT, previous)
    assert sent, "the run ended before the signal"
    return raised - sent[0]


def _no_thread_left(before: int) -> None:
    # The worker pool's threads exit once the pool is dropped: give them a moment.
    deadline = time.perf_counter() + 2.0
    while _threads() > before and time.perf_counter() < deadline:
        time.sleep(0.02)
    assert _threads() <= before


def _quadratic(d: int = 64):
    rng = np.random.default_rng(3)
    W = rng.normal(size=(d, d)) / np.sqrt(d)
    return langevin.BinaryQuadratic((W + W.T) / 2, rng.normal(size=d) * 0.1)


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts threads through /proc")
@pytest.mark.parametrize(
    "make,sampler,kw",
    [
        (lambda: langevin.IsingLattice(48, 48, 0.3), "dmala", {"step": 0.3}),
        (lambda: langevin.IsingLattice(48, 48, 0.3), "gibbs", {}),
        (_quadratic, "dmala", {"step": 0.3, "batch": 2}),
        (_quadratic, "ab2", {}),
    ],
    ids=["kernel", "gibbs", "lockstep", "ab2"],
)
def test_ctrl_c_stops_a_model_run(make, sampler, kw):
    model = make()
    before = _threads()
    took = _interrupted(model, sampler=sampler, **kw)
    assert took < ALLOWED, f"{sampler}: KeyboardInterrupt {took:.3f} s after SIGINT"
    _no_thread_left(before)
    # The interpreter is usable afterwards, and a run then completes.
    r = langevin.sample(model, sampler=sampler, steps=20, burn_in=5, chains=2, diagnostics="none", **kw)
    assert r.draws.shape == (2, 20, model.dim)


def test_ctrl_c_stops_a_label_run():
    rng = np.random.default_rng(1)
    d = 40
    A = np.eye(d) + 0.1 * rng.normal(size=(d, d))
    model = langevin.OrdinalQuadratic(9, np.full(d, 4.0), (A + A.T) / 2)
    took = _interrupted(model, sampler="dmala", step=0.5)
    assert took < ALLOWED, f"KeyboardInterrupt {took:.3f} s after SIGINT"
