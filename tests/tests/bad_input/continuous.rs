//! Bad input to the continuous integrators gives typed errors, never a panic, and a failed
//! step leaves the chain where it was.
#![allow(
    clippy::needless_range_loop,
    reason = "dense matrix code reads best with indices"
)]

use langevin_core::continuous::{
    Access, Agld, AgldSettings, BuildError, DenseSnapshots, Ewsg, EwsgSettings, Langevin,
    LangevinSettings, PointSnapshot, ScalarSnapshots, SnapshotStore, SnapshotUpdate, StepError,
    SumTarget, Underdamped, UnderdampedSettings,
};
use langevin_core::target::TargetError;
use langevin_core::{LenError, ParamError};
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use std::fmt;

const BAD_STEPS: [f64; 6] = [0.0, -1.0, -0.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY];

#[test]
fn settings_reject_bad_steps() {
    for h in BAD_STEPS {
        assert!(matches!(LangevinSettings::lmc(h), Err(ParamError::Step(_))));
        assert!(matches!(
            LangevinSettings::sgld(h, 1),
            Err(ParamError::Step(_))
        ));
        assert!(matches!(
            UnderdampedSettings::full(h, 1.0),
            Err(ParamError::Step(_))
        ));
        assert!(matches!(
            UnderdampedSettings::sghmc(h, 1.0, 1),
            Err(ParamError::Step(_))
        ));
        assert!(matches!(
            EwsgSettings::new(h, 1.0),
            Err(ParamError::Step(_))
        ));
        assert!(matches!(
            AgldSettings::new(h, 1, Access::Random, SnapshotUpdate::Partial),
            Err(ParamError::Step(_))
        ));
    }
}

#[test]
fn settings_reject_bad_friction_batch_and_period() {
    for g in [-1.0, -1e-300, f64::NAN, f64::INFINITY] {
        assert!(matches!(
            UnderdampedSettings::full(0.1, g),
            Err(ParamError::OutOfRange {
                name: "friction",
                ..
            })
        ));
        assert!(matches!(
            EwsgSettings::new(0.1, g),
            Err(ParamError::OutOfRange {
                name: "friction",
                ..
            })
        ));
    }
    // Zero friction is a valid (noise-free) underdamped chain but EWSG divides by σ.
    assert!(UnderdampedSettings::full(0.1, 0.0).is_ok());
    assert!(EwsgSettings::new(0.1, 0.0).is_err());
    let batch0 =
        |r: Result<_, ParamError>| matches!(r, Err(ParamError::OutOfRange { name: "batch", .. }));
    assert!(batch0(LangevinSettings::sgld(0.1, 0).map(|_| ())));
    assert!(batch0(UnderdampedSettings::sghmc(0.1, 1.0, 0).map(|_| ())));
    assert!(batch0(
        EwsgSettings::new(0.1, 1.0)
            .unwrap()
            .with_batch(0)
            .map(|_| ())
    ));
    assert!(batch0(
        AgldSettings::new(0.1, 0, Access::Random, SnapshotUpdate::Partial).map(|_| ())
    ));
    for update in [
        SnapshotUpdate::Total { period: 0 },
        SnapshotUpdate::Mixed { period: 0 },
    ] {
        assert!(matches!(
            AgldSettings::new(0.1, 1, Access::Cyclic, update),
            Err(ParamError::OutOfRange { name: "period", .. })
        ));
    }
}

/// A target with configurable shape whose term `bad` returns `value` in every coordinate.
#[derive(Clone, Debug)]
pub(super) struct Poisoned {
    d: usize,
    n: usize,
    bad: Option<usize>,
    value: f64,
    fail: bool,
}

#[derive(Debug, PartialEq)]
pub(super) struct Broken;
impl fmt::Display for Broken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("broken data source")
    }
}
impl TargetError for Broken {
    fn is_recoverable(&self) -> bool {
        false
    }
}

impl SumTarget for Poisoned {
    type Error = Broken;
    fn dim(&self) -> usize {
        self.d
    }
    fn num_terms(&self) -> usize {
        self.n
    }
    fn add_term_grad(
        &mut self,
        i: usize,
        theta: &[f64],
        scale: f64,
        acc: &mut [f64],
    ) -> Result<(), Broken> {
        if self.fail {
            return Err(Broken);
        }
        for (a, t) in acc.iter_mut().zip(theta) {
            let g = if Some(i) == self.bad { self.value } else { *t };
            *a += scale * g;
        }
        Ok(())
    }
}

