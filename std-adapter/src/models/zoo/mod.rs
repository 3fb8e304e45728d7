//! The model zoo: seeded generators for the models of the papers, written as model files.
//!
//! Every generator returns a [`ModelSpec`]: a `kind` and its fields, with numeric arrays kept
//! apart so that they can be written inline ([`ModelSpec::to_json`]) or to `.npy` files beside
//! the JSON ([`ModelSpec::to_json_with_files`]). Real-valued arrays are rounded to single
//! precision when generated, so the inline and the `.npy` form describe the same model bit for
//! bit (the binary kernels compute in `f32`).
//!
//! | generator | kind | model |
//! |---|---|---|
//! | [`IsingLatticeSpec`] | `ising_lattice` | 2-D nearest-neighbour Ising |
//! | [`BarabasiAlbertSpec`] | `ising` | Ising on a Barabási–Albert graph (edge list) |
//! | [`RbmSpec`], [`rbm_from_weights`] | `rbm` | RBM with hidden units summed out |
//! | [`BinaryQuadraticSpec`] | `binary_quadratic` | `U(x) = xᵀWx + bᵀx` |
//! | [`LogisticRegressionSpec`] | `binary_logistic` | Bayesian logistic regression over `β ∈ {0,1}^d` |
//! | [`LatticeGaussianSpec`] | `ordinal_quadratic` | rotated or sparse-cycle lattice Gaussian |
//! | [`LatticeMixtureSpec`] | `lattice_mixture` | the 25-mode lattice mixture |
//!
//! # Kinds described here
//!
//! * `binary_logistic`: fields `X` (`m × d`) and `y` (`m` entries, 0 or 1), optionally
//!   `beta_true` (the coefficients the data came from, for reference only). The posterior of
//!   `β ∈ {0,1}^d` under a uniform prior has the log-density
//!   `U(β) = Σ_i [y_i v_i − ln(1 + e^{v_i})]` with `v = Xβ`, and `∇U = Xᵀ(y − σ(v))`. It is not
//!   a quadratic in `β`, so it cannot be written as `binary_quadratic`; it needs this kind.
//! * `ordinal_quadratic`: fields `states` (`S`), `A` (`d × d`, symmetric), `mu`, `b`;
//!   `U(x) = −½(x−μ)ᵀA(x−μ) + bᵀx` over `{0..S−1}^d`.
//! * `lattice_mixture`: fields `states` (`S`), `modes` (`K × d`), `scale` (`τ > 0`) and
//!   `distance` (`"l2"`, the default, or `"squared"`);
//!   `U(θ) = ln Σ_k exp(−dist(θ, μ_k) / τ)` over `{0..S−1}^d`, where `dist` is the Euclidean
//!   distance `|θ − μ_k|₂` or its square.

mod binary;
mod ising;
mod lattice;

pub use binary::{
    BinaryQuadraticSpec, LogisticData, LogisticRegressionSpec, RbmSpec, rbm_from_weights,
};
pub use ising::{BarabasiAlbertSpec, IsingLatticeSpec, barabasi_albert_edges};
pub use lattice::{
    GaussianStructure, LatticeGaussianSpec, LatticeMixtureSpec, MixtureDistance, lattice_modes,
};

use crate::io::npy::{NpyArray, NpyData};
use crate::models::{ModelDoc, ModelError};
use serde_json::Value;
use std::fmt::{self, Write as _};
use std::path::PathBuf;

/// A generator parameter that is out of range.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ZooError {
    /// The parameter, spelled as the generator's field (`edges_per_node`).
    pub parameter: &'static str,
    /// What is wrong with it.
    pub problem: String,
}

impl ZooError {
    pub(crate) fn new(parameter: &'static str, problem: impl Into<String>) -> Self {
        Self {
            parameter,
            problem: problem.into(),
        }
    }
}

impl fmt::Display for ZooError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.parameter, self.problem)
    }
}

impl std::error::Error for ZooError {}

/// One field of a generated model.
#[derive(Clone, Debug, PartialEq)]
pub enum FieldValue {
    /// A number, string, boolean or other small JSON value, always written inline.
    Json(Value),
    /// A numeric array, row-major.
    Array {
        /// Its shape (rank ≥ 1).
        shape: Vec<usize>,
        /// Its entries, finite.
        data: Vec<f32>,
    },
}

/// A generated model: its `kind` and its fields in the order they are written.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelSpec {
    /// The `kind` field.
    pub kind: String,
    /// The other fields, in order.
    pub fields: Vec<(String, FieldValue)>,
}

