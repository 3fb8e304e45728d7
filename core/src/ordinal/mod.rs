//! Ordinal states `x ∈ {0, …, S−1}^d` (integer distance matters): the balanced proposal and its
//! two kernels.
//!
//! * [`OrdinalProposal`] draws every coordinate independently from the softmax over values `k`
//!   of `b·g_i·(k − x_i) − (k − x_i)²/(2a_i)`, optionally within a window `|k − x_i| ≤ w`, and
//!   evaluates the exact `log q` of a move.
//! * [`Dula`] applies it without correction; [`Dmala`] adds a Metropolis–Hastings test (exact
//!   for every `a`, `b`, `w`).
//! * [`OrdinalChain`] holds the state with its cached `U` and `∇U` in caller-owned buffers;
//!   [`OrdinalStorage`] owns those buffers at a fixed size.
//! * [`LabelChain`], [`LabelBuffers`], [`LabelMove`] and [`InitError`] are shared with the
//!   [`categorical`](crate::categorical) domain; step reports and errors are those of
//!   [`binary`](crate::binary) (`proposed_flips` counts changed coordinates).
//!
//! States are `u16`, so `S ≤ 65 535`.

mod chain;
mod kernel;
mod proposal;
mod target;

pub use chain::{
    CategoricalChain, CategoricalDomain, CategoricalStorage, Domain, InitError, LabelBuffers,
    LabelChain, OrdinalChain, OrdinalDomain, OrdinalStorage,
};
pub use kernel::{Dmala, Dula, OrdinalKernel};
pub use proposal::{Drawn, OrdinalProposal};
pub use target::{LabelMove, OrdinalConditional, OrdinalTarget};

pub(crate) use chain::{Eval, all_finite};
pub(crate) use kernel::{LabelProposal, OrdinalEval, advance};
pub(crate) use proposal::fill_bits;
