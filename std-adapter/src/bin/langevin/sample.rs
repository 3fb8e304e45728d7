//! `langevin sample`: run chains of a discrete sampler on a model file.

use crate::CliError;
use crate::output::{json_bytes, npy_bytes, write_atomically};
use crate::progress;
use clap::{Args, ValueEnum};
use langevin_std::binary::{
    BinaryDiagnostics, BinaryModel, BinaryRun, RunConfig, SamplerSpec, diagnose, run_chains,
};
use langevin_std::model_file::ModelDoc;
use langevin_std::npy::NpyData;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Samplers for discrete models.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SamplerName {
    /// Discrete unadjusted Langevin (no Metropolis test; biased for step > 0).
    Dula,
    /// Discrete Metropolis-adjusted Langevin (exact).
    Dmala,
}

/// Arguments of `langevin sample`.
#[derive(Args, Debug, Clone)]
#[command(allow_negative_numbers = true)]
pub struct SampleArgs {
    /// Model file (JSON).
    #[arg(long)]
    pub model: PathBuf,
    /// Sampler.
    #[arg(long, value_enum, default_value_t = SamplerName::Dmala)]
    pub sampler: SamplerName,
    /// Step size `a` in x-units.
    #[arg(long, default_value_t = 0.2, allow_negative_numbers = true)]
    pub step: f64,
    /// Balance `b` in (0, 1]; 0.5 is the discrete Langevin proposal.
    #[arg(long, default_value_t = 0.5, allow_negative_numbers = true)]
    pub balance: f64,
    /// Steps per chain after burn-in.
    #[arg(long, default_value_t = 10_000)]
    pub steps: u64,
    /// Steps per chain discarded first.
    #[arg(long = "burn-in", default_value_t = 1_000)]
    pub burn_in: u64,
    /// Number of chains.
    #[arg(long, default_value_t = 4)]
    pub chains: usize,
    /// Master seed: the same command gives the same output, bit for bit.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Keep one draw every `thin` steps.
    #[arg(long, default_value_t = 1)]
    pub thin: u64,
    /// Worker threads (default: all cores); results do not depend on it.
    #[arg(long)]
    pub threads: Option<usize>,
    /// Write the kept draws here (`.npy`, uint8, shape (chains, draws, d)).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Write the summary here (JSON).
    #[arg(long)]
    pub summary: Option<PathBuf>,
    /// Also write the kept draws as CSV: a header `chain,draw,x_0,..`, then one draw per line.
    #[arg(long)]
    pub csv: Option<PathBuf>,
    /// How to print the summary on stdout.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Print nothing on success and show no progress bar.
    #[arg(long)]
    pub quiet: bool,
}

/// How a summary is printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Aligned `name  value` lines.
    Table,
    /// The same JSON as the summary file.
    Json,
}

/// What `summary.json` holds for a binary run.
#[derive(Debug, Serialize)]
pub struct BinarySummary {
    sampler: &'static str,
    model: String,
    step: f64,
    balance: f64,
    dim: usize,
    chains: usize,
    steps: u64,
    burn_in: u64,
    thin: u64,
    seed: u64,
    kept_per_chain: usize,
    acceptance_rate: f64,
    mean_proposed_flips: f64,
    mean_accepted_flips: f64,
    invalid_proposals: u64,
    evals: u64,
    wall_time_s: f64,
    ns_per_step: f64,
    #[serde(flatten)]
    diagnostics: Option<BinaryDiagnostics>,
    mean: Vec<f64>,
}

pub fn run(args: &SampleArgs) -> Result<(), CliError> {
    let spec = sampler_spec(args.sampler, args.step, args.balance)?;
    if args.chains == 0 {
        return Err(CliError("--chains must be at least 1".into()));
    }
    if args.thin == 0 {
        return Err(CliError("--thin must be at least 1".into()));
    }
    let outputs = [&args.out, &args.summary, &args.csv];
    for path in outputs.into_iter().flatten() {
        check_writable(path)?;
    }
    let (_, model) = load_model(&args.model)?;
    let config = RunConfig {
        steps: args.steps,
        burn_in: args.burn_in,
        thin: args.thin,
        chains: args.chains,
        seed: args.seed,
        threads: args.threads.unwrap_or_else(default_threads).max(1),
    };
    let total = (config.burn_in + config.steps).saturating_mul(config.chains as u64);
    let run = progress::with_progress(spec.name(), total, progress::wanted(args.quiet), |p| {
        run_chains(&model, &spec, &config, p)
    })?;
    let summary = summarise(args, &spec, &config, &run);
    // Everything is serialised before anything is written, so a failure leaves no files.
    let mut files: Vec<(&Path, Vec<u8>)> = Vec::new();
    if let Some(out) = &args.out {
        let shape = [config.chains, config.kept(), run.dim];
        files.push((out, npy_bytes(&shape, &NpyData::U8(run.samples()))?));
    }
    if let Some(csv) = &args.csv {
        files.push((csv, csv_bytes(&run)));
    }
    if let Some(path) = &args.summary {
        files.push((path, json_bytes(&summary)?));
    }
    write_all(&files)?;
    if !args.quiet {
        match args.format {
            Format::Table => print_table(&summary),
            Format::Json => print!("{}", String::from_utf8_lossy(&json_bytes(&summary)?)),
        }
    }
    Ok(())
}

