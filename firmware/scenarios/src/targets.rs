//! Small fixed targets for the label and continuous kernels, with parameters from integer
//! formulas (exact in binary floating point), so that every platform evaluates them bit for bit
//! alike. The workspace's host golden test compiles this very file, so the boards and the host
//! hash the same targets.
//!
//! * [`LatticeGauss`]: an ordinal lattice Gaussian on a ring, `S = 5` values per coordinate.
//! * [`RingPotts`]: a categorical Potts ring with `S = 3` labels and per-site fields.
//! * [`Ridge`]: ridge regression on 16 fixed rows of 4 features, a sum of 16 terms
//!   (a [`GlmSumTarget`]).
//! * [`second_order_params`]: a symmetric `W`, diagonal `D` and upper-triangular factor `A` with
//!   `AᵀA = b(W + D)` exactly, for the second-order kernel.

use core::convert::Infallible;
use langevin_core::categorical::{CategoricalConditional, CategoricalTarget};
use langevin_core::continuous::{GlmSumTarget, SumTarget};
use langevin_core::ordinal::{OrdinalConditional, OrdinalTarget};

/// Values per coordinate of [`LatticeGauss`].
pub const GAUSS_STATES: usize = 5;
/// Labels per site of [`RingPotts`].
pub const POTTS_STATES: usize = 3;

/// `U(x) = −τ/2 Σ_i (x_i − μ_i)² + ρ Σ_i (x_i − 2)(x_{i+1} − 2)` on a ring of `D` coordinates
/// with values `0..5`, `τ = 0.5`, `ρ = 0.25`, `μ_i = i mod 5`. The gradient is that of the same
/// formula on `R^D`.
#[derive(Clone, Copy, Debug, Default)]
pub struct LatticeGauss<const D: usize>;

const TAU: f64 = 0.5;
const RHO: f64 = 0.25;

fn centred(x: &[u16], i: usize) -> f64 {
    x.get(i).map_or(0.0, |&v| f64::from(v) - 2.0)
}

impl<const D: usize> LatticeGauss<D> {
    /// The terms of `U` that involve coordinate `i` at value `v`, the others as in `x`.
    fn local(x: &[u16], i: usize, v: f64) -> f64 {
        let mu = (i % GAUSS_STATES) as f64;
        let (l, r) = ((i + D - 1) % D, (i + 1) % D);
        -0.5 * TAU * (v - mu) * (v - mu) + RHO * (v - 2.0) * (centred(x, l) + centred(x, r))
    }
}

impl<const D: usize> OrdinalTarget for LatticeGauss<D> {
    type Error = Infallible;

    fn dim(&self) -> usize {
        D
    }

    fn states(&self) -> usize {
        GAUSS_STATES
    }

    fn log_density_and_grad(&mut self, x: &[u16], grad: &mut [f32]) -> Result<f64, Infallible> {
        let mut u = 0.0;
        for (i, (g, &xi)) in grad.iter_mut().zip(x).enumerate() {
            let v = f64::from(xi);
            let mu = (i % GAUSS_STATES) as f64;
            let (l, r) = ((i + D - 1) % D, (i + 1) % D);
            u += -0.5 * TAU * (v - mu) * (v - mu) + RHO * (v - 2.0) * centred(x, r);
            *g = (-TAU * (v - mu) + RHO * (centred(x, l) + centred(x, r))) as f32;
        }
        Ok(u)
    }
}

impl<const D: usize> OrdinalConditional for LatticeGauss<D> {
    fn conditional(&mut self, x: &[u16], i: usize, out: &mut [f64]) -> Result<(), Infallible> {
        for (k, o) in out.iter_mut().enumerate() {
            *o = Self::local(x, i, k as f64);
        }
        Ok(())
    }
}

/// `U(x) = J Σ_i [x_i = x_{i+1}] + Σ_i h_{i, x_i}` on a ring of `D` sites with 3 labels,
/// `J = 0.5`, `h_{i,k} = ((i + 2k) mod 3 − 1) / 4`. The one-hot gradient is
/// `h_{i,k} + J([x_{i−1} = k] + [x_{i+1} = k])`.
#[derive(Clone, Copy, Debug, Default)]
pub struct RingPotts<const D: usize>;

const POTTS_J: f64 = 0.5;

fn potts_field(i: usize, k: usize) -> f64 {
    (((i + 2 * k) % POTTS_STATES) as f64 - 1.0) * 0.25
}

impl<const D: usize> RingPotts<D> {
    fn local(x: &[u16], i: usize, k: usize) -> f64 {
        let (l, r) = ((i + D - 1) % D, (i + 1) % D);
        let same = |j: usize| {
            x.get(j)
                .map_or(0.0, |&v| f64::from(u8::from(usize::from(v) == k)))
        };
        potts_field(i, k) + POTTS_J * (same(l) + same(r))
    }
}

impl<const D: usize> CategoricalTarget for RingPotts<D> {
    type Error = Infallible;

    fn dim(&self) -> usize {
        D
    }

    fn states(&self) -> usize {
        POTTS_STATES
    }

