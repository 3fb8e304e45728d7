//! Sparse quadratic terms for the second-order kernel: the exact `W` of an Ising model on a
//! graph, in the compressed sparse rows that [`SparseW`] borrows.
//!
//! # The exact `W` of a graph Ising model
//!
//! [`IsingGraph`](langevin_core::models::IsingGraph) has
//! `U(s) = Σ_{(i,j) ∈ E} J_ij s_i s_j + Σ_i h_i s_i` over spins `s = 2x − 1`. With
//! `s_i s_j = 4 x_i x_j − 2 x_i − 2 x_j + 1`, `U` as a polynomial in `x` is quadratic with
//! Hessian `W_ij = 4 J_ij` for each edge (both `(i, j)` and `(j, i)`) and `W_ii = 0`, so for
//! any two states `U(y) − U(x) = (y − x)ᵀ∇U(x) + ½ (y − x)ᵀ W (y − x)` holds exactly, with
//! `∇U(x)_i = 2 (Σ_{j~i} J_ij s_j + h_i)` the gradient the model reports. Repeated edges add.

use crate::binary::BinaryModel;
use langevin_core::ParamError;
use langevin_core::second_order::SparseW;
use std::collections::BTreeMap;
use std::fmt;

/// Why an exact `W` could not be derived.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ExactWError {
    /// The adjacency lists do not fit their offsets.
    Adjacency,
    /// Node `node` lists `neighbour`, which is out of range (of `nodes`) or itself.
    Neighbour {
        /// The node.
        node: usize,
        /// The neighbour it lists.
        neighbour: u32,
        /// The number of nodes.
        nodes: usize,
    },
    /// `W[row, column]` overflows single precision.
    NonFinite {
        /// The row.
        row: usize,
        /// The column.
        column: u32,
    },
    /// The model is not an Ising model on a graph.
    NotIsingGraph,
}

impl fmt::Display for ExactWError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Adjacency => f.write_str("the adjacency lists do not fit their offsets"),
            Self::Neighbour {
                node,
                neighbour,
                nodes,
            } => write!(
                f,
                "node {node} lists neighbour {neighbour} (of {nodes} nodes)"
            ),
            Self::NonFinite { row, column } => {
                write!(f, "W[{row}, {column}] is not finite in single precision")
            }
            Self::NotIsingGraph => {
                f.write_str("a sparse W is derived only for Ising models on a graph")
            }
        }
    }
}

impl std::error::Error for ExactWError {}

/// A symmetric matrix in compressed sparse rows, owned (columns strictly increasing in each
/// row); [`view`](Self::view) validates it as a [`SparseW`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CsrMatrix {
    /// Row offsets, `d + 1` entries.
    pub offsets: Vec<u32>,
    /// Column indices, row by row.
    pub columns: Vec<u32>,
    /// Values, aligned with `columns`.
    pub values: Vec<f32>,
}

impl CsrMatrix {
    /// The dimension `d`.
    pub fn dim(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// The validated kernel view.
    ///
    /// # Errors
    ///
    /// As for [`SparseW::new`].
    pub fn view(&self) -> Result<SparseW<'_>, ParamError> {
        SparseW::new(&self.offsets, &self.columns, &self.values)
    }

    /// The dense `d × d` row-major form in `f64` (for the diagonal SDP and the factor).
    pub fn to_dense(&self) -> Vec<f64> {
        let d = self.dim();
        let mut w = vec![0.0; d * d];
        for (i, pair) in self.offsets.windows(2).enumerate() {
            let (lo, hi) = (pair[0] as usize, pair[1] as usize);
            for (&j, &v) in self.columns[lo..hi].iter().zip(&self.values[lo..hi]) {
                w[i * d + j as usize] = f64::from(v);
            }
        }
        w
    }
}

/// The exact `W` (module docs) of an Ising model on `n = offsets.len() − 1` nodes given in the
/// compressed adjacency form of [`IsingGraph`](langevin_core::models::IsingGraph): `4 J_ij`
/// off the diagonal, repeated edges summed (in `f64`, then rounded to `f32`), columns sorted.
///
/// # Errors
///
/// [`ExactWError`] if the lengths do not fit, a neighbour is out of range or a self-loop, or a
/// value is not finite in single precision.
///
/// # Examples
///
/// ```
/// use langevin_std::ab2::exact_w::ising_graph_w;
/// // One edge 0 — 1 with J = 0.5.
/// let w = ising_graph_w(&[0, 1, 2], &[1, 0], &[0.5, 0.5]).unwrap();
/// assert_eq!((w.columns.as_slice(), w.values.as_slice()), ([1, 0].as_slice(), [2.0, 2.0].as_slice()));
/// ```
pub fn ising_graph_w(
    offsets: &[u32],
    neighbours: &[u32],
    couplings: &[f32],
) -> Result<CsrMatrix, ExactWError> {
    let n = offsets.len().saturating_sub(1);
    if neighbours.len() != couplings.len()
        || offsets.first() != Some(&0)
        || offsets.last().map(|&v| v as usize) != Some(neighbours.len())
        || offsets.windows(2).any(|p| p[0] > p[1])
    {
        return Err(ExactWError::Adjacency);
    }
    let mut out = CsrMatrix {
        offsets: Vec::with_capacity(n + 1),
        columns: Vec::with_capacity(neighbours.len()),
        values: Vec::with_capacity(neighbours.len()),
    };
    out.offsets.push(0);
    let mut row: BTreeMap<u32, f64> = BTreeMap::new();
    for (i, pair) in offsets.windows(2).enumerate() {
        let (lo, hi) = (pair[0] as usize, pair[1] as usize);
        row.clear();
        for (&j, &c) in neighbours[lo..hi].iter().zip(&couplings[lo..hi]) {
            if j as usize >= n || j as usize == i {
                return Err(ExactWError::Neighbour {
                    node: i,
                    neighbour: j,
                    nodes: n,
                });
            }
            *row.entry(j).or_insert(0.0) += 4.0 * f64::from(c);
        }
        for (&j, &v) in &row {
            let v = v as f32;
            if !v.is_finite() {
                return Err(ExactWError::NonFinite { row: i, column: j });
            }
            out.columns.push(j);
            out.values.push(v);
        }
        out.offsets.push(out.columns.len() as u32);
    }
    Ok(out)
}

/// [`ising_graph_w`] of a [`BinaryModel::IsingGraph`].
///
/// # Errors
///
/// [`ExactWError::NotIsingGraph`] for any other kind of model, or as for [`ising_graph_w`].
pub fn model_w(model: &BinaryModel) -> Result<CsrMatrix, ExactWError> {
    match model {
        BinaryModel::IsingGraph {
            offsets,
            neighbours,
            couplings,
            ..
        } => ising_graph_w(offsets, neighbours, couplings),
        _ => Err(ExactWError::NotIsingGraph),
    }
}
