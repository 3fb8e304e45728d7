//! Binary models with incremental updates after a move.
//!
//! * [`IsingLattice`]: a 2-D nearest-neighbour Ising model, sized at compile time
//!   ([`ConstDims`]) or at run time ([`Dims`]), needing no buffers at all.
//! * [`IsingGraph`]: an Ising model on any graph given in compressed adjacency form.
//! * [`BinaryQuadratic`]: `U(x) = xᵀWx + bᵀx` over caller slices.
//! * [`BinaryLogistic`]: Bayesian logistic regression over binary coefficients.
//! * [`Rbm`]: a restricted Boltzmann machine with the hidden units summed out, caching the
//!   hidden pre-activations.
//!
//! After a move only the flipped coordinates' neighbours (lattice, graph), columns (quadratic)
//! or hidden pre-activations (RBM) are touched.

mod ising_graph;
mod ising_lattice;
mod logistic;
mod quadratic;
mod rbm;

pub use ising_graph::IsingGraph;
pub use ising_lattice::{ConstDims, Dims, IsingLattice, LatticeDims};
pub use logistic::BinaryLogistic;
pub use quadratic::BinaryQuadratic;
pub use rbm::Rbm;

/// The spin change `s' − s` of a coordinate going from `from` to `to` (`s = 2x − 1`).
#[inline(always)]
fn spin_delta(from: u8, to: u8) -> f32 {
    2.0 * (f32::from(to) - f32::from(from))
}
