//! Single-site updates of an RBM's visible units, priced with one logarithm a site.
//!
//! Flipping visible unit `i` by `δ = ±1` changes the log-density by
//!
//! ```text
//! ΔU = δ b_i + Σ_j [softplus(p_j + δ W_ji) − softplus(p_j)] = δ b_i + ln Π_j (1 + s_j (e^{δ W_ji} − 1))
//! ```
//!
//! with `p = W x + c` and `s_j = σ(p_j)`. The factors `e^{±W_ji}` change only with the weights,
//! so one [`RbmFlipFactors`] serves every chain of a PCD update; each chain keeps its hidden
//! odds `q_j = e^{p_j}`, which a flip multiplies by `e^{δ W_ji}`. A site then costs `H`
//! multiply-adds and one logarithm, where the softplus form costs `2H` exponentials and
//! logarithms. The values agree with the softplus form to rounding, not bit for bit.

use langevin_core::BinaryTarget;
use langevin_core::baselines::FlipDelta;
use std::convert::Infallible;

/// Bound on every `|p_j|` and on every site's `Σ_j |W_ji|`: the odds and the products of
/// factors stay far inside `f64` (`e^{600}` is about `10^{260}`).
const MAX_EXPONENT: f64 = 600.0;

/// Flips between two recomputations of the odds from the pre-activations, which the
/// multiplicative updates would otherwise let drift by an ulp a flip.
const RESYNC_FLIPS: u32 = 64;

/// The per-weight factors `e^{±W_ji}` of an RBM, laid out by visible unit.
#[derive(Debug)]
pub(super) struct RbmFlipFactors {
    hidden: usize,
    /// `W_ji` at `i·H + j`.
    weights: Vec<f64>,
    /// `e^{W_ji}` at `i·H + j`.
    up: Vec<f64>,
    /// `e^{−W_ji}` at `i·H + j`.
    down: Vec<f64>,
    b: Vec<f64>,
    c: Vec<f64>,
}

impl RbmFlipFactors {
    /// The factors of the RBM with `w` (`H × V`, row-major), `b` and `c`, or `None` when a
    /// pre-activation or a product of factors could leave the range where this form is
    /// accurate (the softplus form is then the one to use).
    pub(super) fn new(w: &[f32], b: &[f32], c: &[f32]) -> Option<Self> {
        let (v, h) = (b.len(), c.len());
        if w.len() != v * h {
            return None;
        }
        // |p_j| ≤ |c_j| + Σ_i |W_ji| for every state.
        let hidden_ok = w
            .chunks_exact(v.max(1))
            .zip(c)
            .all(|(row, &cj)| f64::from(cj.abs()) + sum_abs(row) <= MAX_EXPONENT);
        let mut weights = vec![0.0; v * h];
        for (j, row) in w.chunks_exact(v.max(1)).enumerate() {
            for (i, &wji) in row.iter().enumerate() {
                weights[i * h + j] = f64::from(wji);
            }
        }
        let sites_ok = weights
            .chunks_exact(h.max(1))
            .all(|col| col.iter().map(|w| w.abs()).sum::<f64>() <= MAX_EXPONENT);
        if !(hidden_ok && sites_ok) {
            return None;
        }
        Some(Self {
            hidden: h,
            up: weights.iter().map(|&w| libm::exp(w)).collect(),
            down: weights.iter().map(|&w| libm::exp(-w)).collect(),
            weights,
            b: b.iter().map(|&x| f64::from(x)).collect(),
            c: c.iter().map(|&x| f64::from(x)).collect(),
        })
    }

    /// A chain's view, with `state` (at least [`state_len`](Self::state_len) values) for its
    /// hidden pre-activations, odds and probabilities; call
    /// [`log_density_and_grad`](BinaryTarget::log_density_and_grad) before the first flip.
    pub(super) fn sites<'a>(&'a self, state: &'a mut [f64]) -> RbmSites<'a> {
        let h = self.hidden;
        let (p, rest) = state.split_at_mut(h.min(state.len()));
        let (q, s) = rest.split_at_mut(h.min(rest.len()));
        RbmSites {
            factors: self,
            p,
            q,
            s,
            flips: 0,
        }
    }

    /// The length of a chain's state for [`sites`](Self::sites).
    pub(super) fn state_len(&self) -> usize {
        3 * self.hidden
    }
}

fn sum_abs(xs: &[f32]) -> f64 {
    xs.iter().map(|&x| f64::from(x.abs())).sum()
}

/// One chain's RBM target for single-site updates (see the module notes).
#[derive(Debug)]
pub(super) struct RbmSites<'a> {
    factors: &'a RbmFlipFactors,
    /// Pre-activations `p = W x + c`.
    p: &'a mut [f64],
    /// Odds `e^{p_j}`.
    q: &'a mut [f64],
    /// Probabilities `σ(p_j)`.
    s: &'a mut [f64],
    flips: u32,
}

impl RbmSites<'_> {
    fn resync(&mut self) {
        for ((q, s), &p) in self.q.iter_mut().zip(self.s.iter_mut()).zip(self.p.iter()) {
            *q = libm::exp(p);
            *s = langevin_core::math::sigmoid(p);
        }
        self.flips = 0;
    }
}

