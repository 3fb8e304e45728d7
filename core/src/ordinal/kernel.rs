//! The unadjusted and Metropolis-adjusted kernels on label chains, and the ordinal instances.

use super::chain::{Domain, Eval, LabelChain, OrdinalChain, all_finite};
use super::proposal::{Drawn, OrdinalProposal};
use super::target::{LabelMove, OrdinalTarget};
use crate::binary::{Rejection, StepError, StepReport};
use crate::error::LenError;
use crate::random::open_unit_f64;
use crate::target::TargetError;
use rand_core::Rng;

/// An [`OrdinalTarget`] seen through the domain-independent evaluation interface.
pub(crate) struct OrdinalEval<'t, T: ?Sized>(pub(crate) &'t mut T);

impl<T: OrdinalTarget + ?Sized> Eval for OrdinalEval<'_, T> {
    type Error = T::Error;
    fn dim(&self) -> usize {
        self.0.dim()
    }
    fn states(&self) -> usize {
        self.0.states()
    }
    fn eval(&mut self, x: &[u16], grad: &mut [f32]) -> Result<f64, T::Error> {
        self.0.log_density_and_grad(x, grad)
    }
    fn eval_after(&mut self, mv: &LabelMove<'_>, grad: &mut [f32]) -> Result<f64, T::Error> {
        self.0.log_density_and_grad_after(mv, grad)
    }
    fn commit(&mut self) {
        self.0.commit()
    }
}

/// A proposal over labels with an exact `log q`.
pub(crate) trait LabelProposal {
    /// Draws a move into `x_new` / `changed`.
    #[allow(
        clippy::too_many_arguments,
        reason = "the chain's buffers, passed apart"
    )]
    fn draw<R: Rng + ?Sized>(
        &self,
        x: &[u16],
        grad: &[f32],
        states: usize,
        x_new: &mut [u16],
        changed: &mut [u32],
        scratch: &mut [f64],
        rng: &mut R,
    ) -> Result<Drawn, LenError>;

    /// `log q(to | from)`.
    fn reverse_log_q(
        &self,
        from: &[u16],
        grad_from: &[f32],
        states: usize,
        to: &[u16],
        scratch: &mut [f64],
    ) -> Result<f64, LenError>;
}

impl LabelProposal for OrdinalProposal<'_> {
    fn draw<R: Rng + ?Sized>(
        &self,
        x: &[u16],
        grad: &[f32],
        states: usize,
        x_new: &mut [u16],
        changed: &mut [u32],
        _scratch: &mut [f64],
        rng: &mut R,
    ) -> Result<Drawn, LenError> {
        self.propose(x, grad, states, x_new, changed, rng)
    }

    fn reverse_log_q(
        &self,
        from: &[u16],
        grad_from: &[f32],
        states: usize,
        to: &[u16],
        _scratch: &mut [f64],
    ) -> Result<f64, LenError> {
        self.log_q(from, grad_from, states, to)
    }
}

/// One step of the unadjusted or adjusted kernel on any label chain. Returns the report and the
/// L1 jump that took effect. The random stream is consumed identically whatever happens: the
/// proposal's words, then one word for the Metropolis uniform.
pub(crate) fn advance<K, P, E, R>(
    proposal: &P,
    metropolis: bool,
    target: &mut E,
    chain: &mut LabelChain<'_, K>,
    rng: &mut R,
) -> Result<(StepReport, u64), StepError<E::Error>>
where
    K: Domain,
    P: LabelProposal + ?Sized,
    E: Eval + ?Sized,
    R: Rng + ?Sized,
{
    LenError::check("target", chain.dim(), target.dim())?;
    LenError::check("states", chain.states, target.states())?;
    let drawn = proposal.draw(
        chain.x,
        chain.grad,
        chain.states,
        chain.x_proposal,
        chain.changed,
        chain.scratch,
        rng,
    )?;
    let log_u = libm::log(open_unit_f64(rng));
    let mut report = StepReport {
        accepted: true,
        proposed_flips: drawn.changed as u32,
        log_accept_ratio: 0.0,
        rejection: None,
        evaluations: 0,
    };
    if drawn.changed == 0 {
        return Ok((report, 0));
    }
    let mv = LabelMove {
        from: chain.x,
        to: chain.x_proposal,
        changed: chain.changed.get(..drawn.changed).unwrap_or(&[]),
        from_log_density: chain.log_density,
        from_grad: chain.grad,
    };
    report.evaluations = 1;
    let log_density = match target.eval_after(&mv, chain.grad_proposal) {
        Ok(u) => u,
        Err(e) if e.is_recoverable() => return Ok((rejected(report, Rejection::TargetError), 0)),
        Err(e) => return Err(StepError::Target(e)),
    };
    if !log_density.is_finite() || !all_finite(chain.grad_proposal) {
        return Ok((rejected(report, Rejection::NonFinite), 0));
    }
    if metropolis {
        let log_q_reverse = proposal.reverse_log_q(
            chain.x_proposal,
            chain.grad_proposal,
            chain.states,
            chain.x,
            chain.scratch,
        )?;
        report.log_accept_ratio = (log_density - chain.log_density) + (log_q_reverse - drawn.log_q);
        // NaN compares false: rejected.
        report.accepted = log_u < report.log_accept_ratio;
    }
    if report.accepted {
        chain.adopt_proposal(log_density);
        target.commit();
        Ok((report, drawn.jump))
    } else {
        Ok((report, 0))
    }
}

pub(crate) fn rejected(mut report: StepReport, why: Rejection) -> StepReport {
    report.accepted = false;
    report.log_accept_ratio = f64::NEG_INFINITY;
    report.rejection = Some(why);
    report
}

