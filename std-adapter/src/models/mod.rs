//! Discrete models, by domain, and the one parser of model files.
//!
//! * [`ModelDoc`]: a model file (JSON naming a `kind`, arrays inline or as `.npy` files), the
//!   only parser; [`ModelError`], the only error of model loading and construction, with its
//!   [`Problem`] as data;
//! * [`BinaryModel`]: the binary kinds (`binary_quadratic`, `ising`, `ising_lattice`, `rbm`,
//!   `binary_logistic`), read by [`BinaryModel::from_doc`];
//! * [`LabelModel`]: the ordinal and categorical kinds ([`LABEL_KINDS`]), read by
//!   [`LabelModel::from_doc`];
//! * the label models themselves:
//!   - [`OrdinalQuadratic`]: `U(x) = −½ (x−μ)ᵀ A (x−μ) + bᵀx` over `{0..S−1}^d`, and the
//!     lattice Gaussians of the any-scale balanced paper (rotated, sparse cycle) built on it;
//!   - [`Potts`]: `U(x) = Σ_edges J_ij [x_i = x_j] + Σ_i h_{i,x_i}` on any graph (categorical);
//!   - [`LatticeMixture`]: the 25-mode mixture on a `{0..449}²` lattice of the
//!     cyclical-scheduling paper, in its code's distance form or the printed squared form;
//!   - [`QuarticMixture`]: a mixture of quartic wells over `{0..S−1}^d` (the definition is
//!     stated on the type: the paper's own is not recoverable);
//! * [`RbmBlockGibbs`]: exact alternating block Gibbs for a binary RBM, the reference sampler;
//! * [`kinds`]: one serde type per discrete kind ([`kinds::ModelFile`]);
//! * [`schema`]: the JSON Schema of every kind, generated from those types and the continuous
//!   `ModelSpec`, checked by the parsers and printed by `langevin model --schema`;
//! * [`zoo`]: seeded generators that write model files.
//!
//! Every model implements the target trait of its domain and the single-coordinate
//! conditional capability the Gibbs baselines need.

/// The size half of a label target: `Infallible` errors, `dim` and `states` read from two
/// fields.
macro_rules! label_size {
    ($dim:ident, $states:ident) => {
        type Error = std::convert::Infallible;

        fn dim(&self) -> usize {
            self.$dim
        }

        fn states(&self) -> usize {
            self.$states
        }
    };
}

/// The evaluation half of a model enum's target trait (binary or label), forwarded to the
/// variant's own target through `$dispatch` (a `match` over the variants): `$value` is the
/// state entry and `$move` the trait's move.
macro_rules! forward_evaluations {
    ($dispatch:ident, $value:ty, $move:ty) => {
        #[inline(always)]
        fn log_density_and_grad(
            &mut self,
            x: &[$value],
            grad: &mut [f32],
        ) -> Result<f64, Self::Error> {
            $dispatch!(self, t => t.log_density_and_grad(x, grad))
        }

        #[inline(always)]
        fn log_density_and_grad_after(
            &mut self,
            mv: &$move,
            grad: &mut [f32],
        ) -> Result<f64, Self::Error> {
            $dispatch!(self, t => t.log_density_and_grad_after(mv, grad))
        }

        #[inline(always)]
        fn commit(&mut self) {
            $dispatch!(self, t => t.commit())
        }

        fn running_sums(&self) -> &[f64] {
            $dispatch!(self, t => t.running_sums())
        }

        fn running_sums_mut(&mut self) -> &mut [f64] {
            $dispatch!(self, t => t.running_sums_mut())
        }
    };
}

mod binary;
mod error;
mod file;
pub mod kinds;
mod labels;
mod lattice_mixture;
mod ordinal_quadratic;
mod potts;
mod quartic;
mod rbm_gibbs;
pub mod schema;
pub mod zoo;