impl ModelSpec {
    /// A model of `kind` with no fields yet.
    pub fn new(kind: impl Into<String>) -> Self {
        Self {
            kind: kind.into(),
            fields: Vec::new(),
        }
    }

    /// Adds a small JSON field.
    #[must_use]
    pub fn with(mut self, name: &str, value: impl Into<Value>) -> Self {
        self.fields
            .push((name.to_string(), FieldValue::Json(value.into())));
        self
    }

    /// Adds an array field of the given shape.
    #[must_use]
    pub fn with_array(mut self, name: &str, shape: &[usize], data: Vec<f32>) -> Self {
        debug_assert_eq!(shape.iter().product::<usize>(), data.len());
        self.fields.push((
            name.to_string(),
            FieldValue::Array {
                shape: shape.to_vec(),
                data,
            },
        ));
        self
    }

    /// The field called `name`.
    pub fn field(&self, name: &str) -> Option<&FieldValue> {
        self.fields.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }

    /// The model file with every array inline: pretty JSON with `kind` first, one matrix row
    /// per line, and a trailing newline.
    pub fn to_json(&self) -> String {
        self.render(&|_| None)
    }

    /// The model file with every array moved to a `.npy` file named `{prefix}_{field}.npy`
    /// (the JSON names it relative to its own folder, so put both in the same folder). Returns
    /// the JSON text and the files to write, as `(file name, array)`.
    pub fn to_json_with_files(&self, prefix: &str) -> (String, Vec<(String, NpyArray)>) {
        let name = |field: &str| format!("{prefix}_{field}.npy");
        let files = self
            .fields
            .iter()
            .filter_map(|(field, value)| match value {
                FieldValue::Array { shape, data } => Some((
                    name(field),
                    NpyArray {
                        shape: shape.clone(),
                        data: NpyData::F32(data.clone()),
                    },
                )),
                FieldValue::Json(_) => None,
            })
            .collect();
        (self.render(&|field| Some(name(field))), files)
    }

    /// The model as a parsed document, as if read from a file in the current folder.
    ///
    /// # Errors
    ///
    /// Only if the rendered JSON fails to parse, which would be a bug.
    pub fn to_doc(&self) -> Result<ModelDoc, ModelError> {
        ModelDoc::parse(&self.to_json(), PathBuf::new())
    }

    fn render(&self, external: &dyn Fn(&str) -> Option<String>) -> String {
        let mut out = String::from("{\n  \"kind\": ");
        out.push_str(&Value::String(self.kind.clone()).to_string());
        for (name, value) in &self.fields {
            out.push_str(",\n  ");
            out.push_str(&Value::String(name.clone()).to_string());
            out.push_str(": ");
            match value {
                FieldValue::Json(v) => out.push_str(&v.to_string()),
                FieldValue::Array { shape, data } => match external(name) {
                    Some(file) => out.push_str(&Value::String(file).to_string()),
                    None => render_array(&mut out, shape, data, 1),
                },
            }
        }
        out.push_str("\n}\n");
        out
    }
}

/// Writes a nested JSON array; the innermost dimension goes on one line.
fn render_array(out: &mut String, shape: &[usize], data: &[f32], indent: usize) {
    match shape {
        [] => {}
        [_] => {
            out.push('[');
            for (i, &x) in data.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                push_number(out, x);
            }
            out.push(']');
        }
        [n, rest @ ..] => {
            let stride: usize = rest.iter().product();
            if *n == 0 || stride == 0 {
                // Keep empty inner rows so the shape survives the round trip.
                out.push('[');
                for i in 0..*n {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    render_array(out, rest, &[], indent + 1);
                }
                out.push(']');
                return;
            }
            out.push_str("[\n");
            let pad = "  ".repeat(indent + 1);
            for (i, chunk) in data.chunks(stride).enumerate() {
                if i > 0 {
                    out.push_str(",\n");
                }
                out.push_str(&pad);
                render_array(out, rest, chunk, indent + 1);
            }
            out.push('\n');
            out.push_str(&"  ".repeat(indent));
            out.push(']');
        }
    }
}

/// The shortest decimal that reads back as the same `f32`; integers without a fraction.
fn push_number(out: &mut String, x: f32) {
    if !x.is_finite() {
        // Generators only produce finite values; `null` makes a loader name the entry.
        out.push_str("null");
    } else if x == x.trunc() && x.abs() < 1e7 {
        let _ = write!(out, "{}", x as i64);
    } else if (1e-4..1e7).contains(&x.abs()) {
        let _ = write!(out, "{x}");
    } else {
        let _ = write!(out, "{x:e}");
    }
}

