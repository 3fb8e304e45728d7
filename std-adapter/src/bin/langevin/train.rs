//! `langevin train`: learn an RBM or an Ising model on a graph from binary data by persistent
//! contrastive divergence with any binary sampler of the registry, logging held-out
//! log-likelihoods (AIS or exact) or the coupling RMSE against a known model.

use crate::CliError;
use crate::args::{MemoryArgs, default_threads};
use crate::provenance::Provenance;
use crate::sample::spec::{ParamArgs, ParamSet, sampler_parser};
use clap::{Args, ValueEnum};
use langevin_std::binary::BinaryModel;
use langevin_std::io::{Prepared, Rendering, json_bytes, prepare, write_all};
use langevin_std::learn::ais::{
    AisSettings, EXACT_MAX_UNITS, ais_log_z, base_rate_bias, exact_log_z, mean_log_likelihood,
};
use langevin_std::learn::{
    BinaryRows, IsingParams, OptimizerKind, Pcd, PcdModel, PcdSettings, RbmParams, runs_in_pcd,
};
use langevin_std::models::ModelDoc;
use langevin_std::resources::MemoryBudget;
use langevin_std::samplers::{Domain, Param, SAMPLERS, SamplerEntry};
use langevin_std::seeding::chain_rng;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The model to learn.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum ModelKind {
    /// RBM with `--hidden` hidden units: visible biases start at the data's base rates, weights
    /// uniform with standard deviation 0.01.
    Rbm,
    /// Ising model on `--graph`, one coupling per edge and one field per node.
    Ising,
}

/// The update rule.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum OptimizerName {
    /// Adam (β₁ 0.9, β₂ 0.999).
    Adam,
    /// Plain stochastic gradient ascent.
    Sgd,
}

/// Arguments of `langevin train`.
#[derive(Args, Debug, Clone)]
#[command(allow_negative_numbers = true)]
pub struct TrainArgs {
    /// Training data: binary rows (`.npy`, rows × d).
    #[arg(long)]
    pub data: PathBuf,
    /// The model to learn.
    #[arg(long = "model-kind", value_enum)]
    pub model_kind: ModelKind,
    /// RBM hidden units.
    #[arg(long)]
    pub hidden: Option<usize>,
    /// Ising graph: `lattice:ROWS:COLS` (periodic) or `lattice:ROWS:COLS:open`.
    #[arg(long)]
    pub graph: Option<String>,
    /// Sampler of the persistent chains.
    #[arg(long, value_parser = sampler_parser(), default_value = "gibbs")]
    pub sampler: &'static SamplerEntry,
    #[command(flatten)]
    pub params: ParamArgs<TrainParams>,
    /// Sampler steps per persistent chain and update.
    #[arg(long = "pcd-steps", default_value_t = 10)]
    pub pcd_steps: u64,
    /// Persistent chains.
    #[arg(long, default_value_t = 100)]
    pub chains: usize,
    /// Data rows per minibatch.
    #[arg(long, default_value_t = 100)]
    pub batch: usize,
    /// Learning rate.
    #[arg(long, default_value_t = 1e-3)]
    pub lr: f64,
    /// Passes over the data (updates = ⌈epochs · rows / batch⌉).
    #[arg(long, conflicts_with = "updates")]
    pub epochs: Option<u64>,
    /// Updates (default 1,000 when --epochs is not given).
    #[arg(long)]
    pub updates: Option<u64>,
    /// ℓ1 penalty on the couplings or weights.
    #[arg(long, default_value_t = 0.0)]
    pub l1: f64,
    /// ℓ2 penalty on the couplings or weights.
    #[arg(long, default_value_t = 0.0)]
    pub l2: f64,
    /// Update rule.
    #[arg(long, value_enum, default_value_t = OptimizerName::Adam)]
    pub optimizer: OptimizerName,
    /// Master seed: the same command gives the same model, bit for bit.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Worker threads (default: all cores); results do not depend on it.
    #[arg(long, value_parser = crate::args::at_least_one_thread)]
    pub threads: Option<usize>,
    /// Write the learned model file here (it loads in `langevin sample`).
    #[arg(long)]
    pub out: PathBuf,
    /// Write one CSV row per evaluation here.
    #[arg(long)]
    pub log: Option<PathBuf>,
    /// Held-out binary rows: their mean log-likelihood at each evaluation (exact when a layer
    /// has at most 20 units, else AIS).
    #[arg(long)]
    pub test: Option<PathBuf>,
    /// The model the data came from (kind `ising`): the coupling RMSE at each evaluation.
    #[arg(long = "true")]
    pub truth: Option<PathBuf>,
    /// Evaluate every this many updates (default: a tenth of the run) and at the end.
    #[arg(long = "eval-every")]
    pub eval_every: Option<u64>,
    /// AIS chains of each evaluation.
    #[arg(long = "ais-chains", default_value_t = 100)]
    pub ais_chains: usize,
    /// AIS intermediate distributions of each evaluation.
    #[arg(long = "ais-betas", default_value_t = 1_000)]
    pub ais_betas: usize,
    /// Write the learning curve as a PNG: the held-out log-likelihood (or the coupling RMSE)
    /// against the update.
    #[arg(long)]
    pub plot: Option<PathBuf>,
    /// Write a PNG grid of the persistent chains' final states (square d only).
    #[arg(long)]
    pub samples: Option<PathBuf>,
    /// Write a summary here (JSON): how the model was learned (every option, the input
    /// files' hashes) and each evaluation.
    #[arg(long)]
    pub summary: Option<PathBuf>,
    /// Print nothing on success.
    #[arg(long)]
    pub quiet: bool,
    /// The memory cap (parameters with their gradient and optimiser state, the persistent
    /// chains, the minibatch, the evaluations' AIS).
    #[command(flatten)]
    pub memory: MemoryArgs,
}

