//! Label chains (ordinal and categorical) on a target with arbitrary tabled energies, gradients
//! and errors, and a driver that checks after every step what holds for every label kernel:
//! entries below `S`, cached `U` and `∇U` finite and equal to the table's, failed and rejected
//! steps change nothing, the coordinates that moved are the report's accepted flips, invalid
//! proposals are reported as rejected with ratio `−∞`.

use crate::{ByteRng, Input, TableError};
use langevin_core::binary::{Rejection, StepError, StepReport};
use langevin_core::categorical::{CategoricalConditional, CategoricalTarget};
use langevin_core::ordinal::{
    CategoricalDomain, InitError, LabelBuffers, LabelChain, OrdinalConditional, OrdinalDomain,
    OrdinalTarget,
};
use langevin_core::stats::ChainStats;

/// A label target: `U(x) = u[h(x) mod |u|]`, gradient entry `j` = `g[(h(x) + j) mod |g|]`
/// (`d` entries for ordinal targets, `d·S` for categorical ones), errors from `e`, with `h` the
/// FNV-1a hash of the state.
#[derive(Clone, Debug)]
pub struct LabelTabled {
    /// Dimension.
    pub dim: usize,
    /// Values per coordinate as reported to the chain (may be invalid).
    pub states: usize,
    /// Gradient length.
    pub grad_len: usize,
    u: Vec<f64>,
    g: Vec<f32>,
    e: Vec<u8>,
}

impl LabelTabled {
    /// Reads the tables from `input`.
    pub fn read(dim: usize, states: usize, grad_len: usize, input: &mut Input<'_>) -> Self {
        let nu = 1 + usize::from(input.u8() % 8);
        let ng = 1 + usize::from(input.u8() % 16);
        let ne = 1 + usize::from(input.u8() % 8);
        let u = (0..nu).map(|_| input.f64()).collect();
        let g = (0..ng).map(|_| input.f32()).collect();
        let e = (0..ne)
            .map(|_| match input.u8() {
                0..=239 => 0,
                240..=249 => 1,
                _ => 2,
            })
            .collect();
        Self {
            dim,
            states,
            grad_len,
            u,
            g,
            e,
        }
    }

    fn hash(x: &[u16]) -> usize {
        let mut h = 0xcbf2_9ce4_8422_2325u64;
        for &v in x {
            for b in v.to_le_bytes() {
                h ^= u64::from(b);
                h = h.wrapping_mul(0x0000_0100_0000_01b3);
            }
        }
        h as usize
    }

    /// `(U(x), ∇U(x))` or the error at `x`.
    pub fn at(&self, x: &[u16]) -> Result<(f64, Vec<f32>), TableError> {
        let h = Self::hash(x);
        match self.e[h % self.e.len()] {
            1 => return Err(TableError { recoverable: true }),
            2 => return Err(TableError { recoverable: false }),
            _ => {}
        }
        let grad = (0..self.grad_len)
            .map(|j| self.g[h.wrapping_add(j) % self.g.len()])
            .collect();
        Ok((self.u[h % self.u.len()], grad))
    }

    fn eval(&self, x: &[u16], grad: &mut [f32]) -> Result<f64, TableError> {
        let (u, g) = self.at(x)?;
        grad.copy_from_slice(&g);
        Ok(u)
    }

    /// `U(x with x_i = k) − U(x)` for every `k`, or the first error.
    pub fn conditional_of(&self, x: &[u16], i: usize, out: &mut [f64]) -> Result<(), TableError> {
        let (u0, _) = self.at(x)?;
        let mut y = x.to_vec();
        for (k, o) in out.iter_mut().enumerate() {
            y[i] = k as u16;
            *o = self.at(&y)?.0 - u0;
        }
        Ok(())
    }
}

impl OrdinalTarget for LabelTabled {
    type Error = TableError;
    fn dim(&self) -> usize {
        self.dim
    }
    fn states(&self) -> usize {
        self.states
    }
    fn log_density_and_grad(&mut self, x: &[u16], grad: &mut [f32]) -> Result<f64, TableError> {
        self.eval(x, grad)
    }
}

