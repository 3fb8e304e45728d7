//! Discrete Langevin Monte Carlo by enumeration: transition matrices built from the kernel's own
//! `step` (the lane layout of the balanced proposals; see `langevin_tests::harness`), checked for
//! detailed balance and `πP = π` at the step harness's tolerance; and the adapted time is stored
//! during burn-in and frozen afterwards.

use langevin_core::Kernel;
use langevin_core::binary::{BinaryChain, ChainStorage};
use langevin_core::dlmc::{
    CategoricalDlmcProposal, DLMC_TARGET_ACCEPTANCE, DlmcProposal, Solver, TunedDlmc,
};
use langevin_core::kernel::Dmala;
use langevin_core::models::{BinaryQuadratic, ConstDims, Dims, IsingLattice};
use langevin_tests::QuadraticData;
use langevin_tests::discrete::small_potts;
use langevin_tests::harness::{
    BinaryProbe, CategoricalProbe, StepMatrix, check_step_matrix, step_transition_matrix,
};
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

fn assert_exact(name: &str, m: &StepMatrix) {
    let c = check_step_matrix(m);
    assert!(c.passed(), "{name}: {c:?}");
    let stay: f64 = (0..m.space.len()).map(|x| m.pi[x] * m.get(x, x)).sum();
    assert!(stay < 0.95, "{name}: stays put with probability {stay}");
}

#[test]
fn binary_dlmc_from_its_steps_is_reversible_with_both_solvers() {
    let model = IsingLattice::with_dims(Dims { rows: 2, cols: 3 }, 0.35, 0.1, true).unwrap();
    // Euler at τ = 2 saturates (p = 1) on some coordinates: reverse moves of probability 0
    // must be rejected.
    for (solver, time) in [
        (Solver::Interpolate, 0.3),
        (Solver::Interpolate, 3.0),
        (Solver::Euler, 0.3),
        (Solver::Euler, 2.0),
    ] {
        let kernel = Dmala::new(DlmcProposal::new(solver, time).unwrap());
        let mut probe = BinaryProbe::new(model, kernel);
        assert_exact(
            &format!("Ising 2×3, {solver:?}, τ = {time}"),
            &step_transition_matrix(&mut probe),
        );
    }
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(29);
    let q = QuadraticData::random(5, 0.8, 0.8, &mut rng);
    let mut cache = q.cache();
    let model = BinaryQuadratic::new(&q.w, &q.b, &mut cache).unwrap();
    let kernel = Dmala::new(DlmcProposal::new(Solver::Interpolate, 0.5).unwrap());
    let mut probe = BinaryProbe::new(model, kernel);
    assert_exact("quadratic d = 5", &step_transition_matrix(&mut probe));
}

#[test]
fn categorical_dlmc_from_its_steps_is_reversible() {
    // τ = 3 scales some rows down to sum 1 (the coordinate always moves).
    for (n, s, time) in [(3usize, 3usize, 0.4), (3, 3, 3.0), (2, 4, 0.8)] {
        let kernel = Dmala::new(CategoricalDlmcProposal::new(time).unwrap());
        let mut probe = CategoricalProbe::new(small_potts(n, s), kernel);
        assert_exact(
            &format!("Potts {n}×{s}, τ = {time}"),
            &step_transition_matrix(&mut probe),
        );
    }
}

#[test]
fn the_adapted_time_is_stored_during_burn_in_and_frozen_after() {
    let mut model = IsingLattice::<ConstDims<6, 6>>::new(0.4, 0.0, true).unwrap();
    let mut storage = ChainStorage::<36>::new([0; 36]);
    let mut chain = BinaryChain::new(storage.buffers(), &mut model).unwrap();
    let start = DlmcProposal::new(Solver::Interpolate, 1.0).unwrap();
    let burn_in = 300;
    let mut kernel = TunedDlmc::new(start, true, burn_in, DLMC_TARGET_ACCEPTANCE).unwrap();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(8);
    let mut times = Vec::new();
    for _ in 0..burn_in + 50 {
        kernel.step(&mut model, &mut chain, &mut rng).unwrap();
        times.push(kernel.proposal().time());
    }
    let b = burn_in as usize;
    assert!(kernel.is_frozen());
    // The time moved during burn-in (from e / Σλ, then by the recursion) ...
    assert_ne!(times[0], 1.0);
    assert!(times[1..b].windows(2).filter(|w| w[0] != w[1]).count() > b / 2);
    // ... and is the same for every step after it.
    assert!(times[b - 1..].iter().all(|&t| t == times[b - 1]));
}
