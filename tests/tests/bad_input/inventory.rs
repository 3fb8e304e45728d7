//! Bad-input inventory of the binary core: every class of bad input (NaN and ±∞ in every float
//! input, −0, subnormals, ±MAX, logits beyond ±700, absurd step sizes and balances, d = 0 or 1,
//! mismatched lengths, out-of-range states, degenerate matrices, extreme uniforms, target
//! errors) against every public entry point, with the outcome `docs/bad-input.md` records.
//! Each test name is cited in that table.

use core::fmt;
use langevin_core::Kernel;
use langevin_core::binary::{
    BinaryChain, ChainStorage, Dmala, Dula, FlipProposal, InitError, Rejection, StepError,
    StepReport,
};
use langevin_core::math::{FlipOdds, Libm, sigmoid, softplus};
use langevin_core::models::{BinaryQuadratic, ConstDims, Dims, IsingGraph, IsingLattice, Rbm};
use langevin_core::random::{fill_normal, index, normal_pair, open_unit_f64, shuffle, unit_f64};
use langevin_core::stats::{ChainStats, RunningMeans};
use langevin_core::{BinaryTarget, FlipMove, LenError, ParamError, TargetError};
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// A signalling NaN (quiet bit clear).
const SNAN64: f64 = f64::from_bits(0x7ff0_0000_0000_0001);
const SNAN32: f32 = f32::from_bits(0x7f80_0001);

const BAD_F64: [f64; 6] = [
    f64::NAN,
    SNAN64,
    f64::INFINITY,
    f64::NEG_INFINITY,
    -f64::NAN,
    -SNAN64,
];
const BAD_F32: [f32; 5] = [
    f32::NAN,
    SNAN32,
    f32::INFINITY,
    f32::NEG_INFINITY,
    -f32::NAN,
];

fn rng() -> Xoshiro256PlusPlus {
    Xoshiro256PlusPlus::seed_from_u64(7)
}

use langevin_tests::harness::ConstRng;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Failure(bool);

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "failure (recoverable {})", self.0)
    }
}

impl TargetError for Failure {
    fn is_recoverable(&self) -> bool {
        self.0
    }
}

/// A target returning fixed values: `(u0, g0)` at the start, `(u, g)` or an error at proposals.
#[derive(Clone, Copy, Debug)]
struct Fixed {
    dim: usize,
    u0: f64,
    g0: f32,
    u: f64,
    g: f32,
    error: Option<bool>,
}

impl Fixed {
    fn new(dim: usize) -> Self {
        Self {
            dim,
            u0: 0.0,
            g0: 0.3,
            u: 0.0,
            g: 0.3,
            error: None,
        }
    }
}

impl BinaryTarget for Fixed {
    type Error = Failure;
    fn dim(&self) -> usize {
        self.dim
    }
    fn log_density_and_grad(&mut self, _x: &[u8], grad: &mut [f32]) -> Result<f64, Failure> {
        grad.fill(self.g0);
        Ok(self.u0)
    }
    fn log_density_and_grad_after(
        &mut self,
        _mv: &FlipMove<'_>,
        grad: &mut [f32],
    ) -> Result<f64, Failure> {
        if let Some(recoverable) = self.error {
            return Err(Failure(recoverable));
        }
        grad.fill(self.g);
        Ok(self.u)
    }
}

fn snapshot(chain: &BinaryChain<'_>) -> (Vec<u8>, u64, Vec<u32>) {
    (
        chain.state().to_vec(),
        chain.log_density().to_bits(),
        chain.grad().iter().map(|g| g.to_bits()).collect(),
    )
}

fn no_panic<R>(f: impl FnOnce() -> R) -> R {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(_) => panic!("the entry point panicked"),
    }
}

/// Fifty DMALA steps on `m` (dimension 4) from zeros: none panics or fails, and the chain's
/// log-density stays finite.
fn dmala_stays_finite<T: BinaryTarget>(m: &mut T, what: &str)
where
    T::Error: fmt::Debug,
{
    let mut s = ChainStorage::<4>::new([0; 4]);
    let mut chain = BinaryChain::new(s.buffers(), m).unwrap();
    let p = FlipProposal::new(0.5, 0.5).unwrap();
    let mut r = rng();
    for _ in 0..50 {
        no_panic(|| Dmala::new(p).step(m, &mut chain, &mut r)).unwrap();
    }
    assert!(chain.log_density().is_finite(), "{what}");
}

// ---- FlipProposal::new / with_math ----

#[test]
fn proposal_new_refuses_bad_steps() {
    for a in BAD_F64
        .into_iter()
        .chain([0.0, -0.0, -1.0, -5e-324, f64::MIN])
    {
        assert!(
            matches!(FlipProposal::new(a, 0.5), Err(ParamError::Step(_))),
            "step {a}"
        );
        assert!(matches!(
            FlipProposal::<Libm>::with_math(a, 0.5),
            Err(ParamError::Step(_))
        ));
    }
    for a in [5e-324, f64::MIN_POSITIVE, 1e-30, 1e30, f64::MAX] {
        assert!(FlipProposal::new(a, 0.5).is_ok(), "step {a}");
    }
    // The step is checked first.
    assert!(matches!(
        FlipProposal::new(f64::NAN, f64::NAN),
        Err(ParamError::Step(_))
    ));
}

#[test]
fn proposal_new_refuses_bad_balances() {
    let above = 1.0 + f64::EPSILON;
    for b in BAD_F64
        .into_iter()
        .chain([0.0, -0.0, -0.5, above, 1.5, f64::MAX])
    {
        assert!(
            matches!(FlipProposal::new(0.5, b), Err(ParamError::Balance(_))),
            "balance {b}"
        );
    }
    for b in [5e-324, 1e-30, 0.5, 1.0] {
        assert!(FlipProposal::new(0.5, b).is_ok(), "balance {b}");
    }
}

