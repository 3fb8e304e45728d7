//! Bad input to the binary kernels, chains, proposals and models: one named test per class,
//! each showing the typed error or the documented safe outcome (a non-finite or failed proposal
//! is rejected and the chain keeps its state; an unrecoverable target error stops the step and
//! leaves the chain unchanged).

use super::FaultError;
use core::convert::Infallible;
use langevin_core::binary::{
    BinaryChain, Dmala, Dula, FlipProposal, InitError, Rejection, StepError, StepReport,
};
use langevin_core::models::{BinaryQuadratic, ConstDims, Dims, IsingGraph, IsingLattice, Rbm};
use langevin_core::{BinaryTarget, FlipMove, LenError, ParamError};
use langevin_tests::{
    ChainBox, Correction, RbmData, check_metropolis_exactness, enumerate, transition_matrix,
};
use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// What a [`Faulty`] target does on its next evaluations.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Fault {
    /// Evaluate normally.
    None,
    /// Return this log-density.
    LogDensity(f64),
    /// Set `∇U[i]` to this value.
    Grad(usize, f32),
    /// Fail with an error.
    Error { recoverable: bool },
}

/// Wraps a valid target and injects `fault` into every evaluation while it is set.
struct Faulty<T> {
    inner: T,
    fault: Fault,
}

impl<T: BinaryTarget<Error = Infallible>> Faulty<T> {
    fn apply(&self, u: f64, grad: &mut [f32]) -> Result<f64, FaultError> {
        match self.fault {
            Fault::None => Ok(u),
            Fault::LogDensity(v) => Ok(v),
            Fault::Grad(i, v) => {
                grad[i] = v;
                Ok(u)
            }
            Fault::Error { recoverable } => Err(FaultError { recoverable }),
        }
    }
}

impl<T: BinaryTarget<Error = Infallible>> BinaryTarget for Faulty<T> {
    type Error = FaultError;
    fn dim(&self) -> usize {
        self.inner.dim()
    }
    fn log_density_and_grad(&mut self, x: &[u8], grad: &mut [f32]) -> Result<f64, FaultError> {
        let u = self.inner.log_density_and_grad(x, grad).unwrap();
        self.apply(u, grad)
    }
    fn log_density_and_grad_after(
        &mut self,
        mv: &FlipMove<'_>,
        grad: &mut [f32],
    ) -> Result<f64, FaultError> {
        let u = self.inner.log_density_and_grad_after(mv, grad).unwrap();
        self.apply(u, grad)
    }
    fn commit(&mut self) {
        self.inner.commit();
    }
}

use langevin_tests::discrete::Independent;

/// A target whose proposals flip almost surely: from all zeros, with `θ = 3`, step `1e6` and
/// balance 1, each coordinate flips with probability `σ(3) ≈ 0.95`.
fn eager() -> Faulty<Independent> {
    Faulty {
        inner: Independent(vec![3.0; 4]),
        fault: Fault::None,
    }
}

fn eager_proposal() -> FlipProposal<'static> {
    FlipProposal::new(1e6, 1.0).unwrap()
}