pub use binary::{Bf16Weights, BinaryModel, ModelTarget, rbm_transpose};
pub use file::{Expected, ModelDoc, ModelError, Problem};
pub use labels::{LABEL_KINDS, LabelDomain, LabelModel, OrdinalModel};
pub use lattice_mixture::{LatticeMixture, MixtureForm};
pub use ordinal_quadratic::OrdinalQuadratic;
pub use potts::Potts;
pub use quartic::QuarticMixture;
pub use rbm_gibbs::RbmBlockGibbs;

use langevin_core::ParamError;

/// `out[k] = U(x with x_i = k)` for every value `k`, by evaluating the log-density.
fn conditional_from_density(
    x: &[u16],
    i: usize,
    out: &mut [f64],
    mut u: impl FnMut(&[u16]) -> f64,
) {
    let mut y = x.to_vec();
    for (k, o) in out.iter_mut().enumerate() {
        y[i] = k as u16;
        *o = u(&y);
    }
}

/// Checks `2 ≤ s ≤ 65 535`.
fn check_states(s: usize) -> Result<(), ModelError> {
    if (2..=usize::from(u16::MAX)).contains(&s) {
        Ok(())
    } else {
        Err(ParamError::OutOfRange {
            name: "states",
            value: s as f64,
        }
        .into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn label_model(text: &str) -> Result<Option<LabelModel>, ModelError> {
        LabelModel::from_doc(&ModelDoc::parse(text, std::path::PathBuf::new())?)
    }

    #[test]
    fn model_files_refuse_bad_json() {
        let bad = r#"
{"kind": "ordinal_quadratic", "states": 0, "A": [[1.0]], "mu": [0.0]}
{"kind": "ordinal_quadratic", "states": 1, "A": [[1.0]], "mu": [0.0]}
{"kind": "ordinal_quadratic", "states": 70000, "A": [[1.0]], "mu": [0.0]}
{"kind": "ordinal_quadratic", "states": -3, "A": [[1.0]], "mu": [0.0]}
{"kind": "ordinal_quadratic", "states": 4, "A": [[1.0, 0.0]], "mu": [0.0]}
{"kind": "ordinal_quadratic", "states": 4, "A": [[1.0]], "mu": ["x"]}
{"kind": "ordinal_quadratic", "states": 4, "A": [[1.0]], "mu": [0.0], "b": [1.0, 2.0]}
{"kind": "ordinal_quadratic", "states": 4, "mu": [0.0]}
{"kind": "ordinal_quadratic", "states": 4, "A": [], "mu": []}
{"kind": "potts", "states": 1, "n": 2}
{"kind": "potts", "states": 3, "n": 0}
{"kind": "potts", "states": 3, "n": 2, "edges": [[0, 2, 1.0]]}
{"kind": "potts", "states": 3, "n": 2, "edges": [[1, 1, 1.0]]}
{"kind": "potts", "states": 3, "n": 2, "edges": [[0, 1]]}
{"kind": "potts", "states": 3, "n": 2, "edges": [[0, 1, "x"]]}
{"kind": "potts", "states": 3, "n": 2, "field": [[0.0, 0.0, 0.0]]}
{"kind": "potts", "states": 3, "n": 2, "field": [[0.0, 0.0], [0.0, 0.0]]}
"#;
        for bad in bad.trim().lines() {
            assert!(label_model(bad).is_err(), "{bad}");
        }
        assert!(OrdinalQuadratic::new(4, vec![f64::NAN], vec![0.0], vec![0.0]).is_err());
        assert!(Potts::new(3, 2, &[(0, 1, f64::INFINITY)], vec![0.0; 6]).is_err());
    }

    #[test]
    fn a_parameter_error_reads_as_the_parameter_error() {
        let e = Potts::new(3, 0, &[], vec![]).unwrap_err();
        assert_eq!(e.to_string(), ParamError::EmptyDimension.to_string());
        assert!(std::error::Error::source(&e).is_some());
    }
}
