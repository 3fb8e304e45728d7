//! Bad input to the entry points beyond the binary core (categorical proposals, the second-order
//! kernel, the tuners, the baselines and the lattice kernels): typed errors or documented safe
//! outcomes, never a panic. Each test names the rows of `docs/bad-input.md` it proves.

use langevin_core::Kernel;
use langevin_core::baselines::{Gibbs, Gwg, RandomWalk, Scan, TunedRandomWalk};
use langevin_core::binary::{BinaryChain, LatticeDmala, LatticeDula, LatticeProposal, StepError};
use langevin_core::categorical::{CategoricalChain, CategoricalProposal};
use langevin_core::continuous::{
    Access, Agld, AgldSettings, BuildError, DenseSnapshots, Ewsg, EwsgSettings, Langevin,
    LangevinSettings, PointSnapshot, ScalarSnapshots, SnapshotUpdate,
    StepError as ContinuousStepError, Underdamped, UnderdampedSettings,
};
use langevin_core::models::{BinaryQuadratic, Dims, IsingLattice};
use langevin_core::ordinal::{InitError, OrdinalChain};
use langevin_core::second_order::{AbSecondOrder, TrickParams, scratch_len};
use langevin_core::tuning::{
    AbSettings, AbTuner, Acs, AcsSchedule, AcsSettings, AcsTuner, MAX_CYCLE, cyclical_step,
};
use langevin_core::{LenError, ParamError};
use langevin_tests::discrete::{BinBuf, LabelBuf, Wavy, small_potts};
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

const BAD_STEPS: [f64; 6] = [0.0, -0.0, -1.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY];
const BAD_BALANCES: [f64; 7] = [
    0.0,
    -0.0,
    -0.5,
    1.0 + f64::EPSILON,
    f64::NAN,
    f64::INFINITY,
    f64::MAX,
];
/// Gradient entries of every awkward class.
const WILD: [f32; 9] = [
    f32::NAN,
    f32::INFINITY,
    f32::NEG_INFINITY,
    f32::MAX,
    f32::MIN,
    2000.0,
    -2000.0,
    1e-45,
    -0.0,
];

fn rng() -> Xoshiro256PlusPlus {
    Xoshiro256PlusPlus::seed_from_u64(17)
}

fn lattice(rows: usize, cols: usize, j: f32) -> IsingLattice<Dims> {
    IsingLattice::with_dims(Dims { rows, cols }, j, 0.1, true).unwrap()
}

// ---- categorical ----

/// Rows "CategoricalProposal::propose, log_q" and "CategoricalChain S".
#[test]
fn categorical_proposal_on_wild_gradients_lengths_and_label_counts() {
    let p = CategoricalProposal::new(0.7, 0.5).unwrap();
    let (d, s) = (3usize, 4usize);
    let x = [0u16, 3, 1];
    let mut r = rng();
    for &g in &WILD {
        let mut grad = [0.25f32; 12];
        grad[1] = g; // coordinate 0, label 1
        grad[4 + 3] = g; // coordinate 1, its current label
        let (mut y, mut changed, mut scratch) = ([0u16; 3], [0u32; 3], [0.0f64; 4]);
        for _ in 0..50 {
            let drawn = p
                .propose(&x, &grad, s, &mut y, &mut changed, &mut scratch, &mut r)
                .unwrap();
            assert!(y.iter().all(|&v| usize::from(v) < s), "{g}: {y:?}");
            assert!(drawn.changed <= d);
            let lq = p.log_q(&x, &grad, s, &y).unwrap();
            if g.is_nan() {
                // A NaN weight is never drawn; the coordinate stays and log q is NaN.
                assert_eq!(y[0], 0);
                assert!(lq.is_nan() && drawn.log_q.is_nan());
            } else if g.is_infinite() {
                // ∞ − ∞ in the normalisation: log q may be NaN (a Metropolis test rejects).
                assert!(lq <= 0.0 || lq.is_nan(), "{g}: {lq}");
            } else {
                assert!(lq <= 0.0 && !lq.is_nan(), "{g}: {lq}");
            }
        }
    }
    // Mismatched lengths are typed errors naming the buffer, before any draw.
    let grad = [0.0f32; 12];
    let (mut y, mut changed, mut scratch) = ([0u16; 3], [0u32; 3], [0.0f64; 4]);
    let before = r.clone();
    // The buffer each row shortens and the lengths of `grad`, the proposal, `changed`, scratch.
    let short = [
        ("grad", [11, 3, 3, 4]),
        ("proposal", [12, 2, 3, 4]),
        ("changed", [12, 3, 1, 4]),
        ("scratch", [12, 3, 3, 3]),
    ];
    for (bad, [g, n, c, k]) in short {
        let e = p
            .propose(
                &x,
                &grad[..g],
                s,
                &mut y[..n],
                &mut changed[..c],
                &mut scratch[..k],
                &mut r,
            )
            .unwrap_err();
        assert_eq!(e.buffer, bad);
    }
    assert_eq!(r, before, "nothing drawn");
    assert_eq!(p.log_q(&x, &grad, s, &y[..2]).unwrap_err().buffer, "to");
    let pre = [1.0f32; 2];
    let pp = p.preconditioned(&pre).unwrap();
    assert_eq!(
        pp.log_q(&x, &grad, s, &y).unwrap_err().buffer,
        "preconditioner"
    );
    // S = 0 and S = 1 called directly: nothing moves, no panic.
    for states in [0usize, 1] {
        let grad = vec![0.0f32; d * states];
        let mut scratch = vec![0.0f64; states];
        let drawn = p
            .propose(
                &[0, 0, 0],
                &grad,
                states,
                &mut y,
                &mut changed,
                &mut scratch,
                &mut r,
            )
            .unwrap();
        assert_eq!((drawn.changed, y), (0, [0, 0, 0]), "S = {states}");
    }
    // d = 0: nothing to do.
    let drawn = p
        .propose(&[], &[], s, &mut [], &mut [], &mut [0.0; 4], &mut r)
        .unwrap();
    assert_eq!((drawn.changed, drawn.log_q), (0, 0.0));
    // A chain refuses S outside 2..=65535 (the categorical chain as the ordinal one).
    for states in [0usize, 1, 65_536] {
        let mut t = small_potts(3, 2);
        let mut buf = LabelBuf::labels(&[0, 0, 0], 2, 6);
        let chain = CategoricalChain::new_categorical(buf.buffers(), &mut t);
        assert!(chain.is_ok());
        let mut w = Wavy {
            theta: vec![0.1; 3],
            s: states,
        };
        let mut buf = LabelBuf::labels(&[0, 0, 0], states.min(8), 3);
        assert!(matches!(
            OrdinalChain::new_ordinal(buf.buffers(), &mut w),
            Err(InitError::States(v)) if v == states
        ));
    }
}