/// For DMALA (`metropolis`) and DULA: starts a chain at zeros of [`eager`], sets `fault` for
/// the proposal only and takes one step, whose outcome `check` sees; the chain must be exactly
/// where it was. Then clears the fault and takes another step, which must succeed; `after` sees
/// its report, the target and the chain.
fn step_with_fault(
    fault: Fault,
    mut check: impl FnMut(bool, Result<StepReport, StepError<FaultError>>),
    mut after: impl FnMut(StepReport, &mut Faulty<Independent>, &BinaryChain<'_>),
) {
    for metropolis in [true, false] {
        let mut target = eager();
        let mut bufs = ChainBox::new(&[0; 4]);
        let mut chain = BinaryChain::new(bufs.buffers(), &mut target).unwrap();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        let before = (
            chain.state().to_vec(),
            chain.log_density(),
            chain.grad().to_vec(),
        );
        target.fault = fault;
        check(
            metropolis,
            step(metropolis, &mut target, &mut chain, &mut rng),
        );
        assert_eq!(chain.state(), &before.0[..]);
        assert_eq!(chain.log_density().to_bits(), before.1.to_bits());
        assert_eq!(chain.grad(), &before.2[..]);
        // The chain carries on once the target is sane again.
        target.fault = Fault::None;
        let report = step(metropolis, &mut target, &mut chain, &mut rng).unwrap();
        after(report, &mut target, &chain);
    }
}

/// Sets `fault` for the proposal only, takes one step of DMALA and one of DULA, and checks each
/// left the chain exactly where it was, with the report `check` expects.
fn assert_step_rejected(fault: Fault, why: Rejection) {
    step_with_fault(
        fault,
        |metropolis, report| {
            let report = report.unwrap();
            assert!(
                report.proposed_flips > 0,
                "the proposal must move for this test"
            );
            assert!(
                !report.accepted,
                "{fault:?}: accepted (metropolis {metropolis})"
            );
            assert_eq!(report.rejection, Some(why), "{fault:?}");
            assert_eq!(report.log_accept_ratio, f64::NEG_INFINITY);
            assert_eq!(report.evaluations, 1);
        },
        |report, target, chain| {
            assert!(report.rejection.is_none());
            let mut g = [0.0; 4];
            let u = target.log_density_and_grad(chain.state(), &mut g).unwrap();
            assert_eq!(u, chain.log_density());
        },
    );
}

fn step<T: BinaryTarget + ?Sized, R: Rng>(
    metropolis: bool,
    target: &mut T,
    chain: &mut BinaryChain<'_>,
    rng: &mut R,
) -> Result<StepReport, StepError<T::Error>> {
    if metropolis {
        Dmala::new(eager_proposal()).step(target, chain, rng)
    } else {
        Dula::new(eager_proposal()).step(target, chain, rng)
    }
}

#[test]
fn nan_proposed_log_density_is_rejected() {
    assert_step_rejected(Fault::LogDensity(f64::NAN), Rejection::NonFinite);
}

#[test]
fn infinite_proposed_log_density_is_rejected() {
    assert_step_rejected(Fault::LogDensity(f64::INFINITY), Rejection::NonFinite);
    assert_step_rejected(Fault::LogDensity(f64::NEG_INFINITY), Rejection::NonFinite);
}

#[test]
fn nan_proposed_gradient_is_rejected() {
    assert_step_rejected(Fault::Grad(2, f32::NAN), Rejection::NonFinite);
}

#[test]
fn infinite_proposed_gradient_is_rejected() {
    assert_step_rejected(Fault::Grad(0, f32::INFINITY), Rejection::NonFinite);
    assert_step_rejected(Fault::Grad(3, f32::NEG_INFINITY), Rejection::NonFinite);
}

#[test]
fn recoverable_target_error_rejects_the_move() {
    assert_step_rejected(Fault::Error { recoverable: true }, Rejection::TargetError);
}

#[test]
fn unrecoverable_target_error_stops_the_step() {
    step_with_fault(
        Fault::Error { recoverable: false },
        |_, outcome| {
            let err = outcome.unwrap_err();
            assert_eq!(err, StepError::Target(FaultError { recoverable: false }));
            assert!(err.to_string().contains("injected fault"));
        },
        |_, _, _| {},
    );
}

#[test]
fn bad_initial_state_is_an_error() {
    let cases = [
        (Fault::LogDensity(f64::NAN), InitError::NonFinite),
        (Fault::LogDensity(f64::INFINITY), InitError::NonFinite),
        (Fault::LogDensity(f64::NEG_INFINITY), InitError::NonFinite),
        (Fault::Grad(1, f32::NAN), InitError::NonFinite),
        (Fault::Grad(1, f32::INFINITY), InitError::NonFinite),
        (
            Fault::Error { recoverable: true },
            InitError::Target(FaultError { recoverable: true }),
        ),
        (
            Fault::Error { recoverable: false },
            InitError::Target(FaultError { recoverable: false }),
        ),
    ];
    for (fault, want) in cases {
        let mut target = eager();
        target.fault = fault;
        let mut bufs = ChainBox::new(&[0; 4]);
        let err = BinaryChain::new(bufs.buffers(), &mut target).unwrap_err();
        assert_eq!(err, want, "{fault:?}");
        assert!(!err.to_string().is_empty());
    }
}

#[test]
fn failed_reset_keeps_the_chain_and_the_model_cache() {
    // An RBM keeps hidden pre-activations for its current state: a failed reset must leave the
    // model describing the chain's state again, so later incremental steps stay exact.
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(8);
    let data = RbmData::random(6, 3, 1.5, 1.0, 1.0, &mut rng);
    let (mut c1, mut c2) = (data.cache(), data.cache());
    let rbm = Rbm::new(&data.w, &data.b, &data.c, &mut c1).unwrap();
    let mut fresh = Rbm::new(&data.w, &data.b, &data.c, &mut c2).unwrap();
    let mut target = Faulty {
        inner: rbm,
        fault: Fault::None,
    };
    let mut bufs = ChainBox::new(&[0, 1, 0, 1, 0, 1]);
    let mut chain = BinaryChain::new(bufs.buffers(), &mut target).unwrap();
    let kernel = Dmala::new(FlipProposal::new(0.8, 0.5).unwrap());
    for fault in [
        Fault::LogDensity(f64::NAN),
        Fault::Error { recoverable: true },
        Fault::Error { recoverable: false },
    ] {
        let before = (chain.state().to_vec(), chain.log_density());
        target.fault = fault;
        assert!(chain.reset(&[1, 1, 1, 1, 1, 1], &mut target).is_err());
        target.fault = Fault::None;
        assert_eq!(chain.state(), &before.0[..]);
        assert_eq!(chain.log_density(), before.1);
        for _ in 0..20 {
            kernel.step(&mut target, &mut chain, &mut rng).unwrap();
            let mut g = [0.0; 6];
            let u = fresh.log_density_and_grad(chain.state(), &mut g).unwrap();
            // Same f64 pre-activation sums up to rounding, then identical f32 arithmetic.
            assert!((u - chain.log_density()).abs() < 1e-5, "{fault:?}");
        }
    }
    // Out-of-range and wrong-length resets are refused before the model is touched.
    let before = chain.state().to_vec();
    assert_eq!(
        chain.reset(&[0, 0, 2, 0, 0, 0], &mut target),
        Err(InitError::StateOutOfRange { index: 2, value: 2 })
    );
    assert!(matches!(
        chain.reset(&[0, 0, 0], &mut target),
        Err(InitError::Len(LenError {
            buffer: "x",
            expected: 6,
            found: 3
        }))
    ));
    assert_eq!(chain.state(), &before[..]);
}

#[test]
fn invalid_step_sizes_are_rejected() {
    for a in [0.0, -0.0, -1.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let err = FlipProposal::new(a, 0.5).unwrap_err();
        assert!(matches!(err, ParamError::Step(_)), "step {a}: {err:?}");
        assert!(!err.to_string().is_empty());
    }
}

/// Steps that are valid in `f64` but extreme in `f32` give documented safe outcomes: a step so
/// small that `1/(2a)` overflows never flips (and `log q` of staying is 0); a huge one ignores
/// the `1/(2a)` term.
#[test]
fn extreme_step_sizes_are_safe() {
    let x = [0u8, 1, 0, 1];
    let g = [2.0f32, -1.0, 0.5, 0.0];
    let mut y = [0u8; 4];
    let mut fl = [0u32; 4];
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
    for a in [1e-310, f64::MIN_POSITIVE, 1e-40] {
        let p = FlipProposal::new(a, 0.5).unwrap();
        for _ in 0..100 {
            let (k, lq) = p.propose(&x, &g, &mut y, &mut fl, &mut rng).unwrap();
            assert_eq!((k, lq), (0, 0.0), "step {a}");
        }
    }
    for a in [1e30, 1e300, f64::MAX] {
        let p = FlipProposal::new(a, 0.5).unwrap();
        let (_, lq) = p.propose(&x, &g, &mut y, &mut fl, &mut rng).unwrap();
        assert!(lq.is_finite() && lq <= 0.0, "step {a}: {lq}");
    }
}

#[test]
fn invalid_balances_are_rejected() {
    for b in [
        0.0,
        -0.0,
        -0.5,
        1.0 + 1e-12,
        2.0,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
    ] {
        let err = FlipProposal::new(0.5, b).unwrap_err();
        assert!(
            matches!(err, ParamError::Balance(_)),
            "balance {b}: {err:?}"
        );
    }
    assert!(FlipProposal::new(0.5, 1.0).is_ok());
}

/// A positive balance that rounds to 0 in `f32` makes the proposal ignore the gradient: still a
/// valid (symmetric) proposal, so DMALA stays exact. Checked by enumeration.
#[test]
fn balance_underflowing_f32_keeps_dmala_exact() {
    let mut model = IsingLattice::with_dims(Dims { rows: 2, cols: 3 }, 0.4, 0.2, true).unwrap();
    let e = enumerate(&mut model);
    let p = FlipProposal::new(0.7, 1e-300).unwrap();
    assert_eq!(p.balance(), 0.0);
    let c = check_metropolis_exactness(&e, &transition_matrix(&e, &p, Correction::Metropolis));
    assert!(c.balance <= 1.0 && c.invariance <= 1.0, "{c:?}");
}

#[test]
fn invalid_preconditioners_are_rejected() {
    let base = FlipProposal::new(1.0, 0.5).unwrap();
    for (p, index) in [
        (vec![1.0, 0.0], 1),
        (vec![-1.0, 1.0], 0),
        (vec![1.0, f32::NAN], 1),
        (vec![f32::INFINITY, 1.0], 0),
        (vec![1.0, -0.0], 1),
    ] {
        let err = base.preconditioned(&p).unwrap_err();
        assert!(
            matches!(err, ParamError::Preconditioner { index: i, .. } if i == index),
            "{p:?}: {err:?}"
        );
    }
    // a·p² overflowing f64.
    let huge = FlipProposal::new(1e300, 0.5).unwrap();
    assert!(huge.preconditioned(&[1e30]).is_err());
}

/// A preconditioner whose per-coordinate step `a·p_i²` is finite in `f64` but whose `f32`
/// evaluation `(1/(2a)) / p_i²` is `0/0` (step too large for `f32`, `p_i²` underflowing) or
/// `∞/∞` would give NaN logits: that coordinate could never flip, every `log q` would be NaN
/// and DMALA would reject every move forever. It must be refused at construction.
#[test]
fn preconditioner_degenerate_in_f32_is_rejected() {
    for (a, p) in [(1e300, 1e-30f32), (1e-310, 1e20f32)] {
        let base = FlipProposal::new(a, 0.5).unwrap();
        match base.preconditioned(&[1.0, p]) {
            Err(ParamError::Preconditioner { index: 1, .. }) => {}
            Err(e) => panic!("a={a} p={p}: unexpected error {e:?}"),
            Ok(prop) => {
                let (x, g) = ([0u8, 0], [0.5f32, 0.5]);
                for y in [[0u8, 0], [1, 0], [0, 1], [1, 1]] {
                    let lq = prop.log_q(&x, &g, &y).unwrap();
                    assert!(
                        !lq.is_nan(),
                        "a={a} p={p}: accepted, but log q({y:?}) is NaN"
                    );
                }
            }
        }
    }
}

#[test]
fn zero_dimension_is_refused() {
    assert_eq!(
        IsingLattice::<ConstDims<0, 3>>::new(0.1, 0.0, true).unwrap_err(),
        ParamError::EmptyDimension
    );
    assert_eq!(
        IsingLattice::with_dims(Dims { rows: 4, cols: 0 }, 0.1, 0.0, false).unwrap_err(),
        ParamError::EmptyDimension
    );
    assert_eq!(
        IsingGraph::new(&[0], &[], &[], &[]).unwrap_err(),
        ParamError::EmptyDimension
    );
    assert_eq!(
        BinaryQuadratic::new(&[], &[], &mut []).unwrap_err(),
        ParamError::EmptyDimension
    );
    assert_eq!(
        Rbm::new(&[], &[], &[0.5], &mut [0.0; 2]).unwrap_err(),
        ParamError::EmptyDimension
    );
    let mut empty = Independent(Vec::new());
    let mut bufs = ChainBox::new(&[]);
    assert_eq!(
        BinaryChain::new(bufs.buffers(), &mut empty).unwrap_err(),
        InitError::EmptyDimension
    );
    // The proposal itself handles d = 0: nothing to flip, log q = 0, no randomness used.
    let p = FlipProposal::new(0.5, 0.5).unwrap();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(4);
    let mut twin = rng.clone();
    assert_eq!(
        p.propose(&[], &[], &mut [], &mut [], &mut rng),
        Ok((0, 0.0))
    );
    assert_eq!(p.log_q(&[], &[], &[]), Ok(0.0));
    assert_eq!(rng.next_u64(), twin.next_u64());
}

#[test]
fn buffer_length_mismatch_is_refused() {
    let mut target = Independent(vec![1.0; 4]);
    let bad = [
        ("x", 5),
        ("grad", 3),
        ("x_proposal", 5),
        ("grad_proposal", 0),
        ("flipped", 2),
    ];
    for (name, len) in bad {
        super::assert_binary_len_refused(&mut target, name, len);
    }

    // Proposal buffers.
    let p = FlipProposal::new(0.5, 0.5).unwrap();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
    let x = [0u8; 4];
    let (g4, g3) = ([0f32; 4], [0f32; 3]);
    let (mut y4, mut y5) = ([0u8; 4], [0u8; 5]);
    let (mut f4, mut f3) = ([0u32; 4], [0u32; 3]);
    let e = p.propose(&x, &g3, &mut y4, &mut f4, &mut rng).unwrap_err();
    assert_eq!(e.buffer, "grad");
    let e = p.propose(&x, &g4, &mut y5, &mut f4, &mut rng).unwrap_err();
    assert_eq!(e.buffer, "proposal");
    let e = p.propose(&x, &g4, &mut y4, &mut f3, &mut rng).unwrap_err();
    assert_eq!(e.buffer, "flipped");
    assert_eq!(p.log_q(&x, &g3, &y4).unwrap_err().buffer, "grad");
    assert_eq!(p.log_q(&x, &g4, &y5).unwrap_err().buffer, "to");

    // A target, or a preconditioner, of another dimension than the chain: a typed error at the
    // step, chain unchanged.
    let mut bufs = ChainBox::new(&[0; 4]);
    let mut chain = BinaryChain::new(bufs.buffers(), &mut target).unwrap();
    let mut other = Independent(vec![1.0; 5]);
    let err = Dmala::new(p)
        .step(&mut other, &mut chain, &mut rng)
        .unwrap_err();
    assert!(
        matches!(
            err,
            StepError::Len(LenError {
                buffer: "target",
                ..
            })
        ),
        "{err:?}"
    );
    let pre = [1.0f32; 3];
    let k = Dula::new(p.preconditioned(&pre).unwrap());
    let err = k.step(&mut target, &mut chain, &mut rng).unwrap_err();
    assert!(
        matches!(
            err,
            StepError::Len(LenError {
                buffer: "preconditioner",
                ..
            })
        ),
        "{err:?}"
    );
    assert_eq!(chain.state(), &[0; 4]);

    // Model parameter buffers.
    let mut cache = [0.0f64; 4];
    assert!(matches!(
        BinaryQuadratic::new(&[0.0; 3], &[0.0; 2], &mut cache),
        Err(ParamError::Len(LenError { buffer: "W", .. }))
    ));
    assert!(matches!(
        BinaryQuadratic::new(&[0.0; 4], &[0.0; 2], &mut cache[..3]),
        Err(ParamError::Len(LenError {
            buffer: "cache",
            ..
        }))
    ));
    assert!(matches!(
        Rbm::new(&[0.0; 5], &[0.0; 2], &[0.0; 3], &mut [0.0; 6]),
        Err(ParamError::Len(LenError { buffer: "W", .. }))
    ));
    assert!(matches!(
        Rbm::new(&[0.0; 6], &[0.0; 2], &[0.0; 3], &mut [0.0; 5]),
        Err(ParamError::Len(LenError {
            buffer: "cache",
            ..
        }))
    ));
    assert!(matches!(
        IsingGraph::new(&[0, 1], &[1], &[0.5], &[0.0, 0.0]),
        Err(ParamError::Len(_))
    ));
}

#[test]
fn initial_state_out_of_range_is_refused() {
    let mut target = Independent(vec![1.0; 3]);
    let mut bufs = ChainBox::new(&[0, 1, 7]);
    assert_eq!(
        BinaryChain::new(bufs.buffers(), &mut target).unwrap_err(),
        InitError::StateOutOfRange { index: 2, value: 7 }
    );
}

#[test]
fn non_finite_or_malformed_model_parameters_are_refused() {
    for (j, h, name) in [(f32::NAN, 0.0, "coupling"), (0.1, f32::INFINITY, "field")] {
        assert_eq!(
            IsingLattice::with_dims(Dims { rows: 2, cols: 2 }, j, h, true).unwrap_err(),
            ParamError::NonFinite(name)
        );
    }
    // Graph: 0 — 1 with coupling 0.5.
    let ok = IsingGraph::new(&[0, 1, 2], &[1, 0], &[0.5, 0.5], &[0.0, 0.0]);
    assert!(ok.is_ok());
    let bad = [
        IsingGraph::new(&[0, 1, 2], &[1, 0], &[0.5, 0.4], &[0.0, 0.0]), // asymmetric coupling
        IsingGraph::new(&[0, 1, 2], &[0, 1], &[0.5, 0.5], &[0.0, 0.0]), // self-loops
        IsingGraph::new(&[0, 1, 2], &[2, 0], &[0.5, 0.5], &[0.0, 0.0]), // index out of range
        IsingGraph::new(&[0, 2, 2], &[1, 1], &[0.5, 0.5], &[0.0, 0.0]), // one-sided edge
        IsingGraph::new(&[1, 1, 2], &[1, 0], &[0.5, 0.5], &[0.0, 0.0]), // offsets not from 0
    ];
    for (k, r) in bad.iter().enumerate() {
        assert!(
            matches!(
                r,
                Err(ParamError::OutOfRange { .. }) | Err(ParamError::Len(_))
            ),
            "{k}"
        );
    }
    assert_eq!(
        IsingGraph::new(&[0, 1, 2], &[1, 0], &[f32::NAN; 2], &[0.0, 0.0]).unwrap_err(),
        ParamError::NonFinite("couplings")
    );
    assert_eq!(
        IsingGraph::new(&[0, 1, 2], &[1, 0], &[0.5; 2], &[0.0, f32::NEG_INFINITY]).unwrap_err(),
        ParamError::NonFinite("field")
    );
    let mut cache = [0.0f64; 4];
    assert_eq!(
        BinaryQuadratic::new(&[0.0, f32::NAN, 0.0, 0.0], &[0.0; 2], &mut cache).unwrap_err(),
        ParamError::NonFinite("W")
    );
    assert_eq!(
        BinaryQuadratic::new(&[0.0; 4], &[f32::INFINITY, 0.0], &mut cache).unwrap_err(),
        ParamError::NonFinite("b")
    );
    let mut cache = [0.0f64; 2];
    for (w, b, c, name) in [
        ([f32::NAN, 0.0], [0.0, 0.0], [0.0], "W"),
        ([0.0, 0.0], [0.0, f32::INFINITY], [0.0], "b"),
        ([0.0, 0.0], [0.0, 0.0], [f32::NEG_INFINITY], "c"),
    ] {
        assert_eq!(
            Rbm::new(&w, &b, &c, &mut cache).unwrap_err(),
            ParamError::NonFinite(name)
        );
    }
}

// A generator stuck at one word.
use langevin_tests::harness::ConstRng as Stuck;

/// Uniforms of exactly 0 (all-zero words: every coordinate with a nonzero flip probability flips,
/// and `ln u` stays finite) and just below 1 (all-one words: nothing flips, even at probability
/// one, the draw being `r < ⌊p·2^32⌋` with saturation). The chain stays valid either way.
#[test]
fn extreme_random_words_are_safe() {
    for word in [0u64, u64::MAX] {
        let mut model = IsingLattice::with_dims(Dims { rows: 3, cols: 3 }, 0.5, 0.1, true).unwrap();
        let mut bufs = ChainBox::new(&[0; 9]);
        let mut chain = BinaryChain::new(bufs.buffers(), &mut model).unwrap();
        let mut rng = Stuck(word);
        for (a, b) in [(0.5, 0.5), (1e6, 1.0)] {
            let kernel = Dmala::new(FlipProposal::new(a, b).unwrap());
            for _ in 0..10 {
                let r = kernel.step(&mut model, &mut chain, &mut rng).unwrap();
                assert!(r.log_accept_ratio.is_finite() || r.proposed_flips == 0);
                if word == u64::MAX {
                    assert_eq!(r.proposed_flips, 0);
                } else {
                    assert_eq!(r.proposed_flips, 9);
                }
                assert!(chain.state().iter().all(|&v| v <= 1));
                assert!(chain.log_density().is_finite());
            }
        }
    }
}

/// Finite but extreme gradients (`±3e38`, subnormals, `−0`) at the current state: logits
/// saturate, `log q` stays a finite number or `−∞` for impossible moves, and the chain stays
/// valid (such moves are simply rejected by DMALA).
#[test]
fn extreme_finite_gradients_are_safe() {
    let theta = vec![3e38f32, -3e38, 1e-45, -0.0, 0.0, 1e-39];
    let mut target = Faulty {
        inner: Independent(theta),
        fault: Fault::None,
    };
    let mut bufs = ChainBox::new(&[0; 6]);
    let mut chain = BinaryChain::new(bufs.buffers(), &mut target).unwrap();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(6);
    for (a, b) in [(0.5, 0.5), (1e6, 1.0), (1e-3, 0.1)] {
        for metropolis in [true, false] {
            for _ in 0..50 {
                let kernel = FlipProposal::new(a, b).unwrap();
                let r = if metropolis {
                    Dmala::new(kernel).step(&mut target, &mut chain, &mut rng)
                } else {
                    Dula::new(kernel).step(&mut target, &mut chain, &mut rng)
                }
                .unwrap();
                assert!(!r.log_accept_ratio.is_nan(), "{r:?}");
                assert!(chain.state().iter().all(|&v| v <= 1));
                assert!(chain.log_density().is_finite());
            }
        }
    }
}
