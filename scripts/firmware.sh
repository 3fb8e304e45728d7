#!/usr/bin/env bash
# Embedded checks of langevin: firmware images on emulated boards (Cortex-M3, Cortex-M4F,
# Cortex-M0 and RV32IMAC), footprint, the no-panic link proof, the C ABI, host instruction counts
# and the host golden hashes.
#
#   scripts/firmware.sh            # every check
#   scripts/firmware.sh boards ffi # some of them (setup golden boards footprint rbm784 probe ffi
#                                  # hostcount; packages installs the system packages alone)
#
# Every check runs even if an earlier one failed; the exit status is non-zero if any failed.
# Installs what it needs (rustup targets, llvm-tools, qemu-system-arm, qemu-system-misc for
# qemu-system-riscv32, valgrind, the Arm and RISC-V C cross compilers) when missing.
# Do not set RUSTFLAGS: the firmware crates pass their link arguments from build scripts.
# HOST_TESTS_RAN=1 skips the host tests that `cargo test --workspace` has run already in the
# same job (golden_host, langevin-ffi's tests); `.ci/run` sets it after its test stage.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
FW="$ROOT/firmware"
M3=thumbv7m-none-eabi
M4=thumbv7em-none-eabihf
M0=thumbv6m-none-eabi
RV=riscv32imac-unknown-none-elf
BOARDS=("$M3" "$M4" "$M0" "$RV")
QEMU_COMMON=(-nographic -semihosting-config enable=on,target=native -icount shift=7)
QEMU_TIMEOUT=${QEMU_TIMEOUT:-600}
FLASH_BUDGET=16384
LOGS="$ROOT/target/firmware-logs"

log() { printf '\n=== %s\n' "$*"; }
# Keeps the lines of test output worth reading (the pipeline status is cargo's).
quiet() { grep -vE '^(running 0 tests|test result: ok. 0 passed.*|\.+|running [0-9]+ tests?|)$' || true; }
llvm_bin() { echo "$(rustc --print sysroot)/lib/rustlib/x86_64-unknown-linux-gnu/bin"; }

qemu_args() { # TARGET -> machine arguments
  case $1 in
    "$M3") echo "-cpu cortex-m3 -machine lm3s6965evb" ;;
    "$M4") echo "-cpu cortex-m4 -machine mps2-an386" ;;
    "$M0") echo "-cpu cortex-m0 -machine lm3s6965evb" ;;
    "$RV") echo "-machine virt -bios none" ;;
  esac
}
qemu_of() { case $1 in "$RV") echo qemu-system-riscv32 ;; *) echo qemu-system-arm ;; esac; }
c_flags_of() { # TARGET -> arm-none-eabi-gcc (riscv64-unknown-elf-gcc) flags
  case $1 in
    "$M3") echo "-mcpu=cortex-m3 -mthumb -mfloat-abi=soft" ;;
    "$M4") echo "-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16" ;;
    "$M0") echo "-mcpu=cortex-m0 -mthumb -mfloat-abi=soft" ;;
    "$RV") echo "-march=rv32imac -mabi=ilp32" ;;
  esac
}
board_of() {
  case $1 in
    "$M3") echo lm3s6965evb ;; "$M4") echo mps2-an386 ;;
    "$M0") echo "lm3s6965evb -cpu cortex-m0" ;; "$RV") echo "virt rv32imac" ;;
  esac
}
# A short name for log files.
core_of() { case $1 in "$M3") echo m3 ;; "$M4") echo m4f ;; "$M0") echo m0 ;; "$RV") echo rv32 ;; esac; }

# Runs an image under QEMU; output goes to a log (never pipe QEMU into a reader that may close
# early: it hangs). Returns QEMU's exit status, which is the guest's.
run_qemu() { # TARGET ELF LOG
  # shellcheck disable=SC2046
  timeout "$QEMU_TIMEOUT" "$(qemu_of "$1")" $(qemu_args "$1") "${QEMU_COMMON[@]}" -kernel "$2" \
    </dev/null >"$3" 2>&1
}

