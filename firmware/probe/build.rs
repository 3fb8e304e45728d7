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
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR is set by cargo"));
    fs::copy(src, out.join("memory.x")).expect("memory map copied");
    println!("cargo:rustc-link-search={}", out.display());
    if target.starts_with("thumb") {
        println!("cargo:rustc-link-arg-bins=-Tlink.x");
    } else if target.starts_with("riscv") {
        // riscv-rt's `link.x` does not include the memory map itself.
        println!("cargo:rustc-link-arg-bins=-Tmemory.x");
        println!("cargo:rustc-link-arg-bins=-Tlink.x");
    }
    println!("cargo:rerun-if-changed={src}");
    println!("cargo:rerun-if-changed=build.rs");
}
