//! `langevin sample`: run chains of a discrete sampler on a model file.
//!
//! [`spec`] turns the arguments into a typed [`RunSpec`]; binary kinds run here, label kinds
//! (ordinal and categorical) in [`labels`]; `--exact`, `--mmd` and `--plot` in [`exact`],
//! [`mmd`] and [`pictures`].

mod checkpoint;
mod exact;
mod labels;
mod merge;
mod mmd;
pub(crate) mod pictures;
pub(crate) mod spec;

use crate::CliError;
use crate::progress;
use crate::provenance::Provenance;
use langevin_std::binary::{BinaryDiagnostics, BinaryModel, Depth, diagnose};
use langevin_std::diagnostics::{
    CoordinateTable, DiagError, convergence_warnings, coordinate_table,
};
use langevin_std::io::{
    DrawDtype, DrawsFile, Prepared, csv_draws_from, json_bytes, prepare, write_all_with,
};
use langevin_std::labels::{LABEL_KINDS, LabelModel};
use langevin_std::models::{ModelDoc, Problem, QuarticMixture};
use langevin_std::resources::product;
use langevin_std::run::{Checkpoint, DrawSink, Keep, run_binary_plan};
use langevin_std::samplers::{Domain, SamplerPlan, SummaryOptions};
use langevin_std::shards::Totals;
pub use merge::{MergeArgs, run as merge};
use serde::Serialize;
use spec::{Diagnostics, RunSpec};
pub use spec::{Format, SampleArgs, SamplerArgs, check_writable};
use std::path::{Path, PathBuf};

/// Fills the summary's measurements from a binary or label run (the two have the same
/// accessors).
macro_rules! measured {
    ($summary:ident, $run:ident, $diagnostics:expr) => {
        let stats = $run.stats();
        $summary.burn_in_taken = $run
            .chains
            .iter()
            .map(|c| c.burn_in_stats.steps)
            .max()
            .unwrap_or(0);
        $summary.acceptance_rate = stats.acceptance_rate();
        $summary.mean_jump = $run.mean_jump();
        $summary.invalid_proposals = stats.invalid;
        $summary.evals = $run.evaluations();
        $summary.wall_time_s = $run.wall_time.as_secs_f64();
        $summary.ns_per_step =
            langevin_std::shards::ns_per_step($run.wall_time, $run.steps_taken());
        $summary.totals = langevin_std::shards::Totals::of(&$run);
        $summary.diagnostics = $diagnostics;
        $summary.warnings = match &$summary.diagnostics {
            Some(d) => $crate::sample::warnings_of(d),
            None => vec![$crate::sample::no_diagnostics_warning(
                $summary.kept_per_chain,
            )],
        };
        $summary.tuned = $run.tuned();
        $summary.mean = $run.means();
    };
}
pub(crate) use measured;

/// The convergence warnings of a run's diagnostics: the smallest ESS reported (per coordinate,
/// or of the statistic alone) and the largest R-hat.
pub(crate) fn warnings_of(d: &BinaryDiagnostics) -> Vec<String> {
    convergence_warnings(d.rhat_max, d.ess_min.min(d.ess_statistic))
}

/// The warning of a run without diagnostics.
pub(crate) fn no_diagnostics_warning(kept_per_chain: usize) -> String {
    format!(
        "R-hat and ESS were not computed (--diagnostics none, or {kept_per_chain} kept draws \
         per chain, fewer than 8): the run cannot be judged"
    )
}

/// The binary kinds `sample` reads.
const BINARY_KINDS: [&str; 5] = [
    "binary_quadratic",
    "ising",
    "ising_lattice",
    "rbm",
    "binary_logistic",
];