// ---- second order ----

/// Rows "TrickParams" and "AbSecondOrder".
#[test]
fn second_order_refuses_bad_parameters_and_buffers() {
    let z4 = [0.0f32; 4];
    let d2 = [0.0f32; 2];
    assert_eq!(
        TrickParams::new(&[], &[], &[], 0.5, 0.5).unwrap_err(),
        ParamError::EmptyDimension
    );
    assert!(matches!(
        TrickParams::new(&z4[..3], &d2, &z4, 0.5, 0.5),
        Err(ParamError::Len(LenError { buffer: "W", .. }))
    ));
    assert!(matches!(
        TrickParams::new(&z4, &d2, &z4[..3], 0.5, 0.5),
        Err(ParamError::Len(LenError { buffer: "A", .. }))
    ));
    for a in BAD_STEPS {
        assert!(matches!(
            TrickParams::new(&z4, &d2, &z4, a, 0.5),
            Err(ParamError::Step(_))
        ));
    }
    for b in BAD_BALANCES {
        assert!(matches!(
            TrickParams::new(&z4, &d2, &z4, 0.5, b),
            Err(ParamError::Balance(_))
        ));
    }
    for v in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
        let bad_d = [0.0, v];
        assert_eq!(
            TrickParams::new(&z4, &bad_d, &z4, 0.5, 0.5).unwrap_err(),
            ParamError::NonFinite("D")
        );
        let bad = [0.0, v, v, 0.0];
        assert_eq!(
            TrickParams::new(&bad, &d2, &z4, 0.5, 0.5).unwrap_err(),
            ParamError::NonFinite("W")
        );
        assert_eq!(
            TrickParams::new(&z4, &d2, &bad, 0.5, 0.5).unwrap_err(),
            ParamError::NonFinite("A")
        );
    }
    // Asymmetric W, including a -0 / +0 pair (equal) and a subnormal difference.
    assert!(matches!(
        TrickParams::new(&[0.0, 1e-45, 0.0, 0.0], &d2, &z4, 0.5, 0.5),
        Err(ParamError::OutOfRange {
            name: "W symmetry",
            ..
        })
    ));
    assert!(TrickParams::new(&[0.0, -0.0, 0.0, 0.0], &d2, &z4, 0.5, 0.5).is_ok());
    let ok = TrickParams::new(&z4, &d2, &z4, 0.5, 0.5).unwrap();
    for a in BAD_STEPS {
        assert!(matches!(ok.with_step(a), Err(ParamError::Step(_))));
    }
    for b in BAD_BALANCES {
        assert!(matches!(
            ok.with_balance(b, &z4),
            Err(ParamError::Balance(_))
        ));
    }
    assert!(matches!(
        ok.with_balance(0.5, &z4[..2]),
        Err(ParamError::Len(_))
    ));
    assert_eq!(
        ok.with_balance(0.5, &[f32::NAN, 0.0, 0.0, 0.0])
            .unwrap_err(),
        ParamError::NonFinite("A")
    );

    // Kernel buffers and dimensions.
    let (mut scratch, mut state) = (vec![0.0f64; scratch_len(2)], vec![0u8; 2]);
    assert_eq!(
        AbSecondOrder::new(ok, &mut scratch[..5], &mut state)
            .unwrap_err()
            .buffer,
        "scratch"
    );
    assert_eq!(
        AbSecondOrder::new(ok, &mut scratch, &mut state[..1])
            .unwrap_err()
            .buffer,
        "state"
    );
    let mut k = AbSecondOrder::new(ok, &mut scratch, &mut state).unwrap();
    let z9 = [0.0f32; 9];
    let other = TrickParams::new(&z9, &[0.0; 3], &z9, 0.5, 0.5).unwrap();
    assert_eq!(k.set_params(other).unwrap_err().buffer, "params");
    assert!(
        k.transition(&[0, 1], &[0.0; 2], &[1, 1], &[0.0; 2], &[0.0; 1])
            .is_err(),
        "u of the wrong length"
    );
    // A target of another dimension: a step error, the chain unchanged.
    let mut model = lattice(3, 3, 0.3);
    let mut buf = BinBuf::new(&[0; 9]);
    let mut chain = BinaryChain::new(buf.buffers(), &mut model).unwrap();
    assert!(matches!(
        k.step(&mut model, &mut chain, &mut rng()),
        Err(StepError::Len(_))
    ));
    assert_eq!(chain.state(), &[0; 9]);
}

