//! Posteriors that are sums over data, and a driver that samples them with the
//! stochastic-gradient integrators of [`langevin_core::continuous`].
//!
//! * Models: [`GaussianSum`] (Li et al. 2020, Sec. 5.1), [`LogisticRegression`], [`RidgeRegression`] and
//!   the bimodal [`GaussianMixture`] terms of Zhang et al. (2020), Sec. 6.1. Each is cheap to clone (the data
//!   sit behind an [`Arc`]) and has a seeded synthetic generator.
//! * [`Model::load`] reads a model file (`{"kind": "gaussian_sum" | "logistic_regression" |
//!   "ridge_regression" | "gaussian_mixture", ..}`, data from `.npy` or CSV).
//! * [`run`] samples `C` chains and returns the kept draws and a [`ContinuousSummary`].
//! * [`metrics`] compares an ensemble of draws with a Gaussian reference; [`repro`] holds the
//!   two ranking reproductions (EWSG vs SGHMC, AGLD variants vs SGLD).

/// Implements [`SumTarget`](langevin_core::continuous::SumTarget) for a model whose terms are
/// the rows of the data matrix in field `$rows` (`d` its columns, `N` its rows).
///
/// * `sum_over_rows!(M, rows)`: the gradient comes from the model's inherent
///   `add_grad(i, θ, scale, acc)`.
/// * `sum_over_rows!(M, rows, glm: c)`: a generalised linear model,
///   `∇V_i(θ) = s_i(θ) z_i + c θ` with `z_i` row `i`, `s_i` the inherent `scalar(i, θ)` and the
///   constant `c` in field `c`; the gradient is added as `(scale s_i) z_i + (scale c) θ`, and
///   [`GlmSumTarget`](langevin_core::continuous::GlmSumTarget) is implemented too.
/// * `sum_over_rows!(M, rows, glm: c, add_grad)`: the same, but the gradient comes from the
///   inherent `add_grad` (for a model that rounds it in another order).
macro_rules! sum_over_rows {
    (@sum $model:ty, $rows:ident, |$s:ident, $i:ident, $theta:ident, $scale:ident, $acc:ident| $add:expr) => {
        impl langevin_core::continuous::SumTarget for $model {
            type Error = std::convert::Infallible;
            fn dim(&self) -> usize {
                self.$rows.cols()
            }
            fn num_terms(&self) -> usize {
                self.$rows.rows()
            }
            #[inline]
            fn add_term_grad(
                &mut self,
                $i: usize,
                $theta: &[f64],
                $scale: f64,
                $acc: &mut [f64],
            ) -> Result<(), Self::Error> {
                let $s = &*self;
                $add;
                Ok(())
            }
        }
    };
    (@glm $model:ty, $rows:ident, $shared:ident) => {
        impl langevin_core::continuous::GlmSumTarget for $model {
            #[inline]
            fn term_scalar(&mut self, i: usize, theta: &[f64]) -> Result<f64, Self::Error> {
                Ok(self.scalar(i, theta))
            }
            #[inline]
            fn add_term_data(&self, i: usize, scale: f64, acc: &mut [f64]) {
                super::axpy(scale, self.$rows.row(i), acc);
            }
            fn add_shared_grad(
                &mut self,
                theta: &[f64],
                scale: f64,
                acc: &mut [f64],
            ) -> Result<(), Self::Error> {
                super::axpy(scale * self.$shared, theta, acc);
                Ok(())
            }
        }
    };
    ($model:ty, $rows:ident) => {
        sum_over_rows!(@sum $model, $rows, |m, i, theta, scale, acc| m.add_grad(i, theta, scale, acc));
    };
    ($model:ty, $rows:ident, glm: $shared:ident) => {
        sum_over_rows!(@sum $model, $rows, |m, i, theta, scale, acc| {
            let (cs, cq) = (scale * m.scalar(i, theta), scale * m.$shared);
            super::add_linear(acc, m.$rows.row(i), theta, cs, cq)
        });
        sum_over_rows!(@glm $model, $rows, $shared);
    };
    ($model:ty, $rows:ident, glm: $shared:ident, add_grad) => {
        sum_over_rows!($model, $rows);
        sum_over_rows!(@glm $model, $rows, $shared);
    };
}

mod data;
mod driver;
mod gaussian_sum;
mod logistic;
pub mod metrics;
mod mixture;
mod model_file;
pub mod repro;
mod ridge;

/// The chain streams (see [`crate::seeding`]); re-exported where continuous runs used to
/// define their own copy.
pub use crate::seeding::chain_rngs;
pub use driver::{
    ContinuousConfig, ContinuousKeep, ContinuousRun, ContinuousSummary, SamplerKind, SnapshotKind,
    StorageKind, parse_access, run, run_keeping,
};
pub use gaussian_sum::GaussianSum;
pub use logistic::LogisticRegression;
pub use mixture::GaussianMixture;
pub use model_file::{DataSource, Model, ModelSpec};
pub use ridge::RidgeRegression;

use std::path::PathBuf;
use std::sync::Arc;

