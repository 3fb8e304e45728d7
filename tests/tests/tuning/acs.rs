//! The ACS schedules as pure functions, the tuner's budget on every domain, the batch
//! interface, and bad settings.

use langevin_core::Kernel;
use langevin_core::binary::{BinaryChain, Dmala, FlipProposal};

use langevin_core::models::{Dims, IsingLattice, Rbm};
use langevin_core::ordinal::{CategoricalChain, OrdinalChain};
use langevin_core::tuning::{
    AcsReport, AcsSchedule, AcsSettings, AcsTuner, MAX_CYCLE, cyclical_balance, cyclical_step,
};
use langevin_std::models::{OrdinalQuadratic, Potts};
use langevin_tests::discrete::*;
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

#[test]
fn schedules_are_pure_functions_of_the_step_index() {
    let (a_max, a_min, s) = (8.0, 0.1, 20u32);
    for k in 0..200u64 {
        let a = cyclical_step(k, s, a_max, a_min);
        let pos = (k % 20) as f64;
        let want = (0.5 * a_max * ((std::f64::consts::PI * pos / 20.0).cos() + 1.0)).max(a_min);
        assert_eq!(a, want);
        assert_eq!(a, cyclical_step(k + 20, s, a_max, a_min), "periodic");
        assert!(a >= a_min && a <= a_max);
        if k % 20 != 19 {
            assert!(
                cyclical_step(k + 1, s, a_max, a_min) <= a,
                "non-increasing within a cycle"
            );
        }
    }
    assert_eq!(
        cyclical_step(0, s, a_max, a_min),
        a_max,
        "starts at a_max (factor ½ included)"
    );
    assert_eq!(cyclical_balance(0, s, 0.95, 0.5), 0.95);
    assert_eq!(cyclical_balance(19, s, 0.95, 0.5), 0.5);
    let sched = AcsSchedule::naive(a_max, a_min, 0.95, 0.5, s).unwrap();
    for k in 0..40 {
        assert_eq!(
            sched.at(k),
            (
                cyclical_step(k, s, a_max, a_min),
                cyclical_balance(k, s, 0.95, 0.5)
            )
        );
    }
}

fn check(name: &str, r: &AcsReport, planned: u64, settings: &AcsSettings) {
    assert!(r.frozen, "{name}: not frozen after its budget");
    assert!(
        r.tuning_steps <= r.budget && planned == r.tuning_steps,
        "{name}: spent {} (planned {planned}) of {}",
        r.tuning_steps,
        r.budget
    );
    assert_eq!(r.budget, settings.budget());
    let sch = &r.schedule;
    assert!(
        sch.a_min() > 0.0 && sch.a_min() <= sch.a_max() && sch.a_max().is_finite(),
        "{name}: {sch:?}"
    );
    assert_eq!(sch.cycle(), settings.cycle);
    let b = sch.balances();
    assert_eq!(b[0], settings.b_max);
    for w in b.windows(2) {
        assert!(
            w[1] <= w[0] && w[1] >= settings.b_min,
            "{name}: balances {b:?}"
        );
    }
}

