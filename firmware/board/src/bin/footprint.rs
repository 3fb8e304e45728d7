//! The smallest useful image: one kernel, 1000 steps with seed 1, checked against its golden
//! hashes. No printing; exit status 0 = pass, 2 = mismatch, 6 = run failure, 101 = panic. Its
//! `.text + .rodata` is the flash figure of that kernel with its target.
//!
//! By default the kernel is DMALA on the 8×8 periodic Ising lattice. Building with
//! `LANGEVIN_FOOTPRINT=<name>` (a name of [`langevin_scenarios::kernels::Run`], such as
//! `ordinal-dmala` or `agld-saga`) selects that run of the kernel table instead; the choice is a
//! constant, so the image holds that kernel alone.
#![no_std]
#![no_main]

use langevin_core::binary::{Dmala, FlipProposal};
use langevin_firmware::{entry, exit};
use langevin_scenarios::Kernel;
use langevin_scenarios::cost::NoMeter;
use langevin_scenarios::golden::{GOLDEN, Model, run_lattice};
use langevin_scenarios::kernels::{KERNEL_GOLDEN, KernelGolden, run_kernel};

/// The run chosen at build time, if any.
const CHOSEN: Option<KernelGolden> = match option_env!("LANGEVIN_FOOTPRINT") {
    Some(name) => find(name.as_bytes()),
    None => None,
};

const fn find(name: &[u8]) -> Option<KernelGolden> {
    let mut i = 0;
    while i < KERNEL_GOLDEN.len() {
        if same(KERNEL_GOLDEN[i].run.name().as_bytes(), name) {
            return Some(KERNEL_GOLDEN[i]);
        }
        i += 1;
    }
    panic!("LANGEVIN_FOOTPRINT names no run of the kernel table")
}

const fn same(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

#[entry]
fn main() -> ! {
    if let Some(g) = CHOSEN {
        match run_kernel(g.run, g.seed, g.steps, &mut NoMeter) {
            Ok(h) if h == g.hashes => exit(0),
            Ok(_) => exit(2),
            Err(_) => exit(6),
        }
    }
    let Ok(proposal) = FlipProposal::new(0.5, 0.5) else {
        exit(6)
    };
    let expected = GOLDEN
        .iter()
        .find(|g| g.model == Model::Lattice8x8 && g.kernel == Kernel::Dmala && g.seed == 1);
    match (run_lattice(Dmala::new(proposal), 1, 1000), expected) {
        (Ok(h), Some(g)) if h == g.hashes => exit(0),
        (Ok(_), _) => exit(2),
        (Err(_), _) => exit(6),
    }
}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    exit(101)
}
