//! The unadjusted (DULA) and Metropolis-adjusted (DMALA) kernels with the flip proposal.

use super::proposal::FlipProposal;
use crate::domain::Binary;
use crate::error::{LenError, ParamError};
use crate::kernel::{Balanced, Drawn, Proposal};
use crate::math::{FlipMath, Libm};
use rand_core::Rng;

/// The discrete unadjusted Langevin kernel on binary states (see [`crate::kernel::Dula`]).
pub type Dula<'p, M = Libm> = crate::kernel::Dula<FlipProposal<'p, M>>;

/// The discrete Metropolis-adjusted Langevin kernel on binary states (see
/// [`crate::kernel::Dmala`]).
pub type Dmala<'p, M = Libm> = crate::kernel::Dmala<FlipProposal<'p, M>>;

impl<M: FlipMath> Proposal<Binary> for FlipProposal<'_, M> {
    #[inline(always)]
    fn draw<R: Rng + ?Sized>(
        &self,
        x: &[u8],
        grad: &[f32],
        _states: usize,
        x_new: &mut [u8],
        changed: &mut [u32],
        _scratch: &mut [f64],
        rng: &mut R,
        with_log_q: bool,
    ) -> Result<Drawn, LenError> {
        let (flips, log_q) = if with_log_q {
            self.propose(x, grad, x_new, changed, rng)?
        } else {
            // The unadjusted kernel never uses the forward log q.
            (self.propose_flips(x, grad, x_new, changed, rng)?, 0.0)
        };
        Ok(Drawn {
            changed: flips,
            jump: flips as u64,
            log_q,
        })
    }

    #[inline(always)]
    fn reverse_log_q(
        &self,
        from: &[u8],
        grad_from: &[f32],
        _states: usize,
        to: &[u8],
        _scratch: &mut [f64],
    ) -> Result<f64, LenError> {
        self.log_q(from, grad_from, to)
    }
}

impl Balanced for Binary {
    type Proposal = FlipProposal<'static>;
    fn balanced(
        step: f64,
        balance: f64,
        _window: Option<u16>,
    ) -> Result<Self::Proposal, ParamError> {
        FlipProposal::new(step, balance)
    }
}
