//! Convergence and accuracy diagnostics for Markov chains: effective sample size, R-hat, the
//! DISCS Hamming statistic for discrete chains, MMD between sets of discrete draws, marginal RMSE
//! and exact enumeration of small discrete targets.
//!
//! # Shapes
//!
//! * **Chains of a scalar statistic** are `&[&[f64]]`: one slice per chain, draws in time order.
//!   Functions that combine chains need every chain to have the same length and return
//!   [`DiagError::RaggedChains`] otherwise.
//! * **Draws of a vector** are a row-major `(chains, draws, dim)` array wrapped in a
//!   [`DrawArray`]: element `(c, t, i)` is at `(c * draws + t) * dim + i`.
//! * **Discrete states** are `u8` or `u16` values ([`DiscreteValue`]) stored `dim` to a draw;
//!   a chain (or a set of draws) is the flat `draws × dim` slice.
//!
//! # Estimators
//!
//! * [`ess`]: Stan's multi-chain effective sample size, with ArviZ's truncation (the same
//!   numbers as ArviZ's `ess(method="identity")` up to round-off). Autocovariances come from a
//!   zero-padded real FFT (exact up to round-off, `O(n log n)` per chain); the within-chain
//!   variance `W` and the between-chain variance of the means give `var⁺`, the combined
//!   autocorrelation is `ρ̂_t = 1 − (W − mean_c acov_c(t)) / var⁺`, and the sum is truncated by
//!   Geyer's initial positive sequence and made monotone (Geyer's initial monotone sequence).
//!   With one chain this is the usual single-chain estimate `n / τ̂`.
//! * [`ess_bulk`] and [`rhat`]: the rank-normalised split versions of Vehtari et al. (2021);
//!   [`ess_bulk`] gives ArviZ's `ess(method="bulk")` and is the per-coordinate ESS of
//!   [`ess_per_coordinate`].
//! * [`split_rhat`]: the classic split R-hat without rank normalisation.
//! * [`coordinate_table`]: sd, quantiles, MCSE of the mean and tail ESS per coordinate, the
//!   columns of ArviZ's `summary` beside bulk ESS and R-hat.
//! * [`convergence_warnings`]: R-hat above [`RHAT_LIMIT`] or ESS below [`ESS_LIMIT`], as the
//!   warnings a run's summary carries.
//!
//! # References
//!
//! * A. Vehtari, A. Gelman, D. Simpson, B. Carpenter, P.-C. Bürkner, Rank-normalization,
//!   folding, and localization: an improved R-hat for assessing convergence of MCMC, Bayesian
//!   Analysis 16 (2021).
//! * C. J. Geyer, Practical Markov chain Monte Carlo, Statistical Science 7 (1992).
//! * Stan reference manual, "Effective sample size" (the multi-chain formula used here).

mod convergence;
mod coordinates;
mod discrete;
mod enumerate;
mod ess;
mod fft;
mod mmd;
mod normal;
mod rhat;
mod summary;

/// A 64-bit LCG (Knuth's MMIX constants) giving uniforms in `[0, 1)` from the top 53 bits:
/// easy to reproduce exactly in Python, to compute reference values with ArviZ.
#[cfg(test)]
struct Lcg(u64);

#[cfg(test)]
impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 11) as f64 / 9_007_199_254_740_992.0
    }
}

pub use convergence::{ESS_LIMIT, RHAT_LIMIT, convergence_warnings, rhat_and_ess};
pub(crate) use coordinates::coordinate_diagnostics_of_chains;
pub use coordinates::{CoordinateDiagnostics, coordinate_diagnostics};
pub use discrete::{
    DiscreteValue, DiscsEss, discs_ess, empirical_marginals, hamming_series, marginal_rmse,
    random_reference,
};
pub use enumerate::{ENUMERATION_LIMIT, Enumeration, enumerate};
pub use ess::{
    DrawArray, EssSummary, autocorrelation, autocovariance, ess, ess_bulk, ess_per_coordinate,
    ess_per_coordinate_on,
};
pub use mmd::{log_mmd2_hamming, mmd2_hamming};
pub use normal::inverse_normal_cdf;
pub use rhat::{Rhat, rank_normalize, rhat, split_rhat};
pub use summary::{CoordinateTable, coordinate_table};

