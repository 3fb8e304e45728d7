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
        let d = check_model(w, b)?;
        let grad = Cache::new(cache, d)?;
        Ok(Self { grad, w, b })
    }
}

/// Checks `W` (`d²` entries) and `b` (`d`, at least 1), all finite; returns `d`. Shared with
/// the batched target.
pub(super) fn check_model(w: &[f32], b: &[f32]) -> Result<usize, ParamError> {
    let (d, d2) = ParamError::check_square(b.len())?;
    LenError::check("W", d2, w.len())?;
    ParamError::check_finite("W", w)?;
    ParamError::check_finite("b", b)?;
    Ok(d)
}

/// `U(x) = xᵀWx + bᵀx`, with the gradient `(W + Wᵀ)x + b` written into `g` (`d` doubles).
/// Shared by [`BinaryQuadratic`] and the batched target, so that their values agree bit for bit.
pub(super) fn full(w: &[f32], b: &[f32], x: &[u8], g: &mut [f64]) -> f64 {
    let d = b.len();
    // grad = W x (row dots) + Wᵀ x (rows of the active coordinates) + b.
    let mut u = 0.0f64;
    for (j, ((g, &bj), &xj)) in g.iter_mut().zip(b).zip(x).enumerate() {
        let row = w.get(j * d..(j + 1) * d).unwrap_or(&[]);
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
            let row = w.get(k * d..(k + 1) * d).unwrap_or(&[]);
            for (g, &w) in g.iter_mut().zip(row) {
                *g += f64::from(w);
            }
        }
    }
    u
}

/// Moves coordinate `i` by `delta` (`±1`): adds `delta·(W_i· + W_·i)` to the gradient `g` of
/// the state before the move (`column` iterates over `W_·i`) and returns
/// `U(x + δe_i) − U(x) = δ g_i + W_ii δ²` (exact for a quadratic). `d = g.len()`.
#[inline(always)]
pub(super) fn flip<'w>(
    g: &mut [f64],
    w: &[f32],
    i: usize,
    delta: f64,
    column: impl Iterator<Item = &'w f32>,
) -> f64 {
    let d = g.len();
    let w_ii = f64::from(w.get(i * d + i).copied().unwrap_or(0.0));
    let g_i = g.get(i).copied().unwrap_or(0.0);
    let delta_u = delta * g_i + w_ii * delta * delta;
    let row = w.get(i * d..(i + 1) * d).unwrap_or(&[]);
    for ((g, &w_ij), &w_ji) in g.iter_mut().zip(row).zip(column) {
        *g += delta * (f64::from(w_ij) + f64::from(w_ji));
    }
    delta_u
}

/// As [`flip`], with the row `s` of `S = W + Wᵀ` formed in `f64` (`s_j = W_ij + W_ji`, each
/// entry the sum [`flip`] forms): the same values, bit for bit, from one contiguous row.
#[inline(always)]
pub(super) fn flip_sym(g: &mut [f64], w: &[f32], i: usize, delta: f64, s: &[f64]) -> f64 {
    let d = g.len();
    let w_ii = f64::from(w.get(i * d + i).copied().unwrap_or(0.0));
    let g_i = g.get(i).copied().unwrap_or(0.0);
    let delta_u = delta * g_i + w_ii * delta * delta;
    for (g, &s_ij) in g.iter_mut().zip(s) {
        *g += delta * s_ij;
    }
    delta_u
}

/// Writes the cached gradient `g` into `grad` in single precision; passes `u` through.
pub(super) fn narrow(grad: &mut [f32], g: &[f64], u: f64) -> f64 {
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

    #[cfg_attr(target_arch = "x86_64", inline(always))]
    fn log_density_and_grad(&mut self, x: &[u8], grad: &mut [f32]) -> Result<f64, Infallible> {
        let u = full(self.w, self.b, x, self.grad.current);
        Ok(narrow(grad, self.grad.current, u))
    }

    #[cfg_attr(target_arch = "x86_64", inline(always))]
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
            let column = self.w.get(i..).unwrap_or(&[]).iter().step_by(d.max(1));
            delta_u += flip(proposal, self.w, i, delta, column);
        }
        Ok(narrow(grad, proposal, mv.from_log_density + delta_u))
    }

    fn commit(&mut self) {
        self.grad.commit();
    }

    fn running_sums(&self) -> &[f64] {
        self.grad.current
    }

    fn running_sums_mut(&mut self) -> &mut [f64] {
        self.grad.current
    }
}

impl crate::baselines::FlipDelta for BinaryQuadratic<'_> {
    #[cfg_attr(target_arch = "x86_64", inline(always))]
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
