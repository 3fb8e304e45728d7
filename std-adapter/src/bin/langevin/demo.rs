//! The built-in demonstration.
//!
//! 1. Every binary sampler side by side on the 20×20 critical Ising model, where exact
//!    marginals are known by symmetry (P(x_i = 1) = ½).
//! 2. The 25-mode lattice mixture of the cyclical-scheduling paper, every chain started in one
//!    mode: ACS and replica exchange (pt-dmala) against DMALA with its step tuned to acceptance
//!    0.574, counting modes visited.

use crate::CliError;
use crate::args::default_threads;
use crate::sample::pictures::Heat;
use clap::Args;
use langevin_core::models::{Dims, IsingLattice};
use langevin_std::binary::{
    BinaryModel, BinaryRun, Depth, RunConfig, Statistic, diagnose, run_chains,
};
use langevin_std::io::{Rendering, prepare, write_all};
use langevin_std::labels::{LabelModel, LabelRun, LabelStart, OrdinalModel, run_label_chains};
use langevin_std::models::LatticeMixture;
use langevin_std::plot::{AxisScale, BarSpec, TraceSpec, bar_chart_with, trace_and_acf};
use langevin_std::run::Keep;
use langevin_std::samplers::{Domain, SAMPLERS, Sampler, SamplerParams};
use std::path::{Path, PathBuf};

/// Arguments of `langevin demo`.
#[derive(Args, Debug, Clone)]
pub struct DemoArgs {
    /// Steps per chain after burn-in on the Ising model (a tenth as many burn-in first).
    #[arg(long, default_value_t = 10_000)]
    pub steps: u64,
    /// Steps per chain on the lattice mixture.
    #[arg(long = "mixture-steps", default_value_t = 20_000)]
    pub mixture_steps: u64,
    /// Chains per sampler.
    #[arg(long, default_value_t = 4)]
    pub chains: usize,
    /// Master seed.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Where to write the pictures: this file (ESS per second of each sampler; biased and
    /// non-converged ones hatched), and beside it `.trace.png` (the trace and autocorrelation
    /// of the exact sampler with the most ESS per second, converged ones first) and `.mixture.png`
    /// (the mixture: ACS's visits against the target).
    #[arg(long, default_value = "langevin-demo.png")]
    pub plot: PathBuf,
}

impl Default for DemoArgs {
    fn default() -> Self {
        Self {
            steps: 10_000,
            mixture_steps: 20_000,
            chains: 4,
            seed: 0,
            plot: PathBuf::from("langevin-demo.png"),
        }
    }
}

const SIDE: usize = 20;
const CRITICAL_COUPLING: f32 = 0.4407;
/// The mixture's start: the mode at (75, 75).
const START: [u16; 2] = [75, 75];
/// A mode counts as visited within this Euclidean distance of its centre (75 % of its mass).
const VISIT_RADIUS: f64 = 10.0;
/// ACS's steps on the mixture, set by hand as in the paper's experiment (the automatic search
/// aims at acceptance ½, which mode-hopping jumps on a wide lattice never reach).
const MIXTURE_STEPS: (f64, f64) = (1575.0, 3.0);

/// Replicas of the replica-exchange run on the mixture.
const PT_REPLICAS: usize = 8;