/// What `--summary` holds.
#[derive(serde::Serialize)]
struct TrainSummary<'a> {
    #[serde(flatten)]
    provenance: Provenance,
    data: String,
    rows: usize,
    dim: usize,
    model_kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    hidden: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    graph: Option<&'a str>,
    sampler: &'static str,
    pcd_steps: u64,
    chains: usize,
    batch: usize,
    lr: f64,
    updates: u64,
    optimizer: &'static str,
    l1: f64,
    l2: f64,
    seed: u64,
    threads: usize,
    eval_every: u64,
    out: String,
    evaluations: Vec<serde_json::Value>,
}

/// A held-out log-likelihood and its standard error (0 when exact), and a coupling RMSE.
type Evaluation = (Option<(f64, f64)>, Option<f64>);

/// One evaluation.
struct Row {
    update: u64,
    wall_time_s: f64,
    acceptance: f64,
    log_likelihood: Option<(f64, f64)>,
    coupling_rmse: Option<f64>,
}

/// `lattice:R:C[:open]` as `(rows, cols, periodic)`.
fn parse_graph(text: &str) -> Result<(usize, usize, bool), CliError> {
    let bad = || {
        CliError(format!(
            "--graph {text}: expected lattice:ROWS:COLS or lattice:ROWS:COLS:open"
        ))
    };
    let parts: Vec<&str> = text.split(':').collect();
    let (rows, cols, periodic) = match parts[..] {
        ["lattice", r, c] => (r, c, true),
        ["lattice", r, c, "open"] => (r, c, false),
        _ => return Err(bad()),
    };
    let rows: usize = rows.parse().map_err(|_| bad())?;
    let cols: usize = cols.parse().map_err(|_| bad())?;
    if rows == 0 || cols == 0 {
        return Err(bad());
    }
    // Nodes are numbered in 32 bits.
    if rows.checked_mul(cols).is_none_or(|n| n > u32::MAX as usize) {
        return Err(CliError(format!(
            "--graph {text}: {rows} × {cols} nodes is more than 2^32"
        )));
    }
    Ok((rows, cols, periodic))
}

