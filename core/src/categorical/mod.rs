//! Categorical states `x ∈ {0, …, S−1}^d` (labels without order, gradients with respect to the
//! one-hot encoding): the balanced proposal and its two kernels.
//!
//! * [`CategoricalProposal`] draws every coordinate independently from the softmax over labels
//!   of `b·(g_{i,k} − g_{i,x_i}) − [k ≠ x_i]/a_i` and evaluates the exact `log q` of a move.
//! * [`Dula`] applies it without correction; [`Dmala`] adds a Metropolis–Hastings test.
//! * [`CategoricalChain`] (a [`Chain`](crate::chain::Chain) with a one-hot gradient
//!   of `d·S` entries) and [`CategoricalStorage`] hold the state; the scratch row of `S` values
//!   is where a proposal keeps one coordinate's weights.
//!
//! There is no window: labels have no distance beyond "same" or "different".
//!
//! # Examples
//!
//! ```
//! use core::convert::Infallible;
//! use langevin_core::categorical::{CategoricalChain, CategoricalProposal, CategoricalStorage, CategoricalTarget, Dmala};
//! use rand_core::SeedableRng;
//!
//! // Two labels that like to agree: U = 1.5·[x_0 = x_1].
//! struct Pair;
//! impl CategoricalTarget for Pair {
//!     type Error = Infallible;
//!     fn dim(&self) -> usize { 2 }
//!     fn states(&self) -> usize { 3 }
//!     fn log_density_and_grad(&mut self, x: &[u16], g: &mut [f32]) -> Result<f64, Infallible> {
//!         // U = 1.5 Σ_k onehot_{0,k} onehot_{1,k}: the gradient of row 0 is 1.5 × row 1's one-hot.
//!         g.fill(0.0);
//!         g[usize::from(x[1])] = 1.5;
//!         g[3 + usize::from(x[0])] = 1.5;
//!         Ok(if x[0] == x[1] { 1.5 } else { 0.0 })
//!     }
//! }
//!
//! let mut storage = CategoricalStorage::<2, 3>::new([0, 2]);
//! let mut chain = CategoricalChain::new(storage.buffers(), &mut Pair).unwrap();
//! let kernel = Dmala::new(CategoricalProposal::new(1.0, 0.5).unwrap());
//! let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(2);
//! for _ in 0..20 {
//!     kernel.step(&mut Pair, &mut chain, &mut rng).unwrap();
//! }
//! assert!(chain.state().iter().all(|&k| k < 3));
//! ```

mod proposal;
mod target;

/// The unadjusted categorical kernel: every valid proposal is accepted (biased for `a > 0`).
/// See [`crate::kernel::Dula`].
pub type Dula<'p> = crate::kernel::Dula<CategoricalProposal<'p>>;

/// The Metropolis-adjusted categorical kernel: exact for every step and balance. See
/// [`crate::kernel::Dmala`].
pub type Dmala<'p> = crate::kernel::Dmala<CategoricalProposal<'p>>;

pub use crate::chain::{CategoricalChain, CategoricalStorage};
pub use crate::domain::Categorical;
pub use crate::kernel::Kernel;
pub use proposal::CategoricalProposal;
pub use target::{CategoricalConditional, CategoricalTarget};
