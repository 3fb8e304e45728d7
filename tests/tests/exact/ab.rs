//! The AB kernel with any fixed `(a, b)` is the exact Metropolis-adjusted balanced kernel:
//! enumeration over a grid of `(a, b)` (tolerance 1e-12, see `ordinal_exact.rs`), the frozen
//! tuner reproducing that kernel draw for draw, and sampling-path tests of the frozen tuner on
//! small ordinal and categorical models.

use langevin_core::binary::{BinaryChain, Dmala, FlipProposal};
use langevin_core::categorical::CategoricalProposal;
use langevin_core::models::{Dims, IsingLattice};
use langevin_core::ordinal::OrdinalProposal;
use langevin_core::tuning::{AbSettings, AbTuner};
use langevin_core::{Categorical, Chain, Domain, Eval, Kernel, Ordinal};
use langevin_std::models::OrdinalQuadratic;
use langevin_tests::discrete::*;
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

const TOL: f64 = 1e-12;

/// Step and balance values spanning what the tuner can produce (balance capped at 1).
const GRID: [(f64, f64); 6] = [
    (0.1, 0.5),
    (0.12, 0.6),
    (0.5, 0.35),
    (2.0, 0.8),
    (20.0, 1.0),
    (1e3, 0.96),
];

#[test]
fn ab_kernel_is_exact_for_fixed_parameters_binary() {
    let mut m = IsingLattice::with_dims(Dims { rows: 3, cols: 3 }, 0.35, 0.1, true).unwrap();
    let (states, log_pi, grads) = tabulate_binary(&mut m);
    let pi = normalise(&log_pi);
    for (a, b) in GRID {
        let prop = FlipProposal::new(a, b).unwrap();
        let p = mh_matrix(&log_pi, |i, j| {
            prop.log_q(&states[i], &grads[i], &states[j]).unwrap()
        });
        assert_invariant(&pi, &p, TOL, true);
    }
}

#[test]
fn ab_kernel_is_exact_for_fixed_parameters_ordinal_and_categorical() {
    let mut q = OrdinalQuadratic::rotated_gaussian(3, 4, 3.0, 1.2, 4).unwrap();
    let (states, log_pi, grads, pi) = ordinal_law(&mut q);
    for (a, b) in GRID {
        let prop = OrdinalProposal::new(a, b).unwrap();
        let p = mh_matrix(&log_pi, |i, j| {
            prop.log_q(&states[i], &grads[i], 4, &states[j]).unwrap()
        });
        assert_invariant(&pi, &p, TOL, true);
    }
    let mut m = small_potts(4, 3);
    let states = enumerate(4, 3);
    let (log_pi, grads) = tabulate_categorical(&mut m, &states);
    let pi = normalise(&log_pi);
    for (a, b) in GRID {
        let prop = CategoricalProposal::new(a, b).unwrap();
        let p = mh_matrix(&log_pi, |i, j| {
            prop.log_q(&states[i], &grads[i], 3, &states[j]).unwrap()
        });
        assert_invariant(&pi, &p, TOL, true);
    }
}

/// Once frozen, the tuner's steps are those of `Dmala` with the reported `(a, b)`, bit for bit.
#[test]
fn frozen_tuner_is_the_fixed_kernel() {
    let mut m = IsingLattice::with_dims(Dims { rows: 6, cols: 6 }, 0.3, 0.05, true).unwrap();
    let mut s = AbSettings::default();
    s.budget = 1_500;
    let mut ab = AbTuner::new(s).unwrap();
    let mut buf = BinBuf::new(&[0u8; 36]);
    let mut chain = BinaryChain::new(buf.buffers(), &mut m).unwrap();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
    tune_until_frozen(&mut ab, AbTuner::is_frozen, &mut m, &mut chain, &mut rng);
    let r = ab.report();
    let fixed = Dmala::new(FlipProposal::new(r.step, r.balance).unwrap());
    let mut buf2 = BinBuf::new(chain.state());
    let mut twin = BinaryChain::new(buf2.buffers(), &mut m).unwrap();
    let mut rng2 = rng.clone();
    for _ in 0..500 {
        let r1 = Kernel::step(&mut ab, &mut m, &mut chain, &mut rng).unwrap();
        let r2 = fixed.step(&mut m, &mut twin, &mut rng2).unwrap();
        assert_eq!(r1, r2);
        assert_eq!(chain.state(), twin.state());
    }
    assert_eq!(ab.report(), r, "nothing changes after freezing");
}

const N: usize = 100_000;

#[test]
fn frozen_tuner_samples_ordinal_and_categorical_models() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(11);
    // Ordinal: tune on the model, then run the exact-start protocol with the frozen tuner.
    let mut q = OrdinalQuadratic::rotated_gaussian(4, 4, 3.0, 1.2, 6).unwrap();
    let (states, _, _, pi) = ordinal_law(&mut q);
    let mut s = AbSettings::default();
    s.budget = 3_000;
    check_frozen_ab::<Ordinal, _>("ordinal", &mut q, (&states, &pi), s, &mut rng);
    // Categorical.
    let mut m = small_potts(4, 3);
    let states = enumerate(4, 3);
    let (log_pi, _) = tabulate_categorical(&mut m, &states);
    let pi = normalise(&log_pi);
    check_frozen_ab::<Categorical, _>("potts", &mut m, (&states, &pi), s, &mut rng);
}

/// Tunes AB with settings `s` on `model` from the first of `states` until it freezes, then runs
/// the exact-start protocol with the frozen tuner.
fn check_frozen_ab<D, T>(
    name: &str,
    model: &mut T,
    (states, pi): (&[Vec<u16>], &[f64]),
    s: AbSettings,
    rng: &mut Xoshiro256PlusPlus,
) where
    D: Domain<Value = u16>,
    T: Eval<D>,
    AbTuner: Kernel<D>,
{
    let mut ab = AbTuner::new(s).unwrap();
    let mut buf = LabelBuf::for_domain::<D>(&states[0], model.states()).unwrap();
    let mut chain = Chain::<D>::new(buf.buffers(), model).unwrap();
    tune_until_frozen(&mut ab, AbTuner::is_frozen, model, &mut chain, rng);
    let name = format!("frozen AB {name} {:?}", ab.report());
    check_label_chain(&name, model, &mut ab, &mut chain, (states, pi), N, rng);
}
