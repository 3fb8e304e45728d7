//! The parser of `langevin sample`: clap's arguments become a typed [`RunSpec`] here, and the
//! argument struct goes no further.

use crate::CliError;
use crate::args::{ChainArgs, MemoryArgs, ReportArgs};
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{ArgMatches, Args, Command, FromArgMatches, ValueEnum};
use langevin_std::binary::RunConfig;
use langevin_std::io::is_stdout;
use langevin_std::resources::MemoryBudget;
use langevin_std::run::RunError;
use langevin_std::samplers::{self, Param, Sampler, SamplerEntry, SamplerParams};
use std::marker::PhantomData;
use std::path::{Path, PathBuf};

/// The `--sampler` values: the registry's names, each with its description.
pub fn sampler_parser() -> impl TypedValueParser<Value = &'static SamplerEntry> {
    PossibleValuesParser::new(
        samplers::SAMPLERS
            .iter()
            .map(|e| PossibleValue::new(e.name).help(e.description)),
    )
    .try_map(|name: String| samplers::find(&name))
}

/// How a summary is printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Aligned `name  value` lines.
    Table,
    /// The same JSON as the summary file.
    Json,
}

/// The model file and the sampler flags, as every command that samples a discrete model takes
/// them; the flags, their help, defaults, ranges and the samplers that read them come from the
/// registry's parameter table.
#[derive(Args, Debug, Clone)]
pub struct SamplerArgs {
    /// Model file (JSON).
    #[arg(long)]
    pub model: PathBuf,
    /// Sampler.
    #[arg(long, value_parser = sampler_parser(), default_value = "dmala")]
    pub sampler: &'static SamplerEntry,
    #[command(flatten)]
    pub params: ParamArgs<EveryParam>,
}

/// Which parameters a command takes.
pub trait ParamSet: Clone + std::fmt::Debug {
    /// Whether the command takes `param`.
    fn takes(param: Param) -> bool;

    /// The parameters the command takes, in the table's order.
    fn params() -> Vec<Param> {
        Param::ALL.into_iter().filter(|&p| Self::takes(p)).collect()
    }
}

/// Every parameter.
#[derive(Clone, Debug)]
pub struct EveryParam;

impl ParamSet for EveryParam {
    fn takes(_: Param) -> bool {
        true
    }
}

/// The sampler parameters of the command line, made from the registry's table: the parameters
/// of `S`, the others at their defaults.
#[derive(Clone, Debug)]
pub struct ParamArgs<S>(pub SamplerParams, PhantomData<S>);

impl<S: ParamSet> FromArgMatches for ParamArgs<S> {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        SamplerParams::from_matches(matches, &S::params())
            .map(|p| Self(p, PhantomData))
            .map_err(|e| {
                let message = format!("{}: {e}", e.param.info().flag);
                clap::Error::raw(clap::error::ErrorKind::ValueValidation, message)
            })
    }
    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

impl<S: ParamSet> Args for ParamArgs<S> {
    fn augment_args(command: Command) -> Command {
        command.args(S::params().into_iter().map(Param::arg))
    }
    fn augment_args_for_update(command: Command) -> Command {
        Self::augment_args(command)
    }
}

impl SamplerArgs {
    /// The sampler the flags describe, its parameters checked as far as the model does not
    /// matter; without `--step` every sampler starts from the registry's default step.
    pub fn sampler(&self) -> Result<Sampler, CliError> {
        self.sampler_with(false)
    }

    /// [`SamplerArgs::sampler`], and with `adapt_by_default` DMALA (without `--adapt`) tunes
    /// its step during burn-in (`--adapt acceptance`) when this process's command line gives
    /// neither `--step` nor `--balance` ([`SamplerParams::adapt_by_default`]).
    pub fn sampler_with(&self, adapt_by_default: bool) -> Result<Sampler, CliError> {
        let given = crate::args::given_options();
        self.refuse_unused(&given)?;
        let mut params = self.params.0;
        if adapt_by_default {
            let given: Vec<Param> = Param::ALL
                .into_iter()
                .filter(|p| given.contains(p.info().flag.trim_start_matches("--")))
                .collect();
            params.adapt_by_default(self.sampler.params, &given);
        }
        Ok(self.sampler.with(params)?)
    }
}

