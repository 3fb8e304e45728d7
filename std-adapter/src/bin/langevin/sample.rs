//! `langevin sample`: run chains of a discrete sampler on a model file.
//!
//! Binary kinds run here; label kinds (ordinal and categorical) in [`labels`]; `--exact` and
//! `--plot` in [`exact`] and [`pictures`].

mod exact;
mod labels;
mod mmd;
pub(crate) mod pictures;

use crate::CliError;
use crate::output::{json_bytes, npy_bytes, write_atomically};
use crate::progress;
use clap::{Args, ValueEnum};
use langevin_std::ab2::{Ab2Settings, DiagonalRule, run_ab2_chains};
use langevin_std::binary::{
    ACS_BUDGET_FRACTION, BinaryDiagnostics, BinaryModel, BinaryRun, RunConfig, RunShape,
    SamplerSpec, diagnose, run_chains,
};
use langevin_std::core_kernels::ParamError;
use langevin_std::core_kernels::baselines::Scan;
use langevin_std::labels::{LABEL_KINDS, LabelModel};
use langevin_std::model_file::ModelDoc;
use langevin_std::npy::NpyData;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// The binary kinds `sample` reads.
const BINARY_KINDS: [&str; 5] = [
    "binary_quadratic",
    "ising",
    "ising_lattice",
    "rbm",
    "binary_logistic",
];

/// Samplers for discrete models.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SamplerName {
    /// Discrete unadjusted Langevin (no Metropolis test; biased for step > 0).
    Dula,
    /// Discrete Metropolis-adjusted Langevin (exact).
    Dmala,
    /// Single-site Gibbs; one step is a sweep of d site updates (see --scan).
    Gibbs,
    /// Gibbs-with-gradients, one change per step (binary and categorical).
    Gwg,
    /// Random-walk Metropolis, flip rate tuned during burn-in (binary).
    Rwm,
    /// Any-scale balanced sampler: step and balance tuned during burn-in, then fixed.
    Ab,
    /// Automatic cyclical scheduling: tuned within 10% of the run, then a fixed cycle.
    Acs,
    /// Any-scale balanced, second order: first-order tuning, a fitted quadratic W, a diagonal D
    /// (see --diagonal), then the Gaussian-integral-trick kernel with (a, b) tuned again
    /// (binary and ordinal models). The tuning phases come before --burn-in.
    Ab2,
}

/// How AB-2 chooses the diagonal D that makes W + D positive semidefinite.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum DiagonalName {
    /// Smallest trace (the diagonal SDP).
    Trace,
    /// A multiple of the identity: D = max(ε, −λ_min(W)) I.
    Shift,
    /// Smallest largest eigenvalue of W + D (accelerated projected gradient on a smoothing,
    /// started from the trace choice; at most 200 eigendecompositions).
    Max,
    /// First order instead: the discrete Langevin proposal (balance 1/2) with the per-coordinate
    /// step a / (2 D_ii) from the trace choice (D_ii floored at 5% of the mean), step tuned.
    DlpTrace,
}

impl DiagonalName {
    /// The schedule's rule.
    pub fn rule(self) -> DiagonalRule {
        match self {
            DiagonalName::Trace => DiagonalRule::Trace,
            DiagonalName::Shift => DiagonalRule::Shift { eps: 1e-3 },
            DiagonalName::Max => DiagonalRule::Max,
            DiagonalName::DlpTrace => DiagonalRule::DlpTrace { floor: 0.05 },
        }
    }
}

/// Site order of Gibbs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ScanName {
    /// Sites 0, 1, …, d−1 in turn.
    Systematic,
    /// d uniformly drawn sites per sweep.
    Random,
}

impl ScanName {
    fn scan(self) -> Scan {
        match self {
            ScanName::Systematic => Scan::Systematic,
            ScanName::Random => Scan::Random,
        }
    }

