//! The multi-mode lattice mixture of the cyclical-scheduling paper.

use super::{ModelError, check_states, conditional_from_density};
use langevin_core::ParamError;
use langevin_core::ordinal::{OrdinalConditional, OrdinalTarget};
use std::convert::Infallible;

/// How a mixture component decays with the distance `r = |x − μ_k|₂` from its mode.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum MixtureForm {
    /// `exp(−r / τ)`: the published code's form (there `τ = σ·K = 3.75`); heavy, cone-shaped
    /// modes whose gradient has the constant length `1/τ`.
    Distance {
        /// `τ`.
        scale: f64,
    },
    /// `exp(−r² / (2v))`: the form printed in the paper; Gaussian modes of variance `v`.
    Squared {
        /// `v`.
        variance: f64,
    },
}

/// `U(x) = log Σ_k exp(−φ(|x − μ_k|₂))` over `x ∈ {0, …, S−1}^d`, with `φ` one of the
/// [`MixtureForm`]s.
///
/// The gradient is that of the same expression on `R^d` (a softmax-weighted sum of the
/// components' gradients, taken as 0 at a mode centre for the distance form). The
/// single-coordinate conditional evaluates `U` at each of the `S` values.
///
/// # Examples
///
/// ```
/// use langevin_std::models::LatticeMixture;
/// let m = LatticeMixture::twenty_five_modes();
/// assert_eq!(m.modes().len(), 25);
/// assert_eq!(m.nearest_mode(&[150, 300], 5.0), Some(1 * 5 + 3));
/// ```
#[derive(Clone, Debug)]
pub struct LatticeMixture {
    s: usize,
    d: usize,
    modes: Vec<Vec<f64>>,
    form: MixtureForm,
    scratch: Vec<f64>,
}

impl LatticeMixture {
    /// A mixture with the given modes (each of length `d`) over `S` values per coordinate.
    ///
    /// # Errors
    ///
    /// A [`ModelError`] for no modes, modes of different or zero length, `S` outside
    /// `2..=65535`, non-finite coordinates or a scale that is not finite and positive.
    pub fn new(states: usize, modes: Vec<Vec<f64>>, form: MixtureForm) -> Result<Self, ModelError> {
        check_states(states)?;
        let d = modes.first().map_or(0, Vec::len);
        if d == 0 {
            return Err(ParamError::EmptyDimension.into());
        }
        if modes.iter().any(|m| m.len() != d) {
            return Err(ParamError::OutOfRange {
                name: "mode length",
                value: d as f64,
            }
            .into());
        }
        if modes.iter().flatten().any(|v| !v.is_finite()) {
            return Err(ParamError::NonFinite("modes").into());
        }
        let scale = match form {
            MixtureForm::Distance { scale } => scale,
            MixtureForm::Squared { variance } => variance,
        };
        if !(scale.is_finite() && scale > 0.0) {
            return Err(ParamError::OutOfRange {
                name: "scale",
                value: scale,
            }
            .into());
        }
        let k = modes.len();
        Ok(Self {
            s: states,
            d,
            modes,
            form,
            scratch: vec![0.0; k],
        })
    }

