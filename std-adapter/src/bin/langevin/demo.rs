//! The built-in demonstration: every binary sampler side by side on the 20×20 critical Ising
//! model, where exact marginals are known by symmetry (P(x_i = 1) = ½).

use crate::CliError;
use crate::sample::default_threads;
use clap::Args;
use langevin_core::models::{Dims, IsingLattice};
use langevin_std::binary::{BinaryModel, RunConfig, SamplerSpec, diagnose, run_chains};
use langevin_std::diagnostics::{hamming_series, random_reference};
use langevin_std::plot::{AxisScale, bar_chart, trace_and_acf};
use std::path::PathBuf;

/// Arguments of `langevin demo`.
#[derive(Args, Debug, Clone)]
pub struct DemoArgs {
    /// Steps per chain after burn-in.
    #[arg(long, default_value_t = 20_000)]
    pub steps: u64,
    /// Chains per sampler.
    #[arg(long, default_value_t = 4)]
    pub chains: usize,
    /// Master seed.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Where to write the picture (ESS per second of each sampler, and the trace and
    /// autocorrelation of the statistic under the last sampler).
    #[arg(long, default_value = "langevin-demo.png")]
    pub plot: PathBuf,
}

impl Default for DemoArgs {
    fn default() -> Self {
        Self {
            steps: 20_000,
            chains: 4,
            seed: 0,
            plot: PathBuf::from("langevin-demo.png"),
        }
    }
}

const SIDE: usize = 20;
const CRITICAL_COUPLING: f32 = 0.4407;

pub fn run(args: &DemoArgs) -> Result<(), CliError> {
    let lattice = IsingLattice::with_dims(
        Dims {
            rows: SIDE,
            cols: SIDE,
        },
        CRITICAL_COUPLING,
        0.0,
        true,
    )?;
    let model = BinaryModel::Lattice(lattice);
    let config = RunConfig {
        steps: args.steps,
        burn_in: args.steps / 10,
        thin: 1,
        chains: args.chains.max(1),
        seed: args.seed,
        threads: default_threads(),
    };
    let samplers = [
        SamplerSpec::Dula {
            step: 0.1,
            balance: 0.5,
        },
        SamplerSpec::Dula {
            step: 0.2,
            balance: 0.5,
        },
        SamplerSpec::Dmala {
            step: 0.1,
            balance: 0.5,
        },
        SamplerSpec::Dmala {
            step: 0.2,
            balance: 0.5,
        },
        SamplerSpec::Dmala {
            step: 0.4,
            balance: 0.5,
        },
    ];
    println!(
        "langevin demo: {SIDE}×{SIDE} periodic Ising at the critical coupling J = {CRITICAL_COUPLING}, h = 0 (d = {})",
        SIDE * SIDE
    );
    println!(
        "{} chains × {} steps after {} burn-in per sampler, seed {}, {} threads\n",
        config.chains, config.steps, config.burn_in, config.seed, config.threads
    );
    println!(
        "{:<8}{:>6}{:>9}{:>10}{:>11}{:>10}{:>10}{:>10}{:>8}{:>12}",
        "sampler",
        "step",
        "balance",
        "accept",
        "flips/step",
        "ns/step",
        "ESS",
        "ESS/s",
        "R-hat",
        "mean error"
    );
    let mut labels = Vec::new();
    let mut ess_per_second = Vec::new();
    let mut traces = Vec::new();
    let mut best = 0;
    for spec in &samplers {
        let run = run_chains(&model, spec, &config, None)?;
        let stats = run.stats();
        let diag = diagnose(&run, config.seed)?;
        let total_steps = config.chains as f64 * (config.steps + config.burn_in) as f64;
        let ns = run.wall_time.as_nanos() as f64 / total_steps;
        // Exact marginals are ½ by the spin-flip symmetry of the zero-field model.
        let error = run
            .means()
            .iter()
            .map(|m| (m - 0.5).abs())
            .fold(0.0, f64::max);
        let (step, balance) = spec.step_balance();
        if ess_per_second.iter().all(|&e| e <= diag.ess_per_second) {
            let reference: Vec<u8> = random_reference(run.dim, 2, config.seed)?;
            best = labels.len();
            traces = run
                .chains
                .iter()
                .map(|c| hamming_series(&c.draws, run.dim, &reference))
                .collect::<Result<Vec<_>, _>>()?;
        }
        labels.push(format!("{} a={step}", spec.name()));
        ess_per_second.push(diag.ess_per_second);
        println!(
            "{:<8}{:>6}{:>9}{:>10.3}{:>11.2}{:>10.0}{:>10.0}{:>10.0}{:>8.3}{:>12.3}",
            spec.name(),
            step,
            balance,
            stats.acceptance_rate(),
            stats.mean_proposed_flips(),
            ns,
            diag.ess_statistic,
            diag.ess_per_second,
            diag.rhat_max,
            error
        );
    }
    let label_refs: Vec<&str> = labels.iter().map(String::as_str).collect();
    let trace_path = args.plot.with_extension("trace.png");
    bar_chart(
        &args.plot,
        "ESS per second, 20x20 critical Ising",
        &label_refs,
        &ess_per_second,
        AxisScale::Log,
    )?;
    let best_label = labels.get(best).map_or("", String::as_str);
    trace_and_acf(
        &trace_path,
        &format!("Hamming distance to a reference state, {best_label}"),
        &traces,
        200,
    )?;
    println!(
        "\nWrote {} (ESS per second by sampler) and {} (trace and autocorrelation, {best_label}).",
        args.plot.display(),
        trace_path.display()
    );
    println!(
        "\nESS: multi-chain effective sample size of the Hamming distance to a fixed random state."
    );
    println!("mean error: largest |P̂(x_i = 1) − ½| over the sites (exact value ½ by symmetry).");
    println!("\nTry next:");
    println!(
        "  langevin sample --model model.json --sampler dmala --step 0.2 --steps 10000 --out samples.npy --summary summary.json"
    );
    println!("  langevin --help");
    Ok(())
}
