//! Sampling-path tests of the categorical kernels on Potts models (protocol as in
//! `ordinal_sampling.rs`).

use langevin_core::categorical::{CategoricalProposal, CategoricalTarget, Dmala};
use langevin_tests::discrete::*;

const N: usize = 100_000;

fn run_dmala<T: CategoricalTarget>(
    name: &str,
    model: &mut T,
    prop: CategoricalProposal<'_>,
    seed: u64,
) {
    let (d, s) = (model.dim(), model.states());
    let states = enumerate(d, s);
    let (log_pi, _) = tabulate_categorical(model, &states);
    let pi = normalise(&log_pi);
    check_label_kernel(name, model, &mut Dmala::new(prop), (&states, &pi), N, seed);
}

#[test]
fn dmala_samples_potts() {
    let mut m = small_potts(4, 3);
    run_dmala(
        "potts 4x3 a=1 b=0.5",
        &mut m,
        CategoricalProposal::new(1.0, 0.5).unwrap(),
        1,
    );
    run_dmala(
        "potts 4x3 a=4 b=0.8",
        &mut m,
        CategoricalProposal::new(4.0, 0.8).unwrap(),
        2,
    );
    let mut m = small_potts(3, 5);
    run_dmala(
        "potts 3x5 a=0.5 b=0.6",
        &mut m,
        CategoricalProposal::new(0.5, 0.6).unwrap(),
        3,
    );
}