pub fn run(args: &DemoArgs) -> Result<(), CliError> {
    // ACS tunes within a tenth of the run: a thousand steps leave it one round of each search.
    if args.chains == 0 || args.steps < 1_000 || args.mixture_steps < 1_000 {
        return Err(CliError(
            "the demo needs at least one chain and 1000 steps per part".into(),
        ));
    }
    let threads = default_threads();
    let trace_path = args.plot.with_extension("trace.png");
    let mixture_path = args.plot.with_extension("mixture.png");
    // Held until the pictures are written: their folder takes files, and no other run is
    // writing them.
    let _outputs = prepare::<&str, &Path>(
        &[],
        &[
            ("--plot", &args.plot),
            ("--plot's trace", &trace_path),
            ("--plot's mixture", &mixture_path),
        ],
    )?;
    let ising = ising_table(args, threads)?;
    let mixture = mixture_section(args, threads)?;
    // Drawn into temporary files, then written together, all or none.
    let (chart, trace, visits) = (
        Rendering::beside(&args.plot)?,
        Rendering::beside(&trace_path)?,
        Rendering::beside(&mixture_path)?,
    );
    let labels: Vec<&str> = ising.labels.iter().map(String::as_str).collect();
    bar_chart_with(
        chart.path(),
        &BarSpec {
            title: "ESS per second, 20x20 critical Ising",
            x_label: "sampler (b: biased, no Metropolis test; *: not converged)",
            y_label: "ESS per second (log scale)",
            marked: &ising.marked,
            note: "Hatched bars are not to be trusted: biased (b) or not converged (*, R-hat > 1.01 or ESS < 100).",
        },
        &labels,
        &ising.ess_per_second,
        AxisScale::Log,
    )?;
    trace_and_acf(
        trace.path(),
        TraceSpec {
            title: format!(
                "Hamming distance to a reference state, {} (fastest exact sampler{})",
                ising.best_label,
                if ising.best_converged {
                    ""
                } else {
                    "; not converged"
                }
            ),
            x_label: crate::sample::pictures::kept_draw_label(1, args.steps / 10),
            y_label: "Hamming distance".into(),
        },
        &ising.best_traces,
        200,
    )?;
    mixture.draw(
        visits.path(),
        "25-mode lattice mixture: ACS visits against the target",
    )?;
    write_all(&[chart.bytes()?, trace.bytes()?, visits.bytes()?])?;
    println!("\nWrote");
    println!("  {}  ESS per second by sampler", args.plot.display());
    println!(
        "  {}  trace and autocorrelation ({}, the exact sampler with the most ESS per second{})",
        trace_path.display(),
        ising.best_label,
        if ising.best_converged {
            ", converged"
        } else {
            "; none converged"
        }
    );
    println!(
        "  {}  ACS's visits on the mixture against the target",
        mixture_path.display()
    );
    println!("\nTry next:");
    for line in [
        "langevin model ising-lattice --rows 20 --cols 20 --coupling 0.4407 --out ising.json",
        "langevin sample --model ising.json --sampler gibbs --out samples.npy --summary summary.json --plot trace.png",
        "langevin model ising-lattice --rows 4 --cols 5 --coupling 0.3 --out small.json",
        "langevin sample --model small.json --sampler ab --exact    # marginal RMSE against enumeration",
        "langevin model lattice-mixture --out mixture.json",
        "langevin sample --model mixture.json --sampler acs --a-max 1575 --a-min 3 --steps 20000 --plot mixture.png",
        "langevin sample --help    # every sampler and option; README.md describes the model files",
    ] {
        println!("  {line}");
    }
    Ok(())
}

/// What the Ising part hands to the pictures.
struct IsingOutcome {
    labels: Vec<String>,
    ess_per_second: Vec<f64>,
    /// Per row: biased or not converged (hatched in the chart).
    marked: Vec<bool>,
    best_label: String,
    /// Whether the traced sampler converged.
    best_converged: bool,
    /// The traced sampler's rank: (converged, ESS per second); exact samplers only.
    best_key: Option<(bool, f64)>,
    best_traces: Vec<Vec<f64>>,
}

/// What part 1's table means, under it: the rows that did not converge (`unconverged` of
/// `rows`, each run `steps` steps) and how to read each column.
fn print_ising_notes(unconverged: usize, rows: usize, steps: u64) {
    if unconverged > 0 {
        for line in [
            format!(
                "\n* Not converged: R-hat above 1.01, or an ESS (of the statistic or of a site) \
                 below 100, in {unconverged} of {} rows.",
                rows
            ),
            "  Their numbers compare mixing speed, not settled answers. At the critical coupling"
                .to_string(),
            format!(
                "  J = {CRITICAL_COUPLING} the correlation length spans the lattice, and samplers \
                 that change a few spins"
            ),
            format!(
                "  per step (even a Gibbs sweep) need far more than {} steps to decorrelate: \
                 critical slowing down.",
                steps
            ),
            "  Much longer runs (--steps) or cluster moves that flip whole domains (none here) \
             are needed."
                .to_string(),
        ] {
            println!("{line}");
        }
    }
    println!(
        "\nflips: accepted flips per step. A gibbs step is a sweep of all {} sites, so compare",
        SIDE * SIDE
    );
    println!("ESS per second across samplers, not per step. ns/step: wall time over all chains'");
    println!("steps. ESS: multi-chain ESS of the Hamming distance to a fixed random state.");
    println!("error: largest |P̂(x_i = 1) − ½| over the sites (exact value ½ by symmetry).");
    println!(
        "dula has no Metropolis test: it is fast but biased for a > 0 (its error column), so it"
    );
    println!("is marked biased and never traced. Parameters after →");
    println!(
        "are those tuned during burn-in (chain 0; acs: its cycle's largest and smallest step)."
    );
}