    /// Modes on a `per_axis × per_axis` grid at `first + j·spacing` on each axis of a 2-D
    /// lattice `{0, …, S−1}²`.
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new).
    pub fn grid(
        states: usize,
        per_axis: usize,
        first: f64,
        spacing: f64,
        form: MixtureForm,
    ) -> Result<Self, ModelError> {
        let mut modes = Vec::with_capacity(per_axis * per_axis);
        for a in 0..per_axis {
            for b in 0..per_axis {
                modes.push(vec![first + a as f64 * spacing, first + b as f64 * spacing]);
            }
        }
        Self::new(states, modes, form)
    }

    /// The paper's 25-mode mixture: `{0..449}²`, modes at 75, 150, 225, 300, 375 on each axis,
    /// distance form with `τ = 3.75` (as in the published code).
    pub fn twenty_five_modes() -> Self {
        Self::twenty_five_modes_with(MixtureForm::Distance { scale: 3.75 })
    }

    /// The 25-mode layout with another form.
    pub fn twenty_five_modes_with(form: MixtureForm) -> Self {
        match Self::grid(450, 5, 75.0, 75.0, form) {
            Ok(m) => m,
            // The layout is fixed and valid; only a bad scale can fail, so fall back to the
            // published one rather than panic.
            Err(_) => Self {
                s: 450,
                d: 2,
                modes: (0..25)
                    .map(|k| vec![75.0 * (1 + k / 5) as f64, 75.0 * (1 + k % 5) as f64])
                    .collect(),
                form: MixtureForm::Distance { scale: 3.75 },
                scratch: vec![0.0; 25],
            },
        }
    }

    /// The modes.
    pub fn modes(&self) -> &[Vec<f64>] {
        &self.modes
    }

    /// The index of the mode within Euclidean distance `radius` of `x`, if any (the nearest).
    pub fn nearest_mode(&self, x: &[u16], radius: f64) -> Option<usize> {
        self.modes
            .iter()
            .map(|m| distance(x, m))
            .enumerate()
            .filter(|(_, r)| *r <= radius)
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(k, _)| k)
    }

    fn phi(&self, r: f64) -> f64 {
        match self.form {
            MixtureForm::Distance { scale } => r / scale,
            MixtureForm::Squared { variance } => r * r / (2.0 * variance),
        }
    }

    /// `U(x)`.
    pub fn log_density(&self, x: &[u16]) -> f64 {
        let mut m = f64::NEG_INFINITY;
        for mode in &self.modes {
            m = m.max(-self.phi(distance(x, mode)));
        }
        let z: f64 = self
            .modes
            .iter()
            .map(|mode| (-self.phi(distance(x, mode)) - m).exp())
            .sum();
        m + z.ln()
    }
}

fn distance(x: &[u16], mode: &[f64]) -> f64 {
    x.iter()
        .zip(mode)
        .map(|(&v, m)| (f64::from(v) - m).powi(2))
        .sum::<f64>()
        .sqrt()
}

impl OrdinalTarget for LatticeMixture {
    label_size!(d, s);

    #[inline(always)]
    fn log_density_and_grad(&mut self, x: &[u16], grad: &mut [f32]) -> Result<f64, Infallible> {
        let mut m = f64::NEG_INFINITY;
        for (e, mode) in self.scratch.iter_mut().zip(&self.modes) {
            let r = distance(x, mode);
            *e = match self.form {
                MixtureForm::Distance { scale } => -r / scale,
                MixtureForm::Squared { variance } => -r * r / (2.0 * variance),
            };
            m = m.max(*e);
        }
        let mut z = 0.0;
        for e in &mut self.scratch {
            *e = (*e - m).exp();
            z += *e;
        }
        grad.fill(0.0);
        let mut g = vec![0.0f64; self.d];
        for (w, mode) in self.scratch.iter().zip(&self.modes) {
            let w = w / z;
            let r = distance(x, mode);
            let factor = match self.form {
                MixtureForm::Distance { scale } => {
                    if r > 0.0 {
                        -1.0 / (scale * r)
                    } else {
                        0.0
                    }
                }
                MixtureForm::Squared { variance } => -1.0 / variance,
            };
            for ((gi, &v), mu) in g.iter_mut().zip(x).zip(mode) {
                *gi += w * factor * (f64::from(v) - mu);
            }
        }
        for (o, gi) in grad.iter_mut().zip(&g) {
            *o = *gi as f32;
        }
        Ok(m + z.ln())
    }
}

impl OrdinalConditional for LatticeMixture {
    fn conditional(&mut self, x: &[u16], i: usize, out: &mut [f64]) -> Result<(), Infallible> {
        conditional_from_density(x, i, out, |y| self.log_density(y));
        Ok(())
    }
}