impl SamplerArgs {
    /// Refuses a sampler option given on the command line (`given`: long names) that the
    /// chosen sampler does not read: it would change nothing, and the run would seem to say
    /// it did.
    pub fn refuse_unused(
        &self,
        given: &std::collections::BTreeSet<String>,
    ) -> Result<(), CliError> {
        let entry = self.sampler;
        let unused: Vec<&str> = Param::ALL
            .iter()
            .filter(|p| !entry.params.contains(p))
            .map(|p| p.info().flag)
            .filter(|flag| given.contains(flag.trim_start_matches("--")))
            .collect();
        if unused.is_empty() {
            return Ok(());
        }
        let reads: Vec<&str> = entry.params.iter().map(|p| p.info().flag).collect();
        Err(CliError(format!(
            "sampler {} does not use {} ({}); drop {}",
            entry.name,
            unused.join(", "),
            if reads.is_empty() {
                "it takes no sampler options".to_string()
            } else {
                format!("it reads {}", reads.join(", "))
            },
            if unused.len() == 1 { "it" } else { "them" }
        )))
    }
}

/// Arguments of `langevin sample`.
#[derive(Args, Debug, Clone)]
#[command(allow_negative_numbers = true)]
pub struct SampleArgs {
    #[command(flatten)]
    pub sampler: SamplerArgs,
    /// Steps per chain after burn-in.
    #[arg(long, default_value_t = 10_000)]
    pub steps: u64,
    /// Steps per chain discarded first (tuned samplers tune here).
    #[arg(long = "burn-in", default_value_t = 1_000)]
    pub burn_in: u64,
    #[command(flatten)]
    pub chains: ChainArgs,
    /// Run chains K .. K+chains−1 of a run of K+chains chains (a shard), each with the draws it
    /// has there, bit for bit; `langevin merge` joins the shards' outputs into that run's.
    /// With --batch N, K is a multiple of N.
    #[arg(long = "first-chain", value_name = "K", default_value_t = 0)]
    pub first_chain: usize,
    /// Keep one draw every `thin` steps.
    #[arg(long, default_value_t = 1)]
    pub thin: u64,
    /// Step the chains N at a time in lockstep, so that an RBM's products with W are
    /// matrix–matrix (dula and dmala on rbm, binary_quadratic, binary_logistic and
    /// ordinal_quadratic models). On an RBM or a logistic regression it changes the seeded
    /// values: a chain's draws depend on N (not on --threads or --chains); on the quadratic
    /// models they are those of the default path. Without the flag, each chain is stepped on
    /// its own.
    #[arg(long, value_name = "N")]
    pub batch: Option<usize>,
    /// Write the kept draws here (`.npy`, shape (chains, draws, d); uint8 for up to 256
    /// values per coordinate, int32 above).
    #[arg(long)]
    pub out: Option<PathBuf>,
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
    /// Diagnostics after the run: `full` (every coordinate's bulk ESS and R-hat, and the
    /// distance statistic's), `summary` (the statistic's only: cheap at any dimension) or
    /// `none`.
    #[arg(long, value_enum, default_value_t = Diagnostics::Full)]
    pub diagnostics: Diagnostics,
    #[command(flatten)]
    pub report: ReportArgs,
    #[command(flatten)]
    pub memory: MemoryArgs,
    #[command(flatten)]
    pub checkpoint: super::checkpoint::CheckpointArgs,
}

/// Which diagnostics `sample` computes after the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Diagnostics {
    /// None.
    None,
    /// The distance statistic's ESS and R-hat.
    Summary,
    /// Also every coordinate's bulk ESS and R-hat, and the other columns of ArviZ's summary
    /// (sd, quantiles, MCSE of the mean, tail ESS).
    Full,
}

/// The files a run writes.
#[derive(Debug, Clone, Default)]
pub struct Outputs {
    /// The kept draws (`.npy`).
    pub draws: Option<PathBuf>,
    /// The summary (JSON).
    pub summary: Option<PathBuf>,
    /// The kept draws as CSV.
    pub csv: Option<PathBuf>,
    /// The trace picture (and its companions).
    pub plot: Option<PathBuf>,
}