fn ising_table(args: &DemoArgs, threads: usize) -> Result<IsingOutcome, CliError> {
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
        chains: args.chains,
        seed: args.seed,
        threads,
        first_chain: 0,
    };
    // Every binary sampler of the registry, once per step size its entry lists for the demo.
    let mut samplers = Vec::new();
    for entry in SAMPLERS.iter().filter(|e| e.applies_to(Domain::Binary)) {
        for step in entry.demo {
            let mut params = SamplerParams::default();
            params.step = step.unwrap_or(params.step);
            let plan = entry.with(params)?.plan(Domain::Binary)?;
            samplers.push(plan.first_order());
        }
    }
    println!(
        "langevin demo, part 1: {SIDE}×{SIDE} periodic Ising at the critical coupling J = {CRITICAL_COUPLING}, h = 0 (d = {})",
        SIDE * SIDE
    );
    println!(
        "{} chains × {} steps after {} burn-in per sampler (tuned samplers tune there), seed {}, {} threads\n",
        config.chains, config.steps, config.burn_in, config.seed, config.threads
    );
    println!(
        "{:<8}{:<18}{:>7}{:>8}{:>9}{:>8}{:>8}{:>7}{:>7}  note",
        "sampler", "parameters", "accept", "flips", "ns/step", "ESS", "ESS/s", "R-hat", "error"
    );
    let mut unconverged = 0;
    let mut outcome = IsingOutcome {
        labels: Vec::new(),
        ess_per_second: Vec::new(),
        marked: Vec::new(),
        best_label: String::new(),
        best_converged: false,
        best_key: None,
        best_traces: Vec::new(),
    };
    for spec in &samplers {
        let run = run_chains(&model, spec, &config, None, Keep::all())?;
        let stats = run.stats();
        let diag = diagnose(&run, config.seed, Depth::Coordinates(None))?;
        let ns = run.wall_time.as_nanos() as f64 / run.steps_taken().max(1) as f64;
        // Exact marginals are ½ by the spin-flip symmetry of the zero-field model.
        let error = run
            .means()
            .iter()
            .map(|m| (m - 0.5).abs())
            .fold(0.0, f64::max);
        let label = short_label(spec);
        let note = convergence_note(diag.rhat_max, diag.ess_statistic.min(diag.ess_min));
        let converged = note.is_empty();
        unconverged += usize::from(!converged);
        let biased = is_biased(spec);
        // The trace shows an exact sampler: converged ones first, then the most ESS per second.
        let key = (converged, diag.ess_per_second);
        if !biased && outcome.best_key.is_none_or(|best| key > best) {
            let reference: Vec<u8> = Statistic::reference(run.dim, 2, config.seed)?;
            outcome.best_label = label.clone();
            outcome.best_converged = converged;
            outcome.best_key = Some(key);
            outcome.best_traces = run
                .chains
                .iter()
                .map(|c| Statistic::Hamming.series(&c.draws, &reference))
                .collect();
        }
        let note = if biased {
            format!("! biased (no Metropolis test); {note}")
        } else {
            note.to_string()
        };
        println!(
            "{:<8}{:<18}{:>7.3}{:>8.2}{:>9.0}{:>8.0}{:>8.0}{:>7}{:>7.3}  {}",
            spec.name(),
            parameters(spec, &run),
            stats.acceptance_rate(),
            stats.mean_accepted_flips(),
            ns,
            diag.ess_statistic,
            diag.ess_per_second,
            crate::figures::rhat_text(diag.rhat_max),
            error,
            note
        );
        // Short enough for two lines under a bar: `dula 0.2` / `b*`.
        let marks = format!(
            "{}{}",
            if biased { "b" } else { "" },
            if converged { "" } else { "*" }
        );
        outcome.labels.push(if marks.is_empty() {
            chart_label(spec)
        } else {
            format!("{} {marks}", chart_label(spec))
        });
        outcome.ess_per_second.push(diag.ess_per_second);
        outcome.marked.push(biased || !converged);
    }
    print_ising_notes(unconverged, samplers.len(), config.steps);
    Ok(outcome)
}

