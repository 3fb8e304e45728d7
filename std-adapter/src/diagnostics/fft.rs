//! A radix-2 complex FFT, enough for autocovariances by the Wiener–Khinchin theorem.
//!
//! The forward transform is decimation in frequency (natural order in, bit-reversed order out)
//! and the inverse is decimation in time (bit-reversed in, natural out), so the pair needs no
//! bit-reversal permutation: the power spectrum between them is formed element by element, in
//! whatever order. Twiddle factors are computed one by one with `sincos` (no recurrence), so the
//! round-off of a size-`m` transform grows like `log2(m)` ulps.

/// A transform plan of one power-of-two size.
#[derive(Debug)]
pub(crate) struct Fft {
    size: usize,
    /// Per stage with half-length `h` (1, 2, 4, …), the factors `exp(−πi k / h)` for `k < h`,
    /// stored from offset `h − 1`: each stage reads its factors contiguously.
    twiddles: Vec<(f64, f64)>,
}

impl Fft {
    /// A plan for `size`, which must be a power of two (≥ 1).
    pub(crate) fn new(size: usize) -> Self {
        debug_assert!(size.is_power_of_two());
        let top = size / 2;
        let largest: Vec<(f64, f64)> = (0..top)
            .map(|k| {
                let angle = -core::f64::consts::PI * k as f64 / top as f64;
                let (s, c) = libm::sincos(angle);
                (c, s)
            })
            .collect();
        let mut twiddles = Vec::with_capacity(size.saturating_sub(1));
        let mut half = 1;
        while half < size {
            // exp(−πi k / h) = exp(−πi (k · top/h) / top).
            twiddles.extend(largest.iter().step_by(top / half).copied());
            half *= 2;
        }
        Self { size, twiddles }
    }

    /// The transform size.
    pub(crate) fn size(&self) -> usize {
        self.size
    }

    fn stage(&self, half: usize) -> &[(f64, f64)] {
        &self.twiddles[half - 1..2 * half - 1]
    }

    /// In-place forward transform (kernel `exp(−2πi jk/m)`) of `re + i·im` given in natural
    /// order; the result is left in bit-reversed order.
    pub(crate) fn forward_to_bit_reversed(&self, re: &mut [f64], im: &mut [f64]) {
        debug_assert!(re.len() == self.size && im.len() == self.size);
        // Stages too wide for the cache stream over the whole array; after them, the blocks of
        // `BLOCK` values are independent and each finishes its stages while it is in cache.
        let mut half = self.size / 2;
        while half >= 1 && 2 * half > BLOCK {
            self.dif_stage(half, re, im);
            half /= 2;
        }
        if half >= 1 {
            for (r, i) in re
                .chunks_exact_mut(2 * half)
                .zip(im.chunks_exact_mut(2 * half))
            {
                let mut h = half;
                while h >= 1 {
                    self.dif_stage(h, r, i);
                    h /= 2;
                }
            }
        }
    }

    /// In-place unscaled inverse transform (kernel `exp(+2πi jk/m)`) of a spectrum given in
    /// bit-reversed order; the result is in natural order. Dividing by `size` inverts
    /// [`Self::forward_to_bit_reversed`].
    pub(crate) fn inverse_from_bit_reversed(&self, re: &mut [f64], im: &mut [f64]) {
        debug_assert!(re.len() == self.size && im.len() == self.size);
        let block = self.size.min(BLOCK);
        for (r, i) in re.chunks_exact_mut(block).zip(im.chunks_exact_mut(block)) {
            let mut h = 1;
            while h < block {
                self.dit_stage(h, r, i);
                h *= 2;
            }
        }
        let mut half = block;
        while half < self.size {
            self.dit_stage(half, re, im);
            half *= 2;
        }
    }

    /// One decimation-in-frequency stage of half-length `half` on every block of `2 · half`.
    fn dif_stage(&self, half: usize, re: &mut [f64], im: &mut [f64]) {
        self.butterflies(half, re, im, |ar, ai, br, bi, (wr, wi)| {
            let (ur, ui) = (*ar, *ai);
            let (vr, vi) = (*br, *bi);
            *ar = ur + vr;
            *ai = ui + vi;
            let (dr, di) = (ur - vr, ui - vi);
            *br = dr * wr - di * wi;
            *bi = dr * wi + di * wr;
        });
    }

    /// One decimation-in-time stage (conjugate factors) of half-length `half`.
    fn dit_stage(&self, half: usize, re: &mut [f64], im: &mut [f64]) {
        self.butterflies(half, re, im, |ar, ai, br, bi, (wr, wi)| {
            // t = b · conj(w)
            let tr = *br * wr + *bi * wi;
            let ti = *bi * wr - *br * wi;
            *br = *ar - tr;
            *bi = *ai - ti;
            *ar += tr;
            *ai += ti;
        });
    }

