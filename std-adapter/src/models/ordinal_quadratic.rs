//! The ordinal quadratic model and the lattice Gaussians.

use super::{ModelError, check_states};
use langevin_core::ParamError;
use langevin_core::ordinal::{LabelMove, OrdinalConditional, OrdinalTarget};
use nalgebra::DMatrix;
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use std::convert::Infallible;

/// `U(x) = −½ (x−μ)ᵀ A (x−μ) + bᵀx` over `x ∈ {0, …, S−1}^d`.
///
/// Only the symmetric part of `A` matters; it is stored symmetrised, and the gradient of the
/// quadratic extension is `∇U = −A (x−μ) + b`. The vector `A (x−μ)` of the current state is
/// cached in `f64`, so a move touching `k` coordinates costs `O(k·d)` and a single-coordinate
/// conditional `O(S)`.
///
/// # Examples
///
/// ```
/// use langevin_std::models::OrdinalQuadratic;
/// use langevin_std::core_kernels::ordinal::OrdinalTarget;
/// let a = vec![1.0, 0.0, 0.0, 2.0];
/// let mut m = OrdinalQuadratic::new(5, a, vec![2.0, 2.0], vec![0.0, 0.5]).unwrap();
/// let mut g = [0.0f32; 2];
/// let u = m.log_density_and_grad(&[2, 3], &mut g).unwrap();
/// assert!((u - (-1.0 + 1.5)).abs() < 1e-12);
/// assert_eq!(g, [0.0, -1.5]);
/// ```
#[derive(Clone, Debug)]
pub struct OrdinalQuadratic {
    d: usize,
    s: usize,
    a: Vec<f64>,
    mu: Vec<f64>,
    b: Vec<f64>,
    ar: Vec<f64>,
    ar_proposal: Vec<f64>,
}

impl OrdinalQuadratic {
    /// Builds the model from `A` (`d × d`, row-major), `μ` and `b` (length `d`) over `S` values.
    ///
    /// # Errors
    ///
    /// A [`ModelError`] for `d = 0`, `S` outside `2..=65535`, mismatched lengths or
    /// non-finite entries.
    pub fn new(states: usize, a: Vec<f64>, mu: Vec<f64>, b: Vec<f64>) -> Result<Self, ModelError> {
        check_states(states)?;
        let d = mu.len();
        if d == 0 {
            return Err(ParamError::EmptyDimension.into());
        }
        langevin_core::LenError::check("b", d, b.len()).map_err(ParamError::from)?;
        langevin_core::LenError::check("A", d * d, a.len()).map_err(ParamError::from)?;
        for (name, v) in [("A", &a), ("mu", &mu), ("b", &b)] {
            if v.iter().any(|x| !x.is_finite()) {
                return Err(ParamError::NonFinite(name).into());
            }
        }
        let mut sym = vec![0.0; d * d];
        for i in 0..d {
            for j in 0..d {
                sym[i * d + j] = 0.5 * (a[i * d + j] + a[j * d + i]);
            }
        }
        Ok(Self {
            d,
            s: states,
            a: sym,
            mu,
            b,
            ar: vec![0.0; d],
            ar_proposal: vec![0.0; d],
        })
    }

