//! A binary RBM with parameters in double precision, as learning and AIS hold it.

use super::LearnError;
use crate::models::BinaryModel;
use langevin_core::math::{sigmoid, softplus};
use serde_json::{Value, json};

/// A binary RBM `p(v, h) ∝ exp(hᵀ W v + bᵀ v + cᵀ h)` over `v ∈ {0,1}^V`, `h ∈ {0,1}^H`, with
/// its parameters in one flat vector `θ = (W, b, c)` (`W` hidden × visible, row-major), the
/// layout the optimisers update in place.
///
/// The model files store the same parameters; [`to_model`](Self::to_model) narrows them to the
/// single precision the samplers use.
#[derive(Clone, Debug, PartialEq)]
pub struct RbmParams {
    visible: usize,
    hidden: usize,
    theta: Vec<f64>,
}

impl RbmParams {
    /// An RBM from `W` (`H × V`, row-major), `b` (`V`) and `c` (`H`).
    ///
    /// # Errors
    ///
    /// [`LearnError::Shape`] for `V = 0` or lengths that do not fit; [`LearnError::NonFinite`]
    /// for a parameter that is not finite.
    pub fn new(w: &[f64], b: &[f64], c: &[f64]) -> Result<Self, LearnError> {
        let (visible, hidden) = (b.len(), c.len());
        if visible == 0 || visible.checked_mul(hidden) != Some(w.len()) {
            return Err(super::ShapeError::Rbm {
                hidden,
                visible,
                entries: w.len(),
            }
            .into());
        }
        let theta: Vec<f64> = w.iter().chain(b).chain(c).copied().collect();
        if theta.iter().any(|t| !t.is_finite()) {
            return Err(LearnError::NonFinite);
        }
        Ok(Self {
            visible,
            hidden,
            theta,
        })
    }

    /// All parameters zero: the uniform distribution.
    pub fn zeros(visible: usize, hidden: usize) -> Self {
        Self {
            visible,
            hidden,
            theta: vec![0.0; visible * hidden + visible + hidden],
        }
    }

    /// The usual starting point of learning (Hinton's practical guide): visible biases `b`,
    /// hidden biases 0, and weights drawn uniformly with standard deviation `scale` (random, so
    /// that the hidden units do not stay identical: from `W = 0` every hidden unit gets the same
    /// gradient).
    pub fn initial<R: rand_core::Rng + ?Sized>(
        b: &[f64],
        hidden: usize,
        scale: f64,
        rng: &mut R,
    ) -> Self {
        let visible = b.len();
        let half_width = scale * 3f64.sqrt();
        let mut theta: Vec<f64> = (0..visible * hidden)
            .map(|_| (2.0 * langevin_core::random::unit_f64(rng) - 1.0) * half_width)
            .collect();
        theta.extend_from_slice(b);
        theta.extend(std::iter::repeat_n(0.0, hidden));
        Self {
            visible,
            hidden,
            theta,
        }
    }

    /// The RBM of a model file's `rbm` kind; `None` for other kinds.
    pub fn from_model(model: &BinaryModel) -> Option<Self> {
        match model {
            BinaryModel::Rbm { w, b, c, .. } => {
                let f = |v: &[f32]| v.iter().map(|&x| f64::from(x)).collect::<Vec<_>>();
                Self::new(&f(w), &f(b), &f(c)).ok()
            }
            _ => None,
        }
    }

    /// Visible units `V`.
    pub fn visible(&self) -> usize {
        self.visible
    }

    /// Hidden units `H`.
    pub fn hidden(&self) -> usize {
        self.hidden
    }

    /// `θ = (W, b, c)`.
    pub fn theta(&self) -> &[f64] {
        &self.theta
    }

    /// `θ`, to update in place.
    pub fn theta_mut(&mut self) -> &mut [f64] {
        &mut self.theta
    }

    /// `W`, `H × V` row-major.
    pub fn w(&self) -> &[f64] {
        &self.theta[..self.visible * self.hidden]
    }

    /// Visible biases `b`.
    pub fn b(&self) -> &[f64] {
        let vh = self.visible * self.hidden;
        &self.theta[vh..vh + self.visible]
    }

    /// Hidden biases `c`.
    pub fn c(&self) -> &[f64] {
        &self.theta[self.visible * self.hidden + self.visible..]
    }

    /// The hidden pre-activations `W v + c` into `out` (`H` entries).
    pub fn hidden_input(&self, v: &[u8], out: &mut [f64]) {
        let nv = self.visible;
        for (j, (o, &cj)) in out.iter_mut().zip(self.c()).enumerate() {
            let row = &self.w()[j * nv..(j + 1) * nv];
            *o = cj
                + row
                    .iter()
                    .zip(v)
                    .filter(|&(_, &x)| x != 0)
                    .map(|(&w, _)| w)
                    .sum::<f64>();
        }
    }

