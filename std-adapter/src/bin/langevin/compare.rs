//! `langevin compare`: the side-by-side ESS comparison of the any-scale balanced samplers
//! (AB-trace, AB-shift, AB-max, AB-1st, DLP-trace, DMALA) on Sun et al. (2023)'s benchmarks (Ising on a
//! Barabási–Albert graph and on the critical lattice, the rotated lattice Gaussian), in one run.
//!
//! Every sampler gets the same tuning budget per chain (first-order burn-in plus the second
//! tuning phase of the AB-2 schedule; AB-1st tunes `(a, b)` over the same number of steps) and
//! the same number of kept steps. Per chain: the ESS of the Hamming distance to one fixed
//! random reference state over the kept draws (single-chain ESS, Geyer's initial monotone
//! sequence; the DISCS statistic), and of the magnetisation `Σ (2x_i − 1)`; per 10⁴ target
//! evaluations of the kept phase and per second of the chain's share of the run's CPU time
//! (tuning, fit and `D` included). The table shows the median over chains. On ordinal models
//! the distance is `Σ|x_i − r_i|` and the sum statistic `Σ x_i`; DMALA there is the first-order
//! tuner with `b = ½` fixed (only its step tuned), and DLP-trace applies to binary models only.
//!
//! A further model is one more entry of [`MODELS`]; a further diagonal rule of AB-2 in the
//! sampler registry is one more row here.

use crate::CliError;
use crate::args::{ChainArgs, MemoryArgs, total_steps};
use crate::provenance::Provenance;
use crate::sample::Format;
use clap::Args;
use langevin_core::ordinal::OrdinalTarget;
use langevin_core::stats::ChainStats;
use langevin_std::ab2::{Ab2Settings, DiagonalRule, run_ab2_chains, run_ab2_ordinal_chains};
use langevin_std::binary::{BinaryModel, ChainResult, RunConfig, Statistic};
use langevin_std::diagnostics::{DiscreteValue, ess, rhat};
use langevin_std::labels::{LabelModel, LabelStart, OrdinalModel};
use langevin_std::models::zoo::{
    BarabasiAlbertSpec, IsingLatticeSpec, LatticeGaussianSpec, ModelSpec,
};
use langevin_std::run::Keep;
use langevin_std::samplers::{self, Choice};
use serde::Serialize;
use std::time::Duration;

/// Arguments of `langevin compare`.
#[derive(Args, Debug, Clone)]
pub struct CompareArgs {
    /// Models, comma separated (default: all): ising-ba, ising-grid, gaussian-rotated.
    #[arg(long, value_delimiter = ',')]
    pub models: Vec<String>,
    /// Samplers, comma separated (default: all): AB-2 with each diagonal rule (ab-trace,
    /// ab-shift, ab-max, dlp-trace), then ab-1st and dmala.
    #[arg(long, value_delimiter = ',')]
    pub samplers: Vec<String>,
    /// Kept steps per chain (after tuning).
    #[arg(long, default_value_t = 5_000)]
    pub steps: u64,
    /// Steps of each tuning phase (first-order burn-in; second-order or DLP step tuning).
    #[arg(long, default_value_t = 10_000)]
    pub tune: u64,
    /// AB-max: iteration cap of the λ_max solver (one O(d³) eigendecomposition each).
    #[arg(long = "max-iter", default_value_t = 40)]
    pub max_iter: usize,
    /// Chains per sampler and model; the seed of models, chains and the reference state;
    /// threads (ESS per second uses the CPU share per chain).
    #[command(flatten)]
    pub chains: ChainArgs,
    /// How to print the results.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// The memory cap (one sampler's kept draws and their statistics).
    #[command(flatten)]
    pub memory: MemoryArgs,
}

/// A model of the comparison.
enum CompareModel {
    /// A binary model.
    Binary(BinaryModel),
    /// An ordinal model.
    Ordinal(OrdinalModel),
}

/// One row of the model table.
struct ModelEntry {
    key: &'static str,
    title: &'static str,
    /// Bytes of one kept draw (`d` values of one byte, binary, or two, ordinal).
    draw_bytes: u64,
    build: fn(u64) -> Result<CompareModel, CliError>,
}

