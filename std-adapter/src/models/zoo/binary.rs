//! Binary models: random RBMs and quadratics, and Bayesian logistic regression over `β ∈ {0,1}^d`.

use super::{ModelSpec, ZooError, at_least, finite, normals, single, spacing};
use langevin_core::random::{fill_normal, unit_f64};
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

/// An RBM with random weights, written as kind `rbm`:
/// `U(x) = Σ_j softplus((Wx + c)_j) + bᵀx` with `W` hidden × visible.
///
/// `W`, `b` and `c` have independent `N(0, scale²)` entries; the default scale `1/√visible`
/// keeps the hidden pre-activations of order one whatever the size.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RbmSpec {
    /// Visible units `d` (≥ 1).
    pub visible: usize,
    /// Hidden units (≥ 1).
    pub hidden: usize,
    /// Standard deviation of the entries; `None` for `1/√visible`.
    pub scale: Option<f64>,
    /// Seed of the weights.
    pub seed: u64,
}

impl Default for RbmSpec {
    fn default() -> Self {
        Self {
            visible: 784,
            hidden: 500,
            scale: None,
            seed: 0,
        }
    }
}

impl RbmSpec {
    /// The model file.
    ///
    /// # Errors
    ///
    /// [`ZooError`] for zero units or a scale that is not finite and positive.
    pub fn generate(&self) -> Result<ModelSpec, ZooError> {
        at_least("visible", self.visible, 1)?;
        at_least("hidden", self.hidden, 1)?;
        let scale = self.scale.unwrap_or(1.0 / (self.visible as f64).sqrt());
        finite("scale", scale, true)?;
        single("scale", scale)?;
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(self.seed);
        let w = normals(&mut rng, self.hidden * self.visible, scale);
        let b = normals(&mut rng, self.visible, scale);
        let c = normals(&mut rng, self.hidden, scale);
        Ok(ModelSpec::new("rbm")
            .with_array("W", &[self.hidden, self.visible], w)
            .with_array("b", &[self.visible], b)
            .with_array("c", &[self.hidden], c))
    }
}

/// An RBM with given weights `w` (`hidden × visible`, row-major) and biases (zero when `None`).
///
/// # Errors
///
/// [`ZooError`] for mismatched lengths, zero units or entries that are not finite in single
/// precision.
pub fn rbm_from_weights(
    hidden: usize,
    visible: usize,
    w: &[f64],
    b: Option<&[f64]>,
    c: Option<&[f64]>,
) -> Result<ModelSpec, ZooError> {
    at_least("visible", visible, 1)?;
    at_least("hidden", hidden, 1)?;
    let convert = |name: &'static str, v: &[f64], len: usize| -> Result<Vec<f32>, ZooError> {
        if v.len() != len {
            return Err(ZooError::new(
                name,
                format!("has {} entries, expected {len}", v.len()),
            ));
        }
        v.iter()
            .map(|&x| {
                finite(name, x, false)?;
                single(name, x)
            })
            .collect()
    };
    let w = convert("weights", w, hidden * visible)?;
    let b = match b {
        Some(b) => convert("visible_bias", b, visible)?,
        None => vec![0.0; visible],
    };
    let c = match c {
        Some(c) => convert("hidden_bias", c, hidden)?,
        None => vec![0.0; hidden],
    };
    Ok(ModelSpec::new("rbm")
        .with_array("W", &[hidden, visible], w)
        .with_array("b", &[visible], b)
        .with_array("c", &[hidden], c))
}

/// A random binary quadratic, written as kind `binary_quadratic`: `U(x) = xᵀWx + bᵀx`.
///
/// `W` is symmetric with a zero diagonal and independent `N(0, scale²)` entries above it; `b`
/// has `N(0, scale²)` entries. The default scale `1/√dim` keeps the gradients of order one (a
/// Sherrington–Kirkpatrick-like glass at moderate temperature).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BinaryQuadraticSpec {
    /// Dimension `d` (≥ 1).
    pub dim: usize,
    /// Standard deviation of the entries; `None` for `1/√dim`.
    pub scale: Option<f64>,
    /// Seed.
    pub seed: u64,
}

impl Default for BinaryQuadraticSpec {
    fn default() -> Self {
        Self {
            dim: 100,
            scale: None,
            seed: 0,
        }
    }
}

