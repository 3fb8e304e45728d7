//! What a checkpoint of a sampling run must match, written once for every front end (the
//! command line, Python): the target, then the sampler with every parameter and every setting
//! that changes the draws. The thread count and the output paths do not.

use super::{Fingerprint, RunConfig};
use crate::models::ModelDoc;
use crate::samplers::Sampler;
use serde_json::{Map, Value};
use std::path::Path;

impl Fingerprint {
    /// A model file: the hash of its bytes and of every array file it names.
    ///
    /// # Errors
    ///
    /// The read error of the model or an array file, naming the file.
    pub fn of_model_file(path: &Path) -> Result<Self, std::io::Error> {
        let hash = |f: Self, name: String, path: &Path| {
            f.with_file_hash(name, path)
                .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", path.display())))
        };
        let mut f = hash(Self::new(), "model file".into(), path)?;
        for (field, array) in ModelDoc::array_files_of(path).unwrap_or_default() {
            f = hash(f, format!("model's `{field}` file"), &array)?;
        }
        Ok(f)
    }

    /// A model given by its fields (built from arrays): the hash of their JSON.
    pub fn of_model_fields(kind: &str, fields: &Map<String, Value>) -> Self {
        let json = Value::Object(fields.clone()).to_string();
        Self::new()
            .with("model kind", kind)
            .with_bytes_hash("model fields", json.as_bytes())
    }

    /// A target given by a function (`kind`: `python`, `compiled`) over `dim` coordinates,
    /// known by its kind and dimension only: on resume, `U` at each restored state is
    /// recomputed and must equal the saved value bit for bit, which finds most other
    /// functions.
    pub fn of_function(kind: &str, dim: usize) -> Self {
        Self::new().with("target", format!("{kind} function of {dim} coordinates"))
    }

    /// The fingerprint followed by a run of `sampler` with `config`, in lockstep groups of
    /// `batch` chains when given.
    #[must_use]
    pub fn with_run(self, sampler: &Sampler, config: &RunConfig, batch: Option<usize>) -> Self {
        self.with("sampler", sampler.name())
            .with("sampler parameters", format!("{:?}", sampler.params()))
            .with("steps", config.steps)
            .with("burn-in", config.burn_in)
            .with("thin", config.thin)
            .with("chains", config.chains)
            .with("first chain", config.first_chain)
            .with("seed", config.seed)
            .with("batch", format!("{batch:?}"))
    }
}