/// Row "AbSecondOrder: extreme W, A, a, b".
#[test]
fn second_order_with_extreme_finite_parameters_keeps_the_chain_valid() {
    let mut model = lattice(3, 3, 0.3);
    let d = 9;
    let mut big = vec![0.0f32; d * d];
    for i in 0..d {
        for j in 0..d {
            big[i * d + j] = if (i + j) % 3 == 0 { 1e30 } else { -1e30 };
        }
    }
    let tiny = vec![1e-45f32; d * d];
    let huge_a = vec![f32::MAX; d * d];
    let zero = vec![0.0f32; d * d];
    let diag_big = vec![f32::MAX; d];
    let diag0 = vec![-0.0f32; d];
    type Case<'a> = (&'a [f32], &'a [f32], &'a [f32], f64, f64);
    let cases: [Case<'_>; 6] = [
        (&big, &diag0, &zero, 0.5, 0.5),
        (&zero, &diag_big, &zero, 0.5, 0.5),
        (&zero, &diag0, &huge_a, 0.5, 0.5),
        (&tiny, &diag0, &tiny, 1e-30, 1e-30),
        (&big, &diag_big, &huge_a, 1e30, 1.0),
        (&zero, &diag0, &zero, f64::MIN_POSITIVE, 5e-324),
    ];
    for (n, (w, dg, a, step, balance)) in cases.into_iter().enumerate() {
        let params = TrickParams::new(w, dg, a, step, balance).unwrap();
        let (mut scratch, mut state) = (vec![0.0f64; scratch_len(d)], vec![0u8; d]);
        let mut k = AbSecondOrder::new(params, &mut scratch, &mut state).unwrap();
        let mut buf = BinBuf::new(&[0; 9]);
        let mut chain = BinaryChain::new(buf.buffers(), &mut model).unwrap();
        let mut r = rng();
        for _ in 0..200 {
            let rep = k.step(&mut model, &mut chain, &mut r).unwrap();
            assert!(!rep.log_accept_ratio.is_nan() || !rep.accepted, "case {n}");
            assert!(chain.state().iter().all(|&v| v <= 1));
            assert!(chain.log_density().is_finite());
        }
    }
}

// ---- tuning ----

/// `new(settings)` for `base` settings changed by `edit`.
fn edited<S, T>(mut base: S, edit: &dyn Fn(&mut S), new: impl FnOnce(S) -> T) -> T {
    edit(&mut base);
    new(base)
}

/// Rows "AbSettings / AbTuner".
#[test]
fn ab_tuner_refuses_bad_settings_and_stays_in_range() {
    let with = |f: &dyn Fn(&mut AbSettings)| edited(AbSettings::default(), f, AbTuner::new);
    for a in BAD_STEPS {
        assert!(matches!(with(&|s| s.step = a), Err(ParamError::Step(_))));
    }
    for b in BAD_BALANCES {
        assert!(matches!(
            with(&|s| s.balance = b),
            Err(ParamError::Balance(_))
        ));
    }
    for v in [0.0, -0.0, 1.0, -0.1, 1.5, f64::NAN, f64::INFINITY] {
        assert!(matches!(
            with(&|s| s.rate = v),
            Err(ParamError::OutOfRange { name: "rate", .. })
        ));
        assert!(matches!(
            with(&|s| s.decay = v),
            Err(ParamError::OutOfRange { name: "decay", .. })
        ));
    }
    assert!(matches!(
        with(&|s| s.probe_steps = 0),
        Err(ParamError::OutOfRange { .. })
    ));
    for v in [-1.0, -1e-300, f64::NAN, f64::INFINITY] {
        assert!(matches!(
            with(&|s| s.min_rate = v),
            Err(ParamError::OutOfRange { .. })
        ));
    }
    assert!(matches!(
        with(&|s| s.window = Some(0)),
        Err(ParamError::OutOfRange { name: "window", .. })
    ));
    // Budget 0 or nothing to tune: frozen at once with the given values.
    let t = with(&|s| s.budget = 0).unwrap();
    assert!(t.is_frozen() && t.current() == (0.1, 0.5));
    let t = with(&|s| {
        s.tune_step = false;
        s.tune_balance = false;
    })
    .unwrap();
    assert!(t.is_frozen());
    // Extreme starting points and probe sizes: (a, b) stay in range, the chain stays valid.
    let mut model = lattice(4, 4, 0.4);
    for (a, b, rate) in [
        (1e-30, 1e-30, 0.999),
        (1e30, 1.0, 0.999),
        (5e-324, 1.0, 1e-300),
        (f64::MAX, 5e-324, 0.5),
    ] {
        let mut t = with(&|s| {
            s.step = a;
            s.balance = b;
            s.rate = rate;
            s.probe_steps = 3;
            s.budget = 600;
        })
        .unwrap();
        let mut buf = BinBuf::new(&[0; 16]);
        let mut chain = BinaryChain::new(buf.buffers(), &mut model).unwrap();
        let mut r = rng();
        for _ in 0..700 {
            let (sa, sb) = t.current();
            assert!(
                sa.is_finite() && sa > 0.0 && sb > 0.0 && sb <= 1.0,
                "{a} {b}"
            );
            Kernel::step(&mut t, &mut model, &mut chain, &mut r).unwrap();
            assert!(chain.log_density().is_finite());
        }
        assert!(t.is_frozen());
    }
}