// ---- FlipProposal::preconditioned ----

#[test]
fn preconditioner_refuses_nonpositive_nonfinite_and_overflowing_entries() {
    let p = FlipProposal::new(0.5, 0.5).unwrap();
    for bad in BAD_F32
        .into_iter()
        .chain([0.0, -0.0, -1.0, -1e-40, f32::MIN])
    {
        let pre = [1.0, bad, 1.0];
        match p.preconditioned(&pre) {
            Err(ParamError::Preconditioner { index, .. }) => assert_eq!(index, 1),
            other => panic!("{bad}: {other:?}"),
        }
    }
    // a·p² overflows to ∞ or underflows to 0 in f64.
    let huge = FlipProposal::new(1e300, 0.5).unwrap();
    assert!(huge.preconditioned(&[1e10]).is_err());
    let tiny = FlipProposal::new(1e-300, 0.5).unwrap();
    assert!(tiny.preconditioned(&[1e-30]).is_err());
    // Subnormal and MAX entries whose scaled step stays finite and positive are accepted.
    assert!(p.preconditioned(&[1e-40, f32::MAX]).is_ok());
    assert!(
        p.preconditioned(&[]).is_ok(),
        "the length is checked where it is used"
    );
}

#[test]
fn preconditioner_length_is_checked_at_use() {
    let pre = [1.0f32; 5];
    let p = FlipProposal::new(0.5, 0.5)
        .unwrap()
        .preconditioned(&pre)
        .unwrap();
    let (x, g) = ([0u8; 4], [0.3f32; 4]);
    let (mut y, mut fl) = ([0u8; 4], [0u32; 4]);
    let mut r = rng();
    let e = p.propose(&x, &g, &mut y, &mut fl, &mut r).unwrap_err();
    assert_eq!(e.buffer, "preconditioner");
    assert_eq!(p.log_q(&x, &g, &y).unwrap_err().buffer, "preconditioner");

    let mut target = Fixed::new(4);
    let mut storage = ChainStorage::<4>::new([0; 4]);
    let mut chain = BinaryChain::new(storage.buffers(), &mut target).unwrap();
    let before = snapshot(&chain);
    for kernel in [true, false] {
        let out = if kernel {
            Dmala::new(p).step(&mut target, &mut chain, &mut r)
        } else {
            Dula::new(p).step(&mut target, &mut chain, &mut r)
        };
        assert!(matches!(out, Err(StepError::Len(_))));
        assert_eq!(snapshot(&chain), before);
    }
}

// ---- FlipProposal::propose / log_q ----

/// Draws once with gradient `g` everywhere from state `x`; returns `(x_new, count, log q)` and
/// checks that `log_q` agrees with the draw.
fn draw(
    step: f64,
    balance: f64,
    x: u8,
    g: f32,
    r: &mut impl rand_core::Rng,
) -> (Vec<u8>, usize, f64) {
    let d = 16;
    let p = FlipProposal::new(step, balance).unwrap();
    let (xs, gs) = (vec![x; d], vec![g; d]);
    let (mut y, mut fl) = (vec![0u8; d], vec![0u32; d]);
    let (k, lq) = no_panic(|| p.propose(&xs, &gs, &mut y, &mut fl, r).unwrap());
    let again = p.log_q(&xs, &gs, &y).unwrap();
    assert!(lq.to_bits() == again.to_bits() || (lq.is_nan() && again.is_nan()));
    assert_eq!(k, y.iter().zip(&xs).filter(|(a, b)| a != b).count());
    (y, k, lq)
}

#[test]
fn propose_with_non_finite_gradients() {
    let mut r = rng();
    for x in [0u8, 1] {
        // NaN logits never flip and give a NaN log q (a Metropolis test then rejects).
        for nan in [f32::NAN, SNAN32, -f32::NAN] {
            let (y, k, lq) = draw(0.5, 0.5, x, nan, &mut r);
            assert_eq!((k, y.iter().all(|&v| v == x)), (0, true));
            assert!(lq.is_nan());
        }
    }
    // +∞ towards flipping: a sure flip (realised probability 1 − 2^-32) with finite log q.
    let (_, k, lq) = draw(0.5, 0.5, 0, f32::INFINITY, &mut r);
    assert_eq!((k, lq), (16, 0.0));
    let (_, k, lq) = draw(0.5, 0.5, 1, f32::NEG_INFINITY, &mut r);
    assert_eq!((k, lq), (16, 0.0));
    // ∞ away from flipping: never flips, log q = 0.
    let (_, k, lq) = draw(0.5, 0.5, 0, f32::NEG_INFINITY, &mut r);
    assert_eq!((k, lq), (0, 0.0));
}

#[test]
fn propose_with_huge_subnormal_and_signed_zero_gradients() {
    let mut r = rng();
    for (g, x, flips) in [
        (f32::MAX, 0, 16),
        (f32::MIN, 0, 0),
        (2000.0, 0, 16),
        (-2000.0, 0, 0),
        (2000.0, 1, 0),
        (-2000.0, 1, 16),
    ] {
        // Logits beyond ±700: probabilities exactly 0 or 1, log q finite.
        let (_, k, lq) = draw(0.5, 1.0, x, g, &mut r);
        assert_eq!(k, flips, "g {g} x {x}");
        assert!(lq.is_finite(), "g {g}: log q {lq}");
    }
    for g in [1e-40f32, -1e-40, 0.0, -0.0, f32::MIN_POSITIVE] {
        let (_, _, lq) = draw(0.5, 0.5, 0, g, &mut r);
        assert!(lq.is_finite() && lq <= 0.0, "g {g}");
    }
}

