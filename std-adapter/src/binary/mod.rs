//! Binary models and many-chain runs of the binary kernels.

mod diagnose;
mod model;
mod run;
mod sampler;

pub use diagnose::{BinaryDiagnostics, diagnose};
pub use model::{BinaryModel, ModelTarget};
pub use run::{BinaryRun, ChainResult, RunConfig, RunError, run_chains};
pub use sampler::{AnyBinaryKernel, SamplerSpec};