/// What `summary.json` holds, for binary and label runs alike (fields that do not apply are
/// left out).
#[derive(Debug, Serialize)]
pub struct Summary {
    #[serde(flatten)]
    provenance: Provenance,
    sampler: &'static str,
    model: String,
    kind: String,
    domain: &'static str,
    states: usize,
    step: f64,
    balance: f64,
    /// The sampler's options the parameter table marks for the summary (Gibbs' scan, the
    /// balancing function, the Hamming ball's radius and block length).
    #[serde(flatten)]
    options: SummaryOptions,
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
    /// The first chain this run holds (`--first-chain`; 0 for a whole run).
    first_chain: usize,
    /// The chains it holds, `[first, end)`: each with the draws it has in one run of `end`
    /// chains.
    chain_range: [usize; 2],
    /// The `.npy` file of the kept draws (`--out`), as given.
    #[serde(skip_serializing_if = "Option::is_none")]
    out: Option<String>,
    /// The run's exact step counts (what `langevin merge` adds up).
    totals: Totals,
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
    /// Which diagnostics were asked for: `none`, `summary` or `full`.
    #[serde(rename = "diagnostics")]
    diagnostics_asked: &'static str,
    #[serde(flatten)]
    diagnostics: Option<BinaryDiagnostics>,
    /// Present when the kept draws did not all fit under the memory cap: they all went to the
    /// `.npy` file, and the diagnostics (R-hat, ESS, the marginal RMSE, the MMD, the plots)
    /// ran on every `every`-th of them.
    #[serde(skip_serializing_if = "Option::is_none")]
    diagnostics_on: Option<DiagnosticsOn>,
    #[serde(skip_serializing_if = "Option::is_none")]
    marginal_rmse: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    mmd: Option<mmd::MmdReport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tuned: Option<serde_json::Value>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    plots: Vec<String>,
    /// Why the numbers should not be trusted (empty when R-hat and ESS pass).
    warnings: Vec<String>,
    mean: Vec<f64>,
    /// ArviZ's `summary` columns per coordinate (`--diagnostics full`).
    #[serde(flatten)]
    coordinates: Option<CoordinateColumns>,
}

/// The per-coordinate columns of ArviZ's `summary` beside `mean`: bulk ESS and R-hat, and the
/// [`CoordinateTable`] (sd, quantiles, MCSE of the mean, tail ESS).
#[derive(Debug, Serialize)]
pub struct CoordinateColumns {
    ess_bulk: Vec<f64>,
    rhat: Vec<f64>,
    #[serde(flatten)]
    table: CoordinateTable,
}

/// Fills `summary.coordinates` from the per-coordinate diagnostics and the draws they ran on
/// (the draws in memory); left empty when there are none.
pub(crate) fn coordinate_columns<T: Copy + Into<f64>>(summary: &mut Summary, chains: &[&[T]]) {
    if let Some(d) = &summary.diagnostics {
        summary.coordinates = coordinate_columns_of(d, chains, summary.dim);
    }
}

/// The per-coordinate columns of `d` and the draws it ran on; `None` without per-coordinate
/// diagnostics.
pub(crate) fn coordinate_columns_of<T: Copy + Into<f64>>(
    d: &BinaryDiagnostics,
    chains: &[&[T]],
    dim: usize,
) -> Option<CoordinateColumns> {
    let c = d.coordinates.as_ref()?;
    let table = coordinate_table(chains, dim).ok()?;
    Some(CoordinateColumns {
        ess_bulk: c.ess.per_coordinate.clone(),
        rhat: c.rhat.clone(),
        table,
    })
}

/// The kept draws the diagnostics used, when not all of them.
#[derive(Debug, Serialize)]
pub struct DiagnosticsOn {
    /// One kept draw in `every` (the first, then every `every`-th after it).
    every: u64,
    /// Draws per chain the diagnostics used.
    draws_per_chain: usize,
    /// Kept draws per chain (all in the `.npy` file).
    of: usize,
}

impl DiagnosticsOn {
    /// `None` for a stride of 1 (every draw).
    fn new(stride: u64, kept: usize) -> Option<Self> {
        (stride > 1).then(|| DiagnosticsOn {
            every: stride,
            draws_per_chain: kept.div_ceil(stride as usize),
            of: kept,
        })
    }

    /// The warning that says so.
    fn warning(&self) -> String {
        format!(
            "the kept draws exceed --max-memory in memory: all {} per chain went to the .npy \
             file, and the diagnostics used every {}-th ({} per chain)",
            self.of, self.every, self.draws_per_chain
        )
    }
}