#[test]
fn propose_with_extreme_steps_and_balances() {
    let mut r = rng();
    // a = 1e-30 (and a subnormal a, whose 1/(2a) is ∞ in f32): no coordinate can flip.
    for a in [1e-30, 5e-324] {
        for x in [0, 1] {
            let (_, k, lq) = draw(a, 0.5, x, 1.0, &mut r);
            assert_eq!((k, lq), (0, 0.0), "a {a}");
        }
    }
    // a = 1e30 and f64::MAX: the step term vanishes, logits are b·g·(1 − 2x).
    for a in [1e30, f64::MAX] {
        let (_, k, lq) = draw(a, 1.0, 0, 1e6, &mut r);
        assert_eq!((k, lq), (16, 0.0));
    }
    // A subnormal balance: logits are −1/(2a).
    let (_, _, lq) = draw(0.5, 5e-324, 0, f32::MAX, &mut r);
    assert!(lq.is_finite());
}

#[test]
fn propose_refuses_mismatched_lengths_before_drawing() {
    let p = FlipProposal::new(0.5, 0.5).unwrap();
    let (x, g) = ([0u8; 4], [0.3f32; 4]);
    let (mut y, mut fl) = ([9u8; 4], [0u32; 4]);
    let mut r = ConstRng(0);
    let words = |r: &mut ConstRng| r.0;
    assert_eq!(
        p.propose(&x, &g[..3], &mut y, &mut fl, &mut r)
            .unwrap_err()
            .buffer,
        "grad"
    );
    assert_eq!(
        p.propose(&x, &g, &mut y[..3], &mut fl, &mut r)
            .unwrap_err()
            .buffer,
        "proposal"
    );
    assert_eq!(
        p.propose(&x, &g, &mut y, &mut fl[..3], &mut r)
            .unwrap_err()
            .buffer,
        "flipped"
    );
    assert_eq!(y, [9; 4], "nothing written");
    assert_eq!(words(&mut r), 0);
    assert_eq!(p.log_q(&x, &g[..3], &y).unwrap_err().buffer, "grad");
    assert_eq!(p.log_q(&x, &g, &y[..3]).unwrap_err().buffer, "to");
}

#[test]
fn propose_on_empty_and_out_of_range_states() {
    let p = FlipProposal::new(0.5, 0.5).unwrap();
    let mut r = rng();
    assert_eq!(
        p.propose(&[], &[], &mut [], &mut [], &mut r).unwrap(),
        (0, 0.0)
    );
    assert_eq!(p.log_q(&[], &[], &[]).unwrap(), 0.0);
    // The proposal does not validate states (the chain does): entries above 1 give an
    // unspecified but bounded result, never a panic.
    let (x, g) = ([2u8, 255, 7], [0.3f32; 3]);
    let (mut y, mut fl) = ([0u8; 3], [0u32; 3]);
    let (k, _) = no_panic(|| p.propose(&x, &g, &mut y, &mut fl, &mut r).unwrap());
    assert!(k <= 3);
    no_panic(|| p.log_q(&x, &g, &y).unwrap());
}

// ---- BinaryChain::new ----

#[test]
fn chain_new_refuses_empty_targets_lengths_states_and_non_finite_starts() {
    let mut storage = ChainStorage::<0>::new([]);
    let mut t0 = Fixed::new(0);
    assert!(matches!(
        BinaryChain::new(storage.buffers(), &mut t0),
        Err(InitError::EmptyDimension)
    ));

    let mut t = Fixed::new(4);
    let bad = [
        ("x", 5),
        ("grad", 3),
        ("x_proposal", 5),
        ("grad_proposal", 0),
        ("flipped", 5),
    ];
    for (name, len) in bad {
        super::assert_binary_len_refused(&mut t, name, len);
    }

    for bad in [2u8, 255] {
        let mut s = ChainStorage::<4>::new([0, 1, bad, 0]);
        match BinaryChain::new(s.buffers(), &mut t) {
            Err(InitError::StateOutOfRange { index, value }) => {
                assert_eq!((index, value), (2, u16::from(bad)))
            }
            other => panic!("{other:?}"),
        }
    }

    let bad_u = BAD_F64.iter().map(|&u| {
        let t = Fixed {
            u0: u,
            ..Fixed::new(4)
        };
        (t, format!("U = {u}"))
    });
    let bad_g = BAD_F32.iter().map(|&g| {
        let t = Fixed {
            g0: g,
            ..Fixed::new(4)
        };
        (t, format!("grad = {g}"))
    });
    for (mut t, what) in bad_u.chain(bad_g) {
        assert!(start_is_non_finite([0; 4], &mut t), "{what}");
    }
    // Finite extremes start.
    for (u, g) in [
        (f64::MAX, f32::MAX),
        (f64::MIN, f32::MIN),
        (-0.0, -0.0),
        (5e-324, 1e-40),
    ] {
        let mut s = ChainStorage::<4>::new([0; 4]);
        let mut t = Fixed {
            u0: u,
            g0: g,
            ..Fixed::new(4)
        };
        assert!(BinaryChain::new(s.buffers(), &mut t).is_ok(), "{u} {g}");
    }
}

/// A target that fails at the start.
struct FailsAtStart(bool);

impl BinaryTarget for FailsAtStart {
    type Error = Failure;
    fn dim(&self) -> usize {
        2
    }
    fn log_density_and_grad(&mut self, _x: &[u8], _g: &mut [f32]) -> Result<f64, Failure> {
        Err(Failure(self.0))
    }
}

#[test]
fn chain_new_reports_target_errors_at_the_start() {
    for recoverable in [true, false] {
        let mut s = ChainStorage::<2>::new([0; 2]);
        match BinaryChain::new(s.buffers(), &mut FailsAtStart(recoverable)) {
            Err(InitError::Target(Failure(r))) => assert_eq!(r, recoverable),
            other => panic!("{other:?}"),
        }
    }
}

// ---- Dula::step, Dmala::step::step ----

