//! The unadjusted (DULA) and Metropolis-adjusted (DMALA) kernels.

use super::chain::{BinaryChain, all_finite};
use super::proposal::FlipProposal;
use crate::error::LenError;
use crate::math::{FlipMath, Libm};
use crate::random::open_unit_f64;
use crate::target::{BinaryTarget, FlipMove, TargetError};
use core::fmt;
use rand_core::Rng;

/// Why a step kept the chain where it was, other than losing the Metropolis test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rejection {
    /// The target returned a non-finite log-density or gradient at the proposal.
    NonFinite,
    /// The target returned a recoverable error at the proposal.
    TargetError,
}

/// What one step did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepReport {
    /// Whether the chain moved to the proposal (a proposal with no flips counts as accepted).
    pub accepted: bool,
    /// How many coordinates the proposal flipped.
    pub proposed_flips: u32,
    /// The log Metropolis–Hastings ratio; `0` for unadjusted kernels and empty proposals,
    /// `−∞` or NaN when the proposal was invalid.
    pub log_accept_ratio: f64,
    /// Set when the proposal was invalid rather than merely unlucky.
    pub rejection: Option<Rejection>,
    /// Target evaluations (log-density with gradient) this step spent: 0 or 1.
    pub evaluations: u32,
}

impl StepReport {
    /// Flips that took effect: `proposed_flips` if accepted, else 0.
    pub fn accepted_flips(&self) -> u32 {
        if self.accepted {
            self.proposed_flips
        } else {
            0
        }
    }
}

/// Why a step could not be taken. The chain is left unchanged.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum StepError<E> {
    /// The chain, the target or the preconditioner disagree on the dimension.
    Len(LenError),
    /// The target returned an unrecoverable error.
    Target(E),
}

impl<E: fmt::Display> fmt::Display for StepError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StepError::Len(e) => e.fmt(f),
            StepError::Target(e) => write!(f, "target failed: {e}"),
        }
    }
}

impl<E: fmt::Debug + fmt::Display> core::error::Error for StepError<E> {}

impl<E> From<LenError> for StepError<E> {
    fn from(e: LenError) -> Self {
        StepError::Len(e)
    }
}

/// A Markov kernel on binary chains: anything that can advance a [`BinaryChain`] by one step.
///
/// `&mut self` lets adaptive kernels (step-size tuners, cyclical schedules) keep their own
/// state; fixed kernels such as [`Dmala`] ignore it. Implementations must consume the random
/// stream in a way that does not depend on the thread a chain runs on.
pub trait BinaryKernel {
    /// Advances `chain` by one step.
    ///
    /// # Errors
    ///
    /// [`StepError`]; the chain is unchanged on error.
    fn step<T, R>(
        &mut self,
        target: &mut T,
        chain: &mut BinaryChain<'_>,
        rng: &mut R,
    ) -> Result<StepReport, StepError<T::Error>>
    where
        T: BinaryTarget + ?Sized,
        R: Rng + ?Sized;
}

/// The discrete unadjusted Langevin kernel: every valid proposal is accepted.
///
/// One gradient per step and no log-density is needed, so the target may return an unbiased
/// minibatch estimate of `∇U` (and any finite value, such as 0, for `U`). The chain's law
/// converges to a stationary `π_a` that differs from `π` for `a > 0`; for log-quadratic targets the
/// difference vanishes like `exp(−1/(2a))` as `a → 0`.
///
/// A proposal whose gradient (or returned `U`) is not finite is rejected and reported.
#[derive(Clone, Copy, Debug)]
pub struct Dula<'p, M: FlipMath = Libm> {
    proposal: FlipProposal<'p, M>,
}

/// The discrete Metropolis-adjusted Langevin kernel: the flip proposal followed by a
/// Metropolis–Hastings test, exact for every step and balance.
///
/// `U` and `∇U` of the current state are cached in the chain, so a step costs one evaluation at
/// the proposal. A proposal whose log-density or gradient is not finite, or at which the target
/// returns a recoverable error, is rejected and reported.
#[derive(Clone, Copy, Debug)]
pub struct Dmala<'p, M: FlipMath = Libm> {
    proposal: FlipProposal<'p, M>,
}

impl<'p, M: FlipMath> Dula<'p, M> {
    /// The unadjusted kernel with this proposal.
    pub fn new(proposal: FlipProposal<'p, M>) -> Self {
        Self { proposal }
    }