impl langevin_core::continuous::GlmSumTarget for Poisoned {
    fn term_scalar(&mut self, i: usize, theta: &[f64]) -> Result<f64, Broken> {
        if self.fail {
            return Err(Broken);
        }
        Ok(if Some(i) == self.bad {
            self.value
        } else {
            theta[0]
        })
    }
    fn add_term_data(&self, _i: usize, scale: f64, acc: &mut [f64]) {
        acc[0] += scale;
    }
    fn add_shared_grad(&mut self, _t: &[f64], _s: f64, _a: &mut [f64]) -> Result<(), Broken> {
        Ok(())
    }
}

#[test]
fn builders_reject_bad_shapes_and_buffers() {
    let lmc = LangevinSettings::lmc(0.1).unwrap();
    let sgld = LangevinSettings::sgld(0.1, 5).unwrap();
    let mut w = vec![0.0; 64];
    // N = 0, d = 0, batch > N.
    assert_eq!(
        Langevin::new(lmc, 2, 0, &[0.0; 2], &mut w[..6], &mut []).unwrap_err(),
        BuildError::NoTerms
    );
    assert_eq!(
        Langevin::new(lmc, 0, 3, &[], &mut w[..0], &mut []).unwrap_err(),
        BuildError::Param(ParamError::EmptyDimension)
    );
    assert_eq!(
        Langevin::new(sgld, 2, 4, &[0.0; 2], &mut w[..6], &mut []).unwrap_err(),
        BuildError::BatchTooLarge { batch: 5, terms: 4 }
    );
    let sghmc = UnderdampedSettings::sghmc(0.1, 1.0, 5).unwrap();
    assert!(matches!(
        Underdamped::new(sghmc, 2, 4, &[0.0; 2], &mut w[..8], &mut []),
        Err(BuildError::BatchTooLarge { .. })
    ));
    let ewsg = EwsgSettings::new(0.1, 1.0).unwrap().with_batch(5).unwrap();
    assert!(matches!(
        Ewsg::new(ewsg, 2, 4, &[0.0; 2], &mut w[..10]),
        Err(BuildError::BatchTooLarge { .. })
    ));
    let huge = EwsgSettings::new(0.1, 1.0)
        .unwrap()
        .with_index_chain(u32::MAX);
    assert_eq!(
        Ewsg::new(huge, 2, 4, &[0.0; 2], &mut w[..10]).unwrap_err(),
        BuildError::TooManyEvaluations
    );
    // Wrong workspace, index and start lengths.
    assert!(matches!(
        Langevin::new(lmc, 2, 3, &[0.0; 2], &mut w[..5], &mut []),
        Err(BuildError::Param(ParamError::Len(LenError {
            expected: 6,
            found: 5,
            ..
        })))
    ));
    assert!(matches!(
        Langevin::new(lmc, 2, 3, &[0.0; 3], &mut w[..6], &mut []),
        Err(BuildError::Param(ParamError::Len(_)))
    ));
    let rr = LangevinSettings::sgld(0.1, 1)
        .unwrap()
        .with_access(Access::Reshuffle);
    assert!(matches!(
        Langevin::new(rr, 2, 3, &[0.0; 2], &mut w[..6], &mut [0; 2]),
        Err(BuildError::Param(ParamError::Len(_)))
    ));
    // AGLD: partial updates need a table; stores must match the shape.
    let saga = AgldSettings::new(0.1, 1, Access::Random, SnapshotUpdate::Partial).unwrap();
    let mut p = vec![0.0; 4];
    let mut w8 = vec![0.0; 8];
    let mut idx = vec![0u32; 1];
    assert_eq!(
        Agld::new(
            saga,
            2,
            3,
            &[0.0; 2],
            PointSnapshot::new(2, 3, &mut p).unwrap(),
            &mut w8,
            &mut idx
        )
        .unwrap_err(),
        BuildError::SnapshotNeedsTable
    );
    let mut t = vec![0.0; DenseSnapshots::len(2, 4).unwrap()];
    assert!(matches!(
        Agld::new(
            saga,
            2,
            3,
            &[0.0; 2],
            DenseSnapshots::new(2, 4, &mut t).unwrap(),
            &mut w8,
            &mut idx
        ),
        Err(BuildError::Param(ParamError::Len(_)))
    ));
    assert_eq!(
        DenseSnapshots::new(2, 0, &mut []).unwrap_err(),
        BuildError::NoTerms
    );
    assert!(ScalarSnapshots::new(2, 3, &mut [0.0; 4]).is_err());
    assert!(DenseSnapshots::len(usize::MAX, 2).is_none());
}

fn rng() -> Xoshiro256PlusPlus {
    Xoshiro256PlusPlus::seed_from_u64(3)
}

