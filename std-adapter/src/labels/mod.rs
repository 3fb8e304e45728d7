//! Ordinal and categorical models from model files, and many-chain runs of their samplers.
//!
//! * [`LabelModel`]: the kinds `ordinal_quadratic`, `lattice_mixture`, `quartic_mixture`
//!   (ordinal) and `potts` (categorical), read by [`LabelModel::from_doc`];
//! * [`run_label_chains`]: parallel chains, one random stream per chain, as
//!   [`run_chains`](crate::binary::run_chains) does for binary models;
//!   [`run_label_chains_batched`] steps them in lockstep groups (ordinal quadratic models).

/// The label models, now in [`crate::models`].
mod model {
    pub use crate::models::{LABEL_KINDS, LabelDomain, LabelModel, OrdinalModel};
}
mod batched;
mod run;

pub use batched::{has_batched_path, run_label_chains_batched};
pub use model::{LABEL_KINDS, LabelDomain, LabelModel, OrdinalModel};
pub use run::{LabelRun, LabelStart, run_label_chains};
