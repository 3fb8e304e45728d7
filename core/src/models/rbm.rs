//! The restricted Boltzmann machine with hidden units summed out.

use crate::error::{LenError, ParamError};
use crate::math::{FlipMath, Libm};
use crate::target::{BinaryTarget, FlipMove};
use core::convert::Infallible;

/// A binary RBM over visible units `x ∈ {0,1}^V` with `H` hidden units summed out:
///
/// `U(x) = Σ_j softplus((W x + c)_j) + bᵀx`, `∇U(x) = Wᵀ sigmoid(W x + c) + b`,
///
/// with `W` (`H × V`, row-major), `b` (`V`) and `c` (`H`) borrowed from the caller. The hidden
/// pre-activations `W x + c` are cached in `f64` in a caller buffer of `2H` doubles (current and
/// proposed): a move adds the flipped columns of `W`, and the exact `f64` sums keep the cache a
/// function of the state. `softplus` and `sigmoid` are evaluated in `f32` through `M` and summed
/// in `f64`.
///
/// # Examples
///
/// ```
/// use langevin_core::models::Rbm;
/// use langevin_core::BinaryTarget;
/// let (w, b, c) = ([0.5f32, -0.5], [0.1f32, 0.2], [0.0f32]);
/// let mut cache = [0.0f64; 2];
/// let mut rbm = Rbm::new(&w, &b, &c, &mut cache).unwrap();
/// let mut g = [0.0f32; 2];
/// let u = rbm.log_density_and_grad(&[1, 0], &mut g).unwrap();
/// assert!((u - (0.1 + (1.0f64 + 0.5f64.exp()).ln())).abs() < 1e-6);
/// ```
#[derive(Debug)]
pub struct Rbm<'a, M: FlipMath = Libm> {
    w: &'a [f32],
    b: &'a [f32],
    c: &'a [f32],
    hidden: &'a mut [f64],
    hidden_proposal: &'a mut [f64],
    math: core::marker::PhantomData<M>,
}

impl<'a> Rbm<'a, Libm> {
    /// Wraps `W` (`H·V` entries), `b` (`V`), `c` (`H`) and a cache of `2H` doubles.
    ///
    /// # Errors
    ///
    /// [`ParamError::EmptyDimension`] for `V = 0`, [`ParamError::Len`] for mismatched lengths,
    /// [`ParamError::NonFinite`] for a non-finite parameter.
    pub fn new(
        w: &'a [f32],
        b: &'a [f32],
        c: &'a [f32],
        cache: &'a mut [f64],
    ) -> Result<Self, ParamError> {
        Self::with_math(w, b, c, cache)
    }
}

impl<'a, M: FlipMath> Rbm<'a, M> {
    /// Like [`Rbm::new`], choosing how `softplus` and `sigmoid` are evaluated.
    ///
    /// # Errors
    ///
    /// As for [`Rbm::new`].
    pub fn with_math(
        w: &'a [f32],
        b: &'a [f32],
        c: &'a [f32],
        cache: &'a mut [f64],
    ) -> Result<Self, ParamError> {
        let (v, h) = (b.len(), c.len());
        if v == 0 {
            return Err(ParamError::EmptyDimension);
        }
        let n = h.checked_mul(v).ok_or(ParamError::OutOfRange {
            name: "hidden * visible",
            value: h as f64 * v as f64,
        })?;
        LenError::check("W", n, w.len())?;
        LenError::check("cache", 2 * h, cache.len())?;
        for (name, s) in [("W", w), ("b", b), ("c", c)] {
            if s.iter().any(|v| !v.is_finite()) {
                return Err(ParamError::NonFinite(name));
            }
        }
        let (hidden, hidden_proposal) = cache.split_at_mut(h);
        Ok(Self {
            w,
            b,
            c,
            hidden,
            hidden_proposal,
            math: core::marker::PhantomData,
        })
    }

    /// Number of hidden units `H`.
    pub fn hidden_units(&self) -> usize {
        self.c.len()
    }