/// The kept draws of a run with `--out`: streamed into the file as they are produced.
pub(crate) fn draws_file(
    spec: &RunSpec,
    d: usize,
    dtype: DrawDtype,
) -> Result<Option<DrawsFile>, CliError> {
    let Some(path) = &spec.outputs.draws else {
        return Ok(None);
    };
    let shape = [spec.config.chains, spec.config.kept(), d];
    Ok(Some(DrawsFile::create(path, shape, dtype)?))
}

/// The [`Keep`] of a run: one in `stride` draws in memory, all of them into `file`.
pub(crate) fn keep<'a, T>(
    stride: u64,
    file: Option<&'a DrawsFile>,
    checkpoint: Option<&'a Checkpoint>,
) -> Keep<'a, T>
where
    DrawsFile: DrawSink<T>,
{
    Keep {
        stride,
        sink: file.map(|f| f as &dyn DrawSink<T>),
        checkpoint,
    }
}

pub fn run(args: &SampleArgs) -> Result<(), CliError> {
    sample(&RunSpec::parse(args)?)
}

/// Runs a typed specification: reads the model, then samples it in its domain.
fn sample(spec: &RunSpec) -> Result<(), CliError> {
    let doc = ModelDoc::read_within(&spec.model, &spec.memory)?;
    // Held until the outputs are written: a second run on any of them is refused.
    let _outputs = check_outputs(spec, &doc)?;
    check_model_memory(spec, &doc)?;
    if let Some(model) = BinaryModel::from_doc(&doc)? {
        return run_binary(spec, &doc, &model);
    }
    if let Some(model) = LabelModel::from_doc(&doc)? {
        return labels::run(spec, &doc, &model);
    }
    Err(doc
        .err(
            "kind",
            Problem::UnknownKind {
                kind: doc.kind.clone(),
                expected: &BINARY_KINDS,
                also: &LABEL_KINDS,
            },
        )
        .into())
}

fn run_binary(spec: &RunSpec, doc: &ModelDoc, model: &BinaryModel) -> Result<(), CliError> {
    let config = &spec.config;
    let d = model.dim();
    let plan = spec.sampler.plan_for(Domain::Binary, &config.shape(d))?;
    // The parameters, and the `Wᵀ` an RBM's chains read unless the model holds it already.
    let transpose = match &plan {
        SamplerPlan::Kernel(k) if !k.reads_rbm_transpose() => 0,
        _ if spec.batch.is_some() => model.rbm_batch_transpose_bytes(),
        _ => model.rbm_transpose_bytes(),
    };
    let mut model_parts = vec![
        ("the model's parameters", Some(model.parameter_bytes())),
        ("the parsed model file", Some(doc.parse_bytes)),
    ];
    if transpose > 0 {
        model_parts.push(("the transpose of its W", Some(transpose)));
    }
    if let Some(n) = spec.batch {
        model_parts.extend(batch_parts(model, n, config));
    }
    let stride = check_memory(spec, d, 1, 1, &model_parts)?;
    if spec.exact {
        exact::check_size(d, 2)?;
    }
    if spec.mmd && !matches!(model, BinaryModel::Rbm { .. }) {
        return Err(CliError(
            "--mmd compares against block-Gibbs draws and needs an rbm model".into(),
        ));
    }
    if spec.batch.is_some() && stride > 1 {
        return Err(CliError(
            "--batch keeps every kept draw in memory, and they exceed the memory limit: raise \
             --max-memory or drop --batch"
                .into(),
        ));
    }
    let total = progress_total(&plan, spec);
    let name = spec.sampler.name();
    let show = progress::wanted(spec.quiet);
    let file = draws_file(spec, d, DrawDtype::U8)?;
    let checkpoint = checkpoint::open(spec)?;
    let keep = keep(stride, file.as_ref(), checkpoint.as_ref());
    let run = progress::with_progress(name, total, show, |p| {
        run_binary_plan(model, name, &plan, config, spec.batch, p, keep)
    })?;
    let draws: Vec<&[u8]> = run.chains.iter().map(|c| c.draws.as_slice()).collect();
    let marginal_rmse = if spec.exact {
        Some(exact::rmse(&exact::binary(model)?, &draws, d, 2)?)
    } else {
        None
    };
    let mmd = if spec.mmd {
        Some(mmd::rbm(model, &run, config.seed)?)
    } else {
        None
    };
    let mut files: Vec<(PathBuf, Vec<u8>)> = Vec::new();
    if let Some(path) = &spec.outputs.plot {
        files.extend(pictures::binary(path, spec, model, &run)?);
    }
    let stats = run.stats();
    let mut summary = Summary::new(spec, doc, &plan, Domain::Binary, 2, d);
    summary.mean_proposed_flips = Some(stats.mean_proposed_flips());
    summary.mean_accepted_flips = Some(stats.mean_accepted_flips());
    summary.marginal_rmse = marginal_rmse;
    summary.mmd = mmd;
    let diagnostics = diagnostics_of(spec, d, |depth| diagnose(&run, config.seed, depth));
    measured!(summary, run, diagnostics);
    coordinate_columns(&mut summary, &draws);
    summary.subset(stride);
    summary.plots = plot_names(&files);
    finish(spec, &summary, file, &draws, files)
}