    /// The proposal.
    pub fn proposal(&self) -> &FlipProposal<'p, M> {
        &self.proposal
    }

    /// Advances `chain` by one step. Consumes `⌈d/2⌉ + 1` words of `rng`.
    ///
    /// # Errors
    ///
    /// [`StepError::Len`] if the target or preconditioner dimension differs from the chain's;
    /// [`StepError::Target`] for an unrecoverable target error. The chain is unchanged then.
    pub fn step<T, R>(
        &self,
        target: &mut T,
        chain: &mut BinaryChain<'_>,
        rng: &mut R,
    ) -> Result<StepReport, StepError<T::Error>>
    where
        T: BinaryTarget + ?Sized,
        R: Rng + ?Sized,
    {
        advance(&self.proposal, false, target, chain, rng)
    }
}

impl<'p, M: FlipMath> Dmala<'p, M> {
    /// The Metropolis-adjusted kernel with this proposal.
    pub fn new(proposal: FlipProposal<'p, M>) -> Self {
        Self { proposal }
    }

    /// The proposal.
    pub fn proposal(&self) -> &FlipProposal<'p, M> {
        &self.proposal
    }

    /// Advances `chain` by one step. Consumes `⌈d/2⌉ + 1` words of `rng`.
    ///
    /// # Errors
    ///
    /// As for [`Dula::step`].
    pub fn step<T, R>(
        &self,
        target: &mut T,
        chain: &mut BinaryChain<'_>,
        rng: &mut R,
    ) -> Result<StepReport, StepError<T::Error>>
    where
        T: BinaryTarget + ?Sized,
        R: Rng + ?Sized,
    {
        advance(&self.proposal, true, target, chain, rng)
    }
}

/// One step of either kernel. The random stream is consumed identically whatever happens.
fn advance<M, T, R>(
    proposal: &FlipProposal<'_, M>,
    metropolis: bool,
    target: &mut T,
    chain: &mut BinaryChain<'_>,
    rng: &mut R,
) -> Result<StepReport, StepError<T::Error>>
where
    M: FlipMath,
    T: BinaryTarget + ?Sized,
    R: Rng + ?Sized,
{
    LenError::check("target", chain.dim(), target.dim())?;
    let (flips, log_q_forward) = if metropolis {
        proposal.propose(chain.x, chain.grad, chain.x_proposal, chain.flipped, rng)?
    } else {
        // DULA never uses the forward log q.
        let flips =
            proposal.propose_flips(chain.x, chain.grad, chain.x_proposal, chain.flipped, rng)?;
        (flips, 0.0)
    };
    let log_u = libm::log(open_unit_f64(rng));
    let mut report = StepReport {
        accepted: true,
        proposed_flips: flips as u32,
        log_accept_ratio: 0.0,
        rejection: None,
        evaluations: 0,
    };
    if flips == 0 {
        // The proposal is the current state: nothing to evaluate, nothing changes.
        return Ok(report);
    }
    let mv = FlipMove {
        from: chain.x,
        to: chain.x_proposal,
        flipped: chain.flipped.get(..flips).unwrap_or(&[]),
        from_log_density: chain.log_density,
        from_grad: chain.grad,
    };
    report.evaluations = 1;
    let log_density = match target.log_density_and_grad_after(&mv, chain.grad_proposal) {
        Ok(u) => u,
        Err(e) if e.is_recoverable() => {
            return Ok(rejected(report, Rejection::TargetError));
        }
        Err(e) => return Err(StepError::Target(e)),
    };
    if !log_density.is_finite() || !all_finite(chain.grad_proposal) {
        return Ok(rejected(report, Rejection::NonFinite));
    }
    if metropolis {
        let log_q_reverse = proposal.log_q(chain.x_proposal, chain.grad_proposal, chain.x)?;
        report.log_accept_ratio =
            (log_density - chain.log_density) + (log_q_reverse - log_q_forward);
        // NaN compares false: rejected.
        report.accepted = log_u < report.log_accept_ratio;
    }
    if report.accepted {
        chain.adopt_proposal(log_density);
        target.commit();
    }
    Ok(report)
}

fn rejected(mut report: StepReport, why: Rejection) -> StepReport {
    report.accepted = false;
    report.log_accept_ratio = f64::NEG_INFINITY;
    report.rejection = Some(why);
    report
}

impl<M: FlipMath> BinaryKernel for Dula<'_, M> {
    fn step<T, R>(
        &mut self,
        target: &mut T,
        chain: &mut BinaryChain<'_>,
        rng: &mut R,
    ) -> Result<StepReport, StepError<T::Error>>
    where
        T: BinaryTarget + ?Sized,
        R: Rng + ?Sized,
    {
        Dula::step(self, target, chain, rng)
    }
}

impl<M: FlipMath> BinaryKernel for Dmala<'_, M> {
    fn step<T, R>(
        &mut self,
        target: &mut T,
        chain: &mut BinaryChain<'_>,
        rng: &mut R,
    ) -> Result<StepReport, StepError<T::Error>>
    where
        T: BinaryTarget + ?Sized,
        R: Rng + ?Sized,
    {
        Dmala::step(self, target, chain, rng)
    }
}
