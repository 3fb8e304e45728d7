//! Comparing an ensemble of draws with a Gaussian reference.

use nalgebra::{DMatrix, DVector};

/// Mean and covariance (divisor `n − 1`, row-major `d × d`) of draw `k` across the chains of
/// samples laid out `(chains, draws, d)`.
///
/// # Panics
///
/// If `k ≥ draws` or the lengths do not match the shape.
pub fn ensemble_moments(samples: &[f32], shape: [usize; 3], k: usize) -> (Vec<f64>, Vec<f64>) {
    let [chains, draws, d] = shape;
    assert!(k < draws && samples.len() == chains * draws * d);
    let rows: Vec<&[f32]> = (0..chains)
        .map(|c| &samples[(c * draws + k) * d..(c * draws + k + 1) * d])
        .collect();
    moments(&rows, d)
}

/// Mean and covariance (divisor `n − 1`, row-major) of the given rows.
pub fn moments(rows: &[&[f32]], d: usize) -> (Vec<f64>, Vec<f64>) {
    let n = rows.len() as f64;
    let mut mean = vec![0.0; d];
    for r in rows {
        for (m, &x) in mean.iter_mut().zip(r.iter()) {
            *m += f64::from(x) / n;
        }
    }
    let mut cov = vec![0.0; d * d];
    for r in rows {
        for i in 0..d {
            let ei = f64::from(r[i]) - mean[i];
            for j in 0..d {
                cov[i * d + j] += ei * (f64::from(r[j]) - mean[j]);
            }
        }
    }
    let denom = (n - 1.0).max(1.0);
    cov.iter_mut().for_each(|c| *c /= denom);
    (mean, cov)
}

fn mat(d: usize, v: &[f64]) -> DMatrix<f64> {
    DMatrix::from_row_slice(d, d, v)
}

/// `KL(N(m1, c1) ‖ N(m0, c0))` in nats; covariances row-major `d × d`. Infinite if `c1` or
/// `c0` is not positive definite.
///
/// # Examples
///
/// ```
/// use langevin_std::continuous::metrics::gaussian_kl;
/// let kl = gaussian_kl(&[0.0], &[2.0], &[0.0], &[1.0]);
/// assert!((kl - 0.5 * (2.0 - 1.0 - 2f64.ln())).abs() < 1e-12);
/// ```
pub fn gaussian_kl(m1: &[f64], c1: &[f64], m0: &[f64], c0: &[f64]) -> f64 {
    let d = m1.len();
    let (s1, s0) = (mat(d, c1), mat(d, c0));
    let (Some(ch0), Some(ch1)) = (s0.clone().cholesky(), s1.clone().cholesky()) else {
        return f64::INFINITY;
    };
    let logdet = |l: &DMatrix<f64>| 2.0 * l.diagonal().iter().map(|x| x.ln()).sum::<f64>();
    let dm = DVector::from_column_slice(m0) - DVector::from_column_slice(m1);
    let tr = ch0.solve(&s1).trace();
    let quad = dm.dot(&ch0.solve(&dm));
    0.5 * (tr + quad - d as f64 + logdet(&ch0.l()) - logdet(&ch1.l()))
}

/// The 2-Wasserstein distance between `N(m1, c1)` and `N(m0, c0)`:
/// `√(|m1 − m0|² + tr(c1 + c0 − 2 (c0^{½} c1 c0^{½})^{½}))`.
pub fn gaussian_w2(m1: &[f64], c1: &[f64], m0: &[f64], c0: &[f64]) -> f64 {
    let d = m1.len();
    let sqrt_psd = |m: DMatrix<f64>| {
        let e = m.symmetric_eigen();
        let vals = e.eigenvalues.map(|v| v.max(0.0).sqrt());
        &e.eigenvectors * DMatrix::from_diagonal(&vals) * e.eigenvectors.transpose()
    };
    let (s1, s0) = (mat(d, c1), mat(d, c0));
    let r0 = sqrt_psd(s0.clone());
    let cross = sqrt_psd(&r0 * &s1 * &r0);
    let mean2: f64 = m1.iter().zip(m0).map(|(a, b)| (a - b) * (a - b)).sum();
    let tr = (s1 + s0 - cross * 2.0).trace();
    (mean2 + tr.max(0.0)).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kl_and_w2_of_equal_laws_vanish() {
        let c = [2.0, 0.3, 0.3, 1.0];
        assert!(gaussian_kl(&[1.0, 2.0], &c, &[1.0, 2.0], &c).abs() < 1e-12);
        assert!(gaussian_w2(&[1.0, 2.0], &c, &[1.0, 2.0], &c) < 1e-7);
    }

    #[test]
    fn w2_of_scaled_isotropic() {
        // W2(N(0, a² I), N(0, b² I)) = √d |a − b|.
        let w = gaussian_w2(
            &[0.0, 0.0],
            &[4.0, 0.0, 0.0, 4.0],
            &[0.0, 0.0],
            &[1.0, 0.0, 0.0, 1.0],
        );
        assert!((w - 2f64.sqrt()).abs() < 1e-12);
    }
}
