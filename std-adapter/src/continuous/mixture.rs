//! The bimodal Gaussian-mixture terms of Zhang et al. (2020), Sec. 6.1.

use super::{ContinuousError, DataMatrix, add_linear, dot, normals};
use langevin_core::continuous::SumPotential;
use std::convert::Infallible;

/// `V_i(θ) = w f_i(θ)` with `exp(−f_i(θ)) = ½ (e^{−|θ − a_i|²/2} + e^{−|θ + a_i|²/2})`, i.e.
/// `f_i(θ) = |θ|²/2 + |a_i|²/2 − ln cosh(a_iᵀθ)`: each term is a symmetric two-component
/// Gaussian mixture, non-convex when `|a_i| > 1`. Zhang et al. (2020) samples `exp(−Σ_i f_i / N)`, the
/// default weight `w = 1/N`.
///
/// As a [`GlmSumTarget`]: `s_i(θ) = −w tanh(a_iᵀθ)`, `z_i = a_i`, `q(θ) = w θ`.
///
/// [`GlmSumTarget`]: langevin_core::continuous::GlmSumTarget
#[derive(Clone, Debug, PartialEq)]
pub struct GaussianMixture {
    a: DataMatrix,
    weight: f64,
}

impl GaussianMixture {
    /// Terms with parameters the rows of `a` and weight `w` (`None`: `1/N`).
    ///
    /// # Errors
    ///
    /// [`ContinuousError::Model`] unless `w` is finite and positive.
    pub fn new(a: DataMatrix, weight: Option<f64>) -> Result<Self, ContinuousError> {
        let weight = weight.unwrap_or(1.0 / a.rows() as f64);
        super::check_variance("scale", weight)?;
        Ok(Self { a, weight })
    }

    /// `n` parameters `a_i ~ N(μ 1, I_d)` from a seeded Xoshiro256++ stream (Zhang et al. 2020: `n = 500`,
    /// `d = 10`, `μ = 2`), weight `1/n`.
    ///
    /// # Errors
    ///
    /// [`ContinuousError::Model`] if `n` or `d` is zero or `mu` is not finite.
    pub fn synthetic(n: usize, d: usize, mu: f64, seed: u64) -> Result<Self, ContinuousError> {
        let v: Vec<f64> = normals(seed, n * d).into_iter().map(|z| z + mu).collect();
        Self::new(DataMatrix::new(n, d, v)?, None)
    }

    /// The parameters `a_i`.
    pub fn a(&self) -> &DataMatrix {
        &self.a
    }

    /// The weight `w`.
    pub fn weight(&self) -> f64 {
        self.weight
    }
}

impl GaussianMixture {
    /// `s_i(θ) = −w tanh(a_iᵀθ)`.
    #[inline]
    fn scalar(&self, i: usize, theta: &[f64]) -> f64 {
        -self.weight * dot(self.a.row(i), theta).tanh()
    }

    /// `acc += scale · ∇V_i(θ)`, with the scale folded into the weight first (`(−scale · w)
    /// tanh`, not `scale · s_i`: the rounding of the original gradient).
    #[inline]
    fn add_grad(&self, i: usize, theta: &[f64], scale: f64, acc: &mut [f64]) {
        let a = self.a.row(i);
        let cs = -scale * self.weight * dot(a, theta).tanh();
        add_linear(acc, a, theta, cs, scale * self.weight);
    }
}

sum_over_rows!(GaussianMixture, a, glm: weight, add_grad);

impl SumPotential for GaussianMixture {
    fn term_potential(&mut self, i: usize, theta: &[f64]) -> Result<f64, Infallible> {
        let a = self.a.row(i);
        let t = dot(a, theta).abs();
        // ln cosh t = t + ln(1 + e^{−2t}) − ln 2, stable for large t.
        let ln_cosh = t + (-2.0 * t).exp().ln_1p() - std::f64::consts::LN_2;
        Ok(self.weight * (0.5 * dot(theta, theta) + 0.5 * dot(a, a) - ln_cosh))
    }
}
