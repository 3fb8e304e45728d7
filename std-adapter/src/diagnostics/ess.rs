//! Autocorrelation and effective sample size.

use super::fft::AutocovPlan;
use super::rhat::{rank_normalize, split_halves};
use super::{DiagError, check_chains, mean, median_of_defined, sample_variance};
use crate::run::Pool;

/// Biased autocovariances `γ_t = (1/n) Σ_{i<n−t} (x_i − x̄)(x_{i+t} − x̄)` for lags `0..n`.
///
/// Computed by a zero-padded real FFT: `O(n log n)`, equal to the direct sum up to round-off.
///
/// # Errors
///
/// [`DiagError::Empty`] for an empty series, [`DiagError::NonFinite`] for NaN or infinite draws.
pub fn autocovariance(x: &[f64]) -> Result<Vec<f64>, DiagError> {
    let n = check_chains(&[x], 1)?;
    let m = mean(x);
    let centred: Vec<f64> = x.iter().map(|v| v - m).collect();
    Ok(AutocovPlan::new(n).autocovariance(&centred))
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

/// Per-chain means and biased autocovariances of chains of the plan's length.
pub(super) fn chain_autocovariances<C: AsRef<[f64]>>(
    plan: &AutocovPlan,
    chains: &[C],
) -> (Vec<Vec<f64>>, Vec<f64>) {
    let means: Vec<f64> = chains.iter().map(|c| mean(c.as_ref())).collect();
    let acov = chains
        .iter()
        .zip(&means)
        .map(|(c, m)| {
            let centred: Vec<f64> = c.as_ref().iter().map(|v| v - m).collect();
            plan.autocovariance(&centred)
        })
        .collect();
    (acov, means)
}

/// The multi-chain ESS of ArviZ's `_ess` (Stan's estimator) from per-chain autocovariances of
/// `n ≥ 2` lags.
pub(super) fn ess_from_autocovariances(
    acov: &[Vec<f64>],
    means: &[f64],
    n: usize,
) -> Result<f64, DiagError> {
    let summed: Vec<f64> = (0..n)
        .map(|t| acov.iter().map(|a| a[t]).sum::<f64>())
        .collect();
    // Every lag is given, so the truncation never asks for more.
    ess_from_summed_autocovariances(&summed, acov.len(), means, n)
        .map(|ess| ess.unwrap_or(f64::NAN))
}

/// [`ess_from_autocovariances`] from the leading lags `0..m` (`m = summed.len() ≤ n`) of the
/// autocovariances summed over the `chains` chains of `n ≥ 2` draws (all the estimator
/// reads). `Ok(None)` when Geyer's truncation reads a lag at or beyond `m`; otherwise the value
/// is the one all `n` lags give.
pub(super) fn ess_from_summed_autocovariances(
    summed: &[f64],
    chains: usize,
    means: &[f64],
    n: usize,
) -> Result<Option<f64>, DiagError> {
    let m = summed.len().min(n);
    if m < 2 {
        return Ok(None);
    }
    let nf = n as f64;
    let (mean_var, var_plus) = pooled_variances(summed[0], chains, means, n);
    if var_plus.partial_cmp(&0.0) != Some(core::cmp::Ordering::Greater) {
        return Err(DiagError::ZeroVariance);
    }
    let chains = chains as f64;
    let rho = |t: usize| 1.0 - (mean_var - summed[t] / chains) / var_plus;

    // Geyer's initial positive sequence over pairs (ρ_{2k}, ρ_{2k+1}).
    let mut rho_hat = vec![0.0; m];
    rho_hat[0] = 1.0;
    let mut even = 1.0;
    let mut odd = rho(1);
    rho_hat[1] = odd;
    let mut t = 1;
    while t + 3 < n && even + odd > 0.0 {
        if t + 2 >= m {
            return Ok(None);
        }
        even = rho(t + 1);
        odd = rho(t + 2);
        if even + odd >= 0.0 {
            rho_hat[t + 1] = even;
            rho_hat[t + 2] = odd;
        }
        t += 2;
    }
    // The pairs up to lag `last − 1` were kept (ArviZ's `max_t = last − 1`); the last even
    // lag evaluated enters once if positive: it lowers the variance of τ̂ for antithetic chains.
    let last = t - 1;
    if even > 0.0 {
        rho_hat[last] = even;
    }
    // Geyer's initial monotone sequence: pair sums may not increase.
    let mut t = 1;
    while t + 3 <= last {
        let previous = rho_hat[t - 1] + rho_hat[t];
        if rho_hat[t + 1] + rho_hat[t + 2] > previous {
            rho_hat[t + 1] = previous / 2.0;
            rho_hat[t + 2] = previous / 2.0;
        }
        t += 2;
    }
    let total = chains * nf;
    let tau = -1.0 + 2.0 * rho_hat[..last].iter().sum::<f64>() + rho_hat[last];
    // An ESS above N·log10(N) is not credible; τ̂ ≤ 0 can only come from strongly antithetic
    // chains and is sent to the same bound.
    Ok(Some(total / tau.max(1.0 / total.log10())))
}

/// The mean within-chain variance `W` and `var⁺ = (n−1)/n · W + B/n` of `chains` chains of
/// `n` draws from the sum of their lag-0 autocovariances and their means.
pub(super) fn pooled_variances(lag0: f64, chains: usize, means: &[f64], n: usize) -> (f64, f64) {
    let nf = n as f64;
    let mean_var = lag0 / chains as f64 * nf / (nf - 1.0);
    let mut var_plus = mean_var * (nf - 1.0) / nf;
    if means.len() > 1 {
        var_plus += sample_variance(means);
    }
    (mean_var, var_plus)
}

/// [`ess`] of chains already checked to have equal lengths `n ≥ 2`.
fn ess_checked<C: AsRef<[f64]>>(chains: &[C], n: usize) -> Result<f64, DiagError> {
    let (acov, means) = chain_autocovariances(&AutocovPlan::new(n), chains);
    ess_from_autocovariances(&acov, &means, n)
}

/// Effective sample size of one or more chains of a scalar statistic.
///
/// The estimator is Stan's, as ArviZ's `ess(method="identity")` computes it (see the
/// [module docs](super)): autocovariances by FFT, the multi-chain combination through the
/// within-chain variance `W` and `var⁺ = (n−1)/n · W + B/n`, truncation by Geyer's initial
/// positive sequence (the last positive even lag counted once), Geyer's initial monotone
/// correction, and `τ̂ ≥ 1 / log10(N)` with `N = chains × n`, so the ESS is at most
/// `N · log10(N)`. For a single chain it is the usual `n / τ̂` with `τ̂ = 1 + 2 Σ ρ̂_t`.
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
    ess_checked(chains, n)
}

