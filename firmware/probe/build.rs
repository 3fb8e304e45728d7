//! Links the probe with cortex-m-rt's `link.x` and the mps2-an386 memory map.

use std::{env, fs, path::PathBuf};

fn main() {
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR is set by cargo"));
    fs::copy("memory.x", out.join("memory.x")).expect("memory map copied");
    println!("cargo:rustc-link-search={}", out.display());
    if env::var("TARGET").unwrap_or_default().starts_with("thumb") {
        println!("cargo:rustc-link-arg-bins=-Tlink.x");
    }
    println!("cargo:rerun-if-changed=memory.x");
    println!("cargo:rerun-if-changed=build.rs");
}
