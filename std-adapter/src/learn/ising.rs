//! An Ising model on a graph with one coupling per edge and one field per node, as learning
//! holds it.

use super::LearnError;
use crate::models::BinaryModel;
use serde_json::{Value, json};
use std::collections::HashMap;

/// `U(s) = Σ_{(i,j) ∈ E} J_ij s_i s_j + Σ_i h_i s_i` over spins `s = 2x − 1` (the `ising` model
/// kind), with `θ = (J, h)` in one flat vector: the couplings in edge order, then the fields.
#[derive(Clone, Debug, PartialEq)]
pub struct IsingParams {
    n: usize,
    edges: Vec<(u32, u32)>,
    theta: Vec<f64>,
}

impl IsingParams {
    /// All couplings and fields zero on the graph with `n` nodes and these edges (each once,
    /// `i ≠ j`, both below `n`).
    ///
    /// # Errors
    ///
    /// [`LearnError::Shape`] for no nodes, an edge out of range, a self-loop or a repeated edge.
    pub fn zeros(n: usize, edges: Vec<(u32, u32)>) -> Result<Self, LearnError> {
        if n == 0 {
            return Err(super::ShapeError::NoNodes.into());
        }
        let mut seen = std::collections::HashSet::new();
        for &(i, j) in &edges {
            let key = (i.min(j), i.max(j));
            if i == j || i.max(j) as usize >= n || !seen.insert(key) {
                return Err(super::ShapeError::Edge { i, j, nodes: n }.into());
            }
        }
        let theta = vec![0.0; edges.len() + n];
        Ok(Self { n, edges, theta })
    }

    /// The `rows × cols` lattice, nearest neighbours, wrapping around when `periodic` (a
    /// dimension of 2 or less does not wrap: its wrap-around edge would repeat an edge or be a
    /// self-loop). Node `r·cols + c` is at row `r`, column `c`.
    ///
    /// # Errors
    ///
    /// [`LearnError::Shape`] for an empty lattice.
    pub fn lattice(rows: usize, cols: usize, periodic: bool) -> Result<Self, LearnError> {
        let mut edges = Vec::new();
        let node = |r: usize, c: usize| (r * cols + c) as u32;
        for r in 0..rows {
            for c in 0..cols {
                if c + 1 < cols {
                    edges.push((node(r, c), node(r, c + 1)));
                } else if periodic && cols > 2 {
                    edges.push((node(r, c), node(r, 0)));
                }
                if r + 1 < rows {
                    edges.push((node(r, c), node(r + 1, c)));
                } else if periodic && rows > 2 {
                    edges.push((node(r, c), node(0, c)));
                }
            }
        }
        Self::zeros(rows * cols, edges)
    }

    /// Nodes `n`.
    pub fn nodes(&self) -> usize {
        self.n
    }

    /// The edges, in the order of the couplings.
    pub fn edges(&self) -> &[(u32, u32)] {
        &self.edges
    }

    /// `θ = (J, h)`.
    pub fn theta(&self) -> &[f64] {
        &self.theta
    }

    /// `θ`, to update in place.
    pub fn theta_mut(&mut self) -> &mut [f64] {
        &mut self.theta
    }

    /// The couplings, in edge order.
    pub fn couplings(&self) -> &[f64] {
        &self.theta[..self.edges.len()]
    }

    /// The fields.
    pub fn field(&self) -> &[f64] {
        &self.theta[self.edges.len()..]
    }

    /// `U` at `x ∈ {0,1}^n`.
    pub fn log_density(&self, x: &[u8]) -> f64 {
        let s = |i: u32| if x[i as usize] != 0 { 1.0 } else { -1.0 };
        let pairs: f64 = self
            .edges
            .iter()
            .zip(self.couplings())
            .map(|(&(i, j), &c)| c * s(i) * s(j))
            .sum();
        let fields: f64 = (0..self.n as u32)
            .zip(self.field())
            .map(|(i, &h)| h * s(i))
            .sum();
        pairs + fields
    }

    /// Adds `weight · ∂U/∂θ` at `x` to `acc`: `s_i s_j` for `J_ij`, `s_i` for `h_i`.
    pub fn add_statistics(&self, x: &[u8], weight: f64, acc: &mut [f64]) {
        let s = |i: usize| if x[i] != 0 { 1.0 } else { -1.0 };
        let (j_acc, h_acc) = acc.split_at_mut(self.edges.len());
        for (a, &(i, j)) in j_acc.iter_mut().zip(&self.edges) {
            *a += weight * s(i as usize) * s(j as usize);
        }
        for (i, a) in h_acc.iter_mut().enumerate() {
            *a += weight * s(i);
        }
    }

    /// Which entries of `θ` are couplings (the ℓ1 and ℓ2 penalties apply to these only).
    pub fn is_weight(&self, index: usize) -> bool {
        index < self.edges.len()
    }

