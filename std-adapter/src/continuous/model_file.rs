//! Model files: JSON descriptions of the continuous models.

use super::data::{load_matrix, load_vector};
use super::{
    ContinuousError, DataMatrix, GaussianMixture, GaussianSum, LogisticRegression, RidgeRegression,
};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// The JSON form of a model file. Data paths are relative to the model file's folder.
///
/// ```json
/// {"kind": "gaussian_sum", "centers": [[0.1, -0.3], [1.2, 0.4]]}
/// {"kind": "logistic_regression", "X": "X.npy", "y": "y.npy", "prior_var": 10.0}
/// {"kind": "ridge_regression", "X": "X.csv", "y": "y.csv", "noise_var": 1.0, "prior_var": 1.0}
/// {"kind": "gaussian_mixture", "a": [[2.0, 1.5], [1.8, 2.2]], "scale": 0.5}
/// ```
///
/// Labels of logistic regression are `{0, 1}` or `{−1, 1}`; `scale` of the mixture defaults to
/// `1/N`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ModelSpec {
    /// [`GaussianSum`] over the given centres.
    GaussianSum {
        /// One centre per term.
        centers: Vec<Vec<f64>>,
    },
    /// [`LogisticRegression`].
    LogisticRegression {
        /// Covariates, `N × d` (`.npy` or CSV).
        #[serde(rename = "X")]
        x: PathBuf,
        /// Labels, length `N`.
        y: PathBuf,
        /// Prior variance `v`.
        prior_var: f64,
    },
    /// [`RidgeRegression`].
    RidgeRegression {
        /// Covariates, `N × d` (`.npy` or CSV).
        #[serde(rename = "X")]
        x: PathBuf,
        /// Responses, length `N`.
        y: PathBuf,
        /// Noise variance `λ`.
        noise_var: f64,
        /// Prior variance `v`.
        prior_var: f64,
    },
    /// [`GaussianMixture`].
    GaussianMixture {
        /// One parameter vector `a_i` per term.
        a: Vec<Vec<f64>>,
        /// Weight `w` of every term (default `1/N`).
        #[serde(default)]
        scale: Option<f64>,
    },
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
    /// [`ContinuousError::Io`], [`ContinuousError::ModelFile`], [`ContinuousError::Data`] or
    /// [`ContinuousError::Model`].
    pub fn load(path: &Path) -> Result<Self, ContinuousError> {
        let text = std::fs::read_to_string(path).map_err(|source| ContinuousError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let spec: ModelSpec = serde_json::from_str(&text).map_err(ContinuousError::ModelFile)?;
        Self::from_spec(&spec, path.parent().unwrap_or(Path::new(".")))
    }

    /// Builds a model from its description, resolving data paths against `base`.
    ///
    /// # Errors
    ///
    /// As for [`load`](Self::load).
    pub fn from_spec(spec: &ModelSpec, base: &Path) -> Result<Self, ContinuousError> {
        let matrix = |p: &Path| -> Result<DataMatrix, ContinuousError> {
            let (r, c, v) = load_matrix(&base.join(p))?;
            DataMatrix::new(r, c, v)
        };
        Ok(match spec {
            ModelSpec::GaussianSum { centers } => {
                Model::GaussianSum(GaussianSum::from_rows(centers)?)
            }
            ModelSpec::LogisticRegression { x, y, prior_var } => {
                let y = load_vector(&base.join(y))?;
                Model::Logistic(LogisticRegression::new(matrix(x)?, &y, *prior_var)?)
            }
            ModelSpec::RidgeRegression {
                x,
                y,
                noise_var,
                prior_var,
            } => {
                let y = load_vector(&base.join(y))?;
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