impl CategoricalTarget for LabelTabled {
    type Error = TableError;
    fn dim(&self) -> usize {
        self.dim
    }
    fn states(&self) -> usize {
        self.states
    }
    fn log_density_and_grad(&mut self, x: &[u16], grad: &mut [f32]) -> Result<f64, TableError> {
        self.eval(x, grad)
    }
}

impl OrdinalConditional for LabelTabled {
    fn conditional(&mut self, x: &[u16], i: usize, out: &mut [f64]) -> Result<(), TableError> {
        self.conditional_of(x, i, out)
    }
}

impl CategoricalConditional for LabelTabled {
    fn conditional(&mut self, x: &[u16], i: usize, out: &mut [f64]) -> Result<(), TableError> {
        self.conditional_of(x, i, out)
    }
}

/// The two label domains, seen alike.
pub trait LabelDomain: langevin_core::domain::LabelDomain {
    /// Whether the gradient is one-hot (`d·S` entries).
    const CATEGORICAL: bool;
    /// Starts a chain.
    fn start<'a>(
        b: LabelBuffers<'a>,
        t: &mut LabelTabled,
    ) -> Result<LabelChain<'a, Self>, InitError<TableError>>;
    /// Resets a chain.
    fn reset(
        c: &mut LabelChain<'_, Self>,
        x: &[u16],
        t: &mut LabelTabled,
    ) -> Result<(), InitError<TableError>>;
}

impl LabelDomain for OrdinalDomain {
    const CATEGORICAL: bool = false;
    fn start<'a>(
        b: LabelBuffers<'a>,
        t: &mut LabelTabled,
    ) -> Result<LabelChain<'a, Self>, InitError<TableError>> {
        LabelChain::new_ordinal(b, t)
    }
    fn reset(
        c: &mut LabelChain<'_, Self>,
        x: &[u16],
        t: &mut LabelTabled,
    ) -> Result<(), InitError<TableError>> {
        c.reset(x, t)
    }
}

impl LabelDomain for CategoricalDomain {
    const CATEGORICAL: bool = true;
    fn start<'a>(
        b: LabelBuffers<'a>,
        t: &mut LabelTabled,
    ) -> Result<LabelChain<'a, Self>, InitError<TableError>> {
        LabelChain::new_categorical(b, t)
    }
    fn reset(
        c: &mut LabelChain<'_, Self>,
        x: &[u16],
        t: &mut LabelTabled,
    ) -> Result<(), InitError<TableError>> {
        c.reset(x, t)
    }
}

/// The part of a case every label kernel shares.
#[derive(Clone, Debug)]
pub struct LabelSetup {
    /// Dimension.
    pub d: usize,
    /// Values per coordinate (valid: 2..=max_s).
    pub s: usize,
    /// Initial state (may hold entries ≥ S).
    pub x0: Vec<u16>,
    /// The target.
    pub target: LabelTabled,
    /// Per step, the state to reset to afterwards, if any.
    pub resets: Vec<Option<Vec<u16>>>,
}

impl LabelSetup {
    /// Reads a case: `d ∈ 1..=max_d`, `S ∈ 2..=max_s` (rarely 0, 1 or 65 536, which a chain
    /// must refuse), up to `max_steps` steps.
    pub fn read(
        input: &mut Input<'_>,
        categorical: bool,
        max_d: usize,
        max_s: usize,
        max_steps: usize,
    ) -> Self {
        let d = 1 + usize::from(input.u8()) % max_d;
        let s = match input.u8() {
            0 => 0,
            1 => 1,
            2 => 65_536,
            3 => 300,
            b => 2 + usize::from(b) % (max_s - 1),
        };
        let label = |input: &mut Input<'_>| {
            let b = input.u8();
            if b >= 250 {
                u16::from(b)
            } else {
                (usize::from(b) % s.clamp(1, 256)) as u16
            }
        };
        let x0: Vec<u16> = (0..d).map(|_| label(input)).collect();
        let grad_len = if categorical { d * s.min(256) } else { d };
        let target = LabelTabled::read(d, s, grad_len, input);
        let steps = 1 + usize::from(input.u8()) % max_steps;
        let resets = (0..steps)
            .map(|_| (input.u8().is_multiple_of(8)).then(|| (0..d).map(|_| label(input)).collect()))
            .collect();
        Self {
            d,
            s,
            x0,
            target,
            resets,
        }
    }
}