fn step_with(
    metropolis: bool,
    target: &mut Fixed,
    chain: &mut BinaryChain<'_>,
    r: &mut impl rand_core::Rng,
) -> Result<StepReport, StepError<Failure>> {
    let p = FlipProposal::new(0.5, 0.5).unwrap();
    if metropolis {
        Kernel::step(&mut Dmala::new(p), target, chain, r)
    } else {
        Kernel::step(&mut Dula::new(p), target, chain, r)
    }
}

#[test]
fn step_rejects_non_finite_proposals_and_keeps_the_chain() {
    for metropolis in [true, false] {
        let outputs = BAD_F64
            .iter()
            .map(|&u| (u, 0.3f32))
            .chain(BAD_F32.iter().map(|&g| (0.0, g)));
        for (u, g) in outputs {
            let mut t = Fixed {
                u,
                g,
                g0: 3.0,
                ..Fixed::new(8)
            };
            let mut s = ChainStorage::<8>::new([0; 8]);
            let mut chain = BinaryChain::new(s.buffers(), &mut t).unwrap();
            let mut r = rng();
            for _ in 0..20 {
                let before = snapshot(&chain);
                let rep = step_with(metropolis, &mut t, &mut chain, &mut r).unwrap();
                if rep.proposed_flips > 0 {
                    assert_eq!(rep.rejection, Some(Rejection::NonFinite), "u {u} g {g}");
                    assert!(!rep.accepted && rep.log_accept_ratio == f64::NEG_INFINITY);
                }
                assert_eq!(snapshot(&chain), before);
            }
        }
    }
}

#[test]
fn step_handles_target_errors() {
    for metropolis in [true, false] {
        let mut t = Fixed {
            error: Some(true),
            g0: 3.0,
            ..Fixed::new(8)
        };
        let mut s = ChainStorage::<8>::new([0; 8]);
        let mut chain = BinaryChain::new(s.buffers(), &mut t).unwrap();
        let mut r = rng();
        let mut stats = ChainStats::default();
        for _ in 0..20 {
            let rep = step_with(metropolis, &mut t, &mut chain, &mut r).unwrap();
            stats.record(&rep);
            if rep.proposed_flips > 0 {
                assert_eq!(rep.rejection, Some(Rejection::TargetError));
            }
        }
        assert!(stats.invalid > 0 && stats.accepted < stats.steps);
        t.error = Some(false);
        let before = snapshot(&chain);
        let mut saw_error = false;
        for _ in 0..20 {
            if let Err(e) = step_with(metropolis, &mut t, &mut chain, &mut r) {
                assert!(matches!(e, StepError::Target(Failure(false))));
                saw_error = true;
            }
            assert_eq!(snapshot(&chain), before);
        }
        assert!(saw_error);
    }
}

#[test]
fn step_with_huge_finite_log_densities_and_gradients() {
    for metropolis in [true, false] {
        for (u, g) in [
            (f64::MAX, f32::MAX),
            (f64::MIN, f32::MIN),
            (1e300, 2000.0),
            (-0.0, -0.0),
            (5e-324, 1e-40),
        ] {
            let mut t = Fixed {
                u,
                g,
                g0: g,
                ..Fixed::new(8)
            };
            let mut s = ChainStorage::<8>::new([0; 8]);
            let mut chain = BinaryChain::new(s.buffers(), &mut t).unwrap();
            let mut r = rng();
            for _ in 0..20 {
                let rep = no_panic(|| step_with(metropolis, &mut t, &mut chain, &mut r)).unwrap();
                assert!(rep.rejection.is_none());
                assert!(chain.log_density().is_finite() && chain.state().iter().all(|&v| v <= 1));
            }
        }
    }
}

#[test]
fn step_refuses_a_target_of_another_dimension() {
    let mut t = Fixed::new(4);
    let mut s = ChainStorage::<4>::new([0; 4]);
    let mut chain = BinaryChain::new(s.buffers(), &mut t).unwrap();
    let before = snapshot(&chain);
    let mut other = Fixed::new(5);
    for metropolis in [true, false] {
        let e = step_with(metropolis, &mut other, &mut chain, &mut rng()).unwrap_err();
        assert!(matches!(
            e,
            StepError::Len(LenError {
                buffer: "target",
                ..
            })
        ));
        assert_eq!(snapshot(&chain), before);
    }
}

#[test]
fn step_with_extreme_uniforms() {
    // Words of all zeros: uniforms 0 (flip wherever p > 0) and log u = ln 2^-54.
    // Words of all ones: uniforms just below 1 (no flip even at p = 1: the realised probability
    // is below 1 by less than 2^-32), so the step is an accepted empty move.
    for metropolis in [true, false] {
        let mut m = IsingLattice::<ConstDims<4, 4>>::new(0.3, 0.1, true).unwrap();
        let mut s = ChainStorage::<16>::new([0; 16]);
        let mut chain = BinaryChain::new(s.buffers(), &mut m).unwrap();
        let p = FlipProposal::new(1e30, 1.0).unwrap();
        for word in [0u64, u64::MAX] {
            let mut r = ConstRng(word);
            let rep = if metropolis {
                Dmala::new(p).step(&mut m, &mut chain, &mut r)
            } else {
                Dula::new(p).step(&mut m, &mut chain, &mut r)
            }
            .unwrap();
            if word == u64::MAX {
                assert_eq!((rep.proposed_flips, rep.accepted), (0, true));
            } else {
                assert!(rep.proposed_flips > 0);
            }
            assert!(chain.log_density().is_finite());
        }
    }
}

