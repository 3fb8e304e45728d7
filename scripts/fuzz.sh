#!/usr/bin/env bash
# Runs the cargo-fuzz targets of fuzz/ for a fixed time each, starting from the committed seed
# corpora (new inputs go to a scratch directory, so the committed corpora stay small).
#
#   scripts/fuzz.sh            # every target, 60 s each
#   scripts/fuzz.sh 10 dmala   # 10 s, one target
#
# Targets run FUZZ_JOBS at a time (default: one per core).
# Builds the targets as `cargo fuzz build` does (libFuzzer's coverage instrumentation,
# AddressSanitizer, debug assertions, an optimised build), with cargo alone: cargo-fuzz is not
# needed, only the nightly toolchain, installed when missing. The code-generation units are
# fuzz/Cargo.toml's (cargo fuzz forces one for every crate). Exits non-zero if a target fails;
# the failing input is left in fuzz/artifacts/<target>/.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SECONDS_PER_TARGET=${1:-60}
# A fixed seed makes a run repeatable (set FUZZ_SEED to explore elsewhere).
SEED=${FUZZ_SEED:-1}
shift || true

rustup toolchain list | grep -q '^nightly' ||
  rustup toolchain install nightly --profile minimal || exit 1

cd "$ROOT/fuzz" || exit 1
targets=("$@")
if ((${#targets[@]} == 0)); then
  # The names of the manifest's [[bin]] sections.
  mapfile -t targets < <(awk '/^\[\[bin\]\]/ { bin = 1; next }
    bin && /^name *=/ { gsub(/.*= *"|".*/, ""); print; bin = 0 }' Cargo.toml)
fi
# The target triple keeps these flags off build scripts and proc macros.
triple=$(rustc +nightly -vV | sed -n 's/^host: //p')
flags=(
  -Cpasses=sancov-module
  -Cllvm-args=-sanitizer-coverage-level=4
  -Cllvm-args=-sanitizer-coverage-inline-8bit-counters
  -Cllvm-args=-sanitizer-coverage-pc-table
  -Cllvm-args=-sanitizer-coverage-trace-compares
  --cfg fuzzing
  -Cllvm-args=-simplifycfg-branch-fold-threshold=0
  -Zsanitizer=address
  -Cllvm-args=-sanitizer-coverage-stack-depth
  -Cdebug-assertions
)
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_odr_violation=0
echo "=== building fuzz targets: ${targets[*]}"
RUSTFLAGS="${flags[*]}" cargo +nightly build --target "$triple" --release \
  --config 'profile.release.debug="line-tables-only"' \
  $(printf -- '--bin %s ' "${targets[@]}") || exit 1

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
# One target per core at a time; each still gets its full time.
parallel=${FUZZ_JOBS:-$(nproc)}
run_target() {
  local t=$1
  mkdir -p "$scratch/$t" "corpus/$t" "artifacts/$t"
  "target/$triple/release/$t" -artifact_prefix="artifacts/$t/" "$scratch/$t" "corpus/$t" \
    -max_total_time="$SECONDS_PER_TARGET" -timeout=10 -seed="$SEED" -print_final_stats=1 \
    >"$scratch/$t.log" 2>&1
  echo $? >"$scratch/$t.rc"
}
running=0
for t in "${targets[@]}"; do
  if ((running >= parallel)); then
    wait -n
    running=$((running - 1))
  fi
  run_target "$t" &
  running=$((running + 1))
done
wait
failed=()
for t in "${targets[@]}"; do
  log="$scratch/$t.log"
  rc=$(cat "$scratch/$t.rc" 2>/dev/null || echo 1)
  runs=$(sed -n 's/^Done \([0-9]*\) runs in \([0-9]*\) second.*/\1 runs in \2 s/p' "$log")
  cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -1)
  if [ "$rc" -eq 0 ]; then
    echo "  $t: ok, ${runs:-? runs} ($cov)"
  else
    echo "  $t: FAILED (exit $rc)"
    grep -E -A3 "panicked at|ERROR: libFuzzer" "$log" | head -12 | sed 's/^/    /'
    grep -E "Test unit written to" "$log" | sed 's/^/    /'
    failed+=("$t")
  fi
done
if ((${#failed[@]})); then
  echo "fuzz.sh: FAILED: ${failed[*]}"
  exit 1
fi
echo "fuzz.sh: all targets passed (${SECONDS_PER_TARGET} s each, ${parallel} at a time)"
