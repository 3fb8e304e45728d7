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
    BinaryProbe, CategoricalProbe, assert_exact, step_transition_matrix,
};
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

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

/// Categorical DLMC draws what its rates say: from `x`, coordinate `i` moves to `c ≠ x_i` with
/// probability `τ·e^{(g_{i,c} − g_{i,x_i})/2}` and stays with the rest, the row scaled to
/// `λ_c / Σ λ` when `τ Σ λ > 1` (the rates of the module documentation and of the design's
/// categorical DLMC), coordinates independent. The realised probabilities come from the
/// kernel's own draws (lane widths over `2^32`); each coordinate's are quantised to `2^-32`,
/// so a product over `n ≤ 3` coordinates is within `3·2^-31 < 1e-8` of the formula. A doubled
/// exponent (or a rate of the wrong sign) misses it by more than 1e-2 on these models.
#[test]
fn categorical_dlmc_moves_with_the_documented_rates() {
    use langevin_tests::discrete::tabulate_categorical;
    const TOL: f64 = 1e-8;
    // τ = 3 puts some rows in the scaled regime, τ = 0.4 and 0.8 none or few.
    for (n, s, time) in [(3usize, 3usize, 0.4), (3, 3, 3.0), (2, 4, 0.8)] {
        let kernel = Dmala::new(CategoricalDlmcProposal::new(time).unwrap());
        let mut probe = CategoricalProbe::new(small_potts(n, s), kernel);
        let m = step_transition_matrix(&mut probe);
        let states = m.space.all();
        let (_, grads) = tabulate_categorical(&mut small_potts(n, s), &states);
        let k = states.len();
        let (mut worst, mut scaled_rows) = (0.0f64, 0usize);
        let mut doubled_worst = 0.0f64;
        for (xi, x) in states.iter().enumerate() {
            // Per coordinate: the move law over the S labels, with exponent factor `h`.
            let law = |h: f64| -> Vec<Vec<f64>> {
                (0..n)
                    .map(|i| {
                        let g = &grads[xi][i * s..(i + 1) * s];
                        let here = usize::from(x[i]);
                        let rate: Vec<f64> = (0..s)
                            .map(|c| {
                                if c == here {
                                    0.0
                                } else {
                                    (h * (f64::from(g[c]) - f64::from(g[here]))).exp()
                                }
                            })
                            .collect();
                        let total: f64 = rate.iter().sum();
                        let mut row: Vec<f64> = if time * total > 1.0 {
                            rate.iter().map(|r| r / total).collect()
                        } else {
                            rate.iter().map(|r| time * r).collect()
                        };
                        row[here] = if time * total > 1.0 {
                            0.0
                        } else {
                            1.0 - time * total
                        };
                        row
                    })
                    .collect()
            };
            let (right, doubled) = (law(0.5), law(1.0));
            scaled_rows += right.iter().filter(|r| r.contains(&0.0)).count();
            for (yi, y) in states.iter().enumerate() {
                let q = |l: &[Vec<f64>]| (0..n).map(|i| l[i][usize::from(y[i])]).product::<f64>();
                worst = worst.max((m.q[xi * k + yi] - q(&right[..])).abs());
                doubled_worst = doubled_worst.max((m.q[xi * k + yi] - q(&doubled[..])).abs());
            }
        }
        let name = format!("Potts {n}×{s}, τ = {time}");
        assert!(worst <= TOL, "{name}: q differs from the rates by {worst}");
        assert!(
            doubled_worst > 1e-2,
            "{name}: doubled rates fit within {doubled_worst}"
        );
        if time > 1.0 {
            assert!(scaled_rows > 0, "{name}: no row in the scaled regime");
        }
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
