//! DMALA on an RBM with 784 visible and 500 hidden units whose `W` is stored in flash as `bf16`
//! (784,000 B; no `Wᵀ`): instructions of the chain's start and per step, and the golden hashes
//! of 20 steps. `.text + .rodata` is the flash figure of the quantised model with its kernel.
//! Run with a small `-icount` shift (a step is millions of instructions, more than the 24-bit
//! SysTick holds at shift 7):
//!
//! ```sh
//! qemu-system-arm -cpu cortex-m4 -machine mps2-an386 -nographic \
//!   -semihosting-config enable=on,target=native -icount shift=2 -kernel rbm784-bf16
//! ```
#![no_std]
#![no_main]

use langevin_core::models::Bf16;
use langevin_firmware::{entry, exit, large_rbm};
use langevin_scenarios::models::{BIG_WEIGHTS, big_rbm_w_bf16};

/// `W` (`500 × 784`, row-major), computed at compile time.
#[allow(long_running_const_eval, reason = "392,000 entries, evaluated once")]
static W: [Bf16; BIG_WEIGHTS] = big_rbm_w_bf16();

#[entry]
fn main() -> ! {
    large_rbm("bf16", &W)
}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    exit(101)
}
