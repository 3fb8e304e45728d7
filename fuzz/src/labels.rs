//! Label chains (ordinal and categorical) on a target with arbitrary tabled energies, gradients
//! and errors, and a driver that checks after every step what holds for every label kernel:
//! entries below `S`, cached `U` and `∇U` finite and equal to the table's, failed and rejected
//! steps change nothing, the coordinates that moved are the report's accepted flips, invalid
//! proposals are reported as rejected with ratio `−∞`.

use crate::drive::{Setup, StepFn, TabledDomain, drive_chain, read_resets};
use crate::{ByteRng, Input, TableError, Tables, valid_params};
use langevin_core::binary::{Rejection, StepError, StepReport};
use langevin_core::categorical::{CategoricalConditional, CategoricalProposal, CategoricalTarget};
use langevin_core::kernel::{Dmala, Dula, Proposal};
use langevin_core::ordinal::{
    CategoricalDomain, LabelChain, OrdinalConditional, OrdinalDomain, OrdinalProposal,
    OrdinalTarget,
};
use langevin_core::{Kernel, ParamError};

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
    tables: Tables,
}

impl LabelTabled {
    /// Reads the tables from `input`.
    pub fn read(dim: usize, states: usize, grad_len: usize, input: &mut Input<'_>) -> Self {
        let tables = Tables::read(input);
        Self {
            dim,
            states,
            grad_len,
            tables,
        }
    }

    /// `(U(x), ∇U(x))` or the error at `x`.
    pub fn at(&self, x: &[u16]) -> Result<(f64, Vec<f32>), TableError> {
        let h = Tables::hash(x.iter().flat_map(|v| v.to_le_bytes()));
        self.tables.lookup(h, self.grad_len)
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

/// The ordinal and categorical traits read the tabled target alike.
macro_rules! label_target {
    ($($target:ident + $conditional:ident),+) => {$(
        impl $target for LabelTabled {
            type Error = TableError;
            fn dim(&self) -> usize {
                self.dim
            }
            fn states(&self) -> usize {
                self.states
            }
            fn log_density_and_grad(
                &mut self,
                x: &[u16],
                grad: &mut [f32],
            ) -> Result<f64, TableError> {
                self.eval(x, grad)
            }
        }

        impl $conditional for LabelTabled {
            fn conditional(
                &mut self,
                x: &[u16],
                i: usize,
                out: &mut [f64],
            ) -> Result<(), TableError> {
                self.conditional_of(x, i, out)
            }
        }
    )+};
}

label_target!(
    OrdinalTarget + OrdinalConditional,
    CategoricalTarget + CategoricalConditional
);

/// The two label domains, seen alike.
pub trait LabelDomain:
    langevin_core::domain::LabelDomain + TabledDomain<Target = LabelTabled>
{
    /// Whether the gradient is one-hot (`d·S` entries).
    const CATEGORICAL: bool = Self::ONE_HOT;
}

impl LabelDomain for OrdinalDomain {}

impl LabelDomain for CategoricalDomain {}

/// The part of a case every label kernel shares.
pub type LabelSetup = Setup<u16, LabelTabled>;

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
        let resets = read_resets(input, max_steps, |input| {
            (0..d).map(|_| label(input)).collect()
        });
        Self {
            d,
            s,
            x0,
            target,
            resets,
        }
    }
}

/// A step function: step index, target, chain, random stream.
pub type LabelStepFn<'k, K> = StepFn<'k, K>;

/// The observable bits of a report.
pub fn report_bits(r: &StepReport) -> [u64; 5] {
    crate::drive::report_bits(r)
}