/// The models, in table order.
const MODELS: &[ModelEntry] = &[
    ModelEntry {
        key: "ising-ba",
        title: "Ising, Barabási–Albert graph (400 nodes, 4 edges per new node), J = 0.4407, h = 0",
        draw_bytes: 400,
        build: |seed| {
            binary(
                BarabasiAlbertSpec {
                    seed,
                    ..BarabasiAlbertSpec::default()
                }
                .generate(),
            )
        },
    },
    ModelEntry {
        key: "ising-grid",
        title: "Ising, 20×20 periodic lattice, J = 0.4407 (critical), h = 0",
        draw_bytes: 400,
        build: |_| binary(IsingLatticeSpec::default().generate()),
    },
    ModelEntry {
        key: "gaussian-rotated",
        title: "Lattice Gaussian over {0..20}^100, randomly rotated precision, condition 10",
        draw_bytes: 200,
        build: |seed| {
            let doc = LatticeGaussianSpec {
                seed,
                ..LatticeGaussianSpec::default()
            }
            .generate()?
            .to_doc()?;
            match LabelModel::from_doc(&doc)? {
                Some(LabelModel::Ordinal(m)) => Ok(CompareModel::Ordinal(m)),
                _ => Err(CliError(
                    "the generator did not give an ordinal model".into(),
                )),
            }
        },
    },
];

fn binary(
    spec: Result<ModelSpec, langevin_std::models::zoo::ZooError>,
) -> Result<CompareModel, CliError> {
    let doc = spec?.to_doc()?;
    BinaryModel::from_doc(&doc)?
        .map(CompareModel::Binary)
        .ok_or_else(|| CliError("the generator did not give a binary model".into()))
}

/// The samplers, in table order: AB-2 with each diagonal rule the sampler registry lists for
/// `ab2 --diagonal` (`ab-trace`, …; the first-order DLP rules keep their own name), then the
/// first-order AB tuner (`ab-1st`) and DMALA with its step tuned (`dmala`), the baselines.
/// What `--format json` prints: how the comparison was made, then one row per model and
/// sampler.
#[derive(Debug, Serialize)]
struct CompareSummary<'a> {
    #[serde(flatten)]
    provenance: Provenance,
    /// The models compared: key and description (kind and parameters).
    models: Vec<ModelInfo>,
    seed: u64,
    chains: usize,
    /// Kept steps per chain.
    steps: u64,
    /// Steps of each tuning phase (the burn-in: each row's `tuning_steps`).
    tune: u64,
    thin: u64,
    max_iter: usize,
    threads: usize,
    rows: &'a [Row],
}

/// A compared model in the JSON output.
#[derive(Debug, Serialize)]
struct ModelInfo {
    key: &'static str,
    description: &'static str,
}

fn samplers() -> Result<Vec<(String, Sampler)>, CliError> {
    let mut all = Vec::new();
    for (&rule, &value) in DiagonalRule::NAMES.iter().zip(DiagonalRule::VALUES) {
        let label = if rule.starts_with("dlp-") {
            rule.to_string()
        } else {
            format!("ab-{rule}")
        };
        all.push((label, Sampler::Ab2(value)));
    }
    all.push(("ab-1st".into(), Sampler::AbFirst));
    all.push(("dmala".into(), Sampler::Ab2(DiagonalRule::Dmala)));
    Ok(all)
}

#[derive(Clone, Copy, Debug)]
enum Sampler {
    /// The AB-2 schedule with this rule (the DLP rules and DMALA run through it too).
    Ab2(DiagonalRule),
    /// The first-order AB tuner, `(a, b)` tuned over the same budget, then fixed.
    AbFirst,
}

#[derive(Debug, Serialize)]
struct Row {
    model: &'static str,
    sampler: String,
    chains: usize,
    kept_steps: u64,
    tuning_steps: u64,
    /// Median over chains of the Hamming-distance ESS per 10⁴ kept-phase evaluations.
    ess_hamming_per_10k_evals: f64,
    /// Median over chains of the Hamming-distance ESS per CPU second.
    ess_hamming_per_second: f64,
    /// Median over chains of the magnetisation ESS per 10⁴ kept-phase evaluations.
    ess_magnetisation_per_10k_evals: f64,
    /// Median over chains of the magnetisation ESS per CPU second.
    ess_magnetisation_per_second: f64,
    /// Rank-normalised split R-hat of the Hamming-distance statistic over the chains (NaN,
    /// `null` in JSON, when it is undefined); above 1.01 the ESS figures of the row measure
    /// chains that have not mixed.
    rhat_hamming: f64,
    acceptance_rate: f64,
    /// CPU seconds per chain (the run's wall time × threads / chains).
    seconds_per_chain: f64,
    /// Median `λ_max(W + D)` (second-order rules).
    lambda_max: Option<f64>,
    /// AB-max: median certified relative gap of the λ_max solver.
    max_gap: Option<f64>,
    /// Median final step and balance.
    step: f64,
    balance: f64,
}

