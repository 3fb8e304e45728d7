//! Binary states `x ∈ {0,1}^d`: the balanced flip proposal and its two kernels.
//!
//! * [`FlipProposal`] draws every coordinate's flip independently with logit
//!   `l_i = b·g_i·(1 − 2x_i) − 1/(2a_i)` and evaluates the exact `log q` of a move.
//! * [`Dula`] applies it without correction (one gradient per step, biased for `a > 0`);
//!   [`Dmala`] adds a Metropolis–Hastings test (exact for every `a`, `b`).
//! * [`LatticeDula`] and [`LatticeDmala`] are the same kernels specialised to the Ising lattice
//!   through a tabulated, quantised [`LatticeProposal`]: no transcendental functions, and
//!   `O(flips)` bookkeeping.
//! * [`BinaryChain`] holds the state with its cached `U` and `∇U` in caller-owned buffers;
//!   [`ChainStorage`] is a fixed-size owner of those buffers for firmware.
//! * [`BatchDula`] and [`BatchDmala`] step the `n` chains of a [`ChainBatch`] together, so that
//!   a dense [`BatchTarget`] (such as [`RbmBatch`](crate::models::RbmBatch)) evaluates all
//!   their proposals with matrix–matrix products (the [`batch`](crate::batch) types, for
//!   binary states).
//!
//! Chains, kernels, step reports and errors are those of every domain
//! ([`Chain`](crate::chain::Chain), [`Kernel`], [`StepReport`], [`StepError`], [`InitError`]),
//! re-exported here.
//!
//! # Examples
//!
//! ```
//! use langevin_core::binary::{ChainStorage, BinaryChain, Dmala, FlipProposal};
//! use langevin_core::models::{ConstDims, IsingLattice};
//! use rand_core::SeedableRng;
//!
//! // 8×8 periodic Ising at coupling 0.3, no field.
//! let mut model = IsingLattice::<ConstDims<8, 8>>::new(0.3, 0.0, true).unwrap();
//! let mut storage = ChainStorage::<64>::new([0; 64]);
//! let mut chain = BinaryChain::new(storage.buffers(), &mut model).unwrap();
//! let kernel = Dmala::new(FlipProposal::new(0.5, 0.5).unwrap());
//! let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(1);
//! for _ in 0..100 {
//!     kernel.step(&mut model, &mut chain, &mut rng).unwrap();
//! }
//! assert!(chain.state().iter().all(|&x| x <= 1));
//! ```

mod lattice;
mod lattice_gibbs;
mod proposal;

use crate::math::Libm;

/// The discrete unadjusted Langevin kernel on binary states (see [`crate::kernel::Dula`]).
pub type Dula<'p, M = Libm> = crate::kernel::Dula<FlipProposal<'p, M>>;

/// The discrete Metropolis-adjusted Langevin kernel on binary states (see
/// [`crate::kernel::Dmala`]).
pub type Dmala<'p, M = Libm> = crate::kernel::Dmala<FlipProposal<'p, M>>;

/// Batched DULA with the balanced flip proposal: see [`BatchLangevin`].
pub type BatchDula<'p, M = Libm> = BatchLangevin<FlipProposal<'p, M>, false>;

/// Batched DMALA with the balanced flip proposal: see [`BatchLangevin`].
pub type BatchDmala<'p, M = Libm> = BatchLangevin<FlipProposal<'p, M>, true>;

pub use crate::batch::{BatchBuffers, BatchLangevin, BatchMoves, BatchTarget, ChainBatch};
pub use crate::chain::{BinaryChain, ChainBuffers, ChainStorage};
pub use crate::domain::Binary;
pub use crate::error::{InitError, StepError};
pub use crate::kernel::{Kernel, Rejection, StepReport};
pub use lattice::{
    CLASS_LIMIT, LatticeClasses, LatticeDmala, LatticeDula, LatticeKernel, LatticePasses,
    LatticeProposal, PortablePasses, SmallLatticeChain, SmallLatticeDmala, SmallStep, draw_flips,
};
pub use lattice_gibbs::LatticeGibbs;
pub use proposal::{FlipProposal, LANES};
