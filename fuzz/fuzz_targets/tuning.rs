//! The tuners and schedules: `AcsTuner` fed arbitrary settings and arbitrary acceptance
//! reports (NaN, ±∞, out of range) until it freezes, and stepping binary chains; `AcsSchedule`,
//! `cyclical_step` and the fixed-schedule `Acs` kernel on binary and ordinal chains; `AbTuner`
//! with arbitrary settings on binary and ordinal chains, all on targets with arbitrary (tabled)
//! energies, gradients and errors. Checks that `validate` and the constructors agree and accept
//! only settings that satisfy the documented bounds; that every action and every `(a, b)` in use
//! is a valid proposal (step finite and positive, balance in `(0, 1]`) so no step fails on its
//! parameters; that the tuning spent never exceeds the budget, equals the plan once frozen, and
//! that the frozen schedule is valid with non-increasing balances and then followed exactly;
//! that schedules stay within `[a_min, a_max]` and repeat with the cycle; the chain invariants
//! of the drivers; and that the same input gives the same output. `AcceptanceTuner` with
//! arbitrary settings on binary, ordinal and categorical chains: `validate` and `new` agree, the
//! expected number of changes stays at or above its floor, the scale stays finite, tuning spends
//! exactly its budget and the scale never moves once frozen. Replica exchange (`Replicas`, 1 to
//! 4 replicas) on binary tabled targets: after every sweep the ladder starts at 1 and decreases
//! within `(0, 1]`, every replica's cached `U` and gradient are the table's scaled by its `β`
//! (bit for bit), swap statistics never exceed the sweeps, and a failed sweep is an
//! unrecoverable target error.
#![no_main]

use langevin_core::Kernel;
use langevin_core::StepError;
use langevin_core::binary::BinaryChain;
use langevin_core::ordinal::{CategoricalDomain, OrdinalDomain};
use langevin_core::tuning::{
    AbSettings, AbTuner, AcceptanceSettings, AcceptanceTuner, Acs, AcsSchedule, AcsSettings,
    AcsTuner, MAX_CYCLE, ScaledDmala, cyclical_step,
};
use langevin_fuzz::drive::{self, BinarySetup};
use langevin_fuzz::labels::{self, LabelSetup};
use langevin_fuzz::{ByteRng, Input, OwnedBuffers};

fn valid_ab(a: f64, b: f64) -> bool {
    a.is_finite() && a > 0.0 && b > 0.0 && b <= 1.0
}

fn read_acs(input: &mut Input<'_>) -> AcsSettings {
    let mut s = AcsSettings::default();
    let flags = input.u8();
    if flags & 1 != 0 {
        s.a_ceil = input.f64();
        s.a_floor = input.f64();
    }
    if flags & 2 != 0 {
        s.b_max = input.f64();
        s.b_min = input.f64();
    }
    if flags & 4 != 0 {
        s.target = input.f64();
        s.zeta = input.f64();
    }
    s.cycle = u32::from(input.u8() % 70);
    s.total_steps = u64::from(input.u8()) * 16;
    s.budget_fraction = if flags & 8 != 0 { input.f64() } else { 1.0 };
    s.steps_per_estimate = u32::from(input.u8() % 6);
    s.step_candidates = u32::from(input.u8() % 36);
    s.balance_candidates = u32::from(input.u8() % 36);
    s.burn_in_unadjusted = u32::from(input.u8());
    s.burn_in_adjusted = u32::from(input.u8());
    s.window = (flags & 16 != 0).then(|| u16::from(input.u8() % 4));
    s.fixed_steps = (flags & 32 != 0).then(|| (input.f64(), input.f64()));
    s
}