pub fn run(args: &CompareArgs) -> Result<(), CliError> {
    if args.chains.chains == 0 || args.steps < 16 || args.tune < 300 {
        return Err(CliError(
            "need --chains ≥ 1, --steps ≥ 16 and --tune ≥ 300".into(),
        ));
    }
    let models: Vec<&ModelEntry> = pick(&args.models, MODELS.iter().map(|m| (m.key, m)), "model")?;
    let all_samplers = samplers()?;
    let samplers: Vec<&(String, Sampler)> = pick(
        &args.samplers,
        all_samplers.iter().map(|s| (s.0.as_str(), s)),
        "sampler",
    )?;
    let threads = args.chains.threads();
    // Tuning (twice --tune) and the kept steps of one chain must be countable, and one
    // sampler's kept draws (the runs are one after another) and a chain's two statistic
    // series with their autocorrelation work must fit the cap.
    total_steps(&[
        ("--tune", args.tune),
        ("--tune", args.tune),
        ("--steps", args.steps),
    ])?;
    let draw_bytes = models.iter().map(|m| m.draw_bytes).max().unwrap_or(0);
    args.memory.check(&[
        (
            "kept draws",
            &[args.chains.chains as u64, args.steps, draw_bytes],
        ),
        (
            "statistic series",
            &[args.chains.chains as u64, args.steps, 16],
        ),
        ("autocorrelation work", &[args.steps, 64]),
    ])?;
    let mut rows = Vec::new();
    for entry in &models {
        let model = (entry.build)(args.chains.seed)?;
        for (name, sampler) in samplers.iter().map(|s| (s.0.as_str(), s.1)) {
            let row = match &model {
                CompareModel::Binary(m) => {
                    let reference = Statistic::reference(m.dim(), 2, args.chains.seed ^ 0x5eed)?;
                    let run = run_binary(m, sampler, args, threads)?;
                    let runs = Runs {
                        chains: &run.chains,
                        dim: run.dim,
                        wall_time: run.wall_time,
                        reference: &reference,
                        statistic: Statistic::Hamming,
                        spin: true,
                    };
                    summarise(entry.key, name, &runs, args, threads)
                }
                CompareModel::Ordinal(m) => {
                    let Some(run) = run_ordinal(m, sampler, args, threads)? else {
                        continue;
                    };
                    let reference =
                        Statistic::reference(m.dim(), m.states(), args.chains.seed ^ 0x5eed)?;
                    let runs = Runs {
                        chains: &run.chains,
                        dim: run.dim,
                        wall_time: run.wall_time,
                        reference: &reference,
                        statistic: Statistic::Manhattan,
                        spin: false,
                    };
                    summarise(entry.key, name, &runs, args, threads)
                }
            };
            rows.push(row);
            if args.format == Format::Table {
                eprintln!("done: {} / {name}", entry.key);
            }
        }
    }
    match args.format {
        Format::Json => {
            let summary = CompareSummary {
                provenance: Provenance::new(None),
                models: models
                    .iter()
                    .map(|m| ModelInfo {
                        key: m.key,
                        description: m.title,
                    })
                    .collect(),
                seed: args.chains.seed,
                chains: args.chains.chains,
                steps: args.steps,
                tune: args.tune,
                thin: 1,
                max_iter: args.max_iter,
                threads,
                rows: &rows,
            };
            print!(
                "{}",
                String::from_utf8_lossy(&langevin_std::io::json_bytes(&summary)?)
            );
        }
        Format::Table => print_table(&rows, &models, args, threads),
    }
    Ok(())
}

