//! The smallest useful image: one kernel, 1000 steps with seed 1, checked against its golden
//! hashes. Exit status 0 = pass, 2 = mismatch, 6 = run failure, 101 = panic. Its
//! `.text + .rodata` is the flash figure of that kernel with its target.
//!
//! By default the kernel is the integer DMALA on the 8×8 periodic Ising lattice
//! ([`langevin_scenarios::kernels::run_small_lattice`]: its table built at compile time, no
//! floating-point code), and the image prints one line, `stack <bytes>`, the stack high-water
//! mark of the whole program (its RAM is that plus `.data` and `.bss`). Building with
//! `LANGEVIN_FOOTPRINT=<name>` selects instead a run of the kernel table (a name of
//! [`langevin_scenarios::kernels::Run`], such as `ordinal-dmala` or `agld-saga`), or, with
//! `generic-dmala`, the generic DMALA on the same lattice; the choice is a constant, so the
//! image holds that kernel alone and prints nothing.
#![no_std]
#![no_main]

use langevin_core::binary::{Dmala, FlipProposal};
use langevin_firmware::{entry, exit, print_number, stack_high_water};
use langevin_scenarios::Kernel;
use langevin_scenarios::cost::NoMeter;
use langevin_scenarios::golden::{GOLDEN, Model, run_lattice};
use langevin_scenarios::kernels::{
    KERNEL_GOLDEN, KernelGolden, Run, run_kernel, run_small_lattice,
};

/// Which image this is.
#[derive(Clone, Copy)]
enum Choice {
    /// The integer lattice DMALA (the default).
    Small,
    /// The generic DMALA on the 8×8 lattice.
    Generic,
    /// A run of the kernel table.
    Table(KernelGolden),
}

/// The image chosen at build time.
const CHOSEN: Choice = match option_env!("LANGEVIN_FOOTPRINT") {
    Some(name) if same(name.as_bytes(), b"generic-dmala") => Choice::Generic,
    Some(name) => Choice::Table(find(name.as_bytes())),
    None => Choice::Small,
};

const fn find(name: &[u8]) -> KernelGolden {
    let mut i = 0;
    while i < KERNEL_GOLDEN.len() {
        if same(KERNEL_GOLDEN[i].run.name().as_bytes(), name) {
            return KERNEL_GOLDEN[i];
        }
        i += 1;
    }
    panic!("LANGEVIN_FOOTPRINT names no run of the kernel table")
}

/// The pinned hashes of the integer lattice DMALA.
const SMALL: KernelGolden = find(Run::SmallLatticeDmala.name().as_bytes());

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
    match CHOSEN {
        Choice::Small => {
            let (run, stack) =
                stack_high_water(|| run_small_lattice(SMALL.seed, SMALL.steps, &mut NoMeter));
            print_number(b"stack", stack);
            match run {
                Ok(h) if h == SMALL.hashes => exit(0),
                Ok(_) => exit(2),
                Err(_) => exit(6),
            }
        }
        Choice::Table(g) => match run_kernel(g.run, g.seed, g.steps, &mut NoMeter) {
            Ok(h) if h == g.hashes => exit(0),
            Ok(_) => exit(2),
            Err(_) => exit(6),
        },
        Choice::Generic => {}
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