    /// `U` and `∇U` from the pre-activations `pre` and the state `x`.
    fn finish(&self, pre: &[f64], x: &[u8], grad: &mut [f32]) -> f64 {
        let v = self.b.len();
        for (g, &b) in grad.iter_mut().zip(self.b) {
            *g = b;
        }
        let mut u: f64 = x
            .iter()
            .zip(self.b)
            .map(|(&xi, &bi)| f64::from(xi) * f64::from(bi))
            .sum();
        for (j, &p) in pre.iter().enumerate() {
            let p = p as f32;
            let e = M::exp(-p.abs());
            let softplus = p.max(0.0) + M::ln_1p(e);
            let inv = 1.0 / (1.0 + e);
            let sigma = if p >= 0.0 { inv } else { e * inv };
            u += f64::from(softplus);
            let row = self.w.get(j * v..(j + 1) * v).unwrap_or(&[]);
            for (g, &w) in grad.iter_mut().zip(row) {
                *g += sigma * w;
            }
        }
        u
    }
}

impl<M: FlipMath> BinaryTarget for Rbm<'_, M> {
    type Error = Infallible;

    fn dim(&self) -> usize {
        self.b.len()
    }

    fn log_density_and_grad(&mut self, x: &[u8], grad: &mut [f32]) -> Result<f64, Infallible> {
        let v = self.b.len();
        for (j, (h, &cj)) in self.hidden.iter_mut().zip(self.c).enumerate() {
            let row = self.w.get(j * v..(j + 1) * v).unwrap_or(&[]);
            *h = f64::from(cj)
                + row
                    .iter()
                    .zip(x)
                    .map(|(&w, &xi)| f64::from(w) * f64::from(xi))
                    .sum::<f64>();
        }
        let pre = core::mem::take(&mut self.hidden);
        let u = self.finish(pre, x, grad);
        self.hidden = pre;
        Ok(u)
    }

    fn log_density_and_grad_after(
        &mut self,
        mv: &FlipMove<'_>,
        grad: &mut [f32],
    ) -> Result<f64, Infallible> {
        let v = self.b.len();
        for (p, &h) in self.hidden_proposal.iter_mut().zip(self.hidden.iter()) {
            *p = h;
        }
        for &i in mv.flipped {
            let i = i as usize;
            let (Some(&from), Some(&to)) = (mv.from.get(i), mv.to.get(i)) else {
                continue;
            };
            let delta = f64::from(to) - f64::from(from);
            let column = self.w.get(i..).unwrap_or(&[]).iter().step_by(v.max(1));
            for (h, &w) in self.hidden_proposal.iter_mut().zip(column) {
                *h += delta * f64::from(w);
            }
        }
        let pre = core::mem::take(&mut self.hidden_proposal);
        let u = self.finish(pre, mv.to, grad);
        self.hidden_proposal = pre;
        Ok(u)
    }

    fn commit(&mut self) {
        core::mem::swap(&mut self.hidden, &mut self.hidden_proposal);
    }
}

impl<M: FlipMath> crate::baselines::FlipDelta for Rbm<'_, M> {
    fn log_density_delta(&mut self, x: &[u8], i: usize) -> Result<f64, Infallible> {
        // ΔU = δ b_i + Σ_j [softplus(p_j + δ W_ji) − softplus(p_j)] from the cached p = Wx + c.
        let v = self.b.len();
        let delta = 1.0 - 2.0 * f64::from(x.get(i).copied().unwrap_or(0));
        let column = self.w.get(i..).unwrap_or(&[]).iter().step_by(v);
        let hidden: f64 = self
            .hidden
            .iter()
            .zip(column)
            .map(|(&p, &w)| {
                crate::math::softplus(p + delta * f64::from(w)) - crate::math::softplus(p)
            })
            .sum();
        Ok(delta * f64::from(self.b.get(i).copied().unwrap_or(0.0)) + hidden)
    }

    fn commit_flip(&mut self, x: &[u8], i: usize) {
        let v = self.b.len();
        let delta = 2.0 * f64::from(x.get(i).copied().unwrap_or(0)) - 1.0;
        let column = self.w.get(i..).unwrap_or(&[]).iter().step_by(v);
        for (h, &w) in self.hidden.iter_mut().zip(column) {
            *h += delta * f64::from(w);
        }
    }
}
