//! Exact checks without randomness: transition matrices built by enumeration, detailed balance
//! and `πP = π`, for every discrete domain and kernel.

mod ab;
mod acceptance;
mod acs;
mod baselines;
mod binary;
mod categorical;
mod dlmc;
mod lattice_kernel;
mod ordinal;
mod path_auxiliary;
mod second_order;
mod small_lattice;
mod step_harness;
mod tempering;
mod tuned_lattice;
mod word_driven;
