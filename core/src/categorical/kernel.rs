//! The unadjusted and Metropolis-adjusted kernels with the categorical proposal.

use super::proposal::CategoricalProposal;
use crate::domain::Categorical;
use crate::error::{LenError, ParamError};
use crate::kernel::{Balanced, Drawn, Proposal};
use rand_core::Rng;

/// The unadjusted categorical kernel: every valid proposal is accepted (biased for `a > 0`).
/// See [`crate::kernel::Dula`].
pub type Dula<'p> = crate::kernel::Dula<CategoricalProposal<'p>>;

/// The Metropolis-adjusted categorical kernel: exact for every step and balance. See
/// [`crate::kernel::Dmala`].
pub type Dmala<'p> = crate::kernel::Dmala<CategoricalProposal<'p>>;

impl Proposal<Categorical> for CategoricalProposal<'_> {
    #[inline(always)]
    fn draw<R: Rng + ?Sized>(
        &self,
        x: &[u16],
        grad: &[f32],
        states: usize,
        x_new: &mut [u16],
        changed: &mut [u32],
        scratch: &mut [f64],
        rng: &mut R,
        _with_log_q: bool,
    ) -> Result<Drawn, LenError> {
        self.propose(x, grad, states, x_new, changed, scratch, rng)
    }

    #[inline(always)]
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

impl Balanced for Categorical {
    type Proposal = CategoricalProposal<'static>;
    fn balanced(
        step: f64,
        balance: f64,
        _window: Option<u16>,
    ) -> Result<Self::Proposal, ParamError> {
        CategoricalProposal::new(step, balance)
    }
}
