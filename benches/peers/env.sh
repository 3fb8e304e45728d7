# shellcheck shell=bash
# Sourced by the benchmark scripts (needs `root`, the checkout): `bench_env NAME` makes the
# Python environment target/NAME-venv with NumPy and threadpoolctl (pip, from PyPI, on the first
# run) and the output folder target/NAME/model, and sets `venv`, `out` and `py`.
bench_env() {
    venv="$root/target/$1-venv"
    out="$root/target/$1"
    mkdir -p "$out/model"
    if [[ ! -x "$venv/bin/python" ]]; then
        python3 -m venv "$venv"
    fi
    py="$venv/bin/python"
    if ! "$py" -c 'import numpy, threadpoolctl' 2>/dev/null; then
        "$venv/bin/pip" install --quiet numpy threadpoolctl
    fi
}