    /// Applies `butterfly(a_re, a_im, b_re, b_im, w)` to every pair `(a, b)` at distance `half`
    /// in every block of `2 · half`, with the stage's factors `w`.
    #[inline(always)]
    fn butterflies<B>(&self, half: usize, re: &mut [f64], im: &mut [f64], butterfly: B)
    where
        B: Fn(&mut f64, &mut f64, &mut f64, &mut f64, (f64, f64)),
    {
        let factors = self.stage(half);
        for (block_re, block_im) in re
            .chunks_exact_mut(2 * half)
            .zip(im.chunks_exact_mut(2 * half))
        {
            let (ar, br) = block_re.split_at_mut(half);
            let (ai, bi) = block_im.split_at_mut(half);
            for ((((ar, ai), br), bi), &w) in ar
                .iter_mut()
                .zip(ai.iter_mut())
                .zip(br.iter_mut())
                .zip(bi.iter_mut())
                .zip(factors)
            {
                butterfly(ar, ai, br, bi, w);
            }
        }
    }
}

/// Values per cache block: 2^13 complex values (128 KiB of `f64`) fit in L2.
const BLOCK: usize = 1 << 13;

/// The smallest power of two `≥ 2n`: zero padding to it makes the circular correlation equal to
/// the linear one for every lag `< n`.
pub(crate) fn padded_size(n: usize) -> usize {
    (2 * n.max(1)).next_power_of_two()
}

/// Power spectrum `|X_k|²` (bit-reversed order) of a real series zero-padded to the plan size.
fn power_spectrum(plan: &Fft, x: &[f64]) -> Vec<f64> {
    let m = plan.size();
    let mut re = vec![0.0; m];
    let mut im = vec![0.0; m];
    re[..x.len()].copy_from_slice(x);
    plan.forward_to_bit_reversed(&mut re, &mut im);
    for (r, i) in re.iter_mut().zip(&im) {
        *r = *r * *r + i * i;
    }
    re
}

/// Biased autocovariances (divided by `n`) of two centred real series of the same length `n`,
/// lags `0..n`. `y` may be empty, in which case the second result is empty.
///
/// Each series takes one forward transform; the two power spectra, real and even, share one
/// inverse transform as its real and imaginary parts.
pub(crate) fn autocovariance_pair(plan: &Fft, x: &[f64], y: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let n = x.len();
    debug_assert!(plan.size() >= 2 * n && (y.is_empty() || y.len() == n));
    let mut re = power_spectrum(plan, x);
    let mut im = if y.is_empty() {
        vec![0.0; plan.size()]
    } else {
        power_spectrum(plan, y)
    };
    plan.inverse_from_bit_reversed(&mut re, &mut im);
    let scale = 1.0 / (plan.size() as f64 * n as f64);
    let ax = re[..n].iter().map(|v| v * scale).collect();
    let ay = if y.is_empty() {
        Vec::new()
    } else {
        im[..n].iter().map(|v| v * scale).collect()
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
            let (single, none) = autocovariance_pair(&plan, &x, &[]);
            for (a, b) in single.iter().zip(&ax) {
                assert!((a - b).abs() < 1e-12);
            }
            assert!(none.is_empty());
        }
    }

    #[test]
    fn forward_matches_the_definition_and_inverse_undoes_it() {
        for m in [1, 2, 32, 4 * BLOCK] {
            check_transform(m);
        }
    }

    fn check_transform(m: usize) {
        let plan = Fft::new(m);
        let mut re: Vec<f64> = (0..m).map(|i| (i as f64).sin()).collect();
        let mut im: Vec<f64> = (0..m).map(|i| (i as f64 * 0.3).cos()).collect();
        let (r0, i0) = (re.clone(), im.clone());
        plan.forward_to_bit_reversed(&mut re, &mut im);
        let bits = m.trailing_zeros();
        // All frequencies of small transforms, a spread of them for the large one.
        for k in (0..m).step_by((m / 64).max(1)) {
            let (mut sr, mut si) = (0.0, 0.0);
            for j in 0..m {
                // Reduce j·k mod m first so the angle stays accurate.
                let a = -core::f64::consts::TAU * ((j * k) % m) as f64 / m as f64;
                sr += r0[j] * a.cos() - i0[j] * a.sin();
                si += r0[j] * a.sin() + i0[j] * a.cos();
            }
            let p = if m == 1 {
                0
            } else {
                k.reverse_bits() >> (usize::BITS - bits)
            };
            let tol = 1e-13 * m as f64;
            assert!(
                (re[p] - sr).abs() < tol && (im[p] - si).abs() < tol,
                "m {m}, k {k}"
            );
        }
        plan.inverse_from_bit_reversed(&mut re, &mut im);
        for k in 0..m {
            assert!((re[k] / m as f64 - r0[k]).abs() < 1e-13);
            assert!((im[k] / m as f64 - i0[k]).abs() < 1e-13);
        }
    }
}
