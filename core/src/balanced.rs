//! The balanced proposal of each domain (Zhang, Liu & Liu 2022; Sun et al. 2023) as a
//! [`Proposal`] (and, for binary and ordinal states, a [`RowProposal`] for batches), and the
//! [`Balanced`] family the tuners build from.

use crate::batch::RowProposal;
use crate::binary::FlipProposal;
use crate::categorical::CategoricalProposal;
use crate::chain::Chain;
use crate::domain::{Binary, Categorical, Domain, Ordinal};
use crate::error::{LenError, ParamError};
use crate::kernel::{Balanced, Drawn, Proposal};
use crate::math::FlipMath;
use crate::ordinal::OrdinalProposal;
use rand_core::Rng;

// A chain's draw is the draw of its rows: one implementation serves single chains and batches.
// Inlined on x86-64 only, as the flip proposal's calls are (see below): on 32-bit targets a
// forced inline lets the draw's arrays share the step's stack frame.
impl<D: Domain, P: RowProposal<D>> Proposal<D> for P {
    #[cfg_attr(target_arch = "x86_64", inline(always))]
    fn draw<R: Rng + ?Sized>(
        &self,
        c: &mut Chain<'_, D>,
        rng: &mut R,
        with_log_q: bool,
    ) -> Result<Drawn, LenError> {
        self.draw_row(
            c.x,
            c.grad,
            c.states,
            c.x_proposal,
            c.changed,
            rng,
            with_log_q,
        )
    }

    #[cfg_attr(target_arch = "x86_64", inline(always))]
    fn reverse_log_q(&self, c: &mut Chain<'_, D>) -> Result<f64, LenError> {
        self.log_q_row(c.x_proposal, c.grad_proposal, c.states, c.x)
    }
}

// The flip proposal works in blocks of fixed-size arrays: drawing, drawing without `log q` and
// `log q` stay separate calls, so that their arrays never share one stack frame. On x86-64 they
// are inlined into the kernel step instead, so that they are compiled for the instruction set a
// runner picks at run time (stack is plentiful there).
impl<M: FlipMath> RowProposal<Binary> for FlipProposal<'_, M> {
    #[inline(always)]
    fn check_rows(&self, d: usize) -> Result<(), LenError> {
        self.check_dim(d)
    }

    #[cfg_attr(target_arch = "x86_64", inline(always))]
    fn draw_row<R: Rng + ?Sized>(
        &self,
        x: &[u8],
        grad: &[f32],
        _states: usize,
        x_new: &mut [u8],
        changed: &mut [u32],
        rng: &mut R,
        with_log_q: bool,
    ) -> Result<Drawn, LenError> {
        let (flips, log_q) = if with_log_q {
            self.propose(x, grad, x_new, changed, rng)?
        } else {
            // The unadjusted kernel never uses the forward log q.
            (self.propose_flips(x, grad, x_new, changed, rng)?, 0.0)
        };
        Ok(Drawn::hamming(flips, log_q))
    }

    #[cfg_attr(target_arch = "x86_64", inline(always))]
    fn log_q_row(
        &self,
        from: &[u8],
        grad_from: &[f32],
        _states: usize,
        to: &[u8],
    ) -> Result<f64, LenError> {
        self.log_q(from, grad_from, to)
    }
}

impl RowProposal<Ordinal> for OrdinalProposal<'_> {
    #[inline(always)]
    fn check_rows(&self, d: usize) -> Result<(), LenError> {
        self.check(d)
    }

    /// Evaluates `log q` whatever `with_log_q` says (the draw computes it anyway).
    #[inline(always)]
    fn draw_row<R: Rng + ?Sized>(
        &self,
        x: &[u16],
        grad: &[f32],
        states: usize,
        x_new: &mut [u16],
        changed: &mut [u32],
        rng: &mut R,
        _with_log_q: bool,
    ) -> Result<Drawn, LenError> {
        self.propose(x, grad, states, x_new, changed, rng)
    }

    #[inline(always)]
    fn log_q_row(
        &self,
        from: &[u16],
        grad_from: &[f32],
        states: usize,
        to: &[u16],
    ) -> Result<f64, LenError> {
        self.log_q(from, grad_from, states, to)
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
