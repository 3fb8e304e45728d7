//! Autocovariances by the Wiener–Khinchin theorem with a real-input FFT (the `realfft` crate).

use std::fmt;
use std::sync::Arc;

use realfft::num_complex::Complex;
use realfft::{ComplexToReal, RealFftPlanner, RealToComplex};

/// Forward and inverse real FFT plans for autocovariances of series of one length `n`.
///
/// A plan is immutable and can be shared between threads: plan once, then call
/// [`Self::autocovariance`] (or [`Self::autocovariance_into`] with reused
/// [`FftBuffers`]) for every series of that length.
pub(crate) struct AutocovPlan {
    n: usize,
    forward: Arc<dyn RealToComplex<f64>>,
    inverse: Arc<dyn ComplexToReal<f64>>,
}

impl fmt::Debug for AutocovPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AutocovPlan")
            .field("n", &self.n)
            .field("size", &self.forward.len())
            .finish()
    }
}

/// Work buffers for [`AutocovPlan::autocovariance_into`], reusable across calls and across
/// plans of any size up to the one they were made for.
#[derive(Debug, Default)]
pub(crate) struct FftBuffers {
    padded: Vec<f64>,
    spectrum: Vec<Complex<f64>>,
    scratch: Vec<Complex<f64>>,
    power: Vec<f64>,
}

impl FftBuffers {
    /// Grows the buffers to fit `plan` (never shrinks them).
    fn fit(&mut self, plan: &AutocovPlan) {
        let size = plan.forward.len();
        let scratch = plan
            .forward
            .get_scratch_len()
            .max(plan.inverse.get_scratch_len());
        if self.padded.len() < size {
            self.padded.resize(size, 0.0);
        }
        if self.spectrum.len() < size / 2 + 1 {
            self.spectrum.resize(size / 2 + 1, Complex::new(0.0, 0.0));
            self.power.resize(size / 2 + 1, 0.0);
        }
        if self.scratch.len() < scratch {
            self.scratch.resize(scratch, Complex::new(0.0, 0.0));
        }
    }
}

impl AutocovPlan {
    /// Plans the transforms for series of length `n`, zero-padded to [`padded_size`]: every lag
    /// `0..n` is exact.
    pub(crate) fn new(n: usize) -> Self {
        Self::with_size(n, padded_size(n), &mut RealFftPlanner::new())
    }

    /// Plans the transforms for series of length `n ≥ 1` zero-padded to `size ≥ n` (even):
    /// the lags `0..`[`Self::lags`] are exact, the circular wrap-around reaching only the
    /// higher ones.
    pub(crate) fn with_size(n: usize, size: usize, planner: &mut RealFftPlanner<f64>) -> Self {
        debug_assert!(size >= n && size.is_multiple_of(2));
        Self {
            n,
            forward: planner.plan_fft_forward(size),
            inverse: planner.plan_fft_inverse(size),
        }
    }

    /// The series length `n` the plan is for.
    pub(crate) fn len(&self) -> usize {
        self.n
    }

    /// The number of leading lags the plan computes exactly: `min(n, size − n + 1)`.
    pub(crate) fn lags(&self) -> usize {
        self.n.min(self.forward.len() + 1 - self.n)
    }

    /// Biased autocovariances (divided by `n`) of a centred real series of length `n`, lags
    /// `0..n`.
    ///
    /// # Panics
    ///
    /// If `x.len()` is not the plan's `n`, or the plan does not cover every lag.
    pub(crate) fn autocovariance(&self, x: &[f64]) -> Vec<f64> {
        assert_eq!(self.lags(), self.n, "the plan does not cover every lag");
        let mut out = vec![0.0; self.n];
        self.autocovariance_into(x, &mut FftBuffers::default(), &mut out);
        out
    }

    /// [`Self::autocovariance`] into `out`, for the lags `0..out.len()` (at most
    /// [`Self::lags`]), with the work buffers `buffers` (grown as needed, then reused).
    ///
    /// # Panics
    ///
    /// If `x.len()` is not the plan's `n` or `out` is longer than [`Self::lags`].
    pub(crate) fn autocovariance_into(&self, x: &[f64], buffers: &mut FftBuffers, out: &mut [f64]) {
        assert_eq!(x.len(), self.n, "series length differs from the plan's");
        assert!(
            out.len() <= self.lags(),
            "more lags asked than the plan covers"
        );
        buffers.fit(self);
        let size = self.forward.len();
        let padded = &mut buffers.padded[..size];
        let spectrum = &mut buffers.spectrum[..size / 2 + 1];
        padded[..self.n].copy_from_slice(x);
        padded[self.n..].fill(0.0);
        let scratch = &mut buffers.scratch[..self.forward.get_scratch_len()];
        // The buffers are cut to the plans' lengths, so neither call fails.
        let forward = self.forward.process_with_scratch(padded, spectrum, scratch);
        debug_assert!(forward.is_ok());
        // The power spectrum is real: the imaginary parts of the first and last bins, which
        // the inverse transform requires to be zero, are exactly zero.
        for c in spectrum.iter_mut() {
            *c = Complex::new(c.norm_sqr(), 0.0);
        }
        let scratch = &mut buffers.scratch[..self.inverse.get_scratch_len()];
        let inverse = self.inverse.process_with_scratch(spectrum, padded, scratch);
        debug_assert!(inverse.is_ok());
        let scale = 1.0 / (size as f64 * self.n as f64);
        for (o, v) in out.iter_mut().zip(padded.iter()) {
            *o = v * scale;
        }
    }
}

