"""Targets given as compiled C functions: a C energy built with the system compiler, and a
ctypes callback."""

from __future__ import annotations

import ctypes
import math
import os
import shutil
import signal
import subprocess
import threading
import time

import numpy as np
import pytest

import langevin
from test_target import CHAINS, D, FPR, B, W, exact_probabilities, t_quantile

C_SOURCE = r"""
#include <stddef.h>
#include <stdint.h>

/* U(x) = x W x / 2 + b x, params = b (d values) then W (d x d, row-major). */
int32_t quadratic(void *user, const uint8_t *x, size_t d, double *u, float *grad) {
    const double *b = (const double *)user, *w = b + d;
    double total = 0.0;
    for (size_t i = 0; i < d; i++) {
        double g = b[i];
        for (size_t j = 0; j < d; j++) g += w[i * d + j] * x[j];
        if (grad) grad[i] = (float)g;
        total += x[i] * 0.5 * (g + b[i]);
    }
    *u = total;
    return 0;
}

/* The same, but the all-ones state is rejected (code 1) and the state 0b000111 is fatal. */
int32_t picky(void *user, const uint8_t *x, size_t d, double *u, float *grad) {
    size_t ones = 0;
    for (size_t i = 0; i < d; i++) ones += x[i];
    if (ones == d) return 1;
    if (d == 6 && !x[0] && !x[1] && !x[2] && x[3] && x[4] && x[5]) return 7;
    return quadratic(user, x, d, u, grad);
}
"""


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        pytest.skip("no C compiler")
    folder = tmp_path_factory.mktemp("energy")
    source, lib = folder / "energy.c", folder / "libenergy.so"
    source.write_text(C_SOURCE)
    subprocess.run([cc, "-O2", "-shared", "-fPIC", str(source), "-o", str(lib)], check=True)
    return ctypes.CDLL(str(lib))


PARAMS = np.ascontiguousarray(np.concatenate([B, W.ravel()]), dtype=np.float64)


@pytest.mark.parametrize("sampler", ["dmala", "gwg"])
def test_a_c_energy_is_sampled_exactly(library, sampler):
    states, p = exact_probabilities()
    t = langevin.CompiledTarget(D, library.quadratic, PARAMS)
    r = langevin.sample(t, sampler=sampler, steps=3000, burn_in=300, chains=CHAINS, seed=11, diagnostics="none")
    assert r.draws.shape == (CHAINS, 3000, D)
    index = r.draws.astype(np.int64) @ (1 << np.arange(D - 1, -1, -1))
    per_chain = np.stack([np.bincount(c, minlength=2**D) / len(c) for c in index])
    estimates = np.concatenate([per_chain, r.draws.mean(axis=1)], axis=1)
    exact = np.concatenate([p, states.T.astype(np.float64) @ p])
    limit = t_quantile(1 - FPR / (2 * estimates.shape[1]), CHAINS - 1)
    se = estimates.std(axis=0, ddof=1) / math.sqrt(CHAINS)
    t_stat = np.abs(estimates.mean(axis=0) - exact) / np.maximum(se, 1e-12)
    assert t_stat.max() < limit, (sampler, t_stat.max(), limit)


def test_threads_do_not_change_the_draws(library):
    t = langevin.CompiledTarget(D, library.quadratic, PARAMS)
    one = langevin.sample(t, steps=500, chains=4, seed=3, threads=1)
    two = langevin.sample(t, steps=500, chains=4, seed=3, threads=2)
    assert np.array_equal(one.draws, two.draws)


def test_codes_reject_or_stop(library):
    t = langevin.CompiledTarget(D, library.picky, PARAMS)
    with pytest.raises(RuntimeError, match="code 7"):
        langevin.sample(t, steps=5000, chains=2, seed=1, step=0.6)


def test_ctrl_c_stops_a_c_energy_run_quickly(library):
    t = langevin.CompiledTarget(D, library.quadratic, PARAMS)
    timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT))
    start = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            langevin.sample(t, steps=10**9, chains=2, seed=1, threads=2, diagnostics="none")
    finally:
        timer.cancel()
    assert time.monotonic() - start < 0.5 + 0.5


LOGP = ctypes.CFUNCTYPE(
    ctypes.c_int32,
    ctypes.c_void_p,
    ctypes.POINTER(ctypes.c_uint8),
    ctypes.c_size_t,
    ctypes.POINTER(ctypes.c_double),
    ctypes.POINTER(ctypes.c_float),
)


def test_a_ctypes_callback_and_rejection():
    @LOGP
    def no_all_ones(user, x, d, u, grad):
        bits = np.ctypeslib.as_array(x, shape=(d,)).astype(np.float64)
        if bits.all():
            return 1
        g = W @ bits + B
        u[0] = float(bits @ (0.5 * (g + B)))
        for i in range(d):
            grad[i] = g[i]
        return 0

    t = langevin.CompiledTarget(D, no_all_ones)
    r = langevin.sample(t, steps=2000, chains=2, seed=4, step=0.6)
    assert not r.draws.all(axis=2).any()
    assert r.summary["invalid_proposals"] > 0


def test_a_checkpoint_of_a_c_energy_resumes_and_knows_its_function(library, tmp_path):
    t = langevin.CompiledTarget(D, library.quadratic, PARAMS)
    opts = dict(steps=500, burn_in=50, chains=2, seed=4, diagnostics="none")
    plain = langevin.sample(t, **opts)
    ckpt = tmp_path / "c.ckpt"
    saved = langevin.sample(t, checkpoint=ckpt, checkpoint_every=0.001, **opts)
    assert np.array_equal(plain.draws, saved.draws)
    assert np.array_equal(langevin.sample(t, resume=ckpt, **opts).draws, plain.draws)
    # Another function of the same dimension: U at the saved states is not the saved one.
    other = np.ascontiguousarray(PARAMS + 0.5)
    with pytest.raises(RuntimeError, match="the target is not the one saved"):
        langevin.sample(langevin.CompiledTarget(D, library.quadratic, other), resume=ckpt, **opts)
