//! Autocovariances by the Wiener–Khinchin theorem with a real-input FFT (the `realfft` crate).

use std::fmt;
use std::sync::Arc;

use realfft::num_complex::Complex;
use realfft::{ComplexToReal, RealFftPlanner, RealToComplex};

/// Forward and inverse real FFT plans for autocovariances of series of one length `n`.
///
/// A plan is immutable and can be shared between threads: plan once, then call
/// [`Self::autocovariance`] for every series of that length.
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

impl AutocovPlan {
    /// Plans the transforms for series of length `n`, zero-padded to [`padded_size`].
    pub(crate) fn new(n: usize) -> Self {
        let size = padded_size(n);
        let mut planner = RealFftPlanner::<f64>::new();
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

    /// Biased autocovariances (divided by `n`) of a centred real series of length `n`, lags
    /// `0..n`.
    ///
    /// # Panics
    ///
    /// If `x.len()` is not the plan's `n`.
    pub(crate) fn autocovariance(&self, x: &[f64]) -> Vec<f64> {
        assert_eq!(x.len(), self.n, "series length differs from the plan's");
        let size = self.forward.len();
        let mut padded = self.forward.make_input_vec();
        padded[..self.n].copy_from_slice(x);
        let mut spectrum = self.forward.make_output_vec();
        let mut scratch = self.forward.make_scratch_vec();
        // The buffers come from the plans, so their lengths are right and neither call fails.
        let forward = self
            .forward
            .process_with_scratch(&mut padded, &mut spectrum, &mut scratch);
        debug_assert!(forward.is_ok());
        // The power spectrum is real: the imaginary parts of the first and last bins, which
        // the inverse transform requires to be zero, are exactly zero.
        for c in &mut spectrum {
            *c = Complex::new(c.norm_sqr(), 0.0);
        }
        let mut scratch = self.inverse.make_scratch_vec();
        let inverse = self
            .inverse
            .process_with_scratch(&mut spectrum, &mut padded, &mut scratch);
        debug_assert!(inverse.is_ok());
        let scale = 1.0 / (size as f64 * self.n as f64);
        padded[..self.n].iter().map(|v| v * scale).collect()
    }
}

/// The smallest power of two `≥ 2n`: zero padding to it makes the circular correlation equal to
/// the linear one for every lag `< n`.
pub(crate) fn padded_size(n: usize) -> usize {
    (2 * n.max(1)).next_power_of_two()
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
            for (a, b) in a.iter().zip(naive_acov(&x)) {
                assert!((a - b).abs() < 1e-12, "n {n}: {a} vs {b}");
            }
        }
    }
}