impl BinaryQuadraticSpec {
    /// The model file.
    ///
    /// # Errors
    ///
    /// [`ZooError`] for `dim = 0` or a scale that is not finite and positive.
    pub fn generate(&self) -> Result<ModelSpec, ZooError> {
        let d = self.dim;
        at_least("dim", d, 1)?;
        let scale = self.scale.unwrap_or(1.0 / (d as f64).sqrt());
        finite("scale", scale, true)?;
        single("scale", scale)?;
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(self.seed);
        let mut w = vec![0.0f32; d * d];
        for i in 0..d {
            let upper = normals(&mut rng, d - i - 1, scale);
            for (j, v) in (i + 1..d).zip(upper) {
                w[i * d + j] = v;
                w[j * d + i] = v;
            }
        }
        let b = normals(&mut rng, d, scale);
        Ok(ModelSpec::new("binary_quadratic")
            .with_array("W", &[d, d], w)
            .with_array("b", &[d], b))
    }
}

/// Bayesian logistic regression over a binary coefficient vector, with Sun et al. (2023)'s data
/// generator (appendix B.4), written as kind `binary_logistic` (see the [module
/// docs](super)).
///
/// Rows `X_i ∈ R^d` are independent `N(0, ¼ ΛΣΛ)` with `Σ_jj = 1.25`, `Σ_jk = 0.25` and
/// `Λ_jj = exp(−0.25 + (j − 1)/(d − 1))` (`j = 1..d`); the true coefficients are `β_j = 1` for
/// `j ≤ active` and 0 after; `y_i ∼ Bernoulli(σ(X_i β))`. The paper's setting is the default:
/// `d = 100`, `m = 50`, 7 active coefficients.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LogisticRegressionSpec {
    /// Coefficients `d` (≥ 1).
    pub dim: usize,
    /// Observations `m` (≥ 1).
    pub samples: usize,
    /// Leading coefficients set to 1 in the truth (≤ `dim`).
    pub active: usize,
    /// Seed of the data.
    pub seed: u64,
}

impl Default for LogisticRegressionSpec {
    fn default() -> Self {
        Self {
            dim: 100,
            samples: 50,
            active: 7,
            seed: 0,
        }
    }
}

/// Data drawn by [`LogisticRegressionSpec::data`].
#[derive(Clone, Debug, PartialEq)]
pub struct LogisticData {
    /// Design matrix, `samples × dim`, row-major.
    pub x: Vec<f32>,
    /// Responses, 0 or 1.
    pub y: Vec<f32>,
    /// The coefficients the responses were drawn from.
    pub beta: Vec<f32>,
}

impl LogisticRegressionSpec {
    /// Draws the design matrix, the true coefficients and the responses.
    ///
    /// # Errors
    ///
    /// [`ZooError`] for zero sizes or more active coefficients than `dim`.
    pub fn data(&self) -> Result<LogisticData, ZooError> {
        let (d, m) = (self.dim, self.samples);
        at_least("dim", d, 1)?;
        at_least("samples", m, 1)?;
        if self.active > d {
            return Err(ZooError::new(
                "active",
                format!("must be at most dim = {d}, found {}", self.active),
            ));
        }
        let lambda: Vec<f64> = (0..d)
            .map(|j| {
                let t = spacing(j, d);
                (-0.25 + t).exp()
            })
            .collect();
        let beta: Vec<f32> = (0..d)
            .map(|j| f32::from(u8::from(j < self.active)))
            .collect();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(self.seed);
        let mut x = Vec::with_capacity(m * d);
        let mut y = Vec::with_capacity(m);
        // Σ = I + ¼ 11ᵀ, so z + ½ w 1 with z ∼ N(0, I), w ∼ N(0, 1) has covariance Σ.
        let mut z = vec![0.0f64; d + 1];
        for _ in 0..m {
            fill_normal(&mut rng, &mut z);
            let common = 0.5 * z[d];
            let row: Vec<f32> = z[..d]
                .iter()
                .zip(&lambda)
                .map(|(&zj, &l)| (0.5 * l * (zj + common)) as f32)
                .collect();
            let logit: f64 = row
                .iter()
                .zip(&beta)
                .map(|(&a, &b)| f64::from(a) * f64::from(b))
                .sum();
            let p = 1.0 / (1.0 + (-logit).exp());
            y.push(f32::from(u8::from(unit_f64(&mut rng) < p)));
            x.extend(row);
        }
        Ok(LogisticData { x, y, beta })
    }

