#!/usr/bin/env bash
# Builds and installs the Python package in a virtual environment and runs its tests.
# Usage: python/ci.sh [VENV_DIR]          (default: a temporary folder, removed afterwards)
#        python/ci.sh --deps VENV_DIR     only the environment and the packages the tests use
#                                         (no build): a later run with VENV_DIR reuses them
# Exits non-zero when the build, the install or a test fails, or when no test is collected.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
deps_only=
if [[ "${1:-}" == --deps ]]; then
    deps_only=1
    shift
    [[ -n "${1:-}" ]] || { echo "python/ci.sh --deps needs VENV_DIR" >&2; exit 2; }
fi
venv="${1:-}"
if [[ -z "$venv" ]]; then
    venv="$(mktemp -d)/venv"
    trap 'rm -rf "$(dirname "$venv")"' EXIT
fi
[[ -x "$venv/bin/python" ]] || python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --upgrade pip
# The third-party packages first, as pyproject.toml lists them: numpy, the test extra, and the
# dask extra (langevin.dask's tests run on a LocalCluster of two worker processes).
mapfile -t packages < <("$venv/bin/python" - "$here/pyproject.toml" <<'EOF'
import sys, tomllib
with open(sys.argv[1], "rb") as f:
    project = tomllib.load(f)["project"]
extras = project["optional-dependencies"]
print("\n".join(project["dependencies"] + extras["test"] + extras["dask"]))
EOF
)
"$venv/bin/python" -m pip install --quiet "${packages[@]}"
# arviz when it installs (to_arviz's test is skipped without it).
"$venv/bin/python" -m pip install --quiet arviz || echo "arviz not installed: its test is skipped"
[[ -z "$deps_only" ]] || exit 0
"$venv/bin/python" -m pip install --quiet "$here[test,dask]"
cd "$root"
# pytest exits 5 when it collects no tests: a failure here, as any other non-zero code.
"$venv/bin/python" -m pytest -q "$here/tests" -p no:cacheprovider
