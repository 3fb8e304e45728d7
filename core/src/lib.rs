//! Allocation-free kernels for gradient-informed Markov chain Monte Carlo.
//!
//! `langevin-core` is `#![no_std]`, never allocates and never panics on data it is given: every
//! buffer is owned by the caller, lengths are checked once when a chain is built, and bad numbers
//! (NaN, infinities, absurd step sizes) give a typed error or a documented safe outcome such as a
//! rejected move.
//!
//! # Conventions
//!
//! * Discrete targets are written as a **log-density** `U(x)` with `π(x) ∝ exp(U(x))`; binary
//!   states are `x ∈ {0,1}^d` stored as `u8`, and gradients `∇U` are `f32`.
//! * Continuous targets that are sums over data are written as a **potential**
//!   `V(θ) = Σ_i V_i(θ)` with `π(θ) ∝ exp(−V(θ))`.
//! * Step sizes are in x-units. Randomness comes from any [`rand_core::Rng`]; the same seed and
//!   inputs give the same chain on every platform.
//!
//! # Layout
//!
//! * [`domain`]: the sealed state spaces ([`Binary`], [`Ordinal`], [`Categorical`]);
//!   [`chain`]: one chain type over caller-owned buffers for all of them.
//! * [`kernel`]: the one [`Kernel`] interface, the step report, and the unadjusted and
//!   Metropolis-adjusted wrappers of a proposal, generic over the domain.
//! * [`target`]: the traits a model implements.
//! * [`batch`]: many chains of one target stepped together, so that the target evaluates them
//!   at once (binary and ordinal states).
//! * [`binary`]: the balanced flip proposal and its unadjusted (DULA) and Metropolis-adjusted
//!   (DMALA) kernels over `{0,1}^d`, and the tabulated kernels of the Ising lattice.
//! * [`ordinal`], [`categorical`]: the same family over `{0..S−1}^d` and over one-hot labels.
//! * [`second_order`]: the any-scale balanced kernel with a quadratic term, through the
//!   Gaussian integral trick.
//! * [`tuning`]: adaptive step and balance (AB) and automatic cyclical schedules (ACS).
//! * [`baselines`]: Gibbs, Gibbs-with-gradients and random-walk Metropolis.
//! * [`dlmc`]: discrete Langevin Monte Carlo (factorised continuous-time chains, Euler and
//!   interpolating solvers, binary and categorical).
//! * [`path_auxiliary`]: the path auxiliary proposal (several gradient-informed moves per
//!   step, binary and categorical).
//! * [`continuous`]: stochastic-gradient Langevin integrators (LMC, SGLD, SGHMC, EWSG, AGLD) for
//!   potentials that are sums over data.
//! * [`models`]: lattice and graph Ising, dense binary quadratic, RBM and binary logistic
//!   regression targets with incremental updates.
//! * [`math`]: the only place that evaluates transcendental functions.
//! * [`random`]: uniform and Gaussian draws from a [`rand_core::Rng`].
//! * [`stats`]: online chain statistics.
//! * [`error`]: small error types shared by the kernels of every domain.
//!
//! # Adding a sampler
//!
//! A sampler is one type implementing [`Kernel<D>`](Kernel) for the domains it supports: once,
//! generically, where the algorithm is the same (a [`kernel::Proposal`] run by
//! [`kernel::Dula`] or [`kernel::Dmala`] is already such a kernel), with the chain's buffers,
//! the report and the errors shared by every domain. Its module is re-exported from its
//! family's `mod.rs`.
#![no_std]
#![forbid(unsafe_code)]
#![deny(missing_docs, missing_debug_implementations)]
#![cfg_attr(
    not(test),
    deny(
        clippy::panic,
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::indexing_slicing,
        clippy::unreachable,
        clippy::todo,
        clippy::unimplemented
    )
)]
#![allow(
    clippy::cast_possible_truncation,
    reason = "indices and counts are bounded by slice lengths checked at construction"
)]

#[cfg(test)]
extern crate std;

mod balanced;
pub mod baselines;
pub mod batch;
pub mod binary;
pub mod categorical;
pub mod chain;
pub mod continuous;
pub mod dense;
pub mod dlmc;
pub mod domain;
pub mod error;
pub mod kernel;
pub mod math;
pub mod models;
pub mod ordinal;
pub mod path_auxiliary;
pub mod random;
pub mod second_order;
mod slices;
pub mod stats;
pub mod target;
pub mod tempering;
pub mod tuning;

pub use chain::{BinaryChain, CategoricalChain, Chain, OrdinalChain};
pub use domain::{Binary, Categorical, Domain, Ordinal};
pub use error::{InitError, LenError, ParamError, StepError};
pub use kernel::{Kernel, Rejection, StepReport};
pub use target::{BinaryTarget, Eval, FlipMove, TargetError};
