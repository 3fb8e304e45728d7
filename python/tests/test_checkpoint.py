"""``langevin.sample(..., checkpoint=, resume=)``: a run stopped and resumed gives the draws of
an uninterrupted run; a checkpoint of another run is refused, naming what differs."""

from __future__ import annotations

import os

import numpy as np
import pytest

import langevin
from test_target import random_quadratic

# Figures that measure the wall clock, not the draws.
CLOCK = {"wall_time_s", "ns_per_step", "ess_per_second"}

D = 8
_, _, logp_grad = random_quadratic(D, 5, 0.4, 0.4)


def same_draws(a: langevin.Result, b: langevin.Result) -> None:
    assert np.array_equal(a.draws, b.draws)
    assert np.array_equal(a.log_density, b.log_density, equal_nan=True)
    for key, value in a.summary.items():
        if key not in CLOCK:
            assert b.summary.get(key) == value, key


class FailsOnce:
    """``logp_grad``, raising once, mid-run, after ``checkpoint`` was first written."""

    def __init__(self, checkpoint):
        self.checkpoint = checkpoint
        self.calls = 0
        self.failed = False

    def __call__(self, X):
        self.calls += 1
        if not self.failed and self.calls > 100 and os.path.exists(self.checkpoint):
            self.failed = True
            raise RuntimeError("the node went away")
        return logp_grad(X)


@pytest.mark.parametrize("sampler", ["dmala", "ab"])
def test_a_python_target_stopped_and_resumed_gives_the_uninterrupted_draws(tmp_path, sampler):
    opts = dict(sampler=sampler, steps=8000, burn_in=1000, chains=1, seed=3)
    whole = langevin.sample(langevin.BinaryTarget(D, logp_grad), **opts)
    ckpt = tmp_path / "run.ckpt"
    f = FailsOnce(ckpt)
    target = langevin.BinaryTarget(D, f)
    with pytest.raises(RuntimeError, match="the node went away"):
        langevin.sample(target, checkpoint=ckpt, checkpoint_every=0.05, **opts)
    assert f.failed and ckpt.exists()
    resumed = langevin.sample(target, checkpoint=ckpt, checkpoint_every=0.05, resume=ckpt, **opts)
    same_draws(whole, resumed)
    # The resumed run went on from the checkpoint: it evaluated fewer states than a whole run.
    assert resumed.calls < whole.calls - 50, (resumed.calls, whole.calls)


def test_a_model_run_with_checkpoints_gives_the_same_draws_and_resumes(tmp_path, models):
    # The ordinal quadratic model updates running sums by moves: they are saved too.
    model = langevin.load_model(models["ordinal_quadratic"])
    opts = dict(steps=400, burn_in=50, chains=3, seed=8)
    plain = langevin.sample(model, **opts)
    ckpt = tmp_path / "o.ckpt"
    saved = langevin.sample(model, checkpoint=ckpt, checkpoint_every=0.001, **opts)
    same_draws(plain, saved)
    # Every chain had finished: the resumed run takes no step and gives the same result.
    same_draws(plain, langevin.sample(model, resume=ckpt, **opts))
    with pytest.raises(ValueError, match="belongs to another command: its seed: 8"):
        langevin.sample(model, resume=ckpt, **dict(opts, seed=9))
    other = langevin.load_model(models["ising_lattice"])
    with pytest.raises(ValueError, match="its model file"):
        langevin.sample(other, resume=ckpt, **opts)


def test_a_model_from_arrays_is_matched_by_its_values(tmp_path):
    J = np.zeros((4, 4))
    J[0, 1] = J[1, 0] = 0.5
    h = np.full(4, 0.1)
    opts = dict(steps=100, burn_in=10, chains=2, seed=1, diagnostics="none")
    ckpt = tmp_path / "a.ckpt"
    langevin.sample(langevin.Ising(J, h), checkpoint=ckpt, **opts)
    langevin.sample(langevin.Ising(J, h), resume=ckpt, **opts)
    with pytest.raises(ValueError, match="its model fields"):
        langevin.sample(langevin.Ising(J, h + 0.01), resume=ckpt, **opts)


def test_bad_checkpoint_requests_are_refused_before_the_run(tmp_path, models):
    model = langevin.load_model(models["ising_lattice"])
    opts = dict(steps=100, burn_in=10, chains=2, seed=1)
    with pytest.raises(ValueError, match="refusing to overwrite an input"):
        langevin.sample(model, checkpoint=models["ising_lattice"], **opts)
    with pytest.raises(ValueError, match="checkpoint_every=0"):
        langevin.sample(model, checkpoint=tmp_path / "c.ckpt", checkpoint_every=0, **opts)
    with pytest.raises(OSError, match="reading the checkpoint"):
        langevin.sample(model, resume=tmp_path / "missing.ckpt", **opts)
    (tmp_path / "junk.ckpt").write_bytes(b"not a checkpoint")
    with pytest.raises(ValueError, match="is not a usable checkpoint"):
        langevin.sample(model, resume=tmp_path / "junk.ckpt", **opts)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["junk.ckpt"]