/// Rows "cyclical_step", "AcsSchedule", "Acs", "AcsSettings / AcsTuner".
#[test]
fn acs_schedules_and_tuner_refuse_bad_values() {
    // The pure schedule functions validate nothing and never panic.
    assert_eq!(cyclical_step(5, 0, 10.0, 0.5), 0.5, "s = 0 gives a_min");
    assert_eq!(cyclical_step(u64::MAX, 1, 10.0, 0.5), 10.0);
    assert_eq!(cyclical_step(3, 20, f64::NAN, 0.5), 0.5);
    assert!(cyclical_step(3, 20, 10.0, f64::NAN).is_nan());
    // AcsSchedule.
    for a in BAD_STEPS {
        assert!(matches!(
            AcsSchedule::new(a, 0.1, &[0.5]),
            Err(ParamError::Step(_))
        ));
        assert!(matches!(
            AcsSchedule::new(1.0, a, &[0.5]),
            Err(ParamError::Step(_))
        ));
    }
    assert!(matches!(
        AcsSchedule::new(0.1, 1.0, &[0.5]),
        Err(ParamError::OutOfRange { .. })
    ));
    assert!(matches!(
        AcsSchedule::new(1.0, 0.1, &[]),
        Err(ParamError::OutOfRange { .. })
    ));
    assert!(matches!(
        AcsSchedule::new(1.0, 0.1, &vec![0.5; MAX_CYCLE + 1]),
        Err(ParamError::OutOfRange { .. })
    ));
    for b in BAD_BALANCES {
        assert!(matches!(
            AcsSchedule::new(1.0, 0.1, &[0.5, b]),
            Err(ParamError::Balance(_))
        ));
        assert!(matches!(
            AcsSchedule::naive(1.0, 0.1, b, 0.5, 4),
            Err(ParamError::Balance(_))
        ));
    }
    assert!(matches!(
        AcsSchedule::naive(1.0, 0.1, 0.5, 0.9, 4),
        Err(ParamError::OutOfRange { .. })
    ));
    for s in [0, MAX_CYCLE as u32 + 1, u32::MAX] {
        assert!(matches!(
            AcsSchedule::naive(1.0, 0.1, 0.9, 0.5, s),
            Err(ParamError::OutOfRange { .. })
        ));
    }
    let one = AcsSchedule::naive(1e30, 1e-30, 1.0, 5e-324, 1).unwrap();
    assert_eq!(one.at(u64::MAX), (1e30, 1.0));
    // Acs with a zero window: a typed step error on the ordinal domain, nothing changed.
    let acs = Acs::new(AcsSchedule::naive(2.0, 0.5, 0.9, 0.5, 4).unwrap()).with_window(0);
    let mut w = Wavy {
        theta: vec![0.1; 3],
        s: 5,
    };
    let mut buf = LabelBuf::labels(&[1, 2, 3], 5, 3);
    let mut chain = OrdinalChain::new_ordinal(buf.buffers(), &mut w).unwrap();
    let mut k = acs;
    assert!(matches!(
        Kernel::step(&mut k, &mut w, &mut chain, &mut rng()),
        Err(StepError::Param(ParamError::OutOfRange {
            name: "window",
            ..
        }))
    ));
    assert_eq!(chain.state(), &[1, 2, 3]);
    // The window is ignored on the binary and categorical domains.
    let mut potts = small_potts(3, 3);
    let mut buf = LabelBuf::labels(&[0, 1, 2], 3, 9);
    let mut cchain = CategoricalChain::new_categorical(buf.buffers(), &mut potts).unwrap();
    Kernel::step(&mut k, &mut potts, &mut cchain, &mut rng()).unwrap();

    // AcsSettings.
    let with = |f: &dyn Fn(&mut AcsSettings)| edited(AcsSettings::default(), f, AcsTuner::new);
    for a in BAD_STEPS {
        assert!(matches!(with(&|s| s.a_ceil = a), Err(ParamError::Step(_))));
        assert!(matches!(with(&|s| s.a_floor = a), Err(ParamError::Step(_))));
        assert!(matches!(
            with(&|s| s.fixed_steps = Some((a, 0.1))),
            Err(ParamError::Step(_))
        ));
    }
    for b in BAD_BALANCES {
        assert!(matches!(
            with(&|s| s.b_max = b),
            Err(ParamError::Balance(_))
        ));
        assert!(matches!(
            with(&|s| s.b_min = b),
            Err(ParamError::Balance(_))
        ));
    }
    let out_of_range =
        |f: &dyn Fn(&mut AcsSettings)| matches!(with(f), Err(ParamError::OutOfRange { .. }));
    for v in [0.0, 1.0, -0.0, f64::NAN, f64::INFINITY] {
        assert!(out_of_range(&|s| s.target = v), "target {v}");
        assert!(out_of_range(&|s| s.zeta = v), "zeta {v}");
    }
    for v in [0.0, -0.5, 1.5, f64::NAN, f64::INFINITY] {
        assert!(out_of_range(&|s| s.budget_fraction = v), "fraction {v}");
    }
    for c in [0, 1, MAX_CYCLE as u32 + 1] {
        assert!(out_of_range(&|s| s.cycle = c), "cycle {c}");
    }
    assert!(out_of_range(&|s| s.a_floor = 10.0));
    assert!(out_of_range(&|s| s.b_min = 0.99));
    assert!(out_of_range(&|s| s.steps_per_estimate = 0));
    for t in [0, 1, 33] {
        assert!(out_of_range(&|s| s.step_candidates = t));
        assert!(out_of_range(&|s| s.balance_candidates = t));
    }
    assert!(out_of_range(&|s| s.window = Some(0)));
    for n in [0, 1, 100] {
        assert!(
            matches!(
                with(&|s| s.total_steps = n),
                Err(ParamError::TuningBudget { .. })
            ),
            "budget of {n}"
        );
    }
    // The largest run length and budget fraction plan without overflow.
    let t = with(&|s| {
        s.total_steps = u64::MAX;
        s.budget_fraction = 1.0;
        s.steps_per_estimate = u32::MAX;
    })
    .unwrap();
    assert!(t.planned_steps() > 0);
    // Observations of any value: NaN and ±∞ count as 0, others are clamped to [0, 1]; the
    // frozen schedule is valid.
    let mut t = with(&|s| {
        s.total_steps = 4_000;
        s.cycle = 4;
    })
    .unwrap();
    let wild = [
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        -1.0,
        2.0,
        5e-324,
        -0.0,
    ];
    let mut n = 0;
    while !t.is_frozen() {
        t.observe(wild[n % wild.len()]);
        n += 1;
        assert!(n < 10_000);
    }
    let r = t.report();
    let sched = r.schedule;
    assert!(sched.a_min() > 0.0 && sched.a_min() <= sched.a_max() && sched.a_max().is_finite());
    assert!(sched.balances().iter().all(|&b| b > 0.0 && b <= 1.0));
}

