//! Model files: JSON descriptions of the continuous models.

use super::data::{data_err, input_err, load_matrix, load_vector};
use super::{
    ContinuousError, DataFileError, DataMatrix, GaussianMixture, GaussianSum, LogisticRegression,
    ModelDataError, RidgeRegression,
};
use crate::io::input::{parse_json, read_limited};
use crate::resources::MemoryBudget;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The JSON form of a model file. Data paths are relative to the model file's folder.
///
/// ```json
/// {"kind": "gaussian_sum", "centers": [[0.1, -0.3], [1.2, 0.4]]}
/// {"kind": "logistic_regression", "X": "X.npy", "y": "y.npy", "prior_var": 10.0}
/// {"kind": "ridge_regression", "X": "X.csv", "y": "y.csv", "noise_var": 1.0, "prior_var": 1.0}
/// {"kind": "gaussian_mixture", "a": [[2.0, 1.5], [1.8, 2.2]], "scale": 0.5}
/// {"kind": "ridge_regression", "X": [[1.0, 0.5], [0.2, 1.0]], "y": [0.3, -0.1], "noise_var": 1.0, "prior_var": 1.0}
/// ```
///
/// `X` and `y` are files or inline arrays. Labels of logistic regression are `{0, 1}` or
/// `{−1, 1}`; `scale` of the mixture defaults to `1/N`. A field the kind does not have is an
/// error (the fields are listed in [`crate::models::schema`]).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum ModelSpec {
    /// [`GaussianSum`] over the given centres.
    #[schemars(
        description = "Potential V(θ) = Σ_i ½|θ − c_i|², one term per centre",
        extend("x-domain" = "continuous")
    )]
    GaussianSum {
        /// One centre per term.
        centers: Vec<Vec<f64>>,
    },
    /// [`LogisticRegression`].
    #[schemars(
        description = "Bayesian logistic regression with a Gaussian prior",
        extend("x-domain" = "continuous")
    )]
    LogisticRegression {
        /// Covariates, `N × d` (`.npy` or CSV).
        #[serde(rename = "X")]
        x: DataSource,
        /// Labels, length `N`.
        y: DataSource,
        /// Prior variance `v`.
        prior_var: f64,
    },
    /// [`RidgeRegression`].
    #[schemars(
        description = "Bayesian linear regression with a Gaussian prior",
        extend("x-domain" = "continuous")
    )]
    RidgeRegression {
        /// Covariates, `N × d` (`.npy` or CSV).
        #[serde(rename = "X")]
        x: DataSource,
        /// Responses, length `N`.
        y: DataSource,
        /// Noise variance `λ`.
        noise_var: f64,
        /// Prior variance `v`.
        prior_var: f64,
    },
    /// [`GaussianMixture`].
    #[schemars(
        description = "Potential Σ_i w f_i(θ), each term a symmetric two-component Gaussian mixture around ±a_i",
        extend("x-domain" = "continuous")
    )]
    GaussianMixture {
        /// One parameter vector `a_i` per term.
        a: Vec<Vec<f64>>,
        /// Weight `w` of every term (default `1/N`).
        // Left out when absent: the schema lists a number, not `null`.
        #[schemars(with = "f64")]
        #[serde(default, skip_serializing_if = "Option::is_none")]
        scale: Option<f64>,
    },
}

/// Data of a continuous model: a file (`.npy` or CSV, relative to the model file's folder) or
/// an inline JSON array.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(untagged)]
pub enum DataSource {
    /// A `.npy` or CSV file.
    File(PathBuf),
    /// Rows of numbers (a matrix).
    Rows(Vec<Vec<f64>>),
    /// Numbers (a vector, or a matrix of one column).
    Values(Vec<f64>),
}

