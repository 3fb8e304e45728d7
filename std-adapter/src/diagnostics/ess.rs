//! Autocorrelation and effective sample size.

use super::fft::{Fft, autocovariance_pair, padded_size};
use super::rhat::{rank_normalize, split_halves};
use super::{DiagError, check_chains, mean, median_of_defined, sample_variance};
use crate::run::Pool;

/// Biased autocovariances `γ_t = (1/n) Σ_{i<n−t} (x_i − x̄)(x_{i+t} − x̄)` for lags `0..n`.
///
/// Computed by a zero-padded FFT: `O(n log n)`, equal to the direct sum up to round-off.
///
/// # Errors
///
/// [`DiagError::Empty`] for an empty series, [`DiagError::NonFinite`] for NaN or infinite draws.
pub fn autocovariance(x: &[f64]) -> Result<Vec<f64>, DiagError> {
    let n = check_chains(&[x], 1)?;
    let plan = Fft::new(padded_size(n));
    let m = mean(x);
    let centred: Vec<f64> = x.iter().map(|v| v - m).collect();
    Ok(autocovariance_pair(&plan, &centred, &[]).0)
}

/// Autocorrelations `ρ_t = γ_t / γ_0` for lags `0..=min(max_lag, n − 1)`.
///
/// # Errors
///
/// As [`autocovariance`], and [`DiagError::ZeroVariance`] for a constant series.
///
/// # Examples
///
/// ```
/// use langevin_std::diagnostics::autocorrelation;
/// let x = [1.0, -1.0, 1.0, -1.0, 1.0, -1.0];
/// let rho = autocorrelation(&x, 2).unwrap();
/// assert_eq!(rho.len(), 3);
/// assert!((rho[0] - 1.0).abs() < 1e-15 && rho[1] < -0.8);
/// ```
pub fn autocorrelation(x: &[f64], max_lag: usize) -> Result<Vec<f64>, DiagError> {
    let acov = autocovariance(x)?;
    let g0 = acov.first().copied().unwrap_or(0.0);
    if g0 <= 0.0 {
        return Err(DiagError::ZeroVariance);
    }
    Ok(acov
        .iter()
        .take(max_lag.saturating_add(1))
        .map(|g| g / g0)
        .collect())
}

/// Per-chain means and biased autocovariances, two chains per complex FFT.
fn chain_autocovariances(chains: &[&[f64]], n: usize) -> (Vec<Vec<f64>>, Vec<f64>) {
    let plan = Fft::new(padded_size(n));
    let means: Vec<f64> = chains.iter().map(|c| mean(c)).collect();
    let centred: Vec<Vec<f64>> = chains
        .iter()
        .zip(&means)
        .map(|(c, m)| c.iter().map(|v| v - m).collect())
        .collect();
    let mut acov = Vec::with_capacity(chains.len());
    for pair in centred.chunks(2) {
        match pair {
            [x, y] => {
                let (ax, ay) = autocovariance_pair(&plan, x, y);
                acov.push(ax);
                acov.push(ay);
            }
            [x] => acov.push(autocovariance_pair(&plan, x, &[]).0),
            _ => {}
        }
    }
    (acov, means)
}

/// Stan's multi-chain ESS from per-chain autocovariances (`n ≥ 4` draws per chain).
fn ess_from_autocovariances(acov: &[Vec<f64>], means: &[f64], n: usize) -> Result<f64, DiagError> {
    let chains = acov.len() as f64;
    let nf = n as f64;
    let chain_var: Vec<f64> = acov.iter().map(|a| a[0] * nf / (nf - 1.0)).collect();
    let mean_var = mean(&chain_var);
    let mut var_plus = mean_var * (nf - 1.0) / nf;
    if means.len() > 1 {
        var_plus += sample_variance(means);
    }
    if var_plus.partial_cmp(&0.0) != Some(core::cmp::Ordering::Greater) {
        return Err(DiagError::ZeroVariance);
    }
    let rho =
        |t: usize| 1.0 - (mean_var - acov.iter().map(|a| a[t]).sum::<f64>() / chains) / var_plus;

    // Geyer's initial positive sequence over pairs (ρ_{2k}, ρ_{2k+1}).
    let mut rho_hat = vec![0.0; n];
    rho_hat[0] = 1.0;
    let mut even = 1.0;
    let mut odd = rho(1);
    rho_hat[1] = odd;
    let mut s = 1;
    while s + 4 < n && even + odd > 0.0 {
        even = rho(s + 1);
        odd = rho(s + 2);
        if even + odd >= 0.0 {
            rho_hat[s + 1] = even;
            rho_hat[s + 2] = odd;
        }
        s += 2;
    }
    let max_s = s;
    // The last positive even lag enters once: it lowers the variance of τ̂ for antithetic chains.
    if even > 0.0 {
        rho_hat[max_s + 1] = even;
    }
    // Geyer's initial monotone sequence: pair sums may not increase.
    let mut s = 1;
    while s + 3 <= max_s {
        let previous = rho_hat[s - 1] + rho_hat[s];
        if rho_hat[s + 1] + rho_hat[s + 2] > previous {
            rho_hat[s + 1] = previous / 2.0;
            rho_hat[s + 2] = previous / 2.0;
        }
        s += 2;
    }
    let total = chains * nf;
    let tau = -1.0 + 2.0 * rho_hat[..max_s].iter().sum::<f64>() + rho_hat[max_s + 1];
    // Stan's cap: an ESS above N·log10(N) is not credible; τ̂ ≤ 0 can only come from strongly
    // antithetic chains and is sent to the cap as well.
    let cap = total * total.log10();
    Ok(if tau > 0.0 {
        (total / tau).min(cap)
    } else {
        cap
    })
}