/// Refuses, before anything is allocated, a run whose memory exceeds the cap: the parameters
/// (with their gradient and the optimiser's two moments), the persistent chains' states and
/// buffers, the minibatch, and the AIS of each evaluation.
fn check_memory(args: &TrainArgs, data: &BinaryRows) -> Result<(), CliError> {
    let d = data.cols as u64;
    let threads = args.threads.unwrap_or_else(default_threads).max(1) as u64;
    let (parameters, units) = match args.model_kind {
        ModelKind::Rbm => {
            let h = args.hidden.unwrap_or(0) as u64;
            let weights = d.checked_mul(h);
            (
                weights.and_then(|w| w.checked_add(d)?.checked_add(h)),
                d.checked_add(h),
            )
        }
        ModelKind::Ising => {
            let nodes = match args.graph.as_deref() {
                Some(g) => {
                    let (r, c, _) = parse_graph(g)?;
                    (r as u64).checked_mul(c as u64)
                }
                None => Some(d),
            };
            // A field per node and at most two edges per node.
            (nodes.and_then(|n| n.checked_mul(3)), nodes)
        }
    };
    let chains = args.chains as u64;
    let mut parts: Vec<(&str, Vec<u64>)> = vec![
        (
            "parameters, gradient and optimiser state",
            parameters.map_or(vec![u64::MAX, 2], |p| vec![p, 32]),
        ),
        (
            "persistent chains",
            units.map_or(vec![u64::MAX, 2], |u| vec![chains, u.saturating_add(2), 32]),
        ),
        ("minibatch", vec![args.batch as u64, 16]),
    ];
    // Evaluations run AIS on RBMs whose layers both have more than 20 units (else exact).
    let ais = matches!(args.model_kind, ModelKind::Rbm)
        && d.min(args.hidden.unwrap_or(0) as u64) > EXACT_MAX_UNITS as u64;
    if args.test.is_some() && ais {
        let u = units.unwrap_or(u64::MAX);
        parts.push(("AIS chains' weights", vec![args.ais_chains as u64, 64]));
        parts.push((
            "AIS temperatures",
            vec![(args.ais_betas as u64).saturating_add(1), 8],
        ));
        parts.push(("AIS worker states", vec![threads, u, 17]));
    }
    let parts: Vec<(&str, &[u64])> = parts.iter().map(|(n, f)| (*n, f.as_slice())).collect();
    args.memory.check(&parts)
}

/// Refuses, before anything is read or learned, an output that names an input (`--data`,
/// `--test`, `--true`) or another output, an output whose folder cannot be written, and an
/// output another run is writing (locked until the returned guard is dropped).
fn check_outputs(args: &TrainArgs) -> Result<Prepared, CliError> {
    let named = |pairs: &[(&str, Option<&std::path::Path>)]| -> Vec<(String, PathBuf)> {
        pairs
            .iter()
            .filter_map(|(flag, p)| Some((flag.to_string(), (*p)?.to_path_buf())))
            .collect()
    };
    let inputs = named(&[
        ("--data", Some(&args.data)),
        ("--test", args.test.as_deref()),
        ("--true", args.truth.as_deref()),
    ]);
    let outputs = named(&[
        ("--out", Some(&args.out)),
        ("--log", args.log.as_deref()),
        ("--summary", args.summary.as_deref()),
        ("--plot", args.plot.as_deref()),
        ("--samples", args.samples.as_deref()),
    ]);
    let prepared = prepare(&inputs, &outputs)?;
    // The pictures are written with the other outputs, all or none: one that cannot be drawn
    // is refused now rather than after the run.
    if args.plot.is_some() && args.test.is_none() && args.truth.is_none() {
        return Err(CliError(
            "--plot draws the held-out log-likelihood (--test) or the coupling RMSE (--true) \
             per evaluation: give one of them"
                .into(),
        ));
    }
    Ok(prepared)
}