/// Necessary conditions of valid settings (the documented bounds).
fn check_valid(s: &AcsSettings) {
    assert!(valid_ab(s.a_ceil, s.b_max) && valid_ab(s.a_floor, s.b_min));
    assert!(s.a_floor <= s.a_ceil && s.b_min <= s.b_max);
    assert!(s.target > 0.0 && s.target < 1.0 && s.zeta > 0.0 && s.zeta < 1.0);
    assert!((2..=MAX_CYCLE as u32).contains(&s.cycle));
    assert!(s.budget_fraction > 0.0 && s.budget_fraction <= 1.0);
    assert!(s.steps_per_estimate > 0);
    assert!((2..=32).contains(&s.step_candidates) && (2..=32).contains(&s.balance_candidates));
    assert_ne!(s.window, Some(0));
    if let Some((a_max, a_min)) = s.fixed_steps {
        assert!(valid_ab(a_max, 1.0) && valid_ab(a_min, 1.0) && a_min <= a_max);
    }
}

fn check_schedule(s: &AcsSchedule) {
    assert!(valid_ab(s.a_max(), 1.0) && valid_ab(s.a_min(), 1.0) && s.a_min() <= s.a_max());
    assert_eq!(s.balances().len(), s.cycle() as usize);
    assert!(s.balances().iter().all(|&b| b > 0.0 && b <= 1.0));
}

fn acs_tuner(data: &[u8]) -> Vec<u64> {
    let mut input = Input::new(data);
    let settings = read_acs(&mut input);
    let acceptances: Vec<f64> = (0..64).map(|_| input.f64()).collect();
    let v = settings.validate();
    let tuner = AcsTuner::new(settings);
    assert_eq!(v.is_ok(), tuner.is_ok(), "validate vs new");
    let Ok(mut tuner) = tuner else {
        return Vec::new();
    };
    check_valid(&settings);
    let planned = tuner.planned_steps();
    let budget = settings.budget();
    assert!(planned <= budget, "plan {planned} over budget {budget}");
    let mut out = vec![planned];
    let mut frozen_at = None;
    for n in 0..budget + 2 * u64::from(settings.cycle) + 2 {
        let act = tuner.action();
        assert!(valid_ab(act.step, act.balance), "action {act:?}");
        let report = tuner.report();
        assert!(report.tuning_steps <= budget && report.tuning_steps <= n);
        if tuner.is_frozen() {
            check_schedule(&report.schedule);
            let b = report.schedule.balances();
            assert!(
                b.windows(2).all(|w| w[1] <= w[0]),
                "balances increase: {b:?}"
            );
            assert_eq!(report.tuning_steps, planned, "tuning spent vs plan");
            let k = *frozen_at.get_or_insert(n);
            let (a, bk) = report.schedule.at(n - k);
            assert!(act.adjusted);
            assert_eq!(
                (act.step.to_bits(), act.balance.to_bits()),
                (a.to_bits(), bk.to_bits())
            );
        }
        out.push(act.step.to_bits());
        out.push(act.balance.to_bits());
        tuner.observe(acceptances[n as usize % acceptances.len()]);
    }
    assert!(tuner.is_frozen(), "not frozen after the budget");
    out
}

