//! A mixture of quartic wells over an ordinal lattice.

use super::{ModelError, check_states, conditional_from_density};
use langevin_core::ParamError;
use langevin_core::ordinal::{OrdinalConditional, OrdinalTarget};
use nalgebra::DMatrix;
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use std::convert::Infallible;

/// A quartic mixture over `x ∈ {0, …, S−1}^d` in the spirit of the quartic benchmark of
/// Sun et al. (2023), Sec. 5.3 (after Rhodes & Gutmann). The formula there is not fully
/// specified, so this is the definition used here:
///
/// `U(x) = log Σ_{k=1}^{K} exp(−p_k(x))`, `p_k(x) = Σ_i (u_{k,i}⁴ / 4 + u_{k,i}² / 2)`,
/// `u_k = D⁻¹ Pᵀ (x − μ_k)`,
///
/// with centres `μ_k = (k−1)/(K−1) · (S−1) · 1` along the diagonal (one centre at the middle
/// for `K = 1`), a shared random rotation `P` (QR of a seeded Gaussian matrix) and scales
/// `D_ii = σ · exp(−½ + (i−1)/(d−1))` (a spread of `e` between the narrowest and the widest
/// direction, as in the paper's scale vector). The paper's setting is `S = 21`, `d = 50`,
/// `K = 50`; `σ` sets the well width in lattice units.
///
/// Evaluation costs `O(K·d²)`; the conditional evaluates `U` at each value.
///
/// # Examples
///
/// ```
/// use langevin_std::models::QuarticMixture;
/// use langevin_std::core_kernels::ordinal::OrdinalTarget;
/// let mut m = QuarticMixture::new(4, 21, 3, 2.0, 7).unwrap();
/// let mut g = [0.0f32; 4];
/// assert!(m.log_density_and_grad(&[10; 4], &mut g).unwrap().is_finite());
/// ```
#[derive(Clone, Debug)]
pub struct QuarticMixture {
    s: usize,
    d: usize,
    centres: Vec<f64>,
    rotation: Vec<f64>,
    inv_scale: Vec<f64>,
    u: Vec<f64>,
    weights: Vec<f64>,
}

impl QuarticMixture {
    /// `K` components in dimension `d` over `S` values, well width `σ`, rotation from `seed`.
    ///
    /// # Errors
    ///
    /// A [`ModelError`] for `d = 0`, `K = 0`, `S` outside `2..=65535` or `σ` not finite
    /// and positive.
    pub fn new(
        dim: usize,
        states: usize,
        components: usize,
        sigma: f64,
        seed: u64,
    ) -> Result<Self, ModelError> {
        check_states(states)?;
        if dim == 0 || components == 0 {
            return Err(ParamError::EmptyDimension.into());
        }
        if !(sigma.is_finite() && sigma > 0.0) {
            return Err(ParamError::OutOfRange {
                name: "sigma",
                value: sigma,
            }
            .into());
        }
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut z = vec![0.0; dim * dim];
        langevin_core::random::fill_normal(&mut rng, &mut z);
        let q = DMatrix::from_row_slice(dim, dim, &z).qr().q();
        // Row-major P.
        let rotation: Vec<f64> = q.transpose().as_slice().to_vec();
        let last = (states - 1) as f64;
        let centres = (0..components)
            .map(|k| {
                if components > 1 {
                    k as f64 / (components - 1) as f64 * last
                } else {
                    last / 2.0
                }
            })
            .collect();
        let inv_scale = (0..dim)
            .map(|i| {
                let t = if dim > 1 {
                    i as f64 / (dim - 1) as f64
                } else {
                    0.5
                };
                1.0 / (sigma * (-0.5 + t).exp())
            })
            .collect();
        Ok(Self {
            s: states,
            d: dim,
            centres,
            rotation,
            inv_scale,
            u: vec![0.0; dim],
            weights: vec![0.0; components],
        })
    }

    /// `u_k` for centre `c` into `self.u`; returns `p_k`.
    fn component(&mut self, x: &[u16], c: f64) -> f64 {
        let d = self.d;
        let mut p = 0.0;
        for j in 0..d {
            // (Pᵀ r)_j = Σ_i P_ij r_i.
            let mut acc = 0.0;
            for (i, &v) in x.iter().enumerate() {
                acc += self.rotation[i * d + j] * (f64::from(v) - c);
            }
            let u = acc * self.inv_scale[j];
            self.u[j] = u;
            let u2 = u * u;
            p += 0.25 * u2 * u2 + 0.5 * u2;
        }
        p
    }

    /// `U(x)`.
    pub fn log_density(&mut self, x: &[u16]) -> f64 {
        let mut m = f64::NEG_INFINITY;
        for k in 0..self.centres.len() {
            let e = -self.component(x, self.centres[k]);
            self.weights[k] = e;
            m = m.max(e);
        }
        let z: f64 = self.weights.iter().map(|e| (e - m).exp()).sum();
        m + z.ln()
    }
}

impl OrdinalTarget for QuarticMixture {
    label_size!(d, s);

    fn log_density_and_grad(&mut self, x: &[u16], grad: &mut [f32]) -> Result<f64, Infallible> {
        let u = self.log_density(x);
        let d = self.d;
        let mut g = vec![0.0f64; d];
        for k in 0..self.centres.len() {
            let w = (self.weights[k] - u).exp();
            self.component(x, self.centres[k]);
            // ∇p_k = P D⁻¹ (u³ + u); ∇U = −Σ_k w_k ∇p_k.
            for j in 0..d {
                let uj = self.u[j];
                let dj = (uj * uj * uj + uj) * self.inv_scale[j];
                for (i, gi) in g.iter_mut().enumerate() {
                    *gi -= w * self.rotation[i * d + j] * dj;
                }
            }
        }
        for (o, gi) in grad.iter_mut().zip(&g) {
            *o = *gi as f32;
        }
        Ok(u)
    }
}

impl OrdinalConditional for QuarticMixture {
    fn conditional(&mut self, x: &[u16], i: usize, out: &mut [f64]) -> Result<(), Infallible> {
        conditional_from_density(x, i, out, |y| self.log_density(y));
        Ok(())
    }
}