    fn name(self) -> &'static str {
        match self {
            ScanName::Systematic => "systematic",
            ScanName::Random => "random",
        }
    }
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
    /// AB-2's choice of the diagonal D.
    #[arg(long, value_enum, default_value_t = DiagonalName::Trace)]
    pub diagonal: DiagonalName,
    /// AB-2: steps of each of its two tuning phases (first-order burn-in, then the second-order
    /// `(a, b)` search), taken before --burn-in. The multiplicative search moves (a, b) by at
    /// most 20% per 600 steps, and the second-order kernel wants far larger steps than the
    /// first-order one, so short budgets leave it under-tuned.
    #[arg(long = "ab2-tune", default_value_t = 10_000)]
    pub ab2_tune: u64,
    /// Step size `a` in x-units (dula, dmala; ab: where tuning starts).
    #[arg(long, default_value_t = 0.2, allow_negative_numbers = true)]
    pub step: f64,
    /// Balance `b` in (0, 1]; 0.5 is the discrete Langevin proposal (ab: where tuning starts).
    #[arg(long, default_value_t = 0.5, allow_negative_numbers = true)]
    pub balance: f64,
    /// Site order of gibbs.
    #[arg(long, value_enum, default_value_t = ScanName::Systematic)]
    pub scan: ScanName,
    /// Initial flip rate of rwm [default: 1/d].
    #[arg(long)]
    pub rate: Option<f64>,
    /// Where the acs search for the largest step starts.
    #[arg(long = "a-ceil", default_value_t = 5.0)]
    pub a_ceil: f64,
    /// Largest acs step, fixed instead of searched (with --a-min).
    #[arg(long = "a-max", requires = "a_min")]
    pub a_max: Option<f64>,
    /// Smallest acs step, fixed instead of searched (with --a-max).
    #[arg(long = "a-min", requires = "a_max")]
    pub a_min: Option<f64>,
    /// Ordinal models: proposals move each coordinate by at most W.
    #[arg(long)]
    pub window: Option<u16>,
    /// Steps per chain after burn-in.
    #[arg(long, default_value_t = 10_000)]
    pub steps: u64,
    /// Steps per chain discarded first (tuned samplers tune here).
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
    /// Write the kept draws here (`.npy`, shape (chains, draws, d); uint8 for up to 256
    /// values per coordinate, int32 above).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Write the summary here (JSON).
    #[arg(long)]
    pub summary: Option<PathBuf>,
    /// Also write the kept draws as CSV: a header `chain,draw,x_0,..`, then one draw per line.
    #[arg(long)]
    pub csv: Option<PathBuf>,
    /// Enumerate the model (d·log2(S) ≤ 24) and report the RMSE of the sampled marginals.
    #[arg(long)]
    pub exact: bool,
    /// RBM models: report the MMD (kernel exp(−mean Hamming distance)) between the kept draws
    /// and block-Gibbs reference draws.
    #[arg(long)]
    pub mmd: bool,
    /// Write a PNG: trace and autocorrelation of the distance statistic per chain; also
    /// FILE.heatmap.png for 2-D ordinal models and FILE.images.png for RBMs with a square
    /// visible layer.
    #[arg(long)]
    pub plot: Option<PathBuf>,
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

/// What `summary.json` holds, for binary and label runs alike (fields that do not apply are
/// left out).
#[derive(Debug, Serialize)]
pub struct Summary {
    sampler: &'static str,
    model: String,
    kind: String,
    domain: &'static str,
    states: usize,
    step: f64,
    balance: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    scan: Option<&'static str>,
    /// AB-2's rule for D.
    #[serde(skip_serializing_if = "Option::is_none")]
    diagonal: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    window: Option<u16>,
    dim: usize,
    chains: usize,
    steps: u64,
    burn_in: u64,
    /// Burn-in steps actually taken per chain (longer than `burn_in` when ACS tuned longer).
    burn_in_taken: u64,
    thin: u64,
    seed: u64,
    kept_per_chain: usize,
    acceptance_rate: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    mean_proposed_flips: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    mean_accepted_flips: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    mean_proposed_changes: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    mean_accepted_changes: Option<f64>,
    mean_jump: f64,
    invalid_proposals: u64,
    evals: u64,
    wall_time_s: f64,
    ns_per_step: f64,
    statistic: &'static str,
    #[serde(flatten)]
    diagnostics: Option<BinaryDiagnostics>,
    #[serde(skip_serializing_if = "Option::is_none")]
    marginal_rmse: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    mmd: Option<mmd::MmdReport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tuned: Option<serde_json::Value>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    plots: Vec<String>,
    mean: Vec<f64>,
}