/// The memory `--batch N` adds: every chain's stream for `⌈chains / N⌉ · N` rows (the last
/// group padded with spare chains), and for each group stepped at once (one per worker) `N`
/// rows of state, gradients and proposals and the model's per-row caches (an RBM's hidden
/// pre-activations, a quadratic model's products, a logistic regression's residuals), beside
/// its per-group copies (`Wᵀ`-free: a quadratic model's `d × d` scratch, the covariates'
/// transpose).
fn batch_parts(
    model: &BinaryModel,
    batch: usize,
    config: &langevin_std::binary::RunConfig,
) -> Vec<(&'static str, Option<u64>)> {
    let d = model.dim() as u64;
    let groups = config.chains.div_ceil(batch.max(1)) as u64;
    let rows = product(&[groups, batch as u64]);
    let at_once = groups.min(config.threads.max(1) as u64);
    // Per row: x and its proposal (1 byte each), two gradients and the changed indices (4
    // bytes each) per coordinate, and a few scalars.
    let state = d.checked_mul(14).and_then(|b| b.checked_add(64));
    let (per_row, fixed) = match model {
        BinaryModel::Rbm { c, .. } => {
            let h = c.len().div_ceil(64) as u64 * 64;
            (
                h.checked_mul(12).and_then(|b| b.checked_add(4 * d)),
                product(&[d, h, 4]),
            )
        }
        BinaryModel::Quadratic { .. } => (Some(16 * (d + 1)), product(&[d, d, 8])),
        BinaryModel::Logistic { y, .. } => {
            let m = y.len() as u64;
            (Some(20 * m), product(&[m, d, 8]))
        }
        // No batched path: refused before it would run.
        _ => return Vec::new(),
    };
    let group = state
        .zip(per_row)
        .and_then(|(a, b)| a.checked_add(b))
        .and_then(|b| b.checked_mul(batch as u64))
        .zip(fixed)
        .and_then(|(a, b)| a.checked_add(b));
    vec![
        ("--batch streams", rows.and_then(|r| r.checked_mul(72))),
        (
            "--batch groups stepped at once",
            group.and_then(|g| g.checked_mul(at_once)),
        ),
    ]
}

/// Refuses, before sampling, an output that would overwrite the model file, an array file it
/// names, or another output (the pictures `--plot` may write beside it included), an output
/// whose folder cannot be written, and an output another run is writing (locked until the
/// returned guard is dropped).
fn check_outputs(spec: &RunSpec, doc: &ModelDoc) -> Result<Prepared, CliError> {
    let mut inputs: Vec<(String, PathBuf)> = vec![("--model".into(), spec.model.clone())];
    inputs.extend(
        doc.array_files()
            .into_iter()
            .map(|(field, path)| (format!("the model's `{field}`"), path)),
    );
    let mut outputs: Vec<(String, PathBuf)> = spec
        .outputs
        .named()
        .into_iter()
        .map(|(flag, p)| (flag.to_string(), p.to_path_buf()))
        .collect();
    if let Some(plot) = &spec.outputs.plot {
        outputs.extend(
            pictures::companions(plot)
                .into_iter()
                .map(|p| ("--plot's companion".to_string(), p)),
        );
    }
    let (resumed, checkpoints) = checkpoint::files(spec);
    inputs.extend(resumed);
    outputs.extend(checkpoints);
    Ok(prepare(&inputs, &outputs)?)
}