setup() {
  log "setup: targets, llvm-tools, qemu, valgrind"
  rustup target add "${BOARDS[@]}" >/dev/null || return 1
  rustup component add llvm-tools >/dev/null || return 1
  packages || return 1
  qemu-system-arm --version | head -1
  qemu-system-riscv32 --version | head -1
}

# The system packages alone (emulators, valgrind, the C cross compilers), installed when missing.
packages() {
  local need=()
  command -v qemu-system-arm >/dev/null || need+=(qemu-system-arm)
  command -v qemu-system-riscv32 >/dev/null || need+=(qemu-system-misc)
  command -v valgrind >/dev/null || need+=(valgrind)
  command -v gcc >/dev/null || need+=(gcc libc6-dev)
  command -v arm-none-eabi-gcc >/dev/null || need+=(gcc-arm-none-eabi libnewlib-arm-none-eabi)
  command -v riscv64-unknown-elf-gcc >/dev/null || need+=(gcc-riscv64-unknown-elf)
  if ((${#need[@]})); then
    apt-get update -q >/dev/null &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}" \
        >/dev/null || return 1
  fi
}

golden() {
  log "golden hashes on the host (x86_64)"
  if [ -n "${HOST_TESTS_RAN:-}" ]; then
    echo "golden_host: passed in this run's workspace tests"
  else
    (cd "$ROOT" && cargo test -q -p langevin-tests --test golden_host 2>&1 | quiet) || return 1
  fi
  (cd "$FW" && cargo test -q -p langevin-scenarios 2>&1 | quiet) || return 1
}

flash_of() {
  case $1 in
    "$M3" | "$M0") echo $((256 * 1024)) ;; "$M4") echo $((4 * 1024 * 1024)) ;;
    "$RV") echo $((16 * 1024 * 1024)) ;; # virt: the program runs from RAM
  esac
}
# Every kernel at opt-level 3 no longer fits the lm3s6965evb's 256 KiB of flash; the Cortex-M3 and
# Cortex-M0 checks are built size-optimised (the footprint profile, opt-level s), which changes
# instruction counts but not values (the golden hashes are the same at every optimisation level).
profile_of() { case $1 in "$M3" | "$M0") echo footprint ;; *) echo release ;; esac; }
# The sections a flash part holds (RISC-V's start-up code is in .init.rust).
FLASH_SECTIONS='$1 == ".vector_table" || $1 == ".text" || $1 == ".init.rust" || $1 == ".rodata" || $1 == ".data"'


