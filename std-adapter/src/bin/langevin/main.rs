//! The `langevin` command line: sample discrete and continuous models, solve the diagonal SDP,
//! or, with no arguments, run a demonstration.

#![forbid(unsafe_code)]
#![cfg_attr(
    not(test),
    deny(
        clippy::panic,
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::unreachable,
        clippy::todo,
        clippy::unimplemented
    )
)]

mod ais;
mod args;
mod continuous;
mod demo;
mod figures;
mod sample;
mod sdp;
mod train;
// Model generators, benchmarks and the progress bar.
mod bench;
mod compare;
mod messages;
mod model;
mod progress;
mod provenance;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Gradient-informed MCMC for discrete and continuous models.
#[derive(Parser, Debug)]
#[command(
    name = "langevin",
    version,
    about = "Gradient-informed MCMC: sample discrete models (binary, ordinal, categorical) with \
             discrete Langevin samplers and continuous posteriors with stochastic-gradient \
             Langevin integrators; every seeded run is reproducible bit for bit.",
    after_help = "Example:\n  langevin model ising-lattice --rows 10 --cols 10 --out ising.json\n  \
                  langevin sample --model ising.json --sampler dmala --steps 5000 --out draws.npy \
                  --summary summary.json\n\nWith no command, runs the demonstration."
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Sample a discrete model file.
    Sample(sample::SampleArgs),
    /// Join the shards of a run (`sample --first-chain`) into its draws and summary, as one run
    /// of all their chains writes them.
    Merge(sample::MergeArgs),
    /// Sample a continuous posterior that is a sum over data with a stochastic-gradient
    /// Langevin integrator.
    SampleContinuous(continuous::ContinuousArgs),
    /// Solve the diagonal SDP `min Σ d_i s.t. d ≥ 0, W + diag(d) ⪰ 0` (SDP-lite).
    Sdp(sdp::SdpArgs),
    /// Run the built-in demonstration (also what `langevin` with no arguments does).
    Demo(demo::DemoArgs),
    /// Write a model file from a seeded generator (Ising, RBM, lattice Gaussian, ...).
    #[command(subcommand_required = false, arg_required_else_help = false)]
    Model(model::ModelArgs),
    /// Measure a sampler's per-step cost on a model file, next to its ESS per second.
    Bench(bench::BenchArgs),
    /// Compare AB-trace, AB-shift, AB-max, AB-1st, DLP-trace and DMALA side by side (ESS per
    /// 10⁴ evaluations and per second) on Sun et al. (2023)'s Ising benchmarks.
    Compare(compare::CompareArgs),
    /// Estimate an RBM's log partition function by annealed importance sampling (exactly,
    /// when a layer is small) and the mean log-likelihood of data.
    Ais(ais::AisArgs),
    /// Learn an RBM or an Ising model on a lattice from binary data by persistent contrastive
    /// divergence with any binary sampler.
    Train(train::TrainArgs),
}

/// A failure reported as one line on stderr with exit status 2.
#[derive(Debug)]
pub struct CliError(pub String);

impl<E: std::fmt::Display> From<E> for CliError {
    fn from(e: E) -> Self {
        CliError(e.to_string())
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
                let _ = e.print();
                return ExitCode::SUCCESS;
            }
            // One line: clap's first paragraph names the problem (and, for missing or
            // invalid values, lists them on the lines below); its "did you mean" tips follow
            // in parentheses.
            let text = e.to_string();
            let paragraph: Vec<&str> = text
                .lines()
                .map(str::trim)
                .take_while(|l| !l.is_empty())
                .collect();
            let tips: Vec<&str> = text
                .lines()
                .map(str::trim)
                .filter(|l| l.starts_with("tip:"))
                .collect();
            let mut line = if paragraph.is_empty() {
                "error: invalid arguments".to_string()
            } else {
                paragraph.join(" ")
            };
            if !tips.is_empty() {
                line = format!("{line} ({})", tips.join("; "));
            }
            eprintln!("{}", messages::compact_numbers(&line));
            return ExitCode::from(2);
        }
    };
    quiet_on_closed_stdout();
    // Temporary files and locks go with the process on Ctrl-C, `kill` or `timeout`; should the
    // handler be refused, leftovers are still recognisable and removed by the next run.
    let _ = langevin_std::io::clean_up_on_signals();
    if let Err(message) = langevin_std::simd::check_env() {
        eprintln!("error: {message}");
        return ExitCode::from(2);
    }
    let outcome = std::panic::catch_unwind(|| match cli.command {
        Some(Command::Sample(args)) => sample::run(&args),
        Some(Command::Merge(args)) => sample::merge(&args),
        Some(Command::Demo(args)) => demo::run(&args),
        Some(Command::SampleContinuous(args)) => continuous::run_continuous(&args),
        Some(Command::Sdp(args)) => sdp::run(&args),
        Some(Command::Model(args)) => model::run(&args),
        Some(Command::Bench(args)) => bench::run(&args),
        Some(Command::Compare(args)) => compare::run(&args),
        Some(Command::Ais(args)) => ais::run(&args),
        Some(Command::Train(args)) => train::run(&args),
        None => demo::run(&demo::DemoArgs::default()),
    });
    let outcome = match outcome {
        Ok(outcome) => outcome,
        // The reader went away (`langevin | head`): stop quietly, as other tools do.
        Err(payload) if is_broken_pipe(payload.as_ref()) => return ExitCode::SUCCESS,
        Err(payload) => std::panic::resume_unwind(payload),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(CliError(message)) => {
            let line = message.lines().next().unwrap_or("failed");
            eprintln!("error: {}", messages::compact_numbers(line));
            ExitCode::from(2)
        }
    }
}

/// Whether a panic payload is `println!` failing on a closed stdout.
fn is_broken_pipe(payload: &(dyn std::any::Any + Send)) -> bool {
    let text = payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
        .unwrap_or("");
    text.contains("Broken pipe")
}

/// Keeps the panic message of a closed stdout off stderr; every other panic reports as usual.
fn quiet_on_closed_stdout() {
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !is_broken_pipe(info.payload()) {
            report(info);
        }
    }));
}