/// A Markov kernel on ordinal chains.
///
/// `&mut self` lets adaptive kernels keep their own state; fixed kernels ignore it.
pub trait OrdinalKernel {
    /// Advances `chain` by one step.
    ///
    /// # Errors
    ///
    /// [`StepError`]; the chain is unchanged on error.
    fn step<T, R>(
        &mut self,
        target: &mut T,
        chain: &mut OrdinalChain<'_>,
        rng: &mut R,
    ) -> Result<StepReport, StepError<T::Error>>
    where
        T: OrdinalTarget + ?Sized,
        R: Rng + ?Sized;
}

/// The unadjusted ordinal kernel: every valid proposal is accepted (biased for `a > 0`; the
/// target may return a stochastic gradient).
#[derive(Clone, Copy, Debug)]
pub struct Dula<'p> {
    proposal: OrdinalProposal<'p>,
}

/// The Metropolis-adjusted ordinal kernel: exact for every step, balance and window.
///
/// `U` and `∇U` at the current state are cached in the chain; a step costs one evaluation at
/// the proposal.
#[derive(Clone, Copy, Debug)]
pub struct Dmala<'p> {
    proposal: OrdinalProposal<'p>,
}

impl<'p> Dula<'p> {
    /// The unadjusted kernel with this proposal.
    pub fn new(proposal: OrdinalProposal<'p>) -> Self {
        Self { proposal }
    }

    /// The proposal.
    pub fn proposal(&self) -> &OrdinalProposal<'p> {
        &self.proposal
    }

    /// Advances `chain` by one step. Consumes `⌈d/2⌉ + 1` words of `rng`.
    ///
    /// # Errors
    ///
    /// [`StepError::Len`] if the target's dimension or number of values, or the preconditioner,
    /// differs from the chain's; [`StepError::Target`] for an unrecoverable target error.
    pub fn step<T, R>(
        &self,
        target: &mut T,
        chain: &mut OrdinalChain<'_>,
        rng: &mut R,
    ) -> Result<StepReport, StepError<T::Error>>
    where
        T: OrdinalTarget + ?Sized,
        R: Rng + ?Sized,
    {
        advance(&self.proposal, false, &mut OrdinalEval(target), chain, rng).map(|r| r.0)
    }
}

impl<'p> Dmala<'p> {
    /// The Metropolis-adjusted kernel with this proposal.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::convert::Infallible;
    /// use langevin_core::ordinal::{Dmala, OrdinalChain, OrdinalProposal, OrdinalStorage, OrdinalTarget};
    /// use rand_core::SeedableRng;
    ///
    /// // A discretised Gaussian around 3 on {0..7}².
    /// struct Bowl;
    /// impl OrdinalTarget for Bowl {
    ///     type Error = Infallible;
    ///     fn dim(&self) -> usize { 2 }
    ///     fn states(&self) -> usize { 8 }
    ///     fn log_density_and_grad(&mut self, x: &[u16], g: &mut [f32]) -> Result<f64, Infallible> {
    ///         let mut u = 0.0;
    ///         for (gi, &xi) in g.iter_mut().zip(x) {
    ///             let r = f64::from(xi) - 3.0;
    ///             *gi = -r as f32;
    ///             u -= 0.5 * r * r;
    ///         }
    ///         Ok(u)
    ///     }
    /// }
    ///
    /// let mut storage = OrdinalStorage::<2, 8>::new([0, 7]);
    /// let mut chain = OrdinalChain::new_ordinal(storage.buffers(), &mut Bowl).unwrap();
    /// let kernel = Dmala::new(OrdinalProposal::new(1.5, 0.5).unwrap());
    /// let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(1);
    /// for _ in 0..50 {
    ///     kernel.step(&mut Bowl, &mut chain, &mut rng).unwrap();
    /// }
    /// assert!(chain.state().iter().all(|&v| v < 8));
    /// ```
    pub fn new(proposal: OrdinalProposal<'p>) -> Self {
        Self { proposal }
    }

    /// The proposal.
    pub fn proposal(&self) -> &OrdinalProposal<'p> {
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
        chain: &mut OrdinalChain<'_>,
        rng: &mut R,
    ) -> Result<StepReport, StepError<T::Error>>
    where
        T: OrdinalTarget + ?Sized,
        R: Rng + ?Sized,
    {
        advance(&self.proposal, true, &mut OrdinalEval(target), chain, rng).map(|r| r.0)
    }

    /// Like [`step`](Self::step), also returning the L1 distance the chain moved.
    ///
    /// # Errors
    ///
    /// As for [`Dula::step`].
    pub fn step_with_jump<T, R>(
        &self,
        target: &mut T,
        chain: &mut OrdinalChain<'_>,
        rng: &mut R,
    ) -> Result<(StepReport, u64), StepError<T::Error>>
    where
        T: OrdinalTarget + ?Sized,
        R: Rng + ?Sized,
    {
        advance(&self.proposal, true, &mut OrdinalEval(target), chain, rng)
    }
}

impl OrdinalKernel for Dula<'_> {
    fn step<T, R>(
        &mut self,
        target: &mut T,
        chain: &mut OrdinalChain<'_>,
        rng: &mut R,
    ) -> Result<StepReport, StepError<T::Error>>
    where
        T: OrdinalTarget + ?Sized,
        R: Rng + ?Sized,
    {
        Dula::step(self, target, chain, rng)
    }
}

impl OrdinalKernel for Dmala<'_> {
    fn step<T, R>(
        &mut self,
        target: &mut T,
        chain: &mut OrdinalChain<'_>,
        rng: &mut R,
    ) -> Result<StepReport, StepError<T::Error>>
    where
        T: OrdinalTarget + ?Sized,
        R: Rng + ?Sized,
    {
        Dmala::step(self, target, chain, rng)
    }
}