/// Effective sample size of one or more chains of a scalar statistic.
///
/// The estimator is Stan's (see the [module docs](super)): autocovariances by FFT, the
/// multi-chain combination through the within-chain variance `W` and `var⁺ = (n−1)/n · W + B/n`,
/// truncation by Geyer's initial positive sequence, Geyer's initial monotone correction, and the
/// cap `N · log10(N)` with `N = chains × n`. For a single chain it is the usual `n / τ̂` with
/// `τ̂ = 1 + 2 Σ ρ̂_t`.
///
/// # Errors
///
/// [`DiagError::Empty`], [`DiagError::RaggedChains`], [`DiagError::TooShort`] (fewer than 4
/// draws), [`DiagError::NonFinite`], and [`DiagError::ZeroVariance`] when every draw of every
/// chain is the same.
///
/// # Examples
///
/// ```
/// use langevin_std::diagnostics::ess;
/// // A slowly varying series carries little information per draw.
/// let smooth: Vec<f64> = (0..1000).map(|i| (i as f64 / 50.0).sin()).collect();
/// assert!(ess(&[&smooth]).unwrap() < 50.0);
/// ```
pub fn ess(chains: &[&[f64]]) -> Result<f64, DiagError> {
    let n = check_chains(chains, 4)?;
    let (acov, means) = chain_autocovariances(chains, n);
    ess_from_autocovariances(&acov, &means, n)
}

/// Bulk effective sample size (Vehtari et al. 2021): [`ess`] of the split chains after rank
/// normalisation. Robust to heavy tails and invariant under monotone transformations.
///
/// # Errors
///
/// As [`ess`], with at least 8 draws per chain (4 per half).
pub fn ess_bulk(chains: &[&[f64]]) -> Result<f64, DiagError> {
    let n = check_chains(chains, 8)?;
    let halves = split_halves(chains, n);
    let z = rank_normalize(&halves)?;
    let views: Vec<&[f64]> = z.iter().map(Vec::as_slice).collect();
    ess(&views)
}

/// A borrowed row-major `(chains, draws, dim)` array of draws of a vector: element
/// `(c, t, i)` is at `(c * draws + t) * dim + i`.
///
/// `T` is any value convertible to `f64` (`f64`, `f32`, `u8`, `u16`, …), so discrete chains
/// can be passed without conversion.
#[derive(Debug, Clone, Copy)]
pub struct DrawArray<'a, T> {
    data: &'a [T],
    chains: usize,
    draws: usize,
    dim: usize,
}

impl<'a, T: Copy + Into<f64>> DrawArray<'a, T> {
    /// Wraps `data` of shape `(chains, draws, dim)`.
    ///
    /// # Errors
    ///
    /// [`DiagError::Empty`] if a dimension is zero, [`DiagError::Length`] if
    /// `data.len() != chains * draws * dim`.
    pub fn new(data: &'a [T], chains: usize, draws: usize, dim: usize) -> Result<Self, DiagError> {
        if chains == 0 || draws == 0 || dim == 0 {
            return Err(DiagError::Empty);
        }
        // A shape whose size overflows expects `usize::MAX` entries.
        let expected = chains.checked_mul(draws).and_then(|v| v.checked_mul(dim));
        if expected != Some(data.len()) {
            return Err(DiagError::Length {
                expected: expected.unwrap_or(usize::MAX),
                found: data.len(),
            });
        }
        Ok(Self {
            data,
            chains,
            draws,
            dim,
        })
    }

    /// Number of chains.
    pub fn chains(&self) -> usize {
        self.chains
    }

    /// Draws per chain.
    pub fn draws(&self) -> usize {
        self.draws
    }

    /// Coordinates per draw.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The series of coordinate `i` in chain `c`, copied out as `f64`.
    ///
    /// # Panics
    ///
    /// If `c ≥ chains` or `i ≥ dim`.
    pub fn coordinate(&self, c: usize, i: usize) -> Vec<f64> {
        assert!(
            c < self.chains && i < self.dim,
            "chain or coordinate out of range"
        );
        let chain = &self.data[c * self.draws * self.dim..(c + 1) * self.draws * self.dim];
        chain
            .iter()
            .skip(i)
            .step_by(self.dim)
            .map(|&v| v.into())
            .collect()
    }
}

