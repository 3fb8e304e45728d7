//! The tuners' state machines, pinned bit for bit: a tuner that has stopped (by `freeze()`, by
//! its rate floor or by its budget) is exactly the fixed kernel at its reported parameters, step
//! after step; the fixed-schedule ACS sampler's step `k` is DMALA at `schedule.at(k)`; a frozen
//! ACS tuner starts its cycle at position 0.
//!
//! "Bit for bit" compares the step reports, the states, the bits of the cached `U` and gradient
//! and the random streams after every step of two chains run side by side.

use langevin_core::binary::{self, BinaryChain, FlipProposal, StepReport};
use langevin_core::categorical::CategoricalProposal;
use langevin_core::kernel::{Dmala, Proposal};
use langevin_core::models::{Dims, IsingLattice};
use langevin_core::ordinal::OrdinalProposal;
use langevin_core::tuning::{AbSettings, AbTuner, Acs, AcsSchedule, AcsSettings, AcsTuner};
use langevin_core::{Binary, Categorical, Chain, Domain, Eval, Kernel, Ordinal};
use langevin_tests::discrete::{BinBuf, LabelBuf, Wavy, small_potts, tune_until_frozen};
use langevin_tests::harness::LabelBox;
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

/// What one step left behind, in bits.
#[derive(Debug, PartialEq)]
struct Trace {
    report: StepReport,
    state: Vec<u16>,
    log_density: u64,
    grad: Vec<u32>,
}

