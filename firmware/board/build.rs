//! Picks the board's memory map from the target and links with the runtime's `link.x`.
//!
//! * thumbv7m-none-eabi: QEMU `lm3s6965evb` (Cortex-M3);
//! * thumbv6m-none-eabi: the same board with `-cpu cortex-m0`;
//! * thumbv7em-none-eabihf: `mps2-an386` (Cortex-M4F);
//! * riscv32imac-unknown-none-elf: `virt` (RV32IMAC, `riscv-rt`).

use std::{env, fs, path::PathBuf};

fn main() {
    let target = env::var("TARGET").unwrap_or_default();
    let (board, map) = if target.starts_with("thumbv7em") {
        ("mps2-an386", "mps2-an386")
    } else if target.starts_with("riscv32") {
        ("virt", "riscv-virt")
    } else {
        ("lm3s6965evb", "lm3s6965evb")
    };
    println!("cargo:rustc-env=LANGEVIN_BOARD={board}");
    println!("cargo::rustc-check-cfg=cfg(armv6m)");
    if target.starts_with("thumbv6m") {
        println!("cargo:rustc-cfg=armv6m");
    }
    link_runtime(&target, &format!("memory-{map}.x"));
}

include!("../link.rs");