/// The note of a row whose chains have not converged (R-hat above 1.01 or ESS below 100, the
/// thresholds of Vehtari et al. 2021), naming why: at the critical coupling, local samplers
/// slow down; empty for a converged row.
fn convergence_note(rhat_max: f64, ess: f64) -> &'static str {
    // NaN (chains that never moved) counts as failing.
    match (rhat_max <= 1.01, ess >= 100.0) {
        (true, true) => "",
        (false, true) => "! not converged (R-hat): critical slowing down*",
        (true, false) => "! not converged (ESS): critical slowing down*",
        (false, false) => "! not converged (R-hat, ESS): critical slowing down*",
    }
}

/// The step of a sampler with a fixed one (DULA, DMALA).
fn fixed_step(spec: &Sampler) -> Option<f64> {
    let (step, _) = spec.step_balance();
    (!spec.is_tuned() && step.is_finite()).then_some(step)
}

/// A bar's label: the sampler, and its step where it has a fixed one.
fn chart_label(spec: &Sampler) -> String {
    match fixed_step(spec) {
        Some(step) => format!("{} {step}", spec.name()),
        None => spec.name().to_string(),
    }
}

/// Whether the sampler's draws are biased for any step (no Metropolis test).
fn is_biased(spec: &Sampler) -> bool {
    spec.name() == "dula"
}

/// A label for the bar chart.
fn short_label(spec: &Sampler) -> String {
    match fixed_step(spec) {
        Some(step) => format!("{} a={step}", spec.name()),
        None => spec.name().to_string(),
    }
}

/// The sampler's parameters, tuned ones as chain 0 ended its burn-in.
fn parameters(spec: &Sampler, run: &BinaryRun) -> String {
    let tuned = run.chains.first().and_then(|c| c.tuned.as_ref());
    let f = |k: &str| {
        tuned
            .and_then(|t| t.get(k))
            .and_then(serde_json::Value::as_f64)
            .unwrap_or(f64::NAN)
    };
    if fixed_step(spec).is_some() {
        let (step, balance) = spec.step_balance();
        return format!("a={step} b={balance}");
    }
    match spec.name() {
        "gibbs" => "systematic sweep".into(),
        "gwg" => "one flip".into(),
        "rwm" => format!("rate → {:.4}", f("rate")),
        "ab" => format!("→ a={:.3} b={:.2}", f("step"), f("balance")),
        "acs" => format!("→ a {:.2}…{:.2}", f("a_max"), f("a_min")),
        _ => String::new(),
    }
}

