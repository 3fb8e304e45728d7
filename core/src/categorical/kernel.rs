//! The unadjusted and Metropolis-adjusted categorical kernels.

use super::proposal::CategoricalProposal;
use super::target::{CategoricalEval, CategoricalTarget};
use crate::binary::{StepError, StepReport};
use crate::error::LenError;
use crate::ordinal::{CategoricalChain, Drawn, LabelProposal, advance};
use rand_core::Rng;

impl LabelProposal for CategoricalProposal<'_> {
    fn draw<R: Rng + ?Sized>(
        &self,
        x: &[u16],
        grad: &[f32],
        states: usize,
        x_new: &mut [u16],
        changed: &mut [u32],
        scratch: &mut [f64],
        rng: &mut R,
    ) -> Result<Drawn, LenError> {
        self.propose(x, grad, states, x_new, changed, scratch, rng)
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

/// A Markov kernel on categorical chains.
///
/// `&mut self` lets adaptive kernels keep their own state; fixed kernels ignore it.
pub trait CategoricalKernel {
    /// Advances `chain` by one step.
    ///
    /// # Errors
    ///
    /// [`StepError`]; the chain is unchanged on error.
    fn step<T, R>(
        &mut self,
        target: &mut T,
        chain: &mut CategoricalChain<'_>,
        rng: &mut R,
    ) -> Result<StepReport, StepError<T::Error>>
    where
        T: CategoricalTarget + ?Sized,
        R: Rng + ?Sized;
}

/// The unadjusted categorical kernel: every valid proposal is accepted (biased for `a > 0`).
#[derive(Clone, Copy, Debug)]
pub struct Dula<'p> {
    proposal: CategoricalProposal<'p>,
}

/// The Metropolis-adjusted categorical kernel: exact for every step and balance. A step costs
/// one evaluation at the proposal.
#[derive(Clone, Copy, Debug)]
pub struct Dmala<'p> {
    proposal: CategoricalProposal<'p>,
}

impl<'p> Dula<'p> {
    /// The unadjusted kernel with this proposal.
    pub fn new(proposal: CategoricalProposal<'p>) -> Self {
        Self { proposal }
    }

    /// The proposal.
    pub fn proposal(&self) -> &CategoricalProposal<'p> {
        &self.proposal
    }

    /// Advances `chain` by one step. Consumes `⌈d/2⌉ + 1` words of `rng`.
    ///
    /// # Errors
    ///
    /// [`StepError::Len`] if the target's dimension or number of labels, or the preconditioner,
    /// differs from the chain's; [`StepError::Target`] for an unrecoverable target error.
    pub fn step<T, R>(
        &self,
        target: &mut T,
        chain: &mut CategoricalChain<'_>,
        rng: &mut R,
    ) -> Result<StepReport, StepError<T::Error>>
    where
        T: CategoricalTarget + ?Sized,
        R: Rng + ?Sized,
    {
        advance(
            &self.proposal,
            false,
            &mut CategoricalEval(target),
            chain,
            rng,
        )
        .map(|r| r.0)
    }
}

impl<'p> Dmala<'p> {
    /// The Metropolis-adjusted kernel with this proposal.
    pub fn new(proposal: CategoricalProposal<'p>) -> Self {
        Self { proposal }
    }

    /// The proposal.
    pub fn proposal(&self) -> &CategoricalProposal<'p> {
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
        chain: &mut CategoricalChain<'_>,
        rng: &mut R,
    ) -> Result<StepReport, StepError<T::Error>>
    where
        T: CategoricalTarget + ?Sized,
        R: Rng + ?Sized,
    {
        advance(
            &self.proposal,
            true,
            &mut CategoricalEval(target),
            chain,
            rng,
        )
        .map(|r| r.0)
    }

    /// Like [`step`](Self::step), also returning the Hamming distance the chain moved.
    ///
    /// # Errors
    ///
    /// As for [`Dula::step`].
    pub fn step_with_jump<T, R>(
        &self,
        target: &mut T,
        chain: &mut CategoricalChain<'_>,
        rng: &mut R,
    ) -> Result<(StepReport, u64), StepError<T::Error>>
    where
        T: CategoricalTarget + ?Sized,
        R: Rng + ?Sized,
    {
        advance(
            &self.proposal,
            true,
            &mut CategoricalEval(target),
            chain,
            rng,
        )
    }
}

impl CategoricalKernel for Dula<'_> {
    fn step<T, R>(
        &mut self,
        target: &mut T,
        chain: &mut CategoricalChain<'_>,
        rng: &mut R,
    ) -> Result<StepReport, StepError<T::Error>>
    where
        T: CategoricalTarget + ?Sized,
        R: Rng + ?Sized,
    {
        Dula::step(self, target, chain, rng)
    }
}

impl CategoricalKernel for Dmala<'_> {
    fn step<T, R>(
        &mut self,
        target: &mut T,
        chain: &mut CategoricalChain<'_>,
        rng: &mut R,
    ) -> Result<StepReport, StepError<T::Error>>
    where
        T: CategoricalTarget + ?Sized,
        R: Rng + ?Sized,
    {
        Dmala::step(self, target, chain, rng)
    }
}