/// A bitwise snapshot of a label chain.
pub fn snapshot<K: langevin_core::domain::LabelDomain>(
    chain: &LabelChain<'_, K>,
) -> (Vec<u16>, u64, Vec<u32>) {
    (
        chain.state().to_vec(),
        chain.log_density().to_bits(),
        chain.grad().iter().map(|g| g.to_bits()).collect(),
    )
}

/// The chain caches exactly what the target gives at its state, finite, entries below `S`.
pub fn check_cache<K: langevin_core::domain::LabelDomain>(
    chain: &LabelChain<'_, K>,
    target: &LabelTabled,
) {
    assert!(
        chain
            .state()
            .iter()
            .all(|&v| usize::from(v) < chain.states()),
        "state out of range"
    );
    let (u, g) = target
        .at(chain.state())
        .expect("the current state evaluated without error");
    assert_eq!(chain.log_density().to_bits(), u.to_bits(), "cached U");
    let cached: Vec<u32> = chain.grad().iter().map(|v| v.to_bits()).collect();
    let fresh: Vec<u32> = g.iter().map(|v| v.to_bits()).collect();
    assert_eq!(cached, fresh, "cached gradient");
    assert!(chain.log_density().is_finite(), "cached U not finite");
    assert!(
        chain.grad().iter().all(|v| v.is_finite()),
        "gradient not finite"
    );
}

/// A step function: step index, target, chain, random stream.
pub type LabelStepFn<'k, K> = dyn FnMut(
        usize,
        &mut LabelTabled,
        &mut LabelChain<'_, K>,
        &mut ByteRng<'_>,
    ) -> Result<StepReport, StepError<TableError>>
    + 'k;

/// The observable bits of a report.
pub fn report_bits(r: &StepReport) -> [u64; 5] {
    crate::drive::report_bits(r)
}

