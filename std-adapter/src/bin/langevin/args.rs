//! Argument groups several commands share.

use crate::CliError;
use clap::Args;
use langevin_std::io::write_all;
use langevin_std::resources::{MemoryBudget, parse_size, product};
use std::path::{Path, PathBuf};

/// Chains, seed and threads, as every command that runs chains takes them.
#[derive(Args, Debug, Clone)]
pub struct ChainArgs {
    /// Number of chains.
    #[arg(long, default_value_t = 4)]
    pub chains: usize,
    /// Master seed: the same command gives the same output, bit for bit.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Worker threads (default: all cores); results do not depend on it.
    #[arg(long, value_parser = at_least_one_thread)]
    pub threads: Option<usize>,
}

impl ChainArgs {
    /// The worker threads: the flag, or every core.
    pub fn threads(&self) -> usize {
        self.threads.unwrap_or_else(default_threads).max(1)
    }
}

/// Why a `--threads` value was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ThreadCountError {
    /// Zero threads.
    #[error("0 threads would run no chain: give at least 1 (or leave it out for all cores)")]
    Zero,
    /// Not a whole number.
    #[error("`{text}` is not a thread count: {source}")]
    NotANumber {
        /// The text.
        text: String,
        /// Why it does not read as a count.
        source: std::num::ParseIntError,
    },
}

/// `--threads`: a whole number of at least 1 (0 would run nothing).
pub fn at_least_one_thread(text: &str) -> Result<usize, ThreadCountError> {
    match text.parse::<usize>() {
        Ok(0) => Err(ThreadCountError::Zero),
        Ok(n) => Ok(n),
        Err(source) => Err(ThreadCountError::NotANumber {
            text: text.to_owned(),
            source,
        }),
    }
}

/// The long names (without `--`) of the options this process's command line gives itself, not
/// by default: empty when the line does not parse (it always does here: commands run only
/// after parsing).
pub fn given_options() -> std::collections::BTreeSet<String> {
    given_options_in(std::env::args_os())
}

/// [`given_options`] of the command line `args`.
pub fn given_options_in<I, T>(args: I) -> std::collections::BTreeSet<String>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    use clap::CommandFactory;
    use clap::parser::ValueSource;
    let command = crate::Cli::command();
    let Ok(matches) = command.clone().try_get_matches_from(args) else {
        return Default::default();
    };
    let Some((name, sub)) = matches.subcommand() else {
        return Default::default();
    };
    let Some(sub_command) = command.find_subcommand(name) else {
        return Default::default();
    };
    sub_command
        .get_arguments()
        .filter(|arg| sub.value_source(arg.get_id().as_str()) == Some(ValueSource::CommandLine))
        .filter_map(|arg| arg.get_long().map(str::to_string))
        .collect()
}

/// All available cores.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// The summary file and whether to print.
#[derive(Args, Debug, Clone)]
pub struct ReportArgs {
    /// Write the summary here (JSON).
    #[arg(long)]
    pub summary: Option<PathBuf>,
    /// Print nothing on success (and show no progress bar).
    #[arg(long)]
    pub quiet: bool,
}

impl ReportArgs {
    /// Writes the result array to `out` (when given) and the summary (when asked), both or
    /// neither.
    pub fn write(
        &self,
        out: Option<&Path>,
        array: Vec<u8>,
        summary: Vec<u8>,
    ) -> Result<(), CliError> {
        let files: Vec<(&Path, Vec<u8>)> = [(out, array), (self.summary.as_deref(), summary)]
            .into_iter()
            .filter_map(|(path, bytes)| Some((path?, bytes)))
            .collect();
        Ok(write_all(&files)?)
    }
}

/// The memory cap of a run.
#[derive(Args, Debug, Clone)]
pub struct MemoryArgs {
    /// Refuse the run before it starts if its estimated memory (input files and their parse,
    /// kept draws, their copies for the outputs, diagnostics) exceeds this many bytes (4G,
    /// 512M, 2GiB, 100000) [default: half of the machine's memory].
    #[arg(long = "max-memory", value_parser = parse_size)]
    pub max_memory: Option<u64>,
}

impl MemoryArgs {
    /// The cap: the flag, or the default.
    pub fn budget(&self) -> MemoryBudget {
        MemoryBudget::new(self.max_memory)
    }
}

impl MemoryArgs {
    /// Refuses, before anything is allocated, a request whose parts (name, factors whose
    /// product is its bytes) exceed the cap or 2^64 bytes; the error names every part's size.
    pub fn check(&self, parts: &[(&str, &[u64])]) -> Result<(), CliError> {
        let sized: Vec<(&str, Option<u64>)> = parts
            .iter()
            .map(|(name, factors)| (*name, product(factors)))
            .collect();
        self.budget().check(&sized)?;
        Ok(())
    }
}

/// `a + b + …` steps, or an error naming the flags when the count passes 2^64.
pub fn total_steps(parts: &[(&str, u64)]) -> Result<u64, CliError> {
    parts
        .iter()
        .try_fold(0u64, |sum, (_, n)| sum.checked_add(*n))
        .ok_or_else(|| {
            let names: Vec<String> = parts.iter().map(|(f, n)| format!("{f} {n}")).collect();
            CliError(format!(
                "the run would take more than 2^64 steps ({}); ask for fewer",
                names.join(" + ")
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_count_is_a_whole_number_of_at_least_one() {
        assert_eq!(at_least_one_thread("3"), Ok(3));
        assert_eq!(at_least_one_thread("0"), Err(ThreadCountError::Zero));
        let e = at_least_one_thread("-2").unwrap_err();
        assert!(
            matches!(&e, ThreadCountError::NotANumber { text, .. } if text == "-2"),
            "{e:?}"
        );
        assert_eq!(
            e.to_string(),
            "`-2` is not a thread count: invalid digit found in string"
        );
    }
}