fn mixture_section(args: &DemoArgs, threads: usize) -> Result<Heat, CliError> {
    let mixture = LatticeMixture::twenty_five_modes();
    let model = LabelModel::Ordinal(OrdinalModel::Mixture(mixture.clone()));
    let start = LabelStart::Fixed(START.to_vec());
    println!(
        "\nlangevin demo, part 2: the 25-mode lattice mixture on {{0..449}}² (modes 75 apart, τ = 3.75),"
    );
    println!(
        "every chain started in the mode at (75, 75); {} chains × {} steps each.\n",
        args.chains, args.mixture_steps
    );
    // DMALA's step: acceptance closest to 0.574 on the grid a = 2^(j/2), one short chain each
    // (the paper's baseline protocol).
    let pilot = RunConfig {
        steps: 1_000,
        burn_in: 0,
        thin: 1,
        chains: 1,
        seed: args.seed,
        threads: 1,
        first_chain: 0,
    };
    let mut best = (f64::INFINITY, 1.0);
    for j in 0..24 {
        let a = 2f64.powf(f64::from(j) / 2.0);
        let spec = Sampler::named("dmala", |p| p.step = a)?;
        let run = run_label_chains(&model, &spec, &pilot, &start, None, Keep::all())?;
        let gap = (run.stats().acceptance_rate() - 0.574).abs();
        if gap < best.0 {
            best = (gap, a);
        }
    }
    let config = RunConfig {
        steps: args.mixture_steps,
        burn_in: 0,
        thin: 1,
        chains: args.chains,
        seed: args.seed,
        threads,
        first_chain: 0,
    };
    let samplers = [
        (
            format!("dmala a={:.1}", best.1),
            Sampler::named("dmala", |p| p.step = best.1)?,
        ),
        (
            format!("acs a={:.0}…{:.0}", MIXTURE_STEPS.0, MIXTURE_STEPS.1),
            Sampler::named("acs", |p| {
                (p.a_ceil, p.a_max, p.a_min) = (
                    MIXTURE_STEPS.0,
                    Some(MIXTURE_STEPS.0),
                    Some(MIXTURE_STEPS.1),
                );
            })?,
        ),
    ];
    // Replica exchange adapts its ladder and steps during a burn-in of a tenth of the run.
    let pt_config = RunConfig {
        burn_in: args.mixture_steps / 10,
        ..config
    };
    let samplers = samplers.into_iter().chain([(
        format!("pt-dmala R={PT_REPLICAS}"),
        Sampler::named("pt-dmala", |p| p.replicas = PT_REPLICAS)?,
    )]);
    println!(
        "{:<16}{:>8}{:>10}{:>18}{:>12}",
        "sampler", "accept", "L1 jump", "modes per chain", "all chains"
    );
    let mut acs_run = None;
    let mut pt_evals = 0.0;
    for (label, spec) in &samplers.collect::<Vec<_>>() {
        let pt = spec.name() == "pt-dmala";
        let run = run_label_chains(
            &model,
            spec,
            if pt { &pt_config } else { &config },
            &start,
            None,
            Keep::all(),
        )?;
        if pt {
            pt_evals = run.evaluations() as f64 / run.steps_taken().max(1) as f64;
        }
        let per_chain: Vec<usize> = run
            .chains
            .iter()
            .map(|c| visited(&mixture, &[c.draws.as_slice()]).len())
            .collect();
        let all: Vec<&[u16]> = run.chains.iter().map(|c| c.draws.as_slice()).collect();
        let union = visited(&mixture, &all).len();
        let (lo, hi) = (
            per_chain.iter().min().copied().unwrap_or(0),
            per_chain.iter().max().copied().unwrap_or(0),
        );
        println!(
            "{:<16}{:>8.3}{:>10.2}{:>18}{:>12}",
            label,
            run.stats().acceptance_rate(),
            run.mean_jump(),
            format!("{lo} to {hi} of 25"),
            format!("{union} of 25")
        );
        if spec.name() == "acs" {
            acs_run = Some(run);
        }
    }
    println!(
        "\nA mode is visited when a chain comes within distance {VISIT_RADIUS} of its centre. ACS's cycle"
    );
    println!(
        "starts each period with a huge step (a = {}) that jumps between modes and then settles",
        MIXTURE_STEPS.0
    );
    println!(
        "with small steps (a = {}); its balances were tuned within 10% of the run.",
        MIXTURE_STEPS.1
    );
    println!(
        "pt-dmala's draws are its cold chain's (β = 1); it steps {PT_REPLICAS} replicas per step ({pt_evals:.1} evaluations"
    );
    println!(
        "per step with swaps) after a burn-in of {} steps that tunes its ladder and steps.",
        pt_config.burn_in
    );
    let run: LabelRun = acs_run.ok_or_else(|| CliError("no ACS run".into()))?;
    let chains: Vec<&[u16]> = run.chains.iter().map(|c| c.draws.as_slice()).collect();
    Ok(Heat::new(|x| mixture.log_density(x), &chains, 450))
}

/// The modes the draws came near.
fn visited(mixture: &LatticeMixture, chains: &[&[u16]]) -> std::collections::BTreeSet<usize> {
    chains
        .iter()
        .flat_map(|c| c.chunks_exact(2))
        .filter_map(|x| mixture.nearest_mode(x, VISIT_RADIUS))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::convergence_note;

    #[test]
    fn unconverged_rows_say_why() {
        // The demo's rows before: R-hat up to 2.9, ESS down to 3, printed without a word.
        for (rhat, ess) in [(2.9, 41.0), (1.07, 500.0), (1.005, 3.0), (f64::NAN, 500.0)] {
            let note = convergence_note(rhat, ess);
            assert!(
                note.contains("critical slowing down"),
                "{rhat} {ess}: {note}"
            );
        }
        assert_eq!(
            convergence_note(2.9, 41.0),
            "! not converged (R-hat, ESS): critical slowing down*"
        );
        assert_eq!(convergence_note(1.005, 400.0), "");
        assert_eq!(convergence_note(1.01, 100.0), "");
    }
}