/// Runs `setup` with `step` and the random stream `rng`; returns a transcript.
pub fn drive<K: LabelDomain>(
    mut setup: LabelSetup,
    mut rng: ByteRng<'_>,
    step: &mut LabelStepFn<'_, K>,
) -> Vec<u64> {
    let (d, s) = (setup.d, setup.s);
    let target = &mut setup.target;
    let x0 = setup.x0.clone();
    let mut out = Vec::new();
    let g = target.grad_len;
    let (mut x, mut grad, mut xp, mut gp, mut ch, mut scratch) = (
        x0.clone(),
        vec![0.0f32; g],
        vec![0u16; d],
        vec![0.0f32; g],
        vec![0u32; d],
        vec![0.0f64; if s <= 300 { s } else { 0 }],
    );
    let buffers = LabelBuffers {
        x: &mut x,
        grad: &mut grad,
        x_proposal: &mut xp,
        grad_proposal: &mut gp,
        changed: &mut ch,
        scratch: &mut scratch,
    };
    let started = K::start(buffers, target);
    let valid_s = (2..=65_535).contains(&s);
    let bad_entry = x0.iter().position(|&v| usize::from(v) >= s);
    match (&started, valid_s, bad_entry, target.at(&x0)) {
        (Err(InitError::States(v)), false, _, _) => {
            assert_eq!(*v, s);
            return out;
        }
        (Err(InitError::Len(_)), true, _, _) if K::CATEGORICAL && s > 256 => return out,
        (Err(InitError::StateOutOfRange { index, .. }), true, Some(i), _) => {
            assert_eq!(*index, i);
            return out;
        }
        (Err(InitError::Target(e)), true, None, Err(want)) => {
            assert_eq!(*e, want);
            return out;
        }
        (Err(InitError::NonFinite), true, None, Ok((u, g))) => {
            assert!(!u.is_finite() || g.iter().any(|v| !v.is_finite()));
            return out;
        }
        (Ok(_), true, None, Ok((u, g))) => {
            assert!(u.is_finite() && g.iter().all(|v| v.is_finite()));
        }
        (other, ..) => panic!("unexpected start: {other:?} (S = {s})"),
    }
    let Ok(mut chain) = started else { return out };
    check_cache(&chain, target);
    assert_eq!((chain.dim(), chain.states()), (d, s));

    let mut stats = ChainStats::default();
    for (t, reset) in setup.resets.iter().enumerate() {
        let before = snapshot(&chain);
        match step(t, target, &mut chain, &mut rng) {
            Err(StepError::Target(e)) => {
                assert!(!e.recoverable, "a recoverable error must not stop the step");
                assert_eq!(snapshot(&chain), before, "a failed step changed the chain");
                out.push(u64::MAX);
            }
            Err(StepError::Len(e)) => panic!("length error on a consistent chain: {e}"),
            Err(StepError::Param(e)) => panic!("parameter error from a valid kernel: {e}"),
            Ok(r) => {
                check_cache(&chain, target);
                let moved = before
                    .0
                    .iter()
                    .zip(chain.state())
                    .filter(|(a, b)| a != b)
                    .count();
                assert_eq!(moved as u32, r.accepted_flips(), "moves taken vs report");
                assert!(r.proposed_flips as usize <= d);
                if let Some(why) = r.rejection {
                    assert!(
                        !r.accepted && r.log_accept_ratio == f64::NEG_INFINITY,
                        "{why:?}: {r:?}"
                    );
                }
                if !r.accepted {
                    assert_eq!(
                        snapshot(&chain),
                        before,
                        "a rejected step changed the chain"
                    );
                }
                stats.record(&r);
                out.extend(report_bits(&r));
            }
        }
        if let Some(x_new) = reset {
            let before = snapshot(&chain);
            let result = K::reset(&mut chain, x_new, target);
            let bad = x_new.iter().position(|&v| usize::from(v) >= s);
            match (result, bad, target.at(x_new)) {
                (Err(InitError::StateOutOfRange { index, .. }), Some(i), _) => assert_eq!(index, i),
                (Err(InitError::Target(e)), None, Err(want)) => assert_eq!(e, want),
                (Err(InitError::NonFinite), None, Ok((u, g))) => {
                    assert!(!u.is_finite() || g.iter().any(|v| !v.is_finite()));
                }
                (Ok(()), None, Ok(_)) => assert_eq!(chain.state(), &x_new[..]),
                (other, _, _) => panic!("unexpected reset: {other:?}"),
            }
            if chain.state() != &x_new[..] {
                assert_eq!(
                    snapshot(&chain),
                    before,
                    "a refused reset changed the chain"
                );
            }
            check_cache(&chain, target);
        }
        let snap = snapshot(&chain);
        out.push(snap.1);
        out.extend(snap.0.iter().map(|&v| u64::from(v)));
    }
    assert!(stats.accepted <= stats.steps && stats.accepted_flips <= stats.proposed_flips);
    for m in [
        stats.acceptance_rate(),
        stats.mean_proposed_flips(),
        stats.mean_accepted_flips(),
    ] {
        assert!(m.is_finite() && m >= 0.0, "statistic {m}");
    }
    out
}

/// Whether a report's rejection is consistent with the kernel's evaluation at `y`.
pub fn expected_rejection(eval: &Result<(f64, Vec<f32>), TableError>) -> Option<Rejection> {
    match eval {
        Err(e) if e.recoverable => Some(Rejection::TargetError),
        Err(_) => None,
        Ok((u, g)) if !u.is_finite() || g.iter().any(|v| !v.is_finite()) => {
            Some(Rejection::NonFinite)
        }
        Ok(_) => None,
    }
}

/// What a balanced label kernel must do on one step, worked out independently from a clone
/// of the random stream with the proposal's public `propose` and `log_q`.
#[derive(Clone, Debug)]
pub struct Expected {
    /// The report, or `None` for an unrecoverable target error.
    pub report: Option<StepReport>,
    /// The proposal.
    pub y: Vec<u16>,
    /// The jump taken if accepted.
    pub jump: u64,
    /// Random words the step consumes.
    pub words: u64,
}

