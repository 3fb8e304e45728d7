//! `--checkpoint`, `--checkpoint-every`, `--resume`: the options, and the run's checkpoint.

use super::spec::RunSpec;
use crate::CliError;
use clap::Args;
use langevin_std::run::{Checkpoint, Fingerprint};
use std::path::PathBuf;
use std::time::Duration;

/// The checkpoint options of `sample`.
#[derive(Args, Debug, Clone)]
pub struct CheckpointArgs {
    /// Save every chain's state (state, kernel and tuner state, random-stream position, step
    /// totals, kept draws) to this file every --checkpoint-every seconds, all or none; the same
    /// command with --resume continues from it and gives exactly the uninterrupted run's
    /// draws. Every sampler but ab2 saves its state (tuning included); --batch and ab2 are
    /// refused before the run.
    #[arg(long, value_name = "FILE")]
    pub checkpoint: Option<PathBuf>,
    /// Seconds between two checkpoints (a fraction is allowed).
    #[arg(
        long = "checkpoint-every",
        value_name = "SECONDS",
        default_value_t = 60.0
    )]
    pub checkpoint_every: f64,
    /// Continue the run saved in this checkpoint (written by the same command with
    /// --checkpoint); a checkpoint of another model, sampler, option, seed or version is
    /// refused, naming what differs. Checkpoints go on to --checkpoint, or to this file.
    #[arg(long, value_name = "FILE")]
    pub resume: Option<PathBuf>,
}

/// Checked checkpoint options.
#[derive(Debug, Clone)]
pub struct CheckpointSpec {
    /// Where checkpoints are written.
    pub path: PathBuf,
    /// The period between two.
    pub every: Duration,
    /// The checkpoint to continue from.
    pub resume: Option<PathBuf>,
}

impl CheckpointArgs {
    /// The checked options (`None` without `--checkpoint` and `--resume`).
    pub fn spec(&self) -> Result<Option<CheckpointSpec>, CliError> {
        let every = self.checkpoint_every;
        if !(every.is_finite() && every > 0.0 && every < 1e9) {
            return Err(CliError(format!(
                "--checkpoint-every {every}: give a number of seconds greater than 0"
            )));
        }
        let Some(path) = self.checkpoint.clone().or_else(|| self.resume.clone()) else {
            return Ok(None);
        };
        Ok(Some(CheckpointSpec {
            path,
            every: Duration::from_secs_f64(every),
            resume: self.resume.clone(),
        }))
    }
}

/// The run's checkpoint, resumed from `--resume` when given.
pub fn open(spec: &RunSpec) -> Result<Option<Checkpoint>, CliError> {
    let Some(c) = &spec.checkpoint else {
        return Ok(None);
    };
    let fp = Fingerprint::of_model_file(&spec.model)
        .map_err(|e| CliError(e.to_string()))?
        .with_run(&spec.sampler, &spec.config, spec.batch);
    Ok(Some(match &c.resume {
        Some(from) => {
            Checkpoint::resume(&c.path, c.every, fp, from).map_err(|e| CliError(e.to_string()))?
        }
        None => Checkpoint::new(&c.path, c.every, fp),
    }))
}

/// Files named by a flag: `(flag, path)`.
type Named = Vec<(String, PathBuf)>;

/// The checkpoint file as an output (locked while the run writes it) and the resumed one as
/// an input, for the checks before the run.
pub fn files(spec: &RunSpec) -> (Named, Named) {
    let Some(c) = &spec.checkpoint else {
        return (Vec::new(), Vec::new());
    };
    let inputs = c
        .resume
        .iter()
        .filter(|r| **r != c.path)
        .map(|r| ("--resume".to_string(), r.clone()))
        .collect();
    (inputs, vec![("--checkpoint".to_string(), c.path.clone())])
}