// ---- baselines ----

/// Rows "RandomWalk", "TunedRandomWalk", "Gibbs", "Gwg".
#[test]
fn baselines_refuse_bad_rates_indices_and_lengths() {
    for p in [
        0.0,
        -0.0,
        1.0,
        -0.5,
        1.5,
        1e-10,
        5e-324,
        f64::NAN,
        f64::INFINITY,
    ] {
        assert!(
            matches!(
                RandomWalk::new(p),
                Err(ParamError::OutOfRange {
                    name: "flip rate",
                    ..
                })
            ),
            "{p}"
        );
        if p.is_nan() || p < 1.0 {
            assert!(TunedRandomWalk::new(p, 10, 0.3).is_err(), "{p}");
        }
    }
    for p in [1.0, 1.5, f64::INFINITY] {
        let t = TunedRandomWalk::new(p, 10, 0.3).unwrap();
        assert_eq!(t.rate(), 0.5, "capped at 1/2");
    }
    assert!(RandomWalk::new(2.4e-10).is_ok(), "just above 2^-32");
    assert!(TunedRandomWalk::new(0.9, 10, 0.3).is_ok(), "capped at 1/2");
    for a in [0.0, 1.0, f64::NAN, -1.0] {
        assert!(TunedRandomWalk::new(0.1, 10, a).is_err());
    }
    // A tuned walk with a target acceptance near 0 or 1 keeps a valid rate.
    let mut model = lattice(3, 3, 0.3);
    for target in [1e-300, 1.0 - f64::EPSILON] {
        let mut t = TunedRandomWalk::new(0.3, 2_000, target).unwrap();
        let mut buf = BinBuf::new(&[0; 9]);
        let mut chain = BinaryChain::new(buf.buffers(), &mut model).unwrap();
        let mut r = rng();
        for _ in 0..2_500 {
            Kernel::step(&mut t, &mut model, &mut chain, &mut r).unwrap();
        }
        assert!(
            t.is_frozen() && t.rate() > 0.0 && t.rate() < 1.0,
            "{target}"
        );
    }
    // Gibbs: state of another length.
    let mut g = Gibbs::new(Scan::Random);
    let mut x = [0u8; 8];
    assert!(matches!(
        g.update_binary(&mut model, &mut x, &mut rng()),
        Err(StepError::Len(_))
    ));
    let mut potts = small_potts(3, 3);
    let mut lx = [0u16; 3];
    assert!(matches!(
        g.update_categorical(&mut potts, &mut lx, &mut [0.0; 2], &mut rng()),
        Err(StepError::Len(LenError {
            buffer: "scratch",
            ..
        }))
    ));
    assert!(matches!(
        g.update_categorical(&mut potts, &mut lx[..2], &mut [0.0; 3], &mut rng()),
        Err(StepError::Len(LenError { buffer: "x", .. }))
    ));
    // Gibbs on a quadratic with ±1e30 entries: ΔU is finite, the bit flips or not.
    let wq = [0.0f32, 1e30, 1e30, 0.0];
    let b = [-1e30f32, 1e30];
    let mut cache = [0.0f64; 4];
    let mut q = BinaryQuadratic::new(&wq, &b, &mut cache).unwrap();
    let mut bx = [0u8; 2];
    langevin_core::BinaryTarget::log_density_and_grad(&mut q, &bx, &mut [0.0; 2]).unwrap();
    let mut sweep = Gibbs::new(Scan::Systematic);
    for _ in 0..20 {
        sweep.update_binary(&mut q, &mut bx, &mut rng()).unwrap();
        assert!(bx.iter().all(|&v| v <= 1));
    }
    // Gwg pick probabilities.
    let bxs = [0u8, 1, 0];
    assert_eq!(
        Gwg::log_pick(&bxs, &[0.0; 2], 0).unwrap_err().buffer,
        "grad"
    );
    assert_eq!(
        Gwg::log_pick(&bxs, &[0.0; 3], 3).unwrap_err().buffer,
        "index"
    );
    assert_eq!(
        Gwg::log_pick(&bxs, &[0.0; 3], usize::MAX)
            .unwrap_err()
            .buffer,
        "index"
    );
    for &v in &WILD {
        let lp = Gwg::log_pick(&bxs, &[v, 0.0, 0.5], 1).unwrap();
        assert!(lp <= 0.0 || lp.is_nan(), "{v}: {lp}");
    }
    assert!(
        Gwg::log_pick(&bxs, &[f32::NAN, 0.0, 0.5], 1)
            .unwrap()
            .is_nan()
    );
    let lx = [0u16, 2];
    let grad = [0.0f32; 6];
    assert_eq!(
        Gwg::log_pick_categorical(&lx, &grad[..5], 3, 0, 1)
            .unwrap_err()
            .buffer,
        "grad"
    );
    assert_eq!(
        Gwg::log_pick_categorical(&lx, &grad, 3, 2, 1)
            .unwrap_err()
            .buffer,
        "index"
    );
    // Staying put and labels beyond S are never picked.
    assert_eq!(
        Gwg::log_pick_categorical(&lx, &grad, 3, 0, 0).unwrap(),
        f64::NEG_INFINITY
    );
    for k in [3u16, 4, u16::MAX] {
        assert_eq!(
            Gwg::log_pick_categorical(&lx, &grad, 3, 0, k).unwrap(),
            f64::NEG_INFINITY,
            "label {k} of 3"
        );
    }
    // A Gwg step against a target of another dimension.
    let mut big = lattice(4, 4, 0.3);
    let mut buf = BinBuf::new(&[0; 9]);
    let mut chain = BinaryChain::new(buf.buffers(), &mut model).unwrap();
    assert!(matches!(
        Kernel::step(&mut Gwg, &mut big, &mut chain, &mut rng()),
        Err(StepError::Len(_))
    ));
    assert!(matches!(
        Kernel::step(
            &mut Gibbs::new(Scan::Random),
            &mut big,
            &mut chain,
            &mut rng()
        ),
        Err(StepError::Len(_))
    ));
    assert!(matches!(
        RandomWalk::new(0.2)
            .unwrap()
            .step(&mut big, &mut chain, &mut rng()),
        Err(StepError::Len(_))
    ));
}