#[test]
fn chains_of_dimension_one() {
    let mut m = IsingLattice::<ConstDims<1, 1>>::new(0.3, 0.1, true).unwrap();
    assert_eq!(m.wraps(), (false, false));
    let mut s = ChainStorage::<1>::new([0]);
    let mut chain = BinaryChain::new(s.buffers(), &mut m).unwrap();
    let p = FlipProposal::new(0.5, 0.5).unwrap();
    let mut r = rng();
    for _ in 0..200 {
        Dmala::new(p).step(&mut m, &mut chain, &mut r).unwrap();
        Dula::new(p).step(&mut m, &mut chain, &mut r).unwrap();
    }
    assert!(chain.state()[0] <= 1);
    // U(x) = h·s for a single site: exactly ±0.1 in f64 of the f32 field.
    assert_eq!(chain.log_density().abs(), f64::from(0.1f32));
}

// ---- BinaryChain::reset ----

#[test]
fn reset_refuses_bad_states_and_keeps_the_chain() {
    let mut t = Fixed::new(4);
    let mut s = ChainStorage::<4>::new([0, 1, 0, 1]);
    let mut chain = BinaryChain::new(s.buffers(), &mut t).unwrap();
    let before = snapshot(&chain);
    assert!(matches!(
        chain.reset(&[0, 1, 0], &mut t),
        Err(InitError::Len(_))
    ));
    assert!(matches!(
        chain.reset(&[0, 1, 0, 2], &mut t),
        Err(InitError::StateOutOfRange { index: 3, value: 2 })
    ));
    let mut other = Fixed::new(5);
    assert!(matches!(
        chain.reset(&[0; 4], &mut other),
        Err(InitError::Len(LenError {
            buffer: "target",
            ..
        }))
    ));
    for u in BAD_F64 {
        let mut bad = Fixed {
            u0: u,
            ..Fixed::new(4)
        };
        assert!(matches!(
            chain.reset(&[1; 4], &mut bad),
            Err(InitError::NonFinite)
        ));
    }
    for recoverable in [true, false] {
        let mut failing = FailsAtStart(recoverable);
        // A target of another dimension is refused before it is called.
        assert!(chain.reset(&[1; 4], &mut failing).is_err());
    }
    assert_eq!(snapshot(&chain), before);
    assert!(chain.reset(&[1; 4], &mut t).is_ok());
    assert_eq!(chain.state(), &[1; 4]);
}

// ---- IsingLattice ----

#[test]
fn lattice_refuses_empty_oversized_and_non_finite_parameters() {
    for v in BAD_F32 {
        assert!(matches!(
            IsingLattice::<ConstDims<3, 3>>::new(v, 0.0, true),
            Err(ParamError::NonFinite("coupling"))
        ));
        assert!(matches!(
            IsingLattice::<ConstDims<3, 3>>::new(0.0, v, true),
            Err(ParamError::NonFinite("field"))
        ));
    }
    assert!(matches!(
        IsingLattice::<ConstDims<0, 3>>::new(0.3, 0.0, true),
        Err(ParamError::EmptyDimension)
    ));
    let dims = |rows, cols| Dims { rows, cols };
    assert!(matches!(
        IsingLattice::with_dims(dims(3, 0), 0.3, 0.0, true),
        Err(ParamError::EmptyDimension)
    ));
    assert!(matches!(
        IsingLattice::with_dims(dims(usize::MAX, 2), 0.3, 0.0, true),
        Err(ParamError::OutOfRange { .. })
    ));
    assert!(matches!(
        IsingLattice::with_dims(dims(65_536, 65_537), 0.3, 0.0, true),
        Err(ParamError::OutOfRange { .. })
    ));
    // Short axes never wrap (no self-bonds or doubled bonds).
    assert_eq!(
        IsingLattice::with_dims(dims(2, 1), 0.3, 0.0, true)
            .unwrap()
            .wraps(),
        (false, false)
    );
}

#[test]
fn lattice_with_extreme_finite_parameters() {
    // J = ±MAX: the gradient overflows f32, so the chain refuses to start.
    for j in [f32::MAX, f32::MIN, 1e38] {
        let mut m = IsingLattice::<ConstDims<3, 3>>::new(j, 0.0, true).unwrap();
        assert!(start_is_non_finite([0; 9], &mut m), "{j}");
    }
    // Huge but representable couplings, subnormal and signed-zero parameters run.
    for (j, h) in [(1e30, 0.0), (-1e30, 1.0), (1e-40, -1e-40), (-0.0, -0.0)] {
        let mut m = IsingLattice::<ConstDims<3, 3>>::new(j, h, true).unwrap();
        let mut s = ChainStorage::<9>::new([0; 9]);
        let mut chain = BinaryChain::new(s.buffers(), &mut m).unwrap();
        let p = FlipProposal::new(0.5, 0.5).unwrap();
        let mut r = rng();
        for _ in 0..50 {
            Dmala::new(p).step(&mut m, &mut chain, &mut r).unwrap();
        }
        assert!(chain.log_density().is_finite());
    }
}

#[test]
fn lattice_entry_points_with_out_of_range_arguments() {
    let mut m = IsingLattice::<ConstDims<3, 3>>::new(0.3, 0.1, true).unwrap();
    // Out-of-range sites give indices outside the lattice rather than a panic.
    no_panic(|| m.neighbours(100));
    // Shorter state or gradient buffers are read as far as both go.
    let mut g = [0f32; 9];
    no_panic(|| m.log_density_and_grad(&[1, 0], &mut g).unwrap());
    no_panic(|| m.log_density_and_grad(&[1; 9], &mut g[..4]).unwrap());
    // Flipped indices outside the state are skipped.
    let from = [0u8; 9];
    let mut to = [0u8; 9];
    to[0] = 1;
    let mut gf = [0f32; 9];
    let u = m.log_density_and_grad(&from, &mut gf).unwrap();
    let mv = FlipMove {
        from: &from,
        to: &to,
        flipped: &[0, 50],
        from_log_density: u,
        from_grad: &gf,
    };
    let mut out = [0f32; 9];
    no_panic(|| m.log_density_and_grad_after(&mv, &mut out).unwrap());
}

