//! Sampling-path tests (exact start, pooled chi-square and TV thresholds), paper reproductions
//! and property tests of the discrete kernels.

mod acs_mixture;
mod baselines;
mod batched;
mod batched_ordinal;
mod binary;
mod binary_paper;
mod binary_properties;
mod categorical;
mod ordinal;
mod second_order;
