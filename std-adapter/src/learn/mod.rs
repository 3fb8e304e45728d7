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

pub use data::{BinaryRows, RowsError};
pub use ising::IsingParams;
pub use optim::{Optimizer, OptimizerKind};
pub use pcd::{Pcd, PcdModel, PcdSettings, runs_in_pcd};
pub use rbm::RbmParams;

use crate::run::{PoolError, RunError};
use crate::samplers::SamplerError;
use langevin_core::ParamError;

/// Why learning or an estimate could not go ahead.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LearnError {
    /// Parameters or data whose sizes do not fit together.
    #[error("{0}")]
    Shape(#[from] ShapeError),
    /// A parameter that is not finite (in single precision, for the samplers).
    #[error("a parameter is not finite (in single precision); lower the learning rate")]
    NonFinite,
    /// Settings out of range.
    #[error("{0}")]
    Settings(#[from] SettingsError),
    /// A data file that cannot be used.
    #[error("{}: {problem}", .file.display())]
    Data {
        /// The file.
        file: std::path::PathBuf,
        /// What is wrong with it.
        #[source]
        problem: RowsError,
    },
    /// The chains failed.
    #[error("{0}")]
    Run(#[from] RunError),
}

/// Parameters or data whose sizes do not fit together ([`LearnError::Shape`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ShapeError {
    /// Data rows whose width is not the model's dimension.
    #[error("the data rows have {width} values, the model has dimension {dim}")]
    DataWidth {
        /// The values per data row.
        width: usize,
        /// The model's dimension.
        dim: usize,
    },
    /// An RBM's `W` whose length is not `H × V`, or no visible unit.
    #[error(
        "an RBM needs W of {hidden} × {visible} = {} entries and at least one visible unit, found {entries}",
        .hidden.saturating_mul(*.visible)
    )]
    Rbm {
        /// `H`, the length of `c`.
        hidden: usize,
        /// `V`, the length of `b`.
        visible: usize,
        /// The length of `W`.
        entries: usize,
    },
    /// A graph without nodes.
    #[error("the graph has no nodes")]
    NoNodes,
    /// An edge that is a self-loop, names a node beyond the last or repeats an edge.
    #[error("edge ({i}, {j}) is a self-loop, out of range for {nodes} nodes or repeated")]
    Edge {
        /// One end.
        i: u32,
        /// The other end.
        j: u32,
        /// The graph's nodes.
        nodes: usize,
    },
}

/// Settings out of range ([`LearnError::Settings`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SettingsError {
    /// Zero PCD steps, chains, batch or updates.
    #[error("PCD steps, chains, batch and updates must be at least 1")]
    ZeroCount,
    /// A learning rate that is not finite and positive, or a penalty that is not finite and
    /// non-negative.
    #[error("the learning rate must be positive and the penalties non-negative, all finite")]
    Rates {
        /// The learning rate.
        lr: f64,
        /// The ℓ1 penalty.
        l1: f64,
        /// The ℓ2 penalty.
        l2: f64,
    },
    /// A sampler that does not apply to binary models or this run.
    #[error("{0}")]
    Sampler(#[source] SamplerError),
    /// Sampler parameters that do not make a kernel.
    #[error("{0}")]
    Param(#[source] ParamError),
    /// A sampler that does not run inside PCD.
    #[error("sampler {sampler} cannot run inside PCD ({why})")]
    NotInPcd {
        /// The sampler.
        sampler: &'static str,
        /// Why not.
        why: NotInPcd,
    },
    /// Fewer than 2 AIS chains, or no intermediate distribution.
    #[error("AIS needs at least 2 chains and 1 intermediate distribution")]
    AisSize {
        /// The chains.
        chains: usize,
        /// The intermediate distributions.
        betas: usize,
    },
    /// An AIS base whose length is not the RBM's visible units.
    #[error("the base has {base} visible biases, the RBM {visible} visible units")]
    BaseLength {
        /// The base's visible biases.
        base: usize,
        /// The RBM's visible units.
        visible: usize,
    },
}

/// Why a sampler does not run inside PCD ([`SettingsError::NotInPcd`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NotInPcd {
    /// Replica exchange: each persistent chain is one chain.
    #[error("each persistent chain is a single chain, not a ladder of replicas")]
    Replicas,
    /// AB-2: its tuning fits one fixed target.
    #[error("its tuning fits one fixed target")]
    FixedTarget,
}

impl From<PoolError> for LearnError {
    fn from(e: PoolError) -> Self {
        LearnError::Run(e.into())
    }
}