/// Runs `setup` with `step` and the random stream `rng`; returns a transcript
/// ([`drive_chain`]).
pub fn drive<K: LabelDomain>(
    setup: LabelSetup,
    rng: ByteRng<'_>,
    step: &mut LabelStepFn<'_, K>,
) -> Vec<u64> {
    drive_chain::<K>(setup, rng, step)
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

/// Runs a balanced proposal's DULA (`metropolis = false`) or DMALA kernel on `run.setup`, calling it
/// every way there is (inherent `step`, [`Kernel::step`], `step_with_jump`) by turns, and checks
/// every step against [`expect_step`]'s replay with `propose` and `log_q`, the jump too.
pub fn drive_balanced<K: LabelDomain, P: Proposal<K> + Copy>(
    run: BalancedRun<'_>,
    proposal: P,
    propose: &ProposeFn<'_>,
    log_q: &LogQFn<'_>,
) -> Vec<u64>
where
    LabelTabled: langevin_core::target::Eval<K, Error = TableError>,
{
    let BalancedRun {
        setup,
        metropolis,
        rng,
    } = run;
    let mut dula = Dula::new(proposal);
    let mut dmala = Dmala::new(proposal);
    drive::<K>(setup, rng, &mut |t, target, chain, rng| {
        let want = expect_step(
            chain,
            target,
            rng,
            metropolis,
            K::CATEGORICAL,
            propose,
            log_q,
        );
        let before = rng.words;
        let (got, jump) = match (metropolis, t % 3) {
            (true, 0) => (dmala.step(target, chain, rng), None),
            (true, 1) => (Kernel::step(&mut dmala, target, chain, rng), None),
            (true, _) => match dmala.step_with_jump(target, chain, rng) {
                Ok((r, j)) => (Ok(r), Some(j)),
                Err(e) => (Err(e), None),
            },
            (false, 0) => (dula.step(target, chain, rng), None),
            (false, _) => (Kernel::step(&mut dula, target, chain, rng), None),
        };
        check_expected(&want, &got, chain, rng.words - before);
        if let Some(j) = jump {
            assert_eq!(j, want.jump, "jump");
        }
        got
    })
}

/// A label proposal `p` at `step`, preconditioned by `pre` if given: asserts that
/// `preconditioned` accepts exactly the preconditioners whose entries are positive and finite
/// and keep `step · p²` positive and finite; `None` if it refuses.
pub fn checked_preconditioned<'q, P, E>(
    p: P,
    step: f64,
    pre: Option<&'q [f32]>,
    preconditioned: impl FnOnce(P, &'q [f32]) -> Result<P, E>,
) -> Option<P> {
    let Some(pre) = pre else { return Some(p) };
    let q = preconditioned(p, pre);
    let valid = pre.iter().all(|&pi| {
        let scaled = step * f64::from(pi) * f64::from(pi);
        pi.is_finite() && pi > 0.0 && scaled.is_finite() && scaled > 0.0
    });
    assert_eq!(q.is_ok(), valid, "preconditioner {pre:?}");
    q.ok()
}

/// What the balanced label targets (ordinal and categorical) read, in input order: the setup,
/// step and balance, a preconditioner one time in four, the kernel, then the random stream.
pub struct BalancedCase<'a> {
    /// The proposal's step.
    pub step: f64,
    /// The proposal's balance.
    pub balance: f64,
    /// The preconditioner, if any.
    pub pre: Option<Vec<f32>>,
    /// What [`drive_balanced`] runs the proposal on.
    pub run: BalancedRun<'a>,
}

/// A balanced label case without its proposal: the chain's setup, the kernel, the stream.
pub struct BalancedRun<'a> {
    /// The chain's setup.
    pub setup: LabelSetup,
    /// DMALA (`true`) or DULA.
    pub metropolis: bool,
    /// The random stream.
    pub rng: ByteRng<'a>,
}

impl<'a> BalancedCase<'a> {
    /// Reads a case from `data` ([`LabelSetup::read`] with up to 16 steps); `extra` reads what
    /// one proposal needs besides step and balance (the ordinal window) right after them.
    pub fn read<W>(
        data: &'a [u8],
        categorical: bool,
        max_d: usize,
        max_s: usize,
        extra: impl FnOnce(&mut Input<'a>) -> W,
    ) -> (Self, W) {
        let mut input = Input::new(data);
        let setup = LabelSetup::read(&mut input, categorical, max_d, max_s, 16);
        let d = setup.d;
        let step = input.f64();
        let balance = input.f64();
        let more = extra(&mut input);
        let pre: Option<Vec<f32>> = input
            .u8()
            .is_multiple_of(4)
            .then(|| (0..d).map(|_| input.f32()).collect());
        let metropolis = input.bool();
        let rng = ByteRng::new(input.rest());
        let case = Self {
            step,
            balance,
            pre,
            run: BalancedRun {
                setup,
                metropolis,
                rng,
            },
        };
        (case, more)
    }
}

/// The balanced label proposals, built alike.
pub trait BalancedLabel<'q>: Sized {
    /// The proposal at `step` and `balance` over the full range, without preconditioner.
    fn balanced(step: f64, balance: f64) -> Result<Self, ParamError>;
    /// The proposal preconditioned by `pre`.
    fn with_preconditioner(self, pre: &'q [f32]) -> Result<Self, ParamError>;
    /// `(step, balance)` as kept.
    fn params(&self) -> (f64, f64);
}

macro_rules! balanced_label {
    ($($proposal:ident),+) => {$(
        impl<'q> BalancedLabel<'q> for $proposal<'q> {
            fn balanced(step: f64, balance: f64) -> Result<Self, ParamError> {
                $proposal::new(step, balance)
            }
            fn with_preconditioner(self, pre: &'q [f32]) -> Result<Self, ParamError> {
                self.preconditioned(pre)
            }
            fn params(&self) -> (f64, f64) {
                (self.step(), self.balance())
            }
        }
    )+};
}

balanced_label!(OrdinalProposal, CategoricalProposal);

/// The proposal at `step` and `balance`, narrowed by `adjust` (`None` if that refuses) and
/// preconditioned by `pre` ([`checked_preconditioned`]): asserts that the constructor accepts
/// exactly the valid step and balance and that both come through bit for bit.
pub fn checked_balanced<'q, P: BalancedLabel<'q>>(
    step: f64,
    balance: f64,
    pre: Option<&'q [f32]>,
    adjust: impl FnOnce(P) -> Option<P>,
) -> Option<P> {
    let p = P::balanced(step, balance);
    assert_eq!(p.is_ok(), valid_params(step, balance), "{step} {balance}");
    let p = adjust(p.ok()?)?;
    let p = checked_preconditioned(p, step, pre, P::with_preconditioner)?;
    let (got_step, got_balance) = p.params();
    assert_eq!(
        (got_step.to_bits(), got_balance.to_bits()),
        (step.to_bits(), balance.to_bits())
    );
    Some(p)
}