// ---- lattice kernels ----

/// Rows "LatticeProposal", "LatticeDula / LatticeDmala".
#[test]
fn lattice_kernels_refuse_bad_parameters_and_other_shapes() {
    let model = lattice(3, 3, 0.3);
    for a in BAD_STEPS {
        assert!(matches!(
            LatticeProposal::new(&model, a, 0.5),
            Err(ParamError::Step(_))
        ));
    }
    for b in BAD_BALANCES {
        assert!(matches!(
            LatticeProposal::new(&model, 0.5, b),
            Err(ParamError::Balance(_))
        ));
    }
    let p = LatticeProposal::new(&model, 0.5, 0.5).unwrap();
    assert_eq!(p.flip_probability(&[0; 9], 9), None);
    assert_eq!(p.flip_probability(&[0; 9], usize::MAX), None);
    // A state shorter than d breaks the contract: some valid threshold, no panic.
    let short = p.flip_probability(&[0; 4], 0).unwrap();
    assert!(short > 0.0 && short < 1.0);
    assert_eq!(p.log_q(&[0; 8], &[0; 9]).unwrap_err().buffer, "from");
    assert_eq!(p.log_q(&[0; 9], &[0; 10]).unwrap_err().buffer, "to");
    // A chain of another dimension.
    let mut other = lattice(4, 4, 0.3);
    let mut buf = BinBuf::new(&[0; 16]);
    let mut chain = BinaryChain::new(buf.buffers(), &mut other).unwrap();
    assert_eq!(
        LatticeDula::new(p)
            .step(&mut chain, &mut rng())
            .unwrap_err()
            .buffer,
        "chain"
    );
    assert_eq!(
        LatticeDmala::new(p)
            .step(&mut chain, &mut rng())
            .unwrap_err()
            .buffer,
        "chain"
    );
    assert_eq!(chain.state(), &[0; 16]);
    // Extreme couplings, steps and balances: every probability is a valid 16-bit threshold
    // (never exactly 0 or 1), log q is finite, the chain stays valid.
    for (j, a, b) in [
        (1e30f32, 0.5, 0.5),
        (-1e30, 0.5, 0.5),
        (1e-40, 1e-30, 1e-30),
        (0.3, 1e30, 1.0),
        (-0.0, 5e-324, 5e-324),
        (0.3, f64::MAX, f64::MIN_POSITIVE),
    ] {
        let mut m = lattice(3, 3, j);
        let p = LatticeProposal::new(&m, a, b).unwrap();
        for i in 0..9 {
            let f = p.flip_probability(&[0; 9], i).unwrap();
            assert!(f > 0.0 && f < 1.0, "{j} {a} {b}: {f}");
        }
        assert!(p.log_q(&[0; 9], &[1; 9]).unwrap().is_finite());
        let mut buf = BinBuf::new(&[0; 9]);
        let mut chain = BinaryChain::new(buf.buffers(), &mut m).unwrap();
        let (du, dm) = (LatticeDula::new(p), LatticeDmala::new(p));
        let mut r = rng();
        for t in 0..200 {
            if t % 2 == 0 {
                du.step(&mut chain, &mut r).unwrap();
            } else {
                dm.step(&mut chain, &mut r).unwrap();
            }
            assert!(chain.state().iter().all(|&v| v <= 1));
            assert!(chain.log_density().is_finite(), "{j} {a} {b}");
        }
    }
}

// ---- continuous ----

