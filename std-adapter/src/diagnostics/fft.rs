//! A radix-2 complex FFT, enough for autocovariances by the Wiener–Khinchin theorem.
//!
//! Twiddle factors are computed one by one with `sincos` (no recurrence), so the round-off of a
//! size-`m` transform grows like `log2(m)` ulps rather than `m`.

/// A transform plan of one power-of-two size: bit-reversal table and twiddles.
#[derive(Debug)]
pub(crate) struct Fft {
    size: usize,
    /// `exp(-2πi k / size)` for `k < size / 2`.
    twiddles: Vec<(f64, f64)>,
}

impl Fft {
    /// A plan for `size`, which must be a power of two (≥ 1).
    pub(crate) fn new(size: usize) -> Self {
        debug_assert!(size.is_power_of_two());
        let twiddles = (0..size / 2)
            .map(|k| {
                let angle = -core::f64::consts::TAU * k as f64 / size as f64;
                let (s, c) = libm::sincos(angle);
                (c, s)
            })
            .collect();
        Self { size, twiddles }
    }

    /// The transform size.
    pub(crate) fn size(&self) -> usize {
        self.size
    }

    /// In-place forward transform (`inverse = false`, kernel `exp(-2πi jk/m)`) or unscaled inverse
    /// (`inverse = true`, kernel `exp(+2πi jk/m)`) of `re + i·im`.
    pub(crate) fn transform(&self, re: &mut [f64], im: &mut [f64], inverse: bool) {
        let n = self.size;
        debug_assert!(re.len() == n && im.len() == n);
        if n <= 1 {
            return;
        }
        let bits = n.trailing_zeros();
        for i in 0..n {
            let j = i.reverse_bits() >> (usize::BITS - bits);
            if j > i {
                re.swap(i, j);
                im.swap(i, j);
            }
        }
        let sign = if inverse { -1.0 } else { 1.0 };
        let mut half = 1;
        while half < n {
            let stride = n / (2 * half);
            for start in (0..n).step_by(2 * half) {
                for k in 0..half {
                    let (wr, wi0) = self.twiddles[k * stride];
                    let wi = sign * wi0;
                    let a = start + k;
                    let b = a + half;
                    let tr = re[b] * wr - im[b] * wi;
                    let ti = re[b] * wi + im[b] * wr;
                    re[b] = re[a] - tr;
                    im[b] = im[a] - ti;
                    re[a] += tr;
                    im[a] += ti;
                }
            }
            half *= 2;
        }
    }
}

/// The smallest power of two `≥ 2n`: zero padding to it makes the circular correlation equal to
/// the linear one for every lag `< n`.
pub(crate) fn padded_size(n: usize) -> usize {
    (2 * n.max(1)).next_power_of_two()
}

/// Biased autocovariances (divided by `n`) of two centred real series of the same length at
/// once, packed as the real and imaginary parts of one complex transform.
///
/// Returns lags `0..n` for each. `y` may be empty, in which case the second result is empty.
pub(crate) fn autocovariance_pair(plan: &Fft, x: &[f64], y: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let n = x.len();
    let m = plan.size();
    debug_assert!(m >= 2 * n);
    let mut re = vec![0.0; m];
    let mut im = vec![0.0; m];
    re[..n].copy_from_slice(x);
    im[..y.len()].copy_from_slice(y);
    plan.transform(&mut re, &mut im, false);
    // Separate the two spectra: X_k = (Z_k + conj Z_{m-k}) / 2, Y_k = (Z_k - conj Z_{m-k}) / 2i;
    // then put |X_k|² in the real part and |Y_k|² in the imaginary part of one array, whose
    // inverse transform is acov_x + i acov_y because both power spectra are real and even.
    let mut pr = vec![0.0; m];
    let mut pi = vec![0.0; m];
    for k in 0..m {
        let j = (m - k) % m;
        let (zr, zi) = (re[k], im[k]);
        let (cr, ci) = (re[j], -im[j]);
        let (xr, xi) = (0.5 * (zr + cr), 0.5 * (zi + ci));
        // (Z - conj Z_{m-k}) / (2i) = (b, -a)/2 with a + ib = Z - conj Z_{m-k}.
        let (ar, ai) = (zr - cr, zi - ci);
        let (yr, yi) = (0.5 * ai, -0.5 * ar);
        pr[k] = xr * xr + xi * xi;
        pi[k] = yr * yr + yi * yi;
    }
    plan.transform(&mut pr, &mut pi, true);
    let scale = 1.0 / (m as f64 * n as f64);
    let ax = pr[..n].iter().map(|v| v * scale).collect();
    let ay = if y.is_empty() {
        Vec::new()
    } else {
        pi[..n].iter().map(|v| v * scale).collect()
    };
    (ax, ay)
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
        for n in [1usize, 2, 3, 7, 16, 33, 100] {
            let x: Vec<f64> = (0..n).map(|i| ((i * 37 % 11) as f64 - 5.0) * 0.3).collect();
            let y: Vec<f64> = (0..n).map(|i| ((i * 13 % 7) as f64 - 3.0) * 1.7).collect();
            let plan = Fft::new(padded_size(n));
            let (ax, ay) = autocovariance_pair(&plan, &x, &y);
            for (a, b) in ax.iter().zip(naive_acov(&x)) {
                assert!((a - b).abs() < 1e-12, "n {n}: {a} vs {b}");
            }
            for (a, b) in ay.iter().zip(naive_acov(&y)) {
                assert!((a - b).abs() < 1e-12, "n {n}: {a} vs {b}");
            }
        }
    }

    #[test]
    fn inverse_undoes_forward() {
        let plan = Fft::new(64);
        let mut re: Vec<f64> = (0..64).map(|i| (i as f64).sin()).collect();
        let mut im: Vec<f64> = (0..64).map(|i| (i as f64 * 0.3).cos()).collect();
        let (r0, i0) = (re.clone(), im.clone());
        plan.transform(&mut re, &mut im, false);
        plan.transform(&mut re, &mut im, true);
        for k in 0..64 {
            assert!((re[k] / 64.0 - r0[k]).abs() < 1e-13);
            assert!((im[k] / 64.0 - i0[k]).abs() < 1e-13);
        }
    }
}