    /// The rotated lattice Gaussian (Sun et al. 2023, Sec. 5.2): `A = P Λ Pᵀ` with `P` a random rotation
    /// (QR of a seeded Gaussian matrix) and eigenvalues spread linearly from `λ` to `κ·λ`
    /// (condition number `κ`), `μ` at the centre of the lattice, `b = 0`. `λ = 1/σ²` sets the
    /// widest standard deviation `σ`.
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new), plus [`ParamError::OutOfRange`] for `κ < 1` or `σ ≤ 0`.
    pub fn rotated_gaussian(
        dim: usize,
        states: usize,
        condition: f64,
        sigma: f64,
        seed: u64,
    ) -> Result<Self, ModelError> {
        check_spectrum(condition, sigma)?;
        let z = seeded_normals(seed, dim * dim);
        let q = DMatrix::from_row_slice(dim, dim, &z).qr().q();
        let lambda = eigenvalues(dim, condition, sigma);
        let a = &q * DMatrix::from_diagonal(&nalgebra::DVector::from_vec(lambda)) * q.transpose();
        let centre = (states.saturating_sub(1)) as f64 / 2.0;
        Self::new(
            states,
            a.transpose().as_slice().to_vec(),
            vec![centre; dim],
            vec![0.0; dim],
        )
    }

    /// The sparse (cycle) lattice Gaussian (Sun et al. 2023, Sec. 5.2): `A = Λ^½ M Λ^½` with `M_ii = 1`,
    /// `M_{i,i+1} = M_{i+1,i} ~ N(0, 0.04)` around a cycle, and `Λ` spread linearly from `λ` to
    /// `κ·λ` as in [`rotated_gaussian`](Self::rotated_gaussian); `μ` at the centre, `b = 0`.
    ///
    /// # Errors
    ///
    /// As [`rotated_gaussian`](Self::rotated_gaussian).
    pub fn sparse_cycle_gaussian(
        dim: usize,
        states: usize,
        condition: f64,
        sigma: f64,
        seed: u64,
    ) -> Result<Self, ModelError> {
        check_spectrum(condition, sigma)?;
        let off = seeded_normals(seed, dim);
        let root: Vec<f64> = eigenvalues(dim, condition, sigma)
            .iter()
            .map(|l| l.sqrt())
            .collect();
        let mut a = vec![0.0; dim * dim];
        for i in 0..dim {
            a[i * dim + i] += root[i] * root[i];
            if dim > 1 {
                let j = (i + 1) % dim;
                let m = 0.2 * off[i] * root[i] * root[j];
                if i != j {
                    a[i * dim + j] += m;
                    a[j * dim + i] += m;
                }
            }
        }
        let centre = (states.saturating_sub(1)) as f64 / 2.0;
        Self::new(states, a, vec![centre; dim], vec![0.0; dim])
    }

    /// The symmetrised `A`, row-major.
    pub fn matrix(&self) -> &[f64] {
        &self.a
    }

    /// `μ`.
    pub fn mean(&self) -> &[f64] {
        &self.mu
    }

    /// `b`.
    pub fn linear(&self) -> &[f64] {
        &self.b
    }

    /// `U(x)` without touching the cache.
    pub fn log_density(&self, x: &[u16]) -> f64 {
        let d = self.d;
        let r: Vec<f64> = x
            .iter()
            .zip(&self.mu)
            .map(|(&v, m)| f64::from(v) - m)
            .collect();
        let mut u = 0.0;
        for i in 0..d {
            let row: f64 = (0..d).map(|j| self.a[i * d + j] * r[j]).sum();
            u -= 0.5 * r[i] * row;
            u += self.b[i] * f64::from(x[i]);
        }
        u
    }
}

/// `n` standard normals from a fresh stream seeded with `seed`.
fn seeded_normals(seed: u64, n: usize) -> Vec<f64> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut z = vec![0.0; n];
    langevin_core::random::fill_normal(&mut rng, &mut z);
    z
}

fn check_spectrum(condition: f64, sigma: f64) -> Result<(), ModelError> {
    if !(condition.is_finite() && condition >= 1.0) {
        return Err(ParamError::OutOfRange {
            name: "condition",
            value: condition,
        }
        .into());
    }
    if !(sigma.is_finite() && sigma > 0.0) {
        return Err(ParamError::OutOfRange {
            name: "sigma",
            value: sigma,
        }
        .into());
    }
    Ok(())
}

fn eigenvalues(dim: usize, condition: f64, sigma: f64) -> Vec<f64> {
    let base = 1.0 / (sigma * sigma);
    (0..dim)
        .map(|i| {
            let t = if dim > 1 {
                i as f64 / (dim - 1) as f64
            } else {
                0.0
            };
            base * (1.0 + t * (condition - 1.0))
        })
        .collect()
}

impl OrdinalQuadratic {
    /// `U` at `x` and its gradient into `grad`, given `ar = A(x − μ)`.
    #[inline(always)]
    fn value_and_grad(&self, x: &[u16], ar: &[f64], grad: &mut [f32]) -> f64 {
        let mut u = 0.0;
        for ((g, (&v, &ar)), (&m, &b)) in grad
            .iter_mut()
            .zip(x.iter().zip(ar))
            .zip(self.mu.iter().zip(&self.b))
        {
            let r = f64::from(v) - m;
            u += -0.5 * r * ar + b * f64::from(v);
            *g = (-ar + b) as f32;
        }
        u
    }
}

