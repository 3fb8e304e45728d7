//! The command-line tests, one test binary (each separate binary costs a link on every build):
//! every module runs the built `langevin` binary on scratch files.

#[allow(dead_code)]
mod common;

mod ab2_ordinal;
mod adapt;
mod checkpoint;
mod compare;
mod diagonal;
mod dlmc;
mod edges;
mod errors;
mod exact;
mod firstrun;
mod inputs;
mod labels;
mod learn;
mod local_samplers;
mod mmd;
mod model;
mod model_file_npy;
mod outputs;
mod path_auxiliary;
mod registry;
mod sample;
mod samplers;
mod shards;
mod simd;
mod threads;
mod trust;