/// Asserts that repeated steps all fail with `expect` and leave the state unchanged (the
/// first call fails too, so its state is the one before any step).
fn fails_cleanly<E: fmt::Debug + PartialEq>(
    mut step: impl FnMut() -> (Result<(), E>, Vec<f64>),
    expect: E,
) {
    let mut first = None;
    for _ in 0..5 {
        let (r, after) = step();
        assert_eq!(r.unwrap_err(), expect);
        let before = first.get_or_insert_with(|| after.clone());
        assert_eq!(&after, before);
    }
}

/// `U(θ) = Σ_i ½|θ|²` over `n` identical terms in `d` dimensions: a target nothing poisons.
pub(super) fn bowl(d: usize, n: usize) -> Poisoned {
    Poisoned {
        d,
        n,
        bad: None,
        value: 0.0,
        fail: false,
    }
}

fn poisoned(n: usize, bad: usize, value: f64) -> Poisoned {
    Poisoned {
        d: 2,
        n,
        bad: Some(bad),
        value,
        fail: false,
    }
}

/// A Langevin chain of `settings` (`d = 2`, `n` terms, from `theta0`) that must fail cleanly
/// on `t` with `expect` (see [`fails_cleanly`]).
fn langevin_fails_cleanly(
    settings: LangevinSettings,
    (n, theta0): (usize, &[f64]),
    t: &mut Poisoned,
    r: &mut Xoshiro256PlusPlus,
    expect: StepError<Broken>,
) {
    let mut w = vec![0.0; 6];
    let mut ch = Langevin::new(settings, 2, n, theta0, &mut w, &mut []).unwrap();
    fails_cleanly(|| (ch.step(t, r).map(|_| ()), ch.theta().to_vec()), expect);
}

/// An AGLD chain of `settings` with `store` (`d = 2`, 4 terms, from `(1, 2)`) that must fail
/// cleanly on `t` with a non-finite gradient; returned for checks of its store.
fn agld_fails_cleanly<'a, S: SnapshotStore<Poisoned>>(
    settings: AgldSettings,
    store: S,
    (work, idx): (&'a mut [f64], &'a mut [u32]),
    t: &mut Poisoned,
    r: &mut Xoshiro256PlusPlus,
) -> Agld<'a, S> {
    let mut ch = Agld::new(settings, 2, 4, &[1.0, 2.0], store, work, idx).unwrap();
    fails_cleanly(
        || (ch.step(t, r).map(|_| ()), ch.theta().to_vec()),
        StepError::NonFiniteGradient,
    );
    ch
}

#[test]
fn non_finite_gradients_are_typed_errors() {
    for value in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        // Full gradients see every term.
        let mut t = poisoned(4, 2, value);
        let mut r = rng();
        let lmc = LangevinSettings::lmc(0.1).unwrap();
        // Cyclic minibatches of all terms see it too.
        let sgld = LangevinSettings::sgld(0.1, 4)
            .unwrap()
            .with_access(Access::Cyclic);
        for s in [lmc, sgld] {
            let start = (4, &[1.0, 2.0][..]);
            langevin_fails_cleanly(s, start, &mut t, &mut r, StepError::NonFiniteGradient);
        }
        let mut w8 = vec![0.0; 8];
        let mut ch = Underdamped::new(
            UnderdampedSettings::full(0.1, 1.0).unwrap(),
            2,
            4,
            &[1.0, 2.0],
            &mut w8,
            &mut [],
        )
        .unwrap();
        fails_cleanly(
            || {
                let r = ch.step(&mut t, &mut r).map(|_| ());
                let mut s = ch.theta().to_vec();
                s.extend_from_slice(ch.momentum());
                (r, s)
            },
            StepError::NonFiniteGradient,
        );
        // EWSG with a single term: every estimate is poisoned.
        let mut t1 = poisoned(1, 0, value);
        let mut w10 = vec![0.0; 10];
        let mut ch = Ewsg::new(
            EwsgSettings::new(0.1, 1.0).unwrap(),
            2,
            1,
            &[1.0, 2.0],
            &mut w10,
        )
        .unwrap();
        fails_cleanly(
            || (ch.step(&mut t1, &mut r).map(|_| ()), ch.theta().to_vec()),
            StepError::NonFiniteGradient,
        );
        // AGLD: the initial refresh of every store, and later minibatch steps.
        for update in [SnapshotUpdate::Partial, SnapshotUpdate::Total { period: 3 }] {
            let s = AgldSettings::new(0.1, 2, Access::Cyclic, update).unwrap();
            let mut idx = vec![0u32; 2];
            let mut tb = vec![0.0; DenseSnapshots::len(2, 4).unwrap()];
            let store = DenseSnapshots::new(2, 4, &mut tb).unwrap();
            let ch = agld_fails_cleanly(s, store, (&mut w8, &mut idx), &mut t, &mut r);
            // The running sum stayed consistent with the entries kept.
            let st = ch.store();
            let mut total = [0.0; 2];
            for row in st.table().chunks(2) {
                total[0] += row[0];
                total[1] += row[1];
            }
            assert_eq!(st.sum(), &total);
            assert!(st.table().iter().all(|v| v.is_finite()));
        }
        let s =
            AgldSettings::new(0.1, 2, Access::Cyclic, SnapshotUpdate::Total { period: 3 }).unwrap();
        let mut pb = vec![0.0; 4];
        let mut idx = vec![0u32; 2];
        let store = PointSnapshot::new(2, 4, &mut pb).unwrap();
        agld_fails_cleanly(s, store, (&mut w8, &mut idx), &mut t, &mut r);
        let s = AgldSettings::new(0.1, 2, Access::Cyclic, SnapshotUpdate::Partial).unwrap();
        let mut sb = vec![0.0; ScalarSnapshots::len(2, 4).unwrap()];
        let store = ScalarSnapshots::new(2, 4, &mut sb).unwrap();
        let ch = agld_fails_cleanly(s, store, (&mut w8, &mut idx), &mut t, &mut r);
        assert!(ch.store().scalars().iter().all(|v| v.is_finite()));

        // A term that turns bad after the initial refresh: SAGA's minibatch path (full cyclic
        // batches, so that every retry meets the bad term again).
        let mut good = poisoned(4, 9, 0.0);
        let s = AgldSettings::new(0.1, 4, Access::Cyclic, SnapshotUpdate::Partial).unwrap();
        let mut idx = vec![0u32; 4];
        let mut tb = vec![0.0; DenseSnapshots::len(2, 4).unwrap()];
        let mut ch = Agld::new(
            s,
            2,
            4,
            &[1.0, 2.0],
            DenseSnapshots::new(2, 4, &mut tb).unwrap(),
            &mut w8,
            &mut idx,
        )
        .unwrap();
        ch.step(&mut good, &mut r).unwrap();
        let mut bad = poisoned(4, 1, value);
        fails_cleanly(
            || (ch.step(&mut bad, &mut r).map(|_| ()), ch.theta().to_vec()),
            StepError::NonFiniteGradient,
        );
        assert!(ch.store().table().iter().all(|v| v.is_finite()));
    }
}

