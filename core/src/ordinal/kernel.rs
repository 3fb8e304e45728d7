//! The unadjusted and Metropolis-adjusted kernels with the ordinal proposal.

use super::proposal::OrdinalProposal;
use crate::domain::Ordinal;
use crate::error::{LenError, ParamError};
use crate::kernel::{Balanced, Drawn, Proposal};
use rand_core::Rng;

/// The unadjusted ordinal kernel: every valid proposal is accepted (biased for `a > 0`; the
/// target may return a stochastic gradient). See [`crate::kernel::Dula`].
pub type Dula<'p> = crate::kernel::Dula<OrdinalProposal<'p>>;

/// The Metropolis-adjusted ordinal kernel: exact for every step, balance and window. See
/// [`crate::kernel::Dmala`].
pub type Dmala<'p> = crate::kernel::Dmala<OrdinalProposal<'p>>;

impl Proposal<Ordinal> for OrdinalProposal<'_> {
    #[inline(always)]
    fn draw<R: Rng + ?Sized>(
        &self,
        x: &[u16],
        grad: &[f32],
        states: usize,
        x_new: &mut [u16],
        changed: &mut [u32],
        _scratch: &mut [f64],
        rng: &mut R,
        _with_log_q: bool,
    ) -> Result<Drawn, LenError> {
        self.propose(x, grad, states, x_new, changed, rng)
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

impl Balanced for Ordinal {
    type Proposal = OrdinalProposal<'static>;
    fn balanced(
        step: f64,
        balance: f64,
        window: Option<u16>,
    ) -> Result<Self::Proposal, ParamError> {
        let p = OrdinalProposal::new(step, balance)?;
        match window {
            Some(w) => p.windowed(w),
            None => Ok(p),
        }
    }
}
