//! The smallest useful image: DMALA on the 8×8 periodic Ising lattice, 1000 steps with seed 1,
//! checked against the golden hashes. No printing; exit status 0 = pass, 2 = mismatch, 6 = run
//! failure, 101 = panic. Its `.text + .rodata` is the flash figure of DMALA with the lattice.
#![no_std]
#![no_main]

use cortex_m_rt::entry;
use langevin_core::binary::{Dmala, FlipProposal};
use langevin_firmware::exit;
use langevin_scenarios::Kernel;
use langevin_scenarios::golden::{GOLDEN, Model, run_lattice};

#[entry]
fn main() -> ! {
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
