//! `langevin sample-continuous`: stochastic-gradient Langevin integrators on posteriors that are
//! sums over data.

use crate::CliError;
use crate::args::{ChainArgs, ReportArgs};
use clap::{Args, ValueEnum};
use langevin_std::continuous::{
    ContinuousConfig, Model, SamplerKind, SnapshotKind, parse_access, run,
};
use langevin_std::io::npy::NpyData;
use langevin_std::io::{json_bytes, npy_bytes};
use std::path::PathBuf;

/// Integrators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ContinuousSampler {
    /// Langevin Monte Carlo with the full gradient.
    Lmc,
    /// Stochastic-gradient Langevin dynamics (minibatch gradients).
    Sgld,
    /// Underdamped Langevin with minibatch gradients (Euler–Maruyama).
    Sghmc,
    /// Exponentially weighted stochastic gradients.
    Ewsg,
    /// Aggregated gradient Langevin dynamics (SVRG-LD, SAGA-LD, TMU).
    Agld,
}

/// Data access orders.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum AccessName {
    /// Indices drawn uniformly with replacement.
    Random,
    /// A fresh permutation each pass, taken in order.
    Reshuffle,
    /// The data in order, cyclically.
    Cyclic,
}

/// AGLD snapshot updates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SnapshotName {
    /// Refresh every snapshot every `--period` steps (SVRG-LD).
    Total,
    /// Replace the minibatch's snapshots every step (SAGA-LD).
    Partial,
    /// Both (TMU).
    Mixed,
}

/// Arguments of `langevin sample-continuous`.
#[derive(Args, Debug, Clone)]
pub struct ContinuousArgs {
    /// Model file (JSON): `gaussian_sum`, `logistic_regression`, `ridge_regression` or
    /// `gaussian_mixture`.
    #[arg(long)]
    pub model: PathBuf,
    /// Integrator.
    #[arg(long, value_enum, default_value_t = ContinuousSampler::Sgld)]
    pub sampler: ContinuousSampler,
    /// Data access (SGLD, SGHMC, AGLD).
    #[arg(long, value_enum, default_value_t = AccessName::Random)]
    pub access: AccessName,
    /// AGLD snapshot update.
    #[arg(long, value_enum, default_value_t = SnapshotName::Mixed)]
    pub snapshot: SnapshotName,
    /// AGLD refresh period D in steps (default: one data pass).
    #[arg(long)]
    pub period: Option<u64>,
    /// Step size h.
    #[arg(long, allow_negative_numbers = true)]
    pub step: f64,
    /// Friction γ (SGHMC, EWSG).
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    pub friction: f64,
    /// Minibatch size n.
    #[arg(long, default_value_t = 1)]
    pub batch: usize,
    /// EWSG index-chain length M.
    #[arg(long = "index-chain", default_value_t = 1)]
    pub index_chain: u32,
    /// Data passes per chain (kept phase).
    #[arg(long, default_value_t = 10.0)]
    pub passes: f64,
    /// Data passes per chain discarded first.
    #[arg(long = "burn-in-passes", default_value_t = 0.0)]
    pub burn_in_passes: f64,
    /// Kept draws per data pass.
    #[arg(long = "draws-per-pass", default_value_t = 1)]
    pub draws_per_pass: u32,
    #[command(flatten)]
    pub chains: ChainArgs,
    /// Write the kept draws here (`.npy`, float32, shape (chains, draws, d)).
    #[arg(long)]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub report: ReportArgs,
}

pub fn run_continuous(args: &ContinuousArgs) -> Result<(), CliError> {
    let model = Model::load(&args.model)?;
    let sampler: SamplerKind = format!("{:?}", args.sampler).to_lowercase().parse()?;
    let mut config = ContinuousConfig::new(model, sampler, args.step);
    config.friction = args.friction;
    config.batch = args.batch;
    config.index_chain = args.index_chain;
    config.access = parse_access(&format!("{:?}", args.access).to_lowercase())?;
    config.snapshot = format!("{:?}", args.snapshot)
        .to_lowercase()
        .parse::<SnapshotKind>()?;
    config.period = args.period;
    config.passes = args.passes;
    config.burn_in_passes = args.burn_in_passes;
    config.draws_per_pass = args.draws_per_pass;
    config.chains = args.chains.chains;
    config.seed = args.chains.seed;
    config.threads = args.chains.threads();
    let outcome = run(&config)?;
    let samples = npy_bytes(&outcome.shape, &NpyData::F32(outcome.samples.clone()))?;
    let summary = json_bytes(&outcome.summary)?;
    args.report.write(args.out.as_deref(), samples, summary)?;
    if !args.report.quiet {
        let s = &outcome.summary;
        println!(
            "sampler             {} (d = {}, N = {})",
            s.sampler, s.dim, s.terms
        );
        println!("chains × draws      {} × {}", s.chains, s.draws_per_chain);
        println!(
            "gradient evals      {} ({:.1} per kept draw, {:.2} data passes per chain)",
            s.grad_evals, s.grad_evals_per_draw, s.data_passes
        );
        println!(
            "time                {:.3} s, {:.1} ns per step",
            s.wall_time_s, s.ns_per_step
        );
        let show = s.mean.len().min(6);
        println!("mean (first {show})      {:?}", &s.mean[..show]);
        println!("variance (first {show})  {:?}", &s.var[..show]);
    }
    Ok(())
}