fn acs_kernel(data: &[u8], ordinal: bool, tuned: bool) -> Vec<u64> {
    let mut input = Input::new(data);
    let a_max = input.f64();
    let a_min = input.f64();
    let n = usize::from(input.u8() % 70);
    let balances: Vec<f64> = (0..n).map(|_| input.f64()).collect();
    let window = input.u8() % 4;
    let settings = read_acs(&mut input);
    let schedule = AcsSchedule::new(a_max, a_min, &balances);
    let valid = valid_ab(a_max, 1.0)
        && valid_ab(a_min, 1.0)
        && a_min <= a_max
        && (1..=MAX_CYCLE).contains(&n)
        && balances.iter().all(|&b| b > 0.0 && b <= 1.0);
    assert_eq!(
        schedule.is_ok(),
        valid,
        "schedule {a_max} {a_min} {balances:?}"
    );
    let naive = AcsSchedule::naive(a_max, a_min, 0.9, 0.5, n as u32);
    assert_eq!(
        naive.is_ok(),
        valid_ab(a_max, 1.0)
            && valid_ab(a_min, 1.0)
            && a_min <= a_max
            && (1..=MAX_CYCLE).contains(&n)
    );
    let mut tuner = if tuned {
        match AcsTuner::new(settings) {
            Ok(t) => Some(t),
            Err(_) => return Vec::new(),
        }
    } else {
        None
    };
    let schedule = match (schedule, tuned) {
        (Ok(s), _) => s,
        (Err(_), true) => AcsSchedule::naive(1.0, 0.1, 0.9, 0.5, 4).expect("valid"),
        (Err(_), false) => return Vec::new(),
    };
    check_schedule(&schedule);
    for k in [0u64, 1, 63, 64, 65, u64::MAX, u64::from(input.u8()) << 40] {
        let (a, b) = schedule.at(k);
        assert!(
            a >= schedule.a_min() && a <= schedule.a_max(),
            "a_{k} = {a}"
        );
        let s = u64::from(schedule.cycle());
        assert_eq!(b, schedule.balances()[(k % s) as usize]);
        assert_eq!(schedule.at(k % s), (a, b));
        assert_eq!(cyclical_step(k, 0, a_max, a_min).to_bits(), a_min.to_bits());
    }
    assert_eq!(schedule.at(0).0, schedule.a_max());
    let acs = Acs::new(schedule);
    let mut acs = if window > 0 {
        acs.with_window(u16::from(window))
    } else {
        acs
    };
    if ordinal {
        let setup = LabelSetup::read(&mut input, false, 8, 8, 16);
        let d = setup.d;
        let rng = ByteRng::new(input.rest());
        labels::drive::<OrdinalDomain>(setup, rng, &mut |t, target, chain, rng| {
            let words = rng.words;
            let r = match &mut tuner {
                Some(tuner) => Kernel::step(tuner, target, chain, rng),
                None => {
                    assert_eq!(acs.position(), t as u64);
                    Kernel::step(&mut acs, target, chain, rng)
                }
            };
            if r.is_ok() {
                assert_eq!(rng.words - words, d.div_ceil(2) as u64 + 1);
            }
            r
        })
    } else {
        let setup = BinarySetup::read(&mut input, 16, 16);
        let d = setup.d;
        let rng = ByteRng::new(input.rest());
        drive::drive(setup, rng, &mut |_, target, chain, rng| {
            let words = rng.words;
            let r = match &mut tuner {
                Some(tuner) => Kernel::step(tuner, target, chain, rng),
                None => Kernel::step(&mut acs, target, chain, rng),
            };
            if r.is_ok() {
                assert_eq!(rng.words - words, d.div_ceil(2) as u64 + 1);
            }
            r
        })
    }
}