/// Rows "continuous builders: θ0" and "continuous steps: extreme θ, h, d = 1, N = 1" (the
/// other continuous rows are proved by `continuous_bad_input.rs`).
#[test]
fn continuous_builders_refuse_non_finite_starts_and_steps_stay_typed() {
    let (d, n) = (2usize, 3usize);
    let lmc = LangevinSettings::lmc(0.1).unwrap();
    let sgld = LangevinSettings::sgld(0.1, 2).unwrap();
    let ud = UnderdampedSettings::full(0.1, 1.0).unwrap();
    let ew = EwsgSettings::new(0.1, 1.0).unwrap();
    let ag = AgldSettings::new(0.1, 1, Access::Random, SnapshotUpdate::Partial).unwrap();
    let bad_start = |e: BuildError| e == BuildError::Param(ParamError::NonFinite("theta0"));
    for v in [f64::NAN, -f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let th = [0.0, v];
        let mut w = vec![0.0; 64];
        let mut idx = [0u32; 8];
        let lw = Langevin::workspace_len(d);
        for s in [lmc, sgld] {
            assert!(bad_start(
                Langevin::new(s, d, n, &th, &mut w[..lw], &mut []).unwrap_err()
            ));
        }
        let uw = Underdamped::workspace_len(d);
        assert!(bad_start(
            Underdamped::new(ud, d, n, &th, &mut w[..uw], &mut []).unwrap_err()
        ));
        assert!(bad_start(
            Ewsg::new(ew, d, n, &th, &mut w[..Ewsg::workspace_len(d)]).unwrap_err()
        ));
        let mut t = vec![0.0; DenseSnapshots::len(d, n).unwrap()];
        let store = DenseSnapshots::new(d, n, &mut t).unwrap();
        let il = Agld::<DenseSnapshots<'_>>::index_len(&ag, n);
        assert!(bad_start(
            Agld::new(
                ag,
                d,
                n,
                &th,
                store,
                &mut w[..Agld::<DenseSnapshots<'_>>::workspace_len(d)],
                &mut idx[..il]
            )
            .unwrap_err()
        ));
    }
    // Finite extremes: ±MAX overflows the gradient (typed error, state kept); a huge step
    // overflows the move (typed error, state kept); subnormal, −0, tiny steps and d = N = 1
    // run.
    let mut bowl = super::continuous::bowl(d, n);
    let mut r = rng();
    let mut w = vec![0.0; Langevin::workspace_len(d)];
    let mut ch = Langevin::new(lmc, d, n, &[f64::MAX, -1.0], &mut w, &mut []).unwrap();
    assert!(matches!(
        ch.step(&mut bowl, &mut r),
        Err(ContinuousStepError::NonFiniteGradient)
    ));
    assert_eq!(ch.theta(), &[f64::MAX, -1.0]);
    let huge = LangevinSettings::lmc(1e300).unwrap();
    let mut w = vec![0.0; Langevin::workspace_len(d)];
    let mut ch = Langevin::new(huge, d, n, &[1e10, -1.0], &mut w, &mut []).unwrap();
    assert!(matches!(
        ch.step(&mut bowl, &mut r),
        Err(ContinuousStepError::NonFiniteState)
    ));
    assert_eq!(ch.theta(), &[1e10, -1.0]);
    let mut w = vec![0.0; Underdamped::workspace_len(d)];
    let huge_ud = UnderdampedSettings::full(1e300, 1.0).unwrap();
    let mut uch = Underdamped::new(huge_ud, d, n, &[1e10, 1.0], &mut w, &mut []).unwrap();
    assert!(uch.step(&mut bowl, &mut r).is_err());
    assert_eq!(uch.theta(), &[1e10, 1.0]);
    for (h, th) in [
        (1e-30, [5e-324, -0.0]),
        (5e-324, [1.0, -1.0]),
        (0.1, [-0.0, 0.0]),
    ] {
        let s = LangevinSettings::lmc(h).unwrap();
        let mut w = vec![0.0; Langevin::workspace_len(d)];
        let mut ch = Langevin::new(s, d, n, &th, &mut w, &mut []).unwrap();
        for _ in 0..20 {
            ch.step(&mut bowl, &mut r).unwrap();
            assert!(ch.theta().iter().all(|v| v.is_finite()));
        }
    }
    let mut one = super::continuous::bowl(1, 1);
    let mut w = vec![0.0; Ewsg::workspace_len(1)];
    let mut ech = Ewsg::new(ew, 1, 1, &[0.5], &mut w).unwrap();
    for _ in 0..20 {
        ech.step(&mut one, &mut r).unwrap();
    }
    assert!(ech.theta()[0].is_finite());
    // AGLD store sizes.
    assert!(PointSnapshot::new(2, 3, &mut [0.0; 3]).is_err());
    assert!(PointSnapshot::new(2, 3, &mut [0.0; 5]).is_err());
    assert!(PointSnapshot::new(0, 3, &mut []).is_err());
    assert!(DenseSnapshots::new(2, 3, &mut [0.0; 9]).is_err());
    assert!(DenseSnapshots::new(2, 3, &mut [0.0; 7]).is_err());
    assert!(ScalarSnapshots::new(2, 3, &mut [0.0; 64]).is_err());
    assert_eq!(
        DenseSnapshots::new(1, 1 << 32, &mut []).unwrap_err(),
        BuildError::TooManyTerms(1 << 32)
    );
    assert!(DenseSnapshots::len(2, usize::MAX).is_none());
    assert!(ScalarSnapshots::len(usize::MAX, 3).is_none());
}

// ---- failing binary targets through the other binary kernels ----

#[derive(Debug, Clone, Copy, PartialEq)]
struct Trapped {
    recoverable: bool,
}

impl std::fmt::Display for Trapped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "trapped (recoverable: {})", self.recoverable)
    }
}

