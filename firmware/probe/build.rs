//! Links the probe with the runtime's `link.x`: cortex-m-rt and the mps2-an386 memory map on Arm,
//! riscv-rt and the QEMU virt map on RISC-V.

use std::{env, fs, path::PathBuf};

fn main() {
    let target = env::var("TARGET").unwrap_or_default();
    let src = if target.starts_with("riscv") {
        "memory-riscv.x"
    } else {
        "memory.x"
    };
    link_runtime(&target, src);
}

include!("../link.rs");
