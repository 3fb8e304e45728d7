//! The std side of langevin: many chains, models and model files, diagnostics, the SDP-lite
//! solver and the `langevin` command line. Re-exports [`langevin_core`] as [`core_kernels`].
#![forbid(unsafe_code)]
#![deny(missing_docs, missing_debug_implementations)]

pub use langevin_core as core_kernels;
pub mod npy;
pub mod quadratic_fit;
pub mod sdp;