    /// The model file: `X`, `y` and, for reference, `beta_true`.
    ///
    /// # Errors
    ///
    /// As [`LogisticRegressionSpec::data`].
    pub fn generate(&self) -> Result<ModelSpec, ZooError> {
        let data = self.data()?;
        Ok(ModelSpec::new("binary_logistic")
            .with_array("X", &[self.samples, self.dim], data.x)
            .with_array("y", &[self.samples], data.y)
            .with_array("beta_true", &[self.dim], data.beta))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::binary::BinaryModel;
    use crate::models::zoo::{loaded, refused};

    #[test]
    fn logistic_rows_have_the_stated_covariance_and_responses_follow_the_logits() {
        // 10 covariance entries and one response test share a false-positive rate of 1e-6:
        // two-sided z-tests at 1e-6 / 11 each need |z| < 5.4.
        let z_max = 5.4;
        let spec = LogisticRegressionSpec {
            dim: 4,
            samples: 40_000,
            active: 2,
            seed: 3,
        };
        let data = spec.data().unwrap();
        let (d, m) = (spec.dim, spec.samples);
        let lambda: Vec<f64> = (0..d)
            .map(|j| (-0.25 + j as f64 / (d - 1) as f64).exp())
            .collect();
        let sigma = |a: usize, b: usize| {
            let s = if a == b { 1.25 } else { 0.25 };
            0.25 * lambda[a] * lambda[b] * s
        };
        for a in 0..d {
            for b in a..d {
                let moment: f64 = data
                    .x
                    .chunks_exact(d)
                    .map(|r| f64::from(r[a]) * f64::from(r[b]))
                    .sum::<f64>()
                    / m as f64;
                // Isserlis: Var(X_a X_b) = Σ_aa Σ_bb + Σ_ab² for centred Gaussians.
                let se = ((sigma(a, a) * sigma(b, b) + sigma(a, b).powi(2)) / m as f64).sqrt();
                let z = (moment - sigma(a, b)) / se;
                assert!(z.abs() < z_max, "entry ({a}, {b}): z = {z}");
            }
        }
        assert_eq!(data.beta, vec![1.0, 1.0, 0.0, 0.0]);
        let (mut residual, mut variance) = (0.0, 0.0);
        for (row, &y) in data.x.chunks_exact(d).zip(&data.y) {
            assert!(y == 0.0 || y == 1.0);
            let v = f64::from(row[0]) + f64::from(row[1]);
            let p = 1.0 / (1.0 + (-v).exp());
            residual += f64::from(y) - p;
            variance += p * (1.0 - p);
        }
        let z = residual / variance.sqrt();
        assert!(z.abs() < z_max, "responses: z = {z}");
    }

    #[test]
    fn paper_setting_is_the_default() {
        let spec = LogisticRegressionSpec::default().generate().unwrap();
        assert_eq!(spec.kind, "binary_logistic");
        let doc = spec.to_doc().unwrap();
        assert_eq!(doc.matrix("X").unwrap().0, 50);
        assert_eq!(doc.matrix("X").unwrap().1, 100);
        let beta = doc.vector("beta_true").unwrap();
        assert_eq!(beta.iter().sum::<f64>(), 7.0);
        assert!(beta[..7].iter().all(|&b| b == 1.0));
        assert_eq!(
            refused(
                LogisticRegressionSpec {
                    active: 101,
                    ..Default::default()
                }
                .data()
            ),
            "active"
        );
    }

    #[test]
    fn quadratic_is_symmetric_with_zero_diagonal_and_loads() {
        let spec = BinaryQuadraticSpec {
            dim: 7,
            scale: Some(0.5),
            seed: 1,
        }
        .generate()
        .unwrap();
        let doc = spec.to_doc().unwrap();
        let (r, c, w) = doc.matrix("W").unwrap();
        assert_eq!((r, c), (7, 7));
        for i in 0..7 {
            assert_eq!(w[i * 7 + i], 0.0);
            for j in 0..7 {
                assert_eq!(w[i * 7 + j], w[j * 7 + i]);
            }
        }
        assert_eq!(BinaryModel::from_doc(&doc).unwrap().unwrap().dim(), 7);
    }

    #[test]
    fn rbm_loads_and_given_weights_are_checked() {
        let spec = RbmSpec {
            visible: 6,
            hidden: 3,
            scale: None,
            seed: 2,
        }
        .generate()
        .unwrap();
        let model = loaded(&spec);
        assert_eq!(model.dim(), 6);
        let given = rbm_from_weights(
            2,
            3,
            &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
            None,
            Some(&[0.5, 1.5]),
        )
        .unwrap();
        let doc = given.to_doc().unwrap();
        assert_eq!(doc.vector("b").unwrap(), vec![0.0; 3]);
        assert_eq!(doc.vector("c").unwrap(), vec![0.5, 1.5]);
        assert_eq!(
            refused(rbm_from_weights(2, 3, &[1.0; 5], None, None)),
            "weights"
        );
        assert_eq!(
            refused(rbm_from_weights(1, 1, &[f64::NAN], None, None)),
            "weights"
        );
        assert_eq!(
            refused(
                RbmSpec {
                    scale: Some(-1.0),
                    ..Default::default()
                }
                .generate()
            ),
            "scale"
        );
    }
}
