//! Bayesian logistic regression over binary coefficients.

use super::Cache;
use crate::error::{LenError, ParamError};
use crate::math::{sigmoid, softplus};
use crate::target::{BinaryTarget, FlipMove};
use core::convert::Infallible;

/// The posterior of binary coefficients `β ∈ {0,1}^d` of a logistic regression with a uniform
/// prior, data `X` (`m × d`, row-major) and responses `y ∈ {0,1}^m`:
///
/// `U(β) = Σ_i [y_i v_i − ln(1 + e^{v_i})]`, `v = Xβ`, and `∇U = Xᵀ(y − σ(v))`.
///
/// The linear predictors `v` are cached in `f64` in a caller buffer of `2m` doubles (current
/// and proposed); a move adds the flipped columns of `X`.
///
/// # Examples
///
/// ```
/// use langevin_core::models::BinaryLogistic;
/// use langevin_core::BinaryTarget;
/// let (x, y) = ([1.0f32, -1.0], [1.0f32]);
/// let mut cache = [0.0f64; 2];
/// let mut m = BinaryLogistic::new(&x, &y, &mut cache).unwrap();
/// let mut g = [0.0f32; 2];
/// // β = (1, 0): v = 1, U = 1 − ln(1 + e).
/// let u = m.log_density_and_grad(&[1, 0], &mut g).unwrap();
/// assert!((u - (1.0 - (1.0f64 + 1f64.exp()).ln())).abs() < 1e-12);
/// ```
#[derive(Debug)]
pub struct BinaryLogistic<'a> {
    /// The linear predictors `v = Xβ`.
    linear: Cache<'a>,
    x: &'a [f32],
    y: &'a [f32],
}

/// Checks `X` (`m·d` entries, finite, at least one row and column) and `y` (`m` entries, each
/// 0 or 1); returns `(m, d)`. Shared with the batched target.
pub(super) fn check_data(x: &[f32], y: &[f32]) -> Result<(usize, usize), ParamError> {
    let m = y.len();
    if m == 0 || x.is_empty() {
        return Err(ParamError::EmptyDimension);
    }
    if !x.len().is_multiple_of(m) {
        return Err(ParamError::Len(LenError {
            buffer: "X",
            expected: m * (x.len() / m + 1),
            found: x.len(),
        }));
    }
    ParamError::check_finite("X", x)?;
    if let Some(&bad) = y.iter().find(|&&v| v != 0.0 && v != 1.0) {
        return Err(ParamError::OutOfRange {
            name: "y",
            value: f64::from(bad),
        });
    }
    Ok((m, x.len() / m))
}

impl<'a> BinaryLogistic<'a> {
    /// Wraps `X` (`m·d` entries), `y` (`m` entries, each 0 or 1) and a cache of `2m` doubles.
    ///
    /// # Errors
    ///
    /// [`ParamError::EmptyDimension`] for no rows or no columns, [`ParamError::Len`] for
    /// mismatched lengths, [`ParamError::NonFinite`] for non-finite data and
    /// [`ParamError::OutOfRange`] for a response other than 0 or 1.
    pub fn new(x: &'a [f32], y: &'a [f32], cache: &'a mut [f64]) -> Result<Self, ParamError> {
        let (m, _) = check_data(x, y)?;
        let linear = Cache::new(cache, m)?;
        Ok(Self { linear, x, y })
    }

    fn cols(&self) -> usize {
        self.x.len() / self.y.len().max(1)
    }

    /// `U` and `∇U` from the linear predictors `v`.
    fn finish(&self, v: &[f64], grad: &mut [f32]) -> f64 {
        let d = self.cols();
        let mut u = 0.0;
        grad.fill(0.0);
        for (i, (&vi, &yi)) in v.iter().zip(self.y).enumerate() {
            u += f64::from(yi) * vi - softplus(vi);
            let residual = (f64::from(yi) - sigmoid(vi)) as f32;
            let row = self.x.get(i * d..(i + 1) * d).unwrap_or(&[]);
            for (g, &xij) in grad.iter_mut().zip(row) {
                *g += residual * xij;
            }
        }
        u
    }
}

impl BinaryTarget for BinaryLogistic<'_> {
    type Error = Infallible;

    fn dim(&self) -> usize {
        self.cols()
    }

    #[cfg_attr(target_arch = "x86_64", inline(always))]
    fn log_density_and_grad(&mut self, beta: &[u8], grad: &mut [f32]) -> Result<f64, Infallible> {
        let d = self.cols();
        for (i, v) in self.linear.current.iter_mut().enumerate() {
            let row = self.x.get(i * d..(i + 1) * d).unwrap_or(&[]);
            *v = row
                .iter()
                .zip(beta)
                .map(|(&xij, &bj)| f64::from(xij) * f64::from(bj))
                .sum();
        }
        Ok(self.finish(self.linear.current, grad))
    }

    #[cfg_attr(target_arch = "x86_64", inline(always))]
    fn log_density_and_grad_after(
        &mut self,
        mv: &FlipMove<'_>,
        grad: &mut [f32],
    ) -> Result<f64, Infallible> {
        let d = self.cols();
        let linear = self.linear.propose();
        for &j in mv.flipped {
            let j = j as usize;
            let (Some(&from), Some(&to)) = (mv.from.get(j), mv.to.get(j)) else {
                continue;
            };
            let delta = f64::from(to) - f64::from(from);
            let column = self.x.get(j..).unwrap_or(&[]).iter().step_by(d.max(1));
            for (v, &xij) in linear.iter_mut().zip(column) {
                *v += delta * f64::from(xij);
            }
        }
        Ok(self.finish(self.linear.proposal, grad))
    }

    fn commit(&mut self) {
        self.linear.commit();
    }

    fn running_sums(&self) -> &[f64] {
        self.linear.current
    }

    fn running_sums_mut(&mut self) -> &mut [f64] {
        self.linear.current
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn incremental_equals_full() {
        let x: [f32; 12] = [
            0.3, -1.2, 0.5, 2.0, 0.1, -0.7, 1.1, 0.4, -0.2, 0.9, -1.5, 0.6,
        ];
        let y = [1.0f32, 0.0, 1.0];
        let (mut c1, mut c2) = ([0.0f64; 6], [0.0f64; 6]);
        let mut inc = BinaryLogistic::new(&x, &y, &mut c1).unwrap();
        let mut full = BinaryLogistic::new(&x, &y, &mut c2).unwrap();
        let from = [1u8, 0, 0, 1];
        let to = [0u8, 0, 1, 1];
        let mut g_from = [0.0f32; 4];
        let u_from = inc.log_density_and_grad(&from, &mut g_from).unwrap();
        let mv = FlipMove {
            from: &from,
            to: &to,
            flipped: &[0, 2],
            from_log_density: u_from,
            from_grad: &g_from,
        };
        let (mut g_inc, mut g_full) = ([0.0f32; 4], [0.0f32; 4]);
        let u_inc = inc.log_density_and_grad_after(&mv, &mut g_inc).unwrap();
        let u_full = full.log_density_and_grad(&to, &mut g_full).unwrap();
        assert!((u_inc - u_full).abs() < 1e-12);
        assert_eq!(g_inc, g_full);
    }
}