impl DataSource {
    /// `(rows, cols, row-major values)`; a vector is one column.
    fn matrix(
        &self,
        base: &Path,
        budget: &MemoryBudget,
    ) -> Result<(usize, usize, Vec<f64>), ContinuousError> {
        match self {
            DataSource::File(p) => load_matrix(&base.join(p), budget),
            DataSource::Values(v) => Ok((v.len(), 1, v.clone())),
            DataSource::Rows(rows) => {
                let cols = rows.first().map_or(0, Vec::len);
                if let Some(i) = rows.iter().position(|r| r.len() != cols) {
                    let error = ModelDataError::RaggedRows {
                        row: i,
                        len: rows[i].len(),
                        first: cols,
                    };
                    return Err(ModelDataError::Field {
                        field: "X",
                        error: Box::new(error),
                    }
                    .into());
                }
                Ok((rows.len(), cols, rows.concat()))
            }
        }
    }

    /// A vector; rows of one entry each, or a single row, count as one.
    fn vector(&self, base: &Path, budget: &MemoryBudget) -> Result<Vec<f64>, ContinuousError> {
        match self {
            DataSource::File(p) => load_vector(&base.join(p), budget),
            DataSource::Values(v) => Ok(v.clone()),
            DataSource::Rows(rows) if rows.len() == 1 || rows.iter().all(|r| r.len() == 1) => {
                Ok(rows.concat())
            }
            DataSource::Rows(rows) => Err(ModelDataError::Field {
                field: "y",
                error: Box::new(ModelDataError::NotAVector {
                    rows: rows.len(),
                    cols: rows.first().map_or(0, Vec::len),
                }),
            }
            .into()),
        }
    }

    /// The file, when the data come from one.
    pub fn file(&self) -> Option<&Path> {
        match self {
            DataSource::File(p) => Some(p),
            _ => None,
        }
    }
}

impl ModelSpec {
    /// Reads and parses a model file under the default memory cap, refusing fields its kind
    /// does not have (see [`ModelSpec::read_within`]).
    ///
    /// # Errors
    ///
    /// As [`ModelSpec::read_within`].
    pub fn read(path: &Path) -> Result<Self, ContinuousError> {
        Self::read_within(path, &MemoryBudget::new(None))
    }

    /// Reads and parses a model file, refusing fields its kind does not have and keys named
    /// twice; its length is checked against `budget` before it is read and its parse before it
    /// is parsed (a device or folder is refused, a stream read with a bound).
    ///
    /// # Errors
    ///
    /// [`ContinuousError::Io`], or [`ContinuousError::Data`] naming the file.
    pub fn read_within(path: &Path, budget: &MemoryBudget) -> Result<Self, ContinuousError> {
        let refused = |e| input_err(path, e);
        let text = read_limited(path, budget).map_err(refused)?;
        let value = parse_json(&text, budget).map_err(refused)?;
        let kind = value.get("kind").and_then(serde_json::Value::as_str);
        if let (Some(schema), Some(fields)) = (
            kind.and_then(crate::models::schema::find),
            value.as_object(),
        ) {
            schema
                .check_fields(fields)
                .map_err(|e| data_err(path, DataFileError::UnknownField(e)))?;
        }
        serde_json::from_value(value).map_err(|e| data_err(path, DataFileError::NotAModel(e)))
    }

    /// The kind as model files spell it.
    pub fn kind(&self) -> &'static str {
        match self {
            ModelSpec::GaussianSum { .. } => "gaussian_sum",
            ModelSpec::LogisticRegression { .. } => "logistic_regression",
            ModelSpec::RidgeRegression { .. } => "ridge_regression",
            ModelSpec::GaussianMixture { .. } => "gaussian_mixture",
        }
    }

    /// The data files the model names, as `(field, path)` relative to the model's folder.
    pub fn data_files(&self) -> Vec<(&'static str, &Path)> {
        match self {
            ModelSpec::LogisticRegression { x, y, .. }
            | ModelSpec::RidgeRegression { x, y, .. } => [("X", x), ("y", y)]
                .into_iter()
                .filter_map(|(n, d)| Some((n, d.file()?)))
                .collect(),
            _ => Vec::new(),
        }
    }
}

