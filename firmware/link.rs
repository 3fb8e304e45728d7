// The part of the board's and the probe's build scripts that links a `#![no_main]` program
// with its runtime; each script includes this file with `include!`.

/// Copies the memory map `src` to `OUT_DIR/memory.x` and links the binaries with the runtime's
/// `link.x`: cortex-m-rt's on Arm (it includes `memory.x` itself), riscv-rt's on RISC-V.
fn link_runtime(target: &str, src: &str) {
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