pub fn run(args: &TrainArgs) -> Result<(), CliError> {
    // Held until the outputs are written: a second run on any of them is refused.
    let _outputs = check_outputs(args)?;
    let budget = args.memory.budget();
    let data = BinaryRows::read_within(&args.data, &budget)?;
    let test = args
        .test
        .as_deref()
        .map(|p| BinaryRows::read_within(p, &budget))
        .transpose()?;
    check_memory(args, &data)?;
    let model = initial_model(args, &data)?;
    if let (Some(t), Some(path)) = (&test, &args.test)
        && t.cols != data.cols
    {
        return Err(CliError(format!(
            "{}: rows have {} values, the training data {}",
            path.display(),
            t.cols,
            data.cols
        )));
    }
    let d = model.dim();
    if args.samples.is_some() && (d as f64).sqrt().round().powi(2) as usize != d {
        return Err(CliError(format!(
            "--samples: the dimension {d} is not a square"
        )));
    }
    let truth = read_truth(args, &budget, d)?;
    let updates = match (args.epochs, args.updates) {
        (Some(e), _) => e
            .saturating_mul(data.rows() as u64)
            .div_ceil(args.batch.max(1) as u64),
        (None, Some(u)) => u,
        (None, None) => 1_000,
    };
    let sampler = args.sampler.with(args.params.0)?;
    let threads = args.threads.unwrap_or_else(default_threads).max(1);
    let mut pcd = Pcd::new(model, &data, &sampler, pcd_settings(args, updates, threads))?;
    let every = args.eval_every.unwrap_or((updates / 10).max(1)).max(1);
    let evaluator = Evaluator {
        args,
        data: &data,
        test: test.as_ref(),
        truth: truth.as_ref(),
        threads,
    };
    let rows = train(args, &mut pcd, updates, every, &evaluator)?;
    let run = Finished {
        args,
        data: &data,
        pcd: &pcd,
        rows: &rows,
        updates,
        threads,
        every,
    };
    let mut files: Vec<(PathBuf, Vec<u8>)> =
        vec![(args.out.clone(), json_bytes(&pcd.model().to_json())?)];
    if let Some(path) = &args.summary {
        files.push((path.clone(), json_bytes(&run.summary())?));
    }
    if let Some(path) = &args.log {
        files.push((path.clone(), log_csv(&rows)));
    }
    if let Some(path) = &args.plot {
        files.push(run.learning_curve(path, test.is_some())?);
    }
    if let Some(path) = &args.samples {
        files.push(run.chain_pictures(path)?);
    }
    write_all(&files)?;
    Ok(())
}

/// The model to learn, as it starts: an RBM with base-rate visible biases and small random
/// weights, or an Ising model of zero couplings on the graph.
fn initial_model(args: &TrainArgs, data: &BinaryRows) -> Result<PcdModel, CliError> {
    Ok(match args.model_kind {
        ModelKind::Rbm => {
            let h = args
                .hidden
                .ok_or_else(|| CliError("--model-kind rbm needs --hidden".into()))?;
            // Weights from the stream after the chains' and the minibatches' streams.
            let mut rng = chain_rng(args.seed, args.chains.saturating_add(1));
            let b = base_rate_bias(&data.values, data.cols);
            PcdModel::Rbm(RbmParams::initial(&b, h, 0.01, &mut rng))
        }
        ModelKind::Ising => {
            let graph = args
                .graph
                .as_deref()
                .ok_or_else(|| CliError("--model-kind ising needs --graph".into()))?;
            let (r, c, periodic) = parse_graph(graph)?;
            PcdModel::Ising(IsingParams::lattice(r, c, periodic)?)
        }
    })
}

/// The `--true` model: an `ising` model with `dim` nodes.
fn read_truth(
    args: &TrainArgs,
    budget: &MemoryBudget,
    dim: usize,
) -> Result<Option<BinaryModel>, CliError> {
    let Some(path) = &args.truth else {
        return Ok(None);
    };
    let doc = ModelDoc::read_within(path, budget)?;
    match BinaryModel::from_doc(&doc)? {
        Some(m @ BinaryModel::IsingGraph { .. }) if m.dim() == dim => Ok(Some(m)),
        _ => Err(CliError(format!(
            "{}: --true needs an `ising` model with {dim} nodes",
            path.display(),
        ))),
    }
}

/// The parameters of the persistent chains' samplers that `train` takes: those of every
/// sampler that runs inside PCD, where they apply to binary models.
#[derive(Clone, Debug)]
pub struct TrainParams;

impl ParamSet for TrainParams {
    fn takes(param: Param) -> bool {
        param.applies_to(Domain::Binary)
            && SAMPLERS
                .iter()
                .any(|e| e.params.contains(&param) && runs_in_pcd(e))
    }
}

/// The learning settings from the command line.
fn pcd_settings(args: &TrainArgs, updates: u64, threads: usize) -> PcdSettings {
    PcdSettings {
        pcd_steps: args.pcd_steps,
        chains: args.chains,
        batch: args.batch,
        updates,
        optimizer: match args.optimizer {
            OptimizerName::Adam => OptimizerKind::Adam,
            OptimizerName::Sgd => OptimizerKind::Sgd,
        },
        lr: args.lr,
        l1: args.l1,
        l2: args.l2,
        seed: args.seed,
        threads,
    }
}