/// A loaded continuous model.
#[derive(Clone, Debug, PartialEq)]
pub enum Model {
    /// See [`GaussianSum`].
    GaussianSum(GaussianSum),
    /// See [`LogisticRegression`].
    Logistic(LogisticRegression),
    /// See [`RidgeRegression`].
    Ridge(RidgeRegression),
    /// See [`GaussianMixture`].
    Mixture(GaussianMixture),
}

impl Model {
    /// Reads a model file.
    ///
    /// # Errors
    ///
    /// [`ContinuousError::Io`], [`ContinuousError::Data`] (naming the model file when it is
    /// not valid JSON of a known kind or has a field its kind does not have, or a data file),
    /// [`ContinuousError::Csv`] or [`ContinuousError::ModelIn`] (inconsistent data, naming the
    /// model file).
    pub fn load(path: &Path) -> Result<Self, ContinuousError> {
        let spec = ModelSpec::read(path)?;
        Self::from_spec(&spec, path.parent().unwrap_or(Path::new("."))).map_err(|e| match e {
            ContinuousError::Model(error) => ContinuousError::ModelIn {
                path: path.to_path_buf(),
                error,
            },
            e => e,
        })
    }

    /// Builds a model from its description, resolving data paths against `base`.
    ///
    /// # Errors
    ///
    /// As for [`load`](Self::load).
    pub fn from_spec(spec: &ModelSpec, base: &Path) -> Result<Self, ContinuousError> {
        Self::from_spec_within(spec, base, &MemoryBudget::new(None))
    }

    /// [`Model::from_spec`], its data files read under `budget` (see
    /// [`read_npy_within`](crate::io::npy::read_npy_within)).
    ///
    /// # Errors
    ///
    /// As for [`load`](Self::load).
    pub fn from_spec_within(
        spec: &ModelSpec,
        base: &Path,
        budget: &MemoryBudget,
    ) -> Result<Self, ContinuousError> {
        let matrix = |x: &DataSource| -> Result<DataMatrix, ContinuousError> {
            let (r, c, v) = x.matrix(base, budget)?;
            DataMatrix::new(r, c, v)
        };
        Ok(match spec {
            ModelSpec::GaussianSum { centers } => {
                Model::GaussianSum(GaussianSum::from_rows(centers)?)
            }
            ModelSpec::LogisticRegression { x, y, prior_var } => {
                let y = y.vector(base, budget)?;
                Model::Logistic(LogisticRegression::new(matrix(x)?, &y, *prior_var)?)
            }
            ModelSpec::RidgeRegression {
                x,
                y,
                noise_var,
                prior_var,
            } => {
                let y = y.vector(base, budget)?;
                Model::Ridge(RidgeRegression::new(
                    matrix(x)?,
                    &y,
                    *noise_var,
                    *prior_var,
                )?)
            }
            ModelSpec::GaussianMixture { a, scale } => {
                Model::Mixture(GaussianMixture::new(DataMatrix::from_rows(a)?, *scale)?)
            }
        })
    }

    /// `d`.
    pub fn dim(&self) -> usize {
        use langevin_core::continuous::SumTarget;
        match self {
            Model::GaussianSum(m) => m.dim(),
            Model::Logistic(m) => m.dim(),
            Model::Ridge(m) => m.dim(),
            Model::Mixture(m) => m.dim(),
        }
    }

    /// `N`.
    pub fn num_terms(&self) -> usize {
        use langevin_core::continuous::SumTarget;
        match self {
            Model::GaussianSum(m) => m.num_terms(),
            Model::Logistic(m) => m.num_terms(),
            Model::Ridge(m) => m.num_terms(),
            Model::Mixture(m) => m.num_terms(),
        }
    }

    /// Whether the model's terms are a scalar times a data vector (snapshots can be scalars).
    pub fn is_glm(&self) -> bool {
        !matches!(self, Model::GaussianSum(_))
    }
}