    fn log_density_and_grad(&mut self, x: &[u16], grad: &mut [f32]) -> Result<f64, Infallible> {
        let mut u = 0.0;
        for (i, (row, &xi)) in grad.chunks_exact_mut(POTTS_STATES).zip(x).enumerate() {
            let next = x.get((i + 1) % D).copied().unwrap_or(u16::MAX);
            u += potts_field(i, usize::from(xi)) + POTTS_J * f64::from(u8::from(xi == next));
            for (k, g) in row.iter_mut().enumerate() {
                *g = Self::local(x, i, k) as f32;
            }
        }
        Ok(u)
    }
}

impl<const D: usize> CategoricalConditional for RingPotts<D> {
    fn conditional(&mut self, x: &[u16], i: usize, out: &mut [f64]) -> Result<(), Infallible> {
        for (k, o) in out.iter_mut().enumerate() {
            *o = Self::local(x, i, k);
        }
        Ok(())
    }
}

/// Features of [`Ridge`].
pub const RIDGE_DIM: usize = 4;
/// Rows (terms) of [`Ridge`].
pub const RIDGE_TERMS: usize = 16;
const RIDGE_LAMBDA: f64 = 1.0;

fn ridge_feature(i: usize, j: usize) -> f64 {
    (((i * 3 + j * 5) % 7) as f64 - 3.0) * 0.25
}

fn ridge_response(i: usize) -> f64 {
    ((i % 5) as f64 - 2.0) * 0.5
}

/// `V(θ) = Σ_i ½(z_iᵀθ − y_i)² + ½λ‖θ‖²` over 16 rows, `λ = 1`, with
/// `z_ij = ((3i + 5j) mod 7 − 3) / 4` and `y_i = ((i mod 5) − 2) / 2`; the prior's gradient is
/// spread evenly over the terms, so `∇V_i = (z_iᵀθ − y_i) z_i + λθ/N`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Ridge;

impl SumTarget for Ridge {
    type Error = Infallible;

    fn dim(&self) -> usize {
        RIDGE_DIM
    }

    fn num_terms(&self) -> usize {
        RIDGE_TERMS
    }

    fn add_term_grad(
        &mut self,
        i: usize,
        theta: &[f64],
        scale: f64,
        acc: &mut [f64],
    ) -> Result<(), Infallible> {
        let s = self.term_scalar(i, theta)?;
        self.add_term_data(i, scale * s, acc);
        self.add_shared_grad(theta, scale, acc)
    }
}

impl GlmSumTarget for Ridge {
    fn term_scalar(&mut self, i: usize, theta: &[f64]) -> Result<f64, Infallible> {
        let mut r = -ridge_response(i);
        for (j, t) in theta.iter().enumerate() {
            r += ridge_feature(i, j) * t;
        }
        Ok(r)
    }

    fn add_term_data(&self, i: usize, scale: f64, acc: &mut [f64]) {
        for (j, a) in acc.iter_mut().enumerate() {
            *a += scale * ridge_feature(i, j);
        }
    }

    fn add_shared_grad(
        &mut self,
        theta: &[f64],
        scale: f64,
        acc: &mut [f64],
    ) -> Result<(), Infallible> {
        let c = scale * RIDGE_LAMBDA / RIDGE_TERMS as f64;
        for (a, t) in acc.iter_mut().zip(theta) {
            *a += c * t;
        }
        Ok(())
    }
}

/// Dimension of the second-order run.
pub const SECOND_DIM: usize = 8;
/// Balance `b` of the second-order run.
pub const SECOND_BALANCE: f64 = 0.5;

/// `(W, D, A, b)` for the second-order kernel, `d = 8`: `A` upper triangular with dyadic entries,
/// `D = I`, and `W = AᵀA / b − D`, so that `AᵀA = b(W + D)` holds exactly. Also the binary
/// quadratic target's `W`, with field `bias`.
#[allow(clippy::type_complexity, reason = "four fixed arrays")]
pub fn second_order_params() -> (
    [f32; SECOND_DIM * SECOND_DIM],
    [f32; SECOND_DIM],
    [f32; SECOND_DIM * SECOND_DIM],
    [f32; SECOND_DIM],
) {
    let d = SECOND_DIM;
    let mut a = [0.0f32; SECOND_DIM * SECOND_DIM];
    for (k, v) in a.iter_mut().enumerate() {
        let (i, j) = (k / d, k % d);
        *v = if j < i {
            0.0
        } else if j == i {
            1.0
        } else {
            (((i * 5 + j * 3) % 5) as f32 - 2.0) * 0.125
        };
    }
    let diag = [1.0f32; SECOND_DIM];
    let mut w = [0.0f32; SECOND_DIM * SECOND_DIM];
    for (k, v) in w.iter_mut().enumerate() {
        let (i, j) = (k / d, k % d);
        // (AᵀA)_ij = Σ_r A_ri A_rj, in a fixed order.
        let mut s = 0.0f32;
        for r in 0..d {
            let ari = a.get(r * d + i).copied().unwrap_or(0.0);
            let arj = a.get(r * d + j).copied().unwrap_or(0.0);
            s += ari * arj;
        }
        *v = s / SECOND_BALANCE as f32 - if i == j { 1.0 } else { 0.0 };
    }
    let mut bias = [0.0f32; SECOND_DIM];
    for (i, v) in bias.iter_mut().enumerate() {
        *v = ((i % 3) as f32 - 1.0) * 0.5 - 1.0;
    }
    (w, diag, a, bias)
}
