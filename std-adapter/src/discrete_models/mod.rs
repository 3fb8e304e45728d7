//! Ordinal, categorical and binary models for the discrete samplers, with constructors from
//! parsed JSON for the command line.
//!
//! * [`OrdinalQuadratic`]: `U(x) = −½ (x−μ)ᵀ A (x−μ) + bᵀx` over `{0..S−1}^d`, and the lattice
//!   Gaussians of the any-scale balanced paper (rotated, sparse cycle) built on it;
//! * [`Potts`]: `U(x) = Σ_edges J_ij [x_i = x_j] + Σ_i h_{i,x_i}` on any graph (categorical);
//! * [`LatticeMixture`]: the 25-mode mixture on a `{0..449}²` lattice of the cyclical-scheduling
//!   paper, in its code's distance form or the printed squared form;
//! * [`QuarticMixture`]: a mixture of quartic wells over `{0..S−1}^d` (the definition is stated
//!   on the type: the paper's own is not recoverable);
//! * [`RbmBlockGibbs`]: exact alternating block Gibbs for a binary RBM, the reference sampler.
//!
//! Every model implements the target trait of its domain and the single-coordinate
//! conditional capability the Gibbs baselines need.

mod lattice_mixture;
mod ordinal_quadratic;
mod potts;
mod quartic;
mod rbm_gibbs;

pub use lattice_mixture::{LatticeMixture, MixtureForm};
pub use ordinal_quadratic::OrdinalQuadratic;
pub use potts::Potts;
pub use quartic::QuarticMixture;
pub use rbm_gibbs::RbmBlockGibbs;

use langevin_core::ParamError;
use std::fmt;

/// A label model read from a model file: the `ordinal_quadratic` and `potts` kinds.
#[derive(Clone, Debug)]
pub enum LabelModel {
    /// `{"kind":"ordinal_quadratic","states":S,"A":[[..]],"mu":[..],"b":[..]}`.
    Ordinal(OrdinalQuadratic),
    /// `{"kind":"potts","states":S,"n":d,"edges":[[i,j,J_ij],..],"field":[[..S values..],..]}`.
    Categorical(Potts),
}

impl LabelModel {
    /// Builds the model named by `value["kind"]`.
    ///
    /// # Errors
    ///
    /// [`ModelError::Field`] for a missing or unknown kind, and the errors of
    /// [`OrdinalQuadratic::from_json`] and [`Potts::from_json`].
    ///
    /// # Examples
    ///
    /// ```
    /// use langevin_std::discrete_models::LabelModel;
    /// let v = serde_json::json!({"kind": "potts", "states": 3, "n": 2, "edges": [[0, 1, 1.0]]});
    /// assert!(matches!(LabelModel::from_json(&v), Ok(LabelModel::Categorical(_))));
    /// ```
    pub fn from_json(value: &serde_json::Value) -> Result<Self, ModelError> {
        match value.get("kind").and_then(serde_json::Value::as_str) {
            Some("ordinal_quadratic") => {
                OrdinalQuadratic::from_json(value).map(LabelModel::Ordinal)
            }
            Some("potts") => Potts::from_json(value).map(LabelModel::Categorical),
            Some(other) => Err(field_error(
                "kind",
                format!("unknown label model kind {other:?}"),
            )),
            None => Err(field_error("kind", "missing")),
        }
    }
}

/// Why a model could not be built.
#[derive(Clone, Debug, PartialEq)]
pub enum ModelError {
    /// A JSON field is missing, has the wrong type or shape.
    Field {
        /// The field.
        field: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// A parameter is out of range.
    Param(ParamError),
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModelError::Field { field, reason } => write!(f, "field `{field}`: {reason}"),
            ModelError::Param(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for ModelError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ModelError::Param(e) => Some(e),
            ModelError::Field { .. } => None,
        }
    }
}

impl From<ParamError> for ModelError {
    fn from(e: ParamError) -> Self {
        ModelError::Param(e)
    }
}

