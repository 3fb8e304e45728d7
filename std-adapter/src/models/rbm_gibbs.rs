//! Exact block Gibbs sampling for a binary RBM.

use super::ModelError;
use langevin_core::random::unit_f64;
use langevin_core::{LenError, ParamError};
use rand_core::Rng;

/// Alternating block Gibbs for the binary RBM `p(x, h) ∝ exp(hᵀ W x + bᵀ x + cᵀ h)` (the joint
/// whose visible marginal is [`Rbm`](langevin_core::models::Rbm)): all hidden units given the
/// visible ones, then all visible units given the hidden ones. It is the reference sampler
/// every other RBM sampler is compared against.
///
/// One [`sweep`](Self::sweep) costs two `H × V` matrix–vector products and draws `H + V`
/// uniforms (one `next_u64` each).
///
/// # Examples
///
/// ```
/// use langevin_std::models::RbmBlockGibbs;
/// use rand_core::SeedableRng;
/// let mut g = RbmBlockGibbs::new(vec![0.5, -0.5], vec![0.1, 0.2], vec![0.0]).unwrap();
/// let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(1);
/// let mut x = [0u8, 1];
/// g.sweep(&mut x, &mut rng).unwrap();
/// assert!(x.iter().all(|&v| v <= 1));
/// ```
#[derive(Clone, Debug)]
pub struct RbmBlockGibbs {
    w: Vec<f32>,
    b: Vec<f32>,
    c: Vec<f32>,
    hidden: Vec<u8>,
}

impl RbmBlockGibbs {
    /// Wraps `W` (`H × V`, row-major), `b` (`V`) and `c` (`H`).
    ///
    /// # Errors
    ///
    /// A [`ModelError`] for `V = 0`, mismatched lengths or non-finite parameters.
    pub fn new(w: Vec<f32>, b: Vec<f32>, c: Vec<f32>) -> Result<Self, ModelError> {
        if b.is_empty() {
            return Err(ParamError::EmptyDimension.into());
        }
        LenError::check("W", b.len() * c.len(), w.len()).map_err(ParamError::from)?;
        for (name, v) in [("W", &w), ("b", &b), ("c", &c)] {
            if v.iter().any(|x| !x.is_finite()) {
                return Err(ParamError::NonFinite(name).into());
            }
        }
        let h = c.len();
        Ok(Self {
            w,
            b,
            c,
            hidden: vec![0; h],
        })
    }

    /// The hidden units drawn by the last sweep.
    pub fn hidden(&self) -> &[u8] {
        &self.hidden
    }

    /// One sweep: `h ~ p(h | x)`, then `x ~ p(x | h)`, in place.
    ///
    /// # Errors
    ///
    /// [`LenError`] if `x` does not have length `V`.
    pub fn sweep<R: Rng + ?Sized>(&mut self, x: &mut [u8], rng: &mut R) -> Result<(), LenError> {
        let v = self.b.len();
        LenError::check("x", v, x.len())?;
        for (j, (h, &cj)) in self.hidden.iter_mut().zip(&self.c).enumerate() {
            let row = &self.w[j * v..(j + 1) * v];
            let pre: f64 = f64::from(cj)
                + row
                    .iter()
                    .zip(x.iter())
                    .map(|(&w, &xi)| f64::from(w) * f64::from(xi))
                    .sum::<f64>();
            *h = u8::from(unit_f64(rng) < langevin_core::math::sigmoid(pre));
        }
        let mut pre: Vec<f64> = self.b.iter().map(|&b| f64::from(b)).collect();
        for (j, &h) in self.hidden.iter().enumerate() {
            if h != 0 {
                for (p, &w) in pre.iter_mut().zip(&self.w[j * v..(j + 1) * v]) {
                    *p += f64::from(w);
                }
            }
        }
        for (xi, p) in x.iter_mut().zip(&pre) {
            *xi = u8::from(unit_f64(rng) < langevin_core::math::sigmoid(*p));
        }
        Ok(())
    }
}