/// The tuner spends exactly its plan, never more than 10 % of the run, on every domain.
#[test]
fn tuner_overhead_stays_within_budget_on_every_model() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
    for total in [5_000u64, 40_000] {
        let mut s = AcsSettings::default();
        s.total_steps = total;
        // Binary: critical Ising and an RBM.
        let mut m =
            IsingLattice::with_dims(Dims { rows: 10, cols: 10 }, 0.4407, 0.0, true).unwrap();
        let mut buf = BinBuf::new(&[0u8; 100]);
        let mut chain = BinaryChain::new(buf.buffers(), &mut m).unwrap();
        let mut acs = AcsTuner::new(s).unwrap();
        for _ in 0..s.budget() {
            Kernel::step(&mut acs, &mut m, &mut chain, &mut rng).unwrap();
        }
        check("ising", &acs.report(), acs.planned_steps(), &s);
        let (v, h) = (30, 10);
        let w: Vec<f32> = (0..v * h)
            .map(|k| ((k * 7 % 11) as f32 - 5.0) * 0.2)
            .collect();
        let b = vec![-0.2f32; v];
        let c = vec![0.1f32; h];
        let mut cache = vec![0.0; 2 * h];
        let mut rbm = Rbm::new(&w, &b, &c, &mut cache).unwrap();
        let mut buf = BinBuf::new(&[0u8; 30]);
        let mut chain = BinaryChain::new(buf.buffers(), &mut rbm).unwrap();
        let mut acs = AcsTuner::new(s).unwrap();
        for _ in 0..s.budget() {
            Kernel::step(&mut acs, &mut rbm, &mut chain, &mut rng).unwrap();
        }
        check("rbm", &acs.report(), acs.planned_steps(), &s);
        // Ordinal (windowed) and categorical.
        let mut q = OrdinalQuadratic::rotated_gaussian(20, 21, 10.0, 3.0, 2).unwrap();
        let mut buf = LabelBuf::labels(&[10u16; 20], 21, 20);
        let mut chain = OrdinalChain::new_ordinal(buf.buffers(), &mut q).unwrap();
        let mut so = s;
        so.window = Some(4);
        let mut acs = AcsTuner::new(so).unwrap();
        for _ in 0..s.budget() {
            Kernel::step(&mut acs, &mut q, &mut chain, &mut rng).unwrap();
        }
        check("lattice gaussian", &acs.report(), acs.planned_steps(), &s);
        let mut p = Potts::lattice(6, 6, 4, 1.0).unwrap();
        let mut buf = LabelBuf::labels(&[0u16; 36], 4, 144);
        let mut chain = CategoricalChain::new_categorical(buf.buffers(), &mut p).unwrap();
        let mut acs = AcsTuner::new(s).unwrap();
        for _ in 0..s.budget() {
            Kernel::step(&mut acs, &mut p, &mut chain, &mut rng).unwrap();
        }
        check("potts", &acs.report(), acs.planned_steps(), &s);
    }
}

/// Driving the tuner from a batch of chains: one step of every chain per action, the mean
/// acceptance probability observed once, the budget counted in batch steps.
#[test]
fn batch_interface_averages_over_chains() {
    let mut m = IsingLattice::with_dims(Dims { rows: 6, cols: 6 }, 0.3, 0.0, true).unwrap();
    let mut s = AcsSettings::default();
    s.total_steps = 5_000;
    s.steps_per_estimate = 1;
    let mut acs = AcsTuner::new(s).unwrap();
    let mut bufs: Vec<BinBuf> = (0..8).map(|_| BinBuf::new(&[0u8; 36])).collect();
    let mut chains: Vec<BinaryChain<'_>> = bufs
        .iter_mut()
        .map(|b| BinaryChain::new(b.buffers(), &mut m).unwrap())
        .collect();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(9);
    let mut batch_steps = 0u64;
    while !acs.is_frozen() {
        let act = acs.action();
        let prop = FlipProposal::new(act.step, act.balance).unwrap();
        let mut mean = 0.0;
        for chain in &mut chains {
            let r = if act.adjusted {
                Dmala::new(prop).step(&mut m, chain, &mut rng).unwrap()
            } else {
                langevin_core::binary::Dula::new(prop)
                    .step(&mut m, chain, &mut rng)
                    .unwrap()
            };
            mean += AcsTuner::acceptance_probability(&r) / 8.0;
        }
        acs.observe(if act.adjusted { mean } else { 1.0 });
        batch_steps += 1;
    }
    check("batch", &acs.report(), acs.planned_steps(), &s);
    assert_eq!(batch_steps, acs.report().tuning_steps);
}

