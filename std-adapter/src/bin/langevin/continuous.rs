//! `langevin sample-continuous`: stochastic-gradient Langevin integrators on posteriors that are
//! sums over data.

use crate::CliError;
use crate::args::{ChainArgs, MemoryArgs, ReportArgs};
use crate::provenance::Provenance;
use clap::{Args, ValueEnum};
use langevin_std::continuous::{
    ContinuousConfig, ContinuousError, ContinuousKeep, ContinuousSummary, Model, ModelSpec,
    SamplerKind, SnapshotKind, parse_access, run_keeping,
};
use langevin_std::diagnostics::{
    DrawArray, convergence_warnings, coordinate_table, ess_per_coordinate_on, rhat, rhat_and_ess,
};
use langevin_std::io::{DrawDtype, DrawsFile, is_stdout, json_bytes, prepare, write_all_with};
use langevin_std::resources::product;
use std::path::{Path, PathBuf};

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
#[command(allow_negative_numbers = true)]
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
    #[command(flatten)]
    pub memory: MemoryArgs,
}

pub fn run_continuous(args: &ContinuousArgs) -> Result<(), CliError> {
    let budget = args.memory.budget();
    let spec = ModelSpec::read_within(&args.model, &budget)?;
    let base = args.model.parent().unwrap_or(Path::new("."));
    let mut inputs: Vec<(String, PathBuf)> = vec![("--model".into(), args.model.clone())];
    inputs.extend(
        spec.data_files()
            .into_iter()
            .map(|(field, p)| (format!("the model's `{field}`"), base.join(p))),
    );
    let outputs: Vec<(String, PathBuf)> =
        [("--out", &args.out), ("--summary", &args.report.summary)]
            .into_iter()
            .filter_map(|(flag, p)| Some((flag.to_string(), p.clone()?)))
            .collect();
    // Held until the outputs are written: a second run on either is refused.
    let _outputs = prepare(&inputs, &outputs)?;
    let quiet = args.report.quiet || outputs.iter().any(|(_, p)| is_stdout(p));
    // Every problem of the model or of a data file it names is reported with the model file.
    let model = Model::from_spec_within(&spec, base, &budget).map_err(|e| match e {
        ContinuousError::Model(error) => CliError(format!("{}: {error}", args.model.display())),
        e => CliError(format!("{}: {e}", args.model.display())),
    })?;
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
    let every = check_memory(&config, &args.memory, args.out.is_some())?;
    // The driver refuses options that keep no draws, before anything is written.
    let file = match &args.out {
        Some(path) if config.draws_per_chain() > 0 => {
            let shape = [config.chains, config.draws_per_chain(), config.model.dim()];
            Some(DrawsFile::create(path, shape, DrawDtype::F32)?)
        }
        _ => None,
    };
    let keep = ContinuousKeep {
        every,
        file: file.as_ref(),
    };
    let outcome = run_keeping(&config, keep)?;
    let [chains, draws, dim] = outcome.shape;
    let diagnostics = DrawArray::new(&outcome.samples, chains, draws, dim)
        .ok()
        .and_then(|a| rhat_and_ess(&a, config.threads));
    let mut warnings = match diagnostics {
        Some((rhat_max, ess_min)) => convergence_warnings(rhat_max, ess_min),
        None => vec![format!(
            "{draws} kept draws per chain are too few for R-hat and ESS (at least 4): the run \
             cannot be judged"
        )],
    };
    let kept = outcome.summary.draws_per_chain;
    let diagnostics_on = (outcome.every > 1).then(|| {
        warnings.push(format!(
            "the kept draws exceed --max-memory in memory: all {kept} per chain went to the \
             .npy file, and R-hat and ESS used every {}-th ({draws} per chain)",
            outcome.every
        ));
        serde_json::json!({"every": outcome.every, "draws_per_chain": draws, "of": kept})
    });
    let s = &outcome.summary;
    let extra = serde_json::json!({
        "model": args.model.display().to_string(),
        "kind": spec.kind(),
        "step": args.step,
        "friction": args.friction,
        "batch": args.batch,
        "index_chain": args.index_chain,
        "access": format!("{:?}", args.access).to_lowercase(),
        "snapshot": format!("{:?}", args.snapshot).to_lowercase(),
        "period": args.period,
        "burn_in_passes": args.burn_in_passes,
        "draws_per_pass": args.draws_per_pass,
        "seed": args.chains.seed,
        "steps_per_chain": s.steps / (s.chains.max(1) as u64),
        "rhat_max": diagnostics.map(|d| d.0),
        "ess_min": diagnostics.map(|d| d.1),
        "warnings": warnings,
    });
    let mut extra = extra;
    if let (Some(on), serde_json::Value::Object(fields)) = (diagnostics_on, &mut extra) {
        fields.insert("diagnostics_on".into(), on);
    }
    let columns = arviz_columns(&outcome.samples, outcome.shape, config.threads);
    if let (Some(columns), serde_json::Value::Object(fields)) = (&columns, &mut extra) {
        fields.extend(columns.clone());
    }
    let mut summary = Provenance::new(Some(&args.model)).prepend(serde_json::to_value(s)?);
    if let (Some(out), serde_json::Value::Object(extra)) = (summary.as_object_mut(), extra) {
        out.extend(extra);
    }
    let summary = json_bytes(&summary)?;
    let files: Vec<(&Path, Vec<u8>)> = args
        .report
        .summary
        .as_deref()
        .map(|p| (p, summary))
        .into_iter()
        .collect();
    write_all_with(&files, file.map(DrawsFile::into_file).into_iter().collect())?;
    if !quiet {
        print_summary(&outcome.summary, diagnostics, columns.as_ref(), &warnings);
    }
    Ok(())
}