/// Per-coordinate effective sample sizes with their minimum and median.
#[derive(Debug, Clone, PartialEq)]
pub struct EssSummary {
    /// [`ess`] of each coordinate over all chains; NaN where the coordinate never varies.
    pub per_coordinate: Vec<f64>,
    /// Smallest defined value (NaN if none is defined).
    pub min: f64,
    /// Median of the defined values (NaN if none is defined).
    pub median: f64,
    /// Number of coordinates whose ESS is undefined because every draw is equal.
    pub undefined: usize,
}

/// [`ess`] of every coordinate of a `(chains, draws, dim)` array, spread over the available
/// cores: [`ess_per_coordinate_on`] with one worker per core.
///
/// A coordinate that is constant across all draws of all chains gets NaN and is counted in
/// [`EssSummary::undefined`] rather than failing the whole call.
///
/// # Errors
///
/// [`DiagError::TooShort`] for fewer than 4 draws, [`DiagError::NonFinite`] for a NaN or
/// infinite draw.
///
/// # Examples
///
/// ```
/// use langevin_std::diagnostics::{DrawArray, ess_per_coordinate};
/// // 2 chains × 6 draws × 2 coordinates; the second coordinate never changes.
/// let data: Vec<u8> = vec![0, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 1, 1, 0, 1, 0, 1, 1, 1, 0, 1, 1, 1];
/// let draws = DrawArray::new(&data, 2, 6, 2).unwrap();
/// let summary = ess_per_coordinate(&draws).unwrap();
/// assert!(summary.per_coordinate[0] > 0.0);
/// assert!(summary.per_coordinate[1].is_nan());
/// assert_eq!(summary.undefined, 1);
/// ```
pub fn ess_per_coordinate<T: Copy + Into<f64> + Sync>(
    draws: &DrawArray<'_, T>,
) -> Result<EssSummary, DiagError> {
    ess_per_coordinate_on(draws, 0)
}

/// [`ess_per_coordinate`] on a [`Pool`] of `threads` workers (`0`: one per core). Each
/// coordinate is independent, so the result does not depend on the thread count.
///
/// # Errors
///
/// As for [`ess_per_coordinate`]; [`DiagError::WorkerPanicked`] if a worker panicked and
/// [`DiagError::ThreadPool`] if the workers could not be started.
pub fn ess_per_coordinate_on<T: Copy + Into<f64> + Sync>(
    draws: &DrawArray<'_, T>,
    threads: usize,
) -> Result<EssSummary, DiagError> {
    if draws.draws < 4 {
        return Err(DiagError::TooShort {
            needed: 4,
            found: draws.draws,
        });
    }
    let dim = draws.dim;
    let one = |i: usize| -> Result<f64, DiagError> {
        let series: Vec<Vec<f64>> = (0..draws.chains).map(|c| draws.coordinate(c, i)).collect();
        let views: Vec<&[f64]> = series.iter().map(Vec::as_slice).collect();
        match ess(&views) {
            Err(DiagError::ZeroVariance) => Ok(f64::NAN),
            other => other,
        }
    };
    let pool = Pool::for_items(threads, dim)?;
    let per_coordinate = pool.map((0..dim).collect(), |_, i| one(i))?;
    let undefined = per_coordinate.iter().filter(|v| v.is_nan()).count();
    let min = per_coordinate
        .iter()
        .copied()
        .filter(|v| !v.is_nan())
        .fold(f64::NAN, f64::min);
    let median = median_of_defined(&per_coordinate);
    Ok(EssSummary {
        per_coordinate,
        min,
        median,
        undefined,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_series_is_zero_variance() {
        let x = [2.0; 10];
        assert_eq!(ess(&[&x]), Err(DiagError::ZeroVariance));
        assert_eq!(autocorrelation(&x, 3), Err(DiagError::ZeroVariance));
    }

    #[test]
    fn short_and_ragged_inputs_are_rejected() {
        let a = [1.0, 2.0, 3.0];
        assert!(matches!(ess(&[&a]), Err(DiagError::TooShort { .. })));
        let b = [1.0, 2.0, 3.0, 4.0, 5.0];
        let c = [1.0, 2.0, 3.0, 4.0];
        assert!(matches!(
            ess(&[&b, &c]),
            Err(DiagError::RaggedChains { .. })
        ));
        assert_eq!(ess(&[]), Err(DiagError::Empty));
        let d = [1.0, f64::NAN, 3.0, 4.0];
        assert_eq!(ess(&[&d]), Err(DiagError::NonFinite));
    }

    #[test]
    fn chains_stuck_at_different_values_have_tiny_ess() {
        let a = [0.0; 100];
        let b = [1.0; 100];
        let e = ess(&[&a, &b]).unwrap();
        assert!(e < 2.0, "ess {e}");
    }
}