/// Refuses, before the model is built, a model whose counts ask for more memory than the cap
/// (a quartic mixture's `d × d` rotation); a malformed count is left to the loader to name.
fn check_model_memory(spec: &RunSpec, doc: &ModelDoc) -> Result<(), CliError> {
    if doc.kind == "quartic_mixture"
        && let (Ok(dim), Ok(components)) = (doc.count("dim"), doc.count("components"))
    {
        let bytes = QuarticMixture::memory(dim, components);
        spec.memory.check(&[("the model's rotation", bytes)])?;
    }
    Ok(())
}

/// Refuses, before anything is allocated, a run whose memory would exceed the cap: the model's
/// `model` parts, the kept draws (`stored` bytes per value), their flat copy and `.npy` bytes
/// (`npy` bytes per value), the CSV text and the diagnostics' series. Returns the stride of the draws kept in memory:
/// 1 (all) when they fit; with `--out` (and no `--csv`, which needs them all) the draws stream
/// to the file instead, and as many as fit under the cap (one in `stride`) stay for the
/// diagnostics.
pub(crate) fn check_memory(
    spec: &RunSpec,
    d: usize,
    stored: u64,
    npy: u64,
    model: &[(&str, Option<u64>)],
) -> Result<u64, CliError> {
    let config = &spec.config;
    let kept = config.steps / config.thin.max(1);
    let draws = product(&[config.chains as u64, kept]);
    let times = |n: Option<u64>, k: u64| n.and_then(|n| n.checked_mul(k));
    let values = times(draws, d as u64);
    let diagnostics_per_draw = diagnostics_bytes_per_draw(spec, d, stored);
    let csv = spec.outputs.csv.is_some().then(|| {
        // Up to five digits and a comma per value, and the chain and draw numbers per line.
        times(values, 6)
            .zip(times(draws, 24))
            .and_then(|(a, b)| a.checked_add(b))
    });
    let streamed = spec.outputs.draws.is_some();
    if !streamed {
        let mut parts = vec![
            ("kept draws", times(values, stored)),
            ("their copy for the outputs", times(values, stored)),
            ("diagnostics", times(draws, diagnostics_per_draw)),
        ];
        if let Some(text) = csv {
            parts.push(("CSV text", text));
        }
        parts.extend_from_slice(model);
        spec.memory.check(&parts)?;
        return Ok(1);
    }
    // Streamed: the draws in memory (and `U` at each), their diagnostics, the chains' write
    // batches (1 MiB per worker, and its encoded bytes).
    let batches = (1 << 20) * config.threads.max(1) as u64 * (1 + npy.max(1));
    let per_draw = (d as u64)
        .checked_mul(stored)
        .and_then(|b| b.checked_add(8 + diagnostics_per_draw));
    let parts = |n: Option<u64>| {
        let mut parts = vec![
            ("kept draws", times(n, d as u64 * stored)),
            ("diagnostics", times(n, diagnostics_per_draw + 8)),
            ("write buffers", Some(batches)),
        ];
        if let Some(text) = csv {
            parts.push(("CSV text", text));
        }
        parts.extend_from_slice(model);
        parts
    };
    let all = spec.memory.check(&parts(draws));
    if all.is_ok() || csv.is_some() {
        all?;
        return Ok(1);
    }
    // As many draws per chain as fit beside the fixed parts.
    let fixed = model
        .iter()
        .try_fold(batches, |sum, (_, part)| sum.checked_add((*part)?));
    let room = spec.memory.limit.saturating_sub(fixed.unwrap_or(u64::MAX));
    let per_chain = per_draw
        .and_then(|b| b.checked_mul(config.chains as u64))
        .map_or(0, |b| room / b.max(1));
    // A request beyond 2^64 bytes in all is refused as such, streamed or not.
    if per_chain == 0 || values.is_none() {
        all?;
    }
    let stride = kept.div_ceil(per_chain.max(1)).max(1);
    let in_memory = kept.div_ceil(stride);
    spec.memory
        .check(&parts(times(Some(in_memory), config.chains as u64)))?;
    Ok(stride)
}