pub fn run(args: &SampleArgs) -> Result<(), CliError> {
    if args.chains == 0 {
        return Err(CliError("--chains must be at least 1".into()));
    }
    if args.thin == 0 {
        return Err(CliError("--thin must be at least 1".into()));
    }
    if args.window == Some(0) {
        return Err(CliError("--window must be at least 1".into()));
    }
    // Parameters that do not depend on the model fail before it is read.
    binary_spec(args)?.kernel()?;
    let outputs = [&args.out, &args.summary, &args.csv, &args.plot];
    for path in outputs.into_iter().flatten() {
        check_writable(path)?;
    }
    let doc = ModelDoc::read(&args.model)?;
    if let Some(model) = BinaryModel::from_doc(&doc)? {
        return run_binary(args, &doc, &model);
    }
    if let Some(model) = LabelModel::from_doc(&doc)? {
        return labels::run(args, &doc, &model);
    }
    Err(doc
        .err(
            "kind",
            format!(
                "unknown model kind `{}` (expected {} or {})",
                doc.kind,
                BINARY_KINDS.join(", "),
                LABEL_KINDS.join(", ")
            ),
        )
        .into())
}

fn run_binary(args: &SampleArgs, doc: &ModelDoc, model: &BinaryModel) -> Result<(), CliError> {
    if args.window.is_some() {
        return Err(CliError("--window applies to ordinal models only".into()));
    }
    let spec = binary_spec(args)?;
    let config = run_config(args);
    spec.kernel_for(&config.shape(model.dim()))
        .map_err(|e| param_error(spec.name(), &e))?;
    let d = model.dim();
    if args.exact {
        exact::check_size(d, 2)?;
    }
    if args.mmd && !matches!(model, BinaryModel::Rbm { .. }) {
        return Err(CliError(
            "--mmd compares against block-Gibbs draws and needs an rbm model".into(),
        ));
    }
    let total = progress_total(args, &config);
    let run = progress::with_progress(spec.name(), total, progress::wanted(args.quiet), |p| {
        if args.sampler == SamplerName::Ab2 {
            run_ab2_chains(model, &ab2_settings(args), &config, p)
        } else {
            run_chains(model, &spec, &config, p)
        }
    })?;
    let marginal_rmse = if args.exact {
        let chains: Vec<&[u8]> = run.chains.iter().map(|c| c.draws.as_slice()).collect();
        Some(exact::rmse(&exact::binary(model)?, &chains, d, 2)?)
    } else {
        None
    };
    let mmd = if args.mmd {
        Some(mmd::rbm(model, &run, config.seed)?)
    } else {
        None
    };
    let mut files: Vec<(PathBuf, Vec<u8>)> = Vec::new();
    if let Some(path) = &args.plot {
        files.extend(pictures::binary(path, args, model, &run)?);
    }
    let stats = run.stats();
    let (step, balance) = spec.step_balance();
    let summary = Summary {
        sampler: if args.sampler == SamplerName::Ab2 {
            "ab2"
        } else {
            spec.name()
        },
        model: args.model.display().to_string(),
        kind: doc.kind.clone(),
        domain: "binary",
        states: 2,
        step,
        balance,
        scan: (args.sampler == SamplerName::Gibbs).then(|| args.scan.name()),
        diagonal: (args.sampler == SamplerName::Ab2).then(|| args.diagonal.rule().name()),
        window: None,
        dim: d,
        chains: config.chains,
        steps: config.steps,
        burn_in: config.burn_in,
        burn_in_taken: run
            .chains
            .iter()
            .map(|c| c.burn_in_stats.steps)
            .max()
            .unwrap_or(0),
        thin: config.thin,
        seed: config.seed,
        kept_per_chain: config.kept(),
        acceptance_rate: stats.acceptance_rate(),
        mean_proposed_flips: Some(stats.mean_proposed_flips()),
        mean_accepted_flips: Some(stats.mean_accepted_flips()),
        mean_proposed_changes: None,
        mean_accepted_changes: None,
        mean_jump: run.mean_jump(),
        invalid_proposals: stats.invalid,
        evals: run.evaluations(),
        wall_time_s: run.wall_time.as_secs_f64(),
        ns_per_step: ns_per_step(run.wall_time, run.steps_taken()),
        statistic: "hamming",
        diagnostics: diagnose(&run, config.seed).ok(),
        marginal_rmse,
        mmd,
        tuned: run.tuned(),
        plots: plot_names(&files),
        mean: run.means(),
    };
    let mut outputs: Vec<(PathBuf, Vec<u8>)> = Vec::new();
    if let Some(out) = &args.out {
        let shape = [config.chains, config.kept(), d];
        outputs.push((out.clone(), npy_bytes(&shape, &NpyData::U8(run.samples()))?));
    }
    if let Some(csv) = &args.csv {
        outputs.push((csv.clone(), csv_bytes(&run_draws(&run), d)));
    }
    finish(args, &summary, outputs, files)
}

