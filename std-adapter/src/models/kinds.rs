//! One serde type per discrete model kind: what a model file holds, field for field.
//!
//! [`ModelFile`] is a discrete model file, its `kind` naming the variant; the continuous kinds
//! are [`ModelSpec`](crate::continuous::ModelSpec). The JSON Schema that
//! `langevin model --schema` prints is generated from these types ([`super::schema`]); a field
//! a kind does not have is refused. Arrays are inline JSON or the name of a `.npy` file,
//! relative to the model file's folder. A new kind is one type here, one variant of
//! [`ModelFile`] and its builder.
//!
//! The builders read the same fields through [`ModelDoc`](super::ModelDoc), whose messages name
//! the field at fault; these types fix what the file may hold.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// A vector: a JSON array of numbers, or the name of a 1-D `.npy` file relative to the model
/// file's folder.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Vector {
    /// The numbers, inline.
    Inline(Vec<f64>),
    /// A 1-D `.npy` file.
    File(PathBuf),
}

/// A matrix: a JSON array of equal-length rows of numbers, or the name of a 2-D `.npy` file
/// relative to the model file's folder.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Matrix {
    /// The rows, inline.
    Inline(Vec<Vec<f64>>),
    /// A 2-D `.npy` file.
    File(PathBuf),
}

/// The fields of a `binary_quadratic` model file (see [`ModelFile::BinaryQuadratic`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("x-domain" = "binary"))]
pub struct BinaryQuadraticFile {
    /// d × d couplings.
    #[serde(rename = "W")]
    pub w: Matrix,
    /// d linear terms.
    pub b: Vector,
}

/// The fields of an `ising` model file (see [`ModelFile::Ising`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("x-domain" = "binary"))]
pub struct IsingFile {
    /// Nodes.
    pub n: usize,
    /// Edges [[i, j, J_ij], ..], each once (default: none).
    // Left out, never `null`: the builders refuse `null`.
    #[schemars(with = "Matrix")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edges: Option<Matrix>,
    /// n fields h_i (default: zeros).
    // Left out, never `null`: the builders refuse `null`.
    #[schemars(with = "Vector")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<Vector>,
}

/// The fields of an `ising_lattice` model file (see [`ModelFile::IsingLattice`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("x-domain" = "binary"))]
pub struct IsingLatticeFile {
    /// Lattice rows.
    pub rows: usize,
    /// Lattice columns.
    pub cols: usize,
    /// Coupling J of every bond.
    pub coupling: f64,
    /// Field h at every site (default 0).
    // Left out, never `null`: the builders refuse `null`.
    #[schemars(with = "f64")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<f64>,
    /// Wrap around the edges (default true).
    // Left out, never `null`: the builders refuse `null`.
    #[schemars(with = "bool")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub periodic: Option<bool>,
}

/// The fields of a `rbm` model file (see [`ModelFile::Rbm`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("x-domain" = "binary"))]
pub struct RbmFile {
    /// Hidden × visible weights.
    #[serde(rename = "W")]
    pub w: Matrix,
    /// Visible biases.
    pub b: Vector,
    /// Hidden biases.
    pub c: Vector,
    /// How `W` is stored: `f32` (default), or `bf16`, which makes the model the RBM whose
    /// weights are `W` rounded to bfloat16 (half the bytes a step reads).
    // Left out, never `null`: the builders refuse `null`.
    #[schemars(with = "RbmWeights")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weights: Option<RbmWeights>,
}

/// The storage of an RBM's weights in a model file (see [`RbmFile::weights`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RbmWeights {
    /// Single precision, the weights as given.
    F32,
    /// bfloat16: the weights rounded to nearest, ties to even.
    Bf16,
}

/// The fields of a `binary_logistic` model file (see [`ModelFile::BinaryLogistic`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("x-domain" = "binary"))]
pub struct BinaryLogisticFile {
    /// m × d covariates.
    #[serde(rename = "X")]
    pub x: Matrix,
    /// m responses, 0 or 1.
    pub y: Vector,
    /// The coefficients the data were generated from (kept for reference, not read).
    // Left out, never `null`: the builders refuse `null`.
    #[schemars(with = "Vector")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub beta_true: Option<Vector>,
}

/// The fields of an `ordinal_quadratic` model file (see [`ModelFile::OrdinalQuadratic`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("x-domain" = "ordinal"))]
pub struct OrdinalQuadraticFile {
    /// Values per coordinate S (2..=65535).
    pub states: usize,
    /// d centres μ.
    pub mu: Vector,
    /// d × d precision.
    #[serde(rename = "A")]
    pub a: Matrix,
    /// d linear terms (default: zeros).
    // Left out, never `null`: the builders refuse `null`.
    #[schemars(with = "Vector")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub b: Option<Vector>,
}