/// A proposal's draw: `(x, grad, y, changed, rng) → (changed count, L1 jump, log q)`.
pub type ProposeFn<'p> =
    dyn Fn(&[u16], &[f32], &mut [u16], &mut [u32], &mut ByteRng<'_>) -> (usize, u64, f64) + 'p;
/// A proposal's `log q(to | from)`: `(from, grad_from, to)`.
pub type LogQFn<'p> = dyn Fn(&[u16], &[f32], &[u16]) -> f64 + 'p;

/// Works out the step of the unadjusted (`metropolis = false`) or adjusted kernel, checking
/// the draw on the way: the changed list is exactly where `y` differs, the jump is the L1
/// (ordinal) or Hamming (categorical) distance, `log q` of the draw equals `log_q` bit for bit
/// and is not positive.
pub fn expect_step<K: langevin_core::domain::LabelDomain>(
    chain: &LabelChain<'_, K>,
    target: &LabelTabled,
    rng: &ByteRng<'_>,
    metropolis: bool,
    categorical: bool,
    propose: &ProposeFn<'_>,
    log_q: &LogQFn<'_>,
) -> Expected {
    let d = chain.dim();
    let x = chain.state();
    let g = chain.grad();
    let mut r = rng.clone();
    let start = r.words;
    let mut y = vec![0u16; d];
    let mut changed = vec![0u32; d];
    let (k, jump, lq) = propose(x, g, &mut y, &mut changed, &mut r);
    let log_u = libm::log(langevin_core::random::open_unit_f64(&mut r));
    let words = r.words - start;
    assert!(
        y.iter().all(|&v| usize::from(v) < chain.states()),
        "drawn label out of range"
    );
    let differ: Vec<u32> = (0..d as u32)
        .filter(|&i| x[i as usize] != y[i as usize])
        .collect();
    assert_eq!(&changed[..k], &differ[..], "changed list");
    let distance: u64 = x
        .iter()
        .zip(&y)
        .map(|(&a, &b)| {
            if categorical {
                u64::from(a != b)
            } else {
                u64::from(a.abs_diff(b))
            }
        })
        .sum();
    assert_eq!(jump, distance, "jump");
    let again = log_q(x, g, &y);
    assert!(
        lq.to_bits() == again.to_bits() || (lq.is_nan() && again.is_nan()),
        "log q of the draw {lq} vs log_q {again}"
    );
    assert!(lq.is_nan() || lq <= 0.0, "log q {lq} > 0");
    let mut report = StepReport {
        accepted: true,
        proposed_flips: k as u32,
        log_accept_ratio: 0.0,
        rejection: None,
        evaluations: 0,
    };
    if k == 0 {
        return Expected {
            report: Some(report),
            y,
            jump: 0,
            words,
        };
    }
    report.evaluations = 1;
    let eval = target.at(&y);
    let reject = |mut report: StepReport, why| {
        report.accepted = false;
        report.log_accept_ratio = f64::NEG_INFINITY;
        report.rejection = Some(why);
        report
    };
    let report = match eval {
        Err(e) if !e.recoverable => None,
        Err(_) => Some(reject(report, Rejection::TargetError)),
        Ok((u, ref gy)) if !u.is_finite() || gy.iter().any(|v| !v.is_finite()) => {
            Some(reject(report, Rejection::NonFinite))
        }
        Ok((u, ref gy)) => {
            if metropolis {
                let back = log_q(&y, gy, x);
                report.log_accept_ratio = (u - chain.log_density()) + (back - lq);
                report.accepted = log_u < report.log_accept_ratio;
                if report.accepted {
                    assert!(report.log_accept_ratio > crate::drive::MIN_LOG_U);
                }
            }
            Some(report)
        }
    };
    let jump = if report.is_some_and(|r| r.accepted) {
        jump
    } else {
        0
    };
    Expected {
        report,
        y,
        jump,
        words,
    }
}

/// Checks a step's outcome against [`expect_step`]'s.
pub fn check_expected<K: langevin_core::domain::LabelDomain>(
    want: &Expected,
    got: &Result<StepReport, StepError<TableError>>,
    chain: &LabelChain<'_, K>,
    words: u64,
) {
    assert_eq!(words, want.words, "random words per step");
    match (want.report, got) {
        (None, Err(StepError::Target(e))) => assert!(!e.recoverable),
        (Some(w), Ok(r)) => {
            assert_eq!(
                report_bits(&w),
                report_bits(r),
                "report {r:?}, expected {w:?}"
            );
            if r.accepted {
                assert_eq!(chain.state(), &want.y[..], "state after an accepted step");
            }
        }
        (w, g) => panic!("step gave {g:?}, expected {w:?}"),
    }
}
