//! `langevin compare`: the side-by-side ESS comparison of the any-scale balanced samplers
//! (AB-trace, AB-shift, AB-max, AB-1st, DLP-trace, DMALA) on paper 002's Ising benchmarks, in
//! one run.
//!
//! Every sampler gets the same tuning budget per chain (first-order burn-in plus the second
//! tuning phase of the AB-2 schedule; AB-1st tunes `(a, b)` over the same number of steps) and
//! the same number of kept steps. Per chain: the ESS of the Hamming distance to one fixed
//! random reference state over the kept draws (single-chain ESS, Geyer's initial monotone
//! sequence; the DISCS statistic), and of the magnetisation `Σ (2x_i − 1)`; per 10⁴ target
//! evaluations of the kept phase and per second of the chain's share of the run's CPU time
//! (tuning, fit and `D` included). The table shows the median over chains.
//!
//! A further model is one more entry of [`MODELS`].

use crate::CliError;
use crate::sample::{Format, default_threads};
use clap::Args;
use langevin_std::binary::{BinaryModel, BinaryRun, RunConfig, SamplerSpec, Statistic};
use langevin_std::diagnostics::ess;
use langevin_std::second_order::{Ab2Settings, DiagonalRule, run_ab2_chains};
use langevin_std::zoo::{BarabasiAlbertSpec, IsingLatticeSpec, ModelSpec};
use serde::Serialize;

/// Arguments of `langevin compare`.
#[derive(Args, Debug, Clone)]
pub struct CompareArgs {
    /// Models, comma separated (default: all): ising-ba, ising-grid.
    #[arg(long, value_delimiter = ',')]
    pub models: Vec<String>,
    /// Samplers, comma separated (default: all): ab-trace, ab-shift, ab-max, ab-1st,
    /// dlp-trace, dmala.
    #[arg(long, value_delimiter = ',')]
    pub samplers: Vec<String>,
    /// Chains per sampler and model.
    #[arg(long, default_value_t = 4)]
    pub chains: usize,
    /// Kept steps per chain (after tuning).
    #[arg(long, default_value_t = 5_000)]
    pub steps: u64,
    /// Steps of each tuning phase (first-order burn-in; second-order or DLP step tuning).
    #[arg(long, default_value_t = 2_000)]
    pub tune: u64,
    /// AB-max: iteration cap of the λ_max solver (one O(d³) eigendecomposition each).
    #[arg(long = "max-iter", default_value_t = 40)]
    pub max_iter: usize,
    /// Master seed (models, chains and the reference state derive from it).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Worker threads (default: all cores); ESS per second uses the CPU share per chain.
    #[arg(long)]
    pub threads: Option<usize>,
    /// How to print the results.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

/// A model of the comparison.
enum CompareModel {
    /// A binary model, sampled by the AB-2 schedule and the first-order AB tuner.
    Binary(BinaryModel),
}

/// One row of the model table.
struct ModelEntry {
    key: &'static str,
    title: &'static str,
    build: fn(u64) -> Result<CompareModel, CliError>,
}

/// The models, in table order. The 100-d rotated lattice Gaussian over `{0..20}^100` becomes
/// one more entry (with a `CompareModel` variant for label models) once AB-2 runs on ordinal
/// states.
const MODELS: &[ModelEntry] = &[
    ModelEntry {
        key: "ising-ba",
        title: "Ising, Barabási–Albert graph (400 nodes, 4 edges per new node), J = 0.4407, h = 0",
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
        build: |_| binary(IsingLatticeSpec::default().generate()),
    },
];

fn binary(spec: Result<ModelSpec, langevin_std::zoo::ZooError>) -> Result<CompareModel, CliError> {
    let doc = spec?.to_doc()?;
    BinaryModel::from_doc(&doc)?
        .map(CompareModel::Binary)
        .ok_or_else(|| CliError("the generator did not give a binary model".into()))
}

/// The samplers, in table order.
const SAMPLERS: [(&str, Sampler); 6] = [
    ("ab-trace", Sampler::Ab2(DiagonalRule::Trace)),
    ("ab-shift", Sampler::Ab2(DiagonalRule::Shift { eps: 1e-3 })),
    ("ab-max", Sampler::Ab2(DiagonalRule::Max)),
    ("ab-1st", Sampler::AbFirst),
    (
        "dlp-trace",
        Sampler::Ab2(DiagonalRule::DlpTrace { floor: 0.05 }),
    ),
    ("dmala", Sampler::Ab2(DiagonalRule::Dmala)),
];

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
    sampler: &'static str,
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
    if args.chains == 0 || args.steps < 16 || args.tune < 300 {
        return Err(CliError(
            "need --chains ≥ 1, --steps ≥ 16 and --tune ≥ 300".into(),
        ));
    }
    let models: Vec<&ModelEntry> = pick(&args.models, MODELS.iter().map(|m| (m.key, m)), "model")?;
    let samplers: Vec<&(&str, Sampler)> =
        pick(&args.samplers, SAMPLERS.iter().map(|s| (s.0, s)), "sampler")?;
    let threads = args.threads.unwrap_or_else(default_threads).max(1);
    let mut rows = Vec::new();
    for entry in &models {
        let CompareModel::Binary(model) = (entry.build)(args.seed)?;
        let reference: Vec<u8> = Statistic::reference(model.dim(), 2, args.seed ^ 0x5eed)?;
        for &&(name, sampler) in &samplers {
            let run = run_one(&model, sampler, args, threads)?;
            rows.push(summarise(entry.key, name, &run, &reference, args, threads));
            if args.format == Format::Table {
                eprintln!("done: {} / {name}", entry.key);
            }
        }
    }
    match args.format {
        Format::Json => print!(
            "{}",
            String::from_utf8_lossy(&crate::output::json_bytes(&rows)?)
        ),
        Format::Table => print_table(&rows, &models, args, threads),
    }
    Ok(())
}

