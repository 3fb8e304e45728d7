//! `langevin bench`: per-step cost of a sampler on the user's own model, next to its ESS per
//! second.

use crate::CliError;
use crate::args::{ChainArgs, MemoryArgs, total_steps};
use crate::progress;
use crate::provenance::Provenance;
use crate::sample::{Format, SamplerArgs, load_model};
use clap::Args;
use langevin_std::binary::{BinaryDiagnostics, Depth, RunConfig, diagnose, run_chains};
use langevin_std::run::Keep;
use langevin_std::samplers::Domain;
use langevin_std::timing::time_steps;
use serde::Serialize;

/// Arguments of `langevin bench`.
#[derive(Args, Debug, Clone)]
#[command(allow_negative_numbers = true)]
pub struct BenchArgs {
    /// The model and the sampler (binary models; AB-2 is timed as its first-order phase).
    #[command(flatten)]
    pub sampler: SamplerArgs,
    /// Steps per timed repeat.
    #[arg(long, default_value_t = 10_000)]
    pub steps: u64,
    /// Timed repeats.
    #[arg(long, default_value_t = 10)]
    pub repeats: usize,
    /// Untimed steps first [default: steps / 5].
    #[arg(long = "warm-up")]
    pub warm_up: Option<u64>,
    /// Steps per chain of the ESS run (after a tenth as many burn-in steps).
    #[arg(long = "ess-steps", default_value_t = 5_000)]
    pub ess_steps: u64,
    /// Chains, seed and threads of the ESS run.
    #[command(flatten)]
    pub chains: ChainArgs,
    /// How to print the results.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// The memory cap (the ESS run's kept draws and diagnostics).
    #[command(flatten)]
    pub memory: MemoryArgs,
}

#[derive(Debug, Serialize)]
struct BenchSummary {
    #[serde(flatten)]
    provenance: Provenance,
    model: String,
    kind: String,
    dim: usize,
    sampler: &'static str,
    /// The kernel timed: the one `sample` runs for this sampler on this model.
    kernel: &'static str,
    step: f64,
    balance: f64,
    warm_up: u64,
    steps: u64,
    repeats: usize,
    ns_per_step_median: f64,
    ns_per_step_min: f64,
    ns_per_step_max: f64,
    ns_per_coordinate_step: f64,
    acceptance_rate: f64,
    seed: u64,
    ess_chains: usize,
    ess_steps: u64,
    ess_burn_in: u64,
    ess_thin: u64,
    ess_threads: usize,
    /// ESS of the run divided by its CPU time at the median per-step cost.
    ess_per_core_second: f64,
    #[serde(flatten)]
    diagnostics: Option<BinaryDiagnostics>,
}