# Builds in firmware/ for several boards with as few cargo calls as possible: the Arm targets
# together, so that their crates compile side by side (code generation is one unit per crate).
# RISC-V gets a call of its own: one call unifies features across its targets, and the two
# run-times ask for different features of one crate.
fw_build() { # TARGET... -- CARGO_BUILD_ARGS...
  local arm=() rv=()
  while [ "$1" != -- ]; do
    if [ "$1" = "$RV" ]; then rv=(--target "$RV"); else arm+=(--target "$1"); fi
    shift
  done
  shift
  (cd "$FW" && { ((${#arm[@]} == 0)) || cargo build -q "$@" "${arm[@]}"; } &&
    { ((${#rv[@]} == 0)) || cargo build -q "$@" "${rv[@]}"; })
}

# Starts the check image of each TARGET under QEMU in the background, and records its process
# in the caller's pid.
start_checks() { # TARGET...
  local t
  for t in "$@"; do
    run_qemu "$t" "$FW/target/$t/$(profile_of "$t")/check" "$LOGS/check-$(core_of "$t").log" &
    pid[$t]=$!
  done
}

boards() {
  local t rc status=0
  mkdir -p "$LOGS"
  # The emulators run side by side (each QEMU is one thread; the runs take most of the time).
  # The size-optimised images are built first: the Cortex-M0's run is the longest, and the
  # other two images build while it runs.
  local -A pid rc_of
  fw_build "$M3" "$M0" -- -p langevin-firmware --bin check --profile footprint || return 1
  start_checks "$M0" "$M3"
  fw_build "$M4" "$RV" -- -p langevin-firmware --bin check --profile release &&
    start_checks "$M4" "$RV"
  for t in "${!pid[@]}"; do
    wait "${pid[$t]}"
    rc_of[$t]=$?
  done
  for t in "${BOARDS[@]}"; do
    local elf="$FW/target/$t/$(profile_of "$t")/check" l="$LOGS/check-$(core_of "$t").log"
    log "firmware check on $(board_of "$t") ($t, profile $(profile_of "$t"))"
    [ -n "${rc_of[$t]:-}" ] || { echo "  not run: the image did not build"; status=1; continue; }
    # The linker refuses an image beyond the board's flash; show how close it is.
    "$(llvm_bin)/llvm-size" -A "$elf" | awk -v flash="$(flash_of "$t")" "$FLASH_SECTIONS"' { n += $2 }
      END { printf "  image: %d B of %d B flash (%.0f%%)\n", n, flash, 100 * n / flash }'
    rc=${rc_of[$t]}
    grep -E "^golden" "$l" | sed 's/^/  /'
    grep -E "OVER BOUND|MISMATCH|failed|panic|fault|trap" "$l" | sed 's/^/  /'
    grep -E "^(calibration|stack|RAM|whole|status)" "$l" | sed 's/^/  /'
    echo "  exit status $rc (log: ${l#"$ROOT"/})"
    [ "$rc" -eq 0 ] || status=1
  done
  return $status
}

# Budgets of the footprint images (flash = .text + .rodata; RAM = .data + .bss + .uninit + the
# stack high-water mark the image prints). The default image, the integer lattice DMALA on the
# 8x8 lattice with its chain buffers, must fit 8 KiB of flash and 1 KiB of RAM on every board.
# The generic DMALA on the same lattice (LANGEVIN_FOOTPRINT=generic-dmala) has 16 KiB of flash,
# and 20 KiB on RV32IMAC, whose soft-float routines and start-up code take more bytes than
# Thumb-2's (18.6 KiB measured); its chain lives on the stack and its RAM is not bounded here.
SMALL_FLASH=8192
SMALL_RAM=1024
budget_of() { case $1 in "$RV") echo 20480 ;; *) echo $FLASH_BUDGET ;; esac; }

# Builds the footprint image NAME for every board.
footprint_build() { # NAME
  if [ "$1" = small ]; then
    (unset LANGEVIN_FOOTPRINT
      fw_build "${BOARDS[@]}" -- -p langevin-firmware --bin footprint --profile footprint)
  else
    LANGEVIN_FOOTPRINT=$1 fw_build "${BOARDS[@]}" -- -p langevin-firmware --bin footprint \
      --profile footprint
  fi
}

# Runs one footprint image (built by footprint_build) and checks it against its budgets.
footprint_image() { # TARGET NAME FLASH_BUDGET RAM_BUDGET (0: not bounded)
  local t=$1 name=$2 rc B elf="$FW/target/$1/footprint/footprint" l
  B="$(llvm_bin)"
  l="$LOGS/footprint-$name-$(core_of "$t").log"
  run_qemu "$t" "$elf" "$l"
  rc=$?
  local stack
  stack=$(sed -n 's/^stack \([0-9]*\)$/\1/p' "$l" | tail -1)
  "$B/llvm-size" -A "$elf" | awk -v budget="$3" -v ram_budget="$4" -v rc="$rc" -v stack="${stack:-0}" '
    $1 == ".vector_table" { vec = $2 } $1 == ".text" || $1 == ".init.rust" { text += $2 }
    $1 == ".rodata" { ro = $2 } $1 == ".data" { data = $2 } $1 == ".bss" { bss = $2 }
    $1 == ".uninit" { un = $2 }
    END {
      printf "  flash: .text %d + .rodata %d = %d B (budget %d), plus vector table %d B\n",
             text, ro, text + ro, budget, vec
      if (ram_budget > 0) {
        ram = data + bss + un + stack
        printf "  RAM: .data %d + .bss %d + .uninit %d + stack high-water %d = %d B (budget %d)\n",
               data, bss, un, stack, ram, ram_budget
      } else {
        printf "  static RAM: .data %d + .bss %d + .uninit %d B (the chain lives on the stack)\n",
               data, bss, un
      }
      printf "  run: exit status %d\n", rc
      exit (text + ro > budget || rc != 0 || (ram_budget > 0 && (stack == 0 || ram > ram_budget)))
    }'
}

footprint() {
  local t status=0
  mkdir -p "$LOGS"
  footprint_build small || return 1
  for t in "${BOARDS[@]}"; do
    log "footprint: integer DMALA + 8x8 Ising + chain buffers on $(board_of "$t") (profile footprint)"
    footprint_image "$t" small "$SMALL_FLASH" "$SMALL_RAM" || status=1
  done
  footprint_build generic-dmala || return 1
  for t in "${BOARDS[@]}"; do
    log "footprint: generic DMALA + 8x8 Ising on $(board_of "$t") (profile footprint, opt-level s)"
    footprint_image "$t" generic-dmala "$(budget_of "$t")" 0 || status=1
  done
  return $status
}

# DMALA on a 784 x 500 RBM on the Cortex-M4F, W in flash as bf16 then as f32 (no W^T): flash and
# RAM of each image, instructions of the chain's start and per step, and the golden hashes of 20
# steps (the same for both: every weight is exact in bf16). A step is millions of instructions,
# beyond the 24-bit SysTick at shift 7, so these images run at shift 2 (4 ns per instruction).
rbm784() {
  local f rc elf l status=0
  mkdir -p "$LOGS"
  (cd "$FW" && cargo build -q -p langevin-firmware --bin rbm784-bf16 --bin rbm784-f32 \
    --target "$M4" --release) || return 1
  for f in bf16 f32; do
    elf="$FW/target/$M4/release/rbm784-$f"
    l="$LOGS/rbm784-$f-$(core_of "$M4").log"
    log "RBM 784x500, W in $f, DMALA on $(board_of "$M4") (profile release)"
    # shellcheck disable=SC2046
    timeout "$QEMU_TIMEOUT" qemu-system-arm $(qemu_args "$M4") -nographic \
      -semihosting-config enable=on,target=native -icount shift=2 -kernel "$elf" </dev/null >"$l" 2>&1
    rc=$?
    local stack
    stack=$(sed -n 's/^stack high-water \([0-9]*\) B.*/\1/p' "$l" | tail -1)
    "$(llvm_bin)/llvm-size" -A "$elf" | awk -v stack="${stack:-0}" '
      $1 == ".vector_table" { vec = $2 } $1 == ".text" { text = $2 } $1 == ".rodata" { ro = $2 }
      $1 == ".data" { data = $2 } $1 == ".bss" { bss = $2 } $1 == ".uninit" { un = $2 }
      END {
        printf "  flash: .text %d + .rodata %d = %d B of 4 MiB, plus vector table %d B\n",
               text, ro, text + ro, vec
        printf "  RAM: .data %d + .bss %d + .uninit %d + stack high-water %d = %d B\n",
               data, bss, un, stack, data + bss + un + stack
      }'
    grep -vE "^stack high-water" "$l" | sed 's/^/  /'
    echo "  exit status $rc (log: ${l#"$ROOT"/})"
    [ "$rc" -eq 0 ] || status=1
  done
  return $status
}

# Lists the crate source lines that still call into a panic path of an ELF built with the
# probe's `locate` feature (uses the debug information).
locate_panics() {
  local elf=$1 B
  B="$(llvm_bin)"
  "$B/llvm-objdump" -d --no-show-raw-insn -C "$elf" |
    grep -E $'\t(bl|b|b\\.w|blx|jal|j|call|tail)\t.*<(core::panicking::|core::slice::.*fail|core::option::.*failed|core::result::unwrap_failed)' |
    while read -r addr _; do
      addr2line -e "$elf" -i -f -C "0x${addr%:}" | paste - - | grep -v "/rustc/" | head -1 |
        awk '{print $NF}' | sed 's|.*/\(core/src/\)|\1|; s|.*/\(ffi/src/\)|\1|'
    done | sort | uniq -c | sed 's/^/  panic reachable from /'
}

probe() {
  local t status=0
  # The images build side by side; a failed link is then looked at target by target.
  fw_build "$M4" "$M0" "$RV" -- -p langevin-nopanic --release 2>/dev/null
  for t in "$M4" "$M0" "$RV"; do
    log "no-panic probe: every public step function linked with an undefined panic handler ($t)"
    if (cd "$FW" && cargo build -q -p langevin-nopanic --target "$t" --release \
      2>"$LOGS/probe-$(core_of "$t").log"); then
      echo "  linked: no panic is reachable"
      continue
    fi
    status=1
    grep -E "undefined symbol|error:" "$LOGS/probe-$(core_of "$t").log" | head -3 | sed 's/^/  /'
    (cd "$FW" && cargo build -q -p langevin-nopanic --target "$t" --release --features locate) &&
      locate_panics "$FW/target/$t/release/langevin-nopanic"
  done
  return $status
}

# Links a bare-metal archive alone, keeping every exported lgv_* symbol: fails on any
# unresolved symbol (an allocator, std, or the no-panic-proof handler).
link_archive() { # ARCHIVE OUT
  local B syms
  B="$(llvm_bin)"
  syms=$("$B/llvm-nm" --defined-only "$1" 2>/dev/null | awk '$2 == "T" && $3 ~ /^lgv_/ { print $3 }' | sort -u)
  # shellcheck disable=SC2046
  "$B/rust-lld" -flavor gnu --gc-sections --no-undefined -e lgv_chain_step \
    $(for s in $syms; do printf -- '-u %s ' "$s"; done) "$1" -o "$2"
}

# The C ABI's bring-your-own-target example (a C energy through the log-density callback,
# checked against exact enumeration): built and run on the host, then linked for the Cortex-M4F
# board with the start-up code of the other C examples (ffi starts it under QEMU, and
# ffi_energy_report reads its run). LIBS: the host archive's system libraries.
ffi_energy() {
  local libs=$1 elf="$ROOT/target/$M4/release/ffi-energy.elf" status=0
  log "C ABI: a user energy in C (examples/energy.c) against enumeration, on the host"
  # shellcheck disable=SC2086
  gcc -std=c11 -O2 -Wall -Wextra -Werror -pedantic -I"$ROOT/ffi/include" \
    "$ROOT/ffi/examples/energy.c" "$ROOT/target/release/liblangevin_ffi.a" $libs \
    -o "$ROOT/target/release/ffi-energy" || return 1
  "$ROOT/target/release/ffi-energy" | sed 's/^/  /' || status=1
  # shellcheck disable=SC2086
  gcc -std=c11 -O2 -Wall -Wextra -Werror -pedantic -I"$ROOT/ffi/include" \
    "$ROOT/ffi/examples/bench_callback.c" "$ROOT/target/release/liblangevin_ffi.a" $libs \
    -o "$ROOT/target/release/ffi-bench-callback" || status=1
  # shellcheck disable=SC2046
  arm-none-eabi-gcc $(c_flags_of "$M4") -std=c11 -O2 -Wall -Wextra -Werror -I"$ROOT/ffi/include" \
    "$ROOT/ffi/examples/energy.c" "$ROOT/ffi/examples/qemu/cortex-m.c" \
    "$ROOT/target/$M4/release/liblangevin_ffi.a" -ffunction-sections -fdata-sections \
    -Wl,--gc-sections -Wl,-z,noexecstack -nostartfiles -T "$ROOT/ffi/examples/qemu/cortex-m.ld" \
    --specs=nano.specs -u _printf_float --specs=nosys.specs -lm -o "$elf" || { rm -f "$elf"; return 1; }
  return $status
}

# Reports the run of the energy image on the Cortex-M4F board: its line must say "exact".
ffi_energy_report() {
  log "C ABI: the same program on $(board_of "$M4") ($M4, QEMU, semihosting)"
  sed 's/^/  /' "$LOGS/ffi-energy.log"
  grep -q ': exact$' "$LOGS/ffi-energy.log"
}

# Runs a C example image under QEMU; its line must be the host's, character for character.
run_example() { # TARGET ELF HOST_LINE
  local l rc
  l="$LOGS/ffi-example-$(core_of "$1").log"
  run_qemu "$1" "$2" "$l"
  rc=$?
  grep -E '^langevin ' "$l" | sed 's/^/  /'
  if [ "$rc" -ne 0 ] || ! grep -qxF "$3" "$l"; then
    echo "  exit status $rc; not the host's line: $3"
    return 1
  fi
  echo "  exit status 0, the same line as on the host"
}

# Starts run_example for TARGET's linked example in the background, its report in a file, and
# records its process in the caller's run_of.
start_example() { # TARGET HOST_LINE
  run_example "$1" "$ROOT/target/$1/release/ffi-example-qemu.elf" "$2" \
    >"$LOGS/ffi-example-$(core_of "$1").out" 2>&1 &
  run_of[$1]=$!
}

ffi() {
  local t status=0 B
  B="$(llvm_bin)"
  log "C ABI: Rust-side tests (header, expected values, statuses)"
  if [ -n "${HOST_TESTS_RAN:-}" ]; then
    echo "langevin-ffi tests: passed in this run's workspace tests"
  else
    (cd "$ROOT" && cargo test -q -p langevin-ffi 2>&1 | quiet) || status=1
  fi
  log "C ABI: C test program (gcc) against the static library"
  # One build of the archive, which also names the system libraries a C program links with it.
  local out libs
  out=$(cd "$ROOT" && cargo rustc -q -p langevin-ffi --release --crate-type staticlib -- \
    --print native-static-libs 2>&1) || { echo "$out"; return 1; }
  libs=$(sed -n 's/.*native-static-libs: //p' <<<"$out" | tail -1)
  gcc -std=c11 -O2 -Wall -Wextra -Werror -pedantic -I"$ROOT/ffi/include" -I"$ROOT/ffi/c" \
    "$ROOT/ffi/c/test_ffi.c" "$ROOT/target/release/liblangevin_ffi.a" $libs \
    -o "$ROOT/target/release/ffi-c-test" || return 1
  "$ROOT/target/release/ffi-c-test" | tail -1 || status=1
  log "C ABI: the example program of ffi/README.md, built and run on the host"
  gcc -std=c11 -O2 -Wall -Wextra -Werror -pedantic -I"$ROOT/ffi/include" \
    "$ROOT/ffi/examples/ising.c" "$ROOT/target/release/liblangevin_ffi.a" $libs \
    -o "$ROOT/target/release/ffi-example" || return 1
  local host_line
  host_line=$("$ROOT/target/release/ffi-example" | grep -E '^langevin [0-9.]+: .*acceptance')
  [ -n "$host_line" ] || status=1
  echo "$host_line"
  local targets=()
  for t in "${BOARDS[@]}"; do targets+=(--target "$t"); done
  (cd "$ROOT" && cargo build -q -p langevin-ffi "${targets[@]}" --release --no-default-features) ||
    return 1
  # Each board's example runs in the background as soon as it is linked; the reports are
  # printed in board order once all have run.
  local -A run_of
  for t in "${BOARDS[@]}"; do
    log "C ABI: no_std archive for $t links alone (no allocator, no unresolved symbols)"
    if link_archive "$ROOT/target/$t/release/liblangevin_ffi.a" "$ROOT/target/$t/release/ffi-only.elf"; then
      "$B/llvm-size" "$ROOT/target/$t/release/ffi-only.elf" | tail -1 | awk '{printf "  text %d B\n", $1}'
    else
      status=1
    fi
    if [ "$t" = "$RV" ]; then
      # No C library for RISC-V here (Debian's picolibc is 1 GB): the example is built
      # freestanding, with the start-up code and the small printf of ffi/examples/qemu/riscv.c.
      log "C ABI: the example program built for $t (riscv64-unknown-elf-gcc, freestanding)"
      # shellcheck disable=SC2046
      riscv64-unknown-elf-gcc $(c_flags_of "$t") -ffreestanding -nostdlib -std=c11 -O2 -Wall -Wextra \
        -Werror -I"$ROOT/ffi/include" -I"$ROOT/ffi/examples/qemu/riscv-include" \
        "$ROOT/ffi/examples/ising.c" "$ROOT/ffi/examples/qemu/riscv.c" \
        "$ROOT/target/$t/release/liblangevin_ffi.a" -lgcc -ffunction-sections -fdata-sections \
        -Wl,--gc-sections -Wl,--no-warn-rwx-segments -T "$ROOT/ffi/examples/qemu/riscv.ld" \
        -o "$ROOT/target/$t/release/ffi-example-qemu.elf" || { status=1; continue; }
      start_example "$t" "$host_line"
      continue
    fi
    log "C ABI: the example program built for $t (arm-none-eabi-gcc, newlib)"
    # shellcheck disable=SC2046
    arm-none-eabi-gcc $(c_flags_of "$t") -std=c11 -O2 -Wall -Wextra -Werror -I"$ROOT/ffi/include" \
      "$ROOT/ffi/examples/ising.c" "$ROOT/target/$t/release/liblangevin_ffi.a" \
      -ffunction-sections -fdata-sections -Wl,--gc-sections -Wl,-z,noexecstack --specs=nano.specs -u _printf_float \
      --specs=nosys.specs -o "$ROOT/target/$t/release/ffi-example.elf" || status=1
    arm-none-eabi-size "$ROOT/target/$t/release/ffi-example.elf" | tail -1 |
      awk '{printf "  linked: text %d B, data %d B, bss %d B\n", $1, $2, $3}'
    # shellcheck disable=SC2046
    arm-none-eabi-gcc $(c_flags_of "$t") -std=c11 -O2 -Wall -Wextra -Werror -I"$ROOT/ffi/include" \
      "$ROOT/ffi/examples/ising.c" "$ROOT/ffi/examples/qemu/cortex-m.c" \
      "$ROOT/target/$t/release/liblangevin_ffi.a" -ffunction-sections -fdata-sections \
      -Wl,--gc-sections -Wl,-z,noexecstack -nostartfiles -T "$ROOT/ffi/examples/qemu/cortex-m.ld" \
      --specs=nano.specs -u _printf_float --specs=nosys.specs \
      -o "$ROOT/target/$t/release/ffi-example-qemu.elf" || { status=1; continue; }
    start_example "$t" "$host_line"
  done
  local energy_elf="$ROOT/target/$M4/release/ffi-energy.elf" energy=
  rm -f "$energy_elf"
  ffi_energy "$libs" || status=1
  if [ -f "$energy_elf" ]; then
    run_qemu "$M4" "$energy_elf" "$LOGS/ffi-energy.log" &
    energy=$!
  fi
  # The no-panic proof builds while the emulators run (one thread each); its report is kept
  # until theirs are printed. Every image is linked by now: the proof replaces the board's
  # archive.
  local proof
  proof=$(ffi_proof 2>&1) || status=1
  for t in "${BOARDS[@]}"; do
    [ -n "${run_of[$t]:-}" ] || continue
    log "C ABI: the example program run on $(board_of "$t") (semihosting start-up of ffi/examples/qemu)"
    wait "${run_of[$t]}" || status=1
    cat "$LOGS/ffi-example-$(core_of "$t").out"
  done
  if [ -n "$energy" ]; then
    wait "$energy" || status=1
    ffi_energy_report || status=1
  fi
  echo "$proof"
  return $status
}

# Builds the Cortex-M4F archive with the no-panic-proof feature and links it alone: the link
# fails if any lgv_* function can reach a panic.
ffi_proof() {
  log "C ABI: no panic reachable from any lgv_* function ($M4, --no-undefined)"
  # In the same target folder, so that the core built for the boards is reused; this archive
  # replaces the board's plain one, which every program has already linked (ffi calls this
  # last).
  (cd "$ROOT" && cargo build -q -p langevin-ffi --target "$M4" --release --no-default-features \
    --features no-panic-proof) || return 1
  if link_archive "$ROOT/target/$M4/release/liblangevin_ffi.a" "$ROOT/target/$M4/release/ffi-proof.elf" \
    2>"$LOGS/ffi-proof.log"; then
    echo "  linked: no panic is reachable"
  else
    grep -E "undefined symbol|referenced by" "$LOGS/ffi-proof.log" | head -2 | sed 's/^/  /'
    return 1
  fi
}

hostcount() {
  log "host instructions per step (callgrind, x86_64): nominal against extreme"
  (cd "$FW" && cargo build -q -p langevin-hostcount --release) || return 1
  local bin="$FW/target/release/langevin-hostcount" steps=200 counts="$LOGS/hostcount"
  local -a ir
  local status=0 line i kernel base tag name n
  # Count every case first, one per core at a time (callgrind is one thread), then report in order.
  rm -rf "$counts" && mkdir -p "$counts"
  "$bin" list | cut -f1 | xargs -P "$(nproc)" -I{} sh -c 'valgrind --tool=callgrind \
    --callgrind-out-file=/dev/null --toggle-collect="*metered_step*" "$1" {} "$2" 2>&1 >/dev/null |
    sed -n "s/.*Collected : \([0-9]*\).*/\1/p" >"$3/{}"' sh "$bin" "$steps" "$counts"
  while IFS=$'\t' read -r i kernel base tag name; do
    n=$(cat "$counts/$i" 2>/dev/null)
    [ -n "$n" ] || { echo "  $kernel $name: callgrind failed"; status=1; continue; }
    ir[$i]=$((n / steps))
    local b=${ir[$base]:-0}
    line=$(awk -v x="${ir[$i]}" -v b="$b" 'BEGIN { printf "%.2f", (b > 0 ? x / b : 0) }')
    if [ "$tag" = bounded ] && [ "$i" != "$base" ] && awk -v r="$line" 'BEGIN { exit !(r > 1.25) }'; then
      tag="OVER BOUND"
      status=1
    fi
    printf '  %-5s %-16s %8d Ir/step  x%s  %s\n' "$kernel" "$name" "${ir[$i]}" "$line" "$tag"
  done < <("$bin" list)
  return $status
}

main() {
  local steps=("$@") failed=()
  ((${#steps[@]})) || steps=(setup golden boards footprint rbm784 probe ffi hostcount)
  mkdir -p "$LOGS"
  local start
  for s in "${steps[@]}"; do
    start=$SECONDS
    "$s" || failed+=("$s")
    printf '  (%s: %d s)\n' "$s" $((SECONDS - start))
  done
  echo
  if ((${#failed[@]})); then
    echo "firmware.sh: FAILED: ${failed[*]}"
    return 1
  fi
  echo "firmware.sh: all checks passed (${steps[*]})"
}

main "$@"