fn run_draws(run: &BinaryRun) -> Vec<&[u8]> {
    run.chains.iter().map(|c| c.draws.as_slice()).collect()
}

/// Writes the outputs, the pictures and the summary (all or none), then prints the summary.
fn finish(
    args: &SampleArgs,
    summary: &Summary,
    mut outputs: Vec<(PathBuf, Vec<u8>)>,
    pictures: Vec<(PathBuf, Vec<u8>)>,
) -> Result<(), CliError> {
    outputs.extend(pictures);
    if let Some(path) = &args.summary {
        outputs.push((path.clone(), json_bytes(summary)?));
    }
    write_all(&outputs)?;
    if !args.quiet {
        match args.format {
            Format::Table => print_table(summary),
            Format::Json => print!("{}", String::from_utf8_lossy(&json_bytes(summary)?)),
        }
    }
    Ok(())
}

fn plot_names(files: &[(PathBuf, Vec<u8>)]) -> Vec<String> {
    files.iter().map(|(p, _)| p.display().to_string()).collect()
}

/// The run configuration the arguments describe.
fn run_config(args: &SampleArgs) -> RunConfig {
    RunConfig {
        steps: args.steps,
        burn_in: args.burn_in,
        thin: args.thin,
        chains: args.chains,
        seed: args.seed,
        threads: args.threads.unwrap_or_else(default_threads).max(1),
    }
}

/// Steps the progress bar expects: ACS may extend the burn-in to its tuning budget.
fn progress_total(args: &SampleArgs, config: &RunConfig) -> u64 {
    let run = config.burn_in.saturating_add(config.steps);
    let burn_in = if args.sampler == SamplerName::Acs {
        config
            .burn_in
            .max((run as f64 * ACS_BUDGET_FRACTION) as u64)
    } else {
        config.burn_in
    };
    burn_in
        .saturating_add(config.steps)
        .saturating_mul(config.chains as u64)
}

/// Wall nanoseconds per step, over all chains' steps.
fn ns_per_step(wall: std::time::Duration, steps: u64) -> f64 {
    if steps == 0 {
        0.0
    } else {
        wall.as_nanos() as f64 / steps as f64
    }
}

/// A parameter error of a sampler for this run, in words.
fn param_error(sampler: &str, e: &ParamError) -> CliError {
    match *e {
        ParamError::OutOfRange {
            name: "tuning budget (steps)",
            value,
        } => CliError(format!(
            "{sampler}: the run is too short to tune: a tenth of burn-in plus steps is {value} steps, too few for one round of each search (use at least a few thousand steps)"
        )),
        _ => CliError(format!("{sampler}: {e}")),
    }
}

/// `(a_max, a_min)` when both are given.
fn fixed_steps(args: &SampleArgs) -> Option<(f64, f64)> {
    args.a_max.zip(args.a_min)
}

/// The binary sampler the arguments describe.
fn binary_spec(args: &SampleArgs) -> Result<SamplerSpec, CliError> {
    let (step, balance) = (args.step, args.balance);
    Ok(match args.sampler {
        SamplerName::Dula => SamplerSpec::Dula { step, balance },
        SamplerName::Dmala => SamplerSpec::Dmala { step, balance },
        SamplerName::Gibbs => SamplerSpec::Gibbs {
            scan: args.scan.scan(),
        },
        SamplerName::Gwg => SamplerSpec::Gwg,
        SamplerName::Rwm => SamplerSpec::Rwm { rate: args.rate },
        // AB-2's first phase is the first-order tuner; its own runner takes over from there.
        SamplerName::Ab | SamplerName::Ab2 => SamplerSpec::Ab { step, balance },
        SamplerName::Acs => SamplerSpec::Acs {
            a_ceil: args.a_ceil,
            fixed_steps: fixed_steps(args),
        },
    })
}