pub fn run(args: &BenchArgs) -> Result<(), CliError> {
    let sampler = args.sampler.sampler()?;
    let plan = sampler.plan(Domain::Binary)?;
    let spec = plan.first_order();
    for (name, value) in [
        ("--steps", args.steps),
        ("--repeats", args.repeats as u64),
        ("--chains", args.chains.chains as u64),
        ("--ess-steps", args.ess_steps),
    ] {
        if value == 0 {
            return Err(CliError(format!("{name} must be at least 1")));
        }
    }
    let warm_up = args.warm_up.unwrap_or(args.steps / 5);
    let timed = args.steps.checked_mul(args.repeats as u64).ok_or_else(|| {
        CliError(format!(
            "--steps {} × --repeats {} is more than 2^64 steps; ask for fewer",
            args.steps, args.repeats
        ))
    })?;
    total_steps(&[("warm-up", warm_up), ("timed", timed)])?;
    let ess_burn_in = args.ess_steps / 10;
    let per_chain = total_steps(&[("--ess-steps", args.ess_steps), ("burn-in", ess_burn_in)])?;
    let ess_total = per_chain
        .checked_mul(args.chains.chains as u64)
        .ok_or_else(|| {
            CliError(format!(
                "the ESS run would take more than 2^64 steps (--chains {} × {per_chain} steps); \
                 ask for fewer",
                args.chains.chains
            ))
        })?;
    let (doc, model) = load_model(&args.sampler.model, &args.memory.budget())?;
    let (d, chains, threads) = (
        model.dim() as u64,
        args.chains.chains as u64,
        args.chains.threads() as u64,
    );
    args.memory.check(&[
        ("timings", &[args.repeats as u64, 8]),
        ("chain states", &[chains, d, 16]),
        ("kept draws of the ESS run", &[chains, args.ess_steps, d]),
        (
            "diagnostics",
            &[chains, args.ess_steps, 8, 4 * threads.min(chains) + 4],
        ),
    ])?;
    let timing = time_steps(
        &model,
        &spec,
        warm_up,
        args.steps,
        args.repeats,
        args.chains.seed,
    )?;
    let config = RunConfig {
        steps: args.ess_steps,
        burn_in: ess_burn_in,
        thin: 1,
        chains: args.chains.chains,
        seed: args.chains.seed,
        threads: args.chains.threads(),
        first_chain: 0,
    };
    let total = ess_total;
    let run = progress::with_progress("ess run", total, progress::wanted(false), |p| {
        run_chains(&model, &spec, &config, p, Keep::all())
    })?;
    let diagnostics = diagnose(&run, config.seed, Depth::Coordinates(None)).ok();
    let cpu_seconds = total as f64 * timing.median() * 1e-9;
    let (step, balance) = spec.step_balance();
    let summary = BenchSummary {
        provenance: Provenance::new(Some(&args.sampler.model)),
        model: args.sampler.model.display().to_string(),
        kind: doc.kind.clone(),
        dim: timing.dim,
        sampler: spec.name(),
        kernel: timing.kernel,
        step,
        balance,
        warm_up,
        steps: args.steps,
        repeats: args.repeats,
        ns_per_step_median: timing.median(),
        ns_per_step_min: timing.min(),
        ns_per_step_max: timing.max(),
        ns_per_coordinate_step: timing.ns_per_coordinate_step(),
        acceptance_rate: timing.stats.acceptance_rate(),
        seed: config.seed,
        ess_chains: config.chains,
        ess_steps: config.steps,
        ess_burn_in: config.burn_in,
        ess_thin: config.thin,
        ess_threads: config.threads.min(config.chains),
        ess_per_core_second: diagnostics
            .as_ref()
            .map_or(f64::NAN, |d| d.ess_statistic / cpu_seconds),
        diagnostics,
    };
    match args.format {
        Format::Json => print!(
            "{}",
            String::from_utf8_lossy(&langevin_std::io::json_bytes(&summary)?)
        ),
        Format::Table => print_table(&summary),
    }
    Ok(())
}

fn print_table(s: &BenchSummary) {
    let spread = if s.ns_per_step_median > 0.0 {
        100.0 * (s.ns_per_step_max - s.ns_per_step_min) / s.ns_per_step_median
    } else {
        0.0
    };
    println!("{:<24}{} ({}, d = {})", "model", s.model, s.kind, s.dim);
    println!(
        "{:<24}{} step {} balance {}",
        "sampler", s.sampler, s.step, s.balance
    );
    println!("{:<24}{}", "kernel", s.kernel);
    println!(
        "{:<24}{} repeats × {} steps after {} warm-up steps, one chain",
        "timing", s.repeats, s.steps, s.warm_up
    );
    println!(
        "{:<24}median {:.1}, min {:.1}, max {:.1} (spread {:.1}%)",
        "ns per step", s.ns_per_step_median, s.ns_per_step_min, s.ns_per_step_max, spread
    );
    println!(
        "{:<24}{:.3}",
        "ns per coordinate-step", s.ns_per_coordinate_step
    );
    println!("{:<24}{:.4}", "acceptance", s.acceptance_rate);
    println!(
        "{:<24}{} chains × {} steps (+{} burn-in) on {} threads",
        "ESS run", s.ess_chains, s.ess_steps, s.ess_burn_in, s.ess_threads
    );
    match &s.diagnostics {
        Some(d) => {
            let mark = crate::figures::not_converged(d.rhat_max);
            println!(
                "{:<24}{:.1} (Hamming distance to a random reference){mark}",
                "ESS", d.ess_statistic
            );
            println!(
                "{:<24}{:.1} (wall clock){mark}",
                "ESS per second", d.ess_per_second
            );
            println!(
                "{:<24}{:.1} (ESS / (steps × median ns per step)){mark}",
                "ESS per core-second", s.ess_per_core_second
            );
            println!(
                "{:<24}{}{mark}",
                "ESS per 10k evals",
                crate::figures::per_evaluation(d.ess_per_10k_evals, 2)
            );
            println!("{:<24}{:.4}{mark}", "R-hat (max)", d.rhat_max);
            if crate::figures::failed(d.rhat_max) {
                println!(
                    "WARNING: R-hat {} > {}: the ESS run's chains have not mixed, so its ESS \
                     figures measure no target; run longer (--ess-steps) before comparing them",
                    crate::figures::rhat_text(d.rhat_max),
                    langevin_std::diagnostics::RHAT_LIMIT
                );
            }
        }
        None => println!("{:<24}need at least 8 draws per chain", "ESS"),
    }
}