/// The sampler a name and parameters describe, with the parameters checked.
pub fn sampler_spec(name: SamplerName, step: f64, balance: f64) -> Result<SamplerSpec, CliError> {
    let spec = match name {
        SamplerName::Dula => SamplerSpec::Dula { step, balance },
        SamplerName::Dmala => SamplerSpec::Dmala { step, balance },
    };
    spec.kernel()?;
    Ok(spec)
}

/// Reads a model file of a kind `sample` knows.
pub fn load_model(path: &Path) -> Result<(ModelDoc, BinaryModel), CliError> {
    let doc = ModelDoc::read(path)?;
    let model = BinaryModel::from_doc(&doc)?.ok_or_else(|| {
        doc.err(
            "kind",
            format!(
                "unknown model kind `{}` (expected binary_quadratic, ising, ising_lattice, rbm or binary_logistic)",
                doc.kind
            ),
        )
    })?;
    Ok((doc, model))
}

/// Fails early, before any sampling, when an output could not be written.
pub fn check_writable(path: &Path) -> Result<(), CliError> {
    if path.is_dir() {
        return Err(CliError(format!("{}: is a folder", path.display())));
    }
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
    if let Some(dir) = parent
        && !dir.is_dir()
    {
        return Err(CliError(format!(
            "{}: folder {} does not exist",
            path.display(),
            dir.display()
        )));
    }
    Ok(())
}

/// Writes every file atomically; if one fails, removes those already written.
pub fn write_all<P: AsRef<Path>>(files: &[(P, Vec<u8>)]) -> Result<(), CliError> {
    for (k, (path, bytes)) in files.iter().enumerate() {
        if let Err(e) = write_atomically(path.as_ref(), bytes) {
            for (written, _) in files.iter().take(k) {
                let _ = std::fs::remove_file(written);
            }
            return Err(e);
        }
    }
    Ok(())
}

/// The kept draws as CSV: `chain,draw,x_0,..,x_{d-1}`, chains in order, draws in order.
fn csv_bytes(run: &BinaryRun) -> Vec<u8> {
    use std::fmt::Write as _;
    let d = run.dim;
    let mut text = String::from("chain,draw");
    for i in 0..d {
        let _ = write!(text, ",x_{i}");
    }
    text.push('\n');
    for (c, chain) in run.chains.iter().enumerate() {
        for (t, draw) in chain.draws.chunks_exact(d.max(1)).enumerate() {
            let _ = write!(text, "{c},{t}");
            for &x in draw {
                let _ = write!(text, ",{x}");
            }
            text.push('\n');
        }
    }
    text.into_bytes()
}

fn summarise(
    args: &SampleArgs,
    spec: &SamplerSpec,
    config: &RunConfig,
    run: &BinaryRun,
) -> BinarySummary {
    let stats = run.stats();
    let total_steps = config.chains as f64 * (config.burn_in + config.steps) as f64;
    let (step, balance) = spec.step_balance();
    BinarySummary {
        sampler: spec.name(),
        model: args.model.display().to_string(),
        step,
        balance,
        dim: run.dim,
        chains: config.chains,
        steps: config.steps,
        burn_in: config.burn_in,
        thin: config.thin,
        seed: config.seed,
        kept_per_chain: config.kept(),
        acceptance_rate: stats.acceptance_rate(),
        mean_proposed_flips: stats.mean_proposed_flips(),
        mean_accepted_flips: stats.mean_accepted_flips(),
        invalid_proposals: stats.invalid,
        evals: run.evaluations(),
        wall_time_s: run.wall_time.as_secs_f64(),
        ns_per_step: if total_steps > 0.0 {
            run.wall_time.as_nanos() as f64 / total_steps
        } else {
            0.0
        },
        diagnostics: diagnose(run, config.seed).ok(),
        mean: run.means(),
    }
}

fn print_table(s: &BinarySummary) {
    let rows: Vec<(&str, String)> = vec![
        ("sampler", s.sampler.to_string()),
        ("model", format!("{} (d = {})", s.model, s.dim)),
        ("step, balance", format!("{}, {}", s.step, s.balance)),
        (
            "chains × steps",
            format!(
                "{} × {} (+{} burn-in, thin {})",
                s.chains, s.steps, s.burn_in, s.thin
            ),
        ),
        ("acceptance", format!("{:.4}", s.acceptance_rate)),
        (
            "flips per step",
            format!(
                "{:.3} proposed, {:.3} accepted",
                s.mean_proposed_flips, s.mean_accepted_flips
            ),
        ),
        (
            "time",
            format!("{:.3} s, {:.1} ns per step", s.wall_time_s, s.ns_per_step),
        ),
    ];
    for (k, v) in rows {
        println!("{k:<20}{v}");
    }
    match &s.diagnostics {
        Some(d) => {
            println!(
                "{:<20}min {:.1}, median {:.1}",
                "ESS per coordinate", d.ess_min, d.ess_median
            );
            println!(
                "{:<20}{:.1} (Hamming distance to a random reference)",
                "ESS of statistic", d.ess_statistic
            );
            println!("{:<20}{:.1}", "ESS per second", d.ess_per_second);
            println!("{:<20}{:.2}", "ESS per 10k evals", d.ess_per_10k_evals);
            println!("{:<20}{:.4}", "R-hat (max)", d.rhat_max);
        }
        None => println!("{:<20}need at least 8 kept draws per chain", "diagnostics"),
    }
}

/// All available cores.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}