impl AutocovPlan {
    /// The biased autocovariances of `series` centred series of length `n`, summed over the
    /// series, into `out` (lags `0..out.len()`, at most [`Self::lags`]): `fill(h, x)` writes
    /// series `h` into `x`. The inverse transform is linear, so one inverse of the summed power
    /// spectra serves every series.
    ///
    /// # Panics
    ///
    /// If `out` is longer than [`Self::lags`].
    pub(crate) fn summed_autocovariance_into(
        &self,
        series: usize,
        mut fill: impl FnMut(usize, &mut [f64]),
        buffers: &mut FftBuffers,
        out: &mut [f64],
    ) {
        assert!(
            out.len() <= self.lags(),
            "more lags asked than the plan covers"
        );
        buffers.fit(self);
        let size = self.forward.len();
        let bins = size / 2 + 1;
        let padded = &mut buffers.padded[..size];
        let spectrum = &mut buffers.spectrum[..bins];
        let power = &mut buffers.power[..bins];
        power.fill(0.0);
        for h in 0..series {
            fill(h, &mut padded[..self.n]);
            padded[self.n..].fill(0.0);
            let scratch = &mut buffers.scratch[..self.forward.get_scratch_len()];
            // The buffers are cut to the plans' lengths, so the call does not fail.
            let forward = self.forward.process_with_scratch(padded, spectrum, scratch);
            debug_assert!(forward.is_ok());
            for (p, c) in power.iter_mut().zip(spectrum.iter()) {
                *p += c.norm_sqr();
            }
        }
        // Real and even: the first and last bins' imaginary parts are exactly zero.
        for (c, &p) in spectrum.iter_mut().zip(power.iter()) {
            *c = Complex::new(p, 0.0);
        }
        let scratch = &mut buffers.scratch[..self.inverse.get_scratch_len()];
        let inverse = self.inverse.process_with_scratch(spectrum, padded, scratch);
        debug_assert!(inverse.is_ok());
        let scale = 1.0 / (size as f64 * self.n as f64);
        for (o, v) in out.iter_mut().zip(padded.iter()) {
            *o = v * scale;
        }
    }
}

/// The smallest power of two `≥ 2n`: zero padding to it makes the circular correlation equal to
/// the linear one for every lag `< n`.
pub(crate) fn padded_size(n: usize) -> usize {
    (2 * n.max(1)).next_power_of_two()
}

/// Plans for series of length `n` at increasing padded sizes, the last covering every lag: a
/// caller that needs only the first lags starts with the smallest.
#[derive(Debug)]
pub(crate) struct AutocovTiers {
    plans: Vec<AutocovPlan>,
}

impl AutocovTiers {
    /// Powers of two: the smallest covering the lags `0..n/8` and `0..n/2`, then
    /// [`padded_size`], each planned once. (Sizes `2^a 3^b` closer to `2n` were slower.)
    pub(crate) fn new(n: usize) -> Self {
        let mut planner = RealFftPlanner::new();
        let n = n.max(1);
        let full = padded_size(n);
        let mut sizes: Vec<usize> = [n / 8, n / 2]
            .iter()
            .map(|&lags| (n + lags).next_power_of_two().max(2))
            .filter(|&size| size < full)
            .collect();
        sizes.push(full);
        sizes.dedup();
        let plans = sizes
            .into_iter()
            .map(|size| AutocovPlan::with_size(n, size, &mut planner))
            .collect();
        Self { plans }
    }

    /// The plans, smallest first; the last covers every lag.
    pub(crate) fn plans(&self) -> &[AutocovPlan] {
        &self.plans
    }

    /// The series length `n`.
    pub(crate) fn len(&self) -> usize {
        self.plans.first().map_or(0, AutocovPlan::len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive_acov(x: &[f64]) -> Vec<f64> {
        let n = x.len();
        (0..n)
            .map(|t| (0..n - t).map(|i| x[i] * x[i + t]).sum::<f64>() / n as f64)
            .collect()
    }

    #[test]
    fn matches_direct_sum() {
        for n in [1usize, 2, 3, 7, 16, 33, 100, 1000] {
            let x: Vec<f64> = (0..n).map(|i| ((i * 37 % 11) as f64 - 5.0) * 0.3).collect();
            let plan = AutocovPlan::new(n);
            let a = plan.autocovariance(&x);
            assert_eq!(a.len(), n);
            let naive = naive_acov(&x);
            for (a, b) in a.iter().zip(&naive) {
                assert!((a - b).abs() < 1e-12, "n {n}: {a} vs {b}");
            }
            // Every tier, with buffers reused across sizes, gets its leading lags right.
            let tiers = AutocovTiers::new(n);
            assert_eq!(tiers.len(), n);
            assert_eq!(tiers.plans().last().map(AutocovPlan::lags), Some(n));
            let mut buffers = FftBuffers::default();
            for plan in tiers.plans().iter().rev() {
                let mut out = vec![f64::NAN; plan.lags()];
                plan.autocovariance_into(&x, &mut buffers, &mut out);
                for (a, b) in out.iter().zip(&naive) {
                    assert!((a - b).abs() < 1e-12, "n {n}, tier {plan:?}: {a} vs {b}");
                }
                // Summed over the series and its negation: twice the autocovariances.
                plan.summed_autocovariance_into(
                    2,
                    |h, into| {
                        let sign = if h == 0 { 1.0 } else { -1.0 };
                        for (i, v) in into.iter_mut().zip(&x) {
                            *i = sign * v;
                        }
                    },
                    &mut buffers,
                    &mut out,
                );
                for (a, b) in out.iter().zip(&naive) {
                    assert!((a - 2.0 * b).abs() < 1e-12, "n {n}, summed: {a} vs {b}");
                }
            }
        }
    }
}