fn field_error(field: &'static str, reason: impl Into<String>) -> ModelError {
    ModelError::Field {
        field,
        reason: reason.into(),
    }
}

/// Reads `value[field]` as a non-negative integer.
fn json_usize(value: &serde_json::Value, field: &'static str) -> Result<usize, ModelError> {
    value
        .get(field)
        .ok_or_else(|| field_error(field, "missing"))?
        .as_u64()
        .and_then(|v| usize::try_from(v).ok())
        .ok_or_else(|| field_error(field, "not a non-negative integer"))
}

/// Reads a JSON array of finite numbers.
fn json_vector(v: &serde_json::Value, field: &'static str) -> Result<Vec<f64>, ModelError> {
    let items = v
        .as_array()
        .ok_or_else(|| field_error(field, "not an array"))?;
    items
        .iter()
        .map(|x| {
            x.as_f64()
                .filter(|x| x.is_finite())
                .ok_or_else(|| field_error(field, "entries must be finite numbers"))
        })
        .collect()
}

/// Reads a JSON array of `rows` arrays of `cols` finite numbers, row-major.
fn json_matrix(
    v: &serde_json::Value,
    field: &'static str,
    rows: usize,
    cols: usize,
) -> Result<Vec<f64>, ModelError> {
    let items = v
        .as_array()
        .ok_or_else(|| field_error(field, "not an array of rows"))?;
    if items.len() != rows {
        return Err(field_error(
            field,
            format!("expected {rows} rows, found {}", items.len()),
        ));
    }
    let mut out = Vec::with_capacity(rows * cols);
    for row in items {
        let r = json_vector(row, field)?;
        if r.len() != cols {
            return Err(field_error(
                field,
                format!("expected rows of {cols}, found {}", r.len()),
            ));
        }
        out.extend(r);
    }
    Ok(out)
}

/// Checks `2 ≤ s ≤ 65 535`.
fn check_states(s: usize) -> Result<(), ModelError> {
    if (2..=usize::from(u16::MAX)).contains(&s) {
        Ok(())
    } else {
        Err(ModelError::Param(ParamError::OutOfRange {
            name: "states",
            value: s as f64,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_files_refuse_bad_json() {
        use serde_json::json;
        for bad in [
            json!({"states": 0, "A": [[1.0]], "mu": [0.0]}),
            json!({"states": 1, "A": [[1.0]], "mu": [0.0]}),
            json!({"states": 70000, "A": [[1.0]], "mu": [0.0]}),
            json!({"states": -3, "A": [[1.0]], "mu": [0.0]}),
            json!({"states": 4, "A": [[1.0, 0.0]], "mu": [0.0]}),
            json!({"states": 4, "A": [[1.0]], "mu": ["x"]}),
            json!({"states": 4, "A": [[1.0]], "mu": [0.0], "b": [1.0, 2.0]}),
            json!({"states": 4, "mu": [0.0]}),
            json!({"states": 4, "A": [], "mu": []}),
        ] {
            assert!(OrdinalQuadratic::from_json(&bad).is_err(), "{bad}");
        }
        for bad in [
            json!({"states": 1, "n": 2}),
            json!({"states": 3, "n": 0}),
            json!({"states": 3, "n": 2, "edges": [[0, 2, 1.0]]}),
            json!({"states": 3, "n": 2, "edges": [[1, 1, 1.0]]}),
            json!({"states": 3, "n": 2, "edges": [[0, 1]]}),
            json!({"states": 3, "n": 2, "edges": [[0, 1, "x"]]}),
            json!({"states": 3, "n": 2, "field": [[0.0, 0.0, 0.0]]}),
            json!({"states": 3, "n": 2, "field": [[0.0, 0.0], [0.0, 0.0]]}),
        ] {
            assert!(Potts::from_json(&bad).is_err(), "{bad}");
        }
        assert!(OrdinalQuadratic::new(4, vec![f64::NAN], vec![0.0], vec![0.0]).is_err());
        assert!(Potts::new(3, 2, &[(0, 1, f64::INFINITY)], vec![0.0; 6]).is_err());
    }
}