impl Outputs {
    /// Every output with its flag.
    pub fn named(&self) -> Vec<(&'static str, &Path)> {
        [
            ("--out", &self.draws),
            ("--csv", &self.csv),
            ("--summary", &self.summary),
            ("--plot", &self.plot),
        ]
        .into_iter()
        .filter_map(|(flag, p)| Some((flag, p.as_deref()?)))
        .collect()
    }

    /// Whether an output goes to standard output (then nothing else is printed there).
    pub fn uses_stdout(&self) -> bool {
        self.named().iter().any(|(_, p)| is_stdout(p))
    }

    /// Fails early, before any sampling, when an output could not be written.
    pub fn check_writable(&self) -> Result<(), CliError> {
        let all = [&self.draws, &self.summary, &self.csv, &self.plot];
        all.into_iter()
            .flatten()
            .try_for_each(|p| check_writable(p))
    }
}

/// What `langevin sample` runs: the typed form of its arguments.
#[derive(Debug, Clone)]
pub struct RunSpec {
    /// The model file.
    pub model: PathBuf,
    /// The sampler and its parameters.
    pub sampler: Sampler,
    /// Chains, steps, burn-in, thinning, seed and threads.
    pub config: RunConfig,
    /// The files to write.
    pub outputs: Outputs,
    /// Enumerate the model and report the marginals' RMSE.
    pub exact: bool,
    /// Report the MMD against block-Gibbs draws (RBM models).
    pub mmd: bool,
    /// How to print the summary.
    pub format: Format,
    /// Print nothing and show no progress bar (also when an output is standard output).
    pub quiet: bool,
    /// The memory cap.
    pub memory: MemoryBudget,
    /// The diagnostics to compute.
    pub diagnostics: Diagnostics,
    /// Chains stepped together (`--batch`), if asked.
    pub batch: Option<usize>,
    /// Where the run saves checkpoints and what it resumes from, if asked.
    pub checkpoint: Option<super::checkpoint::CheckpointSpec>,
}

impl RunSpec {
    /// Checks the arguments that do not need the model and types them.
    pub fn parse(args: &SampleArgs) -> Result<Self, CliError> {
        if args.chains.chains == 0 {
            return Err(CliError("--chains must be at least 1".into()));
        }
        if args.thin == 0 {
            return Err(CliError("--thin must be at least 1".into()));
        }
        if args.steps / args.thin == 0 {
            return Err(CliError(format!(
                "--steps {} with --thin {} keeps no draws: there would be nothing to report \
                 (keep at least one draw per chain)",
                args.steps, args.thin
            )));
        }
        if args.batch == Some(0) {
            return Err(CliError("--batch must be at least 1".into()));
        }
        if let Some(batch) = args.batch
            && !args.first_chain.is_multiple_of(batch)
        {
            return Err(RunError::ShardNotAligned {
                first_chain: args.first_chain,
                batch,
            }
            .into());
        }
        if args.first_chain.checked_add(args.chains.chains).is_none() {
            return Err(CliError(
                "--first-chain plus --chains is beyond the largest chain index".into(),
            ));
        }
        if args.plot.as_deref().is_some_and(is_stdout) {
            return Err(CliError(
                "--plot writes one or more PNG files and cannot be standard output".into(),
            ));
        }
        // DMALA tunes its step by default; `--batch`'s lockstep path runs a fixed step.
        let sampler = args.sampler.sampler_with(args.batch.is_none())?;
        let outputs = Outputs {
            draws: args.out.clone(),
            summary: args.report.summary.clone(),
            csv: args.csv.clone(),
            plot: args.plot.clone(),
        };
        outputs.check_writable()?;
        let quiet = args.report.quiet || outputs.uses_stdout();
        Ok(Self {
            model: args.sampler.model.clone(),
            sampler,
            config: RunConfig {
                steps: args.steps,
                burn_in: args.burn_in,
                thin: args.thin,
                chains: args.chains.chains,
                seed: args.chains.seed,
                threads: args.chains.threads(),
                first_chain: args.first_chain,
            },
            outputs,
            exact: args.exact,
            mmd: args.mmd,
            format: args.format,
            quiet,
            memory: args.memory.budget(),
            diagnostics: args.diagnostics,
            batch: args.batch,
            checkpoint: args.checkpoint.spec()?,
        })
    }
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
