"""Every built-in model kind built from NumPy arrays samples to the draws of the same model read
from its file, and of `langevin sample` on that file, bit for bit; bad arrays are ValueErrors."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

import langevin
from conftest import run_cli


def _fields(path: Path) -> dict:
    """The fields of a model file, array files (`--npy`) loaded."""
    doc = json.loads(path.read_text())
    return {
        k: np.load(path.parent / v) if isinstance(v, str) and v.endswith(".npy") else v
        for k, v in doc.items()
    }


def _write(folder: Path, name: str, doc: dict) -> Path:
    path = folder / f"{name}.json"
    path.write_text(json.dumps(doc))
    return path


def _generated(cli: Path, folder: Path, name: str, args: list[str], npy: bool = False) -> Path:
    path = folder / f"{name}.json"
    extra = ["--npy"] if npy else []
    subprocess.run([str(cli), "model", *args, "--out", str(path), *extra], check=True)
    return path


def _potts_doc() -> dict:
    rng = np.random.default_rng(4)
    n, s = 7, 4
    edges = [[i, j, float(rng.normal())] for i in range(n) for j in range(i + 1, n) if rng.random() < 0.5]
    return {"kind": "potts", "states": s, "n": n, "edges": edges, "field": rng.normal(size=(n, s)).tolist()}


# (name, how the file is made, how the same model is built from its fields)
CASES = [
    (
        "ising_lattice",
        ["ising-lattice", "--rows", "5", "--cols", "4", "--coupling", "0.37", "--field", "0.1"],
        lambda f: langevin.IsingLattice(f["rows"], f["cols"], f["coupling"], f.get("field", 0.0), f.get("periodic", True)),
    ),
    (
        "ising",
        ["ising-ba", "--nodes", "24", "--edges-per-node", "2", "--seed", "3", "--coupling", "0.3"],
        lambda f: langevin.Ising(edges=f["edges"], h=f.get("field"), n=f["n"]),
    ),
    (
        "rbm",
        ["rbm", "--visible", "16", "--hidden", "8", "--seed", "2", "--scale", "0.7"],
        lambda f: langevin.Rbm(f["W"], f["b"], f["c"]),
    ),
    (
        "rbm_npy",
        ["rbm", "--visible", "12", "--hidden", "5", "--seed", "9", "--scale", "0.9", "npy"],
        lambda f: langevin.Rbm(f["W"], f["b"], f["c"]),
    ),
    (
        "binary_quadratic",
        ["binary-quadratic", "--dim", "12", "--seed", "3"],
        lambda f: langevin.BinaryQuadratic(f["W"], f["b"]),
    ),
    (
        "binary_logistic",
        ["binary-logistic", "--dim", "10", "--samples", "25", "--active", "3", "--seed", "1"],
        lambda f: langevin.BinaryLogistic(f["X"], f["y"]),
    ),
    (
        "ordinal_quadratic",
        ["lattice-gaussian", "--dim", "5", "--states", "7", "--seed", "1"],
        lambda f: langevin.OrdinalQuadratic(f["states"], f["mu"], f["A"], f.get("b")),
    ),
    (
        "lattice_mixture",
        ["lattice-mixture", "--dim", "2", "--states", "30", "--modes-per-axis", "2", "--scale", "4"],
        lambda f: langevin.LatticeMixture(f["states"], f["modes"], f["scale"], f.get("distance", "l2")),
    ),
    (
        "potts",
        _potts_doc(),
        lambda f: langevin.Potts(edges=f["edges"], h=f["field"], states=f["states"], n=f["n"]),
    ),
    (
        "quartic_mixture",
        {"kind": "quartic_mixture", "dim": 4, "states": 9, "components": 3, "sigma": 1.5, "seed": 11},
        lambda f: langevin.QuarticMixture(f["dim"], f["states"], f["components"], f["sigma"], f["seed"]),
    ),
]

RUN = {"steps": 300, "burn_in": 50, "chains": 2, "seed": 13}


def _sample(model, **kw):
    return langevin.sample(model, diagnostics="none", threads=1, **RUN, **kw)


@pytest.mark.parametrize("name,source,build", CASES, ids=[c[0] for c in CASES])
def test_array_model_draws_equal_the_file_and_the_command_line(cli, tmp_path, name, source, build):
    if isinstance(source, dict):
        path = _write(tmp_path, name, source)
    else:
        npy = source[-1] == "npy"
        path = _generated(cli, tmp_path, name, source[:-1] if npy else source, npy)
    fields = _fields(path)
    built = build(fields)
    loaded = langevin.load_model(path)
    assert built.kind == loaded.kind == fields["kind"]
    assert (built.dim, built.states, built.domain) == (loaded.dim, loaded.states, loaded.domain)
    assert built.path is None and loaded.path == str(path)
    a, b = _sample(built), _sample(loaded)
    assert np.array_equal(a.draws, b.draws)
    assert np.array_equal(a.log_density, b.log_density, equal_nan=True)
    out, summary = tmp_path / "draws.npy", tmp_path / "summary.json"
    run_cli(
        cli, path, out, summary,
        "--steps", str(RUN["steps"]), "--burn-in", str(RUN["burn_in"]),
        "--chains", str(RUN["chains"]), "--seed", str(RUN["seed"]),
    )
    assert np.array_equal(a.draws, np.load(out))
    assert a.summary["model"] == "<arrays>"


def test_a_changed_array_changes_the_draws():
    # The comparison above can fail: one coupling changed gives other draws.
    rng = np.random.default_rng(0)
    W = rng.normal(size=(10, 10)) * 0.3
    b = rng.normal(size=10) * 0.3
    base = _sample(langevin.BinaryQuadratic(W, b)).draws
    assert np.array_equal(base, _sample(langevin.BinaryQuadratic(W.copy(), b.copy())).draws)
    W2 = W.copy()
    W2[3, 4] += 0.5
    assert not np.array_equal(base, _sample(langevin.BinaryQuadratic(W2, b)).draws)


def test_a_coupling_matrix_is_the_edge_list_in_row_major_order(tmp_path):
    rng = np.random.default_rng(5)
    n = 9
    J = np.triu(rng.normal(size=(n, n)) * (rng.random((n, n)) < 0.5), 1)
    J = J + J.T
    h = rng.normal(size=n) * 0.2
    edges = [[i, j, J[i, j]] for i in range(n) for j in range(i + 1, n) if J[i, j] != 0]
    ising = _write(tmp_path, "ising", {"kind": "ising", "n": n, "edges": edges, "field": h.tolist()})
    assert np.array_equal(
        _sample(langevin.Ising(J, h)).draws, _sample(langevin.load_model(ising)).draws
    )
    field = rng.normal(size=(n, 3))
    potts = _write(
        tmp_path, "potts", {"kind": "potts", "states": 3, "n": n, "edges": edges, "field": field.tolist()}
    )
    assert np.array_equal(
        _sample(langevin.Potts(J, field)).draws, _sample(langevin.load_model(potts)).draws
    )


BAD = [
    (lambda: langevin.BinaryQuadratic(np.zeros((3, 4)), np.zeros(3)), "W: expected shape (3, 3)"),
    (lambda: langevin.BinaryQuadratic(np.zeros((3, 3)), np.zeros((3, 1))), "b: expected a vector"),
    (lambda: langevin.BinaryQuadratic([[0, np.nan], [0, 0]], [0, 0]), "W: entry (0, 1) is not finite"),
    (lambda: langevin.Rbm(np.zeros((4, 6)), np.zeros(4), np.zeros(4)), "b: expected shape (6,)"),
    (lambda: langevin.Rbm(np.zeros((4, 6)), np.zeros(6), [0, 0, np.inf, 0]), "c: entry 2 is not finite"),
    (lambda: langevin.Ising(np.ones((3, 3))), "J: the diagonal must be zero"),
    (lambda: langevin.Ising([[0, 1], [2, 0]]), "J: must be symmetric"),
    (lambda: langevin.Ising(np.zeros((3, 3)), np.zeros(4)), "h: expected shape (3,)"),
    (lambda: langevin.Ising(edges=[[0, 1, 1.0]]), "give the number of nodes n"),
    (lambda: langevin.Ising(edges=[[0, 5, 1.0]], n=3), "edge 0 names node 5"),
    (lambda: langevin.Ising(edges=[[0, 1]], n=3), "edges: expected rows [i, j, J_ij]"),
    (lambda: langevin.IsingLattice(3, 3, float("inf")), "coupling: must be finite"),
    (lambda: langevin.BinaryLogistic(np.zeros((4, 2)), [0, 1, 2, 0]), "y: entry 2 is 2.0"),
    (lambda: langevin.OrdinalQuadratic(1, [0, 0], np.eye(2)), "states: must be at least 2"),
    (lambda: langevin.OrdinalQuadratic(5, [0, 0], np.eye(3)), "A: expected shape (2, 2)"),
    (lambda: langevin.Potts(np.zeros((3, 3)), np.zeros((2, 4))), "h: expected shape (3, 4)"),
    (lambda: langevin.Potts(np.zeros((3, 3))), "give the number of labels states"),
    (lambda: langevin.LatticeMixture(10, [[1, 12]], 2.0), "modes"),
    (lambda: langevin.LatticeMixture(10, [[1, 2]], 0.0), "scale: must be positive"),
    (lambda: langevin.QuarticMixture(3, 5, 0, 1.0, 0), "components: must be at least 1"),
]


@pytest.mark.parametrize("make,message", BAD)
def test_bad_arrays_are_value_errors_naming_the_argument(make, message):
    with pytest.raises(ValueError) as e:
        make()
    assert message in str(e.value)
