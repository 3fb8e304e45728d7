#!/usr/bin/env bash
# Builds and installs the Python package in a fresh virtual environment and runs its tests.
# Usage: python/ci.sh [VENV_DIR]   (default: a temporary folder, removed afterwards)
# Exits non-zero when the build, the install or a test fails, or when no test is collected.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
venv="${1:-}"
if [[ -z "$venv" ]]; then
    venv="$(mktemp -d)/venv"
    trap 'rm -rf "$(dirname "$venv")"' EXIT
fi
python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --upgrade pip
# Extras: pytest and numpy; arviz when it installs (to_arviz's test is skipped without it).
"$venv/bin/python" -m pip install --quiet "$here[test]"
# langevin.dask's tests run on a LocalCluster of two worker processes.
"$venv/bin/python" -m pip install --quiet "dask[distributed]" cloudpickle
"$venv/bin/python" -m pip install --quiet arviz || echo "arviz not installed: its test is skipped"
cd "$root"
# pytest exits 5 when it collects no tests: a failure here, as any other non-zero code.
"$venv/bin/python" -m pytest -q "$here/tests" -p no:cacheprovider