/// A move from `from` to `to` that lists only coordinate 0 as flipped, from `U = 0`.
fn first_flip<'a>(from: &'a [u8], to: &'a [u8], from_grad: &'a [f32]) -> FlipMove<'a> {
    FlipMove {
        from,
        to,
        flipped: &[0],
        from_log_density: 0.0,
        from_grad,
    }
}

#[test]
fn lattice_and_graph_updates_with_a_gradient_of_another_length() {
    let mut m = IsingLattice::<ConstDims<3, 3>>::new(0.3, 0.1, true).unwrap();
    let (from, to, gf) = ([0u8; 9], [1u8; 9], [0f32; 9]);
    let mv = first_flip(&from, &to, &gf);
    let mut short = [0f32; 4];
    no_panic(|| m.log_density_and_grad_after(&mv, &mut short).unwrap());
    let mut g = IsingGraph::new(&[0, 1, 2], &[1, 0], &[0.5, 0.5], &[0.0, 0.0]).unwrap();
    let (from, to, gf) = ([0u8; 2], [1u8; 2], [0f32; 2]);
    let mv = first_flip(&from, &to, &gf);
    no_panic(|| g.log_density_and_grad_after(&mv, &mut short).unwrap());
}

// ---- IsingGraph ----

#[test]
fn graph_refuses_malformed_graphs() {
    let ok = IsingGraph::new(&[0, 1, 2], &[1, 0], &[0.5, 0.5], &[0.1, -0.1]);
    assert!(ok.is_ok());
    assert!(matches!(
        IsingGraph::new(&[0], &[], &[], &[]),
        Err(ParamError::EmptyDimension)
    ));
    assert!(matches!(
        IsingGraph::new(&[0, 1], &[1, 0], &[0.5, 0.5], &[0.1, 0.1]),
        Err(ParamError::Len(_))
    ));
    assert!(matches!(
        IsingGraph::new(&[0, 1, 2], &[1, 0], &[0.5], &[0.1, 0.1]),
        Err(ParamError::Len(_))
    ));
    assert!(matches!(
        IsingGraph::new(&[0, 1, 3], &[1, 0], &[0.5, 0.5], &[0.1, 0.1]),
        Err(ParamError::Len(_))
    ));
    assert!(matches!(
        IsingGraph::new(&[1, 1, 2], &[1, 0], &[0.5, 0.5], &[0.1, 0.1]),
        Err(ParamError::OutOfRange { .. })
    ));
    assert!(matches!(
        IsingGraph::new(&[0, 2, 2], &[1, 0], &[0.5, 0.5], &[0.1, 0.1]),
        Err(ParamError::OutOfRange { .. })
    ));
    // Asymmetric couplings, a missing reverse edge, a self-loop, a neighbour out of range.
    assert!(matches!(
        IsingGraph::new(&[0, 1, 2], &[1, 0], &[0.5, -0.5], &[0.1, 0.1]),
        Err(ParamError::OutOfRange { .. })
    ));
    assert!(matches!(
        IsingGraph::new(&[0, 1, 1], &[1], &[0.5], &[0.1, 0.1]),
        Err(ParamError::OutOfRange { .. })
    ));
    assert!(matches!(
        IsingGraph::new(&[0, 1, 2], &[0, 1], &[0.5, 0.5], &[0.1, 0.1]),
        Err(ParamError::OutOfRange { .. })
    ));
    assert!(matches!(
        IsingGraph::new(&[0, 1, 2], &[7, 0], &[0.5, 0.5], &[0.1, 0.1]),
        Err(ParamError::OutOfRange { .. })
    ));
    for v in BAD_F32 {
        assert!(matches!(
            IsingGraph::new(&[0, 1, 2], &[1, 0], &[v, v], &[0.1, 0.1]),
            Err(ParamError::NonFinite(_))
        ));
        assert!(matches!(
            IsingGraph::new(&[0, 1, 2], &[1, 0], &[0.5, 0.5], &[v, 0.1]),
            Err(ParamError::NonFinite(_))
        ));
    }
    // A node without edges, and the edges of a node out of range.
    let g = IsingGraph::new(&[0, 0], &[], &[], &[0.3]).unwrap();
    assert_eq!(g.edges(0).count(), 0);
    assert_eq!(g.edges(9).count(), 0);
}

// ---- BinaryQuadratic ----

#[test]
fn quadratic_refuses_empty_mismatched_and_non_finite_parameters() {
    let mut cache = [0.0f64; 4];
    assert!(matches!(
        BinaryQuadratic::new(&[], &[], &mut cache),
        Err(ParamError::EmptyDimension)
    ));
    assert!(matches!(
        BinaryQuadratic::new(&[0.0; 3], &[0.0; 2], &mut cache),
        Err(ParamError::Len(_))
    ));
    assert!(matches!(
        BinaryQuadratic::new(&[0.0; 4], &[0.0; 2], &mut cache[..3]),
        Err(ParamError::Len(_))
    ));
    for v in BAD_F32 {
        assert!(matches!(
            BinaryQuadratic::new(&[0.0, v, 0.0, 0.0], &[0.0; 2], &mut cache),
            Err(ParamError::NonFinite("W"))
        ));
        assert!(matches!(
            BinaryQuadratic::new(&[0.0; 4], &[v, 0.0], &mut cache),
            Err(ParamError::NonFinite("b"))
        ));
    }
}

