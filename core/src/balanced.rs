//! The balanced proposal of each domain (Zhang, Liu & Liu 2022; Sun et al. 2023) as a
//! [`Proposal`], and the [`Balanced`] family the tuners build from.

use crate::binary::FlipProposal;
use crate::categorical::CategoricalProposal;
use crate::chain::Chain;
use crate::domain::{Binary, Categorical, Ordinal};
use crate::error::{LenError, ParamError};
use crate::kernel::{Balanced, Drawn, Proposal};
use crate::math::FlipMath;
use crate::ordinal::OrdinalProposal;
use rand_core::Rng;

// The flip proposal works in blocks of fixed-size arrays: drawing, drawing without `log q` and
// `log q` stay separate calls, so that their arrays never share one stack frame. On x86-64 they
// are inlined into the kernel step instead, so that they are compiled for the instruction set a
// runner picks at run time (stack is plentiful there).
impl<M: FlipMath> Proposal<Binary> for FlipProposal<'_, M> {
    #[cfg_attr(target_arch = "x86_64", inline(always))]
    fn draw<R: Rng + ?Sized>(
        &self,
        c: &mut Chain<'_, Binary>,
        rng: &mut R,
        with_log_q: bool,
    ) -> Result<Drawn, LenError> {
        let (flips, log_q) = if with_log_q {
            self.propose(c.x, c.grad, c.x_proposal, c.changed, rng)?
        } else {
            // The unadjusted kernel never uses the forward log q.
            let flips = self.propose_flips(c.x, c.grad, c.x_proposal, c.changed, rng)?;
            (flips, 0.0)
        };
        Ok(Drawn {
            changed: flips,
            jump: flips as u64,
            log_q,
        })
    }

    #[cfg_attr(target_arch = "x86_64", inline(always))]
    fn reverse_log_q(&self, c: &mut Chain<'_, Binary>) -> Result<f64, LenError> {
        self.log_q(c.x_proposal, c.grad_proposal, c.x)
    }
}

impl Proposal<Ordinal> for OrdinalProposal<'_> {
    #[inline(always)]
    fn draw<R: Rng + ?Sized>(
        &self,
        c: &mut Chain<'_, Ordinal>,
        rng: &mut R,
        _with_log_q: bool,
    ) -> Result<Drawn, LenError> {
        self.propose(c.x, c.grad, c.states, c.x_proposal, c.changed, rng)
    }

    #[inline(always)]
    fn reverse_log_q(&self, c: &mut Chain<'_, Ordinal>) -> Result<f64, LenError> {
        self.log_q(c.x_proposal, c.grad_proposal, c.states, c.x)
    }
}

impl Proposal<Categorical> for CategoricalProposal<'_> {
    #[inline(always)]
    fn draw<R: Rng + ?Sized>(
        &self,
        c: &mut Chain<'_, Categorical>,
        rng: &mut R,
        _with_log_q: bool,
    ) -> Result<Drawn, LenError> {
        let (x, grad, s) = (&*c.x, &*c.grad, c.states);
        self.propose(x, grad, s, c.x_proposal, c.changed, c.scratch, rng)
    }

    #[inline(always)]
    fn reverse_log_q(&self, c: &mut Chain<'_, Categorical>) -> Result<f64, LenError> {
        self.log_q(c.x_proposal, c.grad_proposal, c.states, c.x)
    }
}

impl Balanced for Binary {
    type Proposal = FlipProposal<'static>;
    fn balanced(a: f64, b: f64, _window: Option<u16>) -> Result<Self::Proposal, ParamError> {
        FlipProposal::new(a, b)
    }
}

impl Balanced for Ordinal {
    type Proposal = OrdinalProposal<'static>;
    fn balanced(a: f64, b: f64, window: Option<u16>) -> Result<Self::Proposal, ParamError> {
        let p = OrdinalProposal::new(a, b)?;
        window.map_or(Ok(p), |w| p.windowed(w))
    }
}

impl Balanced for Categorical {
    type Proposal = CategoricalProposal<'static>;
    fn balanced(a: f64, b: f64, _window: Option<u16>) -> Result<Self::Proposal, ParamError> {
        CategoricalProposal::new(a, b)
    }
}
