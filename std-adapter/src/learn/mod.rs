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
pub use pcd::{Pcd, PcdModel, PcdSettings};
pub use rbm::RbmParams;

use crate::run::{PoolError, RunError};
use std::fmt;

/// Why learning or an estimate could not go ahead.
#[derive(Debug)]
#[non_exhaustive]
pub enum LearnError {
    /// Parameters or data whose sizes do not fit together.
    Shape(String),
    /// A parameter that is not finite (in single precision, for the samplers).
    NonFinite,
    /// Settings out of range.
    Settings(String),
    /// A data file that cannot be used.
    Data {
        /// The file.
        file: String,
        /// What is wrong with it.
        problem: String,
    },
    /// The chains failed.
    Run(RunError),
}

impl fmt::Display for LearnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LearnError::Shape(s) | LearnError::Settings(s) => f.write_str(s),
            LearnError::NonFinite => f.write_str(
                "a parameter is not finite (in single precision); lower the learning rate",
            ),
            LearnError::Run(e) => e.fmt(f),
            LearnError::Data { file, problem } => write!(f, "{file}: {problem}"),
        }
    }
}

impl std::error::Error for LearnError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            LearnError::Run(e) => Some(e),
            _ => None,
        }
    }
}

impl From<RunError> for LearnError {
    fn from(e: RunError) -> Self {
        LearnError::Run(e)
    }
}

impl From<PoolError> for LearnError {
    fn from(e: PoolError) -> Self {
        LearnError::Run(e.into())
    }
}
