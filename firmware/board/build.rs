//! Picks the board's memory map from the target and links with cortex-m-rt's `link.x`.
//! thumbv7m-none-eabi runs on QEMU `lm3s6965evb`, thumbv7em-none-eabihf on `mps2-an386`.

use std::{env, fs, path::PathBuf};

fn main() {
    let target = env::var("TARGET").unwrap_or_default();
    let board = if target.starts_with("thumbv7em") {
        "mps2-an386"
    } else {
        "lm3s6965evb"
    };
    let src = format!("memory-{board}.x");
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR is set by cargo"));
    fs::copy(&src, out.join("memory.x")).expect("memory map copied");
    println!("cargo:rustc-link-search={}", out.display());
    println!("cargo:rustc-env=LANGEVIN_BOARD={board}");
    if target.starts_with("thumb") {
        println!("cargo:rustc-link-arg-bins=-Tlink.x");
    }
    println!("cargo:rerun-if-changed={src}");
    println!("cargo:rerun-if-changed=build.rs");
}