/// What an evaluation measures: the held-out log-likelihood (`--test`) and the coupling RMSE
/// (`--true`).
struct Evaluator<'a> {
    args: &'a TrainArgs,
    data: &'a BinaryRows,
    test: Option<&'a BinaryRows>,
    truth: Option<&'a BinaryModel>,
    threads: usize,
}

impl Evaluator<'_> {
    /// The held-out mean log-likelihood (exact when the partition function can be summed,
    /// else by AIS) and the coupling RMSE of `model`, each when asked for.
    fn evaluate(&self, model: &PcdModel) -> Result<Evaluation, CliError> {
        let ll = match (model, self.test) {
            (PcdModel::Rbm(rbm), Some(t)) => Some(match exact_log_z(rbm) {
                Some(z) => (mean_log_likelihood(rbm, &t.values, z), 0.0),
                None => {
                    let ais = AisSettings {
                        chains: self.args.ais_chains,
                        betas: self.args.ais_betas,
                        seed: self.args.seed,
                        threads: self.threads,
                        ..AisSettings::default()
                    };
                    let base = base_rate_bias(&self.data.values, self.data.cols);
                    let est = ais_log_z(rbm, &base, &ais)?;
                    (
                        mean_log_likelihood(rbm, &t.values, est.log_z),
                        est.log_z_stderr,
                    )
                }
            }),
            (PcdModel::Ising(m), Some(t)) => m.exact_log_z().map(|z| {
                let n = t.rows() as f64;
                let total: f64 = (0..t.rows()).map(|i| m.log_density(t.row(i))).sum();
                (total / n - z, 0.0)
            }),
            _ => None,
        };
        let rmse = match (model, self.truth) {
            (PcdModel::Ising(m), Some(t)) => m.coupling_rmse(t),
            _ => None,
        };
        Ok((ll, rmse))
    }
}

/// Runs the updates, evaluating every `every` updates and after the last (timing only the
/// updates), and prints each evaluation unless `--quiet`.
fn train(
    args: &TrainArgs,
    pcd: &mut Pcd<'_>,
    updates: u64,
    every: u64,
    evaluator: &Evaluator<'_>,
) -> Result<Vec<Row>, CliError> {
    let mut rows = Vec::new();
    let mut trained = Duration::ZERO;
    while pcd.updates() < updates {
        let start = Instant::now();
        pcd.update()?;
        trained += start.elapsed();
        let u = pcd.updates();
        if u % every == 0 || u == updates {
            let acceptance = pcd.take_stats().acceptance_rate();
            let (log_likelihood, coupling_rmse) = evaluator.evaluate(pcd.model())?;
            let row = Row {
                update: u,
                wall_time_s: trained.as_secs_f64(),
                acceptance,
                log_likelihood,
                coupling_rmse,
            };
            if !args.quiet {
                println!("{}", row.line());
            }
            rows.push(row);
        }
    }
    Ok(rows)
}

impl Row {
    /// The evaluation as printed: update, time, acceptance and what was measured.
    fn line(&self) -> String {
        let mut line = format!(
            "update {:>7}  {:>8.2} s  acceptance {:.3}",
            self.update, self.wall_time_s, self.acceptance
        );
        if let Some((l, se)) = self.log_likelihood {
            let _ = write!(line, "  test log-likelihood {l:.4} ± {se:.4}");
        }
        if let Some(r) = self.coupling_rmse {
            let _ = write!(line, "  coupling RMSE {r:.5}");
        }
        line
    }
}

/// The evaluations as CSV (`--log`), one row each.
fn log_csv(rows: &[Row]) -> Vec<u8> {
    let opt = |v: Option<f64>| v.map(|x| x.to_string()).unwrap_or_default();
    let mut csv = String::from(
        "update,wall_time_s,acceptance,log_likelihood,log_likelihood_stderr,coupling_rmse\n",
    );
    for r in rows {
        let _ = writeln!(
            csv,
            "{},{},{},{},{},{}",
            r.update,
            r.wall_time_s,
            r.acceptance,
            opt(r.log_likelihood.map(|l| l.0)),
            opt(r.log_likelihood.map(|l| l.1)),
            opt(r.coupling_rmse)
        );
    }
    csv.into_bytes()
}