fn ab(data: &[u8], ordinal: bool) -> Vec<u64> {
    let mut input = Input::new(data);
    let mut s = AbSettings::default();
    let flags = input.u8();
    if flags & 1 != 0 {
        s.step = input.f64();
        s.balance = input.f64();
    }
    if flags & 2 != 0 {
        s.rate = input.f64();
        s.decay = input.f64();
        s.min_rate = input.f64();
    }
    s.probe_steps = u32::from(input.u8() % 4);
    s.budget = u64::from(input.u8() % 40);
    s.tune_step = flags & 4 == 0;
    s.tune_balance = flags & 8 == 0;
    s.window = (flags & 16 != 0).then(|| u16::from(input.u8() % 4));
    let t = AbTuner::new(s);
    assert_eq!(t.is_ok(), s.validate().is_ok(), "validate vs new");
    let Ok(mut tuner) = t else { return Vec::new() };
    assert!(valid_ab(s.step, s.balance) && s.probe_steps > 0 && s.window != Some(0));
    assert!(s.rate > 0.0 && s.rate < 1.0 && s.decay > 0.0 && s.decay < 1.0);
    assert!(s.min_rate.is_finite() && s.min_rate >= 0.0);
    let mut frozen: Option<(f64, f64)> = None;
    let mut check = |tuner: &AbTuner| {
        let (a, b) = tuner.current();
        assert!(valid_ab(a, b), "current ({a}, {b})");
        let r = tuner.report();
        assert!(r.tuning_steps <= s.budget && valid_ab(r.step, r.balance));
        assert_eq!(r.frozen, tuner.is_frozen());
        if r.tuning_steps == s.budget {
            assert!(r.frozen, "budget spent but not frozen");
        }
        if let Some(f) = frozen {
            assert_eq!(f, (a, b), "moved after freezing");
        }
        if r.frozen {
            frozen = Some((a, b));
        }
    };
    check(&tuner);
    if ordinal {
        let setup = LabelSetup::read(&mut input, false, 8, 8, 24);
        let rng = ByteRng::new(input.rest());
        labels::drive::<OrdinalDomain>(setup, rng, &mut |_, target, chain, rng| {
            let r = Kernel::step(&mut tuner, target, chain, rng);
            check(&tuner);
            r
        })
    } else {
        let setup = BinarySetup::read(&mut input, 16, 24);
        let rng = ByteRng::new(input.rest());
        drive::drive(setup, rng, &mut |_, target, chain, rng| {
            let r = Kernel::step(&mut tuner, target, chain, rng);
            check(&tuner);
            r
        })
    }
}

fn acceptance(data: &[u8], domain: u8) -> Vec<u64> {
    let mut input = Input::new(data);
    let mut s = AcceptanceSettings::default();
    let flags = input.u8();
    if flags & 1 != 0 {
        s.initial_changes = input.f64();
        s.target_acceptance = input.f64();
    }
    if flags & 2 != 0 {
        s.gain = input.f64();
        s.min_changes = input.f64();
    }
    s.budget = u64::from(input.u8() % 40);
    s.window = (flags & 4 != 0).then(|| u16::from(input.u8() % 4));
    let t = AcceptanceTuner::new(s);
    assert_eq!(t.is_ok(), s.validate().is_ok(), "validate vs new");
    let Ok(mut tuner) = t else { return Vec::new() };
    assert!(s.target_acceptance > 0.0 && s.target_acceptance < 1.0);
    assert!(s.gain.is_finite() && s.gain > 0.0 && s.min_changes > 0.0);
    assert!(s.initial_changes >= s.min_changes && s.window != Some(0));
    fn check<D: ScaledDmala>(
        tuner: &AcceptanceTuner,
        s: &AcceptanceSettings,
        frozen: &mut Option<u64>,
    ) {
        let r = tuner.report_for::<D>();
        assert!(r.changes >= s.min_changes && r.changes.is_finite(), "{r:?}");
        assert!(r.tuning_steps <= s.budget);
        assert_eq!(r.frozen, r.tuning_steps == s.budget);
        if let Some(l) = r.log_scale {
            assert!(l.is_finite(), "{r:?}");
            assert_eq!(r.step.is_some(), l < 0.0);
            if r.frozen {
                assert_eq!(*frozen.get_or_insert(l.to_bits()), l.to_bits(), "moved");
            }
        }
    }
    let mut frozen = None;
    match domain {
        0 => {
            let setup = BinarySetup::read(&mut input, 16, 24);
            let rng = ByteRng::new(input.rest());
            drive::drive(setup, rng, &mut |_, target, chain, rng| {
                let r = Kernel::step(&mut tuner, target, chain, rng);
                check::<langevin_core::Binary>(&tuner, &s, &mut frozen);
                r
            })
        }
        1 => {
            let setup = LabelSetup::read(&mut input, false, 8, 8, 24);
            let rng = ByteRng::new(input.rest());
            labels::drive::<OrdinalDomain>(setup, rng, &mut |_, target, chain, rng| {
                let r = Kernel::step(&mut tuner, target, chain, rng);
                check::<OrdinalDomain>(&tuner, &s, &mut frozen);
                r
            })
        }
        _ => {
            let setup = LabelSetup::read(&mut input, true, 8, 8, 24);
            let rng = ByteRng::new(input.rest());
            labels::drive::<CategoricalDomain>(setup, rng, &mut |_, target, chain, rng| {
                let r = Kernel::step(&mut tuner, target, chain, rng);
                check::<CategoricalDomain>(&tuner, &s, &mut frozen);
                r
            })
        }
    }
}