    /// The unnormalised log-marginal `U(v) = bᵀv + Σ_j softplus((W v + c)_j)` in double
    /// precision; `scratch` holds `H` doubles.
    pub fn log_marginal(&self, v: &[u8], scratch: &mut [f64]) -> f64 {
        self.hidden_input(v, scratch);
        let linear: f64 = self
            .b()
            .iter()
            .zip(v)
            .filter(|&(_, &x)| x != 0)
            .map(|(&b, _)| b)
            .sum();
        linear + scratch.iter().map(|&a| softplus(a)).sum::<f64>()
    }

    /// Adds `weight · ∂U/∂θ` at `v` to `acc` (`θ`'s length): `σ((Wv + c)_j) v_k` for `W_jk`,
    /// `v_k` for `b_k`, `σ((Wv + c)_j)` for `c_j`. `scratch` holds `H` doubles.
    pub fn add_statistics(&self, v: &[u8], weight: f64, acc: &mut [f64], scratch: &mut [f64]) {
        let (nv, nh) = (self.visible, self.hidden);
        self.hidden_input(v, scratch);
        let (w_acc, rest) = acc.split_at_mut(nv * nh);
        let (b_acc, c_acc) = rest.split_at_mut(nv);
        for (j, &a) in scratch.iter().enumerate() {
            let p = weight * sigmoid(a);
            c_acc[j] += p;
            let row = &mut w_acc[j * nv..(j + 1) * nv];
            for (r, &x) in row.iter_mut().zip(v) {
                if x != 0 {
                    *r += p;
                }
            }
        }
        for (bk, &x) in b_acc.iter_mut().zip(v) {
            if x != 0 {
                *bk += weight;
            }
        }
    }

    /// Which entries of `θ` are weights (the ℓ1 and ℓ2 penalties apply to these only, not to
    /// the biases).
    pub fn is_weight(&self, index: usize) -> bool {
        index < self.visible * self.hidden
    }

    /// The model the samplers run, parameters narrowed to single precision.
    ///
    /// # Errors
    ///
    /// [`LearnError::NonFinite`] when a parameter overflows single precision.
    pub fn to_model(&self) -> Result<BinaryModel, LearnError> {
        let f = |v: &[f64]| narrow(v);
        Ok(BinaryModel::rbm(f(self.w())?, f(self.b())?, f(self.c())?))
    }

    /// The model file (`kind: "rbm"`) that `langevin sample` and `langevin ais` read.
    pub fn to_json(&self) -> Value {
        let rows: Vec<&[f64]> = self.w().chunks(self.visible).collect();
        json!({"kind": "rbm", "W": rows, "b": self.b(), "c": self.c()})
    }
}

/// `v` in single precision, refused when an entry stops being finite there.
pub(crate) fn narrow(v: &[f64]) -> Result<Vec<f32>, LearnError> {
    v.iter()
        .map(|&x| {
            let y = x as f32;
            if y.is_finite() {
                Ok(y)
            } else {
                Err(LearnError::NonFinite)
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use langevin_core::BinaryTarget;

    fn small() -> RbmParams {
        RbmParams::new(
            &[0.5, -0.25, 1.0, 0.75, -1.5, 0.125],
            &[0.1, -0.2, 0.3],
            &[0.05, -0.4],
        )
        .unwrap()
    }

    #[test]
    fn the_log_marginal_matches_the_samplers_target() {
        let rbm = small();
        let model = rbm.to_model().unwrap();
        let mut cache = vec![0.0; model.cache_len()];
        let mut target = model.target(&mut cache).unwrap();
        let mut grad = [0.0f32; 3];
        let mut scratch = [0.0; 2];
        for v in [[0u8, 0, 0], [1, 0, 1], [1, 1, 1]] {
            let u = target.log_density_and_grad(&v, &mut grad).unwrap();
            assert!(
                (u - rbm.log_marginal(&v, &mut scratch)).abs() < 1e-5,
                "{v:?}"
            );
        }
    }

    #[test]
    fn the_statistics_are_the_gradient_of_the_log_marginal() {
        // Central differences of U(v) in θ, each parameter in turn.
        let rbm = small();
        let v = [1u8, 0, 1];
        let mut scratch = [0.0; 2];
        let mut acc = vec![0.0; rbm.theta().len()];
        rbm.add_statistics(&v, 1.0, &mut acc, &mut scratch);
        for (k, &g) in acc.iter().enumerate() {
            let h = 1e-6;
            let (mut up, mut down) = (rbm.clone(), rbm.clone());
            up.theta_mut()[k] += h;
            down.theta_mut()[k] -= h;
            let fd = (up.log_marginal(&v, &mut scratch) - down.log_marginal(&v, &mut scratch))
                / (2.0 * h);
            assert!((fd - g).abs() < 1e-6, "θ_{k}: {fd} vs {g}");
        }
    }
}
