//! Sampling-path tests of the ordinal kernels: exact start drawn from π, `k ∈ {1, 10}` steps,
//! `n = 10^5` repeats, pooled chi-square at α = 1e-6 and the TV bound of
//! `langevin_tests::discrete::compare`.

use langevin_core::ordinal::{Dmala, OrdinalProposal, OrdinalTarget};
use langevin_std::models::OrdinalQuadratic;
use langevin_tests::discrete::*;

const N: usize = 100_000;

fn run_dmala<T: OrdinalTarget>(name: &str, model: &mut T, prop: OrdinalProposal<'_>, seed: u64) {
    let (states, _, _, pi) = ordinal_law(model);
    check_label_kernel(name, model, &mut Dmala::new(prop), (&states, &pi), N, seed);
}

#[test]
fn dmala_samples_a_rotated_lattice_gaussian() {
    let mut m = OrdinalQuadratic::rotated_gaussian(4, 4, 3.0, 1.2, 3).unwrap();
    run_dmala(
        "rotated a=1 b=0.5",
        &mut m,
        OrdinalProposal::new(1.0, 0.5).unwrap(),
        1,
    );
    run_dmala(
        "rotated a=8 b=0.9 w=2",
        &mut m,
        OrdinalProposal::new(8.0, 0.9).unwrap().windowed(2).unwrap(),
        2,
    );
}

#[test]
fn dmala_samples_a_non_quadratic_model() {
    let mut m = Wavy::three(5);
    run_dmala(
        "wavy a=2 b=0.7",
        &mut m,
        OrdinalProposal::new(2.0, 0.7).unwrap(),
        3,
    );
    let mut m = Wavy {
        theta: vec![0.1, 0.2, -0.4, 0.0, 0.3, -0.1],
        s: 3,
    };
    run_dmala(
        "wavy d=6 a=0.6 b=0.5",
        &mut m,
        OrdinalProposal::new(0.6, 0.5).unwrap(),
        4,
    );
}