/// Errors of the continuous models, model files and driver.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ContinuousError {
    /// A file could not be read or written.
    #[error("{}: {source}", .path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A data file (`.npy` or CSV) is malformed or of an unsupported type.
    #[error("{}: {message}", .path.display())]
    Data {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A model file is not valid JSON of a known kind.
    #[error("model file: {0}")]
    ModelFile(#[source] serde_json::Error),
    /// Model data are inconsistent (shapes, labels, variances, non-finite values).
    #[error("model: {0}")]
    Model(String),
    /// Sampler options that do not fit together.
    #[error("sampler options: {0}")]
    Config(String),
    /// A chain could not be built.
    #[error("building a chain: {0}")]
    Build(#[from] langevin_core::continuous::BuildError),
    /// A chain failed during sampling.
    #[error("chain {chain} failed after {step} steps: {message}")]
    Step {
        /// The chain.
        chain: usize,
        /// Completed steps before the failure.
        step: u64,
        /// The step error.
        message: String,
    },
    /// A chain's worker panicked, or the workers could not be started.
    #[error("{0}")]
    Pool(#[source] crate::run::PoolError),
}

/// A dense row-major data matrix (`N` rows of `d` covariates), shared cheaply between clones.
#[derive(Clone, Debug, PartialEq)]
pub struct DataMatrix {
    rows: usize,
    cols: usize,
    values: Arc<[f64]>,
}

impl DataMatrix {
    /// A matrix from row-major values.
    ///
    /// # Errors
    ///
    /// [`ContinuousError::Model`] if `values.len() != rows · cols`, a dimension is zero, or a
    /// value is not finite.
    pub fn new(rows: usize, cols: usize, values: Vec<f64>) -> Result<Self, ContinuousError> {
        if rows == 0 || cols == 0 {
            return Err(ContinuousError::Model(format!(
                "data matrix must be non-empty, got {rows} x {cols}"
            )));
        }
        if rows.checked_mul(cols) != Some(values.len()) {
            return Err(ContinuousError::Model(format!(
                "data matrix of {rows} x {cols} needs {} values, got {}",
                rows.saturating_mul(cols),
                values.len()
            )));
        }
        if let Some(k) = values.iter().position(|v| !v.is_finite()) {
            return Err(ContinuousError::Model(format!(
                "data matrix entry ({}, {}) is not finite",
                k / cols,
                k % cols
            )));
        }
        Ok(Self {
            rows,
            cols,
            values: values.into(),
        })
    }

    /// A matrix from rows of equal length.
    ///
    /// # Errors
    ///
    /// As for [`new`](Self::new), and for ragged rows.
    pub fn from_rows(rows: &[Vec<f64>]) -> Result<Self, ContinuousError> {
        let cols = rows.first().map_or(0, Vec::len);
        if let Some(r) = rows.iter().position(|r| r.len() != cols) {
            return Err(ContinuousError::Model(format!(
                "row {r} has {} entries, row 0 has {cols}",
                rows.get(r).map_or(0, Vec::len)
            )));
        }
        Self::new(rows.len(), cols, rows.concat())
    }

    /// `N`.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// `d`.
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// All values, row-major.
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// Row `i` (panics if `i ≥ N`, a caller contract violation).
    #[inline]
    pub fn row(&self, i: usize) -> &[f64] {
        &self.values[i * self.cols..(i + 1) * self.cols]
    }
}

/// `Σ a_k b_k` over eight independent lanes (so that the loop vectorises), combined in a
/// fixed order: the same bits on every platform.
#[inline]
pub(crate) fn dot(a: &[f64], b: &[f64]) -> f64 {
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f64 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(x, y)| x * y)
        .sum();
    let mut acc = [0.0f64; 8];
    for (x, y) in ca.zip(cb) {
        for ((s, &x), &y) in acc.iter_mut().zip(x).zip(y) {
            *s += x * y;
        }
    }
    let [a0, a1, a2, a3, a4, a5, a6, a7] = acc;
    ((a0 + a4) + (a1 + a5)) + ((a2 + a6) + (a3 + a7)) + tail
}

/// `acc += cs · z + cq · θ`, the gradient of a generalised linear term with data row `z`.
#[inline]
pub(crate) fn add_linear(acc: &mut [f64], z: &[f64], theta: &[f64], cs: f64, cq: f64) {
    for (a, (&x, &t)) in acc.iter_mut().zip(z.iter().zip(theta)) {
        *a += cs * x + cq * t;
    }
}

/// `acc += s · x`.
#[inline]
pub(crate) fn axpy(s: f64, x: &[f64], acc: &mut [f64]) {
    for (a, &v) in acc.iter_mut().zip(x) {
        *a += s * v;
    }
}

/// Standard normal draws from a seeded Xoshiro256++ stream.
pub(crate) fn normals(seed: u64, n: usize) -> Vec<f64> {
    use rand_core::SeedableRng;
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut out = vec![0.0; n];
    langevin_core::random::fill_normal(&mut rng, &mut out);
    out
}

/// Checks that there is one response (`what`: labels, responses) per row of `x`.
pub(crate) fn check_responses(
    x: &DataMatrix,
    y: &[f64],
    what: &str,
) -> Result<(), ContinuousError> {
    if y.len() == x.rows() {
        Ok(())
    } else {
        Err(ContinuousError::Model(format!(
            "{} {what} for {} rows of X",
            y.len(),
            x.rows()
        )))
    }
}

/// Checks a variance parameter.
pub(crate) fn check_variance(name: &str, v: f64) -> Result<(), ContinuousError> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err(ContinuousError::Model(format!(
            "`{name}` must be finite and > 0, got {v}"
        )))
    }
}