/// Checks that a count parameter is at least `min`.
pub(crate) fn at_least(parameter: &'static str, value: usize, min: usize) -> Result<(), ZooError> {
    if value < min {
        Err(ZooError::new(
            parameter,
            format!("must be at least {min}, found {value}"),
        ))
    } else {
        Ok(())
    }
}

/// Checks that a real parameter is finite and, with `positive`, greater than zero.
pub(crate) fn finite(parameter: &'static str, value: f64, positive: bool) -> Result<(), ZooError> {
    if !value.is_finite() {
        Err(ZooError::new(parameter, "must be finite"))
    } else if positive && value <= 0.0 {
        Err(ZooError::new(
            parameter,
            format!("must be positive, found {value}"),
        ))
    } else {
        Ok(())
    }
}

/// Rounds to single precision, refusing values that overflow it.
pub(crate) fn single(parameter: &'static str, x: f64) -> Result<f32, ZooError> {
    let y = x as f32;
    if y.is_finite() {
        Ok(y)
    } else {
        Err(ZooError::new(
            parameter,
            format!("gives a value ({x}) outside single precision"),
        ))
    }
}

/// `n` independent normal draws with standard deviation `scale`, rounded to `f32`.
pub(crate) fn normals<R: rand_core::Rng + ?Sized>(rng: &mut R, n: usize, scale: f64) -> Vec<f32> {
    let mut z = vec![0.0f64; n];
    langevin_core::random::fill_normal(rng, &mut z);
    z.into_iter().map(|v| (v * scale) as f32).collect()
}

/// `j / (d − 1)`: `d` points spread evenly over `[0, 1]` (0 for a single point).
fn spacing(j: usize, d: usize) -> f64 {
    if d > 1 {
        j as f64 / (d - 1) as f64
    } else {
        0.0
    }
}

/// The binary model a generated file describes.
#[cfg(test)]
pub(crate) fn loaded(spec: &ModelSpec) -> crate::models::BinaryModel {
    crate::models::BinaryModel::from_doc(&spec.to_doc().unwrap())
        .unwrap()
        .unwrap()
}

/// The parameter a refused generation names.
#[cfg(test)]
pub(crate) fn refused<T: std::fmt::Debug>(outcome: Result<T, ZooError>) -> &'static str {
    outcome.unwrap_err().parameter
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_back_exactly() {
        let values = [
            0.0f32,
            1.0,
            -3.0,
            0.1,
            0.4407,
            1e-7,
            -2.5e-5,
            3.4e38,
            1.17e-38,
            1e-45,
            16_777_216.0,
            1e7,
            123_456.79,
        ];
        for &x in &values {
            let mut s = String::new();
            push_number(&mut s, x);
            let back: f64 = serde_json::from_str(&s).unwrap();
            assert_eq!((back as f32).to_bits(), x.to_bits(), "{x} -> {s}");
        }
    }

    #[test]
    fn inline_and_file_forms_describe_the_same_arrays() {
        let spec = ModelSpec::new("rbm")
            .with_array("W", &[2, 3], vec![0.1, -0.2, 0.3, 1e-6, 5.0, -7.25])
            .with_array("b", &[3], vec![0.0, 1.0, -1.0])
            .with_array("c", &[2], vec![0.5, 0.25]);
        let doc = spec.to_doc().unwrap();
        assert_eq!(doc.kind, "rbm");
        let (r, c, w) = doc.matrix("W").unwrap();
        assert_eq!((r, c), (2, 3));
        let w32: Vec<f32> = w.iter().map(|&x| x as f32).collect();
        assert_eq!(w32, vec![0.1, -0.2, 0.3, 1e-6, 5.0, -7.25]);
        let (text, files) = spec.to_json_with_files("m");
        assert!(text.contains("\"W\": \"m_W.npy\""));
        assert_eq!(files.len(), 3);
        assert_eq!(files[0].0, "m_W.npy");
        assert_eq!(files[0].1.shape, vec![2, 3]);
        // Field order is kept and kind comes first.
        let kind_at = text.find("\"kind\"").unwrap();
        let w_at = text.find("\"W\"").unwrap();
        let c_at = text.find("\"c\"").unwrap();
        assert!(kind_at < w_at && w_at < c_at);
    }

    #[test]
    fn empty_rows_keep_their_shape() {
        let spec = ModelSpec::new("rbm").with_array("W", &[3, 0], Vec::new());
        let doc = spec.to_doc().unwrap();
        assert_eq!(doc.array("W").unwrap().0, vec![3, 0]);
    }
}