/// The entries named in `wanted` (all when empty), in table order.
fn pick<'a, T>(
    wanted: &[String],
    all: impl Iterator<Item = (&'a str, &'a T)>,
    what: &str,
) -> Result<Vec<&'a T>, CliError> {
    let all: Vec<_> = all.collect();
    for w in wanted {
        if !all.iter().any(|(k, _)| k == w) {
            let keys: Vec<&str> = all.iter().map(|(k, _)| *k).collect();
            return Err(CliError(format!(
                "unknown {what} `{w}` (expected one of {})",
                keys.join(", ")
            )));
        }
    }
    Ok(all
        .into_iter()
        .filter(|(k, _)| wanted.is_empty() || wanted.iter().any(|w| w == k))
        .map(|(_, v)| v)
        .collect())
}

fn run_config(args: &CompareArgs, threads: usize) -> RunConfig {
    RunConfig {
        steps: args.steps,
        burn_in: 0,
        thin: 1,
        chains: args.chains.chains,
        seed: args.chains.seed,
        threads,
        first_chain: 0,
    }
}

fn ab2_settings(rule: DiagonalRule, args: &CompareArgs) -> Ab2Settings {
    let mut settings = Ab2Settings::default();
    settings.diagonal = rule;
    settings.first.budget = args.tune;
    settings.second_budget = args.tune;
    settings.max_eig.max_iter = args.max_iter;
    settings
}

fn run_binary(
    model: &BinaryModel,
    sampler: Sampler,
    args: &CompareArgs,
    threads: usize,
) -> Result<langevin_std::binary::BinaryRun, CliError> {
    let mut config = run_config(args, threads);
    Ok(match sampler {
        Sampler::Ab2(rule) => {
            run_ab2_chains(model, &ab2_settings(rule, args), &config, None, Keep::all())?
        }
        Sampler::AbFirst => {
            config.burn_in = 2 * args.tune;
            let spec = samplers::Sampler::named("ab", |p| p.step = 0.1)?;
            langevin_std::binary::run_chains(model, &spec, &config, None, Keep::all())?
        }
    })
}

/// An ordinal run of `sampler`, or `None` for the binary-only DLP-trace.
fn run_ordinal(
    model: &OrdinalModel,
    sampler: Sampler,
    args: &CompareArgs,
    threads: usize,
) -> Result<Option<langevin_std::labels::LabelRun>, CliError> {
    let mut config = run_config(args, threads);
    let first_order = |tune_balance| {
        samplers::Sampler::named("ab", |p| (p.step, p.tune_balance) = (0.1, tune_balance))
    };
    let spec = match sampler {
        Sampler::Ab2(DiagonalRule::DlpTrace { .. }) => return Ok(None),
        Sampler::Ab2(DiagonalRule::Dmala) => first_order(false)?,
        Sampler::Ab2(rule) => {
            let settings = ab2_settings(rule, args);
            return Ok(Some(run_ab2_ordinal_chains(
                model,
                &settings,
                &config,
                None,
                Keep::all(),
            )?));
        }
        Sampler::AbFirst => first_order(true)?,
    };
    config.burn_in = 2 * args.tune;
    let model = LabelModel::Ordinal(model.clone());
    Ok(Some(langevin_std::labels::run_label_chains(
        &model,
        &spec,
        &config,
        &LabelStart::Uniform,
        None,
        Keep::all(),
    )?))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.retain(|x| !x.is_nan());
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    }
}

/// What [`summarise`] reads of a binary or ordinal run.
struct Runs<'a, T> {
    chains: &'a [ChainResult<T>],
    dim: usize,
    wall_time: Duration,
    reference: &'a [T],
    statistic: Statistic,
    /// Whether the sum statistic counts spins `2x − 1` (binary) or values (ordinal).
    spin: bool,
}

