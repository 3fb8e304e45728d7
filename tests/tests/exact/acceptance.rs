//! DMALA in the scale form of the acceptance-targeting tuner (`ln τ` in place of a step, flip
//! logits `ln τ + δ/2`) is exact at every frozen scale, including `τ ≥ 1`, which no DMALA step
//! reaches: transition matrices from the kernel's own `step` (see `langevin_tests::harness`),
//! checked for detailed balance and `πP = π`; and the scale a tuning run freezes at.

use langevin_core::BinaryChain;
use langevin_core::models::{Dims, IsingLattice};
use langevin_core::tuning::{AcceptanceSettings, AcceptanceTuner};
use langevin_tests::discrete::{BinBuf, Wavy, small_potts, tune_until_frozen};
use langevin_tests::harness::{
    BinaryProbe, CategoricalProbe, OrdinalProbe, assert_exact, step_transition_matrix,
};
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

/// Scales below, at and above `τ = 1`.
const LOG_SCALES: [f64; 3] = [-1.2, 0.0, 0.8];

fn fixed(log_tau: f64, window: Option<u16>) -> AcceptanceTuner {
    let mut s = AcceptanceSettings::default();
    s.window = window;
    AcceptanceTuner::fixed(log_tau, s).unwrap()
}

#[test]
fn binary_scaled_dmala_is_reversible_at_every_scale() {
    let model = IsingLattice::with_dims(Dims { rows: 2, cols: 3 }, 0.35, 0.1, true).unwrap();
    for log_tau in LOG_SCALES {
        let mut probe = BinaryProbe::new(model, fixed(log_tau, None));
        assert_exact(
            &format!("Ising 2×3, ln τ = {log_tau}"),
            &step_transition_matrix(&mut probe),
        );
    }
}

/// A tuner with settings `s`, stepped on a 2×3 Ising lattice (seed 5) until it freezes.
fn tuned_on_ising(s: AcceptanceSettings) -> (IsingLattice, AcceptanceTuner) {
    let mut model = IsingLattice::with_dims(Dims { rows: 2, cols: 3 }, 0.35, 0.1, true).unwrap();
    let mut tuner = AcceptanceTuner::new(s).unwrap();
    let mut buf = BinBuf::new(&[0u8; 6]);
    let mut chain = BinaryChain::new(buf.buffers(), &mut model).unwrap();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
    tune_until_frozen(
        &mut tuner,
        AcceptanceTuner::is_frozen,
        &mut model,
        &mut chain,
        &mut rng,
    );
    (model, tuner)
}

/// The scale a tuning run freezes at gives an exact kernel (the frozen tuner itself is probed).
#[test]
fn binary_tuned_then_frozen_is_reversible() {
    let mut s = AcceptanceSettings::default();
    s.budget = 400;
    let (model, tuner) = tuned_on_ising(s);
    let report = tuner.report_for::<langevin_core::Binary>();
    assert!(report.changes >= 1.0 && report.log_scale.is_some());
    let mut probe = BinaryProbe::new(model, tuner);
    assert_exact(
        &format!("Ising 2×3, tuned {report:?}"),
        &step_transition_matrix(&mut probe),
    );
}

#[test]
fn ordinal_scaled_dmala_is_reversible() {
    let wavy = Wavy::three(4);
    for (log_tau, window) in [(-1.2, None), (-0.4, Some(1u16)), (0.8, None)] {
        let mut probe = OrdinalProbe::new(wavy.clone(), fixed(log_tau, window));
        assert_exact(
            &format!("ordinal wavy, ln τ = {log_tau}, window {window:?}"),
            &step_transition_matrix(&mut probe),
        );
    }
}

#[test]
fn categorical_scaled_dmala_is_reversible_at_every_scale() {
    let potts = small_potts(3, 3);
    for log_tau in LOG_SCALES {
        let mut probe = CategoricalProbe::new(potts.clone(), fixed(log_tau, None));
        assert_exact(
            &format!("Potts 3×3, ln τ = {log_tau}"),
            &step_transition_matrix(&mut probe),
        );
    }
}

/// A gain so large that the update of the expected number of changes overflows leaves the count
/// finite, at its largest value, and the tuned scale usable.
#[test]
fn an_overflowing_gain_keeps_the_changes_finite() {
    let mut s = AcceptanceSettings::default();
    s.gain = f64::MAX;
    s.target_acceptance = 1e-300;
    s.budget = 30;
    let (_, tuner) = tuned_on_ising(s);
    let report = tuner.report_for::<langevin_core::Binary>();
    assert_eq!(report.changes, f64::MAX, "{report:?}");
    assert!(report.log_scale.is_some_and(f64::is_finite), "{report:?}");
}