fn replicas(data: &[u8]) -> Vec<u64> {
    use langevin_core::tempering::{LadderSettings, ReplicaScratch, Replicas};
    const MAX_REPLICAS: usize = 4;
    let mut input = Input::new(data);
    let r = 1 + usize::from(input.u8() % MAX_REPLICAS as u8);
    let mut settings = LadderSettings::default();
    settings.budget = u64::from(input.u8() % 24);
    if input.bool() {
        settings.min_beta = input.f64();
    }
    let setup = BinarySetup::read(&mut input, 12, 32);
    let mut target = setup.target;
    let mut bufs: Vec<OwnedBuffers<u8>> = (0..r).map(|_| OwnedBuffers::new(&setup.x0)).collect();
    let Ok(mut chains) = bufs
        .iter_mut()
        .map(|b| BinaryChain::new(b.buffers(), &mut target))
        .collect::<Result<Vec<_>, _>>()
    else {
        return Vec::new();
    };
    let mut scratch = ReplicaScratch::<MAX_REPLICAS>::new();
    let buffers = scratch.buffers(&mut chains);
    let valid = settings.validate().is_ok();
    let Ok(mut replicas) = Replicas::new(buffers, settings, &mut target) else {
        return Vec::new();
    };
    assert!(valid, "settings accepted but invalid: {settings:?}");
    let mut rng = ByteRng::new(input.rest());
    let mut out = Vec::new();
    for _ in 0..setup.resets.len() {
        match replicas.sweep(&mut target, &mut rng) {
            Err(StepError::Target(e)) => {
                assert!(!e.recoverable, "a recoverable error stopped a sweep");
                break;
            }
            Err(e) => panic!("sweep failed: {e}"),
            Ok(rep) => out.push(u64::from(rep.swaps)),
        }
        let betas = replicas.betas();
        assert_eq!(betas.first().copied(), Some(1.0));
        assert!(
            betas.windows(2).all(|w| w[1] < w[0] && w[1] > 0.0),
            "{betas:?}"
        );
        for (chain, &beta) in replicas.chains().iter().zip(betas) {
            let (u, g) = target
                .at(chain.state())
                .expect("a replica's state evaluates");
            assert_eq!(chain.log_density().to_bits(), (beta * u).to_bits());
            let b = beta as f32;
            assert!(
                g.iter()
                    .zip(chain.grad())
                    .all(|(x, y)| (x * b).to_bits() == y.to_bits())
            );
            out.extend(chain.state().iter().map(|&v| u64::from(v)));
        }
        let sweeps = replicas.sweeps();
        assert!(
            replicas
                .swaps()
                .iter()
                .all(|s| s.accepted <= s.attempts && s.attempts <= sweeps)
        );
    }
    out
}

fn run(data: &[u8]) -> Vec<u64> {
    let Some((&mode, rest)) = data.split_first() else {
        return Vec::new();
    };
    match mode % 11 {
        0 => acs_tuner(rest),
        1 => acs_kernel(rest, false, false),
        2 => acs_kernel(rest, true, false),
        3 => acs_kernel(rest, false, true),
        4 => acs_kernel(rest, true, true),
        5 => ab(rest, false),
        6 => ab(rest, true),
        7 => acceptance(rest, 0),
        8 => acceptance(rest, 1),
        9 => replicas(rest),
        _ => acceptance(rest, 2),
    }
}

langevin_fuzz::deterministic_fuzz_target!(run);
