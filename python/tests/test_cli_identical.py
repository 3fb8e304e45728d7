"""`langevin.sample` on a model file gives the draws of `langevin sample --out`, bit for bit."""

from __future__ import annotations

import json

import numpy as np
import pytest

import langevin
from conftest import run_cli

# (model, sampler, Python keywords, the same as command-line flags)
CASES = [
    ("ising_lattice", "gibbs", {}, []),
    ("ising_lattice", "dmala", {"step": 0.4}, ["--step", "0.4"]),
    # Without a step both tune DMALA's step during burn-in.
    ("ising_lattice", "dmala", {}, []),
    ("binary_quadratic", "gibbs", {"scan": "random"}, ["--scan", "random"]),
    ("binary_quadratic", "gwg", {}, []),
    ("binary_quadratic", "ab", {"step": 0.3}, ["--step", "0.3"]),
    ("binary_quadratic", "acs", {"a_max": 2.0, "a_min": 0.1}, ["--a-max", "2", "--a-min", "0.1"]),
    ("rbm", "dula", {"step": 0.1}, ["--step", "0.1"]),
    ("rbm", "block-gibbs", {}, []),
    ("ordinal_quadratic", "dmala", {"adapt": "acceptance"}, ["--adapt", "acceptance"]),
    ("ordinal_quadratic", "gibbs", {}, []),
]


@pytest.mark.parametrize("kind,sampler,params,flags", CASES)
def test_draws_equal_the_command_line(models, cli, tmp_path, kind, sampler, params, flags):
    out, summary_path = tmp_path / "draws.npy", tmp_path / "summary.json"
    seed, chains, steps, burn_in = 7, 3, 400, 100
    run_cli(
        cli,
        models[kind],
        out,
        summary_path,
        "--sampler",
        sampler,
        "--steps",
        str(steps),
        "--burn-in",
        str(burn_in),
        "--chains",
        str(chains),
        "--seed",
        str(seed),
        *flags,
    )
    expected = np.load(out)
    model = langevin.load_model(models[kind])
    assert model.kind == kind
    r = langevin.sample(
        model,
        sampler=sampler,
        steps=steps,
        burn_in=burn_in,
        chains=chains,
        seed=seed,
        threads=2,
        **params,
    )
    assert r.draws.dtype == expected.dtype
    assert r.draws.shape == expected.shape == (chains, steps, model.dim)
    assert np.array_equal(r.draws, expected)
    cli_summary = json.loads(summary_path.read_text())
    for key in ("sampler", "kind", "domain", "dim", "chains", "kept_per_chain", "evals"):
        assert r.summary[key] == cli_summary[key], key
    for key in ("acceptance_rate", "mean_jump", "rhat_max", "ess_statistic"):
        assert r.summary[key] == pytest.approx(cli_summary[key], rel=1e-12), key
    assert r.summary["mean"] == pytest.approx(cli_summary["mean"], rel=1e-12)
    # The comparison can tell runs apart: another seed gives other draws.
    other = langevin.sample(
        model, sampler=sampler, steps=steps, burn_in=burn_in, chains=chains, seed=seed + 1, **params
    )
    assert not np.array_equal(other.draws, expected)


def test_batched_lockstep_equals_the_command_line(models, cli, tmp_path):
    out, summary_path = tmp_path / "draws.npy", tmp_path / "summary.json"
    args = ["--sampler", "dmala", "--steps", "300", "--chains", "5", "--seed", "2", "--batch", "2"]
    run_cli(cli, models["rbm"], out, summary_path, *args)
    r = langevin.sample(
        langevin.load_model(models["rbm"]), sampler="dmala", steps=300, chains=5, seed=2, batch=2
    )
    assert np.array_equal(r.draws, np.load(out))


def test_defaults_are_the_command_line_defaults(models, cli, tmp_path):
    out, summary_path = tmp_path / "draws.npy", tmp_path / "summary.json"
    run_cli(cli, models["binary_quadratic"], out, summary_path, "--steps", "200")
    r = langevin.sample(langevin.load_model(models["binary_quadratic"]), steps=200)
    assert np.array_equal(r.draws, np.load(out))
    assert r.summary["sampler"] == "dmala"
    assert r.summary["step"] == json.loads(summary_path.read_text())["step"]


def test_bad_arguments_are_python_errors(models):
    m = langevin.load_model(models["binary_quadratic"])
    with pytest.raises(ValueError, match="unknown sampler|no-such"):
        langevin.sample(m, sampler="no-such", steps=10)
    with pytest.raises(TypeError, match="does not read `step`"):
        langevin.sample(m, sampler="gibbs", steps=10, step=0.1)
    with pytest.raises(TypeError, match="unexpected keyword"):
        langevin.sample(m, sampler="dmala", steps=10, stpe=0.1)
    with pytest.raises(ValueError):
        langevin.sample(m, sampler="dmala", steps=10, step=-1.0)
    with pytest.raises(ValueError, match="keeps no draws"):
        langevin.sample(m, steps=3, thin=5)
    with pytest.raises(ValueError):
        langevin.load_model(models["binary_quadratic"].parent / "missing.json")
