"""Shared fixtures: the command line (built once per session) and model files it writes."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def cli() -> Path:
    """The `langevin` command line of this checkout, built in release mode (or LANGEVIN_CLI)."""
    given = os.environ.get("LANGEVIN_CLI")
    if given:
        return Path(given)
    subprocess.run(
        ["cargo", "build", "-p", "langevin-std", "--release", "--bin", "langevin"],
        cwd=ROOT,
        check=True,
    )
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    if not target.is_absolute():
        target = ROOT / target
    path = target / "release" / "langevin"
    assert path.is_file(), path
    return path


@pytest.fixture(scope="session")
def models(cli: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One small model file per domain and a few binary kinds, written by `langevin model`."""
    folder = tmp_path_factory.mktemp("models")
    specs = {
        "ising_lattice": ["ising-lattice", "--rows", "6", "--cols", "6", "--coupling", "0.3"],
        "binary_quadratic": ["binary-quadratic", "--dim", "12", "--seed", "3"],
        "rbm": ["rbm", "--visible", "16", "--hidden", "8", "--seed", "2"],
        "ordinal_quadratic": ["lattice-gaussian", "--dim", "5", "--states", "7", "--seed", "1"],
    }
    out = {}
    for name, args in specs.items():
        path = folder / f"{name}.json"
        subprocess.run([str(cli), "model", *args, "--out", str(path)], check=True)
        out[name] = path
    return out


def run_cli(cli: Path, model: Path, out: Path, summary: Path, *args: str) -> None:
    """`langevin sample` on `model`, its draws to `out` and its summary to `summary`."""
    subprocess.run(
        [
            str(cli),
            "sample",
            "--model",
            str(model),
            "--out",
            str(out),
            "--summary",
            str(summary),
            "--quiet",
            *args,
        ],
        check=True,
    )
