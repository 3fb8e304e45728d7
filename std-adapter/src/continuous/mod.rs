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
pub use data::CsvError;
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
    /// A data file (`.npy` or CSV) or model file is malformed, of an unsupported type, or too
    /// large for the memory cap.
    #[error("{}: {problem}", .path.display())]
    Data {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        #[source]
        problem: DataFileError,
    },
    /// A CSV data file is not a table of numbers.
    #[error("{}: {error}", .path.display())]
    Csv {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        #[source]
        error: CsvError,
    },
    /// A model file is not valid JSON of a known kind.
    #[error("model file: {0}")]
    ModelFile(#[source] serde_json::Error),
    /// Model data are inconsistent (shapes, labels, variances, non-finite values).
    #[error("model: {0}")]
    Model(#[from] ModelDataError),
    /// The data of the model file `path` are inconsistent ([`Model::load`]).
    #[error("{}: {error}", .path.display())]
    ModelIn {
        /// The model file.
        path: PathBuf,
        /// What is wrong.
        #[source]
        error: ModelDataError,
    },
    /// Sampler options that do not fit together.
    #[error("sampler options: {0}")]
    Config(#[from] ConfigError),
    /// A chain could not be built.
    #[error("building a chain: {0}")]
    Build(#[from] langevin_core::continuous::BuildError),
    /// A chain failed during sampling.
    #[error("chain {chain} failed after {step} steps: {error}")]
    Step {
        /// The chain.
        chain: usize,
        /// Completed steps before the failure.
        step: u64,
        /// The step error (the models here cannot fail to evaluate).
        #[source]
        error: langevin_core::continuous::StepError<std::convert::Infallible>,
    },
    /// A chain's worker panicked, or the workers could not be started.
    #[error("{0}")]
    Pool(#[source] crate::run::PoolError),
}

/// What is wrong with a data or model file ([`ContinuousError::Data`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DataFileError {
    /// Reading it would pass the memory cap.
    #[error(transparent)]
    Memory(#[from] crate::resources::MemoryError),
    /// A `.npy` file that cannot be read or written as one.
    #[error(transparent)]
    Npy(#[from] crate::io::npy::NpyError),
    /// An array of another number of dimensions than the one asked for.
    #[error("expected {expected}, got shape {shape:?}")]
    Shape {
        /// What was asked for (`a vector`, `a 1-D or 2-D array`).
        expected: &'static str,
        /// The array's shape.
        shape: Vec<usize>,
    },
    /// A model file that is not JSON.
    #[error(transparent)]
    Json(#[from] crate::io::input::JsonError),
    /// A model file with a field its kind does not have.
    #[error("field `{field}`: {0}", field = .0.escaped_field())]
    UnknownField(#[source] crate::models::schema::UnknownField),
    /// A model file that is JSON but not a model of a known kind.
    #[error("model file: {0}")]
    NotAModel(#[source] serde_json::Error),
}

/// What is inconsistent in a model's data ([`ContinuousError::Model`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ModelDataError {
    /// A data matrix without rows or without columns.
    #[error("data matrix must be non-empty, got {rows} x {cols}")]
    EmptyMatrix {
        /// Its rows.
        rows: usize,
        /// Its columns.
        cols: usize,
    },
    /// A data matrix given a number of values other than `rows · cols`.
    #[error("data matrix of {rows} x {cols} needs {} values, got {values}", .rows.saturating_mul(*.cols))]
    MatrixLength {
        /// Its rows.
        rows: usize,
        /// Its columns.
        cols: usize,
        /// The values given.
        values: usize,
    },
    /// A data matrix entry that is infinite or NaN.
    #[error("data matrix entry ({row}, {col}) is not finite")]
    NotFinite {
        /// Its row.
        row: usize,
        /// Its column.
        col: usize,
    },
    /// Rows of different lengths.
    #[error("row {row} has {len} entries, row 0 has {first}")]
    RaggedRows {
        /// The first row whose length differs from row 0's.
        row: usize,
        /// Its length.
        len: usize,
        /// Row 0's length.
        first: usize,
    },
    /// Rows given where a vector is expected.
    #[error("expected a vector, found {rows} rows of {cols} entries")]
    NotAVector {
        /// The rows.
        rows: usize,
        /// The entries of the first row.
        cols: usize,
    },
    /// A number of responses other than the rows of `X`.
    #[error("{count} {what} for {rows} rows of X")]
    ResponseCount {
        /// What the responses are (`labels`, `responses`).
        what: &'static str,
        /// How many there are.
        count: usize,
        /// The rows of `X`.
        rows: usize,
    },
    /// A variance (or scale) that is not finite and positive.
    #[error("`{name}` must be finite and > 0, got {value}")]
    Variance {
        /// The parameter.
        name: &'static str,
        /// Its value.
        value: f64,
    },
    /// Labels that mix the encodings `{0, 1}` and `{-1, 1}`.
    #[error("labels mix 0 and -1: use {{0, 1}} or {{-1, 1}}")]
    MixedLabels,
    /// A label other than 0, 1 and -1.
    #[error("label {value} is not in {{0, 1}} or {{-1, 1}}")]
    Label {
        /// The label.
        value: f64,
    },
    /// A response that is infinite or NaN.
    #[error("a response is not finite")]
    ResponseNotFinite,
    /// Ridge regression's posterior precision `XᵀX/λ + I/v` overflows.
    #[error("XᵀX/λ + I/v overflows double precision")]
    PosteriorOverflow,
    /// A problem of the model file's field `field` (`X`, `y`).
    #[error("`{field}`: {error}")]
    Field {
        /// The field.
        field: &'static str,
        /// What is wrong with it.
        #[source]
        error: Box<ModelDataError>,
    },
    /// A data file that cannot be read as an input (a folder, a stream that does not end).
    #[error(transparent)]
    Input(#[from] crate::io::input::InputError),
}

/// Sampler options that do not fit together ([`ContinuousError::Config`]).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// A name that is none of the choices.
    #[error("unknown {what} `{text}` ({})", .names.join(", "))]
    UnknownName {
        /// What is named (`sampler`, `access`, `snapshot update`).
        what: &'static str,
        /// The name given.
        text: String,
        /// The names there are.
        names: Vec<&'static str>,
    },
    /// The model's dimension and number of terms overflow the snapshot table's size.
    #[error("model too large")]
    TooLarge,
    /// Scalar snapshots asked for a model whose term gradients are not a scalar times a data
    /// vector.
    #[error("scalar snapshots need a model whose term gradients are a scalar times a data vector")]
    ScalarSnapshots,
    /// Passes that are not finite and positive.
    #[error("passes must be finite and > 0, got {0}")]
    Passes(f64),
    /// Burn-in passes that are not finite and non-negative.
    #[error("burn-in passes must be finite and >= 0, got {0}")]
    BurnInPasses(f64),
    /// No chains.
    #[error("at least one chain is needed")]
    NoChains,
    /// No draws per pass.
    #[error("draws per pass must be >= 1")]
    NoDrawsPerPass,
    /// Passes times draws per pass that round to no draws.
    #[error("passes x draws per pass rounds to zero draws")]
    NoDraws,
    /// An initial point whose length is not the model's dimension.
    #[error("initial point has {given} coordinates, the model has {dim}")]
    InitLength {
        /// The initial point's coordinates.
        given: usize,
        /// The model's dimension.
        dim: usize,
    },
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
            return Err(ModelDataError::EmptyMatrix { rows, cols }.into());
        }
        if rows.checked_mul(cols) != Some(values.len()) {
            return Err(ModelDataError::MatrixLength {
                rows,
                cols,
                values: values.len(),
            }
            .into());
        }
        if let Some(k) = values.iter().position(|v| !v.is_finite()) {
            return Err(ModelDataError::NotFinite {
                row: k / cols,
                col: k % cols,
            }
            .into());
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
            return Err(ModelDataError::RaggedRows {
                row: r,
                len: rows.get(r).map_or(0, Vec::len),
                first: cols,
            }
            .into());
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
    what: &'static str,
) -> Result<(), ContinuousError> {
    if y.len() == x.rows() {
        Ok(())
    } else {
        Err(ModelDataError::ResponseCount {
            what,
            count: y.len(),
            rows: x.rows(),
        }
        .into())
    }
}

/// Checks a variance parameter.
pub(crate) fn check_variance(name: &'static str, v: f64) -> Result<(), ContinuousError> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err(ModelDataError::Variance { name, value: v }.into())
    }
}