impl OrdinalTarget for OrdinalQuadratic {
    label_size!(d, s);

    #[inline(always)]
    fn log_density_and_grad(&mut self, x: &[u16], grad: &mut [f32]) -> Result<f64, Infallible> {
        let d = self.d;
        for i in 0..d {
            let row = &self.a[i * d..(i + 1) * d];
            self.ar[i] = row
                .iter()
                .zip(x.iter().zip(&self.mu))
                .map(|(a, (&v, m))| a * (f64::from(v) - m))
                .sum();
        }
        Ok(self.value_and_grad(x, &self.ar, grad))
    }

    #[inline(always)]
    fn log_density_and_grad_after(
        &mut self,
        mv: &LabelMove<'_>,
        grad: &mut [f32],
    ) -> Result<f64, Infallible> {
        let d = self.d;
        self.ar_proposal.copy_from_slice(&self.ar);
        for &i in mv.changed {
            let i = i as usize;
            let delta = f64::from(mv.to[i]) - f64::from(mv.from[i]);
            // A is symmetric: column i is row i.
            for (ar, a) in self.ar_proposal.iter_mut().zip(&self.a[i * d..(i + 1) * d]) {
                *ar += a * delta;
            }
        }
        Ok(self.value_and_grad(mv.to, &self.ar_proposal, grad))
    }

    #[inline(always)]
    fn commit(&mut self) {
        std::mem::swap(&mut self.ar, &mut self.ar_proposal);
    }

    fn running_sums(&self) -> &[f64] {
        &self.ar
    }

    fn running_sums_mut(&mut self) -> &mut [f64] {
        &mut self.ar
    }
}

impl OrdinalConditional for OrdinalQuadratic {
    fn conditional(&mut self, x: &[u16], i: usize, out: &mut [f64]) -> Result<(), Infallible> {
        // U(x + δ e_i) − U(x) = δ (b_i − (A r)_i) − ½ A_ii δ², exact for a quadratic.
        let g = self.b[i] - self.ar[i];
        let aii = self.a[i * self.d + i];
        let xi = f64::from(x[i]);
        for (k, o) in out.iter_mut().enumerate() {
            let delta = k as f64 - xi;
            *o = delta * g - 0.5 * aii * delta * delta;
        }
        Ok(())
    }

    fn commit_change(&mut self, x: &[u16], i: usize, old: u16) {
        let d = self.d;
        let delta = f64::from(x[i]) - f64::from(old);
        for (ar, a) in self.ar.iter_mut().zip(&self.a[i * d..(i + 1) * d]) {
            *ar += a * delta;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn incremental_matches_full_and_bad_parameters_fail() {
        let mut m = OrdinalQuadratic::rotated_gaussian(4, 7, 5.0, 2.0, 1).unwrap();
        let x = [0u16, 3, 6, 2];
        let y = [1u16, 3, 4, 2];
        let mut g = [0.0f32; 4];
        let mut gy = [0.0f32; 4];
        let ux = m.log_density_and_grad(&x, &mut g).unwrap();
        assert!((ux - m.log_density(&x)).abs() < 1e-9);
        let mv = LabelMove {
            from: &x,
            to: &y,
            changed: &[0, 2],
            from_log_density: ux,
            from_grad: &g,
        };
        let uy = m.log_density_and_grad_after(&mv, &mut gy).unwrap();
        assert!((uy - m.log_density(&y)).abs() < 1e-9);
        let mut out = [0.0f64; 7];
        m.conditional(&x, 1, &mut out).unwrap();
        for k in 0..7u16 {
            let mut z = x;
            z[1] = k;
            assert!((out[usize::from(k)] - (m.log_density(&z) - ux)).abs() < 1e-9);
        }
        assert!(OrdinalQuadratic::new(1, vec![1.0], vec![0.0], vec![0.0]).is_err());
        assert!(OrdinalQuadratic::new(3, vec![1.0, 2.0], vec![0.0], vec![0.0]).is_err());
        assert!(OrdinalQuadratic::new(3, vec![1.0], vec![], vec![]).is_err());
    }
}