#[test]
fn bad_settings_and_schedules_are_rejected() {
    assert!(
        AcsSchedule::new(1.0, 2.0, &[0.9, 0.5]).is_err(),
        "a_min > a_max"
    );
    assert!(AcsSchedule::new(f64::NAN, 1.0, &[0.9]).is_err());
    assert!(AcsSchedule::new(2.0, 0.0, &[0.9]).is_err());
    assert!(AcsSchedule::new(f64::INFINITY, 1.0, &[0.9]).is_err());
    assert!(AcsSchedule::new(2.0, 1.0, &[]).is_err());
    assert!(AcsSchedule::new(2.0, 1.0, &[0.5; MAX_CYCLE + 1]).is_err());
    assert!(AcsSchedule::new(2.0, 1.0, &[0.9, 1.5]).is_err());
    assert!(AcsSchedule::new(2.0, 1.0, &[0.9, f64::NAN]).is_err());
    assert!(
        AcsSchedule::naive(2.0, 1.0, 0.5, 0.9, 10).is_err(),
        "b_min > b_max"
    );
    let ok = AcsSettings::default();
    assert!(AcsTuner::new(ok).is_ok());
    type Edit = fn(&mut AcsSettings);
    let cases: [(&str, Edit); 24] = [
        ("a_floor > a_ceil", |s| s.a_floor = 10.0),
        ("a_ceil nan", |s| s.a_ceil = f64::NAN),
        ("a_ceil inf", |s| s.a_ceil = f64::INFINITY),
        ("a_floor 0", |s| s.a_floor = 0.0),
        ("a_floor -1", |s| s.a_floor = -1.0),
        ("b_max 1.2", |s| s.b_max = 1.2),
        ("b_min nan", |s| s.b_min = f64::NAN),
        ("b_min > b_max", |s| s.b_min = 0.99),
        ("rho 0", |s| s.target = 0.0),
        ("rho 1", |s| s.target = 1.0),
        ("rho -0.5", |s| s.target = -0.5),
        ("rho nan", |s| s.target = f64::NAN),
        ("zeta 0", |s| s.zeta = 0.0),
        ("zeta 1", |s| s.zeta = 1.0),
        ("cycle 0", |s| s.cycle = 0),
        ("cycle 1", |s| s.cycle = 1),
        ("cycle 65", |s| s.cycle = 65),
        ("fraction 0", |s| s.budget_fraction = 0.0),
        ("fraction nan", |s| s.budget_fraction = f64::NAN),
        ("per estimate 0", |s| s.steps_per_estimate = 0),
        ("candidates 1", |s| s.step_candidates = 1),
        ("window 0", |s| s.window = Some(0)),
        ("budget too small", |s| s.total_steps = 100),
        ("fixed a_min > a_max", |s| s.fixed_steps = Some((1.0, 3.0))),
    ];
    for (name, edit) in cases {
        let mut s = ok;
        edit(&mut s);
        assert!(AcsTuner::new(s).is_err(), "{name} accepted");
    }
}

/// A ceiling at `f64::MAX` (valid: finite and positive) once made the step search widen its
/// bound past the largest finite value and hand out an infinite step, and a subnormal floor
/// narrowed by `1 − ζ|ρ* − ρ|` once rounded to a zero step; every action stays a finite positive
/// step through the whole plan, whatever acceptances are observed.
#[test]
fn extreme_step_bounds_keep_every_step_finite_and_positive() {
    let tiny = f64::from_bits(1);
    for (a_ceil, a_floor, target, zeta) in [(f64::MAX, 1.375, 0.5, 0.5), (tiny, tiny, 0.01, 0.99)] {
        run_extreme(a_ceil, a_floor, target, zeta);
    }
}

fn run_extreme(a_ceil: f64, a_floor: f64, target: f64, zeta: f64) {
    let mut s = AcsSettings::default();
    s.a_ceil = a_ceil;
    s.a_floor = a_floor;
    s.target = target;
    s.zeta = zeta;
    s.cycle = 40;
    s.total_steps = 3392;
    s.budget_fraction = 1.0;
    s.steps_per_estimate = 1;
    s.step_candidates = 28;
    s.balance_candidates = 31;
    s.burn_in_unadjusted = 255;
    s.burn_in_adjusted = 255;
    for acceptance in [0.0, 0.3, 0.9, 1.0] {
        let mut acs = AcsTuner::new(s).unwrap();
        let mut n = 0u64;
        while !acs.is_frozen() {
            let act = acs.action();
            assert!(
                act.step.is_finite() && act.step > 0.0,
                "step {} at {n}",
                act.step
            );
            acs.observe(acceptance);
            n += 1;
            assert!(n <= s.total_steps + 1, "not frozen within the budget");
        }
    }
}