/// AB-2 settings: the first-order phase starts at `--step`/`--balance`.
fn ab2_settings(args: &SampleArgs) -> Ab2Settings {
    let mut settings = Ab2Settings::default();
    settings.first.step = args.step;
    settings.first.balance = args.balance;
    settings.diagonal = args.diagonal.rule();
    settings.first.budget = args.ab2_tune;
    settings.second_budget = args.ab2_tune;
    settings
}

/// The sampler a name and parameters describe (other parameters at their defaults), with the
/// parameters checked.
pub fn sampler_spec(name: SamplerName, step: f64, balance: f64) -> Result<SamplerSpec, CliError> {
    let spec = match name {
        SamplerName::Dula => SamplerSpec::Dula { step, balance },
        SamplerName::Dmala => SamplerSpec::Dmala { step, balance },
        SamplerName::Gibbs => SamplerSpec::Gibbs {
            scan: Scan::Systematic,
        },
        SamplerName::Gwg => SamplerSpec::Gwg,
        SamplerName::Rwm => SamplerSpec::Rwm { rate: None },
        SamplerName::Ab | SamplerName::Ab2 => SamplerSpec::Ab { step, balance },
        SamplerName::Acs => SamplerSpec::Acs {
            a_ceil: 5.0,
            fixed_steps: None,
        },
    };
    spec.kernel_for(&RunShape::default())?;
    Ok(spec)
}

