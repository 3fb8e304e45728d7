//! The `checkpoint`, `checkpoint_every` and `resume` keywords of `langevin.sample`: the
//! command line's checkpoints (the same file, the same rules) for a run started from Python.

use langevin_std::io::output::{Prepared, prepare};
use langevin_std::run::{Checkpoint, CheckpointError, Fingerprint, RunConfig};
use langevin_std::samplers::Sampler;
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use std::path::PathBuf;
use std::time::Duration;

/// The checkpoint keywords as given.
#[derive(Debug, Clone)]
pub struct Request {
    /// Where checkpoints are written (`None`: where `resume` points, or no checkpoints).
    pub path: Option<PathBuf>,
    /// Seconds between two.
    pub every: f64,
    /// The checkpoint to continue from.
    pub resume: Option<PathBuf>,
}

/// A run's open checkpoint, with its file locked against other runs until it is dropped.
#[derive(Debug)]
pub struct Opened {
    /// The checkpoint the chains save to.
    pub checkpoint: Checkpoint,
    _lock: Prepared,
}

impl Request {
    /// The checkpoint of a run of `sampler` with `config` (lockstep groups of `batch`) on the
    /// target `identity` whose files are `inputs` (none of which the checkpoint may be), read
    /// from `resume` when given; `None` without `path` and `resume`.
    pub fn open(
        &self,
        identity: Fingerprint,
        inputs: &[(String, PathBuf)],
        sampler: &Sampler,
        config: &RunConfig,
        batch: Option<usize>,
    ) -> PyResult<Option<Opened>> {
        let every = self.every;
        if !(every.is_finite() && every > 0.0 && every < 1e9) {
            return Err(PyValueError::new_err(format!(
                "checkpoint_every={every}: give a number of seconds greater than 0"
            )));
        }
        let Some(path) = self.path.clone().or_else(|| self.resume.clone()) else {
            return Ok(None);
        };
        let mut inputs = inputs.to_vec();
        inputs.extend(
            self.resume
                .iter()
                .filter(|r| **r != path)
                .map(|r| ("resume".to_string(), r.clone())),
        );
        let lock = prepare(&inputs, &[("checkpoint".to_string(), path.clone())])
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        let fingerprint = identity.with_run(sampler, config, batch);
        let every = Duration::from_secs_f64(every);
        let checkpoint = match &self.resume {
            Some(from) => Checkpoint::resume(&path, every, fingerprint, from).map_err(error)?,
            None => Checkpoint::new(&path, every, fingerprint),
        };
        Ok(Some(Opened {
            checkpoint,
            _lock: lock,
        }))
    }

    /// [`Request::open`] for a run on a function (`kind`: `python`, `compiled`) of `dim`
    /// coordinates, without lockstep groups.
    pub fn for_function(
        &self,
        kind: &str,
        dim: usize,
        sampler: &Sampler,
        config: &RunConfig,
    ) -> PyResult<Option<Opened>> {
        self.open(
            Fingerprint::of_function(kind, dim),
            &[],
            sampler,
            config,
            None,
        )
    }
}

/// A checkpoint's failure as a Python exception: `OSError` for a file that cannot be read or
/// written, `ValueError` for one that does not fit the run.
pub fn error(e: CheckpointError) -> PyErr {
    match e {
        CheckpointError::Read { .. } | CheckpointError::Write { .. } => {
            PyOSError::new_err(e.to_string())
        }
        // The target failed, or is not the one the run had: the run's failure, not the file's.
        CheckpointError::Restore(_) => PyRuntimeError::new_err(e.to_string()),
        _ => PyValueError::new_err(e.to_string()),
    }
}

/// The checkpoint a run of `opened` saves to.
pub fn of(opened: &Option<Opened>) -> Option<&Checkpoint> {
    opened.as_ref().map(|o| &o.checkpoint)
}