impl BinaryTarget for RbmSites<'_> {
    type Error = Infallible;

    fn dim(&self) -> usize {
        self.factors.b.len()
    }

    fn log_density_and_grad(&mut self, x: &[u8], grad: &mut [f32]) -> Result<f64, Infallible> {
        let f = self.factors;
        let h = f.hidden;
        self.p.copy_from_slice(&f.c);
        for (&xi, col) in x.iter().zip(f.weights.chunks_exact(h.max(1))) {
            if xi != 0 {
                for (p, &w) in self.p.iter_mut().zip(col) {
                    *p += w;
                }
            }
        }
        self.resync();
        let visible: f64 = x.iter().zip(&f.b).map(|(&xi, &b)| f64::from(xi) * b).sum();
        let hidden: f64 = self
            .p
            .iter()
            .map(|&p| langevin_core::math::softplus(p))
            .sum();
        for ((g, &b), col) in grad
            .iter_mut()
            .zip(&f.b)
            .zip(f.weights.chunks_exact(h.max(1)))
        {
            let dot: f64 = self.s.iter().zip(col).map(|(&s, &w)| s * w).sum();
            *g = (b + dot) as f32;
        }
        Ok(visible + hidden)
    }
}

impl FlipDelta for RbmSites<'_> {
    #[inline]
    fn log_density_delta(&mut self, x: &[u8], i: usize) -> Result<f64, Infallible> {
        let f = self.factors;
        let h = f.hidden;
        let on = x.get(i).copied().unwrap_or(0) == 0;
        let table = if on { &f.up } else { &f.down };
        let factors = table.get(i * h..(i + 1) * h).unwrap_or(&[]);
        let product: f64 = self
            .s
            .iter()
            .zip(factors)
            .map(|(&s, &e)| 1.0 + s * (e - 1.0))
            .product();
        let b = f.b.get(i).copied().unwrap_or(0.0);
        Ok(if on { b } else { -b } + libm::log(product))
    }

    fn commit_flip(&mut self, x: &[u8], i: usize) {
        let f = self.factors;
        let h = f.hidden;
        let on = x.get(i).copied().unwrap_or(0) != 0;
        let (table, sign) = if on { (&f.up, 1.0) } else { (&f.down, -1.0) };
        let factors = table.get(i * h..(i + 1) * h).unwrap_or(&[]);
        let weights = f.weights.get(i * h..(i + 1) * h).unwrap_or(&[]);
        for (p, &w) in self.p.iter_mut().zip(weights) {
            *p += sign * w;
        }
        self.flips += 1;
        if self.flips >= RESYNC_FLIPS {
            self.resync();
            return;
        }
        for ((q, s), &e) in self.q.iter_mut().zip(self.s.iter_mut()).zip(factors) {
            *q *= e;
            *s = *q / (1.0 + *q);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use langevin_core::math::Libm;
    use langevin_core::models::Rbm;

    /// A deterministic RBM with weights of either sign and a range of sizes.
    fn rbm(v: usize, h: usize, scale: f32) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
        let w = (0..h * v)
            .map(|k| ((k * 37 % 101) as f32 - 50.0) * 0.02 * scale)
            .collect();
        let b = (0..v).map(|i| (i as f32 * 0.7).sin() * 0.4).collect();
        let c = (0..h).map(|j| (j as f32 * 1.3).cos() * 0.5).collect();
        (w, b, c)
    }

    /// Along a walk of flips, every site's ΔU agrees with the core's softplus form to a few
    /// ulps of the terms summed; the log-density and gradient agree to the core's single
    /// precision.
    #[test]
    fn flip_deltas_agree_with_the_softplus_form() {
        for scale in [0.1, 1.0, 8.0] {
            let (v, h) = (23, 13);
            let (w, b, c) = rbm(v, h, scale);
            let factors = RbmFlipFactors::new(&w, &b, &c).unwrap();
            let mut state = vec![0.0; factors.state_len()];
            let mut sites = factors.sites(&mut state);
            let mut cache = vec![0.0; 2 * h];
            let mut exact = Rbm::<Libm>::with_math(&w, &b, &c, &mut cache).unwrap();
            let mut x: Vec<u8> = (0..v).map(|i| (i % 3 == 0) as u8).collect();
            let (mut g1, mut g2) = (vec![0.0; v], vec![0.0; v]);
            let u1 = sites.log_density_and_grad(&x, &mut g1).unwrap();
            let u2 = exact.log_density_and_grad(&x, &mut g2).unwrap();
            assert!((u1 - u2).abs() <= 1e-6 * u2.abs().max(1.0), "{u1} {u2}");
            for (a, e) in g1.iter().zip(&g2) {
                assert!((a - e).abs() <= 1e-5 * e.abs().max(1.0), "{a} {e}");
            }
            for step in 0..500 {
                let i = (step * 7 + step / 5) % v;
                let d1 = sites.log_density_delta(&x, i).unwrap();
                let d2 = exact.log_density_delta(&x, i).unwrap();
                let tol = 1e-12 * (1.0 + f64::from(scale) * h as f64);
                assert!((d1 - d2).abs() <= tol, "step {step}: {d1} {d2}");
                x[i] ^= 1;
                sites.commit_flip(&x, i);
                exact.commit_flip(&x, i);
            }
        }
    }

    /// Weights whose products could overflow are left to the softplus form.
    #[test]
    fn large_weights_are_refused() {
        let (w, b, c) = rbm(64, 32, 1.0);
        assert!(RbmFlipFactors::new(&w, &b, &c).is_some());
        let big: Vec<f32> = w.iter().map(|x| x * 200.0).collect();
        assert!(RbmFlipFactors::new(&big, &b, &c).is_none());
        assert!(RbmFlipFactors::new(&w[1..], &b, &c).is_none());
    }
}