/// Reads a model file of a binary kind.
pub fn load_model(path: &Path) -> Result<(ModelDoc, BinaryModel), CliError> {
    let doc = ModelDoc::read(path)?;
    let model = BinaryModel::from_doc(&doc)?.ok_or_else(|| {
        let problem = if LABEL_KINDS.contains(&doc.kind.as_str()) {
            format!(
                "`{}` is a label model; this command takes binary kinds ({})",
                doc.kind,
                BINARY_KINDS.join(", ")
            )
        } else {
            format!(
                "unknown model kind `{}` (expected {})",
                doc.kind,
                BINARY_KINDS.join(", ")
            )
        };
        doc.err("kind", problem)
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
fn csv_bytes<T: Copy + std::fmt::Display>(chains: &[&[T]], d: usize) -> Vec<u8> {
    use std::fmt::Write as _;
    let mut text = String::from("chain,draw");
    for i in 0..d {
        let _ = write!(text, ",x_{i}");
    }
    text.push('\n');
    for (c, chain) in chains.iter().enumerate() {
        for (t, draw) in chain.chunks_exact(d.max(1)).enumerate() {
            let _ = write!(text, "{c},{t}");
            for &x in draw {
                let _ = write!(text, ",{x}");
            }
            text.push('\n');
        }
    }
    text.into_bytes()
}

/// A number as the table prints it: `-` for NaN (a parameter the sampler does not have).
fn num(v: f64) -> String {
    if v.is_nan() {
        "-".into()
    } else {
        format!("{v}")
    }
}

fn print_table(s: &Summary) {
    let mut rows: Vec<(&str, String)> = vec![
        ("sampler", s.sampler.to_string()),
        (
            "model",
            format!(
                "{} ({} {}, d = {}{})",
                s.model,
                s.domain,
                s.kind,
                s.dim,
                if s.domain == "binary" {
                    String::new()
                } else {
                    format!(", S = {}", s.states)
                }
            ),
        ),
    ];
    if !(s.step.is_nan() && s.balance.is_nan()) {
        let label = if s.tuned.is_some() {
            "initial step, balance"
        } else {
            "step, balance"
        };
        rows.push((label, format!("{}, {}", num(s.step), num(s.balance))));
    }
    if let Some(scan) = s.scan {
        rows.push(("scan", format!("{scan} (one step = one sweep of d sites)")));
    }
    if let Some(diagonal) = s.diagonal {
        rows.push(("diagonal", diagonal.to_string()));
    }
    if let Some(w) = s.window {
        rows.push(("window", w.to_string()));
    }
    rows.push((
        "chains × steps",
        format!(
            "{} × {} (+{} burn-in{}, thin {})",
            s.chains,
            s.steps,
            s.burn_in_taken,
            if s.burn_in_taken > s.burn_in {
                " extended for tuning"
            } else {
                ""
            },
            s.thin
        ),
    ));
    rows.push(("acceptance", format!("{:.4}", s.acceptance_rate)));
    match (s.mean_proposed_flips, s.mean_accepted_flips) {
        (Some(p), Some(a)) => rows.push((
            "flips per step",
            format!("{p:.3} proposed, {a:.3} accepted"),
        )),
        _ => {
            rows.push((
                "changes per step",
                format!(
                    "{:.3} proposed, {:.3} accepted",
                    s.mean_proposed_changes.unwrap_or(0.0),
                    s.mean_accepted_changes.unwrap_or(0.0)
                ),
            ));
            let what = if s.statistic == "l1" {
                "L1 jump per step"
            } else {
                "Hamming jump per step"
            };
            rows.push((what, format!("{:.3}", s.mean_jump)));
        }
    }
    rows.push((
        "time",
        format!("{:.3} s, {:.1} ns per step", s.wall_time_s, s.ns_per_step),
    ));
    rows.push(("evaluations", s.evals.to_string()));
    if let Some(t) = &s.tuned {
        rows.push(("tuned (chain 0)", tuned_line(t)));
    }
    for (k, v) in rows {
        println!("{k:<22}{v}");
    }
    let statistic = if s.statistic == "l1" {
        "L1 distance"
    } else {
        "Hamming distance"
    };
    match &s.diagnostics {
        Some(d) => {
            println!(
                "{:<22}min {:.1}, median {:.1}",
                "ESS per coordinate", d.ess_min, d.ess_median
            );
            println!(
                "{:<22}{:.1} ({statistic} to a random reference)",
                "ESS of statistic", d.ess_statistic
            );
            println!("{:<22}{:.1}", "ESS per second", d.ess_per_second);
            println!("{:<22}{:.2}", "ESS per 10k evals", d.ess_per_10k_evals);
            println!("{:<22}{:.4}", "R-hat (max)", d.rhat_max);
        }
        None => println!("{:<22}need at least 8 kept draws per chain", "diagnostics"),
    }
    if let Some(r) = s.marginal_rmse {
        println!("{:<22}{r:.5} (against exact enumeration)", "marginal RMSE");
    }
    if let Some(m) = &s.mmd {
        println!(
            "{:<22}{:.3e} (ln {:.2}; {} draws against {} block-Gibbs draws)",
            "MMD²", m.mmd2, m.log_mmd2, m.draws, m.reference_draws
        );
    }
    if !s.plots.is_empty() {
        println!("{:<22}{}", "plots", s.plots.join(", "));
    }
}

/// One line for chain 0's tuned parameters.
fn tuned_line(tuned: &serde_json::Value) -> String {
    let t = tuned.get(0).unwrap_or(tuned);
    let f = |k: &str| t.get(k).and_then(serde_json::Value::as_f64);
    let list = |k: &str| {
        t.get(k)
            .and_then(serde_json::Value::as_array)
            .map(|v| {
                v.iter()
                    .filter_map(serde_json::Value::as_f64)
                    .map(|x| format!("{x:.3}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .unwrap_or_default()
    };
    if let (Some(a_max), Some(a_min)) = (f("a_max"), f("a_min")) {
        format!(
            "a_max {a_max:.4}, a_min {a_min:.4}, balances [{}], {} tuning steps",
            list("balances"),
            f("tuning_steps").unwrap_or(0.0)
        )
    } else if let (Some(a), Some(b)) = (f("step"), f("balance")) {
        format!(
            "a = {a:.4}, b = {b:.4} after {} tuning steps",
            f("tuning_steps").unwrap_or(0.0)
        )
    } else if let Some(p) = f("rate") {
        format!("flip rate {p:.5}")
    } else {
        t.to_string()
    }
}

/// All available cores.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}