/// The entries named in `wanted` (all when empty), in table order.
fn pick<'a, T>(
    wanted: &[String],
    all: impl Iterator<Item = (&'static str, &'a T)>,
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

fn run_one(
    model: &BinaryModel,
    sampler: Sampler,
    args: &CompareArgs,
    threads: usize,
) -> Result<BinaryRun, CliError> {
    let mut config = RunConfig {
        steps: args.steps,
        burn_in: 0,
        thin: 1,
        chains: args.chains,
        seed: args.seed,
        threads,
    };
    Ok(match sampler {
        Sampler::Ab2(rule) => {
            let mut settings = Ab2Settings::default();
            settings.diagonal = rule;
            settings.first.budget = args.tune;
            settings.second_budget = args.tune;
            settings.max_eig.max_iter = args.max_iter;
            run_ab2_chains(model, &settings, &config, None)?
        }
        Sampler::AbFirst => {
            config.burn_in = 2 * args.tune;
            let spec = SamplerSpec::Ab {
                step: 0.1,
                balance: 0.5,
            };
            langevin_std::binary::run_chains(model, &spec, &config, None)?
        }
    })
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

fn summarise(
    model: &'static str,
    sampler: &'static str,
    run: &BinaryRun,
    reference: &[u8],
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
    for c in &run.chains {
        let hamming = Statistic::Hamming.series(&c.draws, reference);
        let magnet: Vec<f64> = c
            .draws
            .chunks_exact(d.max(1))
            .map(|x| x.iter().map(|&v| 2.0 * f64::from(v) - 1.0).sum())
            .collect();
        let evals = c.stats.evaluations.max(1) as f64;
        let (eh, em) = (single(&hamming), single(&magnet));
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
    Row {
        model,
        sampler,
        chains: run.chains.len(),
        kept_steps: args.steps,
        tuning_steps: tuning,
        ess_hamming_per_10k_evals: median(h10k),
        ess_hamming_per_second: median(hs),
        ess_magnetisation_per_10k_evals: median(m10k),
        ess_magnetisation_per_second: median(ms),
        acceptance_rate: run.stats().acceptance_rate(),
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
        args.chains, args.steps, args.tune, args.tune, args.seed, threads
    );
    println!(
        "ESS: single-chain, Hamming distance to a fixed random reference (H) and magnetisation (M); median over chains"
    );
    for entry in models {
        println!("\n{}", entry.title);
        println!(
            "{:<10} {:>11} {:>9} {:>11} {:>9} {:>7} {:>8} {:>8} {:>6} {:>8}  gap",
            "sampler",
            "H/1e4 eval",
            "H/s",
            "M/1e4 eval",
            "M/s",
            "accept",
            "s/chain",
            "a",
            "b",
            "λmax"
        );
        for r in rows.iter().filter(|r| r.model == entry.key) {
            println!(
                "{:<10} {:>11.1} {:>9.1} {:>11.1} {:>9.1} {:>7.3} {:>8.2} {:>8.3} {:>6.3} {:>8}  {}",
                r.sampler,
                r.ess_hamming_per_10k_evals,
                r.ess_hamming_per_second,
                r.ess_magnetisation_per_10k_evals,
                r.ess_magnetisation_per_second,
                r.acceptance_rate,
                r.seconds_per_chain,
                r.step,
                r.balance,
                r.lambda_max.map_or("-".into(), |l| format!("{l:.3}")),
                r.max_gap
                    .map_or(String::new(), |g| format!("{:.1}%", 100.0 * g)),
            );
        }
    }
}