fn summarise<T: DiscreteValue>(
    model: &'static str,
    sampler: &str,
    run: &Runs<'_, T>,
    args: &CompareArgs,
    threads: usize,
) -> Row {
    let d = run.dim;
    let chains = run.chains.len().max(1);
    let seconds = run.wall_time.as_secs_f64() * threads.min(chains) as f64 / chains as f64;
    // A series that never varies has no ESS to speak of: count it as 0.
    let single = |series: &[f64]| ess(&[series]).unwrap_or(0.0);
    let (mut h10k, mut hs, mut m10k, mut ms) = (vec![], vec![], vec![], vec![]);
    let (mut lambda, mut gaps, mut steps, mut balances) = (vec![], vec![], vec![], vec![]);
    let mut tuning = 0;
    let value = |v: T| {
        let v = f64::from(v.into());
        if run.spin { 2.0 * v - 1.0 } else { v }
    };
    let mut total = ChainStats::default();
    let mut all_hamming = Vec::with_capacity(run.chains.len());
    for c in run.chains {
        total.merge(&c.stats);
        let hamming = run.statistic.series(&c.draws, run.reference);
        let magnet: Vec<f64> = c
            .draws
            .chunks_exact(d.max(1))
            .map(|x| x.iter().map(|&v| value(v)).sum())
            .collect();
        let evals = c.stats.evaluations.max(1) as f64;
        let (eh, em) = (single(&hamming), single(&magnet));
        all_hamming.push(hamming);
        h10k.push(eh * 1e4 / evals);
        m10k.push(em * 1e4 / evals);
        hs.push(eh / seconds);
        ms.push(em / seconds);
        tuning = c.burn_in_stats.steps;
        if let Some(t) = &c.tuned {
            let f = |k: &str| t.get(k).and_then(serde_json::Value::as_f64);
            if let Some(l) = f("lambda_max") {
                lambda.push(l);
            }
            if let Some(g) = f("max_gap") {
                gaps.push(g);
            }
            steps.push(f("step").unwrap_or(f64::NAN));
            balances.push(f("balance").unwrap_or(f64::NAN));
        }
    }
    let views: Vec<&[f64]> = all_hamming.iter().map(Vec::as_slice).collect();
    Row {
        rhat_hamming: rhat(&views).map_or(f64::NAN, |r| r.max()),
        model,
        sampler: sampler.to_string(),
        chains: run.chains.len(),
        kept_steps: args.steps,
        tuning_steps: tuning,
        ess_hamming_per_10k_evals: median(h10k),
        ess_hamming_per_second: median(hs),
        ess_magnetisation_per_10k_evals: median(m10k),
        ess_magnetisation_per_second: median(ms),
        acceptance_rate: total.acceptance_rate(),
        seconds_per_chain: seconds,
        lambda_max: (!lambda.is_empty()).then(|| median(lambda)),
        max_gap: (!gaps.is_empty()).then(|| median(gaps)),
        step: median(steps),
        balance: median(balances),
    }
}

fn print_table(rows: &[Row], models: &[&ModelEntry], args: &CompareArgs, threads: usize) {
    println!(
        "{} chains × {} kept steps per sampler (tuning {} + {} steps), seed {}, {} threads",
        args.chains.chains, args.steps, args.tune, args.tune, args.chains.seed, threads
    );
    println!(
        "ESS: single-chain, distance to a fixed random reference (H: Hamming; ordinal: Σ|x − r|) and sum (M: magnetisation; ordinal: Σx); median over chains"
    );
    for entry in models {
        println!("\n{}", entry.title);
        println!(
            "{:<10} {:>11} {:>9} {:>11} {:>9} {:>7} {:>7} {:>8} {:>8} {:>6} {:>8}  gap",
            "sampler",
            "H/1e4 eval",
            "H/s",
            "M/1e4 eval",
            "M/s",
            "R-hat",
            "accept",
            "s/chain",
            "a",
            "b",
            "λmax"
        );
        for r in rows.iter().filter(|r| r.model == entry.key) {
            println!(
                "{:<10} {:>11.1} {:>9.1} {:>11.1} {:>9.1} {:>7} {:>7.3} {:>8.2} {:>8.3} {:>6.3} {:>8}  {}{}",
                r.sampler,
                r.ess_hamming_per_10k_evals,
                r.ess_hamming_per_second,
                r.ess_magnetisation_per_10k_evals,
                r.ess_magnetisation_per_second,
                crate::figures::rhat_text(r.rhat_hamming),
                r.acceptance_rate,
                r.seconds_per_chain,
                r.step,
                r.balance,
                r.lambda_max.map_or("-".into(), |l| format!("{l:.3}")),
                r.max_gap
                    .map_or(String::new(), |g| format!("{:.1}%", 100.0 * g)),
                crate::figures::not_converged(r.rhat_hamming),
            );
        }
    }
    let failed = rows
        .iter()
        .filter(|r| crate::figures::failed(r.rhat_hamming))
        .count();
    if failed > 0 {
        println!(
            "\nWARNING: {failed} of {} rows have not converged (R-hat of the Hamming statistic \
             above {} or undefined): their ESS figures measure chains that have not mixed, not \
             the target; run longer (--steps, --tune) before ranking them.",
            rows.len(),
            langevin_std::diagnostics::RHAT_LIMIT
        );
    }
}
