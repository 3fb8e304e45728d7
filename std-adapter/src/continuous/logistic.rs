//! Bayesian logistic regression with a Gaussian prior.

use super::{
    ContinuousError, DataMatrix, ModelDataError, check_responses, check_variance, dot, normals,
};
use langevin_core::continuous::SumPotential;
use langevin_core::math::{sigmoid, softplus};
use std::convert::Infallible;
use std::sync::Arc;

/// `p(y_i | x_i, θ) = σ(y_i x_iᵀθ)` with `y_i ∈ {−1, 1}` and prior `N(0, v I)`, as a sum
/// `V_i(θ) = softplus(−y_i x_iᵀθ) + |θ|² / (2 v N)` (the prior spread evenly over the terms).
///
/// As a [`GlmSumTarget`]: `s_i(θ) = −y_i σ(−y_i x_iᵀθ)`, `z_i = x_i`, `q(θ) = θ / (v N)`.
///
/// [`GlmSumTarget`]: langevin_core::continuous::GlmSumTarget
#[derive(Clone, Debug, PartialEq)]
pub struct LogisticRegression {
    x: DataMatrix,
    y: Arc<[f64]>,
    prior_var: f64,
    prior_share: f64,
}

impl LogisticRegression {
    /// A model over covariates `x` (`N × d`) and labels `y`, all in `{0, 1}` or all in
    /// `{−1, 1}` (0 is read as −1), with prior variance `prior_var`.
    ///
    /// # Errors
    ///
    /// [`ContinuousError::Model`] for a label count other than `N`, other label values, or a
    /// prior variance that is not finite and positive.
    pub fn new(x: DataMatrix, y: &[f64], prior_var: f64) -> Result<Self, ContinuousError> {
        check_variance("prior_var", prior_var)?;
        check_responses(&x, y, "labels")?;
        let has_zero = y.contains(&0.0);
        let has_minus = y.contains(&-1.0);
        if has_zero && has_minus {
            return Err(ModelDataError::MixedLabels.into());
        }
        if let Some(v) = y.iter().find(|&&v| v != 0.0 && v != 1.0 && v != -1.0) {
            return Err(ModelDataError::Label { value: *v }.into());
        }
        let y: Arc<[f64]> = y
            .iter()
            .map(|&v| if v == 1.0 { 1.0 } else { -1.0 })
            .collect();
        let prior_share = 1.0 / (prior_var * x.rows() as f64);
        Ok(Self {
            x,
            y,
            prior_var,
            prior_share,
        })
    }

    /// `n` points with covariates `N(0, I_d)`, a true coefficient vector `β ~ N(0, I_d)` and
    /// labels `y_i = ±1` with `P(y_i = 1) = σ(x_iᵀβ)`, from a seeded Xoshiro256++ stream.
    /// Returns the model and `β`.
    ///
    /// # Errors
    ///
    /// [`ContinuousError::Model`] if `n` or `d` is zero or `prior_var` is not finite and
    /// positive.
    pub fn synthetic(
        n: usize,
        d: usize,
        prior_var: f64,
        seed: u64,
    ) -> Result<(Self, Vec<f64>), ContinuousError> {
        let z = normals(seed, n * d + d);
        let (xs, beta) = z.split_at(n * d);
        let u = normals(seed ^ 0x5eed_1abe_1000_0001, n);
        let x = DataMatrix::new(n, d, xs.to_vec())?;
        // Φ(u) is uniform: compare it with σ(xᵀβ) to draw the label.
        let y: Vec<f64> = (0..n)
            .map(|i| {
                let p = sigmoid(dot(x.row(i), beta));
                let uni = 0.5 * libm::erfc(-u[i] / std::f64::consts::SQRT_2);
                if uni < p { 1.0 } else { -1.0 }
            })
            .collect();
        Ok((Self::new(x, &y, prior_var)?, beta.to_vec()))
    }

    /// The covariates.
    pub fn x(&self) -> &DataMatrix {
        &self.x
    }

    /// The labels in `{−1, 1}`.
    pub fn y(&self) -> &[f64] {
        &self.y
    }

    /// The prior variance `v`.
    pub fn prior_var(&self) -> f64 {
        self.prior_var
    }
}

impl LogisticRegression {
    /// `s_i(θ) = −y_i σ(−y_i x_iᵀθ)`.
    #[inline]
    fn scalar(&self, i: usize, theta: &[f64]) -> f64 {
        let y = self.y[i];
        -y * sigmoid(-y * dot(self.x.row(i), theta))
    }
}

sum_over_rows!(LogisticRegression, x, glm: prior_share);

impl SumPotential for LogisticRegression {
    fn term_potential(&mut self, i: usize, theta: &[f64]) -> Result<f64, Infallible> {
        let y = self.y[i];
        Ok(softplus(-y * dot(self.x.row(i), theta)) + 0.5 * self.prior_share * dot(theta, theta))
    }
}