#[test]
fn target_errors_shape_mismatch_and_overflow() {
    let mut w = vec![0.0; 6];
    let mut ch = Langevin::new(
        LangevinSettings::lmc(0.1).unwrap(),
        2,
        4,
        &[1.0, 2.0],
        &mut w,
        &mut [],
    )
    .unwrap();
    let mut r = rng();
    let mut failing = Poisoned {
        d: 2,
        n: 4,
        bad: None,
        value: 0.0,
        fail: true,
    };
    assert!(matches!(
        ch.step(&mut failing, &mut r),
        Err(StepError::Target(Broken))
    ));
    let mut other = Poisoned {
        d: 3,
        n: 4,
        bad: None,
        value: 0.0,
        fail: false,
    };
    assert_eq!(
        ch.step(&mut other, &mut r).unwrap_err(),
        StepError::Shape {
            expected: (2, 4),
            found: (3, 4)
        }
    );
    assert_eq!(ch.theta(), &[1.0, 2.0]);
    // A sum of finite terms that overflows is a non-finite gradient.
    let mut sum_over = Poisoned {
        d: 2,
        n: 4,
        bad: None,
        value: 0.0,
        fail: false,
    };
    langevin_fails_cleanly(
        LangevinSettings::lmc(0.1).unwrap(),
        (4, &[f64::MAX, 1.0]),
        &mut sum_over,
        &mut r,
        StepError::NonFiniteGradient,
    );
    // A finite but enormous gradient whose move overflows.
    let mut huge1 = poisoned(1, 0, -f64::MAX / 2.0);
    langevin_fails_cleanly(
        LangevinSettings::lmc(4.0).unwrap(),
        (1, &[1.0, 2.0]),
        &mut huge1,
        &mut r,
        StepError::NonFiniteState,
    );
    let mut w8 = vec![0.0; 8];
    let mut ch = Underdamped::new(
        UnderdampedSettings::full(4.0, 0.0).unwrap(),
        2,
        1,
        &[1.0, 2.0],
        &mut w8,
        &mut [],
    )
    .unwrap();
    fails_cleanly(
        || (ch.step(&mut huge1, &mut r).map(|_| ()), ch.theta().to_vec()),
        StepError::NonFiniteState,
    );
    // Errors print.
    assert!(
        StepError::<Broken>::NonFiniteState
            .to_string()
            .contains("non-finite")
    );
    assert!(
        BuildError::BatchTooLarge { batch: 3, terms: 2 }
            .to_string()
            .contains("exceeds")
    );
}
