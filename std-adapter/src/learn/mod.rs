//! Learning with the samplers: persistent contrastive divergence for RBMs and Ising models on a
//! graph, and annealed importance sampling of an RBM's log partition function.
//!
//! * [`RbmParams`]: a binary RBM in double precision, its log-marginal and sufficient
//!   statistics;
//! * [`ais`]: AIS estimates of `log Z` with a standard error, the exact `log Z` by enumeration
//!   of the smaller layer, and mean log-likelihoods;
//! * [`BinaryRows`]: binary data read from `.npy` files;
//! * [`IsingParams`]: an Ising model on a graph (lattices built in) with per-edge couplings;
//! * [`Pcd`]: persistent contrastive divergence with any binary sampler of the registry, and
//!   the [`Optimizer`] (SGD, Adam; ℓ1, ℓ2) it steps.

pub mod ais;
mod data;
mod ising;
mod optim;
mod pcd;
mod rbm;
mod rbm_sites;

pub use data::BinaryRows;
pub use ising::IsingParams;
pub use optim::{Optimizer, OptimizerKind};
pub use pcd::{Pcd, PcdModel, PcdSettings, runs_in_pcd};
pub use rbm::RbmParams;

use crate::run::{PoolError, RunError};

/// Why learning or an estimate could not go ahead.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LearnError {
    /// Parameters or data whose sizes do not fit together.
    #[error("{0}")]
    Shape(String),
    /// A parameter that is not finite (in single precision, for the samplers).
    #[error("a parameter is not finite (in single precision); lower the learning rate")]
    NonFinite,
    /// Settings out of range.
    #[error("{0}")]
    Settings(String),
    /// A data file that cannot be used.
    #[error("{file}: {problem}")]
    Data {
        /// The file.
        file: String,
        /// What is wrong with it.
        problem: String,
    },
    /// The chains failed.
    #[error("{0}")]
    Run(#[from] RunError),
}

impl From<PoolError> for LearnError {
    fn from(e: PoolError) -> Self {
        LearnError::Run(e.into())
    }
}