/// A finished run, for the outputs drawn from it.
struct Finished<'a> {
    args: &'a TrainArgs,
    data: &'a BinaryRows,
    pcd: &'a Pcd<'a>,
    rows: &'a [Row],
    updates: u64,
    threads: usize,
    every: u64,
}

impl Finished<'_> {
    /// What `--summary` holds: every option, the inputs' hashes and the evaluations.
    fn summary(&self) -> TrainSummary<'_> {
        let args = self.args;
        TrainSummary {
            provenance: Provenance::new(None).with_inputs(&[
                ("data", Some(&args.data)),
                ("test", args.test.as_deref()),
                ("true", args.truth.as_deref()),
            ]),
            data: args.data.display().to_string(),
            rows: self.data.rows(),
            dim: self.data.cols,
            model_kind: match args.model_kind {
                ModelKind::Rbm => "rbm",
                ModelKind::Ising => "ising",
            },
            hidden: args
                .hidden
                .filter(|_| matches!(args.model_kind, ModelKind::Rbm)),
            graph: args
                .graph
                .as_deref()
                .filter(|_| matches!(args.model_kind, ModelKind::Ising)),
            sampler: args.sampler.name,
            pcd_steps: args.pcd_steps,
            chains: args.chains,
            batch: args.batch,
            lr: args.lr,
            updates: self.updates,
            optimizer: match args.optimizer {
                OptimizerName::Adam => "adam",
                OptimizerName::Sgd => "sgd",
            },
            l1: args.l1,
            l2: args.l2,
            seed: args.seed,
            threads: self.threads,
            eval_every: self.every,
            out: args.out.display().to_string(),
            evaluations: self
                .rows
                .iter()
                .map(|r| {
                    serde_json::json!({
                        "update": r.update,
                        "wall_time_s": r.wall_time_s,
                        "acceptance": r.acceptance,
                        "log_likelihood": r.log_likelihood.map(|l| l.0),
                        "log_likelihood_stderr": r.log_likelihood.map(|l| l.1),
                        "coupling_rmse": r.coupling_rmse,
                    })
                })
                .collect(),
        }
    }

    /// The learning curve (`--plot`): the held-out log-likelihood when there is test data,
    /// else the coupling RMSE, against the update it was measured after.
    fn learning_curve(
        &self,
        path: &std::path::Path,
        held_out: bool,
    ) -> Result<(PathBuf, Vec<u8>), CliError> {
        let rows = self.rows.iter();
        let (title, y_label, points): (&str, &str, Vec<(f64, f64)>) = if held_out {
            (
                "Learning curve: held-out mean log-likelihood",
                "held-out log-likelihood (nats)",
                rows.filter_map(|r| r.log_likelihood.map(|l| (r.update as f64, l.0)))
                    .collect(),
            )
        } else {
            (
                "Learning curve: coupling RMSE against the true model",
                "coupling RMSE",
                rows.filter_map(|r| r.coupling_rmse.map(|e| (r.update as f64, e)))
                    .collect(),
            )
        };
        let spec = langevin_std::plot::LineSpec {
            title: title.to_string(),
            x_label: format!(
                "update (evaluated every {} updates, and after the last)",
                self.every
            ),
            y_label: y_label.to_string(),
        };
        let picture = Rendering::beside(path)?;
        langevin_std::plot::line_plot(picture.path(), &spec, &points)?;
        Ok(picture.bytes()?)
    }

    /// A grid of the first 64 persistent chains' final states (`--samples`).
    fn chain_pictures(&self, path: &std::path::Path) -> Result<(PathBuf, Vec<u8>), CliError> {
        let d = self.pcd.model().dim();
        let side = (d as f64).sqrt().round() as usize;
        if side * side != d {
            return Err(CliError(format!(
                "--samples: the dimension {d} is not a square"
            )));
        }
        let images: Vec<&[u8]> = self.pcd.chain_states().take(64).collect();
        let caption = format!(
            "the first {} of {} persistent chains after {} updates, 8 a row",
            images.len(),
            self.args.chains,
            self.pcd.updates()
        );
        let picture = Rendering::beside(path)?;
        langevin_std::plot::image_grid_titled(
            picture.path(),
            "Persistent chains' final states",
            &caption,
            &images,
            side,
            side,
            8,
        )?;
        Ok(picture.bytes()?)
    }
}