/// The trace of `chain` after a step that reported `report`.
fn after<D: Domain>(report: StepReport, chain: &Chain<'_, D>) -> Trace
where
    D::Value: Into<u16>,
{
    Trace {
        report,
        state: chain.state().iter().map(|&v| v.into()).collect(),
        log_density: chain.log_density().to_bits(),
        grad: chain.grad().iter().map(|g| g.to_bits()).collect(),
    }
}

/// Runs `steps` steps of two chains side by side from streams `rng` and a clone of it, and
/// asserts the traces and the streams agree after every step.
fn side_by_side(
    name: &str,
    steps: usize,
    rng: &Xoshiro256PlusPlus,
    mut first: impl FnMut(usize, &mut Xoshiro256PlusPlus) -> Trace,
    mut second: impl FnMut(usize, &mut Xoshiro256PlusPlus) -> Trace,
) {
    let (mut r1, mut r2) = (rng.clone(), rng.clone());
    for k in 0..steps {
        let (a, b) = (first(k, &mut r1), second(k, &mut r2));
        assert_eq!(a, b, "{name}: step {k}");
        assert_eq!(r1, r2, "{name}: streams differ after step {k}");
    }
}

fn ising() -> IsingLattice {
    IsingLattice::with_dims(Dims { rows: 5, cols: 5 }, 0.3, 0.05, true).unwrap()
}

fn wavy() -> Wavy {
    Wavy {
        theta: vec![0.3, -0.2, 0.5, 0.1],
        s: 6,
    }
}

/// Steps `ab` on `chain` until `stop` (which sees the steps taken so far) says it has stopped.
fn run_until<D: Domain, T: Eval<D>>(
    ab: &mut AbTuner,
    target: &mut T,
    chain: &mut Chain<'_, D>,
    rng: &mut Xoshiro256PlusPlus,
    stop: &impl Fn(&mut AbTuner, u64) -> bool,
) where
    AbTuner: Kernel<D>,
{
    let mut n = 0;
    while !stop(ab, n) {
        Kernel::step(ab, target, chain, rng).unwrap();
        n += 1;
    }
}

/// Runs the stopped tuner on `(target, chain)` and `fixed` side by side for 300 steps (see
/// [`side_by_side`]); the tuner's report must not change.
fn pinned<D: Domain, T: Eval<D>>(
    name: &str,
    rng: &Xoshiro256PlusPlus,
    ab: &mut AbTuner,
    (target, chain): (&mut T, &mut Chain<'_, D>),
    mut fixed: impl FnMut(&mut Xoshiro256PlusPlus) -> Trace,
) where
    AbTuner: Kernel<D>,
    D::Value: Into<u16>,
{
    let r = ab.report();
    side_by_side(
        name,
        300,
        rng,
        |_, rng| after(Kernel::step(&mut *ab, target, chain, rng).unwrap(), chain),
        |_, rng| fixed(rng),
    );
    assert_eq!(ab.report(), r, "{name}: nothing changes once stopped");
}

/// Runs `tuner` on each domain until `stop` says it has stopped, then pins it to DMALA at its
/// reported parameters for 300 steps.
fn pin_ab(name: &str, settings: AbSettings, stop: impl Fn(&mut AbTuner, u64) -> bool) {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);

    // Binary.
    let (mut m1, mut m2) = (ising(), ising());
    let mut ab = AbTuner::new(settings).unwrap();
    let mut buf = BinBuf::new(&[0u8; 25]);
    let mut c1 = BinaryChain::new(buf.buffers(), &mut m1).unwrap();
    run_until(&mut ab, &mut m1, &mut c1, &mut rng, &stop);
    assert!(ab.is_frozen(), "{name}: not frozen");
    let r = ab.report();
    let fixed = binary::Dmala::new(FlipProposal::new(r.step, r.balance).unwrap());
    let mut buf2 = BinBuf::new(c1.state());
    let mut c2 = BinaryChain::new(buf2.buffers(), &mut m2).unwrap();
    pinned(
        &format!("{name}, binary"),
        &rng,
        &mut ab,
        (&mut m1, &mut c1),
        |rng| after(fixed.step(&mut m2, &mut c2, rng).unwrap(), &c2),
    );

    // Ordinal, with a window.
    let mut settings = settings;
    settings.window = Some(2);
    pin_ab_labels::<Ordinal, _, _>(
        &format!("{name}, ordinal"),
        settings,
        (wavy(), wavy(), (4, 6)),
        |a, b| OrdinalProposal::new(a, b).unwrap().windowed(2).unwrap(),
        &mut rng,
        &stop,
    );

    // Categorical.
    settings.window = None;
    pin_ab_labels::<Categorical, _, _>(
        &format!("{name}, categorical"),
        settings,
        (small_potts(5, 3), small_potts(5, 3), (5, 3)),
        |a, b| CategoricalProposal::new(a, b).unwrap(),
        &mut rng,
        &stop,
    );
}

/// Runs a fresh AB tuner with `settings` on the first copy of a label model (a chain of `d`
/// coordinates of `s` values from zeros) until `stop` says it has stopped, then pins it (see
/// [`pinned`]) to fixed DMALA from `proposal(step, balance)` at its report on the second copy,
/// started where the tuner stopped.
fn pin_ab_labels<D, T, P>(
    name: &str,
    settings: AbSettings,
    (mut m1, mut m2, (d, s)): (T, T, (usize, usize)),
    proposal: impl Fn(f64, f64) -> P,
    rng: &mut Xoshiro256PlusPlus,
    stop: &impl Fn(&mut AbTuner, u64) -> bool,
) where
    D: Domain<Value = u16>,
    T: Eval<D>,
    P: Proposal<D>,
    AbTuner: Kernel<D>,
{
    let g = D::grad_len(d, s).unwrap();
    let mut ab = AbTuner::new(settings).unwrap();
    let mut buf = LabelBuf::labels(&vec![0u16; d], s, g);
    let mut c1 = Chain::<D>::new(buf.buffers(), &mut m1).unwrap();
    run_until(&mut ab, &mut m1, &mut c1, rng, stop);
    let r = ab.report();
    let fixed = Dmala::new(proposal(r.step, r.balance));
    let mut buf2 = LabelBuf::labels(c1.state(), s, g);
    let mut c2 = Chain::<D>::new(buf2.buffers(), &mut m2).unwrap();
    pinned(name, rng, &mut ab, (&mut m1, &mut c1), |rng| {
        after(fixed.step(&mut m2, &mut c2, rng).unwrap(), &c2)
    });
}

/// `freeze()` in the middle of a probe (step 137 of 100-step probes: the second probe of the
/// first triple, at `a·(1 + γ)`) keeps the centre values, not the probe's.
#[test]
fn ab_tuner_stopped_by_freeze_is_the_fixed_kernel() {
    let settings = AbSettings::default();
    pin_ab("freeze()", settings, |ab, n| {
        if n == 137 {
            let probing = ab.current();
            ab.freeze();
            assert_ne!(
                probing,
                ab.current(),
                "frozen mid-probe: back to the centre"
            );
            assert_eq!(ab.current(), (settings.step, settings.balance));
        }
        ab.is_frozen()
    });
}

/// With a large budget the tuner stops at its rate floor: `γ = 0.2` halves after each round in
/// which nothing moved and tuning ends below 0.06, i.e. after two such rounds.
#[test]
fn ab_tuner_stopped_by_its_rate_floor_is_the_fixed_kernel() {
    let mut settings = AbSettings::default();
    settings.decay = 0.5;
    settings.min_rate = 0.06;
    settings.probe_steps = 20;
    settings.budget = 1_000_000;
    pin_ab("rate floor", settings, |ab, _| {
        let r = ab.report();
        if r.frozen {
            assert!(r.tuning_steps < settings.budget, "stopped by the budget");
        }
        r.frozen
    });
}

/// Stopped by its budget (the case the AB exactness tests also cover on one domain).
#[test]
fn ab_tuner_stopped_by_its_budget_is_the_fixed_kernel() {
    let mut settings = AbSettings::default();
    settings.budget = 700;
    pin_ab("budget", settings, |ab, _| {
        let r = ab.report();
        if r.frozen {
            assert_eq!(r.tuning_steps, settings.budget);
        }
        r.frozen
    });
}

fn schedule() -> AcsSchedule {
    AcsSchedule::new(3.0, 0.2, &[0.95, 0.8, 0.7, 0.6, 0.5]).unwrap()
}

/// `Acs` at step `k` is DMALA at `schedule.at(k)`, over several cycles, in every domain.
#[test]
fn fixed_schedule_acs_step_k_is_dmala_at_that_position() {
    let s = schedule();
    let steps = 4 * s.cycle() as usize + 3;
    let rng = Xoshiro256PlusPlus::seed_from_u64(9);

    let (mut m1, mut m2) = (ising(), ising());
    let mut acs = Acs::new(s);
    let (mut b1, mut b2) = (BinBuf::new(&[0u8; 25]), BinBuf::new(&[0u8; 25]));
    let mut c1 = BinaryChain::new(b1.buffers(), &mut m1).unwrap();
    let mut c2 = BinaryChain::new(b2.buffers(), &mut m2).unwrap();
    side_by_side(
        "ACS binary",
        steps,
        &rng,
        |k, rng| {
            assert_eq!(acs.position(), k as u64);
            let rep = Kernel::step(&mut acs, &mut m1, &mut c1, rng).unwrap();
            after(rep, &c1)
        },
        |k, rng| {
            let (a, b) = s.at(k as u64);
            let rep = binary::Dmala::new(FlipProposal::new(a, b).unwrap())
                .step(&mut m2, &mut c2, rng)
                .unwrap();
            after(rep, &c2)
        },
    );

    acs_beside_dmala::<Ordinal, _, _>(
        "ACS ordinal",
        (wavy(), wavy(), (4, 6)),
        Acs::new(s).with_window(2),
        |a, b| OrdinalProposal::new(a, b).unwrap().windowed(2).unwrap(),
        steps,
        &rng,
    );
    acs_beside_dmala::<Categorical, _, _>(
        "ACS categorical",
        (small_potts(5, 3), small_potts(5, 3), (5, 3)),
        Acs::new(s),
        |a, b| CategoricalProposal::new(a, b).unwrap(),
        steps,
        &rng,
    );
}

/// Two label chains side by side from the zero state (`d` coordinates of `s` values) of two
/// copies of a model: `acs` on the first, fixed DMALA from `proposal(a, b)` at
/// `(a, b) = schedule.at(k)` on the second.
fn acs_beside_dmala<D, T, P>(
    name: &str,
    (mut m1, mut m2, (d, s)): (T, T, (usize, usize)),
    mut acs: Acs,
    proposal: impl Fn(f64, f64) -> P,
    steps: usize,
    rng: &Xoshiro256PlusPlus,
) where
    D: Domain<Value = u16>,
    T: Eval<D>,
    P: Proposal<D>,
    Acs: Kernel<D>,
{
    let schedule = *acs.schedule();
    let zeros = vec![0u16; d];
    let g = D::grad_len(d, s).unwrap();
    let (mut b1, mut b2) = (
        LabelBuf::labels(&zeros, s, g),
        LabelBuf::labels(&zeros, s, g),
    );
    let mut c1 = Chain::<D>::new(b1.buffers(), &mut m1).unwrap();
    let mut c2 = Chain::<D>::new(b2.buffers(), &mut m2).unwrap();
    side_by_side(
        name,
        steps,
        rng,
        |_, rng| after(Kernel::step(&mut acs, &mut m1, &mut c1, rng).unwrap(), &c1),
        |k, rng| {
            let (a, b) = schedule.at(k as u64);
            let rep = Dmala::new(proposal(a, b))
                .step(&mut m2, &mut c2, rng)
                .unwrap();
            after(rep, &c2)
        },
    );
}

/// A tuner that has just frozen asks for `schedule.at(0)` and then steps exactly like a fresh
/// `Acs` on its tuned schedule, cycle position 0 first.
#[test]
fn frozen_acs_tuner_starts_its_cycle_at_position_zero() {
    let mut settings = AcsSettings::default();
    settings.total_steps = 20_000;
    settings.cycle = 5;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(13);
    frozen_tuner_beside_acs::<Binary, _>(
        "frozen ACS tuner, binary",
        (ising(), ising(), (25, 2)),
        settings,
        &mut rng,
    );
    frozen_tuner_beside_acs::<Categorical, _>(
        "frozen ACS tuner, categorical",
        (small_potts(5, 3), small_potts(5, 3), (5, 3)),
        settings,
        &mut rng,
    );
}

/// Tunes ACS on the first of two copies of a model from the zero state (`d` coordinates of `s`
/// values) until it freezes, then runs it beside a fresh `Acs` on its tuned schedule from the
/// state it reached.
fn frozen_tuner_beside_acs<D, T>(
    name: &str,
    (mut m1, mut m2, (d, s)): (T, T, (usize, usize)),
    settings: AcsSettings,
    rng: &mut Xoshiro256PlusPlus,
) where
    D: Domain,
    D::Value: Into<u16>,
    T: Eval<D>,
    AcsTuner: Kernel<D>,
    Acs: Kernel<D>,
{
    let mut tuner = AcsTuner::new(settings).unwrap();
    let mut b1 = LabelBox::for_domain::<D>(&vec![D::Value::default(); d], s).unwrap();
    let mut c1 = Chain::<D>::new(b1.buffers(), &mut m1).unwrap();
    tune_until_frozen(&mut tuner, AcsTuner::is_frozen, &mut m1, &mut c1, rng);
    let schedule = tuner.report().schedule;
    let (a0, b0) = schedule.at(0);
    let act = tuner.action();
    assert_eq!((act.step, act.balance, act.adjusted), (a0, b0, true));
    let mut acs = Acs::new(schedule);
    let mut b2 = LabelBox::for_domain::<D>(c1.state(), s).unwrap();
    let mut c2 = Chain::<D>::new(b2.buffers(), &mut m2).unwrap();
    side_by_side(
        name,
        3 * schedule.cycle() as usize,
        rng,
        |_, rng| {
            after(
                Kernel::step(&mut tuner, &mut m1, &mut c1, rng).unwrap(),
                &c1,
            )
        },
        |_, rng| after(Kernel::step(&mut acs, &mut m2, &mut c2, rng).unwrap(), &c2),
    );
    assert_eq!(
        tuner.report().schedule,
        schedule,
        "{name}: the schedule stays once frozen"
    );
}
