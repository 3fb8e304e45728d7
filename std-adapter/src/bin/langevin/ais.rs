//! `langevin ais`: the log partition function of an RBM model file by annealed importance
//! sampling (and exactly, when one layer is small), and the mean log-likelihood of data rows.

use crate::CliError;
use crate::args::{MemoryArgs, default_threads};
use crate::provenance::Provenance;
use clap::{Args, ValueEnum};
use langevin_std::binary::BinaryModel;
use langevin_std::io::{json_bytes, prepare, write_all};
use langevin_std::learn::ais::{
    AisSettings, BetaSchedule, ais_log_z, base_rate_bias, exact_log_z, mean_log_likelihood,
};
use langevin_std::learn::{BinaryRows, RbmParams};
use langevin_std::models::ModelDoc;
use serde::Serialize;
use std::path::PathBuf;

/// The spacing of the inverse temperatures.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum ScheduleName {
    /// `β_k = k/M`.
    Linear,
    /// Geometric from `1/M` to 1.
    Geometric,
}

impl ScheduleName {
    fn schedule(self) -> BetaSchedule {
        match self {
            Self::Linear => BetaSchedule::Linear,
            Self::Geometric => BetaSchedule::Geometric,
        }
    }
}

/// Arguments of `langevin ais`.
#[derive(Args, Debug, Clone)]
pub struct AisArgs {
    /// RBM model file (kind `rbm`).
    #[arg(long)]
    pub model: PathBuf,
    /// Binary data rows (`.npy`, rows × visible units): their mean log-likelihood is reported,
    /// and their base rates start the annealing path.
    #[arg(long)]
    pub data: Option<PathBuf>,
    /// Independent AIS chains.
    #[arg(long, default_value_t = 100)]
    pub chains: usize,
    /// Intermediate distributions (block-Gibbs sweeps per chain).
    #[arg(long, default_value_t = 1_000)]
    pub betas: usize,
    /// Spacing of the inverse temperatures.
    #[arg(long, value_enum, default_value_t = ScheduleName::Linear)]
    pub schedule: ScheduleName,
    /// Master seed: the same command gives the same output, bit for bit.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Worker threads (default: all cores); results do not depend on it.
    #[arg(long, value_parser = crate::args::at_least_one_thread)]
    pub threads: Option<usize>,
    /// Write the summary here (JSON).
    #[arg(long)]
    pub summary: Option<PathBuf>,
    /// Print nothing on success.
    #[arg(long)]
    pub quiet: bool,
    /// The memory cap (the chains' weights, the temperatures and each worker's state).
    #[command(flatten)]
    pub memory: MemoryArgs,
}

/// Refuses AIS settings whose memory exceeds the cap: a log weight and a random stream per
/// chain, the inverse temperatures, and each worker's state of both layers.
pub fn check_ais_memory(
    memory: &MemoryArgs,
    chains: usize,
    betas: usize,
    rbm: &RbmParams,
    threads: usize,
) -> Result<(), CliError> {
    let units = rbm.visible() as u64 + rbm.hidden() as u64;
    memory.check(&[
        ("AIS chains' weights", &[chains as u64, 64]),
        (
            "inverse temperatures",
            &[(betas as u64).saturating_add(1), 8],
        ),
        ("worker states", &[threads.min(chains) as u64, units, 17]),
    ])
}

/// What `--summary` holds.
#[derive(Debug, Serialize)]
struct AisSummary {
    #[serde(flatten)]
    provenance: Provenance,
    model: String,
    kind: &'static str,
    visible: usize,
    hidden: usize,
    chains: usize,
    betas: usize,
    schedule: &'static str,
    seed: u64,
    threads: usize,
    log_z: f64,
    log_z_stderr: f64,
    log_z_base: f64,
    weight_ess: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    exact_log_z: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    data: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    rows: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    mean_log_likelihood: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    exact_mean_log_likelihood: Option<f64>,
    wall_time_s: f64,
}

