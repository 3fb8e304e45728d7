//! Bayesian ridge (linear) regression with a Gaussian prior.

use super::{
    ContinuousError, DataMatrix, ModelDataError, check_responses, check_variance, dot, normals,
};
use langevin_core::continuous::SumPotential;
use nalgebra::{DMatrix, DVector};
use std::convert::Infallible;
use std::sync::Arc;

/// `y_i ~ N(x_iᵀθ, λ)` with prior `N(0, v I)`, as a sum
/// `V_i(θ) = (y_i − x_iᵀθ)² / (2λ) + |θ|² / (2 v N)`.
///
/// As a [`GlmSumTarget`]: `s_i(θ) = (x_iᵀθ − y_i)/λ`, `z_i = x_i`, `q(θ) = θ / (v N)`. The
/// posterior is Gaussian and known exactly ([`posterior`](Self::posterior)).
///
/// [`GlmSumTarget`]: langevin_core::continuous::GlmSumTarget
#[derive(Clone, Debug, PartialEq)]
pub struct RidgeRegression {
    x: DataMatrix,
    y: Arc<[f64]>,
    noise_var: f64,
    prior_var: f64,
    prior_share: f64,
}

impl RidgeRegression {
    /// A model over covariates `x` (`N × d`) and responses `y`.
    ///
    /// # Errors
    ///
    /// [`ContinuousError::Model`] for a response count other than `N`, non-finite responses,
    /// or variances that are not finite and positive.
    pub fn new(
        x: DataMatrix,
        y: &[f64],
        noise_var: f64,
        prior_var: f64,
    ) -> Result<Self, ContinuousError> {
        check_variance("noise_var", noise_var)?;
        check_variance("prior_var", prior_var)?;
        check_responses(&x, y, "responses")?;
        if y.iter().any(|v| !v.is_finite()) {
            return Err(ModelDataError::ResponseNotFinite.into());
        }
        let prior_share = 1.0 / (prior_var * x.rows() as f64);
        Ok(Self {
            x,
            y: y.into(),
            noise_var,
            prior_var,
            prior_share,
        })
    }

    /// `n` points with covariates `N(0, I_d)`, true weights `w ~ N(0, I_d)` and responses
    /// `y = x_iᵀw + √λ ε`, from a seeded Xoshiro256++ stream. Returns the model and `w`.
    ///
    /// # Errors
    ///
    /// [`ContinuousError::Model`] if `n` or `d` is zero or a variance is not finite and
    /// positive.
    pub fn synthetic(
        n: usize,
        d: usize,
        noise_var: f64,
        prior_var: f64,
        seed: u64,
    ) -> Result<(Self, Vec<f64>), ContinuousError> {
        let z = normals(seed, n * d + d + n);
        let (xs, rest) = z.split_at(n * d);
        let (w, eps) = rest.split_at(d);
        let x = DataMatrix::new(n, d, xs.to_vec())?;
        let y: Vec<f64> = (0..n)
            .map(|i| dot(x.row(i), w) + noise_var.sqrt() * eps[i])
            .collect();
        Ok((Self::new(x, &y, noise_var, prior_var)?, w.to_vec()))
    }

    /// The covariates.
    pub fn x(&self) -> &DataMatrix {
        &self.x
    }

    /// The responses.
    pub fn y(&self) -> &[f64] {
        &self.y
    }

    /// The exact posterior `N(m, Σ)`: `Σ⁻¹ = XᵀX/λ + I/v`, `m = Σ Xᵀy / λ`. Returns `m` and
    /// `Σ` (row-major `d × d`).
    ///
    /// # Errors
    ///
    /// [`ContinuousError::Model`] when `XᵀX/λ` overflows.
    pub fn posterior(&self) -> Result<(Vec<f64>, Vec<f64>), ContinuousError> {
        let (n, d) = (self.x.rows(), self.x.cols());
        let x = DMatrix::from_row_slice(n, d, self.x.values());
        let y = DVector::from_column_slice(&self.y);
        let precision =
            x.transpose() * &x / self.noise_var + DMatrix::identity(d, d) / self.prior_var;
        let rhs = x.transpose() * y / self.noise_var;
        // Positive definite in exact arithmetic; only overflow (covariates near f64::MAX) can
        // make the factorisation fail.
        let chol = precision
            .cholesky()
            .ok_or_else(|| ContinuousError::from(ModelDataError::PosteriorOverflow))?;
        let mean = chol.solve(&rhs);
        let cov = chol.inverse();
        let cov_rows: Vec<f64> = (0..d)
            .flat_map(|r| (0..d).map(move |c| (r, c)))
            .map(|(r, c)| cov[(r, c)])
            .collect();
        Ok((mean.as_slice().to_vec(), cov_rows))
    }
}

impl RidgeRegression {
    /// `s_i(θ) = (x_iᵀθ − y_i) / λ`.
    #[inline]
    fn scalar(&self, i: usize, theta: &[f64]) -> f64 {
        (dot(self.x.row(i), theta) - self.y[i]) / self.noise_var
    }
}

sum_over_rows!(RidgeRegression, x, glm: prior_share);

impl SumPotential for RidgeRegression {
    fn term_potential(&mut self, i: usize, theta: &[f64]) -> Result<f64, Infallible> {
        let r = self.y[i] - dot(self.x.row(i), theta);
        Ok(r * r / (2.0 * self.noise_var) + 0.5 * self.prior_share * dot(theta, theta))
    }
}
