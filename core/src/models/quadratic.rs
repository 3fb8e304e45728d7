//! The dense binary quadratic model.

use super::Cache;
use crate::error::{LenError, ParamError};
use crate::target::{BinaryTarget, FlipMove};
use core::convert::Infallible;

/// `U(x) = xᵀWx + bᵀx` over `x ∈ {0,1}^d`, with `W` (`d × d`, row-major, used as given, need not
/// be symmetric) and `b` borrowed from the caller.
///
/// The gradient of the quadratic extension is `(W + Wᵀ)x + b`. It is kept in two caller-provided
/// `f64` buffers of length `d` (current and proposed), so that after a move only the flipped
/// coordinates' rows and columns of `W` are read, and rounding does not drift over long runs.
///
/// # Examples
///
/// ```
/// use langevin_core::models::BinaryQuadratic;
/// use langevin_core::BinaryTarget;
/// let w = [0.0, 1.0, 0.0, 0.0];
/// let b = [0.5, -0.5];
/// let mut cache = [0.0f64; 4];
/// let mut m = BinaryQuadratic::new(&w, &b, &mut cache).unwrap();
/// let mut g = [0.0f32; 2];
/// assert_eq!(m.log_density_and_grad(&[1, 1], &mut g).unwrap(), 1.0);
/// assert_eq!(g, [1.5, 0.5]);
/// ```
#[derive(Debug)]
pub struct BinaryQuadratic<'a> {
    /// The gradient `(W + Wᵀ)x + b`.
    grad: Cache<'a>,
    w: &'a [f32],
    b: &'a [f32],
}

impl<'a> BinaryQuadratic<'a> {
    /// Wraps `W` (`d²` entries), `b` (`d`) and a cache of `2d` doubles.
    ///
    /// # Errors
    ///
    /// [`ParamError::EmptyDimension`] for `d = 0`, [`ParamError::Len`] for mismatched lengths,
    /// [`ParamError::NonFinite`] for a non-finite entry of `W` or `b`.
    pub fn new(w: &'a [f32], b: &'a [f32], cache: &'a mut [f64]) -> Result<Self, ParamError> {
        let d = b.len();
        if d == 0 {
            return Err(ParamError::EmptyDimension);
        }
        let d2 = d.checked_mul(d).ok_or(ParamError::OutOfRange {
            name: "dimension",
            value: d as f64,
        })?;
        LenError::check("W", d2, w.len())?;
        let grad = Cache::new(cache, d)?;
        if w.iter().any(|v| !v.is_finite()) {
            return Err(ParamError::NonFinite("W"));
        }
        if b.iter().any(|v| !v.is_finite()) {
            return Err(ParamError::NonFinite("b"));
        }
        Ok(Self { grad, w, b })
    }
}

/// Writes the cached gradient `g` into `grad` in single precision; passes `u` through.
fn narrow(grad: &mut [f32], g: &[f64], u: f64) -> f64 {
    for (out, &g) in grad.iter_mut().zip(g) {
        *out = g as f32;
    }
    u
}

impl BinaryTarget for BinaryQuadratic<'_> {
    type Error = Infallible;

    fn dim(&self) -> usize {
        self.b.len()
    }

    #[inline(always)]
    fn log_density_and_grad(&mut self, x: &[u8], grad: &mut [f32]) -> Result<f64, Infallible> {
        let d = self.b.len();
        // grad = W x (row dots) + Wᵀ x (rows of the active coordinates) + b.
        let mut u = 0.0f64;
        let cached = &mut *self.grad.current;
        for (j, ((g, &bj), &xj)) in cached.iter_mut().zip(self.b).zip(x).enumerate() {
            let row = self.w.get(j * d..(j + 1) * d).unwrap_or(&[]);
            let wx: f64 = row
                .iter()
                .zip(x)
                .map(|(&w, &xk)| f64::from(w) * f64::from(xk))
                .sum();
            *g = wx + f64::from(bj);
            u += f64::from(xj) * (wx + f64::from(bj));
        }
        for (k, &xk) in x.iter().enumerate() {
            if xk != 0 {
                let row = self.w.get(k * d..(k + 1) * d).unwrap_or(&[]);
                for (g, &w) in cached.iter_mut().zip(row) {
                    *g += f64::from(w);
                }
            }
        }
        Ok(narrow(grad, cached, u))
    }

    #[inline(always)]
    fn log_density_and_grad_after(
        &mut self,
        mv: &FlipMove<'_>,
        grad: &mut [f32],
    ) -> Result<f64, Infallible> {
        let d = self.b.len();
        let proposal = self.grad.propose();
        let mut delta_u = 0.0f64;
        for &i in mv.flipped {
            let i = i as usize;
            let (Some(&from), Some(&to)) = (mv.from.get(i), mv.to.get(i)) else {
                continue;
            };
            let delta = f64::from(to) - f64::from(from);
            let w_ii = f64::from(self.w.get(i * d + i).copied().unwrap_or(0.0));
            let g_i = proposal.get(i).copied().unwrap_or(0.0);
            // U(x + δe_i) − U(x) = δ g_i + W_ii δ² (exact for a quadratic).
            delta_u += delta * g_i + w_ii * delta * delta;
            let column = self.w.get(i..).unwrap_or(&[]).iter().step_by(d.max(1));
            let row = self.w.get(i * d..(i + 1) * d).unwrap_or(&[]);
            for ((g, &w_ij), &w_ji) in proposal.iter_mut().zip(row).zip(column) {
                *g += delta * (f64::from(w_ij) + f64::from(w_ji));
            }
        }
        Ok(narrow(grad, proposal, mv.from_log_density + delta_u))
    }

    fn commit(&mut self) {
        self.grad.commit();
    }
}

impl crate::baselines::FlipDelta for BinaryQuadratic<'_> {
    #[inline(always)]
    fn log_density_delta(&mut self, x: &[u8], i: usize) -> Result<f64, Infallible> {
        // U(x + δe_i) − U(x) = δ g_i + W_ii δ² with the cached gradient g of the current state.
        let d = self.b.len();
        let delta = 1.0 - 2.0 * f64::from(x.get(i).copied().unwrap_or(0));
        let w_ii = f64::from(self.w.get(i * d + i).copied().unwrap_or(0.0));
        let g_i = self.grad.current.get(i).copied().unwrap_or(0.0);
        Ok(delta * g_i + w_ii * delta * delta)
    }

    fn commit_flip(&mut self, x: &[u8], i: usize) {
        let d = self.b.len();
        // x is already flipped: δ = x_i − old = 2x_i − 1.
        let delta = 2.0 * f64::from(x.get(i).copied().unwrap_or(0)) - 1.0;
        let column = self.w.get(i..).unwrap_or(&[]).iter().step_by(d.max(1));
        let row = self.w.get(i * d..(i + 1) * d).unwrap_or(&[]);
        for ((g, &w_ij), &w_ji) in self.grad.current.iter_mut().zip(row).zip(column) {
            *g += delta * (f64::from(w_ij) + f64::from(w_ji));
        }
    }
}
