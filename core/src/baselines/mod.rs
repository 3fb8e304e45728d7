//! The samplers users would otherwise run, on the same targets and chains, so that every
//! comparison can be made side by side.
//!
//! * [`Gibbs`]: single-site Gibbs (random or systematic [`Scan`]) for binary, ordinal and
//!   categorical states, fast on a raw state with the optional capabilities [`FlipDelta`],
//!   [`OrdinalConditional`](crate::ordinal::OrdinalConditional) and
//!   [`CategoricalConditional`](crate::categorical::CategoricalConditional), or as a kernel on
//!   any chain;
//! * [`Gwg`]: Gibbs-with-gradients with one change per step (binary and categorical);
//! * [`RandomWalk`] and [`TunedRandomWalk`]: random-walk Metropolis with independent flips at a
//!   fixed or burn-in-tuned rate;
//! * [`LocallyBalanced`]: the locally balanced informed proposal with exact differences
//!   (binary and categorical);
//! * [`HammingBall`]: the Hamming-ball block sampler (binary);
//! * [`BlockGibbs`]: alternating hidden/visible block Gibbs for the RBM, on a raw state.

mod block_gibbs;
mod flip_delta;
mod gibbs;
mod gwg;
mod hamming_ball;
mod locally_balanced;
mod rwm;

pub use block_gibbs::BlockGibbs;
pub use flip_delta::FlipDelta;
pub use gibbs::{Gibbs, Scan};
pub use gwg::{Gwg, GwgDomain};
pub use hamming_ball::{HAMMING_BALL_WORDS, HammingBall, MAX_BLOCK, MAX_RADIUS, ball_size};
pub use locally_balanced::{Balancing, LocallyBalanced, SingleSiteMoves};
pub use rwm::{RandomWalk, TunedRandomWalk};