    /// The exact `log Z` by enumerating `2^n` states, or `None` for `n > 20`.
    pub fn exact_log_z(&self) -> Option<f64> {
        if self.n > 20 {
            return None;
        }
        let mut x = vec![0u8; self.n];
        let (mut top, mut sum) = (f64::NEG_INFINITY, 0.0);
        for bits in 0u32..(1 << self.n) {
            for (k, xi) in x.iter_mut().enumerate() {
                *xi = ((bits >> k) & 1) as u8;
            }
            let t = self.log_density(&x);
            if t > top {
                sum = sum * (top - t).exp() + 1.0;
                top = t;
            } else {
                sum += (t - top).exp();
            }
        }
        Some(top + sum.ln())
    }

    /// The model the samplers run, parameters narrowed to single precision.
    ///
    /// # Errors
    ///
    /// [`LearnError::NonFinite`] when a parameter overflows single precision.
    pub fn to_model(&self) -> Result<BinaryModel, LearnError> {
        let triples: Vec<(f64, f64, f64)> = self
            .edges
            .iter()
            .zip(self.couplings())
            .map(|(&(i, j), &c)| (f64::from(i), f64::from(j), c))
            .collect();
        let field = super::rbm::narrow(self.field())?;
        BinaryModel::ising_graph(self.n, &triples, field).map_err(|_| LearnError::NonFinite)
    }

    /// The model file (`kind: "ising"`) that `langevin sample` reads.
    pub fn to_json(&self) -> Value {
        let edges: Vec<Value> = self
            .edges
            .iter()
            .zip(self.couplings())
            .map(|(&(i, j), &c)| json!([i, j, c]))
            .collect();
        json!({"kind": "ising", "n": self.n, "edges": edges, "field": self.field()})
    }

    /// The root mean square difference between these couplings and those of `truth` (an
    /// `ising` model on the same nodes), over the union of both edge sets (a missing edge has
    /// coupling 0); `None` if `truth` is another kind or size.
    pub fn coupling_rmse(&self, truth: &BinaryModel) -> Option<f64> {
        let BinaryModel::IsingGraph {
            offsets,
            neighbours,
            couplings,
            field,
        } = truth
        else {
            return None;
        };
        if field.len() != self.n {
            return None;
        }
        let mut true_j: HashMap<(u32, u32), f64> = HashMap::new();
        for i in 0..self.n {
            for k in offsets[i] as usize..offsets[i + 1] as usize {
                let j = neighbours[k];
                let key = ((i as u32).min(j), (i as u32).max(j));
                true_j.insert(key, f64::from(couplings[k]));
            }
        }
        let mut sum = 0.0;
        let mut count = 0usize;
        for (&(i, j), &c) in self.edges.iter().zip(self.couplings()) {
            let t = true_j.remove(&(i.min(j), i.max(j))).unwrap_or(0.0);
            sum += (c - t).powi(2);
            count += 1;
        }
        for t in true_j.values() {
            sum += t * t;
            count += 1;
        }
        Some((sum / count.max(1) as f64).sqrt())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use langevin_core::BinaryTarget;

    #[test]
    fn lattices_have_the_expected_edges() {
        assert_eq!(IsingParams::lattice(3, 4, true).unwrap().edges().len(), 24);
        assert_eq!(IsingParams::lattice(3, 4, false).unwrap().edges().len(), 17);
        assert_eq!(IsingParams::lattice(2, 2, true).unwrap().edges().len(), 4);
        assert!(matches!(
            IsingParams::zeros(3, vec![(0, 1), (1, 0)]),
            Err(LearnError::Shape(super::super::ShapeError::Edge {
                i: 1,
                j: 0,
                nodes: 3
            }))
        ));
        assert!(matches!(
            IsingParams::lattice(0, 4, false),
            Err(LearnError::Shape(super::super::ShapeError::NoNodes))
        ));
    }

    #[test]
    fn log_density_statistics_and_model_agree() {
        let mut m = IsingParams::lattice(2, 3, false).unwrap();
        for (k, t) in m.theta_mut().iter_mut().enumerate() {
            *t = 0.25 * k as f64 - 1.0;
        }
        let model = m.to_model().unwrap();
        let mut target = model.target(&mut []).unwrap();
        let x = [1u8, 0, 0, 1, 1, 0];
        let mut g = [0.0f32; 6];
        let u = target.log_density_and_grad(&x, &mut g).unwrap();
        assert!((u - m.log_density(&x)).abs() < 1e-5);
        // U is linear in θ: U(x) = θ · statistics(x).
        let mut acc = vec![0.0; m.theta().len()];
        m.add_statistics(&x, 1.0, &mut acc);
        let dot: f64 = acc.iter().zip(m.theta()).map(|(a, t)| a * t).sum();
        assert!((dot - m.log_density(&x)).abs() < 1e-12);
        assert_eq!(m.coupling_rmse(&model), Some(0.0));
    }
}
