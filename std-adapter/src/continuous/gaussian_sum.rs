//! The Gaussian sum `V_i(θ) = ½|θ − c_i|²` (Li et al. 2020, Sec. 5.1).

use super::{ContinuousError, DataMatrix, normals};
use langevin_core::continuous::SumPotential;
use std::convert::Infallible;

/// `V(θ) = Σ_i ½|θ − c_i|²`: the target is `N(c̄, I/N)` with `c̄` the mean centre.
///
/// # Examples
///
/// ```
/// use langevin_std::continuous::GaussianSum;
/// let m = GaussianSum::synthetic(20, 2, 7)?;
/// assert_eq!(m.target_mean().len(), 2);
/// assert_eq!(m.target_var(), 1.0 / 20.0);
/// # Ok::<(), langevin_std::continuous::ContinuousError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct GaussianSum {
    centers: DataMatrix,
}

impl GaussianSum {
    /// The sum over the rows of `centers`.
    pub fn new(centers: DataMatrix) -> Self {
        Self { centers }
    }

    /// Centres given as rows.
    ///
    /// # Errors
    ///
    /// [`ContinuousError::Model`] for no centres, ragged rows or non-finite values.
    pub fn from_rows(centers: &[Vec<f64>]) -> Result<Self, ContinuousError> {
        Ok(Self::new(DataMatrix::from_rows(centers)?))
    }

    /// `n` centres drawn from `N(0, I_d)` with a seeded Xoshiro256++ stream (as in Li et al. 2020,
    /// where `n = 20`, `d = 2`).
    ///
    /// # Errors
    ///
    /// [`ContinuousError::Model`] if `n` or `d` is zero.
    pub fn synthetic(n: usize, d: usize, seed: u64) -> Result<Self, ContinuousError> {
        Ok(Self::new(DataMatrix::new(n, d, normals(seed, n * d))?))
    }

    /// The centres.
    pub fn centers(&self) -> &DataMatrix {
        &self.centers
    }

    /// The exact target mean `c̄`.
    pub fn target_mean(&self) -> Vec<f64> {
        let n = self.centers.rows() as f64;
        let mut m = vec![0.0; self.centers.cols()];
        for i in 0..self.centers.rows() {
            super::axpy(1.0 / n, self.centers.row(i), &mut m);
        }
        m
    }

    /// The exact target variance per coordinate, `1/N` (the covariance is `I/N`).
    pub fn target_var(&self) -> f64 {
        1.0 / self.centers.rows() as f64
    }
}

impl GaussianSum {
    /// `acc += scale · (θ − c_i)`.
    #[inline]
    fn add_grad(&self, i: usize, theta: &[f64], scale: f64, acc: &mut [f64]) {
        for (a, (&t, &c)) in acc.iter_mut().zip(theta.iter().zip(self.centers.row(i))) {
            *a += scale * (t - c);
        }
    }
}

sum_over_rows!(GaussianSum, centers);

impl SumPotential for GaussianSum {
    fn term_potential(&mut self, i: usize, theta: &[f64]) -> Result<f64, Infallible> {
        Ok(0.5
            * theta
                .iter()
                .zip(self.centers.row(i))
                .map(|(t, c)| (t - c) * (t - c))
                .sum::<f64>())
    }
}