/// The RBM of a model file read from `path`.
fn rbm_of(doc: &ModelDoc, path: &std::path::Path) -> Result<RbmParams, CliError> {
    let model = BinaryModel::from_doc(doc)?;
    model
        .as_ref()
        .and_then(RbmParams::from_model)
        .ok_or_else(|| {
            CliError(format!(
                "{}: expected a model of kind `rbm`, found `{}`",
                path.display(),
                doc.kind
            ))
        })
}

pub fn run(args: &AisArgs) -> Result<(), CliError> {
    let budget = args.memory.budget();
    let doc = ModelDoc::read_within(&args.model, &budget)?;
    let mut inputs: Vec<(String, PathBuf)> = vec![("--model".into(), args.model.clone())];
    inputs.extend(args.data.iter().map(|p| ("--data".into(), p.clone())));
    inputs.extend(
        doc.array_files()
            .into_iter()
            .map(|(field, path)| (format!("the model's `{field}`"), path)),
    );
    let outputs: Vec<(String, PathBuf)> = args
        .summary
        .iter()
        .map(|p| ("--summary".into(), p.clone()))
        .collect();
    // Held until the summary is written: it names no input, its folder takes a file, and no
    // other run is writing it.
    let _outputs = prepare(&inputs, &outputs)?;
    let rbm = rbm_of(&doc, &args.model)?;
    let data = args
        .data
        .as_deref()
        .map(|p| BinaryRows::read_within(p, &budget))
        .transpose()?;
    if let (Some(d), Some(path)) = (&data, &args.data)
        && d.cols != rbm.visible()
    {
        return Err(CliError(format!(
            "{}: rows have {} values, the RBM has {} visible units",
            path.display(),
            d.cols,
            rbm.visible()
        )));
    }
    if args.chains < 2 {
        return Err(CliError("--chains must be at least 2".into()));
    }
    if args.betas == 0 {
        return Err(CliError("--betas must be at least 1".into()));
    }
    let threads = args.threads.unwrap_or_else(default_threads).max(1);
    check_ais_memory(&args.memory, args.chains, args.betas, &rbm, threads)?;
    let base = match &data {
        Some(d) => base_rate_bias(&d.values, d.cols),
        None => rbm.b().to_vec(),
    };
    let settings = AisSettings {
        chains: args.chains,
        betas: args.betas,
        schedule: args.schedule.schedule(),
        seed: args.seed,
        threads,
    };
    let start = std::time::Instant::now();
    let est = ais_log_z(&rbm, &base, &settings)?;
    let exact = exact_log_z(&rbm);
    let wall_time_s = start.elapsed().as_secs_f64();
    let ll = |log_z: f64| {
        data.as_ref()
            .map(|d| mean_log_likelihood(&rbm, &d.values, log_z))
    };
    let summary = AisSummary {
        provenance: Provenance::new(Some(&args.model))
            .with_inputs(&[("data", args.data.as_deref())]),
        model: args.model.display().to_string(),
        kind: "rbm",
        visible: rbm.visible(),
        hidden: rbm.hidden(),
        chains: args.chains,
        betas: args.betas,
        schedule: match settings.schedule {
            BetaSchedule::Linear => "linear",
            BetaSchedule::Geometric => "geometric",
        },
        seed: args.seed,
        threads: settings.threads,
        log_z: est.log_z,
        log_z_stderr: est.log_z_stderr,
        log_z_base: est.log_z_base,
        weight_ess: est.weight_ess(),
        exact_log_z: exact,
        data: args.data.as_ref().map(|p| p.display().to_string()),
        rows: data.as_ref().map(BinaryRows::rows),
        mean_log_likelihood: ll(est.log_z),
        exact_mean_log_likelihood: exact.and_then(ll),
        wall_time_s,
    };
    if let Some(path) = &args.summary {
        write_all(&[(path, json_bytes(&summary)?)])?;
    }
    if !args.quiet {
        println!(
            "log Z = {:.4} ± {:.4} (AIS, {} chains × {} steps, weight ESS {:.1})",
            summary.log_z, summary.log_z_stderr, args.chains, args.betas, summary.weight_ess
        );
        if let Some(z) = exact {
            println!("log Z = {z:.4} (exact)");
        }
        if let Some(l) = summary.mean_log_likelihood {
            println!("mean log-likelihood = {l:.4} per row");
        }
    }
    Ok(())
}