/// Refuses, before anything is allocated, a run whose memory would exceed the cap: the kept
/// draws (f32), their copy and `.npy` bytes, and the diagnostics' series. Returns how many kept
/// draws per draw in memory: 1 when all fit; with `--out` the draws stream to the file
/// instead, and as many as fit under the cap (one in `every`) stay for R-hat and ESS.
fn check_memory(
    config: &ContinuousConfig,
    memory: &MemoryArgs,
    streamed: bool,
) -> Result<usize, CliError> {
    let per_chain = (config.passes * f64::from(config.draws_per_pass)).round();
    // Beyond 2^64 the estimate is refused as an overflow.
    let per_chain = (per_chain < 1.8e19).then_some(per_chain as u64);
    let draws = per_chain.and_then(|n| product(&[n, config.chains as u64]));
    let d = config.model.dim() as u64;
    let values = draws.and_then(|n| n.checked_mul(d));
    let times = |n: Option<u64>, k: u64| n.and_then(|n| n.checked_mul(k));
    // Per worker, one coordinate's series and its rank-normalised split halves (four `f64`),
    // and the workers are at most one per coordinate: threads beyond them cost nothing.
    let workers = (config.threads as u64).clamp(1, d.max(1));
    let diagnostics_per_draw = 8 * (4 * workers + 4);
    let budget = memory.budget();
    if !streamed {
        let parts = [
            ("kept draws", times(values, 4)),
            ("their copy and .npy bytes", times(values, 8)),
            ("diagnostics", times(draws, diagnostics_per_draw)),
        ];
        budget.check(&parts)?;
        return Ok(1);
    }
    // Streamed: the draws in memory, their diagnostics, the chains' write batches and the
    // buffer that reads them back for the moments (1 MiB each).
    let buffers = (config.threads.max(1) as u64 + 1) << 20;
    let parts = |n: Option<u64>| {
        [
            ("kept draws", times(n, 4 * d)),
            ("diagnostics", times(n, diagnostics_per_draw)),
            ("write buffers", Some(buffers)),
        ]
    };
    let all = budget.check(&parts(draws));
    if all.is_ok() {
        return Ok(1);
    }
    let per_draw = (4 * d).checked_add(diagnostics_per_draw);
    let room = budget.limit.saturating_sub(buffers);
    let fit = per_draw
        .and_then(|b| b.checked_mul(config.chains as u64))
        .map_or(0, |b| room / b.max(1));
    let kept = per_chain.unwrap_or(u64::MAX);
    if fit == 0 || per_chain.is_none() {
        all?;
    }
    let every = kept.div_ceil(fit.max(1)).max(1);
    budget.check(&parts(times(
        Some(kept.div_ceil(every)),
        config.chains as u64,
    )))?;
    Ok(usize::try_from(every).unwrap_or(usize::MAX))
}

/// What a run prints: the summary's figures, the first coordinates' statistics and the
/// warnings.
fn print_summary(
    s: &ContinuousSummary,
    diagnostics: Option<(f64, f64)>,
    columns: Option<&serde_json::Map<String, serde_json::Value>>,
    warnings: &[String],
) {
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
    if let Some((rhat_max, ess_min)) = diagnostics {
        println!("R-hat (max)         {rhat_max:.4}");
        println!("ESS (min)           {ess_min:.1}");
    }
    if let Some(c) = &columns {
        for k in [
            "sd",
            "q5",
            "q50",
            "q95",
            "mcse_mean",
            "ess_bulk",
            "ess_tail",
            "rhat",
        ] {
            let first: Vec<String> = c
                .get(k)
                .and_then(serde_json::Value::as_array)
                .map(|v| {
                    v.iter()
                        .take(show)
                        .map(|x| x.as_f64().map_or("null".into(), |x| format!("{x:.4}")))
                        .collect()
                })
                .unwrap_or_default();
            println!(
                "{:<20}[{}]",
                format!("{k} (first {show})"),
                first.join(", ")
            );
        }
    }
    for w in warnings {
        println!("WARNING             {w}");
    }
}

/// ArviZ's `summary` columns per coordinate of the kept draws (`(chains, draws, dim)`): `sd`,
/// `q5`, `q50`, `q95`, `mcse_mean`, `ess_bulk`, `ess_tail`, `rhat`; `None` with too few draws
/// (fewer than 8 per chain) or a value that is not finite.
fn arviz_columns(
    samples: &[f32],
    [chains, draws, dim]: [usize; 3],
    threads: usize,
) -> Option<serde_json::Map<String, serde_json::Value>> {
    let array = DrawArray::new(samples, chains, draws, dim).ok()?;
    let bulk = ess_per_coordinate_on(&array, threads).ok()?;
    let rhats: Vec<f64> = (0..dim)
        .map(|i| {
            let series: Vec<Vec<f64>> = (0..chains).map(|c| array.coordinate(c, i)).collect();
            let views: Vec<&[f64]> = series.iter().map(Vec::as_slice).collect();
            rhat(&views).map_or(f64::NAN, |r| r.max())
        })
        .collect();
    let per_chain: Vec<&[f32]> = samples.chunks(draws.max(1) * dim.max(1)).collect();
    let table = coordinate_table(&per_chain, dim).ok()?;
    let serde_json::Value::Object(mut columns) = serde_json::to_value(&table).ok()? else {
        return None;
    };
    columns.insert("ess_bulk".into(), serde_json::json!(bulk.per_coordinate));
    columns.insert("rhat".into(), serde_json::json!(rhats));
    Some(columns)
}
