//! AB tuning: the balance grows with the step (Sun et al. 2023, Fig. 1), the tuned sampler beats
//! DLP (`b = ½`, step tuned by the same rule) in ESS, and the tuner stops within its budget on
//! every model.
//!
//! ESS is Geyer's initial-monotone-sequence estimate (`langevin_tests::discrete::ess`) of the statistic
//! `Σ_i x_i` over the steps after tuning.

use langevin_core::Kernel;
use langevin_core::binary::BinaryChain;

use langevin_core::models::{Dims, IsingLattice};
use langevin_core::ordinal::{CategoricalChain, OrdinalChain};
use langevin_core::tuning::{AbReport, AbSettings, AbTuner};
use langevin_std::models::{OrdinalQuadratic, Potts, QuarticMixture};
use langevin_tests::discrete::*;
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

/// Independent Bernoullis: `U(x) = Σ θ_i x_i`, `θ` evenly spread over `[−2, 2]`.
fn bernoullis(d: usize) -> Independent {
    Independent(
        (0..d)
            .map(|i| -2.0 + 4.0 * i as f32 / (d - 1) as f32)
            .collect(),
    )
}

/// Tunes on a 100-d product of Bernoullis, then runs `keep` frozen steps; returns the report
/// and the ESS of `Σ x`.
fn tune_and_run(settings: AbSettings, keep: usize, seed: u64) -> (AbReport, f64) {
    let mut m = bernoullis(100);
    let mut buf = BinBuf::new(&[0u8; 100]);
    let mut chain = BinaryChain::new(buf.buffers(), &mut m).unwrap();
    let mut ab = AbTuner::new(settings).unwrap();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut spent = 0u64;
    while !ab.is_frozen() {
        Kernel::step(&mut ab, &mut m, &mut chain, &mut rng).unwrap();
        spent += 1;
    }
    assert!(spent <= settings.budget);
    assert_eq!(ab.report().tuning_steps, spent);
    let mut series = Vec::with_capacity(keep);
    for _ in 0..keep {
        Kernel::step(&mut ab, &mut m, &mut chain, &mut rng).unwrap();
        series.push(chain.state().iter().map(|&v| f64::from(v)).sum());
    }
    (ab.report(), ess(&series))
}

/// With the step held at `a`, the tuned balance rises from about ½ (local, small `a`) toward 1
/// (global, large `a`). Observed over six seeds: b(0.1) ∈ [0.46, 0.61], b(1) ∈ [0.80, 0.83],
/// b(10) ∈ [0.96, 1], b(100) = 1; the margins below are several times that spread.
#[test]
fn tuned_balance_increases_with_the_step() {
    let mut b = Vec::new();
    for (k, a) in [0.1, 1.0, 10.0, 100.0].into_iter().enumerate() {
        let mut s = AbSettings::default();
        s.step = a;
        s.tune_step = false;
        s.budget = 10_000;
        let (r, _) = tune_and_run(s, 0, 100 + k as u64);
        assert_eq!(r.step, a, "the step is not tuned");
        b.push(r.balance);
    }
    assert!(
        b[0] + 0.1 < b[1] && b[1] + 0.05 < b[2] && b[2] <= b[3] + 0.02,
        "balances {b:?}"
    );
    assert!(b[0] < 0.7 && b[3] > 0.9, "balances {b:?}");
}

/// Both tuned against DLP with its step tuned by the same rule. Over 20 000 kept steps the
/// relative error of each ESS estimate is a few per cent (τ ≤ 10, truncation lag ≤ 50), so a
/// factor 2 cannot come from estimation noise.
#[test]
fn tuned_ab_beats_dlp_in_ess() {
    let mut s = AbSettings::default();
    s.budget = 20_000;
    let (ab, ess_ab) = tune_and_run(s, 20_000, 2);
    s.tune_balance = false;
    let (dlp, ess_dlp) = tune_and_run(s, 20_000, 3);
    assert_eq!(dlp.balance, 0.5);
    assert!(
        ab.balance > 0.6 && ab.step > dlp.step,
        "AB {ab:?}, DLP {dlp:?}"
    );
    assert!(
        ess_ab > 2.0 * ess_dlp,
        "ESS: AB {ess_ab:.0} ({ab:?}) vs DLP {ess_dlp:.0} ({dlp:?})"
    );
}

fn check_report(name: &str, r: AbReport, budget: u64) {
    assert!(r.frozen, "{name}: not frozen");
    assert!(
        r.tuning_steps <= budget,
        "{name}: {} steps for a budget of {budget}",
        r.tuning_steps
    );
    assert!(
        r.step.is_finite() && r.step > 0.0,
        "{name}: step {}",
        r.step
    );
    assert!(
        r.balance > 0.0 && r.balance <= 1.0,
        "{name}: balance {}",
        r.balance
    );
}

