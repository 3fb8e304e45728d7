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
//!   [`BatchTarget<OrdinalDomain>`](BatchTarget) together, so that the target evaluates them
//!   at once (the [`batch`](crate::batch) types, for ordinal states).
//! * Chains, buffers, moves, kernels, step reports and errors are those of every domain
//!   ([`Chain`](crate::chain::Chain), [`LabelBuffers`], [`LabelMove`], [`Kernel`],
//!   [`StepReport`](crate::kernel::StepReport), [`InitError`]); `proposed_flips` counts changed
//!   coordinates.
//!
//! States are `u16`, so `S ≤ 65 535`.

mod proposal;
mod target;

/// The unadjusted ordinal kernel: every valid proposal is accepted (biased for `a > 0`; the
/// target may return a stochastic gradient). See [`crate::kernel::Dula`].
pub type Dula<'p> = crate::kernel::Dula<OrdinalProposal<'p>>;

/// The Metropolis-adjusted ordinal kernel: exact for every step, balance and window. See
/// [`crate::kernel::Dmala`].
pub type Dmala<'p> = crate::kernel::Dmala<OrdinalProposal<'p>>;

pub use crate::batch::BatchTarget;
pub use crate::chain::{
    CategoricalChain, CategoricalStorage, LabelBuffers, LabelChain, OrdinalChain, OrdinalStorage,
};
pub use crate::domain::{Categorical as CategoricalDomain, Domain, Ordinal as OrdinalDomain};
pub use crate::error::InitError;
pub use crate::kernel::{Drawn, Kernel};

/// The proposals of an [`OrdinalBatch`]: [`BatchMoves`](crate::batch::BatchMoves) over
/// ordinal states.
pub type OrdinalBatchMoves<'a> = crate::batch::BatchMoves<'a, OrdinalDomain>;

/// The buffers of an [`OrdinalBatch`]: [`BatchBuffers`](crate::batch::BatchBuffers) over
/// ordinal states.
pub type OrdinalBatchBuffers<'a> = crate::batch::BatchBuffers<'a, OrdinalDomain>;

/// `n` ordinal chains of one [`BatchTarget<OrdinalDomain>`](BatchTarget):
/// [`ChainBatch`](crate::batch::ChainBatch) over ordinal states.
pub type OrdinalBatch<'a> = crate::batch::ChainBatch<'a, OrdinalDomain>;

/// DULA or DMALA with the balanced ordinal proposal, stepping every chain of an
/// [`OrdinalBatch`] at once: see [`BatchLangevin`](crate::batch::BatchLangevin).
pub type OrdinalBatchLangevin<'p, const ADJUSTED: bool = true> =
    crate::batch::BatchLangevin<OrdinalProposal<'p>, ADJUSTED>;

/// Batched ordinal DULA: see [`OrdinalBatchLangevin`].
pub type OrdinalBatchDula<'p> = OrdinalBatchLangevin<'p, false>;

/// Batched ordinal DMALA: see [`OrdinalBatchLangevin`].
pub type OrdinalBatchDmala<'p> = OrdinalBatchLangevin<'p, true>;
pub use proposal::OrdinalProposal;
pub use target::{LabelMove, OrdinalConditional, OrdinalTarget};

pub(crate) use proposal::{draw_each, fill_bits};
