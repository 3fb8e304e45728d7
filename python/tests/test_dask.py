"""Shards (``first_chain``) and ``langevin.dask.sample`` on a ``LocalCluster`` of 2 worker
processes: the draws and summary statistics of ``langevin.sample`` on one machine."""

from __future__ import annotations

import numpy as np
import pytest

import langevin
from test_compiled import LOGP
from test_target import random_quadratic

# Figures that measure the wall clock, not the draws.
CLOCK = {"wall_time_s", "ns_per_step", "ess_per_second"}

D = 6
_, _, logp_grad = random_quadratic(D, 29, 0.5, 0.5)


def same_result(a: langevin.Result, b: langevin.Result) -> None:
    assert a.draws.dtype == b.draws.dtype
    assert np.array_equal(a.draws, b.draws)
    assert np.array_equal(a.log_density, b.log_density, equal_nan=True)
    # `calls` counts the Python function's calls, each evaluating the chains of one task: it
    # depends on the blocks, not the draws.
    for key, value in a.summary.items():
        if key not in CLOCK:
            assert b.summary.get(key) == value, key
    assert set(b.summary) == set(a.summary)


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    )
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def test_shards_hold_the_chains_of_one_run(models):
    model = langevin.load_model(models["ising_lattice"])
    opts = dict(steps=200, burn_in=50, seed=4, diagnostics="none")
    whole = langevin.sample(model, chains=5, **opts)
    for first, chains in [(0, 2), (2, 3), (4, 1)]:
        shard = langevin.sample(model, chains=chains, first_chain=first, **opts)
        assert np.array_equal(shard.draws, whole.draws[first : first + chains])
        assert shard.summary["chain_range"] == [first, first + chains]
    target = langevin.BinaryTarget(D, logp_grad)
    whole = langevin.sample(target, chains=4, **opts)
    shard = langevin.sample(target, chains=2, first_chain=2, **opts)
    assert np.array_equal(shard.draws, whole.draws[2:])


def test_a_lockstep_shard_must_start_at_a_group(models):
    model = langevin.load_model(models["rbm"])
    with pytest.raises(ValueError, match="first-chain 1 with --batch 2"):
        langevin.sample(model, chains=2, first_chain=1, batch=2, step=0.5, steps=10)


@pytest.mark.parametrize("per_task", [1, 2, 5])
def test_dask_gives_the_draws_of_one_machine_for_a_model(client, models, per_task):
    model = langevin.load_model(models["ising_lattice"])
    opts = dict(steps=300, burn_in=100, seed=7)
    here = langevin.sample(model, chains=5, **opts)
    there = langevin.dask.sample(model, client=client, chains=5, chains_per_task=per_task, **opts)
    same_result(here, there)
    assert there.summary["chain_range"] == [0, 5]


def test_dask_gives_the_draws_of_one_machine_for_labels_and_batches(client, models):
    ordinal = langevin.load_model(models["ordinal_quadratic"])
    opts = dict(sampler="dmala", steps=200, burn_in=50, seed=3)
    same_result(
        langevin.sample(ordinal, chains=3, **opts),
        langevin.dask.sample(ordinal, client=client, chains=3, chains_per_task=2, **opts),
    )
    rbm = langevin.load_model(models["rbm"])
    opts = dict(sampler="dmala", step=0.5, batch=2, steps=200, burn_in=20, seed=5)
    same_result(
        langevin.sample(rbm, chains=6, **opts),
        langevin.dask.sample(rbm, client=client, chains=6, chains_per_task=4, **opts),
    )
    with pytest.raises(ValueError, match="multiple of batch"):
        langevin.dask.sample(rbm, client=client, chains=6, chains_per_task=3, **opts)


def test_dask_sends_a_python_target_by_pickling(client):
    target = langevin.BinaryTarget(D, logp_grad)
    opts = dict(steps=300, burn_in=50, seed=11)
    here = langevin.sample(target, chains=4, **opts)
    there = langevin.dask.sample(target, client=client, chains=4, chains_per_task=2, **opts)
    same_result(here, there)


def test_a_compiled_target_cannot_travel(client):
    @LOGP
    def never(user, x, n, u, grad):  # pragma: no cover - never called
        return 1

    target = langevin.CompiledTarget(D, never)
    with pytest.raises(TypeError, match="cannot be sent to Dask workers"):
        langevin.dask.sample(target, client=client, chains=2)


class DiesOnce:
    """``logp_grad``, killing its worker process once (``os._exit``, as a lost node), mid-run,
    after the task's checkpoint was first written to ``folder``."""

    def __init__(self, marker, folder):
        self.marker, self.folder = str(marker), str(folder)
        self.calls = 0

    def __call__(self, X):
        import os

        self.calls += 1
        if (
            self.calls > 100
            and not os.path.exists(self.marker)
            and any(n.endswith(".ckpt") for n in os.listdir(self.folder))
        ):
            open(self.marker, "w").close()
            os._exit(1)
        return logp_grad(X)


def test_a_lost_task_is_run_again_from_its_checkpoint(client, tmp_path):
    folder = tmp_path / "checkpoints"
    folder.mkdir()
    marker = tmp_path / "died"
    opts = dict(sampler="ab", steps=8000, burn_in=1000, seed=13)
    here = langevin.sample(langevin.BinaryTarget(D, logp_grad), chains=1, **opts)
    target = langevin.BinaryTarget(D, DiesOnce(marker, folder))
    there = langevin.dask.sample(
        target, client=client, chains=1, checkpoint_dir=folder, checkpoint_every=0.05, **opts
    )
    assert marker.exists(), "the worker was never killed"
    same_result(here, there)
    # The task run again went on from the checkpoint: it made fewer calls than a whole run.
    assert there.calls < here.calls - 50, (there.calls, here.calls)
    # The block's checkpoint is removed once gathered.
    assert [p.name for p in folder.iterdir() if p.suffix == ".ckpt"] == []