/// Why a diagnostic could not be computed.
#[derive(Debug, thiserror::Error, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum DiagError {
    /// No chains, no draws or a zero dimension where at least one is needed.
    #[error("no chains, draws or coordinates given")]
    Empty,
    /// Chains that must have equal lengths do not.
    #[error("chains differ in length: {expected} and {found} draws")]
    RaggedChains {
        /// Length of the first chain.
        expected: usize,
        /// Length of the first chain that differs.
        found: usize,
    },
    /// Too few draws per chain for the estimator.
    #[error("too few draws: {found} given, at least {needed} needed")]
    TooShort {
        /// The fewest draws the estimator accepts.
        needed: usize,
        /// Draws given.
        found: usize,
    },
    /// A buffer's length does not match the shape it was given with.
    #[error("buffer length {found} does not match the shape ({expected})")]
    Length {
        /// The length the shape implies.
        expected: usize,
        /// The length given.
        found: usize,
    },
    /// A draw or value is NaN or infinite.
    #[error("a draw or value is NaN or infinite")]
    NonFinite,
    /// All draws are equal, so the variance is zero and the statistic is undefined.
    #[error("all draws are equal: the statistic is undefined")]
    ZeroVariance,
    /// A state value is not below the number of states.
    #[error("state value {value} is out of range for {num_states} states")]
    StateOutOfRange {
        /// The value found.
        value: u32,
        /// The number of states.
        num_states: usize,
    },
    /// The number of states per coordinate is zero or too large for the value type.
    #[error("{num_states} states per coordinate is not supported by the value type")]
    InvalidNumStates {
        /// The number of states given.
        num_states: usize,
    },
    /// `num_states^dim` exceeds the enumeration limit [`ENUMERATION_LIMIT`].
    #[error("more than {} states: too many to enumerate", ENUMERATION_LIMIT)]
    TooManyStates,
    /// The worker computing coordinate `coordinate` panicked.
    #[error("the worker computing coordinate {coordinate} panicked")]
    WorkerPanicked {
        /// The coordinate.
        coordinate: usize,
    },
    /// The worker threads could not be started.
    #[error("could not start the worker threads")]
    ThreadPool,
}

impl From<crate::run::PoolError> for DiagError {
    fn from(e: crate::run::PoolError) -> Self {
        match e {
            crate::run::PoolError::Build(_) => Self::ThreadPool,
            crate::run::PoolError::WorkerPanicked { chain, .. } => {
                Self::WorkerPanicked { coordinate: chain }
            }
        }
    }
}

/// Checks that `chains` is non-empty, of equal lengths ≥ `min_draws`, and finite; returns the
/// common length.
fn check_chains(chains: &[&[f64]], min_draws: usize) -> Result<usize, DiagError> {
    let first = chains.first().ok_or(DiagError::Empty)?;
    let n = first.len();
    if let Some(c) = chains.iter().find(|c| c.len() != n) {
        return Err(DiagError::RaggedChains {
            expected: n,
            found: c.len(),
        });
    }
    if n < min_draws {
        return Err(DiagError::TooShort {
            needed: min_draws,
            found: n,
        });
    }
    if chains.iter().flat_map(|c| c.iter()).any(|v| !v.is_finite()) {
        return Err(DiagError::NonFinite);
    }
    Ok(n)
}

/// Mean of a non-empty slice.
fn mean(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len() as f64
}

/// Sample variance with denominator `len − 1` (`len ≥ 2`).
fn sample_variance(x: &[f64]) -> f64 {
    let m = mean(x);
    x.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (x.len() as f64 - 1.0)
}

/// Median of the finite values of `x` (NaN entries are skipped); NaN if there are none.
fn median_of_defined(x: &[f64]) -> f64 {
    let mut v: Vec<f64> = x.iter().copied().filter(|v| !v.is_nan()).collect();
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let k = v.len() / 2;
    if v.len() % 2 == 1 {
        v[k]
    } else {
        0.5 * (v[k - 1] + v[k])
    }
}
