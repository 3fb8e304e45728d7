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
//! * [`OrdinalBatch`] with [`OrdinalBatchLangevin`] steps many chains of one
//!   [`OrdinalBatchTarget`] together, so that the target evaluates them at once.
//! * Chains, buffers, moves, kernels, step reports and errors are those of every domain
//!   ([`Chain`](crate::chain::Chain), [`LabelBuffers`], [`LabelMove`], [`Kernel`],
//!   [`StepReport`](crate::kernel::StepReport), [`InitError`]); `proposed_flips` counts changed
//!   coordinates.
//!
//! States are `u16`, so `S ≤ 65 535`.

mod batch;
mod proposal;
mod target;

/// The unadjusted ordinal kernel: every valid proposal is accepted (biased for `a > 0`; the
/// target may return a stochastic gradient). See [`crate::kernel::Dula`].
pub type Dula<'p> = crate::kernel::Dula<OrdinalProposal<'p>>;

/// The Metropolis-adjusted ordinal kernel: exact for every step, balance and window. See
/// [`crate::kernel::Dmala`].
pub type Dmala<'p> = crate::kernel::Dmala<OrdinalProposal<'p>>;

pub use crate::chain::{
    CategoricalChain, CategoricalStorage, LabelBuffers, LabelChain, OrdinalChain, OrdinalStorage,
};
pub use crate::domain::{Categorical as CategoricalDomain, Domain, Ordinal as OrdinalDomain};
pub use crate::error::InitError;
pub use crate::kernel::{Drawn, Kernel};
pub use batch::{
    OrdinalBatch, OrdinalBatchBuffers, OrdinalBatchDmala, OrdinalBatchDula, OrdinalBatchLangevin,
    OrdinalBatchMoves, OrdinalBatchTarget,
};
pub use proposal::OrdinalProposal;
pub use target::{LabelMove, OrdinalConditional, OrdinalTarget};

pub(crate) use proposal::{draw_each, fill_bits};