/// Bytes per kept draw the diagnostics `spec` asks for hold at their peak: nothing for `none`;
/// for `summary` the distance statistic's series, its rank-normalised split halves and their
/// transforms (measured: 55 bytes a draw; 64 counted); for `full` the larger of that and, per
/// worker, one block of up to 32 coordinates gathered (bit-packed for binary draws, `stored` =
/// 1; two bytes a value for labels) and one coordinate's series and halves (four `f64`): the
/// two phases run one after the other. Workers are as many as the threads, but never more than
/// the blocks of 32 coordinates, so threads beyond them cost nothing.
pub(crate) fn diagnostics_bytes_per_draw(spec: &RunSpec, d: usize, stored: u64) -> u64 {
    let blocks = d.div_ceil(32).max(1);
    let workers = spec.config.threads.clamp(1, blocks) as u64;
    let per_block = d.min(32) as u64;
    let block = if stored == 1 {
        per_block.div_ceil(8)
    } else {
        2 * per_block
    };
    match spec.diagnostics {
        Diagnostics::None => 0,
        Diagnostics::Summary => 64,
        Diagnostics::Full => (workers * (block + 32)).max(64),
    }
}

/// The diagnostics `spec` asks for (per coordinate: with a progress bar over the `dim`
/// coordinates); `None` when none are asked for or there are too few draws.
pub(crate) fn diagnostics_of(
    spec: &RunSpec,
    dim: usize,
    diagnose: impl FnOnce(Depth<'_>) -> Result<BinaryDiagnostics, DiagError>,
) -> Option<BinaryDiagnostics> {
    match spec.diagnostics {
        Diagnostics::None => None,
        Diagnostics::Summary => diagnose(Depth::Statistic).ok(),
        Diagnostics::Full => {
            let show = progress::wanted(spec.quiet);
            progress::with_progress_in("diagnostics", "coordinates", dim as u64, show, |p| {
                diagnose(Depth::Coordinates(
                    p.map(langevin_std::run::Progress::counter),
                ))
            })
            .ok()
        }
    }
}

impl Summary {
    /// What the specification and the plan say, before the run fills in its measurements.
    fn new(
        spec: &RunSpec,
        doc: &ModelDoc,
        plan: &SamplerPlan,
        domain: Domain,
        states: usize,
        dim: usize,
    ) -> Self {
        let (step, balance) = plan.step_balance();
        let config = &spec.config;
        let params = spec.sampler.params();
        Summary {
            provenance: Provenance::new(Some(&spec.model)),
            sampler: spec.sampler.name(),
            model: spec.model.display().to_string(),
            kind: doc.kind.clone(),
            domain: domain.name(),
            states,
            step,
            balance,
            options: params.options(spec.sampler.entry().params),
            diagonal: match plan {
                SamplerPlan::Ab2(s) if domain == Domain::Binary => Some(s.diagonal.name()),
                _ => None,
            },
            window: plan.window(),
            dim,
            chains: config.chains,
            steps: config.steps,
            burn_in: config.burn_in,
            burn_in_taken: 0,
            thin: config.thin,
            seed: config.seed,
            first_chain: config.first_chain,
            chain_range: [
                config.first_chain,
                config.first_chain.saturating_add(config.chains),
            ],
            out: spec.outputs.draws.as_ref().map(|p| p.display().to_string()),
            totals: Totals::default(),
            kept_per_chain: config.kept(),
            acceptance_rate: 0.0,
            mean_proposed_flips: None,
            mean_accepted_flips: None,
            mean_proposed_changes: None,
            mean_accepted_changes: None,
            mean_jump: 0.0,
            invalid_proposals: 0,
            evals: 0,
            wall_time_s: 0.0,
            ns_per_step: 0.0,
            statistic: match domain {
                Domain::Ordinal => "l1",
                _ => "hamming",
            },
            diagnostics_asked: match spec.diagnostics {
                Diagnostics::None => "none",
                Diagnostics::Summary => "summary",
                Diagnostics::Full => "full",
            },
            diagnostics: None,
            diagnostics_on: None,
            marginal_rmse: None,
            mmd: None,
            tuned: None,
            plots: Vec::new(),
            warnings: Vec::new(),
            mean: Vec::new(),
            coordinates: None,
        }
    }
}

impl Summary {
    /// Records that the diagnostics used one kept draw in `stride` (nothing for 1).
    fn subset(&mut self, stride: u64) {
        self.diagnostics_on = DiagnosticsOn::new(stride, self.kept_per_chain);
        if let Some(on) = &self.diagnostics_on {
            self.warnings.push(on.warning());
        }
    }
}

/// Writes the draws (the streamed `.npy` file and CSV as asked), the pictures and the summary
/// (all or none), then prints the summary.
fn finish<T: Copy + std::fmt::Display>(
    spec: &RunSpec,
    summary: &Summary,
    draws_file: Option<DrawsFile>,
    draws: &[&[T]],
    pictures: Vec<(PathBuf, Vec<u8>)>,
) -> Result<(), CliError> {
    let outputs = &spec.outputs;
    let mut files: Vec<(PathBuf, Vec<u8>)> = Vec::new();
    if let Some(csv) = &outputs.csv {
        files.push((
            csv.clone(),
            csv_draws_from(draws, summary.dim, summary.first_chain),
        ));
    }
    files.extend(pictures);
    if let Some(path) = &outputs.summary {
        files.push((path.clone(), json_bytes(summary)?));
    }
    write_all_with(
        &files,
        draws_file.map(DrawsFile::into_file).into_iter().collect(),
    )?;
    if !spec.quiet {
        match spec.format {
            Format::Table => print_table(summary),
            Format::Json => print!("{}", String::from_utf8_lossy(&json_bytes(summary)?)),
        }
    }
    Ok(())
}

fn plot_names(files: &[(PathBuf, Vec<u8>)]) -> Vec<String> {
    files.iter().map(|(p, _)| p.display().to_string()).collect()
}

/// Steps the progress bar expects: ACS may extend the burn-in to its tuning budget.
fn progress_total(plan: &SamplerPlan, spec: &RunSpec) -> u64 {
    let config = &spec.config;
    plan.min_burn_in(config.burn_in, config.steps)
        .saturating_add(config.steps)
        .saturating_mul(config.chains as u64)
}

/// Reads a model file of a binary kind under `budget`.
pub fn load_model(
    path: &Path,
    budget: &langevin_std::resources::MemoryBudget,
) -> Result<(ModelDoc, BinaryModel), CliError> {
    let doc = ModelDoc::read_within(path, budget)?;
    let model = BinaryModel::from_doc(&doc)?.ok_or_else(|| {
        let (kind, expected) = (doc.kind.clone(), &BINARY_KINDS[..]);
        let problem = if LABEL_KINDS.contains(&doc.kind.as_str()) {
            Problem::LabelKind { kind, expected }
        } else {
            Problem::UnknownKind {
                kind,
                expected,
                also: &[],
            }
        };
        doc.err("kind", problem)
    })?;
    Ok((doc, model))
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
    // The options the parameter table marks for the summary (Gibbs' site order, ...).
    for (name, value) in &s.options.0 {
        let value = match value {
            serde_json::Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        rows.push((name, value));
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
    print_diagnostics(s);
}

/// The table's lines after the run's: diagnostics, exactness checks, plots and warnings.
fn print_diagnostics(s: &Summary) {
    let statistic = if s.statistic == "l1" {
        "L1 distance"
    } else {
        "Hamming distance"
    };
    match &s.diagnostics {
        Some(d) => {
            if d.per_coordinate {
                println!(
                    "{:<22}min {:.1}, median {:.1}",
                    "ESS per coordinate", d.ess_min, d.ess_median
                );
            }
            println!(
                "{:<22}{:.1} ({statistic} to a random reference)",
                "ESS of statistic", d.ess_statistic
            );
            let mark = crate::figures::not_converged(d.rhat_max);
            println!("{:<22}{:.1}{mark}", "ESS per second", d.ess_per_second);
            println!(
                "{:<22}{}{mark}",
                "ESS per 10k evals",
                crate::figures::per_evaluation(d.ess_per_10k_evals, 2)
            );
            println!("{:<22}{:.4}{mark}", "R-hat (max)", d.rhat_max);
        }
        None if s.diagnostics_asked != "none" && s.diagnostics_on.is_some() => {
            println!(
                "{:<22}need at least 8 kept draws per chain in memory",
                "diagnostics"
            )
        }
        None if s.diagnostics_asked != "none" => {
            println!("{:<22}need at least 8 kept draws per chain", "diagnostics")
        }
        None => println!("{:<22}not computed (--diagnostics none)", "diagnostics"),
    }
    if let Some(c) = &s.coordinates {
        print_coordinates(s, c);
    }
    if let Some(on) = &s.diagnostics_on {
        println!(
            "{:<22}every {}-th kept draw ({} of {} per chain)",
            "diagnostics on", on.every, on.draws_per_chain, on.of
        );
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
    for w in &s.warnings {
        println!("{:<22}{w}", "WARNING");
    }
}

/// The first coordinates' rows of ArviZ's `summary` table (all of them are in the summary
/// file).
fn print_coordinates(s: &Summary, c: &CoordinateColumns) {
    const SHOWN: usize = 8;
    println!(
        "{:>6} {:>8} {:>8} {:>7} {:>7} {:>7} {:>9} {:>9} {:>9} {:>7}",
        "coord", "mean", "sd", "q5", "q50", "q95", "mcse_mean", "ess_bulk", "ess_tail", "r_hat"
    );
    let at = |v: &[f64], i: usize| v.get(i).copied().unwrap_or(f64::NAN);
    for i in 0..s.dim.min(SHOWN) {
        let rhat = at(&c.rhat, i);
        println!(
            "{:>6} {:>8.4} {:>8.4} {:>7.2} {:>7.2} {:>7.2} {:>9.4} {:>9.1} {:>9.1} {:>7}{}",
            i,
            at(&s.mean, i),
            at(&c.table.sd, i),
            at(&c.table.q5, i),
            at(&c.table.q50, i),
            at(&c.table.q95, i),
            at(&c.table.mcse_mean, i),
            at(&c.ess_bulk, i),
            at(&c.table.ess_tail, i),
            crate::figures::rhat_text(rhat),
            if rhat.is_nan() {
                ""
            } else {
                if crate::figures::failed(rhat) {
                    "  !"
                } else {
                    ""
                }
            }
        );
    }
    if s.dim > SHOWN {
        println!(
            "{:>6} (all {} coordinates in the summary file: sd, q5, q50, q95, mcse_mean, ess_bulk, ess_tail, rhat)",
            "…", s.dim
        );
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
    if let Some(betas) = t.get("betas").and_then(serde_json::Value::as_array) {
        format!(
            "ladder β [{}], swap rates [{}] (kept phase), after {} sweeps",
            betas
                .iter()
                .filter_map(serde_json::Value::as_f64)
                .map(|b| format!("{b:.4}"))
                .collect::<Vec<_>>()
                .join(" "),
            list("swap_rates"),
            f("sweeps").unwrap_or(0.0)
        )
    } else if let Some(n) = f("expected_changes") {
        let step = f("step").map_or("none (τ ≥ 1)".to_string(), |a| format!("{a:.4}"));
        format!(
            "{n:.3} expected changes (ln τ = {:.4}; equivalent step a = {step}), acceptance {:.3} over {} tuning steps",
            f("log_scale").unwrap_or(f64::NAN),
            f("tuning_acceptance").unwrap_or(f64::NAN),
            f("tuning_steps").unwrap_or(0.0)
        )
    } else if let (Some(a_max), Some(a_min)) = (f("a_max"), f("a_min")) {
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
