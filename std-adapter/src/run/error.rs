//! Why a run failed: [`RunError`], and [`ModelError`] for what went wrong with the model.

use super::{CheckpointError, PoolError};
use crate::samplers::SamplerError;
use langevin_core::ParamError;
use std::fmt;
use thiserror::Error;

/// Why a run failed.
#[derive(Debug, Error)]
pub enum RunError {
    /// Invalid sampler parameters.
    #[error(transparent)]
    Param(ParamError),
    /// The sampler does not apply to this model (its domain, or its kind: block Gibbs samples
    /// RBMs only), or to this run.
    #[error(transparent)]
    Sampler(SamplerError),
    /// The model could not be set up or evaluated, outside any one chain.
    #[error(transparent)]
    Model(ModelError),
    /// The model could not be set up or evaluated for `chain`, at its start or at a step.
    #[error("chain {chain}: {error}")]
    Chain {
        /// The chain.
        chain: usize,
        /// What went wrong.
        #[source]
        error: ModelError,
    },
    /// A step of a lockstep group (`--batch`) failed: the group's chains share each
    /// evaluation, so the error is the group's.
    #[error("chains {first}..: {error}")]
    Group {
        /// The group's first chain.
        first: usize,
        /// What went wrong.
        #[source]
        error: ModelError,
    },
    /// The worker running `chain` panicked; the run returns no chains at all.
    #[error("the worker running chain {chain} panicked: {message}")]
    WorkerPanicked {
        /// The chain whose worker panicked.
        chain: usize,
        /// The panic's message.
        message: String,
    },
    /// The worker threads could not be started.
    #[error("could not start the worker threads: {0}")]
    ThreadPool(#[source] rayon::ThreadPoolBuildError),
    /// Batched stepping (`--batch`) was asked of a model or sampler without a batched path.
    #[error(
        "--batch needs dula or dmala on an rbm, binary_quadratic, binary_logistic or \
         ordinal_quadratic model; {sampler} on a {kind} model has no batched path (drop --batch)"
    )]
    NoBatchedPath {
        /// The model's kind.
        kind: String,
        /// The sampler's name.
        sampler: String,
    },
    /// The kept draws could not be written to their output.
    #[error("writing the kept draws: {0}")]
    Output(#[source] std::io::Error),
    /// A shard of a lockstep run (`--batch`) must start at a group's first chain: a chain's
    /// values depend on its row in the group, so only groups that line up with those of one
    /// run of all the chains give its draws.
    #[error(
        "--first-chain {first_chain} with --batch {batch}: a shard of a lockstep run starts at \
         a multiple of the group size (a chain's values depend on its row in the group), so its \
         draws would not be those of one run"
    )]
    ShardNotAligned {
        /// The shard's first chain.
        first_chain: usize,
        /// Chains per group.
        batch: usize,
    },
    /// The run was cancelled through its [`Progress`](super::Progress) before it finished.
    #[error("the run was cancelled")]
    Cancelled,
    /// A checkpoint could not be written, read or used (`--checkpoint`, `--resume`).
    #[error(transparent)]
    Checkpoint(#[from] CheckpointError),
}

impl RunError {
    /// The error for a `--batch` run of `sampler` on a model of `kind` without a batched path.
    pub(crate) fn no_batched_path(kind: &str, sampler: &str) -> Self {
        Self::NoBatchedPath {
            kind: kind.into(),
            sampler: sampler.into(),
        }
    }

    /// This error, with chain `chain` named if it is the model's.
    pub(crate) fn in_chain(self, chain: usize) -> Self {
        match self {
            Self::Model(error) => Self::Chain { chain, error },
            e => e,
        }
    }

    /// A failed evaluation of the model, outside any one chain.
    pub(crate) fn evaluation<E: fmt::Display>(e: E) -> Self {
        Self::Model(ModelError::evaluation(e))
    }

    /// A failed evaluation of chain `chain`'s model.
    pub(crate) fn at_chain<E: fmt::Display>(chain: usize) -> impl Fn(E) -> Self {
        move |e| Self::Chain {
            chain,
            error: ModelError::evaluation(e),
        }
    }

    /// A failed evaluation of the model at a checkpoint's saved state.
    pub(crate) fn restoring(e: impl fmt::Display) -> Self {
        Self::Checkpoint(CheckpointError::Restore(ModelError::evaluation(e)))
    }
}

impl From<PoolError> for RunError {
    fn from(e: PoolError) -> Self {
        match e {
            PoolError::Build(e) => RunError::ThreadPool(e),
            PoolError::WorkerPanicked { chain, message } => {
                RunError::WorkerPanicked { chain, message }
            }
        }
    }
}

impl From<SamplerError> for RunError {
    fn from(e: SamplerError) -> Self {
        RunError::Sampler(e)
    }
}

/// What went wrong with the model: it could not be set up for the run, the start does not fit
/// it, or an evaluation failed.
#[derive(Debug, Error)]
pub enum ModelError {
    /// The model's parameters do not make a target.
    #[error(transparent)]
    Build(#[from] ParamError),
    /// A given start of the wrong length.
    #[error("the start has {start} coordinates, the model {model}")]
    StartLength {
        /// The start's length.
        start: usize,
        /// The model's.
        model: usize,
    },
    /// A given start with a label beyond the model's last.
    #[error("the start has x[{index}] = {value}, beyond the last value {last}")]
    StartBeyond {
        /// The coordinate.
        index: usize,
        /// Its label.
        value: u16,
        /// The model's last label.
        last: u16,
    },
    /// A target built for a chain whose length is not the run's.
    #[error("the target has {target} coordinates, the run {run}")]
    TargetLength {
        /// The target's length.
        target: usize,
        /// The run's.
        run: usize,
    },
    /// A chain's buffers for this model would not fit in memory.
    #[error("the gradient does not fit in memory")]
    TooLarge,
    /// `U` at a chain's start is infinite or NaN.
    #[error("log-density at the initial state is not finite")]
    StartNotFinite,
    /// `U` at a checkpoint's saved state is not the one the run saved.
    #[error(
        "U at the saved state is {fresh}, the run had {saved} (the target is not the one saved)"
    )]
    NotTheSavedTarget {
        /// `U` evaluated now.
        fresh: f64,
        /// `U` the checkpoint holds.
        saved: f64,
    },
    /// An evaluation of the target failed. Every model brings its own error type, so the run
    /// keeps what it says.
    #[error("{0}")]
    Evaluation(String),
}

impl ModelError {
    /// A target's failure, by what its error says.
    pub(crate) fn evaluation(e: impl fmt::Display) -> Self {
        Self::Evaluation(e.to_string())
    }
}