#[test]
fn quadratic_with_degenerate_matrices() {
    // Zero, asymmetric, rank-one, ill-conditioned and huge matrices: no solve is involved, so
    // all run while U and ∇U stay finite; entries near f32::MAX overflow the f32 gradient and
    // the chain refuses to start.
    let d = 4;
    let zero = vec![0.0f32; d * d];
    let asym: Vec<f32> = (0..d * d)
        .map(|k| if k % d > k / d { 1.0 } else { 0.0 })
        .collect();
    let rank1: Vec<f32> = (0..d * d)
        .map(|k| ((k / d + 1) * (k % d + 1)) as f32)
        .collect();
    let cond: Vec<f32> = (0..d * d)
        .map(|k| {
            if k / d == k % d {
                if k == 0 { 1e8 } else { 1e-8 }
            } else {
                0.0
            }
        })
        .collect();
    let huge = vec![1e30f32; d * d];
    let b = [0.5f32, -0.5, 1e-40, -0.0];
    for (name, w) in [
        ("zero", &zero),
        ("asymmetric", &asym),
        ("rank one", &rank1),
        ("cond 1e16", &cond),
        ("1e30", &huge),
    ] {
        let mut cache = vec![0.0; 2 * d];
        let mut m = BinaryQuadratic::new(w, &b, &mut cache).unwrap();
        dmala_stays_finite(&mut m, name);
    }
    let max = vec![f32::MAX; d * d];
    let mut cache = vec![0.0; 2 * d];
    let mut m = BinaryQuadratic::new(&max, &b, &mut cache).unwrap();
    assert!(start_is_non_finite([1; 4], &mut m));
}

/// Whether a binary chain started at `x0` on `t` is refused for a non-finite `U` or gradient.
fn start_is_non_finite<T: BinaryTarget, const D: usize>(x0: [u8; D], t: &mut T) -> bool {
    let mut s = ChainStorage::<D>::new(x0);
    matches!(BinaryChain::new(s.buffers(), t), Err(InitError::NonFinite))
}

#[test]
fn quadratic_entry_points_with_buffers_of_other_lengths() {
    let w = [0.5f32; 4];
    let b = [0.1f32; 2];
    let mut cache = [0.0f64; 4];
    let mut m = BinaryQuadratic::new(&w, &b, &mut cache).unwrap();
    let mut g = [0f32; 5];
    no_panic(|| m.log_density_and_grad(&[1, 1, 1], &mut g).unwrap());
    no_panic(|| m.log_density_and_grad(&[1], &mut g[..1]).unwrap());
}

// ---- Rbm ----

#[test]
fn rbm_refuses_empty_mismatched_and_non_finite_parameters() {
    let mut cache = [0.0f64; 4];
    assert!(matches!(
        Rbm::new(&[], &[], &[0.0; 2], &mut cache),
        Err(ParamError::EmptyDimension)
    ));
    assert!(matches!(
        Rbm::new(&[0.0; 3], &[0.0; 2], &[0.0; 2], &mut cache),
        Err(ParamError::Len(_))
    ));
    assert!(matches!(
        Rbm::new(&[0.0; 4], &[0.0; 2], &[0.0; 2], &mut cache[..3]),
        Err(ParamError::Len(_))
    ));
    for v in BAD_F32 {
        assert!(matches!(
            Rbm::new(&[v, 0.0, 0.0, 0.0], &[0.0; 2], &[0.0; 2], &mut cache),
            Err(ParamError::NonFinite("W"))
        ));
        assert!(matches!(
            Rbm::new(&[0.0; 4], &[v, 0.0], &[0.0; 2], &mut cache),
            Err(ParamError::NonFinite("b"))
        ));
        assert!(matches!(
            Rbm::new(&[0.0; 4], &[0.0; 2], &[0.0, v], &mut cache),
            Err(ParamError::NonFinite("c"))
        ));
    }
    // No hidden units: U = bᵀx.
    let mut none: [f64; 0] = [];
    let mut m = Rbm::new(&[], &[0.5, -0.5], &[], &mut none).unwrap();
    let mut g = [0f32; 2];
    assert_eq!(m.log_density_and_grad(&[1, 1], &mut g).unwrap(), 0.0);
    assert_eq!(g, [0.5, -0.5]);
}

#[test]
fn rbm_with_huge_and_tiny_weights() {
    // Pre-activations near ±1e30 (softplus and sigmoid saturate) and subnormal weights run;
    // U stays finite.
    for scale in [1e30f32, -1e30, 1e-40] {
        let w: Vec<f32> = (0..8)
            .map(|k| if k % 3 == 0 { scale } else { -scale })
            .collect();
        let (b, c) = ([0.1f32; 4], [0.0f32; 2]);
        let mut cache = [0.0f64; 4];
        let mut m = Rbm::new(&w, &b, &c, &mut cache).unwrap();
        dmala_stays_finite(&mut m, &scale.to_string());
    }
}

#[test]
fn rbm_evaluation_with_a_gradient_of_another_length() {
    let (w, b, c) = ([0.5f32; 4], [0.1f32; 2], [0.0f32; 2]);
    let mut cache = [0.0f64; 4];
    let mut m = Rbm::new(&w, &b, &c, &mut cache).unwrap();
    let mut g = [0f32; 3];
    no_panic(|| m.log_density_and_grad(&[1, 1], &mut g).unwrap());
}

// ---- math ----