/// Bulk effective sample size (Vehtari et al. 2021), as ArviZ's `ess(method="bulk")`: each
/// chain is split in halves (the middle draw of an odd length dropped), all halves are rank
/// normalised together ([`rank_normalize`](super::rank_normalize())) and [`ess`]'s estimator
/// is applied to the halves. Robust to heavy tails and invariant under monotone
/// transformations.
///
/// # Errors
///
/// As [`ess`] (at least 4 draws per chain).
pub fn ess_bulk(chains: &[&[f64]]) -> Result<f64, DiagError> {
    let n = check_chains(chains, 4)?;
    let halves = split_halves(chains, n);
    let z = rank_normalize(&halves)?;
    ess_checked(&z, n / 2)
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

    /// Chain `c`'s draws, `draws × dim` values row by row.
    ///
    /// # Panics
    ///
    /// If `c ≥ chains`.
    pub fn chain(&self, c: usize) -> &'a [T] {
        let len = self.draws * self.dim;
        &self.data[c * len..(c + 1) * len]
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
    /// [`ess_bulk`] of each coordinate over all chains; NaN where the coordinate never varies.
    pub per_coordinate: Vec<f64>,
    /// Smallest defined value (NaN if none is defined).
    pub min: f64,
    /// Median of the defined values (NaN if none is defined).
    pub median: f64,
    /// Number of coordinates whose ESS is undefined because every draw is equal.
    pub undefined: usize,
}

impl EssSummary {
    /// The summary of per-coordinate values, NaN where undefined.
    pub(super) fn new(per_coordinate: Vec<f64>) -> Self {
        let undefined = per_coordinate.iter().filter(|v| v.is_nan()).count();
        let min = per_coordinate
            .iter()
            .copied()
            .filter(|v| !v.is_nan())
            .fold(f64::NAN, f64::min);
        let median = median_of_defined(&per_coordinate);
        Self {
            per_coordinate,
            min,
            median,
            undefined,
        }
    }
}