/// The fields of a `potts` model file (see [`ModelFile::Potts`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("x-domain" = "categorical"))]
pub struct PottsFile {
    /// Labels per node S (2..=65535).
    pub states: usize,
    /// Nodes.
    pub n: usize,
    /// Edges [[i, j, J_ij], ..], each once (default: none).
    // Left out, never `null`: the builders refuse `null`.
    #[schemars(with = "Matrix")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edges: Option<Matrix>,
    /// n × S fields h (default: zeros).
    // Left out, never `null`: the builders refuse `null`.
    #[schemars(with = "Matrix")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<Matrix>,
}

/// The distance of a lattice mixture to its modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum Distance {
    /// The Euclidean distance (the default).
    #[serde(rename = "l2")]
    L2,
    /// The squared Euclidean distance.
    #[serde(rename = "squared")]
    Squared,
}

/// The fields of a `lattice_mixture` model file (see [`ModelFile::LatticeMixture`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("x-domain" = "ordinal"))]
pub struct LatticeMixtureFile {
    /// Values per coordinate S (2..=65535).
    pub states: usize,
    /// K × d modes μ_k, inside the lattice.
    pub modes: Matrix,
    /// τ > 0.
    pub scale: f64,
    /// Distance to a mode (default "l2").
    // Left out, never `null`: the builders refuse `null`.
    #[schemars(with = "Distance")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distance: Option<Distance>,
}

/// The fields of a `quartic_mixture` model file (see [`ModelFile::QuarticMixture`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("x-domain" = "ordinal"))]
pub struct QuarticMixtureFile {
    /// Dimension d.
    pub dim: usize,
    /// Values per coordinate S (2..=65535).
    pub states: usize,
    /// Wells K ≥ 1.
    pub components: usize,
    /// Width σ > 0.
    pub sigma: f64,
    /// Seed of the wells.
    pub seed: u64,
}

/// A discrete model file: its `kind` and that kind's fields.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ModelFile {
    /// U(x) = xᵀWx + bᵀx over x ∈ {0,1}^d.
    BinaryQuadratic(BinaryQuadraticFile),
    /// The Ising model on a graph, U(x) = Σ_edges J_ij s_i s_j + Σ_i h_i s_i with
    /// s = 2x − 1.
    Ising(IsingFile),
    /// The Ising model on a rows × cols nearest-neighbour lattice.
    IsingLattice(IsingLatticeFile),
    /// A restricted Boltzmann machine over its visible units, hidden units summed out.
    Rbm(RbmFile),
    /// Bayesian logistic regression over binary coefficients β ∈ {0,1}^d.
    BinaryLogistic(BinaryLogisticFile),
    /// U(x) = −½ (x−μ)ᵀ A (x−μ) + bᵀx over {0..S−1}^d.
    OrdinalQuadratic(OrdinalQuadraticFile),
    /// The Potts model, U(x) = Σ_edges J_ij [x_i = x_j] + Σ_i h_{i,x_i}.
    Potts(PottsFile),
    /// U(x) = ln Σ_k exp(−dist(x, μ_k) / τ) over {0..S−1}^d.
    LatticeMixture(LatticeMixtureFile),
    /// A seeded mixture of quartic wells over {0..S−1}^d.
    QuarticMixture(QuarticMixtureFile),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_reads_into_its_kind_and_unknown_fields_are_refused() {
        let m: ModelFile =
            serde_json::from_str(r#"{"kind":"rbm","W":[[1,2]],"b":[0,0],"c":"c.npy"}"#).unwrap();
        let ModelFile::Rbm(r) = &m else {
            panic!("{m:?}")
        };
        assert_eq!(r.c, Vector::File("c.npy".into()));
        let back = serde_json::to_value(&m).unwrap();
        assert_eq!(back["kind"], "rbm");
        assert_eq!(serde_json::from_value::<ModelFile>(back).unwrap(), m);
        let extra = r#"{"kind":"rbm","W":[[1,2]],"b":[0,0],"c":[0],"d":1}"#;
        assert!(serde_json::from_str::<ModelFile>(extra).is_err());
        let lattice = r#"{"kind":"ising_lattice","rows":2,"cols":2,"coupling":0.1,"feild":0}"#;
        assert!(serde_json::from_str::<ModelFile>(lattice).is_err());
        assert!(serde_json::from_str::<ModelFile>(r#"{"kind":"no_such_kind"}"#).is_err());
    }
}