#[test]
fn flip_odds_and_helpers_on_extreme_logits() {
    for l in [f32::NAN, SNAN32] {
        let o = FlipOdds::new::<Libm>(l);
        assert!(o.p_flip.is_nan() && o.ln_flip.is_nan() && o.ln_stay.is_nan());
        let (a, b) = FlipOdds::logs::<Libm>(l);
        assert!(a.is_nan() && b.is_nan());
    }
    let o = FlipOdds::new::<Libm>(f32::INFINITY);
    assert_eq!(
        (o.p_flip, o.ln_flip, o.ln_stay),
        (1.0, 0.0, f32::NEG_INFINITY)
    );
    let o = FlipOdds::new::<Libm>(f32::NEG_INFINITY);
    assert_eq!(
        (o.p_flip, o.ln_flip, o.ln_stay),
        (0.0, f32::NEG_INFINITY, 0.0)
    );
    for l in [1000.0f32, 2000.0, f32::MAX] {
        let o = FlipOdds::new::<Libm>(l);
        assert_eq!((o.p_flip, o.ln_flip, o.ln_stay), (1.0, 0.0, -l));
        let o = FlipOdds::new::<Libm>(-l);
        assert_eq!((o.p_flip, o.ln_flip, o.ln_stay), (0.0, -l, 0.0));
    }
    for l in [0.0f32, -0.0, 1e-40, -1e-40] {
        assert_eq!(FlipOdds::new::<Libm>(l).p_flip, 0.5);
    }
    assert!(softplus(f64::NAN).is_nan() && sigmoid(f64::NAN).is_nan());
    assert_eq!(
        (softplus(f64::INFINITY), softplus(f64::NEG_INFINITY)),
        (f64::INFINITY, 0.0)
    );
    assert_eq!(
        (sigmoid(f64::INFINITY), sigmoid(f64::NEG_INFINITY)),
        (1.0, 0.0)
    );
    assert_eq!((softplus(1000.0), softplus(-1000.0)), (1000.0, 0.0));
    assert_eq!(softplus(f64::MAX), f64::MAX);
    assert_eq!(sigmoid(-0.0), 0.5);
}

// ---- random ----

#[test]
fn random_helpers_on_degenerate_arguments_and_streams() {
    let mut r = rng();
    assert_eq!(index(&mut r, 0), 0);
    assert_eq!(index(&mut r, 1), 0);
    assert_eq!(index(&mut ConstRng(u64::MAX), usize::MAX), usize::MAX - 1);
    assert_eq!(unit_f64(&mut ConstRng(0)), 0.0);
    assert!(unit_f64(&mut ConstRng(u64::MAX)) < 1.0);
    assert!(open_unit_f64(&mut ConstRng(0)) > 0.0);
    // The top word gives (2^53 − ½)·2^-53, which rounds to exactly 1: the interval is closed
    // at 1 (docs/bad-input.md). The logarithm is still finite (0).
    let top = open_unit_f64(&mut ConstRng(u64::MAX));
    assert!(top <= 1.0 && top.ln().is_finite());
    let (a, b) = normal_pair(&mut ConstRng(0));
    assert!(a.is_finite() && b.is_finite());
    let mut empty: [f64; 0] = [];
    fill_normal(&mut r, &mut empty);
    let mut odd = [f64::NAN; 3];
    fill_normal(&mut r, &mut odd);
    assert!(odd.iter().all(|v| v.is_finite()));
    let mut none: [u8; 0] = [];
    shuffle(&mut r, &mut none);
    let mut one = [5u8];
    shuffle(&mut r, &mut one);
    assert_eq!(one, [5]);
}

// ---- stats and LenError ----

#[test]
fn statistics_on_empty_and_mismatched_input() {
    let s = ChainStats::default();
    assert_eq!(
        (
            s.acceptance_rate(),
            s.mean_proposed_flips(),
            s.mean_accepted_flips()
        ),
        (0.0, 0.0, 0.0)
    );
    let mut sums = [0u64; 3];
    let mut m = RunningMeans::new(&mut sums);
    assert_eq!(m.mean(0), 0.0);
    assert!(m.record(&[1u8, 0]).is_err());
    assert_eq!(m.count(), 0);
    assert!(m.record(&[255u8, 0, 1]).is_ok());
    assert_eq!((m.mean(0), m.mean(99)), (255.0, 0.0));
    assert!(LenError::check("x", 3, 4).is_err());
    assert!(LenError::check("x", 0, 0).is_ok());
}

#[test]
fn rbm_cache_with_weights_spanning_more_than_f64_precision() {
    // The hidden pre-activations are cached and updated by adding columns of W. With weights
    // 1e30 and 1 in one row, the 1 is lost next to 1e30 (ulp 1.4e14), so after the 1e30 unit
    // turns off the cache holds p = 0 where a fresh sum gives p = 1: U and ∇U stay finite but
    // differ from a fresh evaluation by up to the row's small terms (docs/bad-input.md).
    let (w, b, c) = ([1e30f32, 1.0], [0.0f32; 2], [0.0f32]);
    let mut cache = [0.0f64; 2];
    let mut m = Rbm::new(&w, &b, &c, &mut cache).unwrap();
    let (from, to) = ([1u8, 1], [0u8, 1]);
    let mut g_from = [0f32; 2];
    let u_from = m.log_density_and_grad(&from, &mut g_from).unwrap();
    let mv = FlipMove {
        from: &from,
        to: &to,
        flipped: &[0],
        from_log_density: u_from,
        from_grad: &g_from,
    };
    let mut g_inc = [0f32; 2];
    let u_inc = m.log_density_and_grad_after(&mv, &mut g_inc).unwrap();
    let mut fresh_cache = [0.0f64; 2];
    let mut fresh = Rbm::new(&w, &b, &c, &mut fresh_cache).unwrap();
    let mut g_fresh = [0f32; 2];
    let u_fresh = fresh.log_density_and_grad(&to, &mut g_fresh).unwrap();
    assert!(u_inc.is_finite() && g_inc.iter().all(|g| g.is_finite()));
    assert!(
        (u_inc - core::f64::consts::LN_2).abs() < 1e-6,
        "cached p = 0: U = ln 2"
    );
    assert!((u_fresh - softplus(1.0)).abs() < 1e-6, "fresh p = 1");
    // The loss is bounded by the small terms of the row: here |ΔU| ≤ |Δp| = 1.
    assert!((u_inc - u_fresh).abs() <= 1.0 && (g_inc[1] - g_fresh[1]).abs() <= 1.0);
}
