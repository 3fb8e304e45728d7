//! The std side of langevin: many chains, models and model files, diagnostics, the SDP-lite
//! solver and the `langevin` command line. Re-exports [`langevin_core`] as [`core_kernels`].
#![forbid(unsafe_code)]
#![deny(missing_docs, missing_debug_implementations)]
// The core's panic lints, but for indexing: the std layer indexes buffers it sized itself.
#![cfg_attr(
    not(test),
    deny(
        clippy::panic,
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::unreachable,
        clippy::todo,
        clippy::unimplemented
    )
)]

pub use langevin_core as core_kernels;

pub mod ab2;
pub mod binary;
pub mod continuous;
pub mod diagnostics;
pub mod io;
pub mod kernels;
pub mod labels;
pub mod learn;
pub mod models;
pub mod plot;
pub mod resources;
pub mod run;
pub mod samplers;
pub mod sdp;
pub mod seeding;
pub mod shards;
pub mod simd;
pub mod timing;

/// The `exp`/`ln(1+x)` implementation the std samplers use in their hot loops.
pub type FlipMathImpl = langevin_core::math::Fast;

/// The README's examples, compiled and run as doctests.
#[doc = include_str!("../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