impl langevin_core::TargetError for Trapped {
    fn is_recoverable(&self) -> bool {
        self.recoverable
    }
}

/// `U = 0` at the origin with a gradient pushing every bit up; any state with bit `trap` set
/// gives the configured failure: NaN (trap 0), +∞ (trap 1) or an error.
#[derive(Debug, Clone, Copy)]
struct Trap {
    fault: Fault,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Fault {
    Nan,
    Infinite,
    Recoverable,
    Fatal,
}

impl langevin_core::BinaryTarget for Trap {
    type Error = Trapped;
    fn dim(&self) -> usize {
        3
    }
    fn log_density_and_grad(&mut self, x: &[u8], grad: &mut [f32]) -> Result<f64, Trapped> {
        grad.fill(40.0);
        if x.iter().all(|&v| v == 0) {
            return Ok(0.0);
        }
        match self.fault {
            Fault::Nan => Ok(f64::NAN),
            Fault::Infinite => Ok(f64::INFINITY),
            Fault::Recoverable => Err(Trapped { recoverable: true }),
            Fault::Fatal => Err(Trapped { recoverable: false }),
        }
    }
}

impl langevin_core::baselines::FlipDelta for Trap {
    fn log_density_delta(&mut self, x: &[u8], i: usize) -> Result<f64, Trapped> {
        let mut y = [0u8; 3];
        y.copy_from_slice(x);
        y[i] ^= 1;
        langevin_core::BinaryTarget::log_density_and_grad(self, &y, &mut [0.0; 3])
    }
}

type StepFn<'k> = dyn FnMut(
        &mut Trap,
        &mut BinaryChain<'_>,
        &mut Xoshiro256PlusPlus,
    ) -> Result<langevin_core::binary::StepReport, StepError<Trapped>>
    + 'k;

/// Rows "failing targets" of the second-order kernel, the tuners and the baselines: a NaN or
/// infinite proposal and a recoverable error are rejected (and reported as such), an
/// unrecoverable error is returned with the chain unchanged.
#[test]
fn failing_binary_targets_through_every_other_binary_kernel() {
    use langevin_core::binary::Rejection;
    let zero = [0.0f32; 9];
    let dz = [0.0f32; 3];
    for fault in [
        Fault::Nan,
        Fault::Infinite,
        Fault::Recoverable,
        Fault::Fatal,
    ] {
        let mut t = Trap { fault };
        let params = TrickParams::new(&zero, &dz, &zero, 10.0, 0.9).unwrap();
        let (mut scratch, mut state) = (vec![0.0f64; scratch_len(3)], vec![0u8; 3]);
        let mut second = AbSecondOrder::new(params, &mut scratch, &mut state).unwrap();
        let mut ab = AbTuner::new(AbSettings::default()).unwrap();
        let mut acs = AcsTuner::new(AcsSettings::default()).unwrap();
        let mut fixed = Acs::new(AcsSchedule::naive(10.0, 1.0, 0.9, 0.5, 4).unwrap());
        let mut walk = RandomWalk::new(0.5).unwrap();
        let mut gibbs = Gibbs::new(Scan::Random);
        let kernels: [&mut StepFn<'_>; 7] = [
            &mut |t, c, r| second.step(t, c, r),
            &mut |t, c, r| Kernel::step(&mut ab, t, c, r),
            &mut |t, c, r| Kernel::step(&mut acs, t, c, r),
            &mut |t, c, r| Kernel::step(&mut fixed, t, c, r),
            &mut |t, c, r| Kernel::step(&mut walk, t, c, r),
            &mut |t, c, r| Kernel::step(&mut Gwg, t, c, r),
            &mut |t, c, r| Kernel::step(&mut gibbs, t, c, r),
        ];
        for (n, k) in kernels.into_iter().enumerate() {
            let mut buf = BinBuf::new(&[0; 3]);
            let mut chain = BinaryChain::new(buf.buffers(), &mut t).unwrap();
            let mut r = rng();
            let mut failed = 0;
            for _ in 0..50 {
                match k(&mut t, &mut chain, &mut r) {
                    Ok(rep) => {
                        let why = rep.rejection;
                        if rep.proposed_flips > 0 {
                            let want = match fault {
                                Fault::Nan | Fault::Infinite => Some(Rejection::NonFinite),
                                _ => Some(Rejection::TargetError),
                            };
                            assert_eq!(why, want, "kernel {n} {fault:?}");
                            assert!(!rep.accepted);
                            failed += 1;
                        }
                    }
                    Err(e) => {
                        assert_eq!(fault, Fault::Fatal, "kernel {n}");
                        assert!(matches!(
                            e,
                            StepError::Target(Trapped { recoverable: false })
                        ));
                        failed += 1;
                    }
                }
                assert_eq!(chain.state(), &[0, 0, 0], "kernel {n} {fault:?}");
                assert_eq!(chain.log_density(), 0.0);
            }
            assert!(failed > 0, "kernel {n} {fault:?} never proposed a move");
        }
        // Gibbs on a raw state: the bit is kept (also for ΔU = +∞), or the fatal error returned
        // with x unchanged.
        let mut g = Gibbs::new(Scan::Systematic);
        let mut x = [0u8; 3];
        for _ in 0..6 {
            match g.update_binary(&mut t, &mut x, &mut rng()) {
                Ok(flipped) => assert!(!flipped && fault != Fault::Fatal, "{fault:?}"),
                Err(e) => assert!(
                    fault == Fault::Fatal && matches!(e, StepError::Target(_)),
                    "{fault:?}"
                ),
            }
            assert_eq!(x, [0, 0, 0], "{fault:?}");
        }
    }
}
