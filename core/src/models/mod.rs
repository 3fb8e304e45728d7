//! Binary models with incremental updates after a move.
//!
//! * [`IsingLattice`]: a 2-D nearest-neighbour Ising model, sized at compile time
//!   ([`ConstDims`]) or at run time ([`Dims`]), needing no buffers at all.
//! * [`IsingGraph`]: an Ising model on any graph given in compressed adjacency form.
//! * [`BinaryQuadratic`]: `U(x) = xᵀWx + bᵀx` over caller slices.
//! * [`BinaryLogistic`]: Bayesian logistic regression over binary coefficients.
//! * [`Rbm`]: a restricted Boltzmann machine with the hidden units summed out, caching the
//!   hidden pre-activations; [`RbmBatch`] evaluates it for many chains at once, its gradients
//!   one matrix–matrix product.
//!
//! After a move only the flipped coordinates' neighbours (lattice, graph), columns (quadratic)
//! or hidden pre-activations (RBM) are touched.

use crate::error::LenError;

mod ising_graph;
mod ising_lattice;
mod logistic;
mod quadratic;
mod rbm;
mod rbm_batch;

pub use ising_graph::IsingGraph;
pub use ising_lattice::{ConstDims, Dims, IsingLattice, LatticeDims};
pub use logistic::BinaryLogistic;
pub use quadratic::BinaryQuadratic;
pub use rbm::Rbm;
pub use rbm_batch::RbmBatch;

/// A vector cached per state (linear predictors, a gradient, hidden pre-activations) for the
/// current state and a proposed one, in one caller buffer of `2n` doubles: a move fills the
/// proposal, a commit makes it current.
#[derive(Debug)]
struct Cache<'a> {
    current: &'a mut [f64],
    proposal: &'a mut [f64],
}

impl<'a> Cache<'a> {
    /// Splits `buf`, which must hold `2n` doubles.
    fn new(buf: &'a mut [f64], n: usize) -> Result<Self, LenError> {
        let expected = n.saturating_mul(2);
        let found = buf.len();
        LenError::check("cache", expected, found)?;
        match buf.split_at_mut_checked(n) {
            Some((current, proposal)) => Ok(Self { current, proposal }),
            None => Err(LenError {
                buffer: "cache",
                expected,
                found,
            }),
        }
    }

    /// The proposal, set to a copy of the current vector.
    fn propose(&mut self) -> &mut [f64] {
        crate::slices::copy(self.proposal, self.current);
        self.proposal
    }

    /// Makes the proposal current.
    fn commit(&mut self) {
        core::mem::swap(&mut self.current, &mut self.proposal);
    }
}

/// The spin change `s' − s` of a coordinate going from `from` to `to` (`s = 2x − 1`).
#[inline(always)]
fn spin_delta(from: u8, to: u8) -> f32 {
    2.0 * (f32::from(to) - f32::from(from))
}

/// The spin change of coordinate `i` under the move, if the move covers `i`.
#[inline(always)]
fn spin_change(mv: &crate::target::FlipMove<'_>, i: usize) -> Option<f32> {
    match (mv.from.get(i), mv.to.get(i)) {
        (Some(&from), Some(&to)) => Some(spin_delta(from, to)),
        _ => None,
    }
}

/// The per-flip update of a model whose gradient changes only near the flipped sites (the
/// Ising models): `grad` starts as the gradient before the move, then `flip(i, δ_i, grad)` is
/// called for each flipped site `i` in flip order with its spin change `δ_i`; it refreshes the
/// gradient entries it touches and returns its share of `ΔU`, summed in flip order. Returns the
/// log-density after the move, or `None`, leaving `grad` alone, when the move flips more than
/// one site in eight: a fresh evaluation is then cheaper than the per-flip updates (this also
/// bounds the cost of a step whatever the inputs).
#[inline(always)]
fn local_update(
    mv: &crate::target::FlipMove<'_>,
    grad: &mut [f32],
    dim: usize,
    mut flip: impl FnMut(usize, f32, &mut [f32]) -> f64,
) -> Option<f64> {
    if mv.flipped.len() * 8 > dim {
        return None;
    }
    for (g, &f) in grad.iter_mut().zip(mv.from_grad) {
        *g = f;
    }
    let mut delta_u = 0.0f64;
    for &i in mv.flipped {
        let i = i as usize;
        if let Some(delta) = spin_change(mv, i) {
            delta_u += flip(i, delta, grad);
        }
    }
    Some(mv.from_log_density + delta_u)
}
