//! Binary models and many-chain runs of the binary kernels.

mod batched;
mod diagnose;
/// The binary models, now in [`crate::models`].
mod model {
    pub use crate::models::{BinaryModel, ModelTarget};
}
mod run;
mod user;

pub use crate::kernels::TabulatedLattice;
pub use crate::run::{ChainResult, RunConfig, RunError};
pub use batched::{Gemm, has_batched_path, run_chains_batched};
pub use diagnose::{BinaryDiagnostics, Depth, Statistic, diagnose, diagnose_draws};
pub use model::{BinaryModel, ModelTarget};
pub use run::{BinaryRun, run_chains};
pub(crate) use run::{block_gibbs_sweep, transpose_for, uniform_buffers, with_chain};
pub use user::run_target_chains;