/// [`ess_bulk`] of every coordinate of a `(chains, draws, dim)` array, spread over the available
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
    let half = draws.draws / 2;
    // One plan for every coordinate, shared by the workers: all halves have the same length.
    let plan = AutocovPlan::new(half);
    let one = |i: usize| -> Result<f64, DiagError> {
        let series: Vec<Vec<f64>> = (0..draws.chains).map(|c| draws.coordinate(c, i)).collect();
        let views: Vec<&[f64]> = series.iter().map(Vec::as_slice).collect();
        let z = rank_normalize(&split_halves(&views, draws.draws))?;
        let (acov, means) = chain_autocovariances(&plan, &z);
        match ess_from_autocovariances(&acov, &means, half) {
            Err(DiagError::ZeroVariance) => Ok(f64::NAN),
            other => other,
        }
    };
    let pool = Pool::for_items(threads, dim)?;
    let per_coordinate = pool.map((0..dim).collect(), |_, i| one(i))?;
    Ok(EssSummary::new(per_coordinate))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostics::Lcg;

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

    /// `chains` chains of `draws` from `x_0 = 0`, each draw `next(x, u)` of the last and a
    /// uniform `u` of one LCG stream.
    fn series(
        seed: u64,
        chains: usize,
        draws: usize,
        next: impl Fn(f64, f64) -> f64,
    ) -> Vec<Vec<f64>> {
        let mut g = Lcg(seed);
        let mut chain = |_| {
            let mut x = 0.0;
            (0..draws)
                .map(|_| {
                    x = next(x, g.next());
                    x
                })
                .collect()
        };
        (0..chains).map(&mut chain).collect()
    }

    /// `chains` AR(1) chains `x_t = φ x_{t−1} + (u_t − 1/2)` from `x_0 = 0`.
    fn ar1(seed: u64, chains: usize, draws: usize, phi: f64) -> Vec<Vec<f64>> {
        series(seed, chains, draws, |x, u| phi * x + (u - 0.5))
    }

    /// 0/1 chains from 0 that flip with probability `p` at each draw.
    fn flips(seed: u64, chains: usize, draws: usize, p: f64) -> Vec<Vec<f64>> {
        series(seed, chains, draws, |x, u| if u < p { 1.0 - x } else { x })
    }

    /// Reference values from ArviZ 0.23.4, `az.ess(a, method="bulk")` and
    /// `az.ess(a, method="identity")`, on the same data generated in Python with the same LCG.
    #[test]
    fn agrees_with_arviz() {
        let ties: Vec<Vec<f64>> = ar1(1, 3, 101, 0.7)
            .into_iter()
            .map(|c| c.into_iter().map(|v| (v * 4.0).floor()).collect())
            .collect();
        let cases = [
            ("ties", ties, 69.157_009_646_746_16, 67.053_784_053_309_91),
            (
                "antithetic",
                ar1(2, 2, 200, -0.3),
                699.250_857_957_286_5,
                634.522_346_313_680_3,
            ),
            (
                "short",
                ar1(3, 4, 12, 0.95),
                15.804_858_349_105_105,
                5.625_303_693_809_424,
            ),
            (
                "binary",
                flips(4, 2, 64, 0.1),
                27.412_796_354_271_958,
                22.305_837_838_315_703,
            ),
            (
                "single",
                ar1(5, 1, 1000, 0.9),
                43.615_172_102_485_29,
                41.004_158_802_158_95,
            ),
        ];
        for (name, chains, bulk, identity) in cases {
            let views: Vec<&[f64]> = chains.iter().map(Vec::as_slice).collect();
            let b = ess_bulk(&views).unwrap();
            let e = ess(&views).unwrap();
            assert!(
                (b - bulk).abs() <= 1e-6 * bulk,
                "{name}: bulk {b} vs {bulk}"
            );
            assert!(
                (e - identity).abs() <= 1e-6 * identity,
                "{name}: {e} vs {identity}"
            );
            // The per-coordinate ESS is the bulk ESS.
            let draws = chains[0].len();
            let flat: Vec<f64> = chains.concat();
            let array = DrawArray::new(&flat, chains.len(), draws, 1).unwrap();
            let per = ess_per_coordinate_on(&array, 1).unwrap().per_coordinate[0];
            assert!(
                (per - bulk).abs() <= 1e-6 * bulk,
                "{name}: per coordinate {per}"
            );
        }
    }

    #[test]
    fn chains_stuck_at_different_values_have_tiny_ess() {
        let a = [0.0; 100];
        let b = [1.0; 100];
        let e = ess(&[&a, &b]).unwrap();
        assert!(e < 2.0, "ess {e}");
    }
}