/// The tuner freezes within its budget on binary, ordinal and categorical models, including
/// a tiny budget that ends mid-round and a `min_rate` that ends it early.
#[test]
fn tuner_terminates_within_budget_on_every_model() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
    for budget in [1u64, 250, 3_000] {
        let mut s = AbSettings::default();
        s.budget = budget;
        // Binary: critical Ising lattice.
        let mut m = IsingLattice::with_dims(Dims { rows: 8, cols: 8 }, 0.4407, 0.0, true).unwrap();
        let mut buf = BinBuf::new(&[0u8; 64]);
        let mut chain = BinaryChain::new(buf.buffers(), &mut m).unwrap();
        let mut ab = AbTuner::new(s).unwrap();
        for _ in 0..budget + 10 {
            Kernel::step(&mut ab, &mut m, &mut chain, &mut rng).unwrap();
        }
        check_report("ising", ab.report(), budget);
        // Ordinal: lattice Gaussian (windowed) and quartic mixture.
        let mut q = OrdinalQuadratic::rotated_gaussian(10, 21, 10.0, 3.0, 1).unwrap();
        let mut buf = LabelBuf::labels(&[10u16; 10], 21, 10);
        let mut chain = OrdinalChain::new_ordinal(buf.buffers(), &mut q).unwrap();
        let mut so = s;
        so.window = Some(5);
        let mut ab = AbTuner::new(so).unwrap();
        for _ in 0..budget + 10 {
            Kernel::step(&mut ab, &mut q, &mut chain, &mut rng).unwrap();
        }
        check_report("lattice gaussian", ab.report(), budget);
        let mut qm = QuarticMixture::new(6, 21, 5, 2.0, 3).unwrap();
        let mut buf = LabelBuf::labels(&[0u16; 6], 21, 6);
        let mut chain = OrdinalChain::new_ordinal(buf.buffers(), &mut qm).unwrap();
        let mut ab = AbTuner::new(s).unwrap();
        for _ in 0..budget + 10 {
            Kernel::step(&mut ab, &mut qm, &mut chain, &mut rng).unwrap();
        }
        check_report("quartic mixture", ab.report(), budget);
        // Categorical: Potts lattice.
        let mut p = Potts::lattice(5, 5, 4, 0.8).unwrap();
        let mut buf = LabelBuf::labels(&[0u16; 25], 4, 100);
        let mut chain = CategoricalChain::new_categorical(buf.buffers(), &mut p).unwrap();
        let mut ab = AbTuner::new(s).unwrap();
        for _ in 0..budget + 10 {
            Kernel::step(&mut ab, &mut p, &mut chain, &mut rng).unwrap();
        }
        check_report("potts", ab.report(), budget);
    }
    // A large min_rate ends tuning after the first round without movement.
    let mut s = AbSettings::default();
    s.min_rate = 0.19;
    s.budget = 1_000_000;
    let mut m = bernoullis(20);
    let mut buf = BinBuf::new(&[0u8; 20]);
    let mut chain = BinaryChain::new(buf.buffers(), &mut m).unwrap();
    let mut ab = AbTuner::new(s).unwrap();
    let mut steps = 0u64;
    while !ab.is_frozen() && steps < 1_000_000 {
        Kernel::step(&mut ab, &mut m, &mut chain, &mut rng).unwrap();
        steps += 1;
    }
    check_report("min rate", ab.report(), 1_000_000);
    assert!(
        ab.report().rate < 0.19 && steps.is_multiple_of(600),
        "stops at the end of a round: {steps}"
    );
}

#[test]
fn bad_settings_are_rejected() {
    let ok = AbSettings::default();
    for (name, f) in [
        (
            "step 0",
            (|s: &mut AbSettings| s.step = 0.0) as fn(&mut AbSettings),
        ),
        ("step nan", |s| s.step = f64::NAN),
        ("step inf", |s| s.step = f64::INFINITY),
        ("balance 0", |s| s.balance = 0.0),
        ("balance 1.5", |s| s.balance = 1.5),
        ("balance nan", |s| s.balance = f64::NAN),
        ("rate 0", |s| s.rate = 0.0),
        ("rate 1", |s| s.rate = 1.0),
        ("rate nan", |s| s.rate = f64::NAN),
        ("decay 1", |s| s.decay = 1.0),
        ("probe 0", |s| s.probe_steps = 0),
        ("min rate nan", |s| s.min_rate = f64::NAN),
        ("window 0", |s| s.window = Some(0)),
    ] {
        let mut s = ok;
        f(&mut s);
        assert!(AbTuner::new(s).is_err(), "{name} accepted");
    }
}
